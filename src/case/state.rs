//! Case states, the events that move them, and [`transition`].
//!
//! ```text
//! reported -> discussed -> retest-requested -> retest-done -> fix-posted
//!     \___________\_______________\________________\-> stale (no activity)
//! any open state -> fix-applied (a maintainer applied or committed the fix)
//!     -> fix-merged (merged into a tree that does not resolve)
//!     -> resolved (merged into mainline or a tree that resolves)
//! any open state -> reverted (the culprit reverted) | superseded (a later
//!     version of the reported patch)
//! any open state -> invalid | duplicate | resolved (commands); reopen -> discussed
//! improvements: informational (activity recorded, state kept)
//! confirmed, still-present, not-reproduced (the test run again, no fix)
//! and result-unknown (a fix run whose result the mail does not give) move
//! a case as retest-done does; only retest-done (a fix judged) sets the
//! verdict
//! ```
//!
//! A case's state is never stored as a fact: it is the fold of
//! [`transition`] over the case's events in time order ([`replay`]), so a
//! reply that arrives late (IMAP order is not thread order) lands where its
//! Date puts it and the result does not depend on arrival order.

use serde::Serialize;

use crate::model::{MessageId, Verdict};

pub const DAY: i64 = 86_400;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaseState {
    Reported,
    Discussed,
    RetestRequested,
    RetestDone,
    FixPosted,
    /// A maintainer applied (queued, picked up, committed) the fix to a
    /// tree of theirs.
    FixApplied,
    /// The fix reached a tree that does not resolve the case (a stable
    /// tree, a `[[trees]]` tree without `resolves`).
    FixMerged,
    Resolved,
    /// The culprit was reverted: closed.
    Reverted,
    /// The reported patch was replaced by a later version of it: closed
    /// (a report on the later version opens a case of its own).
    Superseded,
    Invalid,
    Duplicate,
    Stale,
    /// Improvements: recorded and followed, nothing to fix.
    Informational,
}

impl CaseState {
    pub const ALL: [CaseState; 14] = [
        CaseState::Reported,
        CaseState::Discussed,
        CaseState::RetestRequested,
        CaseState::RetestDone,
        CaseState::FixPosted,
        CaseState::FixApplied,
        CaseState::FixMerged,
        CaseState::Resolved,
        CaseState::Reverted,
        CaseState::Superseded,
        CaseState::Invalid,
        CaseState::Duplicate,
        CaseState::Stale,
        CaseState::Informational,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CaseState::Reported => "reported",
            CaseState::Discussed => "discussed",
            CaseState::RetestRequested => "retest-requested",
            CaseState::RetestDone => "retest-done",
            CaseState::FixPosted => "fix-posted",
            CaseState::FixApplied => "fix-applied",
            CaseState::FixMerged => "fix-merged",
            CaseState::Resolved => "resolved",
            CaseState::Reverted => "reverted",
            CaseState::Superseded => "superseded",
            CaseState::Invalid => "invalid",
            CaseState::Duplicate => "duplicate",
            CaseState::Stale => "stale",
            CaseState::Informational => "informational",
        }
    }

    pub fn parse(s: &str) -> Option<CaseState> {
        CaseState::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Still needs someone's attention: not closed, not an improvement.
    pub fn is_open(self) -> bool {
        matches!(
            self,
            CaseState::Reported
                | CaseState::Discussed
                | CaseState::RetestRequested
                | CaseState::RetestDone
                | CaseState::FixPosted
                | CaseState::FixApplied
                | CaseState::FixMerged
                | CaseState::Stale
        )
    }

    /// Resolved, reverted, superseded, invalid or a duplicate: later
    /// activity is recorded and changes nothing until a reopen.
    pub fn is_closed(self) -> bool {
        matches!(
            self,
            CaseState::Resolved
                | CaseState::Reverted
                | CaseState::Superseded
                | CaseState::Invalid
                | CaseState::Duplicate
        )
    }

    /// How far a fix has come: posted, applied, merged. An event that
    /// says less than the case knows (a fix posted again after one was
    /// applied, an applied notice after the merge) does not move it back.
    fn fix_progress(self) -> u8 {
        match self {
            CaseState::FixPosted => 1,
            CaseState::FixApplied => 2,
            CaseState::FixMerged => 3,
            _ => 0,
        }
    }

    /// A case in this state goes stale when nothing happens. A posted,
    /// applied or merged fix does not: it waits for a merge the list does
    /// not always hear about.
    fn can_go_stale(self) -> bool {
        matches!(self, CaseState::Reported | CaseState::Discussed | CaseState::RetestRequested | CaseState::RetestDone)
    }
}

