//! The weekly digest: what the cases looked like at the end of an ISO
//! week, and what happened in it, as one plain-text mail for a kernel
//! list. Pure: the cases (with their events and messages) and the week
//! come in, a [`Model`] and its text come out.
//!
//! The state of a case is its state at the end of the week (its events
//! replayed up to then), so the digest of a past week tells that week's
//! truth. Perf regressions are listed one by one, worst first (|change|,
//! then age); dmesg and build reports are counted by tree.

use serde::Serialize;

use crate::case::{CaseKind, CaseRecord, CaseState, Event, EventKind, SubscriptionFilter, replay, stale_times};
use crate::model::rfc3339;
use crate::text::cut;

/// Entries listed per section; the rest are counted.
pub const SECTION_LIMIT: usize = 10;
const DAY: i64 = 86_400;

/// An ISO week: Monday 00:00 UTC to the next Monday.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Week {
    /// `2026-W20`.
    pub name: String,
    pub start: i64,
    pub end: i64,
}

impl Week {
    /// The ISO week that contains `t` (seconds since the epoch).
    pub fn containing(t: i64) -> Week {
        let ts = jiff::Timestamp::from_second(t).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        let date = ts.to_zoned(jiff::tz::TimeZone::UTC).date();
        let iso = date.iso_week_date();
        let monday =
            date.checked_sub(jiff::Span::new().days(i64::from(iso.weekday().to_monday_zero_offset()))).unwrap_or(date);
        let start = monday.to_zoned(jiff::tz::TimeZone::UTC).map_or(0, |z| z.timestamp().as_second());
        Week { name: format!("{:04}-W{:02}", iso.year(), iso.week()), start, end: start + 7 * DAY }
    }

    /// The week before this one.
    pub fn previous(&self) -> Week {
        Week::containing(self.start - DAY)
    }

    /// The ISO week of a calendar date (`YYYY-MM-DD`).
    pub fn of_date(date: &str) -> Option<Week> {
        let d: jiff::civil::Date = date.parse().ok()?;
        let t = d.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp().as_second();
        Some(Week::containing(t))
    }
}

/// One case as the digest lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Line {
    pub id: i64,
    pub kind: String,
    /// The metric and its signed change, or the first signature.
    pub what: String,
    pub change_pct: Option<f64>,
    pub commit: String,
    pub commit_subject: Option<String>,
    pub tree: Option<String>,
    pub opened_at: i64,
    pub age_days: i64,
    pub state: String,
    pub last_event: Option<(String, i64)>,
    pub link: String,
    /// Section-specific: a verdict, days waiting.
    pub note: Option<String>,
}

/// dmesg and build reports of the week, by tree.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TreeCount {
    pub tree: String,
    pub functional: u32,
    pub build: u32,
}

/// The digest of one week.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Model {
    pub week: Week,
    /// Open perf regressions at the end of the week, worst first.
    pub open: Vec<Line>,
    /// Perf regressions reported this week.
    pub new: Vec<Line>,
    /// Cases waiting for a retest at the end of the week, longest first.
    pub waiting_retest: Vec<Line>,
    /// Retest verdicts this week.
    pub verdicts: Vec<Line>,
    /// Fixes posted, not resolved.
    pub fixes_posted: Vec<Line>,
    pub resolved: Vec<Line>,
    pub stale: Vec<Line>,
    /// Improvements reported this week.
    pub improvements: Vec<Line>,
    /// dmesg and build reports made this week, by tree.
    pub by_tree: Vec<TreeCount>,
    /// dmesg and build cases open at the end of the week.
    pub functional_open: u32,
    pub build_open: u32,
}

impl Model {
    /// Nothing to say about the week.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
            && self.new.is_empty()
            && self.waiting_retest.is_empty()
            && self.verdicts.is_empty()
            && self.fixes_posted.is_empty()
            && self.resolved.is_empty()
            && self.stale.is_empty()
            && self.improvements.is_empty()
            && self.by_tree.is_empty()
            && self.functional_open == 0
            && self.build_open == 0
    }
}

