//! The weekly digest: what the cases looked like at the end of an ISO
//! week, and what happened in it, as one plain-text mail for a kernel
//! list. Pure: the cases (with their events and messages) and the week
//! come in, a [`Model`] and its text come out.
//!
//! The state of a case is its state at the end of the week (its events
//! replayed up to then), so the digest of a past week tells that week's
//! truth. A reader sees what needs them on the first screen: one line
//! with the week's movement (new, fixed, reverted, still open), then the
//! open perf regressions in the attention order (`case::attention`),
//! each once with its tags (new, waiting 6d, fix posted, a retest's
//! verdict, marginal); then what closed this week and what went stale
//! this week; cases stale since before the week are a count and a link.
//! dmesg and build reports are counted by tree.

use serde::Serialize;

use crate::case::attention::{Rank, Standing, standing};
use crate::case::significance::{self, Significance};
use crate::case::{
    CaseFacts, CaseKind, CaseRecord, CaseState, Event, EventKind, Replayed, SubscriptionFilter, replay, stale_times,
};
use crate::model::rfc3339;
use crate::text::cut;

/// Entries listed per section; the rest are counted.
pub const SECTION_LIMIT: usize = 10;
/// The movement line and the first section fit in this many lines (the
/// first screen of a mail reader), at most [`WIDTH`] columns each.
pub const FIRST_SCREEN: usize = 40;
pub const WIDTH: usize = 78;
const DAY: i64 = 86_400;

/// Where the digest points for what it does not list: the dashboard
/// (`[digest] more_url`) when there is one, else the command that lists
/// it, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Links {
    /// Every open case ("and N more").
    pub more: String,
    /// The stale regressions, collapsed into a count.
    pub stale: String,
}

impl Default for Links {
    /// No dashboard: the commands, in words.
    fn default() -> Links {
        Links::new(None)
    }
}

impl Links {
    pub fn new(dashboard: Option<&str>) -> Links {
        match dashboard.map(str::trim).filter(|u| !u.is_empty()) {
            Some(url) => {
                let sep = if url.contains('?') { '&' } else { '?' };
                Links { more: url.to_string(), stale: format!("{url}{sep}state=stale&kind=perf-regression") }
            }
            None => Links {
                more: "`lkpbot cases --sort attention` lists them all".into(),
                stale: "`lkpbot cases --state stale` lists them".into(),
            },
        }
    }
}

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
    /// A perf case's `clear` or `marginal` (DESIGN.md, Significance).
    pub significance: Option<Significance>,
    /// What the week did to the case and where it stands, in words: `new`,
    /// `waiting 6d`, `fix posted`, `retest: recovered`, `marginal`, ...
    pub tags: Vec<String>,
}

/// The week's movement of perf regressions: the line up top.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Movement {
    /// Reported this week.
    pub new: u32,
    /// Closed as fixed this week (`resolved`).
    pub fixed: u32,
    /// Closed this week by a revert of the culprit.
    pub reverted: u32,
    /// Open at the end of the week, not stale.
    pub still_open: u32,
    /// Stale at the end of the week.
    pub stale: u32,
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
    /// The line up top.
    pub movement: Movement,
    /// Open perf regressions that are not stale, in the attention order,
    /// each once with its tags: the first section.
    pub attention: Vec<Line>,
    /// Perf regressions closed this week (fixed, reverted, invalid, ...).
    pub closed: Vec<Line>,
    /// Perf regressions that went stale this week.
    pub went_stale: Vec<Line>,
    /// Perf regressions stale since before the week: counted, not listed.
    pub stale_before: u32,
    /// Days without activity that make a case stale (0: never).
    pub stale_days: i64,
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
            && self.closed.is_empty()
            && self.attention.is_empty()
    }
}

