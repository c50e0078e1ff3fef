//! public-inbox v2 inboxes, as lore mirrors lay them out (`grokmirror`,
//! `public-inbox-clone`): `INBOX/git/0.git`, `1.git`, ... (epochs, bare
//! git repositories, each about a gigabyte of mail), one commit per
//! message on the default branch, the raw message in the file `m` of its
//! tree; a commit whose tree has `d` instead removes the message in `d`
//! from the archive (spam, a takedown). Read with gix; nothing is written.
//!
//! Epochs are read in number order, each walked from its tip back to the
//! commit last stored (first parents only: public-inbox history is
//! linear), then read oldest first, a segment of commits at a time
//! ([`SEGMENT_COMMITS`]). Where an epoch has got to is a checkpoint per epoch (see
//! [`Position`]); an epoch whose stored commit is no longer in its history
//! (an operator rewrote it to purge a message) is read again from its
//! first commit, harmlessly, since messages are idempotent by Message-ID.
//!
//! What cannot be read is said, naming the path: a directory with no
//! epochs, an epoch that is not a repository or whose history cannot be
//! walked (a corrupt pack) is an error for that epoch, and the next epoch
//! is read; a commit whose message blob is missing (some mirrors leave
//! out large blobs) or unreadable is an error for that message, and the
//! rest of the epoch is read. Such a commit stays in the epoch's
//! checkpoint as one to read again, so no checkpoint claims a message
//! that was not stored.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::{MAX_MESSAGE_BYTES, RawMessage, SourceError};

/// One epoch of an inbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Epoch {
    pub number: u32,
    pub path: PathBuf,
}

/// True for a bare git repository (what an epoch is).
pub fn is_repository(path: &Path) -> bool {
    path.join("HEAD").is_file() && path.join("objects").is_dir()
}

/// True for a directory laid out as a v2 inbox: `git/N.git` epochs.
pub fn is_inbox(path: &Path) -> bool {
    epoch_dirs(path).is_ok_and(|e| !e.is_empty())
}

fn epoch_dirs(inbox: &Path) -> std::io::Result<Vec<Epoch>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(inbox.join("git"))? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(n) = name.to_str().and_then(|n| n.strip_suffix(".git")).and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        out.push(Epoch { number: n, path: entry.path() });
    }
    out.sort_by_key(|e| e.number);
    Ok(out)
}

/// The epochs of the inbox at `path`, in order.
pub fn epochs(path: &Path) -> Result<Vec<Epoch>, SourceError> {
    match epoch_dirs(path) {
        Ok(e) if !e.is_empty() => Ok(e),
        _ => Err(SourceError::NotInbox { path: path.to_path_buf() }),
    }
}

/// How a checkpoint names an epoch.
pub fn epoch_source(inbox_name: &str, epoch: &Epoch) -> String {
    format!("{inbox_name}/git/{}.git", epoch.number)
}

/// Where an epoch has got to: every commit up to `last` was read, except
/// those in `unread` (their message could not be read; they are tried
/// again first). Its token is the hex ids, space separated, `last` first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Position {
    pub last: Option<ObjectId>,
    pub unread: Vec<ObjectId>,
}

impl Position {
    /// Reads a token; one that does not parse reads the epoch again.
    pub fn parse(token: Option<&str>) -> Position {
        let mut ids = token.unwrap_or("").split_ascii_whitespace().map(|t| ObjectId::from_hex(t.as_bytes()));
        let Some(Ok(last)) = ids.next() else { return Position::default() };
        let unread: Result<Vec<_>, _> = ids.collect();
        match unread {
            Ok(unread) => Position { last: Some(last), unread },
            Err(_) => Position::default(),
        }
    }

    pub fn token(&self) -> String {
        let mut t = self.last.map(|l| l.to_string()).unwrap_or_default();
        for u in &self.unread {
            t.push(' ');
            t.push_str(&u.to_string());
        }
        t
    }
}

/// One commit read: a message, or a removal (the message removed).
#[derive(Debug)]
pub struct Entry {
    pub raw: RawMessage,
    /// The epoch's position once this entry is stored.
    pub position: Position,
}

