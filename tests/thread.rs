//! Thread scenarios: small mbox fixtures in `fixtures/threads/`, ingested
//! into a store file through the engine (with the stale sweep off, at a
//! fixed `NOW`), then the cases they make are checked. Each test draws the
//! shape of its fixture: `<-` points from a reply to what it answers.

use std::collections::BTreeSet;
use std::path::Path;

use lkpbot::case::{CaseFilter, CaseRecord};
use lkpbot::case::{CaseKind, CaseState, EventKind, Relation, Strategy};
use lkpbot::classify::ClassifyConfig;
use lkpbot::engine::{Engine, Envelope, IngestStats, Settings};
use lkpbot::model::Verdict;
use lkpbot::store::Store;

use crate::util;

/// 2027-01-15: after every fixture message.
pub const NOW: i64 = 1_800_000_000;

pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
}

/// An engine with the default settings.
pub fn engine(store: Store) -> Engine {
    Engine::new(store, Settings::with_classify(ClassifyConfig::default()))
}

/// A message read at [`NOW`].
pub fn env(bytes: &[u8]) -> Envelope {
    Envelope::new(bytes.to_vec(), NOW)
}

/// The messages of `fixtures/threads/NAME.mbox`, in file order.
pub fn fixture_messages(name: &str) -> Vec<Vec<u8>> {
    let path = util::fixtures().join("threads").join(format!("{name}.mbox"));
    let msgs: Vec<Vec<u8>> = lkpbot::source::open(&path).unwrap().map(|m| m.unwrap().bytes).collect();
    assert!(!msgs.is_empty(), "{} holds no message", path.display());
    msgs
}

/// Every thread fixture's messages, file by file, each in file order.
pub fn all_fixture_messages() -> Vec<Vec<u8>> {
    util::files_with_suffix(&util::fixtures().join("threads"), ".mbox")
        .iter()
        .flat_map(|p| fixture_messages(p.file_stem().unwrap().to_str().unwrap()))
        .collect()
}

pub struct Run {
    pub stats: IngestStats,
    pub cases: Vec<CaseRecord>,
}

/// Ingests `msgs` into a fresh store file in `dir`; with `flush_each`,
/// every message is its own transaction (so a reply that came early waits
/// in the store, not in the batch).
pub async fn ingest_into(dir: &Path, msgs: &[Vec<u8>], flush_each: bool) -> Run {
    let mut engine = engine(Store::open(&dir.join("lkpbot.db")).await.unwrap());
    for m in msgs {
        engine.push(env(m)).await.unwrap();
        if flush_each {
            engine.flush().await.unwrap();
        }
    }
    let stats = engine.finish().await.unwrap();
    let cases = engine.store().cases(CaseFilter::All, true).await.unwrap();
    Run { stats, cases }
}

pub fn ingest(msgs: &[Vec<u8>], flush_each: bool) -> Run {
    let dir = tempfile::tempdir().unwrap();
    block_on(ingest_into(dir.path(), msgs, flush_each))
}

fn message_ids(c: &CaseRecord) -> BTreeSet<String> {
    c.messages.iter().map(|m| m.message_id.to_string()).collect()
}

fn event_kinds(c: &CaseRecord) -> Vec<(EventKind, Option<String>)> {
    let mut ev: Vec<_> =
        c.events.iter().map(|e| (e.at, e.kind, e.message_id.as_ref().map(|m| m.to_string()))).collect();
    ev.sort();
    ev.into_iter().map(|(_, k, m)| (k, m)).collect()
}

