//! Opening store files and PostgreSQL databases and bringing their
//! schema up to date.
//!
//! The schema is the numbered files in `migrations/` (SQLite) and
//! `migrations/postgres/` (the same versions in PostgreSQL's DDL),
//! embedded at build time by `sqlx::migrate!` and applied when a writer
//! opens the store (a store from a newer lkpbot is refused before
//! anything is touched). On PostgreSQL sqlx's migrator holds an advisory
//! lock while it migrates, so writers starting together migrate once.
//!
//! Several processes may open a store that does not exist yet: turning a
//! new file into WAL mode needs an exclusive lock SQLite cannot wait for,
//! and two migrators would both try to create the tables. So a writer
//! creates and initialises the file holding an exclusive lock on
//! `<store>-lock` beside it, and a reader that finds that file waits on a
//! shared lock until the writer is done. The lock is the operating
//! system's (`flock`), so a killed process never leaves it held.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection};

use super::db::pool::ReadPool;
use super::db::{self, AsDb, Conn, DirectConn, Pool};
use super::{StoreError, err};

static MIGRATOR: Migrator = sqlx::migrate!("./migrations");
static PG_MIGRATOR: Migrator = sqlx::migrate!("./migrations/postgres");

/// Where a store is: a SQLite file or a PostgreSQL database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(Box<PgTarget>),
}

impl Location {
    pub fn backend(&self) -> db::Backend {
        match self {
            Location::Sqlite(_) => db::Backend::Sqlite,
            Location::Postgres(_) => db::Backend::Postgres,
        }
    }

    /// A PostgreSQL database from a `postgres://` URL and the password
    /// read from the config's `password_env`/`password_file` (a password
    /// in the URL itself also works, and wins).
    pub fn postgres(url: &str, password: Option<String>) -> Result<Location, StoreError> {
        let opts = PgConnectOptions::from_str(url)
            .map_err(|source| StoreError::Open { path: PathBuf::from(redact(url)), source })?;
        Ok(Location::Postgres(Box::new(PgTarget { url: url.to_string(), password, opts })))
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "{}", p.display()),
            Location::Postgres(pg) => write!(f, "{pg}"),
        }
    }
}

/// A PostgreSQL database: its URL and password.
#[derive(Clone, Debug)]
pub struct PgTarget {
    url: String,
    password: Option<String>,
    opts: PgConnectOptions,
}

impl PartialEq for PgTarget {
    fn eq(&self, other: &PgTarget) -> bool {
        self.url == other.url && self.password == other.password
    }
}

impl Eq for PgTarget {}

impl PgTarget {
    fn options(&self) -> PgConnectOptions {
        let o = self.opts.clone().application_name("lkpbot");
        match &self.password {
            // A password in the URL wins.
            Some(p) if redact(&self.url) == self.url => o.password(p),
            _ => o,
        }
    }

    /// `host:port` (or the socket), for errors.
    fn server(&self) -> String {
        match self.opts.get_socket() {
            Some(s) => format!("{} (port {})", s.display(), self.opts.get_port()),
            None => format!("{}:{}", self.opts.get_host(), self.opts.get_port()),
        }
    }
}

/// The URL without a password in it (`user:***@`).
fn redact(url: &str) -> String {
    let Some(start) = url.find("://").map(|i| i + 3) else { return url.to_string() };
    let rest = &url[start..];
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    match rest[..end].rfind('@').and_then(|at| rest[..at].find(':')) {
        Some(colon) => {
            let at = rest[..end].rfind('@').unwrap_or(colon);
            format!("{}{}:***{}", &url[..start], &rest[..colon], &rest[at..])
        }
        None => url.to_string(),
    }
}

impl std::fmt::Display for PgTarget {
    /// The URL without its password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&redact(&self.url))
    }
}

/// How long the first connection to a PostgreSQL server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Connecting to a PostgreSQL server once, the error naming the server.
async fn pg_connect(pg: &PgTarget) -> Result<PgConnection, StoreError> {
    let unreachable = |source| StoreError::Unreachable { at: pg.server(), source };
    match tokio::time::timeout(CONNECT_TIMEOUT, pg.options().connect()).await {
        Ok(r) => r.map_err(unreachable),
        Err(_) => Err(unreachable(sqlx::Error::PoolTimedOut)),
    }
}

