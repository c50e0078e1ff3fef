//! The read side: cases with their messages, events and related cases,
//! as the CLI views, the digest and the web pages show them.
//!
//! A [`Reader`] holds a pool of read-only connections and answers through
//! `&self`, so a web server can share one; each call reads one snapshot
//! (one read transaction), so a case never shows half of a batch another
//! process is writing. It never creates, migrates or changes a store, and
//! it can read a store on a read-only medium.
//!
//! The read model itself ([`CaseRecord`] and its parts) is `case`'s.
//! Related cases are not stored: they follow from the cases' facts (the
//! same commit, the same patch: [`crate::case::related`]) and from
//! reports sent into another case's thread, so they never depend on
//! which report arrived first.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::db::{self, AsDb, Backend, Conn, Pool, Row, query};
use super::{StoreError, err, placeholders, rows, select_in};
use crate::case::{
    CaseFilter, CaseId, CaseMessage, CaseRecord, CaseRetest, CaseState, CaseView, Relatable, commit_prefix,
};
use crate::model::MessageId;

/// Read-only access to a store file, shareable (`&self`).
#[derive(Clone)]
pub struct Reader {
    pool: Pool,
    summary: Arc<Summary>,
}

/// The `data_version` a summary was read at, and its cases.
type Snapshot = (i64, Arc<Vec<CaseRecord>>);

/// [`Reader::summary`]'s copy of every case and the store's version it
/// was read at.
#[derive(Default)]
struct Summary {
    /// A connection of its own, only for `PRAGMA data_version`: its value
    /// on one connection changes when another connection commits.
    watch: tokio::sync::Mutex<Option<Conn>>,
    /// Without and with details.
    last: Mutex<[Option<Snapshot>; 2]>,
    /// Held while a copy is read, without and with details: callers
    /// that find it stale meanwhile wait for that read rather than each
    /// reading every case at once (on a large store, a read takes
    /// seconds, and as many reads as callers would hold the pool's
    /// connections until the rest time out).
    reading: [tokio::sync::Mutex<()>; 2],
    /// How many times the cases were read for a copy.
    reads: std::sync::atomic::AtomicU64,
}

impl Reader {
    /// Opens an existing store for reading; a missing one is
    /// [`StoreError::Missing`], and nothing is created.
    pub async fn open(path: &Path) -> Result<Reader, StoreError> {
        Ok(Reader { pool: super::open::reader(path).await?, summary: Arc::default() })
    }

    /// Opens an existing store for reading: a SQLite file (as
    /// [`Reader::open`]) or a PostgreSQL database.
    pub async fn connect(at: &super::Location) -> Result<Reader, StoreError> {
        let pool = match at {
            super::Location::Sqlite(path) => super::open::reader(path).await?,
            super::Location::Postgres(pg) => super::open::pg_reader(pg).await?,
        };
        Ok(Reader { pool, summary: Arc::default() })
    }

    pub fn backend(&self) -> Backend {
        self.pool.backend()
    }

    /// Closes the pool's connections.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// The cases `filter` selects, by id; with `detail`, each with its
    /// messages, events and related cases.
    pub async fn cases(&self, filter: CaseFilter, detail: bool) -> Result<Vec<CaseRecord>, StoreError> {
        let mut conn = self.pool.acquire().await.map_err(err("begin a read"))?;
        let mut tx = conn.begin_read().await.map_err(err("begin a read"))?;
        // Every case: seconds of a big store's rows read on this thread.
        let out = blocking(load_cases(&mut tx, filter, detail)).await?;
        tx.commit().await.map_err(err("end a read"))?;
        Ok(out)
    }

