//! The store: messages, cases, events, what threading waits for, report
//! facts and source checkpoints in SQLite or PostgreSQL, through sqlx's
//! runtime query API. The only module with SQL.
//!
//! One set of store code serves both backends: `db` holds the enums over
//! sqlx's connections, the one query type, and each named difference of
//! the two dialects. Split by concern: `open` opens files and servers and
//! applies the migrations (`migrations/NNNN_*.sql` and
//! `migrations/postgres/`, embedded by `sqlx::migrate!`); the write side
//! is a [`Store`] (one connection) handing out [`Tx`]s, whose methods live
//! beside their tables in `messages`, `cases`, `deps` (with the
//! Bloom filter of `filter`) and `facts`; the read side is [`read`]: a
//! read-only connection pool with a `&self` API where every call reads
//! one snapshot. Domain types are mapped to rows by hand in [`rows`]. The
//! SQL stays portable (see the migration's header).
//!
//! Several processes may use one store: a daemon fetching, a user
//! importing or listing, several daemons on one PostgreSQL. Write
//! transactions take the lock at once (SQLite's `BEGIN IMMEDIATE`,
//! PostgreSQL's advisory lock `db::WRITE_LOCK`) and wait for each
//! other; readers never block writers (WAL; MVCC). Nothing cached in
//! memory outlives another connection's commit unless it cannot change
//! (see `deps` and `messages.settled`).

mod cases;
mod copy;
mod db;
mod deps;
mod facts;
mod filter;
mod keys;
mod messages;
mod open;
mod outbox;
pub mod read;
pub mod rows;
mod tasks;
mod trees;

use std::path::{Path, PathBuf};

use db::{AsDb, Conn, DbTx, Row, query};

use crate::case::{CaseFilter, CaseRecord};
use crate::model::Fnv;

pub use cases::{Changed, StaleSweep};
pub use copy::CopyStats;
pub use db::Backend;
pub use keys::Head;
pub use messages::Waiting;
pub use open::{Location, schema_version};
pub use outbox::{Claim, Failure, MailState, NewMail, OutboxMail, RetestRequest, RunRecord};
pub use read::Reader;
pub use trees::TreeKeys;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No store file where one was expected (reading never creates one).
    #[error("no store at {path} (import mail with `lkpbot ingest` first, or give --db)")]
    Missing { path: PathBuf },
    #[error("cannot open the store at {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The PostgreSQL server did not answer (or refused the login).
    #[error("cannot reach the store's PostgreSQL server at {at}: {source}")]
    Unreachable {
        at: String,
        #[source]
        source: sqlx::Error,
    },
    /// `store copy` into a store that holds something already.
    #[error("the store at {0} is not empty: copy only into an empty store")]
    NotEmpty(String),
    #[error("cannot open the store at {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: sqlx::Error,
    },
    #[error("cannot bring the store at {path} up to date: {source}")]
    Migrate {
        path: PathBuf,
        #[source]
        source: sqlx::migrate::MigrateError,
    },
    #[error("the store at {path} has schema {found}, newer than this lkpbot knows ({known}); upgrade lkpbot")]
    TooNew { path: PathBuf, found: i64, known: i64 },
    #[error("cannot {what}: {source}")]
    Query {
        what: &'static str,
        #[source]
        source: sqlx::Error,
    },
    #[error("the store holds a value this lkpbot cannot read: {0}")]
    Corrupt(String),
}

fn err(what: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
    move |source| StoreError::Query { what, source }
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
    "thread_deps",
    "cases",
    "case_messages",
    "events",
    "reports",
    "retests",
    "build_summaries",
    "checkpoints",
    "outbox",
    "retest_requests",
    "subscriptions",
    "removed_messages",
    "message_keys",
];

/// The write side: one connection, one transaction at a time.
pub struct Store {
    conn: Conn,
    path: PathBuf,
    deps: deps::DepFilter,
    /// How to connect again when the server went away (PostgreSQL).
    again: Option<open::Reconnect>,
    /// Whether mail waiting on keys the open added may have to be
    /// threaded again (`tasks`).
    rethread: bool,
}

