//! Git trees (`[[trees]]`): the history of one branch of a local clone or
//! mirror, read with gix (as `public_inbox` reads its epochs); nothing is
//! written. What a commit means to a case is `thread::tree`'s; this
//! module only reads: the branch's tip, the commits after the last one
//! seen, the commits a force-push dropped, and the first tag that
//! contains a commit.
//!
//! Where a tree has got to is its checkpoint ([`Position`]): the tip last
//! read and when. The commits after it are those reachable from the new
//! tip and not from the old one, so a force-pushed branch is read again
//! from its merge base with the old tip (the old tip's commits that are
//! no longer on the branch are the caller's to forget, see
//! [`Walk::rewritten`]). With no checkpoint the whole history is read:
//! commit messages only, no trees or diffs, which gix walks at hundreds
//! of thousands of commits a second.
//!
//! What cannot be read is an error naming the tree: a path that is not a
//! git repository, a branch that does not exist (or no longer does), a
//! history that cannot be walked.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::revision::walk::{CommitTimeOrder, Sorting};

use super::SourceError;
use super::public_inbox::describe;

/// A commit time earlier than this before a commit does not stop a walk
/// looking for it: committer dates are not ordered along history
/// (rebases, clock skew), so walks cut off by date keep a margin.
pub const DATE_SLACK: i64 = 7 * 86_400;

/// Where a tree has got to: the tip last read, and when it was read (the
/// caller's clock). Its token is the tip's hex id and the time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Position {
    pub tip: Option<ObjectId>,
    pub read_at: Option<i64>,
}

impl Position {
    /// Reads a token; one that does not parse reads the tree from the
    /// start (harmless: what commits cause is recorded once).
    pub fn parse(token: Option<&str>) -> Position {
        let mut words = token.unwrap_or("").split_ascii_whitespace();
        let Some(Ok(tip)) = words.next().map(|w| ObjectId::from_hex(w.as_bytes())) else {
            return Position::default();
        };
        Position { tip: Some(tip), read_at: words.next().and_then(|w| w.parse().ok()) }
    }

    pub fn token(&self) -> String {
        match (self.tip, self.read_at) {
            (Some(t), Some(at)) => format!("{t} {at}"),
            (Some(t), None) => t.to_string(),
            _ => String::new(),
        }
    }
}

/// One commit as read: what its message and signatures say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawCommit {
    pub id: ObjectId,
    /// Committer time, seconds since the epoch.
    pub time: i64,
    pub author: Option<String>,
    pub committer: Option<String>,
    /// The whole message (subject, body, trailers), lossily UTF-8.
    pub message: String,
}

/// An open tree.
pub struct Tree {
    repo: gix::Repository,
    name: String,
    path: PathBuf,
}

/// What a pass over a branch found.
#[derive(Debug, Default)]
pub struct Walk {
    /// The branch's tip now.
    pub tip: Option<ObjectId>,
    /// The old tip is no longer on the branch (a force-push, a reset): the
    /// commits read before that are not on it any more are not in it.
    pub rewritten: bool,
    /// How many commits were read.
    pub read: u64,
}

impl Tree {
    /// Opens the repository at `path` (bare or not) for the tree `name`.
    pub fn open(name: &str, path: &Path) -> Result<Tree, SourceError> {
        let not_repo = |message: String| SourceError::TreeNotRepository {
            tree: name.to_string(),
            path: path.to_path_buf(),
            message,
        };
        if !path.is_dir() {
            return Err(not_repo("no such directory".into()));
        }
        let repo = gix::open_opts(path, gix::open::Options::isolated()).map_err(|e| not_repo(describe(&e)))?;
        Ok(Tree { repo, name: name.to_string(), path: path.to_path_buf() })
    }

    fn git(&self, e: &dyn std::error::Error) -> SourceError {
        SourceError::TreeGit { tree: self.name.clone(), path: self.path.clone(), message: describe(e) }
    }