fn open_repository(path: &Path) -> Result<gix::Repository, SourceError> {
    if !is_repository(path) {
        return Err(SourceError::NotRepository { path: path.to_path_buf() });
    }
    gix::open_opts(path, gix::open::Options::isolated()).map_err(|e| git_error(path, &e))
}

/// An error and its causes, on one line.
pub(super) fn describe(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cause = c.source();
    }
    s
}

/// How much of an epoch is read before its repository is opened again.
/// gix maps the epoch's pack and pack index into memory, and every page
/// of them a read touches stays resident, counted in the process's RSS,
/// while the repository is open: a whole epoch read through one opening
/// ends up holding most of it (a 121 MiB epoch of the cgroups list took
/// the import's peak RSS to 185 MiB; a lore epoch is about a gigabyte).
/// Opened again each [`REOPEN_COMMITS`] commits or [`REOPEN_BYTES`] of
/// mail, whichever comes first, the maps start over. The commits are
/// bounded too because the pack index's pages are touched by lookups,
/// one or two pages of their own each, however small the messages.
pub const REOPEN_COMMITS: u32 = 512;
pub const REOPEN_BYTES: u64 = 16 << 20;

/// An epoch's repository, opened again as it is read (see
/// [`REOPEN_COMMITS`]).
struct Opened {
    repo: gix::Repository,
    path: PathBuf,
    /// When to open it again: commits, bytes of mail.
    every: (u32, u64),
    /// Read since it was last opened: commits, bytes.
    since: (u32, u64),
    /// How many times it was opened again.
    reopened: u64,
}

impl Opened {
    fn new(path: &Path) -> Result<Opened, SourceError> {
        Ok(Opened {
            repo: open_repository(path)?,
            path: path.to_path_buf(),
            every: (REOPEN_COMMITS, REOPEN_BYTES),
            since: (0, 0),
            reopened: 0,
        })
    }

    /// Counts a commit read, and `bytes` of mail with it; opens the
    /// repository again when that makes enough. Should opening fail (the
    /// epoch was moved away meanwhile), reading goes on through the old
    /// opening.
    fn read(&mut self, bytes: u64) {
        self.since.0 += 1;
        self.since.1 += bytes;
        if self.since.0 < self.every.0 && self.since.1 < self.every.1 {
            return;
        }
        self.since = (0, 0);
        match open_repository(&self.path) {
            Ok(repo) => {
                self.repo = repo;
                self.reopened += 1;
            }
            Err(e) => tracing::warn!(epoch = %self.path.display(), error = %e, "the epoch could not be opened again"),
        }
    }
}

/// How many commits of an epoch are listed at once. The commits after a
/// position are walked from the tip, newest first, and read oldest
/// first: a walk keeps every [`SEGMENT_COMMITS`]th id, where a segment
/// starts, and the ids of the segment it is in, and each newer segment
/// is walked again when its turn comes, so what is held is a segment and
/// one id per segment however large the epoch (a list of every id was 20
/// bytes a commit, 10 MB for a lore epoch of half a million messages,
/// and twice that while it grew). Walking again costs about 8 µs a
/// commit on a fast-import pack; a pass that reads fewer new commits
/// than a segment holds walks once.
pub const SEGMENT_COMMITS: usize = 4096;

/// The commits of an epoch after a position on the default branch,
/// oldest first, a segment at a time (see [`SEGMENT_COMMITS`]).
struct Commits {
    /// The newest commit of each segment not listed yet, newest first
    /// (each a whole segment: the oldest, which may be shorter, is listed
    /// by the walk).
    starts: Vec<ObjectId>,
    /// Commits a segment holds.
    segment: usize,
    /// The segment being read, oldest first.
    current: std::vec::IntoIter<ObjectId>,
    /// Commits after the position.
    count: u64,
}