impl Store {
    /// Opens (creating if needed) the store file and brings its schema up
    /// to date. Safe when several processes open a new file at once.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        let conn = Conn::Sqlite(open::writer(path).await?);
        let mut store =
            Store { conn, path: path.to_path_buf(), deps: deps::DepFilter::default(), again: None, rethread: false };
        store.run_tasks().await?;
        Ok(store)
    }

    /// Opens the store at `at`: a SQLite file (as [`Store::open`]) or a
    /// PostgreSQL database, whose schema is brought up to date.
    pub async fn connect(at: &Location) -> Result<Store, StoreError> {
        match at {
            Location::Sqlite(path) => Store::open(path).await,
            Location::Postgres(pg) => {
                let (conn, again) = open::pg_writer(pg).await?;
                let mut store = Store {
                    conn: Conn::Pg(conn),
                    path: PathBuf::from(pg.to_string()),
                    deps: deps::DepFilter::default(),
                    again: Some(again),
                    rethread: false,
                };
                store.run_tasks().await?;
                Ok(store)
            }
        }
    }

    /// A private store in memory, for tests and dry runs.
    pub async fn open_in_memory() -> Result<Store, StoreError> {
        let conn = Conn::Sqlite(open::in_memory().await?);
        let mut store = Store {
            conn,
            path: PathBuf::from(":memory:"),
            deps: deps::DepFilter::default(),
            again: None,
            rethread: false,
        };
        store.run_tasks().await?;
        Ok(store)
    }

    /// The SQLite file, or the PostgreSQL database's URL without its
    /// password.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn backend(&self) -> Backend {
        self.conn.backend()
    }

    /// Closes the connection. The last connection to close folds the WAL
    /// back into the store file, so a store left alone is one file (which
    /// can be copied, or read from a read-only medium).
    pub async fn close(self) -> Result<(), StoreError> {
        self.conn.close().await.map_err(err("close the store"))
    }

    /// Connects again if the server went away since the last statement
    /// (PostgreSQL only: a restarted or failed-over server), waiting
    /// with backoff until it answers. A write transaction that the lost
    /// connection was in was never committed, so none is half-stored:
    /// the caller writes its batch again.
    pub async fn reconnect_if_lost(&mut self) -> Result<bool, StoreError> {
        let Some(again) = &self.again else { return Ok(false) };
        let Conn::Pg(c) = &mut self.conn else { return Ok(false) };
        if sqlx::Connection::ping(c).await.is_ok() {
            return Ok(false);
        }
        self.conn = Conn::Pg(again.connect_with_backoff().await?);
        // What others committed meanwhile is unknown: read the filter again.
        self.deps = deps::DepFilter::default();
        Ok(true)
    }

    /// Whether another connection may have committed a write since this
    /// one's last write transaction began (true before the first): read
    /// outside any transaction, so asking writes nothing (on PostgreSQL a
    /// write transaction counts `lkpbot_writes` up, which every reader's
    /// cache notices).
    pub async fn others_wrote(&mut self) -> Result<bool, StoreError> {
        let Some(mine) = self.deps.version() else { return Ok(true) };
        let now = db::data_version(&mut self.conn).await.map_err(err("read the data version"))?;
        Ok(now != mine)
    }

    /// Starts a write transaction; nothing is visible to others until
    /// [`Tx::commit`].
    ///
    /// The write lock is taken at once (`BEGIN IMMEDIATE`; PostgreSQL's
    /// advisory lock), so no other process commits a write while the
    /// transaction runs. If one did since the last transaction (another
    /// `lkpbot` on the same store), the dependency filter is filled again
    /// from its table: it must never miss a key that is in it.
    pub async fn begin(&mut self) -> Result<Tx<'_>, StoreError> {
        let mut tx = self.conn.begin_write().await.map_err(err("begin a transaction"))?;
        self.deps.refresh(&mut tx).await?;
        Ok(Tx { tx, deps: &mut self.deps, patch_cases: Default::default() })
    }

    /// Row counts and content checksums of every table, to show that a run
    /// changed nothing.
    pub async fn table_stats(&mut self) -> Result<Vec<TableStat>, StoreError> {
        let mut out = Vec::new();
        for &table in TABLES {
            let sql = format!("SELECT * FROM {table} ORDER BY 1, 2");
            let rows = query(sql).fetch_all(&mut self.conn).await.map_err(err("read a table"))?;
            out.push(TableStat {
                table,
                rows: i64::try_from(rows.len()).unwrap_or(i64::MAX),
                checksum: checksum(table, &rows)?,
            });
        }
        Ok(out)
    }

    /// The bytes kept for a message, if any.
    pub async fn raw_message(&mut self, id: &crate::model::MessageId) -> Result<Option<Vec<u8>>, StoreError> {
        let mut tx = self.begin().await?;
        let raw = tx.raw(id).await?.map(|(bytes, _)| bytes);
        tx.commit().await?;
        Ok(raw)
    }

    /// The cases `filter` selects, read through this connection (for the
    /// engine's callers and tests; the commands read through [`Reader`]).
    pub async fn cases(&mut self, filter: CaseFilter, detail: bool) -> Result<Vec<CaseRecord>, StoreError> {
        let mut tx = self.conn.begin_read().await.map_err(err("begin a read"))?;
        let out = read::load_cases(&mut tx, filter, detail).await?;
        tx.commit().await.map_err(err("end a read"))?;
        Ok(out)
    }

    /// Where a source has got to, as it last checkpointed.
    pub async fn checkpoint(&mut self, source: &str) -> Result<Option<String>, StoreError> {
        messages::checkpoint(&mut self.conn, source).await
    }
}