/// Connects a writer to a PostgreSQL database again, after the server
/// went away: the delay doubles from one second to a minute, for at most
/// [`Reconnect::PATIENCE`] in all.
#[derive(Clone, Debug)]
pub(super) struct Reconnect(PgTarget);

impl Reconnect {
    const PATIENCE: Duration = Duration::from_secs(600);

    pub(super) async fn connect_with_backoff(&self) -> Result<PgConnection, StoreError> {
        let start = tokio::time::Instant::now();
        let mut wait = Duration::from_secs(1);
        loop {
            match pg_connect(&self.0).await {
                Ok(c) => {
                    tracing::info!(server = %self.0.server(), "connected to the store again");
                    return Ok(c);
                }
                Err(e) if start.elapsed() + wait > Self::PATIENCE => return Err(e),
                Err(e) => {
                    tracing::warn!(error = %e, retry_in_s = wait.as_secs(), "the store's server is away");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(60));
                }
            }
        }
    }
}

/// The write connection of a PostgreSQL database, migrated.
pub(super) async fn pg_writer(pg: &PgTarget) -> Result<(PgConnection, Reconnect), StoreError> {
    let mut conn = Conn::Pg(pg_connect(pg).await?);
    let path = PathBuf::from(pg.to_string());
    migrate(&mut conn, &path).await?;
    let Conn::Pg(conn) = conn else { unreachable!("a PostgreSQL connection stays one") };
    Ok((conn, Reconnect(pg.clone())))
}

/// The read pool of a PostgreSQL database: never creates or migrates.
pub(super) async fn pg_reader(pg: &PgTarget) -> Result<Pool, StoreError> {
    let pool = PgPoolOptions::new()
        .max_connections(4)
        .min_connections(0)
        .acquire_timeout(CONNECT_TIMEOUT)
        .connect_lazy_with(pg.options());
    // Lazy pools fail at first use: try one connection now.
    drop(pool.acquire().await.map_err(|source| StoreError::Unreachable { at: pg.server(), source })?);
    let mut pool = Pool::Pg(pool);
    check_readable(&mut pool, &PathBuf::from(pg.to_string())).await?;
    Ok(pool)
}

/// The map size a read connection asks for: the cap the bundled SQLite
/// is built with (`.cargo/config.toml`); SQLite lowers it to its cap
/// where built otherwise, and maps no more than the file.
const MMAP_SIZE: &str = "1099511627776";

/// How long a statement waits for another process's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The newest schema version this build knows.
pub fn schema_version() -> i64 {
    MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
}

fn lock_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push("-lock");
    PathBuf::from(s)
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io { path: path.to_path_buf(), source }
}

/// Takes `lock` (exclusive or shared) on a blocking thread: waiting for
/// another process must not stall the runtime.
async fn lock(file: File, exclusive: bool, path: &Path) -> Result<File, StoreError> {
    tokio::task::spawn_blocking(move || {
        let r = if exclusive { file.lock() } else { file.lock_shared() };
        r.map(|()| file)
    })
    .await
    .map_err(|e| StoreError::Io { path: path.to_path_buf(), source: std::io::Error::other(e) })?
    .map_err(io_error(path))
}

/// The write connection of a store file: created if missing, in WAL mode,
/// migrated.
pub(super) async fn writer(path: &Path) -> Result<DirectConn, StoreError> {
    let lock_file = lock_path(path);
    // Opening the lock file first also surfaces the operating system's
    // reason when the directory is missing or not writable, which SQLite
    // reduces to "unable to open database file".
    let file =
        std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&lock_file).map_err(
            |source| StoreError::Io { path: path.to_path_buf(), source: annotate(source, &lock_file, path) },
        )?;
    let guard = lock(file, true, path).await?;
    let opts = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        // WAL with NORMAL survives a crash of the process; a power loss
        // may lose the last transactions, which a re-fetch redoes.
        .synchronous(SqliteSynchronous::Normal)
        // Checkpoint (and fsync) every 64 MiB of WAL rather than every
        // 4 MiB (an archive import writes hundreds of MiB), where the
        // checkpoints cannot run on a thread of their own
        // (`DirectConn::checkpoint_behind`, which takes this over).
        .pragma("wal_autocheckpoint", "16384")
        // A statement that writes several rows keeps the pages it changes
        // in a statement journal, to undo it alone: a temporary file
        // past 64 KiB, written through the kernel (an archive import
        // wrote as much there as to the log). In memory it is a copy,
        // freed when the statement ends.
        .pragma("temp_store", "memory")
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT);
    let conn = SqliteConnection::connect_with(&opts)
        .await
        .map_err(|source| StoreError::Open { path: path.to_path_buf(), source })?;
    let mut conn = Conn::Sqlite(DirectConn::new(conn));
    migrate(&mut conn, path).await?;
    drop(guard);
    let Conn::Sqlite(mut conn) = conn else { unreachable!("a SQLite connection stays one") };
    if let Err(why) = conn.checkpoint_behind(path).await {
        tracing::warn!(path = %path.display(), %why, "the store's log is checkpointed in its commits");
    }
    Ok(conn)
}

