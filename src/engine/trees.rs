//! A pass over a `[[trees]]` tree: its new commits read
//! (`source::tree`), what each means to cases decided (`thread::tree`),
//! and the events stored and their cases replayed in one transaction
//! with the tree's checkpoint, as a batch of mail is.
//!
//! Which commits are read:
//!
//! - the first pass reads the whole history, but records only what a
//!   commit ties to a tracked case (a report it closes, a fix patch or
//!   reported patch it lands, a culprit it reverts): adding a tree that
//!   fixed half the open cases years ago closes them, and nothing else
//!   happens. Commit messages only, sifted through the keys the store
//!   tracks ([`TreeKeys`]) before any case is read.
//! - later passes read the commits after the tip last read (from the
//!   merge base after a force-push, whose dropped commits' events are
//!   forgotten) and, when reports or fix patches were stored since the
//!   last pass, the commits since the earliest of them (a week's margin
//!   for clock skew): so a tree read before the mail that names its
//!   commits arrived still gets to them, and the outcome does not depend
//!   on which came first.
//! - events recorded without a tag are given the first tag that contains
//!   their commit once one does (the next release candidate).

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use super::Engine;
use super::threading::{culprit_cases, fix_patches};
use crate::case::CaseId;
use crate::source::SourceError;
use crate::source::tree::{Position, Tree};
use crate::store::{StoreError, TreeKeys, Tx};
use crate::thread::keys::{self, commit_prefix};
use crate::thread::tree::{self as tree_events, TreeCandidates, TreeCommit, TreeLookups};

/// A `[[trees]]` tree as a run follows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeSpec {
    pub name: String,
    pub path: PathBuf,
    pub branch: String,
    pub resolves: bool,
}

impl TreeSpec {
    /// How its checkpoint is named.
    pub fn source(&self) -> String {
        format!("tree:{}", self.name)
    }
}

/// What a pass over a tree did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreePass {
    /// Commits read.
    pub commits: u64,
    /// Events recorded (and forgotten, after a force-push).
    pub events: u64,
    pub forgotten: u64,
    /// The branch had been rewritten since the last pass.
    pub rewritten: bool,
}

/// What the git side of a pass found.
struct Read {
    tip: gix::ObjectId,
    commits: Vec<TreeCommit>,
    read: u64,
    rewritten: bool,
    /// Commits with events that are no longer on the branch.
    dropped: Vec<String>,
    tags: HashMap<String, String>,
}

/// Whether a commit names anything the store tracks.
fn sifted(c: &TreeCommit, k: &TreeKeys) -> bool {
    c.links.iter().any(|m| k.reports.contains(m.as_str()))
        || c.title.as_ref().is_some_and(|t| k.titles.contains(t))
        || c.reverts.as_ref().is_some_and(|(subject, commits)| {
            subject.as_ref().is_some_and(|s| k.culprit_subjects.contains(s))
                || commits.iter().filter_map(|x| commit_prefix(x)).any(|p| k.culprit_prefixes.contains(&p))
        })
}

/// The git side of a pass (blocking): the tip, the commits to look at,
/// what a rewrite dropped, and the tags of what needs one.
fn read(
    spec: &TreeSpec,
    pos: &Position,
    since: Option<i64>,
    keys: &TreeKeys,
    known: &[(String, bool)],
) -> Result<Read, SourceError> {
    let tree = Tree::open(&spec.name, &spec.path)?;
    let tip = tree.tip(&spec.branch)?;
    let mut commits = Vec::new();
    let walk = tree.walk(tip, pos.tip, since, &mut |raw| {
        let c = TreeCommit::read(raw.id.to_string(), raw.time, raw.author, raw.committer, &raw.message);
        if c.names_anything() && sifted(&c, keys) {
            commits.push(c);
        }
    })?;
    let mut dropped = Vec::new();
    if walk.rewritten {
        let ids: Vec<gix::ObjectId> =
            known.iter().filter_map(|(c, _)| gix::ObjectId::from_hex(c.as_bytes()).ok()).collect();
        dropped = tree.not_on(tip, &ids)?.iter().map(ToString::to_string).collect();
    }
    // Tags for what was found, and for what was recorded before any tag
    // had it.
    let mut want: Vec<(gix::ObjectId, i64)> =
        commits.iter().filter_map(|c| Some((gix::ObjectId::from_hex(c.sha.as_bytes()).ok()?, c.at))).collect();
    let untagged = known.iter().filter(|(c, tagged)| !tagged && !dropped.contains(c));
    for (c, _) in untagged {
        if let Ok(id) = gix::ObjectId::from_hex(c.as_bytes())
            && let Some(time) = tree.commit_time(id)
        {
            want.push((id, time));
        }
    }
    let tags = tree.first_tags(&want)?.into_iter().map(|(id, t)| (id.to_string(), t)).collect();
    Ok(Read { tip, commits, read: walk.read, rewritten: walk.rewritten, dropped, tags })
}

