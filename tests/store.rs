//! The store on a real SQLite file in a temp dir: schema migrations, WAL,
//! uniqueness by Message-ID, which raw bytes are kept, and the table
//! checksums the idempotency tests rely on.

use lkpbot::model::MessageId;
use lkpbot::store::{Location, Store, StoreError, rows::MessageRow, schema_version};
use sqlx::Connection;

use crate::thread::{block_on, fixture_messages, ingest_into};

fn plain(id: &str, reply_to: Option<&str>) -> Vec<u8> {
    let refs = reply_to.map_or(String::new(), |p| format!("In-Reply-To: <{p}>\nReferences: <{p}>\n"));
    format!(
        "From: Someone <someone@example.org>\nTo: list@vger.kernel.org\nSubject: {}\n\
         Date: Mon, 1 Jun 2026 10:00:00 +0000\nMessage-ID: <{id}>\n{refs}\nJust list traffic.\n",
        if reply_to.is_some() { "Re: [PATCH] net: tidy" } else { "[PATCH] net: tidy" }
    )
    .into_bytes()
}

/// Where the store tests run: a SQLite file in `dir`, and a fresh
/// PostgreSQL database when PostgreSQL is here.
fn backends(dir: &std::path::Path) -> Vec<Location> {
    let mut out = vec![Location::Sqlite(dir.join("lkpbot.db"))];
    if let Some(url) = crate::util::postgres::fresh_db() {
        out.push(Location::postgres(&url, None).unwrap());
    }
    out
}

fn row(id: &str) -> MessageRow {
    MessageRow {
        message_id: id.into(),
        kind: "unrelated",
        subject: "s".into(),
        from_addr: None,
        date: Some(0),
        fetched_at: 0,
        problems: 0,
        settled: false,
    }
}

#[test]
fn opens_a_file_in_wal_mode_and_migrates_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lkpbot.db");
    block_on(async {
        let mut store = Store::open(&path).await.unwrap();
        let mut tx = store.begin().await.unwrap();
        assert_eq!(tx.insert_messages(vec![row("a@x"), row("b@x")]).await.unwrap(), 2);
        tx.commit().await.unwrap();
        assert!(dir.path().join("lkpbot.db-wal").exists(), "no WAL file beside the store");
        drop(store);
        // Reopening applies nothing again and keeps the data.
        let mut store = Store::open(&path).await.unwrap();
        let stats = store.table_stats().await.unwrap();
        assert_eq!(stats.iter().find(|s| s.table == "messages").unwrap().rows, 2);
    });
}

#[test]
fn a_store_from_a_newer_lkpbot_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lkpbot.db");
    block_on(async {
        drop(Store::open(&path).await.unwrap());
        let url = format!("sqlite://{}", path.display());
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES ($1, 'future', TRUE, X'00', 0)",
        )
        .bind(schema_version() + 1)
        .execute(&mut conn)
        .await
        .unwrap();
        conn.close().await.unwrap();
        match Store::open(&path).await {
            Err(StoreError::TooNew { found, known, .. }) => {
                assert_eq!((found, known), (schema_version() + 1, schema_version()))
            }
            Err(e) => panic!("unexpected error: {e}"),
            Ok(_) => panic!("a newer schema was accepted"),
        }
    });
}

/// Migrations 0014 and 0013 undone on a SQLite store: events indexed by
/// Message-ID, kept bytes and dependencies keyed by it again, messages
/// not numbered.
const UNDO_SEQ: &[&str] = &[
    "CREATE INDEX events_message ON events (message_id)",
    "CREATE TABLE raw_by_id (message_id TEXT PRIMARY KEY REFERENCES messages (message_id), bytes BLOB NOT NULL)",
    "INSERT INTO raw_by_id SELECT m.message_id, r.bytes FROM raw_messages r JOIN messages m ON m.seq = r.seq",
    "DROP TABLE raw_messages",
    "ALTER TABLE raw_by_id RENAME TO raw_messages",
    "CREATE TABLE deps_by_id (dep_key TEXT NOT NULL, message_id TEXT NOT NULL REFERENCES messages (message_id), \
     PRIMARY KEY (dep_key, message_id))",
    "INSERT INTO deps_by_id SELECT d.dep_key, m.message_id FROM thread_deps d JOIN messages m ON m.seq = d.seq",
    "DROP TABLE thread_deps",
    "ALTER TABLE deps_by_id RENAME TO thread_deps",
    "CREATE INDEX thread_deps_message ON thread_deps (message_id)",
    "DROP INDEX messages_seq",
    "ALTER TABLE messages DROP COLUMN seq",
];

/// A store made before cases kept their report's %stddev gets them from
/// its reports when it is opened, so its perf cases say how clear they
/// are without being imported again.
#[test]
fn cases_opened_before_the_noise_columns_get_them_from_their_reports() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lkpbot.db");
    block_on(async {
        let run = ingest_into(dir.path(), &fixture_messages("same-patch-two-shas"), false).await;
        let noise = |cases: &[lkpbot::case::CaseRecord]| -> Vec<(Option<f64>, Option<f64>)> {
            cases.iter().map(|c| (c.view.facts.base_stddev_pct, c.view.facts.new_stddev_pct)).collect()
        };
        let fresh = noise(&run.cases);
        assert!(fresh.contains(&(None, Some(2.0))), "the improvement prints ± 2% on its new side: {fresh:?}");
        // As the store was before migration 0007 (and those after it).
        let url = format!("sqlite://{}", path.display());
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        for sql in UNDO_SEQ.iter().chain(
            [
                "DROP INDEX cases_replay_due",
                "ALTER TABLE cases DROP COLUMN replay_due",
                "DROP TABLE store_tasks",
                "DROP INDEX events_tree",
                "DROP INDEX cases_commit_subject",
                "DROP TABLE message_keys",
                "ALTER TABLE events DROP COLUMN tree",
                "ALTER TABLE events DROP COLUMN by_addr",
                "ALTER TABLE events DROP COLUMN tag",
                "ALTER TABLE events DROP COLUMN tree_commit",
                "ALTER TABLE messages DROP COLUMN withheld",
                "ALTER TABLE cases DROP COLUMN base_stddev_pct",
                "ALTER TABLE cases DROP COLUMN new_stddev_pct",
                "DELETE FROM _sqlx_migrations WHERE version >= 7",
            ]
            .iter(),
        ) {
            sqlx::query(*sql).execute(&mut conn).await.unwrap();
        }
        conn.close().await.unwrap();
        let mut store = Store::open(&path).await.unwrap();
        let again = store.cases(lkpbot::case::CaseFilter::All, false).await.unwrap();
        assert_eq!(noise(&again), fresh);
    });
}

