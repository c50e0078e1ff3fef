//! One-time upgrades of what a store already holds (`store_tasks`): a
//! migration leaves a task's name, and the writer that opens the store
//! does it in one write transaction that also takes the name away, so a
//! store is scanned once, and an open with nothing to do costs one read.
//!
//! `hyperkitty-keys`: robot reports stored before reports offered their
//! HyperKitty id get the `h:` key `thread::lifecycle::offered` gives a
//! report today, so a lists.01.org link finds them. Mail may already
//! wait on such a key; threading it again is the engine's, so the task
//! leaves `hyperkitty-rethread` for the engine's first write
//! ([`Tx::take_rethread`]).

use super::db::query;
use super::{Store, StoreError, Tx, err, rows};
use crate::classify::Kind;
use crate::model::MessageId;

const HYPERKITTY_KEYS: &str = "hyperkitty-keys";
const HYPERKITTY_RETHREAD: &str = "hyperkitty-rethread";

impl Store {
    /// Does the tasks the migrations left (called when a writer opens
    /// the store, after migrating); notes whether threading is left to
    /// do ([`Store::take_rethread_pending`]).
    pub(super) async fn run_tasks(&mut self) -> Result<(), StoreError> {
        let mut names: Vec<String> = Vec::new();
        query("SELECT name FROM store_tasks")
            .for_each(&mut self.conn, "read the store's tasks", |row| {
                let name: &str = row.try_get(0).map_err(err("read the store's tasks"))?;
                names.push(name.to_string());
                Ok(())
            })
            .await?;
        if names.iter().any(|n| n == HYPERKITTY_KEYS) {
            let mut tx = self.begin().await?;
            // Another writer may have done it since the read.
            if tx.take_task(HYPERKITTY_KEYS).await? {
                let added = tx.backfill_hyperkitty_keys().await?;
                if added > 0 {
                    tracing::info!(keys = added, "stored reports got their HyperKitty keys");
                    query("INSERT INTO store_tasks (name) VALUES ($1) ON CONFLICT DO NOTHING")
                        .bind(HYPERKITTY_RETHREAD)
                        .execute(&mut tx.tx)
                        .await
                        .map_err(err("record a store task"))?;
                    names.push(HYPERKITTY_RETHREAD.to_string());
                }
            }
            tx.commit().await?;
        }
        self.rethread = names.iter().any(|n| n == HYPERKITTY_RETHREAD);
        Ok(())
    }

    /// Whether mail waiting on keys the open added may have to be
    /// threaded again; true once per open (then [`Tx::take_rethread`]).
    pub fn take_rethread_pending(&mut self) -> bool {
        std::mem::take(&mut self.rethread)
    }
}

impl Tx<'_> {
    /// Takes the task `name` away; whether it was there.
    async fn take_task(&mut self, name: &str) -> Result<bool, StoreError> {
        let done = query("DELETE FROM store_tasks WHERE name = $1")
            .bind(name)
            .execute(&mut self.tx)
            .await
            .map_err(err("take a store task"))?;
        Ok(done.rows_affected() > 0)
    }

    /// Gives every stored robot report (the kinds `Kind::is_report`
    /// says) its `h:` key where it lacks it; how many it added.
    async fn backfill_hyperkitty_keys(&mut self) -> Result<usize, StoreError> {
        let kinds: Vec<&str> = Kind::ALL.iter().filter(|k| k.is_report()).map(|k| k.as_str()).collect();
        let sql = format!(
            "SELECT message_id FROM messages WHERE kind IN ({}) ORDER BY message_id",
            super::placeholders(kinds.len())
        );
        let mut q = query(sql);
        for k in kinds {
            q = q.bind(k);
        }
        let mut keys = Vec::new();
        q.for_each(&mut self.tx, "read stored reports", |row| {
            let id: &str = row.try_get(0).map_err(err("read stored reports"))?;
            let id = rows::message_id(id)?;
            keys.push((id.hyperkitty_key(), id));
            Ok(())
        })
        .await?;
        let before = self.count_keys().await?;
        self.insert_keys(&keys).await?;
        let after = self.count_keys().await?;
        Ok(usize::try_from(after - before).unwrap_or(0))
    }

    async fn count_keys(&mut self) -> Result<i64, StoreError> {
        query("SELECT COUNT(*) FROM message_keys")
            .fetch_one(&mut self.tx)
            .await
            .and_then(|r| r.try_get(0))
            .map_err(err("count message keys"))
    }

    /// If threading is left to do after `hyperkitty-keys`, takes that
    /// task away and returns the `(key, message)` rows of `h:` keys that
    /// mail waits on: the dependency key of `key` is `dep_prefix` and
    /// `key` (`thread::keys::dep_key`), and `key_prefix` starts them all.
    pub async fn take_rethread(
        &mut self,
        dep_prefix: &str,
        key_prefix: &str,
    ) -> Result<Vec<(String, MessageId)>, StoreError> {
        if !self.take_task(HYPERKITTY_RETHREAD).await? {
            return Ok(Vec::new());
        }
        let found = query(
            "SELECT DISTINCT k.key, k.message_id FROM message_keys k \
             JOIN thread_deps d ON d.dep_key = CAST($1 AS TEXT) || k.key \
             WHERE k.key LIKE $2 ORDER BY k.key, k.message_id",
        )
        .bind(dep_prefix)
        .bind(format!("{key_prefix}%"))
        .fetch_all(&mut self.tx)
        .await
        .map_err(err("read what waits on message keys"))?;
        let mut out = Vec::with_capacity(found.len());
        for r in found {
            let key: String = r.try_get(0).map_err(err("read what waits on message keys"))?;
            let id: String = r.try_get(1).map_err(err("read what waits on message keys"))?;
            out.push((key, rows::message_id(&id)?));
        }
        Ok(out)
    }
}
