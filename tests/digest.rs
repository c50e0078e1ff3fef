//! The weekly digest: golden texts from the thread fixtures at a fixed
//! clock, at most one mail per week and recipient across restarts, the
//! whole corpus, and the `digest` command.

use std::path::Path;
use std::process::Command;

use lkpbot::case::SubscriptionFilter;
use lkpbot::case::{CaseFilter, CaseRecord};
use lkpbot::digest::{self, Week};
use lkpbot::engine::Engine;
use lkpbot::store::Store;

use crate::thread::{NOW, block_on, engine, env, fixture_messages};
use crate::util;

/// Every thread fixture, in one store.
fn fixture_cases() -> Vec<CaseRecord> {
    let dir = tempfile::tempdir().unwrap();
    let all = crate::thread::all_fixture_messages();
    block_on(async {
        let mut e = engine(Store::open(&dir.path().join("s.db")).await.unwrap());
        for m in &all {
            e.push(env(m)).await.unwrap();
        }
        e.finish().await.unwrap();
        e.store().cases(CaseFilter::All, true).await.unwrap()
    })
}

fn text_of(cases: &[CaseRecord], date: &str, filter: Option<(&SubscriptionFilter, &str)>) -> String {
    let week = Week::of_date(date).unwrap();
    let m = digest::model(cases, &week, 30, "https://lore.kernel.org/r/", filter);
    format!("Subject: {}\n\n{}", digest::subject(&m), digest::render(&m, "lkpbot", "`lkpbot cases` lists them all"))
}

fn check(name: &str, text: &str) {
    for line in text.lines() {
        assert!(line.chars().count() <= 78, "{name}: a line over 78 columns: {line}");
    }
    let path = util::fixtures().join("digest").join(format!("{name}.txt"));
    if let Err(e) = util::check_golden(&path, text) {
        panic!("{e}");
    }
}

/// The week of 2026-04-06: a regression reported and answered with a
/// retest verdict, another reported and resolved by its author, the older
/// ones open; dmesg and build reports counted by tree.
#[test]
fn a_busy_week() {
    let cases = fixture_cases();
    let text = text_of(&cases, "2026-04-08", None);
    for section in [
        "Open regressions, worst first",
        "New this week (2)",
        "Retest verdicts this week (1)",
        "Resolved this week (1)",
    ] {
        assert!(text.contains(section), "no {section:?} in\n{text}");
    }
    assert!(text.starts_with("Subject: lkpbot weekly 2026-W15: "), "{text}");
    check("2026-W15-busy-week", &text);
}

/// The week of 2026-06-08: a fix judged partly recovered, then the next
/// fix's result only attached (a log that cannot be read): both are
/// retest results of the week, the second says its result is unknown;
/// the rerun of the week before is not among them.
#[test]
fn results_without_a_verdict_are_listed_as_such() {
    let cases = fixture_cases();
    let text = text_of(&cases, "2026-06-10", None);
    assert!(text.contains("Retest verdicts this week (2)"), "{text}");
    assert!(text.contains("partly-recovered") && text.contains("result unknown"), "{text}");
    assert!(!text.contains("still regressed"), "{text}");
    check("2026-W24-result-unknown", &text);
}

/// A week before any report: one line, no empty sections.
#[test]
fn a_quiet_week() {
    let cases = fixture_cases();
    let text = text_of(&cases, "2017-06-07", None);
    assert_eq!(text.lines().filter(|l| !l.is_empty()).count(), 3, "a subject and one sentence: {text}");
    check("2017-W23-quiet-week", &text);
}