fn line(c: &CaseRecord, state: CaseState, week: &Week, archive_url: &str) -> Line {
    let f = &c.view.facts;
    let what = match (&f.metric, f.change_pct) {
        (Some(m), Some(p)) => format!("{m} {p:+}%"),
        (Some(m), None) => m.clone(),
        _ => f.signature.clone().unwrap_or_else(|| f.kind.as_str().to_string()),
    };
    let last = c
        .events
        .iter()
        .filter(|e| e.at < week.end && e.kind != EventKind::Stale)
        .max_by_key(|e| (e.at, e.kind))
        .map(|e| (e.kind.as_str().to_string(), e.at));
    Line {
        id: c.view.id.0,
        kind: f.kind.as_str().to_string(),
        what,
        change_pct: f.change_pct,
        commit: f.commit.as_deref().map_or("-".into(), |s| s.get(..12).unwrap_or(s).to_string()),
        commit_subject: f.commit_subject.clone(),
        tree: [f.tree.as_deref(), f.branch.as_deref()].into_iter().flatten().collect::<Vec<_>>().join("/").into(),
        opened_at: f.opened_at,
        age_days: ((week.end - f.opened_at) / DAY).max(0),
        state: state.as_str().to_string(),
        last_event: last,
        link: f.report_message_id.link(archive_url),
        note: None,
    }
}

/// The digest of `week` from every case (with its events and messages);
/// with `filter`, only the cases it lets through for `who`.
pub fn model(
    cases: &[CaseRecord],
    week: &Week,
    stale_days: i64,
    archive_url: &str,
    filter: Option<(&SubscriptionFilter, &str)>,
) -> Model {
    let mut m = Model {
        week: week.clone(),
        open: Vec::new(),
        new: Vec::new(),
        waiting_retest: Vec::new(),
        verdicts: Vec::new(),
        fixes_posted: Vec::new(),
        resolved: Vec::new(),
        stale: Vec::new(),
        improvements: Vec::new(),
        by_tree: Vec::new(),
        functional_open: 0,
        build_open: 0,
    };
    let in_week = |t: i64| t >= week.start && t < week.end;
    let mut trees: std::collections::BTreeMap<String, TreeCount> = std::collections::BTreeMap::new();
    for c in cases {
        let f = &c.view.facts;
        if f.opened_at >= week.end || filter.is_some_and(|(flt, who)| !flt.matches(c, who)) {
            continue;
        }
        let events = events_by_week_end(c, week, stale_days);
        let state = replay(f.kind, &events).0.state;
        let l = line(c, state, week, archive_url);
        match f.kind {
            CaseKind::PerfImprovement => {
                if in_week(f.opened_at) {
                    m.improvements.push(l);
                }
                continue;
            }
            CaseKind::Functional | CaseKind::Build => {
                let functional = f.kind == CaseKind::Functional;
                if state.is_open() {
                    *(if functional { &mut m.functional_open } else { &mut m.build_open }) += 1;
                }
                if in_week(f.opened_at) {
                    let tree =
                        l.tree.clone().filter(|t| !t.is_empty()).unwrap_or_else(|| "(patches on the list)".into());
                    let t = trees.entry(tree.clone()).or_insert_with(|| TreeCount { tree, ..TreeCount::default() });
                    *(if functional { &mut t.functional } else { &mut t.build }) += 1;
                }
                continue;
            }
            CaseKind::PerfRegression => {}
        }
        if in_week(f.opened_at) {
            m.new.push(l.clone());
        }
        m.verdicts.extend(verdicts(&l, &events, week));
        match state {
            CaseState::Resolved if events.iter().any(|e| e.kind == EventKind::Resolved && in_week(e.at)) => {
                m.resolved.push(l.clone())
            }
            CaseState::RetestRequested => {
                let since = events.iter().filter(|e| e.kind == EventKind::RetestRequested).map(|e| e.at).max();
                let mut w = l.clone();
                w.note = since.map(|s| format!("waiting {}d", (week.end - s) / DAY));
                m.waiting_retest.push(w);
            }
            CaseState::FixPosted => m.fixes_posted.push(l.clone()),
            CaseState::Stale => m.stale.push(l.clone()),
            _ => {}
        }
        if state.is_open() && state != CaseState::Stale {
            m.open.push(l);
        }
    }
    sort_sections(&mut m);
    m.by_tree = trees.into_values().collect();
    m
}

/// A case as it stood at the end of the week: its events until then, and
/// the stale marks its activity up to then implies.
fn events_by_week_end(c: &CaseRecord, week: &Week, stale_days: i64) -> Vec<Event> {
    let mut events: Vec<Event> =
        c.events.iter().filter(|e| e.at < week.end && e.kind != EventKind::Stale).cloned().collect();
    if stale_days > 0 {
        for t in stale_times(c.view.facts.kind, &events, week.end, stale_days) {
            events.push(Event::new(t, EventKind::Stale, None));
        }
    }
    events
}

