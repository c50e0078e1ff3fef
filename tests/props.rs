//! Parsing and classification never panic: random bytes, and real-looking
//! mail with random damage (bytes flipped, cut, duplicated, lines shuffled).

use proptest::prelude::*;

use lkpbot::classify::{ClassifyConfig, classify, json::to_json};

use crate::util;

fn run(bytes: &[u8]) {
    let mail = lkpbot::mail::parse(bytes);
    let c = classify(&mail, &ClassifyConfig::default());
    let v = to_json(&mail, &c);
    assert!(v["kind"].is_string());
    let _ = lkpbot::commands::parse(&mail.body);
}

fn seeds() -> Vec<Vec<u8>> {
    let files = util::files_with_suffix(&util::fixtures().join("classify"), ".eml");
    assert!(!files.is_empty());
    files.into_iter().map(|f| std::fs::read(f).unwrap()).collect()
}

#[derive(Debug, Clone)]
enum Damage {
    Flip(usize, u8),
    Cut(usize),
    Insert(usize, Vec<u8>),
    Dup(usize, usize),
    SwapLines(usize, usize),
}

fn apply(mut b: Vec<u8>, damage: &[Damage]) -> Vec<u8> {
    for d in damage {
        if b.is_empty() {
            break;
        }
        let n = b.len();
        match d {
            Damage::Flip(i, x) => b[i % n] ^= x,
            Damage::Cut(i) => b.truncate(i % n),
            Damage::Insert(i, bytes) => {
                let at = i % n;
                b.splice(at..at, bytes.iter().copied());
            }
            Damage::Dup(i, len) => {
                let at = i % n;
                let end = (at + len % 4096).min(n);
                let chunk = b[at..end].to_vec();
                b.splice(at..at, chunk);
            }
            Damage::SwapLines(i, j) => {
                let mut lines: Vec<Vec<u8>> = b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
                let k = lines.len();
                lines.swap(i % k, j % k);
                b = lines.join(&b'\n');
            }
        }
    }
    b
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), 1u8..).prop_map(|(i, x)| Damage::Flip(i, x)),
        any::<usize>().prop_map(Damage::Cut),
        (
            any::<usize>(),
            prop::collection::vec(prop_oneof![Just(b'>'), Just(b'\n'), Just(b'%'), Just(0xb1u8), any::<u8>()], 1..40)
        )
            .prop_map(|(i, v)| Damage::Insert(i, v)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, l)| Damage::Dup(i, l)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Damage::SwapLines(i, j)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        run(&bytes);
    }

    #[test]
    fn random_text_never_panics(s in "(From: .{0,40}\n|Subject: .{0,60}\n|\n|> .{0,80}\n|commit: [0-9a-f]{40}\n|---------------- -----------\n| *[0-9.e+]{1,9} +[-+]?[0-9.]{1,5}%? +[0-9.]{1,9} [a-z.]{1,20}\n){0,60}") {
        run(s.as_bytes());
    }

    #[test]
    fn damaged_fixtures_never_panic(which in any::<usize>(), damage in prop::collection::vec(damage(), 1..8)) {
        let all = seeds();
        let b = all[which % all.len()].clone();
        run(&apply(b, &damage));
    }
}
