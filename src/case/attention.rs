//! The attention order: what needs someone first (DESIGN.md,
//! "Interfaces": `cases --sort attention`, the web's `/`), and where a
//! case stands for the digest's movement.
//!
//! Cases come in groups by [`standing`]: open regressions no fix has
//! reached, then those whose fix is posted (or shown to recover) but not
//! applied, then those whose fix is applied or merged into a tree that
//! does not resolve, stale cases last; closed cases after them (listed
//! only when asked for). Within a group: a case the robot reported again
//! in the last week with a "[still regression on ...]" line first (it is
//! still there, and someone may be waiting on it), then clear before
//! marginal, then the larger |change|, then the older report.

use std::cmp::Ordering;

use super::significance::{self, Significance};
use super::{CaseFacts, CaseRecord, CaseState, DAY};
use crate::model::Verdict;

/// Where a case stands, in the order it needs someone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Standing {
    /// An open regression no fix has reached.
    Unfixed,
    /// A fix posted, or a fix retested and recovering, not applied yet.
    FixPosted,
    /// A fix applied, or merged into a tree that does not resolve.
    FixApplied,
    /// No activity for the stale window.
    Stale,
    /// Closed: the fix reached a tree that resolves, or someone said so.
    Fixed,
    /// Closed: the culprit was reverted.
    Reverted,
    /// Closed otherwise (invalid, duplicate, replaced), and improvements.
    Closed,
}

impl Standing {
    /// Still needs someone (the groups `cases` lists by default).
    pub fn is_open(self) -> bool {
        self <= Standing::Stale
    }
}

/// Where a case in `state` stands, with the verdict of the last fix
/// judged. The one place a state is given its group (`fix-applied`,
/// `fix-merged` with [`Standing::FixApplied`], `reverted` with
/// [`Standing::Reverted`], `superseded` with [`Standing::Closed`]); the
/// digest's movement and tags follow.
pub fn standing(state: CaseState, verdict: Option<Verdict>) -> Standing {
    use CaseState as S;
    match state {
        S::Reported | S::Discussed | S::RetestRequested => Standing::Unfixed,
        S::RetestDone if verdict == Some(Verdict::Recovered) => Standing::FixPosted,
        S::RetestDone => Standing::Unfixed,
        S::FixPosted => Standing::FixPosted,
        S::FixApplied | S::FixMerged => Standing::FixApplied,
        S::Stale => Standing::Stale,
        S::Resolved => Standing::Fixed,
        S::Reverted => Standing::Reverted,
        S::Superseded | S::Invalid | S::Duplicate | S::Informational => Standing::Closed,
    }
}

/// A case's place in the attention order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rank {
    pub standing: Standing,
    /// `None` for a case the rule does not apply to (dmesg, build): a
    /// crash or a failed build is not noise, so it ranks as clear.
    pub significance: Option<Significance>,
    pub change_pct: Option<f64>,
    pub opened_at: i64,
    /// Reported again with a "[still regression on ...]" line within the
    /// week (the last seven days, or the digest's week).
    pub seen_again: bool,
}

impl Rank {
    /// A case in `state` with `verdict` and `facts` (the digest ranks a
    /// case as it stood at the end of a week).
    pub fn of(state: CaseState, verdict: Option<Verdict>, facts: &CaseFacts) -> Rank {
        Rank {
            standing: standing(state, verdict),
            significance: significance::of_case(facts),
            change_pct: facts.change_pct,
            opened_at: facts.opened_at,
            seen_again: false,
        }
    }

    /// A case as it stands at `now`.
    pub fn now(c: &CaseRecord, now: i64) -> Rank {
        let seen_again = c.seen_again_at.is_some_and(|t| t > now - 7 * DAY);
        Rank { seen_again, ..Rank::of(c.view.state, c.verdict, &c.view.facts) }
    }

    /// Smaller needs someone sooner.
    pub fn order(&self, other: &Rank) -> Ordering {
        let marginal = |r: &Rank| r.significance == Some(Significance::Marginal);
        let size = |r: &Rank| r.change_pct.map_or(0.0, f64::abs);
        self.standing
            .cmp(&other.standing)
            .then(other.seen_again.cmp(&self.seen_again))
            .then(marginal(self).cmp(&marginal(other)))
            .then(size(other).total_cmp(&size(self)))
            .then(self.opened_at.cmp(&other.opened_at))
    }
}

