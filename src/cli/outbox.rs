//! `lkpbot outbox`: the outgoing mail, queued, sent and failing, as a
//! table or as JSON.

use crate::store::Location;

use anyhow::Context;
use serde_json::{Value, json};

use super::failure::Failure;
use super::store::{reader, runtime, write_stdout, write_text};
use crate::model::rfc3339;
use crate::store::OutboxMail;
use crate::text::cut;

/// `lkpbot outbox [--json]`
pub fn outbox(db: &Location, json: bool) -> Result<(), Failure> {
    let rt = runtime()?;
    let mails = rt.block_on(async {
        let store = reader(db).await?;
        let mails = store.outbox().await.context("cannot read the outbox").map_err(Failure::runtime);
        store.close().await;
        mails
    })?;
    if json {
        let all: Vec<serde_json::Value> = mails.iter().map(mail_json).collect();
        write_stdout(&format!("{}\n", serde_json::Value::Array(all)))
    } else {
        write_text(&outbox_table(&mails))
    }
}

/// One outgoing mail as `outbox --json` prints it.
fn mail_json(m: &OutboxMail) -> Value {
    json!({
        "id": m.id,
        "state": m.state.as_str(),
        "kind": m.kind,
        "case": m.case.map(|c| c.0),
        "message_id": m.message_id,
        "to": m.recipients,
        "subject": m.subject,
        "created_at": rfc3339(m.created_at),
        "attempts": m.attempts,
        "next_attempt_at": rfc3339(m.next_attempt_at),
        "sent_at": m.sent_at.map(rfc3339),
        "last_error": m.last_error,
        "failure": m.failure.map(|f| f.as_str()),
        "claimed_by": m.claimed_by,
        "claimed_until": m.claimed_until.map(rfc3339),
    })
}

/// The `outbox` table: id, state, kind, case, recipients, subject, and
/// why a failing mail failed.
fn outbox_table(mails: &[OutboxMail]) -> String {
    let mut out = format!("{:>5}  {:<8}  {:<15}  {:>5}  {:<30}  {}\n", "ID", "STATE", "KIND", "CASE", "TO", "SUBJECT");
    for m in mails {
        out.push_str(&format!(
            "{:>5}  {:<8}  {:<15}  {:>5}  {:<30}  {}\n",
            m.id,
            m.state.as_str(),
            m.kind,
            m.case.map_or("-".into(), |c| c.0.to_string()),
            cut(&m.recipients.join(" "), 30),
            cut(&m.subject, 70),
        ));
        if let Some(e) = &m.last_error {
            out.push_str(&format!("       {} tries; last: {}\n", m.attempts, cut(e, 100)));
        }
    }
    out
}
