//! Build reports (errors and warnings, on a branch or on a patch) and
//! branch build summaries.
//!
//! ```text
//! tree:   https://git.kernel.org/.../nvdimm.git libnvdimm-for-next        (on a branch)
//! head:   3b6047778c09037615e7b919c922081ef1a37a7f
//! commit: fee8be32c5bab110c34884dfc4a68dd0105d2607 [5/15] libnvdimm: add dax_dev sync flag
//!
//! [auto build test ERROR on linus/master]                                 (on a patch)
//! url:    https://github.com/0day-ci/linux/commits/...
//! patch link:    https://lore.kernel.org/r/...
//!
//! All errors (new ones prefixed by >>):
//! >> drivers/s390//block/dcssblk.c:681:22: error: too few arguments ...
//! ```

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

use super::fields::{self, COMPILER, CONFIG, PATCH_LINK, PATCH_SUBJECT, Tags, URL, cap1};
use super::report::{CommitRef, PatchRef, tree_name};
use super::subject::SubjectFacts;
use crate::model::CommitSha;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    Error,
    Warning,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BuildFacts {
    pub level: Option<Level>,
    pub tree: Option<String>,
    pub branch: Option<String>,
    pub tree_url: Option<String>,
    pub head: Option<String>,
    pub commit: Option<CommitRef>,
    pub patch: Option<PatchRef>,
    /// `linus/master` in `[auto build test ERROR on linus/master]`.
    pub tested_on: Vec<String>,
    pub config: Option<String>,
    pub compiler: Option<String>,
    /// The new diagnostics (the `>>` lines), at most [`MAX_ITEMS`].
    pub items: Vec<String>,
    pub tags: Tags,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BuildSummary {
    pub status: Option<String>,
    pub tree: Option<String>,
    pub branch: Option<String>,
    pub tree_url: Option<String>,
    pub head: Option<String>,
    pub head_subject: Option<String>,
    pub configs_tested: Option<u32>,
    pub configs_skipped: Option<u32>,
}

pub const MAX_ITEMS: usize = 50;

/// Where a line sits while reading the diagnostics list.
#[derive(Clone, Copy)]
enum List {
    None,
    Marked,
    Plain,
}

static OPENING: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)(test\s+r\w{2,5}\s+noticed\s+the\s+following\s+build\s+(errors|warnings)",
        r"|(?:Thank\s+you\s+for\s+the|I\s+love\s+your)\s+patch!\s+(Yet|Perhaps)\s+something\s+to\s+improve",
        r"|\[auto\s+build\s+test\s+(ERROR|WARNING)\s+on",
        r"|All\s+(errors|warnings|error/warnings)\s+\(new\s+ones\s+prefixed\s+by\s+>>\))"
    ))
    .expect("static regex")
});
static TREE: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?m)^\s*tree:\s+(\S+)(?:[ \t]+(\S+))?").expect("static regex"));
static HEAD: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?m)^\s*head:\s+([0-9a-f]{7,40})").expect("static regex"));
static BRANCH_COMMIT: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?m)^\s*commit:\s+([0-9a-f]{7,40})(?:\s+(\[\d+/\d+\])?\s*(.*?))?\s*$").expect("static regex")
});
static TESTED_ON: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)\[(?:auto|also)\s+build\s+test\s+(?:ERROR|WARNING)\s+on\s+([^\]]+)\]")
        .expect("static regex")
});
static SUMMARY_TREE: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?m)^\s*tree/branch:\s+(\S+)(?:[ \t]+(\S+))?").expect("static regex"));
static SUMMARY_HEAD: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?m)^\s*branch\s+HEAD:\s+([0-9a-f]{7,40})(?:[ \t]+(.+?))?\s*$").expect("static regex")
});
static CONFIGS_TESTED: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?m)^\s*configs\s+tested:\s+(\d+)").expect("static regex"));
static CONFIGS_SKIPPED: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?m)^\s*configs\s+skipped:\s+(\d+)").expect("static regex"));

/// True when `text` carries a build report template.
pub fn has_template(text: &str) -> bool {
    OPENING.is_match(text) || (TREE.is_match(text) && HEAD.is_match(text) && BRANCH_COMMIT.is_match(text))
}

fn level_of(opening: &str, subject_what: &str) -> Option<Level> {
    let o = opening.to_ascii_lowercase();
    if o.contains("error") || o.contains("yet something") {
        return Some(Level::Error);
    }
    if o.contains("warning") || o.contains("perhaps something") {
        return Some(Level::Warning);
    }
    let s = subject_what.to_ascii_lowercase();
    if s.contains("error") || s.contains("undefined reference") || s.contains("multiple definition") {
        Some(Level::Error)
    } else if s.contains("warning")
        || s.contains("warn:")
        || s.contains("sparse:")
        || s.contains("note:")
        || s.contains("included more than once")
    {
        Some(Level::Warning)
    } else {
        None
    }
}

