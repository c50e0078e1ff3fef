//! What a commit of a `[[trees]]` tree does to cases: the tree's side of
//! the lifecycle (mail's is [`super::lifecycle`]).
//!
//! A commit is tied to cases only through what it names, never guessed:
//!
//! - a `Closes:` or `Link:` trailer naming a tracked report (any archive
//!   URL `classify::fix::lore_message_id` reads: `lore.kernel.org/r/`,
//!   `lore.kernel.org/<list>/`, `lkml.kernel.org/r/`, `patch.msgid.link/`) is
//!   the fix merged into the tree; a link to any other message (a patch,
//!   a discussion) moves nothing by itself;
//! - a commit titled as a fix patch posted in a case (its `t:` title key)
//!   is that fix merged;
//! - a commit titled as the patch a report on a patch under review was
//!   on (a case with no tree), by that patch's author when the report
//!   says who that is, is the reported patch merged as that commit;
//! - `Revert "<culprit subject>"` or `This reverts commit <culprit>` is
//!   the culprit reverted.
//!
//! A fix merged into a tree that `resolves` also resolves the case. Every
//! event carries the tree, the commit (`tree_commit`, no message), who
//! committed it and the first tag that contains it.
//!
//! Pure: the engine reads the commits (`source::tree`), looks up what
//! [`TreeCommit::lookups`] asks and hands the answers in as
//! [`TreeCandidates`].

use super::keys::{patch_key, same_commit};
use super::lifecycle::FixPatch;
use crate::case::{CaseId, CaseView, Event, EventKind};
use crate::classify::lifecycle::{Signal, revert};
use crate::model::MessageId;

/// One commit as threading sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeCommit {
    /// The full hex id.
    pub sha: String,
    /// Committer time.
    pub at: i64,
    pub subject: String,
    pub author: Option<String>,
    pub committer: Option<String>,
    /// Message-IDs of its `Closes:`/`Link:` trailers.
    pub links: Vec<MessageId>,
    /// Its subject's patch key (`thread::keys::patch_key`).
    pub title: Option<String>,
    /// A revert: the subject and the commits it reverts.
    pub reverts: Option<(Option<String>, Vec<String>)>,
}

/// What the engine looks up for commits.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeLookups {
    pub links: Vec<MessageId>,
    pub titles: Vec<String>,
    pub culprit_subjects: Vec<String>,
    pub culprit_commits: Vec<String>,
}

/// Cases the engine found for a commit's lookups (it may return more
/// than match; [`events`] checks each).
#[derive(Clone, Debug, Default)]
pub struct TreeCandidates {
    /// Cases holding a message a link names.
    pub by_link: Vec<CaseView>,
    /// Fix patches titled as the commit, with their cases.
    pub fixes: Vec<FixPatch>,
    /// Cases whose report is on a patch with the commit's title.
    pub by_patch: Vec<CaseView>,
    /// Cases whose culprit a revert names.
    pub by_culprit: Vec<CaseView>,
}

/// A `[[trees]]` tree as threading needs it.
#[derive(Clone, Copy, Debug)]
pub struct Tree<'a> {
    pub name: &'a str,
    pub resolves: bool,
}

impl TreeCommit {
    /// Reads a commit message: its subject is the first paragraph, its
    /// trailers any `Closes:`/`Link:` line.
    pub fn read(sha: String, at: i64, author: Option<String>, committer: Option<String>, message: &str) -> TreeCommit {
        let subject = message.trim_start().split("\n\n").next().unwrap_or("");
        let subject = subject.split_whitespace().collect::<Vec<_>>().join(" ");
        let reverts = match revert(&subject, message) {
            Some(Signal::Revert { subject, commits }) => Some((subject, commits)),
            _ => None,
        };
        TreeCommit {
            sha,
            at,
            links: super::keys::link_ids(message),
            title: if reverts.is_some() { None } else { patch_key(&subject) },
            subject,
            author,
            committer,
            reverts,
        }
    }

    /// True when the commit names anything a case could be tied through:
    /// links, a title, a revert. (Every commit but a merge has a title.)
    pub fn names_anything(&self) -> bool {
        !self.links.is_empty() || self.title.is_some() || self.reverts.is_some()
    }

