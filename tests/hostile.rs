//! Hostile and broken input at the source: messages over the size cap,
//! lines longer than memory should hold, empty files, unreadable Maildir
//! entries, header lists of 100,000 ids. Each test builds its input in a
//! temporary directory, so nothing large is checked in.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use lkpbot::source::{self, MAX_MESSAGE_BYTES, RawMessage};

/// A small, complete message.
fn small(id: &str) -> Vec<u8> {
    format!("Message-ID: <{id}>\nFrom: a@example.org\nSubject: {id}\n\nbody of {id}\n").into_bytes()
}

/// Writes an mbox of `messages` to `path`; a message is its head and
/// `body_bytes` bytes of `a` on one line, streamed so the test does not
/// hold them. Returns each message's size as the mbox reader will see it.
fn write_mbox(path: &Path, messages: &[(&[u8], usize)]) -> Vec<u64> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let chunk = vec![b'a'; 1 << 20];
    let mut sizes = Vec::new();
    for (head, body_bytes) in messages {
        f.write_all(b"From x@y Mon Jan  1 00:00:00 2024\n").unwrap();
        f.write_all(head).unwrap();
        let mut left = *body_bytes;
        while left > 0 {
            let n = left.min(chunk.len());
            f.write_all(&chunk[..n]).unwrap();
            left -= n;
        }
        let line_end = if *body_bytes > 0 { 1 } else { 0 };
        if line_end > 0 {
            f.write_all(b"\n").unwrap();
        }
        f.write_all(b"\n").unwrap();
        sizes.push((head.len() + body_bytes + line_end) as u64);
    }
    f.flush().unwrap();
    sizes
}

/// An empty Maildir `md` under `root`.
fn maildir(root: &Path) -> PathBuf {
    let md = root.join("md");
    for sub in ["cur", "new", "tmp"] {
        std::fs::create_dir_all(md.join(sub)).unwrap();
    }
    md
}

fn read_all(path: &Path) -> Vec<RawMessage> {
    source::open(path).unwrap().map(|m| m.unwrap()).collect()
}

fn cut_problem(m: &RawMessage) -> String {
    format!("message: cut at {MAX_MESSAGE_BYTES} of {} bytes", m.original_len)
}

/// [normal, 20 MB on one body line, normal]: the middle one is cut to the
/// cap and knows its size, and the one after it is found whole.
#[test]
fn mbox_keeps_the_start_of_a_huge_message_and_finds_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.mbox");
    let big_head = b"Message-ID: <big@x>\nSubject: big\n\n";
    let sizes = write_mbox(&path, &[(&small("one@x"), 0), (big_head, 20 << 20), (&small("three@x"), 0)]);

    let msgs = read_all(&path);
    assert_eq!(msgs.len(), 3);
    assert_eq!(msgs[0].bytes, small("one@x"));
    assert!(!msgs[0].truncated());
    assert_eq!(msgs[1].bytes.len(), MAX_MESSAGE_BYTES);
    assert!(msgs[1].bytes.starts_with(big_head));
    assert_eq!(msgs[1].original_len, sizes[1]);
    assert!(msgs[1].truncated());
    assert_eq!(msgs[2].bytes, small("three@x"));
    assert_eq!(msgs[2].original_len, msgs[2].bytes.len() as u64);

    let m = lkpbot::mail::parse_truncated(&msgs[1].bytes, msgs[1].original_len);
    assert_eq!(m.message_id.as_str(), "big@x");
    assert!(m.problems.contains(&cut_problem(&msgs[1])), "{:?}", m.problems);
    assert!(
        !lkpbot::mail::parse_truncated(&msgs[0].bytes, msgs[0].original_len)
            .problems
            .iter()
            .any(|p| p.starts_with("message:"))
    );
}

