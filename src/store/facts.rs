//! Facts of one message alone, written once when it is first stored:
//! a report's extracted facts, a retest's fix columns, a branch build
//! summary. Which cases the message is in is not among them (that is
//! `case_messages`, and may change as other messages arrive).

use super::db::query;
use super::{StoreError, Tx, err};
use crate::model::{MessageId, Verdict};

impl Tx<'_> {
    /// A robot report's facts (`facts` is their JSON).
    pub async fn insert_report(&mut self, message: &MessageId, kind: &str, facts: &str) -> Result<(), StoreError> {
        query("INSERT INTO reports (message_id, kind, facts) VALUES ($1, $2, $3) ON CONFLICT (message_id) DO NOTHING")
            .bind(message.as_str())
            .bind(kind)
            .bind(facts)
            .execute(&mut self.tx)
            .await
            .map_err(err("store report facts"))?;
        Ok(())
    }

    /// One retest table's fix column.
    pub async fn insert_retest(
        &mut self,
        message: &MessageId,
        idx: i64,
        fix_commit: &str,
        metric: &str,
        verdict: Option<Verdict>,
        facts: &str,
    ) -> Result<(), StoreError> {
        query(
            "INSERT INTO retests (message_id, idx, fix_commit, metric, verdict, facts) VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (message_id, idx) DO NOTHING",
        )
        .bind(message.as_str())
        .bind(idx)
        .bind(fix_commit)
        .bind(metric)
        .bind(verdict.map(|v| v.as_str()))
        .bind(facts)
        .execute(&mut self.tx)
        .await
        .map_err(err("store a retest"))?;
        Ok(())
    }

    /// A branch build summary.
    pub async fn insert_build_summary(
        &mut self,
        message: &MessageId,
        date: Option<i64>,
        s: &crate::classify::build_error::BuildSummary,
        facts: &str,
    ) -> Result<(), StoreError> {
        query(
            "INSERT INTO build_summaries (message_id, date, status, tree, branch, head, facts) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (message_id) DO NOTHING",
        )
        .bind(message.as_str())
        .bind(date)
        .bind(s.status.as_deref())
        .bind(s.tree.as_deref())
        .bind(s.branch.as_deref())
        .bind(s.head.as_deref())
        .bind(facts)
        .execute(&mut self.tx)
        .await
        .map_err(err("store a build summary"))?;
        Ok(())
    }
}
