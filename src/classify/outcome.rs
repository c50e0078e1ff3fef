//! What a retest result found. LKP answers a report in more ways than a
//! table with a fix column, and each moves the case differently:
//!
//! - a fix judged: the fix column's numbers (DESIGN's verdict rule), else
//!   what the prose says ("it didn't fix the issue");
//! - the regression confirmed: the base and the reported commit run again
//!   (rebuilt, more runs, another machine) and the regression reproduces:
//!   still regressed, and no fix was tried;
//! - still present: the reported commit has since reached a later tree
//!   (mainline, a release, a linux-next tag) and the issue is seen there;
//! - a result the body does not give: a fix was run and its result is
//!   only attached or only described. An attachment that can be read (a
//!   comparison table, a dmesg) is read; otherwise the verdict is unknown
//!   and the reason is said.
//!
//! What decides is what the reply says in its own words and tables, never
//! whether it quotes the report: the report, when known, only names the
//! bad commit and the regression's sign.

use regex::{Captures, Regex};
use serde::Serialize;
use std::sync::LazyLock;

use super::num::Num;
use super::report::ReportFacts;
use super::request;
use super::retest::{self, Context, Retest};
use super::table::{self, Table};
use crate::mail::Attachment;
use crate::model::Verdict;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Outcome {
    /// A fix retested and judged, by its column's numbers, the prose or
    /// an attached table or log. `fix` as the mail names it (a commit, a
    /// link), when it does.
    FixJudged { verdict: Verdict, fix: Option<String> },
    /// The report's test run again without a fix: the regression
    /// reproduces. `metric` and `change_pct` (base to the reported
    /// commit) when a table shows it.
    RegressionConfirmed { metric: Option<String>, change_pct: Option<Num> },
    /// Still seen in a later tree, as the reply names it.
    StillPresent { tree: String },
    /// A fix was retested and the mail does not say how it went.
    ResultUnknown { fix: Option<String>, reason: String },
}

impl Outcome {
    /// The verdict the result states: a fix's, `still-regressed` when the
    /// regression was seen again without a fix, none when the mail does
    /// not say.
    pub fn verdict_str(&self) -> Option<&'static str> {
        match self {
            Outcome::FixJudged { verdict, .. } => Some(verdict.as_str()),
            Outcome::RegressionConfirmed { .. } | Outcome::StillPresent { .. } => Some("still-regressed"),
            Outcome::ResultUnknown { .. } => None,
        }
    }

    /// A fix's verdict (DESIGN's three), for the fix-judged outcome only.
    pub fn verdict(&self) -> Option<Verdict> {
        match self {
            Outcome::FixJudged { verdict, .. } => Some(*verdict),
            _ => None,
        }
    }

    /// The fix the result is of, as the mail names it.
    pub fn fix(&self) -> Option<&str> {
        match self {
            Outcome::FixJudged { fix, .. } | Outcome::ResultUnknown { fix, .. } => fix.as_deref(),
            Outcome::RegressionConfirmed { .. } | Outcome::StillPresent { .. } => None,
        }
    }

    /// One line for a case's timeline and the mail to whoever asked.
    pub fn summary(&self) -> String {
        match self {
            Outcome::FixJudged { verdict, .. } => verdict.as_str().to_string(),
            Outcome::RegressionConfirmed { metric, change_pct } => match (metric, change_pct) {
                (Some(m), Some(c)) => format!("still regressed: rerun without a fix, {m} {:+}%", c.0),
                (Some(m), None) => format!("still regressed: rerun without a fix, {m}"),
                _ => "still regressed: rerun without a fix".to_string(),
            },
            Outcome::StillPresent { tree } => format!("still present in {tree}"),
            Outcome::ResultUnknown { reason, .. } => format!("no verdict: {reason}"),
        }
    }
}

