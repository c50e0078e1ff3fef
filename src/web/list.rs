//! What the list of cases shows: the query parameters it takes (checked,
//! so a typo is a 400 rather than an unfiltered list), which cases they
//! select and in what order. Pure: the time ages count from is `now`.

use serde::Deserialize;

use crate::case::CaseKind;
use crate::case::{CaseFilter, CaseRecord};

/// The query string of `/` and `/api/cases`, as sent.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub state: Option<String>,
    pub kind: Option<String>,
    pub tree: Option<String>,
    pub testcase: Option<String>,
    pub sort: Option<String>,
    /// `/`: which page of [`PAGE_CASES`] cases (from 1).
    pub page: Option<String>,
    /// `/api/cases`: at most this many cases (opt-in paging) ...
    pub limit: Option<String>,
    /// ... those after the case with this id in the list's order.
    pub after: Option<String>,
}

/// The query string of `/cases/{id}`: which part of its timeline.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseParams {
    /// At most this many events (default [`TIMELINE_EVENTS`]) ...
    pub limit: Option<String>,
    /// ... those after the first `after` events of the timeline; without
    /// it, the case's first event, every event that moved its state and
    /// the latest events.
    pub after: Option<String>,
}

/// Events of a case page's timeline by default: a case may hold
/// thousands, its page shows what a reader needs first.
pub const TIMELINE_EVENTS: usize = 100;

/// The checked [`CaseParams`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub limit: usize,
    pub after: Option<usize>,
}

impl Window {
    pub fn parse(p: CaseParams) -> Result<Window, String> {
        let limit = match given(p.limit) {
            None => TIMELINE_EVENTS,
            Some(v) => match v.parse::<usize>() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
                _ => return Err(format!("limit must be 1 to {MAX_LIMIT}, not {v:?}")),
            },
        };
        let after = given(p.after)
            .map(|v| v.parse::<usize>().map_err(|_| format!("after is a number of events, not {v:?}")))
            .transpose()?;
        Ok(Window { limit, after })
    }

    /// The query string of this window's `limit` (none when the
    /// default) with `after`, for the timeline's links.
    pub fn href(&self, id: i64, after: Option<usize>) -> String {
        let mut parts = Vec::new();
        if let Some(a) = after {
            parts.push(format!("after={a}"));
        }
        if self.limit != TIMELINE_EVENTS {
            parts.push(format!("limit={}", self.limit));
        }
        if parts.is_empty() { format!("/cases/{id}") } else { format!("/cases/{id}?{}", parts.join("&")) }
    }

    /// Which of a timeline's events (positions from 0) this window shows,
    /// in order; `moved` says, per event, whether it changed the state.
    pub fn shown(&self, moved: &[bool]) -> Vec<usize> {
        let total = moved.len();
        if let Some(after) = self.after {
            return (after.min(total)..after.saturating_add(self.limit).min(total)).collect();
        }
        let latest = total.saturating_sub(self.limit);
        let mut out: Vec<usize> = Vec::with_capacity(self.limit.min(total) * 2 + 1);
        out.extend((total > 0).then_some(0));
        // The state's evidence before the latest events, its latest
        // `limit` changes at most.
        let changes: Vec<usize> = (1..latest).filter(|&i| moved[i]).collect();
        out.extend(changes.iter().skip(changes.len().saturating_sub(self.limit)));
        out.extend(latest.max(1)..total);
        out
    }
}

/// Cases on one page of the HTML list.
pub const PAGE_CASES: usize = 200;
/// The most `limit` may ask of `/api/cases`.
pub const MAX_LIMIT: usize = 10_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sort {
    /// What needs someone first (`case::attention`): the default of `/`.
    Attention,
    /// Newest report first.
    Age,
    /// Oldest report first: what has waited longest.
    Oldest,
    /// Latest activity first.
    Activity,
    /// Crashes and warnings, then regressions by the size of the change,
    /// then build failures, then improvements.
    Severity,
    Id,
}

