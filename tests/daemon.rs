//! `lkpbot run` against a real IMAP server: a private Dovecot per test
//! (`util::dovecot`), the binary as a user runs it, its store read back.
//! Initial and incremental sync, IDLE, a changed UIDVALIDITY, the server
//! and the bot killed mid-sync, bad credentials, a message that is not
//! mail; and the local sources (a Maildir, an mbox) without a server.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use lkpbot::case::CaseFilter;
use lkpbot::store::Store;

use crate::order::{canonical, first_difference, import_parts};
use crate::thread::{block_on, fixture_messages};
use crate::util::bot::Bot;
use crate::util::{self, dovecot::Dovecot};

const PASSWORD_ENV: &str = "LKPBOT_TEST_IMAP_PASSWORD";

/// Messages to serve: the first `n` of the real archive when it is here,
/// else the thread fixtures.
fn messages(n: usize) -> Vec<Vec<u8>> {
    match util::shared_file("corpus/lkp-threads.mbox") {
        Some(p) => lkpbot::source::open(&p).unwrap().take(n).map(|m| m.unwrap().bytes).collect(),
        None => util::files_with_suffix(&util::fixtures().join("threads"), ".mbox")
            .iter()
            .flat_map(|p| fixture_messages(p.file_stem().unwrap().to_str().unwrap()))
            .take(n)
            .collect(),
    }
}

/// A config in `dir` following `bot`'s INBOX on `d`, and its store path.
fn config(dir: &Path, d: &Dovecot, extra: &str) -> PathBuf {
    let path = dir.join("lkpbot.toml");
    std::fs::write(
        &path,
        format!(
            "[store]\npath = \"store.db\"\n\n[bot]\nstale_days = 0\n\n[[sources]]\nkind = \"imap\"\nhost = \"127.0.0.1\"\nport = {}\ntls = \"none\"\n\
             user = \"bot\"\npassword_env = \"{PASSWORD_ENV}\"\n{extra}\n",
            d.imap_port
        ),
    )
    .unwrap();
    path
}

fn lkpbot(cfg: &Path, args: &[&str], password: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lkpbot"));
    c.arg("--config").arg(cfg).args(args).env(PASSWORD_ENV, password).env("RUST_LOG", "info");
    c
}

fn run_once(cfg: &Path) -> Output {
    let out = lkpbot(cfg, &["run", "--once"], "botpass").output().unwrap();
    assert!(out.status.success(), "run --once: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn summary_field(out: &Output, name: &str) -> u64 {
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix(name).map(|v| v.trim().parse().unwrap()))
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

/// The cases of a store, in the form that does not depend on order.
fn cases_of(store: &Path) -> std::collections::BTreeMap<String, String> {
    block_on(async {
        let mut s = Store::open(store).await.unwrap();
        canonical(&s.cases(CaseFilter::All, true).await.unwrap())
    })
}

fn ingested(msgs: &[Vec<u8>]) -> std::collections::BTreeMap<String, String> {
    let dir = tempfile::tempdir().unwrap();
    canonical(&block_on(import_parts(dir.path(), &[msgs.to_vec()], 1024)))
}

fn checkpoint(store: &Path, port: u16) -> Option<String> {
    block_on(async {
        let mut s = Store::open(store).await.ok()?;
        s.checkpoint(&format!("imap://bot@127.0.0.1:{port}/INBOX")).await.ok()?
    })
}

fn count_messages(store: &Path) -> u64 {
    block_on(async {
        match Store::open(store).await {
            Ok(mut s) => {
                s.table_stats().await.unwrap().iter().find(|t| t.table == "messages").map_or(0, |t| t.rows as u64)
            }
            Err(_) => 0,
        }
    })
}

fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
    start.elapsed()
}

/// Starts the bot in the background, its log going to a file beside the
/// config (a pipe nobody reads would fill, and stop the bot).
fn spawn_bot(cfg: &Path, args: &[&str]) -> Bot {
    let log = std::fs::File::create(cfg.with_file_name("bot.log")).unwrap();
    Bot::new(lkpbot(cfg, args, "botpass").stdout(Stdio::null()).stderr(log).spawn().unwrap())
}

