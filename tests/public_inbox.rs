//! public-inbox v2 inboxes as a source: inboxes built here with the git
//! CLI the way public-inbox writes them (one commit per message, the
//! sender as author, the mail's date and subject, the message in `m`, a
//! removal in `d`), followed by `run --once` and imported by `ingest`:
//! incremental passes, a new epoch, a rewritten (purged) epoch, removals,
//! a missing blob, bad inboxes and epochs, a corrupt pack; and the real
//! epoch of the shared corpus against its own mbox dump.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use lkpbot::case::CaseFilter;
use lkpbot::store::Store;
use sqlx::{Connection, Row};

use crate::order::{canonical, first_difference};
use crate::thread::{all_fixture_messages, block_on};

use crate::util;

/// One commit of an epoch: a message, or the removal of one.
#[derive(Clone)]
enum Op {
    Add(Vec<u8>),
    Remove(Vec<u8>),
}

/// A v2 inbox under construction: `dir/inbox/git/N.git`, each epoch's
/// history kept as its operations so it can be written again (a purge).
struct Inbox {
    dir: tempfile::TempDir,
    epochs: Vec<Vec<Op>>,
}

fn git(dir: &Path, args: &[&str], stdin: &[u8], env: &[(&str, String)]) -> String {
    let mut c = Command::new("git");
    c.arg("--git-dir").arg(dir).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().expect("git");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The value of a header of `raw` (first line only), for commit metadata.
fn header(raw: &[u8], name: &str) -> String {
    let text = String::from_utf8_lossy(raw);
    let prefix = format!("{}:", name.to_ascii_lowercase());
    text.lines()
        .take_while(|l| !l.is_empty())
        .find(|l| l.to_ascii_lowercase().starts_with(&prefix))
        .map(|l| l[prefix.len()..].trim().to_string())
        .unwrap_or_default()
}

impl Inbox {
    fn new() -> Inbox {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("inbox/git")).unwrap();
        Inbox { dir, epochs: Vec::new() }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("inbox")
    }

    fn epoch(&self, n: usize) -> PathBuf {
        self.path().join(format!("git/{n}.git"))
    }

    fn init(&mut self, n: usize) {
        let e = self.epoch(n);
        Command::new("git").args(["init", "-q", "--bare", "--initial-branch=master"]).arg(&e).status().unwrap();
        while self.epochs.len() <= n {
            self.epochs.push(Vec::new());
        }
    }

    /// Commits `op` on epoch `n` as public-inbox does; returns the commit.
    fn commit(&self, n: usize, op: &Op, seq: usize) -> String {
        let e = self.epoch(n);
        let (file, raw) = match op {
            Op::Add(r) => ("m", r),
            Op::Remove(r) => ("d", r),
        };
        let blob = git(&e, &["hash-object", "-w", "--stdin"], raw, &[]);
        let tree = git(&e, &["mktree"], format!("100644 blob {blob}\t{file}\n").as_bytes(), &[]);
        let parent =
            Command::new("git").arg("--git-dir").arg(&e).args(["rev-parse", "-q", "--verify", "master"]).output();
        let parent = String::from_utf8(parent.unwrap().stdout).unwrap().trim().to_string();
        let from = header(raw, "From");
        let (name, email) = match from.rsplit_once('<') {
            Some((n, a)) => (n.trim().trim_matches('"').to_string(), a.trim_end_matches('>').to_string()),
            None => (from.clone(), from.clone()),
        };
        // Commit dates increase with the history, like a list's.
        let date = format!("{} +0000", 1_600_000_000 + seq * 60);
        let env = [
            ("GIT_AUTHOR_NAME", if name.is_empty() { "unknown".into() } else { name }),
            ("GIT_AUTHOR_EMAIL", email),
            ("GIT_AUTHOR_DATE", date.clone()),
            ("GIT_COMMITTER_NAME", "public-inbox".into()),
            ("GIT_COMMITTER_EMAIL", "public-inbox@example.org".into()),
            ("GIT_COMMITTER_DATE", date),
        ];
        let subject = header(raw, "Subject");
        let subject = if subject.is_empty() { "(no subject)".to_string() } else { subject };
        let mut args = vec!["commit-tree", tree.as_str(), "-m", subject.as_str()];
        if !parent.is_empty() {
            args.extend(["-p", parent.as_str()]);
        }
        let commit = git(&e, &args, b"", &env);
        git(&e, &["update-ref", "refs/heads/master", &commit], b"", &[]);
        commit
    }

    fn push(&mut self, n: usize, op: Op) -> String {
        if self.epochs.len() <= n || !self.epoch(n).exists() {
            self.init(n);
        }
        let seq = self.epochs.iter().map(Vec::len).sum();
        let c = self.commit(n, &op, seq);
        self.epochs[n].push(op);
        c
    }

    fn add(&mut self, n: usize, raw: &[u8]) -> String {
        self.push(n, Op::Add(raw.to_vec()))
    }

    /// `public-inbox-purge`: epoch `n`'s history written again without
    /// the message at `index`, the old commits pruned away.
    fn purge(&mut self, n: usize, index: usize) {
        let mut ops = self.epochs[n].clone();
        ops.remove(index);
        std::fs::remove_dir_all(self.epoch(n)).unwrap();
        self.epochs[n].clear();
        self.init(n);
        for op in ops {
            self.push(n, op);
        }
    }

    fn tip(&self, n: usize) -> String {
        git(&self.epoch(n), &["rev-parse", "refs/heads/master"], b"", &[])
    }
}

