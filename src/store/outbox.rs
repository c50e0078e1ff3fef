//! The outbox and the retest requests: what the bot is to send (written in
//! the transaction of its cause, once per cause), and what the sender
//! made of it.
//!
//! A sender claims a mail before sending it (`claim_mail`): a claim names
//! its owner and lapses at a time past the longest a send may take. Rows
//! with a live claim are no other sender's, so several processes on one
//! store send each mail once, and a sender killed mid-send leaves its
//! row to the next one once the claim lapses. Only the owner of a claim
//! marks the row sent or failed. The `runs` table lets each `run` see the
//! others.

use super::db::{AsDb, Row, query};
use super::{Store, StoreError, Tx, err};
use crate::case::CaseId;
use crate::model::MessageId;

/// A mail to send, as the engine writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewMail {
    /// What made it; at most one mail per cause, ever.
    pub cause: String,
    pub kind: &'static str,
    pub case: Option<CaseId>,
    pub in_reply_to: Option<MessageId>,
    /// Its Message-ID, without brackets.
    pub message_id: String,
    pub addressee: Option<String>,
    pub recipients: Vec<String>,
    pub sender: String,
    pub subject: String,
    pub raw: Vec<u8>,
    pub created_at: i64,
}

/// Where a mail of the outbox is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MailState {
    Queued,
    Sent,
    /// Not sent yet: the last try failed, another is due.
    Failing,
}

impl MailState {
    pub fn as_str(self) -> &'static str {
        match self {
            MailState::Queued => "queued",
            MailState::Sent => "sent",
            MailState::Failing => "failing",
        }
    }

    fn parse(s: &str) -> Result<MailState, StoreError> {
        match s {
            "queued" => Ok(MailState::Queued),
            "sent" => Ok(MailState::Sent),
            "failing" => Ok(MailState::Failing),
            other => Err(StoreError::Corrupt(format!("outbox state {other:?}"))),
        }
    }
}

/// A mail of the outbox as the sender and `lkpbot outbox` see it.
#[derive(Clone, Debug, PartialEq)]
pub struct OutboxMail {
    pub id: i64,
    pub cause: String,
    pub kind: String,
    pub case: Option<CaseId>,
    pub message_id: String,
    pub recipients: Vec<String>,
    pub sender: String,
    pub subject: String,
    /// Empty unless asked for.
    pub raw: Vec<u8>,
    pub created_at: i64,
    pub state: MailState,
    pub attempts: i64,
    pub next_attempt_at: i64,
    pub sent_at: Option<i64>,
    pub last_error: Option<String>,
    /// Why the last try failed: no server took it, or the mail was refused.
    pub failure: Option<Failure>,
    /// Who is sending it, and until when the claim holds.
    pub claimed_by: Option<String>,
    pub claimed_until: Option<i64>,
}

/// Why a mail could not be sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No server took it (none answered, or it said it is unavailable):
    /// it goes as soon as one answers, whatever its backoff says.
    Server,
    /// The server, the retest program or the dry-run folder refused this
    /// mail: it waits out its own backoff.
    Mail,
}

impl Failure {
    pub fn as_str(self) -> &'static str {
        match self {
            Failure::Server => "server",
            Failure::Mail => "mail",
        }
    }
}

/// Another `run` on the store, as `runs` has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRecord {
    pub owner: String,
    pub host: String,
    pub pid: i64,
    pub started_at: i64,
    pub seen_at: i64,
}

/// A retest the bot asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetestRequest {
    pub case: CaseId,
    pub message_id: MessageId,
    pub requested_by: String,
    pub requested_at: i64,
    pub target: Option<String>,
    pub answered_at: Option<i64>,
    pub reminded_at: Option<i64>,
    pub timed_out_at: Option<i64>,
}

const MAIL_COLUMNS: &str = "id, cause, kind, case_id, message_id, recipients, sender, subject, created_at, state, \
     attempts, next_attempt_at, sent_at, last_error, failure, claimed_by, claimed_until";