fn bot_log(cfg: &Path) -> String {
    std::fs::read_to_string(cfg.with_file_name("bot.log")).unwrap_or_default()
}

fn stop(bot: Bot) -> Output {
    bot.terminate()
}

/// The first sync of a mailbox stores what `ingest` of the same messages
/// stores (same cases, states, messages); a second pass fetches only what
/// was appended since. Prints the sync rate beside `ingest`'s.
#[test]
fn initial_then_incremental_sync_equals_ingest() {
    let Some(d) = Dovecot::start() else { return };
    let all = messages(400);
    let (first, later) = all.split_at(all.len() - 20);
    d.append("bot", first);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &d, "batch = 64\n");
    let store = dir.path().join("store.db");

    let t = Instant::now();
    let out = run_once(&cfg);
    let sync = t.elapsed().as_secs_f64();
    assert_eq!(summary_field(&out, "new"), first.len() as u64);
    if let Some(diff) = first_difference(&ingested(first), &cases_of(&store)) {
        panic!("the first sync is not the import of the same messages: {diff}");
    }
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("synced") && log.contains("INBOX"), "no sync line in the log: {log}");

    // The same messages through `ingest`, for the rate.
    let mbox = dir.path().join("same.mbox");
    let mut text = Vec::new();
    for m in first {
        text.extend_from_slice(b"From lkpbot@test Thu Jan  1 00:00:00 1970\n");
        for line in m.split_inclusive(|&b| b == b'\n') {
            let gts = line.iter().take_while(|&&b| b == b'>').count();
            if line[gts..].starts_with(b"From ") {
                text.push(b'>');
            }
            text.extend_from_slice(line);
        }
        text.extend_from_slice(b"\n\n");
    }
    std::fs::write(&mbox, text).unwrap();
    let t = Instant::now();
    let imported = Command::new(env!("CARGO_BIN_EXE_lkpbot"))
        .args(["--db", dir.path().join("ingest.db").to_str().unwrap(), "ingest", mbox.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(imported.status.success());
    let ingest = t.elapsed().as_secs_f64();
    let n = first.len() as f64;
    println!(
        "initial sync: {:.0} msgs/s ({} messages in {sync:.2}s); ingest of the same: {:.0} msgs/s ({ingest:.2}s)",
        n / sync,
        first.len(),
        n / ingest
    );

    d.append("bot", later);
    let out = run_once(&cfg);
    assert_eq!((summary_field(&out, "messages read"), summary_field(&out, "new")), (20, 20));
    if let Some(diff) = first_difference(&ingested(&all), &cases_of(&store)) {
        panic!("after the incremental sync: {diff}");
    }
    let (validity, uid) =
        checkpoint(&store, d.imap_port).unwrap().split_once(':').map(|(v, u)| (v.to_string(), u.to_string())).unwrap();
    assert!(!validity.is_empty());
    assert_eq!(uid, all.len().to_string());
}

/// A message appended while the bot idles is stored within two seconds,
/// though `poll_seconds` is far longer: only IDLE can explain it. SIGTERM
/// then stops the bot cleanly (exit 0). Prints the median latency.
#[test]
fn idle_wakes_the_bot_for_new_mail() {
    let Some(d) = Dovecot::start() else { return };
    let msgs = messages(12);
    d.append("bot", &msgs[..2]);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &d, "poll_seconds = 3600\nidle = true\n");
    let store = dir.path().join("store.db");
    let child = spawn_bot(&cfg, &["run"]);
    wait_for("the first sync", Duration::from_secs(20), || {
        checkpoint(&store, d.imap_port).is_some_and(|c| c.ends_with(":2"))
    });
    let mut latencies = Vec::new();
    for (i, m) in msgs[2..].iter().enumerate() {
        // Let the bot get back into IDLE.
        std::thread::sleep(Duration::from_millis(300));
        let want = format!(":{}", i + 3);
        let start = Instant::now();
        d.append("bot", std::slice::from_ref(m));
        wait_for("a message appended during IDLE", Duration::from_secs(5), || {
            checkpoint(&store, d.imap_port).is_some_and(|c| c.ends_with(&want))
        });
        latencies.push(start.elapsed());
    }
    let out = stop(child);
    assert!(out.status.success(), "SIGTERM: {:?} {}", out.status, bot_log(&cfg));
    latencies.sort();
    let median = latencies[latencies.len() / 2];
    println!("IDLE append-to-stored latency: median {median:?} (of {}: {latencies:?})", latencies.len());
    assert!(median < Duration::from_secs(2), "{latencies:?}");
    assert_eq!(count_messages(&store), msgs.len() as u64);
}

