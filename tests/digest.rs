//! The weekly digest: golden texts from the thread fixtures and from the
//! week of `fixtures/digest/busy-week.mbox` (read by a person as a
//! maintainer would, line by line), at most one mail per week and
//! recipient across restarts, the whole corpus, and the `digest` command.

use std::path::Path;
use std::process::Command;

use lkpbot::case::SubscriptionFilter;
use lkpbot::case::{CaseFilter, CaseRecord};
use lkpbot::digest::{self, Links, Week};
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

/// The cases of `fixtures/digest/busy-week.mbox`, in one store.
fn busy_cases() -> Vec<CaseRecord> {
    let dir = tempfile::tempdir().unwrap();
    let path = util::fixtures().join("digest/busy-week.mbox");
    block_on(async {
        let mut e = engine(Store::open(&dir.path().join("s.db")).await.unwrap());
        let errors = e.ingest_path(&path, NOW, &mut |_| {}).await.unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        e.finish().await.unwrap();
        e.store().cases(CaseFilter::All, true).await.unwrap()
    })
}

fn text_of(cases: &[CaseRecord], date: &str, filter: Option<(&SubscriptionFilter, &str)>) -> String {
    text_with(cases, date, filter, &Links::new(None))
}

fn text_with(cases: &[CaseRecord], date: &str, filter: Option<(&SubscriptionFilter, &str)>, links: &Links) -> String {
    let week = Week::of_date(date).unwrap();
    let m = digest::model(cases, &week, 30, "https://lore.kernel.org/r/", filter);
    format!("Subject: {}\n\n{}", digest::subject(&m), digest::render(&m, "lkpbot", links))
}

/// The body's lines from its first through the end of the first section
/// (the open regressions): what must fit the first screen.
fn first_screen(text: &str) -> Vec<&str> {
    let body: Vec<&str> = text.split_once("\n\n").map_or("", |(_, b)| b).lines().collect();
    let title = body.iter().position(|l| l.starts_with("Open regressions")).expect("an open section");
    let end = body[title + 2..].iter().position(|l| l.is_empty()).map_or(body.len(), |i| title + 2 + i);
    body[..end].to_vec()
}

/// Runs the binary on the store `db`; its stdout, the run having
/// succeeded.
fn lkpbot_on(db: std::path::PathBuf) -> impl Fn(&[&str]) -> String {
    move |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_lkpbot")).arg("--db").arg(&db).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }
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
        "This week: 2 new, 1 fixed, 0 reverted; 2 still open, 3 stale.",
        "Open regressions, most urgent first (2)",
        "Closed this week (1)",
        "linux-next/master, 5d old: new, retest: recovered",
    ] {
        assert!(text.contains(section), "no {section:?} in\n{text}");
    }
    assert!(text.starts_with("Subject: lkpbot weekly 2026-W15: "), "{text}");
    check("2026-W15-busy-week", &text);
}

