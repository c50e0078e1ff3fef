//! The bot answering, end to end: a private Dovecot holds the list's
//! mailbox (the bot's INBOX) and everyone's mail, a private Postfix takes
//! the bot's mail and delivers it there; `lkpbot run` reads the list,
//! answers commands, and what it sent is read back over IMAP.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::thread::fixture_messages;
use crate::util::dovecot::Dovecot;
use crate::util::postfix::Postfix;

pub(crate) const PASSWORD_ENV: &str = "LKPBOT_TEST_IMAP_PASSWORD";
const REPORT: &str = "202611300900.rep0001-lkp@intel.com";

pub(crate) fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

fn date(t: i64) -> String {
    jiff::Timestamp::from_second(t).unwrap().strftime("%a, %d %b %Y %H:%M:%S +0000").to_string()
}

/// A Dovecot, a Postfix delivering into it, and a bot config following
/// `bot`'s INBOX and sending through the Postfix.
pub(crate) struct Stack {
    pub d: Dovecot,
    pub p: Postfix,
    pub dir: tempfile::TempDir,
    pub cfg: PathBuf,
}

pub(crate) fn stack(extra: &str) -> Option<Stack> {
    stack_with(extra, "")
}

/// [`stack`] with `main_cf` added to the Postfix's `main.cf`.
pub(crate) fn stack_with(extra: &str, main_cf: &str) -> Option<Stack> {
    stack_full("", extra, main_cf)
}

/// [`stack_with`] with `bot` added to the config's `[bot]`. Senders are
/// verified as `[auth]`'s defaults say (`require`), with the test keys
/// pinned and no DNS.
pub(crate) fn stack_full(bot: &str, extra: &str, main_cf: &str) -> Option<Stack> {
    let d = Dovecot::start()?;
    let p = Postfix::start_with(d.lmtp_port, main_cf)?;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keys"), crate::util::dkim::keys_file()).unwrap();
    let cfg = dir.path().join("lkpbot.toml");
    std::fs::write(
        &cfg,
        format!(
            "[store]\npath = \"store.db\"\n\n[bot]\naddress = \"bot@example.org\"\nmaintainers = [\"boss@example.org\"]\n\
             stale_days = 0\n{bot}\n[[sources]]\nkind = \"imap\"\nhost = \"127.0.0.1\"\nport = {}\ntls = \"none\"\nuser = \"bot\"\n\
             password_env = \"{PASSWORD_ENV}\"\npoll_seconds = 3600\n\n[smtp]\nhost = \"127.0.0.1\"\nport = {}\ntls = \"none\"\n\n\
             [retest]\nbackend = \"email\"\nto = \"lkp@example.org\"\n\n[outbox]\nretry_seconds = 1\n\n\
             [auth]\nkeys_file = \"keys\"\nnameservers = [\"{}\"]\n{extra}",
            d.imap_port,
            p.smtp_port,
            crate::util::dkim::NO_DNS
        ),
    )
    .unwrap();
    Some(Stack { d, p, dir, cfg })
}

impl Stack {
    /// Moves the stack's store to a fresh PostgreSQL database; false
    /// when there is no PostgreSQL here (the test skips).
    pub(crate) fn use_postgres(&self) -> bool {
        let Some(url) = crate::util::postgres::fresh_db() else { return false };
        let text = std::fs::read_to_string(&self.cfg).unwrap();
        assert!(text.contains("[store]\npath = \"store.db\"\n"));
        let text = text.replace("[store]\npath = \"store.db\"\n", &format!("[store]\nurl = \"{url}\"\n"));
        std::fs::write(&self.cfg, text).unwrap();
        true
    }

    pub(crate) fn lkpbot(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_lkpbot"));
        c.arg("--config").arg(&self.cfg).args(args).env(PASSWORD_ENV, "botpass").env("RUST_LOG", "info");
        c
    }

    pub(crate) fn run_once(&self) -> Output {
        let out = self.lkpbot(&["run", "--once"]).output().unwrap();
        assert!(out.status.success(), "run --once: {}", String::from_utf8_lossy(&out.stderr));
        out
    }

    pub(crate) fn spawn(&self) -> crate::util::bot::Bot {
        let log = std::fs::File::create(self.dir.path().join("bot.log")).unwrap();
        crate::util::bot::Bot::new(self.lkpbot(&["run"]).stdout(Stdio::null()).stderr(log).spawn().unwrap())
    }

