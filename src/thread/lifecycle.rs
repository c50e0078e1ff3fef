//! The lifecycle rung: what a signal the classifier read
//! (`classify::lifecycle::Signal`) or a later version of a patch does to
//! cases outside its thread, and which cases those are.
//!
//! A signal is tied to cases only through what it names, never guessed:
//!
//! - an applied notice, through the patch it answers (the nearest
//!   ancestor that is a patch and not a reply): that fix patch, or, when
//!   it answers a series' cover letter, the fix patches of that series;
//!   b4's and patchwork-bot's listings and "only patches 1/5 and 2/5" say
//!   which of them; the fix's own author applying it moves nothing;
//! - a commit notification, a stable backport, through the fix's title
//!   (`patch_key`) or a `Closes:`/`Link:` naming the report;
//! - a pull request's merge notice, through the pull request it answers:
//!   a fix whose title its shortlog lists; merged into mainline it also
//!   resolves the case;
//! - a revert, through the culprit: its subject (`Revert "<subject>"`) or
//!   commit (`This reverts commit <sha>`);
//! - a later version of a patch (`[PATCH vN]`, N above the reported one),
//!   posted after the report by the patch's author (an address the report
//!   was sent to), supersedes a report on that patch.
//!
//! Pure: the engine looks up what [`LifecycleLookups`] asks and hands the
//! answers in as [`Candidates`] fields.

use std::sync::LazyLock;

use regex::Regex;

use super::keys::{self, patch_key, same_commit};
use super::{Candidates, Incoming};
use crate::case::{CaseId, CaseView, Event, EventKind};
use crate::classify::lifecycle::{Applied, Signal};
use crate::mail::subject_is_reply;
use crate::model::MessageId;

/// The tree a merge into resolves a case.
pub const MAINLINE: &str = "torvalds/linux.git";

/// A fix patch a lifecycle signal reached, with the cases it is in.
#[derive(Clone, Debug, PartialEq)]
pub struct FixPatch {
    pub message_id: MessageId,
    pub subject: String,
    pub from: Option<String>,
    pub cases: Vec<CaseId>,
}

/// What the engine must look up for a message's lifecycle.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LifecycleLookups {
    /// An applied notice: find the patch it answers among its ancestors.
    pub answered: bool,
    /// Fix patches by title key (`t:` keys).
    pub titles: Vec<String>,
    /// A merge notice: the pull request it answers, whose `pt:` keys name
    /// the fixes it carries.
    pub pull: Option<MessageId>,
    /// A revert: the culprit's subject and commits.
    pub culprit_subjects: Vec<String>,
    pub culprit_commits: Vec<String>,
    /// A later version of a patch: its patch key.
    pub patch: Option<String>,
}

impl LifecycleLookups {
    pub fn is_empty(&self) -> bool {
        *self == LifecycleLookups::default()
    }
}

/// The patch tag of a subject (`[PATCH v3 2/5]`, `[RFC PATCH net-next
/// v2]`, patchwork's `[v5,01/68]`): its version (1 when unnumbered) and
/// its place in the series.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PatchTag {
    pub version: u32,
    pub number: Option<u32>,
    pub total: Option<u32>,
}

pub fn patch_tag(subject: &str) -> Option<PatchTag> {
    // ASCII word boundaries: a Unicode one makes the fast engine give up
    // on any non-ASCII subject.
    static TAG: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)\[([^\]]*(?-u:\b)PATCH(?:v\d+)?(?-u:\b)[^\]]*)\]").expect("static regex"));
    static VERSION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)^(?:patch)?v(\d{1,3})$").expect("static regex"));
    static PLACE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(\d{1,4})/(\d{1,4})$").expect("static regex"));
    // The group is the match without its brackets: found by the fast
    // engine, where asking for the group needs a slower one.
    let m = TAG.find(subject)?.as_str();
    let inner = &m[1..m.len() - 1];
    let mut tag = PatchTag { version: 1, ..PatchTag::default() };
    for t in inner.split([' ', ',', '\t']).filter(|t| !t.is_empty()) {
        if let Some(c) = VERSION.captures(t) {
            tag.version = c.get(1).and_then(|m| m.as_str().parse().ok()).unwrap_or(1);
        } else if let Some(c) = PLACE.captures(t) {
            tag.number = c.get(1).and_then(|m| m.as_str().parse().ok());
            tag.total = c.get(2).and_then(|m| m.as_str().parse().ok());
        }
    }
    Some(tag)
}

/// A patch mail that is not a reply: a patch or a cover letter.
pub fn is_patch(subject: &str) -> bool {
    crate::classify::fix::is_patch_subject(subject) && !subject_is_reply(subject)
}

/// A later version of a patch: its patch key and version, for a patch
/// mail numbered v2 or above.
pub fn new_version(subject: &str) -> Option<(String, u32)> {
    if !is_patch(subject) {
        return None;
    }
    let tag = patch_tag(subject)?;
    if tag.version < 2 || tag.number == Some(0) {
        return None;
    }
    Some((patch_key(subject)?, tag.version))
}

