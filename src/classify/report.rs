//! Performance and functional (dmesg) report templates, every era.
//!
//! ```text
//! FYI, we noticed a -16.1% regression of fio.read_bw_MBps due to commit:      (2017-2023)
//! kernel test robot noticed a 67.7% regression of stress-ng.switch.ops_per_sec on:  (2023-)
//! FYI, we noticed the following commit (built with gcc-9):                     (functional)
//! kernel test robot noticed "BUG:unable_to_handle_page_fault_for_address" on:
//! ```
//!
//! [`extract`] reads a report out of any text: the body of a robot mail, or
//! the quoted part of a reply with its markers already removed.

use regex::Regex;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::LazyLock;

use super::fields::{self, COMPILER, CONFIG, PATCH_LINK, PATCH_SUBJECT, Tags, URL, cap1};
use super::num::{Num, parse_number};
use super::subject::SubjectFacts;
use super::table::{self, ChangeUnit, Table};
use super::text::{collapse, floor_boundary};
use crate::model::{CommitSha, Direction};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Template {
    Perf,
    Functional,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CommitRef {
    /// Full SHA when the text gives one, else null.
    pub sha: Option<CommitSha>,
    pub short: Option<String>,
    pub subject: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PatchRef {
    pub link: Option<String>,
    pub subject: Option<String>,
    /// The robot's branch with the patch applied (`url:` line).
    pub url: Option<String>,
    /// What the patch was applied to (`base:` line): a tree URL and branch,
    /// a tag or a SHA.
    pub base: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Headline {
    pub metric: String,
    /// Signed change from base to new as in the table.
    pub change_pct: Option<Num>,
    pub direction: Option<Direction>,
    pub base: Option<Num>,
    pub new: Option<Num>,
    pub base_stddev_pct: Option<Num>,
    pub new_stddev_pct: Option<Num>,
    /// The change as the prose (or subject) states it; unsigned in the
    /// current template.
    pub stated_change_pct: Option<Num>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Signature {
    pub signature: String,
    /// Occurrences on the parent commit and on the reported commit, when
    /// the report has a count table.
    pub base: Option<u32>,
    pub bad: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AlsoImpact {
    pub testcase: Option<String>,
    pub metric: Option<String>,
    pub change_pct: Option<Num>,
    pub direction: Option<Direction>,
    pub test_machine: Option<String>,
    pub parameters: Vec<String>,
}

/// `[still regression on linus/master 66edb901bf...]` and the functional
/// `[test failed on ...]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StillOn {
    pub status: String,
    pub tree: String,
    pub sha: String,
}

/// Everything a perf or functional report states.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReportFacts {
    pub template: Template,
    pub commit: Option<CommitRef>,
    pub tree: Option<String>,
    pub branch: Option<String>,
    pub tree_url: Option<String>,
    pub patch: Option<PatchRef>,
    pub testcase: Option<String>,
    pub test_machine: Option<String>,
    pub parameters: BTreeMap<String, String>,
    pub config: Option<String>,
    pub compiler: Option<String>,
    pub headline: Option<Headline>,
    pub signatures: Vec<Signature>,
    pub also_impacts: Vec<AlsoImpact>,
    pub still_on: Vec<StillOn>,
    pub tags: Tags,
    pub download_link: Option<String>,
    /// The comparison table of the reported test (base and new columns).
    pub table: Option<Table>,
}

static PERF_PROSE: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(
        r"(?i)(?:FYI,\s+we\s+noticed|test\s+r\w{2,5}\s+noticed)\s+an?\s+([+-]?)(\d+(?:\.\d+)?)%\s+(regression|improvement)\s+of\s+(\S+?):?\s+(?:due\s+to|on\b)",
    )
    .expect("static regex")
});
static FUNC_QUOTED: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r#"(?i)(?:test\s+r\w{2,5}|we)\s+noticed\s+"([^"]+)"\s+(?:on:?|due\s+to)"#).expect("static regex")
});
static FUNC_FOLLOWING: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)FYI,\s+we\s+noticed\s+the\s+following\s+commit\s*(?:\(built\s+with\s+([^)]+)\))?:?")
        .expect("static regex")
});
static FUNC_DUE: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)(?:FYI,\s+)?we\s+noticed\s+((?:\S+[ \t]+){0,5}?\S+)\s+due\s+to\s+commit\s*(?:\(built\s+with\s+([^)]+)\))?:?")
        .expect("static regex")
});
static COMMIT: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r#"(?i)\bcommit:\s+([0-9a-f]{12,40})\b(?:\s*\(\s*")?"#).expect("static regex"));
static GIT_URL_LINE: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"^\s*((?:https?|git)://\S+)(?:[ \t]+([^\s\[]+))?").expect("static regex"));
static TESTCASE: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?m)^\s*(?:in\s+)?testcase:\s+(\S+)").expect("static regex"));
static MACHINE: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?m)^\s*(?:on\s+)?test\s+machine:\s+(.+?)\s*$").expect("static regex"));
static PARAMS_HEAD: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?m)^\s*(?:with\s+following\s+parameters|parameters):[ \t]*").expect("static regex")
});
static PARAM_PAIR: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"([A-Za-z_][\w.-]*):\s+(\S+)").expect("static regex"));
static STILL: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(
        r"\[((?:still\s+regression|test\s+failed|still\s+failed|regression)\s+on)\s+(\S+)\s+([0-9a-f]{7,40})\s*\]",
    )
    .expect("static regex")
});
static DOWNLOAD: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)materials\s+to\s+reproduce\s+are\s+available\s+at:\s*(\S+)").expect("static regex")
});
static ALSO: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)also\s+has\s+significant\s+impact\s+on\s+the\s+following\s+tests").expect("static regex")
});
static ALSO_CHANGE: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)^(\S+?):\s+(\S+)\s+([+-]?\d+(?:\.\d+)?)%\s+(regression|improvement)")
        .expect("static regex")
});
static PARAMS_HEADER_LINE: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?m)^\s*([a-z_0-9]+(?:/[a-z_0-9]+)+):[ \t]*\n?[ \t]*([^\n]+)").expect("static regex")
});

