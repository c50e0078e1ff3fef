//! Messages, their raw bytes, which cases hold them, messages their
//! archive removed, and source checkpoints.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::db::{AsDb, query};
use super::rows::{self, MessageRow};
use super::{StoreError, Tx, err, insert_sql, padded};
use crate::case::{CaseId, Strategy};
use crate::model::MessageId;

/// A stored message as the engine's lookups see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    /// In no case and never will be (see the `messages` table).
    pub settled: bool,
}

/// A stored message that waits to be threaded again, as
/// [`Tx::waiting`] reads it back.
#[derive(Debug)]
pub struct Waiting {
    /// The message as it was fetched.
    pub raw: Vec<u8>,
    /// When it was fetched (Unix seconds).
    pub fetched_at: i64,
    /// How its sender was authenticated when it arrived.
    pub auth: crate::model::Auth,
    /// Why the bot did not act on it, if it decided so.
    pub withheld: Option<String>,
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
            let settled: i64 = row.try_get(1).map_err(err("look up messages"))?;
            out.insert(rows::message_id(&id)?, Known { settled: settled != 0 });
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
        let rows = query("SELECT case_id, strategy FROM case_messages WHERE message_id = $1 ORDER BY case_id")
            .bind(id.as_str())
            .fetch_all(&mut self.tx)
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
    /// were new. Each is numbered (`seq`) after every message stored
    /// before it: the tables of unsettled messages are keyed by that
    /// number, so what is stored now lands at the end of their B-trees.
    /// (Numbers of rows that were there already are skipped; the write
    /// lock keeps them from being taken twice.)
    pub async fn insert_messages(&mut self, msgs: Vec<MessageRow>) -> Result<u64, StoreError> {
        let last: i64 = query("SELECT COALESCE(MAX(seq), 0) FROM messages")
            .fetch_one(&mut self.tx)
            .await
            .and_then(|r| r.try_get(0))
            .map_err(err("number messages"))?;
        let mut n = 0;
        let mut next = last + 1;
        for (chunk, real) in padded(&msgs).zip(msgs.chunks(super::CHUNK_MAX)) {
            let sql = insert_sql(
                "messages (message_id, kind, subject, from_addr, date, fetched_at, problems, settled, seq)",
                9,
                chunk.len(),
                "ON CONFLICT (message_id) DO NOTHING",
            );
            let mut q = query(sql);
            for (i, m) in chunk.into_iter().enumerate() {
                // The rows that fill the chunk up repeat the last one, number
                // included: the Message-ID it shares with that row makes
                // each a conflict, ignored.
                let seq = next + i64::try_from(i.min(real.len() - 1)).unwrap_or(0);
                q = q
                    .bind(m.message_id.as_str())
                    .bind(m.kind)
                    .bind(m.subject.as_str())
                    .bind(m.from_addr.as_deref())
                    .bind(m.date)
                    .bind(m.fetched_at)
                    .bind(m.problems)
                    .bind(i64::from(m.settled))
                    .bind(seq);
            }
            next += i64::try_from(real.len()).unwrap_or(0);
            n += q.execute(&mut self.tx).await.map_err(err("insert messages"))?.rows_affected();
        }
        Ok(n)
    }

    /// Keeps the bytes of stored messages (ignoring ones kept already),
    /// under their numbers.
    pub async fn insert_raw(&mut self, raws: &[(&MessageId, &[u8])]) -> Result<(), StoreError> {
        for (chunk, real) in padded(raws).zip(raws.chunks(super::CHUNK_MAX)) {
            let mut q = query(super::insert_numbered_sql("raw_messages", &["bytes"], "seq", chunk.len()));
            for (i, (id, bytes)) in chunk.into_iter().enumerate() {
                // The rows that fill the chunk up name no message and
                // bind no bytes (a large message repeated fifteen times
                // was a fourth of an archive import's bytes bound).
                let (id, bytes): (Option<&str>, &[u8]) =
                    if i < real.len() { (Some(id.as_str()), bytes) } else { (None, &[]) };
                q = q.bind(id).bind(bytes);
            }
            q.execute(&mut self.tx).await.map_err(err("store raw bytes"))?;
        }
        Ok(())
    }