fn ids(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// ```text
/// R  202603051000.aaaa0001-lkp@intel.com   perf regression (robot)
/// <- A  aaaa0002@example.org     References: R            (discussion)
///    <- B  aaaa0003@example.com  In-Reply-To: A only      (unrelated alone)
///       <- C  aaaa0004@example.org  References: A B       (unrelated alone)
/// ```
/// Every reply joins R's case through its references, at any depth, even
/// when the classifier, seeing one message, calls it unrelated.
#[test]
fn reply_chain_joins_one_case() {
    let run = ingest(&fixture_messages("reply-chain"), false);
    assert_eq!(run.stats.cases_opened, 1);
    assert_eq!(run.stats.attached, 3);
    let [case] = run.cases.as_slice() else { panic!("one case expected, got {}", run.cases.len()) };
    assert_eq!(case.view.facts.kind, CaseKind::PerfRegression);
    assert_eq!(case.view.facts.commit.as_deref(), Some("1234567890abcdef1234567890abcdef12345678"));
    assert_eq!(case.view.facts.metric.as_deref(), Some("will-it-scale.per_process_ops"));
    assert_eq!(case.view.state, CaseState::Discussed);
    assert_eq!(
        message_ids(case),
        ids(&[
            "202603051000.aaaa0001-lkp@intel.com",
            "aaaa0002@example.org",
            "aaaa0003@example.com",
            "aaaa0004@example.org"
        ])
    );
    let strategies: BTreeSet<Strategy> = case.messages.iter().map(|m| m.strategy).collect();
    assert_eq!(strategies, [Strategy::Report, Strategy::References].into_iter().collect());
    let kinds: Vec<EventKind> = event_kinds(case).into_iter().map(|(k, _)| k).collect();
    assert_eq!(kinds, [EventKind::Reported, EventKind::Discussion, EventKind::Discussion, EventKind::Discussion]);
}

/// The same four messages as `reply_chain_joins_one_case`, arriving last
/// to first (C, B, A, R): each reply waits for its parent and joins the
/// case when R arrives. Within one transaction and with a transaction per
/// message, the case ends exactly as with the archive in order.
#[test]
fn out_of_order_arrival_ends_as_in_order() {
    let msgs = fixture_messages("reply-chain");
    let in_order = ingest(&msgs, false);
    let reversed: Vec<Vec<u8>> = msgs.iter().rev().cloned().collect();
    for flush_each in [false, true] {
        let run = ingest(&reversed, flush_each);
        assert_eq!(run.stats.cases_opened, 1, "flush_each={flush_each}");
        assert_eq!(run.stats.attached, 3, "flush_each={flush_each}");
        let [case] = run.cases.as_slice() else { panic!("one case expected") };
        let [want] = in_order.cases.as_slice() else { panic!("one case expected") };
        assert_eq!(message_ids(case), message_ids(want), "flush_each={flush_each}");
        assert_eq!(event_kinds(case), event_kinds(want), "flush_each={flush_each}");
        assert_eq!(case.view.state, want.view.state);
    }
}

/// The replies C, B, A of `reply_chain_joins_one_case` in one run, their
/// report R in a later run on the same store file (a fetch that missed R,
/// then the next one): what waits is known again after the store is
/// reopened, and the case ends as with the archive in order.
#[test]
fn replies_waiting_across_runs_join_when_the_report_arrives() {
    let msgs = fixture_messages("reply-chain");
    let in_order = ingest(&msgs, false);
    let dir = tempfile::tempdir().unwrap();
    let replies: Vec<Vec<u8>> = msgs[1..].iter().rev().cloned().collect();
    let first = block_on(ingest_into(dir.path(), &replies, false));
    assert_eq!(first.stats.cases_opened, 0);
    assert!(first.cases.is_empty());
    let second = block_on(ingest_into(dir.path(), &msgs[..1], false));
    assert_eq!(second.stats.cases_opened, 1);
    assert_eq!(second.stats.attached, 3);
    let [case] = second.cases.as_slice() else { panic!("one case expected") };
    let [want] = in_order.cases.as_slice() else { panic!("one case expected") };
    assert_eq!(message_ids(case), message_ids(want));
    assert_eq!(event_kinds(case), event_kinds(want));
    assert_eq!(case.view.state, want.view.state);
}

/// Two `lkpbot`s on one store file (a daemon fetching, a user importing):
/// store A has written before, store B then stores the replies C, B, A,
/// and A stores their report R. A learns what B left waiting, and the
/// replies join R's case.
#[test]
fn replies_stored_by_another_process_join_when_the_report_arrives() {
    let msgs = fixture_messages("reply-chain");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lkpbot.db");
    let cases = block_on(async {
        let mut a = Store::open(&path).await.unwrap();
        a.begin().await.unwrap().commit().await.unwrap();
        let b = Store::open(&path).await.unwrap();
        let mut engine = engine(b);
        for m in msgs[1..].iter().rev() {
            engine.push(env(m)).await.unwrap();
        }
        assert_eq!(engine.finish().await.unwrap().cases_opened, 0);
        let mut engine = self::engine(a);
        engine.push(env(&msgs[0])).await.unwrap();
        let stats = engine.finish().await.unwrap();
        assert_eq!((stats.cases_opened, stats.attached), (1, 3));
        engine.store().cases(CaseFilter::All, true).await.unwrap()
    });
    let [case] = cases.as_slice() else { panic!("one case expected, got {}", cases.len()) };
    assert_eq!(message_ids(case).len(), 4);
}

/// ```text
/// R  202605111200.cccc0001-lkp@intel.com        functional (robot)
/// F  [PATCH] xfs: check the inode log item ...  new thread; Closes: .../oe-lkp/<R>
/// <- G  cccc0003@example.com                    References: F ("Looks good")
/// ```
/// The fix joins by its `Closes:` link and the case goes to fix-posted;
/// the review of the fix follows it into the case by reference.
#[test]
fn fix_patch_with_closes_joins_its_report() {
    let run = ingest(&fixture_messages("fix-closes"), false);
    let [case] = run.cases.as_slice() else { panic!("one case expected, got {}", run.cases.len()) };
    assert_eq!(case.view.facts.kind, CaseKind::Functional);
    assert_eq!(case.view.facts.signature.as_deref(), Some("BUG:kernel_NULL_pointer_dereference,address"));
    assert_eq!(case.view.state, CaseState::FixPosted);
    assert_eq!(
        case.fix_message_id.as_ref().map(|m| m.to_string()).as_deref(),
        Some("20260512020000.cccc0002@example.org")
    );
    let fix = case.messages.iter().find(|m| m.message_id.as_str() == "20260512020000.cccc0002@example.org").unwrap();
    assert_eq!(fix.strategy, Strategy::Link);
    let review = case.messages.iter().find(|m| m.message_id.as_str() == "cccc0003@example.com").unwrap();
    assert_eq!(review.strategy, Strategy::References);
}

/// ```text
/// R  202604071400.bbbb0001-lkp@intel.com   perf regression (robot)
/// <- Q  bbbb0002@example.net   "Could you please test this patch on top?"
///    <- T  bbbb0003-lkp@intel.com  LKP reply: base / bad / 5566778899 (fixup), recovered
/// ```
#[test]
fn retest_with_fixup_column_records_verdict_and_fix() {
    let run = ingest(&fixture_messages("retest-fixup"), false);
    let [case] = run.cases.as_slice() else { panic!("one case expected") };
    assert_eq!(case.view.state, CaseState::RetestDone);
    assert_eq!(case.verdict, Some(Verdict::Recovered));
    assert_eq!(case.fix_commit.as_deref(), Some("5566778899"));
    let kinds: Vec<EventKind> = event_kinds(case).into_iter().map(|(k, _)| k).collect();
    assert_eq!(kinds, [EventKind::Reported, EventKind::RetestRequested, EventKind::RetestDone]);
    let done = case.events.iter().find(|e| e.kind == EventKind::RetestDone).unwrap();
    assert_eq!(done.message_id.as_ref().unwrap().as_str(), "bbbb0003-lkp@intel.com");
    assert_eq!(done.verdict, Some(Verdict::Recovered));
}

/// ```text
/// R  202606011000.abab0001-lkp@intel.com   perf regression (robot), abcdef0123 aim7 -20.5%
/// <- C  abab0002-lkp@intel.com   LKP rerun, quotes nothing: two columns, still -20.9%
///    <- Q  abab0003@example.org   "could you give this a spin?" + diff
///       <- F  abab0004-lkp@intel.com   fix column 1122aabbcc: partly recovered
///          <- U  abab0005-lkp@intel.com   "reran with your v2 patch applied"; dmesg.xz attached
/// <- M  abab0006-lkp@intel.com   "merged into mainline, and we still see the regression"
/// ```
/// The rerun adds a confirmed event, the fix run without a readable result
/// a result-unknown event (with the fix it names) that leaves the verdict
/// and its fix alone, and the later tree a still-present event; all three
/// show in `case --json` and in the timeline.
#[test]
fn reruns_results_without_a_verdict_and_later_trees_are_events() {
    let run = ingest(&fixture_messages("verdicts-kept-through-reruns-and-later-trees"), false);
    let [case] = run.cases.as_slice() else { panic!("one case expected, got {}", run.cases.len()) };
    let kinds: Vec<(EventKind, Option<String>)> = event_kinds(case);
    let id = |s: &str| Some(s.to_string());
    assert_eq!(
        kinds,
        [
            (EventKind::Reported, id("202606011000.abab0001-lkp@intel.com")),
            (EventKind::Confirmed, id("abab0002-lkp@intel.com")),
            (EventKind::RetestRequested, id("abab0003@example.org")),
            (EventKind::RetestDone, id("abab0004-lkp@intel.com")),
            (EventKind::ResultUnknown, id("abab0005-lkp@intel.com")),
            (EventKind::StillPresent, id("abab0006-lkp@intel.com")),
        ]
    );
    // The verdict is the fix column's; neither the result without one nor
    // the later tree changes it, or the fix it is of.
    assert_eq!(case.view.state, CaseState::RetestDone);
    assert_eq!(case.verdict, Some(Verdict::PartlyRecovered));
    assert_eq!(case.fix_commit.as_deref(), Some("1122aabbcc"));
    let event = |k| case.events.iter().find(|e| e.kind == k).unwrap();
    assert_eq!(event(EventKind::Confirmed).verdict, None);
    assert_eq!(
        event(EventKind::Confirmed).note.as_deref(),
        Some("still regressed: rerun without a fix, aim7.jobs-per-min -20.9%")
    );
    let unknown = event(EventKind::ResultUnknown);
    assert_eq!(unknown.verdict, None);
    assert_eq!(unknown.fix_commit.as_deref(), Some("https://lore.kernel.org/all/abab0010@example.org/"));
    assert_eq!(unknown.note.as_deref(), Some("no verdict: the result is in dmesg.xz, which is not plain text"));
    assert_eq!(event(EventKind::StillPresent).note.as_deref(), Some("still present in mainline"));

    let json = lkpbot::view::case_json(case, "https://lore.kernel.org/r/");
    let listed: Vec<&str> = json["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(listed, ["reported", "confirmed", "retest-requested", "retest-done", "result-unknown", "still-present"]);
    let timeline = lkpbot::view::case_timeline(case, NOW, "https://lore.kernel.org/r/");
    for line in [
        "confirmed        -> retest-done",
        "result-unknown   -> retest-done",
        "still-present    -> retest-done",
        "[still present in mainline]",
    ] {
        assert!(timeline.contains(line), "{line} not in\n{timeline}");
    }
}

/// ```text
/// A  2b0f904a5a fio.read_bw_MBps -16.1% regression            "mm/cma: manage the memory ..."
/// B  2b0f904a5a will-it-scale.per_thread_ops -7.7% regression  same commit, other testcase
/// C  4405c5fd84 vm-scalability.throughput +26.5% improvement   same patch, rebased
/// ```
/// (The shape of seeds 000 and 001.) Three cases, linked, never merged:
/// A-B by commit, A-C and B-C by patch; the improvement is informational.
#[test]
fn same_patch_under_two_shas_is_linked_not_merged() {
    let run = ingest(&fixture_messages("same-patch-two-shas"), false);
    assert_eq!(run.stats.cases_opened, 3);
    let by_commit = |prefix: &str, kind| {
        run.cases
            .iter()
            .find(|c| c.view.facts.commit.as_deref().unwrap().starts_with(prefix) && c.view.facts.kind == kind)
            .unwrap()
    };
    let a = by_commit("2b0f904a5a", CaseKind::PerfRegression);
    let c = by_commit("4405c5fd84", CaseKind::PerfImprovement);
    let b = run.cases.iter().find(|x| x.view.facts.testcase.as_deref() == Some("will-it-scale")).unwrap();
    assert_eq!(a.view.state, CaseState::Reported);
    assert_eq!(c.view.state, CaseState::Informational);
    assert_eq!(a.related, vec![(b.view.id, Relation::SameCommit), (c.view.id, Relation::SamePatch)]);
    assert_eq!(c.related, vec![(a.view.id, Relation::SamePatch), (b.view.id, Relation::SamePatch)]);
    assert_eq!(a.messages.len(), 1);
    assert_eq!(c.messages.len(), 1);
}

/// ```text
/// R   202606100800.EeEe0001-lkp@intel.com   build warning, from linux-acpi
/// R'  the same Message-ID, from linux-pm (another List-Id, a list footer)
/// <- D  eeee0002@example.org   References: R
/// ```
/// One message, one case; the second copy is a duplicate and changes
/// nothing.
#[test]
fn duplicate_from_two_lists_is_one_message() {
    let run = ingest(&fixture_messages("duplicate-two-lists"), false);
    assert_eq!(run.stats.read, 3);
    assert_eq!(run.stats.new, 2);
    assert_eq!(run.stats.duplicates, 1);
    let [case] = run.cases.as_slice() else { panic!("one case expected") };
    assert_eq!(case.view.facts.kind, CaseKind::Build);
    assert_eq!(message_ids(case), ids(&["202606100800.EeEe0001-lkp@intel.com", "eeee0002@example.org"]));
    assert_eq!(case.events.len(), 2);
}

/// ```text
/// R  20200203010000.ffff0001@shao2-debian  functional, [ext4] 7a7a7a7a7a: xfstests.generic.123.fail
/// S  ffff0002@example.org   no References; "Re: [LKP] [ext4] 7a7a7a7a7a: ..."  -> subject rung
/// Q  ffff0003@example.com   no References, another subject; quotes R's commit -> commit rung
/// ```
#[test]
fn subject_and_commit_rungs_catch_replies_without_references() {
    let run = ingest(&fixture_messages("subject-and-commit"), false);
    let [case] = run.cases.as_slice() else { panic!("one case expected") };
    let strategy = |id: &str| case.messages.iter().find(|m| m.message_id.as_str() == id).map(|m| m.strategy);
    assert_eq!(strategy("ffff0002@example.org"), Some(Strategy::Subject));
    assert_eq!(strategy("ffff0003@example.com"), Some(Strategy::Commit));
    assert_eq!(case.view.state, CaseState::Discussed);
}

/// Every fixture, ingested twice into one store, changes no row the
/// second time.
#[test]
fn fixtures_ingest_idempotently() {
    let dir = tempfile::tempdir().unwrap();
    let all = all_fixture_messages();
    block_on(async {
        let first = ingest_into(dir.path(), &all, false).await;
        assert!(first.stats.cases_opened >= 8);
        let mut store = Store::open(&dir.path().join("lkpbot.db")).await.unwrap();
        let before = store.table_stats().await.unwrap();
        drop(store);
        let second = ingest_into(dir.path(), &all, false).await.stats;
        assert_eq!(second.new, 0);
        assert_eq!(second.duplicates, all.len() as u64);
        let mut store = Store::open(&dir.path().join("lkpbot.db")).await.unwrap();
        assert_eq!(store.table_stats().await.unwrap(), before);
    });
}

/// ```text
/// first ingest:   R, A                     (R a report, A <- R)
/// second ingest:  R, A, B, C in one batch  (B <- A, C <- B; R and A are
///                                           duplicates, stored before)
/// ```
/// Replies that arrive with copies of what was stored before still join
/// the case through them: a duplicate is looked up, not just skipped.
#[test]
fn new_replies_beside_duplicates_of_their_ancestors_join_the_case() {
    let msgs = fixture_messages("reply-chain");
    let dir = tempfile::tempdir().unwrap();
    block_on(async {
        let first = ingest_into(dir.path(), &msgs[..2], false).await;
        assert_eq!((first.stats.cases_opened, first.stats.attached), (1, 1));
        let second = ingest_into(dir.path(), &msgs, false).await;
        assert_eq!(second.stats.duplicates, 2);
        assert_eq!(second.stats.new, 2);
        assert_eq!(second.stats.attached, 2);
        let [case] = second.cases.as_slice() else { panic!("one case expected, got {}", second.cases.len()) };
        assert_eq!(message_ids(case).len(), 4);
        // By their references, not by a weaker rung.
        let strategies: BTreeSet<Strategy> = case.messages.iter().map(|m| m.strategy).collect();
        assert_eq!(strategies, [Strategy::Report, Strategy::References].into_iter().collect());
    });
}

/// ```text
/// R  202603091000.dddd0001-lkp@intel.com   perf regression, To: cy@example.org
/// <- X  dddd0002@example.net   a passer-by: "#lkp resolve"
/// <- Y  dddd0003@example.org   the report's addressee: "#lkp invalid the machine ran with turbo off"
/// ```
/// Anyone may talk in a thread, but only the report's addressees, the
/// maintainers and the LKP team may close a case: X's command is recorded
/// as discussion with the reason, Y's closes the case.
#[test]
fn only_who_may_close_a_case_closes_it() {
    let msgs = fixture_messages("commands-who-may");
    let run = ingest(&msgs[..2], false);
    let [case] = run.cases.as_slice() else { panic!("one case expected") };
    assert_eq!(case.view.state, CaseState::Discussed, "a passer-by resolved the case");
    let refused =
        case.events.iter().find(|e| e.message_id.as_ref().is_some_and(|m| m.as_str() == "dddd0002@example.net"));
    let refused = refused.expect("the passer-by's mail is an event");
    assert_eq!(refused.kind, EventKind::Discussion);
    assert!(refused.note.as_deref().unwrap_or("").starts_with("not allowed: #lkp resolve"), "{refused:?}");

    let run = ingest(&msgs, false);
    let [case] = run.cases.as_slice() else { panic!("one case expected") };
    assert_eq!(case.view.state, CaseState::Invalid);
    let invalid = case.events.iter().find(|e| e.kind == EventKind::Invalid).unwrap();
    assert_eq!(invalid.note.as_deref(), Some("the machine ran with turbo off"));
    assert_eq!(invalid.message_id.as_ref().unwrap().as_str(), "dddd0003@example.org");
}

/// The case of `report` in `run`.
fn case_of<'r>(run: &'r Run, report: &str) -> &'r CaseRecord {
    run.cases.iter().find(|c| c.view.facts.report_message_id.as_str() == report).expect("a case for the report")
}