impl Commits {
    /// Walks the epoch from its tip back to `last` (first parents only),
    /// counting the commits after it and keeping where each segment of
    /// `segment` commits starts. `found`: whether `last` was found (if
    /// not, the epoch is read from its first commit, because it is new or
    /// was rewritten). The walk opens the repository again as reading
    /// does: a pack written by `git fast-import` (as public-inbox writes
    /// its epochs until they are repacked) has the commits among the
    /// messages, a page or more apart.
    fn walk(opened: &mut Opened, last: Option<ObjectId>, segment: usize) -> Result<(Commits, bool), SourceError> {
        let mut commits = Commits { starts: Vec::new(), segment, current: Vec::new().into_iter(), count: 0 };
        let tip = match opened.repo.head_id() {
            Ok(id) => id.detach(),
            // An epoch with no commit yet (just created) has nothing to read.
            Err(_) if opened.repo.head().is_ok_and(|h| h.is_unborn()) => return Ok((commits, last.is_none())),
            Err(e) => return Err(git_error(&opened.path, &e)),
        };
        // The segment the walk is in: the oldest, when it ends, is read
        // first and need not be walked again (nor is any segment of an
        // epoch that has fewer new commits than one holds).
        let mut oldest = Vec::new();
        let mut next = Some(tip);
        let found = loop {
            let Some(id) = next else { break false };
            if Some(id) == last {
                break true;
            }
            if commits.count.is_multiple_of(segment as u64) {
                commits.starts.push(id);
                oldest.clear();
            }
            oldest.push(id);
            next = first_parent(opened, id)?;
            commits.count += 1;
        };
        if !oldest.is_empty() {
            commits.starts.pop();
            oldest.reverse();
            commits.current = oldest.into_iter();
        }
        Ok((commits, found))
    }

    /// The next commit, oldest first; an error when a segment's walk
    /// fails, after which there is none.
    fn next(&mut self, opened: &mut Opened) -> Option<Result<ObjectId, SourceError>> {
        loop {
            if let Some(id) = self.current.next() {
                return Some(Ok(id));
            }
            let start = self.starts.pop()?;
            let mut ids = Vec::with_capacity(self.segment);
            let mut next = Some(start);
            while let Some(id) = next {
                if ids.len() == self.segment {
                    break;
                }
                ids.push(id);
                next = match first_parent(opened, id) {
                    Ok(n) => n,
                    Err(e) => {
                        self.starts.clear();
                        return Some(Err(e));
                    }
                };
            }
            ids.reverse();
            self.current = ids.into_iter();
        }
    }
}

/// The first parent of commit `id`, counted as a commit read.
fn first_parent(opened: &mut Opened, id: ObjectId) -> Result<Option<ObjectId>, SourceError> {
    let commit = opened.repo.find_commit(id).map_err(|e| git_error(&opened.path, &e))?;
    let parent = commit.parent_ids().next().map(|p| p.detach());
    drop(commit);
    opened.read(0);
    Ok(parent)
}

fn git_error(path: &Path, e: &dyn std::error::Error) -> SourceError {
    SourceError::Git { path: path.to_path_buf(), message: describe(e) }
}

/// How many commits of the epoch at `path` are after the position
/// `token` (for progress: what is left to read).
pub fn pending(path: &Path, token: Option<&str>) -> Result<u64, SourceError> {
    let pos = Position::parse(token);
    let (commits, _) = Commits::walk(&mut Opened::new(path)?, pos.last, SEGMENT_COMMITS)?;
    Ok(commits.count + pos.unread.len() as u64)
}

/// The commits of one epoch not read yet.
pub struct EpochReader {
    opened: Opened,
    /// Commits whose message could not be read before, to try again.
    retry: VecDeque<ObjectId>,
    /// New commits, oldest first.
    commits: Commits,
    position: Position,
}

impl EpochReader {
    /// Opens the epoch at `path` to read what is after `token`.
    pub fn open(path: &Path, token: Option<&str>) -> Result<EpochReader, SourceError> {
        EpochReader::open_with(path, token, (REOPEN_COMMITS, REOPEN_BYTES), SEGMENT_COMMITS)
    }