impl Incoming {
    /// The lifecycle signal the message carries, if any.
    pub fn signal(&self) -> Option<&Signal> {
        self.classified.lifecycle.as_ref()
    }

    /// Whether the message may move a case outside its thread, so must be
    /// kept and threaded again as what it names arrives (a pull request
    /// only offers its titles).
    pub fn has_lifecycle(&self) -> bool {
        self.new_version.is_some() || self.signal().is_some_and(|s| !matches!(s, Signal::PullRequest { .. }))
    }

    /// What the engine must look up for the message's lifecycle.
    pub fn lifecycle_lookups(&self) -> LifecycleLookups {
        let mut l = LifecycleLookups::default();
        match self.signal() {
            Some(Signal::Applied(_)) => l.answered = true,
            Some(Signal::Committed(c)) => l.titles.extend(patch_key(&c.title)),
            Some(Signal::Stable { title, .. }) => l.titles.extend(patch_key(title)),
            Some(Signal::PullMerged { .. }) => l.pull = self.ancestors.first().cloned(),
            Some(Signal::Revert { subject, commits }) => {
                l.culprit_subjects.extend(subject.clone());
                l.culprit_commits.extend(commits.iter().filter(|c| c.len() >= 7).cloned());
            }
            Some(Signal::PullRequest { .. }) | None => {}
        }
        l.patch = self.new_version.as_ref().map(|(k, _)| k.clone());
        l
    }
}

/// The keys a message offers to lifecycle mail outside its thread: a fix
/// patch its title (`t:`, a `patch_key`) and, numbered in a series, the
/// cover letter it answers (`r:`); a pull request the titles of its
/// shortlog (`pt:`); a robot report the HyperKitty id of its Message-ID
/// (`h:`), which lists.01.org links to its thread or message name.
pub fn offered(m: &Incoming) -> Vec<String> {
    let mut out = Vec::new();
    if m.kind().is_report() {
        out.push(keys::key_hyperkitty(&m.message_id.hyperkitty_id()));
    }
    if m.classified.fix.is_some() && is_patch(&m.subject) {
        out.extend(patch_key(&m.subject).map(|k| keys::key_title(&k)));
        let numbered = patch_tag(&m.subject).is_some_and(|t| t.number.is_some_and(|n| n > 0));
        if numbered && let Some(parent) = m.ancestors.first() {
            out.push(keys::key_cover(parent));
        }
    }
    if let Some(Signal::PullRequest { titles }) = m.signal() {
        out.extend(titles.iter().filter_map(|t| patch_key(t)).map(|k| format!("pt:{k}")));
    }
    out.sort();
    out.dedup();
    out
}

/// Whether an applied notice covers the fix patch titled `subject`: the
/// patch a b4 or patchwork-bot listing names (and applied), the numbers
/// "only patches 1 and 2" gives, all but the last, or the patch or series
/// it answers.
fn covers(a: &Applied, subject: &str) -> bool {
    let tag = patch_tag(subject).unwrap_or_default();
    if !a.listed.is_empty() {
        let key = patch_key(subject);
        return a.listed.iter().any(|l| l.applied && key.is_some() && patch_key(&l.title) == key);
    }
    if !a.only.is_empty() {
        return tag.number.is_some_and(|n| a.only.contains(&n));
    }
    if a.all_but_last {
        return tag.number.is_none() || tag.number != tag.total;
    }
    true
}

/// The commit an applied notice gives for the fix: its listing's, else
/// the one it names.
fn applied_commit(a: &Applied, subject: &str) -> Option<String> {
    let key = patch_key(subject);
    a.listed
        .iter()
        .find(|l| key.is_some() && patch_key(&l.title) == key)
        .and_then(|l| l.commit.clone())
        .or(a.commit.clone())
}