/// Where a report's prose was found, and what it says.
struct Prose {
    template: Template,
    at: usize,
    metric: Option<String>,
    stated_change: Option<(Num, bool)>,
    direction: Option<Direction>,
    signature: Option<String>,
    /// The signature came in quotes: take it whole, blanks and all.
    quoted_signature: bool,
    compiler: Option<String>,
}

fn find_prose(text: &str) -> Option<Prose> {
    let perf = PERF_PROSE.captures(text);
    let func = [&*FUNC_QUOTED, &*FUNC_DUE, &*FUNC_FOLLOWING]
        .into_iter()
        .filter_map(|r| r.captures(text))
        .min_by_key(|c| c.get(0).map_or(usize::MAX, |m| m.start()));
    let perf_at = perf.as_ref().and_then(|c| c.get(0)).map_or(usize::MAX, |m| m.start());
    let func_at = func.as_ref().and_then(|c| c.get(0)).map_or(usize::MAX, |m| m.start());
    if let Some(c) = perf.filter(|_| perf_at <= func_at) {
        let whole = c.get(0)?;
        let sign = c.get(1).map_or("", |m| m.as_str());
        let n = c.get(2).and_then(|m| parse_number(m.as_str()))?;
        let n = if sign == "-" { Num(-n.0) } else { n };
        return Some(Prose {
            template: Template::Perf,
            at: whole.start(),
            metric: c.get(4).map(|m| m.as_str().trim_end_matches(':').to_string()),
            stated_change: Some((n, !sign.is_empty())),
            direction: c.get(3).and_then(|m| Direction::parse(m.as_str())),
            signature: None,
            quoted_signature: false,
            compiler: None,
        });
    }
    let c = func?;
    let whole = c.get(0)?;
    let src = whole.as_str();
    let quoted_signature = src.contains('"');
    let (signature, compiler) = if quoted_signature {
        (c.get(1).map(|m| collapse(m.as_str())), None)
    } else if src.to_ascii_lowercase().contains("the following commit") {
        (None, c.get(1).map(|m| m.as_str().trim().to_string()))
    } else {
        (c.get(1).map(|m| m.as_str().to_string()), c.get(2).map(|m| m.as_str().trim().to_string()))
    };
    Some(Prose {
        template: Template::Functional,
        at: whole.start(),
        metric: None,
        stated_change: None,
        direction: None,
        signature,
        quoted_signature,
        compiler,
    })
}