/// Things the reply says the regression does when run again.
static REPRODUCES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:regression|issue|problem|bug|failure|warning|crash)s?\s+(?:still\s+)?(?:exists?|persists?|",
        r"reproduces|remains|is\s+(?:still\s+)?(?:there|real|reproducible|stable|reproduced|confirmed))|",
        r"\b(?:still|also)\s+(?:shows?|showed|see|saw|seen|observe[ds]?|gets?|got|reproduced?)\s+",
        r"(?:(?:a|the|similar|same)\s+)*(?:[-+]?\d+(?:\.\d+)?%\s+)?regression|",
        r"\b(?:can|could)\s+(?:still\s+|also\s+|stably\s+)?reproduce\s+(?:the|this|it|a)\b|",
        r"\breproduced\s+(?:the|this)\s+regression|\bconfirm(?:ed|s)?\s+(?:the\s+|this\s+)?regression|",
        r"\b(?:data|results?|numbers?|scores?)\s+(?:is|are)\s+(?:quite\s+|very\s+|pretty\s+)?stable"
    ))
    .expect("static regex")
});

/// A run done again: rebuilt, rerun, more runs, another machine.
static RERUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:re-?(?:built|build|compiled?|ran|run|tested|test)|rebuil[dt]|double[- ]?(?:confirm|check)\w*|",
        r"(?:tested|ran|run|checked)\s+(?:it\s+|them\s+)?again|multi(?:ple)?\s+runs|",
        r"(?:\d+|more|several|many)\s+(?:times|runs)|finished\s+the\s+tests?|",
        r"(?:another|other|a\s+different|one\s+more)\s+(?:machine|server|box|platform|system|host)s?|",
        r"tests?\s+on\s+\S+\s+also)\b"
    ))
    .expect("static regex")
});

/// What comes right before an offer to run again ("we could rerun").
static OFFER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:could|can|will|would|'ll|may|might|shall|to|please|if)\s+(?:\w+\s+)?$").expect("static regex")
});

/// The reply says the issue did not come back.
static NOT_REPRODUCED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:can\s*not|cannot|can't|could\s*n[o']t|unable\s+to|fail(?:ed)?\s+to)\s+(?:\w+\s+)?(?:reproduce|",
        r"recreate)|\bnot\s+(?:be\s+)?reproduc\w+|\bno\s+(?:performance\s+)?(?:regression|difference|diff)\b"
    ))
    .expect("static regex")
});

/// A later tree, as LKP names one. A bare SHA is not one (it is as often
/// the reported commit); a SHA with its tag is.
const TREE: &str = concat!(
    r"(?:the\s+)?(?:latest\s+|current\s+)?(?P<tree>mainline|upstream|linus(?:'s)?(?:\s+tree|\s*/\s*master|",
    r"\s+master)?|linux-next(?:\s*/\s*master)?|next-\d{8}|v\d+\.\d+(?:\.\d+)?(?:-rc\d+)?|",
    r"[0-9a-f]{7,40}\s*\(tag:\s*[\w.\-]+)"
);

static STILL_PRESENT: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        format!(
            concat!(
                r"(?i)\b(?:issue|regression|problem|bug|warning|failure|crash|it)\s+(?:is\s+|was\s+)?still\s+",
                r"(?:exists?|present|there|happens?|happening|reproduc\w*|occurs?|(?:be\s+|can\s+be\s+)?",
                r"(?:seen|observed|reproduced))\s+(?:on|in|with)\s+{}"
            ),
            TREE
        ),
        format!(
            concat!(
                r"(?i)\bstill\s+(?:see|saw|observe|hit|reproduce|get)\s+(?:it|this|the\s+(?:same\s+)?(?:issue|",
                r"regression|problem|failure|warning))\s+(?:on|in|with)\s+{}"
            ),
            TREE
        ),
        format!(
            r"(?i)\b(?:merged|landed|pulled|went|got)\s+(?:in|into|to)\s+{}[^.]{{0,160}}?\bstill\b",
            TREE.replace(r"|[0-9a-f]{7,40}\s*\(tag:\s*[\w.\-]+", "")
        ),
    ]
    .iter()
    .map(|r| Regex::new(r).expect("static regex"))
    .collect()
});