    /// Every case, by id (with `detail`, each with its messages, events
    /// and related cases), for lists to filter and sort. The cases are
    /// read again only when another connection has committed since the
    /// last read; until then every caller shares one copy.
    pub async fn summary(&self, detail: bool) -> Result<Arc<Vec<CaseRecord>>, StoreError> {
        let version: i64 = {
            let mut watch = self.summary.watch.lock().await;
            let conn = match &mut *watch {
                Some(c) => c,
                None => watch.insert(self.pool.acquire().await.map_err(err("begin a read"))?.detach()),
            };
            match db::data_version(conn).await {
                Ok(v) => v,
                Err(e) => {
                    // A connection the server dropped is not used again.
                    *watch = None;
                    return Err(err("read the data version")(e));
                }
            }
        };
        let slot = usize::from(detail);
        let last = || self.summary.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let current = || match &last()[slot] {
            Some((v, cases)) if *v == version => Some(cases.clone()),
            _ => None,
        };
        if let Some(cases) = current() {
            return Ok(cases);
        }
        let _reading = self.summary.reading[slot].lock().await;
        if let Some(cases) = current() {
            return Ok(cases);
        }
        self.summary.reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let cases = Arc::new(self.cases(CaseFilter::All, detail).await?);
        last()[slot] = Some((version, cases.clone()));
        Ok(cases)
    }

    /// How many times [`Reader::summary`] read the cases from the store
    /// (rather than sharing a copy).
    pub fn summary_reads(&self) -> u64 {
        self.summary.reads.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The cases `ids` (those that exist) without their details, by id.
    pub async fn views(&self, ids: &[CaseId]) -> Result<Vec<CaseView>, StoreError> {
        let mut conn = self.pool.acquire().await.map_err(err("begin a read"))?;
        views_of(&mut conn, ids).await
    }

    /// Every mail of the outbox, newest first (without its bytes).
    pub async fn outbox(&self) -> Result<Vec<super::OutboxMail>, StoreError> {
        let mut conn = self.pool.acquire().await.map_err(err("begin a read"))?;
        super::outbox::list(&mut conn).await
    }

    /// One case with its messages, events and related cases.
    pub async fn case(&self, id: CaseId) -> Result<Option<CaseRecord>, StoreError> {
        let mut conn = self.pool.acquire().await.map_err(err("begin a read"))?;
        let mut tx = conn.begin_read().await.map_err(err("begin a read"))?;
        let out = load_case(&mut tx, id).await?;
        tx.commit().await.map_err(err("end a read"))?;
        Ok(out)
    }

    /// One case as a page shows it: its events, retests and related
    /// cases (with the related cases' views), and of its messages only
    /// those `pick` names (given the case without messages), all in one
    /// snapshot.
    pub async fn case_part(
        &self,
        id: CaseId,
        pick: impl FnOnce(&CaseRecord) -> Vec<MessageId> + Send,
    ) -> Result<Option<(CaseRecord, Vec<CaseView>)>, StoreError> {
        let mut conn = self.pool.acquire().await.map_err(err("begin a read"))?;
        let mut tx = conn.begin_read().await.map_err(err("begin a read"))?;
        let out = match load_case_part(&mut tx, id, pick).await? {
            Some(c) => {
                let related: Vec<CaseId> = c.related.iter().map(|(id, _)| *id).collect();
                let others = views_of(&mut tx, &related).await?;
                Some((c, others))
            }
            None => None,
        };
        tx.commit().await.map_err(err("end a read"))?;
        Ok(out)
    }
}

/// Runs `read`, a read that may hold this thread for seconds (a SQLite
/// read transaction's statements run on the caller's thread): on a
/// multi-thread runtime the thread's other tasks move to another first
/// (`block_in_place`); on a single-thread one it just runs.
async fn blocking<F: std::future::Future>(read: F) -> F::Output {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let handle = Handle::current();
    if handle.runtime_flavor() == RuntimeFlavor::MultiThread {
        tokio::task::block_in_place(|| handle.block_on(read))
    } else {
        read.await
    }
}

impl Reader {
    /// How many cases each state holds, in the order of [`CaseState::ALL`].
    pub async fn state_counts(&self) -> Result<Vec<(CaseState, i64)>, StoreError> {
        let mut conn = self.pool.acquire().await.map_err(err("begin a read"))?;
        let rows = query("SELECT state, COUNT(*) FROM cases GROUP BY state")
            .fetch_all(&mut conn)
            .await
            .map_err(err("count cases"))?;
        let mut counts: Vec<(CaseState, i64)> = CaseState::ALL.iter().map(|s| (*s, 0)).collect();
        for r in rows {
            let state: String = r.try_get(0).map_err(err("count cases"))?;
            let n: i64 = r.try_get(1).map_err(err("count cases"))?;
            if let Some(c) = counts.iter_mut().find(|(s, _)| s.as_str() == state) {
                c.1 = n;
            }
        }
        Ok(counts)
    }
}

impl super::Tx<'_> {
    /// Every case with its messages and events, as the write transaction
    /// sees them (for the digest).
    pub async fn all_cases(&mut self) -> Result<Vec<CaseRecord>, StoreError> {
        load_cases(&mut self.tx, CaseFilter::All, true).await
    }
}

