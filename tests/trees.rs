//! `[[trees]]`: git repositories built here with the git CLI, shaped like
//! a kernel tree (kernel-style commits with their trailers, release
//! candidate tags, a revert, a reported patch landing), followed by
//! `run --once` over a store that holds the mail of
//! `fixtures/trees/report-and-fix.mbox`:
//!
//! ```text
//! A  202605111200.aaaa0001  xfs report; its fix patch closes it   <- fix commit (Closes: A), v6.9-rc3
//! B  202605130930.bbbb0001  mm report on b2c3d4e5f6               <- Revert "<B's culprit>", v6.9-rc3
//! C  202605140200.cccc0001  build report on [PATCH v2 2/3] block  <- the patch lands by its author, no tag yet
//! D  202605140800.dddd0001  mm report, a reply in its thread      <- a commit whose Link: is that reply
//! ```
//!
//! and then force-pushed, read before its mail, broken.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::util;

const A: &str = "202605111200.aaaa0001-lkp@intel.com";
const B: &str = "202605130930.bbbb0001-lkp@intel.com";
const C: &str = "202605140200.cccc0001-lkp@intel.com";
const D: &str = "202605140800.dddd0001-lkp@intel.com";

fn git(repo: &Path, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> String {
    let mut c = Command::new("git");
    c.arg("-C").arg(repo).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    c.env("GIT_CONFIG_NOSYSTEM", "1").env("HOME", repo);
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().expect("git");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Commits `message` (no files: commit messages are all a tree pass
/// reads) by `author` at `date`, committed by the maintainer an hour
/// later; returns its id.
fn commit(repo: &Path, message: &str, author: &str, date: &str) -> String {
    let (name, email) = author.split_once(" <").unwrap();
    let email = email.trim_end_matches('>');
    let env = [
        ("GIT_AUTHOR_NAME", name),
        ("GIT_AUTHOR_EMAIL", email),
        ("GIT_AUTHOR_DATE", date),
        ("GIT_COMMITTER_NAME", "Linus Torvalds"),
        ("GIT_COMMITTER_EMAIL", "torvalds@linux-foundation.org"),
        ("GIT_COMMITTER_DATE", date),
    ];
    git(repo, &["commit", "-q", "--allow-empty", "-F", "-"], message, &env);
    git(repo, &["rev-parse", "HEAD"], "", &[])
}

fn tag(repo: &Path, name: &str, at: &str) {
    let env = [("GIT_COMMITTER_NAME", "Linus Torvalds"), ("GIT_COMMITTER_EMAIL", "torvalds@linux-foundation.org")];
    git(repo, &["tag", "-f", "-a", "-m", name, name, at], "", &env);
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(util::fixtures().join("trees").join(name)).unwrap()
}

/// The commits of the tree after the culprits, as ids.
struct History {
    culprits: String,
    fix: String,
    link: String,
    revert: String,
    landed: String,
}

const DEV: &str = "Dev Eloper <dev@example.org>";

/// A kernel-like tree: culprits (v6.9-rc2), then the fix, a commit whose
/// Link: names a reply, the revert (v6.9-rc3), the landed patch.
fn build_tree(repo: &Path) -> History {
    std::fs::create_dir_all(repo).unwrap();
    git(repo, &["init", "-q", "-b", "master"], "", &[]);
    commit(repo, "Linux 6.9-rc1\n", "Linus Torvalds <torvalds@linux-foundation.org>", "2026-04-26T15:00:00+00:00");
    tag(repo, "v6.9-rc1", "HEAD");
    let msg = "xfs: look up the inode log item lazily\n\nSave a lookup on every transaction.\n\n\
               Signed-off-by: Dee Maintainer <dee@example.org>\n";
    commit(repo, msg, "Dee Maintainer <dee@example.org>", "2026-04-28T10:00:00+00:00");
    let msg = "mm: shrink the slab cache under memory pressure faster\n\n\
               Signed-off-by: Mo Mm <mo@example.org>\n";
    commit(repo, msg, "Mo Mm <mo@example.org>", "2026-04-29T10:00:00+00:00");
    let culprits =
        commit(repo, "Linux 6.9-rc2\n", "Linus Torvalds <torvalds@linux-foundation.org>", "2026-05-03T15:00:00+00:00");
    tag(repo, "v6.9-rc2", "HEAD");
    let h = rest_of_tree(repo, "2026-05");
    History { culprits, ..h }
}

/// The commits after v6.9-rc2, dated in `month` (so a second copy after
/// a force-push has other ids).
fn rest_of_tree(repo: &Path, month: &str) -> History {
    let fix_msg = "xfs: check the inode log item before use\n\n\
        The lazy lookup can return NULL when the item was never logged.\n\n\
        Fixes: a1b2c3d4e5f6 (\"xfs: look up the inode log item lazily\")\n\
        Reported-by: kernel test robot <oliver.sang@intel.com>\n\
        Closes: https://lore.kernel.org/oe-lkp/202605111200.aaaa0001-lkp@intel.com\n\
        Signed-off-by: Dee Maintainer <dee@example.org>\n\
        Link: https://patch.msgid.link/20260512020000.aaaa0002@example.org\n\
        Signed-off-by: Chandan Babu <chandanbabu@kernel.org>\n";
    let fix = commit(repo, fix_msg, "Dee Maintainer <dee@example.org>", &format!("{month}-15T10:00:00+00:00"));
    // Its Link: names a reply in D's thread, not D's report.
    let link = fixture("link-to-discussion.txt").replace("casper.infradead.org", "casper.example.org");
    let link = commit(repo, &link, DEV, &format!("{month}-16T10:00:00+00:00"));
    let revert_msg = "Revert \"mm: shrink the slab cache under memory pressure faster\"\n\n\
        This reverts commit b2c3d4e5f60718293a4b5c6d7e8f901122334455.\n\n\
        It warns on every reclaim pass of the robot's machines.\n\n\
        Reported-by: kernel test robot <oliver.sang@intel.com>\n\
        Signed-off-by: Mo Mm <mo@example.org>\n";
    let revert = commit(repo, revert_msg, "Mo Mm <mo@example.org>", &format!("{month}-17T10:00:00+00:00"));
    commit(
        repo,
        "Linux 6.9-rc3\n",
        "Linus Torvalds <torvalds@linux-foundation.org>",
        &format!("{month}-17T15:00:00+00:00"),
    );
    tag(repo, "v6.9-rc3", "HEAD");
    let landed = commit(repo, &fixture("reported-patch-lands.txt"), DEV, &format!("{month}-19T10:00:00+00:00"));
    History { culprits: String::new(), fix, link, revert, landed }
}

fn lkpbot(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lkpbot")).current_dir(dir).args(args).env("RUST_LOG", "info").output().unwrap()
}

fn ok(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "status {:?}: {err}", out.status);
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn config(dir: &Path, extra: &str) -> PathBuf {
    let cfg = dir.join("lkpbot.toml");
    let text = format!(
        "[store]\npath = \"store.db\"\n[auth]\ndkim = \"off\"\n\
         [[trees]]\nname = \"mainline\"\npath = \"linux\"\nbranch = \"master\"\nresolves = true\n{extra}"
    );
    std::fs::write(&cfg, text).unwrap();
    cfg
}

fn ingest(dir: &Path) {
    let mbox = util::fixtures().join("trees/report-and-fix.mbox");
    ok(&lkpbot(dir, &["--db", "store.db", "ingest", mbox.to_str().unwrap()]));
}

fn run_once(dir: &Path) -> Output {
    lkpbot(dir, &["--config", "lkpbot.toml", "run", "--once"])
}

/// Every case as `cases --json --state all` prints it.
fn cases(dir: &Path) -> Vec<Value> {
    let out = ok(&lkpbot(dir, &["--db", "store.db", "cases", "--json", "--state", "all"]));
    serde_json::from_str::<Value>(&out).unwrap().as_array().unwrap().clone()
}

fn case<'a>(all: &'a [Value], report: &str) -> &'a Value {
    all.iter().find(|c| c["report_message_id"] == report).unwrap_or_else(|| panic!("no case for {report}: {all:?}"))
}

/// A case's events that a tree caused: (kind, commit, tag).
fn tree_events(c: &Value) -> Vec<(String, String, Option<String>)> {
    let mut v: Vec<_> = c["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| !e["tree"].is_null() && e["message_id"].is_null())
        .map(|e| {
            assert_eq!(e["tree"], "mainline", "{e}");
            (
                e["kind"].as_str().unwrap().to_string(),
                e["tree_commit"].as_str().unwrap().to_string(),
                e["tag"].as_str().map(str::to_string),
            )
        })
        .collect();
    v.sort();
    v
}

fn ev(kind: &str, commit: &str, tag: Option<&str>) -> (String, String, Option<String>) {
    (kind.to_string(), commit.to_string(), tag.map(str::to_string))
}

/// Checks what the tree `h` did to the corpus of the mbox.
fn check_cases(dir: &Path, h: &History) {
    let all = cases(dir);
    let a = case(&all, A);
    assert_eq!(a["state"], "resolved", "{a}");
    let rc3 = Some("v6.9-rc3");
    assert_eq!(tree_events(a), [ev("fix-merged", &h.fix, rc3), ev("resolved", &h.fix, rc3)]);
    let b = case(&all, B);
    assert_eq!(b["state"], "reverted", "{b}");
    assert_eq!(tree_events(b), [ev("reverted", &h.revert, rc3)]);
    let c = case(&all, C);
    assert_eq!(c["state"], "resolved", "{c}");
    assert_eq!(tree_events(c), [ev("fix-merged", &h.landed, None), ev("resolved", &h.landed, None)]);
    // A Link: to a reply in D's thread is not D's report: nothing moves.
    let d = case(&all, D);
    assert!(tree_events(d).is_empty(), "{d}");
    assert_ne!(d["state"], "resolved");
    assert!(all.iter().all(|c| tree_events(c).iter().all(|(_, commit, _)| *commit != h.link)));
}

/// Fixes, reverts and a landed patch move their cases, with the first
/// tag that contains each; a second pass records nothing twice; a
/// force-push forgets what is gone and records the new commits once.
#[test]
fn a_tree_moves_cases_and_survives_a_force_push() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("linux");
    let h = build_tree(&repo);
    ingest(dir.path());
    config(dir.path(), "");
    let out = run_once(dir.path());
    ok(&out);
    check_cases(dir.path(), &h);
    // The case's timeline names the tree, the commit and the tag.
    let id = case(&cases(dir.path()), A)["id"].to_string();
    let text = ok(&lkpbot(dir.path(), &["--db", "store.db", "case", &id]));
    assert!(text.contains(&format!("mainline, commit {}, tag v6.9-rc3", &h.fix[..12])), "{text}");

    // Nothing new: nothing recorded again.
    ok(&run_once(dir.path()));
    check_cases(dir.path(), &h);

    // Force-push: back to v6.9-rc2, the same patches applied again (new
    // ids), rc3 tagged again.
    git(&repo, &["reset", "-q", "--hard", &h.culprits], "", &[]);
    let h2 = rest_of_tree(&repo, "2026-06");
    assert_ne!(h2.fix, h.fix);
    let out = run_once(dir.path());
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("rewritten"), "{}", String::from_utf8_lossy(&out.stderr));
    check_cases(dir.path(), &History { culprits: h.culprits.clone(), ..h2 });
}