/// The server renumbers the mailbox (a new UIDVALIDITY): the bot reads it
/// all again, finds only duplicates, and checkpoints the new numbering.
#[test]
fn a_new_uidvalidity_reads_the_mailbox_again() {
    let Some(d) = Dovecot::start() else { return };
    let msgs = messages(30);
    d.append("bot", &msgs);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &d, "");
    let store = dir.path().join("store.db");
    run_once(&cfg);
    let before = checkpoint(&store, d.imap_port).unwrap();
    d.doveadm(&["mailbox", "update", "-u", "bot", "--uid-validity", "12345", "INBOX"]);
    let out = run_once(&cfg);
    assert_eq!((summary_field(&out, "new"), summary_field(&out, "duplicates")), (0, 30));
    let after = checkpoint(&store, d.imap_port).unwrap();
    assert_ne!(before, after);
    assert!(after.starts_with("12345:"), "{after}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("UIDVALIDITY changed"));
}

/// A mailbox of 1,000 messages read two at a time (a long sync to
/// interrupt), the bot started on it (`args`), and the first batch stored.
struct LongSync {
    d: Dovecot,
    msgs: Vec<Vec<u8>>,
    dir: tempfile::TempDir,
    cfg: PathBuf,
    store: PathBuf,
    child: Bot,
}

fn long_sync(args: &[&str], extra: &str) -> Option<LongSync> {
    let d = Dovecot::start()?;
    let msgs = messages(1000);
    d.append("bot", &msgs);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &d, &format!("batch = 2\n{extra}"));
    let store = dir.path().join("store.db");
    let child = spawn_bot(&cfg, args);
    wait_for("a first batch", Duration::from_secs(20), || checkpoint(&store, d.imap_port).is_some());
    Some(LongSync { d, msgs, dir, cfg, store, child })
}

/// Every message stored once, the cases those of `ingest`.
fn check_all_stored_once(msgs: &[Vec<u8>], store: &Path) {
    assert_eq!(count_messages(store), msgs.len() as u64);
    if let Some(diff) = first_difference(&ingested(msgs), &cases_of(store)) {
        panic!("{diff}");
    }
}

/// The server dies in the middle of a sync and comes back: the bot
/// reconnects (with backoff) and every message is stored once.
#[test]
fn the_server_killed_mid_sync() {
    let Some(LongSync { mut d, msgs, dir: _dir, cfg, store, child }) = long_sync(&["run"], "poll_seconds = 3600\n")
    else {
        return;
    };
    d.kill();
    std::thread::sleep(Duration::from_millis(300));
    d.restart();
    let last = format!(":{}", msgs.len());
    wait_for("the whole mailbox after the restart", Duration::from_secs(60), || {
        checkpoint(&store, d.imap_port).is_some_and(|c| c.ends_with(&last))
    });
    let out = stop(child);
    assert!(out.status.success());
    let log = bot_log(&cfg);
    assert!(log.contains("retrying"), "no retry in the log: {log}");
    check_all_stored_once(&msgs, &store);
}