#[test]
fn messages_are_unique_by_message_id() {
    let dir = tempfile::tempdir().unwrap();
    for at in backends(dir.path()) {
        block_on(messages_are_unique_at(&at));
    }
}

async fn messages_are_unique_at(at: &Location) {
    {
        let mut store = Store::connect(at).await.unwrap();
        let mut tx = store.begin().await.unwrap();
        assert_eq!(tx.insert_messages(vec![row("a@x")]).await.unwrap(), 1);
        assert_eq!(tx.insert_messages(vec![row("a@x"), row("b@x")]).await.unwrap(), 1);
        let known = tx.lookup(&["a@x", "b@x", "c@x"]).await.unwrap();
        assert_eq!(known.len(), 2);
        assert!(known.values().all(|k| !k.settled));
        tx.commit().await.unwrap();
    }
}

/// Raw bytes are kept for case messages and for replies waiting for an
/// unknown parent; when the parent turns out to be list traffic, both
/// settle and the reply's bytes go.
#[test]
fn raw_bytes_only_for_case_messages_and_waiting_replies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lkpbot.db");
    let mut msgs = fixture_messages("reply-chain");
    msgs.push(plain("late-reply@example.org", Some("root@example.org")));
    block_on(async {
        let run = ingest_into(dir.path(), &msgs, true).await;
        assert_eq!(run.stats.new, 5);
        let mut store = Store::open(&path).await.unwrap();
        for m in &run.cases[0].messages {
            assert!(store.raw_message(&m.message_id).await.unwrap().is_some(), "{} has no raw bytes", m.message_id);
        }
        let waiting = MessageId::new("late-reply@example.org").unwrap();
        assert!(store.raw_message(&waiting).await.unwrap().is_some(), "a waiting reply lost its bytes");
        drop(store);
        // The parent arrives and is list traffic: nothing is waiting any more.
        ingest_into(dir.path(), &[plain("root@example.org", None)], true).await;
        let mut store = Store::open(&path).await.unwrap();
        assert_eq!(store.raw_message(&waiting).await.unwrap(), None);
        assert_eq!(store.raw_message(&MessageId::new("root@example.org").unwrap()).await.unwrap(), None);
        let stats = store.table_stats().await.unwrap();
        let rows = |t: &str| stats.iter().find(|s| s.table == t).unwrap().rows;
        assert_eq!(rows("raw_messages"), 4);
        assert_eq!(rows("messages"), 6);
        // The settled pair waits for nothing; only case messages keep
        // what their threading depends on.
        drop(store);
        let url = format!("sqlite://{}", path.display());
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        let deps: Vec<(String, String)> =
            sqlx::query_as("SELECT m.message_id, d.dep_key FROM thread_deps d JOIN messages m ON m.seq = d.seq")
                .fetch_all(&mut conn)
                .await
                .unwrap();
        assert!(!deps.is_empty());
        let members: Vec<String> = run.cases[0].messages.iter().map(|m| m.message_id.to_string()).collect();
        assert!(deps.iter().all(|(m, _)| members.contains(m)), "{deps:?}");
    });
}

/// Bytes inserted in one go come back each under its own id, however
/// many fill the statement up (five rows go as eight, the last repeated
/// with no bytes), and a message kept already keeps its bytes.
#[test]
fn raw_bytes_inserted_together_stay_whole() {
    let dir = tempfile::tempdir().unwrap();
    for at in backends(dir.path()) {
        block_on(async {
            let mut store = Store::connect(&at).await.unwrap();
            let ids: Vec<MessageId> = (0..5).map(|i| MessageId::new(&format!("m{i}@x")).unwrap()).collect();
            let bytes: Vec<Vec<u8>> = (0..5).map(|i| format!("message {i}\n").repeat(i + 1).into_bytes()).collect();
            let mut tx = store.begin().await.unwrap();
            tx.insert_messages(ids.iter().map(|id| row(id.as_str())).collect()).await.unwrap();
            tx.insert_raw(&[(&ids[0], b"kept first".as_slice())]).await.unwrap();
            let all: Vec<(&MessageId, &[u8])> = ids.iter().zip(&bytes).map(|(id, b)| (id, b.as_slice())).collect();
            tx.insert_raw(&all).await.unwrap();
            tx.commit().await.unwrap();
            assert_eq!(store.raw_message(&ids[0]).await.unwrap().as_deref(), Some(b"kept first".as_slice()), "{at:?}");
            for (id, b) in ids.iter().zip(&bytes).skip(1) {
                assert_eq!(store.raw_message(id).await.unwrap().as_ref(), Some(b), "{id} on {at:?}");
            }
        });
    }
}

/// The checksums the idempotency tests compare do see a changed value.
#[test]
fn table_stats_see_every_change() {
    let dir = tempfile::tempdir().unwrap();
    for at in backends(dir.path()) {
        block_on(table_stats_see_every_change_at(&at));
    }
}