/// The lifecycle events the message causes, by case. Cases its links
/// name (`Closes:` of a commit notification or backport) count as its
/// fixes' cases.
pub fn events(m: &Incoming, c: &Candidates, at: i64) -> Vec<(CaseId, Event)> {
    let id = Some(m.message_id.clone());
    let mut out: Vec<(CaseId, Event)> = Vec::new();
    let mut push = |case: CaseId, e: Event| {
        if !out.iter().any(|(k, x)| *k == case && x.kind == e.kind) {
            out.push((case, e));
        }
    };
    let event =
        |kind: EventKind, tree: Option<String>, by: Option<String>, commit: Option<String>, note: Option<String>| {
            let mut e = Event::new(at, kind, id.clone());
            e.tree = tree;
            e.by = by;
            e.fix_commit = commit;
            e.note = note;
            e
        };
    let linked: Vec<CaseId> = if m.links_anything() { c.by_link.iter().map(|v| v.id).collect() } else { Vec::new() };
    match m.signal() {
        Some(Signal::Applied(a)) => {
            for f in &c.fixes {
                // The fix's own author "applying" it is a test or a plan.
                if m.from.is_some() && f.from == m.from || !covers(a, &f.subject) {
                    continue;
                }
                let e = event(
                    EventKind::FixApplied,
                    a.tree.clone(),
                    m.from.clone(),
                    applied_commit(a, &f.subject),
                    Some(a.phrase.clone()),
                );
                for case in &f.cases {
                    push(*case, e.clone());
                }
            }
        }
        Some(Signal::Committed(cm)) => {
            let kind = if cm.queued { EventKind::FixApplied } else { EventKind::FixCommitted };
            let e = event(kind, cm.tree.clone(), None, cm.commit.clone(), Some(cm.title.clone()));
            for case in c.fixes.iter().flat_map(|f| &f.cases).chain(&linked) {
                push(*case, e.clone());
            }
        }
        Some(Signal::Stable { tree, title, upstream }) => {
            let e = event(EventKind::FixMerged, Some(tree.clone()), None, upstream.clone(), Some(title.clone()));
            for case in c.fixes.iter().flat_map(|f| &f.cases).chain(&linked) {
                push(*case, e.clone());
            }
        }
        Some(Signal::PullMerged { tree, commit }) => {
            let note = commit.as_ref().map(|sha| format!("merged as {sha}"));
            let merged = event(EventKind::FixMerged, Some(tree.clone()), None, None, note);
            for case in c.fixes.iter().flat_map(|f| &f.cases) {
                push(*case, merged.clone());
                if tree == MAINLINE {
                    let mut r = merged.clone();
                    r.kind = EventKind::Resolved;
                    push(*case, r);
                }
            }
        }
        Some(Signal::Revert { subject, commits }) => {
            for v in &c.by_culprit {
                if reverts(v, subject.as_deref(), commits) {
                    push(v.id, event(EventKind::Reverted, None, m.from.clone(), None, Some(m.subject.clone())));
                }
            }
        }
        Some(Signal::PullRequest { .. }) | None => {}
    }
    if let Some((key, version)) = &m.new_version {
        for v in c.by_patch.iter().filter(|v| supersedes(m, v, key, *version, at)) {
            push(v.id, event(EventKind::Superseded, None, m.from.clone(), None, Some(m.subject.clone())));
        }
    }
    out
}

/// Whether a revert of the commit titled `subject` and of `commits`
/// reverts case `v`'s culprit.
pub fn reverts(v: &CaseView, subject: Option<&str>, commits: &[String]) -> bool {
    let by_subject = subject.is_some() && v.facts.commit_subject.as_deref() == subject;
    let by_commit = v.facts.commit.as_deref().is_some_and(|cc| commits.iter().any(|x| same_commit(x, cc)));
    by_subject || by_commit
}

/// Whether the patch `m` (version `version` of the patch `key`) replaces
/// the patch case `v` reports on: the same patch, a higher version than
/// the reported one, by its author, posted after the report.
fn supersedes(m: &Incoming, v: &CaseView, key: &str, version: u32, at: i64) -> bool {
    let f = &v.facts;
    // The title's tag last: a regular expression, the rest comparisons.
    f.patch_key.as_deref() == Some(key)
        && at > f.opened_at
        && m.from.as_ref().is_some_and(|from| f.report_to.contains(from))
        && version > patch_tag(&f.title).map_or(1, |t| t.version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_tags() {
        let t = |s| patch_tag(s).unwrap();
        assert_eq!(t("[PATCH v3 2/5] mm: x"), PatchTag { version: 3, number: Some(2), total: Some(5) });
        assert_eq!(t("[RFC PATCH net-next v2] mm: x"), PatchTag { version: 2, number: None, total: None });
        assert_eq!(t("[PATCH] mm: x"), PatchTag { version: 1, number: None, total: None });
        assert_eq!(t("[PATCH V4 06/10] seqlock: x").version, 4);
        assert_eq!(t("[PATCHv5 6/7] block: x"), PatchTag { version: 5, number: Some(6), total: Some(7) });
        assert_eq!(t("[net-next] [PATCH V2 1/2] net: x"), PatchTag { version: 2, number: Some(1), total: Some(2) });
        assert_eq!(t("Re: ünïcode [patch v7] x [PATCH v9]").version, 7);
        assert_eq!(patch_tag("[PATCHES] x [dispatch v2]"), None);
        assert_eq!(patch_tag("Re: mm: x"), None);
        assert_eq!(new_version("[PATCH v2 1/3] mm: manage the memory").map(|(_, v)| v), Some(2));
        assert_eq!(new_version("[PATCH v2 0/3] mm: manage the memory"), None);
        assert_eq!(new_version("Re: [PATCH v2 1/3] mm: manage the memory"), None);
        assert_eq!(new_version("[PATCH 1/3] mm: manage the memory"), None);
    }
}
