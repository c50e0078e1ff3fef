//! Each mail sent once in a real deployment: two `run`s on one store (one
//! per mailbox) over a private Dovecot and Postfix, a sender killed with
//! SIGKILL in the middle of an SMTP transaction, and an SMTP server that
//! comes back (every mail that waited for it goes in the first pass that
//! finds it, whatever its backoff says).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use lkpbot::deliver::Mailer;
use lkpbot::store::{MailState, NewMail, Store};

use crate::replies::{PASSWORD_ENV, cases_exist, now, reply, report, stack, stack_with};
use crate::thread::block_on;
use crate::util::bot::Bot;
use crate::util::dovecot::Dovecot;
use crate::util::postfix::Postfix;

const LIST_PASSWORD_ENV: &str = "LKPBOT_TEST_LIST_PASSWORD";

/// `lkpbot run` with `cfg`, logging at `log` (`RUST_LOG` `filter`).
fn spawn(cfg: &Path, log: &Path, filter: &str) -> Bot {
    let log = std::fs::File::create(log).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_lkpbot"))
        .arg("--config")
        .arg(cfg)
        .arg("run")
        .env(PASSWORD_ENV, "botpass")
        .env(LIST_PASSWORD_ENV, "listpass")
        .env("RUST_LOG", filter)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    Bot::new(child)
}