/// True when `text` carries a perf or functional report template.
pub fn has_template(text: &str) -> bool {
    PERF_PROSE.is_match(text) || FUNC_QUOTED.is_match(text) || FUNC_DUE.is_match(text) || FUNC_FOLLOWING.is_match(text)
}

/// Maps a git URL to the tree name the robot uses in subject tags.
pub fn tree_name(url: &str) -> String {
    let path = url.trim_end_matches('/').trim_end_matches(".git");
    let mut parts = path.rsplit('/');
    let repo = parts.next().unwrap_or_default();
    let owner = parts.next().unwrap_or_default();
    match (owner, repo) {
        ("torvalds", "linux") => "linus".to_string(),
        ("next", "linux-next") => "linux-next".to_string(),
        ("", r) => r.to_string(),
        (o, r) => format!("{o}/{r}"),
    }
}

fn parameters(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Some(m) = PARAMS_HEAD.find(text) else { return out };
    let rest = &text[m.end()..];
    let mut seen_any = false;
    for line in rest.split('\n') {
        let t = line.trim();
        if t.is_empty() {
            if seen_any {
                break;
            }
            continue;
        }
        if t.starts_with("test-description:") || t.starts_with("test-url:") || t.starts_with("on test machine:") {
            break;
        }
        let mut pairs = 0;
        for c in PARAM_PAIR.captures_iter(t) {
            let (Some(k), Some(v)) = (c.get(1), c.get(2)) else { continue };
            if matches!(k.as_str(), "test-description" | "test-url" | "https" | "http") {
                break;
            }
            out.insert(k.as_str().to_string(), v.as_str().to_string());
            pairs += 1;
        }
        if pairs == 0 {
            break;
        }
        seen_any = true;
    }
    out
}

/// `compiler/cpufreq_governor/kconfig/...:` followed by its `/`-joined
/// values: the only place old reports name the compiler and kconfig.
fn params_header(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(c) = PARAMS_HEADER_LINE.captures(text) {
        let keys: Vec<&str> = c.get(1).map_or("", |m| m.as_str()).split('/').collect();
        let vals: Vec<&str> = c.get(2).map_or("", |m| m.as_str().trim()).split('/').collect();
        if keys.len() == vals.len() {
            for (k, v) in keys.into_iter().zip(vals) {
                out.insert(k.to_string(), v.to_string());
            }
        }
    }
    out
}

fn also_impacts(text: &str) -> Vec<AlsoImpact> {
    let Some(m) = ALSO.find(text) else { return Vec::new() };
    let rest = &text[m.end()..];
    let mut block = String::new();
    let mut started = false;
    for line in rest.split('\n') {
        let t = line.trim();
        if t.starts_with('|') || t.starts_with('+') {
            started = true;
            block.push_str(t);
            block.push('\n');
        } else if started && !t.is_empty() {
            break;
        } else if started && t.is_empty() {
            // Blank lines between boxes of the old template.
            continue;
        } else if !t.is_empty() && !t.ends_with(':') {
            break;
        }
    }
    let mut out: Vec<AlsoImpact> = Vec::new();
    let mut last_key = String::new();
    for cells in table::box_rows(&block) {
        let [key, value] = [cells.first(), cells.get(1)].map(|c| c.cloned().unwrap_or_default());
        let key = if key.is_empty() { last_key.clone() } else { key };
        last_key.clone_from(&key);
        match key.as_str() {
            "testcase: change" => {
                let c = ALSO_CHANGE.captures(&value);
                out.push(AlsoImpact {
                    testcase: c.as_ref().and_then(|c| c.get(1)).map(|m| m.as_str().to_string()),
                    metric: c.as_ref().and_then(|c| c.get(2)).map(|m| m.as_str().to_string()),
                    change_pct: c.as_ref().and_then(|c| c.get(3)).and_then(|m| parse_number(m.as_str())),
                    direction: c.as_ref().and_then(|c| c.get(4)).and_then(|m| Direction::parse(m.as_str())),
                    test_machine: None,
                    parameters: Vec::new(),
                });
            }
            "test machine" => {
                if let Some(last) = out.last_mut() {
                    last.test_machine = Some(value);
                }
            }
            "test parameters" => {
                if let Some(last) = out.last_mut()
                    && !value.is_empty()
                {
                    last.parameters.push(value);
                }
            }
            _ => {}
        }
    }
    out
}