/// The week's retest results of a case, each a line with what it found.
fn verdicts(l: &Line, events: &[Event], week: &Week) -> Vec<Line> {
    let in_week = |t: i64| t >= week.start && t < week.end;
    events
        .iter()
        .filter(|e| in_week(e.at) && e.kind.is_retest_result())
        .map(|e| {
            let mut v = l.clone();
            // A rerun without a fix says the regression is still there; a
            // result the mail does not give says only that.
            v.note = Some(match e.kind {
                EventKind::Confirmed => "still regressed".to_string(),
                EventKind::StillPresent => e.note.clone().unwrap_or_else(|| "still present".to_string()),
                EventKind::ResultUnknown => "result unknown".to_string(),
                EventKind::NotReproduced => "not reproduced".to_string(),
                _ => e.verdict.map_or("no verdict", |v| v.as_str()).to_string(),
            });
            v
        })
        .collect()
}

/// Open regressions worst first (|change|, then age), waiting retests
/// longest first, the other sections by case.
fn sort_sections(m: &mut Model) {
    m.open.sort_by(|a, b| {
        let sev = |l: &Line| l.change_pct.map_or(0.0, f64::abs);
        sev(b).total_cmp(&sev(a)).then(a.opened_at.cmp(&b.opened_at)).then(a.id.cmp(&b.id))
    });
    m.waiting_retest.sort_by_key(|l| (l.last_event.as_ref().map_or(0, |e| e.1), l.id));
    for v in [&mut m.new, &mut m.verdicts, &mut m.fixes_posted, &mut m.resolved, &mut m.stale, &mut m.improvements] {
        v.sort_by_key(|l| l.id);
    }
}

/// The week whose digest is due at `now`, if any: once the configured
/// weekday and hour (UTC) of a week have come, the digest of the week
/// before is due, for the rest of that week. So a bot that was down at
/// the hour sends it late, the same week; a week it was down throughout
/// is skipped (its digest would be stale news). Sent at most once per
/// week and recipient: the outbox keeps one mail per
/// `digest:<week>:<recipient>`.
pub fn due_week(now: i64, weekday: u8, hour: u8) -> Option<Week> {
    let this = Week::containing(now);
    let at = this.start + i64::from(weekday.min(6)) * DAY + i64::from(hour.min(23)) * 3600;
    (now >= at).then(|| this.previous())
}

/// `lkpbot weekly 2026-W20: 12 open regressions (3 new), 2 resolved`.
pub fn subject(m: &Model) -> String {
    if m.is_empty() {
        return format!("lkpbot weekly {}: a quiet week", m.week.name);
    }
    let n = m.open.len();
    format!(
        "lkpbot weekly {}: {n} open regression{} ({} new), {} resolved",
        m.week.name,
        if n == 1 { "" } else { "s" },
        m.new.len(),
        m.resolved.len()
    )
}

fn entry(l: &Line) -> String {
    let head = format!("#{:<5} {}", l.id, cut(&l.what, 60));
    let subject = l.commit_subject.as_deref().map_or(String::new(), |s| format!(" {s}"));
    let second = cut(&format!("       {}{subject}", l.commit), 78);
    let tree = l.tree.as_deref().filter(|t| !t.is_empty()).unwrap_or("-");
    let last = l.last_event.as_ref().map_or(String::new(), |(k, t)| format!(", last {k} {}", &rfc3339(*t)[..10]));
    let facts = format!("       {tree}, {}d old{last}", l.age_days);
    // The note (a verdict) goes on its own line rather than be cut.
    let third = match &l.note {
        Some(n) if facts.chars().count() + 2 + n.chars().count() > 78 => {
            format!("{}\n{}", cut(&facts, 78), cut(&format!("       {n}"), 78))
        }
        Some(n) => format!("{facts}, {n}"),
        None => cut(&facts, 78),
    };
    format!("{}\n{second}\n{third}\n       {}\n", cut(&head, 78), l.link)
}

fn section(out: &mut String, title: &str, lines: &[Line], more: &str) {
    if lines.is_empty() {
        return;
    }
    out.push_str(&format!("{title} ({})\n\n", lines.len()));
    for l in lines.iter().take(SECTION_LIMIT) {
        out.push_str(&entry(l));
    }
    if lines.len() > SECTION_LIMIT {
        out.push_str(&format!("       and {} more: {more}\n", lines.len() - SECTION_LIMIT));
    }
    out.push('\n');
}