/// The report facts the read side shows ([`CaseRecord::report_facts`],
/// `still_on` among them: the report's "[still regression on TREE SHA]"):
/// a report's facts run to hundreds of kilobytes of tables, so the
/// database picks these parts out and the rest is never parsed. One of
/// the named differences of the two backends (their JSON functions):
/// this is SQLite's, [`PG_REPORT_FACTS`] PostgreSQL's.
const REPORT_FACTS: &str = "CASE WHEN r.facts IS NULL THEN NULL ELSE json_object(\
     'headline', json(json_extract(r.facts, '$.headline')), \
     'test_machine', json_extract(r.facts, '$.test_machine'), \
     'still_on', json(json_extract(r.facts, '$.still_on')), \
     'table', json_object(\
         'columns', json(json_extract(r.facts, '$.table.columns')), \
         'fail_rows', json(json_extract(r.facts, '$.table.fail_rows')))) END";

/// [`REPORT_FACTS`] in PostgreSQL's JSON functions (the same object).
const PG_REPORT_FACTS: &str = "CASE WHEN r.facts IS NULL THEN NULL ELSE json_build_object(\
     'headline', r.facts::json -> 'headline', \
     'test_machine', r.facts::json -> 'test_machine', \
     'still_on', r.facts::json -> 'still_on', \
     'table', json_build_object(\
         'columns', r.facts::json #> '{table,columns}', \
         'fail_rows', r.facts::json #> '{table,fail_rows}'))::text END";

/// The cases' columns; with `detail`, the report's facts too.
fn base_select(detail: bool, backend: Backend) -> String {
    let facts = match (detail, backend) {
        (false, _) => "NULL",
        (true, Backend::Sqlite) => REPORT_FACTS,
        (true, Backend::Postgres) => PG_REPORT_FACTS,
    };
    format!(
        "SELECT {}, c.updated_at, c.verdict, c.fix_commit, c.fix_message_id, {facts} AS facts, \
         (SELECT MAX(e.at) FROM events e WHERE e.case_id = c.id AND e.kind = 'reported-again' \
          AND e.message_id IS NOT NULL AND e.tree_commit IS NOT NULL) AS seen_again_at \
         FROM cases c LEFT JOIN reports r ON r.message_id = c.report_message_id",
        rows::CASE_COLUMNS,
    )
}

pub(super) async fn load_cases(
    conn: &mut impl AsDb,
    filter: CaseFilter,
    detail: bool,
) -> Result<Vec<CaseRecord>, StoreError> {
    let base = base_select(detail, db::backend(conn));
    let rows = match filter {
        CaseFilter::All => {
            query(format!("{base} ORDER BY c.id")).fetch_all(&mut *conn).await.map_err(err("list cases"))?
        }
        CaseFilter::State(s) => query(format!("{base} WHERE c.state = $1 ORDER BY c.id"))
            .bind(s.as_str())
            .fetch_all(&mut *conn)
            .await
            .map_err(err("list cases"))?,
        CaseFilter::Open => {
            let open: Vec<&str> = CaseState::ALL.iter().filter(|s| s.is_open()).map(|s| s.as_str()).collect();
            let sql = format!("{base} WHERE c.state IN ({}) ORDER BY c.id", placeholders(open.len()));
            let mut q = query(sql);
            for s in open {
                q = q.bind(s);
            }
            q.fetch_all(&mut *conn).await.map_err(err("list cases"))?
        }
    };
    let mut out: Vec<CaseRecord> = rows.iter().map(case_record).collect::<Result<_, _>>()?;
    if detail && !out.is_empty() {
        add_details(conn, &mut out, matches!(filter, CaseFilter::All)).await?;
    }
    Ok(out)
}

