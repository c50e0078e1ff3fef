//! The two backends under one set of store code: SQLite (one file, the
//! default) and PostgreSQL (a shared server), as small enums over sqlx's
//! own connections, transactions, pools and rows, with one query type
//! that runs on either.
//!
//! The store's SQL is written once, in the dialect both accept: `$N`
//! parameters (or `?` in statements built over many values, which
//! [`numbered`] turns into `$N` for PostgreSQL), `ON CONFLICT ... DO
//! NOTHING`, `RETURNING`, integers as `i64`, booleans bound as `bool`
//! only where compared to a boolean expression. What cannot be shared is
//! named here, one item per difference:
//!
//! - the schema's DDL: `migrations/` (SQLite) and `migrations/postgres/`
//!   (BIGINT, BYTEA, DOUBLE PRECISION, identity columns, `COLLATE "C"`
//!   text), with the same version numbers;
//! - [`DbTx`]'s write transaction: SQLite takes its write lock at once
//!   (`BEGIN IMMEDIATE`), PostgreSQL takes [`WRITE_LOCK`], a
//!   transaction-scoped advisory lock, so writers are serialised on
//!   both and threading's fixpoint sees what it would on one file;
//! - [`DbTx`]'s read snapshot: PostgreSQL reads `REPEATABLE READ`, as
//!   SQLite's read transactions are;
//! - [`write_version`] / [`data_version`]: SQLite's `PRAGMA
//!   data_version`, PostgreSQL's counter row `lkpbot_writes`;
//! - [`table_exists`]: `sqlite_master` or `to_regclass`;
//! - [`identities_past_rows`]: PostgreSQL's identity sequences, after
//!   rows were copied in with their ids;
//! - the JSON functions of one read query (`read::REPORT_FACTS`).
//!
//! The SQLite path runs exactly the statements and bindings it ran
//! before there were two backends: one enum match per call. A SQLite
//! transaction, a write or a read of the read pool ([`pool`]), runs them
//! through SQLite's C API on the caller's own thread rather than through
//! sqlx's worker thread ([`direct`]).

use std::borrow::Cow;

use futures_util::TryStreamExt;
use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgConnection, PgPool, PgRow, Postgres};
use sqlx::sqlite::{Sqlite, SqliteConnection, SqliteRow};
use sqlx::{AssertSqlSafe, ColumnIndex, Connection, Decode, Type};

pub mod checkpoint;
pub mod direct;
pub mod pool;

use direct::Direct;
pub use direct::DirectConn;

/// Which database a store lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The advisory lock every PostgreSQL write transaction takes first
/// (`pg_advisory_xact_lock`), released at its end: PostgreSQL's
/// `BEGIN IMMEDIATE`. The number is "lkpbot" in ASCII.
pub const WRITE_LOCK: i64 = 0x6c6b_7062_6f74;

/// An owned connection.
pub enum Conn {
    /// Its write transactions run on the calling thread ([`direct`]).
    Sqlite(DirectConn),
    Pg(PgConnection),
}

/// A transaction on a connection or from a pool.
pub enum DbTx<'c> {
    Sqlite(sqlx::Transaction<'c, Sqlite>),
    /// A SQLite write transaction, its statements run on the calling
    /// thread (see [`direct`]).
    Direct(Direct<'c>),
    Pg(sqlx::Transaction<'c, Postgres>),
}

/// A pool of connections (the read side).
#[derive(Clone)]
pub enum Pool {
    /// Its read transactions run on the calling thread ([`pool`]).
    Sqlite(pool::ReadPool),
    Pg(PgPool),
}

/// A connection lent by a [`Pool`].
pub enum PoolConn {
    Sqlite(pool::Lent),
    Pg(PoolConnection<Postgres>),
}

/// A connection borrowed from any of the above, for one statement.
pub enum Db<'a> {
    Sqlite(&'a mut SqliteConnection),
    Direct(&'a mut direct::Raw),
    Pg(&'a mut PgConnection),
}

/// What a statement can run on.
pub trait AsDb: Send {
    fn db(&mut self) -> Db<'_>;
}

impl AsDb for Conn {
    fn db(&mut self) -> Db<'_> {
        match self {
            Conn::Sqlite(c) => Db::Sqlite(c.conn()),
            Conn::Pg(c) => Db::Pg(c),
        }
    }
}

impl AsDb for DbTx<'_> {
    fn db(&mut self) -> Db<'_> {
        match self {
            DbTx::Sqlite(t) => Db::Sqlite(t),
            DbTx::Direct(d) => Db::Direct(d.raw()),
            DbTx::Pg(t) => Db::Pg(t),
        }
    }
}

impl AsDb for PoolConn {
    fn db(&mut self) -> Db<'_> {
        match self {
            PoolConn::Sqlite(c) => Db::Sqlite(c.direct().conn()),
            PoolConn::Pg(c) => Db::Pg(c),
        }
    }
}