fn signatures(text: &str) -> Vec<Signature> {
    let mut out = Vec::new();
    for cells in table::box_rows(text) {
        if cells.len() < 3 {
            continue;
        }
        let name = &cells[0];
        if name.is_empty() || name.contains(": change") || name.starts_with("test ") {
            continue;
        }
        let counts: Vec<Option<u32>> = cells[1..].iter().map(|c| c.parse().ok()).collect();
        if !cells[1..].iter().all(|c| c.is_empty() || c.parse::<u32>().is_ok()) {
            continue;
        }
        if matches!(name.as_str(), "boot_successes" | "boot_failures") {
            continue;
        }
        out.push(Signature {
            signature: name.clone(),
            base: counts.first().copied().flatten(),
            bad: counts.last().copied().flatten(),
        });
    }
    out
}

/// A dmesg or test signature: `BUG:kernel_NULL_pointer_dereference,address`,
/// `xfstests.xfs.281.fail`; never a word of prose.
fn looks_like_signature(w: &str) -> bool {
    w.len() > 3 && (w.contains(':') || w.contains('.') || w.contains('_')) && !w.ends_with(',')
}

/// Extracts a perf or functional report from `text`. `subject` is the
/// mail's subject, used for the tree tag and as a fallback for what the
/// prose does not say.
pub fn extract(text: &str, subject: &SubjectFacts) -> Option<ReportFacts> {
    let prose = find_prose(text)?;
    Some(extract_with(text, &prose, subject))
}

/// For a robot mail whose body lacks the opening sentence: the subject
/// (`sha: metric change` or `sha: signature`) stands in for it.
pub fn extract_by_subject(text: &str, subject: &SubjectFacts) -> Option<ReportFacts> {
    subject.short_sha.as_ref()?;
    subject.what.as_ref()?;
    let prose = Prose {
        template: if subject.metric.is_some() { Template::Perf } else { Template::Functional },
        at: 0,
        metric: subject.metric.clone(),
        stated_change: subject.change_pct.map(|n| (n, subject.signed)),
        direction: subject.direction,
        signature: None,
        quoted_signature: false,
        compiler: None,
    };
    Some(extract_with(text, &prose, subject))
}

fn extract_with(text: &str, prose: &Prose, subject: &SubjectFacts) -> ReportFacts {
    // Everything a report states comes after its opening sentence; what is
    // before it belongs to the reply that quotes it.
    let body = &text[prose.at..];
    let (commit, commit_end) = reported_commit(body, subject);
    let (mut tree, mut branch, mut tree_url) = tested_tree(body, commit_end, subject);

    // Everything before the comparison table's own `commit:` list; the
    // header fields never come after it.
    let header_end = body.find("Details are as below").unwrap_or_else(|| floor_boundary(body, 20_000));
    let header = &body[..header_end];

    let patch = tested_patch(header, commit.as_ref());
    if patch.is_some() && subject.tree.is_none() {
        // A report on a patch is not on a tree; its base is in `patch`.
        tree = None;
        branch = None;
        tree_url = None;
    }

    let hdr_params = params_header(body);
    let compiler = cap1(&COMPILER, header).or(prose.compiler.clone()).or_else(|| hdr_params.get("compiler").cloned());
    let config = cap1(&CONFIG, header).or_else(|| hdr_params.get("kconfig").cloned());

    let metric = prose.metric.clone().or_else(|| subject.metric.clone());
    let report_table = report_table(table::find_tables(body), metric.as_deref(), commit.as_ref());
    let headline = match prose.template {
        Template::Perf => metric.map(|metric| headline(&metric, report_table.as_ref(), prose)),
        Template::Functional => None,
    };
    let signatures =
        if prose.template == Template::Functional { failure_signatures(header, prose, subject) } else { Vec::new() };

    ReportFacts {
        template: prose.template,
        commit,
        tree,
        branch,
        tree_url,
        patch,
        testcase: cap1(&TESTCASE, header).or_else(|| hdr_params.get("testcase").cloned()),
        test_machine: cap1(&MACHINE, header),
        parameters: parameters(header),
        config,
        compiler,
        headline,
        signatures,
        also_impacts: also_impacts(header),
        still_on: still_on(header),
        tags: fields::tags(header),
        download_link: cap1(&DOWNLOAD, body),
        table: report_table,
    }
}