/// A subscriber who only wants the cases with a change of 20 % or more
/// gets those; one who wants a tree with nothing in it gets nothing.
#[test]
fn a_filtered_subscriber() {
    let cases = fixture_cases();
    let big = SubscriptionFilter::parse("min:20").unwrap();
    let text = text_of(&cases, "2026-04-08", Some((&big, "someone@example.org")));
    assert!(!text.contains("-12.5%"), "{text}");
    check("2026-W15-min-20", &text);
    let week = Week::of_date("2026-04-08").unwrap();
    let none = SubscriptionFilter::parse("tree:no-such-tree").unwrap();
    assert!(digest::model(&cases, &week, 30, "x", Some((&none, "someone@example.org"))).is_empty());
    // "mine": the cases whose report was sent to, or whose thread has a
    // message from, the subscriber.
    let mine = SubscriptionFilter::parse("mine").unwrap();
    let m = digest::model(&cases, &week, 30, "x", Some((&mine, "ada@example.org")));
    assert!(
        !m.is_empty()
            && m.open
                .iter()
                .chain(&m.resolved)
                .all(|l| l.commit.starts_with("1234567890") || l.commit.starts_with("abcabcabc0"))
    );
}

/// The digest of a week goes to each recipient once, whatever happens:
/// asked again, by a restarted bot, after the mail was sent.
#[test]
fn once_per_week_and_recipient() {
    let cfg = lkpbot::config::Config::parse(
        "[bot]\naddress = \"bot@example.org\"\n[digest]\nto = [\"list@example.org\"]\n\
         [[digest.subscribers]]\naddress = \"fan@example.org\"\nfilter = \"min:20\"\n\
         [[digest.subscribers]]\naddress = \"nobody@example.org\"\nfilter = \"tree:no-such-tree\"\n",
        Path::new("t.toml"),
    )
    .unwrap();
    let plan = lkpbot::cli::digest_plan(&cfg).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let week = Week::of_date("2026-04-08").unwrap();
    let msgs = fixture_messages("digest-resolved");
    block_on(async {
        let mut e = Engine::new(Store::open(&path).await.unwrap(), lkpbot::cli::acting_settings(&cfg, || NOW));
        for m in &msgs {
            e.push(env(m)).await.unwrap();
        }
        e.finish().await.unwrap();
        assert_eq!(e.queue_digests(&week, &plan, NOW).await.unwrap(), 2, "the list and the one matching subscriber");
        assert_eq!(e.queue_digests(&week, &plan, NOW).await.unwrap(), 0);
        // Sent, then the bot is killed and started again.
        let mut store = e.into_store();
        let sender = lkpbot::deliver::Sender::to_dir(dir.path().join("out"), || NOW);
        assert_eq!(sender.send_due(&mut store).await.unwrap().sent, 2);
        drop(store);
        let mut e = Engine::new(Store::open(&path).await.unwrap(), lkpbot::cli::acting_settings(&cfg, || NOW));
        assert_eq!(e.queue_digests(&week, &plan, NOW + 3600).await.unwrap(), 0);
        // The next week is another digest.
        assert_eq!(e.queue_digests(&Week::of_date("2026-04-15").unwrap(), &plan, NOW).await.unwrap(), 1);
    });
    let files = std::fs::read_dir(dir.path().join("out")).unwrap().count();
    assert_eq!(files, 2);
}

/// `ingest` of the real archive, then `digest --print --date 2024-06-05`:
/// the week is named, the sections are there, no line is over 78 columns.
#[test]
fn the_corpus_digest() {
    let Some(path) = util::shared_file("corpus/lkp-threads.mbox") else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_lkpbot")).arg("--db").arg(&db).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    run(&["ingest", path.to_str().unwrap()]);
    let text = run(&["digest", "--print", "--date", "2024-06-05"]);
    assert!(text.starts_with("Subject: lkpbot weekly 2024-W23: "), "{text}");
    for section in ["Open regressions, worst first", "Stale (no activity)", "dmesg and build reports"] {
        assert!(text.contains(section), "no {section:?} in\n{text}");
    }
    for line in text.lines() {
        assert!(line.chars().count() <= 78, "over 78 columns: {line}");
    }
    let json = run(&["digest", "--json", "--date", "2024-06-05"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["week"]["name"], "2024-W23");
    assert!(v["open"].as_array().unwrap().len() + v["stale"].as_array().unwrap().len() > 5, "{v}");
}