async fn table_stats_see_every_change_at(at: &Location) {
    {
        let mut store = Store::connect(at).await.unwrap();
        let mut tx = store.begin().await.unwrap();
        tx.insert_messages(vec![row("a@x")]).await.unwrap();
        tx.commit().await.unwrap();
        let before = store.table_stats().await.unwrap();
        let mut tx = store.begin().await.unwrap();
        tx.insert_raw(&[(&MessageId::new("a@x").unwrap(), b"bytes")]).await.unwrap();
        tx.commit().await.unwrap();
        let after = store.table_stats().await.unwrap();
        let changed: Vec<&str> = before.iter().zip(&after).filter(|(a, b)| a != b).map(|(a, _)| a.table).collect();
        assert_eq!(changed, ["raw_messages"]);
        let mut tx = store.begin().await.unwrap();
        tx.settle(&MessageId::new("a@x").unwrap(), false).await.unwrap();
        tx.insert_raw(&[(&MessageId::new("a@x").unwrap(), b"other")]).await.unwrap();
        tx.commit().await.unwrap();
        let again = store.table_stats().await.unwrap();
        let raw = |s: &[lkpbot::store::TableStat]| s.iter().find(|x| x.table == "raw_messages").unwrap().clone();
        assert_eq!(raw(&again).rows, raw(&after).rows);
        assert_ne!(raw(&again).checksum, raw(&after).checksum);
    }
}

