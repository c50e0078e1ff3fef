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
//! - not reproduced: LKP ran the test again (a rerun, another machine, an
//!   updated test suite) and the problem did not show; no fix was tried,
//!   so no verdict;
//! - a result the body does not give: a fix was run and its result is
//!   only attached or only described, or the numbers are too noisy to
//!   say. An attachment that can be read (a comparison table, a dmesg) is
//!   read; otherwise the verdict is unknown and the reason is said.
//!
//! The prose is read one sentence at a time, by what each sentence says
//! LKP did and saw ([`read`]): a run (tested, reran, rebuilt, applied,
//! upgraded the test suite), whether a fix took part, and what showed (the
//! problem again, not at all, in a later tree; a fix's verdict in words).
//! Offers, plans, questions and runs that never happened (the patch did
//! not apply) say nothing. What decides is what the reply says in its own
//! words and tables, never whether it quotes the report: the report, when
//! known, only names the bad commit and the regression's sign.

use regex::{Captures, Regex};
use serde::Serialize;
use std::sync::LazyLock;

use super::num::Num;
use super::report::ReportFacts;
use super::request;
use super::retest::{self, Context, Retest};
use super::table::{self, Table};
use super::text::sentences;
use crate::mail::Attachment;
use crate::model::Verdict;
use crate::text::may_contain_ci;

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
    /// The report's test run again (a rerun, another machine, an updated
    /// test suite) and the problem did not show. No fix was tried: it
    /// answers a retest and judges nothing.
    NotReproduced { note: Option<String> },
}

impl Outcome {
    /// The verdict the result states: a fix's, `still-regressed` when the
    /// regression was seen again without a fix, none when the mail does
    /// not say.
    pub fn verdict_str(&self) -> Option<&'static str> {
        match self {
            Outcome::FixJudged { verdict, .. } => Some(verdict.as_str()),
            Outcome::RegressionConfirmed { .. } | Outcome::StillPresent { .. } => Some("still-regressed"),
            Outcome::ResultUnknown { .. } | Outcome::NotReproduced { .. } => None,
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
            Outcome::RegressionConfirmed { .. } | Outcome::StillPresent { .. } | Outcome::NotReproduced { .. } => None,
        }
    }

    /// The outcome's name: `fix-judged`, `confirmed`, `still-present`,
    /// `result-unknown`.
    pub fn kind_str(&self) -> &'static str {
        match self {
            Outcome::FixJudged { .. } => "fix-judged",
            Outcome::RegressionConfirmed { .. } => "confirmed",
            Outcome::StillPresent { .. } => "still-present",
            Outcome::ResultUnknown { .. } => "result-unknown",
            Outcome::NotReproduced { .. } => "not-reproduced",
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
            Outcome::NotReproduced { note: Some(n) } => format!("not reproduced: run again without a fix, {n}"),
            Outcome::NotReproduced { note: None } => {
                "not reproduced: run again without a fix, the problem did not show".to_string()
            }
        }
    }
}

/// What an LKP reply says it did and saw, read sentence by sentence.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    /// It ran something: tested, reran, rebuilt, applied and ran, updated
    /// the test suite and ran.
    pub ran: bool,
    /// A fix took part: a patch, branch or commit applied or tested.
    pub fix: bool,
    /// The problem showed again.
    pub reproduced: bool,
    /// The problem did not show: cannot reproduce it, the test passes now.
    pub not_reproduced: bool,
    /// "No difference": with a fix, it does nothing; without one, the
    /// regression is gone.
    pub no_difference: bool,
    /// A fix's verdict in words ("it recovers the regression", "it has
    /// little impact").
    pub verdict: Option<Verdict>,
    /// The later tree the problem is still seen in.
    pub later_tree: Option<String>,
    /// The run never happened: the patch did not apply, build or boot.
    pub no_run: bool,
    /// The numbers are too noisy to say either way.
    pub unsteady: bool,
}

