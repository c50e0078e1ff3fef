//! What the threading of each unsettled message depends on
//! (`thread_deps`), and the Bloom filter that keeps most "does anything
//! depend on this?" questions away from SQLite: in a list archive almost
//! no message is waited for.
//!
//! Keys are strings made by `thread::keys` (`dep_message`, `dep_subject`,
//! `dep_commit`). The filter holds every key of the table (added to
//! before each insert, never removed from); it is filled from the table
//! at a connection's first write transaction and again whenever the
//! store's write version (`db::write_version`: SQLite's `PRAGMA
//! data_version`) shows that another connection committed since.

use std::collections::BTreeSet;

use super::db::{self, AsDb, query};
use super::filter::Filter;
use super::{StoreError, Tx, err, insert_sql, padded};
use crate::model::MessageId;

#[derive(Default)]
pub(super) struct DepFilter {
    keys: Filter,
    /// The write version this connection's last write left
    /// (`db::write_version`); `None` before the first.
    version: Option<i64>,
}

impl DepFilter {
    /// Fills the filter again if another connection committed since it
    /// was filled. Called at the start of every write transaction (which
    /// holds the write lock, so nothing commits during it).
    pub(super) async fn refresh(&mut self, conn: &mut impl AsDb) -> Result<(), StoreError> {
        let (seen, mine) = db::write_version(conn).await.map_err(err("read the data version"))?;
        if self.version == Some(seen) {
            self.version = Some(mine);
            return Ok(());
        }
        let mut keys = Filter::default();
        query("SELECT DISTINCT dep_key FROM thread_deps")
            .for_each(conn, "read thread dependencies", |row| {
                let key: &str = row.try_get(0).map_err(err("read thread dependencies"))?;
                keys.insert(key);
                Ok(())
            })
            .await?;
        *self = DepFilter { keys, version: Some(mine) };
        Ok(())
    }
}

impl Tx<'_> {
    /// Whether anything may depend on `key` (false: certainly nothing).
    pub fn may_have_dependents(&self, key: &str) -> bool {
        self.deps.keys.may_contain(key)
    }

    /// The messages whose threading depends on any of `keys`, each once,
    /// in Message-ID order.
    pub async fn dependents(&mut self, keys: &[&str]) -> Result<Vec<MessageId>, StoreError> {
        let maybe: Vec<&str> = keys.iter().copied().filter(|k| self.deps.keys.may_contain(k)).collect();
        if maybe.is_empty() {
            return Ok(Vec::new());
        }
        super::select_message_ids(
            &mut self.tx,
            "SELECT DISTINCT message_id FROM thread_deps WHERE dep_key IN",
            &maybe,
            "look up thread dependencies",
        )
        .await
    }

    /// Takes away up to `n` of the dependencies on `key`, in Message-ID
    /// order; returns whose they were.
    pub async fn take_dependents(&mut self, key: &str, n: usize) -> Result<Vec<MessageId>, StoreError> {
        if !self.deps.keys.may_contain(key) {
            return Ok(Vec::new());
        }
        let limit = i64::try_from(n).unwrap_or(i64::MAX);
        let rows = query("SELECT message_id FROM thread_deps WHERE dep_key = $1 ORDER BY message_id LIMIT $2")
            .bind(key)
            .bind(limit)
            .fetch_all(&mut self.tx)
            .await
            .map_err(err("look up thread dependencies"))?;
        let ids = rows
            .iter()
            .map(|r| r.try_get::<String, _>(0).map_err(err("look up thread dependencies")))
            .map(|id| id.and_then(|id| super::rows::message_id(&id)))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(last) = ids.last() {
            query("DELETE FROM thread_deps WHERE dep_key = $1 AND message_id <= $2")
                .bind(key)
                .bind(last.as_str())
                .execute(&mut self.tx)
                .await
                .map_err(err("drop thread dependencies"))?;
        }
        Ok(ids)
    }

    /// Makes `keys` the whole set of what `id`'s threading depends on
    /// (`fresh`: a message stored just now, which depends on nothing yet).
    pub async fn set_deps(&mut self, id: &MessageId, keys: &[String], fresh: bool) -> Result<(), StoreError> {
        if fresh {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            return self.add_deps(id, &keys).await;
        }
        let rows = query("SELECT dep_key FROM thread_deps WHERE message_id = $1")
            .bind(id.as_str())
            .fetch_all(&mut self.tx)
            .await
            .map_err(err("read thread dependencies"))?;
        let have: BTreeSet<String> =
            rows.iter().map(|r| r.try_get(0)).collect::<Result<_, _>>().map_err(err("read thread dependencies"))?;
        let want: BTreeSet<&str> = keys.iter().map(String::as_str).collect();
        let gone: Vec<&str> = have.iter().map(String::as_str).filter(|k| !want.contains(k)).collect();
        for chunk in padded(&gone) {
            let sql = format!(
                "DELETE FROM thread_deps WHERE message_id = ? AND dep_key IN ({})",
                super::placeholders(chunk.len())
            );
            let mut q = query(sql).bind(id.as_str());
            for k in chunk {
                q = q.bind(*k);
            }
            q.execute(&mut self.tx).await.map_err(err("drop thread dependencies"))?;
        }
        let new: Vec<&str> = want.into_iter().filter(|k| !have.contains(*k)).collect();
        self.add_deps(id, &new).await
    }

    /// Adds dependencies of many messages at once: `(key, message)` pairs
    /// (messages stored now, which have none yet).
    pub async fn add_deps_of(&mut self, deps: &[(String, MessageId)]) -> Result<(), StoreError> {
        for (k, _) in deps {
            self.deps.keys.insert(k);
        }
        for chunk in padded(deps) {
            let sql = insert_sql(
                "thread_deps (dep_key, message_id)",
                2,
                chunk.len(),
                "ON CONFLICT (dep_key, message_id) DO NOTHING",
            );
            let mut q = query(sql);
            for (k, id) in chunk {
                q = q.bind(k.as_str()).bind(id.as_str());
            }
            q.execute(&mut self.tx).await.map_err(err("record thread dependencies"))?;
        }
        Ok(())
    }

    /// Adds to what `id`'s threading depends on (a message stored now has
    /// nothing yet).
    pub async fn add_deps(&mut self, id: &MessageId, keys: &[&str]) -> Result<(), StoreError> {
        let deps: Vec<(String, MessageId)> = keys.iter().map(|k| (k.to_string(), id.clone())).collect();
        self.add_deps_of(&deps).await
    }
}
