//! Retest results: an LKP reply whose own table has a fix column.
//!
//! ```text
//! commit:
//!   8285917d6f ("mm: memcontrol: prepare for reparenting non-hierarchical stats")   <- base
//!   01b9da291c ("mm: memcontrol: convert objcg to be per-memcg per-node type")       <- bad
//!   682fd4e9ff  <--- above patch from Shakeel                                        <- fix
//! ```
//!
//! The verdict comes from the numbers: recovered share = (fix - bad) /
//! (base - bad) of the headline metric; >= 0.9 recovered, 0.3 to 0.9
//! partly, below 0.3 not; a fix within the base's %stddev also counts as
//! recovered. The prose ("it recovers the regression", "still exists") is
//! read too, and a disagreement is flagged, never trusted over the numbers.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

use super::num::Num;
use super::table::{ChangeUnit, Table};
use crate::model::{CommitSha, Verdict};

pub const RECOVERED_SHARE: f64 = 0.9;
pub const PARTLY_SHARE: f64 = 0.3;

/// One column of a retest table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Column {
    /// Full SHA when the mail gives one.
    pub sha: Option<CommitSha>,
    /// The id as printed (abbreviated SHA or tag).
    pub short: String,
    pub subject: Option<String>,
    /// The note after the id: `(fixup)`, `<--- above patch from Shakeel`.
    pub note: Option<String>,
    pub value: Option<Num>,
    pub stddev_pct: Option<Num>,
    /// Change from the base column, in percent.
    pub change_pct: Option<Num>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MetricSource {
    /// The headline metric of the report.
    Headline,
    /// A metric the reply's prose names.
    Prose,
    /// The table lacks both: its first row (of the report's testcase).
    FirstRow,
}

/// What the column values are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Values {
    /// The metric as measured.
    Metric,
    /// Failures per run, from a `fail:runs` row.
    FailRate,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Retest {
    pub fix: Column,
    pub base: Column,
    pub bad: Column,
    pub metric: String,
    pub metric_source: MetricSource,
    pub values: Values,
    pub fix_change_pct: Option<Num>,
    pub recovered_share: Option<Num>,
    pub verdict: Option<Verdict>,
    /// What the prose says, when it says anything.
    pub prose_verdict: Option<Verdict>,
    pub prose_disagrees: bool,
}

static RECOVERED: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)(\b(?:issue|problem|regression|failure|warning)s?\b[^.]{0,40}?\bgone\b|",
        r"\bconfirm(?:ed)?\b[^.]{0,60}?\b(?:gone|fixed|pass(?:es|ed)?)\b|\bpass(?:es|ed)?\s+now\b|",
        r"\bdisappear(?:s|ed)?\b|recovers?\s+(?:the|this)\s+regression|regression\s+(?:is|was)\s+(?:gone|fixed|recovered)|",
        r"(?:issue|problem|regression)\s+(?:is|was)\s+(?:gone|fixed|resolved)|fully\s+recover|",
        r"can\s+fix\s+the\s+(?:issue|regression|problem)|(?:fixed|fixes)\s+the\s+(?:issue|regression|problem)|",
        r"shows\s+no\s+regression|no\s+regression\s+after|performance\s+is\s+(?:back|restored)|",
        r"(?:performance|regression)\s+(?:is|was|has\s+been)\s+(?:\w+\s+)?(?:recovered|restored)|recovers?\s+the\s+performance|",
        r"meets?\s+(?:your|the)\s+expectation|works?\s+well)"
    ))
    .expect("static regex")
});
static PARTLY: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(
        r"(?i)(partial(?:ly)?\s+(?:recover|fix|improve)|partly\s+(?:recover|fix)|recovers?\s+(?:part|some|half))",
    )
    .expect("static regex")
});
static NOT_RECOVERED: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)(still\s+exists?|still\s+has\s+[-+]?\d|(?:did\s*n[o']t|does\s*n[o']t|cannot|can't|could\s*n[o']t|can\s+not)\s+",
        r"(?:fix|recover|help|resolve)|still\s+(?:can\s+)?reproduce|not\s+(?:fixed|recovered)|no\s+improvement|",
        r"regression\s+(?:increased|became\s+worse|got\s+worse|is\s+still\s+there)|",
        r"(?:has|have|had)\s+(?:\w+\s+)?(?:little|no)\s+(?:impact|effect))"
    ))
    .expect("static regex")
});
static COMMIT_KW: LazyLock<Regex> = LazyLock::new(|| crate::text::regex(r"(?m)^\s*commit:\s*").expect("static regex"));
static ENTRY: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"^\s*([0-9a-f]{7,40}|v\d[\w.\-]*|next-\d+)\b[ \t]*(.*?)\s*$").expect("static regex")
});
static QUOTED_SUBJECT: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r#"^\(\s*"(.*)"\s*\)|^\(([^()]*(?:\([^()]*\)[^()]*)*)\)"#).expect("static regex")
});
static ARROW: LazyLock<Regex> = LazyLock::new(|| crate::text::regex(r"<-{2,}\s*(.*)$").expect("static regex"));