impl Sort {
    pub const ALL: [Sort; 6] = [Sort::Attention, Sort::Age, Sort::Oldest, Sort::Activity, Sort::Severity, Sort::Id];

    pub fn as_str(self) -> &'static str {
        match self {
            Sort::Attention => "attention",
            Sort::Age => "age",
            Sort::Oldest => "oldest",
            Sort::Activity => "activity",
            Sort::Severity => "severity",
            Sort::Id => "id",
        }
    }
}

/// The checked parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    /// As given (`open` when not), for links and the form.
    pub state: String,
    pub filter: CaseFilter,
    pub kind: Option<CaseKind>,
    pub tree: Option<String>,
    pub testcase: Option<String>,
    pub sort: Sort,
    /// The page of the HTML list, from 1.
    pub page: usize,
    /// Paging of `/api/cases`: at most `limit` cases after the case `after`.
    pub limit: Option<usize>,
    pub after: Option<i64>,
}

/// An empty field of a submitted form is no filter.
fn given(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

impl Query {
    pub fn parse(p: Params) -> Result<Query, String> {
        let state = given(p.state).unwrap_or_else(|| "open".into());
        let filter = CaseFilter::parse(&state)?;
        let kind = match given(p.kind) {
            None => None,
            Some(k) => Some(CaseKind::parse(&k).ok_or_else(|| {
                format!("unknown kind {k:?}: use perf-regression, perf-improvement, functional or build")
            })?),
        };
        let sort = match given(p.sort) {
            None => Sort::Attention,
            Some(s) => Sort::ALL.into_iter().find(|x| x.as_str() == s).ok_or_else(|| {
                let names: Vec<&str> = Sort::ALL.iter().map(|s| s.as_str()).collect();
                format!("unknown sort {s:?}: use one of {}", names.join(", "))
            })?,
        };
        let number = |name: &str, v: Option<String>| -> Result<Option<u64>, String> {
            given(v).map(|v| v.parse::<u64>().map_err(|_| format!("{name} is a number, not {v:?}"))).transpose()
        };
        let page = match number("page", p.page)? {
            None => 1,
            Some(0) => return Err("pages count from 1".into()),
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
        };
        let limit = match number("limit", p.limit)? {
            None => None,
            Some(n) if n == 0 || n > MAX_LIMIT as u64 => {
                return Err(format!("limit must be 1 to {MAX_LIMIT}"));
            }
            Some(n) => Some(usize::try_from(n).unwrap_or(MAX_LIMIT)),
        };
        let after = number("after", p.after)?.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
        Ok(Query { state, filter, kind, tree: given(p.tree), testcase: given(p.testcase), sort, page, limit, after })
    }

    /// The query string of these parameters on page `page` (for the
    /// list's page links).
    pub fn with_page(&self, page: usize) -> String {
        let base = self.with_sort(self.sort);
        if page <= 1 {
            return base;
        }
        let sep = if base.contains('?') { '&' } else { '?' };
        format!("{base}{sep}page={page}")
    }

    /// Whether a case passes the state, kind, tree and testcase filters.
    pub fn selects(&self, c: &CaseRecord) -> bool {
        let f = &c.view.facts;
        let same = |want: &Option<String>, have: &Option<String>| {
            want.as_ref().is_none_or(|w| have.as_ref().is_some_and(|h| h.eq_ignore_ascii_case(w)))
        };
        self.filter.selects(c.view.state)
            && self.kind.is_none_or(|k| k == f.kind)
            && same(&self.tree, &f.tree)
            && same(&self.testcase, &f.testcase)
    }

    /// The query string of these parameters with `sort` replaced (for
    /// the column headers' links); defaults are left out.
    pub fn with_sort(&self, sort: Sort) -> String {
        let mut parts = Vec::new();
        if self.state != "open" {
            parts.push(format!("state={}", encode(&self.state)));
        }
        if let Some(k) = self.kind {
            parts.push(format!("kind={}", k.as_str()));
        }
        if let Some(t) = &self.tree {
            parts.push(format!("tree={}", encode(t)));
        }
        if let Some(t) = &self.testcase {
            parts.push(format!("testcase={}", encode(t)));
        }
        if sort != Sort::Attention {
            parts.push(format!("sort={}", sort.as_str()));
        }
        if parts.is_empty() { "/".into() } else { format!("/?{}", parts.join("&")) }
    }
}

/// Percent-encoding for a query value.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// One page of the HTML list: the cases of page `page` (from 1) and how
/// many pages there are (at least one).
pub fn page<'a, 'c>(cases: &'a [&'c CaseRecord], page: usize) -> (&'a [&'c CaseRecord], usize) {
    let pages = cases.len().div_ceil(PAGE_CASES).max(1);
    let start = page.saturating_sub(1).saturating_mul(PAGE_CASES).min(cases.len());
    let end = start.saturating_add(PAGE_CASES).min(cases.len());
    (&cases[start..end], pages)
}

