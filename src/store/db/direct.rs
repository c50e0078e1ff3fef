//! SQLite transactions run on the caller's own thread.
//!
//! sqlx runs every statement of a SQLite connection on a worker thread of
//! its own and passes each statement, and each row back, across channels:
//! two thread wakeups per statement. An archive import runs tens of
//! thousands of statements, and those wakeups cost about a quarter of its
//! CPU (most of it in the kernel). A write transaction therefore begins
//! through sqlx (`BEGIN IMMEDIATE`, which may wait for another writer
//! without blocking the runtime), then takes the connection's handle
//! from sqlx's worker ([`sqlx::sqlite::SqliteConnection::lock_handle`],
//! which guarantees the worker makes no call on it meanwhile) and runs
//! its statements, and its `COMMIT`, through SQLite's C API on the
//! calling thread. Dropped without a commit, it rolls back. The handle
//! goes back to sqlx when the transaction ends.
//!
//! A read transaction (the dashboard's pages, a case's JSON) runs the
//! same way on a connection of the read pool ([`super::pool`]): it takes
//! the handle first and runs its `BEGIN` (which waits for nobody) on the
//! calling thread too. Through sqlx, a case page's statements and each of
//! their rows crossed threads, and those wakeups were most of its cost.
//!
//! The statements a transaction prepares stay prepared, with the
//! connection ([`DirectConn`]), for the transactions after it: an import
//! runs the same few dozen statements in every batch. sqlx cannot close a
//! connection with a statement of ours left on it, so they are finalized,
//! under the connection's lock, when the [`DirectConn`] is closed or dropped.
//!
//! Values are bound as sqlx binds them (booleans as integers, strings as
//! text, bytes as blobs), and a row's values are read into a [`Row`] that
//! decodes as sqlx's SQLite rows do for the types the store reads.

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int};
use std::ptr::NonNull;
use std::sync::Arc;
use std::task::{Context, Poll, Wake};

use libsqlite3_sys as ffi;
use sqlx::Connection;
use sqlx::sqlite::{LockedSqliteHandle, SqliteConnection};

use super::checkpoint::Checkpointer;
use super::{Arg, Kind, kind_of};

/// Statements prepared on one connection, by their SQL text.
type Statements = HashMap<String, Stmt>;

/// At most this many statements stay prepared: should some caller build
/// its SQL text afresh each time, the cache starts over rather than grow.
const MAX_STATEMENTS: usize = 512;

/// A SQLite connection whose transactions run on the calling thread
/// ([`Direct`]) and leave their statements prepared for the next one: the
/// store's writer, and each connection of the read pool.
pub struct DirectConn {
    /// The thread that checkpoints the connection's log, once started.
    /// Dropped before the connection (field order), for the same reason
    /// as in `close`.
    checkpointer: Option<Checkpointer>,
    /// `None` only once closed.
    conn: Option<SqliteConnection>,
    /// Touched only while the connection's handle is locked.
    stmts: Statements,
}

impl DirectConn {
    pub fn new(conn: SqliteConnection) -> DirectConn {
        DirectConn { checkpointer: None, conn: Some(conn), stmts: HashMap::new() }
    }

    /// Checkpoints the log of the store at `path` (this connection's) on
    /// a thread of its own from now on (see [`Checkpointer`]); where that
    /// thread cannot start, the connection goes on checkpointing in its
    /// commits, and this says why.
    pub async fn checkpoint_behind(&mut self, path: &std::path::Path) -> Result<(), String> {
        self.checkpoint_with(Checkpointer::start(path).map_err(|e| e.to_string())?).await
    }

    async fn checkpoint_with(&mut self, mut c: Checkpointer) -> Result<(), String> {
        let mut handle = self.conn().lock_handle().await.map_err(|e| e.to_string())?;
        // SAFETY: the handle is locked; the hook comes off (`unhook`)
        // before the checkpointer is dropped.
        unsafe { c.install(handle.as_raw_handle()) };
        drop(handle);
        self.checkpointer = Some(c);
        Ok(())
    }

    /// Checkpoints run so far by the thread, and by commits (`None`
    /// without the thread).
    pub fn checkpoints(&self) -> Option<(u64, u64)> {
        self.checkpointer.as_ref().map(Checkpointer::counts)
    }

    /// The connection, for sqlx's own statements between transactions.
    pub fn conn(&mut self) -> &mut SqliteConnection {
        self.conn.as_mut().expect("a DirectConn's connection is taken only by close")
    }

    /// Begins a write transaction (see [`Direct::begin`]).
    pub async fn begin(&mut self) -> Result<Direct<'_>, sqlx::Error> {
        let DirectConn { conn, stmts, .. } = self;
        Direct::begin(conn.as_mut().expect("a DirectConn's connection is taken only by close"), stmts).await
    }

    /// How many statements are kept prepared.
    #[cfg(test)]
    pub(crate) fn kept(&self) -> usize {
        self.stmts.len()
    }

    /// Begins a read transaction (see [`Direct::begin_read`]).
    pub async fn begin_read(&mut self) -> Result<Direct<'_>, sqlx::Error> {
        let DirectConn { conn, stmts, .. } = self;
        Direct::begin_read(conn.as_mut().expect("a DirectConn's connection is taken only by close"), stmts).await
    }

    /// Finalizes the kept statements and closes the connection.
    pub async fn close(mut self) -> Result<(), sqlx::Error> {
        let Some(mut conn) = self.conn.take() else { return Ok(()) };
        if !self.stmts.is_empty() || self.checkpointer.is_some() {
            let mut handle = conn.lock_handle().await?;
            finalize(&mut self.stmts);
            unhook(&mut self.checkpointer, handle.as_raw_handle());
        }
        if let Some((thread, inline)) = self.checkpoints() {
            tracing::debug!(thread, inline, "checkpoints of the store's log");
        }
        // Its thread ends and its connection closes first, so that the
        // writer's is the store's last: SQLite then checkpoints the whole
        // log and removes it.
        self.checkpointer = None;
        conn.close().await
    }
}