    /// [`EpochReader::open`], opening the repository again each `every`
    /// commits or bytes of mail, listing `segment` commits at a time.
    fn open_with(
        path: &Path,
        token: Option<&str>,
        every: (u32, u64),
        segment: usize,
    ) -> Result<EpochReader, SourceError> {
        let pos = Position::parse(token);
        let mut opened = Opened::new(path)?;
        opened.every = every;
        let (commits, found) = Commits::walk(&mut opened, pos.last, segment)?;
        if !found && pos.last.is_some() {
            tracing::info!(epoch = %path.display(), "the epoch was rewritten: reading it again from its first commit");
        }
        // A rewritten epoch is read whole: what was to be read again is
        // among its commits, or was purged.
        let retry = if found { pos.unread.iter().copied().collect() } else { VecDeque::new() };
        let position = Position { last: if found { pos.last } else { None }, unread: Vec::new() };
        Ok(EpochReader { opened, retry, commits, position })
    }

    /// Reads one commit: its message (`m`) or removal (`d`); `None` for a
    /// commit with neither (not a message commit).
    fn read(&self, id: ObjectId) -> Result<Option<RawMessage>, String> {
        let commit = self.opened.repo.find_commit(id).map_err(|e| describe(&e))?;
        let tree = commit.tree().map_err(|e| describe(&e))?;
        let (entry, removed) = match (tree.find_entry("m"), tree.find_entry("d")) {
            (Some(m), _) => (m, false),
            (None, Some(d)) => (d, true),
            (None, None) => return Ok(None),
        };
        let mut blob = entry.object().map_err(|e| describe(&e))?;
        let mut bytes = std::mem::take(&mut blob.data);
        let original_len = bytes.len() as u64;
        bytes.truncate(MAX_MESSAGE_BYTES);
        // gix resolves a delta into a buffer it reuses, sized for the
        // largest object it held: over the cgroups list as a fast-import
        // epoch the messages' buffers held 4.3 times their bytes. The
        // queues behind the reader are bounded by the messages' lengths,
        // so a message keeps only its own.
        bytes.shrink_to_fit();
        Ok(Some(RawMessage { bytes, original_len, offset: None, removed }))
    }
}

impl Iterator for EpochReader {
    type Item = Result<Entry, SourceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let id = match self.retry.pop_front() {
                // A commit to read again that is gone from the repository
                // cannot be read any more: the history that had it was
                // rewritten.
                Some(id) if !self.opened.repo.has_object(id) => continue,
                Some(id) => id,
                None => {
                    let id = match self.commits.next(&mut self.opened)? {
                        Ok(id) => id,
                        Err(e) => return Some(Err(e)),
                    };
                    self.position.last = Some(id);
                    id
                }
            };
            let read = self.read(id);
            self.opened.read(read.as_ref().map_or(0, |r| r.as_ref().map_or(0, |raw| raw.original_len)));
            match read {
                Ok(Some(raw)) => {
                    let mut position = self.position.clone();
                    // Commits still to be tried again are not read yet.
                    position.unread.extend(self.retry.iter().copied());
                    return Some(Ok(Entry { raw, position }));
                }
                Ok(None) => continue,
                Err(e) => {
                    self.position.unread.push(id);
                    return Some(Err(SourceError::Commit {
                        path: self.opened.path.clone(),
                        commit: id.to_string(),
                        message: e,
                    }));
                }
            }
        }
    }
}

/// Every epoch of an inbox (or one epoch), read in order; an epoch that
/// cannot be opened is an error item, and the next is read.
pub struct InboxReader {
    epochs: std::vec::IntoIter<(Epoch, Option<String>)>,
    current: Option<(Epoch, EpochReader)>,
}

impl InboxReader {
    /// Reads `epochs`, each after its checkpoint token.
    pub fn new(epochs: Vec<(Epoch, Option<String>)>) -> InboxReader {
        InboxReader { epochs: epochs.into_iter(), current: None }
    }
}