/// The cases a commit's lookups name.
async fn candidates(tx: &mut Tx<'_>, l: &TreeLookups) -> Result<TreeCandidates, StoreError> {
    let mut c = TreeCandidates::default();
    if !l.links.is_empty() {
        c.by_link = tx.cases_of_messages(&l.links).await?;
    }
    if !l.titles.is_empty() {
        let titles: Vec<String> = l.titles.iter().map(|t| keys::key_title(t)).collect();
        let refs: Vec<&str> = titles.iter().map(String::as_str).collect();
        let fixes = tx.messages_with_keys(&refs).await?;
        if !fixes.is_empty() {
            c.fixes = fix_patches(tx, fixes).await?;
        }
        let refs: Vec<&str> = l.titles.iter().map(String::as_str).collect();
        c.by_patch = tx.cases_by_patch_key(&refs).await?;
    }
    if !l.culprit_subjects.is_empty() || !l.culprit_commits.is_empty() {
        c.by_culprit = culprit_cases(tx, &l.culprit_subjects, &l.culprit_commits).await?;
    }
    Ok(c)
}

impl Engine {
    /// One pass over a tree at `now`. A tree that cannot be read (not a
    /// repository, no such branch, a broken history) is the inner error,
    /// naming the tree, and nothing is stored; store failures are the
    /// outer one.
    pub async fn follow_tree(
        &mut self,
        spec: &TreeSpec,
        now: i64,
    ) -> Result<Result<TreePass, SourceError>, StoreError> {
        self.flush().await?;
        let source = spec.source();
        let pos = Position::parse(self.store.checkpoint(&source).await?.as_deref());
        // What the store tracks, read before the walk (the write lock is
        // not held while git is read); mail stored meanwhile is looked
        // back for next pass, by its fetch time.
        let mut tx = self.store.begin().await?;
        let keys = tx.tree_keys().await?;
        let since = match (pos.tip, pos.read_at) {
            (Some(_), Some(t)) => tx.tracked_since(t - 60).await?,
            _ => None,
        };
        let known = tx.tree_commits(&spec.name).await?;
        tx.commit().await?;
        let (s, p) = (spec.clone(), pos.clone());
        let r = match tokio::task::spawn_blocking(move || read(&s, &p, since, &keys, &known)).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => return Ok(Err(e)),
            Err(e) => {
                return Ok(Err(SourceError::TreeGit {
                    tree: spec.name.clone(),
                    path: spec.path.clone(),
                    message: format!("the reader stopped: {e}"),
                }));
            }
        };
        let mut pass = TreePass { commits: r.read, rewritten: r.rewritten, ..TreePass::default() };
        if r.rewritten {
            tracing::info!(tree = %spec.name, "the branch was rewritten: read again from where it forked");
        }
        let mut tx = self.store.begin().await?;
        let mut changed: BTreeSet<CaseId> = BTreeSet::new();
        for commit in &r.dropped {
            let cases = tx.forget_tree_commit(&spec.name, commit).await?;
            pass.forgotten += cases.len() as u64;
            if !cases.is_empty() {
                tracing::info!(tree = %spec.name, commit, "commit no longer on the branch: its events forgotten");
            }
            changed.extend(cases);
        }
        for (commit, tag) in &r.tags {
            changed.extend(tx.tag_tree_commit(&spec.name, commit, tag).await?);
        }
        let tree = tree_events::Tree { name: &spec.name, resolves: spec.resolves };
        for c in &r.commits {
            let cand = candidates(&mut tx, &c.lookups()).await?;
            for (case, e) in tree_events::events(tree, c, r.tags.get(&c.sha).map(String::as_str), &cand) {
                if tx.put_tree_event(case, &e).await? {
                    pass.events += 1;
                    changed.insert(case);
                    tracing::info!(case = case.0, event = e.kind.as_str(), tree = %spec.name, commit = %c.sha, "case event");
                }
            }
        }
        for case in &changed {
            tx.replay(*case).await?;
            self.touched.insert(*case);
        }
        let token = Position { tip: Some(r.tip), read_at: Some(now) }.token();
        tx.set_checkpoint(&source, &token, now).await?;
        tx.commit().await?;
        Ok(Ok(pass))
    }
}