/// The bot killed (SIGKILL) in the middle of a sync and started again:
/// nothing lost, nothing doubled.
#[test]
fn the_bot_killed_mid_sync() {
    let Some(LongSync { d: _d, msgs, dir: _dir, cfg, store, mut child }) = long_sync(&["run", "--once"], "") else {
        return;
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let stored_before = count_messages(&store);
    assert!(stored_before < msgs.len() as u64, "the sync was over before the kill");
    let out = run_once(&cfg);
    assert_eq!(summary_field(&out, "new") + stored_before, msgs.len() as u64);
    check_all_stored_once(&msgs, &store);
}

/// A wrong password: `run --once` exits 2 and says which source and why.
#[test]
fn bad_credentials_name_the_source() {
    let Some(d) = Dovecot::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &d, "");
    let out = lkpbot(&cfg, &["run", "--once"], "wrong").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let source = format!("imap://bot@127.0.0.1:{}/INBOX", d.imap_port);
    assert!(err.contains(&source) && err.contains("refused the login of bot"), "{err}");
}

/// Bytes that are no mail at all: stored as what they are (a message with
/// problems, logged), and the checkpoint moves past them.
#[test]
fn a_message_that_is_not_mail_is_logged_and_passed() {
    let Some(d) = Dovecot::start() else { return };
    let mut msgs = messages(3);
    msgs.insert(1, b"\x00\x01\x02 not a mail at all \xff\xfe\n\x00".to_vec());
    d.append("bot", &msgs);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &d, "");
    let store = dir.path().join("store.db");
    let out = run_once(&cfg);
    assert_eq!(summary_field(&out, "new"), 4);
    assert!(summary_field(&out, "problems") >= 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("message read with problems"));
    assert!(checkpoint(&store, d.imap_port).unwrap().ends_with(":4"));
}

/// A Maildir and an mbox fed by other programs: each pass reads only what
/// arrived since the last, and the store ends as `ingest` of it all.
#[test]
fn local_sources_pick_up_what_arrives() {
    let msgs = fixture_messages("reply-chain");
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("md");
    for sub in ["new", "cur", "tmp"] {
        std::fs::create_dir_all(md.join(sub)).unwrap();
    }
    let mbox = dir.path().join("list.mbox");
    let cfg = dir.path().join("lkpbot.toml");
    std::fs::write(
        &cfg,
        "[store]\npath = \"s.db\"\n[bot]\nstale_days = 0\n[[sources]]\nkind = \"maildir\"\npath = \"md\"\n[[sources]]\nkind = \"mbox\"\npath = \"list.mbox\"\n",
    )
    .unwrap();
    let deliver = |i: usize| {
        // Alternate: even messages by Maildir, odd ones appended to the mbox.
        if i.is_multiple_of(2) {
            std::fs::write(md.join("new").join(format!("{}.{i}.host", 1_700_000_000 + i)), &msgs[i]).unwrap();
        } else {
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&mbox).unwrap();
            std::io::Write::write_all(&mut f, b"From x@y Thu Jan  1 00:00:00 1970\n").unwrap();
            std::io::Write::write_all(&mut f, &msgs[i]).unwrap();
            std::io::Write::write_all(&mut f, b"\n").unwrap();
        }
    };
    deliver(0);
    deliver(1);
    let out = run_once(&cfg);
    assert_eq!(summary_field(&out, "messages read"), 2);
    deliver(2);
    deliver(3);
    let out = run_once(&cfg);
    // Only the two new ones (the Maildir may read its newest file again,
    // a harmless duplicate).
    assert_eq!(summary_field(&out, "new"), 2);
    assert!(summary_field(&out, "messages read") <= 3);
    if let Some(diff) = first_difference(&ingested(&msgs), &cases_of(&dir.path().join("s.db"))) {
        panic!("{diff}");
    }
}

