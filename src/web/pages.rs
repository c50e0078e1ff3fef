//! The HTML pages: models filled from the store's records, rendered by
//! askama templates (`templates/web/`), which escape every value. The
//! chart's SVG is the one value inserted as is: `view::chart` escapes
//! what it draws.

use askama::Template;

use super::list::{Query, Sort, Window, encode};
use crate::case::CaseRecord;
use crate::case::significance::{self, Significance};
use crate::case::{CaseKind, CaseState, CaseView, Event, replay};
use crate::model::{MessageId, rfc3339};
use crate::view::{self, chart};

pub struct Opt {
    pub value: &'static str,
    pub selected: bool,
}

pub struct Count {
    pub state: &'static str,
    pub n: i64,
    pub href: String,
    pub current: bool,
}

pub struct CaseRow {
    pub id: i64,
    pub href: String,
    pub state: &'static str,
    pub age: String,
    pub opened: String,
    pub what: String,
    /// `bad` for a regression, `good` for an improvement.
    pub tone: &'static str,
    /// A perf case's `clear` or `marginal`; empty for the others.
    pub significance: &'static str,
    pub commit: String,
    pub tree: Option<String>,
    pub tree_href: String,
    pub testcase: Option<String>,
    pub testcase_href: String,
    pub title: String,
}

#[derive(Template)]
#[template(path = "web/index.html")]
pub struct Index {
    pub heading: String,
    pub counts: Vec<Count>,
    pub states: Vec<Opt>,
    pub kinds: Vec<Opt>,
    pub sorts: Vec<Opt>,
    pub tree: String,
    pub testcase: String,
    pub filtered: bool,
    pub sort_attention: String,
    pub sort_age: String,
    pub sort_severity: String,
    pub sort_activity: String,
    pub sort_oldest: String,
    pub api: String,
    pub rows: Vec<CaseRow>,
    /// How many cases the list holds (on all its pages).
    pub total: usize,
    pub page: usize,
    pub pages: usize,
    /// Links to the previous and next pages, when there are.
    pub prev: Option<String>,
    pub next: Option<String>,
}

fn tone(c: &CaseRecord) -> &'static str {
    match c.view.facts.kind {
        CaseKind::PerfImprovement => "good",
        CaseKind::PerfRegression | CaseKind::Functional => "bad",
        CaseKind::Build => "",
    }
}

/// The list of cases `q` selected (already in order), the page `q` asks
/// for; `counts` is how many cases each state holds.
pub fn index(q: &Query, all: &[&CaseRecord], counts: &[(CaseState, i64)], now: i64) -> Index {
    let (cases, pages) = crate::web::list::page(all, q.page);
    let rows = cases
        .iter()
        .map(|c| {
            let f = &c.view.facts;
            CaseRow {
                id: c.view.id.0,
                href: format!("/cases/{}", c.view.id.0),
                state: c.view.state.as_str(),
                age: view::age(now - f.opened_at),
                opened: rfc3339(f.opened_at),
                what: crate::text::cut(&view::what(c), 60),
                tone: tone(c),
                significance: significance::of_case(f).map_or("", Significance::as_str),
                commit: f.commit.as_deref().map_or("-".into(), |s| s.get(..12).unwrap_or(s).to_string()),
                tree_href: f
                    .tree
                    .as_deref()
                    .map_or(String::new(), |t| format!("/?state={}&tree={}", encode(&q.state), encode(t))),
                tree: f.tree.clone(),
                testcase_href: f
                    .testcase
                    .as_deref()
                    .map_or(String::new(), |t| format!("/?state={}&testcase={}", encode(&q.state), encode(t))),
                testcase: f.testcase.clone(),
                title: f.title.clone(),
            }
        })
        .collect();
    let heading = match q.state.as_str() {
        "open" => "Open cases".to_string(),
        "all" => "All cases".to_string(),
        s => format!("Cases: {s}"),
    };
    let mut states =
        vec![Opt { value: "open", selected: q.state == "open" }, Opt { value: "all", selected: q.state == "all" }];
    states.extend(CaseState::ALL.iter().map(|s| Opt { value: s.as_str(), selected: q.state == s.as_str() }));
    let kinds = [CaseKind::PerfRegression, CaseKind::PerfImprovement, CaseKind::Functional, CaseKind::Build]
        .into_iter()
        .map(|k| Opt { value: k.as_str(), selected: q.kind == Some(k) })
        .collect();
    let sorts = Sort::ALL.iter().map(|s| Opt { value: s.as_str(), selected: q.sort == *s }).collect();
    let counts = counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| Count {
            state: s.as_str(),
            n: *n,
            href: format!("/?state={}", s.as_str()),
            current: q.state == s.as_str(),
        })
        .collect();
    let api = match q.state.as_str() {
        "open" => "/api/cases".to_string(),
        s => format!("/api/cases?state={}", encode(s)),
    };
    Index {
        heading,
        counts,
        states,
        kinds,
        sorts,
        tree: q.tree.clone().unwrap_or_default(),
        testcase: q.testcase.clone().unwrap_or_default(),
        filtered: q.kind.is_some() || q.tree.is_some() || q.testcase.is_some(),
        sort_attention: q.with_sort(Sort::Attention),
        sort_age: q.with_sort(Sort::Age),
        sort_severity: q.with_sort(Sort::Severity),
        sort_activity: q.with_sort(Sort::Activity),
        sort_oldest: q.with_sort(Sort::Oldest),
        api,
        rows,
        total: all.len(),
        page: q.page,
        pages,
        prev: (q.page > 1).then(|| q.with_page(q.page.min(pages + 1) - 1)),
        next: (q.page < pages).then(|| q.with_page(q.page + 1)),
    }
}

