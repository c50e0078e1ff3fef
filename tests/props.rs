//! Parsing and classification never panic: random bytes, and real-looking
//! mail with random damage (bytes flipped, cut, duplicated, lines shuffled).
//! Message-IDs are normalised losslessly, and a NUL byte outside an id
//! changes nothing about a message.

use proptest::prelude::*;

use lkpbot::classify::{ClassifyConfig, classify, json::to_json};
use lkpbot::model::MessageId;

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

/// Reverses the escapes of a `MessageId` (`%XX` to the byte XX).
fn unescape_id(id: &str) -> Vec<u8> {
    let b = id.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            out.push(u8::from_str_radix(&id[i + 1..i + 3], 16).expect("escapes are %XX"));
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// Whether an id is in the escaped form: it holds `%25`, or `%XX` of a
/// control byte or a byte above 0x7E (an ordinary id never does).
fn escaped(id: &str) -> bool {
    id.as_bytes().windows(3).any(|w| {
        w[0] == b'%'
            && std::str::from_utf8(&w[1..])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .is_some_and(|v| v < 0x20 || v == 0x25 || v >= 0x7f)
    })
}

/// The bytes an id stands for.
fn raw_of(id: &str) -> Vec<u8> {
    if escaped(id) { unescape_id(id) } else { id.as_bytes().to_vec() }
}

/// The one collapse the normal form makes on purpose: `%40` is `@`.
fn at_unescaped(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        if raw[i..].starts_with(b"%40") {
            out.push(b'@');
            i += 3;
        } else {
            out.push(raw[i]);
            i += 1;
        }
    }
    out
}

/// Whether `pos` falls inside a `<...>` of a header block.
fn inside_brackets(head: &[u8], pos: usize) -> bool {
    let open = head[..pos].iter().rposition(|&b| b == b'<' || b == b'>').is_some_and(|i| head[i] == b'<');
    open && head[pos..].contains(&b'>')
}

/// The whole `classify --json` view, less the problems a NUL adds.
fn view_without_nul_problem(bytes: &[u8]) -> serde_json::Value {
    let mail = lkpbot::mail::parse(bytes);
    let mut v = to_json(&mail, &classify(&mail, &ClassifyConfig::default()));
    if let Some(p) = v["problems"].as_array_mut() {
        p.retain(|p| p != "header: NUL bytes removed");
    }
    v
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

    /// Header bytes to an id and back give the bytes (but `%40`, which is
    /// `@`), so different raw ids never share an id; an ordinary id is
    /// kept as written; and the id's text reads back as itself, as it does
    /// from the store.
    #[test]
    fn message_ids_from_bytes_are_lossless(raw in prop::collection::vec(prop_oneof![
        Just(b'%'), Just(b'4'), Just(b'0'), Just(b'2'), Just(b'5'), Just(b'F'), Just(b'@'), Just(b'a'),
        Just(0u8), Just(1u8), Just(0x7fu8), Just(0xffu8), Just(0xc3u8), Just(0xa9u8),
    ], 1..24)) {
        let id = MessageId::from_bytes(&raw).expect("no whitespace or brackets: an id");
        prop_assert_eq!(raw_of(id.as_str()), at_unescaped(&raw));
        if !escaped(id.as_str()) {
            prop_assert_eq!(id.as_str().as_bytes(), &at_unescaped(&raw)[..]);
        }
        prop_assert!(!id.as_str().bytes().any(|b| b.is_ascii_control()));
        prop_assert_eq!(MessageId::new(id.as_str()), Some(id.clone()));
    }

    /// A NUL byte put anywhere in the header block but inside `<...>`
    /// leaves the view of every fixture with a Message-ID as it was (a NUL
    /// at the start of the first header made it a text dump with a
    /// made-up Message-ID, one in a header name lost that header).
    #[test]
    fn nul_outside_ids_changes_nothing(which in any::<usize>(), at in any::<usize>(), crlf in any::<bool>()) {
        let all = seeds();
        let mut b = all[which % all.len()].clone();
        if crlf {
            b = util::to_crlf(&b);
        }
        let head = b.windows(2).position(|w| w == b"\n\n" || w == b"\n\r").map_or(b.len(), |i| i + 1);
        let pos = at % (head + 1);
        prop_assume!(!inside_brackets(&b[..head], pos));
        // A made-up Message-ID is a hash of the bytes, NULs included.
        prop_assume!(!lkpbot::mail::parse(&b).message_id_synthesized);
        let mut damaged = b.clone();
        damaged.insert(pos, 0);
        prop_assert_eq!(view_without_nul_problem(&damaged), view_without_nul_problem(&b));
    }
}