    /// The commit `branch` points at: `refs/heads/<branch>`, else
    /// `refs/remotes/<branch>` (`origin/master`), or a full ref name.
    pub fn tip(&self, branch: &str) -> Result<ObjectId, SourceError> {
        let names: Vec<String> = if branch.starts_with("refs/") {
            vec![branch.to_string()]
        } else {
            vec![format!("refs/heads/{branch}"), format!("refs/remotes/{branch}")]
        };
        for n in names {
            match self.repo.try_find_reference(n.as_str()) {
                Ok(Some(mut r)) => return r.peel_to_id().map(|id| id.detach()).map_err(|e| self.git(&e)),
                Ok(None) => {}
                Err(e) => return Err(self.git(&e)),
            }
        }
        Err(SourceError::NoBranch { tree: self.name.clone(), branch: branch.to_string(), path: self.path.clone() })
    }

    /// When `id` was committed, if it is in the repository.
    pub fn commit_time(&self, id: ObjectId) -> Option<i64> {
        self.repo.find_commit(id).ok()?.time().ok().map(|t| t.seconds)
    }

    /// Reads one commit.
    fn read(&self, id: ObjectId) -> Result<RawCommit, SourceError> {
        let commit = self.repo.find_commit(id).map_err(|e| self.git(&e))?;
        let c = commit.decode().map_err(|e| self.git(&e))?;
        let email = |s: Result<gix::actor::SignatureRef<'_>, _>| {
            s.ok().map(|s| s.email.to_string().trim().to_ascii_lowercase()).filter(|e| e.contains('@'))
        };
        Ok(RawCommit {
            id,
            time: c.time().map_or(0, |t| t.seconds),
            author: email(c.author()),
            committer: email(c.committer()),
            message: String::from_utf8_lossy(c.message).into_owned(),
        })
    }

    /// The commits of the branch at `tip` after `last` (all of them
    /// without `last`), and, when `since` is given, every commit of the
    /// branch committed since then (a look back for what was tracked
    /// after its commits were read); each commit once, handed to `each`.
    /// Merges are read like any commit.
    pub fn walk(
        &self,
        tip: ObjectId,
        last: Option<ObjectId>,
        since: Option<i64>,
        each: &mut dyn FnMut(RawCommit),
    ) -> Result<Walk, SourceError> {
        let mut out = Walk { tip: Some(tip), ..Walk::default() };
        // An old tip gone from the repository (collected after a
        // force-push): the whole history is read again.
        let had = last.is_some();
        let last = last.filter(|l| self.repo.has_object(l));
        out.rewritten = had && last.is_none();
        if let Some(l) = last
            && l != tip
        {
            // Commits of the old tip the new one does not have: none
            // unless the branch was rewritten.
            let walk = self.repo.rev_walk([l]).with_hidden([tip]).all().map_err(|e| self.git(&e))?;
            if let Some(info) = walk.into_iter().next() {
                info.map_err(|e| self.git(&e))?;
                out.rewritten = true;
            }
        }
        // What the look back must not read twice; only kept when there is
        // one, since a first pass reads a whole history (1.3 million
        // commits in the kernel's).
        let look_back = since.filter(|_| last.is_some());
        let mut seen: HashSet<ObjectId> = HashSet::new();
        if last != Some(tip) {
            let walk = self.repo.rev_walk([tip]).with_hidden(last).all().map_err(|e| self.git(&e))?;
            for info in walk {
                let id = info.map_err(|e| self.git(&e))?.id;
                if look_back.is_some() {
                    seen.insert(id);
                }
                out.read += 1;
                each(self.read(id)?);
            }
        }
        if let Some(since) = look_back {
            let sorting =
                Sorting::ByCommitTimeCutoff { order: CommitTimeOrder::NewestFirst, seconds: since - DATE_SLACK };
            let walk = self.repo.rev_walk([tip]).sorting(sorting).all().map_err(|e| self.git(&e))?;
            for info in walk {
                let id = info.map_err(|e| self.git(&e))?.id;
                if seen.insert(id) {
                    out.read += 1;
                    each(self.read(id)?);
                }
            }
        }
        Ok(out)
    }

    /// Which of `commits` are not on the branch at `tip` (or not in the
    /// repository at all).
    pub fn not_on(&self, tip: ObjectId, commits: &[ObjectId]) -> Result<Vec<ObjectId>, SourceError> {
        let (present, mut gone): (Vec<ObjectId>, Vec<ObjectId>) =
            commits.iter().copied().partition(|c| self.repo.has_object(c));
        if present.is_empty() {
            return Ok(gone);
        }
        let wanted: HashSet<ObjectId> = present.iter().copied().collect();
        let walk = self.repo.rev_walk(present).with_hidden([tip]).all().map_err(|e| self.git(&e))?;
        for info in walk {
            let id = info.map_err(|e| self.git(&e))?.id;
            if wanted.contains(&id) {
                gone.push(id);
            }
        }
        Ok(gone)
    }

    /// The first tag that contains each of `commits` (given with their
    /// commit times): of the tags whose commit is not older than the
    /// commit, the earliest by commit time whose history has it.
    ///
    /// Cost: the tags are listed and peeled once per call; then for each
    /// commit, tags are tried oldest first, each a walk from the tag back
    /// to a week before the commit, so a commit found by the next tag (a
    /// release candidate a week later) costs the commits between the two.
    /// A commit no tag contains yet costs a walk per newer tag: a branch
    /// without tags (linux-next, a maintainer's) costs nothing.
    pub fn first_tags(&self, commits: &[(ObjectId, i64)]) -> Result<HashMap<ObjectId, String>, SourceError> {
        let mut out = HashMap::new();
        if commits.is_empty() {
            return Ok(out);
        }
        let mut tags = self.tags()?;
        tags.sort_by(|a, b| (a.2, &a.0).cmp(&(b.2, &b.0)));
        for &(commit, time) in commits {
            for (name, tag_commit, _) in tags.iter().filter(|t| t.2 + DATE_SLACK >= time) {
                if *tag_commit == commit || self.reaches(*tag_commit, commit, time)? {
                    out.insert(commit, name.clone());
                    break;
                }
            }
        }
        Ok(out)
    }

    /// Every tag with the commit it names and that commit's time.
    fn tags(&self) -> Result<Vec<(String, ObjectId, i64)>, SourceError> {
        let refs = self.repo.references().map_err(|e| self.git(&e))?;
        let mut out = Vec::new();
        for r in refs.tags().map_err(|e| self.git(&e))? {
            let Ok(mut r) = r else { continue };
            let name = r.name().shorten().to_string();
            // A tag of a blob or a tree names no commit.
            let Ok(commit) = r.peel_to_commit() else { continue };
            let time = commit.time().map_or(0, |t| t.seconds);
            out.push((name, commit.id, time));
        }
        Ok(out)
    }

    /// Whether `commit` (committed at `time`) is in the history of `from`.
    fn reaches(&self, from: ObjectId, commit: ObjectId, time: i64) -> Result<bool, SourceError> {
        let sorting = Sorting::ByCommitTimeCutoff { order: CommitTimeOrder::NewestFirst, seconds: time - DATE_SLACK };
        let walk = self.repo.rev_walk([from]).sorting(sorting).all().map_err(|e| self.git(&e))?;
        for info in walk {
            if info.map_err(|e| self.git(&e))?.id == commit {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip() {
        let a = ObjectId::from_hex(b"6b24d929c7375ae7221edde6c7b87175f09ada4f").ok();
        let p = Position { tip: a, read_at: Some(1_700_000_000) };
        assert_eq!(Position::parse(Some(&p.token())), p);
        let old = Position::parse(Some("6b24d929c7375ae7221edde6c7b87175f09ada4f"));
        assert_eq!((old.tip, old.read_at), (a, None));
        assert_eq!(Position::parse(Some("not hex 12")), Position::default());
        assert_eq!(Position::parse(None).token(), "");
    }
}