/// Stops a bot with SIGTERM, as a service manager does: it must end
/// cleanly.
fn terminate(bot: Bot) {
    assert!(bot.terminate().status.success());
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Two runs share one store, each following its own mailbox (the bot's
/// direct mail, the list's copies), both with a sender: every command
/// reaches both, and every reply and the retest request is sent once.
/// The second run says that it is not alone.
#[test]
fn two_runs_on_one_store_send_each_mail_once() {
    two_runs_send_each_mail_once(false);
}

/// The same on one PostgreSQL database: the runs are two writers whose
/// transactions interleave.
#[test]
fn two_runs_on_one_postgres_send_each_mail_once() {
    two_runs_send_each_mail_once(true);
}

fn two_runs_send_each_mail_once(postgres: bool) {
    let Some(s) = stack("") else { return };
    if postgres && !s.use_postgres() {
        return;
    }
    // More replies to one sender than the hourly budget has.
    let text = std::fs::read_to_string(&s.cfg).unwrap().replace(
        "stale_days = 0\n",
        "stale_days = 0\nreplies_per_hour = 100\ncase_unauthenticated_replies_per_hour = 100\n",
    );
    std::fs::write(&s.cfg, &text).unwrap();
    let list_cfg = s.dir.path().join("list.toml");
    let text = text.replace("user = \"bot\"", "user = \"list\"").replace(PASSWORD_ENV, LIST_PASSWORD_ENV);
    std::fs::write(&list_cfg, text).unwrap();
    for user in ["bot", "list"] {
        s.d.append(user, &[report()]);
    }
    let a = spawn(&s.cfg, &s.dir.path().join("a.log"), "info");
    wait_until("the report stored", Duration::from_secs(20), || cases_exist(&s, &s.cfg));
    let b = spawn(&list_cfg, &s.dir.path().join("b.log"), "info");
    let logs =
        || ["a.log", "b.log"].map(|l| std::fs::read_to_string(s.dir.path().join(l)).unwrap_or_default()).join("\n");
    wait_until("both runs following", Duration::from_secs(20), || logs().matches("synced").count() >= 2);
    const N: usize = 12;
    for i in 0..N {
        let body = if i == 5 { "please retest" } else { "#lkp status" };
        let m = reply(&format!("two{i}@example.org"), "Alice <alice@example.org>", "", body, 30);
        // In turn first to one mailbox and then to the other.
        let order = if i % 2 == 0 { ["bot", "list"] } else { ["list", "bot"] };
        for user in order {
            s.d.append(user, std::slice::from_ref(&m));
        }
    }
    let alice = s.mail_of("alice", N);
    s.still_has("alice", N);
    s.still_has("lkp", 1);
    let mut answered: Vec<String> = alice.iter().map(|m| m.in_reply_to.as_ref().unwrap().to_string()).collect();
    answered.sort();
    answered.dedup();
    assert_eq!(answered.len(), N, "{answered:?}");
    let outbox = s.outbox();
    assert_eq!(outbox.len(), N + 1, "{outbox:?}");
    assert!(outbox.iter().all(|m| m["state"] == "sent"), "{outbox:?}");
    let log = logs();
    assert!(log.contains("another lkpbot run is using this store"), "{log}");
    assert_eq!(log.lines().filter(|l| l.contains(" INFO sent kind=")).count(), N + 1, "{log}");
    terminate(a);
    terminate(b);
}

/// A sender killed (SIGKILL) while the SMTP server holds its mail
/// transaction open: the mail was not taken, and the next run sends it
/// once its claim lapses; it is sent once, neither lost nor doubled.
#[test]
fn a_sender_killed_mid_send_neither_loses_nor_doubles_its_mail() {
    killed_sender_neither_loses_nor_doubles(false);
}

#[test]
fn a_sender_killed_mid_send_on_postgres_neither_loses_nor_doubles_its_mail() {
    killed_sender_neither_loses_nor_doubles(true);
}

fn killed_sender_neither_loses_nor_doubles(postgres: bool) {
    // The server waits 3 s before it answers DATA: time to kill the bot
    // with the transaction open.
    let Some(s) = stack_with("", "smtpd_data_restrictions = sleep 3, permit\n") else { return };
    if postgres && !s.use_postgres() {
        return;
    }
    let text = std::fs::read_to_string(&s.cfg).unwrap().replace("[smtp]\n", "[smtp]\ntimeout_seconds = 5\n");
    std::fs::write(&s.cfg, text).unwrap();
    s.d.append("bot", &[report(), reply("kill1@example.org", "Alice <alice@example.org>", "", "#lkp status", 60)]);
    let log = s.dir.path().join("first.log");
    let first = spawn(&s.cfg, &log, "info,lkpbot::deliver=debug");
    wait_until("the bot sending", Duration::from_secs(20), || {
        // The deliverer's line for this mail, not "sending the outbox"
        // (said at start, before the mail is even read).
        std::fs::read_to_string(&log).unwrap_or_default().contains("sending kind=")
    });
    std::thread::sleep(Duration::from_millis(800));
    drop(first); // SIGKILL, with the SMTP transaction open
    let outbox = s.outbox();
    assert_eq!(outbox.len(), 1, "{outbox:?}");
    assert_eq!(outbox[0]["state"], "queued", "{outbox:?}");
    assert!(outbox[0]["claimed_by"].is_string(), "{outbox:?}");
    std::thread::sleep(Duration::from_secs(3));
    assert!(s.d.messages("alice").is_empty(), "the server took the mail of a killed sender");
    let second = spawn(&s.cfg, &s.dir.path().join("second.log"), "info");
    wait_until("the mail sent by the next run", Duration::from_secs(40), || !s.d.messages("alice").is_empty());
    s.still_has("alice", 1);
    terminate(second);
    let outbox = s.outbox();
    assert_eq!(outbox[0]["state"], "sent", "{outbox:?}");
    assert_eq!(outbox[0]["attempts"], 1, "{outbox:?}");
}

static CLOCK: AtomicI64 = AtomicI64::new(0);

fn clock() -> i64 {
    CLOCK.load(Ordering::SeqCst)
}

fn mail(n: i64, to: &str) -> NewMail {
    let id = format!("back{n}@bot.example.org");
    NewMail {
        cause: format!("test:{n}"),
        kind: "reply",
        case: None,
        in_reply_to: None,
        message_id: id.clone(),
        addressee: Some(to.into()),
        recipients: vec![to.into()],
        sender: "bot@example.org".into(),
        subject: format!("mail {n}"),
        raw: format!(
            "From: bot@example.org\r\nTo: {to}\r\nSubject: mail {n}\r\nMessage-ID: <{id}>\r\n\r\nmail {n}\r\n"
        )
        .into_bytes(),
        created_at: clock(),
    }
}

/// Mail queued while the SMTP server is down fails, each try pushing its
/// next one out (up to 10 minutes here); when the server is back, the
/// next pass, with the clock where it was, sends every mail that waited
/// for a server. A mail refused for itself keeps its own backoff.
#[test]
fn the_server_back_every_waiting_mail_goes_in_the_next_pass() {
    let Some(d) = Dovecot::start() else { return };
    let Some(mut p) = Postfix::start(d.lmtp_port) else { return };
    p.stop();
    CLOCK.store(now(), Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    let cfg = lkpbot::config::Config::parse(
        &format!(
            "[smtp]\nhost = \"127.0.0.1\"\nport = {}\ntls = \"none\"\ntimeout_seconds = 10\n[outbox]\nretry_seconds = 600\n",
            p.smtp_port
        ),
        Path::new("t.toml"),
    )
    .unwrap();
    block_on(async {
        let sender = Mailer::from_config(&cfg, Path::new("t.toml"), clock).unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).await.unwrap();
        let mut tx = store.begin().await.unwrap();
        for n in 0..3 {
            tx.enqueue(&mail(n, "alice@example.org")).await.unwrap();
        }
        tx.enqueue(&mail(3, "not an address")).await.unwrap();
        tx.commit().await.unwrap();
        // Each pass stops at the first mail no server took.
        for _ in 0..4 {
            let s = sender.send_due(&mut store).await.unwrap();
            assert_eq!(s.sent, 0);
        }
        let waiting = store.due_mail(i64::MAX, 10).await.unwrap();
        assert!(waiting.iter().all(|m| m.state == MailState::Failing), "{waiting:?}");
        assert!(waiting.iter().all(|m| m.next_attempt_at > clock()), "{waiting:?}");
        let refused_tries = waiting[3].attempts;
        assert_eq!(waiting[3].failure, Some(lkpbot::store::Failure::Mail));
        assert_eq!(waiting[0].failure, Some(lkpbot::store::Failure::Server));
        p.resume();
        let s = sender.send_due(&mut store).await.unwrap();
        assert_eq!((s.sent, s.failed), (3, 0), "not everything went on the server's return");
        let left = store.due_mail(i64::MAX, 10).await.unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].attempts, refused_tries, "a refused mail was tried before its time");
    });
    let deadline = Instant::now() + Duration::from_secs(15);
    while d.messages("alice").len() < 3 {
        assert!(Instant::now() < deadline, "alice has {} mails", d.messages("alice").len());
        std::thread::sleep(Duration::from_millis(50));
    }
}
