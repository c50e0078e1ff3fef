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
use super::{StoreError, Tx, err, padded, select_in};
use crate::model::MessageId;

/// A message's place in threading order (see [`Tx::thread_order`]), of
/// its row `m`.
const AT: &str = "COALESCE(m.date, m.fetched_at)";

/// Rows of (Message-ID, place in threading order), each once, in that
/// order.
fn ordered(rows: Vec<db::Row>) -> Result<Vec<(i64, MessageId)>, StoreError> {
    let mut out = BTreeSet::new();
    for r in rows {
        let id: String = r.try_get(0).map_err(err("read thread order"))?;
        let at: i64 = r.try_get(1).map_err(err("read thread order"))?;
        out.insert((at, super::rows::message_id(&id)?));
    }
    Ok(out.into_iter().collect())
}

#[derive(Default)]
pub(super) struct DepFilter {
    keys: Filter,
    /// The write version this connection's last write left
    /// (`db::write_version`); `None` before the first.
    version: Option<i64>,
}

impl DepFilter {
    /// The write version this connection's last write left (`None`
    /// before the first).
    pub(super) fn version(&self) -> Option<i64> {
        self.version
    }

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
    /// in Message-ID order (their places in threading order are looked
    /// up only for what is threaded).
    pub async fn dependents(&mut self, keys: &[&str]) -> Result<Vec<MessageId>, StoreError> {
        let maybe: Vec<&str> = keys.iter().copied().filter(|k| self.deps.keys.may_contain(k)).collect();
        if maybe.is_empty() {
            return Ok(Vec::new());
        }
        super::select_message_ids(
            &mut self.tx,
            "SELECT DISTINCT m.message_id FROM thread_deps d JOIN messages m ON m.seq = d.seq WHERE d.dep_key IN",
            &maybe,
            "look up thread dependencies",
        )
        .await
    }

    /// Takes away up to `n` of the dependencies on `key`, the first in
    /// threading order ([`Tx::thread_order`]); returns whose they were,
    /// in that order.
    pub async fn take_dependents(&mut self, key: &str, n: usize) -> Result<Vec<(i64, MessageId)>, StoreError> {
        if !self.deps.keys.may_contain(key) {
            return Ok(Vec::new());
        }
        let limit = i64::try_from(n).unwrap_or(i64::MAX);
        let rows = query(format!(
            "SELECT m.message_id, {AT} AS at, m.seq FROM thread_deps d JOIN messages m ON m.seq = d.seq \
             WHERE d.dep_key = $1 ORDER BY at, m.message_id LIMIT $2"
        ))
        .bind(key)
        .bind(limit)
        .fetch_all(&mut self.tx)
        .await
        .map_err(err("look up thread dependencies"))?;
        let seqs: Vec<i64> =
            rows.iter().map(|r| r.try_get(2)).collect::<Result<_, _>>().map_err(err("look up thread dependencies"))?;
        let taken = ordered(rows)?;
        for chunk in padded(&seqs) {
            let sql =
                format!("DELETE FROM thread_deps WHERE dep_key = ? AND seq IN ({})", super::placeholders(chunk.len()));
            let mut q = query(sql).bind(key);
            for seq in chunk {
                q = q.bind(*seq);
            }
            q.execute(&mut self.tx).await.map_err(err("drop thread dependencies"))?;
        }
        Ok(taken)
    }

    /// `ids` (stored messages) in threading order: by date (the time it
    /// was fetched, for a message without one), then Message-ID. Ancestors
    /// mostly come first, so what threading one of them wakes in its
    /// thread is threaded once, after all of them.
    pub async fn thread_order(&mut self, ids: &[&str]) -> Result<Vec<(i64, MessageId)>, StoreError> {
        let select = format!("SELECT m.message_id, {AT} FROM messages m WHERE m.message_id IN");
        ordered(select_in(&mut self.tx, &select, "", ids, "read message dates").await?)
    }

    /// Makes `keys` the whole set of what `id`'s threading depends on
    /// (`fresh`: a message stored just now, which depends on nothing yet).
    pub async fn set_deps(&mut self, id: &MessageId, keys: &[String], fresh: bool) -> Result<(), StoreError> {
        if fresh {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            return self.add_deps(id, &keys).await;
        }
        let seq: Option<i64> = query("SELECT seq FROM messages WHERE message_id = $1")
            .bind(id.as_str())
            .fetch_optional(&mut self.tx)
            .await
            .and_then(|r| r.map(|r| r.try_get(0)).transpose())
            .map_err(err("read thread dependencies"))?;
        let Some(seq) = seq else { return Ok(()) };
        let rows = query("SELECT dep_key FROM thread_deps WHERE seq = $1")
            .bind(seq)
            .fetch_all(&mut self.tx)
            .await
            .map_err(err("read thread dependencies"))?;
        let have: BTreeSet<String> =
            rows.iter().map(|r| r.try_get(0)).collect::<Result<_, _>>().map_err(err("read thread dependencies"))?;
        let want: BTreeSet<&str> = keys.iter().map(String::as_str).collect();
        let gone: Vec<&str> = have.iter().map(String::as_str).filter(|k| !want.contains(k)).collect();
        for chunk in padded(&gone) {
            let sql =
                format!("DELETE FROM thread_deps WHERE seq = ? AND dep_key IN ({})", super::placeholders(chunk.len()));
            let mut q = query(sql).bind(seq);
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
            let mut q = query(super::insert_numbered_sql("thread_deps", &["dep_key"], "seq, dep_key", chunk.len()));
            for (k, id) in chunk {
                q = q.bind(id.as_str()).bind(k.as_str());
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
