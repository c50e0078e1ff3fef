//! `ingest` over the real archive `../shared/corpus/lkp-threads.mbox`
//! (every thread lands in its report's case; a second ingest changes no
//! row; the threads with retest results end in the state their mails
//! call for), and the `ingest`/`cases`/`case` commands of the binary.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use lkpbot::case::CaseState;
use lkpbot::case::{CaseFilter, CaseRecord};
use lkpbot::engine::IngestStats;
use lkpbot::model::{MessageId, Verdict};
use lkpbot::store::Store;

use crate::thread::{NOW, block_on, engine};
use crate::util;

struct Corpus {
    dir: tempfile::TempDir,
    stats: IngestStats,
    cases: Vec<CaseRecord>,
}

impl Corpus {
    fn db(&self) -> PathBuf {
        self.dir.path().join("lkpbot.db")
    }
}

/// The corpus ingested once (stale sweep off) for all tests here.
fn corpus() -> Option<&'static Corpus> {
    static CORPUS: OnceLock<Option<Corpus>> = OnceLock::new();
    CORPUS
        .get_or_init(|| {
            let path = util::shared_file("corpus/lkp-threads.mbox")?;
            let dir = tempfile::tempdir().unwrap();
            let (stats, cases) = block_on(async {
                let mut engine = engine(Store::open(&dir.path().join("lkpbot.db")).await.unwrap());
                assert!(engine.ingest_path(&path, NOW, &mut |_| {}).await.unwrap().is_empty());
                let stats = engine.finish().await.unwrap();
                (stats, engine.store().cases(CaseFilter::All, true).await.unwrap())
            });
            Some(Corpus { dir, stats, cases })
        })
        .as_ref()
}

#[test]
fn corpus_summary() {
    let Some(c) = corpus() else { return };
    let s = &c.stats;
    assert_eq!(s.read, 1855);
    assert_eq!(s.new, 1855);
    assert_eq!(s.duplicates, 0);
    assert_eq!(s.unreadable_sources, 0);
    // The README counts 743 robot reports, 50 of them build summaries and
    // 10 robot-generated fix patches (fix-posted here, not reports).
    assert!((720..=743).contains(&s.reports), "reports: {}", s.reports);
    assert_eq!(s.build_summaries, 50);
    assert_eq!(s.cases_opened, s.reports - s.build_summaries);
    assert_eq!(c.cases.len() as u64, s.cases_opened);
    // Every build summary's facts are kept, though it opens no case.
    let tables = block_on(async { Store::open(&c.db()).await.unwrap().table_stats().await.unwrap() });
    let rows = |t: &str| tables.iter().find(|x| x.table == t).unwrap().rows;
    assert_eq!(rows("build_summaries"), 50);
    assert_eq!(rows("reports") as u64, s.reports - s.build_summaries);
}

/// Every message whose References/In-Reply-To chain (followed through the
/// corpus) reaches a report is in that report's case: 100%.
#[test]
fn corpus_every_reply_is_in_its_reports_case() {
    let Some(c) = corpus() else { return };
    let path = util::shared_file("corpus/lkp-threads.mbox").unwrap();
    let mut parents: HashMap<MessageId, Vec<MessageId>> = HashMap::new();
    for raw in lkpbot::source::open(&path).unwrap() {
        let m = lkpbot::mail::parse(&raw.unwrap().bytes);
        parents.insert(m.message_id.clone(), m.ancestors().into_iter().cloned().collect());
    }
    let case_of_report: HashMap<&MessageId, &CaseRecord> =
        c.cases.iter().map(|r| (&r.view.facts.report_message_id, r)).collect();
    let members: HashMap<i64, HashSet<&MessageId>> =
        c.cases.iter().map(|r| (r.view.id.0, r.messages.iter().map(|m| &m.message_id).collect())).collect();
    let (mut checked, mut missing) = (0, Vec::new());
    for id in parents.keys() {
        // Every ancestor reachable through the corpus.
        let mut seen: HashSet<&MessageId> = HashSet::new();
        let mut stack: Vec<&MessageId> = parents[id].iter().collect();
        while let Some(a) = stack.pop() {
            if seen.insert(a) {
                stack.extend(parents.get(a).into_iter().flatten());
            }
        }
        for a in seen {
            if let Some(case) = case_of_report.get(a) {
                checked += 1;
                if !members[&case.view.id.0].contains(id) {
                    missing.push(format!("{id} reaches {a} but is not in case {}", case.view.id));
                }
            }
        }
    }
    assert!(checked > 1000, "only {checked} message/report pairs checked");
    assert!(missing.is_empty(), "{} of {checked} not attached:\n{}", missing.len(), missing.join("\n"));
}

