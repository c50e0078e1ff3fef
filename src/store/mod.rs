//! The store: messages, cases, events, related-case links and report facts
//! in SQLite, through sqlx's runtime query API. The only module with SQL.
//!
//! The schema is a list of numbered migrations (`migrations/NNNN_*.sql`)
//! embedded at build time and applied at open, each in its own
//! transaction, recorded in `schema_migrations`. Files are opened in WAL
//! mode. The engine writes through a [`Tx`]; the read side uses the
//! `Store` methods. Domain types are mapped to rows by hand in [`rows`].
//! The SQL stays portable (see the migration's header).

mod filter;
pub mod rows;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqliteRow, SqliteSynchronous};
use sqlx::{AssertSqlSafe, Connection, Row};

use crate::model::MessageId;
use crate::thread::{CaseFacts, CaseId, CaseKind, CaseState, CaseView, Event, EventKind, Progress, Relation, Strategy};
use rows::MessageRow;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the store at {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: sqlx::Error,
    },
    #[error("cannot migrate the store to schema {version} ({name}): {source}")]
    Migrate {
        version: i64,
        name: &'static str,
        #[source]
        source: sqlx::Error,
    },
    #[error("the store has schema {found}, newer than this lkpbot knows ({known}); upgrade lkpbot")]
    TooNew { found: i64, known: i64 },
    #[error("store: cannot {what}: {source}")]
    Query {
        what: &'static str,
        #[source]
        source: sqlx::Error,
    },
    #[error("store holds a value this lkpbot cannot read: {0}")]
    Corrupt(String),
}

fn err(what: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
    move |source| StoreError::Query { what, source }
}

struct Migration {
    version: i64,
    name: &'static str,
    sql: &'static str,
}

const MIGRATIONS: &[Migration] =
    &[Migration { version: 1, name: "init", sql: include_str!("../../migrations/0001_init.sql") }];

/// The newest schema version this build knows.
pub fn schema_version() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// Row count and a content checksum of one table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableStat {
    pub table: &'static str,
    pub rows: i64,
    pub checksum: u64,
}

/// Every table the migrations create, in a fixed order.
const TABLES: &[&str] = &[
    "messages",
    "raw_messages",
    "pending_refs",
    "cases",
    "case_messages",
    "events",
    "related_cases",
    "reports",
    "retests",
    "build_summaries",
];

/// A message of a case, for the read side.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseMessage {
    pub message_id: MessageId,
    pub strategy: Strategy,
    pub kind: String,
    pub subject: String,
    pub from: Option<String>,
    pub date: Option<i64>,
}

/// A case with everything the read side shows.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseRecord {
    pub view: CaseView,
    pub updated_at: i64,
    pub verdict: Option<crate::model::Verdict>,
    pub fix_commit: Option<String>,
    pub fix_message_id: Option<MessageId>,
    /// The report's facts as extracted (JSON), when stored.
    pub report_facts: Option<serde_json::Value>,
    /// Empty unless asked for.
    pub messages: Vec<CaseMessage>,
    pub events: Vec<Event>,
    pub related: Vec<(CaseId, Relation)>,
}

/// Which cases to list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseFilter {
    Open,
    All,
    State(CaseState),
}

pub struct Store {
    conn: SqliteConnection,
    pending: PendingFilters,
    /// `PRAGMA data_version` when the filters were last filled; `None`
    /// before the first write transaction (reading needs no filters).
    pending_version: Option<i64>,
}

/// What `pending_refs` holds, summarised in memory so that the lookups of
/// every batch (which of these ids wait, which are waited for) mostly
/// need no query: in a list archive almost no message is either.
#[derive(Default)]
struct PendingFilters {
    /// `ancestor_id`s.
    awaited: filter::Filter,
    /// `message_id`s.
    waiting: filter::Filter,
}