/// What kind of report opened a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaseKind {
    PerfRegression,
    PerfImprovement,
    Functional,
    Build,
}

impl CaseKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CaseKind::PerfRegression => "perf-regression",
            CaseKind::PerfImprovement => "perf-improvement",
            CaseKind::Functional => "functional",
            CaseKind::Build => "build",
        }
    }

    pub fn parse(s: &str) -> Option<CaseKind> {
        [CaseKind::PerfRegression, CaseKind::PerfImprovement, CaseKind::Functional, CaseKind::Build]
            .into_iter()
            .find(|k| k.as_str() == s)
    }

    pub fn initial_state(self) -> CaseState {
        match self {
            CaseKind::PerfImprovement => CaseState::Informational,
            _ => CaseState::Reported,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// The report that opened the case.
    Reported,
    /// The robot reported the same thing again inside the thread.
    ReportedAgain,
    /// Another report sent into this case's thread (it opened its own case).
    RelatedReport,
    Discussion,
    RetestRequested,
    RetestDone,
    FixPosted,
    Resolved,
    Invalid,
    Duplicate,
    Reopened,
    Retitled,
    /// No activity for the stale window (no message).
    Stale,
    /// The bot handed a retest request to its backend (no message).
    RetestDispatched,
    /// A retest request went unanswered through its reminder.
    RetestTimedOut,
    /// LKP ran the report's test again without a fix (rebuilt, more runs,
    /// another machine) and the regression reproduces.
    Confirmed,
    /// The regression is still seen in a later tree (the note names it):
    /// it survived into mainline, a release or linux-next.
    StillPresent,
    /// A fix was retested and the result's mail does not say how it went
    /// (the note says why): a retest done that judges nothing, so the
    /// case keeps the verdict it had.
    ResultUnknown,
    /// LKP ran the report's test again (a rerun, another machine, an
    /// updated test suite) and the problem did not show. No fix was
    /// tried: it answers a retest and sets no verdict.
    NotReproduced,
    /// A maintainer applied, queued or picked up the fix (its thread's
    /// "Applied to X, thanks", b4's and patchwork-bot's notices).
    FixApplied,
    /// A commit notification of the fix (tip-bot2's "[tip: branch]",
    /// akpm's "[merged mm-stable]"): as fix-applied.
    FixCommitted,
    /// The fix was merged into a tree: a pull request merged upstream, a
    /// stable backport, a `[[trees]]` commit. Into mainline (or a tree
    /// that resolves) it comes with a `resolved` event.
    FixMerged,
    /// The culprit was reverted (`Revert "<subject>"`, `This reverts
    /// commit <sha>`).
    Reverted,
    /// A later version of the reported patch by its author (the message
    /// is that version).
    Superseded,
}

impl EventKind {
    pub const ALL: [EventKind; 24] = [
        EventKind::Reported,
        EventKind::ReportedAgain,
        EventKind::RelatedReport,
        EventKind::Discussion,
        EventKind::RetestRequested,
        EventKind::RetestDone,
        EventKind::FixPosted,
        EventKind::Resolved,
        EventKind::Invalid,
        EventKind::Duplicate,
        EventKind::Reopened,
        EventKind::Retitled,
        EventKind::Stale,
        EventKind::RetestDispatched,
        EventKind::RetestTimedOut,
        EventKind::Confirmed,
        EventKind::StillPresent,
        EventKind::ResultUnknown,
        EventKind::NotReproduced,
        EventKind::FixApplied,
        EventKind::FixCommitted,
        EventKind::FixMerged,
        EventKind::Reverted,
        EventKind::Superseded,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Reported => "reported",
            EventKind::ReportedAgain => "reported-again",
            EventKind::RelatedReport => "related-report",
            EventKind::Discussion => "discussion",
            EventKind::RetestRequested => "retest-requested",
            EventKind::RetestDone => "retest-done",
            EventKind::FixPosted => "fix-posted",
            EventKind::Resolved => "resolved",
            EventKind::Invalid => "invalid",
            EventKind::Duplicate => "duplicate",
            EventKind::Reopened => "reopened",
            EventKind::Retitled => "retitled",
            EventKind::Stale => "stale",
            EventKind::RetestDispatched => "retest-dispatched",
            EventKind::RetestTimedOut => "retest-timed-out",
            EventKind::Confirmed => "confirmed",
            EventKind::StillPresent => "still-present",
            EventKind::ResultUnknown => "result-unknown",
            EventKind::NotReproduced => "not-reproduced",
            EventKind::FixApplied => "fix-applied",
            EventKind::FixCommitted => "fix-committed",
            EventKind::FixMerged => "fix-merged",
            EventKind::Reverted => "reverted",
            EventKind::Superseded => "superseded",
        }
    }

    pub fn parse(s: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// What a retest result does in a case: a fix judged, a result
    /// without a verdict, or the report's test run again.
    pub fn is_retest_result(self) -> bool {
        matches!(
            self,
            EventKind::RetestDone
                | EventKind::ResultUnknown
                | EventKind::Confirmed
                | EventKind::StillPresent
                | EventKind::NotReproduced
        )
    }

    /// What happens to a case outside its thread: the fix applied,
    /// committed or merged, the culprit reverted, the reported patch
    /// superseded.
    pub fn is_lifecycle(self) -> bool {
        matches!(
            self,
            EventKind::FixApplied
                | EventKind::FixCommitted
                | EventKind::FixMerged
                | EventKind::Reverted
                | EventKind::Superseded
        )
    }
}

/// Something that happened to a case, with its message and time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Event {
    /// Seconds since the epoch: the message's Date, else when it was read.
    pub at: i64,
    pub kind: EventKind,
    pub message_id: Option<MessageId>,
    /// Retest verdict (retest-done).
    pub verdict: Option<Verdict>,
    /// The fix commit: the retest's fix column, `#lkp fixed <sha>`.
    pub fix_commit: Option<String>,
    /// Free text: the fix patch subject, the new title, the reason.
    pub note: Option<String>,
    /// Lifecycle events: the tree the fix was applied or merged to (a
    /// maintainer's branch, `torvalds/linux.git`, `6.1-stable`, a
    /// `[[trees]]` name). A report sent again: the tree its "[still
    /// regression on TREE SHA]" line names (`linus/master`).
    pub tree: Option<String>,
    /// Lifecycle events: who applied, committed or reverted (an address).
    pub by: Option<String>,
    /// Tree events: the first tag that contains the commit (`v6.9-rc3`).
    pub tag: Option<String>,
    /// Tree events (no message): the commit of the `[[trees]]` tree that
    /// caused it. A report sent again: the commit its "[still regression
    /// on TREE SHA]" line names (the note holds "still regression" or
    /// "test failed").
    pub tree_commit: Option<String>,
}