/// Takes the checkpointer's hook off the connection `db`, whose handle
/// the caller holds locked.
fn unhook(c: &mut Option<Checkpointer>, db: NonNull<ffi::sqlite3>) {
    if let Some(c) = c {
        // SAFETY: the caller holds the handle locked; it is the
        // connection the hook was put on.
        unsafe { c.uninstall(db) };
    }
}

impl Drop for DirectConn {
    fn drop(&mut self) {
        let Some(conn) = self.conn.as_mut() else { return };
        if self.stmts.is_empty() && self.checkpointer.is_none() {
            return;
        }
        // sqlx's worker may still be running a statement a cancelled
        // future sent it: wait for the lock (the worker is a thread of
        // its own, so this wait ends).
        match block_on(conn.lock_handle()) {
            Ok(mut handle) => {
                finalize(&mut self.stmts);
                unhook(&mut self.checkpointer, handle.as_raw_handle());
            }
            // The hook stays (the checkpointer keeps what it points at).
            // The worker is gone, and the connection with it (or it
            // could not close): nothing is left to finalize them on.
            Err(_) => std::mem::forget(std::mem::take(&mut self.stmts)),
        }
    }
}

/// Finalizes every statement in `stmts`; the caller holds the handle of
/// the connection they were prepared on locked.
fn finalize(stmts: &mut Statements) {
    for (_, s) in stmts.drain() {
        // SAFETY: each statement was prepared on this connection, whose
        // handle is locked, and is finalized once (drained).
        unsafe { ffi::sqlite3_finalize(s.raw.as_ptr()) };
    }
}

/// Runs a future to completion on this thread, parking while it waits.
/// Only for waits that other threads end (sqlx's worker).
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Arc::new(Unpark(std::thread::current())).into();
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

/// A transaction holding the connection's handle.
pub struct Direct<'c> {
    raw: Raw,
    /// Where the statements go back when the transaction ends.
    home: &'c mut Statements,
    /// Held for the transaction's life: while it is, sqlx's worker does
    /// not touch the connection. Dropped after `raw` (field order).
    _handle: LockedSqliteHandle<'c>,
}

/// The connection as the transaction's statements see it.
pub struct Raw {
    db: NonNull<ffi::sqlite3>,
    stmts: Statements,
    open: bool,
}

// SAFETY: `Raw` lives inside a `Direct`, whose lock keeps every other
// thread (sqlx's worker included) off the connection; it moves between
// threads only with that lock, as sqlx's own connection state does.
unsafe impl Send for Raw {}

struct Stmt {
    /// Used only while its connection's handle is locked.
    raw: NonNull<ffi::sqlite3_stmt>,
    columns: Arc<[Column]>,
    /// For each of the statement's parameters in SQLite's order, which
    /// value (1-based) it takes: `$N` and `?N` the `N`th, anonymous `?`
    /// the next in turn, as sqlx binds them.
    params: Vec<usize>,
}

// SAFETY: a statement is used only while its connection's handle is locked
// (by a `Direct`, or to finalize it), which keeps sqlx's worker off the
// connection; it moves between threads with its connection, as sqlx's own
// statements do.
unsafe impl Send for Stmt {}

struct Column {
    name: String,
    kind: Kind,
}

impl<'c> Direct<'c> {
    /// Begins a write transaction (`BEGIN IMMEDIATE`) and takes the
    /// connection's handle for its statements.
    async fn begin(conn: &'c mut SqliteConnection, home: &'c mut Statements) -> Result<Direct<'c>, sqlx::Error> {
        if let Err(e) = sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await {
            // A begin cancelled between its BEGIN and taking the handle
            // (the one await between them) left its transaction open and
            // nobody to end it: roll it back and begin again.
            if !rolled_back_leftover(conn, home).await? {
                return Err(e);
            }
            sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
        }
        // Fails only when sqlx's worker is gone, and the connection with
        // it: nothing is left to roll back.
        let mut handle = conn.lock_handle().await?;
        let db = handle.as_raw_handle();
        let stmts = std::mem::take(home);
        Ok(Direct { raw: Raw { db, stmts, open: true }, home, _handle: handle })
    }

    /// Begins a read transaction: takes the connection's handle, then runs
    /// `BEGIN` (deferred: its snapshot is taken at its first read, and
    /// nothing is locked against writers) on the calling thread.
    async fn begin_read(conn: &'c mut SqliteConnection, home: &'c mut Statements) -> Result<Direct<'c>, sqlx::Error> {
        // Fails only when sqlx's worker is gone, and the connection with it.
        let mut handle = conn.lock_handle().await?;
        let db = handle.as_raw_handle();
        let stmts = std::mem::take(home);
        // Not open until BEGIN succeeds: dropped before, nothing is rolled
        // back and the statements go home.
        let mut d = Direct { raw: Raw { db, stmts, open: false }, home, _handle: handle };
        d.raw.run("BEGIN", &[], |_| Ok::<_, sqlx::Error>(()), |e| e)?;
        d.raw.open = true;
        Ok(d)
    }

    pub fn raw(&mut self) -> &mut Raw {
        &mut self.raw
    }

    /// Commits. On failure the transaction is rolled back when dropped.
    pub fn commit(mut self) -> Result<(), sqlx::Error> {
        self.raw.run("COMMIT", &[], |_| Ok::<_, sqlx::Error>(()), |e| e)?;
        self.raw.open = false;
        Ok(())
    }
}

