//! Several processes, one store: a daemon fetching while a user imports
//! or lists. Opening a store that does not exist yet from two processes
//! at once works for both; imports running side by side end as one import
//! would; a store handle never acts on what it cached before another
//! handle committed.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use lkpbot::case::CaseFilter;
use lkpbot::store::Store;

use crate::order::{canonical, first_difference, import_parts};
use crate::thread::{block_on, engine, env, fixture_messages};
use crate::util;

fn spawn(args: &[&str], cwd: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_lkpbot"))
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Two `ingest`s on a path with no store yet, started together, both
/// succeed (tried a few times: the race is about who creates the file).
#[test]
fn two_ingests_create_one_store() {
    let fixture = util::fixtures().join("threads/reply-chain.mbox");
    let fixture = fixture.to_str().unwrap();
    for round in 0..6 {
        let dir = tempfile::tempdir().unwrap();
        let children: Vec<Child> = (0..2).map(|_| spawn(&["--db", "new.db", "ingest", fixture], dir.path())).collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "round {round}: {}", String::from_utf8_lossy(&out.stderr));
        }
        let cases = block_on(async {
            let mut s = Store::open(&dir.path().join("new.db")).await.unwrap();
            s.cases(CaseFilter::All, true).await.unwrap()
        });
        assert_eq!(cases.len(), 1, "round {round}");
        assert_eq!(cases[0].messages.len(), 4, "round {round}");
    }
}

/// Two listings of a store that is not there both say so (exit 1), and
/// neither creates one.
#[test]
fn two_listings_of_a_missing_store_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let children: Vec<Child> = (0..2).map(|_| spawn(&["--db", "none.db", "cases"], dir.path())).collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains("no store at none.db"));
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "listing created files");
}

/// The corpus split in two (odd and even messages), imported by two
/// processes at once into one store, while a third lists it: both imports
/// succeed, every listing succeeds, and the cases are those of one import
/// of the whole archive.
#[test]
fn imports_side_by_side_end_as_one_import() {
    let Some(path) = util::shared_file("corpus/lkp-threads.mbox") else { return };
    let msgs: Vec<Vec<u8>> = lkpbot::source::open(&path).unwrap().map(|m| m.unwrap().bytes).collect();
    let dir = tempfile::tempdir().unwrap();
    let mut halves = [Vec::new(), Vec::new()];
    for (i, m) in msgs.iter().enumerate() {
        halves[i % 2].extend_from_slice(b"From lkpbot@test Thu Jan  1 00:00:00 1970\n");
        for line in m.split_inclusive(|&b| b == b'\n') {
            let gts = line.iter().take_while(|&&b| b == b'>').count();
            if line[gts..].starts_with(b"From ") {
                halves[i % 2].push(b'>');
            }
            halves[i % 2].extend_from_slice(line);
        }
        halves[i % 2].extend_from_slice(b"\n\n");
    }
    for (i, h) in halves.iter().enumerate() {
        std::fs::write(dir.path().join(format!("half{i}.mbox")), h).unwrap();
    }
    let importers: Vec<Child> = (0..2)
        .map(|i| spawn(&["--db", "both.db", "ingest", "--stale-days", "0", &format!("half{i}.mbox")], dir.path()))
        .collect();
    let mut listings = 0;
    while !dir.path().join("both.db").exists() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    for _ in 0..5 {
        let out = spawn(&["--db", "both.db", "cases", "--state", "all"], dir.path()).wait_with_output().unwrap();
        assert!(out.status.success(), "listing while importing: {}", String::from_utf8_lossy(&out.stderr));
        listings += 1;
    }
    for c in importers {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert_eq!(listings, 5);
    let together = block_on(async {
        let mut s = Store::open(&dir.path().join("both.db")).await.unwrap();
        canonical(&s.cases(CaseFilter::All, true).await.unwrap())
    });
    let one_dir = tempfile::tempdir().unwrap();
    let alone = canonical(&block_on(import_parts(one_dir.path(), std::slice::from_ref(&msgs), 1024)));
    if let Some(d) = first_difference(&alone, &together) {
        panic!("{d}");
    }
}

/// ```text
/// R  202603051000.aaaa0001-lkp@intel.com   the report
/// <- A  aaaa0002@example.org              stored through handle B first: waits for R
///    <- Y  aaaa0003@example.com           In-Reply-To: A only, stored through B last
/// ```
/// Handle B stores A (waiting for R); handle A stores R, and A joins R's
/// case; B then stores Y. What B learnt about A before is stale, and Y
/// must still join the case.
#[test]
fn a_handle_does_not_act_on_what_another_changed() {
    let msgs = fixture_messages("reply-chain");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lkpbot.db");
    let cases = block_on(async {
        let mut on_a = engine(Store::open(&path).await.unwrap());
        let mut on_b = engine(Store::open(&path).await.unwrap());
        on_b.push(env(&msgs[1])).await.unwrap();
        on_b.flush().await.unwrap();
        on_a.push(env(&msgs[0])).await.unwrap();
        let stats = on_a.finish().await.unwrap();
        assert_eq!((stats.cases_opened, stats.attached), (1, 1));
        on_b.push(env(&msgs[2])).await.unwrap();
        let stats = on_b.finish().await.unwrap();
        assert_eq!(stats.attached, 1, "Y did not join the case");
        on_a.store().cases(CaseFilter::All, true).await.unwrap()
    });
    let [case] = cases.as_slice() else { panic!("one case expected, got {}", cases.len()) };
    let ids: Vec<&str> = case.messages.iter().map(|m| m.message_id.as_str()).collect();
    assert!(ids.contains(&"aaaa0003@example.com"), "{ids:?}");
}