/// Ingesting the corpus again into the same store changes no row.
#[test]
fn corpus_second_ingest_changes_no_row() {
    let Some(c) = corpus() else { return };
    let path = util::shared_file("corpus/lkp-threads.mbox").unwrap();
    block_on(async {
        let mut store = Store::open(&c.db()).await.unwrap();
        let before = store.table_stats().await.unwrap();
        let mut engine = engine(store);
        engine.ingest_path(&path, NOW, &mut |_| {}).await.unwrap();
        let stats = engine.finish().await.unwrap();
        assert_eq!((stats.new, stats.duplicates), (0, 1855));
        assert_eq!(engine.store().table_stats().await.unwrap(), before);

        // The same archive damaged with NUL bytes in every header block
        // (before the first header, inside the names of the id headers):
        // still the same messages, all duplicates.
        for raw in lkpbot::source::open(&path).unwrap() {
            engine.push(crate::thread::env(&with_nuls_in_headers(&raw.unwrap().bytes))).await.unwrap();
        }
        let stats = engine.finish().await.unwrap();
        assert_eq!((stats.new, stats.duplicates), (0, 1855));
        assert_eq!(engine.store().table_stats().await.unwrap(), before);
    });
}

/// A message with NUL bytes before its first header and inside the names
/// of its Message-ID, In-Reply-To and References headers.
fn with_nuls_in_headers(raw: &[u8]) -> Vec<u8> {
    let head = raw.windows(2).position(|w| w == b"\n\n").unwrap_or(raw.len());
    let mut out = vec![0u8];
    let mut i = 0;
    while i < raw.len() {
        let at_line = i == 0 || raw[i - 1] == b'\n';
        let name = ["Message-ID", "Message-Id", "In-Reply-To", "References"]
            .iter()
            .find(|n| i < head && at_line && raw[i..].starts_with(n.as_bytes()));
        if let Some(n) = name {
            out.extend_from_slice(&n.as_bytes()[..3]);
            out.push(0);
            out.extend_from_slice(&n.as_bytes()[3..]);
            i += n.len();
        } else {
            out.push(raw[i]);
            i += 1;
        }
    }
    out
}