/// Names the lock file in an error about it, which the user never made.
fn annotate(e: std::io::Error, lock_file: &Path, path: &Path) -> std::io::Error {
    if lock_file.parent().is_some_and(|d| !d.as_os_str().is_empty() && !d.exists()) {
        let dir = path.parent().map_or_else(String::new, |d| d.display().to_string());
        return std::io::Error::new(e.kind(), format!("directory {dir} does not exist ({e})"));
    }
    e
}

pub(super) async fn in_memory() -> Result<DirectConn, StoreError> {
    let opts = SqliteConnectOptions::from_str("sqlite::memory:")
        .map_err(|source| StoreError::Open { path: ":memory:".into(), source })?
        .foreign_keys(true);
    let conn = SqliteConnection::connect_with(&opts)
        .await
        .map_err(|source| StoreError::Open { path: ":memory:".into(), source })?;
    let mut conn = Conn::Sqlite(DirectConn::new(conn));
    migrate(&mut conn, Path::new(":memory:")).await?;
    let Conn::Sqlite(conn) = conn else { unreachable!("a SQLite connection stays one") };
    Ok(conn)
}

/// The highest schema version applied to the store; 0 for a new one.
async fn applied_version(conn: &mut impl AsDb) -> Result<i64, StoreError> {
    if !db::table_exists(conn, "_sqlx_migrations").await.map_err(err("read the schema version"))? {
        return Ok(0);
    }
    db::query("SELECT COALESCE(MAX(version), 0) FROM _sqlx_migrations WHERE success")
        .fetch_one(conn)
        .await
        .and_then(|r| r.try_get(0))
        .map_err(err("read the schema version"))
}

/// Refuses a newer schema, else applies what is missing.
async fn migrate(conn: &mut Conn, path: &Path) -> Result<(), StoreError> {
    let found = applied_version(conn).await?;
    let known = schema_version();
    if found > known {
        return Err(StoreError::TooNew { path: path.to_path_buf(), found, known });
    }
    if found < known {
        let r = match conn {
            Conn::Sqlite(c) => MIGRATOR.run(c.conn()).await,
            Conn::Pg(c) => PG_MIGRATOR.run(&mut *c).await,
        };
        r.map_err(|source| StoreError::Migrate { path: path.to_path_buf(), source })?;
    }
    Ok(())
}

/// The read-only pool of a store file; never creates or changes the file.
/// A store on a read-only medium (where SQLite cannot create the WAL
/// index beside it) is opened as immutable.
pub(super) async fn reader(path: &Path) -> Result<Pool, StoreError> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(StoreError::Missing { path: path.to_path_buf() });
        }
        Err(e) => return Err(StoreError::Io { path: path.to_path_buf(), source: e }),
        Ok(m) if m.len() == 0 && !lock_path(path).exists() => {
            return Err(StoreError::Missing { path: path.to_path_buf() });
        }
        Ok(_) => {}
    }
    // A writer may be creating the store right now: wait until it is done.
    let _guard = match File::open(lock_path(path)) {
        Ok(f) => Some(lock(f, false, path).await?),
        Err(_) => None,
    };
    let opts = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .create_if_missing(false)
        // Pages read through a map of the whole file rather than copied
        // by a system call each (SQLite is built to map up to 1 TiB:
        // `.cargo/config.toml`; with its default cap, 2 GiB, pages past
        // it are read as before). On a million-message store (4 GB) a
        // case page's reads are a third faster.
        .pragma("mmap_size", MMAP_SIZE)
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT);
    let pool = match pool_with(opts.clone(), path).await {
        Ok(p) => p,
        Err(first) => match pool_with(opts.immutable(true), path).await {
            Ok(p) => p,
            Err(_) => return Err(first),
        },
    };
    let mut pool = Pool::Sqlite(pool);
    check_readable(&mut pool, path).await?;
    Ok(pool)
}