impl AsDb for Db<'_> {
    fn db(&mut self) -> Db<'_> {
        match self {
            Db::Sqlite(c) => Db::Sqlite(c),
            Db::Direct(r) => Db::Direct(r),
            Db::Pg(c) => Db::Pg(c),
        }
    }
}

impl Conn {
    pub fn backend(&self) -> Backend {
        match self {
            Conn::Sqlite(_) => Backend::Sqlite,
            Conn::Pg(_) => Backend::Postgres,
        }
    }

    /// A write transaction: no other writer commits while it runs (see
    /// [`WRITE_LOCK`]).
    pub async fn begin_write(&mut self) -> Result<DbTx<'_>, sqlx::Error> {
        match self {
            Conn::Sqlite(c) => Ok(DbTx::Direct(c.begin().await?)),
            Conn::Pg(c) => {
                let mut tx = c.begin().await?;
                sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(WRITE_LOCK).execute(&mut *tx).await?;
                Ok(DbTx::Pg(tx))
            }
        }
    }

    /// A read transaction: one snapshot.
    pub async fn begin_read(&mut self) -> Result<DbTx<'_>, sqlx::Error> {
        match self {
            Conn::Sqlite(c) => Ok(DbTx::Sqlite(c.conn().begin().await?)),
            Conn::Pg(c) => Ok(DbTx::Pg(c.begin_with(READ_SNAPSHOT).await?)),
        }
    }

    pub async fn close(self) -> Result<(), sqlx::Error> {
        match self {
            Conn::Sqlite(c) => c.close().await,
            Conn::Pg(c) => c.close().await,
        }
    }
}

/// PostgreSQL's read transaction: one snapshot for every statement, as
/// an SQLite read transaction has.
const READ_SNAPSHOT: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";

impl DbTx<'_> {
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            DbTx::Sqlite(t) => t.commit().await,
            DbTx::Direct(d) => d.commit(),
            DbTx::Pg(t) => t.commit().await,
        }
    }
}

impl Pool {
    pub fn backend(&self) -> Backend {
        match self {
            Pool::Sqlite(_) => Backend::Sqlite,
            Pool::Pg(_) => Backend::Postgres,
        }
    }

    pub async fn acquire(&self) -> Result<PoolConn, sqlx::Error> {
        match self {
            Pool::Sqlite(p) => Ok(PoolConn::Sqlite(p.acquire().await?)),
            Pool::Pg(p) => Ok(PoolConn::Pg(p.acquire().await?)),
        }
    }

    pub async fn close(&self) {
        match self {
            Pool::Sqlite(p) => p.close().await,
            Pool::Pg(p) => p.close().await,
        }
    }
}

impl PoolConn {
    /// A read transaction: one snapshot.
    pub async fn begin_read(&mut self) -> Result<DbTx<'_>, sqlx::Error> {
        match self {
            PoolConn::Sqlite(c) => Ok(DbTx::Direct(c.direct().begin_read().await?)),
            PoolConn::Pg(c) => {
                let c: &mut PgConnection = c;
                Ok(DbTx::Pg(c.begin_with(READ_SNAPSHOT).await?))
            }
        }
    }

    pub fn detach(self) -> Conn {
        match self {
            PoolConn::Sqlite(c) => Conn::Sqlite(c.detach()),
            PoolConn::Pg(c) => Conn::Pg(c.detach()),
        }
    }
}