impl Reading {
    /// Whether the reply reports what a run found. The problem seen again
    /// or not at all counts only with a run ("in our tests the result is
    /// stable" restates the report); a fix's verdict or a later tree counts
    /// alone; a run that never happened is no result.
    pub fn is_a_result(&self) -> bool {
        let found = self.verdict.is_some()
            || self.later_tree.is_some()
            || self.ran && (self.reproduced || self.not_reproduced || self.no_difference || self.unsteady);
        found || self.ran && self.fix && !self.no_run
    }
}

/// A run done, by whoever writes: "we tested", "I applied ... and",
/// "we rebuilt", "we've updated the xfstests".
static RAN: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)\b(?:we|i)(?:'ve|\s+have|\s+had)?\s+(?:also\s+|just\s+|then\s+|further\s+|already\s+|directly\s+|double\s+)*",
        r"(?:re-?tested|tested|re-?ran|rerun|re-run|ran|re-?built|rebuild|re-?compiled|applied|upgraded|updated|",
        r"confirmed|checked|reproduced|captured|finished|tried\s+(?:the|this|your|above|below|it|with|on|to\s+run|",
        r"to\s+test|to\s+reproduce|running|testing|same|another))\b|",
        r"\bin\s+our\s+tests?,?\s+(?:by|with|after)\b|\bby\s+(?:applying|testing|running)\b|\bretested\b|",
        r"\b(?:test|tests|run|runs)\s+(?:on|of|for)\s+\S+\s+(?:has\s+|have\s+)?finished\b|",
        r"\b(?:re-?run|rebuild|rebuilt|retest)\s+(?:the\s+)?(?:tests?|kernels?)\b|\bapplied\s+(?:it|this|the|your|them|above|below)\b|",
        r"\b(?:it|this|that|the\s+\w+)\s+(?:has\s+been|was|were)\s+(?:checked|tested|retested)\b"
    ))
    .expect("static regex")
});

/// What the reply says the problem did when run again.
static REPRODUCES: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)\b(?:regression|issue|problem|bug|failure|warning|crash)s?\s+(?:still\s+)?(?:exists?|persists?|",
        r"reproduces|remains|is\s+(?:still\s+)?(?:there|real|reproducible|stable|reproduced|confirmed))|",
        r"\b(?:still|also)\s+(?:shows?|showed|see|saw|seen|observe[ds]?|gets?|got|reproduced?|have|has)\s+",
        r"(?:(?:a|the|similar|same)\s+)*(?:[-+]?\d+(?:\.\d+)?%\s+)?(?:regression|score|data|result)|",
        r"\b(?:can|could)\s+(?:still\s+|also\s+|stably\s+)?reproduce\s+(?:the|this|it|a)\b|\bstill\s+reproducible\b|",
        r"\breproduced?\s+\d+\s+(?:times?\s+)?(?:out\s+)?of\s+\d+|\bsimilar\s+regression\b|\bregression\s+trend\b|",
        r"\breproduced\s+(?:the|this)\s+regression|\bconfirm(?:ed|s)?\s+(?:the\s+|this\s+)?regression|",
        r"\b(?:data|results?|numbers?|scores?)\s+(?:is|are)\s+(?:quite\s+|very\s+|pretty\s+)?(?:stable|valid)"
    ))
    .expect("static regex")
});

/// The reply says the problem did not come back.
static NOT_REPRODUCED: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)\b(?:can\s*not|cannot|can't|could\s*n[o']t|unable\s+to|fail(?:ed)?\s+to|not\s+be\s+able\s+to)\s+",
        r"(?:\w+\s+)?(?:reproduce|recreate)|\bnot\s+(?:be\s+)?reproduc\w+|\bno\s+(?:such\s+)?(?:regression|issue|",
        r"failure|warning|error)\b|\b(?:can\s+)?pass(?:es|ed)?\s+(?:on\s+this\s+commit\s+)?now\b|",
        r"\b(?:issue|problem|failure|warning|error|regression)s?\b[^.]{0,40}?\b(?:gone|disappear\w*)\b|",
        r"\b(?:test|case|it)\s+can\s+pass\b"
    ))
    .expect("static regex")
});