impl Event {
    pub fn new(at: i64, kind: EventKind, message_id: Option<MessageId>) -> Event {
        Event {
            at,
            kind,
            message_id,
            verdict: None,
            fix_commit: None,
            note: None,
            tree: None,
            by: None,
            tag: None,
            tree_commit: None,
        }
    }
}

/// The next state of a case in `state` after `event`.
pub fn transition(state: CaseState, event: EventKind) -> CaseState {
    use CaseState as S;
    use EventKind as E;
    match (state, event) {
        // Commands close a case whatever its state.
        (_, E::Invalid) => S::Invalid,
        (_, E::Duplicate) => S::Duplicate,
        (_, E::Resolved) => S::Resolved,
        (s, E::Reopened) if s.is_closed() => S::Discussed,
        (S::Informational, _) => S::Informational,
        // A closed case records later activity without reopening.
        (s, _) if s.is_closed() => s,
        (_, E::Reverted) => S::Reverted,
        (_, E::Superseded) => S::Superseded,
        // A fix moves forward only: applied after merged says nothing new.
        (s, E::FixApplied | E::FixCommitted) if s.fix_progress() < 2 => S::FixApplied,
        (s, E::FixMerged) if s.fix_progress() < 3 => S::FixMerged,
        (s, E::FixApplied | E::FixCommitted | E::FixMerged) => s,
        (s, E::Stale) if s.can_go_stale() => S::Stale,
        (S::Stale, E::ReportedAgain) => S::Reported,
        (S::Reported | S::Stale, E::Discussion | E::RelatedReport | E::Retitled | E::Reopened) => S::Discussed,
        // Once a fix is posted, retests verify it: the verdict is kept on
        // the case, the state stays (so does a fix's progress when it is
        // posted again or discussed).
        (s, E::RetestRequested | E::FixPosted) if s.fix_progress() > 0 => s,
        (s, e) if e.is_retest_result() && s.fix_progress() > 0 => s,
        (_, E::RetestRequested) => S::RetestRequested,
        // Every retest result is a retest done: one without a verdict, and
        // the report's test run again without a fix (the regression
        // confirmed, or still seen in a later tree), which closes nothing.
        (_, e) if e.is_retest_result() => S::RetestDone,
        (_, E::FixPosted) => S::FixPosted,
        (s, _) => s,
    }
}