/// One value bound to a statement. Owned strings and bytes are handed to
/// the driver as they are (not copied), as with sqlx's own `bind`.
pub enum Arg<'q> {
    Int(Option<i64>),
    Real(Option<f64>),
    Bool(Option<bool>),
    Str(Option<&'q str>),
    String(Option<String>),
    Bytes(&'q [u8]),
    Blob(Vec<u8>),
}

macro_rules! arg_from {
    ($($t:ty => $v:ident $(($conv:expr))?),* $(,)?) => {$(
        impl<'q> From<$t> for Arg<'q> {
            fn from(x: $t) -> Arg<'q> {
                Arg::$v(arg_from!(@conv x $(, $conv)?))
            }
        }
    )*};
    (@conv $x:ident) => { $x };
    (@conv $x:ident, $conv:expr) => { $conv($x) };
}

arg_from! {
    i64 => Int(Some),
    Option<i64> => Int,
    f64 => Real(Some),
    Option<f64> => Real,
    bool => Bool(Some),
    Option<bool> => Bool,
    &'q str => Str(Some),
    Option<&'q str> => Str,
    &'q String => Str(|s: &'q String| Some(s.as_str())),
    String => String(Some),
    Option<String> => String,
    &'q [u8] => Bytes,
    &'q Vec<u8> => Bytes(|v: &'q Vec<u8>| v.as_slice()),
    Vec<u8> => Blob,
}

/// A statement and its values, for either backend.
pub struct Query<'q> {
    sql: Cow<'static, str>,
    args: Vec<Arg<'q>>,
}

/// A statement; `sql` is static text or text the store built from its
/// own pieces (never from values: those are bound).
pub fn query<'q>(sql: impl Into<Cow<'static, str>>) -> Query<'q> {
    Query { sql: sql.into(), args: Vec::new() }
}

/// Binds every value of `args` to a sqlx query of either backend.
macro_rules! bind_all {
    ($q:expr, $args:expr) => {{
        let mut q = $q;
        for a in $args {
            q = match a {
                Arg::Int(v) => q.bind(v),
                Arg::Real(v) => q.bind(v),
                Arg::Bool(v) => q.bind(v),
                Arg::Str(v) => q.bind(v),
                Arg::String(v) => q.bind(v),
                Arg::Bytes(v) => q.bind(v),
                Arg::Blob(v) => q.bind(v),
            };
        }
        q
    }};
}

/// What a statement that returns no rows did.
#[derive(Debug)]
pub struct Done(u64);

impl Done {
    pub fn rows_affected(&self) -> u64 {
        self.0
    }
}

impl<'q> Query<'q> {
    pub fn bind(mut self, value: impl Into<Arg<'q>>) -> Query<'q> {
        self.args.push(value.into());
        self
    }

    fn sqlite(self) -> sqlx::query::Query<'q, Sqlite, sqlx::sqlite::SqliteArguments> {
        bind_all!(sqlx::query(AssertSqlSafe(self.sql)), self.args)
    }

    fn pg(self) -> sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments> {
        let sql = if self.sql.contains('?') { Cow::Owned(numbered(&self.sql).into_owned()) } else { self.sql };
        bind_all!(sqlx::query(AssertSqlSafe(sql)), self.args)
    }

    pub async fn execute(self, on: &mut impl AsDb) -> Result<Done, sqlx::Error> {
        match on.db() {
            Db::Sqlite(c) => self.sqlite().execute(c).await.map(|r| Done(r.rows_affected())),
            Db::Direct(r) => r.run(&self.sql, &self.args, |_| Ok(()), |e| e).map(Done),
            Db::Pg(c) => self.pg().execute(c).await.map(|r| Done(r.rows_affected())),
        }
    }

    pub async fn fetch_all(self, on: &mut impl AsDb) -> Result<Vec<Row>, sqlx::Error> {
        match on.db() {
            Db::Sqlite(c) => Ok(self.sqlite().fetch_all(c).await?.into_iter().map(Row::Sqlite).collect()),
            Db::Direct(r) => {
                let mut rows = Vec::new();
                r.run(
                    &self.sql,
                    &self.args,
                    |row| {
                        rows.push(Row::Direct(row));
                        Ok(())
                    },
                    |e| e,
                )?;
                Ok(rows)
            }
            Db::Pg(c) => Ok(self.pg().fetch_all(c).await?.into_iter().map(Row::Pg).collect()),
        }
    }