    pub fn lookups(&self) -> TreeLookups {
        let mut l = TreeLookups {
            links: self.links.clone(),
            titles: self.title.iter().cloned().collect(),
            ..TreeLookups::default()
        };
        if let Some((subject, commits)) = &self.reverts {
            l.culprit_subjects.extend(subject.clone());
            l.culprit_commits.extend(commits.iter().filter(|c| c.len() >= 7).cloned());
        }
        l
    }
}

/// The events the commit causes in the tree, by case; `tag` is the first
/// tag that contains it.
pub fn events(tree: Tree<'_>, c: &TreeCommit, tag: Option<&str>, cand: &TreeCandidates) -> Vec<(CaseId, Event)> {
    let mut out: Vec<(CaseId, Event)> = Vec::new();
    let mut push = |case: CaseId, e: Event| {
        if !out.iter().any(|(k, x)| *k == case && x.kind == e.kind) {
            out.push((case, e));
        }
    };
    let event = |kind: EventKind, by: &Option<String>, note: String| {
        let mut e = Event::new(c.at, kind, None);
        e.tree = Some(tree.name.to_string());
        e.tree_commit = Some(c.sha.clone());
        e.fix_commit = (kind != EventKind::Reverted).then(|| c.sha.clone());
        e.tag = tag.map(str::to_string);
        e.by = by.clone();
        e.note = Some(note);
        e
    };
    if let Some((subject, commits)) = &c.reverts {
        for v in &cand.by_culprit {
            if super::lifecycle::reverts(v, subject.as_deref(), commits) {
                push(v.id, event(EventKind::Reverted, &c.author, c.subject.clone()));
            }
        }
        // A revert merges no fix.
        return out;
    }
    let mut merged: Vec<(CaseId, String)> = Vec::new();
    for v in cand.by_link.iter().filter(|v| c.links.contains(&v.facts.report_message_id)) {
        merged.push((v.id, c.subject.clone()));
    }
    for f in cand.fixes.iter().filter(|f| c.title.is_some() && patch_key(&f.subject) == c.title) {
        merged.extend(f.cases.iter().map(|case| (*case, c.subject.clone())));
    }
    for v in cand.by_patch.iter().filter(|v| lands(c, v)) {
        let short = c.sha.get(..12).unwrap_or(&c.sha);
        merged.push((v.id, format!("the reported patch, merged as {short} (\"{}\")", c.subject)));
    }
    for (case, note) in merged {
        push(case, event(EventKind::FixMerged, &c.committer, note.clone()));
        if tree.resolves {
            push(case, event(EventKind::Resolved, &c.committer, note));
        }
    }
    out
}