/// Rolls back a transaction open on `conn` outside any [`Direct`];
/// whether there was one.
async fn rolled_back_leftover(conn: &mut SqliteConnection, stmts: &mut Statements) -> Result<bool, sqlx::Error> {
    let mut handle = conn.lock_handle().await?;
    let db = handle.as_raw_handle();
    // SAFETY: the handle is locked; get_autocommit only reads its state.
    if unsafe { ffi::sqlite3_get_autocommit(db.as_ptr()) } != 0 {
        return Ok(false);
    }
    let mut raw = Raw { db, stmts: std::mem::take(stmts), open: true };
    raw.rollback();
    *stmts = std::mem::take(&mut raw.stmts);
    Ok(true)
}

impl Drop for Direct<'_> {
    fn drop(&mut self) {
        if self.raw.open {
            self.raw.rollback();
        }
        std::mem::swap(self.home, &mut self.raw.stmts);
    }
}

impl Raw {
    fn rollback(&mut self) {
        // Nothing to report to: the caller's error is already on its way,
        // and a failed ROLLBACK leaves no transaction either.
        let _ = self.run("ROLLBACK", &[], |_| Ok::<_, sqlx::Error>(()), |e| e);
        self.open = false;
    }

    /// Runs one statement with `args` bound, handing each result row to
    /// `row` as it is read, and returns how many rows it changed.
    pub fn run<E>(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
        mut row: impl FnMut(Row) -> Result<(), E>,
        err: impl FnOnce(sqlx::Error) -> E,
    ) -> Result<u64, E> {
        let db = self.db;
        let stmt = match self.stmts.get(sql) {
            Some(s) => s,
            None => {
                let s = match prepare(db, sql) {
                    Ok(s) => s,
                    Err(e) => return Err(err(e)),
                };
                if self.stmts.len() >= MAX_STATEMENTS {
                    finalize(&mut self.stmts);
                }
                self.stmts.entry(sql.to_string()).or_insert(s)
            }
        };
        let raw = stmt.raw.as_ptr();
        let columns = &stmt.columns;
        let params = &stmt.params;
        // Bound text and bytes point into `args` (SQLITE_STATIC); the
        // bindings are cleared before this returns.
        let outcome = (|| {
            for (i, &n) in params.iter().enumerate() {
                // Parameters beyond the values stay NULL, as with sqlx.
                let Some(a) = args.get(n - 1) else { break };
                let i = c_int::try_from(i + 1).map_err(|_| Err(protocol("too many parameters")))?;
                bind(db, raw, i, a).map_err(Err)?;
            }
            loop {
                // SAFETY: `raw` is a live statement of this connection.
                match unsafe { ffi::sqlite3_step(raw) } {
                    ffi::SQLITE_ROW => row(read_row(raw, columns)).map_err(Ok)?,
                    ffi::SQLITE_DONE => return Ok(()),
                    rc => return Err(Err(error(db, rc))),
                }
            }
        })();
        // SAFETY: as above; after a failed step, reset repeats the error,
        // which was read already.
        let changes = unsafe {
            let changes = ffi::sqlite3_changes64(db.as_ptr());
            ffi::sqlite3_reset(raw);
            ffi::sqlite3_clear_bindings(raw);
            changes
        };
        // A failure is the row callback's own (`Ok`) or the database's.
        match outcome {
            Ok(()) => Ok(u64::try_from(changes).unwrap_or(0)),
            Err(Ok(e)) => Err(e),
            Err(Err(e)) => Err(err(e)),
        }
    }
}