/// The tag that says where a case stands at the end of the week, from
/// its state and its events up to then; `None` for a state that goes
/// without saying (no fix yet). The one place a state gets its words
/// (`fix applied to X`, with X the tree of the last fix-applied or
/// fix-merged event; `fix merged into X`; `reverted`; `superseded`).
pub fn state_tag(state: CaseState, events: &[Event]) -> Option<String> {
    let last = |k: EventKind| events.iter().filter(|e| e.kind == k).max_by_key(|e| e.at);
    match state {
        CaseState::Reported | CaseState::Discussed | CaseState::RetestRequested | CaseState::RetestDone => None,
        CaseState::FixPosted => Some("fix posted".into()),
        CaseState::FixApplied => Some(match last_tree(events) {
            Some(tree) => format!("fix applied to {tree}"),
            None => "fix applied".into(),
        }),
        CaseState::FixMerged => Some(match last_tree(events) {
            Some(tree) => format!("fix merged into {tree}"),
            None => "fix merged".into(),
        }),
        CaseState::Resolved => Some(match last(EventKind::Resolved) {
            Some(Event { fix_commit: Some(fix), .. }) => format!("resolved by {}", fix.get(..12).unwrap_or(fix)),
            Some(Event { tree: Some(tree), .. }) => format!("resolved: merged into {tree}"),
            _ => "resolved".into(),
        }),
        CaseState::Reverted => Some("reverted".into()),
        CaseState::Superseded => Some("superseded".into()),
        CaseState::Stale => Some(match last(EventKind::Stale) {
            Some(e) => format!("stale since {}", &rfc3339(e.at)[..10]),
            None => "stale".into(),
        }),
        CaseState::Invalid => Some("invalid".into()),
        CaseState::Duplicate => Some("duplicate".into()),
        CaseState::Informational => None,
    }
}

/// The tree of the last fix-applied, fix-committed or fix-merged event
/// that names one: where the fix is now.
fn last_tree(events: &[Event]) -> Option<&str> {
    let moved = [EventKind::FixApplied, EventKind::FixCommitted, EventKind::FixMerged];
    events.iter().filter(|e| moved.contains(&e.kind) && e.tree.is_some()).max_by_key(|e| e.at)?.tree.as_deref()
}

/// A fix verdict in words, `(marginal)` when the numbers do not make it
/// clear.
fn verdict_words(c: &CaseRecord, e: &Event) -> String {
    let Some(v) = e.verdict else { return "no verdict".into() };
    let sig = match (&e.message_id, &e.fix_commit) {
        (Some(m), Some(x)) => significance::of_result(&c.retests, m, x),
        _ => None,
    };
    match sig {
        Some(Significance::Marginal) => format!("{} (marginal)", v.as_str()),
        _ => v.as_str().to_string(),
    }
}

/// The tags of a case at the end of `week` (`events` those up to then):
/// new, where it stands, a retest waited for, the week's retest results
/// (else the last fix verdict), and marginal.
fn tags(c: &CaseRecord, state: CaseState, events: &[Event], week: &Week) -> Vec<String> {
    let in_week = |t: i64| t >= week.start && t < week.end;
    let mut out = Vec::new();
    if in_week(c.view.facts.opened_at) {
        out.push("new".to_string());
    }
    out.extend(state_tag(state, events));
    let last_result = events.iter().filter(|e| e.kind.is_retest_result()).map(|e| e.at).max();
    let asked = events.iter().filter(|e| e.kind == EventKind::RetestRequested).map(|e| e.at).max();
    if let Some(asked) = asked.filter(|a| last_result.is_none_or(|r| r < *a)) {
        out.push(format!("waiting {}d", (week.end - asked) / DAY));
    }
    let mut results: Vec<&Event> = events.iter().filter(|e| in_week(e.at) && e.kind.is_retest_result()).collect();
    results.sort_by_key(|e| (e.at, e.kind));
    // A fix judged before the week still says where the case stands.
    if !results.iter().any(|e| e.kind == EventKind::RetestDone)
        && let Some(e) =
            events.iter().filter(|e| e.kind == EventKind::RetestDone && e.verdict.is_some()).max_by_key(|e| e.at)
    {
        out.push(format!("last retest: {}", verdict_words(c, e)));
    }
    for e in results {
        let tag = match e.kind {
            EventKind::RetestDone => format!("retest: {}", verdict_words(c, e)),
            EventKind::Confirmed => "rerun: still regressed".into(),
            EventKind::StillPresent => e.note.clone().unwrap_or_else(|| "still present".into()),
            EventKind::ResultUnknown => "retest: result unknown".into(),
            _ => "rerun: not reproduced".into(),
        };
        if !out.contains(&tag) {
            out.push(tag);
        }
    }
    out.extend(still_seen_tags(events, &in_week));
    if significance::of_case(&c.view.facts) == Some(Significance::Marginal) {
        out.push("marginal".into());
    }
    out
}