/// The commit the report blames, and where its `commit:` line (with the
/// quoted subject) ends; else the subject's short SHA.
fn reported_commit(body: &str, subject: &SubjectFacts) -> (Option<CommitRef>, Option<usize>) {
    // The report's own `commit:` line carries the full SHA; the table's
    // `commit:` list below it only abbreviations.
    let commit_cap = COMMIT
        .captures_iter(body)
        .find(|c| c.get(1).is_some_and(|m| m.as_str().len() == 40))
        .or_else(|| COMMIT.captures(body));
    // `("subject")`: the subject may wrap and may itself hold quotes
    // (`Revert "..."`), so it ends at the first `")` within 400 bytes.
    let mut commit_end = commit_cap.as_ref().and_then(|c| c.get(0)).map(|m| m.end());
    let commit = commit_cap.as_ref().and_then(|c| {
        let sha = CommitSha::new(c.get(1)?.as_str())?;
        let whole = c.get(0)?;
        let subject = if whole.as_str().ends_with('"') {
            let rest = &body[whole.end()..floor_boundary(body, whole.end() + 400)];
            rest.find("\")").map(|i| {
                commit_end = Some(whole.end() + i + 2);
                collapse(&rest[..i])
            })
        } else {
            None
        };
        let subject = subject.filter(|s| !s.is_empty());
        Some(CommitRef { short: Some(sha.short().to_string()), sha: sha.is_full().then_some(sha.clone()), subject })
    });
    let commit = commit
        .or_else(|| subject.short_sha.as_ref().map(|s| CommitRef { sha: None, short: Some(s.clone()), subject: None }));
    (commit, commit_end)
}

/// The tree, branch and tree URL tested: the subject's tag, else the git
/// URL line after the `commit:` line.
fn tested_tree(
    body: &str,
    commit_end: Option<usize>,
    subject: &SubjectFacts,
) -> (Option<String>, Option<String>, Option<String>) {
    let mut tree = subject.tree.clone();
    let mut branch = subject.branch.clone();
    let mut tree_url = None;
    if let Some(end) = commit_end
        && let Some(u) = GIT_URL_LINE.captures(&body[end..])
    {
        let url = u.get(1).map(|m| m.as_str().to_string());
        if let Some(url) = url.filter(|u| !u.contains("/commits/")) {
            if tree.is_none() {
                tree = Some(tree_name(&url));
                branch = u.get(2).map(|m| m.as_str().to_string());
            }
            tree_url = Some(url);
        }
    }
    (tree, branch, tree_url)
}

/// The patch under review a report is on (link, subject, URL, base), if
/// the header names one.
fn tested_patch(header: &str, commit: Option<&CommitRef>) -> Option<PatchRef> {
    let patch_link = cap1(&PATCH_LINK, header);
    let url = cap1(&URL, header);
    let base = fields::base(header);
    let mut patch_subject = cap1(&PATCH_SUBJECT, header);
    if patch_subject.is_none() && (patch_link.is_some() || url.is_some()) {
        patch_subject = commit.and_then(|c| c.subject.clone()).filter(|s| s.starts_with('['));
    }
    (patch_link.is_some() || url.is_some() || patch_subject.is_some()).then_some(PatchRef {
        link: patch_link,
        subject: patch_subject,
        url,
        base,
    })
}

/// The report's table: the one with the headline metric (a report may
/// show a perf-c2c excerpt first), else the one on the reported commit,
/// else the first.
fn report_table(tables: Vec<Table>, metric: Option<&str>, commit: Option<&CommitRef>) -> Option<Table> {
    let short = commit.and_then(|c| c.short.as_deref());
    let on_commit = |t: &Table| {
        short.is_some_and(|s| t.columns.iter().any(|col| col.starts_with(s) || s.starts_with(col.as_str())))
    };
    let at = tables
        .iter()
        .position(|t| metric.is_some_and(|m| t.row(m).is_some()))
        .or_else(|| tables.iter().position(on_commit))
        .or_else(|| (!tables.is_empty()).then_some(0))?;
    tables.into_iter().nth(at)
}