    /// Waits until `user` has `n` messages, and returns them parsed.
    pub(crate) fn mail_of(&self, user: &str, n: usize) -> Vec<lkpbot::mail::Mail> {
        let start = Instant::now();
        loop {
            let msgs = self.d.messages(user);
            if msgs.len() >= n {
                return msgs.iter().map(|m| lkpbot::mail::parse(m)).collect();
            }
            assert!(
                start.elapsed() < Duration::from_secs(15),
                "{user} has {} messages, not {n}: {}",
                msgs.len(),
                self.p.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// That `user` has exactly `n` messages, a moment after all is sent.
    pub(crate) fn still_has(&self, user: &str, n: usize) {
        std::thread::sleep(Duration::from_millis(700));
        assert_eq!(self.d.messages(user).len(), n, "{user}");
    }

    /// The outbox as `outbox --json` shows it (empty while there is no
    /// store yet).
    pub(crate) fn outbox(&self) -> Vec<serde_json::Value> {
        let out = self.lkpbot(&["outbox", "--json"]).output().unwrap();
        if !out.status.success() {
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("no store"),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            return Vec::new();
        }
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap().as_array().unwrap().clone()
    }
}

/// The robot's report, sent now to `author@example.org` with the list
/// (`list@example.org`) in Cc.
pub(crate) fn report() -> Vec<u8> {
    let r = String::from_utf8(fixture_messages("reply-chain")[0].clone()).unwrap();
    let r = r
        .replace("202603051000.aaaa0001-lkp@intel.com", REPORT)
        .replace("Ada Writer <ada@example.org>", "Au Thor <author@example.org>")
        .replace(
            "Cc: oe-lkp@lists.linux.dev, lkp@intel.com, linux-mm@kvack.org,\n oliver.sang@intel.com",
            "Cc: list@example.org",
        );
    let (head, body) = r.split_once("\n\n").unwrap();
    let head: String = head.lines().filter(|l| !l.starts_with("Date:")).map(|l| format!("{l}\n")).collect::<String>();
    format!("Date: {}\n{head}\n{body}", date(now() - 600)).into_bytes()
}

/// A reply in the report's thread from `from`, written `age` seconds ago.
pub(crate) fn reply(id: &str, from: &str, headers: &str, body: &str, age: i64) -> Vec<u8> {
    format!(
        "From: {from}\nTo: Au Thor <author@example.org>\nSubject: Re: [linus:master] [mm] 1234567890: will-it-scale.per_process_ops 12.5% regression\n\
         Date: {}\nMessage-ID: <{id}>\nIn-Reply-To: <{REPORT}>\nReferences: <{REPORT}>\n{headers}\n{body}\n",
        date(now() - age)
    )
    .into_bytes()
}

/// Writes `messages` to `path` as an mbox.
fn write_mbox(path: &Path, messages: &[Vec<u8>]) {
    let mut text = Vec::new();
    for m in messages {
        text.extend_from_slice(b"From x@y Thu Jan  1 00:00:00 1970\n");
        text.extend_from_slice(m);
        text.extend_from_slice(b"\n");
    }
    std::fs::write(path, text).unwrap();
}

fn text(m: &lkpbot::mail::Mail) -> &str {
    &m.body
}

/// "please retest" is answered in the requester's mailbox, threaded; one
/// retest request reaches the LKP team with what they need; asking again
/// is acknowledged, not requested twice; a quoted request is nothing.
#[test]
fn a_retest_request_is_answered_and_passed_on_once() {
    let Some(s) = stack("") else { return };
    s.d.append(
        "bot",
        &[report(), reply("c1@example.org", "Alice <alice@example.org>", "", "Thanks.\n\nplease retest", 60)],
    );
    s.run_once();
    let alice = s.mail_of("alice", 1);
    let r = &alice[0];
    assert_eq!(r.in_reply_to.as_ref().unwrap().as_str(), "c1@example.org");
    let refs: Vec<&str> = r.references.iter().map(|x| x.as_str()).collect();
    assert_eq!(refs, [REPORT, "c1@example.org"]);
    assert!(r.subject.starts_with("Re: [linus:master]"), "{}", r.subject);
    assert!(text(r).contains("> please retest") && text(r).contains("Retest requested"), "{}", text(r));
    assert!(text(r).lines().all(|l| l.chars().count() <= 78), "{}", text(r));
    assert_eq!(r.auto_submitted.as_deref(), Some("auto-replied"));
    let to_author = s.mail_of("author", 1);
    assert_eq!(to_author[0].message_id, r.message_id, "the thread's recipients are copied");
    assert_eq!(s.mail_of("list", 1)[0].message_id, r.message_id, "the list the report went to is copied");
    let lkp = s.mail_of("lkp", 1);
    let req = text(&lkp[0]);
    for needle in ["alice@example.org", "1234567890abcdef1234567890abcdef12345678", "will-it-scale", "c1@example.org"] {
        assert!(req.contains(needle), "{needle} not in the request:\n{req}");
    }

    // Again, while the first is pending: acknowledged, not asked again.
    s.d.append("bot", &[reply("c2@example.org", "Alice <alice@example.org>", "", "#lkp retest", 30)]);
    s.run_once();
    let alice = s.mail_of("alice", 2);
    assert!(text(&alice[1]).contains("pending already"), "{}", text(&alice[1]));
    s.still_has("lkp", 1);

    // Quoted, it is someone else's request being quoted: nothing.
    s.d.append("bot", &[reply("c3@example.org", "Alice <alice@example.org>", "", "> please retest\n\nAgreed.", 20)]);
    s.run_once();
    s.still_has("alice", 2);
    drop(s.dir);
}

/// Who may close a case; an unknown command; mail the bot must never
/// answer; history from before the window.
#[test]
fn who_may_what_and_who_is_never_answered() {
    let Some(s) = stack("") else { return };
    s.d.append(
        "bot",
        &[
            report(),
            reply("s1@example.org", "Stranger <stranger@example.org>", "", "#lkp resolve", 60),
            reply("u1@example.org", "Alice <alice@example.org>", "", "#lkp retset", 50),
            reply("b0@example.org", "Bot <bot@example.org>", "", "#lkp status", 40),
            reply("a0@example.org", "Alice <alice@example.org>", "Auto-Submitted: auto-replied\n", "#lkp status", 40),
            reply("m0@example.org", "Mail Delivery System <MAILER-DAEMON@mx.example.org>", "", "#lkp status", 40),
            reply("old@example.org", "Alice <alice@example.org>", "", "#lkp status", 3 * 86_400),
        ],
    );
    s.run_once();
    let stranger = s.mail_of("stranger", 1);
    assert!(text(&stranger[0]).contains("Not done: only"), "{}", text(&stranger[0]));
    let alice = s.mail_of("alice", 1);
    assert!(text(&alice[0]).contains("did you mean \"#lkp retest\"") && text(&alice[0]).contains("#lkp status"));
    // The bot's own mail, an auto-reply, a bounce and an old command: no
    // answer to any of them (alice has only the typo's answer).
    s.still_has("alice", 1);
    s.still_has("bot", 7);
    let outbox = s.outbox();
    assert_eq!(outbox.len(), 2, "{outbox:?}");

    // Anyone can write the maintainer's address in From: unsigned, the
    // resolve is refused, saying why and what to do; the case stays open.
    s.d.append("bot", &[reply("f1@example.org", "The Boss <boss@example.org>", "", "#lkp resolve", 15)]);
    s.run_once();
    let boss = s.mail_of("boss", 1);
    let refused = text(&boss[0]);
    assert!(refused.contains("Not done: I cannot tell") && refused.contains("(no DKIM signature)"), "{refused}");
    assert!(refused.contains("DKIM signature passes"), "{refused}");
    assert_eq!(case_json(&s)["state"], "discussed");
    let forged = event_of(&case_json(&s), "f1@example.org");
    assert_eq!(forged["kind"], "discussion");
    assert_eq!(forged["auth"], "none");
    assert!(forged["note"].as_str().unwrap().contains("not authenticated: no DKIM signature"), "{forged}");
    // Signed by the maintainer's domain, it is obeyed.
    let signed = crate::util::dkim::signed(
        "example.org",
        &reply("b1@example.org", "The Boss <boss@example.org>", "", "#lkp resolve", 10),
    );
    s.d.append("bot", &[signed]);
    s.run_once();
    let boss = s.mail_of("boss", 2);
    assert!(text(&boss[1]).contains("Done: case") && text(&boss[1]).contains("resolved"), "{}", text(&boss[1]));
    let case = case_json(&s);
    assert_eq!(case["state"], "resolved");
    assert_eq!(event_of(&case, "b1@example.org")["auth"], "dkim:example.org");
}

/// Arguments the bot does not take, end to end: a test target that is
/// none (`; rm -rf / #`) is refused, saying what is accepted, and never
/// reaches the LKP team; a maintainer's signed `#lkp title` over 200
/// characters, and one on a line over 1,000, are refused saying the
/// limit, and the case keeps its title. A real target is passed on.
#[test]
fn unsafe_and_over_long_arguments_are_refused() {
    let Some(s) = stack("") else { return };
    let signed = |id: &str, body: &str| {
        crate::util::dkim::signed("example.org", &reply(id, "The Boss <boss@example.org>", "", body, 50))
    };
    let title = format!("#lkp title {}", "a much better title ".repeat(15));
    let line = format!("#lkp title {}", "x".repeat(10_000));
    s.d.append(
        "bot",
        &[
            report(),
            reply("t1@example.org", "Alice <alice@example.org>", "", "#lkp test ; rm -rf / #", 60),
            signed("t2@example.org", &title),
            signed("t3@example.org", &line),
        ],
    );
    s.run_once();
    let alice = s.mail_of("alice", 1);
    let refused = text(&alice[0]);
    assert!(
        refused.contains("> #lkp test ; rm -rf / #\nNot done, and nothing was passed on: a test target is a URL"),
        "{refused}"
    );
    assert!(refused.contains("\n  #lkp test <lore-link | git-url branch | sha>\n"), "{refused}");
    let boss = s.mail_of("boss", 2);
    let answer = |id: &str| {
        let m = boss.iter().find(|m| m.in_reply_to.as_ref().is_some_and(|r| r.as_str() == id)).unwrap();
        text(m).to_string()
    };
    let t2 = answer("t2@example.org");
    assert!(
        t2.contains("Not done: the text of \"#lkp title\" is at most 200 characters, and this one has\n299."),
        "{t2}"
    );
    let t3 = answer("t3@example.org");
    assert!(t3.contains("Not done: a command line is at most 1000 characters, and this one has 10011."), "{t3}");
    for m in alice.iter().chain(&boss) {
        assert!(text(m).lines().all(|l| l.chars().count() <= 78), "{}", text(m));
    }
    let case = case_json(&s);
    assert!(case["title"].as_str().unwrap().contains("will-it-scale"), "{case}");
    for (id, note) in [
        ("t1@example.org", "(not a test target)"),
        ("t2@example.org", "(the text has 299 characters; at most 200)"),
        ("t3@example.org", "(the line has 10011 characters; a command line is at most 1000)"),
    ] {
        let e = event_of(&case, id);
        assert_eq!(e["kind"], "discussion", "{e}");
        assert!(e["note"].as_str().unwrap().ends_with(note), "{e}");
    }
    s.still_has("lkp", 0);
    // A lore link is a target: asked for.
    let fix = "https://lore.kernel.org/r/20260530.fix-1-alice@example.org";
    s.d.append("bot", &[reply("t4@example.org", "Alice <alice@example.org>", "", &format!("#lkp test {fix}"), 30)]);
    s.run_once();
    let lkp = s.mail_of("lkp", 1);
    assert!(text(&lkp[0]).contains(fix), "{}", text(&lkp[0]));
    assert_eq!(event_of(&case_json(&s), "t4@example.org")["kind"], "retest-requested");
}

/// The one case of the stack's store, as `case --json` shows it.
fn case_json(s: &Stack) -> serde_json::Value {
    let out = s.lkpbot(&["case", "--json", "1"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The event `message_id` caused in `case`.
fn event_of(case: &serde_json::Value, message_id: &str) -> serde_json::Value {
    let events = case["events"].as_array().unwrap();
    events
        .iter()
        .find(|e| e["message_id"] == message_id)
        .unwrap_or_else(|| panic!("no event of {message_id}: {case}"))
        .clone()
}

/// The headers vger adds to its copy of every mail: the list's copy of
/// a command is a command.
const VGER: &str = "Sender: linux-kernel-owner@vger.kernel.org\nPrecedence: bulk\n\
                    List-Id: <linux-kernel.vger.kernel.org>\nList-Subscribe: <mailto:linux-kernel+subscribe@vger.kernel.org>\n\
                    List-Unsubscribe: <mailto:linux-kernel+unsubscribe@vger.kernel.org>\n";

/// A command that reaches the bot only through the list is answered; one
/// sent both to the bot and to the list is answered once, whichever copy
/// comes first, and whether they come together or apart.
#[test]
fn a_command_through_the_list_is_answered_once() {
    let Some(s) = stack("") else { return };
    let direct = |id: &str, body: &str| reply(id, "Alice <alice@example.org>", "Cc: bot@example.org\n", body, 60);
    let listed = |id: &str, body: &str| reply(id, "Alice <alice@example.org>", VGER, body, 60);
    // The list's copy alone.
    s.d.append("bot", &[report(), listed("l1@example.org", "#lkp status")]);
    s.run_once();
    let alice = s.mail_of("alice", 1);
    assert_eq!(alice[0].in_reply_to.as_ref().unwrap().as_str(), "l1@example.org");
    // Its direct copy later: nothing more.
    s.d.append("bot", &[direct("l1@example.org", "#lkp status")]);
    s.run_once();
    s.still_has("alice", 1);
    // The direct copy first, the list's later.
    s.d.append("bot", &[direct("d2@example.org", "#lkp status")]);
    s.run_once();
    s.mail_of("alice", 2);
    s.d.append("bot", &[listed("d2@example.org", "#lkp status")]);
    s.run_once();
    s.still_has("alice", 2);
    // Both in one fetch, in either order.
    s.d.append("bot", &[listed("b3@example.org", "#lkp status"), direct("b3@example.org", "#lkp status")]);
    s.d.append("bot", &[direct("b4@example.org", "#lkp status"), listed("b4@example.org", "#lkp status")]);
    s.run_once();
    let alice = s.mail_of("alice", 4);
    s.still_has("alice", 4);
    let answered: Vec<&str> = alice.iter().map(|m| m.in_reply_to.as_ref().unwrap().as_str()).collect();
    assert_eq!(answered, ["l1@example.org", "d2@example.org", "b3@example.org", "b4@example.org"]);
}

/// The SMTP server is down while replies are due, and the bot is killed
/// before it could send: once the server is back, each reply is sent
/// exactly once.
#[test]
fn replies_survive_a_dead_server_and_a_killed_bot() {
    let Some(mut s) = stack("") else { return };
    s.p.stop();
    s.d.append("bot", &[report(), reply("k1@example.org", "Alice <alice@example.org>", "", "#lkp status", 60)]);
    let mut bot = s.spawn();
    let start = Instant::now();
    while !s.outbox().iter().any(|m| m["state"] == "failing") {
        assert!(start.elapsed() < Duration::from_secs(20), "no failing mail: {:?}", s.outbox());
        std::thread::sleep(Duration::from_millis(100));
    }
    bot.kill().unwrap();
    bot.wait().unwrap();
    s.p.resume();
    let out = s.run_once();
    assert!(String::from_utf8_lossy(&out.stdout).contains("mails sent                         1"));
    s.mail_of("alice", 1);
    // Another pass sends nothing more.
    s.run_once();
    s.still_has("alice", 1);
    assert!(s.outbox().iter().all(|m| m["state"] == "sent"));
}

/// The LKP team's retest result (Oliver Sang's, from `retest-fixup`)
/// answering `request`, with `id`.
fn lkp_result(id: &str, request: &str) -> Vec<u8> {
    let result = String::from_utf8(fixture_messages("retest-fixup")[2].clone()).unwrap();
    let (head, body) = result.split_once("\n\n").unwrap();
    let head: String = head
        .lines()
        .filter(|l| {
            !["Date:", "In-Reply-To:", "References:", "Message-ID:", "Message-Id:"].iter().any(|h| l.starts_with(h))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    format!(
        "Date: {}\nMessage-ID: <{id}>\nIn-Reply-To: <{request}>\nReferences: <{REPORT}> <{request}>\n{head}\n{body}",
        date(now() - 30)
    )
    .into_bytes()
}

/// The report, and Alice's "please retest" (`id`) passed on to the LKP
/// team.
fn retest_asked(s: &Stack, id: &str) {
    s.d.append("bot", &[report(), reply(id, "Alice <alice@example.org>", "", "please retest", 120)]);
    s.run_once();
    s.mail_of("lkp", 1);
}

/// The LKP team's retest result in the thread, signed by intel.com: the
/// requester hears the verdict once.
#[test]
fn the_verdict_goes_to_whoever_asked() {
    let Some(s) = stack("") else { return };
    retest_asked(&s, "q1@example.org");
    s.d.append("bot", &[crate::util::dkim::signed("intel.com", &lkp_result("result1@intel.com", "q1@example.org"))]);
    s.run_once();
    let alice = s.mail_of("alice", 2);
    let v = text(&alice[1]);
    assert!(v.contains("has come back: recovered"), "{v}");
    s.run_once();
    s.still_has("alice", 2);
    let case = case_json(&s);
    assert_eq!(case["verdict"], "recovered", "{case}");
    assert_eq!(event_of(&case, "result1@intel.com")["auth"], "dkim:intel.com");
}

/// A retest result anyone could have written: From the LKP team, not
/// signed. It is kept as discussion with the reason: no verdict, and the
/// requester is not told; the request stays open for the real one.
#[test]
fn a_forged_lkp_result_is_not_judged() {
    let Some(s) = stack("") else { return };
    retest_asked(&s, "q2@example.org");
    s.mail_of("alice", 1);
    s.d.append("bot", &[lkp_result("forged1@intel.com", "q2@example.org")]);
    let out = s.run_once();
    s.still_has("alice", 1);
    let case = case_json(&s);
    assert_eq!(case["verdict"], serde_json::Value::Null, "{case}");
    let e = event_of(&case, "forged1@intel.com");
    assert_eq!(e["kind"], "discussion", "{e}");
    assert!(e["note"].as_str().unwrap().contains("result not judged: the sender is not authenticated"), "{e}");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.lines().any(|l| l.contains("result not judged") && l.contains("forged1@intel.com")), "{log}");
    // The real result, signed, still answers the request.
    s.d.append("bot", &[crate::util::dkim::signed("intel.com", &lkp_result("result2@intel.com", "q2@example.org"))]);
    s.run_once();
    let alice = s.mail_of("alice", 2);
    assert!(text(&alice[1]).contains("has come back: recovered"), "{}", text(&alice[1]));
}

/// A command appended to the watched mailbox is answered in the
/// requester's mailbox within three seconds (IDLE, not polling). Prints
/// the median.
#[test]
fn commands_are_answered_within_seconds() {
    let Some(s) = stack("") else { return };
    s.d.append("bot", &[report()]);
    let mut bot = s.spawn();
    // The report is stored: the bot is idle now.
    let db = s.dir.path().join("store.db");
    let start = Instant::now();
    while !cases_exist(&s, &db) {
        assert!(start.elapsed() < Duration::from_secs(20), "the report was not stored");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut took = Vec::new();
    for i in 0..5 {
        std::thread::sleep(Duration::from_millis(300));
        let t = Instant::now();
        s.d.append("bot", &[reply(&format!("idle{i}@example.org"), "Alice <alice@example.org>", "", "#lkp status", 5)]);
        s.mail_of("alice", i + 1);
        took.push(t.elapsed());
    }
    let _ = Command::new("kill").args(["-TERM", &bot.id().to_string()]).status();
    assert!(bot.wait().unwrap().success());
    took.sort();
    let median = took[took.len() / 2];
    println!("command to answer in the requester's mailbox: median {median:?} ({took:?})");
    assert!(median < Duration::from_secs(3), "{took:?}");
}

pub(crate) fn cases_exist(s: &Stack, _db: &Path) -> bool {
    let out = s.lkpbot(&["cases", "--json", "--state", "all"]).output().unwrap();
    out.status.success()
        && serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .is_ok_and(|v| v.as_array().is_some_and(|a| !a.is_empty()))
}

/// Without `[smtp]` the bot runs dry: each reply is a `.eml` file in
/// `[outbox] dir`; the `command` retest backend runs its program with the
/// request as JSON on stdin, and its exit status and output go on the
/// case. `ingest --act` answers an archive's fresh commands the same way.
#[test]
fn dry_run_files_and_the_command_backend() {
    let dir = tempfile::tempdir().unwrap();
    let mbox = dir.path().join("list.mbox");
    write_mbox(&mbox, &[report(), reply("d1@example.org", "Alice <alice@example.org>", "", "please retest", 60)]);
    let cfg = dir.path().join("lkpbot.toml");
    std::fs::write(
        &cfg,
        "[store]\npath = \"s.db\"\n[bot]\naddress = \"bot@example.org\"\nstale_days = 0\n[outbox]\ndir = \"dry\"\n\
         [retest]\nbackend = \"command\"\ncommand = [\"sh\", \"-c\", \"cat > request.json; echo queued as job 42\"]\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lkpbot"))
        .args(["--config", cfg.to_str().unwrap(), "ingest", "--act", mbox.to_str().unwrap()])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let files: Vec<PathBuf> = std::fs::read_dir(dir.path().join("dry")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let reply = lkpbot::mail::parse(&std::fs::read(&files[0]).unwrap());
    assert_eq!(reply.in_reply_to.unwrap().as_str(), "d1@example.org");
    assert!(reply.body.contains("Retest requested"));
    let request: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("request.json")).unwrap()).unwrap();
    assert_eq!(request["requester"], "alice@example.org");
    assert_eq!(request["commit"], "1234567890abcdef1234567890abcdef12345678");
    assert_eq!(request["testcase"], "will-it-scale");
    let case = Command::new(env!("CARGO_BIN_EXE_lkpbot"))
        .args(["--config", cfg.to_str().unwrap(), "cases", "--json", "--state", "all"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&case.stdout).unwrap();
    let events = v[0]["events"].as_array().unwrap();
    let dispatched = events.iter().find(|e| e["kind"] == "retest-dispatched").expect("the dispatch is on the case");
    assert!(dispatched["note"].as_str().unwrap().contains("queued as job 42"));
    // Without --act, the same archive answers nothing.
    let quiet = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lkpbot"))
        .args(["--db", quiet.path().join("q.db").to_str().unwrap(), "ingest", mbox.to_str().unwrap()])
        .current_dir(quiet.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!quiet.path().join("outbox").exists());
}

static CLOCK: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

fn test_clock() -> i64 {
    CLOCK.load(std::sync::atomic::Ordering::SeqCst)
}

/// A retest request nobody answers: one reminder after `remind_days`, then
/// after as long again the case records that it timed out (no second
/// reminder).
#[test]
fn unanswered_requests_are_reminded_once_then_time_out() {
    use lkpbot::engine::{Engine, Envelope};
    let t0 = now();
    CLOCK.store(t0, std::sync::atomic::Ordering::SeqCst);
    let cfg: lkpbot::config::Config = lkpbot::config::Config::parse(
        "[bot]\naddress = \"bot@example.org\"\n[retest]\nto = \"lkp@example.org\"\nremind_days = 7\n",
        Path::new("t.toml"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    crate::thread::block_on(async {
        let store = lkpbot::store::Store::open(&dir.path().join("s.db")).await.unwrap();
        let mut engine = Engine::new(store, lkpbot::cli::acting_settings(&cfg, test_clock));
        for m in [report(), reply("r1@example.org", "Alice <alice@example.org>", "", "please retest", 60)] {
            engine.push(Envelope::new(m, t0)).await.unwrap();
        }
        engine.finish().await.unwrap();
        assert_eq!(kinds(&mut engine).await, ["reply", "retest-request"]);
        engine.remind(t0 + 86_400, 7).await.unwrap();
        assert_eq!(kinds(&mut engine).await.len(), 2, "reminded too early");
        CLOCK.store(t0 + 8 * 86_400, std::sync::atomic::Ordering::SeqCst);
        engine.remind(t0 + 8 * 86_400, 7).await.unwrap();
        assert_eq!(kinds(&mut engine).await, ["reply", "retest-request", "reminder"]);
        engine.remind(t0 + 9 * 86_400, 7).await.unwrap();
        engine.remind(t0 + 16 * 86_400, 7).await.unwrap();
        assert_eq!(kinds(&mut engine).await.len(), 3, "a second reminder");
        let cases = engine.store().cases(lkpbot::case::CaseFilter::All, true).await.unwrap();
        assert!(cases[0].events.iter().any(|e| e.kind == lkpbot::case::EventKind::RetestTimedOut));
    });
}

async fn kinds(engine: &mut lkpbot::engine::Engine) -> Vec<String> {
    engine.store().due_mail(i64::MAX, 100).await.unwrap().iter().map(|m| m.kind.clone()).collect()
}

/// A subscriber confirms by mail (the bot restates the filter), then
/// receives the week's digest; asking again sends nothing more.
#[test]
fn a_subscriber_confirms_then_gets_the_digest() {
    let Some(s) = stack("[digest]\nto = []\n") else { return };
    s.d.append(
        "bot",
        &[
            report(),
            crate::util::dkim::signed(
                "example.org",
                &reply("sub1@example.org", "Alice <alice@example.org>", "", "#lkp subscribe min:5 tree:linus", 60),
            ),
        ],
    );
    s.run_once();
    let alice = s.mail_of("alice", 1);
    assert!(
        text(&alice[0]).contains("Subscribed") && text(&alice[0]).contains("\"tree:linus min:5\""),
        "{}",
        text(&alice[0])
    );
    let today = jiff::Timestamp::from_second(now()).unwrap().strftime("%Y-%m-%d").to_string();
    let out = s.lkpbot(&["digest", "--send", "--date", &today]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 queued, 1 sent"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let alice = s.mail_of("alice", 2);
    let digest = &alice[1];
    assert!(digest.subject.starts_with("lkpbot weekly "), "{}", digest.subject);
    assert!(
        digest.body.contains("will-it-scale.per_process_ops") && digest.body.contains("#lkp subscribe"),
        "{}",
        digest.body
    );
    assert!(digest.body.lines().all(|l| l.chars().count() <= 78));
    let again = s.lkpbot(&["digest", "--send", "--date", &today]).output().unwrap();
    assert!(String::from_utf8_lossy(&again.stdout).contains("0 queued"));
    s.still_has("alice", 2);
    // Unsubscribed, a later week sends her nothing.
    s.d.append("bot", &[reply("unsub1@example.org", "Alice <alice@example.org>", "", "#lkp unsubscribe", 30)]);
    s.run_once();
    let alice = s.mail_of("alice", 3);
    assert!(text(&alice[2]).contains("Unsubscribed"));
    let next_week = jiff::Timestamp::from_second(now() + 7 * 86_400).unwrap().strftime("%Y-%m-%d").to_string();
    let out = s.lkpbot(&["digest", "--send", "--date", &next_week]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 queued"), "{}", String::from_utf8_lossy(&out.stdout));
}

/// Bytes that act on a terminal or hide text: ESC, BEL, a C1 CSI, a
/// right-to-left override.
const HOSTILE_TITLE: &str = "\x1b[2J\x1b[31mowned\x07 \u{9b}0m title \u{202e}txt.exe";

/// Whether `text` holds a control character other than tab, CR and LF,
/// or a bidi override.
fn has_control(text: &str) -> bool {
    text.chars().any(|c| (c.is_control() && !matches!(c, '\t' | '\r' | '\n')) || ('\u{202a}'..='\u{202e}').contains(&c))
}

/// A maintainer's `#lkp title` full of control bytes is recorded as sent
/// (and `case --json` shows it, escaped), but no byte of it that acts on
/// a reader reaches the terminal (`cases`, `case`), the web page or the
/// bot's reply.
#[test]
fn control_bytes_from_mail_reach_no_terminal_page_or_mail() {
    let dir = tempfile::tempdir().unwrap();
    let mbox = dir.path().join("list.mbox");
    let command = format!("#lkp title {HOSTILE_TITLE}");
    let title = crate::util::dkim::signed(
        "example.org",
        &reply("t1@example.org", "The Boss <boss@example.org>", "", &command, 60),
    );
    write_mbox(&mbox, &[report(), title]);
    std::fs::write(dir.path().join("keys"), crate::util::dkim::keys_file()).unwrap();
    let cfg = dir.path().join("lkpbot.toml");
    std::fs::write(
        &cfg,
        format!(
            "[store]\npath = \"s.db\"\n[bot]\naddress = \"bot@example.org\"\nmaintainers = [\"boss@example.org\"]\n\
             stale_days = 0\n[outbox]\ndir = \"dry\"\n[retest]\nbackend = \"none\"\n\
             [auth]\nkeys_file = \"keys\"\nnameservers = [\"{}\"]\n",
            crate::util::dkim::NO_DNS
        ),
    )
    .unwrap();
    let lkpbot = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_lkpbot")).arg("--config").arg(&cfg).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    lkpbot(&["ingest", "--act", mbox.to_str().unwrap()]);
    // Recorded as sent: the JSON has it, escaped.
    let json = lkpbot(&["case", "--json", "1"]);
    assert!(json.contains("\\u001b[2J\\u001b[31mowned\\u0007"), "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["title"], HOSTILE_TITLE);
    // The terminal.
    for args in [&["cases"][..], &["cases", "--state", "all"], &["case", "1"], &["outbox"]] {
        let out = lkpbot(args);
        assert!(!has_control(&out), "{args:?} printed control bytes: {out:?}");
    }
    assert!(lkpbot(&["case", "1"]).contains("[2J[31mowned 0m title txt.exe"));
    // The reply, which restates the new title and quotes the command.
    let files: Vec<PathBuf> = std::fs::read_dir(dir.path().join("dry")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let raw = String::from_utf8(std::fs::read(&files[0]).unwrap()).unwrap();
    assert!(raw.contains("owned"), "{raw}");
    assert!(!has_control(&raw), "the reply carries control bytes: {raw:?}");
    // The web pages.
    let db = dir.path().join("s.db");
    for uri in ["/", "/cases/1"] {
        let page = crate::thread::block_on(async {
            use tower::ServiceExt;
            let reader = lkpbot::store::Reader::open(&db).await.unwrap();
            let app = lkpbot::web::router(lkpbot::web::App::new(reader, now, "https://lore.kernel.org/r/"));
            let req =
                axum::http::Request::get(uri).header("accept", "text/html").body(axum::body::Body::empty()).unwrap();
            let res = app.oneshot(req).await.unwrap();
            assert_eq!(res.status(), axum::http::StatusCode::OK);
            let bytes = axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap();
            String::from_utf8(bytes.to_vec()).unwrap()
        });
        assert!(page.contains("owned"), "{uri}: {page}");
        if uri != "/" {
            // How the sender was authenticated, beside it on the timeline.
            assert!(page.contains("boss@example.org</span> <span class=\"muted auth\""), "{page}");
            assert!(page.contains(">(dkim:example.org)<"), "{page}");
        }
        assert!(!has_control(&page), "{uri} carries control bytes");
    }
}
