//! Reply budgets, the recipients of a reply and the loop breaker, through
//! the engine with `[auth] dkim = "require"` and the test keys pinned:
//! a forged flood cannot starve a signed request, a request the bot does
//! not act on is recorded as not done (and logged), a maintainer's dozen
//! signed retests are all answered, a command mail's 300 Cc are not
//! copied; and a second robot answering every reply is stopped within a
//! few mails (over a private Postfix and Dovecot).

use std::time::Duration;

use lkpbot::case::{CaseFilter, EventKind};
use lkpbot::engine::{Engine, Envelope};
use lkpbot::store::OutboxMail;

use crate::replies::{now, reply, report};
use crate::thread::block_on;
use crate::util::Log;
use crate::util::dkim::{NO_DNS, keys_file, signed};

/// An engine that answers, verifying senders with the test keys, with
/// `bot` added to the config's `[bot]`.
async fn engine(dir: &std::path::Path, bot: &str) -> Engine {
    let cfg = lkpbot::config::Config::parse(
        &format!("[bot]\naddress = \"bot@example.org\"\nmaintainers = [\"boss@example.org\"]\n{bot}"),
        std::path::Path::new("t.toml"),
    )
    .unwrap();
    let verifier = lkpbot::auth::Verifier::new(&[NO_DNS.parse().unwrap()], vec![], Duration::from_secs(3)).unwrap();
    verifier.keys().pin_file(&keys_file()).unwrap();
    let mut settings = lkpbot::cli::acting_settings(&cfg, now);
    settings.acting.as_mut().unwrap().auth = Some(std::sync::Arc::new(verifier));
    let store = lkpbot::store::Store::open(&dir.join("s.db")).await.unwrap();
    Engine::new(store, settings)
}

async fn push(engine: &mut Engine, mails: Vec<Vec<u8>>) {
    for m in mails {
        engine.push(Envelope::new(m, now())).await.unwrap();
    }
    engine.finish().await.unwrap();
}

async fn outbox(engine: &mut Engine) -> Vec<OutboxMail> {
    engine.store().due_mail(i64::MAX, 10_000).await.unwrap()
}

/// Mails of `kind` in `mails`.
fn of<'a>(mails: &'a [OutboxMail], kind: &str) -> Vec<&'a OutboxMail> {
    mails.iter().filter(|m| m.kind == kind).collect()
}

/// 25 mails from 25 forged senders ask for the status; then one more
/// forged sender asks for a retest, and Alice, signed, does too. The
/// forged ones use up the budget of unauthenticated senders in the case
/// (10), the first over it hears so once; the forged retest is recorded
/// as not done, not requested; Alice is answered and her retest asked
/// for. Every mail left alone is logged with its Message-ID and why.
#[test]
fn a_forged_flood_cannot_starve_a_signed_request() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::default();
    let subscriber = tracing_subscriber::fmt().with_writer(log.clone()).with_ansi(false).finish();
    tracing::subscriber::with_default(subscriber, || {
        block_on(async {
            let mut engine = engine(dir.path(), "").await;
            let mut mails = vec![report()];
            for i in 0..25 {
                let from = format!("Forger {i} <forger{i}@example.net>");
                mails.push(reply(&format!("flood{i}@example.net"), &from, "", "#lkp status", 60));
            }
            mails.push(reply("dropped@example.net", "Forger <forger99@example.net>", "", "please retest", 50));
            let alice = reply("alice1@example.org", "Alice <alice@example.org>", "", "please retest", 40);
            mails.push(signed("example.org", &alice));
            push(&mut engine, mails).await;
            let out = outbox(&mut engine).await;
            let replies = of(&out, "reply");
            assert_eq!(replies.len(), 10 + 1, "{:?}", replies.iter().map(|m| &m.recipients).collect::<Vec<_>>());
            assert_eq!(replies.iter().filter(|m| m.recipients[0] == "alice@example.org").count(), 1);
            let notices = of(&out, "limit");
            assert_eq!(notices.len(), 1, "the case's flood hears it once");
            assert_eq!(notices[0].recipients, ["forger10@example.net"], "to the sender alone");
            let requests = of(&out, "retest-request");
            assert_eq!(requests.len(), 1);
            let request = String::from_utf8_lossy(&requests[0].raw).into_owned();
            assert!(request.contains("alice@example.org"), "{request}");
            let case = &engine.store().cases(CaseFilter::All, true).await.unwrap()[0];
            let event = |id: &str| case.events.iter().find(|e| e.message_id.as_ref().is_some_and(|m| m.as_str() == id));
            let dropped = event("dropped@example.net").unwrap();
            assert_eq!(dropped.kind, EventKind::Discussion, "{dropped:?}");
            let note = dropped.note.as_deref().unwrap();
            assert!(note.starts_with("not done: please retest (rate-limited: 10 replies to unauthenticated senders in case 1 in an hour; try after "), "{note}");
            assert_eq!(event("alice1@example.org").unwrap().kind, EventKind::RetestRequested);
            let requested: Vec<_> = case.events.iter().filter(|e| e.kind == EventKind::RetestRequested).collect();
            assert_eq!(requested.len(), 1, "{requested:?}");
        })
    });
    let text = log.text();
    for i in 11..25 {
        let id = format!("flood{i}@example.net");
        assert!(
            text.lines().any(|l| l.contains("not acted on") && l.contains(&id) && l.contains("rate-limited")),
            "{id} not logged: {text}"
        );
    }
    assert!(text.lines().any(|l| l.contains("limit notice queued") && l.contains("flood10@example.net")), "{text}");
}