/// `/api/cases` paging: the cases after the one with id `after` (in the
/// list's order; by id, any case with a larger id), at most `limit`; and
/// whether more follow.
pub fn slice(
    cases: Vec<&CaseRecord>,
    after: Option<i64>,
    limit: Option<usize>,
    by_id: bool,
) -> Result<(Vec<&CaseRecord>, bool), String> {
    let start = match after {
        None => 0,
        // By id the cursor need not be in the list (its case may have
        // changed state since): the next larger id is where to go on.
        Some(a) if by_id => cases.partition_point(|c| c.view.id.0 <= a),
        Some(a) => cases.iter().position(|c| c.view.id.0 == a).map(|i| i + 1).ok_or_else(|| {
            format!("after={a} names no case of this list (page by id, the default order, to go on from any case)")
        })?,
    };
    let end = limit.map_or(cases.len(), |l| start.saturating_add(l).min(cases.len()));
    let more = end < cases.len();
    Ok((cases[start..end].to_vec(), more))
}

/// Larger is more severe: (rank of the kind, size of the change).
fn severity(c: &CaseRecord) -> (u8, f64) {
    let f = &c.view.facts;
    let rank = match f.kind {
        CaseKind::Functional => 3,
        CaseKind::PerfRegression => 2,
        CaseKind::Build => 1,
        CaseKind::PerfImprovement => 0,
    };
    (rank, f.change_pct.map_or(0.0, f64::abs))
}