/// "No difference", which judges a fix and clears a rerun.
static NO_DIFFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)\bno\s+(?:performance\s+|obvious\s+|significant\s+)?(?:diff|difference|change)\b")
        .expect("static regex")
});

/// A fix's verdict in words.
static FIX_RECOVERED: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)\brecover(?:s|ed)?\s+(?:the|this)\s+(?:regression|regresion|performance)|",
        r"\b(?:performance|regression|issue|problem)\s+(?:is|was|has\s+been|are|were)\s+(?:\w+\s+)?(?:restored|recovered|resolved|resoloved|fixed|gone)|",
        r"\bfound\s+the\s+performance\s+(?:\w+\s+)?(?:restored|recovered)|\bentirely\s+resol|\bfully\s+recover|",
        r"\b(?:patch|fix|it|this|that|commit)\s+(?:can\s+|could\s+|does\s+|also\s+)?fix(?:es|ed)?\s+the\s+(?:issue|regression|problem|warning|error|failure|crash|bug)|",
        r"\b(?:can|could)\s+fix\s+the\s+(?:issue|regression|problem|warning|error|failure)|\bmeets?\s+(?:your|the)\s+expectation|",
        r"\bworks?\s+well\b|\bregression\s+disappears|\bdisappears?\s+after|\bissue\b[^.]{0,40}?\bgone\s+(?:now\s+)?with\b|",
        r"\bno\s+regression\s+after|\bperformance\s+is\s+(?:back|restored)"
    ))
    .expect("static regex")
});
static FIX_PARTLY: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(
        r"(?i)(partial(?:ly)?\s+(?:recover|fix|improve)|partly\s+(?:recover|fix)|recovers?\s+(?:part|some|half))",
    )
    .expect("static regex")
});
static FIX_NOT_RECOVERED: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)(?:did\s*n[o']t|does\s*n[o']t|cannot|can't|could\s*n[o']t|can\s+not|did\s+not|does\s+not)\s+",
        r"(?:fix|recover|help|resolve)|\b(?:has|have|had|with)\s+(?:\w+\s+)?(?:little|no)\s+(?:impact|effect|improvement)|",
        r"\bno\s+improvement|\bnot\s+(?:fixed|recovered)|\bregression\s+(?:increased|became\s+worse|got\s+worse)|",
        r"\bstill\s+has\s+[-+]?\d"
    ))
    .expect("static regex")
});

/// The numbers are too noisy to tell.
static UNSTEADY: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)\bnot\s+(?:be\s+)?able\s+to\s+get\s+stable|\bnot\s+stable\s+enough|stddev\s+is\s+too\s+big|",
        r"\btoo\s+(?:noisy|unstable)|\bno\s+value\s+from"
    ))
    .expect("static regex")
});

/// An offer, a plan or a condition: "we could rerun", "we will test",
/// "if you want us to": no run yet.
fn is_an_offer(s: &str) -> bool {
    static MODAL: LazyLock<Regex> = LazyLock::new(|| {
        crate::text::regex(r"(?i)\b(?:we|i)\s*(?:will|'ll|would|'d|could|can|shall|may|might|plan\s+to|are\s+going\s+to|am\s+going\s+to)\b")
            .expect("static regex")
    });
    static CONDITION: LazyLock<Regex> =
        LazyLock::new(|| crate::text::regex(r"(?i)^\W*(?:if|when|once|whether)\b|\bif\s+you\b").expect("static regex"));
    let negated = |m: regex::Match<'_>| {
        let after = s[m.end()..].trim_start();
        after.starts_with("'t") || after.starts_with("n't") || after.starts_with("not") || after.starts_with("no ")
    };
    MODAL.find_iter(s).any(|m| !negated(m)) || CONDITION.is_match(s)
}