/// Refuses to read a store whose schema is not this lkpbot's.
async fn check_readable(pool: &mut Pool, path: &Path) -> Result<(), StoreError> {
    let mut conn = pool.acquire().await.map_err(|source| StoreError::Open { path: path.to_path_buf(), source })?;
    let found = applied_version(&mut conn).await?;
    let known = schema_version();
    if found > known {
        return Err(StoreError::TooNew { path: path.to_path_buf(), found, known });
    }
    if found == 0 {
        return Err(StoreError::Missing { path: path.to_path_buf() });
    }
    if found < known {
        // Only a writer migrates; reading an older schema is refused
        // rather than guessed at.
        return Err(StoreError::Corrupt(format!(
            "the store at {} has schema {found}, older than this lkpbot's ({known}); run `lkpbot ingest` once to upgrade it",
            path.display()
        )));
    }
    Ok(())
}

/// A pool of up to four read-only connections, tried once.
async fn pool_with(opts: SqliteConnectOptions, path: &Path) -> Result<ReadPool, StoreError> {
    let pool = ReadPool::new(opts);
    // Connections open when first needed: try one now.
    let mut conn = pool.acquire().await.map_err(|source| StoreError::Open { path: path.to_path_buf(), source })?;
    sqlx::query("SELECT COUNT(*) FROM sqlite_master")
        .fetch_one(conn.direct().conn())
        .await
        .map_err(|source| StoreError::Open { path: path.to_path_buf(), source })?;
    drop(conn);
    Ok(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_stay_out_of_names() {
        assert_eq!(redact("postgres://bot:secret@db:5432/lkpbot"), "postgres://bot:***@db:5432/lkpbot");
        assert_eq!(redact("postgres://bot@db:5432/lkpbot"), "postgres://bot@db:5432/lkpbot");
        assert_eq!(redact("postgres://db/lkpbot?user=a:b@c"), "postgres://db/lkpbot?user=a:b@c");
    }

    #[test]
    fn the_lock_sits_beside_the_store() {
        assert_eq!(lock_path(Path::new("/x/lkpbot.db")), PathBuf::from("/x/lkpbot.db-lock"));
    }

    /// The store's write connection keeps statement journals (and any
    /// temporary table) in memory, not in files written through the
    /// kernel.
    #[tokio::test]
    async fn the_writer_keeps_temporary_data_in_memory() {
        let dir = tempfile::tempdir().expect("a directory");
        let mut w = writer(&dir.path().join("s.db")).await.expect("a store");
        let (store,): (i64,) = sqlx::query_as("PRAGMA temp_store").fetch_one(w.conn()).await.expect("the pragma");
        // 2: MEMORY.
        assert_eq!(store, 2);
        w.close().await.expect("closed");
    }

    /// A read connection maps the whole store file: SQLite was built
    /// with the cap `.cargo/config.toml` gives it (with its default cap
    /// it would answer 2 GiB).
    #[tokio::test]
    async fn a_reader_maps_the_whole_store() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("s.db");
        let store = crate::store::Store::open(&path).await.expect("a store");
        let pool = reader(&path).await.expect("a reader");
        let mut conn = pool.acquire().await.expect("a connection");
        let got: i64 = crate::store::db::query("PRAGMA mmap_size")
            .fetch_one(&mut conn)
            .await
            .expect("the pragma")
            .try_get(0)
            .expect("a size");
        assert_eq!(got.to_string(), MMAP_SIZE);
        drop(conn);
        pool.close().await;
        store.close().await.expect("closed");
    }

    #[test]
    fn one_schema_version_is_known() {
        assert!(schema_version() >= 1);
    }
}