/// A functional report's failure signatures: the header's list, else
/// what the opening sentence or the subject names.
fn failure_signatures(header: &str, prose: &Prose, subject: &SubjectFacts) -> Vec<Signature> {
    let mut sigs = signatures(header);
    if sigs.is_empty() {
        // "We noticed a.fail b.fail due to commit" and subjects naming
        // several failures list them separated by blanks.
        let sig = |s: &str| Signature { signature: s.to_string(), base: None, bad: None };
        let split = |n: &str| -> Option<Vec<Signature>> {
            let words: Vec<&str> = n.split_whitespace().filter(|w| !matches!(*w, "and" | "&" | ",")).collect();
            (!words.is_empty() && words.iter().all(|w| looks_like_signature(w)))
                .then(|| words.iter().map(|w| sig(w)).collect())
        };
        match (&prose.signature, &subject.what) {
            // `noticed "Kernel panic - not syncing: Fatal exception" on:`
            (Some(p), _) if prose.quoted_signature => sigs.push(sig(p)),
            (Some(p), _) if split(p).is_some() => sigs.extend(split(p).unwrap_or_default()),
            (_, Some(w)) if subject.metric.is_none() => sigs.extend(split(w).unwrap_or_else(|| vec![sig(w)])),
            _ => {}
        }
    }
    sigs
}

/// The "[still regression on TREE SHA]" (or "[test failed on ...]") lines
/// of a report sent again: where LKP saw it since.
fn still_on(header: &str) -> Vec<StillOn> {
    STILL
        .captures_iter(header)
        .filter_map(|c| {
            Some(StillOn {
                status: collapse(c.get(1)?.as_str()),
                tree: c.get(2)?.as_str().to_string(),
                sha: c.get(3)?.as_str().to_string(),
            })
        })
        .collect()
}

fn headline(metric: &str, table: Option<&Table>, prose: &Prose) -> Headline {
    let stated = prose.stated_change;
    let mut h = Headline {
        metric: metric.to_string(),
        change_pct: stated.filter(|(_, signed)| *signed).map(|(n, _)| n),
        direction: prose.direction,
        base: None,
        new: None,
        base_stddev_pct: None,
        new_stddev_pct: None,
        stated_change_pct: stated.map(|(n, _)| n),
    };
    let Some(row) = table.and_then(|t| t.row(metric)) else { return h };
    let (Some(base), Some(new)) = (row.cells.first(), row.cells.get(1)) else { return h };
    h.base = Some(base.value);
    h.new = Some(new.value);
    h.base_stddev_pct = base.stddev_pct;
    h.new_stddev_pct = new.stddev_pct;
    h.change_pct = match new.change {
        Some(c) if c.unit == ChangeUnit::Percent => Some(c.value),
        _ if base.value.0 != 0.0 => Some(Num(((new.value.0 - base.value.0) / base.value.0 * 1000.0).round() / 10.0)),
        _ => h.change_pct,
    };
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_names() {
        assert_eq!(tree_name("https://git.kernel.org/cgit/linux/kernel/git/torvalds/linux.git"), "linus");
        assert_eq!(tree_name("https://git.kernel.org/cgit/linux/kernel/git/next/linux-next.git"), "linux-next");
        assert_eq!(tree_name("https://git.kernel.org/pub/scm/linux/kernel/git/tytso/ext4.git"), "tytso/ext4");
    }

    #[test]
    fn flattened_parameters() {
        let p = parameters("with following parameters: runtime: 300s size: 512G test: anon-cow-rand-mt\ntest-url: x");
        assert_eq!(p.get("size").map(String::as_str), Some("512G"));
        assert_eq!(p.len(), 3);
    }

    #[test]
    fn params_header_maps_keys_to_values() {
        let h = params_header("====\ncompiler/kconfig/testcase:\n  gcc-14/x86_64-rhel-9.4/stress-ng\n");
        assert_eq!(h.get("kconfig").map(String::as_str), Some("x86_64-rhel-9.4"));
    }
}