pub(super) async fn load_case(conn: &mut impl AsDb, id: CaseId) -> Result<Option<CaseRecord>, StoreError> {
    let Some(c) = case_row(conn, id).await? else { return Ok(None) };
    let mut out = vec![c];
    add_details(conn, &mut out, false).await?;
    Ok(out.pop())
}

/// The case `id` without its details.
async fn case_row(conn: &mut impl AsDb, id: CaseId) -> Result<Option<CaseRecord>, StoreError> {
    let row = query(format!("{} WHERE c.id = $1", base_select(true, db::backend(conn))))
        .bind(id.0)
        .fetch_optional(&mut *conn)
        .await
        .map_err(err("read a case"))?;
    row.as_ref().map(case_record).transpose()
}

/// The views of the cases `ids`, by id.
async fn views_of(conn: &mut impl AsDb, ids: &[CaseId]) -> Result<Vec<CaseView>, StoreError> {
    let ids: Vec<i64> = ids.iter().map(|id| id.0).collect();
    let select = format!("SELECT {} FROM cases c WHERE c.id IN", rows::CASE_COLUMNS);
    let rows = select_in(conn, &select, "", &ids, "read cases").await?;
    let mut out: Vec<CaseView> = rows.iter().map(rows::case_view).collect::<Result<_, _>>()?;
    out.sort_by_key(|v| v.id);
    Ok(out)
}

/// One case with its events, retests and related cases, and of its
/// messages only those `pick` names (given the case without messages),
/// in the same snapshot: what a page showing part of a long timeline
/// needs, at a cost set by what it shows rather than by the case's size.
async fn load_case_part(
    conn: &mut impl AsDb,
    id: CaseId,
    pick: impl FnOnce(&CaseRecord) -> Vec<MessageId>,
) -> Result<Option<CaseRecord>, StoreError> {
    let Some(c) = case_row(conn, id).await? else { return Ok(None) };
    let mut out = vec![c];
    add_timelines(conn, &mut out, false).await?;
    let mut named: Vec<MessageId> = pick(&out[0]);
    named.sort();
    named.dedup();
    let named: Vec<&str> = named.iter().map(MessageId::as_str).collect();
    // By the case and Message-ID (its key): a message in many cases (a
    // later version of a patch supersedes every case of the patch) is
    // read once, not once for each of its cases. The case is bound last,
    // so the statement's text is the same for every case.
    let rows = super::select_in_then(
        conn,
        &format!(
            "{CASE_MESSAGES} FROM case_messages cm JOIN messages m ON m.message_id = cm.message_id \
             WHERE cm.message_id IN"
        ),
        " AND cm.case_id = ?",
        &named,
        Some(id.0),
        "read case messages",
    )
    .await?;
    add_messages(&mut out, &rows)?;
    let c = &mut out[0];
    c.messages.sort_by(|a, b| (a.date, &a.message_id).cmp(&(b.date, &b.message_id)));
    Ok(out.pop())
}

fn case_record(row: &Row) -> Result<CaseRecord, StoreError> {
    let view = rows::case_view(row)?;
    let verdict: Option<String> = row.try_get("verdict").map_err(err("read a case"))?;
    let fix_message: Option<String> = row.try_get("fix_message_id").map_err(err("read a case"))?;
    let facts: Option<String> = row.try_get("facts").map_err(err("read a case"))?;
    Ok(CaseRecord {
        view,
        updated_at: row.try_get("updated_at").map_err(err("read a case"))?,
        verdict: verdict.as_deref().map(rows::verdict).transpose()?,
        fix_commit: row.try_get("fix_commit").map_err(err("read a case"))?,
        fix_message_id: fix_message.as_deref().map(rows::message_id).transpose()?,
        report_facts: facts.and_then(|f| serde_json::from_str(&f).ok()),
        seen_again_at: row.try_get("seen_again_at").map_err(err("read a case"))?,
        messages: Vec::new(),
        events: Vec::new(),
        related: Vec::new(),
        retests: Vec::new(),
    })
}