/// `run` and `ingest` agree at once: right after the daemon's first pass
/// over an mbox of 2018 reports its cases are what `ingest` of the same
/// file makes, stale marks included (the hourly sweep does not wait an
/// hour after start, so a fresh daemon never shows old cases as
/// `reported`).
#[test]
fn the_first_sync_marks_stale_cases_as_ingest_does() {
    let dir = tempfile::tempdir().unwrap();
    let mbox = dir.path().join("list.mbox");
    std::fs::copy(util::fixtures().join("threads/same-patch-two-shas.mbox"), &mbox).unwrap();
    // Written an hour ago: a followed mbox whose last message is still
    // being written holds that message back.
    let an_hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options().write(true).open(&mbox).unwrap().set_modified(an_hour_ago).unwrap();
    let cfg = dir.path().join("lkpbot.toml");
    std::fs::write(
        &cfg,
        "[store]\npath = \"s.db\"\n[bot]\nstale_days = 30\n[[sources]]\nkind = \"mbox\"\npath = \"list.mbox\"\npoll_seconds = 3600\n",
    )
    .unwrap();
    let ingest_db = dir.path().join("ingest.db");
    let out =
        lkpbot(&cfg, &["--db", ingest_db.to_str().unwrap(), "ingest", mbox.to_str().unwrap()], "").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let want = read_cases(&ingest_db).unwrap();
    assert!(
        want.values().all(|c| c.starts_with("state stale\n") || c.starts_with("state informational\n")),
        "{want:?}"
    );

    let bot = spawn_bot(&cfg, &["run"]);
    let store = dir.path().join("s.db");
    let mut last = None;
    let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_for("the daemon's cases to be ingest's", Duration::from_secs(30), || {
            last = read_cases(&store);
            last.as_ref() == Some(&want)
        })
    }));
    let out = stop(bot);
    if waited.is_err() {
        let diff = last.as_ref().and_then(|got| first_difference(&want, got));
        panic!("not ingest's after the first pass: {diff:?}\n{}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(bot_log(&cfg).contains("first pass done"), "{}", bot_log(&cfg));
}

/// The cases of a store as a reader sees it (`None` while there is none).
fn read_cases(store: &Path) -> Option<std::collections::BTreeMap<String, String>> {
    block_on(async {
        let r = lkpbot::store::Reader::open(store).await.ok()?;
        let cases = r.cases(CaseFilter::All, true).await.ok();
        r.close().await;
        cases.map(|c| canonical(&c))
    })
}

/// TLS from the first byte, and STARTTLS, against a server whose
/// certificate a CA of its own signed (`ca_file`); without that CA the
/// certificate is refused, and the run says so.
#[test]
fn implicit_tls_and_starttls() {
    let Some(d) = Dovecot::start_with_tls() else { return };
    let (imaps, ca) = d.tls.clone().unwrap();
    let msgs = messages(5);
    d.append("bot", &msgs);
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, tls: &str, port: u16, ca: Option<&Path>| {
        let path = dir.path().join(name);
        let ca = ca.map_or(String::new(), |c| format!("ca_file = \"{}\"\n", c.display()));
        std::fs::write(
            &path,
            format!(
                "[store]\npath = \"{name}.db\"\n[[sources]]\nkind = \"imap\"\nhost = \"127.0.0.1\"\nport = {port}\n\
                 tls = \"{tls}\"\nuser = \"bot\"\npassword_env = \"{PASSWORD_ENV}\"\n{ca}"
            ),
        )
        .unwrap();
        path
    };
    for (name, tls, port) in [("implicit", "implicit", imaps), ("starttls", "starttls", d.imap_port)] {
        let out = run_once(&write(name, tls, port, Some(&ca)));
        assert_eq!(summary_field(&out, "new"), msgs.len() as u64, "{name}");
    }
    let out = lkpbot(&write("untrusted", "implicit", imaps, None), &["run", "--once"], "botpass").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("TLS with 127.0.0.1") && err.contains("certificate"), "{err}");
}

/// `--log-format json`: every log line is one JSON object; a sync and a
/// case opened are among them, with their fields.
#[test]
fn logs_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let mbox = util::fixtures().join("threads/retest-fixup.mbox");
    let cfg = dir.path().join("lkpbot.toml");
    std::fs::write(&cfg, format!("[[sources]]\nkind = \"mbox\"\npath = \"{}\"\n", mbox.display())).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lkpbot"))
        .args(["--config", cfg.to_str().unwrap(), "--db", dir.path().join("j.db").to_str().unwrap()])
        .args(["--log-format", "json", "run", "--once"])
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let find = |msg: &str| lines.iter().find(|v| v["fields"]["message"] == msg).cloned();
    let synced = find("synced").expect("a sync line");
    assert!(synced["fields"]["source"].as_str().unwrap().starts_with("mbox:"));
    let opened = find("case opened").expect("a case line");
    assert_eq!(opened["fields"]["metric"], "fio.write_iops");
    assert!(find("case event").is_some(), "{lines:?}");
}