/// `still seen on linus/master, linux-next/master (2026-05-20)`: the
/// robot sent the report again in the week with "[still regression on
/// TREE SHA]" lines; each tree once, the date the latest.
fn still_seen_tags(events: &[Event], in_week: &impl Fn(i64) -> bool) -> Option<String> {
    let seen = events.iter().filter(|e| e.kind == EventKind::ReportedAgain && e.tree_commit.is_some() && in_week(e.at));
    let mut trees: Vec<String> = Vec::new();
    let mut latest = None;
    for e in seen {
        let Some(tree) = e.tree.as_deref() else { continue };
        latest = latest.max(Some(e.at));
        let tree = cut(tree, 30);
        if !trees.contains(&tree) {
            trees.push(tree);
        }
    }
    Some(format!("still seen on {} ({})", trees.join(", "), &rfc3339(latest?)[..10]))
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
        significance: significance::of_case(f),
        tags: Vec::new(),
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
    let mut m = Model::empty(week, stale_days);
    let mut ranked: Vec<(Rank, Line)> = Vec::new();
    let mut trees: std::collections::BTreeMap<String, TreeCount> = std::collections::BTreeMap::new();
    for c in cases {
        let f = &c.view.facts;
        if f.opened_at >= week.end || filter.is_some_and(|(flt, who)| !flt.matches(c, who)) {
            continue;
        }
        let events = events_by(c, week.end, stale_days);
        let end = replay(f.kind, &events).0;
        let l = line(c, end.state, week, archive_url);
        if f.kind == CaseKind::PerfRegression {
            perf_regression(&mut m, &mut ranked, c, &events, &end, l);
        } else {
            counted_apart(&mut m, &mut trees, f, end.state, l);
        }
    }
    sort_sections(&mut m);
    ranked.sort_by(|(a, x), (b, y)| a.order(b).then(x.id.cmp(&y.id)));
    m.attention = ranked.into_iter().map(|(_, l)| l).collect();
    m.by_tree = trees.into_values().collect();
    m
}

impl Model {
    /// A digest of `week` with nothing in it yet.
    fn empty(week: &Week, stale_days: i64) -> Model {
        Model {
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
            movement: Movement::default(),
            attention: Vec::new(),
            closed: Vec::new(),
            went_stale: Vec::new(),
            stale_before: 0,
            stale_days,
        }
    }
}

/// Improvements (listed when new) and functional and build cases
/// (counted, open and new by tree): not ranked one by one.
fn counted_apart(
    m: &mut Model,
    trees: &mut std::collections::BTreeMap<String, TreeCount>,
    f: &CaseFacts,
    state: CaseState,
    l: Line,
) {
    let in_week = |t: i64| t >= m.week.start && t < m.week.end;
    if f.kind == CaseKind::PerfImprovement {
        if in_week(f.opened_at) {
            m.improvements.push(l);
        }
        return;
    }
    let functional = f.kind == CaseKind::Functional;
    let new = in_week(f.opened_at);
    if state.is_open() {
        *(if functional { &mut m.functional_open } else { &mut m.build_open }) += 1;
    }
    if new {
        let tree = l.tree.clone().filter(|t| !t.is_empty()).unwrap_or_else(|| "(patches on the list)".into());
        let t = trees.entry(tree.clone()).or_insert_with(|| TreeCount { tree, ..TreeCount::default() });
        *(if functional { &mut t.functional } else { &mut t.build }) += 1;
    }
}