/// The reply says a fix took part: applied, on top, the fix column's note.
static FIX_NAMED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:appl(?:y|ied|ying)|with|plus|on\s+top\s+of|upon)\s+(?:your|the|this|above|below|attached|",
        r"following|that|his|her|their|\w+'s)\s+(?:(?:new|updated|v\d+|debug|test|fix(?:up)?)\s+)?",
        r"(?:fix(?:up)?|patch(?:es|[- ]?set)?|diff|branch|change)\b|",
        r"\b(?:fix(?:up)?|patch(?:es|[- ]?set)?|diff)\s+(?:is\s+|was\s+)?(?:applied|on\s+top)|",
        r"\b(?:re-?)?(?:test(?:ed|ing)?|tried|ran|run)\s+(?:your|the|this|above|below|attached|following|that|his|her|",
        r"\w+'s)\s+(?:(?:new|updated|v\d+|debug|test)\s+)?(?:fix(?:up)?|patch(?:es|[- ]?set)?|diff|branch)\b|",
        r"<-+\s*(?:your|the|above|below)?\s*(?:fix|patch)"
    ))
    .expect("static regex")
});

/// The result is elsewhere: attached, or only called a result.
static RESULT_REF: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\battach(?:ed|ment)\b|\bresults?\b|\b(?:dmesg|kmsg)\b").expect("static regex"));

/// The run never happened: the patch did not apply, build or boot.
static DID_NOT_RUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\bfail(?:ed|s)?\s+to\s+(?:apply|compile|build|boot)|\b(?:build|compile|compilation)\s+fail|",
        r"\b(?:can\s*not|cannot|can't|could\s*n[o']t)\s+(?:be\s+)?(?:apply|applied|build|built|boot)"
    ))
    .expect("static regex")
});

/// A run done, not offered: `RERUN` with no "could", "will", "if" before it.
fn says_it_ran_again(prose: &str) -> bool {
    RERUN.find_iter(prose).any(|m| !OFFER.is_match(&prose[m.start().saturating_sub(40)..m.start()]))
}

/// "The regression still exists" after a rebuild, "we double confirmed
/// the data is stable in multi runs", "test on Broadwell-EP also showed
/// 35% regression": the regression seen again on a rerun.
pub fn confirms_regression(prose: &str) -> bool {
    REPRODUCES.is_match(prose) && says_it_ran_again(prose) && !NOT_REPRODUCED.is_match(prose)
}

/// The later tree the reply says the issue is still seen in.
pub fn still_present_in(prose: &str) -> Option<String> {
    STILL_PRESENT.iter().find_map(|r| r.captures(prose)).and_then(|c| tree_name(&c))
}

fn tree_name(c: &Captures<'_>) -> Option<String> {
    let t = c.name("tree")?.as_str();
    // `9388ec571cb1ad (tag: next-20250321`: the tag says more.
    let t = t.split_once("tag:").map_or(t, |(_, tag)| tag);
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    (!t.is_empty()).then_some(t)
}

/// Whether the reply says a fix took part in what it ran.
pub fn names_a_fix(prose: &str) -> bool {
    FIX_NAMED.is_match(prose)
}

/// "We reran with your patch applied; the dmesg is attached": a fix run,
/// its result attached or only described.
pub fn ran_a_fix(prose: &str, attachments: &[Attachment]) -> bool {
    names_a_fix(prose)
        && retest::says_it_reran(prose)
        && (RESULT_REF.is_match(prose) || !attachments.is_empty())
        && !DID_NOT_RUN.is_match(prose)
}

/// Whether the prose alone makes an LKP reply a retest result.
pub fn is_a_result(prose: &str, attachments: &[Attachment]) -> bool {
    confirms_regression(prose) || still_present_in(prose).is_some() || ran_a_fix(prose, attachments)
}

/// What a retest result is judged on.
pub struct Evidence<'a> {
    /// The reply's own words outside its tables.
    pub prose: &'a str,
    pub tables: &'a [Table],
    /// The fix columns of its own tables.
    pub retests: &'a [Retest],
    pub prose_verdict: Option<Verdict>,
    /// The report it answers, as far as it is known.
    pub report: Option<&'a ReportFacts>,
    pub ctx: &'a Context<'a>,
    pub attachments: &'a [Attachment],
}

/// What [`judge`] found.
pub struct Judged {
    pub outcome: Outcome,
    /// Fix columns read from attachments.
    pub retests: Vec<Retest>,
    pub problems: Vec<String>,
}