/// Extracts a build report. `mail_subject` is the raw subject, whose text
/// after the tags is the patch subject for reports sent as a reply.
pub fn extract(text: &str, subject: &SubjectFacts, mail_subject: &str) -> Option<BuildFacts> {
    let opening = OPENING.find(text);
    let tree_cap = TREE.captures(text);
    if opening.is_none() && tree_cap.is_none() {
        return None;
    }
    let start = opening
        .map_or(0, |m| m.start().min(tree_cap.as_ref().and_then(|c| c.get(0)).map_or(usize::MAX, |m| m.start())));
    let body = &text[start.min(text.len())..];
    // Header fields come before the diagnostics; the `vim +` source dump
    // after them must not be searched.
    let header_end = body.find("\nvim +").unwrap_or(body.len());
    let header = &body[..header_end];

    let tree_url = tree_cap.as_ref().and_then(|c| c.get(1)).map(|m| m.as_str().to_string());
    let mut tree = subject.tree.clone().or_else(|| tree_url.as_deref().map(tree_name));
    let mut branch =
        subject.branch.clone().or_else(|| tree_cap.as_ref().and_then(|c| c.get(2)).map(|m| m.as_str().to_string()));

    let commit = BRANCH_COMMIT.captures(header).and_then(|c| {
        let sha = CommitSha::new(c.get(1)?.as_str())?;
        let subj = c.get(3).map(|m| m.as_str().trim().to_string()).filter(|s| !s.is_empty());
        Some(CommitRef {
            short: Some(sha.short().to_string()),
            sha: sha.is_full().then_some(sha.clone()),
            subject: subj,
        })
    });

    let url = cap1(&URL, header);
    let link = cap1(&PATCH_LINK, header);
    let base = fields::base(header);
    let patch = (url.is_some() || link.is_some()).then(|| {
        let stated = cap1(&PATCH_SUBJECT, header);
        let from_subject = super::subject::strip_reply_prefixes(mail_subject).to_string();
        PatchRef { link, subject: stated.or_else(|| (!from_subject.is_empty()).then_some(from_subject)), url, base }
    });
    if patch.is_some() && tree_cap.is_none() && subject.tree.is_none() {
        tree = None;
        branch = None;
    }

    let level = level_of(opening.map_or("", |m| m.as_str()), subject.what.as_deref().unwrap_or(mail_subject));
    let mut items = Vec::new();
    // "All errors (new ones prefixed by >>):", "sparse warnings: (new ones
    // prefixed by >>)": the `>>` lines below are the new diagnostics.
    // smatch lists them plainly under "New smatch warnings:".
    let mut list = List::None;
    for line in header.split('\n') {
        let t = line.trim();
        if t.contains("prefixed by >>") {
            list = List::Marked;
            continue;
        }
        if t.ends_with("warnings:") && t.split_whitespace().count() <= 3 && !t.contains("prefixed") {
            list = List::Plain;
            continue;
        }
        let item = match list {
            List::Marked => line.strip_prefix(">>").map(str::trim),
            List::Plain if t.is_empty() => {
                list = List::None;
                None
            }
            List::Plain => Some(t),
            List::None => None,
        };
        if let Some(item) = item.filter(|i| !i.is_empty() && items.len() < MAX_ITEMS) {
            items.push(item.to_string());
        }
    }

    Some(BuildFacts {
        level,
        tree,
        branch,
        tree_url,
        head: cap1(&HEAD, header),
        commit,
        patch,
        tested_on: TESTED_ON
            .captures_iter(header)
            .filter_map(|c| c.get(1))
            .flat_map(|m| m.as_str().split_whitespace().map(str::to_string))
            .collect(),
        config: cap1(&CONFIG, header),
        compiler: cap1(&COMPILER, header),
        items,
        tags: fields::tags(header),
    })
}

/// A branch build summary: `[tree:branch] BUILD SUCCESS|REGRESSION sha`.
pub fn extract_summary(text: &str, subject: &SubjectFacts) -> Option<BuildSummary> {
    let tree_cap = SUMMARY_TREE.captures(text);
    if subject.build_status.is_none() && tree_cap.is_none() {
        return None;
    }
    let tree_url = tree_cap.as_ref().and_then(|c| c.get(1)).map(|m| m.as_str().to_string());
    let head_cap = SUMMARY_HEAD.captures(text);
    Some(BuildSummary {
        status: subject.build_status.clone(),
        tree: subject.tree.clone().or_else(|| tree_url.as_deref().map(tree_name)),
        branch: subject
            .branch
            .clone()
            .or_else(|| tree_cap.as_ref().and_then(|c| c.get(2)).map(|m| m.as_str().to_string())),
        tree_url,
        head: head_cap
            .as_ref()
            .and_then(|c| c.get(1))
            .map(|m| m.as_str().to_string())
            .or_else(|| subject.head_sha.clone()),
        head_subject: head_cap.as_ref().and_then(|c| c.get(2)).map(|m| m.as_str().to_string()),
        configs_tested: cap1(&CONFIGS_TESTED, text).and_then(|n| n.parse().ok()),
        configs_skipped: cap1(&CONFIGS_SKIPPED, text).and_then(|n| n.parse().ok()),
    })
}