/// One source that cannot be read (nothing listens on its port) does not
/// stop the others: the Maildir beside it is stored, and `run --once`
/// then exits 2 naming the source that failed and why.
#[test]
fn one_failing_source_does_not_stop_the_others() {
    let msgs = fixture_messages("reply-chain");
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("md");
    for sub in ["new", "cur", "tmp"] {
        std::fs::create_dir_all(md.join(sub)).unwrap();
    }
    for (i, m) in msgs.iter().enumerate() {
        std::fs::write(md.join("new").join(format!("{i}.host")), m).unwrap();
    }
    let port = util::dovecot::free_port();
    let cfg = dir.path().join("lkpbot.toml");
    std::fs::write(
        &cfg,
        format!(
            "[store]\npath = \"s.db\"\n[[sources]]\nkind = \"imap\"\nhost = \"127.0.0.1\"\nport = {port}\ntls = \"none\"\n\
             user = \"bot\"\npassword_env = \"{PASSWORD_ENV}\"\n[[sources]]\nkind = \"maildir\"\npath = \"md\"\n"
        ),
    )
    .unwrap();
    let out = lkpbot(&cfg, &["run", "--once"], "botpass").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("imap://bot@127.0.0.1:{port}/INBOX")) && err.contains("cannot connect"), "{err}");
    assert_eq!(summary_field(&out, "new"), msgs.len() as u64);
    assert_eq!(count_messages(&dir.path().join("s.db")), msgs.len() as u64);
}

/// A source that fails waits longer each time (1 s, 2 s, ...), and once a
/// pass has synced, the next failure waits the first wait again: a
/// Maildir that goes away, comes back, and goes again.
#[test]
fn reconnect_backoff_starts_again_after_a_good_sync() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("md");
    let away = dir.path().join("away");
    for sub in ["new", "cur", "tmp"] {
        std::fs::create_dir_all(away.join(sub)).unwrap();
    }
    let cfg = dir.path().join("lkpbot.toml");
    std::fs::write(
        &cfg,
        "[store]\npath = \"s.db\"\n[bot]\nstale_days = 0\n[[sources]]\nkind = \"maildir\"\npath = \"md\"\npoll_seconds = 1\n",
    )
    .unwrap();
    let bot = spawn_bot(&cfg, &["run"]);
    let retries =
        || bot_log(&cfg).lines().filter_map(|l| l.split("retry_in=").nth(1).map(str::to_string)).collect::<Vec<_>>();
    wait_for("two failures", Duration::from_secs(20), || retries().len() >= 2);
    assert_eq!(retries()[..2], ["1s", "2s"]);
    std::fs::rename(&away, &md).unwrap();
    wait_for("a sync", Duration::from_secs(20), || bot_log(&cfg).contains("synced"));
    std::fs::rename(&md, &away).unwrap();
    let before = retries().len();
    wait_for("the next failure", Duration::from_secs(20), || retries().len() > before);
    assert_eq!(retries()[before], "1s", "{:?}", retries());
    stop(bot);
}