/// ARCHITECTURE.md: only `store` speaks SQL, and `thread` never reaches
/// for the store.
#[test]
fn only_the_store_speaks_sql() {
    let src = crate::util::repo().join("src");
    let files = crate::util::files_with_suffix(&src, ".rs");
    assert!(files.len() > 20);
    let mut bad = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(&f).unwrap();
        if !rel.starts_with("store/") && text.contains("sqlx") {
            bad.push(format!("{rel} mentions sqlx"));
        }
        if rel.starts_with("thread/") && text.contains("crate::store") {
            bad.push(format!("{rel} uses the store"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Stale marks have a natural key (the case and the time): a sweep that
/// finds the same marks writes nothing, and a later sweep adds the new
/// mark beside the old one, which keeps its row.
#[test]
fn stale_marks_are_kept_not_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lkpbot.db");
    let msgs = fixture_messages("retest-fixup");
    let day = 86_400;
    block_on(async {
        let mut engine = crate::thread::engine(Store::open(&path).await.unwrap());
        for m in &msgs {
            engine.push(crate::thread::env(m)).await.unwrap();
        }
        engine.finish().await.unwrap();
        let last = engine.store().cases(lkpbot::case::CaseFilter::All, true).await.unwrap()[0].updated_at;
        drop(engine);
        // Each sweep by an engine of its own, as a later run would.
        let sweep = |now| {
            let path = path.clone();
            async move {
                let mut engine = crate::thread::engine(Store::open(&path).await.unwrap());
                engine.sweep_stale(now, 30).await.unwrap()
            }
        };
        let first = sweep(last + 40 * day).await;
        assert_eq!(first.changed, 1);
        let url = format!("sqlite://{}", path.display());
        let marks = || async {
            let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
            let rows: Vec<(i64, i64)> = sqlx::query_as("SELECT id, at FROM events WHERE kind = 'stale' ORDER BY at")
                .fetch_all(&mut conn)
                .await
                .unwrap();
            rows
        };
        let before = marks().await;
        assert_eq!(before.len(), 1);
        let again = sweep(last + 40 * day).await;
        assert_eq!(again.changed, 0);
        assert_eq!(marks().await, before);
        // A case stays stale: no new mark until more activity; the mark
        // is still the same row.
        sweep(last + 100 * day).await;
        assert_eq!(marks().await, before);
    });
}

/// A sweep reads many cases' events in one statement: each case gets
/// the marks its own activity gives (`stale_times` on its events), not
/// a neighbour's, over every thread fixture's cases at once.
#[test]
fn a_sweep_marks_each_case_by_its_own_activity() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lkpbot.db");
    let day = 86_400;
    block_on(async {
        let mut engine = crate::thread::engine(Store::open(&path).await.unwrap());
        for m in &crate::thread::all_fixture_messages() {
            engine.push(crate::thread::env(m)).await.unwrap();
        }
        engine.finish().await.unwrap();
        let cases = engine.store().cases(lkpbot::case::CaseFilter::All, true).await.unwrap();
        // Halfway between the first case's last activity and the last's,
        // past the window: some cases stale, some not.
        let (first, last) =
            (cases.iter().map(|c| c.updated_at).min().unwrap(), cases.iter().map(|c| c.updated_at).max().unwrap());
        let now = first + (last - first) / 2 + 30 * day;
        let swept = engine.sweep_stale(now, 30).await.unwrap();
        assert!(swept.cases >= 2, "{swept:?}");
        let reader = lkpbot::store::Reader::open(&path).await.unwrap();
        let (mut marked, mut unmarked) = (0, 0);
        for c in &cases {
            let record = reader.case(c.view.id).await.unwrap().unwrap();
            let marks: Vec<i64> =
                record.events.iter().filter(|e| e.kind == lkpbot::case::EventKind::Stale).map(|e| e.at).collect();
            let mut want = lkpbot::case::stale_times(c.view.facts.kind, &record.events, now, 30);
            want.sort_unstable();
            let mut got = marks.clone();
            got.sort_unstable();
            if c.view.state.is_open() || !got.is_empty() {
                assert_eq!(got, want, "case {} ({})", c.view.id.0, c.view.facts.title);
            }
            if got.is_empty() { unmarked += 1 } else { marked += 1 }
        }
        assert!(marked > 0 && unmarked > 0, "{marked} cases marked, {unmarked} not");
    });
}

/// A source's checkpoint is stored with the batch that holds its
/// messages: the last token of each source in the batch, duplicates
/// included (a re-fetch still moves the source on), nothing before the
/// batch is committed.
#[test]
fn checkpoints_are_stored_with_their_messages() {
    use lkpbot::engine::{Checkpoint, Envelope};
    let msgs = fixture_messages("reply-chain");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lkpbot.db");
    block_on(async {
        let mut engine = crate::thread::engine(Store::open(&path).await.unwrap());
        let with = |bytes: &[u8], source: &str, token: &str| {
            let mut e = Envelope::new(bytes.to_vec(), crate::thread::NOW);
            e.checkpoint = Some(Checkpoint { source: source.into(), token: token.into() });
            e
        };
        engine.push(with(&msgs[0], "imap://a/INBOX", "7:1")).await.unwrap();
        engine.push(with(&msgs[1], "imap://a/INBOX", "7:2")).await.unwrap();
        engine.push(with(&msgs[2], "imap://b/INBOX", "9:40")).await.unwrap();
        // Not flushed: another reader sees nothing yet.
        let mut other = Store::open(&path).await.unwrap();
        assert_eq!(other.checkpoint("imap://a/INBOX").await.unwrap(), None);
        engine.flush().await.unwrap();
        assert_eq!(other.checkpoint("imap://a/INBOX").await.unwrap().as_deref(), Some("7:2"));
        assert_eq!(other.checkpoint("imap://b/INBOX").await.unwrap().as_deref(), Some("9:40"));
        // A duplicate moves its source on too.
        engine.push(with(&msgs[0], "imap://a/INBOX", "7:3")).await.unwrap();
        let stats = engine.finish().await.unwrap();
        assert_eq!(stats.duplicates, 1);
        assert_eq!(other.checkpoint("imap://a/INBOX").await.unwrap().as_deref(), Some("7:3"));
    });
}

/// A claimed mail is no other sender's until the claim lapses; then the
/// next sender takes it, and the first can no longer mark it: two
/// handles on one file (as two processes have).
#[test]
fn a_claimed_mail_is_one_senders_until_the_claim_lapses() {
    let dir = tempfile::tempdir().unwrap();
    for at in backends(dir.path()) {
        block_on(a_claimed_mail_is_one_senders_at(&at));
    }
}

async fn a_claimed_mail_is_one_senders_at(at: &Location) {
    use lkpbot::store::{Claim, Failure, MailState, NewMail};
    let claim = |owner: &str, now: i64| Claim { owner: owner.into(), now, mail_lease: 50, command_lease: 500 };
    {
        let mut a = Store::connect(at).await.unwrap();
        let mut b = Store::connect(at).await.unwrap();
        let mut tx = a.begin().await.unwrap();
        for n in 0..2 {
            let m = NewMail {
                cause: format!("c{n}"),
                kind: "reply",
                case: None,
                in_reply_to: None,
                message_id: format!("m{n}@bot"),
                addressee: None,
                recipients: vec!["x@example.org".into()],
                sender: "bot@example.org".into(),
                subject: "s".into(),
                raw: b"raw".to_vec(),
                created_at: 100,
            };
            tx.enqueue(&m).await.unwrap();
        }
        tx.commit().await.unwrap();
        let first = a.claim_mail(&claim("a", 100), 100, false).await.unwrap().unwrap();
        assert_eq!(first.message_id, "m0@bot");
        assert_eq!(first.raw, b"raw");
        // b takes the next one, then finds nothing free.
        let second = b.claim_mail(&claim("b", 110), 110, false).await.unwrap().unwrap();
        assert_eq!(second.message_id, "m1@bot");
        assert!(b.claim_mail(&claim("b", 120), 120, false).await.unwrap().is_none());
        assert_eq!(b.next_mail_due().await.unwrap(), Some(150), "a claimed mail is due when its claim lapses");
        // a's claim lapses: b takes the mail, and a cannot mark it.
        let again = b.claim_mail(&claim("b", 151), 151, false).await.unwrap().unwrap();
        assert_eq!(again.id, first.id);
        assert!(!a.mark_sent(first.id, "a", 152, None).await.unwrap());
        assert!(!a.mark_failed(first.id, "a", "x", Failure::Mail, 200).await.unwrap());
        assert!(b.mark_sent(first.id, "b", 153, None).await.unwrap());
        // A mail no server took waits for one; `probe` offers it before
        // it is due, and a server answering makes it due.
        assert!(b.mark_failed(second.id, "b", "refused", Failure::Server, 1000).await.unwrap());
        assert!(b.waits_for_server().await.unwrap());
        assert!(a.claim_mail(&claim("a", 160), 160, false).await.unwrap().is_none());
        let probe = a.claim_mail(&claim("a", 160), 160, true).await.unwrap().unwrap();
        assert_eq!(probe.id, second.id);
        assert!(a.mark_failed(second.id, "a", "refused", Failure::Server, 1000).await.unwrap());
        assert_eq!(a.server_answers(170).await.unwrap(), 1);
        let due = a.claim_mail(&claim("a", 170), 170, false).await.unwrap().unwrap();
        assert_eq!(due.id, second.id);
        assert_eq!(due.state, MailState::Failing);
        assert_eq!(due.attempts, 2);
    }
}

/// A PostgreSQL store whose schema is newer than this lkpbot is refused
/// by the writer and the reader alike, before anything is touched.
#[test]
fn a_postgres_store_from_a_newer_lkpbot_is_refused() {
    let Some(server) = crate::util::postgres::shared() else { return };
    let url = server.create_db();
    let at = Location::postgres(&url, None).unwrap();
    block_on(async { drop(Store::connect(&at).await.unwrap()) });
    let db = url.rsplit('/').next().unwrap();
    server.psql(
        db,
        &format!(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES ({}, 'future', TRUE, '\\x00', 0)",
            schema_version() + 1
        ),
    );
    block_on(async {
        for r in [Store::connect(&at).await.map(drop), lkpbot::store::Reader::connect(&at).await.map(drop)] {
            match r {
                Err(StoreError::TooNew { found, known, .. }) => {
                    assert_eq!((found, known), (schema_version() + 1, schema_version()))
                }
                Err(e) => panic!("unexpected error: {e}"),
                Ok(()) => panic!("a newer schema was accepted"),
            }
        }
    });
}

/// The store at `url` (`sqlite://...` or `postgres://...`) as an older
/// lkpbot left it, or with what a test looks at: `sql` run as it is.
async fn raw_sql(url: &str, sql: &[&'static str]) {
    if url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        for s in sql {
            sqlx::query(*s).execute(&mut conn).await.unwrap();
        }
        conn.close().await.unwrap();
    } else {
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        for s in sql {
            sqlx::query(*s).execute(&mut conn).await.unwrap();
        }
        conn.close().await.unwrap();
    }
}

/// How many rows `sql` (a `SELECT COUNT(*)`) counts.
async fn count(url: &str, sql: &'static str) -> i64 {
    if url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        let (n,): (i64,) = sqlx::query_as(sql).fetch_one(&mut conn).await.unwrap();
        conn.close().await.unwrap();
        n
    } else {
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        let (n,): (i64,) = sqlx::query_as(sql).fetch_one(&mut conn).await.unwrap();
        conn.close().await.unwrap();
        n
    }
}

/// Each backend as a `Location` and the URL a test connects to.
fn backend_urls(dir: &std::path::Path) -> Vec<(Location, String)> {
    let path = dir.join("lkpbot.db");
    let mut out = vec![(Location::Sqlite(path.clone()), format!("sqlite://{}", path.display()))];
    if let Some(url) = crate::util::postgres::fresh_db() {
        out.push((Location::postgres(&url, None).unwrap(), url));
    }
    out
}

/// Pushes `msgs` through an engine on the store at `at`; its cases.
async fn ingest_at(at: &Location, msgs: &[Vec<u8>]) -> Vec<lkpbot::case::CaseRecord> {
    let mut engine = crate::thread::engine(Store::connect(at).await.unwrap());
    for m in msgs {
        engine.push(crate::thread::env(m)).await.unwrap();
    }
    engine.finish().await.unwrap();
    engine.store().cases(lkpbot::case::CaseFilter::All, true).await.unwrap()
}

const HK_KEYS: &str = "SELECT COUNT(*) FROM message_keys WHERE key LIKE 'h:%'";
const HK_WAITING: &str = "SELECT COUNT(*) FROM thread_deps WHERE dep_key LIKE 'k:h:%'";
/// What a store before the HyperKitty keys lacks, and the task migration
/// 0011 leaves it.
const BEFORE_HK_KEYS: &[&str] =
    &["DELETE FROM message_keys WHERE key LIKE 'h:%'", "INSERT INTO store_tasks (name) VALUES ('hyperkitty-keys')"];

/// `fixtures/threads/hyperkitty-links.mbox` split: the two robot reports
/// (and an answer to one), then the mail naming them by lists.01.org
/// links (two fixes, a maintainer's "applied", a link to no report).
fn hyperkitty_split() -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let (reports, links): (Vec<Vec<u8>>, Vec<Vec<u8>>) =
        fixture_messages("hyperkitty-links").into_iter().partition(|m| {
            let text = String::from_utf8_lossy(m);
            text.contains("From: kernel test robot <") || text.contains("In-Reply-To: <20210601080000.GA1234")
        });
    assert_eq!((reports.len(), links.len()), (3, 4), "the fixture changed");
    (reports, links)
}

