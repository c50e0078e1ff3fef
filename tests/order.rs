//! Order does not matter: the same messages, in any order and split
//! across any number of imports (each its own engine, as separate runs
//! or processes would be), give the same cases: the same report for each
//! case, the same messages with the same rungs, states, events, retest
//! verdicts and related cases. Re-importing what is stored, in another
//! order, changes no row.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;

use lkpbot::case::{CaseFilter, CaseRecord};
use lkpbot::store::{Location, Store};

use crate::thread::{block_on, engine, env, fixture_messages};
use crate::util;

/// A case as text that does not depend on arrival order: keyed by its
/// report, related cases named by their reports, events in time order.
pub fn canonical(cases: &[CaseRecord]) -> BTreeMap<String, String> {
    let report_of: BTreeMap<i64, String> =
        cases.iter().map(|c| (c.view.id.0, c.view.facts.report_message_id.to_string())).collect();
    cases
        .iter()
        .map(|c| {
            let mut messages: Vec<String> =
                c.messages.iter().map(|m| format!("{} {}", m.message_id, m.strategy.as_str())).collect();
            messages.sort();
            let mut events: Vec<String> = c
                .events
                .iter()
                .map(|e| {
                    format!(
                        "{} {} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                        e.at,
                        e.kind.as_str(),
                        e.message_id.as_ref().map(|m| m.to_string()),
                        e.verdict,
                        e.fix_commit,
                        e.note,
                        e.tree,
                        e.by,
                        e.tag,
                        e.tree_commit
                    )
                })
                .collect();
            events.sort();
            let mut related: Vec<String> = c
                .related
                .iter()
                .map(|(id, r)| format!("{} {}", report_of.get(&id.0).cloned().unwrap_or_default(), r.as_str()))
                .collect();
            related.sort();
            let text = format!(
                "state {}\nverdict {:?} fix {:?} fix message {:?}\ntitle {}\nupdated {}\nmessages\n  {}\nevents\n  {}\nrelated\n  {}\n",
                c.view.state.as_str(),
                c.verdict,
                c.fix_commit,
                c.fix_message_id.as_ref().map(|m| m.to_string()),
                c.view.facts.title,
                c.updated_at,
                messages.join("\n  "),
                events.join("\n  "),
                related.join("\n  ")
            );
            (c.view.facts.report_message_id.to_string(), text)
        })
        .collect()
}

/// The first difference between two canonical stores, if any.
pub fn first_difference(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Option<String> {
    for (k, va) in a {
        match b.get(k) {
            None => return Some(format!("case of {k} only in the first")),
            Some(vb) if vb != va => return Some(format!("case of {k} differs:\n--- first\n{va}--- second\n{vb}")),
            _ => {}
        }
    }
    b.keys().find(|k| !a.contains_key(*k)).map(|k| format!("case of {k} only in the second"))
}

/// Imports `parts` into one store file in `dir`, each part by its own
/// engine (one transaction per `batch` messages), and returns the cases.
pub async fn import_parts(dir: &Path, parts: &[Vec<Vec<u8>>], batch: usize) -> Vec<CaseRecord> {
    import_parts_at(&Location::Sqlite(dir.join("lkpbot.db")), parts, batch).await
}

/// [`import_parts`] into the store at `at` (a SQLite file or a
/// PostgreSQL database).
pub async fn import_parts_at(at: &Location, parts: &[Vec<Vec<u8>>], batch: usize) -> Vec<CaseRecord> {
    for part in parts {
        let mut engine = engine(Store::connect(at).await.unwrap());
        for (i, m) in part.iter().enumerate() {
            engine.push(env(m)).await.unwrap();
            if (i + 1) % batch.max(1) == 0 {
                engine.flush().await.unwrap();
            }
        }
        engine.finish().await.unwrap();
    }
    let mut store = Store::connect(at).await.unwrap();
    store.cases(CaseFilter::All, true).await.unwrap()
}

/// The cases of `parts` imported into a fresh store: a SQLite file, or
/// with `postgres` a fresh PostgreSQL database (`None` when there is no
/// PostgreSQL here: the test skips).
fn import(parts: &[Vec<Vec<u8>>], batch: usize, postgres: bool) -> Option<BTreeMap<String, String>> {
    let dir = tempfile::tempdir().unwrap();
    let at = if postgres {
        Location::postgres(&util::postgres::fresh_db()?, None).unwrap()
    } else {
        Location::Sqlite(dir.path().join("lkpbot.db"))
    };
    Some(canonical(&block_on(import_parts_at(&at, parts, batch))))
}

/// `parts` of a permutation of `all`, cut at `cuts`.
fn split(all: &[Vec<u8>], order: &[usize], cuts: Vec<usize>) -> Vec<Vec<Vec<u8>>> {
    let shuffled: Vec<Vec<u8>> = order.iter().map(|&i| all[i].clone()).collect();
    let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (shuffled.len() + 1)).collect();
    cuts.sort();
    let mut parts = Vec::new();
    let mut last = 0;
    for c in cuts.into_iter().chain([shuffled.len()]) {
        parts.push(shuffled[last..c.max(last)].to_vec());
        last = c.max(last);
    }
    parts
}