/// A message expunged between the UID SEARCH and its UID FETCH is gone,
/// not a broken connection: the sync stores the others and goes on (it
/// used to stop with a timeout, and `run --once` failed).
#[test]
fn a_message_expunged_before_its_fetch_is_skipped() {
    use lkpbot::source::imap;
    let Some(d) = Dovecot::start() else { return };
    d.append("bot", &messages(4));
    let acct = imap::Account {
        host: "127.0.0.1".into(),
        port: d.imap_port,
        tls: lkpbot::config::Tls::None,
        user: "bot".into(),
        password: "botpass".into(),
        ca_file: None,
    };
    let (synced, got) = block_on(async {
        let mut session = imap::connect(&acct).await.unwrap();
        let mut got: Vec<String> = Vec::new();
        let mut batches = 0;
        let synced = imap::sync_mailbox(
            &mut session,
            &acct,
            "INBOX",
            None,
            1,
            || 1_780_000_000,
            |envs| {
                batches += 1;
                if batches == 1 {
                    // The second message goes while the first is stored.
                    d.doveadm(&["expunge", "-u", "bot", "mailbox", "INBOX", "uid", "2"]);
                }
                got.extend(envs.into_iter().map(|e| e.checkpoint.unwrap().token));
                async { Ok(()) }
            },
        )
        .await;
        (synced, got)
    });
    let synced = synced.unwrap_or_else(|e| panic!("the sync failed: {e}"));
    assert_eq!(synced.messages, 3);
    let uids: Vec<&str> = got.iter().map(|t| t.rsplit(':').next().unwrap()).collect();
    assert_eq!(uids, ["1", "3", "4"]);
}

/// A PostgreSQL store killed (an immediate shutdown: no checkpoint, every
/// connection cut) and started again under a running bot following a
/// Maildir: mail delivered before, while the server is down and after is
/// each stored once, and the cases are those `ingest` makes of it all.
#[test]
fn a_postgres_restart_under_a_running_bot_loses_and_doubles_nothing() {
    let Some(mut pg) = crate::util::postgres::PgServer::start_durable() else { return };
    let url = pg.create_db();
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("md");
    for sub in ["new", "cur", "tmp"] {
        std::fs::create_dir_all(md.join(sub)).unwrap();
    }
    let cfg = dir.path().join("lkpbot.toml");
    std::fs::write(
        &cfg,
        format!(
            "[store]\nurl = \"{url}\"\n[bot]\nstale_days = 0\n[[sources]]\nkind = \"maildir\"\npath = \"md\"\n\
             poll_seconds = 1\n"
        ),
    )
    .unwrap();
    let msgs = crate::thread::all_fixture_messages();
    let deliver = |from: usize, to: usize| {
        for (i, m) in msgs.iter().enumerate().take(to).skip(from) {
            std::fs::write(md.join("tmp").join(format!("{i}.eml")), m).unwrap();
            std::fs::rename(md.join("tmp").join(format!("{i}.eml")), md.join("new").join(format!("{i}.eml"))).unwrap();
        }
    };
    let db = url.rsplit('/').next().unwrap().to_string();
    let stored = |pg: &crate::util::postgres::PgServer| -> usize {
        pg.try_psql(&db, "SELECT COUNT(*) FROM messages").map_or(0, |n| n.parse().unwrap())
    };
    let distinct = |n: usize| -> usize {
        msgs[..n].iter().map(|m| lkpbot::mail::parse(m).message_id).collect::<std::collections::BTreeSet<_>>().len()
    };
    let third = msgs.len() / 3;
    deliver(0, third);
    let bot = spawn_bot(&cfg, &["run"]);
    wait_for("the first third stored", Duration::from_secs(30), || stored(&pg) == distinct(third));
    pg.crash();
    deliver(third, 2 * third);
    std::thread::sleep(Duration::from_secs(2));
    pg.launch();
    deliver(2 * third, msgs.len());
    let start = Instant::now();
    while stored(&pg) != distinct(msgs.len()) {
        assert!(start.elapsed() < Duration::from_secs(60), "not everything stored: {}", bot_log(&cfg));
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(stored(&pg), distinct(msgs.len()));
    let out = stop(bot);
    assert!(out.status.success(), "{}", bot_log(&cfg));
    assert!(bot_log(&cfg).contains("connected again"), "{}", bot_log(&cfg));
    let got = block_on(async {
        let at = lkpbot::store::Location::postgres(&url, None).unwrap();
        let mut s = Store::connect(&at).await.unwrap();
        canonical(&s.cases(CaseFilter::All, true).await.unwrap())
    });
    let want = ingested(&msgs);
    assert!(first_difference(&want, &got).is_none(), "{}", first_difference(&want, &got).unwrap_or_default());
}