/// Whether the commit is the patch under review case `v` reports on,
/// landed: a report on a patch (it names no tree), the same title, not
/// the reported commit itself, by the patch's author when the report
/// says who was sent it.
fn lands(c: &TreeCommit, v: &CaseView) -> bool {
    let f = &v.facts;
    let on_a_patch = f.tree.is_none() && f.branch.is_none();
    let author = match &c.author {
        Some(a) if !f.report_to.is_empty() => f.report_to.contains(a),
        _ => true,
    };
    on_a_patch
        && c.title.is_some()
        && f.patch_key == c.title
        && !f.commit.as_deref().is_some_and(|x| same_commit(x, &c.sha))
        && author
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::{CaseFacts, CaseKind, CaseState};

    fn commit(message: &str) -> TreeCommit {
        TreeCommit::read(
            "3f1e2d4c5b6a79880123456789abcdef01234567".into(),
            1_715_000_000,
            Some("dev@example.org".into()),
            Some("maintainer@kernel.org".into()),
            message,
        )
    }

    fn case(id: i64, report: &str) -> CaseView {
        let mut f = CaseFacts::new(
            CaseKind::PerfRegression,
            "[linus:master] [mm] 01b9da291c: stress-ng.switch.ops_per_sec -67.7% regression".into(),
            MessageId::new(report).unwrap_or_else(|| panic!("{report}")),
            1_714_000_000,
        );
        f.tree = Some("linus".into());
        f.branch = Some("master".into());
        f.commit = Some("01b9da291c4969354807b52956f4aae1f41b4924".into());
        f.commit_subject = Some("mm: memcontrol: convert objcg to be per-memcg per-node type".into());
        f.patch_key = patch_key("mm: memcontrol: convert objcg to be per-memcg per-node type");
        CaseView { id: CaseId(id), state: CaseState::Reported, facts: f }
    }

    /// The commit messages of `fixtures/trees/`, built in (no I/O here).
    fn fixture(name: &str) -> String {
        match name {
            "closes-report.txt" => include_str!("../../fixtures/trees/closes-report.txt"),
            "link-to-discussion.txt" => include_str!("../../fixtures/trees/link-to-discussion.txt"),
            "revert-culprit.txt" => include_str!("../../fixtures/trees/revert-culprit.txt"),
            "reported-patch-lands.txt" => include_str!("../../fixtures/trees/reported-patch-lands.txt"),
            _ => panic!("no fixture {name}"),
        }
        .to_string()
    }

    const MAINLINE: Tree<'static> = Tree { name: "mainline", resolves: true };
    const NEXT: Tree<'static> = Tree { name: "next", resolves: false };

    /// A fix with `Closes:` naming the report: merged, and resolved in a
    /// tree that resolves, with the tree, commit, tag and committer.
    #[test]
    fn closes_a_tracked_report() {
        let c = commit(&fixture("closes-report.txt"));
        assert_eq!(c.subject, "mm: memcontrol: restore the per-node objcg fast path");
        let l = c.lookups();
        assert!(l.links.iter().any(|m| m.as_str() == "202605121641.b6a60cb0-lkp@intel.com"), "{l:?}");
        let cand =
            TreeCandidates { by_link: vec![case(7, "202605121641.b6a60cb0-lkp@intel.com")], ..Default::default() };
        let ev = events(MAINLINE, &c, Some("v6.9-rc3"), &cand);
        let kinds: Vec<_> = ev.iter().map(|(k, e)| (k.0, e.kind)).collect();
        assert_eq!(kinds, [(7, EventKind::FixMerged), (7, EventKind::Resolved)]);
        let e = &ev[0].1;
        assert_eq!((e.tree.as_deref(), e.tag.as_deref()), (Some("mainline"), Some("v6.9-rc3")));
        assert_eq!(e.tree_commit.as_deref(), Some(c.sha.as_str()));
        assert_eq!((e.message_id.as_ref(), e.by.as_deref()), (None, Some("maintainer@kernel.org")));
        assert_eq!(e.at, 1_715_000_000);
        let ev = events(NEXT, &c, None, &cand);
        assert_eq!(ev.iter().map(|(_, e)| e.kind).collect::<Vec<_>>(), [EventKind::FixMerged]);
    }

    /// Every archive's URL form names the report.
    #[test]
    fn link_forms() {
        for url in [
            "https://lore.kernel.org/r/202605121641.b6a60cb0-lkp@intel.com",
            "https://lore.kernel.org/oe-lkp/202605121641.b6a60cb0-lkp@intel.com/",
            "http://lkml.kernel.org/r/202605121641.b6a60cb0-lkp@intel.com",
            "https://patch.msgid.link/202605121641.b6a60cb0-lkp@intel.com",
            "https://lore.kernel.org/all/202605121641.b6a60cb0-lkp%40intel.com/T/#u",
        ] {
            let c = commit(&format!("mm: fix it properly this time\n\nBody.\n\nCloses: {url}\n"));
            assert_eq!(
                c.links.iter().map(MessageId::as_str).collect::<Vec<_>>(),
                ["202605121641.b6a60cb0-lkp@intel.com"],
                "{url}"
            );
        }
    }

    /// A link to a message that is not the case's report (the fix's own
    /// submission, a reply in the thread) moves nothing.
    #[test]
    fn a_link_to_another_message_moves_nothing() {
        let c = commit(&fixture("link-to-discussion.txt"));
        assert!(!c.links.is_empty());
        let cand =
            TreeCandidates { by_link: vec![case(7, "202605121641.b6a60cb0-lkp@intel.com")], ..Default::default() };
        assert!(events(MAINLINE, &c, None, &cand).is_empty());
    }

    /// A revert of the culprit, by subject or by its SHA.
    #[test]
    fn reverts_of_the_culprit() {
        let c = commit(&fixture("revert-culprit.txt"));
        let l = c.lookups();
        assert_eq!(l.culprit_subjects, ["mm: memcontrol: convert objcg to be per-memcg per-node type"]);
        assert_eq!(l.culprit_commits, ["01b9da291c4969354807b52956f4aae1f41b4924"]);
        assert!(l.titles.is_empty());
        let cand = TreeCandidates { by_culprit: vec![case(3, "a@b")], ..Default::default() };
        let ev = events(MAINLINE, &c, Some("v6.10-rc1"), &cand);
        assert_eq!(ev.len(), 1);
        assert_eq!((ev[0].0, ev[0].1.kind), (CaseId(3), EventKind::Reverted));
        assert_eq!((ev[0].1.by.as_deref(), ev[0].1.fix_commit.as_ref()), (Some("dev@example.org"), None));
        // Another culprit's revert does not.
        let mut other = case(4, "c@d");
        other.facts.commit = Some("aaaaaaaaaa".into());
        other.facts.commit_subject = Some("mm: something else entirely".into());
        assert!(
            events(MAINLINE, &c, None, &TreeCandidates { by_culprit: vec![other], ..Default::default() }).is_empty()
        );
    }

    /// A fix patch's title landing is that fix merged.
    #[test]
    fn a_fix_patch_lands_under_its_title() {
        let c = commit("mm: memcontrol: restore the per-node objcg fast path\n\nSigned-off-by: A <a@b>\n");
        let fix = FixPatch {
            message_id: MessageId::new("fix@example.org").unwrap_or_else(|| panic!()),
            subject: "[PATCH v2] mm: memcontrol: restore the per-node objcg fast path".into(),
            from: Some("dev@example.org".into()),
            cases: vec![CaseId(5), CaseId(6)],
        };
        let ev = events(NEXT, &c, None, &TreeCandidates { fixes: vec![fix], ..Default::default() });
        assert_eq!(ev.iter().map(|(k, _)| k.0).collect::<Vec<_>>(), [5, 6]);
    }

    /// A report on a patch under review: the patch landing under its
    /// title (by its author) is recorded as merged as that commit; a
    /// report on a tree's commit is not (that commit landing elsewhere
    /// fixes nothing), nor is another author's commit of that title.
    #[test]
    fn a_reported_patch_lands() {
        let c = commit(&fixture("reported-patch-lands.txt"));
        let mut v = case(9, "r@b");
        v.facts.tree = None;
        v.facts.branch = None;
        v.facts.commit = Some("7d2c3a1b90".into());
        v.facts.patch_key = patch_key("[PATCH v3 2/4] block: pass the queue limits to the zone helpers");
        v.facts.report_to = vec!["dev@example.org".into(), "linux-block@vger.kernel.org".into()];
        let cand = TreeCandidates { by_patch: vec![v.clone()], ..Default::default() };
        let ev = events(NEXT, &c, None, &cand);
        assert_eq!(ev.len(), 1, "{ev:?}");
        assert!(ev[0].1.note.as_deref().is_some_and(|n| n.contains("merged as 3f1e2d4c5b6a")), "{ev:?}");
        let mut stranger = c.clone();
        stranger.author = Some("someone@else.org".into());
        assert!(events(NEXT, &stranger, None, &cand).is_empty());
        let mut on_tree = v;
        on_tree.facts.tree = Some("linux-next".into());
        assert!(events(NEXT, &c, None, &TreeCandidates { by_patch: vec![on_tree], ..Default::default() }).is_empty());
    }

    /// Merges name nothing by their title; a folded subject is one line.
    #[test]
    fn subjects_and_merges() {
        let m = commit(
            "Merge tag 'mm-hotfixes-stable-2024-05-10' of git://git.kernel.org/pub/scm/linux/kernel/git/akpm/mm\n\nPull misc fixes.\n",
        );
        assert!(m.title.is_none() && m.links.is_empty() && !m.names_anything());
        let f = commit("mm: a subject that\n goes on\n\nbody\n");
        assert_eq!(f.subject, "mm: a subject that goes on");
    }
}
