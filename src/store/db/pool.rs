//! SQLite's read pool: up to [`MAX`] read-only connections, each a
//! [`DirectConn`], lent to one reader at a time.
//!
//! sqlx's own pool would run a read transaction's statements on its
//! worker thread (see [`super::direct`]), and cannot keep statements of
//! ours prepared on its connections: it closes a connection when it has
//! been idle or open too long, and closing one with a statement left on
//! it fails. Here a connection stays open, with the statements its reads
//! prepared, until the pool closes it (which finalizes them); one dropped
//! elsewhere finalizes them itself (`DirectConn`'s `Drop`). Connections
//! are opened when first needed.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use sqlx::Connection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::direct::DirectConn;

/// Connections open at most.
pub const MAX: usize = 4;

/// How long a reader waits for a connection when all are lent, as
/// sqlx's pools do by default.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);

/// A pool of read connections to one store file; clones share it.
#[derive(Clone)]
pub struct ReadPool(Arc<Shared>);

struct Shared {
    opts: SqliteConnectOptions,
    /// Open connections not lent.
    idle: Mutex<Vec<DirectConn>>,
    /// One per connection that may be lent; closed when the pool is.
    permits: Arc<Semaphore>,
}

/// A connection lent by a [`ReadPool`], back in the pool when dropped.
pub struct Lent {
    /// `None` only once detached.
    conn: Option<DirectConn>,
    pool: Arc<Shared>,
    _permit: OwnedSemaphorePermit,
}

impl ReadPool {
    /// A pool of connections opened with `opts` (none yet).
    pub fn new(opts: SqliteConnectOptions) -> ReadPool {
        ReadPool(Arc::new(Shared { opts, idle: Mutex::new(Vec::new()), permits: Arc::new(Semaphore::new(MAX)) }))
    }

    /// A connection: an idle one, else a new one while fewer than [`MAX`]
    /// are lent, else the first given back (at most [`ACQUIRE_TIMEOUT`]).
    pub async fn acquire(&self) -> Result<Lent, sqlx::Error> {
        let permit = tokio::time::timeout(ACQUIRE_TIMEOUT, self.0.permits.clone().acquire_owned())
            .await
            .map_err(|_| sqlx::Error::PoolTimedOut)?
            .map_err(|_| sqlx::Error::PoolClosed)?;
        let idle = self.0.idle.lock().unwrap_or_else(PoisonError::into_inner).pop();
        let conn = match idle {
            Some(c) => c,
            None => DirectConn::new(SqliteConnection::connect_with(&self.0.opts).await?),
        };
        Ok(Lent { conn: Some(conn), pool: self.0.clone(), _permit: permit })
    }

    /// Closes the idle connections (finalizing their statements); those
    /// lent close when given back. No connection is lent after this.
    pub async fn close(&self) {
        self.0.permits.close();
        let idle = std::mem::take(&mut *self.0.idle.lock().unwrap_or_else(PoisonError::into_inner));
        for c in idle {
            if let Err(e) = c.close().await {
                tracing::debug!(error = %e, "closing a read connection");
            }
        }
    }
}

impl Lent {
    pub fn direct(&mut self) -> &mut DirectConn {
        self.conn.as_mut().expect("a lent connection is taken only by detach")
    }

    /// The connection, no longer the pool's (its place in the pool is
    /// free again).
    pub fn detach(mut self) -> DirectConn {
        self.conn.take().expect("a lent connection is taken only by detach")
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        if self.pool.permits.is_closed() {
            // Closed while lent: this one closes now (dropped).
            return;
        }
        self.pool.idle.lock().unwrap_or_else(PoisonError::into_inner).push(conn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::db::{AsDb, DbTx, query};

    async fn store(dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("s.db");
        let opts = SqliteConnectOptions::new().filename(&path).create_if_missing(true);
        let mut c = SqliteConnection::connect_with(&opts).await.expect("create");
        sqlx::query("CREATE TABLE t (n INTEGER)").execute(&mut c).await.expect("table");
        sqlx::query("INSERT INTO t VALUES (1), (2), (3)").execute(&mut c).await.expect("rows");
        c.close().await.expect("close");
        path
    }

    async fn sum(on: &mut impl AsDb) -> i64 {
        query("SELECT SUM(n) AS s FROM t").fetch_one(on).await.expect("sum").try_get("s").expect("s")
    }

    #[tokio::test]
    async fn a_connection_keeps_its_statements_between_reads_and_the_pool_lends_at_most_max() {
        let dir = tempfile::tempdir().expect("dir");
        let path = store(dir.path()).await;
        let pool = ReadPool::new(SqliteConnectOptions::new().filename(&path).read_only(true));
        let mut lent = Vec::new();
        for _ in 0..MAX {
            let mut c = pool.acquire().await.expect("acquire");
            let mut tx = DbTx::Direct(c.direct().begin_read().await.expect("begin"));
            assert_eq!(sum(&mut tx).await, 6);
            tx.commit().await.expect("commit");
            lent.push(c);
        }
        // All lent: the next waits until one is given back.
        let waiting = tokio::spawn({
            let pool = pool.clone();
            async move {
                let mut c = pool.acquire().await.expect("acquire");
                let mut tx = DbTx::Direct(c.direct().begin_read().await.expect("begin"));
                let s = sum(&mut tx).await;
                tx.commit().await.expect("commit");
                (s, c.direct().kept())
            }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "a fifth connection was lent");
        lent.pop();
        let (s, kept) = waiting.await.expect("reader");
        // It got the connection given back, with the statements it kept:
        // BEGIN, the sum and COMMIT.
        assert_eq!((s, kept), (6, 3));
        drop(lent);
        pool.close().await;
        assert!(matches!(pool.acquire().await, Err(sqlx::Error::PoolClosed)));
    }

    #[tokio::test]
    async fn a_read_transaction_dropped_uncommitted_leaves_the_connection_usable() {
        let dir = tempfile::tempdir().expect("dir");
        let path = store(dir.path()).await;
        let pool = ReadPool::new(SqliteConnectOptions::new().filename(&path).read_only(true));
        let mut c = pool.acquire().await.expect("acquire");
        {
            let mut tx = DbTx::Direct(c.direct().begin_read().await.expect("begin"));
            assert_eq!(sum(&mut tx).await, 6);
        }
        let mut tx = DbTx::Direct(c.direct().begin_read().await.expect("a second begin"));
        assert_eq!(sum(&mut tx).await, 6);
        tx.commit().await.expect("commit");
        drop(c);
        pool.close().await;
    }
}