    pub async fn fetch_one(self, on: &mut impl AsDb) -> Result<Row, sqlx::Error> {
        match on.db() {
            Db::Sqlite(c) => self.sqlite().fetch_one(c).await.map(Row::Sqlite),
            Db::Direct(r) => first_row(r, &self.sql, &self.args)?.ok_or(sqlx::Error::RowNotFound),
            Db::Pg(c) => self.pg().fetch_one(c).await.map(Row::Pg),
        }
    }

    pub async fn fetch_optional(self, on: &mut impl AsDb) -> Result<Option<Row>, sqlx::Error> {
        match on.db() {
            Db::Sqlite(c) => Ok(self.sqlite().fetch_optional(c).await?.map(Row::Sqlite)),
            Db::Direct(r) => first_row(r, &self.sql, &self.args),
            Db::Pg(c) => Ok(self.pg().fetch_optional(c).await?.map(Row::Pg)),
        }
    }

    /// Hands each row to `f` as it arrives, without holding them all;
    /// a failure to read is `what` failed.
    pub async fn for_each(
        self,
        on: &mut impl AsDb,
        what: &'static str,
        mut f: impl FnMut(&Row) -> Result<(), super::StoreError> + Send,
    ) -> Result<(), super::StoreError> {
        match on.db() {
            Db::Sqlite(c) => {
                let mut rows = self.sqlite().fetch(c);
                while let Some(row) = rows.try_next().await.map_err(super::err(what))? {
                    f(&Row::Sqlite(row))?;
                }
            }
            Db::Direct(r) => {
                r.run(&self.sql, &self.args, |row| f(&Row::Direct(row)), super::err(what))?;
            }
            Db::Pg(c) => {
                let mut rows = self.pg().fetch(c);
                while let Some(row) = rows.try_next().await.map_err(super::err(what))? {
                    f(&Row::Pg(row))?;
                }
            }
        }
        Ok(())
    }
}

/// The first row of a statement run to its end (an `INSERT ... RETURNING`
/// or `UPDATE` does all its work either way).
fn first_row(r: &mut direct::Raw, sql: &str, args: &[Arg<'_>]) -> Result<Option<Row>, sqlx::Error> {
    let mut first = None;
    r.run(
        sql,
        args,
        |row| {
            first.get_or_insert(Row::Direct(row));
            Ok(())
        },
        |e| e,
    )?;
    Ok(first)
}

/// The statement with its anonymous `?` parameters numbered `$1`, `$2`,
/// ... (PostgreSQL knows only numbered ones; SQLite binds `?` by position,
/// which is cheaper in statements over many values). `?` in a quoted
/// literal is left alone.
pub fn numbered(sql: &str) -> Cow<'_, str> {
    if !sql.contains('?') {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len() + 16);
    let (mut n, mut quoted) = (0, false);
    for c in sql.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                out.push(c);
            }
            '?' if !quoted => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            }
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The kinds of value the schema's columns hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    Real,
    Text,
    Bytes,
}

/// The kind of value a column's declared type names.
pub fn kind_of(declared: &str) -> Kind {
    let t = declared.to_ascii_uppercase();
    if t.contains("INT") {
        Kind::Int
    } else if t.contains("REAL") || t.contains("FLOAT") || t.contains("DOUBLE") {
        Kind::Real
    } else if t.contains("BLOB") || t.contains("BYTEA") {
        Kind::Bytes
    } else {
        Kind::Text
    }
}

/// A result row of either backend.
pub enum Row {
    Sqlite(SqliteRow),
    Direct(direct::Row),
    Pg(PgRow),
}