/// The week of 2026-05-11 in `busy-week.mbox`, as a maintainer reads it:
///
/// ```text
/// A  03-02 aim7 -9.8%                  nothing since: stale before the week
/// B  04-13 fsmark -14.2%               nothing since: stale on 05-13
/// C  04-28 will-it-scale -25.1%        test asked 05-11, no answer yet
/// D  04-20 netperf -37.9% (± 4%)       fix posted 05-05; LKP: recovered 05-14
/// E  05-01 hackbench -12% (± 3%)       test asked 05-04; partly, fix ± 15% 05-12
/// F  05-12 stress-ng -67.7% (± 3%)     new; its author answers
/// G  05-13 unixbench -3.3%             new; under 2% noise: marginal
/// H  04-27 vm-scalability -21.5%       #lkp fixed 05-15
/// J  05-06 fio -5.9%                   #lkp invalid 05-14
/// K  05-14 a KASAN report (dmesg); L 05-15 an improvement
/// ```
///
/// Up top the movement; then each open regression once, most urgent
/// first (no fix yet: F, C, E by |change|, then the marginal G; then D,
/// whose fix is posted), with its tags; H and J closed; B went stale; A
/// is a count and a link. The movement line and the first section fit
/// in 40 lines of at most 78 columns.
#[test]
fn a_busy_week_on_one_screen() {
    let cases = busy_cases();
    let text = text_of(&cases, "2026-05-13", None);
    let screen = first_screen(&text);
    assert!(screen.len() <= 40, "{} lines before the first section ends:\n{text}", screen.len());
    assert_eq!(screen[3], "This week: 2 new, 1 fixed, 0 reverted; 5 still open, 2 stale.", "{text}");
    // Each case once (the improvement has a section of its own), but A,
    // stale since before the week, which is only counted.
    for (metric, n) in [
        ("aim7", 0),
        ("fsmark", 1),
        ("will-it-scale", 1),
        ("netperf", 1),
        ("hackbench", 1),
        ("stress-ng", 1),
        ("unixbench", 1),
        ("fio", 1),
    ] {
        let entries = text.lines().filter(|l| l.starts_with('#') && l.contains(&format!(" {metric}."))).count();
        assert_eq!(entries, n, "{metric} is not listed {n} times:\n{text}");
    }
    let heads: Vec<&str> = screen.iter().filter(|l| l.starts_with('#')).copied().collect();
    let order: Vec<&str> = heads.iter().map(|l| l.split_whitespace().nth(1).unwrap()).collect();
    assert_eq!(
        order,
        [
            "stress-ng.switch.ops_per_sec",
            "will-it-scale.per_thread_ops",
            "hackbench.throughput",
            "unixbench.score",
            "netperf.Throughput_Mbps"
        ],
        "{text}"
    );
    for tags in [
        "linus/master, 5d old: new",
        "linus/master, 19d old: waiting 6d",
        "linus/master, 16d old: retest: partly-recovered (marginal)",
        "linux-next/master, 4d old: new, marginal",
        "linux-next/master, 27d old: fix posted, retest: recovered",
        "linus/master, 20d old: resolved by 4c5d6e7f8a9b",
        "linux-next/master, 11d old: invalid, marginal",
        "linux-next/master, 34d old: stale since 2026-05-13",
        "1 regression stale since before this week (no activity for 30 days):",
    ] {
        assert!(text.contains(tags), "no {tags:?} in\n{text}");
    }
    check("2026-W20-busy-week", &text);
    // With a dashboard, "and N more" and the stale count link to it.
    let links = Links::new(Some("https://lkpbot.example.org/"));
    let linked = text_with(&cases, "2026-05-13", None, &links);
    assert!(linked.contains("\n  https://lkpbot.example.org/?state=stale&kind=perf-regression\n"), "{linked}");
}

/// Three weeks later nothing new came and nothing closed: the movement
/// says so, and the open regressions are still there, one waiting 27 days
/// for its test; nothing went stale, so only the count remains.
#[test]
fn a_quiet_week_still_lists_what_is_open() {
    let cases = busy_cases();
    let text = text_of(&cases, "2026-06-03", None);
    assert!(text.contains("\nThis week: 0 new, 0 fixed, 0 reverted; 5 still open, 2 stale.\n"), "{text}");
    assert!(text.contains("linus/master, 40d old: waiting 27d"), "{text}");
    assert!(text.contains("linus/master, 37d old: last retest: partly-recovered (marginal)"), "{text}");
    for absent in ["Closed this week", "Went stale this week", ": new"] {
        assert!(!text.contains(absent), "{absent:?} in a quiet week:\n{text}");
    }
    check("2026-W23-quiet-week", &text);
}

