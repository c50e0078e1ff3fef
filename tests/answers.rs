//! Every mail the bot writes, as its reader gets it: each command's reply
//! (one golden file per outcome, the whole message with its headers), the
//! retest request, the reminder, the verdict and the digest mail. The
//! command mails go through `classify`, `act::policy::respond` and
//! `render` as the engine drives them; the case and what the store knows
//! around it are given.

use std::path::PathBuf;

use lkpbot::act::policy::{self, Policy, World};
use lkpbot::case::{CaseFacts, CaseId, CaseKind, CaseState, CaseView, Replayed};
use lkpbot::classify::{ClassifyConfig, classify};
use lkpbot::model::{Auth, Direction, MessageId, Verdict};
use lkpbot::render::{self, Identity, Outgoing, RetestRequestFacts};
use lkpbot::thread::Incoming;

use crate::util;

/// 2026-06-01 10:00:00 UTC.
const NOW: i64 = 1_780_308_000;
const REPORT: &str = "202605121641.b6a60cb0-lkp@intel.com";
const TITLE: &str = "[linus:master] [mm]  01b9da291c: stress-ng.switch.ops_per_sec 67.7% regression";

fn identity() -> Identity {
    Identity {
        address: "lkpbot@example.org".into(),
        name: "lkpbot".into(),
        archive_url: "https://lore.kernel.org/r/".into(),
    }
}

fn case() -> CaseView {
    CaseView {
        id: CaseId(42),
        state: CaseState::Discussed,
        facts: CaseFacts {
            report_to: vec!["author@example.org".into(), "committer@example.org".into()],
            commit: Some("01b9da291c4969354807b52956f4aae1f41b4924".into()),
            commit_subject: Some("mm: memcontrol: convert objcg to be per-memcg per-node type".into()),
            tree: Some("linus".into()),
            branch: Some("master".into()),
            testcase: Some("stress-ng".into()),
            metric: Some("stress-ng.switch.ops_per_sec".into()),
            change_pct: Some(-67.7),
            direction: Some(Direction::Regression),
            ..CaseFacts::new(
                CaseKind::PerfRegression,
                TITLE.trim_start_matches("[linus:master] [mm]  ").into(),
                MessageId::new(REPORT).unwrap(),
                NOW - 20 * 86_400,
            )
        },
    }
}

fn date(t: i64) -> String {
    jiff::Timestamp::from_second(t).unwrap().strftime("%a, %d %b %Y %H:%M:%S +0000").to_string()
}

/// A reply in the report's thread from Jane, with `body`, sent an hour
/// ago to the list and the report's author, the bot in Cc.
fn command_mail(name: &str, body: &str) -> Incoming {
    let raw = format!(
        "From: Jane Developer <jane@example.org>\nTo: linux-mm@kvack.org, author@example.org\n\
         Cc: lkpbot <lkpbot@example.org>\nSubject: Re: {TITLE}\nMessage-ID: <{name}@example.org>\n\
         In-Reply-To: <{REPORT}>\nReferences: <{REPORT}>\nDate: {}\n\nOn Tue, the robot wrote:\n> the report\n\n{body}\n\nJane\n",
        date(NOW - 3600)
    );
    let m = lkpbot::mail::parse(raw.as_bytes());
    let c = classify(&m, &ClassifyConfig::default());
    Incoming::new(m, c)
}

fn world() -> World {
    World { now: NOW, fetched_at: NOW - 60, case: Some(case()), ..World::default() }
}

/// The message as it is sent, with LF line ends.
fn text(out: &Outgoing) -> String {
    String::from_utf8(out.to_rfc5322(&identity())).unwrap().replace("\r\n", "\n")
}

fn check(name: &str, out: &Outgoing) -> Result<(), String> {
    let path: PathBuf = util::fixtures().join("answers").join(format!("{name}.txt"));
    util::check_golden(&path, &text(out))
}

/// The bot's reply to `body` in `w` under `p`, through the policy and the
/// renderer as the engine calls them.
fn reply(name: &str, body: &str, w: &World, p: &Policy) -> Outgoing {
    reply_from(name, body, w, p, Auth::default())
}

/// [`reply`] to a mail whose sender was verified as `auth` says.
fn reply_from(name: &str, body: &str, w: &World, p: &Policy, auth: Auth) -> Outgoing {
    let mut m = command_mail(name, body);
    m.auth = auth;
    let r = policy::respond(&m, w, p).unwrap_or_else(|s| panic!("{name}: silent: {s:?}"));
    let sender = p.sender(&m).unwrap().to_string();
    let to = render::Addressees { sender: &sender, thread: &thread() };
    render::reply(&m, &r, w.case.as_ref(), &to, &identity(), &format!("reply:{}", m.message_id), NOW, p.max_commands)
}

