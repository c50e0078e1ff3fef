//! The `lkpbot` binary as a user runs it: arguments, output, exit codes.

use std::path::Path;
use std::process::{Command, Output};

use crate::util;

fn lkpbot(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lkpbot")).args(args).current_dir(cwd).output().expect("run lkpbot")
}

fn fixture(rel: &str) -> String {
    util::fixtures().join(rel).display().to_string()
}

fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

#[test]
fn classify_json_prints_one_object_per_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = lkpbot(
        &["classify", "--json", &fixture("classify/perf/2026-linus-stress-ng-switch-67.7pct-regression.eml")],
        dir.path(),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json_lines(&out);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["kind"], "perf-regression");
    assert_eq!(v[0]["headline"]["change_pct"], -67.7);
}

#[test]
fn classify_reads_mbox_and_maildir_and_keeps_going_after_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let a = std::fs::read(fixture("classify/perf/2026-linus-stress-ng-switch-67.7pct-regression.eml")).unwrap();
    let b = std::fs::read(fixture("classify/command/please-retest.eml")).unwrap();
    let mut mbox = Vec::new();
    for m in [&a[..], b"\x00\xff\xfe garbage: \n\n\x01\x02", &b[..]] {
        mbox.extend_from_slice(b"From x@y Mon Jan  1 00:00:00 2024\n");
        mbox.extend_from_slice(m);
        mbox.extend_from_slice(b"\n\n");
    }
    std::fs::write(dir.path().join("a.mbox"), &mbox).unwrap();
    let md = dir.path().join("md");
    for sub in ["cur", "new", "tmp"] {
        std::fs::create_dir_all(md.join(sub)).unwrap();
    }
    std::fs::write(md.join("new/1.host"), &b).unwrap();

    let out = lkpbot(&["classify", "--json", "a.mbox", "md"], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let kinds: Vec<String> = json_lines(&out).iter().map(|v| v["kind"].as_str().unwrap().to_string()).collect();
    assert_eq!(kinds, ["perf-regression", "unrelated", "command", "command"]);

    // Without --json: one readable line per message.
    let out = lkpbot(&["classify", "a.mbox"], dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 3);
    assert!(text.lines().next().unwrap().starts_with("perf-regression"));
    assert!(text.contains("stress-ng.switch.ops_per_sec -67.7%"), "{text}");
}

#[test]
fn unreadable_path_is_named_and_exits_1_after_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let ok = fixture("classify/command/please-retest.eml");
    let out = lkpbot(&["classify", "--json", "no/such/file.mbox", &ok], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no/such/file.mbox"), "{err}");
    assert_eq!(json_lines(&out).len(), 1, "the readable path is still classified");
}

/// DESIGN.md: exit status 1 for usage errors, whatever clap's own default
/// (2); the message is printed once, on stderr.
#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    for args in [&["frobnicate"][..], &["classify"], &["classify", "--frob", "x.eml"], &["case", "not-a-number"], &[]] {
        let out = lkpbot(args, dir.path());
        assert_eq!(out.status.code(), Some(1), "lkpbot {args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("Usage:") || err.starts_with("error:"), "lkpbot {args:?}: {err}");
        assert!(err.matches("error:").count() <= 1 && !err.contains("lkpbot: "), "printed once: {err}");
        assert!(out.stdout.is_empty(), "lkpbot {args:?}");
    }
    for args in [&["--help"][..], &["classify", "--help"], &["--version"]] {
        let out = lkpbot(args, dir.path());
        assert_eq!(out.status.code(), Some(0), "lkpbot {args:?}");
        assert!(!out.stdout.is_empty(), "lkpbot {args:?} prints on stdout");
    }
}

/// A store that cannot be opened is one line on stderr: what could not be
/// done and the operating system's reason, each said once.
#[test]
fn store_errors_say_their_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = fixture("threads/reply-chain.mbox");
    let out = lkpbot(&["--db", "no/such/dir/x.db", "ingest", &fixture], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cannot open the store at no/such/dir/x.db"), "{err}");
    assert_eq!(err.matches("os error 2").count(), 1, "{err}");

    std::fs::write(dir.path().join("junk.db"), vec![b'x'; 4096]).unwrap();
    for args in [&["--db", "junk.db", "cases"][..], &["--db", "junk.db", "ingest", &fixture][..]] {
        let out = lkpbot(args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(err.matches("file is not a database").count(), 1, "{err}");
    }
}