fn mail(row: &Row, with_raw: bool) -> Result<OutboxMail, StoreError> {
    let g = |e| StoreError::Query { what: "read the outbox", source: e };
    let recipients: String = row.try_get("recipients").map_err(g)?;
    let state: String = row.try_get("state").map_err(g)?;
    let case: Option<i64> = row.try_get("case_id").map_err(g)?;
    let failure: Option<String> = row.try_get("failure").map_err(g)?;
    let failure = match failure.as_deref() {
        None => None,
        Some("server") => Some(Failure::Server),
        Some("mail") => Some(Failure::Mail),
        Some(other) => return Err(StoreError::Corrupt(format!("outbox failure {other:?}"))),
    };
    Ok(OutboxMail {
        id: row.try_get("id").map_err(g)?,
        cause: row.try_get("cause").map_err(g)?,
        kind: row.try_get("kind").map_err(g)?,
        case: case.map(CaseId),
        message_id: row.try_get("message_id").map_err(g)?,
        recipients: recipients.split_whitespace().map(str::to_string).collect(),
        sender: row.try_get("sender").map_err(g)?,
        subject: row.try_get("subject").map_err(g)?,
        raw: if with_raw { row.try_get("raw").map_err(g)? } else { Vec::new() },
        created_at: row.try_get("created_at").map_err(g)?,
        state: MailState::parse(&state)?,
        attempts: row.try_get("attempts").map_err(g)?,
        next_attempt_at: row.try_get("next_attempt_at").map_err(g)?,
        sent_at: row.try_get("sent_at").map_err(g)?,
        last_error: row.try_get("last_error").map_err(g)?,
        failure,
        claimed_by: row.try_get("claimed_by").map_err(g)?,
        claimed_until: row.try_get("claimed_until").map_err(g)?,
    })
}

fn request(row: &Row) -> Result<RetestRequest, StoreError> {
    let g = |e| StoreError::Query { what: "read retest requests", source: e };
    let id: String = row.try_get("message_id").map_err(g)?;
    Ok(RetestRequest {
        case: CaseId(row.try_get("case_id").map_err(g)?),
        message_id: super::rows::message_id(&id)?,
        requested_by: row.try_get("requested_by").map_err(g)?,
        requested_at: row.try_get("requested_at").map_err(g)?,
        target: row.try_get("target").map_err(g)?,
        answered_at: row.try_get("answered_at").map_err(g)?,
        reminded_at: row.try_get("reminded_at").map_err(g)?,
        timed_out_at: row.try_get("timed_out_at").map_err(g)?,
    })
}