pub struct Fact {
    pub label: &'static str,
    pub value: String,
    pub href: Option<String>,
    /// A value to copy (SHA, Message-ID): monospace, selected whole.
    pub code: bool,
    pub note: Option<String>,
}

impl Fact {
    fn text(label: &'static str, value: impl Into<String>) -> Fact {
        Fact { label, value: value.into(), href: None, code: false, note: None }
    }

    fn code(label: &'static str, value: impl Into<String>) -> Fact {
        Fact { code: true, ..Fact::text(label, value) }
    }
}

pub struct PointRow {
    pub label: String,
    pub href: Option<String>,
    pub commit: String,
    pub value: String,
    pub stddev: String,
    /// The base it is compared with, and the change from it.
    pub against: String,
    pub change: String,
    pub verdict: String,
    pub subject: String,
}

pub struct Step {
    /// `YYYY-MM-DD` and `HH:MM` (UTC).
    pub day: String,
    pub time: String,
    pub kind: &'static str,
    pub state: &'static str,
    pub note: Option<String>,
    pub href: Option<String>,
    pub subject: String,
    pub from: String,
    /// How the sender was authenticated (`dkim:<domain>`, `arc:<sealer>`,
    /// `none`), and what was found.
    pub auth: String,
    pub auth_reason: String,
    pub message_id: String,
    /// Events of the timeline left out before this one.
    pub gap_before: Option<Gap>,
}

/// A run of timeline events a page leaves out, and where they are.
pub struct Gap {
    pub hidden: usize,
    pub href: String,
}

pub struct Related {
    pub id: i64,
    pub href: String,
    pub relation: &'static str,
    /// The related case's state and title, when it is among `others`.
    pub state: Option<&'static str>,
    pub title: Option<String>,
}

#[derive(Template)]
#[template(path = "web/case.html")]
pub struct Case {
    pub id: i64,
    pub title: String,
    pub state: &'static str,
    pub kind: &'static str,
    pub json_href: String,
    pub facts: Vec<Fact>,
    pub chart_svg: Option<String>,
    /// Why a chart shows changes rather than values.
    pub chart_note: Option<&'static str>,
    pub points: Vec<PointRow>,
    pub steps: Vec<Step>,
    /// Events after the last one shown, when left out.
    pub more: Option<Gap>,
    /// How many events the timeline holds, and the default view's link
    /// when this page shows another part of it.
    pub events: usize,
    pub latest: Option<String>,
    pub related: Vec<Related>,
}

/// `YYYY-MM-DD HH:MM`.
fn when(ts: i64) -> String {
    let s = rfc3339(ts);
    format!("{} {}", s.get(..10).unwrap_or(&s), s.get(11..16).unwrap_or(""))
}