/// What replaying a case's events yields.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Replayed {
    pub state: CaseState,
    /// The latest retest verdict, and the fix commit it judged.
    pub verdict: Option<Verdict>,
    pub fix_commit: Option<String>,
    /// The latest fix patch posted (its Message-ID).
    pub fix_message_id: Option<MessageId>,
    /// Set by `#lkp title`.
    pub title: Option<String>,
    /// Time of the latest event that was activity (not a stale mark).
    pub last_activity: Option<i64>,
}

/// Events in the order they count: by time, then (for events at the same
/// second) by kind, message and tree commit, so the order never depends
/// on which event was recorded first. Events equal in all four keep the
/// given order.
pub fn in_time_order(events: &[Event]) -> Vec<&Event> {
    let mut v: Vec<&Event> = events.iter().collect();
    v.sort_by(|a, b| (a.at, a.kind, &a.message_id, &a.tree_commit).cmp(&(b.at, b.kind, &b.message_id, &b.tree_commit)));
    v
}

/// Folds [`transition`] over `events` in time order, starting from the
/// kind's initial state; also returns the state after each event (in the
/// sorted order) for timelines.
pub fn replay(kind: CaseKind, events: &[Event]) -> (Replayed, Vec<(&Event, CaseState)>) {
    let mut p = Replayed {
        state: kind.initial_state(),
        verdict: None,
        fix_commit: None,
        fix_message_id: None,
        title: None,
        last_activity: None,
    };
    let mut steps = Vec::with_capacity(events.len());
    for e in in_time_order(events) {
        p.state = transition(p.state, e.kind);
        match e.kind {
            // Only a fix judged sets the verdict. A result the mail does
            // not give says nothing of the fix, and a rerun without a fix
            // judges none: the last verdict stands, with its fix.
            EventKind::RetestDone => {
                p.verdict = e.verdict;
                p.fix_commit = e.fix_commit.clone();
            }
            EventKind::FixPosted => p.fix_message_id = e.message_id.clone(),
            EventKind::Resolved if e.fix_commit.is_some() => p.fix_commit = e.fix_commit.clone(),
            EventKind::Retitled => p.title = e.note.clone(),
            _ => {}
        }
        if e.kind != EventKind::Stale {
            p.last_activity = Some(p.last_activity.map_or(e.at, |t| t.max(e.at)));
        }
        steps.push((e, p.state));
    }
    (p, steps)
}