/// FNV-1a over every value of `rows`, for table checksums (stable across
/// runs and builds).
fn checksum(table: &str, rows: &[Row]) -> Result<u64, StoreError> {
    let mut h = Fnv::default();
    for row in rows {
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
    Ok(h.finish())
}

/// A write transaction: what the engine does for a batch of messages.
/// Its methods are beside their tables: `messages`, `cases`, `deps`,
/// `facts`.
pub struct Tx<'c> {
    tx: DbTx<'c>,
    /// Kept a superset of the dependency table's keys: added to before
    /// each insert, never cleared within a connection's life (a rolled
    /// back insert leaves only a false "maybe").
    deps: &'c mut deps::DepFilter,
    /// The cases of each patch key read in this transaction
    /// ([`Tx::cases_by_patch_key`]), forgotten whenever a case is opened,
    /// deleted or replayed. At an import's end the copies of a later
    /// version of a patch come one after another (same date) and each
    /// reads the same cases.
    patch_cases: std::collections::HashMap<String, Vec<crate::case::CaseView>>,
}

impl Tx<'_> {
    pub async fn commit(self) -> Result<(), StoreError> {
        self.tx.commit().await.map_err(err("commit"))
    }
}

/// Rows of `{select} (?, ...) {suffix}`, the values sent in chunks.
async fn select_in<'v, V>(
    conn: &mut impl AsDb,
    select: &str,
    suffix: &str,
    values: &'v [V],
    what: &'static str,
) -> Result<Vec<Row>, StoreError>
where
    V: Into<db::Arg<'v>> + Copy + Send + Sync + 'v,
{
    select_in_then(conn, select, suffix, values, None, what).await
}

/// [`select_in`] with `last`, when given, bound after the values (to a
/// `?` of `suffix`): the statement's text is then the same whatever
/// `last` is, and is prepared once.
async fn select_in_then<'v, V>(
    conn: &mut impl AsDb,
    select: &str,
    suffix: &str,
    values: &'v [V],
    last: Option<i64>,
    what: &'static str,
) -> Result<Vec<Row>, StoreError>
where
    V: Into<db::Arg<'v>> + Copy + Send + Sync + 'v,
{
    let mut out = Vec::new();
    for chunk in padded(values) {
        let sql = format!("{select} ({}){suffix}", placeholders(chunk.len()));
        let mut q = query(sql);
        for v in chunk {
            q = q.bind(*v);
        }
        if let Some(last) = last {
            q = q.bind(last);
        }
        out.extend(q.fetch_all(&mut *conn).await.map_err(err(what))?);
    }
    Ok(out)
}

/// The Message-IDs (the first column) `select ... IN (values)` finds,
/// each once, in order.
async fn select_message_ids(
    conn: &mut impl AsDb,
    select: &str,
    values: &[&str],
    what: &'static str,
) -> Result<Vec<crate::model::MessageId>, StoreError> {
    let mut out = std::collections::BTreeSet::new();
    for r in select_in(conn, select, "", values, what).await? {
        let id: String = r.try_get(0).map_err(err(what))?;
        out.insert(rows::message_id(&id)?);
    }
    Ok(out.into_iter().collect())
}

/// `n` anonymous positional placeholders, for the statements built over
/// many values (the rest of the SQL numbers them, `$1`). SQLite resolves a
/// numbered `$N` by walking the statement's parameter list on every bind,
/// which is quadratic in a 1,500-value insert; `?` is bound by position.
/// (PostgreSQL gets them numbered: [`db::numbered`].)
fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// Statements over many values carry at most this many.
const CHUNK_MAX: usize = 256;

/// `items` in chunks of at most [`CHUNK_MAX`], each filled up to the next
/// power of two by repeating its last value: one statement per chunk, and
/// at most nine shapes of each statement. For statements where a value
/// twice means what it means once: `IN` lists and inserts that ignore
/// conflicts.
fn padded<T>(items: &[T]) -> impl Iterator<Item = Vec<&T>> {
    items.chunks(CHUNK_MAX).map(|chunk| {
        let mut v: Vec<&T> = chunk.iter().collect();
        if let Some(last) = chunk.last() {
            v.resize(chunk.len().next_power_of_two(), last);
        }
        v
    })
}

/// `(?, ...), ...`: `rows` rows of `cols` values.
fn values(cols: usize, rows: usize) -> String {
    let row = format!("({})", placeholders(cols));
    vec![row.as_str(); rows].join(", ")
}

/// `INSERT INTO {into} VALUES (?, ...), ... {tail}` for `rows` rows of
/// `cols` values.
fn insert_sql(into: &str, cols: usize, rows: usize, tail: &str) -> String {
    format!("INSERT INTO {into} VALUES {} {tail}", values(cols, rows))
}

/// The insert of `rows` rows into `table`, whose rows are keyed by their
/// message's number (`seq`) and unique by `unique`: each row binds a
/// Message-ID, then `cols`. A row naming no stored message inserts
/// nothing; one already there is ignored.
fn insert_numbered_sql(table: &str, cols: &[&str], unique: &str, rows: usize) -> String {
    let names = cols.join(", ");
    let picked: Vec<String> = cols.iter().map(|c| format!("v.{c}")).collect();
    format!(
        "WITH v (message_id, {names}) AS (VALUES {}) INSERT INTO {table} (seq, {names}) \
         SELECT m.seq, {} FROM v JOIN messages m ON m.message_id = v.message_id WHERE true \
         ON CONFLICT ({unique}) DO NOTHING",
        values(cols.len() + 1, rows),
        picked.join(", ")
    )
}
