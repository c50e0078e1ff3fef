//! Messages, their raw bytes, which cases hold them, and source
//! checkpoints.

use std::collections::HashMap;

use sqlx::sqlite::SqliteConnection;
use sqlx::{AssertSqlSafe, Row};

use super::rows::{self, MessageRow};
use super::{StoreError, Tx, chunk_lens, chunks, err, insert_sql};
use crate::case::{CaseId, Strategy};
use crate::model::MessageId;

/// A stored message as the engine's lookups see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    /// In no case and never will be (see the `messages` table).
    pub settled: bool,
}

impl Tx<'_> {
    /// Which of `ids` are stored, and whether each is settled.
    pub async fn lookup(&mut self, ids: &[&str]) -> Result<HashMap<MessageId, Known>, StoreError> {
        let rows = super::select_in(
            &mut self.tx,
            "SELECT message_id, settled FROM messages WHERE message_id IN",
            "",
            ids,
            "look up messages",
        )
        .await?;
        let mut out = HashMap::with_capacity(rows.len());
        for row in rows {
            let id: String = row.try_get(0).map_err(err("look up messages"))?;
            let settled: bool = row.try_get(1).map_err(err("look up messages"))?;
            out.insert(rows::message_id(&id)?, Known { settled });
        }
        Ok(out)
    }

    /// The cases each of `ids` is in by its thread (ids in none are left
    /// out): a message a lifecycle signal tied to a case (a merge notice, a
    /// later version of a patch) does not carry its replies there.
    pub async fn cases_of(&mut self, ids: &[&str]) -> Result<HashMap<MessageId, Vec<CaseId>>, StoreError> {
        let rows = super::select_in(
            &mut self.tx,
            "SELECT message_id, case_id FROM case_messages WHERE strategy <> 'lifecycle' AND message_id IN",
            " ORDER BY case_id",
            ids,
            "look up case messages",
        )
        .await?;
        let mut out: HashMap<MessageId, Vec<CaseId>> = HashMap::new();
        for row in rows {
            let id: String = row.try_get(0).map_err(err("look up case messages"))?;
            let case: i64 = row.try_get(1).map_err(err("look up case messages"))?;
            out.entry(rows::message_id(&id)?).or_default().push(CaseId(case));
        }
        Ok(out)
    }

    /// The cases a message is in, with the rung that put it there.
    pub async fn memberships(&mut self, id: &MessageId) -> Result<Vec<(CaseId, Strategy)>, StoreError> {
        let rows = sqlx::query("SELECT case_id, strategy FROM case_messages WHERE message_id = $1 ORDER BY case_id")
            .bind(id.as_str())
            .fetch_all(&mut *self.tx)
            .await
            .map_err(err("read case messages"))?;
        rows.iter()
            .map(|r| {
                let case: i64 = r.try_get(0).map_err(err("read case messages"))?;
                let s: String = r.try_get(1).map_err(err("read case messages"))?;
                Ok((CaseId(case), rows::strategy(&s)?))
            })
            .collect()
    }

    /// Inserts message rows (ignoring ones already there); returns how many
    /// were new. Takes the rows: their strings are handed to SQLite, not
    /// copied.
    pub async fn insert_messages(&mut self, msgs: Vec<MessageRow>) -> Result<u64, StoreError> {
        let mut n = 0;
        let mut rest = msgs.into_iter();
        for len in chunk_lens(rest.len()) {
            let sql = insert_sql(
                "messages (message_id, kind, subject, from_addr, date, fetched_at, problems, settled)",
                8,
                len,
                "ON CONFLICT (message_id) DO NOTHING",
            );
            let mut q = sqlx::query(AssertSqlSafe(sql));
            for m in rest.by_ref().take(len) {
                q = q
                    .bind(m.message_id)
                    .bind(m.kind)
                    .bind(m.subject)
                    .bind(m.from_addr)
                    .bind(m.date)
                    .bind(m.fetched_at)
                    .bind(m.problems)
                    .bind(m.settled);
            }
            n += q.execute(&mut *self.tx).await.map_err(err("insert messages"))?.rows_affected();
        }
        Ok(n)
    }

    /// Keeps the bytes of messages (ignoring ones kept already).
    pub async fn insert_raw(&mut self, raws: &[(&MessageId, &[u8])]) -> Result<(), StoreError> {
        for chunk in chunks(raws) {
            let sql =
                insert_sql("raw_messages (message_id, bytes)", 2, chunk.len(), "ON CONFLICT (message_id) DO NOTHING");
            let mut q = sqlx::query(AssertSqlSafe(sql));
            for (id, bytes) in chunk {
                q = q.bind(id.as_str()).bind(*bytes);
            }
            q.execute(&mut *self.tx).await.map_err(err("store raw bytes"))?;
        }
        Ok(())
    }

    /// A message's kept bytes and when it was fetched.
    pub async fn raw(&mut self, id: &MessageId) -> Result<Option<(Vec<u8>, i64)>, StoreError> {
        let row = sqlx::query(
            "SELECT r.bytes, m.fetched_at FROM raw_messages r JOIN messages m ON m.message_id = r.message_id \
             WHERE r.message_id = $1",
        )
        .bind(id.as_str())
        .fetch_optional(&mut *self.tx)
        .await
        .map_err(err("read raw bytes"))?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some((row.try_get(0).map_err(err("read raw bytes"))?, row.try_get(1).map_err(err("read raw bytes"))?)))
    }

    /// Records how a message's sender was authenticated (when it
    /// arrived: verified once, read back when it is threaded again).
    pub async fn set_auth(&mut self, id: &MessageId, auth: &crate::model::Auth) -> Result<(), StoreError> {
        sqlx::query("UPDATE messages SET auth = $2, auth_author = $3, auth_reason = $4 WHERE message_id = $1")
            .bind(id.as_str())
            .bind(auth.label())
            .bind(auth.author.as_deref())
            .bind(&auth.reason)
            .execute(&mut *self.tx)
            .await
            .map_err(err("record a sender's authentication"))?;
        Ok(())
    }

    /// How a stored message's sender was authenticated (`none` when it
    /// never was verified).
    pub async fn message_auth(&mut self, id: &MessageId) -> Result<crate::model::Auth, StoreError> {
        let row = sqlx::query("SELECT auth, auth_author, auth_reason FROM messages WHERE message_id = $1")
            .bind(id.as_str())
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(err("read a sender's authentication"))?;
        let Some(row) = row else { return Ok(crate::model::Auth::default()) };
        super::rows::auth(&row, "auth", "auth_author", "auth_reason")
    }

    /// Marks a message settled: in no case, for ever. Its bytes and what
    /// its threading depended on go. Returns false when it was already.
    pub async fn settle(&mut self, id: &MessageId) -> Result<bool, StoreError> {
        let r = sqlx::query("UPDATE messages SET settled = 1 WHERE message_id = $1 AND settled = 0")
            .bind(id.as_str())
            .execute(&mut *self.tx)
            .await
            .map_err(err("settle a message"))?;
        if r.rows_affected() == 0 {
            return Ok(false);
        }
        sqlx::query("DELETE FROM raw_messages WHERE message_id = $1")
            .bind(id.as_str())
            .execute(&mut *self.tx)
            .await
            .map_err(err("drop raw bytes"))?;
        self.set_deps(id, &[]).await?;
        Ok(true)
    }

    /// Records where `source` has got to.
    pub async fn set_checkpoint(&mut self, source: &str, token: &str, at: i64) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO checkpoints (source, token, updated_at) VALUES ($1, $2, $3) \
             ON CONFLICT (source) DO UPDATE SET token = excluded.token, updated_at = excluded.updated_at",
        )
        .bind(source)
        .bind(token)
        .bind(at)
        .execute(&mut *self.tx)
        .await
        .map_err(err("record a checkpoint"))?;
        Ok(())
    }
}

pub(super) async fn checkpoint(conn: &mut SqliteConnection, source: &str) -> Result<Option<String>, StoreError> {
    let row = sqlx::query("SELECT token FROM checkpoints WHERE source = $1")
        .bind(source)
        .fetch_optional(conn)
        .await
        .map_err(err("read a checkpoint"))?;
    row.map(|r| r.try_get(0)).transpose().map_err(err("read a checkpoint"))
}
