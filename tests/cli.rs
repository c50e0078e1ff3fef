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

/// `config/example.toml` documents every key; it must parse and validate,
/// and name every section of the contract.
#[test]
fn the_example_config_is_valid() {
    let path = util::repo().join("config/example.toml");
    let cfg = lkpbot::config::Config::load(&path).unwrap();
    assert_eq!(cfg.sources.len(), 4);
    assert!(cfg.sources.iter().any(|s| s.kind == lkpbot::config::SourceKind::PublicInbox));
    assert!(cfg.smtp.is_some());
    let text = std::fs::read_to_string(&path).unwrap();
    for section in ["[store]", "[bot]", "[[sources]]", "[smtp]", "[outbox]", "[retest]", "[digest]", "[web]"] {
        assert!(text.contains(section), "{section} is not documented");
    }
    let demo = lkpbot::config::Config::load(&util::repo().join("config/demo.toml")).unwrap();
    assert!(demo.sources[0].path.as_ref().unwrap().exists(), "the demo's mailbox is not where it says");
}

/// A config error names the file and the key, and exits 1, whatever the
/// command.
#[test]
fn config_errors_name_the_key_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    for (text, key) in [
        ("[store]\npaht = \"x.db\"\n", "paht"),
        (
            "[[sources]]\nkind = \"imap\"\nhost = \"imap.example.org\"\nuser = \"u\"\npassword = \"hunter2\"\n",
            "sources[0].password",
        ),
        (
            "[[sources]]\nkind = \"imap\"\nhost = \"imap.example.org\"\nuser = \"u\"\npassword_env = \"P\"\ntls = \"none\"\n",
            "sources[0].tls",
        ),
    ] {
        std::fs::write(dir.path().join("bad.toml"), text).unwrap();
        for args in [&["--config", "bad.toml", "cases"][..], &["--config", "bad.toml", "run", "--once"][..]] {
            let out = lkpbot(args, dir.path());
            assert_eq!(out.status.code(), Some(1), "{args:?} with {text}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("bad.toml") && err.contains(key), "{err}");
        }
    }
    // A secret the config names but the environment does not have.
    std::fs::write(
        dir.path().join("env.toml"),
        "[[sources]]\nkind = \"imap\"\nhost = \"imap.example.org\"\nuser = \"u\"\npassword_env = \"LKPBOT_NOT_SET_ANYWHERE\"\n",
    )
    .unwrap();
    let out = lkpbot(&["--config", "env.toml", "run", "--once"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("LKPBOT_NOT_SET_ANYWHERE is not set"));
}

/// The README's first command: `run --once` on the demo config follows
/// the bundled mailbox with no server, and `cases` shows what it found.
#[test]
fn the_demo_runs_without_a_server() {
    let dir = tempfile::tempdir().unwrap();
    // The demo as shipped, in a copy of its folders (the store lands
    // beside them).
    std::fs::create_dir_all(dir.path().join("config")).unwrap();
    std::fs::create_dir_all(dir.path().join("fixtures/demo")).unwrap();
    std::fs::copy(util::repo().join("config/demo.toml"), dir.path().join("config/demo.toml")).unwrap();
    std::fs::copy(util::fixtures().join("demo/lkp-sample.mbox"), dir.path().join("fixtures/demo/lkp-sample.mbox"))
        .unwrap();
    let out = lkpbot(&["--config", "config/demo.toml", "run", "--once"], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.path().join("lkpbot.db").exists());
    let out = lkpbot(&["--config", "config/demo.toml", "cases", "--state", "all"], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.lines().count() > 2, "{table}");
}

/// `[bot] archive_url` is where every link points: `cases --json`, `case`
/// and `case --json` (its retests too), as the pages and the digest do.
#[test]
fn links_follow_the_configured_archive() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("lkpbot.toml");
    std::fs::write(&cfg, "[bot]\narchive_url = \"https://archive.example.net/m/\"\n").unwrap();
    let cfg = cfg.display().to_string();
    let out = lkpbot(&["--config", &cfg, "ingest", &fixture("threads/retest-fixup.mbox")], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = lkpbot(&["--config", &cfg, "cases", "--json", "--state", "all"], dir.path());
    let cases: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let case = &cases[0];
    let link = case["link"].as_str().unwrap();
    assert!(link.starts_with("https://archive.example.net/m/"), "{link}");
    let retests = case["retests"].as_array().unwrap();
    assert!(!retests.is_empty());
    for r in retests {
        assert!(r["link"].as_str().unwrap().starts_with("https://archive.example.net/m/"), "{r}");
    }
    let id = case["id"].to_string();
    let out = lkpbot(&["--config", &cfg, "case", &id], dir.path());
    let timeline = String::from_utf8_lossy(&out.stdout);
    assert!(timeline.contains("https://archive.example.net/m/"), "{timeline}");
    assert!(!timeline.contains("lore.kernel.org"), "{timeline}");
    let out = lkpbot(&["--config", &cfg, "case", &id, "--json"], dir.path());
    let one: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(one["link"], case["link"]);
}

/// `classify` knows who is who from the config, as `ingest` does: the
/// bot's own mail is never a command, a configured LKP team member's mail
/// is the team's.
#[test]
fn classify_reads_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let mail = dir.path().join("own.eml");
    std::fs::write(
        &mail,
        "From: LKP Bot <bot@example.net>\nTo: list@example.org\nSubject: Re: x\nMessage-ID: <own@x>\n\
         In-Reply-To: <r@x>\nDate: Mon, 1 Jun 2026 10:00:00 +0000\n\n#lkp status\n",
    )
    .unwrap();
    let cfg = dir.path().join("lkpbot.toml");
    std::fs::write(&cfg, "[bot]\naddress = \"bot@example.net\"\n").unwrap();
    let mail = mail.display().to_string();
    let plain = json_lines(&lkpbot(&["classify", "--json", &mail], dir.path()));
    assert_eq!(plain[0]["kind"], "command");
    let out = lkpbot(&["--config", &cfg.display().to_string(), "classify", "--json", &mail], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let configured = json_lines(&out);
    assert_eq!(configured[0]["kind"], "discussion", "the bot's own mail");
}

/// A PostgreSQL store no server answers for: every store command says
/// which server it could not reach, and exits 2 (a run-time failure).
#[test]
fn an_unreachable_postgres_store_is_exit_2_naming_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let port = crate::util::dovecot::free_port();
    std::fs::write(
        dir.path().join("c.toml"),
        format!("[store]\nurl = \"postgres://lkpbot@127.0.0.1:{port}/lkpbot\"\npassword_env = \"LKPBOT_TEST_NO_PW\"\n"),
    )
    .unwrap();
    for args in [&["cases", "--json"][..], &["ingest", "/dev/null"], &["outbox"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_lkpbot"))
            .args(["--config", "c.toml"])
            .args(args)
            .env("LKPBOT_TEST_NO_PW", "secret")
            .current_dir(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(&format!("127.0.0.1:{port}")), "{args:?}: {err}");
        assert!(!err.contains("secret"), "{args:?}: the password shown: {err}");
    }
}

/// `store copy` round-trips a store through PostgreSQL unchanged: the
/// lifecycle corpus (or, without the corpus outside CI, the thread
/// fixtures) imported into a SQLite file, copied into an empty
/// PostgreSQL database and from there into a new SQLite file, shows the
/// same `cases --json --state all` and `outbox --json` all three times;
/// a target that holds anything is refused (exit 1) and left as it was.
#[test]
fn store_copy_round_trips_through_postgres_unchanged() {
    let Some(server) = crate::util::postgres::shared() else { return };
    let url = server.create_db();
    let dir = tempfile::tempdir().unwrap();
    let mbox = match std::env::var_os("CI").is_some() || crate::util::shared().is_some() {
        true => crate::util::shared_file("corpus/lkp-lifecycle.mbox"),
        false => None,
    };
    let inputs: Vec<String> = match mbox {
        Some(m) => vec![m.display().to_string()],
        None => crate::util::files_with_suffix(&crate::util::fixtures().join("threads"), ".mbox")
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
    };
    let cfg = dir.path().join("pg.toml");
    std::fs::write(&cfg, format!("[store]\nurl = \"{url}\"\n")).unwrap();
    let run = |args: &[&str]| {
        let out = lkpbot(args, dir.path());
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let mut ingest = vec!["--db", "a.db", "ingest"];
    ingest.extend(inputs.iter().map(String::as_str));
    run(&ingest);
    let views = |store: &[&str]| {
        ["cases --json --state all", "outbox --json"].map(|c| {
            let mut args = store.to_vec();
            args.extend(c.split(' '));
            run(&args)
        })
    };
    let want = views(&["--db", "a.db"]);
    assert!(want[0].len() > 1000, "{}", want[0]);
    let copied = run(&["--db", "a.db", "store", "copy", "--to", &url]);
    assert!(copied.lines().any(|l| l.starts_with("cases") && !l.ends_with(" 0")), "{copied}");
    assert_eq!(views(&["--config", "pg.toml"]), want, "SQLite -> PostgreSQL changed the store");
    // Case pages (which read part of a case) are the same on both.
    let all: serde_json::Value = serde_json::from_str(&want[0]).unwrap();
    let ids: Vec<i64> = all.as_array().unwrap().iter().map(|c| c["id"].as_i64().unwrap()).collect();
    let pages = |at: lkpbot::store::Location| {
        crate::thread::block_on(async {
            use tower::ServiceExt;
            let reader = lkpbot::store::Reader::connect(&at).await.unwrap();
            let app = lkpbot::web::router(lkpbot::web::App::new(reader.clone(), || crate::thread::NOW, "https://x/"));
            let mut out = Vec::new();
            for id in &ids {
                let req = axum::http::Request::get(format!("/cases/{id}")).body(axum::body::Body::empty()).unwrap();
                let res = app.clone().oneshot(req).await.unwrap();
                assert_eq!(res.status(), axum::http::StatusCode::OK, "case {id}");
                out.push(axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap());
            }
            reader.close().await;
            out
        })
    };
    let sqlite = pages(lkpbot::store::Location::Sqlite(dir.path().join("a.db")));
    assert!(!sqlite.is_empty());
    assert_eq!(pages(lkpbot::store::Location::postgres(&url, None).unwrap()), sqlite, "case pages differ");
    run(&["--config", "pg.toml", "store", "copy", "--to", "b.db"]);
    assert_eq!(views(&["--db", "b.db"]), want, "PostgreSQL -> SQLite changed the store");
    // Into a store that holds something: refused, nothing written.
    let again = lkpbot(&["--db", "a.db", "store", "copy", "--to", &url], dir.path());
    assert_eq!(again.status.code(), Some(1), "{}", String::from_utf8_lossy(&again.stderr));
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"), "{}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(views(&["--config", "pg.toml"]), want);
}