static RERAN: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)\b(?:we|I)\s+(?:have\s+)?(?:re-?tested|tested|applied|re-?ran|rerun|re-run|reproduced|rebuilt)\b|",
        r"\bno\s+(?:performance\s+)?difference\b|\bretested\b"
    ))
    .expect("static regex")
});

/// Whether the prose says LKP ran something again ("we tested the
/// patch", "no performance difference"): with a table, a retest.
pub fn says_it_reran(text: &str) -> bool {
    RERAN.is_match(text)
}

/// What the prose of `text` says about the retest.
pub fn prose_verdict(text: &str) -> Option<Verdict> {
    if PARTLY.is_match(text) {
        Some(Verdict::PartlyRecovered)
    } else if NOT_RECOVERED.is_match(text) {
        Some(Verdict::NotRecovered)
    } else if RECOVERED.is_match(text) {
        Some(Verdict::Recovered)
    } else {
        None
    }
}

/// The verdict from the numbers.
pub fn verdict(base: f64, bad: f64, fix: f64, base_stddev_pct: Option<f64>) -> (Option<f64>, Option<Verdict>) {
    if let Some(sd) = base_stddev_pct
        && (fix - base).abs() <= base.abs() * sd / 100.0
    {
        let share = if base == bad { None } else { Some((fix - bad) / (base - bad)) };
        return (share, Some(Verdict::Recovered));
    }
    if base == bad {
        return (None, None);
    }
    let share = (fix - bad) / (base - bad);
    let v = if share >= RECOVERED_SHARE {
        Verdict::Recovered
    } else if share >= PARTLY_SHARE {
        Verdict::PartlyRecovered
    } else {
        Verdict::NotRecovered
    };
    (Some(share), Some(v))
}

struct Entry {
    id: String,
    subject: Option<String>,
    note: Option<String>,
}

/// The `commit:` list right before a table.
fn commit_entries(text: &str, table: &Table) -> Vec<Entry> {
    let before = &text[..table.offset.min(text.len())];
    let Some(kw) = COMMIT_KW.find_iter(before).last() else { return Vec::new() };
    let block = &before[kw.end()..];
    let mut out = Vec::new();
    for line in block.split('\n') {
        let Some(c) = ENTRY.captures(line) else { continue };
        let id = c.get(1).map_or("", |m| m.as_str()).to_string();
        let rest = c.get(2).map_or("", |m| m.as_str());
        let mut subject = None;
        let arrow = ARROW.find(rest).map_or(rest.len(), |m| m.start());
        let mut note = ARROW.captures(rest).and_then(|a| a.get(1)).map(|m| m.as_str().trim().to_string());
        if let Some(q) = QUOTED_SUBJECT.captures(rest) {
            subject = q.get(1).or(q.get(2)).map(|m| m.as_str().trim().to_string()).filter(|s| !s.is_empty());
        } else if rest.starts_with('=') {
            // `e9a0f6a398 = bd4a633b6f + patch [1]`
            note = Some(rest[..arrow].trim().to_string());
        } else if !rest.is_empty() && !rest.starts_with('<') {
            // `e0bf1dc859fdd mm: memcg: move vmstats structs ...`
            subject = Some(rest[..arrow].trim().to_string()).filter(|s| !s.is_empty());
        }
        // `57da7477067d  (fixup)` is a note, not a subject.
        let (subject, note) = match subject {
            Some(s) if s.eq_ignore_ascii_case("fixup") || s.starts_with("fixup") => {
                (None, Some(note.map_or_else(|| s.clone(), |n| format!("({s}) {n}"))))
            }
            s => (s, note),
        };
        out.push(Entry { id, subject, note });
    }
    out
}

fn column(id: &str, entries: &[Entry]) -> Column {
    let entry = entries
        .iter()
        .find(|e| id == e.id || (e.id.len() >= 7 && id.len() >= 7 && (id.starts_with(&e.id) || e.id.starts_with(id))));
    let best = entry.map_or(id, |e| if e.id.len() > id.len() { &e.id } else { id });
    let sha = CommitSha::new(best).filter(CommitSha::is_full);
    Column {
        sha,
        short: entry.map_or_else(|| id.to_string(), |e| e.id.clone()),
        subject: entry.and_then(|e| e.subject.clone()),
        note: entry.and_then(|e| e.note.clone()),
        value: None,
        stddev_pct: None,
        change_pct: None,
    }
}