/// On each backend, a store with the split's reports ingested, handed
/// to `test` with the link mail.
fn with_reports_stored(test: impl AsyncFn(Location, String, Vec<Vec<u8>>)) {
    let (reports, links) = hyperkitty_split();
    let dir = tempfile::tempdir().unwrap();
    for (at, url) in backend_urls(dir.path()) {
        block_on(async {
            ingest_at(&at, &reports).await;
            test(at, url, links.clone()).await;
        });
    }
}

/// The cases the link mail moved, as in `thread::hyperkitty_links_tie_fixes_to_reports`.
fn assert_links_tied(cases: &[lkpbot::case::CaseRecord], why: &str) {
    use lkpbot::case::{CaseState, Strategy};
    let case = |report: &str| {
        cases.iter().find(|c| c.view.facts.report_message_id.as_str() == report).expect("a case for the report")
    };
    let a = case("20210601080000.GA1234@xsang-OptiPlex-9020");
    assert_eq!(a.view.state, CaseState::FixApplied, "{why}");
    let fix = a.messages.iter().find(|m| m.message_id.as_str() == "20210603020000.1111-1-ida@example.org");
    assert_eq!(fix.map(|m| m.strategy), Some(Strategy::Link), "{why}");
    let b = case("20210705123456.GB5678@xsang-OptiPlex-9020");
    assert_eq!(b.view.state, CaseState::FixPosted, "{why}");
    assert!(b.messages.iter().any(|m| m.message_id.as_str() == "20210709060000.3333-1-lev@example.net"), "{why}");
}

/// Reports stored before reports offered their HyperKitty keys get them
/// when the store is first opened after the upgrade, so lists.01.org
/// links find them; the next open does not look again.
#[test]
fn stored_reports_get_their_hyperkitty_keys_once() {
    with_reports_stored(async |at, url, links| {
        assert_eq!(count(&url, HK_KEYS).await, 2, "{at}: a report offers its key");
        raw_sql(&url, BEFORE_HK_KEYS).await;
        assert_eq!(count(&url, HK_KEYS).await, 0);
        let cases = ingest_at(&at, &links).await;
        assert_eq!(count(&url, HK_KEYS).await, 2, "{at}: the open gave the stored reports their keys");
        assert_links_tied(&cases, &at.to_string());
        // Done once: an open does not scan the reports again.
        assert_eq!(count(&url, "SELECT COUNT(*) FROM store_tasks").await, 0, "{at}");
        raw_sql(&url, &["DELETE FROM message_keys WHERE key LIKE 'h:%'"]).await;
        drop(Store::connect(&at).await.unwrap());
        assert_eq!(count(&url, HK_KEYS).await, 0, "{at}: scanned again");
    });
}

