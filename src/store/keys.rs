//! The keys a message offers to lifecycle mail outside its thread
//! (`message_keys`, made by `thread::keys::offered`): a fix patch's
//! title and its series' cover letter, a pull request's shortlog titles.
//! Written once with the message, whatever its cases.

use std::collections::HashMap;

use super::db::query;
use super::{StoreError, Tx, err, insert_sql, padded, rows};
use crate::model::MessageId;

/// What lifecycle threading reads of a stored message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    pub kind: String,
    pub subject: String,
    pub from: Option<String>,
}

impl Tx<'_> {
    /// Records the keys messages offer (ignoring ones recorded already).
    pub async fn insert_keys(&mut self, keys: &[(String, MessageId)]) -> Result<(), StoreError> {
        for chunk in padded(keys) {
            let sql = insert_sql("message_keys (key, message_id)", 2, chunk.len(), "ON CONFLICT DO NOTHING");
            let mut q = query(sql);
            for (key, id) in chunk {
                q = q.bind(key.as_str()).bind(id.as_str());
            }
            q.execute(&mut self.tx).await.map_err(err("store message keys"))?;
        }
        Ok(())
    }

    /// The messages offering any of `keys`, each once, in order.
    pub async fn messages_with_keys(&mut self, keys: &[&str]) -> Result<Vec<MessageId>, StoreError> {
        super::select_message_ids(
            &mut self.tx,
            "SELECT DISTINCT message_id FROM message_keys WHERE key IN",
            keys,
            "look up message keys",
        )
        .await
    }

    /// The keys `id` offers that start with `prefix`, in order.
    pub async fn keys_of(&mut self, id: &MessageId, prefix: &str) -> Result<Vec<String>, StoreError> {
        let rows = query("SELECT key FROM message_keys WHERE message_id = $1 ORDER BY key")
            .bind(id.as_str())
            .fetch_all(&mut self.tx)
            .await
            .map_err(err("read message keys"))?;
        let mut out = Vec::new();
        for r in rows {
            let key: String = r.try_get(0).map_err(err("read message keys"))?;
            if key.starts_with(prefix) {
                out.push(key);
            }
        }
        Ok(out)
    }

    /// The kind, subject and sender of each of `ids` that is stored.
    pub async fn heads(&mut self, ids: &[&str]) -> Result<HashMap<MessageId, Head>, StoreError> {
        let rows = super::select_in(
            &mut self.tx,
            "SELECT message_id, kind, subject, from_addr FROM messages WHERE message_id IN",
            "",
            ids,
            "read messages",
        )
        .await?;
        let mut out = HashMap::with_capacity(rows.len());
        for r in rows {
            let id: String = r.try_get(0).map_err(err("read messages"))?;
            let head = Head {
                kind: r.try_get(1).map_err(err("read messages"))?,
                subject: r.try_get(2).map_err(err("read messages"))?,
                from: r.try_get(3).map_err(err("read messages"))?,
            };
            out.insert(rows::message_id(&id)?, head);
        }
        Ok(out)
    }
}