/// What a retest result found, strongest evidence first: a fix column's
/// numbers; without a fix, a later tree or a rerun that shows the
/// regression again; the prose's verdict; an attachment's table or
/// dmesg; else the verdict is unknown, and why.
pub fn judge(e: &Evidence<'_>) -> Judged {
    let judged = |outcome| Judged { outcome, retests: Vec::new(), problems: Vec::new() };
    if let Some((verdict, r)) = e.retests.iter().find_map(|r| r.verdict.map(|v| (v, r))) {
        return judged(Outcome::FixJudged { verdict, fix: Some(column_fix(r)) });
    }
    if e.retests.is_empty() && !names_a_fix(e.prose) {
        if let Some(tree) = still_present_in(e.prose) {
            return judged(Outcome::StillPresent { tree });
        }
        if let Some((metric, change_pct, headline)) = confirmed_by_table(e) {
            let mut j = judged(Outcome::RegressionConfirmed { metric: Some(metric.clone()), change_pct });
            if !headline {
                j.problems.push(format!("confirmed: table lacks the headline metric; judged by {metric}"));
            }
            return j;
        }
        if confirms_regression(e.prose) {
            return judged(Outcome::RegressionConfirmed { metric: None, change_pct: None });
        }
    }
    if let Some(v) = e.prose_verdict {
        return judged(Outcome::FixJudged { verdict: v, fix: named_fix(e) });
    }
    let mut reasons = Vec::new();
    for a in e.attachments {
        let name = a.name.as_deref().unwrap_or(&a.content_type);
        let Some(text) = &a.text else {
            if looks_like_a_result(name) {
                reasons.push(format!("the result is in {name}, which is not plain text"));
            }
            continue;
        };
        let tables = table::find_tables(text);
        let retests = retest::extract(text, &tables, e.ctx);
        if let Some((verdict, fix)) = retests.iter().find_map(|r| r.verdict.map(|v| (v, column_fix(r)))) {
            return Judged {
                outcome: Outcome::FixJudged { verdict, fix: Some(fix) },
                retests,
                problems: vec![format!("retest: judged by the table in the attached {name}")],
            };
        }
        if let Some(sig) = shown_signature(text, e.ctx.headline) {
            return Judged {
                outcome: Outcome::FixJudged { verdict: Verdict::NotRecovered, fix: named_fix(e) },
                retests: Vec::new(),
                problems: vec![format!("retest: the attached {name} shows {sig}")],
            };
        }
        if looks_like_a_dmesg(name, text) {
            reasons.push(match e.ctx.headline {
                Some(sig) => {
                    format!("the attached {name} does not show {sig}, and the reply does not say how many runs passed")
                }
                None => format!("the attached {name} is a log; the reply does not say what it shows"),
            });
        } else if looks_like_a_result(name) {
            reasons.push(format!("the attached {name} has no comparison table with a fix column"));
        }
    }
    let reason = if let Some(r) = e.retests.first() {
        format!("the table has no value of {} for the fix column {}", r.metric, r.fix.short)
    } else if let Some(r) = reasons.into_iter().next() {
        r
    } else if !e.tables.is_empty() {
        "its tables have no fix column, and the prose gives no verdict".to_string()
    } else {
        "the reply gives no verdict and no table to judge by".to_string()
    };
    let fix = e.retests.first().map(column_fix).or_else(|| named_fix(e));
    Judged {
        problems: vec![format!("retest: no verdict: {reason}")],
        outcome: Outcome::ResultUnknown { fix, reason },
        retests: Vec::new(),
    }
}

/// A fix column's commit, full when the table gives it.
fn column_fix(r: &Retest) -> String {
    r.fix.sha.as_ref().map_or_else(|| r.fix.short.clone(), |s| s.to_string())
}

/// `* 0b1c2d3e4f5a6 fs/buffer: drop the lock   <--- your patch`: the
/// commit LKP marks as the fix in its `git log` excerpt.
static MARKED_FIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?im)^[*|\\/ ]*([0-9a-f]{7,40})\b.*<-+\s*(?:your|the|his|her|their|\w+'s)?\s*(?:fix|patch|diff)")
        .expect("static regex")
});