/// Mail that named a report by a lists.01.org link and waits on its
/// key is threaded again once the open gives the report its key: the
/// same cases as when the report had it all along.
#[test]
fn mail_waiting_on_a_backfilled_hyperkitty_key_is_threaded_again() {
    with_reports_stored(async |at, url, links| {
        // The link mail arrives while the reports lack their keys.
        raw_sql(&url, &["DELETE FROM message_keys WHERE key LIKE 'h:%'"]).await;
        let cases = ingest_at(&at, &links).await;
        let a = cases.iter().find(|c| c.view.facts.report_message_id.as_str().starts_with("20210601080000"));
        assert_eq!(a.map(|c| c.messages.len()), Some(2), "{at}: the fix found its report without its key");
        assert_eq!(count(&url, HK_WAITING).await, 4, "{at}: the two fixes and the links to no report wait on keys");
        raw_sql(&url, &["INSERT INTO store_tasks (name) VALUES ('hyperkitty-keys')"]).await;
        let cases = ingest_at(&at, &[]).await;
        assert_links_tied(&cases, &at.to_string());
        assert_eq!(count(&url, "SELECT COUNT(*) FROM store_tasks").await, 0, "{at}");
    });
}

/// Which of a message's events in a case changed says whether the case's
/// title may have: only a `retitled` event added, changed or taken away
/// (threading reads the title, so such a case is replayed at once; any
/// other change waits for the batch's end).
#[test]
fn changed_events_say_whether_the_title_may_change() {
    use lkpbot::case::{CaseFacts, CaseKind, Event, EventKind};
    let dir = tempfile::tempdir().unwrap();
    block_on(async {
        let mut store = Store::open(&dir.path().join("lkpbot.db")).await.unwrap();
        let mut tx = store.begin().await.unwrap();
        tx.insert_messages(vec![row("r@x"), row("c@x")]).await.unwrap();
        let report = MessageId::new("r@x").unwrap();
        let case = tx.open_case(&CaseFacts::new(CaseKind::Build, "t".into(), report, 0)).await.unwrap();
        let c = MessageId::new("c@x").unwrap();
        // A message's events are only ever in a case it is a member of.
        tx.attach(case, &c, lkpbot::case::Strategy::References).await.unwrap();
        let said = |at, kind: EventKind, note: Option<&str>| Event {
            note: note.map(str::to_string),
            ..Event::new(at, kind, Some(c.clone()))
        };
        let steps: Vec<(Vec<Event>, (bool, bool), &str)> = vec![
            (vec![said(10, EventKind::Discussion, None)], (true, false), "a discussion added"),
            (vec![said(10, EventKind::Discussion, None)], (false, false), "the same again"),
            (vec![said(20, EventKind::Discussion, None)], (true, false), "its time changed"),
            (
                vec![said(20, EventKind::Discussion, None), said(20, EventKind::Retitled, Some("a"))],
                (true, true),
                "a retitle added",
            ),
            (
                vec![said(20, EventKind::Discussion, None), said(20, EventKind::Retitled, Some("b"))],
                (true, true),
                "the retitle changed",
            ),
            (
                vec![said(20, EventKind::Discussion, Some("n")), said(20, EventKind::Retitled, Some("b"))],
                (true, false),
                "the discussion changed",
            ),
            (vec![said(20, EventKind::Discussion, Some("n"))], (true, true), "the retitle taken away"),
            (vec![], (true, false), "the discussion taken away"),
        ];
        for (events, want, what) in steps {
            let had = tx.events_of(&c).await.unwrap().remove(&case).unwrap_or_default();
            let put = tx.put_events_over(case, had, &events).await.unwrap();
            assert_eq!((put.any, put.title), want, "{what}");
            let stored: Vec<(EventKind, Option<String>)> =
                tx.events(case).await.unwrap().into_iter().map(|e| (e.kind, e.note)).collect();
            let wanted: Vec<(EventKind, Option<String>)> = events.iter().map(|e| (e.kind, e.note.clone())).collect();
            assert_eq!(stored, wanted, "{what}: stored events");
        }
    });
}

/// The cases of a patch key, read again in the same transaction, are
/// what the store holds then: a case opened, retitled by its replay or
/// deleted since the last read is seen.
#[test]
fn cases_by_patch_key_see_the_transactions_own_changes() {
    use lkpbot::case::{CaseFacts, CaseKind, Event, EventKind};
    let dir = tempfile::tempdir().unwrap();
    block_on(async {
        let mut store = Store::open(&dir.path().join("lkpbot.db")).await.unwrap();
        let mut tx = store.begin().await.unwrap();
        tx.insert_messages(vec![row("r1@x"), row("r2@x"), row("c@x")]).await.unwrap();
        async fn titles(tx: &mut lkpbot::store::Tx<'_>) -> Vec<(i64, String)> {
            tx.cases_by_patch_key(&["pk"]).await.unwrap().into_iter().map(|v| (v.id.0, v.facts.title)).collect()
        }
        assert_eq!(titles(&mut tx).await, vec![], "none yet");
        let open = |r: &str| {
            let mut f = CaseFacts::new(CaseKind::Build, format!("t {r}"), MessageId::new(r).unwrap(), 0);
            f.patch_key = Some("pk".into());
            f
        };
        let first = tx.open_case(&open("r1@x")).await.unwrap();
        assert_eq!(titles(&mut tx).await, vec![(first.0, "t r1@x".to_string())], "one opened");
        let second = tx.open_case(&open("r2@x")).await.unwrap();
        assert_eq!(titles(&mut tx).await.len(), 2, "another opened");
        let c = MessageId::new("c@x").unwrap();
        tx.attach(first, &c, lkpbot::case::Strategy::References).await.unwrap();
        let retitle = Event { note: Some("new title".into()), ..Event::new(5, EventKind::Retitled, Some(c.clone())) };
        tx.put_events_over(first, Default::default(), &[retitle]).await.unwrap();
        tx.replay(first).await.unwrap();
        assert_eq!(
            titles(&mut tx).await,
            vec![(first.0, "new title".to_string()), (second.0, "t r2@x".to_string())],
            "retitled by its replay"
        );
        tx.delete_case(second).await.unwrap();
        assert_eq!(titles(&mut tx).await, vec![(first.0, "new title".to_string())], "one deleted");
    });
}