/// Whom the report went to (To, then Cc): a reply in its thread copies
/// them, and no one its command mail adds.
fn thread() -> Vec<String> {
    ["author@example.org", "committer@example.org", "oe-lkp@lists.linux.dev", "lkp@intel.com", "linux-mm@kvack.org"]
        .map(String::from)
        .to_vec()
}

#[test]
fn every_reply_to_a_command() {
    let p = Policy::default();
    let may = World { may_change: true, ..world() };
    let pending = World { pending_retest: Some((NOW - 2 * 86_400, "first@example.org".into())), ..world() };
    let no_case = World { case: None, ..world() };
    let judged = World {
        progress: Some(Replayed {
            state: CaseState::RetestDone,
            verdict: Some(Verdict::PartlyRecovered),
            fix_commit: Some("6df13230b6a1b2c3d4e5f60718293a4b5c6d7e8f".into()),
            fix_message_id: None,
            title: None,
            last_activity: Some(NOW - 3 * 86_400),
        }),
        case: Some(CaseView { state: CaseState::RetestDone, ..case() }),
        ..world()
    };
    let quiet = World { progress: Some(Replayed { last_activity: Some(NOW - 5 * 86_400), ..progress() }), ..world() };
    let two = Policy { max_commands: 2, ..Policy::default() };
    let long_title = format!("#lkp title mm: {}", "the frobnicator takes the page lock twice ".repeat(6));
    let long_line = format!("#lkp invalid {}", "word ".repeat(2000));
    let rows: &[(&str, &str, &World, &Policy)] = &[
        ("retest-requested", "please retest", &world(), &p),
        ("test-a-fix", "#lkp test https://lore.kernel.org/r/20260530.fix-1-jane@example.org", &world(), &p),
        ("already-requested", "#lkp retest", &pending, &p),
        ("retest-twice-in-one-mail", "please retest\n#lkp test 0123456789ab", &world(), &p),
        ("done-fixed", "#lkp fixed 0123456789ab", &may, &p),
        ("done-resolve", "#lkp resolve", &may, &p),
        ("done-invalid", "#lkp invalid the test machine was overheating", &may, &p),
        ("done-dup", "#lkp dup 12", &may, &p),
        ("done-reopen", "#lkp reopen", &may, &p),
        ("done-title-with-braces", "#lkp title mm: {case_id} and {title} stay as written", &may, &p),
        ("not-allowed", "#lkp resolve", &world(), &p),
        ("missing-argument", "#lkp invalid", &may, &p),
        ("unknown-near", "#lkp retset", &world(), &p),
        ("unknown", "#lkp frobnicate", &world(), &p),
        ("case-not-found", "#lkp status", &no_case, &p),
        ("status-with-verdict", "#lkp status", &judged, &p),
        ("status", "#lkp status", &quiet, &p),
        ("help", "#lkp help", &no_case, &p),
        ("subscribed", "#lkp subscribe tree:linus min:5", &world(), &p),
        ("bad-filter", "#lkp subscribe colour:blue", &world(), &p),
        ("unsubscribed", "#lkp unsubscribe", &world(), &p),
        ("ignored", "#lkp status\n#lkp retest\n#lkp resolve", &may, &two),
        ("bad-target", "#lkp test ; rm -rf / #", &world(), &p),
        ("title-too-long", &long_title, &may, &p),
        ("line-too-long", &long_line, &may, &p),
    ];
    let mut bad = Vec::new();
    for (name, body, w, p) in rows {
        if let Err(e) = check(&format!("reply-{name}"), &reply(name, body, w, p)) {
            bad.push(e);
        }
    }
    // Under `require`, a sender whose mail did not pass.
    let require = Policy { require_auth: true, ..Policy::default() };
    let forged = || Auth::none("no DKIM signature");
    let refused: &[(&str, &str, &World)] =
        &[("not-authenticated", "#lkp resolve", &may), ("not-authenticated-subscribe", "#lkp subscribe", &world())];
    for (name, body, w) in refused {
        if let Err(e) = check(&format!("reply-{name}"), &reply_from(name, body, w, &require, forged())) {
            bad.push(e);
        }
    }
    // A budget used up: the one notice, to the sender alone.
    let m = command_mail("limited", "please retest");
    let w = World { to_sender: policy::Spent { sent: 10, oldest: Some(NOW - 1500), notices: 0 }, ..world() };
    let silence = policy::respond(&m, &w, &Policy::default()).unwrap_err();
    let policy::Silence::RateLimited { budget, until, tell: true } = silence else { panic!("{silence:?}") };
    let used = policy::budget_used(budget, &m, &w, &Policy::default());
    let notice = render::limit_notice(
        &m,
        "jane@example.org",
        &policy::hh_mm(until),
        &used,
        &identity(),
        "reply:limited@example.org",
        NOW,
    );
    if let Err(e) = check("limit", &notice) {
        bad.push(e);
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn progress() -> Replayed {
    Replayed {
        state: CaseState::Discussed,
        verdict: None,
        fix_commit: None,
        fix_message_id: None,
        title: None,
        last_activity: None,
    }
}

/// The report's facts as the store keeps them (the parts a retest
/// request reads).
fn report_facts() -> serde_json::Value {
    serde_json::json!({
        "test_machine": "224 threads 2 sockets Intel(R) Xeon(R) Platinum 8480CTDX (Sapphire Rapids) with 256G memory",
        "parameters": {"nr_threads": "100%", "testtime": "60s", "test": "switch"},
        "config": "x86_64-rhel-9.4",
        "compiler": "gcc-12",
        "table": {"commits": ["9f8e7d6c5b", "01b9da291c"]},
    })
}

#[test]
fn the_retest_request_the_reminder_and_the_verdict() {
    let id = identity();
    let m = command_mail("ask", "#lkp test https://lore.kernel.org/r/20260530.fix-1-jane@example.org");
    let target = "https://lore.kernel.org/r/20260530.fix-1-jane@example.org";
    let facts = RetestRequestFacts::new(&case(), Some(&report_facts()), &m, Some(target), &id);
    let report = MessageId::new(REPORT).unwrap();
    let request = render::retest_request(&facts, "lkp@intel.com", &report, &id, "retest:42:ask@example.org", NOW);
    let reminder = render::reminder(&facts, NOW - 7 * 86_400, "lkp@intel.com", &id, "reminder:42:ask@example.org", NOW);
    let result = {
        let raw = format!(
            "From: kernel test robot <oliver.sang@intel.com>\nTo: jane@example.org\nSubject: Re: {TITLE}\n\
             Message-ID: <result-1@intel.com>\nIn-Reply-To: <ask@example.org>\nReferences: <{REPORT}> <ask@example.org>\n\
             Date: {}\n\nhi Jane,\n\nthe fix recovers most of the regression.\n",
            date(NOW - 600)
        );
        let m = lkpbot::mail::parse(raw.as_bytes());
        let c = classify(&m, &ClassifyConfig::default());
        Incoming::new(m, c)
    };
    let verdict = render::verdict(
        "jane@example.org",
        NOW - 2 * 86_400,
        &result,
        &case(),
        "partly-recovered",
        Some(0.83),
        "6df13230b6",
        "stress-ng.switch.ops_per_sec",
        &id,
        "verdict:42:ask@example.org",
        NOW,
    );
    let digest = render::digest(
        "lkpbot digest 2026-W22: 1 new, 0 fixed, 3 open",
        "New this week\n  42  stress-ng.switch.ops_per_sec -67.7%  01b9da291c\n",
        "linux-mm@kvack.org",
        &id,
        "digest:2026-W22:linux-mm@kvack.org",
        NOW,
    );
    let mut bad = Vec::new();
    for (name, out) in [("retest-request", request), ("reminder", reminder), ("verdict", verdict), ("digest", digest)] {
        if let Err(e) = check(name, &out) {
            bad.push(e);
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A Subject of any length (the command mail's, taken up by `Re:`) is
/// cut to 250 characters, folded, no line of the header passes 998 bytes,
/// and a mail reader reads it back as it was cut.
#[test]
fn long_subjects_are_cut_and_folded() {
    for subject in [
        format!("Re: {}", "word ".repeat(2000)),
        format!("Re: {}", "x".repeat(10_000)),
        format!("Re: {}", "é".repeat(5000)),
        format!("Re: [linus:master] [mm]  01b9da291c: {}", "ü word ".repeat(100)),
    ] {
        let out =
            render::compose(&identity(), "c", vec!["a@example.org".into()], vec![], subject.clone(), None, "hi", NOW);
        let raw = out.to_rfc5322(&identity());
        let text = String::from_utf8(raw.clone()).unwrap();
        let head = text.split("\r\n\r\n").next().unwrap();
        assert!(head.split("\r\n").all(|l| l.len() <= render::MAX_LINE_BYTES), "{head}");
        let back = lkpbot::mail::parse(&raw);
        let cut: String = subject.chars().take(render::MAX_SUBJECT_CHARS).collect();
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(words(back.subject.trim_end_matches("...")), words(&cut), "{head}");
    }
}
