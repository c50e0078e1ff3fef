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
    /// A `fail:runs` row: values are failure rates.
    FailRate,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Retest {
    pub fix: Column,
    pub base: Column,
    pub bad: Column,
    pub metric: String,
    pub metric_source: MetricSource,
    pub fix_change_pct: Option<Num>,
    pub recovered_share: Option<Num>,
    pub verdict: Option<Verdict>,
    /// What the prose says, when it says anything.
    pub prose_verdict: Option<Verdict>,
    pub prose_disagrees: bool,
}

static RECOVERED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)(recovers?\s+(?:the|this)\s+regression|regression\s+(?:is|was)\s+(?:gone|fixed|recovered)|",
        r"(?:issue|problem|regression)\s+(?:is|was)\s+(?:gone|fixed|resolved)|fully\s+recover|",
        r"can\s+fix\s+the\s+(?:issue|regression|problem)|(?:fixed|fixes)\s+the\s+(?:issue|regression|problem)|",
        r"shows\s+no\s+regression|no\s+regression\s+after|performance\s+is\s+(?:back|restored)|recovered)"
    ))
    .expect("static regex")
});
static PARTLY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(partial(?:ly)?\s+(?:recover|fix|improve)|partly\s+(?:recover|fix)|recovers?\s+(?:part|some|half))",
    )
    .expect("static regex")
});
static NOT_RECOVERED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)(still\s+exists?|still\s+has\s+[-+]?\d|(?:did\s*n[o']t|does\s*n[o']t|cannot|can't|could\s*n[o']t|can\s+not)\s+",
        r"(?:fix|recover|help|resolve)|still\s+(?:can\s+)?reproduce|not\s+(?:fixed|recovered)|no\s+improvement)"
    ))
    .expect("static regex")
});
static COMMIT_KW: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?m)^\s*commit:\s*").expect("static regex"));
static ENTRY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*([0-9a-f]{7,40}|v\d[\w.\-]*|next-\d+)\b[ \t]*(.*?)\s*$").expect("static regex"));
static QUOTED_SUBJECT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^\(\s*"(.*)"\s*\)|^\(([^()]*(?:\([^()]*\)[^()]*)*)\)"#).expect("static regex"));
static ARROW: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"<-{2,}\s*(.*)$").expect("static regex"));

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
        if let Some(q) = QUOTED_SUBJECT.captures(rest) {
            subject = q.get(1).or(q.get(2)).map(|m| m.as_str().trim().to_string()).filter(|s| !s.is_empty());
        }
        let note = ARROW.captures(rest).and_then(|a| a.get(1)).map(|m| m.as_str().trim().to_string());
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

/// Finds the row to judge by. `headline` is the report's metric or
/// signature, `testcase` the report's testcase.
fn pick_row<'t>(
    table: &'t Table,
    prose: &str,
    headline: Option<&str>,
    testcase: Option<&str>,
) -> Option<(&'t super::table::Row, MetricSource)> {
    if let Some(h) = headline
        && let Some(r) = table.row(h)
    {
        return Some((r, MetricSource::Headline));
    }
    if let Some(r) = table.rows.iter().find(|r| prose.contains(r.metric.as_str())) {
        return Some((r, MetricSource::Prose));
    }
    let same_testcase = testcase.and_then(|t| table.rows.iter().find(|r| r.metric.starts_with(&format!("{t}."))));
    same_testcase.or(table.rows.first()).map(|r| (r, MetricSource::FirstRow))
}

/// Reads every retest in `own_text` (the reply's unquoted text).
pub fn extract(own_text: &str, tables: &[Table], headline: Option<&str>, testcase: Option<&str>) -> Vec<Retest> {
    let prose_v = prose_verdict(&prose_only(own_text, tables));
    let mut out = Vec::new();
    for table in tables.iter().filter(|t| t.columns.len() >= 3) {
        let entries = commit_entries(own_text, table);
        let prose_text = prose_only(own_text, tables);
        let cols: Vec<Column> = table.columns.iter().map(|c| column(c, &entries)).collect();
        for fix_idx in 2..cols.len() {
            let mut base = cols[0].clone();
            let mut bad = cols[1].clone();
            let mut fix = cols[fix_idx].clone();
            let (metric, source, b, x, f, sd) =
                if let Some((row, source)) = pick_row(table, &prose_text, headline, testcase) {
                    let cell = |i: usize| row.cells.get(i);
                    for (col, i) in [(&mut base, 0), (&mut bad, 1), (&mut fix, fix_idx)] {
                        if let Some(c) = cell(i) {
                            col.value = Some(c.value);
                            col.stddev_pct = c.stddev_pct;
                            col.change_pct = c.change.filter(|ch| ch.unit == ChangeUnit::Percent).map(|ch| ch.value);
                        }
                    }
                    (
                        row.metric.clone(),
                        source,
                        base.value.map(|n| n.0),
                        bad.value.map(|n| n.0),
                        fix.value.map(|n| n.0),
                        base.stddev_pct.map(|n| n.0),
                    )
                } else if let Some(row) = pick_fail_row(table, headline) {
                    let rate = |i: usize| row.cells.get(i).and_then(|c| c.rate());
                    for (col, i) in [(&mut base, 0), (&mut bad, 1), (&mut fix, fix_idx)] {
                        col.value = rate(i).map(Num);
                    }
                    (row.signature.clone(), MetricSource::FailRate, rate(0), rate(1), rate(fix_idx), None)
                } else {
                    continue;
                };
            let (share, v) = match (b, x, f) {
                (Some(b), Some(x), Some(f)) => verdict(b, x, f, sd),
                _ => (None, None),
            };
            out.push(Retest {
                fix_change_pct: fix.change_pct,
                fix,
                base,
                bad,
                metric,
                metric_source: source,
                recovered_share: share.map(|s| Num((s * 1000.0).round() / 1000.0)),
                verdict: v,
                prose_verdict: prose_v,
                prose_disagrees: matches!((v, prose_v), (Some(a), Some(b)) if a != b),
            });
        }
    }
    out
}

fn pick_fail_row<'t>(table: &'t Table, headline: Option<&str>) -> Option<&'t super::table::FailRow> {
    headline
        .and_then(|h| table.fail_rows.iter().find(|r| r.signature == h || r.signature.ends_with(&format!(".{h}"))))
        .or(table.fail_rows.first())
}

/// The text outside the tables, where the prose is.
fn prose_only(text: &str, tables: &[Table]) -> String {
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
    }
}