impl Store {
    /// Opens (creating if needed) the store file and brings its schema up
    /// to date.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        let opts = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // WAL with NORMAL survives a crash of the process; a power
            // loss may lose the last transactions, which a re-fetch redoes.
            .synchronous(SqliteSynchronous::Normal)
            // Checkpoint (and fsync) every 64 MiB of WAL rather than every
            // 4 MiB: an archive import writes hundreds of MiB.
            .pragma("wal_autocheckpoint", "16384")
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let conn = SqliteConnection::connect_with(&opts)
            .await
            .map_err(|source| StoreError::Open { path: path.to_path_buf(), source })?;
        Store::ready(conn).await
    }

    /// A private store in memory, for tests and dry runs.
    pub async fn open_in_memory() -> Result<Store, StoreError> {
        let opts = SqliteConnectOptions::from_str("sqlite::memory:")
            .map_err(|source| StoreError::Open { path: ":memory:".into(), source })?
            .foreign_keys(true);
        let conn = SqliteConnection::connect_with(&opts)
            .await
            .map_err(|source| StoreError::Open { path: ":memory:".into(), source })?;
        Store::ready(conn).await
    }

    async fn ready(conn: SqliteConnection) -> Result<Store, StoreError> {
        let mut s = Store { conn, pending: PendingFilters::default(), pending_version: None };
        s.migrate().await?;
        Ok(s)
    }

    async fn migrate(&mut self) -> Result<(), StoreError> {
        sqlx::raw_sql("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL)")
            .execute(&mut self.conn)
            .await
            .map_err(err("create the migrations table"))?;
        let found: i64 = sqlx::query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")
            .fetch_one(&mut self.conn)
            .await
            .map_err(err("read the schema version"))?
            .try_get(0)
            .map_err(err("read the schema version"))?;
        if found > schema_version() {
            return Err(StoreError::TooNew { found, known: schema_version() });
        }
        for m in MIGRATIONS.iter().filter(|m| m.version > found) {
            let fail = |source| StoreError::Migrate { version: m.version, name: m.name, source };
            let mut tx = self.conn.begin().await.map_err(fail)?;
            sqlx::raw_sql(m.sql).execute(&mut *tx).await.map_err(fail)?;
            sqlx::query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)")
                .bind(m.version)
                .bind(m.name)
                .execute(&mut *tx)
                .await
                .map_err(fail)?;
            tx.commit().await.map_err(fail)?;
        }
        Ok(())
    }

    /// Starts a write transaction; nothing is visible to others until
    /// [`Tx::commit`].
    ///
    /// The write lock is taken at once (`BEGIN IMMEDIATE`), so no other
    /// process commits while the transaction runs. If one did since the
    /// last transaction (another `lkpbot` on the same file), the pending
    /// filters are filled again from the table: they must never miss an
    /// id that is in it.
    pub async fn begin(&mut self) -> Result<Tx<'_>, StoreError> {
        let mut tx = self.conn.begin_with("BEGIN IMMEDIATE").await.map_err(err("begin a transaction"))?;
        let version: i64 = sqlx::query("PRAGMA data_version")
            .fetch_one(&mut *tx)
            .await
            .and_then(|r| r.try_get(0))
            .map_err(err("read the data version"))?;
        if self.pending_version != Some(version) {
            self.pending = load_pending(&mut tx).await?;
            self.pending_version = Some(version);
        }
        Ok(Tx { tx, pending: &mut self.pending })
    }

    /// Row counts and content checksums of every table, to show that a run
    /// changed nothing.
    pub async fn table_stats(&mut self) -> Result<Vec<TableStat>, StoreError> {
        let mut out = Vec::new();
        for &table in TABLES {
            let sql = format!("SELECT * FROM {table} ORDER BY 1, 2");
            let rows = sqlx::query(AssertSqlSafe(sql)).fetch_all(&mut self.conn).await.map_err(err("read a table"))?;
            let mut h = Fnv::new();
            for row in &rows {
                for i in 0..row.len() {
                    if let Ok(v) = row.try_get::<Option<String>, _>(i) {
                        h.write(format!("{v:?}").as_bytes());
                    } else if let Ok(v) = row.try_get::<Option<i64>, _>(i) {
                        h.write(format!("{v:?}").as_bytes());
                    } else if let Ok(v) = row.try_get::<Option<f64>, _>(i) {
                        h.write(format!("{v:?}").as_bytes());
                    } else if let Ok(v) = row.try_get::<Option<Vec<u8>>, _>(i) {
                        h.write(&v.unwrap_or_default());
                    } else {
                        return Err(StoreError::Corrupt(format!("{table}: column {i} has an unexpected type")));
                    }
                    h.write(b"\x1f");
                }
                h.write(b"\x1e");
            }
            out.push(TableStat { table, rows: i64::try_from(rows.len()).unwrap_or(i64::MAX), checksum: h.0 });
        }
        Ok(out)
    }

    /// The bytes kept for a message, if any.
    pub async fn raw_message(&mut self, id: &MessageId) -> Result<Option<Vec<u8>>, StoreError> {
        let mut tx = self.begin().await?;
        let raw = tx.raw(id).await?;
        tx.commit().await?;
        Ok(raw)
    }

    /// The cases `filter` selects, by id; with `detail`, each with its
    /// messages, events and related cases.
    pub async fn cases(&mut self, filter: CaseFilter, detail: bool) -> Result<Vec<CaseRecord>, StoreError> {
        let base = format!(
            "SELECT {}, c.updated_at, c.verdict, c.fix_commit, c.fix_message_id, r.facts \
             FROM cases c LEFT JOIN reports r ON r.message_id = c.report_message_id",
            rows::CASE_COLUMNS
        );
        let rows = match filter {
            CaseFilter::All => sqlx::query(AssertSqlSafe(format!("{base} ORDER BY c.id")))
                .fetch_all(&mut self.conn)
                .await
                .map_err(err("list cases"))?,
            CaseFilter::State(s) => sqlx::query(AssertSqlSafe(format!("{base} WHERE c.state = $1 ORDER BY c.id")))
                .bind(s.as_str())
                .fetch_all(&mut self.conn)
                .await
                .map_err(err("list cases"))?,
            CaseFilter::Open => {
                let open: Vec<&str> = CaseState::ALL.iter().filter(|s| s.is_open()).map(|s| s.as_str()).collect();
                let sql = format!("{base} WHERE c.state IN ({}) ORDER BY c.id", placeholders(open.len()));
                let mut q = sqlx::query(AssertSqlSafe(sql));
                for s in open {
                    q = q.bind(s);
                }
                q.fetch_all(&mut self.conn).await.map_err(err("list cases"))?
            }
        };
        let mut out: Vec<CaseRecord> = rows.iter().map(case_record).collect::<Result<_, _>>()?;
        if detail && !out.is_empty() {
            self.add_details(&mut out).await?;
        }
        Ok(out)
    }

    /// One case with its messages, events and related cases.
    pub async fn case(&mut self, id: CaseId) -> Result<Option<CaseRecord>, StoreError> {
        let sql = format!(
            "SELECT {}, c.updated_at, c.verdict, c.fix_commit, c.fix_message_id, r.facts \
             FROM cases c LEFT JOIN reports r ON r.message_id = c.report_message_id WHERE c.id = $1",
            rows::CASE_COLUMNS
        );
        let row = sqlx::query(AssertSqlSafe(sql))
            .bind(id.0)
            .fetch_optional(&mut self.conn)
            .await
            .map_err(err("read a case"))?;
        let Some(row) = row else { return Ok(None) };
        let mut out = vec![case_record(&row)?];
        self.add_details(&mut out).await?;
        Ok(out.pop())
    }

    async fn add_details(&mut self, cases: &mut [CaseRecord]) -> Result<(), StoreError> {
        let index: HashMap<CaseId, usize> = cases.iter().enumerate().map(|(i, c)| (c.view.id, i)).collect();
        let one = cases.len() == 1;
        let only = cases.first().map_or(0, |c| c.view.id.0);
        // One case: filter in SQL; many: read each table once.
        let filter = |col: &str| if one { format!("WHERE {col} = $1") } else { String::new() };
        let sql = format!(
            "SELECT cm.case_id, cm.message_id, cm.strategy, m.kind, m.subject, m.from_addr, m.date \
             FROM case_messages cm JOIN messages m ON m.message_id = cm.message_id {} \
             ORDER BY cm.case_id, m.date, cm.message_id",
            filter("cm.case_id")
        );
        let mut q = sqlx::query(AssertSqlSafe(sql));
        if one {
            q = q.bind(only);
        }
        for row in q.fetch_all(&mut self.conn).await.map_err(err("read case messages"))? {
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
            });
        }
        let sql = format!(
            "SELECT {} FROM events e {} ORDER BY e.case_id, e.at, e.id",
            rows::EVENT_COLUMNS,
            filter("e.case_id")
        );
        let mut q = sqlx::query(AssertSqlSafe(sql));
        if one {
            q = q.bind(only);
        }
        for row in q.fetch_all(&mut self.conn).await.map_err(err("read events"))? {
            let (case, e) = rows::event(&row)?;
            if let Some(&i) = index.get(&case) {
                cases[i].events.push(e);
            }
        }
        let sql = if one {
            "SELECT case_id, other_case_id, relation FROM related_cases WHERE case_id = $1 OR other_case_id = $1 \
             ORDER BY case_id, other_case_id"
        } else {
            "SELECT case_id, other_case_id, relation FROM related_cases ORDER BY case_id, other_case_id"
        };
        let mut q = sqlx::query(sql);
        if one {
            q = q.bind(only);
        }
        for row in q.fetch_all(&mut self.conn).await.map_err(err("read related cases"))? {
            let a = CaseId(row.try_get(0).map_err(err("read related cases"))?);
            let b = CaseId(row.try_get(1).map_err(err("read related cases"))?);
            let rel: String = row.try_get(2).map_err(err("read related cases"))?;
            let rel = rows::relation(&rel)?;
            if let Some(&i) = index.get(&a) {
                cases[i].related.push((b, rel));
            }
            if let Some(&i) = index.get(&b) {
                cases[i].related.push((a, rel));
            }
        }
        for c in cases.iter_mut() {
            c.related.sort_by_key(|(id, _)| *id);
        }
        Ok(())
    }
}