impl Row {
    /// Column `i` (a position or a name) as a `T` both backends decode.
    pub fn try_get<'r, T, I>(&'r self, i: I) -> Result<T, sqlx::Error>
    where
        T: Decode<'r, Sqlite> + Type<Sqlite> + Decode<'r, Postgres> + Type<Postgres> + direct::FromValue<'r>,
        I: ColumnIndex<SqliteRow> + ColumnIndex<PgRow> + direct::Index,
    {
        use sqlx::Row as _;
        match self {
            Row::Sqlite(r) => r.try_get(i),
            Row::Direct(r) => r.get(i),
            Row::Pg(r) => r.try_get(i),
        }
    }

    /// Each column's name and the kind of value it declares.
    pub fn columns(&self) -> Vec<(String, Kind)> {
        use sqlx::{Column as _, Row as _, TypeInfo as _};
        match self {
            Row::Sqlite(r) => {
                r.columns().iter().map(|c| (c.name().to_string(), kind_of(c.type_info().name()))).collect()
            }
            Row::Direct(r) => r.columns(),
            Row::Pg(r) => r.columns().iter().map(|c| (c.name().to_string(), kind_of(c.type_info().name()))).collect(),
        }
    }

    pub fn len(&self) -> usize {
        use sqlx::Row as _;
        match self {
            Row::Sqlite(r) => r.len(),
            Row::Direct(r) => r.len(),
            Row::Pg(r) => r.len(),
        }
    }
}

/// Which backend `on` is.
pub fn backend(on: &mut impl AsDb) -> Backend {
    match on.db() {
        Db::Sqlite(_) | Db::Direct(_) => Backend::Sqlite,
        Db::Pg(_) => Backend::Postgres,
    }
}

/// Whether a table exists: SQLite's `sqlite_master`, PostgreSQL's
/// `to_regclass` (in the connection's search path).
pub async fn table_exists(on: &mut impl AsDb, table: &'static str) -> Result<bool, sqlx::Error> {
    let sql = match on.db() {
        Db::Sqlite(_) | Db::Direct(_) => "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = $1",
        Db::Pg(_) => "SELECT 1 WHERE to_regclass($1) IS NOT NULL",
    };
    Ok(query(sql).bind(table).fetch_optional(on).await?.is_some())
}

/// A number that changes when another connection commits a write: for
/// readers' caches. SQLite's `PRAGMA data_version`; on PostgreSQL the
/// `lkpbot_writes` row every write transaction counts up
/// ([`write_version`]).
pub async fn data_version(on: &mut impl AsDb) -> Result<i64, sqlx::Error> {
    let sql = match on.db() {
        Db::Sqlite(_) | Db::Direct(_) => "PRAGMA data_version",
        Db::Pg(_) => "SELECT n FROM lkpbot_writes",
    };
    query(sql).fetch_one(on).await?.try_get(0)
}

/// In a write transaction: `(seen, mine)`, where `seen` is the version
/// the last write left and `mine` the version once this one commits.
/// A writer that recorded `mine` last time and now sees `seen` equal to
/// it knows nobody else wrote in between. On SQLite the two are `PRAGMA
/// data_version` (which a connection's own commits do not change); on
/// PostgreSQL the transaction counts `lkpbot_writes` up (under
/// [`WRITE_LOCK`], so the row is never contended).
pub async fn write_version(on: &mut impl AsDb) -> Result<(i64, i64), sqlx::Error> {
    match on.db() {
        Db::Sqlite(_) | Db::Direct(_) => {
            let v = data_version(on).await?;
            Ok((v, v))
        }
        Db::Pg(_) => {
            let n: i64 = query("UPDATE lkpbot_writes SET n = n + 1 RETURNING n").fetch_one(on).await?.try_get(0)?;
            Ok((n - 1, n))
        }
    }
}

/// After rows were written with their ids (`store copy`): PostgreSQL's
/// identity sequences are moved past the highest id, so the next row
/// numbered by the database does not collide; SQLite numbers rows from
/// the highest id by itself.
pub async fn identities_past_rows(on: &mut impl AsDb) -> Result<(), sqlx::Error> {
    if backend(on) == Backend::Postgres {
        for table in ["events", "outbox"] {
            let sql = format!(
                "SELECT setval(pg_get_serial_sequence('{table}', 'id'), COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)"
            );
            query(sql).execute(on).await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anonymous_parameters_are_numbered_for_postgres() {
        assert_eq!(numbered("SELECT 1 WHERE a = $1"), "SELECT 1 WHERE a = $1");
        assert_eq!(numbered("INSERT INTO t VALUES (?, ?), (?, ?)"), "INSERT INTO t VALUES ($1, $2), ($3, $4)");
        assert_eq!(numbered("SELECT '?' WHERE a IN (?, ?)"), "SELECT '?' WHERE a IN ($1, $2)");
    }
}