/// The fix the prose names: the commit marked as the fix, else the first
/// link, patch or commit that is not the reported one.
fn named_fix(e: &Evidence<'_>) -> Option<String> {
    if let Some(c) = MARKED_FIX.captures(e.prose).and_then(|c| c.get(1)) {
        return Some(c.as_str().to_string());
    }
    request::targets(e.prose, e.attachments)
        .into_iter()
        .map(|t| t.value)
        .find(|v| !e.ctx.bad_commit.is_some_and(|b| same_commit(v, b)))
}

/// A table of the reply's own that runs the base and the reported commit
/// again, the reported commit last (no fix column), and shows the
/// regression: the headline metric (else, as for a fix column, the first
/// row of the same testcase) moves the reported way by at least half the
/// reported change, or the reported failure happens more often on the
/// reported commit than on its base. The metric, its change, and whether
/// it is the headline.
fn confirmed_by_table(e: &Evidence<'_>) -> Option<(String, Option<Num>, bool)> {
    if !says_it_ran_again(e.prose) && !retest::says_it_reran(e.prose) {
        return None;
    }
    let reported = e
        .report
        .and_then(|r| r.headline.as_ref())
        .and_then(|h| h.change_pct.map(|c| (c.0, true)).or_else(|| h.stated_change_pct.map(|c| (c.0.abs(), false))));
    for t in e.tables {
        let n = t.columns.len();
        let by_id = t.columns.iter().position(|c| e.ctx.bad_commit.is_some_and(|b| same_commit(c, b)));
        let bad = match by_id {
            Some(i) if i >= 1 && i + 1 == n => i,
            None if n == 2 => 1,
            _ => continue,
        };
        let base = bad - 1;
        let headline_row = e.ctx.headline.and_then(|h| t.row(h));
        let testcase_row = || {
            let testcase = e.ctx.headline.and_then(|h| h.split_once('.')).map(|(t, _)| format!("{t}."))?;
            t.rows.iter().find(|r| r.metric.starts_with(&testcase))
        };
        if let Some(row) = headline_row.or_else(testcase_row)
            && let (Some(b), Some(x)) = (row.cells.get(base), row.cells.get(bad))
            && b.value.0 != 0.0
        {
            let change = (x.value.0 - b.value.0) / b.value.0.abs() * 100.0;
            let regresses = match reported {
                Some((r, true)) => r != 0.0 && change.signum() == r.signum() && change.abs() >= r.abs() / 2.0,
                Some((r, false)) => r != 0.0 && change.abs() >= r / 2.0,
                None => false,
            };
            if regresses {
                let change = Some(Num((change * 10.0).round() / 10.0));
                return Some((row.metric.clone(), change, headline_row.is_some()));
            }
            continue;
        }
        let fail_row = t
            .fail_rows
            .iter()
            .find(|r| e.ctx.headline.is_some_and(|h| r.signature == h || r.signature.ends_with(&format!(".{h}"))))
            .or(t.fail_rows.first());
        if let Some(f) = fail_row
            && let (Some(b), Some(x)) = (f.cells.get(base), f.cells.get(bad))
            && x.fails > 0
            && x.rate() > b.rate()
        {
            return Some((f.signature.clone(), None, true));
        }
    }
    None
}

fn same_commit(column: &str, bad: &str) -> bool {
    column.len() >= 7 && bad.len() >= 7 && (column.starts_with(bad) || bad.starts_with(column))
}

/// Attachment names that hold a run's result rather than a config.
fn looks_like_a_result(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["dmesg", "kmsg", "log", "result", "comparison", "output", "console", "serial"].iter().any(|w| n.contains(w))
}

fn looks_like_a_dmesg(name: &str, text: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("dmesg") || n.contains("kmsg") || n.contains("console") || text.lines().take(50).any(is_kernel_log_line)
}

/// `[   12.345678] ...`, as the kernel log prints.
fn is_kernel_log_line(l: &str) -> bool {
    let l = l.trim_start();
    l.strip_prefix('[').and_then(|r| r.split_once(']')).is_some_and(|(ts, _)| {
        let ts = ts.trim();
        ts.contains('.') && ts.split(['.', ' ', 'T']).next().is_some_and(|s| s.chars().all(|c| c.is_ascii_digit()))
    })
}