/// `cases --sort attention` of the busy week's mail (nothing stale):
/// no fix yet first, clear by |change| (the dmesg report, with none, after
/// them), then the marginal -3.3%, then the case whose fix is posted; the
/// closed ones and the improvement are not open.
#[test]
fn cases_sort_attention_on_the_busy_week() {
    let dir = tempfile::tempdir().unwrap();
    let run = lkpbot_on(dir.path().join("c.db"));
    let mbox = util::fixtures().join("digest/busy-week.mbox");
    run(&["ingest", "--stale-days", "0", mbox.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&run(&["cases", "--sort", "attention", "--json"])).unwrap();
    let listed: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["headline"]["metric"].as_str().map_or_else(|| c["kind"].to_string(), str::to_string))
        .collect();
    assert_eq!(
        listed,
        [
            "stress-ng.switch.ops_per_sec",
            "will-it-scale.per_thread_ops",
            "fsmark.files_per_sec",
            "hackbench.throughput",
            "aim7.jobs-per-min",
            "\"functional\"",
            "unixbench.score",
            "netperf.Throughput_Mbps"
        ]
    );
    let table = run(&["cases", "--sort", "attention"]);
    let sig: Vec<&str> = table.lines().skip(1).map(|l| l.split_whitespace().nth(5).unwrap_or("")).collect();
    assert_eq!(sig.iter().filter(|s| **s == "marginal").count(), 1, "{table}");
}

/// The week of 2026-06-08: a fix judged partly recovered, then the next
/// fix's result only attached (a log that cannot be read): both are
/// retest results of the week, the second says its result is unknown;
/// the rerun of the week before is not among them.
#[test]
fn results_without_a_verdict_are_listed_as_such() {
    let cases = fixture_cases();
    let text = text_of(&cases, "2026-06-10", None);
    let tags = text.split("13d old: ").nth(1).unwrap_or_default();
    assert!(tags.starts_with("retest: partly-recovered,\n       retest: result unknown\n"), "{text}");
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
        let sender = lkpbot::deliver::Mailer::to_dir(dir.path().join("out"), || NOW);
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
/// the week is named, the sections are there, no line is over 78 columns;
/// the weeks around the one new regression of March 2025 (with 41 stale
/// regressions from 2019-2022) fit the first screen, and the JSON keeps
/// its old fields beside the new ones.
#[test]
fn the_corpus_digest() {
    let Some(path) = util::shared_file("corpus/lkp-threads.mbox") else { return };
    let dir = tempfile::tempdir().unwrap();
    let run = lkpbot_on(dir.path().join("c.db"));
    run(&["ingest", path.to_str().unwrap()]);
    let text = run(&["digest", "--print", "--date", "2024-06-05"]);
    assert!(text.starts_with("Subject: lkpbot weekly 2024-W23: "), "{text}");
    for section in [
        "This week: 0 new, 0 fixed, 0 reverted; 2 still open, 26 stale.",
        "Open regressions, most urgent first (2)",
        "26 regressions stale since before this week",
        "dmesg and build reports",
    ] {
        assert!(text.contains(section), "no {section:?} in\n{text}");
    }
    for line in text.lines() {
        assert!(line.chars().count() <= 78, "over 78 columns: {line}");
    }
    for date in ["2025-03-10", "2025-03-17"] {
        let text = run(&["digest", "--print", "--date", date]);
        let screen = first_screen(&text);
        assert!(screen.len() <= 40, "{date}: {} lines to the end of the first section:\n{text}", screen.len());
        assert!(screen.iter().all(|l| l.chars().count() <= 78), "{text}");
        assert_eq!(text.matches("#580 ").count(), 1, "the new regression once:\n{text}");
        assert!(text.contains("41 regressions stale since before this week"), "{text}");
    }
    let json = run(&["digest", "--json", "--date", "2024-06-05"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["week"]["name"], "2024-W23");
    assert!(v["open"].as_array().unwrap().len() + v["stale"].as_array().unwrap().len() > 5, "{v}");
    for old in ["new", "waiting_retest", "verdicts", "fixes_posted", "resolved", "improvements", "by_tree"] {
        assert!(v[old].is_array(), "no {old} in {v}");
    }
    assert_eq!(v["movement"]["stale"], 26);
    assert_eq!(v["stale_before"], 26);
    assert_eq!(v["attention"].as_array().unwrap().len(), 2);
    assert!(v["attention"][0]["tags"].is_array() && v["attention"][0]["significance"].is_string(), "{v}");
}