impl Tx<'_> {
    /// Queues a mail; false when its cause has one already (nothing is
    /// written then).
    pub async fn enqueue(&mut self, m: &NewMail) -> Result<bool, StoreError> {
        let r = query(
            "INSERT INTO outbox (cause, kind, case_id, in_reply_to, message_id, addressee, recipients, sender, subject, \
             raw, created_at, state, next_attempt_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'queued', $11) \
             ON CONFLICT (cause) DO NOTHING",
        )
        .bind(&m.cause)
        .bind(m.kind)
        .bind(m.case.map(|c| c.0))
        .bind(m.in_reply_to.as_ref().map(MessageId::as_str))
        .bind(&m.message_id)
        .bind(m.addressee.as_deref())
        .bind(m.recipients.join(" "))
        .bind(&m.sender)
        .bind(&m.subject)
        .bind(&m.raw)
        .bind(m.created_at)
        .execute(&mut self.tx)
        .await
        .map_err(err("queue a mail"))?;
        Ok(r.rows_affected() > 0)
    }

    /// Whether a mail for `cause` exists (queued or sent).
    pub async fn has_mail(&mut self, cause: &str) -> Result<bool, StoreError> {
        let row = query("SELECT 1 FROM outbox WHERE cause = $1")
            .bind(cause)
            .fetch_optional(&mut self.tx)
            .await
            .map_err(err("read the outbox"))?;
        Ok(row.is_some())
    }

    /// The replies to commands (and limit notices) made since `since`:
    /// to `addressee`, in `case`, to mail whose sender was verified and
    /// did not pass (`unauthenticated: Some(true)`) or the rest
    /// (`Some(false)`); `None` does not narrow.
    pub async fn replies_since(
        &mut self,
        since: i64,
        addressee: Option<&str>,
        case: Option<CaseId>,
        unauthenticated: Option<bool>,
    ) -> Result<crate::model::Spent, StoreError> {
        let row = query(
            "SELECT COUNT(*), MIN(o.created_at), COALESCE(SUM(CASE WHEN o.kind = 'limit' THEN 1 ELSE 0 END), 0) \
             FROM outbox o LEFT JOIN messages m ON m.message_id = o.in_reply_to \
             WHERE o.kind IN ('reply', 'limit') AND o.created_at >= $1 \
             AND ($2 IS NULL OR o.addressee = $2) AND ($3 IS NULL OR o.case_id = $3) \
             AND ($4 IS NULL OR (COALESCE(m.auth, '') = 'none') = $4)",
        )
        .bind(since)
        .bind(addressee)
        .bind(case.map(|c| c.0))
        .bind(unauthenticated)
        .fetch_one(&mut self.tx)
        .await
        .map_err(err("count replies"))?;
        let count = |i: usize| -> Result<u32, StoreError> {
            let n: i64 = row.try_get(i).map_err(err("count replies"))?;
            Ok(u32::try_from(n).unwrap_or(u32::MAX))
        };
        Ok(crate::model::Spent {
            sent: count(0)?,
            oldest: row.try_get(1).map_err(err("count replies"))?,
            notices: count(2)?,
        })
    }

    /// The bot's mails in `case`'s thread that answer someone (replies,
    /// limit notices, verdicts) made since `since`, oldest first: their
    /// Message-ID, the mail each answers, and when each was made.
    pub async fn answers_in_case(
        &mut self,
        case: CaseId,
        since: i64,
    ) -> Result<Vec<(String, Option<MessageId>, i64)>, StoreError> {
        let rows = query(
            "SELECT message_id, in_reply_to, created_at FROM outbox \
             WHERE case_id = $1 AND kind IN ('reply', 'limit', 'verdict') AND created_at >= $2 \
             ORDER BY created_at, id",
        )
        .bind(case.0)
        .bind(since)
        .fetch_all(&mut self.tx)
        .await
        .map_err(err("read the bot's mails of a case"))?;
        rows.iter()
            .map(|r| {
                let parent: Option<String> = r.try_get(1).map_err(err("read the bot's mails of a case"))?;
                Ok((
                    r.try_get(0).map_err(err("read the bot's mails of a case"))?,
                    parent.as_deref().and_then(MessageId::new),
                    r.try_get(2).map_err(err("read the bot's mails of a case"))?,
                ))
            })
            .collect()
    }

    /// Records a retest the bot asked for (once per case and command).
    pub async fn add_retest_request(&mut self, r: &RetestRequest) -> Result<(), StoreError> {
        query(
            "INSERT INTO retest_requests (case_id, message_id, requested_by, requested_at, target) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (case_id, message_id) DO NOTHING",
        )
        .bind(r.case.0)
        .bind(r.message_id.as_str())
        .bind(&r.requested_by)
        .bind(r.requested_at)
        .bind(r.target.as_deref())
        .execute(&mut self.tx)
        .await
        .map_err(err("record a retest request"))?;
        Ok(())
    }

    /// The retest requests of a case not answered yet, oldest first.
    pub async fn open_retest_requests(&mut self, case: CaseId) -> Result<Vec<RetestRequest>, StoreError> {
        let rows = query(
            "SELECT * FROM retest_requests WHERE case_id = $1 AND answered_at IS NULL AND timed_out_at IS NULL \
             ORDER BY requested_at, message_id",
        )
        .bind(case.0)
        .fetch_all(&mut self.tx)
        .await
        .map_err(err("read retest requests"))?;
        rows.iter().map(request).collect()
    }

    /// Marks the open requests of a case answered by `by` at `at`.
    pub async fn answer_retest_requests(&mut self, case: CaseId, by: &MessageId, at: i64) -> Result<(), StoreError> {
        query(
            "UPDATE retest_requests SET answered_by = $2, answered_at = $3 \
             WHERE case_id = $1 AND answered_at IS NULL AND timed_out_at IS NULL",
        )
        .bind(case.0)
        .bind(by.as_str())
        .bind(at)
        .execute(&mut self.tx)
        .await
        .map_err(err("answer retest requests"))?;
        Ok(())
    }

    /// Open requests older than `before` (not yet reminded, or reminded
    /// before `before`), for reminders and timeouts.
    pub async fn overdue_retest_requests(&mut self, before: i64) -> Result<Vec<RetestRequest>, StoreError> {
        let rows = query(
            "SELECT * FROM retest_requests WHERE answered_at IS NULL AND timed_out_at IS NULL \
             AND COALESCE(reminded_at, requested_at) < $1 ORDER BY requested_at, case_id, message_id",
        )
        .bind(before)
        .fetch_all(&mut self.tx)
        .await
        .map_err(err("read retest requests"))?;
        rows.iter().map(request).collect()
    }

    pub async fn mark_reminded(&mut self, r: &RetestRequest, at: i64) -> Result<(), StoreError> {
        self.update_request("UPDATE retest_requests SET reminded_at = $3 WHERE case_id = $1 AND message_id = $2", r, at)
            .await
    }

    pub async fn mark_timed_out(&mut self, r: &RetestRequest, at: i64) -> Result<(), StoreError> {
        self.update_request(
            "UPDATE retest_requests SET timed_out_at = $3 WHERE case_id = $1 AND message_id = $2",
            r,
            at,
        )
        .await
    }

    async fn update_request(&mut self, sql: &'static str, r: &RetestRequest, at: i64) -> Result<(), StoreError> {
        query(sql)
            .bind(r.case.0)
            .bind(r.message_id.as_str())
            .bind(at)
            .execute(&mut self.tx)
            .await
            .map_err(err("update a retest request"))?;
        Ok(())
    }

    /// Subscribes `address` to the digest with `filter` (replacing any).
    pub async fn subscribe(&mut self, address: &str, filter: &str, at: i64) -> Result<(), StoreError> {
        query(
            "INSERT INTO subscriptions (address, filter, created_at) VALUES ($1, $2, $3) \
             ON CONFLICT (address) DO UPDATE SET filter = excluded.filter, created_at = excluded.created_at",
        )
        .bind(address)
        .bind(filter)
        .bind(at)
        .execute(&mut self.tx)
        .await
        .map_err(err("subscribe"))?;
        Ok(())
    }

    pub async fn unsubscribe(&mut self, address: &str) -> Result<(), StoreError> {
        query("DELETE FROM subscriptions WHERE address = $1")
            .bind(address)
            .execute(&mut self.tx)
            .await
            .map_err(err("unsubscribe"))?;
        Ok(())
    }

    /// Every subscriber and their filter, by address.
    pub async fn subscriptions(&mut self) -> Result<Vec<(String, String)>, StoreError> {
        subscriptions(&mut self.tx).await
    }

    /// The report's extracted facts (JSON) of a case.
    pub async fn report_facts(&mut self, report: &MessageId) -> Result<Option<serde_json::Value>, StoreError> {
        let row = query("SELECT facts FROM reports WHERE message_id = $1")
            .bind(report.as_str())
            .fetch_optional(&mut self.tx)
            .await
            .map_err(err("read report facts"))?;
        let facts: Option<String> = row.map(|r| r.try_get(0)).transpose().map_err(err("read report facts"))?;
        Ok(facts.and_then(|f| serde_json::from_str(&f).ok()))
    }
}