/// What the report being retested says: which metric to judge by and
/// which commit is the bad one.
#[derive(Clone, Debug, Default)]
pub struct Context<'a> {
    /// The report's headline metric, or its first dmesg signature.
    pub headline: Option<&'a str>,
    /// Metrics of the "also has significant impact" entries.
    pub other_metrics: Vec<&'a str>,
    pub testcase: Option<&'a str>,
    /// The reported commit (any abbreviation) and its subject: a rebased
    /// copy of the bad commit is recognised by its subject.
    pub bad_commit: Option<&'a str>,
    pub bad_subject: Option<&'a str>,
}

fn same_commit(a: &str, b: &str) -> bool {
    a.len() >= 7 && b.len() >= 7 && (a.starts_with(b) || b.starts_with(a))
}

/// Commit subjects, ignoring a `[PATCH v4 08/16]` prefix the robot keeps
/// for commits made from mailed patches.
fn same_subject(a: &str, b: &str) -> bool {
    fn core(s: &str) -> &str {
        let mut s = s.trim();
        while let Some(rest) = s.strip_prefix('[') {
            match rest.find(']') {
                Some(i) => s = rest[i + 1..].trim_start(),
                None => break,
            }
        }
        s
    }
    let (a, b) = (core(a), core(b));
    !a.is_empty() && a == b
}

/// Which columns are base, bad and fixes. The bad commit is where the
/// report's commit is (by id or subject); base is the column before it and
/// every column after it is a fix. Without the report's commit in the
/// table, the robot's usual order applies: base, bad, fix....
fn roles(cols: &[Column], ctx: &Context<'_>) -> Option<(usize, usize, Vec<usize>)> {
    // By id first: a subject can repeat (a parent listed under its child's
    // subject by a typo), an id cannot.
    let by_id = cols.iter().position(|c| {
        ctx.bad_commit
            .is_some_and(|b| same_commit(&c.short, b) || c.sha.as_ref().is_some_and(|s| same_commit(s.as_str(), b)))
    });
    let bad = by_id.or_else(|| {
        cols.iter()
            .position(|c| ctx.bad_subject.is_some_and(|s| c.subject.as_deref().is_some_and(|cs| same_subject(cs, s))))
    });
    match bad {
        Some(0) => None,
        Some(k) => Some((k - 1, k, (k + 1..cols.len()).collect())),
        None => Some((0, 1, (2..cols.len()).collect())),
    }
}

/// The metric to judge every table by: the headline, else another metric
/// the report names, else one the prose names, else the first row (of the
/// report's testcase when there is one). The first candidate any table has
/// wins.
fn choose_metric(tables: &[&Table], prose: &str, ctx: &Context<'_>) -> Option<(String, MetricSource)> {
    let has = |m: &str| tables.iter().any(|t| t.row(m).is_some());
    if let Some(h) = ctx.headline.filter(|h| has(h)) {
        return Some((h.to_string(), MetricSource::Headline));
    }
    if let Some(m) = ctx.other_metrics.iter().find(|m| has(m)) {
        return Some(((*m).to_string(), MetricSource::Headline));
    }
    let rows = || tables.iter().flat_map(|t| t.rows.iter());
    if let Some(r) = rows().find(|r| r.metric.contains('.') && prose.contains(r.metric.as_str())) {
        return Some((r.metric.clone(), MetricSource::Prose));
    }
    let same_testcase = ctx.testcase.and_then(|t| rows().find(|r| r.metric.starts_with(&format!("{t}."))));
    same_testcase.or_else(|| rows().next()).map(|r| (r.metric.clone(), MetricSource::FirstRow))
}