fn facts(c: &CaseRecord, now: i64, archive: &str) -> Vec<Fact> {
    let f = &c.view.facts;
    let link = |id: &crate::model::MessageId| id.link(archive);
    let mut out =
        vec![Fact { href: Some(link(&f.report_message_id)), ..Fact::code("report", f.report_message_id.as_str()) }];
    if let Some(sha) = &f.commit {
        out.push(Fact { note: f.commit_subject.clone(), ..Fact::code("commit", sha.clone()) });
    }
    let place = [f.tree.as_deref(), f.branch.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" ");
    if !place.is_empty() {
        out.push(Fact::text("tree", place));
    }
    if let Some(t) = &f.testcase {
        out.push(Fact::text("testcase", t.clone()));
    }
    let report = c.report_facts.as_ref();
    if let Some(m) = report.and_then(|r| r["test_machine"].as_str()) {
        out.push(Fact::text("test machine", m));
    }
    if let Some(s) = view::still_on_text(c) {
        out.push(Fact::text("still seen", s));
    }
    match (&f.metric, f.change_pct) {
        (Some(m), Some(p)) => out.push(Fact {
            note: significance::of_case(f).map(|s| format!("{}: {}", s.as_str(), noise(f))),
            ..Fact::text("metric", format!("{m} {p:+}%"))
        }),
        (Some(m), None) => out.push(Fact::text("metric", m.clone())),
        _ => {}
    }
    if let Some(s) = &f.signature {
        out.push(Fact::code(if f.kind == CaseKind::Build { "diagnostic" } else { "issue" }, s.clone()));
    }
    out.push(Fact::text("opened", format!("{} UTC ({} ago)", when(f.opened_at), view::age(now - f.opened_at))));
    out.push(Fact::text("last activity", format!("{} UTC", when(c.updated_at))));
    if let Some(v) = c.verdict {
        let note = significance::of_case_verdict(c).map(|s| s.as_str().to_string());
        out.push(Fact { note, ..Fact::text("verdict", v.as_str()) });
    }
    if let Some(x) = &c.fix_commit {
        out.push(Fact::code("fix commit", x.clone()));
    }
    if let Some(m) = &c.fix_message_id {
        out.push(Fact { href: Some(link(m)), ..Fact::code("fix", m.as_str()) });
    }
    out
}

/// The noise a perf case's significance is judged against, in words.
fn noise(f: &crate::case::CaseFacts) -> String {
    let sd = |s: Option<f64>| s.map_or("under 2% (not printed)".to_string(), |s| format!("{}%", chart::number(s)));
    format!(
        "|change| against 3x the larger %stddev of base ({}) and new ({})",
        sd(f.base_stddev_pct),
        sd(f.new_stddev_pct)
    )
}

fn points(c: &CaseRecord, ch: &chart::Chart, archive: &str) -> Vec<PointRow> {
    let mut fixes = 0;
    ch.points
        .iter()
        .map(|p| {
            let label = match p.role {
                chart::Role::Fix => {
                    fixes += 1;
                    format!("fix {fixes}")
                }
                r => r.as_str().to_string(),
            };
            PointRow {
                label,
                href: p.message_id.as_ref().map(|m| m.link(archive)),
                commit: p.commit.clone().unwrap_or_else(|| "-".into()),
                value: ch.show(p.value),
                stddev: p.stddev_pct.map_or(String::new(), |s| format!("±{}%", chart::number(s))),
                against: match p.role {
                    chart::Role::Base => String::new(),
                    _ => p.against.map_or(String::new(), |b| ch.show(b)),
                },
                change: p.change_pct().map_or(String::new(), |d| format!("{d:+.1}%")),
                verdict: match (&p.verdict, &p.message_id, &p.commit) {
                    (Some(v), Some(m), Some(x)) => match significance::of_column(&c.retests, m, x, &ch.metric) {
                        Some(s) => format!("{v} ({})", s.as_str()),
                        None => v.clone(),
                    },
                    (v, _, _) => v.clone().unwrap_or_default(),
                },
                subject: p.subject.clone().unwrap_or_default(),
            }
        })
        .collect()
}

