//! Domain types <-> table rows, written out by hand: the schema is not a
//! serialisation of the structs, so either can change without the other
//! changing by accident.

use super::StoreError;
use super::db::Row;
use crate::case::{CaseFacts, CaseId, CaseKind, CaseState, CaseView, Event, EventKind, Relation, Strategy};
use crate::model::{Direction, MessageId, Verdict};

/// A `messages` row.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageRow {
    pub message_id: String,
    pub kind: &'static str,
    pub subject: String,
    pub from_addr: Option<String>,
    pub date: Option<i64>,
    pub fetched_at: i64,
    pub problems: i64,
    pub settled: bool,
}

/// Subjects longer than this are cut: the row is for listing, the raw
/// bytes (when kept) have the rest.
pub const MAX_SUBJECT: usize = 998;

/// The columns `case_view` reads, in a `SELECT` list.
pub const CASE_COLUMNS: &str = "c.id, c.kind, c.state, c.title, c.custom_title, c.report_message_id, c.report_to, \
     c.opened_at, \
     c.commit_sha, c.commit_subject, c.tree, c.branch, c.testcase, c.metric, c.change_pct, c.direction, \
     c.signature, c.subject_key, c.patch_key, c.base_stddev_pct, c.new_stddev_pct";

fn bad(what: &str, value: &str) -> StoreError {
    StoreError::Corrupt(format!("{what} {value:?}"))
}

fn get<'r, T>(row: &'r Row, col: &str) -> Result<T, StoreError>
where
    T: sqlx::Decode<'r, sqlx::Sqlite>
        + sqlx::Type<sqlx::Sqlite>
        + sqlx::Decode<'r, sqlx::Postgres>
        + sqlx::Type<sqlx::Postgres>
        + super::db::direct::FromValue<'r>,
{
    row.try_get(col).map_err(|e| StoreError::Corrupt(format!("column {col}: {e}")))
}

/// How a message's sender was authenticated, from its three columns
/// (named as the query names them); NULL is `none`.
pub(super) fn auth(row: &Row, label: &str, author: &str, reason: &str) -> Result<crate::model::Auth, StoreError> {
    let l: Option<String> = get(row, label)?;
    Ok(crate::model::Auth::from_parts(l.as_deref(), get(row, author)?, get(row, reason)?))
}

pub fn message_id(s: &str) -> Result<MessageId, StoreError> {
    MessageId::new(s).ok_or_else(|| bad("message id", s))
}

pub(super) fn case_view(row: &Row) -> Result<CaseView, StoreError> {
    let kind: String = get(row, "kind")?;
    let state: String = get(row, "state")?;
    let direction: Option<String> = get(row, "direction")?;
    let custom_title: Option<String> = get(row, "custom_title")?;
    let report: String = get(row, "report_message_id")?;
    let report_to: String = get(row, "report_to")?;
    Ok(CaseView {
        id: CaseId(get(row, "id")?),
        state: CaseState::parse(&state).ok_or_else(|| bad("case state", &state))?,
        facts: CaseFacts {
            kind: CaseKind::parse(&kind).ok_or_else(|| bad("case kind", &kind))?,
            title: custom_title.map_or_else(|| get(row, "title"), Ok)?,
            report_message_id: message_id(&report)?,
            report_to: report_to.split_whitespace().map(str::to_string).collect(),
            opened_at: get(row, "opened_at")?,
            commit: get(row, "commit_sha")?,
            commit_subject: get(row, "commit_subject")?,
            tree: get(row, "tree")?,
            branch: get(row, "branch")?,
            testcase: get(row, "testcase")?,
            metric: get(row, "metric")?,
            change_pct: get(row, "change_pct")?,
            direction: direction
                .as_deref()
                .map(|d| Direction::parse(d).ok_or_else(|| bad("direction", d)))
                .transpose()?,
            signature: get(row, "signature")?,
            subject_key: get(row, "subject_key")?,
            patch_key: get(row, "patch_key")?,
            base_stddev_pct: get(row, "base_stddev_pct")?,
            new_stddev_pct: get(row, "new_stddev_pct")?,
        },
    })
}

pub fn direction_str(d: Direction) -> &'static str {
    match d {
        Direction::Regression => "regression",
        Direction::Improvement => "improvement",
    }
}

pub fn verdict(s: &str) -> Result<Verdict, StoreError> {
    [Verdict::Recovered, Verdict::PartlyRecovered, Verdict::NotRecovered]
        .into_iter()
        .find(|v| v.as_str() == s)
        .ok_or_else(|| bad("verdict", s))
}

/// The columns `event` reads.
pub const EVENT_COLUMNS: &str =
    "e.case_id, e.at, e.kind, e.message_id, e.verdict, e.fix_commit, e.note, e.tree, e.by_addr, e.tag, e.tree_commit";

/// The order of a case's events, as replays and pages read them (after
/// the case, where several cases' are read at once).
pub const EVENT_ORDER: &str = "e.at, e.kind, e.message_id, e.seq";

pub(super) fn event(row: &Row) -> Result<(CaseId, Event), StoreError> {
    let kind: String = get(row, "kind")?;
    let message: Option<String> = get(row, "message_id")?;
    let v: Option<String> = get(row, "verdict")?;
    Ok((
        CaseId(get(row, "case_id")?),
        Event {
            at: get(row, "at")?,
            kind: EventKind::parse(&kind).ok_or_else(|| bad("event kind", &kind))?,
            message_id: message.as_deref().map(message_id).transpose()?,
            verdict: v.as_deref().map(verdict).transpose()?,
            fix_commit: get(row, "fix_commit")?,
            note: get(row, "note")?,
            tree: get(row, "tree")?,
            by: get(row, "by_addr")?,
            tag: get(row, "tag")?,
            tree_commit: get(row, "tree_commit")?,
        },
    ))
}

pub fn strategy(s: &str) -> Result<Strategy, StoreError> {
    Strategy::parse(s).ok_or_else(|| bad("strategy", s))
}

pub fn relation(s: &str) -> Result<Relation, StoreError> {
    Relation::parse(s).ok_or_else(|| bad("relation", s))
}