/// Compiles a list of static patterns.
fn regexes<S: AsRef<str>>(patterns: impl IntoIterator<Item = S>) -> Vec<Regex> {
    patterns.into_iter().map(|r| crate::text::regex(r.as_ref()).expect("static regex")).collect()
}

/// "I cannot reproduce it", "we couldn't reproduce this regression", "I
/// haven't seen a single failure": the writer tried and the problem did
/// not show for them.
static CANNOT_REPRODUCE: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    regexes([
        concat!(
            r"(?i)\b(?:i|we)\b[^.?!]{0,120}?\b(?:can(?:'|no)?t|cannot|can\s+not|could(?:n'?t|\s+not)|",
            r"(?:was|am|'m|were|are|have\s+been|'ve\s+been|had\s+been)\s+(?:not\s+|un)able\s+to|",
            r"(?:have|has)n'?t\s+been\s+able\s+to|fail(?:ed)?\s+to|did(?:n'?t|\s+not)|haven'?t|have\s+not|",
            r"(?:do|does)(?:n'?t|\s+not))\b(?:\s+\w+)?\s+(?:(?:reproduc\w*|recreate|repro)\b|",
            r"(?:produce|see|seen|hit|trigger)\s+(?:it\b|(?:this|that|these|the|a|any|a\s+single)\s+(?:[\w-]+\s+){0,2}?",
            r"(?:issue|problem|error|warning|failure|regression|crash|bug|splat)s?\b))"
        ),
        concat!(
            r"(?i)\b(?:trying|tried|attempted)\s+(?:[\w,]+\s+){0,6}?(?:to\s+(?:reproduce|recreate|repro)|reproducing)\b",
            r"[^.?!]{0,80}?\b(?:unable|could\s*n[o']t|can\s*n[o']t|cannot|failed|no\s+luck|without\s+success)\b"
        ),
        r"(?i)^\W*(?:(?:same\s+here|unfortunately|sadly|so\s+far|also|but|hmm)[,\s]+)*(?:(?:could|can)(?:n?'t|\s*not)|cannot|unable\s+to|not\s+able\s+to)\s+(?:\w+\s+)?(?:reproduc\w*|recreate|repro)\b",
        concat!(
            r"(?i)\b(?:the|this|that)\s+(?:\w+\s+)?(?:issue|problem|bug|hang|failure|warning|crash|regression|splat)\s+",
            r"(?:did(?:n'?t|\s+not)|does(?:n'?t|\s+not)|never)\s+(?:reproduce|show\s+up|trigger)\b"
        ),
    ])
});

/// "I was able to reproduce it", "now I see the warnings": the writer
/// did reproduce it after all.
static DID_REPRODUCE: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)\b(?:was|were|am|are)\s+able\s+to\s+(?:\w+\s+)?reproduc|\bmanaged\s+to\s+reproduc|",
        r"\b(?:i|we)\s+(?:\w+\s+){0,2}?reproduced\s+(?:it|this|that|the|them)\b|\bnow\s+i\s+(?:can\s+)?see\s+the\b|",
        r"\b(?:got|found|used)\s+(?:a|an)\s+\S+\s+(?:machine|box|system|server)\s+to\s+reproduce|",
        r"\b(?:can|could)\s+(?:now\s+|easily\s+|finally\s+)reproduce"
    ))
    .expect("static regex")
});

/// "not able to reproduce the regression with the fix": a fix judged, not
/// the problem missed. "I haven't seen that be an issue", "I don't see a
/// problem with that" give an opinion; "no failures due to the new check"
/// speaks of another cause.
static WITH_A_FIX: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)\b(?:with|after\s+applying)\s+(?:the|my|this|your|our)\s+(?:\w+\s+)?(?:fix|patch)|",
        r"\bseen?\s+(?:this|that|it)\s+(?:be|being|as)\b|",
        r"\b(?:do|does)(?:n'?t|\s+not)\s+see\s+(?:a|any)\s+(?:real\s+)?(?:problem|issue)s?\b|",
        r"\b(?:failures?|problems?|issues?|errors?)\s+(?:due\s+to|caused\s+by)\b"
    ))
    .expect("static regex")
});