/// The threads the corpus README lists with retest results and test
/// requests, and the state (and verdict) their mails call for, read by
/// hand.
const RETEST_THREADS: &[(&str, CaseState, Option<Verdict>)] = &[
    // Rong: "recompiled ... the regression still exists": a rerun without
    // a fix confirms the regression and judges no fix, so no verdict.
    ("20200803094257.GA23458@shao2-debian", CaseState::RetestDone, None),
    // Oliver tested Amir's branch; a 3-commit table with no fix column, and
    // the prose: "the results meet your expectation" (the tip is above the
    // old base): recovered in words.
    ("20210731063818.GB18773@xsang-OptiPlex-9020", CaseState::RetestDone, Some(Verdict::Recovered)),
    // Fixup 92a8f471fa "didn't fix the issue, still has -6.4%".
    ("20220506092250.GI23061@xsang-OptiPlex-9020", CaseState::RetestDone, Some(Verdict::NotRecovered)),
    // Still reproducible on v5.19-rc6 (a fail:runs table whose third column
    // is that release, not a fix): still present, no fix judged.
    ("Ys0gqOUcLr+2dle5@xsang-OptiPlex-9020", CaseState::RetestDone, None),
    // LKP only confirms the original numbers are stable: no retest of a fix.
    ("202211220854.48dad6fd-oliver.sang@intel.com", CaseState::Discussed, None),
    // Fix e5a7d5f824ad does not recover the warning.
    ("202302281653.51938721-yujie.liu@intel.com", CaseState::RetestDone, Some(Verdict::NotRecovered)),
    // Ming Lei asks the patch's author, not LKP, to try a patch: no retest
    // requested of the robot, and no result in the thread.
    ("202305140021.WvuGBjaZ-lkp@intel.com", CaseState::Discussed, None),
    ("202310202303.c68e7639-oliver.sang@intel.com", CaseState::RetestDone, Some(Verdict::NotRecovered)),
    // LKP "updated the xfstests, confirmed the test PASS now": a false
    // positive, run again and not reproduced; no fix, so no verdict.
    ("202311211653.3a9e8678-oliver.sang@intel.com", CaseState::RetestDone, None),
    // "Please retest and provide feedback", and no answer yet.
    ("202312061242.lKDoAY9g-lkp@intel.com", CaseState::RetestRequested, None),
    ("202401221624.cb53a8ca-oliver.sang@intel.com", CaseState::RetestDone, Some(Verdict::Recovered)),
    ("202405171353.b56b845-oliver.sang@intel.com", CaseState::RetestDone, Some(Verdict::PartlyRecovered)),
    ("202406241546.6bbd44a7-oliver.sang@intel.com", CaseState::RetestDone, Some(Verdict::Recovered)),
    // An improvement: informational whatever its retests say.
    ("202406250948.e0044f1d-oliver.sang@intel.com", CaseState::Informational, Some(Verdict::NotRecovered)),
    ("202407121335.31a10cb6-oliver.sang@intel.com", CaseState::RetestDone, Some(Verdict::PartlyRecovered)),
    // Build reports answered with "could you test this patch" and nothing after.
    ("202407311703.8q8sDQ2p-lkp@intel.com", CaseState::RetestRequested, None),
    ("202408010150.13yZScv6-lkp@intel.com", CaseState::RetestRequested, None),
    ("202410062250.ee92fca7-oliver.sang@intel.com", CaseState::RetestDone, Some(Verdict::Recovered)),
    // Reruns to answer a config question confirm the regression: no fix,
    // no verdict.
    ("202412122112.ca47bcec-lkp@intel.com", CaseState::RetestDone, None),
    // "your patch fixed the issue we reported", Tested-by.
    ("202412172217.b906db7c-lkp@intel.com", CaseState::RetestDone, Some(Verdict::Recovered)),
    ("202412271132.a09c3500-lkp@intel.com", CaseState::RetestDone, Some(Verdict::Recovered)),
    // Fix a64e5a596067 "does not fix" the warning (the prose); LKP's
    // last word, "the issue still exists on next-20250321", is a
    // still-present note and keeps that verdict. Luis's patches inline,
    // the first linking the report, are a fix posted.
    ("202503101536.27099c77-lkp@intel.com", CaseState::FixPosted, Some(Verdict::NotRecovered)),
    // "confirmed the issue gone", Tested-by.
    ("202503171650.cc082b66-lkp@intel.com", CaseState::RetestDone, Some(Verdict::Recovered)),
    // LKP tested the commit suggested as a fix against its parent and
    // found "no performance diff": the candidate does not recover it.
    ("202504241314.fe89a536-lkp@intel.com", CaseState::RetestDone, Some(Verdict::NotRecovered)),
    // "yes, this fixed the issue we reported", Tested-by.
    ("202510101652.7921fdc6-lkp@intel.com", CaseState::RetestDone, Some(Verdict::Recovered)),
    // "confirmed the issue we reported gone now with the patch".
    ("202511111411.9ebfa1ba-lkp@intel.com", CaseState::RetestDone, Some(Verdict::Recovered)),
    // The seed thread: Shakeel's patches retested three times, recovered.
    ("202605121641.b6a60cb0-lkp@intel.com", CaseState::RetestDone, Some(Verdict::Recovered)),
];