fn prepare(db: NonNull<ffi::sqlite3>, sql: &str) -> Result<Stmt, sqlx::Error> {
    let len = c_int::try_from(sql.len()).map_err(|_| protocol("statement too long"))?;
    let mut raw = std::ptr::null_mut();
    let mut tail: *const c_char = std::ptr::null();
    // SAFETY: `sql` is valid for `len` bytes; SQLite writes the statement
    // and the tail pointer (into `sql`) only.
    let rc = unsafe {
        ffi::sqlite3_prepare_v3(
            db.as_ptr(),
            sql.as_ptr().cast(),
            len,
            ffi::SQLITE_PREPARE_PERSISTENT,
            &mut raw,
            &mut tail,
        )
    };
    if rc != ffi::SQLITE_OK {
        return Err(error(db, rc));
    }
    let Some(raw) = NonNull::new(raw) else { return Err(protocol("an empty statement")) };
    let stmt = Stmt { raw, columns: Arc::from(Vec::new()), params: Vec::new() };
    // SAFETY: `tail` points into `sql` or at its end.
    let rest = unsafe { sql.len() - usize::try_from(tail.offset_from(sql.as_ptr().cast())).unwrap_or(sql.len()) };
    if !sql[sql.len() - rest..].trim_matches(|c: char| c.is_whitespace() || c == ';').is_empty() {
        // SAFETY: prepared just now, finalized once.
        unsafe { ffi::sqlite3_finalize(raw.as_ptr()) };
        return Err(protocol("more than one statement in one query"));
    }
    // SAFETY: `raw` is a live statement; names and declared types are
    // NUL-terminated strings SQLite owns until the statement is finalized.
    let columns: Vec<Column> = unsafe {
        (0..ffi::sqlite3_column_count(raw.as_ptr()))
            .map(|i| Column {
                name: text_of(ffi::sqlite3_column_name(raw.as_ptr(), i)),
                kind: kind_of(&text_of(ffi::sqlite3_column_decltype(raw.as_ptr(), i))),
            })
            .collect()
    };
    // SAFETY: as above; parameter names are NUL-terminated strings SQLite
    // owns, or null for an anonymous `?`.
    let named: Vec<Option<String>> = unsafe {
        (1..=ffi::sqlite3_bind_parameter_count(raw.as_ptr()))
            .map(|i| {
                let p = ffi::sqlite3_bind_parameter_name(raw.as_ptr(), i);
                (!p.is_null()).then(|| text_of(p))
            })
            .collect()
    };
    let mut params = Vec::with_capacity(named.len());
    let mut next = 0;
    for name in named {
        let n = match name {
            None => {
                next += 1;
                next
            }
            Some(name) => match name.strip_prefix('$').or_else(|| name.strip_prefix('?')).map(str::parse::<usize>) {
                Some(Ok(n)) if n > 0 => n,
                _ => {
                    // SAFETY: prepared just now, finalized once.
                    unsafe { ffi::sqlite3_finalize(raw.as_ptr()) };
                    return Err(protocol(&format!("unsupported SQL parameter {name}")));
                }
            },
        };
        params.push(n);
    }
    Ok(Stmt { columns: Arc::from(columns), params, ..stmt })
}

/// # Safety
/// `p` is null or a NUL-terminated string.
unsafe fn text_of(p: *const c_char) -> String {
    if p.is_null() { String::new() } else { unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned() }
}

fn bind(db: NonNull<ffi::sqlite3>, raw: *mut ffi::sqlite3_stmt, i: c_int, a: &Arg<'_>) -> Result<(), sqlx::Error> {
    // SAFETY: `raw` is a live statement; text and blobs stay valid until
    // the bindings are cleared (SQLITE_STATIC), which `run` does before
    // `args` can go.
    let rc = unsafe {
        let text = |s: &str| {
            ffi::sqlite3_bind_text64(
                raw,
                i,
                s.as_ptr().cast(),
                s.len() as u64,
                ffi::SQLITE_STATIC(),
                ffi::SQLITE_UTF8 as u8,
            )
        };
        let blob = |b: &[u8]| ffi::sqlite3_bind_blob64(raw, i, b.as_ptr().cast(), b.len() as u64, ffi::SQLITE_STATIC());
        match a {
            Arg::Int(Some(v)) => ffi::sqlite3_bind_int64(raw, i, *v),
            Arg::Real(Some(v)) => ffi::sqlite3_bind_double(raw, i, *v),
            Arg::Bool(Some(v)) => ffi::sqlite3_bind_int64(raw, i, i64::from(*v)),
            Arg::Str(Some(s)) => text(s),
            Arg::String(Some(s)) => text(s),
            Arg::Bytes(b) => blob(b),
            Arg::Blob(b) => blob(b),
            Arg::Int(None) | Arg::Real(None) | Arg::Bool(None) | Arg::Str(None) | Arg::String(None) => {
                ffi::sqlite3_bind_null(raw, i)
            }
        }
    };
    if rc == ffi::SQLITE_OK { Ok(()) } else { Err(error(db, rc)) }
}

fn read_row(raw: *mut ffi::sqlite3_stmt, columns: &Arc<[Column]>) -> Row {
    let n = columns.len();
    let values = (0..n)
        .map(|i| {
            let i = c_int::try_from(i).unwrap_or(c_int::MAX);
            // SAFETY: `raw` has just returned a row with `n` columns; the
            // pointers SQLite returns are valid for the byte counts it
            // gives, until the next step.
            unsafe {
                match ffi::sqlite3_column_type(raw, i) {
                    ffi::SQLITE_INTEGER => Value::Int(ffi::sqlite3_column_int64(raw, i)),
                    ffi::SQLITE_FLOAT => Value::Real(ffi::sqlite3_column_double(raw, i)),
                    ffi::SQLITE_TEXT => {
                        let p = ffi::sqlite3_column_text(raw, i);
                        let len = usize::try_from(ffi::sqlite3_column_bytes(raw, i)).unwrap_or(0);
                        let bytes = if p.is_null() { &[][..] } else { std::slice::from_raw_parts(p, len) };
                        Value::Text(String::from_utf8_lossy(bytes).into_owned())
                    }
                    ffi::SQLITE_BLOB => {
                        let p = ffi::sqlite3_column_blob(raw, i).cast::<u8>();
                        let len = usize::try_from(ffi::sqlite3_column_bytes(raw, i)).unwrap_or(0);
                        Value::Blob(if p.is_null() { Vec::new() } else { std::slice::from_raw_parts(p, len).to_vec() })
                    }
                    _ => Value::Null,
                }
            }
        })
        .collect();
    Row { columns: Arc::clone(columns), values }
}