/// A tree read before the mail that names its commits: once the mail is
/// in, the next pass looks back for it, and the cases end as they would
/// have had the mail come first.
#[test]
fn a_tree_read_before_its_mail_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    let h = build_tree(&dir.path().join("linux"));
    config(dir.path(), "");
    ok(&run_once(dir.path()));
    ingest(dir.path());
    ok(&run_once(dir.path()));
    check_cases(dir.path(), &h);
}

/// A path that is not a repository and a branch that is gone are errors
/// naming the tree (exit 2); the mailbox source is read all the same.
#[test]
fn broken_trees_are_named_and_mail_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    build_tree(&dir.path().join("linux"));
    std::fs::create_dir_all(dir.path().join("not-a-repo")).unwrap();
    std::fs::copy(util::fixtures().join("trees/report-and-fix.mbox"), dir.path().join("list.mbox")).unwrap();
    let extra = "[[trees]]\nname = \"broken\"\npath = \"not-a-repo\"\n\
                 [[trees]]\nname = \"gone\"\npath = \"linux\"\nbranch = \"for-next\"\n\
                 [[sources]]\nkind = \"mbox\"\npath = \"list.mbox\"\n";
    config(dir.path(), extra);
    let out = run_once(dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("tree broken:") && err.contains("is not a git repository"), "{err}");
    assert!(err.contains("tree gone:") && err.contains("has no branch for-next"), "{err}");
    // The mail was read, and the good tree moved its cases.
    let all = cases(dir.path());
    assert_eq!(all.len(), 4, "{all:?}");
    assert_eq!(case(&all, A)["state"], "resolved");
}
