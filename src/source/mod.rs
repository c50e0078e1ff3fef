//! Where raw messages come from: mbox files, Maildirs, single `.eml`
//! files and public-inbox archives (IMAP in `imap`). An I/O edge: it reads
//! files and nothing else, and hands out [`RawMessage`]s one at a time so
//! memory stays flat however large the archive.

pub mod follow;
pub mod imap;
pub mod maildir;
pub mod mbox;
pub mod public_inbox;
pub mod tree;

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// What went wrong reading a source. Most errors end the source (its file
/// cannot be opened or read on); [`SourceError::Message`] is about one
/// message of a source made of separate files, and the rest still follow
/// (see [`Messages`]).
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("cannot open {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not an mbox file, a Maildir, a public-inbox, a public-inbox epoch or a mail file")]
    NotMail { path: PathBuf },
    #[error("{path} is not a public-inbox v2 inbox (it has no git/N.git epochs)")]
    NotInbox { path: PathBuf },
    /// An epoch of an inbox is not a git repository; the other epochs are
    /// read.
    #[error("{path} is not a git repository (a public-inbox epoch is a bare one)")]
    NotRepository { path: PathBuf },
    /// An epoch of an inbox could not be read (a corrupt pack, a broken
    /// history); the other epochs are read.
    #[error("cannot read {path}: {message}")]
    Git { path: PathBuf, message: String },
    /// One commit of a public-inbox epoch could not be read (its message
    /// blob is missing or corrupt); the rest of the epoch is read.
    #[error("cannot read message {commit} of {path}: {message}")]
    Commit { path: PathBuf, commit: String, message: String },
    /// One message file of a Maildir could not be read (a dangling link,
    /// a directory, a permission); the other files are unaffected.
    #[error("cannot read message {path}: {source}")]
    Message {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A `[[trees]]` path that is not a git repository.
    #[error("tree {tree}: {path} is not a git repository ({message})")]
    TreeNotRepository { tree: String, path: PathBuf, message: String },
    /// A `[[trees]]` branch that does not exist (or no longer does).
    #[error("tree {tree}: {path} has no branch {branch}")]
    NoBranch { tree: String, branch: String, path: PathBuf },
    /// A `[[trees]]` history that could not be read.
    #[error("tree {tree}: cannot read {path}: {message}")]
    TreeGit { tree: String, path: PathBuf, message: String },
    /// The thread that reads the source could not be started (the
    /// system is out of threads or memory): nothing of it was read.
    #[error("cannot start the thread that reads the source: {0}")]
    Thread(#[source] std::io::Error),
}

impl SourceError {
    /// True when the source ends with this error; false when it names one
    /// message that could not be read and the others follow.
    pub fn is_fatal(&self) -> bool {
        !matches!(
            self,
            SourceError::Message { .. }
                | SourceError::Commit { .. }
                | SourceError::NotRepository { .. }
                | SourceError::Git { .. }
        )
    }

    /// True when it names one message (the rest of its source was read);
    /// false when a whole source, or a part of one (an epoch), could not
    /// be read.
    pub fn is_message(&self) -> bool {
        matches!(self, SourceError::Message { .. } | SourceError::Commit { .. })
    }
}

/// The most of one message a source keeps; the rest is skipped unread
/// (Maildir, `.eml`) or read in bounded pieces and dropped (mbox). vger
/// rejects mail over 100 KB, so only a broken or hostile archive reaches
/// this; the kept part holds the headers and the start of the body, which
/// is what classification and storage need, and memory stays bounded
/// whatever a file holds (a 200 MB line included).
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// One message as it arrived, before any parsing.
#[derive(Clone, Debug)]
pub struct RawMessage {
    /// The message, or its first [`MAX_MESSAGE_BYTES`] when it is longer.
    pub bytes: Vec<u8>,
    /// The size of the whole message: `bytes.len()` unless it was cut.
    pub original_len: u64,
    /// Byte offset of the message in an mbox file; the commits read so
    /// far, in a public-inbox.
    pub offset: Option<u64>,
    /// The archive removed this message (a public-inbox `d` commit): it is
    /// to be taken out of the store, not stored.
    pub removed: bool,
}

impl RawMessage {
    /// True when `bytes` holds only the start of the message.
    pub fn truncated(&self) -> bool {
        self.original_len > self.bytes.len() as u64
    }

    /// An empty file, or one of blank lines, is no message: parsing it
    /// would make up one (with a synthesized Message-ID), and a store would
    /// keep a row for nothing. Sources skip these.
    fn is_blank(&self) -> bool {
        !self.truncated() && is_blank(&self.bytes)
    }
}

fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_whitespace)
}

