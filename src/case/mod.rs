//! The case vocabulary every stage shares: what a case is ([`CaseId`],
//! [`CaseFacts`], [`CaseView`]), the states it moves through and the
//! events that move it ([`state`]: [`transition`] and the one
//! [`replay`]), how a message came to be in it ([`Strategy`]), how two
//! cases are related ([`Relation`], [`relation`]) and the read model the
//! CLI, the digest and the web pages show ([`read`]).
//!
//! Below `thread` and `store`: threading decides with these types, the
//! store persists them, and the read side hands them up. Pure: no I/O, no
//! clock, no SQL.

pub mod attention;
pub mod read;
pub mod significance;
pub mod state;

use serde::Serialize;

use crate::model::{Direction, MessageId};
pub use read::{CaseFilter, CaseMessage, CaseRecord, CaseRetest, StillSeen, SubscriptionFilter, related};
pub use significance::Significance;
pub use state::{CaseKind, CaseState, DAY, Event, EventKind, Replayed, in_time_order, replay, stale_times, transition};

/// A case's number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct CaseId(pub i64);

impl std::fmt::Display for CaseId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What a case is about, fixed when its report opens it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CaseFacts {
    pub kind: CaseKind,
    /// The report's subject without reply prefixes.
    pub title: String,
    pub report_message_id: MessageId,
    /// Who the report was sent to (lower-cased): the robot mails the
    /// commit's author and committer.
    pub report_to: Vec<String>,
    pub opened_at: i64,
    /// Full SHA when the report gives one, else the abbreviation.
    pub commit: Option<String>,
    pub commit_subject: Option<String>,
    pub tree: Option<String>,
    pub branch: Option<String>,
    pub testcase: Option<String>,
    /// Perf reports: the headline metric and its signed change.
    pub metric: Option<String>,
    pub change_pct: Option<f64>,
    pub direction: Option<Direction>,
    /// The %stddev printed beside the headline's base and new values
    /// (`None`: not printed, which LKP does below 2%).
    pub base_stddev_pct: Option<f64>,
    pub new_stddev_pct: Option<f64>,
    /// Functional reports: the first issue signature; build reports: the
    /// first new diagnostic.
    pub signature: Option<String>,
    /// See `thread::keys::subject_key` and `thread::keys::patch_key`.
    pub subject_key: Option<String>,
    pub patch_key: Option<String>,
}

impl CaseFacts {
    /// What every case has; the rest is filled in from its report.
    pub fn new(kind: CaseKind, title: String, report_message_id: MessageId, opened_at: i64) -> CaseFacts {
        CaseFacts {
            kind,
            title,
            report_message_id,
            report_to: Vec::new(),
            opened_at,
            commit: None,
            commit_subject: None,
            tree: None,
            branch: None,
            testcase: None,
            metric: None,
            change_pct: None,
            direction: None,
            base_stddev_pct: None,
            new_stddev_pct: None,
            signature: None,
            subject_key: None,
            patch_key: None,
        }
    }
}

/// A case as a candidate for a message.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CaseView {
    pub id: CaseId,
    pub state: CaseState,
    pub facts: CaseFacts,
}

/// How a message came to be in a case: the rung that put it there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// The report that opened the case.
    Report,
    References,
    Link,
    Subject,
    Commit,
    /// A lifecycle signal outside the case's thread (`thread::lifecycle`).
    Lifecycle,
}

impl Strategy {
    pub const ALL: [Strategy; 6] = [
        Strategy::Report,
        Strategy::References,
        Strategy::Link,
        Strategy::Subject,
        Strategy::Commit,
        Strategy::Lifecycle,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Report => "report",
            Strategy::References => "references",
            Strategy::Link => "link",
            Strategy::Subject => "subject",
            Strategy::Commit => "commit",
            Strategy::Lifecycle => "lifecycle",
        }
    }

    pub fn parse(s: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

/// Why two cases are linked (never merged).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    /// The same commit reported again: another testcase, another tree.
    SameCommit,
    /// The same patch under another SHA (a rebase) or another version.
    SamePatch,
    /// One report was sent into the other's thread.
    InThread,
}

impl Relation {
    pub const ALL: [Relation; 3] = [Relation::SameCommit, Relation::SamePatch, Relation::InThread];

    pub fn as_str(self) -> &'static str {
        match self {
            Relation::SameCommit => "same-commit",
            Relation::SamePatch => "same-patch",
            Relation::InThread => "in-thread",
        }
    }

    pub fn parse(s: &str) -> Option<Relation> {
        Relation::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

/// What [`relation`] compares of a case: its commit and patch key (with
/// its id), all a store reads of the cases it looks for relations among.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relatable {
    pub id: CaseId,
    pub commit: Option<String>,
    pub patch_key: Option<String>,
}

impl From<&CaseView> for Relatable {
    fn from(v: &CaseView) -> Relatable {
        Relatable { id: v.id, commit: v.facts.commit.clone(), patch_key: v.facts.patch_key.clone() }
    }
}

/// How two cases are related, if they are: the same commit reported
/// again (another testcase, another tree), else the same patch under
/// another SHA or version. Symmetric, and a function of the two cases'
/// facts alone, so it does not depend on which report came first.
pub fn relation(a: &Relatable, b: &Relatable) -> Option<Relation> {
    if let (Some(x), Some(y)) = (&a.commit, &b.commit)
        && same_commit(x, y)
    {
        return Some(Relation::SameCommit);
    }
    match (&a.patch_key, &b.patch_key) {
        (Some(x), Some(y)) if x == y => Some(Relation::SamePatch),
        _ => None,
    }
}

/// Two commit ids name the same commit when one abbreviates the other.
pub fn same_commit(a: &str, b: &str) -> bool {
    let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
    a.len() >= 7 && b.len() >= 7 && (a.starts_with(&b) || b.starts_with(&a))
}

/// The first seven hex digits: what every abbreviation of a commit shares,
/// so the store can index commits whatever their length.
pub fn commit_prefix(sha: &str) -> Option<String> {
    let s = sha.trim().to_ascii_lowercase();
    (s.len() >= 7 && s.bytes().all(|b| b.is_ascii_hexdigit())).then(|| s[..7].to_string())
}