/// When the case went stale: after every stretch of `days` without
/// activity while it was in a state that can go stale, the last stretch
/// ending at `now`. Stale marks already among `events` are ignored, so the
/// answer depends only on the activity and `now`.
pub fn stale_times(kind: CaseKind, events: &[Event], now: i64, days: i64) -> Vec<i64> {
    let window = days.max(1) * DAY;
    let activity: Vec<Event> = events.iter().filter(|e| e.kind != EventKind::Stale).cloned().collect();
    let ordered = in_time_order(&activity);
    let mut out = Vec::new();
    let mut state = kind.initial_state();
    for (i, e) in ordered.iter().enumerate() {
        state = transition(state, e.kind);
        let next = ordered.get(i + 1).map_or(now, |n| n.at);
        if state.can_go_stale() && next - e.at > window {
            out.push(e.at + window);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(at: i64, kind: EventKind) -> Event {
        Event::new(at, kind, None)
    }

    #[test]
    fn the_happy_path() {
        use CaseState as S;
        use EventKind as E;
        let steps = [
            (E::Discussion, S::Discussed),
            (E::RetestRequested, S::RetestRequested),
            (E::RetestDone, S::RetestDone),
            (E::FixPosted, S::FixPosted),
            (E::RetestDone, S::FixPosted),
            (E::Resolved, S::Resolved),
            (E::Discussion, S::Resolved),
            (E::Reopened, S::Discussed),
        ];
        let mut s = S::Reported;
        for (e, want) in steps {
            s = transition(s, e);
            assert_eq!(s, want, "after {e:?}");
        }
    }

    /// A rerun without a fix and a result without a verdict are retests
    /// done: they answer a request, revive a quiet case, and leave a
    /// posted fix, a closed case and an improvement where they are.
    #[test]
    fn reruns_and_results_without_a_verdict() {
        use CaseState as S;
        use EventKind as E;
        let rows = [
            (S::Reported, E::Confirmed, S::RetestDone),
            (S::Stale, E::StillPresent, S::RetestDone),
            (S::Discussed, E::Confirmed, S::RetestDone),
            (S::RetestRequested, E::StillPresent, S::RetestDone),
            (S::FixPosted, E::Confirmed, S::FixPosted),
            (S::FixPosted, E::StillPresent, S::FixPosted),
            (S::Resolved, E::StillPresent, S::Resolved),
            (S::Invalid, E::Confirmed, S::Invalid),
            (S::Informational, E::Confirmed, S::Informational),
            (S::Reported, E::ResultUnknown, S::RetestDone),
            (S::RetestRequested, E::ResultUnknown, S::RetestDone),
            (S::FixPosted, E::ResultUnknown, S::FixPosted),
            (S::RetestRequested, E::NotReproduced, S::RetestDone),
            (S::Reported, E::NotReproduced, S::RetestDone),
            (S::FixPosted, E::NotReproduced, S::FixPosted),
            (S::Resolved, E::NotReproduced, S::Resolved),
        ];
        for (from, e, want) in rows {
            assert_eq!(transition(from, e), want, "{from:?} after {e:?}");
        }
        // Neither a rerun without a fix nor a result without a verdict
        // changes the verdict, or the fix it is of.
        let mut judged = ev(100, EventKind::RetestDone);
        judged.verdict = Some(Verdict::PartlyRecovered);
        judged.fix_commit = Some("6df13230b6".into());
        let mut unknown = ev(300, EventKind::ResultUnknown);
        unknown.fix_commit = Some("981204d280".into());
        for later in [
            ev(200, EventKind::Confirmed),
            ev(200, EventKind::StillPresent),
            ev(200, EventKind::NotReproduced),
            unknown,
        ] {
            let (p, _) = replay(CaseKind::PerfRegression, &[judged.clone(), later]);
            assert_eq!((p.state, p.verdict), (CaseState::RetestDone, Some(Verdict::PartlyRecovered)));
            assert_eq!(p.fix_commit.as_deref(), Some("6df13230b6"));
        }
    }

    /// The lifecycle: a fix goes forward only (posted, applied, merged),
    /// never back; a revert or a later version closes any open case; a
    /// closed case records them and stays closed until reopened; neither
    /// an applied nor a merged fix goes stale.
    #[test]
    fn lifecycle_moves_forward_and_closes() {
        use CaseState as S;
        use EventKind as E;
        let rows = [
            (S::Reported, E::FixApplied, S::FixApplied),
            (S::Stale, E::FixApplied, S::FixApplied),
            (S::FixPosted, E::FixApplied, S::FixApplied),
            (S::FixPosted, E::FixCommitted, S::FixApplied),
            (S::RetestDone, E::FixMerged, S::FixMerged),
            (S::FixApplied, E::FixMerged, S::FixMerged),
            (S::FixMerged, E::FixApplied, S::FixMerged),
            (S::FixMerged, E::FixCommitted, S::FixMerged),
            (S::FixApplied, E::FixPosted, S::FixApplied),
            (S::FixMerged, E::FixPosted, S::FixMerged),
            (S::FixApplied, E::RetestRequested, S::FixApplied),
            (S::FixMerged, E::RetestDone, S::FixMerged),
            (S::FixApplied, E::Discussion, S::FixApplied),
            (S::FixApplied, E::Stale, S::FixApplied),
            (S::FixMerged, E::Stale, S::FixMerged),
            (S::FixMerged, E::Resolved, S::Resolved),
            (S::Reported, E::Reverted, S::Reverted),
            (S::FixApplied, E::Reverted, S::Reverted),
            (S::Discussed, E::Superseded, S::Superseded),
            (S::Stale, E::Superseded, S::Superseded),
            (S::Reverted, E::FixMerged, S::Reverted),
            (S::Superseded, E::Discussion, S::Superseded),
            (S::Superseded, E::Stale, S::Superseded),
            (S::Resolved, E::Reverted, S::Resolved),
            (S::Reverted, E::Reopened, S::Discussed),
            (S::Superseded, E::Reopened, S::Discussed),
            (S::Superseded, E::Invalid, S::Invalid),
            (S::Informational, E::FixMerged, S::Informational),
            (S::Informational, E::Superseded, S::Informational),
        ];
        for (from, e, want) in rows {
            assert_eq!(transition(from, e), want, "{from:?} after {e:?}");
        }
        for s in CaseState::ALL {
            assert!(!(s.is_open() && s.is_closed()), "{s:?} both open and closed");
        }
        assert!(S::FixApplied.is_open() && S::FixMerged.is_open());
        assert!(S::Reverted.is_closed() && S::Superseded.is_closed());
        // Neither an applied fix nor a merged one goes stale.
        let applied = [ev(0, EventKind::Reported), ev(DAY, EventKind::FixApplied)];
        assert!(stale_times(CaseKind::Functional, &applied, 400 * DAY, 30).is_empty());
    }

    #[test]
    fn improvements_stay_informational_until_closed() {
        let s = transition(CaseState::Informational, EventKind::RetestDone);
        assert_eq!(s, CaseState::Informational);
        assert_eq!(transition(s, EventKind::Stale), CaseState::Informational);
        assert_eq!(transition(s, EventKind::Invalid), CaseState::Invalid);
    }

    #[test]
    fn replay_orders_by_time_not_arrival() {
        let events = [ev(300, EventKind::FixPosted), ev(100, EventKind::Reported), ev(200, EventKind::RetestDone)];
        let (p, steps) = replay(CaseKind::PerfRegression, &events);
        assert_eq!(p.state, CaseState::FixPosted);
        assert_eq!(steps.iter().map(|(e, _)| e.at).collect::<Vec<_>>(), [100, 200, 300]);
        assert_eq!(p.last_activity, Some(300));
    }

    #[test]
    fn stale_after_quiet_stretches_and_revived_by_activity() {
        let d = DAY;
        let events = [ev(0, EventKind::Reported), ev(40 * d, EventKind::Discussion)];
        assert_eq!(stale_times(CaseKind::Functional, &events, 50 * d, 30), vec![30 * d]);
        assert_eq!(stale_times(CaseKind::Functional, &events, 80 * d, 30), vec![30 * d, 70 * d]);
        let mut all = events.to_vec();
        all.push(ev(30 * d, EventKind::Stale));
        let (p, _) = replay(CaseKind::Functional, &all);
        assert_eq!(p.state, CaseState::Discussed);
        // A posted fix does not go stale; an improvement never does.
        let fixed = [ev(0, EventKind::Reported), ev(d, EventKind::FixPosted)];
        assert!(stale_times(CaseKind::Build, &fixed, 400 * d, 30).is_empty());
        assert!(stale_times(CaseKind::PerfImprovement, &events, 400 * d, 30).is_empty());
    }

    #[test]
    fn names_round_trip() {
        for s in CaseState::ALL {
            assert_eq!(CaseState::parse(s.as_str()), Some(s));
        }
        for k in EventKind::ALL {
            assert_eq!(EventKind::parse(k.as_str()), Some(k));
        }
    }
}