/// ```text
/// A  202606011200.eeee0001-lkp@intel.com   functional report on "mm: vmscan: batch the lru moves"
/// C  eeee0010  [PATCH 0/2] cover letter (Fay)
///    <- P1 eeee0011  [PATCH 1/2] a stale comment (no Closes:)
///    <- P2 eeee0012  [PATCH 2/2] the fix, Closes: A               fix-posted
///    <- Q  eeee0013  Gil: "Applied? I don't see them ..."        a question: nothing
///       <- L  eeee0014  Fay: "I applied them locally"            the author: nothing
///    <- M  eeee0015  Andrew: "Applied to mm-hotfixes-unstable" + b4's [2/2] and commit
/// G  eeee0016  [GIT PULL] hotfixes, shortlog with P2's title wrapped
///    <- T  pr-tracker-bot: merged into torvalds/linux.git        fix-merged, resolved
/// B  202606011700.ffff0001-lkp@intel.com   build report on Gus's [PATCH] block: add the frobnicator ...
///    H  ffff0002  [PATCH v2] of the same title by Hal            not the author: nothing
///    V  ffff0003  [PATCH v2] by Gus                              superseded
/// S  202606011800.aaaa0001-lkp@intel.com   functional report on "sched: fair: skip idle balancing ..."
///    R  aaaa0002  [PATCH] Revert "sched: fair: skip ..."         reverted
/// ```
/// Lifecycle mail outside the report's thread moves the case it is tied
/// to, with its evidence; questions, the author's own "applied" and a
/// stranger's later version move nothing.
#[test]
fn lifecycle_mail_moves_cases_outside_their_thread() {
    let run = ingest(&fixture_messages("whole-lifecycle"), false);
    assert_eq!(run.cases.len(), 3);
    let a = case_of(&run, "202606011200.eeee0001-lkp@intel.com");
    assert_eq!(a.view.state, CaseState::Resolved);
    let kinds: Vec<(EventKind, Option<String>)> =
        event_kinds(a).into_iter().filter(|(k, _)| *k != EventKind::Reported).collect();
    let pr = Some("178130000000.1.1@kernel.org".to_string());
    assert_eq!(
        kinds,
        [
            (EventKind::FixPosted, Some("20260602020002.eeee0012@example.org".to_string())),
            (EventKind::FixApplied, Some("20260602180000.eeee0015@example.org".to_string())),
            (EventKind::Resolved, pr.clone()),
            (EventKind::FixMerged, pr),
        ]
    );
    let applied = a.events.iter().find(|e| e.kind == EventKind::FixApplied).unwrap();
    assert_eq!(applied.tree.as_deref(), Some("mm-hotfixes-unstable"));
    assert_eq!(applied.by.as_deref(), Some("akpm@example.org"));
    assert_eq!(applied.fix_commit.as_deref(), Some("0a1b2c3d4e5f60718293a4b5c6d7e8f901122334"));
    let merged = a.events.iter().find(|e| e.kind == EventKind::FixMerged).unwrap();
    assert_eq!(merged.tree.as_deref(), Some("torvalds/linux.git"));
    // The question and the author's own words are not in the case at all.
    assert!(!message_ids(a).contains("eeee0013@example.net"));
    assert!(!message_ids(a).contains("20260602060000.eeee0014@example.org"));

    let b = case_of(&run, "202606011700.ffff0001-lkp@intel.com");
    assert_eq!(b.view.state, CaseState::Superseded);
    let sup = b.events.iter().find(|e| e.kind == EventKind::Superseded).unwrap();
    assert_eq!(sup.message_id.as_ref().unwrap().as_str(), "20260603080000.ffff0003@example.com");
    assert_eq!(sup.by.as_deref(), Some("gus@example.com"));
    assert!(!message_ids(b).contains("20260602080000.ffff0002@example.com"), "a stranger's v2 superseded it");

    let s = case_of(&run, "202606011800.aaaa0001-lkp@intel.com");
    assert_eq!(s.view.state, CaseState::Reverted);
    let rev = s.events.iter().find(|e| e.kind == EventKind::Reverted).unwrap();
    assert_eq!(rev.message_id.as_ref().unwrap().as_str(), "20260604080000.aaaa0002@example.org");
}

