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

use crate::classify::json::rfc3339;
use crate::store::CaseRecord;
use crate::text::cut;
use crate::thread::{CaseKind, CaseState, EventKind, replay};

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

/// Which cases a subscriber wants. Empty: all.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Filter {
    pub tree: Option<String>,
    /// A subsystem tag of the report's subject (`mm` for `[mm]`).
    pub tag: Option<String>,
    pub testcase: Option<String>,
    /// At least this |change| (percent).
    pub min_change: Option<f64>,
    /// Only cases the subscriber is in (From/To/Cc of the report or a
    /// reply).
    pub mine: bool,
}

impl Filter {
    /// `tree:linus tag:mm testcase:stress-ng min:5 mine`, any of them.
    pub fn parse(text: &str) -> Result<Filter, String> {
        let mut f = Filter::default();
        for word in text.split_whitespace() {
            match word.split_once(':') {
                Some(("tree", v)) if !v.is_empty() => f.tree = Some(v.to_lowercase()),
                Some(("tag", v)) if !v.is_empty() => f.tag = Some(v.trim_matches(['[', ']']).to_lowercase()),
                Some(("testcase", v)) if !v.is_empty() => f.testcase = Some(v.to_string()),
                Some(("min", v)) => {
                    let n: f64 =
                        v.trim_end_matches('%').parse().map_err(|_| format!("\"{word}\": min needs a number"))?;
                    f.min_change = Some(n.abs());
                }
                None if word.eq_ignore_ascii_case("mine") => f.mine = true,
                None if word.eq_ignore_ascii_case("all") => {}
                _ => {
                    return Err(format!(
                        "\"{word}\" is not a filter (tree:NAME tag:NAME testcase:NAME min:PERCENT mine)"
                    ));
                }
            }
        }
        Ok(f)
    }

    /// The filter in the words [`Filter::parse`] reads; `all` when empty.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = &self.tree {
            parts.push(format!("tree:{t}"));
        }
        if let Some(t) = &self.tag {
            parts.push(format!("tag:{t}"));
        }
        if let Some(t) = &self.testcase {
            parts.push(format!("testcase:{t}"));
        }
        if let Some(m) = self.min_change {
            parts.push(format!("min:{m}"));
        }
        if self.mine {
            parts.push("mine".into());
        }
        if parts.is_empty() { "all".into() } else { parts.join(" ") }
    }

    fn matches(&self, c: &CaseRecord, who: &str) -> bool {
        let f = &c.view.facts;
        self.tree.as_ref().is_none_or(|t| f.tree.as_deref().is_some_and(|x| x.eq_ignore_ascii_case(t)))
            && self.tag.as_ref().is_none_or(|t| tags(&f.title).iter().any(|x| x == t))
            && self.testcase.as_ref().is_none_or(|t| f.testcase.as_deref() == Some(t.as_str()))
            && self.min_change.is_none_or(|m| f.change_pct.is_some_and(|p| p.abs() >= m))
            && (!self.mine || participants(c).iter().any(|p| p.eq_ignore_ascii_case(who)))
    }
}

/// The bracketed tags of a subject that are not a tree (`[linus:master]`)
/// nor a robot marker: `[mm]`, `[memcg]`.
pub fn tags(subject: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = subject;
    while let Some(i) = rest.find('[') {
        let Some(j) = rest[i..].find(']') else { break };
        let tag = rest[i + 1..i + j].trim().to_lowercase();
        rest = &rest[i + j + 1..];
        if !tag.is_empty() && !tag.contains(':') && !tag.contains(' ') && !matches!(tag.as_str(), "lkp" | "lkp-robot") {
            out.push(tag);
        }
    }
    out
}

/// Everyone a case's mail was from or to, as far as the store knows: the
/// report's addressees and the senders of its messages.
fn participants(c: &CaseRecord) -> Vec<String> {
    c.view.facts.report_to.iter().cloned().chain(c.messages.iter().filter_map(|m| m.from.clone())).collect()
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
        link: format!("{archive_url}{}", f.report_message_id.url_segment()),
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
    filter: Option<(&Filter, &str)>,
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
        // The case as it stood at the end of the week: its events then,
        // and the stale marks its activity up to then implies.
        let mut events: Vec<crate::thread::Event> =
            c.events.iter().filter(|e| e.at < week.end && e.kind != EventKind::Stale).cloned().collect();
        if stale_days > 0 {
            for t in crate::thread::stale_times(f.kind, &events, week.end, stale_days) {
                events.push(crate::thread::Event::new(t, EventKind::Stale, None));
            }
        }
        let (progress, _) = replay(f.kind, &events);
        let state = progress.state;
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
        for e in events.iter().filter(|e| in_week(e.at) && e.kind.is_retest_result()) {
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
            m.verdicts.push(v);
        }
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
    m.open.sort_by(|a, b| {
        let sev = |l: &Line| l.change_pct.map_or(0.0, f64::abs);
        sev(b).total_cmp(&sev(a)).then(a.opened_at.cmp(&b.opened_at)).then(a.id.cmp(&b.id))
    });
    m.waiting_retest.sort_by_key(|l| (l.last_event.as_ref().map_or(0, |e| e.1), l.id));
    for v in [&mut m.new, &mut m.verdicts, &mut m.fixes_posted, &mut m.resolved, &mut m.stale, &mut m.improvements] {
        v.sort_by_key(|l| l.id);
    }
    m.by_tree = trees.into_values().collect();
    m
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

    #[test]
    fn filters_read_and_say() {
        let f = Filter::parse("tree:Linus tag:[mm] testcase:stress-ng min:5% mine").unwrap();
        assert_eq!(f.describe(), "tree:linus tag:mm testcase:stress-ng min:5 mine");
        assert_eq!(Filter::parse("").unwrap().describe(), "all");
        assert!(Filter::parse("colour:blue").is_err());
        assert!(Filter::parse("min:lots").is_err());
    }

    #[test]
    fn subject_tags() {
        assert_eq!(tags("[linus:master] [mm]  01b9da291c: x 67.7% regression"), ["mm"]);
        assert_eq!(tags("[LKP] [memcg] [PATCH v2] x"), ["memcg"]);
    }
}