/// The cases `q` selects, in its order (ties by newest, then id); the
/// attention order as it stands at `now`.
pub fn select<'c>(cases: impl IntoIterator<Item = &'c CaseRecord>, q: &Query, now: i64) -> Vec<&'c CaseRecord> {
    let mut cases: Vec<&CaseRecord> = cases.into_iter().filter(|c| q.selects(c)).collect();
    let opened = |c: &&CaseRecord| c.view.facts.opened_at;
    let id = |c: &&CaseRecord| c.view.id.0;
    match q.sort {
        Sort::Attention => crate::case::attention::sort(&mut cases, now),
        Sort::Age => cases.sort_by_key(|c| (std::cmp::Reverse(opened(c)), id(c))),
        Sort::Oldest => cases.sort_by_key(|c| (opened(c), id(c))),
        Sort::Activity => cases.sort_by_key(|c| (std::cmp::Reverse(c.updated_at), id(c))),
        Sort::Id => cases.sort_by_key(id),
        Sort::Severity => cases.sort_by(|a, b| {
            let (ra, ma) = severity(a);
            let (rb, mb) = severity(b);
            rb.cmp(&ra).then(mb.total_cmp(&ma)).then(opened(b).cmp(&opened(a))).then(id(a).cmp(&id(b)))
        }),
    }
    cases
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::{CaseFacts, CaseId, CaseState, CaseView};
    use crate::model::MessageId;

    fn case(id: i64, kind: CaseKind, change: Option<f64>, opened: i64, tree: &str) -> CaseRecord {
        let facts = CaseFacts {
            tree: Some(tree.into()),
            testcase: Some("will-it-scale".into()),
            change_pct: change,
            ..CaseFacts::new(kind, format!("case {id}"), MessageId::new(&format!("{id}@x")).unwrap(), opened)
        };
        CaseRecord::bare(CaseView { id: CaseId(id), state: CaseState::Reported, facts }, opened)
    }

    fn params(pairs: &[(&str, &str)]) -> Params {
        let mut p = Params::default();
        for (k, v) in pairs {
            let v = Some(v.to_string());
            match *k {
                "state" => p.state = v,
                "kind" => p.kind = v,
                "tree" => p.tree = v,
                "testcase" => p.testcase = v,
                "sort" => p.sort = v,
                "page" => p.page = v,
                "limit" => p.limit = v,
                "after" => p.after = v,
                _ => unreachable!(),
            }
        }
        p
    }

    fn ids(cases: &[&CaseRecord]) -> Vec<i64> {
        cases.iter().map(|c| c.view.id.0).collect()
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = Query::parse(params(&[("state", "opne")])).unwrap_err();
        assert!(e.contains("\"opne\"") && e.contains("retest-requested"), "{e}");
        let e = Query::parse(params(&[("kind", "perf")])).unwrap_err();
        assert!(e.contains("perf-regression"), "{e}");
        let e = Query::parse(params(&[("sort", "size")])).unwrap_err();
        assert!(e.contains("severity"), "{e}");
    }

    #[test]
    fn empty_fields_are_no_filter() {
        let q = Query::parse(params(&[("state", ""), ("tree", " "), ("sort", "")])).unwrap();
        assert_eq!(q.filter, CaseFilter::Open);
        assert_eq!(q.tree, None);
        assert_eq!(q.sort, Sort::Attention);
        assert_eq!(q.with_sort(Sort::Attention), "/");
    }

    #[test]
    fn filters_and_orders() {
        let cases = vec![
            case(1, CaseKind::PerfRegression, Some(-5.0), 100, "linus"),
            case(2, CaseKind::PerfRegression, Some(-60.0), 50, "linux-next"),
            case(3, CaseKind::Functional, None, 10, "linus"),
            case(4, CaseKind::PerfImprovement, Some(300.0), 200, "linus"),
            case(5, CaseKind::Build, None, 150, "linus"),
        ];
        let q = |p: &[(&str, &str)]| Query::parse(params(p)).unwrap();
        assert_eq!(ids(&select(&cases, &q(&[("sort", "age")]), 0)), [4, 5, 1, 2, 3]);
        // The default: all are reported (open), so by significance and
        // |change|: the changes, then the crash and the build failure
        // (oldest first), then 1, whose -5% is marginal.
        assert_eq!(ids(&select(&cases, &q(&[]), 0)), [4, 2, 3, 5, 1]);
        assert_eq!(ids(&select(&cases, &q(&[("sort", "oldest")]), 0)), [3, 2, 1, 5, 4]);
        assert_eq!(ids(&select(&cases, &q(&[("sort", "severity")]), 0)), [3, 2, 1, 5, 4]);
        assert_eq!(ids(&select(&cases, &q(&[("tree", "LINUS"), ("sort", "id")]), 0)), [1, 3, 4, 5]);
        assert_eq!(ids(&select(&cases, &q(&[("kind", "perf-regression"), ("sort", "age")]), 0)), [1, 2]);
        assert_eq!(ids(&select(&cases, &q(&[("testcase", "fio")]), 0)), Vec::<i64>::new());
    }

    #[test]
    fn sort_links_keep_the_filters() {
        let q = Query::parse(params(&[("state", "all"), ("tree", "linux next&x"), ("kind", "build")])).unwrap();
        assert_eq!(q.with_sort(Sort::Severity), "/?state=all&kind=build&tree=linux%20next%26x&sort=severity");
    }

    #[test]
    fn a_timeline_window_shows_the_first_the_changes_and_the_latest() {
        let w = |after: Option<usize>, limit| Window { limit, after };
        assert_eq!(w(None, 3).shown(&[]), Vec::<usize>::new());
        assert_eq!(w(None, 3).shown(&[true]), vec![0]);
        assert_eq!(w(None, 3).shown(&[true, false, false]), vec![0, 1, 2]);
        let moved = [true, true, false, false, true, false, false, false, false, false];
        assert_eq!(w(None, 3).shown(&moved), vec![0, 1, 4, 7, 8, 9]);
        // At most `limit` of the state's changes, the latest.
        assert_eq!(w(None, 1).shown(&moved), vec![0, 4, 9]);
        assert_eq!(w(Some(2), 3).shown(&moved), vec![2, 3, 4]);
        assert_eq!(w(Some(8), 3).shown(&moved), vec![8, 9]);
        assert_eq!(w(Some(10), 3).shown(&moved), Vec::<usize>::new());
        assert_eq!(w(Some(usize::MAX), 3).shown(&moved), Vec::<usize>::new());
        assert!(Window::parse(CaseParams { limit: Some("0".into()), after: None }).is_err());
        assert!(Window::parse(CaseParams { limit: None, after: Some("-1".into()) }).is_err());
        assert_eq!(w(Some(5), 3).href(7, Some(2)), "/cases/7?after=2&limit=3");
        assert_eq!(w(None, TIMELINE_EVENTS).href(7, None), "/cases/7");
    }

    #[test]
    fn pages_and_slices() {
        let all: Vec<CaseRecord> = (1..=450).map(|i| case(i, CaseKind::Build, None, i, "linus")).collect();
        let refs: Vec<&CaseRecord> = all.iter().collect();
        let (p1, pages) = page(&refs, 1);
        assert_eq!((p1.len(), pages, p1[0].view.id.0), (PAGE_CASES, 3, 1));
        let (p3, _) = page(&refs, 3);
        assert_eq!((p3.len(), p3[0].view.id.0), (50, 401));
        assert!(page(&refs, 9).0.is_empty());
        assert_eq!(page(&[], 1).1, 1);
        let (s, more) = slice(refs.clone(), None, Some(100), true).unwrap();
        assert_eq!((s.len(), s[99].view.id.0, more), (100, 100, true));
        let (s, more) = slice(refs.clone(), Some(400), Some(100), true).unwrap();
        assert_eq!((s.len(), s[0].view.id.0, more), (50, 401, false));
        // By id, a cursor that is no longer listed still goes on.
        let odd: Vec<&CaseRecord> = refs.iter().copied().filter(|c| c.view.id.0 % 2 == 1).collect();
        assert_eq!(slice(odd.clone(), Some(10), Some(1), true).unwrap().0[0].view.id.0, 11);
        assert!(slice(odd, Some(10), Some(1), false).is_err());
        let (s, more) = slice(refs, None, None, true).unwrap();
        assert_eq!((s.len(), more), (450, false));
        assert!(Query::parse(params(&[("page", "0")])).is_err());
        assert!(Query::parse(params(&[("limit", "0")])).is_err());
        assert!(Query::parse(params(&[("limit", "x")])).is_err());
        assert_eq!(
            Query::parse(params(&[("limit", "5"), ("after", "7")])).map(|q| (q.limit, q.after)),
            Ok((Some(5), Some(7)))
        );
        let q = Query::parse(params(&[("sort", "severity")])).unwrap();
        assert_eq!(q.with_page(2), "/?sort=severity&page=2");
        assert_eq!(Query::parse(params(&[])).unwrap().with_page(3), "/?page=3");
    }
}