/// Messages, events and related cases of `cases`; `all` says they are
/// every case of the store (so each table is read once, unfiltered).
async fn add_details(conn: &mut impl AsDb, cases: &mut [CaseRecord], all: bool) -> Result<(), StoreError> {
    let ids: Vec<i64> = cases.iter().map(|c| c.view.id.0).collect();
    let messages = rows_for(
        conn,
        &format!("{CASE_MESSAGES} FROM case_messages cm JOIN messages m ON m.message_id = cm.message_id"),
        "cm.case_id",
        "cm.case_id, m.date, cm.message_id",
        &ids,
        all,
        "read case messages",
    )
    .await?;
    add_messages(cases, &messages)?;
    add_timelines(conn, cases, all).await
}

/// A case's messages' columns (`cm` its `case_messages` rows, `m` their
/// `messages`), as [`add_messages`] reads them.
const CASE_MESSAGES: &str = "SELECT cm.case_id, cm.message_id, cm.strategy, m.kind, m.subject, m.from_addr, \
     m.date, m.auth, m.auth_author, m.auth_reason";

/// Each row of [`CASE_MESSAGES`] added to its case (in the rows' order).
fn add_messages(cases: &mut [CaseRecord], rows: &[Row]) -> Result<(), StoreError> {
    let index: HashMap<CaseId, usize> = cases.iter().enumerate().map(|(i, c)| (c.view.id, i)).collect();
    for row in rows {
        let case = CaseId(row.try_get("case_id").map_err(err("read case messages"))?);
        let Some(&i) = index.get(&case) else { continue };
        let id: String = row.try_get("message_id").map_err(err("read case messages"))?;
        let strategy: String = row.try_get("strategy").map_err(err("read case messages"))?;
        cases[i].messages.push(CaseMessage {
            message_id: rows::message_id(&id)?,
            strategy: rows::strategy(&strategy)?,
            kind: row.try_get("kind").map_err(err("read case messages"))?,
            subject: row.try_get("subject").map_err(err("read case messages"))?,
            from: row.try_get("from_addr").map_err(err("read case messages"))?,
            date: row.try_get("date").map_err(err("read case messages"))?,
            auth: rows::auth(row, "auth", "auth_author", "auth_reason")?,
        });
    }
    Ok(())
}

/// Events, retests and related cases of `cases`; `all` as for
/// [`add_details`].
async fn add_timelines(conn: &mut impl AsDb, cases: &mut [CaseRecord], all: bool) -> Result<(), StoreError> {
    let index: HashMap<CaseId, usize> = cases.iter().enumerate().map(|(i, c)| (c.view.id, i)).collect();
    let ids: Vec<i64> = cases.iter().map(|c| c.view.id.0).collect();
    let events = rows_for(
        conn,
        &format!("SELECT {} FROM events e", rows::EVENT_COLUMNS),
        "e.case_id",
        &format!("e.case_id, {}", rows::EVENT_ORDER),
        &ids,
        all,
        "read events",
    )
    .await?;
    for row in events {
        let (case, e) = rows::event(&row)?;
        if let Some(&i) = index.get(&case) {
            cases[i].events.push(e);
        }
    }
    let retests = rows_for(
        conn,
        "SELECT cm.case_id, r.message_id, r.idx, r.fix_commit, r.metric, r.verdict, r.facts \
         FROM case_messages cm JOIN retests r ON r.message_id = cm.message_id \
         JOIN messages m ON m.message_id = cm.message_id",
        "cm.case_id",
        "cm.case_id, m.date, r.message_id, r.idx",
        &ids,
        all,
        "read retests",
    )
    .await?;
    for row in retests {
        let case = CaseId(row.try_get("case_id").map_err(err("read retests"))?);
        let Some(&i) = index.get(&case) else { continue };
        let id: String = row.try_get("message_id").map_err(err("read retests"))?;
        let verdict: Option<String> = row.try_get("verdict").map_err(err("read retests"))?;
        let facts: String = row.try_get("facts").map_err(err("read retests"))?;
        cases[i].retests.push(CaseRetest {
            message_id: rows::message_id(&id)?,
            idx: row.try_get("idx").map_err(err("read retests"))?,
            fix_commit: row.try_get("fix_commit").map_err(err("read retests"))?,
            metric: row.try_get("metric").map_err(err("read retests"))?,
            verdict: verdict.as_deref().map(rows::verdict).transpose()?,
            facts: serde_json::from_str(&facts).unwrap_or(serde_json::Value::Null),
        });
    }
    add_related(conn, cases, all).await
}

