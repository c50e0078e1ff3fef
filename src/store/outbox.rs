//! The outbox and the retest requests: what the bot is to send (written in
//! the transaction of its cause, once per cause), and what the sender
//! made of it.

use sqlx::sqlite::{SqliteConnection, SqliteRow};
use sqlx::{AssertSqlSafe, Row};

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
     attempts, next_attempt_at, sent_at, last_error";

fn mail(row: &SqliteRow, with_raw: bool) -> Result<OutboxMail, StoreError> {
    let g = |e| StoreError::Query { what: "read the outbox", source: e };
    let recipients: String = row.try_get("recipients").map_err(g)?;
    let state: String = row.try_get("state").map_err(g)?;
    let case: Option<i64> = row.try_get("case_id").map_err(g)?;
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
    })
}

fn request(row: &SqliteRow) -> Result<RetestRequest, StoreError> {
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
        let r = sqlx::query(
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
        .execute(&mut *self.tx)
        .await
        .map_err(err("queue a mail"))?;
        Ok(r.rows_affected() > 0)
    }

    /// Whether a mail for `cause` exists (queued or sent).
    pub async fn has_mail(&mut self, cause: &str) -> Result<bool, StoreError> {
        let row = sqlx::query("SELECT 1 FROM outbox WHERE cause = $1")
            .bind(cause)
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(err("read the outbox"))?;
        Ok(row.is_some())
    }

    /// Mails of `kind` to `addressee` made since `since`.
    pub async fn mails_to_since(&mut self, kind: &str, addressee: &str, since: i64) -> Result<u32, StoreError> {
        let n: i64 = sqlx::query("SELECT COUNT(*) FROM outbox WHERE kind = $1 AND addressee = $2 AND created_at >= $3")
            .bind(kind)
            .bind(addressee)
            .bind(since)
            .fetch_one(&mut *self.tx)
            .await
            .and_then(|r| r.try_get(0))
            .map_err(err("count mails"))?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// Mails of `kind` about `case` made since `since`.
    pub async fn case_mails_since(&mut self, kind: &str, case: CaseId, since: i64) -> Result<u32, StoreError> {
        let n: i64 = sqlx::query("SELECT COUNT(*) FROM outbox WHERE kind = $1 AND case_id = $2 AND created_at >= $3")
            .bind(kind)
            .bind(case.0)
            .bind(since)
            .fetch_one(&mut *self.tx)
            .await
            .and_then(|r| r.try_get(0))
            .map_err(err("count mails"))?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// Records a retest the bot asked for (once per case and command).
    pub async fn add_retest_request(&mut self, r: &RetestRequest) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO retest_requests (case_id, message_id, requested_by, requested_at, target) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (case_id, message_id) DO NOTHING",
        )
        .bind(r.case.0)
        .bind(r.message_id.as_str())
        .bind(&r.requested_by)
        .bind(r.requested_at)
        .bind(r.target.as_deref())
        .execute(&mut *self.tx)
        .await
        .map_err(err("record a retest request"))?;
        Ok(())
    }

    /// The retest requests of a case not answered yet, oldest first.
    pub async fn open_retest_requests(&mut self, case: CaseId) -> Result<Vec<RetestRequest>, StoreError> {
        let rows = sqlx::query(
            "SELECT * FROM retest_requests WHERE case_id = $1 AND answered_at IS NULL AND timed_out_at IS NULL \
             ORDER BY requested_at, message_id",
        )
        .bind(case.0)
        .fetch_all(&mut *self.tx)
        .await
        .map_err(err("read retest requests"))?;
        rows.iter().map(request).collect()
    }

    /// Marks the open requests of a case answered by `by` at `at`.
    pub async fn answer_retest_requests(&mut self, case: CaseId, by: &MessageId, at: i64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE retest_requests SET answered_by = $2, answered_at = $3 \
             WHERE case_id = $1 AND answered_at IS NULL AND timed_out_at IS NULL",
        )
        .bind(case.0)
        .bind(by.as_str())
        .bind(at)
        .execute(&mut *self.tx)
        .await
        .map_err(err("answer retest requests"))?;
        Ok(())
    }

    /// Open requests older than `before` (not yet reminded, or reminded
    /// before `before`), for reminders and timeouts.
    pub async fn overdue_retest_requests(&mut self, before: i64) -> Result<Vec<RetestRequest>, StoreError> {
        let rows = sqlx::query(
            "SELECT * FROM retest_requests WHERE answered_at IS NULL AND timed_out_at IS NULL \
             AND COALESCE(reminded_at, requested_at) < $1 ORDER BY requested_at, case_id, message_id",
        )
        .bind(before)
        .fetch_all(&mut *self.tx)
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
        sqlx::query(sql)
            .bind(r.case.0)
            .bind(r.message_id.as_str())
            .bind(at)
            .execute(&mut *self.tx)
            .await
            .map_err(err("update a retest request"))?;
        Ok(())
    }

    /// Subscribes `address` to the digest with `filter` (replacing any).
    pub async fn subscribe(&mut self, address: &str, filter: &str, at: i64) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO subscriptions (address, filter, created_at) VALUES ($1, $2, $3) \
             ON CONFLICT (address) DO UPDATE SET filter = excluded.filter, created_at = excluded.created_at",
        )
        .bind(address)
        .bind(filter)
        .bind(at)
        .execute(&mut *self.tx)
        .await
        .map_err(err("subscribe"))?;
        Ok(())
    }

    pub async fn unsubscribe(&mut self, address: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM subscriptions WHERE address = $1")
            .bind(address)
            .execute(&mut *self.tx)
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
        let row = sqlx::query("SELECT facts FROM reports WHERE message_id = $1")
            .bind(report.as_str())
            .fetch_optional(&mut *self.tx)
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
        let rows = sqlx::query(AssertSqlSafe(sql))
            .bind(now)
            .bind(limit)
            .fetch_all(&mut self.conn)
            .await
            .map_err(err("read the outbox"))?;
        rows.iter().map(|r| mail(r, true)).collect()
    }

    /// When the next unsent mail is due, if any.
    pub async fn next_mail_due(&mut self) -> Result<Option<i64>, StoreError> {
        sqlx::query("SELECT MIN(next_attempt_at) FROM outbox WHERE state <> 'sent'")
            .fetch_one(&mut self.conn)
            .await
            .and_then(|r| r.try_get(0))
            .map_err(err("read the outbox"))
    }

    /// Adds an event no message caused (the bot's own doings) to a case,
    /// and replays the case.
    pub async fn record_event(&mut self, case: CaseId, e: &crate::case::Event) -> Result<(), StoreError> {
        let mut tx = self.begin().await?;
        tx.add_event(case, e).await?;
        tx.replay(case).await?;
        tx.commit().await
    }

    pub async fn mark_sent(&mut self, id: i64, at: i64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE outbox SET state = 'sent', sent_at = $2, attempts = attempts + 1, last_error = NULL WHERE id = $1",
        )
        .bind(id)
        .bind(at)
        .execute(&mut self.conn)
        .await
        .map_err(err("mark a mail sent"))?;
        Ok(())
    }

    pub async fn mark_failed(&mut self, id: i64, error: &str, next_attempt_at: i64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE outbox SET state = 'failing', attempts = attempts + 1, last_error = $2, next_attempt_at = $3 \
             WHERE id = $1",
        )
        .bind(id)
        .bind(error)
        .bind(next_attempt_at)
        .execute(&mut self.conn)
        .await
        .map_err(err("mark a mail failing"))?;
        Ok(())
    }
}

/// Every mail of the outbox, newest first, without bytes.
pub(super) async fn list(conn: &mut SqliteConnection) -> Result<Vec<OutboxMail>, StoreError> {
    let sql = format!("SELECT {MAIL_COLUMNS} FROM outbox ORDER BY id DESC");
    let rows = sqlx::query(AssertSqlSafe(sql)).fetch_all(conn).await.map_err(err("read the outbox"))?;
    rows.iter().map(|r| mail(r, false)).collect()
}

/// Every subscriber of the digest and their filter, by address.
pub(super) async fn subscriptions(conn: &mut SqliteConnection) -> Result<Vec<(String, String)>, StoreError> {
    let rows = sqlx::query("SELECT address, filter FROM subscriptions ORDER BY address")
        .fetch_all(conn)
        .await
        .map_err(err("read subscriptions"))?;
    rows.iter()
        .map(|r| {
            Ok((r.try_get(0).map_err(err("read subscriptions"))?, r.try_get(1).map_err(err("read subscriptions"))?))
        })
        .collect()
}