fn case_record(row: &SqliteRow) -> Result<CaseRecord, StoreError> {
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
        messages: Vec::new(),
        events: Vec::new(),
        related: Vec::new(),
    })
}

/// FNV-1a, for table checksums (stable across runs and builds).
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// `n` anonymous positional placeholders, for the statements built over
/// many values (the rest of the SQL numbers them, `$1`). SQLite resolves a
/// numbered `$N` by walking the statement's parameter list on every bind,
/// which is quadratic in a 1,500-value insert; `?` is bound by position.
/// (A PostgreSQL backend would number them here.)
fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// Statements over many values are sent in chunks of these sizes, so the
/// statement cache sees at most four shapes of each.
const CHUNK_SIZES: [usize; 4] = [256, 32, 4, 1];

/// The pending filters, filled from the table (streaming its rows).
async fn load_pending(conn: &mut SqliteConnection) -> Result<PendingFilters, StoreError> {
    use futures_util::TryStreamExt;
    let mut pending = PendingFilters::default();
    let mut rows = sqlx::query("SELECT ancestor_id, message_id FROM pending_refs").fetch(conn);
    while let Some(row) = rows.try_next().await.map_err(err("read pending references"))? {
        let ancestor: &str = row.try_get(0).map_err(err("read pending references"))?;
        let message: &str = row.try_get(1).map_err(err("read pending references"))?;
        pending.awaited.insert(ancestor);
        pending.waiting.insert(message);
    }
    Ok(pending)
}