/// `c`'s timeline in time order with the state after each event, and
/// which of its events (positions) `window` shows.
fn timeline<'c>(c: &'c CaseRecord, window: &Window) -> (Vec<(&'c Event, CaseState)>, Vec<usize>) {
    let (_, replayed) = replay(c.view.facts.kind, &c.events);
    let moved: Vec<bool> = replayed.iter().enumerate().map(|(i, (_, s))| i == 0 || replayed[i - 1].1 != *s).collect();
    let shown = window.shown(&moved);
    (replayed, shown)
}

/// The messages of the events `window` shows of `c`'s timeline: all a
/// case page needs of the case's messages ([`case`]).
pub fn shown_messages(c: &CaseRecord, window: &Window) -> Vec<MessageId> {
    let (replayed, shown) = timeline(c, window);
    shown.iter().filter_map(|&i| replayed[i].0.message_id.clone()).collect()
}

/// One case's page; `others` holds its related cases, by id; `window`
/// the part of its timeline shown.
pub fn case(c: &CaseRecord, others: &[CaseView], now: i64, archive: &str, window: &Window) -> Case {
    let f = &c.view.facts;
    let ch = chart::chart(c);
    let (replayed, shown) = timeline(c, window);
    let by_id = c.messages_by_id();
    // A run left out links to its start; the run before a part of the
    // timeline to the part just before it.
    let gap = |from: usize, to: usize| {
        let start = if window.after.is_some() && from == 0 { to.saturating_sub(window.limit) } else { from };
        Gap { hidden: to - from, href: window.href(c.view.id.0, Some(start)) }
    };
    let mut next = 0;
    let mut steps = Vec::with_capacity(shown.len());
    for &i in &shown {
        let (e, state) = &replayed[i];
        let m = e.message_id.as_ref().and_then(|id| by_id.get(id));
        let note = match (e.verdict, &e.fix_commit, &e.note) {
            (Some(v), Some(x), _) => Some(format!("{} ({x})", v.as_str())),
            (Some(v), None, _) => Some(v.as_str().to_string()),
            (None, _, Some(n)) => Some(crate::text::cut(n, 120)),
            _ => None,
        };
        let at = when(e.at);
        let (day, time) = at.split_once(' ').unwrap_or((&at, ""));
        steps.push(Step {
            day: day.to_string(),
            time: time.to_string(),
            kind: e.kind.as_str(),
            state: state.as_str(),
            note,
            href: e.message_id.as_ref().map(|id| id.link(archive)),
            // A tree event has no message: where it happened instead.
            subject: match (m, &e.message_id) {
                (Some(m), _) => m.subject.clone(),
                (None, Some(_)) => "(message)".into(),
                (None, None) => crate::view::lifecycle_place(e).unwrap_or_default(),
            },
            from: m.and_then(|m| m.from.clone()).unwrap_or_default(),
            auth: m.map_or_else(String::new, |m| m.auth.label()),
            auth_reason: m.map_or_else(String::new, |m| m.auth.reason.clone()),
            message_id: e.message_id.as_ref().map_or(String::new(), |id| id.as_str().to_string()),
            gap_before: (i > next).then(|| gap(next, i)),
        });
        next = i + 1;
    }
    Case {
        id: c.view.id.0,
        title: f.title.clone(),
        state: c.view.state.as_str(),
        kind: f.kind.as_str(),
        json_href: format!("/api/cases/{}", c.view.id.0),
        facts: facts(c, now, archive),
        points: ch.as_ref().map(|ch| points(c, ch, archive)).unwrap_or_default(),
        chart_svg: ch.as_ref().map(chart::svg),
        chart_note: ch.as_ref().filter(|c| c.relative).map(|_| {
            "Some retests ran against a base of their own (another machine or parameters), \
             so each commit is drawn as its change from the base it was measured with."
        }),
        steps,
        more: (next < replayed.len()).then(|| gap(next, replayed.len())),
        events: replayed.len(),
        latest: window.after.map(|_| window.href(c.view.id.0, None)),
        related: c
            .related
            .iter()
            .map(|(id, r)| {
                let other = others.binary_search_by_key(id, |o| o.id).ok().map(|i| &others[i]);
                Related {
                    id: id.0,
                    href: format!("/cases/{}", id.0),
                    relation: r.as_str(),
                    state: other.map(|o| o.state.as_str()),
                    title: other.map(|o| o.facts.title.clone()),
                }
            })
            .collect(),
    }
}

#[derive(Template)]
#[template(path = "web/error.html")]
pub struct Error {
    pub status: String,
    pub message: String,
}