/// `raw` written as an mboxrd file of messages.
fn mbox(path: &Path, msgs: &[&[u8]]) {
    let mut out = Vec::new();
    for m in msgs {
        out.extend_from_slice(b"From mboxrd@z Thu Jan  1 00:00:00 1970\n");
        for line in m.split_inclusive(|&b| b == b'\n') {
            if line.iter().skip_while(|&&b| b == b'>').take(5).eq(b"From ".iter()) {
                out.push(b'>');
            }
            out.extend_from_slice(line);
        }
        if !m.ends_with(b"\n") {
            out.push(b'\n');
        }
        out.push(b'\n');
    }
    std::fs::write(path, out).unwrap();
}

fn lkpbot(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lkpbot")).current_dir(dir).args(args).env("RUST_LOG", "info").output().unwrap()
}

/// A config following the inbox at `inbox`, in `dir`.
fn config(dir: &Path, inbox: &Path) -> PathBuf {
    let cfg = dir.join("lkpbot.toml");
    std::fs::write(
        &cfg,
        format!(
            "[store]\npath = \"s.db\"\n[bot]\nstale_days = 0\n[[sources]]\nkind = \"public-inbox\"\npath = \"{}\"\n",
            inbox.display()
        ),
    )
    .unwrap();
    cfg
}