/// The digest as mail text: sections by state, each entry on a few lines
/// of at most 78 columns, a footer on how to subscribe. `more` says where
/// the full lists are.
pub fn render(m: &Model, bot: &str, more: &str) -> String {
    let mut out = String::new();
    if m.is_empty() {
        out.push_str(&format!(
            "Nothing happened to tracked kernel test robot reports in {}\n({} to {}).\n",
            m.week.name,
            &rfc3339(m.week.start)[..10],
            &rfc3339(m.week.end - 1)[..10]
        ));
    } else {
        out.push_str(&format!(
            "Kernel test robot reports tracked by {bot},\nweek {} ({} to {}).\n\n",
            m.week.name,
            &rfc3339(m.week.start)[..10],
            &rfc3339(m.week.end - 1)[..10]
        ));
        section(&mut out, "Open regressions, worst first", &m.open, more);
        section(&mut out, "New this week", &m.new, more);
        section(&mut out, "Waiting for a retest", &m.waiting_retest, more);
        section(&mut out, "Retest verdicts this week", &m.verdicts, more);
        section(&mut out, "Fixes posted, not resolved", &m.fixes_posted, more);
        section(&mut out, "Resolved this week", &m.resolved, more);
        section(&mut out, "Stale (no activity)", &m.stale, more);
        if !m.improvements.is_empty() {
            out.push_str(&format!("Improvements this week ({})\n\n", m.improvements.len()));
            for l in m.improvements.iter().take(SECTION_LIMIT) {
                out.push_str(&format!("{}\n", cut(&format!("#{:<5} {}  {}", l.id, l.what, l.commit), 78)));
            }
            if m.improvements.len() > SECTION_LIMIT {
                out.push_str(&format!("       and {} more: {more}\n", m.improvements.len() - SECTION_LIMIT));
            }
            out.push('\n');
        }
        if !m.by_tree.is_empty() || m.functional_open + m.build_open > 0 {
            out.push_str("dmesg and build reports\n\n");
            out.push_str(&format!(
                "  open at the end of the week: {} dmesg, {} build\n",
                m.functional_open, m.build_open
            ));
            if !m.by_tree.is_empty() {
                out.push_str(&format!("\n  {:<52} {:>8} {:>8}\n", "new this week, by tree", "dmesg", "build"));
                for t in m.by_tree.iter().take(3 * SECTION_LIMIT) {
                    out.push_str(&format!("  {:<52} {:>8} {:>8}\n", cut(&t.tree, 52), t.functional, t.build));
                }
                if m.by_tree.len() > 3 * SECTION_LIMIT {
                    out.push_str(&format!("  and {} more trees\n", m.by_tree.len() - 3 * SECTION_LIMIT));
                }
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_weeks() {
        // 2026-05-14 is a Thursday of week 20.
        let w = Week::of_date("2026-05-14").unwrap();
        assert_eq!(w.name, "2026-W20");
        assert_eq!(rfc3339(w.start), "2026-05-11T00:00:00Z");
        assert_eq!(w.end - w.start, 7 * DAY);
        assert_eq!(Week::of_date("2026-05-11").unwrap(), w);
        assert_eq!(Week::of_date("2026-05-17").unwrap(), w);
        assert_eq!(w.previous().name, "2026-W19");
        // The first days of January can belong to the last week of the year before.
        assert_eq!(Week::of_date("2027-01-01").unwrap().name, "2026-W53");
    }

    #[test]
    fn the_digest_of_last_week_is_due_from_the_hour_to_the_end_of_this_week() {
        let monday = Week::of_date("2026-05-18").unwrap();
        assert_eq!(monday.name, "2026-W21");
        // Monday 08:00 UTC: not at 07:59, from 08:00, still on Sunday.
        assert_eq!(due_week(monday.start + 8 * 3600 - 60, 0, 8), None);
        assert_eq!(due_week(monday.start + 8 * 3600, 0, 8).unwrap().name, "2026-W20");
        assert_eq!(due_week(monday.start + 6 * DAY + 23 * 3600, 0, 8).unwrap().name, "2026-W20");
        // The next week, the week after is due: a missed week is skipped.
        assert_eq!(due_week(monday.end + 9 * 3600, 0, 8).unwrap().name, "2026-W21");
        // Friday 17:00.
        assert_eq!(due_week(monday.start + 4 * DAY + 16 * 3600, 4, 17), None);
        assert_eq!(due_week(monday.start + 4 * DAY + 17 * 3600, 4, 17).unwrap().name, "2026-W20");
    }
}