/// Whether a developer's reply says they tried and could not reproduce
/// the problem. Questions ("can't you reproduce it?") do not, nor a
/// reply that reproduces it after all.
pub fn says_it_cannot_reproduce(own: &str) -> bool {
    let sents = sentences(own);
    // Every pattern of [`CANNOT_REPRODUCE`] takes one of these words.
    const VERBS: &[&str] = &["repro", "recreate", "produce", "see", "hit", "trigger", "show"];
    let said = sents.iter().any(|s| {
        may_contain_ci(&s.text, VERBS)
            && !s.text.trim_end().ends_with('?')
            && !WITH_A_FIX.is_match(&s.text)
            && CANNOT_REPRODUCE.iter().any(|r| r.is_match(&s.text))
    });
    said && !sents.iter().any(|s| DID_REPRODUCE.is_match(&s.text))
}

/// Reads what an LKP reply's prose says it did and saw.
pub fn read(prose: &str) -> Reading {
    let mut r = Reading::default();
    for sent in sentences(prose) {
        let s = sent.text.as_str();
        if s.trim_end().ends_with('?') || is_an_offer(s) {
            continue;
        }
        if DID_NOT_RUN.is_match(s) {
            r.no_run = true;
            continue;
        }
        r.ran |= RAN.is_match(s) || says_it_ran_again(s);
        r.fix |= FIX_NAMED.is_match(s) || TESTED_A_COMMIT.is_match(s);
        if r.later_tree.is_none() {
            r.later_tree = still_present_in(s);
        }
        if FIX_PARTLY.is_match(s) {
            r.verdict = Some(Verdict::PartlyRecovered);
        } else if FIX_NOT_RECOVERED.is_match(s) {
            r.verdict = Some(Verdict::NotRecovered);
        } else if FIX_RECOVERED.is_match(s) {
            r.verdict = Some(Verdict::Recovered);
        }
        r.unsteady |= UNSTEADY.is_match(s);
        r.no_difference |= NO_DIFFERENCE.is_match(s);
        if NOT_REPRODUCED.is_match(s) {
            r.not_reproduced = true;
        } else if REPRODUCES.is_match(s) {
            r.reproduced = true;
        }
    }
    r
}

/// A commit tried: "we tested ... with 85975daeaa4d and its parent".
static TESTED_A_COMMIT: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)\b(?:tested|tried|applied|checked)\s+(?:\w+\s+){0,5}?(?:with\s+|on\s+)?[0-9a-f]{10,40}\b")
        .expect("static regex")
});

/// A run done again: rebuilt, rerun, more runs, another machine.
static RERUN: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
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
    crate::text::regex(r"(?i)\b(?:could|can|will|would|'ll|may|might|shall|to|please|if)\s+(?:\w+\s+)?$")
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
    regexes([
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
    ])
});

/// The reply says a fix took part: applied, on top, the fix column's note.
static FIX_NAMED: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?im)^\s*tested-by:|\b(?:applied|apply)\s+(?:it|them)\b|\bfix\s+patch(?:-?set|es)?\b|",
        r"\b(?:appl(?:y|ied|ying)|with|plus|on\s+top\s+of|upon)\s+(?:your|the|this|above|below|attached|previous|new|latest|",
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
static RESULT_REF: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)\battach(?:ed|ment)\b|\bresults?\b|\b(?:dmesg|kmsg)\b").expect("static regex")
});

/// The run never happened: the patch did not apply, build or boot.
static DID_NOT_RUN: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)\bfail(?:ed|s)?\s+to\s+(?:apply|compile|build|boot)|\b(?:build|compile|compilation)\s+fail|",
        r"\b(?:can\s*not|cannot|can't|could\s*n[o']t)\s+(?:be\s+)?(?:apply|applied|build|built|boot)|",
        r"\btried\s+to\s+apply\b.{0,100}\bbut\s+failed|\bfailed\s+to\s+compile|\bcannot\s+boot|can\s+boot\s+successfully"
    ))
    .expect("static regex")
});