/// A perf regression: where it stands against the week's start (the
/// movement line, the attention list, what closed or went stale) and the
/// sections it belongs in.
fn perf_regression(
    m: &mut Model,
    ranked: &mut Vec<(Rank, Line)>,
    c: &CaseRecord,
    events: &[Event],
    end: &Replayed,
    mut l: Line,
) {
    let (week, f, state) = (m.week.clone(), &c.view.facts, end.state);
    let in_week = |t: i64| t >= week.start && t < week.end;
    l.tags = tags(c, state, events, &week);
    let now = standing(state, end.verdict);
    let before = if f.opened_at >= week.start {
        None
    } else {
        let start = replay(f.kind, &events_by(c, week.start, m.stale_days)).0;
        Some(standing(start.state, start.verdict))
    };
    match now {
        Standing::Stale => {
            m.movement.stale += 1;
            let since = events.iter().filter(|e| e.kind == EventKind::Stale).map(|e| e.at).max();
            if since.is_some_and(in_week) {
                m.went_stale.push(l.clone());
            } else {
                m.stale_before += 1;
            }
        }
        s if s.is_open() => {
            m.movement.still_open += 1;
            let seen_again = still_seen_tags(events, &in_week).is_some();
            ranked.push((Rank { seen_again, ..Rank::of(state, end.verdict, f) }, l.clone()));
        }
        s if before.is_none_or(|b| b.is_open()) => {
            m.closed.push(l.clone());
            match s {
                Standing::Fixed => m.movement.fixed += 1,
                Standing::Reverted => m.movement.reverted += 1,
                _ => {}
            }
        }
        _ => {}
    }
    if in_week(f.opened_at) {
        m.movement.new += 1;
        m.new.push(l.clone());
    }
    m.verdicts.extend(verdicts(&l, events, &week));
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

/// A case as it stood at `t`: its events before then, and the stale
/// marks its activity up to then implies.
fn events_by(c: &CaseRecord, t: i64, stale_days: i64) -> Vec<Event> {
    let mut events: Vec<Event> = c.events.iter().filter(|e| e.at < t && e.kind != EventKind::Stale).cloned().collect();
    if stale_days > 0 {
        for t in stale_times(c.view.facts.kind, &events, t, stale_days) {
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
    for v in [
        &mut m.new,
        &mut m.verdicts,
        &mut m.fixes_posted,
        &mut m.resolved,
        &mut m.stale,
        &mut m.improvements,
        &mut m.closed,
        &mut m.went_stale,
    ] {
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

/// `first, second, third`, broken into lines of at most `width` columns
/// after `indent` (the first line's room is `first_room`).
fn wrap_list(items: &[String], first_room: usize, indent: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    let mut room = first_room;
    for (i, item) in items.iter().enumerate() {
        let piece = if i + 1 < items.len() { format!("{item},") } else { item.clone() };
        let cur = lines.last_mut().map_or(0, |l| l.chars().count());
        let need = piece.chars().count() + usize::from(cur > 0);
        if cur > 0 && cur + need > room {
            lines.push(String::new());
            room = width.saturating_sub(indent.chars().count());
        }
        if let Some(l) = lines.last_mut() {
            if !l.is_empty() {
                l.push(' ');
            }
            l.push_str(&cut(&piece, room));
        }
    }
    lines
}

/// One case: what regressed and by how much, the commit, where and how
/// old with its tags, the link; at most [`WIDTH`] columns a line.
fn entry(l: &Line) -> String {
    const INDENT: &str = "       ";
    let head = format!("#{:<5} {}", l.id, cut(&l.what, 60));
    let subject = l.commit_subject.as_deref().map_or(String::new(), |s| format!(" {s}"));
    let second = cut(&format!("{INDENT}{}{subject}", l.commit), WIDTH);
    let tree = l.tree.as_deref().filter(|t| !t.is_empty()).unwrap_or("-");
    let facts = cut(&format!("{INDENT}{tree}, {}d old", l.age_days), WIDTH);
    let mut third = facts.clone();
    if !l.tags.is_empty() {
        let used = facts.chars().count() + 2;
        let room = WIDTH.saturating_sub(used);
        // The tags follow the facts, or start a line of their own when
        // not even the first fits beside them.
        let first_fits = l.tags.first().is_some_and(|t| t.chars().count() < room);
        let lines = if first_fits {
            wrap_list(&l.tags, room, INDENT, WIDTH)
        } else {
            let mut v = vec![String::new()];
            v.extend(wrap_list(&l.tags, WIDTH - INDENT.len(), INDENT, WIDTH));
            v
        };
        for (i, t) in lines.iter().enumerate() {
            match i {
                0 if t.is_empty() => third.push(':'),
                0 => third.push_str(&format!(": {t}")),
                _ => third.push_str(&format!("\n{INDENT}{t}")),
            }
        }
    }
    format!("{}\n{second}\n{third}\n{INDENT}{}\n", cut(&head, WIDTH), l.link)
}

/// A section: its title and count, its entries up to `room` lines (and
/// [`SECTION_LIMIT`] entries), then how many more and where they are.
fn section(out: &mut String, title: &str, lines: &[Line], more: &str, room: usize) {
    if lines.is_empty() {
        return;
    }
    out.push_str(&format!("{title} ({})\n\n", lines.len()));
    let mut used = 2;
    let mut shown = 0;
    for (i, l) in lines.iter().enumerate().take(SECTION_LIMIT) {
        let e = entry(l);
        let n = e.lines().count();
        let tail = usize::from(i + 1 < lines.len());
        if used + n + tail > room {
            break;
        }
        out.push_str(&e);
        used += n;
        shown += 1;
    }
    if lines.len() > shown {
        out.push_str(&more_line(&format!("       and {} more:", lines.len() - shown), more));
    }
    out.push('\n');
}

/// `lead more`, or `more` on a line of its own when both do not fit.
fn more_line(lead: &str, more: &str) -> String {
    if lead.chars().count() + 1 + more.chars().count() <= WIDTH {
        format!("{lead} {more}\n")
    } else {
        format!("{lead}\n       {more}\n")
    }
}

/// The line up top: the week's movement of perf regressions.
pub fn movement_line(m: &Movement) -> String {
    format!(
        "This week: {} new, {} fixed, {} reverted; {} still open, {} stale.",
        m.new, m.fixed, m.reverted, m.still_open, m.stale
    )
}

/// The digest as mail text: the movement line, the open regressions in
/// the attention order (fitting the first screen with it), what closed
/// and what went stale this week, older stale cases as a count and a
/// link, improvements, and dmesg and build reports by tree; each line at
/// most 78 columns.
pub fn render(m: &Model, bot: &str, links: &Links) -> String {
    let mut out = String::new();
    if m.is_empty() {
        out.push_str(&format!(
            "Nothing happened to tracked kernel test robot reports in {}\n({} to {}).\n",
            m.week.name,
            &rfc3339(m.week.start)[..10],
            &rfc3339(m.week.end - 1)[..10]
        ));
        return out;
    }
    out.push_str(&format!(
        "Kernel test robot reports tracked by {bot},\nweek {} ({} to {}).\n\n",
        m.week.name,
        &rfc3339(m.week.start)[..10],
        &rfc3339(m.week.end - 1)[..10]
    ));
    out.push_str(&format!("{}\n\n", movement_line(&m.movement)));
    let room = FIRST_SCREEN.saturating_sub(out.lines().count());
    section(&mut out, "Open regressions, most urgent first", &m.attention, &links.more, room);
    section(&mut out, "Closed this week", &m.closed, &links.more, usize::MAX);
    section(&mut out, "Went stale this week", &m.went_stale, &links.stale, usize::MAX);
    if m.stale_before > 0 {
        let n = m.stale_before;
        out.push_str(&format!(
            "{n} regression{} stale since before this week (no activity for {} days):\n  {}\n\n",
            if n == 1 { "" } else { "s" },
            m.stale_days,
            links.stale
        ));
    }
    if !m.improvements.is_empty() {
        out.push_str(&format!("Improvements this week ({})\n\n", m.improvements.len()));
        for l in m.improvements.iter().take(SECTION_LIMIT) {
            out.push_str(&format!("{}\n", cut(&format!("#{:<5} {}  {}", l.id, l.what, l.commit), WIDTH)));
        }
        if m.improvements.len() > SECTION_LIMIT {
            let lead = format!("       and {} more:", m.improvements.len() - SECTION_LIMIT);
            out.push_str(&more_line(&lead, &links.more));
        }
        out.push('\n');
    }
    if !m.by_tree.is_empty() || m.functional_open + m.build_open > 0 {
        out.push_str("dmesg and build reports\n\n");
        out.push_str(&format!("  open at the end of the week: {} dmesg, {} build\n", m.functional_open, m.build_open));
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "fix applied to X" names the tree of the last fix-applied or
    /// fix-merged event that has one.
    #[test]
    fn lifecycle_tags_name_the_tree() {
        let ev = |at: i64, kind: EventKind, tree: Option<&str>| {
            let mut e = Event::new(at, kind, None);
            e.tree = tree.map(str::to_string);
            e
        };
        let events = [
            ev(1, EventKind::FixApplied, Some("cgroup/for-6.11")),
            ev(2, EventKind::FixCommitted, None),
            ev(3, EventKind::FixApplied, Some("cgroup/for-6.12")),
        ];
        assert_eq!(state_tag(CaseState::FixApplied, &events).as_deref(), Some("fix applied to cgroup/for-6.12"));
        assert_eq!(state_tag(CaseState::FixApplied, &events[1..2]).as_deref(), Some("fix applied"));
        let merged = [ev(4, EventKind::FixMerged, Some("6.1-stable"))];
        assert_eq!(state_tag(CaseState::FixMerged, &merged).as_deref(), Some("fix merged into 6.1-stable"));
        let resolved = [ev(5, EventKind::Resolved, Some("torvalds/linux.git"))];
        assert_eq!(
            state_tag(CaseState::Resolved, &resolved).as_deref(),
            Some("resolved: merged into torvalds/linux.git")
        );
        assert_eq!(state_tag(CaseState::Reverted, &[]).as_deref(), Some("reverted"));
        assert_eq!(state_tag(CaseState::Superseded, &[]).as_deref(), Some("superseded"));
    }

    fn open_line(id: i64, tags: &[&str]) -> Line {
        Line {
            id,
            kind: "perf-regression".into(),
            what: format!("will-it-scale.per_thread_ops -{id}.5%"),
            change_pct: Some(-(id as f64) - 0.5),
            commit: "2b3c4d5e6f70".into(),
            commit_subject: Some("mm: page_alloc: batch the zone lock in free_pcppages_bulk".into()),
            tree: Some("linux-next/master".into()),
            opened_at: 0,
            age_days: 123,
            state: "fix-posted".into(),
            last_event: None,
            link: format!("https://lore.kernel.org/r/202605121402.b8b8b8{id:02}-lkp@intel.com"),
            note: None,
            significance: Some(Significance::Marginal),
            tags: tags.iter().map(|t| t.to_string()).collect(),
        }
    }

    /// However many open regressions and however long their tags, the
    /// movement line and the first section fit the first screen, and say
    /// how many more there are and where.
    #[test]
    fn the_first_section_fits_the_first_screen() {
        let week = Week::of_date("2026-05-13").unwrap_or_else(|| Week::containing(0));
        let mut m = model(&[], &week, 30, "https://lore.kernel.org/r/", None);
        let long = [
            "new",
            "fix posted",
            "waiting 12d",
            "retest: partly-recovered (marginal)",
            "retest: result unknown",
            "still present in mainline",
            "marginal",
        ];
        m.attention = (1..=30).map(|i| open_line(i, if i % 2 == 0 { &long } else { &["new"] })).collect();
        m.movement.still_open = 30;
        let links = Links::new(Some("https://lkpbot.example.org/dashboard/of/a/long/path/for/the/list/"));
        let text = render(&m, "lkpbot", &links);
        let lines: Vec<&str> = text.lines().collect();
        let title = lines.iter().position(|l| l.starts_with("Open regressions")).unwrap_or(0);
        let end = lines[title + 2..].iter().position(|l| l.is_empty()).map_or(lines.len(), |i| title + 2 + i);
        assert!(end <= FIRST_SCREEN, "the first section ends on line {end}:\n{text}");
        assert!(end >= FIRST_SCREEN - 5, "room is left unused: {end} lines:\n{text}");
        assert!(lines.iter().all(|l| l.chars().count() <= WIDTH), "{text}");
        assert!(text.contains(" more:\n       https://lkpbot.example.org/dashboard/"), "{text}");
        // Every tag is shown, wrapped on lines of their own.
        assert!(text.contains("123d old: new, fix posted, waiting 12d,\n"), "{text}");
        assert!(text.contains("\n       still present in mainline, marginal\n"), "{text}");
    }

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