    /// A message's kept bytes and when it was fetched.
    pub async fn raw(&mut self, id: &MessageId) -> Result<Option<(Vec<u8>, i64)>, StoreError> {
        let row = query(
            "SELECT r.bytes, m.fetched_at FROM messages m JOIN raw_messages r ON r.seq = m.seq \
             WHERE m.message_id = $1",
        )
        .bind(id.as_str())
        .fetch_optional(&mut self.tx)
        .await
        .map_err(err("read raw bytes"))?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some((row.try_get(0).map_err(err("read raw bytes"))?, row.try_get(1).map_err(err("read raw bytes"))?)))
    }

    /// What threading a stored, unsettled message again reads back in one
    /// statement: its bytes, when it was fetched, how its sender was
    /// authenticated and why the bot did not act on it (`None` once the
    /// message is settled and its bytes are gone).
    pub async fn waiting(&mut self, id: &MessageId) -> Result<Option<Waiting>, StoreError> {
        let what = "read a waiting message";
        let row = query(
            "SELECT r.bytes, m.fetched_at, m.auth, m.auth_author, m.auth_reason, m.withheld \
             FROM messages m JOIN raw_messages r ON r.seq = m.seq WHERE m.message_id = $1",
        )
        .bind(id.as_str())
        .fetch_optional(&mut self.tx)
        .await
        .map_err(err(what))?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some(Waiting {
            raw: row.try_get(0).map_err(err(what))?,
            fetched_at: row.try_get(1).map_err(err(what))?,
            auth: super::rows::auth(&row, "auth", "auth_author", "auth_reason")?,
            withheld: row.try_get(5).map_err(err(what))?,
        }))
    }

    /// Records how a message's sender was authenticated (when it
    /// arrived: verified once, read back when it is threaded again).
    pub async fn set_auth(&mut self, id: &MessageId, auth: &crate::model::Auth) -> Result<(), StoreError> {
        query("UPDATE messages SET auth = $2, auth_author = $3, auth_reason = $4 WHERE message_id = $1")
            .bind(id.as_str())
            .bind(auth.label())
            .bind(auth.author.as_deref())
            .bind(&auth.reason)
            .execute(&mut self.tx)
            .await
            .map_err(err("record a sender's authentication"))?;
        Ok(())
    }

    /// Records why the bot did not act on a fresh command mail (a budget,
    /// the loop breaker): decided once, read back when it is threaded
    /// again.
    pub async fn set_withheld(&mut self, id: &MessageId, why: &str) -> Result<(), StoreError> {
        query("UPDATE messages SET withheld = $2 WHERE message_id = $1")
            .bind(id.as_str())
            .bind(why)
            .execute(&mut self.tx)
            .await
            .map_err(err("record why a mail was not acted on"))?;
        Ok(())
    }

    /// The messages of `case` fetched since `since`, and those the bot
    /// did not act on whenever they came: each one's id, sender (From),
    /// when it was fetched, and why it was not acted on.
    pub async fn case_posts(
        &mut self,
        case: CaseId,
        since: i64,
    ) -> Result<Vec<(MessageId, Option<String>, i64, Option<String>)>, StoreError> {
        let rows = query(
            "SELECT m.message_id, m.from_addr, m.fetched_at, m.withheld \
             FROM case_messages cm JOIN messages m ON m.message_id = cm.message_id \
             WHERE cm.case_id = $1 AND (m.fetched_at >= $2 OR m.withheld IS NOT NULL) \
             ORDER BY m.fetched_at, m.message_id",
        )
        .bind(case.0)
        .bind(since)
        .fetch_all(&mut self.tx)
        .await
        .map_err(err("read a case's recent messages"))?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let id: String = r.try_get(0).map_err(err("read a case's recent messages"))?;
            out.push((
                rows::message_id(&id)?,
                r.try_get(1).map_err(err("read a case's recent messages"))?,
                r.try_get(2).map_err(err("read a case's recent messages"))?,
                r.try_get(3).map_err(err("read a case's recent messages"))?,
            ));
        }
        Ok(out)
    }

    /// Marks a message settled: in no case, for ever. Its bytes and what
    /// its threading depended on go (`fresh`: stored just now, it depended
    /// on nothing yet). Returns false when it was already.
    pub async fn settle(&mut self, id: &MessageId, fresh: bool) -> Result<bool, StoreError> {
        let seq: Option<i64> =
            query("UPDATE messages SET settled = 1 WHERE message_id = $1 AND settled = 0 RETURNING seq")
                .bind(id.as_str())
                .fetch_optional(&mut self.tx)
                .await
                .and_then(|r| r.map(|r| r.try_get(0)).transpose())
                .map_err(err("settle a message"))?;
        let Some(seq) = seq else { return Ok(false) };
        query("DELETE FROM raw_messages WHERE seq = $1")
            .bind(seq)
            .execute(&mut self.tx)
            .await
            .map_err(err("drop raw bytes"))?;
        if !fresh {
            query("DELETE FROM thread_deps WHERE seq = $1")
                .bind(seq)
                .execute(&mut self.tx)
                .await
                .map_err(err("drop thread dependencies"))?;
        }
        Ok(true)
    }

    /// Marks `id` settled for the messages that refer to it (what they
    /// see of it cannot change) while it keeps its bytes and waits on
    /// `keys` itself: lifecycle mail waiting for what it names. Whether
    /// it was not marked yet.
    pub async fn settle_waiting(&mut self, id: &MessageId, keys: &[String], fresh: bool) -> Result<bool, StoreError> {
        let r = query("UPDATE messages SET settled = 1 WHERE message_id = $1 AND settled = 0")
            .bind(id.as_str())
            .execute(&mut self.tx)
            .await
            .map_err(err("settle a message"))?;
        self.set_deps(id, keys, fresh).await?;
        Ok(r.rows_affected() > 0)
    }

    /// Which of `ids` their archive removed (never to be stored again).
    pub async fn removed(&mut self, ids: &[&str]) -> Result<HashSet<MessageId>, StoreError> {
        let any = query("SELECT 1 FROM removed_messages LIMIT 1")
            .fetch_optional(&mut self.tx)
            .await
            .map_err(err("look up removed messages"))?;
        if any.is_none() {
            return Ok(HashSet::new());
        }
        let rows = super::select_in(
            &mut self.tx,
            "SELECT message_id FROM removed_messages WHERE message_id IN",
            "",
            ids,
            "look up removed messages",
        )
        .await?;
        rows.iter()
            .map(|r| {
                r.try_get::<String, _>(0).map_err(err("look up removed messages")).and_then(|s| rows::message_id(&s))
            })
            .collect()
    }

    /// Records that the archive removed `id`.
    pub async fn record_removal(&mut self, id: &MessageId, at: i64) -> Result<(), StoreError> {
        query("INSERT INTO removed_messages (message_id, removed_at) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(id.as_str())
            .bind(at)
            .execute(&mut self.tx)
            .await
            .map_err(err("record a removed message"))?;
        Ok(())
    }

    /// Deletes a stored message and what it holds in cases: its events,
    /// memberships, facts, retest requests, dependencies and bytes (the
    /// case it opened is the caller's, first). Returns the cases it was
    /// in, to replay, or `None` when it was not stored.
    pub async fn delete_message(&mut self, id: &MessageId) -> Result<Option<BTreeSet<CaseId>>, StoreError> {
        let rows = query("SELECT case_id FROM case_messages WHERE message_id = $1")
            .bind(id.as_str())
            .fetch_all(&mut self.tx)
            .await
            .map_err(err("read a message's cases"))?;
        let cases = rows
            .iter()
            .map(|r| r.try_get::<i64, _>(0).map(CaseId))
            .collect::<Result<BTreeSet<_>, _>>()
            .map_err(err("read a message's cases"))?;
        // Its events are only in cases it is a member of.
        for case in &cases {
            self.detach(*case, id).await?;
        }
        for sql in [
            "DELETE FROM reports WHERE message_id = $1",
            "DELETE FROM retests WHERE message_id = $1",
            "DELETE FROM build_summaries WHERE message_id = $1",
            "DELETE FROM retest_requests WHERE message_id = $1",
            "DELETE FROM thread_deps WHERE seq = (SELECT seq FROM messages WHERE message_id = $1)",
            "DELETE FROM message_keys WHERE message_id = $1",
            "DELETE FROM raw_messages WHERE seq = (SELECT seq FROM messages WHERE message_id = $1)",
        ] {
            query(sql).bind(id.as_str()).execute(&mut self.tx).await.map_err(err("delete a message"))?;
        }
        let gone = query("DELETE FROM messages WHERE message_id = $1")
            .bind(id.as_str())
            .execute(&mut self.tx)
            .await
            .map_err(err("delete a message"))?;
        Ok((gone.rows_affected() > 0).then_some(cases))
    }

    /// Records where `source` has got to.
    pub async fn set_checkpoint(&mut self, source: &str, token: &str, at: i64) -> Result<(), StoreError> {
        query(
            "INSERT INTO checkpoints (source, token, updated_at) VALUES ($1, $2, $3) \
             ON CONFLICT (source) DO UPDATE SET token = excluded.token, updated_at = excluded.updated_at",
        )
        .bind(source)
        .bind(token)
        .bind(at)
        .execute(&mut self.tx)
        .await
        .map_err(err("record a checkpoint"))?;
        Ok(())
    }
}

pub(super) async fn checkpoint(conn: &mut impl AsDb, source: &str) -> Result<Option<String>, StoreError> {
    let row = query("SELECT token FROM checkpoints WHERE source = $1")
        .bind(source)
        .fetch_optional(conn)
        .await
        .map_err(err("read a checkpoint"))?;
    row.map(|r| r.try_get(0)).transpose().map_err(err("read a checkpoint"))
}