/// Maildir files and `.eml` files are read up to the cap and no further.
#[test]
fn maildir_and_eml_files_are_cut_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let mut big = small("big@x");
    big.resize(MAX_MESSAGE_BYTES + 12345, b'b');
    let mut exact = small("exact@x");
    exact.resize(MAX_MESSAGE_BYTES, b'c');
    let md = maildir(dir.path());
    std::fs::write(md.join("new/1.big"), &big).unwrap();
    std::fs::write(md.join("new/2.exact"), &exact).unwrap();
    std::fs::write(dir.path().join("big.eml"), &big).unwrap();

    for (path, want) in [(md, vec![(&big, true), (&exact, false)]), (dir.path().join("big.eml"), vec![(&big, true)])] {
        let msgs = read_all(&path);
        assert_eq!(msgs.len(), want.len(), "{}", path.display());
        for (m, (file, cut)) in msgs.iter().zip(want) {
            assert_eq!(m.bytes[..], file[..MAX_MESSAGE_BYTES], "{}", path.display());
            assert_eq!(m.original_len, file.len() as u64);
            assert_eq!(m.truncated(), cut);
        }
    }
}

/// An empty file, or one of blank lines, is no message, whether it is a
/// `.eml` file, a Maildir file or an mbox entry.
#[test]
fn empty_files_are_zero_messages() {
    let dir = tempfile::tempdir().unwrap();
    let md = maildir(dir.path());
    std::fs::write(md.join("new/1.empty"), b"").unwrap();
    std::fs::write(md.join("new/2.real"), small("real@x")).unwrap();
    std::fs::write(md.join("cur/3.blank:2,S"), b"\n\r\n \t\n").unwrap();
    let sep = "From x@y Mon Jan  1 00:00:00 2024\n";
    let files: &[(&str, Vec<u8>, usize)] = &[
        ("empty.eml", Vec::new(), 0),
        ("newlines.eml", b"\n\n\n".to_vec(), 0),
        ("blank-crlf.eml", b" \r\n\t\r\n".to_vec(), 0),
        ("separators-only.mbox", format!("{sep}\n{sep}\n\n{sep}").into_bytes(), 0),
        (
            "one-among-blanks.mbox",
            [sep.as_bytes(), b"\n", sep.as_bytes(), &small("m@x"), b"\n", sep.as_bytes()].concat(),
            1,
        ),
    ];
    for (name, bytes, _) in files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let mut cases: Vec<(&str, usize)> = files.iter().map(|(n, _, c)| (*n, *c)).collect();
    cases.push(("md", 1));
    for (name, want) in cases {
        let path = dir.path().join(name);
        let got = read_all(&path);
        assert_eq!(got.len(), want, "{name}: {:?}", got.iter().map(|m| &m.bytes).collect::<Vec<_>>());
    }

    // The CLI, which reads through the same sources, prints nothing.
    let out = Command::new(env!("CARGO_BIN_EXE_lkpbot"))
        .args(["classify", "--json", "empty.eml", "newlines.eml", "separators-only.mbox"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
}

/// A Maildir entry that cannot be read (a dangling link, a directory named
/// like a message; tests may run as root, so permissions would not do) is
/// reported as a per-message error naming it, and the messages after it
/// are still read, by the source and by `classify`.
#[test]
fn unreadable_maildir_entry_is_reported_and_the_rest_read() {
    let dir = tempfile::tempdir().unwrap();
    let md = maildir(dir.path());
    std::fs::write(md.join("new/1.first"), small("first@x")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("gone"), md.join("new/2.dangling")).unwrap();
    std::fs::create_dir(md.join("new/3.directory")).unwrap();
    std::fs::write(md.join("cur/4.last:2,S"), small("last@x")).unwrap();

    let items: Vec<Result<RawMessage, source::SourceError>> = source::open(&md).unwrap().collect();
    let shape: Vec<String> = items
        .iter()
        .map(|r| match r {
            Ok(m) => lkpbot::mail::parse(&m.bytes).message_id.to_string(),
            Err(e) => format!("{} error: {e}", if e.is_fatal() { "fatal" } else { "message" }),
        })
        .collect();
    assert_eq!(shape.len(), 4, "{shape:#?}");
    assert_eq!(shape[0], "first@x");
    assert!(
        shape[1].starts_with("message error: cannot read message") && shape[1].contains("2.dangling"),
        "{shape:#?}"
    );
    assert!(
        shape[2].starts_with("message error: cannot read message") && shape[2].contains("3.directory"),
        "{shape:#?}"
    );
    assert_eq!(shape[3], "last@x");

    let out = Command::new(env!("CARGO_BIN_EXE_lkpbot"))
        .args(["classify", "--json", "md"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("2.dangling") && err.contains("3.directory"), "{err}");
    assert!(err.trim_end().ends_with("could not read: md"), "{err}");
    let ids: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["message_id"].clone())
        .collect();
    assert_eq!(ids, ["first@x", "last@x"]);

    // ingest reads both messages, names each bad entry, counts them, and
    // exits 1 naming the Maildir.
    let out = Command::new(env!("CARGO_BIN_EXE_lkpbot"))
        .args(["--db", "t.db", "ingest", "md"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let read = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("messages read"))
        .map(str::trim)
        .map(str::to_string);
    assert_eq!(read.as_deref(), Some("2"), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains("unreadable messages                2"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot read message") && err.contains("could not read: md"), "{err}");
}

/// A References header of 100,000 ids is read in one linear pass and
/// bounded: In-Reply-To, the root and the nearest ids, 64 at most, and the
/// cut is a problem. (Quadratic before: 30 s and 100,001 rows at ingest.)
#[test]
fn huge_references_are_bounded() {
    let n = 100_000;
    let mut raw = String::from("Message-ID: <child@x>\nIn-Reply-To: <parent@x>\nSubject: Re: deep\nReferences:");
    for i in 0..n {
        raw.push_str(&format!(" <r{i}@x>\n"));
    }
    raw.push_str("\nbody\n");
    let m = lkpbot::mail::parse(raw.as_bytes());
    let ancestors: Vec<&str> = m.ancestors().iter().map(|a| a.as_str()).collect();
    assert_eq!(ancestors.len(), lkpbot::mail::MAX_ANCESTORS);
    let last = format!("r{}@x", n - 1);
    assert_eq!(&ancestors[..2], ["parent@x", last.as_str()]);
    assert_eq!(ancestors.last(), Some(&"r0@x"), "the root is kept");
    assert!(m.references.len() < lkpbot::mail::MAX_ANCESTORS, "{}", m.references.len());
    let problem = format!("references: {n} ids, kept 64: In-Reply-To, the root and the nearest");
    assert!(m.problems.contains(&problem), "{:?}", m.problems);

    // Stored, it waits for at most those 64 (none of them is here).
    let dir = tempfile::tempdir().unwrap();
    let deps = crate::thread::block_on(async {
        let path = dir.path().join("refs.db");
        let mut engine = crate::thread::engine(lkpbot::store::Store::open(&path).await.unwrap());
        engine.push(crate::thread::env(raw.as_bytes())).await.unwrap();
        engine.finish().await.unwrap();
        let stats = engine.store().table_stats().await.unwrap();
        stats.iter().find(|s| s.table == "thread_deps").unwrap().rows
    });
    assert_eq!(deps, lkpbot::mail::MAX_ANCESTORS as i64);
}

/// Set in the fresh test process that measures `lkpbot` (see below).
const MEASURE_ENV: &str = "LKPBOT_TEST_MEASURE_MBOX";

/// The peak memory of `lkpbot classify` and of `lkpbot ingest` on a 200 MB
/// one-line body stays within the 64 MiB budget and the cap, far below
/// the file: the mbox reader holds a piece of a line at a time and drops
/// what is over the cap; the store keeps the cap's worth and says so.
///
/// Linux counts in a child's `ru_maxrss` the peak of the process that
/// spawned it (exec records the old address space's high-water mark), and
/// this test binary runs other tests on its threads, so it would measure
/// them. The test therefore runs itself again, alone in a new process,
/// and that small process spawns `lkpbot` and reports its figure.
#[test]
fn classify_and_ingest_of_a_200_mb_line_stay_small() {
    if let Some(path) = std::env::var_os(MEASURE_ENV) {
        return measure_classify(Path::new(&path));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.mbox");
    // A reply to a message not here yet: the store keeps its bytes.
    let head = b"Message-ID: <huge@x>\nIn-Reply-To: <not-yet@x>\nSubject: huge\n\n";
    let sizes = write_mbox(&path, &[(head, 200 << 20), (&small("after@x"), 0)]);

    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "hostile::classify_and_ingest_of_a_200_mb_line_stay_small",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(MEASURE_ENV, &path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let field = |name: &str| -> String {
        // libtest prints `test NAME ... ` on the line the test's first print ends.
        let value = stdout.lines().find_map(|l| l.split_once(name)).map(|(_, v)| v);
        value.unwrap_or_else(|| panic!("no {name} in {stdout}")).to_string()
    };
    let limit = (64 << 20) + 2 * MAX_MESSAGE_BYTES as u64;
    for command in ["classify", "ingest"] {
        let peak: u64 = field(&format!("{command}-peak-rss-bytes=")).parse().unwrap();
        println!("{command} of a 200 MB line: peak RSS {:.1} MiB (limit {} MiB)", peak as f64 / 1048576.0, limit >> 20);
        assert!(peak < limit, "{command}: peak RSS {peak} bytes, limit {limit}");
    }
    let db = dir.path().join("huge.db");
    let kept = crate::thread::block_on(async {
        let mut store = lkpbot::store::Store::open(&db).await.unwrap();
        store.raw_message(&lkpbot::model::MessageId::new("huge@x").unwrap()).await.unwrap()
    });
    assert_eq!(kept.map(|k| k.len()), Some(MAX_MESSAGE_BYTES), "the store keeps the cap's worth");
    assert!(field("ingest-output=").contains("problems                           1"), "{stdout}");

    let lines: Vec<serde_json::Value> =
        field("output=").split('\t').map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_eq!(lines[0]["message_id"], "huge@x");
    let problem = format!("message: cut at {MAX_MESSAGE_BYTES} of {} bytes", sizes[0]);
    assert!(lines[0]["problems"].as_array().unwrap().iter().any(|p| p == &problem), "{}", lines[0]["problems"]);
    assert_eq!(lines[1]["message_id"], "after@x");
}

/// Runs `lkpbot classify --json path`, then `lkpbot ingest path` into a
/// store beside it, and prints each one's peak RSS and output.
fn measure_classify(path: &Path) {
    let db = path.with_file_name("huge.db");
    let (peak, out) = measure(&["classify", "--json", path.to_str().unwrap()]);
    println!("classify-peak-rss-bytes={peak}");
    println!("output={}", out.trim_end().replace('\n', "\t"));
    let (peak, out) = measure(&["--db", db.to_str().unwrap(), "ingest", path.to_str().unwrap()]);
    println!("ingest-peak-rss-bytes={peak}");
    println!("ingest-output={}", out.trim_end().replace('\n', "\t"));
}

/// Runs `lkpbot ARGS`, reaps it with `wait4` for its own rusage, and
/// returns its peak RSS in bytes and its output.
// The child is reaped by wait4, which std's lint does not know.
#[allow(clippy::zombie_processes)]
fn measure(args: &[&str]) -> (u64, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lkpbot")).args(args).stdout(Stdio::piped()).spawn().unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own unreaped child; both pointers are valid.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "status {status}");
    // Linux reports ru_maxrss in KiB.
    (u64::try_from(usage.ru_maxrss).unwrap() * 1024, out)
}