impl Store {
    /// Mails due at `now` (queued, or failing with their next try due),
    /// oldest first, with their bytes.
    pub async fn due_mail(&mut self, now: i64, limit: i64) -> Result<Vec<OutboxMail>, StoreError> {
        let sql = format!(
            "SELECT {MAIL_COLUMNS}, raw FROM outbox WHERE state <> 'sent' AND next_attempt_at <= $1 ORDER BY id LIMIT $2"
        );
        let rows = query(sql).bind(now).bind(limit).fetch_all(&mut self.conn).await.map_err(err("read the outbox"))?;
        rows.iter().map(|r| mail(r, true)).collect()
    }

    /// When the next unsent mail is due, if any: a mail another sender
    /// has claimed is due when the claim lapses.
    pub async fn next_mail_due(&mut self) -> Result<Option<i64>, StoreError> {
        query(
            "SELECT MIN(CASE WHEN claimed_until > next_attempt_at THEN claimed_until ELSE next_attempt_at END) \
             FROM outbox WHERE state <> 'sent'",
        )
        .fetch_one(&mut self.conn)
        .await
        .and_then(|r| r.try_get(0))
        .map_err(err("read the outbox"))
    }

    /// Claims for `claim.owner` the oldest mail due at `due` that no live
    /// claim holds (with `probe`, when none is, the oldest that waits for
    /// a server), with its bytes. A row another sender claims first is
    /// left to it: each is claimed by one conditional UPDATE, which both
    /// SQLite (one writer) and PostgreSQL (the condition is checked again
    /// on a row a concurrent transaction changed) make exclusive.
    pub async fn claim_mail(&mut self, claim: &Claim, due: i64, probe: bool) -> Result<Option<OutboxMail>, StoreError> {
        const FREE: &str = "state <> 'sent' AND (claimed_until IS NULL OR claimed_until <= $1)";
        loop {
            let mut ids = self.candidates(&format!("{FREE} AND next_attempt_at <= $2"), &[claim.now, due]).await?;
            if ids.is_empty() && probe {
                ids = self.candidates(&format!("{FREE} AND failure = 'server'"), &[claim.now]).await?;
            }
            if ids.is_empty() {
                return Ok(None);
            }
            for id in ids {
                let r = query(format!(
                    "UPDATE outbox SET claimed_by = $3, \
                     claimed_until = CASE WHEN kind = 'retest-command' THEN $4 ELSE $5 END WHERE id = $2 AND {FREE}"
                ))
                .bind(claim.now)
                .bind(id)
                .bind(&claim.owner)
                .bind(claim.now.saturating_add(claim.command_lease))
                .bind(claim.now.saturating_add(claim.mail_lease))
                .execute(&mut self.conn)
                .await
                .map_err(err("claim a mail"))?;
                if r.rows_affected() == 1 {
                    let sql = format!("SELECT {MAIL_COLUMNS}, raw FROM outbox WHERE id = $1");
                    let row = query(sql).bind(id).fetch_one(&mut self.conn).await.map_err(err("read the outbox"))?;
                    return mail(&row, true).map(Some);
                }
            }
            // Every candidate was claimed by another sender meanwhile:
            // those claims are live now, so the next look finds others.
        }
    }