/// What waits is threaded in threading order: by date (the fetch time
/// for a message without one), then Message-ID, whatever order it was
/// stored or named in; taking part of what waits on a key takes the
/// first in that order and leaves the rest, and other keys, waiting.
#[test]
fn waiting_mail_comes_in_threading_order() {
    let dir = tempfile::tempdir().unwrap();
    for at in backends(dir.path()) {
        block_on(waiting_mail_comes_in_threading_order_at(&at));
    }
}

async fn waiting_mail_comes_in_threading_order_at(at: &Location) {
    let dated = |id: &str, date: Option<i64>, fetched_at: i64| MessageRow { date, fetched_at, ..row(id) };
    let mut store = Store::connect(at).await.unwrap();
    let mut tx = store.begin().await.unwrap();
    let rows =
        vec![dated("c@x", Some(30), 0), dated("a@x", None, 20), dated("d@x", Some(10), 0), dated("b@x", Some(10), 0)];
    tx.insert_messages(rows).await.unwrap();
    let id = |s: &str| MessageId::new(s).unwrap();
    let deps: Vec<(String, MessageId)> =
        ["c@x", "a@x", "d@x", "b@x"].iter().map(|m| ("k".to_string(), id(m))).collect();
    tx.add_deps_of(&deps).await.unwrap();
    tx.add_deps(&id("c@x"), &["other"]).await.unwrap();
    let expected = vec![(10, id("b@x")), (10, id("d@x")), (20, id("a@x")), (30, id("c@x"))];
    let ids = |v: &[&str]| v.iter().map(|m| id(m)).collect::<Vec<_>>();
    // What depends on keys, by Message-ID; its order looked up apart.
    assert_eq!(tx.dependents(&["k", "other"]).await.unwrap(), ids(&["a@x", "b@x", "c@x", "d@x"]));
    assert_eq!(tx.thread_order(&["c@x", "nowhere@x", "a@x", "d@x", "b@x"]).await.unwrap(), expected);
    assert_eq!(tx.take_dependents("k", 2).await.unwrap(), expected[..2]);
    assert_eq!(tx.dependents(&["k"]).await.unwrap(), ids(&["a@x", "c@x"]));
    assert_eq!(tx.take_dependents("k", 5).await.unwrap(), expected[2..]);
    assert_eq!(tx.take_dependents("k", 5).await.unwrap(), vec![]);
    assert_eq!(tx.dependents(&["other"]).await.unwrap(), ids(&["c@x"]));
    tx.commit().await.unwrap();
}

/// A store of schema 12, where kept bytes and dependencies were keyed by
/// Message-ID, comes out of the migration to numbered messages with each
/// message's bytes and dependencies still its own, and what is stored
/// after it is numbered after it.
#[test]
fn a_store_of_schema_12_keeps_each_messages_bytes_and_dependencies_once_numbered() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("lkpbot.db");
    block_on(async {
        let old = schema_12_migrations(dir.path(), "migrations", "sqlite").await;
        let url = format!("sqlite://{}?mode=rwc", sqlite.display());
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        old.run(&mut conn).await.unwrap();
        fill_schema_12(&mut conn, "BLOB").await;
        conn.close().await.unwrap();
        numbered_store_keeps_what_was_kept(&Location::Sqlite(sqlite.clone())).await;
    });
    if let Some(url) = crate::util::postgres::fresh_db() {
        block_on(async {
            let old = schema_12_migrations(dir.path(), "migrations/postgres", "postgres").await;
            let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
            old.run(&mut conn).await.unwrap();
            fill_schema_12(&mut conn, "BYTEA").await;
            conn.close().await.unwrap();
            numbered_store_keeps_what_was_kept(&Location::postgres(&url, None).unwrap()).await;
        });
    }
}

/// The migrations up to 12 of `from` (SQLite's or PostgreSQL's), copied
/// into a directory of their own under `dir`.
async fn schema_12_migrations(dir: &std::path::Path, from: &str, name: &str) -> sqlx::migrate::Migrator {
    let to = dir.join(name);
    std::fs::create_dir_all(&to).unwrap();
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(from);
    let mut n = 0;
    for entry in std::fs::read_dir(&from).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_str().unwrap().to_string();
        let version: Option<u32> = file.split('_').next().and_then(|v| v.parse().ok());
        if path.extension().is_some_and(|e| e == "sql") && version.is_some_and(|v| v <= 12) {
            std::fs::copy(&path, to.join(&file)).unwrap();
            n += 1;
        }
    }
    assert_eq!(n, 12, "migrations 1 to 12 in {}", from.display());
    sqlx::migrate::Migrator::new(to).await.unwrap()
}

/// Two unsettled messages with bytes and what they wait for, a settled
/// one without, in schema 12's tables (`blob`: the store's type of bytes).
async fn fill_schema_12<C>(conn: &mut C, blob: &str)
where
    for<'c> &'c mut C: sqlx::Executor<'c>,
{
    for sql in [
        "INSERT INTO messages (message_id, kind, subject, fetched_at, settled) VALUES \
         ('c@x', 'unrelated', 'c', 1, 1), ('b@x', 'unrelated', 'b', 2, 0), ('a@x', 'unrelated', 'a', 3, 0)"
            .to_string(),
        format!(
            "INSERT INTO raw_messages (message_id, bytes) VALUES \
             ('a@x', CAST('bytes of a' AS {blob})), ('b@x', CAST('bytes of b' AS {blob}))"
        ),
        "INSERT INTO thread_deps (dep_key, message_id) VALUES ('m:root@x', 'a@x'), ('s:key', 'a@x'), ('m:root@x', 'b@x')"
            .to_string(),
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&mut *conn).await.unwrap();
    }
}