/// A run done, not offered: `RERUN` with no "could", "will", "if" before it.
fn says_it_ran_again(prose: &str) -> bool {
    RERUN.find_iter(prose).any(|m| {
        let from = super::text::floor_boundary(prose, m.start().saturating_sub(40));
        !OFFER.is_match(&prose[from..m.start()])
    })
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

/// Whether the prose alone makes an LKP reply a retest result: what it
/// says it ran and saw, or a fix run whose result it attaches.
pub fn is_a_result(prose: &str, attachments: &[Attachment]) -> bool {
    let r = read(prose);
    let attached = RESULT_REF.is_match(prose) || !attachments.is_empty();
    if r.verdict.is_some() || r.later_tree.is_some() {
        return true;
    }
    if r.no_run && !(r.reproduced || r.not_reproduced) {
        return false;
    }
    r.ran && (r.reproduced || r.not_reproduced || r.no_difference || r.unsteady || r.fix && attached)
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
    /// The verdict is the prose's, no table or log judged it.
    pub by_prose: bool,
}

/// A column that is a later tree, not a fix: a release or linux-next tag.
fn is_a_tree_column(r: &Retest) -> bool {
    let id = r.fix.short.as_str();
    id.starts_with('v') && id[1..].starts_with(|c: char| c.is_ascii_digit()) || id.starts_with("next-")
}

/// The fix column the result is about: the first whose numbers agree
/// with what the prose right before its table says, else one whose verdict
/// the prose states, else the one marked as the fix (`<--- your patch`),
/// else the first judged.
fn column_judged(retests: &[Retest], prose_verdict: Option<Verdict>) -> Option<&Retest> {
    let judged = || retests.iter().filter(|r| r.verdict.is_some());
    judged()
        .find(|r| r.prose_verdict.is_some() && r.prose_verdict == r.verdict)
        .or_else(|| prose_verdict.and_then(|v| judged().rfind(|r| r.verdict == Some(v))))
        .or_else(|| judged().rfind(|r| r.fix.note.is_some()))
        .or_else(|| judged().next())
}

/// What a retest result found, strongest evidence first: a fix column's
/// numbers; without a fix, a later tree, a rerun that shows the
/// regression again or does not show it; a fix's verdict in words; an
/// attachment's table or dmesg; else the verdict is unknown, and why.
pub fn judge(e: &Evidence<'_>) -> Judged {
    let judged = |outcome| Judged { outcome, retests: Vec::new(), problems: Vec::new(), by_prose: false };
    let reading = read(e.prose);
    let prose_verdict = reading.verdict.or(e.prose_verdict);
    // A "fix" column that is a release or linux-next tag is a later tree
    // the problem is still seen in.
    if !e.retests.is_empty()
        && e.retests.iter().all(is_a_tree_column)
        && !reading.fix
        && let Some(r) = e.retests.iter().find(|r| r.verdict != Some(Verdict::Recovered))
    {
        return judged(Outcome::StillPresent { tree: r.fix.short.clone() });
    }
    if let Some(r) = column_judged(e.retests, prose_verdict) {
        return judged(Outcome::FixJudged {
            verdict: r.verdict.unwrap_or(Verdict::NotRecovered),
            fix: Some(column_fix(r)),
        });
    }
    let fix = reading.fix || e.prose_verdict.is_some() && reading.verdict.is_some();
    if e.retests.is_empty() && !fix {
        if let Some(tree) = reading.later_tree.clone() {
            return judged(Outcome::StillPresent { tree });
        }
        if let Some((metric, change_pct, headline)) = confirmed_by_table(e) {
            let mut j = judged(Outcome::RegressionConfirmed { metric: Some(metric.clone()), change_pct });
            if !headline {
                j.problems.push(format!("confirmed: table lacks the headline metric; judged by {metric}"));
            }
            return j;
        }
        if reading.verdict.is_none() {
            if reading.ran && reading.reproduced && !reading.not_reproduced {
                return judged(Outcome::RegressionConfirmed { metric: None, change_pct: None });
            }
            if reading.not_reproduced || reading.ran && reading.no_difference {
                return judged(Outcome::NotReproduced { note: None });
            }
        }
    }
    let verdict = reading
        .verdict
        .or_else(|| (fix && reading.no_difference).then_some(Verdict::NotRecovered))
        .or_else(|| (fix && reading.not_reproduced).then_some(Verdict::Recovered))
        .or_else(|| (fix && reading.reproduced).then_some(Verdict::NotRecovered))
        .or(e.prose_verdict);
    if let Some(v) = verdict {
        return Judged { by_prose: true, ..judged(Outcome::FixJudged { verdict: v, fix: named_fix(e) }) };
    }
    if reading.unsteady && e.retests.is_empty() {
        let reason = "the reply says its numbers are too noisy to tell".to_string();
        return Judged {
            problems: vec![format!("retest: no verdict: {reason}")],
            outcome: Outcome::ResultUnknown { fix: named_fix(e), reason },
            retests: Vec::new(),
            by_prose: false,
        };
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
                by_prose: false,
                problems: vec![format!("retest: judged by the table in the attached {name}")],
            };
        }
        if let Some(sig) = shown_signature(text, e.ctx.headline) {
            return Judged {
                outcome: Outcome::FixJudged { verdict: Verdict::NotRecovered, fix: named_fix(e) },
                retests: Vec::new(),
                by_prose: false,
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
        by_prose: false,
    }
}

/// A fix column's commit, full when the table gives it.
fn column_fix(r: &Retest) -> String {
    r.fix.sha.as_ref().map_or_else(|| r.fix.short.clone(), |s| s.to_string())
}

/// `* 0b1c2d3e4f5a6 fs/buffer: drop the lock   <--- your patch`: the
/// commit LKP marks as the fix in its `git log` excerpt.
static MARKED_FIX: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(
        r"(?im)^[*|\\/ ]*([0-9a-f]{7,40})\b.*<-+\s*(?:your|the|his|her|their|\w+'s)?\s*(?:fix|patch|diff)",
    )
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

    /// `test` holds for every `yes` and for no `no`.
    fn sorts(test: fn(&str) -> bool, yes: &[&str], no: &[&str]) {
        for t in yes {
            assert!(test(t), "{t}");
        }
        for t in no {
            assert!(!test(t), "{t}");
        }
    }

    #[test]
    fn a_rerun_after_wide_characters_is_read_without_panic() {
        // 40 bytes back from "reran" falls inside a three-byte character.
        let prose = format!("{}x we reran it", "\u{fffd}".repeat(20));
        assert!(says_it_ran_again(&prose));
    }

    #[test]
    fn confirmations_need_a_rerun_and_the_regression_seen_again() {
        let yes = [
            "We recompiled the kernels with option \"-falign-functions=32\", and the\nregression still exists:",
            "we double confirmed the latency_95th_ms data is stable in multi runs on our\ntest platform",
            "Test on Broadwell-EP also showed 35% regression:",
            "we rebuilt both kernels and reran parent and commit 12 times: the regression\nreproduces",
        ];
        let no = [
            // An offer to rerun is not a rerun.
            "in our tests, the result is quite stable.\nif you still have concern, we could rerun tests.",
            "I tried the same test on another server, cannot reproduce the issue again",
            "we tested the patch, and it recovers the regression",
        ];
        sorts(confirms_regression, &yes, &no);
    }

    /// What an LKP reply's prose says, read sentence by sentence, and the
    /// outcome it comes to without a table.
    #[test]
    fn prose_outcomes() {
        let ctx = Context::default();
        let outcome = |prose: &str| {
            judge(&Evidence {
                prose,
                tables: &[],
                retests: &[],
                prose_verdict: retest::prose_verdict(prose),
                report: None,
                ctx: &ctx,
                attachments: &[],
            })
            .outcome
            .kind_str()
        };
        let verdict = |prose: &str| {
            judge(&Evidence {
                prose,
                tables: &[],
                retests: &[],
                prose_verdict: retest::prose_verdict(prose),
                report: None,
                ctx: &ctx,
                attachments: &[],
            })
            .outcome
            .verdict()
        };
        let cases = [
            // Reruns without a fix.
            ("got it! we upgraded our test package and now the test can pass on this commit now.", "not-reproduced"),
            ("we've updated the xfstests, confirmed the test PASS now.", "not-reproduced"),
            (
                "I tried the same test on another server, cannot reproduce the issue again on abcdef1234 or mainline.",
                "not-reproduced",
            ),
            ("We recompiled the kernels with an option, and the regression still exists.", "confirmed"),
            ("the issue still exists on\n9388ec571cb1ad (tag: next-20250321, linux-next/master) Add", "still-present"),
            ("I tried to run with ext4 and xfs, seems not be able to get stable results.", "result-unknown"),
            // A fix judged in words.
            ("we applied the patch upon the bad commit and confirmed the issue gone now with the patch.", "fix-judged"),
            (
                "we tested the same tests with 85975daeaa4d and its parent, but found there is no performance diff.",
                "fix-judged",
            ),
            ("yes, this fixed the issue we reported. thanks", "fix-judged"),
        ];
        for (prose, want) in cases {
            assert_eq!(outcome(prose), want, "{prose}");
        }
        assert_eq!(verdict("we applied the patch and confirmed the issue gone now."), Some(Verdict::Recovered));
        assert_eq!(
            verdict("we tested 85975daeaa4d and its parent, there is no performance diff."),
            Some(Verdict::NotRecovered)
        );
        assert_eq!(verdict("no. in our tests, the following patch has little impact."), Some(Verdict::NotRecovered));
    }

    /// Offers, plans, questions and runs that never happened are no result.
    #[test]
    fn what_is_no_result() {
        let no = [
            "in our tests, the result is quite stable.\nif you still have concern, we could rerun tests.",
            "the patch failed to compile.",
            "I tried to apply below patch to either commit, but failed. could you guide how to apply this patch?",
            "thanks for the info, we will ignore this branch to avoid sending meaningless reports.",
            "The url has been recovered now.",
            "sorry for that. I attached dmesg for another run.",
        ];
        for t in no {
            assert!(!is_a_result(t, &[]), "{t}");
        }
        assert!(is_a_result("The patch [1] can also work well in bot's environment.", &[]));
        assert!(is_a_result("hi, we tested this branch and the results meet your expectation.", &[]));
    }

    /// A developer who tried and could not reproduce it, and look-alikes.
    #[test]
    fn developers_who_cannot_reproduce() {
        let yes = [
            "I was unable to reproduce this issue.",
            "Same here, couldn't reproduce locally.",
            "I've been trying for several days to reproduce this, and have been unable so far.",
            "I've just run 50 iterations here on my VMs and I haven't seen a single failure.",
            "With that I can't reproduce the reported failure.",
            "I still haven't reproduced the performance regression locally.",
            "Can't reproduce with cgroup create / populate / depopulate / rmdir stress tests either.",
            "Just did 100 boot test w/ 1s delay added as above but the problem didn't reproduce.",
        ];
        let no = [
            "Can't you reproduce it on your side?",
            "I am not able to reproduce the regression with the fix I have proposed.",
            "That is why I was not able to reproduce the issue. With binutils 2.39, now I see the warnings.",
            "I don't mind moving that, but don't see what the problem is here.",
            "It's possible, but I haven't seen that be an issue.",
            "So I don't see a problem here for write_boundary_block() specifically.",
            "The migration does succeed and I don't see any failures due to the new refcheck.",
            "From the log, the issue didn't happen on a flush request.",
            "I can reproduce it every time.",
        ];
        sorts(says_it_cannot_reproduce, &yes, &no);
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