/// Sorts `cases` in the attention order at `now` (ties by id).
pub fn sort(cases: &mut [&CaseRecord], now: i64) {
    cases.sort_by(|a, b| Rank::now(a, now).order(&Rank::now(b, now)).then(a.view.id.cmp(&b.view.id)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::{CaseId, CaseKind, CaseView};
    use crate::model::MessageId;

    fn case(id: i64, state: CaseState, verdict: Option<Verdict>, change: Option<f64>, sd: Option<f64>) -> CaseRecord {
        let kind = if change.is_some() { CaseKind::PerfRegression } else { CaseKind::Functional };
        let facts = CaseFacts {
            change_pct: change,
            new_stddev_pct: sd,
            ..CaseFacts::new(kind, format!("case {id}"), MessageId::new(&format!("{id}@x")).unwrap(), id * 100)
        };
        CaseRecord { verdict, ..CaseRecord::bare(CaseView { id: CaseId(id), state, facts }, 0) }
    }

    #[test]
    fn what_needs_someone_comes_first() {
        use CaseState as S;
        let cases = [
            case(1, S::Stale, None, Some(-80.0), None),
            case(2, S::FixPosted, None, Some(-50.0), None),
            // Recovered by a fix that is not applied yet: with the fixes.
            case(3, S::RetestDone, Some(Verdict::Recovered), Some(-60.0), None),
            // A fix tried and found wanting: no fix has reached it.
            case(4, S::RetestDone, Some(Verdict::NotRecovered), Some(-9.0), None),
            // -5% with no %stddev printed: marginal, after every clear one.
            case(5, S::Reported, None, Some(-5.0), None),
            case(6, S::Discussed, None, Some(-25.0), Some(3.0)),
            // A crash: no change, ranked as clear, after the measured ones.
            case(7, S::Reported, None, None, None),
            case(8, S::Resolved, None, Some(-90.0), None),
            // Same |change| and significance as 6, older: 6 is older.
            case(9, S::RetestRequested, None, Some(25.0), None),
        ];
        let mut refs: Vec<&CaseRecord> = cases.iter().collect();
        sort(&mut refs, 10 * DAY);
        let ids: Vec<i64> = refs.iter().map(|c| c.view.id.0).collect();
        assert_eq!(ids, [6, 9, 4, 7, 5, 3, 2, 1, 8]);
    }

    /// A case the robot reported again this week, still there, leads its
    /// group whatever its size; seen eight days ago it is ranked as any.
    #[test]
    fn still_seen_this_week_leads_its_group() {
        use CaseState as S;
        let now = 100 * DAY;
        let seen = |id, at| CaseRecord { seen_again_at: Some(at), ..case(id, S::Reported, None, Some(-4.0), None) };
        let cases = [
            case(1, S::Reported, None, Some(-50.0), None),
            seen(2, now - 2 * DAY),
            seen(3, now - 8 * DAY),
            CaseRecord { seen_again_at: Some(now - DAY), ..case(4, S::FixPosted, None, Some(-30.0), None) },
            case(5, S::FixPosted, None, Some(-60.0), None),
        ];
        let mut refs: Vec<&CaseRecord> = cases.iter().collect();
        sort(&mut refs, now);
        let ids: Vec<i64> = refs.iter().map(|c| c.view.id.0).collect();
        assert_eq!(ids, [2, 1, 3, 4, 5]);
    }

    /// An applied or merged fix comes after a posted one and before the
    /// stale cases; a revert is its own closed group, a later version
    /// closes the case.
    #[test]
    fn lifecycle_states_have_their_groups() {
        assert_eq!(standing(CaseState::FixApplied, None), Standing::FixApplied);
        assert_eq!(standing(CaseState::FixMerged, None), Standing::FixApplied);
        assert_eq!(standing(CaseState::Reverted, None), Standing::Reverted);
        assert_eq!(standing(CaseState::Superseded, None), Standing::Closed);
        assert!(Standing::FixPosted < Standing::FixApplied && Standing::FixApplied < Standing::Stale);
    }

    #[test]
    fn open_standings_are_the_open_states() {
        for s in CaseState::ALL {
            let open = standing(s, None).is_open();
            assert_eq!(open, s.is_open(), "{s:?}");
        }
    }
}