fn run_once(dir: &Path, cfg: &Path) -> Output {
    let out = lkpbot(dir, &["--config", cfg.to_str().unwrap(), "run", "--once"]);
    assert!(out.status.success(), "run --once: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn field(out: &Output, name: &str) -> u64 {
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().find_map(|l| l.strip_prefix(name).map(|v| v.trim().parse().unwrap())).unwrap_or(0)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The store's cases (order-free form), and its messages: Message-ID,
/// kind, settled.
fn contents(db: &Path) -> (BTreeMap<String, String>, Vec<String>) {
    block_on(async {
        let mut s = Store::open(db).await.unwrap();
        let cases = canonical(&s.cases(CaseFilter::All, true).await.unwrap());
        s.close().await.unwrap();
        let url = format!("sqlite://{}?mode=ro", db.display());
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        let rows = sqlx::query("SELECT message_id, kind, settled FROM messages ORDER BY message_id")
            .fetch_all(&mut conn)
            .await
            .unwrap();
        let messages = rows
            .iter()
            .map(|r| format!("{} {} {}", r.get::<String, _>(0), r.get::<String, _>(1), r.get::<i64, _>(2)))
            .collect();
        (cases, messages)
    })
}

/// `ingest` of `msgs` as one mbox, into a store of its own.
fn ingested_mbox(msgs: &[&[u8]]) -> (BTreeMap<String, String>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    mbox(&dir.path().join("all.mbox"), msgs);
    let out = lkpbot(dir.path(), &["--db", "m.db", "ingest", "--stale-days", "0", "all.mbox"]);
    assert!(out.status.success(), "ingest: {}", stderr(&out));
    contents(&dir.path().join("m.db"))
}

/// The store at `db` holds what `ingest` of `msgs` as an mbox does.
fn same_as_mbox(msgs: &[Vec<u8>], db: &Path) {
    let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
    same(&ingested_mbox(&refs), &contents(db));
}

fn same(a: &(BTreeMap<String, String>, Vec<String>), b: &(BTreeMap<String, String>, Vec<String>)) {
    if let Some(d) = first_difference(&a.0, &b.0) {
        panic!("{d}");
    }
    assert_eq!(a.1, b.1, "the stored messages differ");
}

fn checkpoint(db: &Path, source: &str) -> Option<String> {
    block_on(async { Store::open(db).await.unwrap().checkpoint(source).await.unwrap() })
}

fn epoch_source(inbox: &Path, n: usize) -> String {
    format!("public-inbox:{}/git/{n}.git", std::path::absolute(inbox).unwrap().display())
}

/// The thread fixtures' messages, each Message-ID once (one fixture is a
/// message cross-posted to two lists), so counts are plain.
fn distinct_messages() -> Vec<Vec<u8>> {
    let mut seen = std::collections::BTreeSet::new();
    all_fixture_messages().into_iter().filter(|m| seen.insert(header(m, "Message-ID"))).collect()
}

/// A list message that is nobody's case (it is removed later: spam).
fn spam(i: usize) -> Vec<u8> {
    format!(
        "From: Cheap Watches <deals{i}@spam.example>\nTo: lkp@lists.linux.dev\nSubject: best offer {i}\n\
         Date: Mon, 1 Jan 2024 00:00:{i:02} +0000\nMessage-ID: <offer{i}@spam.example>\n\nBuy now.\n"
    )
    .into_bytes()
}

/// `run --once` reads only what is new at each pass, a new epoch
/// included, and ends as `ingest` of the same messages as an mbox, and as
/// `ingest` of the inbox directory and of each epoch.
#[test]
fn run_once_follows_new_commits_and_new_epochs() {
    let msgs = distinct_messages();
    let half = msgs.len() / 2;
    let mut inbox = Inbox::new();
    for m in &msgs[..half] {
        inbox.add(0, m);
    }
    let work = tempfile::tempdir().unwrap();
    let cfg = config(work.path(), &inbox.path());
    let out = run_once(work.path(), &cfg);
    assert_eq!(field(&out, "messages read"), half as u64, "{}", stderr(&out));
    let db = work.path().join("s.db");
    assert_eq!(checkpoint(&db, &epoch_source(&inbox.path(), 0)), Some(inbox.tip(0)));
    // Nothing new: nothing read.
    let out = run_once(work.path(), &cfg);
    assert_eq!(field(&out, "messages read"), 0, "{}", stderr(&out));
    // More on epoch 0, then a new epoch.
    let third = half + (msgs.len() - half) / 2;
    for m in &msgs[half..third] {
        inbox.add(0, m);
    }
    for m in &msgs[third..] {
        inbox.add(1, m);
    }
    let out = run_once(work.path(), &cfg);
    assert_eq!(field(&out, "messages read"), (msgs.len() - half) as u64, "{}", stderr(&out));
    assert_eq!(field(&out, "duplicates"), 0);
    assert_eq!(checkpoint(&db, &epoch_source(&inbox.path(), 1)), Some(inbox.tip(1)));
    let all: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
    let want = ingested_mbox(&all);
    same(&want, &contents(&db));
    // `ingest` of the inbox directory, and of its epochs one by one.
    let out = lkpbot(work.path(), &["--db", "i.db", "ingest", "--stale-days", "0", inbox.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(field(&out, "new"), msgs.len() as u64);
    same(&want, &contents(&work.path().join("i.db")));
    let out = lkpbot(
        work.path(),
        &[
            "--db",
            "e.db",
            "ingest",
            "--stale-days",
            "0",
            inbox.epoch(1).to_str().unwrap(),
            inbox.epoch(0).to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    same(&want, &contents(&work.path().join("e.db")));
}

/// A `d` commit takes the message out of the store, with the case its
/// report opened; walking the history again (after a rewrite) or another
/// import of it never brings it back.
#[test]
fn removals_take_messages_out_for_good() {
    let msgs = distinct_messages();
    let mut inbox = Inbox::new();
    inbox.add(0, &spam(1));
    for m in &msgs {
        inbox.add(0, m);
    }
    inbox.add(0, &spam(2));
    let work = tempfile::tempdir().unwrap();
    let cfg = config(work.path(), &inbox.path());
    run_once(work.path(), &cfg);
    let db = work.path().join("s.db");
    let before = contents(&db);
    // The first fixture message is a robot report that opens a case.
    let report = &msgs[0];
    inbox.push(0, Op::Remove(spam(1)));
    inbox.push(0, Op::Remove(report.clone()));
    let out = run_once(work.path(), &cfg);
    assert_eq!(field(&out, "removed by the archive"), 2, "{}", stderr(&out));
    let after = contents(&db);
    assert!(after.0.len() < before.0.len(), "the removed report's case is gone");
    let kept = spam(2);
    let refs: Vec<&[u8]> = msgs[1..].iter().map(Vec::as_slice).chain([kept.as_slice()]).collect();
    same(&ingested_mbox(&refs), &after);
    // A purge (of the other spam) rewrites the epoch: it is walked
    // again, the removed messages' own commits included, and they stay
    // out. (What was purged stays stored: a purge leaves no record.)
    inbox.purge(0, inbox.epochs[0].len() - 3);
    let out = run_once(work.path(), &cfg);
    assert_eq!(field(&out, "new"), 0, "{}", stderr(&out));
    same(&after, &contents(&db));
    // And `ingest` of the inbox into that store: still out.
    let out = lkpbot(work.path(), &["--db", "s.db", "ingest", "--stale-days", "0", inbox.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(field(&out, "new"), 0);
    same(&after, &contents(&db));
    // An import from scratch of the inbox, removals and all, is that of
    // the messages it still has.
    let out = lkpbot(work.path(), &["--db", "fresh.db", "ingest", "--stale-days", "0", inbox.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    same_as_mbox(&msgs[1..], &work.path().join("fresh.db"));
}

/// An epoch rewritten by a purge (the stored commit is gone from its
/// history) is read again from its first commit: no duplicates stored,
/// no error, and the new commits after it are read.
#[test]
fn a_rewritten_epoch_is_read_again() {
    let msgs = distinct_messages();
    let mut inbox = Inbox::new();
    for m in &msgs[..10] {
        inbox.add(0, m);
    }
    let work = tempfile::tempdir().unwrap();
    let cfg = config(work.path(), &inbox.path());
    run_once(work.path(), &cfg);
    let db = work.path().join("s.db");
    let old_tip = inbox.tip(0);
    inbox.purge(0, 4);
    inbox.add(0, &msgs[10]);
    assert_ne!(inbox.tip(0), old_tip);
    let out = run_once(work.path(), &cfg);
    assert_eq!(field(&out, "messages read"), 10, "{}", stderr(&out));
    assert_eq!(field(&out, "new"), 1);
    assert_eq!(field(&out, "duplicates"), 9);
    assert_eq!(checkpoint(&db, &epoch_source(&inbox.path(), 0)), Some(inbox.tip(0)));
    same_as_mbox(&msgs[..11], &db);
}

/// A message whose blob is missing (a mirror that leaves out large
/// blobs) is an error naming the epoch and the commit; the rest is read,
/// and the checkpoint keeps the commit to read again, so once the blob
/// is there the message is stored.
#[test]
fn a_missing_blob_is_an_error_for_that_message_only() {
    let msgs = distinct_messages();
    let mut inbox = Inbox::new();
    for m in &msgs[..6] {
        inbox.add(0, m);
    }
    let e = inbox.epoch(0);
    let blob = git(&e, &["hash-object", "--stdin"], &msgs[2], &[]);
    let commit = git(&e, &["rev-list", "--skip=3", "-n1", "refs/heads/master"], b"", &[]);
    std::fs::remove_file(e.join("objects").join(&blob[..2]).join(&blob[2..])).unwrap();
    let work = tempfile::tempdir().unwrap();
    let cfg = config(work.path(), &inbox.path());
    let out = run_once(work.path(), &cfg);
    let err = stderr(&out);
    assert!(err.contains(&commit) && err.contains(&e.display().to_string()), "{err}");
    assert_eq!(field(&out, "new"), 5, "{err}");
    assert_eq!(field(&out, "unreadable messages"), 1, "{err}");
    let db = work.path().join("s.db");
    let token = checkpoint(&db, &epoch_source(&inbox.path(), 0)).unwrap();
    assert_eq!(token, format!("{} {commit}", inbox.tip(0)), "the unread commit stays to be read");
    // `ingest` says the same and exits 1 after reading the rest.
    let out = lkpbot(work.path(), &["--db", "i.db", "ingest", "--stale-days", "0", inbox.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains(&commit), "{}", stderr(&out));
    assert_eq!(field(&out, "new"), 5);
    // The blob comes back: the next pass reads that message, and only it.
    git(&e, &["hash-object", "-w", "--stdin"], &msgs[2], &[]);
    inbox.add(0, &msgs[6]);
    let out = run_once(work.path(), &cfg);
    assert_eq!(field(&out, "messages read"), 2, "{}", stderr(&out));
    assert_eq!(field(&out, "new"), 2);
    assert_eq!(checkpoint(&db, &epoch_source(&inbox.path(), 0)), Some(inbox.tip(0)));
    same_as_mbox(&msgs[..7], &db);
}

/// Not an inbox, an epoch that is not a repository, a corrupt pack:
/// clear errors naming the path, the other epochs read, no panic.
#[test]
fn bad_inboxes_and_epochs_are_named() {
    let msgs = distinct_messages();
    let work = tempfile::tempdir().unwrap();
    // A directory that is no inbox: `ingest` exits 1, `run --once` 2.
    let empty = work.path().join("empty");
    std::fs::create_dir_all(empty.join("git")).unwrap();
    let out = lkpbot(work.path(), &["--db", "x.db", "ingest", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains(&empty.display().to_string()), "{}", stderr(&out));
    let cfg = config(work.path(), &empty);
    let out = lkpbot(work.path(), &["--config", cfg.to_str().unwrap(), "run", "--once"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is not a public-inbox"), "{}", stderr(&out));
    // Epoch 1 is not a repository: named; epochs 0 and 2 are read.
    let mut inbox = Inbox::new();
    inbox.add(0, &msgs[0]);
    inbox.add(2, &msgs[1]);
    std::fs::create_dir_all(inbox.epoch(1)).unwrap();
    let cfg = config(work.path(), &inbox.path());
    let out = lkpbot(work.path(), &["--config", cfg.to_str().unwrap(), "run", "--once"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("{} is not a git repository", inbox.epoch(1).display())),
        "{}",
        stderr(&out)
    );
    assert_eq!(field(&out, "new"), 2);
    // A corrupt pack: every byte after the header of epoch 0's pack
    // flipped. Whatever cannot be read is named; nothing panics.
    let mut inbox = Inbox::new();
    for m in &msgs[..8] {
        inbox.add(0, m);
    }
    let e = inbox.epoch(0);
    git(&e, &["repack", "-a", "-d", "-q"], b"", &[]);
    let pack = std::fs::read_dir(e.join("objects/pack"))
        .unwrap()
        .map(|d| d.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "pack"))
        .unwrap();
    let mut bytes = std::fs::read(&pack).unwrap();
    let len = bytes.len();
    for b in &mut bytes[len / 2..len - 20] {
        *b ^= 0x55;
    }
    std::fs::write(&pack, bytes).unwrap();
    let out = lkpbot(work.path(), &["--db", "c.db", "ingest", inbox.path().to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&e.display().to_string()) && !err.contains("panicked"), "{err}");
}

/// The real epoch of the corpus (10,959 messages of linux-nvdimm):
/// `ingest` of the epoch equals `ingest` of its mbox dump.
#[test]
fn corpus_epoch_equals_its_mbox_dump() {
    let Some(bundle) = util::shared_file("corpus/public-inbox/linux-nvdimm-0.bundle") else { return };
    let work = tempfile::tempdir().unwrap();
    let epoch = work.path().join("nvdimm/git/0.git");
    let st = Command::new("git").args(["clone", "-q", "--bare"]).arg(&bundle).arg(&epoch).status().unwrap();
    assert!(st.success());
    // The dump: every commit's `m`, oldest first, through git itself.
    let commits = git(&epoch, &["rev-list", "--reverse", "--first-parent", "HEAD"], b"", &[]);
    let input: String = commits.lines().map(|c| format!("{c}:m\n")).collect();
    let mut child = Command::new("git")
        .arg("--git-dir")
        .arg(&epoch)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let mut msgs: Vec<&[u8]> = Vec::new();
    let mut rest = out.stdout.as_slice();
    while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
        let head = String::from_utf8_lossy(&rest[..nl]).to_string();
        let size: usize = head.rsplit(' ').next().unwrap().parse().unwrap_or_else(|_| panic!("{head}"));
        msgs.push(&rest[nl + 1..nl + 1 + size]);
        rest = &rest[nl + 2 + size..];
    }
    assert_eq!(msgs.len(), 10_959);
    mbox(&work.path().join("dump.mbox"), &msgs);
    let a = lkpbot(work.path(), &["--db", "a.db", "ingest", epoch.to_str().unwrap()]);
    assert!(a.status.success(), "{}", stderr(&a));
    let b = lkpbot(work.path(), &["--db", "b.db", "ingest", "dump.mbox"]);
    assert!(b.status.success(), "{}", stderr(&b));
    assert_eq!(String::from_utf8_lossy(&a.stdout), String::from_utf8_lossy(&b.stdout));
    assert!(field(&a, "cases opened") > 0);
    same(&contents(&work.path().join("b.db")), &contents(&work.path().join("a.db")));
    let stats = |db: &str| {
        block_on(async {
            let mut s = Store::open(&work.path().join(db)).await.unwrap();
            let t = s.table_stats().await.unwrap();
            t.into_iter()
                .filter(|t| !matches!(t.table, "messages" | "checkpoints"))
                .map(|t| (t.table, t.rows, t.checksum))
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(stats("a.db"), stats("b.db"));
}