/// Reads one message file, at most [`MAX_MESSAGE_BYTES`] of it.
fn read_file(path: &Path) -> std::io::Result<RawMessage> {
    let f = File::open(path)?;
    let size = f.metadata()?.len();
    let cap = MAX_MESSAGE_BYTES as u64;
    let mut bytes = Vec::with_capacity(usize::try_from(size.min(cap + 1)).unwrap_or(MAX_MESSAGE_BYTES));
    // One byte past the cap tells a cut file from one of exactly the cap,
    // without trusting the size a special file reports.
    f.take(cap + 1).read_to_end(&mut bytes)?;
    let original_len = if bytes.len() > MAX_MESSAGE_BYTES {
        bytes.truncate(MAX_MESSAGE_BYTES);
        size.max(cap + 1)
    } else {
        bytes.len() as u64
    };
    Ok(RawMessage { bytes, original_len, offset: None, removed: false })
}

/// Where a source has got to, stored in the transaction that stores the
/// messages up to there (an IMAP mailbox's UIDVALIDITY and UID, say).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Names the source: `imap://host/mailbox`, a file's path.
    pub source: String,
    pub token: String,
}

/// One message as a source hands it over.
#[derive(Clone, Debug)]
pub struct Envelope {
    pub bytes: Vec<u8>,
    /// Its size before the source cut it (equal to `bytes.len()` when not).
    pub original_len: u64,
    /// When it was fetched or read (seconds since the epoch): dates its
    /// events when it has no Date.
    pub fetched_at: i64,
    /// Stored with this message's transaction, when given.
    pub checkpoint: Option<Checkpoint>,
    /// Byte offset in an mbox file (commits read, in a public-inbox),
    /// for progress.
    pub offset: Option<u64>,
    /// A removal, not a message: the archive removed the message in
    /// `bytes` (see [`RawMessage::removed`]).
    pub removed: bool,
}

impl Envelope {
    /// A message read at `fetched_at`, with nothing else to say.
    pub fn new(bytes: Vec<u8>, fetched_at: i64) -> Envelope {
        let original_len = bytes.len() as u64;
        Envelope { bytes, original_len, fetched_at, checkpoint: None, offset: None, removed: false }
    }

    /// A message a source read, fetched at `fetched_at`, with the
    /// checkpoint to store with it.
    pub fn from_raw(raw: RawMessage, fetched_at: i64, checkpoint: Option<Checkpoint>) -> Envelope {
        Envelope {
            bytes: raw.bytes,
            original_len: raw.original_len,
            fetched_at,
            checkpoint,
            offset: raw.offset,
            removed: raw.removed,
        }
    }
}

/// The kinds of offline source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Mbox,
    Maildir,
    Eml,
    /// A public-inbox v2 inbox, or one epoch of one.
    PublicInbox,
}

/// Tells the format of `path` by looking at it.
pub fn detect(path: &Path) -> Result<Format, SourceError> {
    let meta = std::fs::metadata(path).map_err(|e| SourceError::Open { path: path.into(), source: e })?;
    if meta.is_dir() {
        return if maildir::is_maildir(path) {
            Ok(Format::Maildir)
        } else if public_inbox::is_inbox(path) || public_inbox::is_repository(path) {
            Ok(Format::PublicInbox)
        } else {
            Err(SourceError::NotMail { path: path.into() })
        };
    }
    let mut head = [0u8; 5];
    let mut f = File::open(path).map_err(|e| SourceError::Open { path: path.into(), source: e })?;
    let n = read_up_to(&mut f, &mut head).map_err(|e| SourceError::Read { path: path.into(), source: e })?;
    if n == 5 && &head == b"From " { Ok(Format::Mbox) } else { Ok(Format::Eml) }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// How much `path` holds, for progress bars, in the unit of
/// [`RawMessage::offset`]: bytes of a file, commits of a public-inbox.
pub fn size_hint(path: &Path) -> u64 {
    if detect(path).ok() == Some(Format::PublicInbox) {
        return public_inbox::count_all(path);
    }
    std::fs::metadata(path).map(|m| if m.is_dir() { 0 } else { m.len() }).unwrap_or(0)
}

/// The messages of a source, in source order. An `Err` item for which
/// [`SourceError::is_fatal`] is false names one message that could not be
/// read, and the iteration goes on with the next; after a fatal one it
/// ends. Consumers report the first kind and keep reading: one bad file
/// never stops the rest.
pub type Messages = Box<dyn Iterator<Item = Result<RawMessage, SourceError>>>;

/// Opens any offline source and iterates over its messages.
pub fn open(path: &Path) -> Result<Messages, SourceError> {
    match detect(path)? {
        Format::Mbox => {
            let f = File::open(path).map_err(|e| SourceError::Open { path: path.into(), source: e })?;
            Ok(Box::new(mbox::MboxReader::new(BufReader::with_capacity(1 << 16, f), path.to_path_buf())))
        }
        Format::Maildir => Ok(Box::new(maildir::read(path)?)),
        Format::PublicInbox => Ok(Box::new(public_inbox::read_all(path)?)),
        Format::Eml => {
            let raw = read_file(path).map_err(|e| SourceError::Read { path: path.into(), source: e })?;
            Ok(Box::new(Some(raw).filter(|r| !r.is_blank()).map(Ok).into_iter()))
        }
    }
}