/// Rows of `select`, for the cases `ids` (all rows when `all`), in `order`.
async fn rows_for(
    conn: &mut impl AsDb,
    select: &str,
    case_col: &str,
    order: &str,
    ids: &[i64],
    all: bool,
    what: &'static str,
) -> Result<Vec<Row>, StoreError> {
    if all {
        let sql = format!("{select} ORDER BY {order}");
        return query(sql).fetch_all(conn).await.map_err(err(what));
    }
    let order = format!(" ORDER BY {order}");
    let mut rows = select_in(conn, &format!("{select} WHERE {case_col} IN"), &order, ids, what).await?;
    // Chunks come back each in its own order: sort by case, keeping the
    // order within a case (each case is in one chunk).
    let mut keyed: Vec<(i64, usize, Row)> = Vec::with_capacity(rows.len());
    for (n, r) in rows.drain(..).enumerate() {
        keyed.push((r.try_get(0).map_err(err(what))?, n, r));
    }
    keyed.sort_by_key(|(case, n, _)| (*case, *n));
    Ok(keyed.into_iter().map(|(_, _, r)| r).collect())
}

/// The cases related to each of `cases` ([`crate::case::related`]): the
/// reports attached to another case, and every case sharing a commit
/// prefix or a patch key with one of ours.
async fn add_related(conn: &mut impl AsDb, cases: &mut [CaseRecord], all: bool) -> Result<(), StoreError> {
    // A report attached to another case: the two are in one thread. For
    // a few cases, two indexed lookups (their messages that are reports,
    // their reports in other cases) instead of reading every pair.
    const IN_THREAD: &str = "SELECT cm.case_id, c.id FROM case_messages cm \
         JOIN cases c ON c.report_message_id = cm.message_id WHERE cm.case_id <> c.id";
    let rows = if all {
        query(format!("{IN_THREAD} ORDER BY cm.case_id, c.id"))
            .fetch_all(&mut *conn)
            .await
            .map_err(err("read related cases"))?
    } else {
        let ids: Vec<i64> = cases.iter().map(|c| c.view.id.0).collect();
        let mut rows =
            select_in(conn, &format!("{IN_THREAD} AND cm.case_id IN"), "", &ids, "read related cases").await?;
        rows.extend(select_in(conn, &format!("{IN_THREAD} AND c.id IN"), "", &ids, "read related cases").await?);
        rows
    };
    let mut in_thread = Vec::with_capacity(rows.len());
    for r in rows {
        in_thread.push((
            CaseId(r.try_get(0).map_err(err("read related cases"))?),
            CaseId(r.try_get(1).map_err(err("read related cases"))?),
        ));
    }
    let ours: Vec<Relatable> = cases.iter().map(|c| Relatable::from(&c.view)).collect();
    let others: Vec<Relatable> = if all {
        ours.clone()
    } else {
        // Of the cases that may be related, only what relates them: a
        // commit or a patch may be in a hundred cases.
        let prefixes: BTreeSet<String> =
            cases.iter().filter_map(|c| c.view.facts.commit.as_deref().and_then(commit_prefix)).collect();
        let patches: BTreeSet<&str> = cases.iter().filter_map(|c| c.view.facts.patch_key.as_deref()).collect();
        let prefixes: Vec<&str> = prefixes.iter().map(String::as_str).collect();
        let patches: Vec<&str> = patches.into_iter().collect();
        let select = "SELECT c.id, c.commit_sha, c.patch_key FROM cases c WHERE";
        let mut rows =
            select_in(conn, &format!("{select} c.commit_prefix IN"), "", &prefixes, "read related cases").await?;
        rows.extend(select_in(conn, &format!("{select} c.patch_key IN"), "", &patches, "read related cases").await?);
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            out.push(Relatable {
                id: CaseId(r.try_get("id").map_err(err("read related cases"))?),
                commit: r.try_get("commit_sha").map_err(err("read related cases"))?,
                patch_key: r.try_get("patch_key").map_err(err("read related cases"))?,
            });
        }
        out
    };
    let related = crate::case::related(&ours, &others, &in_thread);
    for (c, rel) in cases.iter_mut().zip(related) {
        c.related = rel;
    }
    Ok(())
}
