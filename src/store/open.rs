//! Opening store files and bringing their schema up to date.
//!
//! The schema is the numbered files in `migrations/`, embedded at build
//! time by `sqlx::migrate!` and applied when a writer opens the file (a
//! store from a newer lkpbot is refused before anything is touched).
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
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqliteSynchronous};
use sqlx::{Connection, Row};

use super::{StoreError, err};

static MIGRATOR: Migrator = sqlx::migrate!("./migrations");

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
pub(super) async fn writer(path: &Path) -> Result<SqliteConnection, StoreError> {
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
        // 4 MiB: an archive import writes hundreds of MiB.
        .pragma("wal_autocheckpoint", "16384")
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT);
    let mut conn = SqliteConnection::connect_with(&opts)
        .await
        .map_err(|source| StoreError::Open { path: path.to_path_buf(), source })?;
    migrate(&mut conn, path).await?;
    drop(guard);
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

pub(super) async fn in_memory() -> Result<SqliteConnection, StoreError> {
    let opts = SqliteConnectOptions::from_str("sqlite::memory:")
        .map_err(|source| StoreError::Open { path: ":memory:".into(), source })?
        .foreign_keys(true);
    let mut conn = SqliteConnection::connect_with(&opts)
        .await
        .map_err(|source| StoreError::Open { path: ":memory:".into(), source })?;
    migrate(&mut conn, Path::new(":memory:")).await?;
    Ok(conn)
}

/// The highest schema version applied to the store; 0 for a new one.
async fn applied_version(conn: &mut SqliteConnection) -> Result<i64, StoreError> {
    let exists = sqlx::query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'")
        .fetch_optional(&mut *conn)
        .await
        .map_err(err("read the schema version"))?
        .is_some();
    if !exists {
        return Ok(0);
    }
    sqlx::query("SELECT COALESCE(MAX(version), 0) FROM _sqlx_migrations WHERE success")
        .fetch_one(&mut *conn)
        .await
        .and_then(|r| r.try_get(0))
        .map_err(err("read the schema version"))
}

/// Refuses a newer schema, else applies what is missing.
async fn migrate(conn: &mut SqliteConnection, path: &Path) -> Result<(), StoreError> {
    let found = applied_version(conn).await?;
    let known = schema_version();
    if found > known {
        return Err(StoreError::TooNew { path: path.to_path_buf(), found, known });
    }
    if found < known {
        MIGRATOR.run(&mut *conn).await.map_err(|source| StoreError::Migrate { path: path.to_path_buf(), source })?;
    }
    Ok(())
}

/// The read-only pool of a store file; never creates or changes the file.
/// A store on a read-only medium (where SQLite cannot create the WAL
/// index beside it) is opened as immutable.
pub(super) async fn reader(path: &Path) -> Result<SqlitePool, StoreError> {
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
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT);
    let pool = match pool_with(opts.clone(), path).await {
        Ok(p) => p,
        Err(first) => match pool_with(opts.immutable(true), path).await {
            Ok(p) => p,
            Err(_) => return Err(first),
        },
    };
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
    Ok(pool)
}

/// A pool of up to four read-only connections, tried once.
async fn pool_with(opts: SqliteConnectOptions, path: &Path) -> Result<SqlitePool, StoreError> {
    let pool = sqlx::sqlite::SqlitePoolOptions::new().max_connections(4).min_connections(0).connect_lazy_with(opts);
    // Lazy pools fail at first use: try one connection now.
    let mut conn = pool.acquire().await.map_err(|source| StoreError::Open { path: path.to_path_buf(), source })?;
    sqlx::query("SELECT COUNT(*) FROM sqlite_master")
        .fetch_one(&mut *conn)
        .await
        .map_err(|source| StoreError::Open { path: path.to_path_buf(), source })?;
    drop(conn);
    Ok(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_sits_beside_the_store() {
        assert_eq!(lock_path(Path::new("/x/lkpbot.db")), PathBuf::from("/x/lkpbot.db-lock"));
    }

    #[test]
    fn one_schema_version_is_known() {
        assert!(schema_version() >= 1);
    }
}