/// Reads every retest in `own_text` (the reply's unquoted text).
pub fn extract(own_text: &str, tables: &[Table], ctx: &Context<'_>) -> Vec<Retest> {
    let mut out: Vec<Retest> = Vec::new();
    let prose_text = prose_only(own_text, tables);
    let wide: Vec<&Table> = tables.iter().filter(|t| t.columns.len() >= 3).collect();
    let chosen = choose_metric(&wide, &prose_text, ctx);
    for (ti, table) in tables.iter().enumerate() {
        if table.columns.len() < 3 {
            continue;
        }
        // The prose about a table is what stands between it and the table
        // before it: "we tested above patch, and it recovers the regression:".
        let from = if ti == 0 { 0 } else { tables[ti - 1].end.min(table.offset) };
        let prose_v = prose_verdict(own_text.get(from..table.offset).unwrap_or(""));
        let entries = commit_entries(own_text, table);
        let cols: Vec<Column> = table.columns.iter().map(|c| column(c, &entries)).collect();
        let Some((bi, xi, fixes)) = roles(&cols, ctx) else { continue };
        // Per table, the headline or another reported metric it has, else
        // the metric chosen for the whole mail.
        let row = ctx
            .headline
            .iter()
            .chain(ctx.other_metrics.iter())
            .find_map(|m| table.row(m).map(|r| (r, MetricSource::Headline)))
            .or_else(|| chosen.as_ref().and_then(|(m, src)| table.row(m).map(|r| (r, *src))));
        for fi in fixes {
            let mut base = cols[bi].clone();
            let mut bad = cols[xi].clone();
            let mut fix = cols[fi].clone();
            let (metric, source, values, sd) = if let Some((row, source)) = row {
                for (col, i) in [(&mut base, bi), (&mut bad, xi), (&mut fix, fi)] {
                    if let Some(c) = row.cells.get(i) {
                        col.value = Some(c.value);
                        col.stddev_pct = c.stddev_pct;
                        col.change_pct = c.change.filter(|ch| ch.unit == ChangeUnit::Percent).map(|ch| ch.value);
                    }
                }
                (row.metric.clone(), source, Values::Metric, base.stddev_pct.map(|n| n.0))
            } else if let Some((row, source)) = pick_fail_row(table, ctx.headline) {
                for (col, i) in [(&mut base, bi), (&mut bad, xi), (&mut fix, fi)] {
                    col.value = row.cells.get(i).and_then(|c| c.rate()).map(Num);
                }
                (row.signature.clone(), source, Values::FailRate, None)
            } else {
                continue;
            };
            let (share, v) = match (base.value, bad.value, fix.value) {
                (Some(b), Some(x), Some(f)) => verdict(b.0, x.0, f.0, sd),
                _ => (None, None),
            };
            let dup = out.iter().any(|r| {
                r.fix.short == fix.short
                    && r.metric == metric
                    && (r.base.value, r.bad.value, r.fix.value) == (base.value, bad.value, fix.value)
            });
            if dup {
                continue;
            }
            out.push(Retest {
                fix_change_pct: fix.change_pct,
                fix,
                base,
                bad,
                metric,
                metric_source: source,
                values,
                recovered_share: share.map(|s| Num((s * 1000.0).round() / 1000.0)),
                verdict: v,
                prose_verdict: prose_v,
                prose_disagrees: matches!((v, prose_v), (Some(a), Some(b)) if a != b),
            });
        }
    }
    out
}

fn pick_fail_row<'t>(table: &'t Table, headline: Option<&str>) -> Option<(&'t super::table::FailRow, MetricSource)> {
    headline
        .and_then(|h| table.fail_rows.iter().find(|r| r.signature == h || r.signature.ends_with(&format!(".{h}"))))
        .map(|r| (r, MetricSource::Headline))
        .or_else(|| table.fail_rows.first().map(|r| (r, MetricSource::FirstRow)))
}

/// The text outside the tables, where the prose is.
pub fn prose_only(text: &str, tables: &[Table]) -> String {
    let mut out = String::new();
    let mut last = 0;
    for t in tables {
        if t.offset >= last && t.offset <= text.len() {
            out.push_str(&text[last..t.offset]);
            last = t.end.min(text.len()).max(t.offset);
        }
    }
    out.push_str(&text[last.min(text.len())..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_thresholds() {
        assert_eq!(verdict(100.0, 50.0, 98.0, None).1, Some(Verdict::Recovered));
        assert_eq!(verdict(100.0, 50.0, 70.0, None).1, Some(Verdict::PartlyRecovered));
        assert_eq!(verdict(100.0, 50.0, 55.0, None).1, Some(Verdict::NotRecovered));
        // Within the base's noise counts as recovered even below 0.9.
        assert_eq!(verdict(100.0, 95.0, 97.0, Some(3.0)).1, Some(Verdict::Recovered));
        assert_eq!(verdict(100.0, 100.0, 90.0, None), (None, None));
        // Works for metrics where lower is better too.
        assert_eq!(verdict(10.0, 20.0, 11.0, None).1, Some(Verdict::Recovered));
    }

    #[test]
    fn prose() {
        assert_eq!(prose_verdict("we tested above patch, and it recovers the regression"), Some(Verdict::Recovered));
        assert_eq!(prose_verdict("it didn't fix the issue, still has -6.4% regression"), Some(Verdict::NotRecovered));
        assert_eq!(prose_verdict("the patch partially recovers the regression"), Some(Verdict::PartlyRecovered));
        assert_eq!(prose_verdict("thanks"), None);
        assert_eq!(prose_verdict("we confirmed the issue gone with the patch"), Some(Verdict::Recovered));
        assert_eq!(prose_verdict("updated the xfstests, confirmed the test PASS now"), Some(Verdict::Recovered));
        assert_eq!(prose_verdict("the issue still exists on next-20250321"), Some(Verdict::NotRecovered));
        assert_eq!(prose_verdict("the regression disappears after applying the patch"), Some(Verdict::Recovered));
    }
}