/// The reported issue's signature, if a line of `log` shows it. LKP's
/// signatures are the kernel's message with spaces made `_` and line
/// numbers dropped (`BUG:sleeping_function_called_from_invalid_context_at_mm/util.c`
/// for `BUG: sleeping function called from invalid context at
/// mm/util.c:743`): a line shows it when it holds the signature's words
/// in order.
fn shown_signature<'s>(log: &str, signature: Option<&'s str>) -> Option<&'s str> {
    let sig = signature?;
    let sig_core = sig.strip_prefix("dmesg.").unwrap_or(sig);
    let words: Vec<&str> = sig_core.split(['_', ':', '#', ' ', '(', ')', ',']).filter(|w| w.len() >= 2).collect();
    // A signature of one or two words is a metric name, not a message.
    if words.len() < 3 {
        return None;
    }
    log.lines()
        .any(|line| {
            let mut rest = line;
            words.iter().all(|w| match rest.find(w) {
                Some(i) => {
                    rest = &rest[i + w.len()..];
                    true
                }
                None => false,
            })
        })
        .then_some(sig)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confirmations_need_a_rerun_and_the_regression_seen_again() {
        let yes = [
            "We recompiled the kernels with option \"-falign-functions=32\", and the\nregression still exists:",
            "we double confirmed the latency_95th_ms data is stable in multi runs on our\ntest platform",
            "Test on Broadwell-EP also showed 35% regression:",
            "we rebuilt both kernels and reran parent and commit 12 times: the regression\nreproduces",
        ];
        for t in yes {
            assert!(confirms_regression(t), "{t}");
        }
        let no = [
            // An offer to rerun is not a rerun.
            "in our tests, the result is quite stable.\nif you still have concern, we could rerun tests.",
            "I tried the same test on another server, cannot reproduce the issue again",
            "we tested the patch, and it recovers the regression",
        ];
        for t in no {
            assert!(!confirms_regression(t), "{t}");
        }
    }

    #[test]
    fn later_trees() {
        let cases = [
            ("the issue still exists on\n9388ec571cb1ad (tag: next-20250321, linux-next/master) Add", "next-20250321"),
            ("the commit was merged into mainline last week, and the regression is still there", "mainline"),
            ("we still see the regression on v6.10-rc2, same numbers", "v6.10-rc2"),
            ("it is still reproducible on the latest linus/master", "linus/master"),
        ];
        for (t, tree) in cases {
            assert_eq!(still_present_in(t).as_deref(), Some(tree), "{t}");
        }
        assert_eq!(still_present_in("the regression still exists"), None);
        // The reported commit is not a later tree.
        assert_eq!(still_present_in("the issue still reproduces on 5e6d7a8b9c, and its parent stays clean"), None);
    }

    #[test]
    fn fix_runs() {
        assert!(ran_a_fix("we reran the test with your patch applied on top of a1b2c3d4e5; dmesg is attached", &[]));
        assert!(!ran_a_fix("I failed to apply your patch on top of 1122c0c1cc. we tested next instead", &[]));
        assert!(!ran_a_fix("we rebuilt the kernel and the regression still exists", &[]));
        // A fix tested and failing is a fix's verdict, not a confirmation.
        assert!(names_a_fix("we retested the patch, the issue still exists"));
    }

    #[test]
    fn signatures_in_a_log() {
        let log = "[  215.378500] BUG: sleeping function called from invalid context at mm/util.c:743\n";
        let sig = "BUG:sleeping_function_called_from_invalid_context_at_mm/util.c";
        assert_eq!(shown_signature(log, Some(sig)), Some(sig));
        assert_eq!(shown_signature(log, Some("WARNING:at_fs/iomap/buffered-io.c:#iomap_write_delalloc_release")), None);
        assert_eq!(shown_signature(log, Some("fio.write_iops")), None);
        assert!(is_kernel_log_line("[  215.378500] BUG: x"));
        assert!(!is_kernel_log_line("[1] https://lore.kernel.org/x"));
    }
}