/// A maintainer asks, signed, for retests of twelve cases within a
/// minute: each is answered and each retest asked for.
#[test]
fn a_maintainers_dozen_retests_are_all_answered() {
    let dir = tempfile::tempdir().unwrap();
    block_on(async {
        let mut engine = engine(dir.path(), "").await;
        let mut mails = Vec::new();
        for i in 1..=12 {
            let id = format!("rep{i:04}");
            let r = String::from_utf8(report()).unwrap().replace("rep0001", &id);
            mails.push(r.into_bytes());
            let ask = String::from_utf8(reply(
                &format!("boss{i}@example.org"),
                "Boss <boss@example.org>",
                "",
                "please retest",
                30,
            ))
            .unwrap()
            .replace("rep0001", &id);
            mails.push(signed("example.org", ask.as_bytes()));
        }
        push(&mut engine, mails).await;
        let out = outbox(&mut engine).await;
        assert_eq!(of(&out, "reply").len(), 12);
        assert_eq!(of(&out, "retest-request").len(), 12);
        assert!(of(&out, "limit").is_empty());
    });
}

/// A command mail with 300 addresses in Cc: the reply goes to its sender
/// and to whom the report went (the author, the list), not to the 300.
#[test]
fn three_hundred_cc_are_not_copied() {
    let dir = tempfile::tempdir().unwrap();
    block_on(async {
        let mut engine = engine(dir.path(), "").await;
        let cc: Vec<String> = (0..300).map(|i| format!("victim{i:03}@example.net")).collect();
        let headers = format!("Cc: {}\n", cc.join(",\n "));
        let ask = reply("cc300@example.net", "Someone <someone@example.net>", &headers, "#lkp status", 30);
        push(&mut engine, vec![report(), ask]).await;
        let out = outbox(&mut engine).await;
        let replies = of(&out, "reply");
        assert_eq!(replies.len(), 1);
        assert_eq!(replies[0].recipients, ["someone@example.net", "author@example.org", "list@example.org"]);
        assert!(!String::from_utf8_lossy(&replies[0].raw).contains("victim"));
    });
}

/// The headers vger adds to its copy of every mail.
const VGER: &str =
    "Sender: linux-kernel-owner@vger.kernel.org\nPrecedence: bulk\nList-Id: <linux-kernel.vger.kernel.org>\n";

/// A second robot on the list answers every mail lkpbot sends with
/// `#lkp status` (no `Auto-Submitted`, so lkpbot cannot tell it from a
/// person): after it has answered three of lkpbot's mails in a row, each
/// within ten minutes, lkpbot stops answering it in that thread, records
/// why and logs it. Over a private Postfix and Dovecot: lkpbot's replies
/// reach the list (the report's Cc), the robot's answers reach lkpbot as
/// the list's copies.
#[test]
fn a_second_robot_answering_every_reply_is_stopped() {
    let Some(s) = crate::replies::stack("") else { return };
    s.d.append("bot", &[report(), reply("start@example.org", "Alice <alice@example.org>", "", "#lkp status", 60)]);
    let mut answered = 0;
    let mut logs = String::new();
    for _ in 0..10 {
        logs.push_str(&String::from_utf8_lossy(&s.run_once().stderr));
        std::thread::sleep(Duration::from_millis(700));
        let on_list: Vec<lkpbot::mail::Mail> =
            s.d.messages("list")
                .iter()
                .map(|m| lkpbot::mail::parse(m))
                .filter(|m| m.from_email().as_deref() == Some("bot@example.org"))
                .collect();
        if on_list.len() == answered {
            break;
        }
        for m in &on_list[answered..] {
            let mut refs: Vec<String> = m.references.iter().map(|r| format!("<{r}>")).collect();
            refs.push(format!("<{}>", m.message_id));
            let echo = format!(
                "From: Echo Robot <stranger@example.org>\nTo: bot@example.org\nCc: list@example.org\nSubject: Re: {}\n\
                 Date: {}\nMessage-ID: <echo{answered}@example.org>\nIn-Reply-To: <{}>\nReferences: {}\n{VGER}\n#lkp status\n",
                m.subject,
                jiff::Timestamp::from_second(now()).unwrap().strftime("%a, %d %b %Y %H:%M:%S +0000"),
                m.message_id,
                refs.join(" ")
            );
            s.d.append("bot", &[echo.into_bytes()]);
            answered += 1;
        }
    }
    assert_eq!(answered, 3, "lkpbot answered the robot {answered} times");
    let out = s.lkpbot(&["case", "--json", "1"]).output().unwrap();
    let case: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let stopped = case["events"].as_array().unwrap().iter().find(|e| e["message_id"] == "echo2@example.org").unwrap();
    assert_eq!(stopped["kind"], "discussion");
    let note = stopped["note"].as_str().unwrap();
    assert!(note.contains("loop: stranger@example.org answered the bot's last 3 mails"), "{note}");
    assert!(
        logs.lines().any(|l| l.contains("not acted on") && l.contains("echo2@example.org") && l.contains("loop")),
        "{logs}"
    );
    // Alice, writing in the same thread, is still answered.
    s.d.append("bot", &[reply("later@example.org", "Alice <alice@example.org>", "", "#lkp status", 5)]);
    s.run_once();
    s.mail_of("alice", 2);
}