async fn numbered_store_keeps_what_was_kept(at: &Location) {
    let mut store = Store::connect(at).await.unwrap();
    let id = |s: &str| MessageId::new(s).unwrap();
    assert_eq!(store.raw_message(&id("a@x")).await.unwrap().as_deref(), Some(b"bytes of a".as_slice()));
    assert_eq!(store.raw_message(&id("b@x")).await.unwrap().as_deref(), Some(b"bytes of b".as_slice()));
    assert_eq!(store.raw_message(&id("c@x")).await.unwrap(), None);
    let mut tx = store.begin().await.unwrap();
    assert_eq!(tx.dependents(&["m:root@x"]).await.unwrap(), [id("a@x"), id("b@x")]);
    assert_eq!(tx.dependents(&["s:key"]).await.unwrap(), [id("a@x")]);
    // A message stored now is numbered after them: its bytes and
    // dependencies are its own, and theirs stay.
    assert_eq!(tx.insert_messages(vec![row("d@x")]).await.unwrap(), 1);
    tx.insert_raw(&[(&id("d@x"), b"bytes of d".as_slice())]).await.unwrap();
    tx.add_deps(&id("d@x"), &["s:key"]).await.unwrap();
    assert_eq!(tx.dependents(&["s:key"]).await.unwrap(), [id("a@x"), id("d@x")]);
    // Settling one drops its bytes and dependencies only.
    assert!(tx.settle(&id("a@x"), false).await.unwrap());
    assert_eq!(tx.dependents(&["s:key"]).await.unwrap(), [id("d@x")]);
    assert_eq!(tx.dependents(&["m:root@x"]).await.unwrap(), [id("b@x")]);
    tx.commit().await.unwrap();
    assert_eq!(store.raw_message(&id("a@x")).await.unwrap(), None);
    assert_eq!(store.raw_message(&id("b@x")).await.unwrap().as_deref(), Some(b"bytes of b".as_slice()));
    assert_eq!(store.raw_message(&id("d@x")).await.unwrap().as_deref(), Some(b"bytes of d".as_slice()));
}

/// A writer's `finish` with nothing put off since it last finished, and
/// no other process writing since, opens no transaction (on PostgreSQL
/// each counts `lkpbot_writes` up, which every reader's cache notices):
/// a daemon finishes every job so. Once another process wrote, it looks
/// again for what an import cut short there left, and finishes it.
#[test]
fn finish_writes_nothing_when_nothing_is_owed_until_another_process_writes() {
    let dir = tempfile::tempdir().unwrap();
    for (at, url) in backend_urls(dir.path()) {
        block_on(async {
            let writes = async || match url.starts_with("postgres:") {
                true => Some(count(&url, "SELECT n FROM lkpbot_writes").await),
                false => None,
            };
            let mut a = crate::thread::engine(Store::connect(&at).await.unwrap());
            a.push(crate::thread::env(&plain("a@x", None))).await.unwrap();
            a.finish().await.unwrap();
            assert!(!a.store().others_wrote().await.unwrap(), "{at}");
            let before = writes().await;
            a.finish().await.unwrap();
            assert_eq!(writes().await, before, "{at}: a finish with nothing owed wrote");
            // Another process imports and is cut short: its cases' replays
            // are left due.
            let mut b = crate::thread::engine(Store::connect(&at).await.unwrap());
            for m in fixture_messages("same-patch-two-shas") {
                b.push(crate::thread::env(&m)).await.unwrap();
            }
            b.sweep_stale(0, 30).await.unwrap();
            drop(b);
            let due = "SELECT COUNT(*) FROM cases WHERE replay_due = 1";
            assert!(count(&url, due).await > 0, "{at}: the cut-short import left no replays due");
            assert!(a.store().others_wrote().await.unwrap(), "{at}");
            a.finish().await.unwrap();
            assert_eq!(count(&url, due).await, 0, "{at}: what the other process left is not finished");
            assert!(!a.store().others_wrote().await.unwrap(), "{at}");
        });
    }
}

/// A store threaded by an older lkpbot may hold an event of a message in
/// a case the message is not a member of, which the events' index by
/// Message-ID found and migration 0014 drops. The migration takes such
/// events away, and the next writer replays their cases and threads
/// their messages again: the cases come out as threading makes them.
#[test]
fn events_outside_a_membership_are_threaded_again_after_migration_14() {
    let msgs = fixture_messages("reply-chain");
    let dir = tempfile::tempdir().unwrap();
    for (at, url) in backend_urls(dir.path()) {
        block_on(async {
            let before = ingest_at(&at, &msgs).await;
            const ORPHANS: &str = "SELECT COUNT(*) FROM events e WHERE e.message_id IS NOT NULL AND NOT EXISTS \
                 (SELECT 1 FROM case_messages cm WHERE cm.case_id = e.case_id AND cm.message_id = e.message_id)";
            // As schema 13 left it, with the replies' memberships lost.
            raw_sql(
                &url,
                &[
                    "CREATE INDEX events_message ON events (message_id)",
                    "DELETE FROM _sqlx_migrations WHERE version = 14",
                    "DELETE FROM case_messages WHERE strategy <> 'report'",
                ],
            )
            .await;
            assert!(count(&url, ORPHANS).await > 0, "{at}: the fixture's replies caused no events");
            let after = ingest_at(&at, &[]).await;
            assert_eq!(count(&url, ORPHANS).await, 0, "{at}");
            assert_eq!(after, before, "{at}");
        });
    }
}