    /// A few mails matching `cond` (its parameters `binds`), oldest first.
    async fn candidates(&mut self, cond: &str, binds: &[i64]) -> Result<Vec<i64>, StoreError> {
        let sql = format!("SELECT id FROM outbox WHERE {cond} ORDER BY id LIMIT 8");
        let mut q = query(sql);
        for b in binds {
            q = q.bind(*b);
        }
        let rows = q.fetch_all(&mut self.conn).await.map_err(err("read the outbox"))?;
        rows.iter().map(|r| r.try_get(0).map_err(err("read the outbox"))).collect()
    }

    /// Whether some mail waits for a server that did not take it.
    pub async fn waits_for_server(&mut self) -> Result<bool, StoreError> {
        let row = query("SELECT 1 FROM outbox WHERE state = 'failing' AND failure = 'server' LIMIT 1")
            .fetch_optional(&mut self.conn)
            .await
            .map_err(err("read the outbox"))?;
        Ok(row.is_some())
    }

    /// A server took a mail: every mail that waited for one is due now.
    /// Returns how many.
    pub async fn server_answers(&mut self, now: i64) -> Result<u64, StoreError> {
        let r = query(
            "UPDATE outbox SET next_attempt_at = $1 WHERE state = 'failing' AND failure = 'server' AND next_attempt_at > $1",
        )
        .bind(now)
        .execute(&mut self.conn)
        .await
        .map_err(err("update the outbox"))?;
        Ok(r.rows_affected())
    }