/// The lengths of the chunks `n` values are sent in.
fn chunk_lens(mut n: usize) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        let size = CHUNK_SIZES.iter().copied().find(|&s| s <= n)?;
        n -= size;
        Some(size)
    })
}

fn chunks<T>(items: &[T]) -> impl Iterator<Item = &[T]> {
    let mut rest = items;
    chunk_lens(items.len()).map(move |size| {
        let (head, tail) = rest.split_at(size);
        rest = tail;
        head
    })
}

/// `INSERT INTO {into} VALUES (?, ...), ... {tail}` for `rows` rows of
/// `cols` values.
fn insert_sql(into: &str, cols: usize, rows: usize, tail: &str) -> String {
    let row = format!("({})", placeholders(cols));
    format!("INSERT INTO {into} VALUES {} {tail}", vec![row.as_str(); rows].join(", "))
}

/// A write transaction: what the engine does for a batch of messages.
pub struct Tx<'c> {
    tx: sqlx::Transaction<'c, sqlx::Sqlite>,
    /// Kept a superset of the table's ids: added to before each insert,
    /// never cleared (a rolled back insert leaves only a false "maybe").
    pending: &'c mut PendingFilters,
}

impl Tx<'_> {
    pub async fn commit(self) -> Result<(), StoreError> {
        self.tx.commit().await.map_err(err("commit"))
    }

    /// Rows of `{select} ($1, ...) {suffix}`, the values sent in chunks.
    async fn select_in<'v, V>(
        &mut self,
        select: &str,
        suffix: &str,
        values: &'v [V],
        what: &'static str,
    ) -> Result<Vec<SqliteRow>, StoreError>
    where
        V: sqlx::Encode<'v, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite> + Copy + Send + Sync + 'v,
    {
        let mut out = Vec::new();
        for chunk in chunks(values) {
            let sql = format!("{select} ({}){suffix}", placeholders(chunk.len()));
            let mut q = sqlx::query(AssertSqlSafe(sql));
            for v in chunk {
                q = q.bind(*v);
            }
            out.extend(q.fetch_all(&mut *self.tx).await.map_err(err(what))?);
        }
        Ok(out)
    }

    /// Which of `ids` are known messages, with the cases each belongs to.
    pub async fn known(&mut self, ids: &[&str]) -> Result<HashMap<MessageId, Vec<CaseId>>, StoreError> {
        let rows = self
            .select_in(
                "SELECT m.message_id, cm.case_id FROM messages m \
                 LEFT JOIN case_messages cm ON cm.message_id = m.message_id WHERE m.message_id IN",
                "",
                ids,
                "look up messages",
            )
            .await?;
        let mut out: HashMap<MessageId, Vec<CaseId>> = HashMap::new();
        for row in rows {
            let id: String = row.try_get(0).map_err(err("look up messages"))?;
            let case: Option<i64> = row.try_get(1).map_err(err("look up messages"))?;
            let cases = out.entry(rows::message_id(&id)?).or_default();
            if let Some(c) = case {
                cases.push(CaseId(c));
            }
        }
        Ok(out)
    }

    /// Which of `ids` wait for an ancestor.
    pub async fn waiting(&mut self, ids: &[&str]) -> Result<HashSet<MessageId>, StoreError> {
        self.pending_in("message_id", |p| &p.waiting, ids).await
    }

    /// Which of `ids` some stored message waits for.
    pub async fn awaited(&mut self, ids: &[&str]) -> Result<HashSet<MessageId>, StoreError> {
        self.pending_in("ancestor_id", |p| &p.awaited, ids).await
    }

    /// Which of `ids` are in `column` of `pending_refs`, asking only for
    /// those its `filter` cannot rule out.
    async fn pending_in(
        &mut self,
        column: &str,
        filter: fn(&PendingFilters) -> &filter::Filter,
        ids: &[&str],
    ) -> Result<HashSet<MessageId>, StoreError> {
        let maybe: Vec<&str> = ids.iter().copied().filter(|id| filter(self.pending).may_contain(id)).collect();
        if maybe.is_empty() {
            return Ok(HashSet::new());
        }
        let select = format!("SELECT DISTINCT {column} FROM pending_refs WHERE {column} IN");
        let rows = self.select_in(&select, "", &maybe, "look up pending references").await?;
        ids_of(&rows)
    }

    /// Inserts message rows (ignoring ones already there); returns how many
    /// were new. Takes the rows: their strings are handed to SQLite, not
    /// copied.
    pub async fn insert_messages(&mut self, msgs: Vec<MessageRow>) -> Result<u64, StoreError> {
        let mut n = 0;
        let mut rest = msgs.into_iter();
        for len in chunk_lens(rest.len()) {
            let sql = insert_sql(
                "messages (message_id, kind, subject, from_addr, date, problems)",
                6,
                len,
                "ON CONFLICT (message_id) DO NOTHING",
            );
            let mut q = sqlx::query(AssertSqlSafe(sql));
            for m in rest.by_ref().take(len) {
                q = q.bind(m.message_id).bind(m.kind).bind(m.subject).bind(m.from_addr).bind(m.date).bind(m.problems);
            }
            n += q.execute(&mut *self.tx).await.map_err(err("insert messages"))?.rows_affected();
        }
        Ok(n)
    }

    /// Keeps the bytes of messages (ignoring ones kept already).
    pub async fn insert_raw(&mut self, raws: &[(&MessageId, &[u8])]) -> Result<(), StoreError> {
        for chunk in chunks(raws) {
            let sql =
                insert_sql("raw_messages (message_id, bytes)", 2, chunk.len(), "ON CONFLICT (message_id) DO NOTHING");
            let mut q = sqlx::query(AssertSqlSafe(sql));
            for (id, bytes) in chunk {
                q = q.bind(id.as_str()).bind(*bytes);
            }
            q.execute(&mut *self.tx).await.map_err(err("store raw bytes"))?;
        }
        Ok(())
    }

    pub async fn raw(&mut self, id: &MessageId) -> Result<Option<Vec<u8>>, StoreError> {
        let row = sqlx::query("SELECT bytes FROM raw_messages WHERE message_id = $1")
            .bind(id.as_str())
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(err("read raw bytes"))?;
        row.map(|r| r.try_get(0)).transpose().map_err(err("read raw bytes"))
    }

    /// Drops the bytes of a message that is in no case and waits for
    /// nothing.
    pub async fn drop_raw_if_unneeded(&mut self, id: &MessageId) -> Result<(), StoreError> {
        sqlx::query(
            "DELETE FROM raw_messages WHERE message_id = $1 \
             AND NOT EXISTS (SELECT 1 FROM case_messages WHERE message_id = $1) \
             AND NOT EXISTS (SELECT 1 FROM pending_refs WHERE message_id = $1)",
        )
        .bind(id.as_str())
        .execute(&mut *self.tx)
        .await
        .map_err(err("drop raw bytes"))?;
        Ok(())
    }

    /// Records that each `(message, ancestor)` message waits for its
    /// ancestor.
    pub async fn add_pending(&mut self, waits: &[(&MessageId, &MessageId)]) -> Result<(), StoreError> {
        for (message, ancestor) in waits {
            self.pending.waiting.insert(message.as_str());
            self.pending.awaited.insert(ancestor.as_str());
        }
        for chunk in chunks(waits) {
            let sql = insert_sql(
                "pending_refs (message_id, ancestor_id)",
                2,
                chunk.len(),
                "ON CONFLICT (ancestor_id, message_id) DO NOTHING",
            );
            let mut q = sqlx::query(AssertSqlSafe(sql));
            for (message, ancestor) in chunk {
                q = q.bind(message.as_str()).bind(ancestor.as_str());
            }
            q.execute(&mut *self.tx).await.map_err(err("record pending references"))?;
        }
        Ok(())
    }

    /// The messages that waited for `ancestor`, oldest first; they wait
    /// for it no more.
    pub async fn take_pending(&mut self, ancestor: &MessageId) -> Result<Vec<MessageId>, StoreError> {
        if !self.pending.awaited.may_contain(ancestor.as_str()) {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(
            "SELECT p.message_id FROM pending_refs p JOIN messages m ON m.message_id = p.message_id \
             WHERE p.ancestor_id = $1 ORDER BY m.date, p.message_id",
        )
        .bind(ancestor.as_str())
        .fetch_all(&mut *self.tx)
        .await
        .map_err(err("read pending references"))?;
        sqlx::query("DELETE FROM pending_refs WHERE ancestor_id = $1")
            .bind(ancestor.as_str())
            .execute(&mut *self.tx)
            .await
            .map_err(err("delete pending references"))?;
        rows.iter()
            .map(|r| {
                r.try_get::<String, _>(0).map_err(err("read pending references")).and_then(|s| rows::message_id(&s))
            })
            .collect()
    }

    pub async fn is_waiting(&mut self, id: &MessageId) -> Result<bool, StoreError> {
        if !self.pending.waiting.may_contain(id.as_str()) {
            return Ok(false);
        }
        let row = sqlx::query("SELECT 1 FROM pending_refs WHERE message_id = $1 LIMIT 1")
            .bind(id.as_str())
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(err("look up pending references"))?;
        Ok(row.is_some())
    }

    async fn case_views_where<'v, V>(
        &mut self,
        condition: &str,
        suffix: &str,
        values: &'v [V],
        what: &'static str,
    ) -> Result<Vec<CaseView>, StoreError>
    where
        V: sqlx::Encode<'v, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite> + Copy + Send + Sync + 'v,
    {
        let select = format!("SELECT {} FROM cases c WHERE {condition} IN", rows::CASE_COLUMNS);
        let rows = self.select_in(&select, suffix, values, what).await?;
        let mut out: Vec<CaseView> = rows.iter().map(rows::case_view).collect::<Result<_, _>>()?;
        out.sort_by_key(|v| v.id);
        out.dedup_by_key(|v| v.id);
        Ok(out)
    }

    pub async fn case_views(&mut self, ids: &[CaseId]) -> Result<Vec<CaseView>, StoreError> {
        let ids: Vec<i64> = ids.iter().map(|i| i.0).collect();
        self.case_views_where("c.id", "", &ids, "read cases").await
    }

    /// Cases holding any of the messages `ids`.
    pub async fn cases_of_messages(&mut self, ids: &[MessageId]) -> Result<Vec<CaseView>, StoreError> {
        let refs: Vec<&str> = ids.iter().map(MessageId::as_str).collect();
        self.case_views_where(
            "c.id IN (SELECT case_id FROM case_messages WHERE message_id",
            ")",
            &refs,
            "find cases by message",
        )
        .await
    }

    pub async fn cases_by_subject_key(&mut self, key: &str) -> Result<Vec<CaseView>, StoreError> {
        self.case_views_where("c.subject_key", "", &[key], "find cases by subject").await
    }

    pub async fn cases_by_patch_key(&mut self, key: &str) -> Result<Vec<CaseView>, StoreError> {
        self.case_views_where("c.patch_key", "", &[key], "find cases by patch").await
    }

    /// Cases whose commit shares the seven-digit prefix of any of `commits`.
    pub async fn cases_by_commit(&mut self, commits: &[String]) -> Result<Vec<CaseView>, StoreError> {
        let prefixes: Vec<String> = commits.iter().filter_map(|c| crate::thread::keys::commit_prefix(c)).collect();
        let refs: Vec<&str> = prefixes.iter().map(String::as_str).collect();
        self.case_views_where("c.commit_prefix", "", &refs, "find cases by commit").await
    }

    /// Opens a case; its report message must be stored already.
    pub async fn open_case(&mut self, f: &CaseFacts) -> Result<CaseId, StoreError> {
        let state = f.kind.initial_state();
        let row = sqlx::query(
            "INSERT INTO cases (kind, state, title, report_message_id, opened_at, updated_at, commit_sha, \
             commit_prefix, commit_subject, tree, branch, testcase, metric, change_pct, direction, signature, \
             subject_key, patch_key) \
             VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING id",
        )
        .bind(f.kind.as_str())
        .bind(state.as_str())
        .bind(f.title.as_str())
        .bind(f.report_message_id.as_str())
        .bind(f.opened_at)
        .bind(f.commit.as_deref())
        .bind(f.commit.as_deref().and_then(crate::thread::keys::commit_prefix))
        .bind(f.commit_subject.as_deref())
        .bind(f.tree.as_deref())
        .bind(f.branch.as_deref())
        .bind(f.testcase.as_deref())
        .bind(f.metric.as_deref())
        .bind(f.change_pct)
        .bind(f.direction.map(rows::direction_str))
        .bind(f.signature.as_deref())
        .bind(f.subject_key.as_deref())
        .bind(f.patch_key.as_deref())
        .fetch_one(&mut *self.tx)
        .await
        .map_err(err("open a case"))?;
        Ok(CaseId(row.try_get(0).map_err(err("open a case"))?))
    }

    /// Puts a message in a case; false when it was there already.
    pub async fn attach(&mut self, case: CaseId, message: &MessageId, strategy: Strategy) -> Result<bool, StoreError> {
        let r = sqlx::query(
            "INSERT INTO case_messages (case_id, message_id, strategy) VALUES ($1, $2, $3) \
             ON CONFLICT (case_id, message_id) DO NOTHING",
        )
        .bind(case.0)
        .bind(message.as_str())
        .bind(strategy.as_str())
        .execute(&mut *self.tx)
        .await
        .map_err(err("attach a message to a case"))?;
        Ok(r.rows_affected() > 0)
    }

    pub async fn add_events(&mut self, case: CaseId, events: &[Event]) -> Result<(), StoreError> {
        for e in events {
            sqlx::query(
                "INSERT INTO events (case_id, at, kind, message_id, verdict, fix_commit, note) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(case.0)
            .bind(e.at)
            .bind(e.kind.as_str())
            .bind(e.message_id.as_ref().map(MessageId::as_str))
            .bind(e.verdict.map(|v| v.as_str()))
            .bind(e.fix_commit.as_deref())
            .bind(e.note.as_deref())
            .execute(&mut *self.tx)
            .await
            .map_err(err("record an event"))?;
        }
        Ok(())
    }

    /// A case's events in the order they were recorded.
    pub async fn events(&mut self, case: CaseId) -> Result<Vec<Event>, StoreError> {
        let sql = format!("SELECT {} FROM events e WHERE e.case_id = $1 ORDER BY e.id", rows::EVENT_COLUMNS);
        let rows =
            sqlx::query(AssertSqlSafe(sql)).bind(case.0).fetch_all(&mut *self.tx).await.map_err(err("read events"))?;
        rows.iter().map(|r| rows::event(r).map(|(_, e)| e)).collect()
    }

    /// Replaces the stale marks of a case with the events at `times`;
    /// false when they were those already.
    pub async fn set_stale_marks(&mut self, case: CaseId, times: &[i64]) -> Result<bool, StoreError> {
        let rows = sqlx::query("SELECT at FROM events WHERE case_id = $1 AND kind = $2 ORDER BY at")
            .bind(case.0)
            .bind(EventKind::Stale.as_str())
            .fetch_all(&mut *self.tx)
            .await
            .map_err(err("read stale marks"))?;
        let have: Vec<i64> =
            rows.iter().map(|r| r.try_get(0)).collect::<Result<_, _>>().map_err(err("read stale marks"))?;
        if have == times {
            return Ok(false);
        }
        sqlx::query("DELETE FROM events WHERE case_id = $1 AND kind = $2")
            .bind(case.0)
            .bind(EventKind::Stale.as_str())
            .execute(&mut *self.tx)
            .await
            .map_err(err("delete stale marks"))?;
        let marks: Vec<Event> = times.iter().map(|&t| Event::new(t, EventKind::Stale, None)).collect();
        self.add_events(case, &marks).await?;
        Ok(true)
    }

    /// Stores the replay of a case's events.
    pub async fn set_progress(&mut self, case: CaseId, p: &Progress, opened_at: i64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE cases SET state = $2, updated_at = $3, verdict = $4, fix_commit = $5, fix_message_id = $6, \
             custom_title = $7 WHERE id = $1",
        )
        .bind(case.0)
        .bind(p.state.as_str())
        .bind(p.last_activity.unwrap_or(opened_at))
        .bind(p.verdict.map(|v| v.as_str()))
        .bind(p.fix_commit.as_deref())
        .bind(p.fix_message_id.as_ref().map(MessageId::as_str))
        .bind(p.title.as_deref())
        .execute(&mut *self.tx)
        .await
        .map_err(err("update a case"))?;
        Ok(())
    }

    /// Cases that are neither closed nor improvements, with their kind and
    /// opening time.
    pub async fn open_cases(&mut self) -> Result<Vec<(CaseId, CaseKind, i64)>, StoreError> {
        let rows = sqlx::query("SELECT id, kind, state, opened_at FROM cases ORDER BY id")
            .fetch_all(&mut *self.tx)
            .await
            .map_err(err("list cases"))?;
        let mut out = Vec::new();
        for r in rows {
            let kind: String = r.try_get(1).map_err(err("list cases"))?;
            let state: String = r.try_get(2).map_err(err("list cases"))?;
            let state = CaseState::parse(&state).ok_or_else(|| StoreError::Corrupt(format!("case state {state:?}")))?;
            if state.is_open() {
                let kind = CaseKind::parse(&kind).ok_or_else(|| StoreError::Corrupt(format!("case kind {kind:?}")))?;
                out.push((
                    CaseId(r.try_get(0).map_err(err("list cases"))?),
                    kind,
                    r.try_get(3).map_err(err("list cases"))?,
                ));
            }
        }
        Ok(out)
    }

    /// Links two cases (once per pair, whichever way round).
    pub async fn link(&mut self, a: CaseId, b: CaseId, relation: Relation) -> Result<(), StoreError> {
        if a == b {
            return Ok(());
        }
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        sqlx::query(
            "INSERT INTO related_cases (case_id, other_case_id, relation) VALUES ($1, $2, $3) \
             ON CONFLICT (case_id, other_case_id) DO NOTHING",
        )
        .bind(lo.0)
        .bind(hi.0)
        .bind(relation.as_str())
        .execute(&mut *self.tx)
        .await
        .map_err(err("link cases"))?;
        Ok(())
    }

    /// A robot report's facts (`facts` is their JSON) and its case.
    pub async fn insert_report(
        &mut self,
        message: &MessageId,
        case: Option<CaseId>,
        kind: &str,
        facts: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO reports (message_id, case_id, kind, facts) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (message_id) DO NOTHING",
        )
        .bind(message.as_str())
        .bind(case.map(|c| c.0))
        .bind(kind)
        .bind(facts)
        .execute(&mut *self.tx)
        .await
        .map_err(err("store report facts"))?;
        Ok(())
    }

    /// One retest table's fix column.
    pub async fn insert_retest(
        &mut self,
        message: &MessageId,
        idx: i64,
        fix_commit: &str,
        metric: &str,
        verdict: Option<crate::model::Verdict>,
        facts: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO retests (message_id, idx, fix_commit, metric, verdict, facts) VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (message_id, idx) DO NOTHING",
        )
        .bind(message.as_str())
        .bind(idx)
        .bind(fix_commit)
        .bind(metric)
        .bind(verdict.map(|v| v.as_str()))
        .bind(facts)
        .execute(&mut *self.tx)
        .await
        .map_err(err("store a retest"))?;
        Ok(())
    }

    /// A branch build summary.
    pub async fn insert_build_summary(
        &mut self,
        message: &MessageId,
        date: Option<i64>,
        s: &crate::classify::build_error::BuildSummary,
        facts: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO build_summaries (message_id, date, status, tree, branch, head, facts) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (message_id) DO NOTHING",
        )
        .bind(message.as_str())
        .bind(date)
        .bind(s.status.as_deref())
        .bind(s.tree.as_deref())
        .bind(s.branch.as_deref())
        .bind(s.head.as_deref())
        .bind(facts)
        .execute(&mut *self.tx)
        .await
        .map_err(err("store a build summary"))?;
        Ok(())
    }
}

fn ids_of(rows: &[SqliteRow]) -> Result<HashSet<MessageId>, StoreError> {
    rows.iter()
        .map(|r| r.try_get::<String, _>(0).map_err(err("read message ids")).and_then(|s| rows::message_id(&s)))
        .collect()
}