fn error(db: NonNull<ffi::sqlite3>, rc: c_int) -> sqlx::Error {
    // SAFETY: `db` is a live connection; the message is NUL-terminated
    // and valid until the next call on it.
    let (code, message) =
        unsafe { (ffi::sqlite3_extended_errcode(db.as_ptr()), text_of(ffi::sqlite3_errmsg(db.as_ptr()))) };
    let code = if code & 0xff == rc & 0xff { code } else { rc };
    sqlx::Error::Database(Box::new(SqliteFailure { code, message }))
}

/// An error SQLite returned, as sqlx's own SQLite error reads.
#[derive(Debug)]
struct SqliteFailure {
    code: c_int,
    message: String,
}

impl std::fmt::Display for SqliteFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "(code: {}) {}", self.code, self.message)
    }
}

impl std::error::Error for SqliteFailure {}

impl sqlx::error::DatabaseError for SqliteFailure {
    fn message(&self) -> &str {
        &self.message
    }

    fn code(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(self.code.to_string().into())
    }

    fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        self
    }

    fn kind(&self) -> sqlx::error::ErrorKind {
        use sqlx::error::ErrorKind;
        match self.code {
            ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => ErrorKind::UniqueViolation,
            ffi::SQLITE_CONSTRAINT_FOREIGNKEY => ErrorKind::ForeignKeyViolation,
            ffi::SQLITE_CONSTRAINT_NOTNULL => ErrorKind::NotNullViolation,
            ffi::SQLITE_CONSTRAINT_CHECK => ErrorKind::CheckViolation,
            _ => ErrorKind::Other,
        }
    }
}

fn protocol(what: &str) -> sqlx::Error {
    sqlx::Error::Protocol(what.to_string())
}

/// One value of a row.
#[derive(Clone, Debug)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// A result row, its values read out of SQLite.
pub struct Row {
    columns: Arc<[Column]>,
    values: Vec<Value>,
}

impl Row {
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn columns(&self) -> Vec<(String, Kind)> {
        self.columns.iter().map(|c| (c.name.clone(), c.kind)).collect()
    }

    pub fn get<'r, T: FromValue<'r>, I: Index>(&'r self, i: I) -> Result<T, sqlx::Error> {
        let at = i.position(self)?;
        T::from_value(&self.values[at])
            .map_err(|e| sqlx::Error::ColumnDecode { index: format!("{at}"), source: e.into() })
    }
}

/// A column named by position or name.
pub trait Index {
    fn position(&self, row: &Row) -> Result<usize, sqlx::Error>;
}

impl Index for usize {
    fn position(&self, row: &Row) -> Result<usize, sqlx::Error> {
        if *self < row.values.len() {
            Ok(*self)
        } else {
            Err(sqlx::Error::ColumnIndexOutOfBounds { index: *self, len: row.values.len() })
        }
    }
}

impl Index for &str {
    fn position(&self, row: &Row) -> Result<usize, sqlx::Error> {
        row.columns.iter().position(|c| c.name == *self).ok_or_else(|| sqlx::Error::ColumnNotFound(self.to_string()))
    }
}

/// A Rust value read from a column, as sqlx's SQLite decoding gives it.
pub trait FromValue<'r>: Sized {
    fn from_value(v: &'r Value) -> Result<Self, String>;
}

fn mismatch<T>(want: &str, v: &Value) -> Result<T, String> {
    match v {
        Value::Null => Err(format!("unexpected NULL where {want} was expected")),
        v => Err(format!("{v:?} where {want} was expected")),
    }
}

impl FromValue<'_> for i64 {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Int(n) => Ok(*n),
            v => mismatch("an integer", v),
        }
    }
}

impl FromValue<'_> for i32 {
    fn from_value(v: &Value) -> Result<Self, String> {
        i32::try_from(i64::from_value(v)?).map_err(|e| e.to_string())
    }
}

impl FromValue<'_> for bool {
    fn from_value(v: &Value) -> Result<Self, String> {
        Ok(i64::from_value(v)? != 0)
    }
}

impl FromValue<'_> for f64 {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Real(x) => Ok(*x),
            #[allow(clippy::cast_precision_loss)]
            Value::Int(n) => Ok(*n as f64),
            v => mismatch("a real number", v),
        }
    }
}

impl FromValue<'_> for String {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Text(s) => Ok(s.clone()),
            v => mismatch("text", v),
        }
    }
}

impl FromValue<'_> for Vec<u8> {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Blob(b) => Ok(b.clone()),
            Value::Text(s) => Ok(s.as_bytes().to_vec()),
            v => mismatch("bytes", v),
        }
    }
}

impl<'r> FromValue<'r> for &'r str {
    fn from_value(v: &'r Value) -> Result<Self, String> {
        match v {
            Value::Text(s) => Ok(s),
            v => mismatch("text", v),
        }
    }
}