#[test]
fn corpus_retest_threads_end_in_the_right_state() {
    let Some(c) = corpus() else { return };
    let mut wrong = Vec::new();
    for &(report, state, verdict) in RETEST_THREADS {
        let Some(case) = c.cases.iter().find(|r| r.view.facts.report_message_id.as_str() == report) else {
            wrong.push(format!("{report}: no case"));
            continue;
        };
        if (case.view.state, case.verdict) != (state, verdict) {
            wrong.push(format!("{report}: {:?} {:?}, expected {state:?} {verdict:?}", case.view.state, case.verdict));
        }
    }
    assert_eq!(RETEST_THREADS.len(), 27);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn lkpbot(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lkpbot")).args(args).output().unwrap()
}

/// `fixture` ingested into a fresh store: the store's directory and
/// path, and `case --json 1`.
fn case_one_of(fixture: &str) -> (tempfile::TempDir, String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db").to_str().unwrap().to_string();
    let fixture = util::fixtures().join(fixture);
    let out = lkpbot(&["--db", &db, "ingest", fixture.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = lkpbot(&["--db", &db, "case", "--json", "1"]);
    let case = serde_json::from_slice(&out.stdout).unwrap();
    (dir, db, case)
}

/// A report's "[still regression on TREE SHA]" lines are on its case:
/// evidence the regression is still there, in `case` and `case --json`.
#[test]
fn still_regression_lines_are_on_the_case() {
    let (_dir, db, case) = case_one_of("classify/perf/2026-linus-stress-ng-switch-67.7pct-regression.eml");
    let db = db.as_str();
    let still: Vec<(&str, &str)> = case["still_on"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["tree"].as_str().unwrap(), s["sha"].as_str().unwrap()))
        .collect();
    assert_eq!(
        still,
        [
            ("linus/master", "66edb901bf874d9e0787326ba12d3548b2da8700"),
            ("linux-next/master", "b9303e6bff706758c167af686b5315ad00233bf8")
        ]
    );
    let text = String::from_utf8(lkpbot(&["--db", db, "case", "1"]).stdout).unwrap();
    assert!(text.contains("seen:     still regression on linus/master 66edb901bf87"), "{text}");
}

/// ```text
/// R   202605041010.c3d4e5f6-lkp@intel.com   2026-05-04  the report, no line
/// <- A  202605120900.c3d4e5f6-lkp@intel.com 2026-05-12  sent again: still on
///       linus/master 1111aaaa..., linux-next/master 6666ffff...
/// <- B  202605190900.c3d4e5f6-lkp@intel.com 2026-05-19  sent again: still on
///       linus/master abcdef01..., linux-next/master 6666ffff... (again)
/// ```
/// Every "[still regression on ...]" line of the reports sent again into
/// the case is on it (`case`, `case --json`), newest last, each once; the
/// digest of the week of B says it is still seen, the week after does not.
#[test]
fn still_regression_lines_of_repeated_reports_are_on_the_case() {
    let (_dir, db, case) = case_one_of("threads/reported-again-still-seen.mbox");
    let db = db.as_str();
    let still: Vec<(&str, &str, &str)> = case["still_on"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["tree"].as_str().unwrap(), s["sha"].as_str().unwrap(), s["at"].as_str().unwrap()))
        .collect();
    assert_eq!(
        still,
        [
            ("linus/master", "1111aaaa2222bbbb3333cccc4444dddd5555eeee", "2026-05-12T01:00:00Z"),
            ("linux-next/master", "6666ffff7777aaaa8888bbbb9999cccc0000dddd", "2026-05-12T01:00:00Z"),
            ("linus/master", "abcdef0123456789abcdef0123456789abcdef01", "2026-05-19T01:00:00Z"),
        ]
    );
    assert_eq!(case["still_on"][2]["message_id"], "202605190900.c3d4e5f6-lkp@intel.com");
    let text = String::from_utf8(lkpbot(&["--db", db, "case", "1"]).stdout).unwrap();
    let seen: Vec<&str> = text.lines().filter(|l| l.starts_with("seen:")).collect();
    assert_eq!(
        seen,
        [
            "seen:     still regression on linus/master 1111aaaa2222bbbb3333cccc4444dddd5555eeee (2026-05-12)",
            "seen:     still regression on linux-next/master 6666ffff7777aaaa8888bbbb9999cccc0000dddd (2026-05-12)",
            "seen:     still regression on linus/master abcdef0123456789abcdef0123456789abcdef01 (2026-05-19)",
        ],
        "{text}"
    );
    let digest =
        |date: &str| String::from_utf8(lkpbot(&["--db", db, "digest", "--print", "--date", date]).stdout).unwrap();
    let week = digest("2026-05-20");
    assert!(
        week.contains("still seen on linus/master,\n       linux-next/master (2026-05-19)")
            || week.contains("still seen on linus/master, linux-next/master (2026-05-19)"),
        "{week}"
    );
    let after = digest("2026-05-27");
    assert!(after.contains("#1 ") && !after.contains("still seen"), "{after}");
}

/// `ingest`, then `cases` and `case` as table and JSON, on the fixtures.
#[test]
fn cli_ingest_cases_and_case() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let db = db.to_str().unwrap();
    let fixture = util::fixtures().join("threads/retest-fixup.mbox");
    let out = lkpbot(&["--db", db, "ingest", fixture.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = String::from_utf8(out.stdout).unwrap();
    for line in [
        "messages read                      3",
        "cases opened                       1",
        "messages attached                  2",
    ] {
        assert!(summary.contains(line), "no {line:?} in\n{summary}");
    }
    // Stale by now (April 2026 + 30 days), and still open.
    let out = lkpbot(&["--db", db, "cases"]);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.starts_with("   ID  STATE"), "{table}");
    assert!(
        table.contains("stale") && table.contains("fio.write_iops -30.2%") && table.contains("fedcba9876"),
        "{table}"
    );
    // -30.2% with no %stddev printed (so under 2% each side): clear.
    assert!(table.contains("-30.2%") && table.contains("  clear  "), "{table}");
    let out = lkpbot(&["--db", db, "cases", "--json", "--state", "all"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let case = &v[0];
    for key in [
        "id",
        "state",
        "kind",
        "title",
        "report_message_id",
        "commit",
        "testcase",
        "headline",
        "messages",
        "events",
        "related",
    ] {
        assert!(case.get(key).is_some(), "no {key} in {case}");
    }
    assert_eq!(case["report_message_id"], "202604071400.bbbb0001-lkp@intel.com");
    assert_eq!(case["commit"]["sha"], "fedcba9876543210fedcba9876543210fedcba98");
    assert_eq!(case["headline"]["metric"], "fio.write_iops");
    // The fixup moved the metric +42.7% from the bad commit: clearly recovered.
    assert_eq!((&case["significance"], &case["verdict_significance"]), (&"clear".into(), &"clear".into()));
    assert_eq!(case["retests"][0]["significance"], "clear");
    assert_eq!(case["messages"].as_array().unwrap().len(), 3);
    let kinds: Vec<&str> = case["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["reported", "retest-requested", "retest-done", "stale"]);
    assert!(case["events"][0]["at"].as_str().unwrap().starts_with("2026-04-07T06:00:00"));
    let id = case["id"].to_string();
    let out = lkpbot(&["--db", db, "case", &id]);
    let timeline = String::from_utf8(out.stdout).unwrap();
    assert!(timeline.contains("verdict:  recovered (fix 5566778899), clear"), "{timeline}");
    assert!(timeline.contains("fio.write_iops -30.2% (clear)"), "{timeline}");
    assert!(timeline.contains("retest-done      -> retest-done"), "{timeline}");
    let out = lkpbot(&["--db", db, "case", &id, "--json"]);
    let one: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(one["id"], case["id"]);
    // A second ingest changes nothing.
    let out = lkpbot(&["--db", db, "ingest", fixture.to_str().unwrap()]);
    let summary = String::from_utf8(out.stdout).unwrap();
    assert!(summary.contains("duplicates                         3"), "{summary}");
}

#[test]
fn cli_errors_map_to_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let db = db.to_str().unwrap();
    assert_eq!(lkpbot(&["--db", db, "cases", "--state", "nonsense"]).status.code(), Some(1));
    let out = lkpbot(&["--db", db, "cases", "--sort", "nonsense"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("attention"), "the error names the orders");
    assert_eq!(lkpbot(&["--db", db, "case", "999"]).status.code(), Some(1));
    let out = lkpbot(&["--db", db, "ingest", "/nonexistent/archive.mbox"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/archive.mbox"));
    // Listing a store that is not there is the user's mistake, and
    // creates nothing; a file that is no store is a run-time failure.
    let out = lkpbot(&["--db", "/nonexistent/dir/x.db", "cases"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no store at /nonexistent/dir/x.db"));
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, b"this is not an SQLite file, but it is long enough to look like one...").unwrap();
    assert_eq!(lkpbot(&["--db", junk.to_str().unwrap(), "cases"]).status.code(), Some(2));
}

/// A store on a read-only medium (a read-only bind mount, in a mount
/// namespace of its own so nothing leaks) can still be listed: the reader
/// opens it read-only, and as immutable when SQLite cannot make the WAL
/// index beside it.
#[test]
fn cli_lists_a_store_on_a_read_only_medium() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let fixture = util::fixtures().join("threads/retest-fixup.mbox");
    let out = lkpbot(&["--db", db.to_str().unwrap(), "ingest", fixture.to_str().unwrap()]);
    assert!(out.status.success());
    // A store left alone is one file (and its lock): what a copy onto a
    // read-only share looks like.
    assert!(!dir.path().join("x.db-wal").exists(), "ingest left its WAL behind");
    let d = dir.path().to_str().unwrap();
    let read_only =
        format!("mount --bind {d} {d} && mount -o remount,bind,ro {d} {d} && ! touch {d}/probe 2>/dev/null");
    let in_namespace = |then: &str| {
        Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", &format!("{read_only} && {then}")])
            .output()
    };
    match in_namespace("true") {
        Ok(o) if o.status.success() => {}
        other => {
            assert!(std::env::var_os("CI").is_none(), "cannot make a read-only mount here: {other:?}");
            eprintln!("skipping: no read-only bind mount here (needs root); under CI this fails");
            return;
        }
    }
    let out =
        in_namespace(&format!("exec {} --db {d}/x.db cases --state all --json", env!("CARGO_BIN_EXE_lkpbot"))).unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["report_message_id"], "202604071400.bbbb0001-lkp@intel.com");
}