    /// Marks a mail `owner` claimed sent, and records `event` (what the
    /// sending did to its case) in the same transaction. False when the
    /// claim was no longer `owner`'s (it lapsed and another took it):
    /// nothing is written then.
    pub async fn mark_sent(
        &mut self,
        id: i64,
        owner: &str,
        at: i64,
        event: Option<(CaseId, &crate::case::Event)>,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin().await?;
        let r = query(
            "UPDATE outbox SET state = 'sent', sent_at = $2, attempts = attempts + 1, last_error = NULL, failure = NULL, \
             claimed_by = NULL, claimed_until = NULL WHERE id = $1 AND claimed_by = $3",
        )
        .bind(id)
        .bind(at)
        .bind(owner)
        .execute(&mut tx.tx)
        .await
        .map_err(err("mark a mail sent"))?;
        if r.rows_affected() == 0 {
            return Ok(false);
        }
        if let Some((case, e)) = event {
            tx.add_event(case, e).await?;
            tx.replay(case).await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Marks a mail `owner` claimed failing, to be tried again at
    /// `next_attempt_at` (or when a server answers, for
    /// [`Failure::Server`]); false when the claim was no longer `owner`'s.
    pub async fn mark_failed(
        &mut self,
        id: i64,
        owner: &str,
        error: &str,
        failure: Failure,
        next_attempt_at: i64,
    ) -> Result<bool, StoreError> {
        let r = query(
            "UPDATE outbox SET state = 'failing', attempts = attempts + 1, last_error = $2, next_attempt_at = $3, \
             failure = $4, claimed_by = NULL, claimed_until = NULL WHERE id = $1 AND claimed_by = $5",
        )
        .bind(id)
        .bind(error)
        .bind(next_attempt_at)
        .bind(failure.as_str())
        .bind(owner)
        .execute(&mut self.conn)
        .await
        .map_err(err("mark a mail failing"))?;
        Ok(r.rows_affected() > 0)
    }

    /// Records that the `run` `me` uses the store (forgetting runs not
    /// seen since `gone_before`: killed ones), and returns the others.
    pub async fn register_run(&mut self, me: &RunRecord, gone_before: i64) -> Result<Vec<RunRecord>, StoreError> {
        let mut tx = self.begin().await?;
        query("DELETE FROM runs WHERE seen_at < $1 OR owner = $2")
            .bind(gone_before)
            .bind(&me.owner)
            .execute(&mut tx.tx)
            .await
            .map_err(err("record the run"))?;
        query("INSERT INTO runs (owner, host, pid, started_at, seen_at) VALUES ($1, $2, $3, $4, $5)")
            .bind(&me.owner)
            .bind(&me.host)
            .bind(me.pid)
            .bind(me.started_at)
            .bind(me.seen_at)
            .execute(&mut tx.tx)
            .await
            .map_err(err("record the run"))?;
        let rows =
            query("SELECT owner, host, pid, started_at, seen_at FROM runs WHERE owner <> $1 ORDER BY started_at")
                .bind(&me.owner)
                .fetch_all(&mut tx.tx)
                .await
                .map_err(err("read the runs"))?;
        tx.commit().await?;
        let g = |e| StoreError::Query { what: "read the runs", source: e };
        rows.iter()
            .map(|r| {
                Ok(RunRecord {
                    owner: r.try_get(0).map_err(g)?,
                    host: r.try_get(1).map_err(g)?,
                    pid: r.try_get(2).map_err(g)?,
                    started_at: r.try_get(3).map_err(g)?,
                    seen_at: r.try_get(4).map_err(g)?,
                })
            })
            .collect()
    }

    /// A `run` is still there.
    pub async fn touch_run(&mut self, owner: &str, now: i64) -> Result<(), StoreError> {
        query("UPDATE runs SET seen_at = $2 WHERE owner = $1")
            .bind(owner)
            .bind(now)
            .execute(&mut self.conn)
            .await
            .map_err(err("record the run"))?;
        Ok(())
    }

    /// A `run` ended.
    pub async fn end_run(&mut self, owner: &str) -> Result<(), StoreError> {
        query("DELETE FROM runs WHERE owner = $1")
            .bind(owner)
            .execute(&mut self.conn)
            .await
            .map_err(err("record the run"))?;
        Ok(())
    }
}

/// Who claims a mail, when, and for how long: long enough for one send
/// of the kind (the retest program has its own timeout).
#[derive(Clone, Debug)]
pub struct Claim {
    pub owner: String,
    pub now: i64,
    pub mail_lease: i64,
    pub command_lease: i64,
}

/// Every mail of the outbox, newest first, without bytes.
pub(super) async fn list(conn: &mut impl AsDb) -> Result<Vec<OutboxMail>, StoreError> {
    let sql = format!("SELECT {MAIL_COLUMNS} FROM outbox ORDER BY id DESC");
    let rows = query(sql).fetch_all(conn).await.map_err(err("read the outbox"))?;
    rows.iter().map(|r| mail(r, false)).collect()
}

/// Every subscriber of the digest and their filter, by address.
pub(super) async fn subscriptions(conn: &mut impl AsDb) -> Result<Vec<(String, String)>, StoreError> {
    let rows = query("SELECT address, filter FROM subscriptions ORDER BY address")
        .fetch_all(conn)
        .await
        .map_err(err("read subscriptions"))?;
    rows.iter()
        .map(|r| {
            Ok((r.try_get(0).map_err(err("read subscriptions"))?, r.try_get(1).map_err(err("read subscriptions"))?))
        })
        .collect()
}