impl<'r, T: FromValue<'r>> FromValue<'r> for Option<T> {
    fn from_value(v: &'r Value) -> Result<Self, String> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

#[cfg(test)]
mod tests {
    use sqlx::Connection;
    use sqlx::sqlite::SqliteConnectOptions;

    use super::super::{AsDb, Backend, Conn, DbTx, Row as DbRow, backend, query};
    use super::*;

    fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime").block_on(f)
    }

    async fn open(path: &std::path::Path) -> SqliteConnection {
        let opts = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal);
        SqliteConnection::connect_with(&opts).await.expect("open")
    }

    async fn count(c: &mut SqliteConnection) -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM t").fetch_one(c).await.expect("count")
    }

    #[test]
    fn statements_bind_decode_and_commit_as_sqlx_does() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("s.db");
        block_on(async {
            let mut other = open(&path).await;
            sqlx::query("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT, c BLOB, d REAL, e INTEGER)")
                .execute(&mut other)
                .await
                .expect("schema");
            let mut conn = Conn::Sqlite(DirectConn::new(open(&path).await));
            let mut tx = conn.begin_write().await.expect("begin");
            // `$N` bind by number whatever their order in the text.
            let n = query("INSERT INTO t (b, a, c, d, e) VALUES ($2, $1, $3, $4, $5)")
                .bind(7_i64)
                .bind("seven")
                .bind(&b"\x00\xff"[..])
                .bind(0.5_f64)
                .bind(true)
                .execute(&mut tx)
                .await
                .expect("insert");
            assert_eq!(n.rows_affected(), 1);
            // Anonymous `?` in turn; a missing value is NULL.
            query("INSERT INTO t (a, b, c) VALUES (?, ?, ?)")
                .bind(8_i64)
                .bind(None::<&str>)
                .execute(&mut tx)
                .await
                .expect("insert");
            let row: DbRow =
                query("SELECT a, b, c, d, e FROM t WHERE a = $1").bind(7_i64).fetch_one(&mut tx).await.expect("row");
            assert_eq!(row.try_get::<i64, _>("a").expect("a"), 7);
            assert_eq!(row.try_get::<&str, _>(1).expect("b"), "seven");
            assert_eq!(row.try_get::<Vec<u8>, _>("c").expect("c"), b"\x00\xff");
            assert_eq!(row.try_get::<f64, _>("d").expect("d"), 0.5);
            assert!(row.try_get::<bool, _>("e").expect("e"));
            assert!(row.try_get::<String, _>("a").is_err(), "an integer is not text");
            assert!(row.try_get::<i64, _>("nope").is_err());
            let row = query("SELECT b, c FROM t WHERE a = 8").fetch_one(&mut tx).await.expect("row");
            assert_eq!(row.try_get::<Option<String>, _>(0).expect("b"), None);
            assert_eq!(row.try_get::<Option<Vec<u8>>, _>(1).expect("c"), None);
            assert!(row.try_get::<String, _>(0).is_err(), "NULL is no string");
            assert!(query("SELECT a FROM t WHERE a = 9").fetch_optional(&mut tx).await.expect("none").is_none());
            assert!(matches!(
                query("SELECT a FROM t WHERE a = 9").fetch_one(&mut tx).await,
                Err(sqlx::Error::RowNotFound)
            ));
            // A failed statement is the database's error, and the
            // transaction goes on.
            let e = query("INSERT INTO t (a) VALUES (7)").execute(&mut tx).await.expect_err("a duplicate");
            assert!(e.as_database_error().is_some_and(|d| d.is_unique_violation()), "{e}");
            assert!(e.to_string().contains("UNIQUE constraint failed"), "{e}");
            assert!(query("SELECT 1; SELECT 2").execute(&mut tx).await.is_err(), "one statement a query");
            // Nothing is visible to another connection before the commit.
            assert_eq!(count(&mut other).await, 0);
            let mut seen = Vec::new();
            query("SELECT a FROM t ORDER BY a")
                .for_each(&mut tx, "read", |r| {
                    seen.push(r.try_get::<i64, _>(0).expect("a"));
                    Ok(())
                })
                .await
                .expect("rows");
            assert_eq!(seen, [7, 8]);
            tx.commit().await.expect("commit");
            assert_eq!(count(&mut other).await, 2);
            // The connection is sqlx's again.
            if let Conn::Sqlite(c) = &mut conn {
                assert_eq!(count(c.conn()).await, 2);
            }
        });
    }

    #[test]
    fn a_transaction_dropped_uncommitted_is_rolled_back() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("s.db");
        block_on(async {
            let mut other = open(&path).await;
            sqlx::query("CREATE TABLE t (a INTEGER PRIMARY KEY)").execute(&mut other).await.expect("schema");
            let mut conn = Conn::Sqlite(DirectConn::new(open(&path).await));
            {
                let mut tx = conn.begin_write().await.expect("begin");
                query("INSERT INTO t (a) VALUES (1)").execute(&mut tx).await.expect("insert");
                assert_eq!(backend(&mut tx), Backend::Sqlite);
            }
            assert_eq!(count(&mut other).await, 0);
            // The write lock went with it: another writer can begin.
            sqlx::query("INSERT INTO t (a) VALUES (2)").execute(&mut other).await.expect("another writer");
            let mut tx = conn.begin_write().await.expect("begin again");
            let n: i64 =
                query("SELECT COUNT(*) FROM t").fetch_one(&mut tx).await.expect("count").try_get(0).expect("n");
            assert_eq!(n, 1);
            tx.commit().await.expect("commit");
            // A begin cancelled between its BEGIN and taking the handle
            // leaves a transaction open: the next begin ends it.
            if let Conn::Sqlite(c) = &mut conn {
                let c = c.conn();
                sqlx::query("BEGIN IMMEDIATE").execute(&mut *c).await.expect("a stray begin");
                sqlx::query("INSERT INTO t (a) VALUES (3)").execute(&mut *c).await.expect("a stray insert");
            }
            let mut tx = conn.begin_write().await.expect("begin after a stray transaction");
            let n: i64 =
                query("SELECT COUNT(*) FROM t").fetch_one(&mut tx).await.expect("count").try_get(0).expect("n");
            assert_eq!(n, 1, "the stray insert was rolled back");
            drop(tx);
            let _ = conn.db();
        });
    }

    #[test]
    fn statements_stay_prepared_across_transactions_and_are_finalized_at_close() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("s.db");
        block_on(async {
            let mut other = open(&path).await;
            sqlx::query("CREATE TABLE t (a INTEGER PRIMARY KEY)").execute(&mut other).await.expect("schema");
            let mut w = DirectConn::new(open(&path).await);
            let insert = "INSERT INTO t (a) VALUES ($1)";
            for a in [1_i64, 2] {
                let mut tx = DbTx::Direct(w.begin().await.expect("begin"));
                query(insert).bind(a).execute(&mut tx).await.expect("insert");
                tx.commit().await.expect("commit");
                assert!(w.stmts.contains_key(insert), "kept after transaction {a}");
            }
            // A kept statement is not stale after another connection
            // changed the schema.
            sqlx::query("ALTER TABLE t ADD COLUMN b TEXT").execute(&mut other).await.expect("alter");
            let mut tx = DbTx::Direct(w.begin().await.expect("begin"));
            query(insert).bind(3_i64).execute(&mut tx).await.expect("insert after a schema change");
            let row = query("SELECT COUNT(*), COUNT(b) FROM t").fetch_one(&mut tx).await.expect("count");
            assert_eq!((row.try_get::<i64, _>(0).expect("n"), row.try_get::<i64, _>(1).expect("b")), (3, 0));
            drop(tx);
            // Rolled back, the statements stay too; sqlx's own statements
            // run between transactions as before.
            assert!(w.stmts.contains_key(insert));
            assert_eq!(count(w.conn()).await, 2);
            // Closed with statements kept: sqlx closes it (it cannot with
            // a statement left unfinalized).
            w.close().await.expect("close");
            // Dropped with statements kept: finalized first, no panic in
            // sqlx's worker, and the file is whole.
            let mut w = DirectConn::new(open(&path).await);
            let mut tx = DbTx::Direct(w.begin().await.expect("begin"));
            query(insert).bind(4_i64).execute(&mut tx).await.expect("insert");
            tx.commit().await.expect("commit");
            drop(w);
            assert_eq!(count(&mut other).await, 3);
            // One statement built afresh each time: the cache starts over.
            let mut w = DirectConn::new(open(&path).await);
            let mut tx = DbTx::Direct(w.begin().await.expect("begin"));
            for i in 0..MAX_STATEMENTS + 10 {
                query(format!("SELECT {i}")).execute(&mut tx).await.expect("select");
            }
            let DbTx::Direct(d) = &tx else { unreachable!("a SQLite write") };
            assert!(d.raw.stmts.len() <= MAX_STATEMENTS);
            tx.commit().await.expect("commit");
            w.close().await.expect("close");
        });
    }

    /// Commits `n` transactions of 10 rows of 4 KiB each (about a dozen
    /// pages of log each) through `w`, to table `t (a, b)`.
    async fn fill(w: &mut DirectConn, n: i64) {
        for i in 0..n {
            let mut tx = w.begin().await.expect("begin");
            for j in 0..10 {
                let blob = vec![u8::try_from((i + j) % 251).expect("a byte"); 4096];
                tx.raw()
                    .run("INSERT INTO t (b) VALUES ($1)", &[Arg::Bytes(&blob)], |_| Ok::<_, sqlx::Error>(()), |e| e)
                    .expect("insert");
            }
            tx.commit().expect("commit");
        }
    }

    /// A writer of a new store at `path` with a table `t`, checkpointed by
    /// a thread with these limits.
    async fn checkpointed_writer(path: &std::path::Path, behind: c_int, backstop: c_int) -> DirectConn {
        writer_checkpointed_by(path, |p| Checkpointer::start_with(p, behind, backstop)).await
    }

    /// A writer of a new store at `path` with a table `t`, checkpointed by
    /// what `start` starts.
    async fn writer_checkpointed_by(
        path: &std::path::Path,
        start: impl FnOnce(&std::path::Path) -> std::io::Result<Checkpointer>,
    ) -> DirectConn {
        let mut other = open(path).await;
        sqlx::query("CREATE TABLE t (a INTEGER PRIMARY KEY, b BLOB)").execute(&mut other).await.expect("schema");
        other.close().await.expect("close");
        let mut w = DirectConn::new(open(path).await);
        let c = start(path).expect("a checkpointer");
        w.checkpoint_with(c).await.expect("started");
        w
    }

    fn wal(path: &std::path::Path) -> std::path::PathBuf {
        let mut p = path.as_os_str().to_owned();
        p.push("-wal");
        p.into()
    }

    #[test]
    fn a_thread_of_its_own_checkpoints_the_log_and_the_last_close_removes_it() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("s.db");
        block_on(async {
            let mut other = open(&path).await;
            sqlx::query("CREATE TABLE t (a INTEGER PRIMARY KEY, b BLOB)").execute(&mut other).await.expect("schema");
            let mut w = DirectConn::new(open(&path).await);
            // Woken past 64 pages of log; the writer's own checkpoint
            // only past 512.
            let c = Checkpointer::start_with(&path, 64, 512).expect("a checkpointer");
            w.checkpoint_with(c).await.expect("started");
            // About 2,400 pages of log in all.
            fill(&mut w, 200).await;
            // Woken, the thread may not have run yet on a busy machine.
            let waited = std::time::Instant::now();
            while w.checkpoints().expect("counted").0 == 0 && waited.elapsed().as_secs() < 20 {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            let (thread, _) = w.checkpoints().expect("counted");
            assert!(thread > 0, "the thread checkpointed {thread} times");
            // Checkpointed (by the thread, or the backstop: retried at
            // each commit while the thread's checkpoint holds it off),
            // the log started over: far from its 2,400 pages.
            let most = std::fs::metadata(wal(&path)).expect("a log").len();
            assert!(most < 1000 * 4120, "the log grew to {most} bytes");
            assert_eq!(
                sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM t").fetch_one(&mut other).await.unwrap(),
                2000
            );
            other.close().await.expect("close");
            w.close().await.expect("close");
            assert!(!wal(&path).exists(), "the last connection's close checkpoints and removes the log");
            let mut again = open(&path).await;
            assert_eq!(
                sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM t").fetch_one(&mut again).await.unwrap(),
                2000
            );
        });
    }

    #[test]
    fn the_thread_is_woken_once_per_growth_of_the_log_not_after_every_commit() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("s.db");
        block_on(async {
            // Woken after each commit from 512 pages of log to 1,024, then
            // each 512 pages the log grows by; never the writer.
            let mut w = checkpointed_writer(&path, 512, c_int::MAX).await;
            // 300 commits of 10 rows each, about 14 pages a commit: some
            // 4,200 pages of log in all, 260 commits past the first 512.
            fill(&mut w, 300).await;
            let pages = i64::try_from(std::fs::metadata(wal(&path)).expect("a log").len() / 4120).expect("pages");
            let waited = std::time::Instant::now();
            while w.checkpoints().expect("counted").0 == 0 && waited.elapsed().as_secs() < 20 {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            let (thread, inline) = w.checkpoints().expect("counted");
            assert_eq!(inline, 0);
            assert!(thread > 0, "the thread never checkpointed");
            // About 37 wakes from 512 pages to 1,024 (one a commit) and 6
            // past it, 43 here (more should the log start over, 37 more
            // each time). Woken after every commit past 512 pages, as
            // before, it checkpointed 260 times.
            assert!(thread <= 100, "the thread checkpointed {thread} times (the log is {pages} pages)");
            drop(w);
        });
    }

    #[test]
    fn the_thread_grows_the_limits_with_the_store() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("s.db");
        block_on(async {
            let mut w = writer_checkpointed_by(&path, |p| Checkpointer::start_growing(p, 16, 64)).await;
            assert_eq!(w.checkpointer.as_ref().expect("started").limits_now(), (16, 64));
            // 1,000 rows of 4 KiB: some 2,000 pages of store, whose eighth
            // is past four times the wake point.
            fill(&mut w, 100).await;
            let waited = std::time::Instant::now();
            while w.checkpointer.as_ref().expect("started").limits_now() != (64, 512) && waited.elapsed().as_secs() < 20
            {
                // Each commit past the wake point wakes the thread.
                fill(&mut w, 1).await;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            let pages = std::fs::metadata(&path).expect("the store").len() / 4096;
            assert!(pages >= 8 * 64, "the store is {pages} pages");
            assert_eq!(w.checkpointer.as_ref().expect("started").limits_now(), (64, 512));
            w.close().await.expect("close");
        });
    }

    #[test]
    fn past_the_backstop_the_writer_checkpoints_in_its_commit() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("s.db");
        block_on(async {
            // The thread is never woken.
            let mut w = checkpointed_writer(&path, c_int::MAX, 64).await;
            fill(&mut w, 100).await;
            let (thread, inline) = w.checkpoints().expect("counted");
            assert_eq!(thread, 0);
            assert!(inline >= 10, "the writer checkpointed {inline} times");
            let most = std::fs::metadata(wal(&path)).expect("a log").len();
            assert!(most < 90 * 4120, "the log grew to {most} bytes");
            // Dropped, not closed: the hook comes off and the thread ends.
            drop(w);
        });
    }

    #[test]
    fn a_checkpointer_that_cannot_open_the_store_says_where() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("missing").join("s.db");
        let e = Checkpointer::start(&path).err().expect("an error").to_string();
        assert!(e.contains(&path.display().to_string()), "{e}");
    }
}