/// The same mail in reverse, and the merge notice before anything it
/// names: the same states (the order tests check every field).
#[test]
fn lifecycle_mail_before_what_it_names_waits_for_it() {
    let mut msgs = fixture_messages("whole-lifecycle");
    msgs.reverse();
    let run = ingest(&msgs, true);
    let state = |r: &str| case_of(&run, r).view.state;
    assert_eq!(state("202606011200.eeee0001-lkp@intel.com"), CaseState::Resolved);
    assert_eq!(state("202606011700.ffff0001-lkp@intel.com"), CaseState::Superseded);
    assert_eq!(state("202606011800.aaaa0001-lkp@intel.com"), CaseState::Reverted);
}

/// ```text
/// F1 20210603020000.1111-1-ida  [PATCH] Reported-by: the robot, Link: (wrapped)
///      lists.01.org/.../lkp@lists.01.org/thread/<hash of A>/      fix-posted in A
///    <- J  Jon: "Applied to mm-hotfixes-unstable, thanks."        fix-applied in A
/// K  20210607030000.2222-1-kim  [PATCH] Reported-by: the robot, links to
///      .../message/<hash of Y> (a reply, no report) and
///      .../thread/<hash of a report never seen>                   in no case
/// A  20210601080000.GA1234@xsang-OptiPlex-9020   perf report (2021 template)
///    <- Y  YLXa1B2c3D4e5F6g@ida: the author answers               discussion
/// F2 20210709060000.3333-1-lev  [PATCH] Link: .../kbuild-all@lists.01.org/
///      message/<hash of B> (no trailing slash)                    fix-posted in B
/// B  20210705123456.GB5678@xsang-OptiPlex-9020   functional report
/// ```
/// The lists.01.org archive's links (HyperKitty: its id is a hash of the
/// Message-ID) tie fixes to the reports they name, however they arrive:
/// here each fix comes before its report. A link to what is no report,
/// even a message in a case, moves nothing.
#[test]
fn hyperkitty_links_tie_fixes_to_reports() {
    let msgs = fixture_messages("hyperkitty-links");
    for (name, msgs, flush_each) in
        [("in file order", msgs.clone(), false), ("reversed", msgs.iter().rev().cloned().collect(), true)]
    {
        let run = ingest(&msgs, flush_each);
        assert_eq!(run.cases.len(), 2, "{name}");
        let a = case_of(&run, "20210601080000.GA1234@xsang-OptiPlex-9020");
        assert_eq!(a.view.state, CaseState::FixApplied, "{name}");
        let fix = a.messages.iter().find(|m| m.message_id.as_str() == "20210603020000.1111-1-ida@example.org");
        assert_eq!(fix.map(|m| m.strategy), Some(Strategy::Link), "{name}");
        let kinds: Vec<(EventKind, Option<String>)> =
            event_kinds(a).into_iter().filter(|(k, _)| *k != EventKind::Reported).collect();
        assert_eq!(
            kinds,
            [
                (EventKind::Discussion, Some("YLXa1B2c3D4e5F6g@ida.example.org".to_string())),
                (EventKind::FixPosted, Some("20210603020000.1111-1-ida@example.org".to_string())),
                (EventKind::FixApplied, Some("20210604010000.GA77@jon.example.org".to_string())),
            ],
            "{name}"
        );
        let b = case_of(&run, "20210705123456.GB5678@xsang-OptiPlex-9020");
        assert_eq!(b.view.state, CaseState::FixPosted, "{name}");
        assert!(message_ids(b).contains("20210709060000.3333-1-lev@example.net"), "{name}");
        for c in &run.cases {
            assert!(!message_ids(c).contains("20210607030000.2222-1-kim@example.com"), "{name}: guessed onto a case");
        }
    }
}