impl Iterator for InboxReader {
    type Item = Result<(Epoch, Entry), SourceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((epoch, reader)) = &mut self.current {
                match reader.next() {
                    Some(Ok(entry)) => return Some(Ok((epoch.clone(), entry))),
                    Some(Err(e)) => return Some(Err(e)),
                    None => self.current = None,
                }
            }
            let (epoch, token) = self.epochs.next()?;
            match EpochReader::open(&epoch.path, token.as_deref()) {
                Ok(r) => self.current = Some((epoch, r)),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// The messages of an inbox directory or of one epoch, from the start,
/// for `ingest` and `classify`: removals come as messages marked
/// `removed`; `offset` counts the commits read.
pub fn read_all(path: &Path) -> Result<impl Iterator<Item = Result<RawMessage, SourceError>> + use<>, SourceError> {
    let epochs = if is_repository(path) {
        vec![(Epoch { number: 0, path: path.to_path_buf() }, None)]
    } else {
        epochs(path)?.into_iter().map(|e| (e, None)).collect()
    };
    let mut n = 0u64;
    Ok(InboxReader::new(epochs).map(move |r| {
        n += 1;
        r.map(|(_, mut entry)| {
            entry.raw.offset = Some(n);
            entry.raw
        })
    }))
}

/// How many commits `read_all(path)` reads, for progress bars.
pub fn count_all(path: &Path) -> u64 {
    let epochs = if is_repository(path) {
        vec![Epoch { number: 0, path: path.to_path_buf() }]
    } else {
        epoch_dirs(path).unwrap_or_default()
    };
    epochs.iter().map(|e| pending(&e.path, None).unwrap_or(0)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bare epoch of `n` message commits, made by `git fast-import`.
    fn epoch(dir: &Path, n: usize) -> PathBuf {
        let messages: Vec<String> = (0..n)
            .map(|i| format!("From: a{i}@example.org\nMessage-ID: <m{i}@example.org>\nSubject: s{i}\n\nbody {i}\n"))
            .collect();
        epoch_of(dir, &messages)
    }

    /// A bare epoch of one message commit per item of `messages`, in
    /// order, made by `git fast-import` (which stores each message as a
    /// delta of the one before where that is smaller, as in a lore epoch).
    fn epoch_of(dir: &Path, messages: &[String]) -> PathBuf {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let path = dir.join("0.git");
        let st = Command::new("git").args(["init", "-q", "--bare"]).arg(&path).status().expect("git runs");
        assert!(st.success());
        let mut stream = Vec::new();
        for (i, m) in messages.iter().enumerate() {
            write!(stream, "blob\nmark :{}\ndata {}\n{m}\n", 2 * i + 1, m.len()).unwrap();
            write!(stream, "commit refs/heads/master\nmark :{}\n", 2 * i + 2).unwrap();
            write!(stream, "committer P I <pi@example.org> {} +0000\ndata 2\nm\n", 1_500_000_000 + i).unwrap();
            if i > 0 {
                writeln!(stream, "from :{}", 2 * i).unwrap();
            }
            write!(stream, "M 100644 :{} m\n\n", 2 * i + 1).unwrap();
        }
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(&path)
            .args(["fast-import", "--quiet"])
            .stdin(Stdio::piped())
            .spawn()
            .expect("git fast-import runs");
        child.stdin.take().expect("stdin").write_all(&stream).unwrap();
        assert!(child.wait().unwrap().success());
        Command::new("git")
            .arg("--git-dir")
            .arg(&path)
            .args(["symbolic-ref", "HEAD", "refs/heads/master"])
            .status()
            .unwrap();
        path
    }

    fn read_through(path: &Path, reopen_every: (u32, u64)) -> (Vec<Vec<u8>>, u64, Position) {
        read_from(path, None, reopen_every, SEGMENT_COMMITS)
    }

    fn read_from(
        path: &Path,
        token: Option<&str>,
        reopen_every: (u32, u64),
        segment: usize,
    ) -> (Vec<Vec<u8>>, u64, Position) {
        let mut r = EpochReader::open_with(path, token, reopen_every, segment).unwrap();
        let mut out = Vec::new();
        let mut last = Position::default();
        for e in r.by_ref() {
            let e = e.unwrap();
            out.push(e.raw.bytes);
            last = e.position;
        }
        (out, r.opened.reopened, last)
    }

    #[test]
    fn an_epoch_opened_again_while_read_reads_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = epoch(dir.path(), 25);
        let (whole, reopened, end) = read_through(&path, (u32::MAX, u64::MAX));
        assert_eq!(reopened, 0);
        assert_eq!(whole.len(), 25);
        assert!(whole[24].starts_with(b"From: a24@"), "oldest first");
        // Every 10 commits: twice in the walk from the tip (after 10 and
        // 20 commits), then after reading the 5th, 15th and 25th (the
        // walk listed them all: fewer than a segment).
        let (by_commits, reopened, at) = read_through(&path, (10, u64::MAX));
        assert_eq!((&by_commits, reopened, &at), (&whole, 5, &end));
        // Every 200 bytes of mail (the walk reads none): the messages are
        // 70 to 73 bytes, so after reading the 3rd, 6th, ... 24th.
        let (by_bytes, reopened, at) = read_through(&path, (u32::MAX, 200));
        assert_eq!((&by_bytes, reopened, &at), (&whole, 8, &end));
    }

    #[test]
    fn an_epoch_listed_a_segment_at_a_time_reads_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = epoch(dir.path(), 25);
        let never = (u32::MAX, u64::MAX);
        let (whole, _, end) = read_through(&path, never);
        assert_eq!(whole.len(), 25);
        for segment in [1, 4, 5, 24, 25, 26] {
            let (got, _, at) = read_from(&path, None, never, segment);
            assert_eq!((&got, &at), (&whole, &end), "segments of {segment}");
        }
        // From a position: the 11th commit on, in segments that do not
        // divide what is left, and none past the tip.
        let mut r = EpochReader::open_with(&path, None, never, 4).unwrap();
        let tenth = r.by_ref().take(10).last().unwrap().unwrap().position;
        assert_eq!(pending(&path, Some(&tenth.token())).unwrap(), 15);
        for segment in [1, 4, 15, 16] {
            let (rest, _, at) = read_from(&path, Some(&tenth.token()), never, segment);
            assert_eq!((&rest[..], &at), (&whole[10..], &end), "segments of {segment}");
        }
        let (none, _, _) = read_from(&path, Some(&end.token()), never, 4);
        assert!(none.is_empty());
        assert_eq!(pending(&path, Some(&end.token())).unwrap(), 0);
        assert_eq!(pending(&path, None).unwrap(), 25);
    }

    #[test]
    fn a_message_read_holds_no_more_memory_than_its_bytes() {
        // A long patch, then shorter replies quoting less and less of it:
        // each is stored as a delta of the one before, which gix resolves
        // into buffers sized for the longest.
        let patch: String = (0..400).map(|l| format!("+\tline {l} of the patch, as a diff adds it;\n")).collect();
        let messages: Vec<String> = (0..12)
            .map(|i| {
                let quoted: String = patch.lines().take(400 / (i + 1)).map(|l| format!("> {l}\n")).collect();
                format!("From: a{i}@example.org\nMessage-ID: <r{i}@example.org>\nSubject: Re: p\n\n{quoted}ok {i}\n")
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = epoch_of(dir.path(), &messages);
        let (read, _, _) = read_through(&path, (REOPEN_COMMITS, REOPEN_BYTES));
        assert_eq!(read.len(), messages.len());
        for (got, want) in read.iter().zip(&messages) {
            assert_eq!(got, want.as_bytes());
            // The reader's queue is bounded by the messages' lengths, so
            // a message must hold no more than its length.
            assert_eq!(got.capacity(), got.len(), "a message of {} bytes holds {}", got.len(), got.capacity());
        }
    }

    #[test]
    fn positions_round_trip() {
        let a = ObjectId::from_hex(b"6b24d929c7375ae7221edde6c7b87175f09ada4f")
            .unwrap_or(ObjectId::null(gix::hash::Kind::Sha1));
        let b = ObjectId::from_hex(b"43681c26ab81abf88e250f316c504968ca19f393")
            .unwrap_or(ObjectId::null(gix::hash::Kind::Sha1));
        let p = Position { last: Some(a), unread: vec![b] };
        assert_eq!(Position::parse(Some(&p.token())), p);
        assert_eq!(Position::parse(Some("6b24d929c7375ae7221edde6c7b87175f09ada4f")).unread, Vec::<ObjectId>::new());
        assert_eq!(Position::parse(Some("not hex")), Position::default());
        assert_eq!(Position::parse(None), Position::default());
    }
}