/// Every thread fixture's messages, in file order.
fn fixture_threads() -> Vec<Vec<u8>> {
    crate::thread::all_fixture_messages()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any permutation of the fixture threads, split into up to four
    /// imports at random points, batched at random sizes, ends as the
    /// files in order in one import.
    #[test]
    fn any_order_and_split_gives_the_same_cases(
        order in Just(fixture_threads().len()).prop_flat_map(|n| Just((0..n).collect::<Vec<usize>>()).prop_shuffle()),
        cuts in proptest::collection::vec(0usize..64, 0..3),
        batch in 1usize..8,
    ) {
        let all = fixture_threads();
        let want = import(std::slice::from_ref(&all), 1024, false).unwrap();
        let got = import(&split(&all, &order, cuts), batch, false).unwrap();
        prop_assert!(first_difference(&want, &got).is_none(), "{}", first_difference(&want, &got).unwrap_or_default());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// The same on PostgreSQL, against the SQLite import of the files in
    /// order: the two backends give the same cases, in any order.
    #[test]
    fn any_order_and_split_on_postgres_gives_the_cases_of_sqlite(
        order in Just(fixture_threads().len()).prop_flat_map(|n| Just((0..n).collect::<Vec<usize>>()).prop_shuffle()),
        cuts in proptest::collection::vec(0usize..64, 0..3),
        batch in 1usize..8,
    ) {
        let all = fixture_threads();
        let want = import(std::slice::from_ref(&all), 1024, false).unwrap();
        let Some(got) = import(&split(&all, &order, cuts), batch, true) else { return Ok(()) };
        prop_assert!(first_difference(&want, &got).is_none(), "{}", first_difference(&want, &got).unwrap_or_default());
    }
}

/// The real archive with its lifecycle mail (`lkp-lifecycle.mbox`: fix
/// patches' threads, applied notices, pull requests and their merges,
/// reverts, later versions) forward, reversed, and as its two halves
/// interleaved (1st, n/2+1th, 2nd, ...), each in one import: every case
/// the same. Then the reversed archive imported over the forward store:
/// all duplicates, and not one row changes.
#[test]
fn corpus_in_any_order_gives_the_same_cases() {
    let Some(path) = util::shared_file("corpus/lkp-threads.mbox") else { return };
    let Some(lifecycle) = util::shared_file("corpus/lkp-lifecycle.mbox") else { return };
    let msgs: Vec<Vec<u8>> =
        [path, lifecycle].iter().flat_map(|p| lkpbot::source::open(p).unwrap().map(|m| m.unwrap().bytes)).collect();
    let forward_dir = tempfile::tempdir().unwrap();
    let forward = canonical(&block_on(import_parts(forward_dir.path(), std::slice::from_ref(&msgs), 1024)));
    assert!(forward.len() > 600, "{} cases", forward.len());

    let reversed: Vec<Vec<u8>> = msgs.iter().rev().cloned().collect();
    let half = msgs.len().div_ceil(2);
    let mut interleaved = Vec::with_capacity(msgs.len());
    for i in 0..half {
        interleaved.push(msgs[i].clone());
        if let Some(m) = msgs.get(half + i) {
            interleaved.push(m.clone());
        }
    }
    for (name, order) in [("reversed", &reversed), ("interleaved halves", &interleaved)] {
        let got = import(std::slice::from_ref(order), 1024, false).unwrap();
        if let Some(d) = first_difference(&forward, &got) {
            panic!("{name}: {d}");
        }
    }

    // Over the forward store, the reversed archive is all duplicates and
    // changes not one row.
    block_on(async {
        let mut store = Store::open(&forward_dir.path().join("lkpbot.db")).await.unwrap();
        let before = store.table_stats().await.unwrap();
        let mut engine = engine(store);
        for m in &reversed {
            engine.push(env(m)).await.unwrap();
        }
        let stats = engine.finish().await.unwrap();
        assert_eq!((stats.new, stats.duplicates), (0, msgs.len() as u64));
        assert_eq!(engine.store().table_stats().await.unwrap(), before, "re-importing in reverse changed rows");
    });
}

/// An import that stops before its end (no `finish`: the process was
/// killed) leaves what its batches woke waiting for that end, stored; the
/// next writer's `finish` threads it, and the store ends as an import
/// that was not cut short. The fixture threads backwards, a batch per
/// message, so that replies wait for their reports.
#[test]
fn an_import_cut_short_is_finished_by_the_next() {
    let all = fixture_threads();
    let want = import(std::slice::from_ref(&all), 1024, false).unwrap();
    let backwards: Vec<Vec<u8>> = all.iter().rev().cloned().collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lkpbot.db");
    block_on(async {
        let mut cut = engine(Store::open(&path).await.unwrap());
        for m in &backwards {
            cut.push(env(m)).await.unwrap();
            cut.flush().await.unwrap();
        }
        drop(cut);
        let mut store = Store::open(&path).await.unwrap();
        let half = canonical(&store.cases(CaseFilter::All, true).await.unwrap());
        assert!(first_difference(&want, &half).is_some(), "nothing was left for the import's end");
        let mut next = engine(store);
        next.finish().await.unwrap();
        let got = canonical(&next.store().cases(CaseFilter::All, true).await.unwrap());
        if let Some(d) = first_difference(&want, &got) {
            panic!("{d}");
        }
    });
}

/// A reply, then its report, imported twice: the second import finds
/// both stored (two duplicates, nothing new) and changes no row.
#[test]
fn reply_then_report_twice_is_all_duplicates() {
    let msgs = fixture_messages("reply-chain");
    let pair = vec![msgs[1].clone(), msgs[0].clone()];
    let dir = tempfile::tempdir().unwrap();
    block_on(async {
        let path = dir.path().join("lkpbot.db");
        let mut e = engine(Store::open(&path).await.unwrap());
        for m in &pair {
            e.push(env(m)).await.unwrap();
        }
        let first = e.finish().await.unwrap();
        assert_eq!((first.new, first.duplicates, first.cases_opened, first.attached), (2, 0, 1, 1));
        let before = e.store().table_stats().await.unwrap();
        let mut e = engine(e.into_store());
        for m in &pair {
            e.push(env(m)).await.unwrap();
        }
        let second = e.finish().await.unwrap();
        assert_eq!((second.new, second.duplicates), (0, 2));
        assert_eq!(e.store().table_stats().await.unwrap(), before);
    });
}

/// Ordinary list traffic whose thread arrives backwards (a reply before
/// the message it answers, in one batch and across batches) waits for
/// the missing messages and settles once they are all here: the store
/// ends as the thread in order leaves it, with no bytes kept and nothing
/// waited for.
#[test]
fn list_traffic_arriving_backwards_settles() {
    let mail = |n: usize, parents: &[usize]| -> Vec<u8> {
        let mut m = format!(
            "From: Dev {n} <dev{n}@example.org>\nTo: linux-mm@kvack.org\nSubject: Re: [PATCH] mm: tidy up\n\
             Date: Mon, 1 Jan 2024 00:00:{n:02} +0000\nMessage-ID: <list{n}@example.org>\n"
        );
        if let Some(p) = parents.last() {
            m.push_str(&format!("In-Reply-To: <list{p}@example.org>\nReferences:"));
            for p in parents {
                m.push_str(&format!(" <list{p}@example.org>"));
            }
            m.push('\n');
        }
        m.push_str("\nLooks good to me.\n");
        m.into_bytes()
    };
    let thread = [mail(1, &[]), mail(2, &[1]), mail(3, &[1, 2]), mail(4, &[1, 2, 3])];
    let backwards: Vec<Vec<u8>> = thread.iter().rev().cloned().collect();
    for batch in [1, 2, 1024] {
        let dir = tempfile::tempdir().unwrap();
        let stats = block_on(async {
            let path = dir.path().join("lkpbot.db");
            let mut e = engine(Store::open(&path).await.unwrap());
            for (i, m) in backwards.iter().enumerate() {
                e.push(env(m)).await.unwrap();
                if (i + 1) % batch == 0 {
                    e.flush().await.unwrap();
                }
            }
            e.finish().await.unwrap();
            e.store().table_stats().await.unwrap()
        });
        let rows = |t: &str| stats.iter().find(|s| s.table == t).unwrap().rows;
        assert_eq!((rows("messages"), rows("raw_messages"), rows("thread_deps")), (4, 0, 0), "batch {batch}");
    }
}
