//! Following local mail as it arrives, for `lkpbot run`: a Maildir (new
//! files as they are delivered, by fetchmail, procmail, lei...) and an
//! mbox (bytes appended to it). Like a mailbox read over IMAP, each
//! message carries a checkpoint token saying how far its source has been
//! read once it is stored, so a restart reads only what is new, and a
//! message read twice is a harmless duplicate.
//!
//! - Maildir: the token is the modification time (nanoseconds) of the
//!   newest file stored; a pass reads the files not older than it, in
//!   (time, name) order. A file moved from `new/` to `cur/` keeps its time
//!   and is not read again.
//! - mbox: the token is `DEVICE:INODE:OFFSET`, where the next message
//!   starts. A file replaced or cut shorter (rotated) is read from the
//!   start. The last message is left for the next pass while the file was
//!   written in the last [`SETTLE_SECONDS`] (a writer may be mid-append).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::mbox::MboxReader;
use super::{Checkpoint, Envelope, RawMessage, SourceError, read_file};

/// How long an mbox must be left alone before its last message counts as
/// whole.
pub const SETTLE_SECONDS: i64 = 2;

fn envelope(raw: RawMessage, source: &str, token: String, fetched_at: i64) -> Envelope {
    Envelope::from_raw(raw, fetched_at, Some(Checkpoint { source: source.to_string(), token }))
}

fn mtime_ns(meta: &std::fs::Metadata) -> i128 {
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}

/// The messages of the Maildir at `path` not older than the `after`
/// token, oldest first, each with its token.
pub fn maildir_after(
    path: &Path,
    source: &str,
    after: Option<&str>,
    fetched_at: i64,
) -> Result<impl Iterator<Item = Result<Envelope, SourceError>> + use<>, SourceError> {
    let since: i128 = after.and_then(|t| t.parse().ok()).unwrap_or(i128::MIN);
    let mut files: Vec<(i128, PathBuf)> = Vec::new();
    for sub in ["new", "cur"] {
        let dir = path.join(sub);
        let entries = std::fs::read_dir(&dir).map_err(|e| SourceError::Open { path: dir.clone(), source: e })?;
        for entry in entries {
            let entry = entry.map_err(|e| SourceError::Read { path: dir.clone(), source: e })?;
            let p = entry.path();
            if p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')) {
                continue;
            }
            // A file that vanished since the listing (moved by a reader)
            // is found again under its new name in the next pass.
            let Ok(meta) = std::fs::metadata(&p) else { continue };
            let t = mtime_ns(&meta);
            if t >= since {
                files.push((t, p));
            }
        }
    }
    files.sort();
    let source = source.to_string();
    Ok(files.into_iter().filter_map(move |(t, p)| match read_file(&p) {
        Ok(raw) if raw.is_blank() => None,
        Ok(raw) => Some(Ok(envelope(raw, &source, t.to_string(), fetched_at))),
        Err(e) => Some(Err(SourceError::Message { path: p, source: e })),
    }))
}

/// `DEVICE:INODE:OFFSET`.
pub fn mbox_token(dev: u64, ino: u64, offset: u64) -> String {
    format!("{dev}:{ino}:{offset}")
}

fn parse_mbox_token(t: &str) -> Option<(u64, u64, u64)> {
    let mut it = t.split(':').map(|x| x.parse::<u64>().ok());
    Some((it.next()??, it.next()??, it.next()??))
}

/// The messages appended to the mbox at `path` since the `after` token,
/// each with the token of where the next one starts. With `now`, the last
/// message waits while the file has not settled (see [`SETTLE_SECONDS`]);
/// without, everything there is taken (one pass of `run --once`).
pub fn mbox_after(
    path: &Path,
    source: &str,
    after: Option<&str>,
    fetched_at: i64,
    now: Option<i64>,
) -> Result<impl Iterator<Item = Result<Envelope, SourceError>> + use<>, SourceError> {
    let open = |e| SourceError::Open { path: path.to_path_buf(), source: e };
    let mut file = File::open(path).map_err(open)?;
    let meta = file.metadata().map_err(open)?;
    let (dev, ino) = (meta.dev(), meta.ino());
    let offset = match after.and_then(parse_mbox_token) {
        Some((d, i, o)) if d == dev && i == ino && o <= meta.len() => o,
        _ => 0,
    };
    file.seek(SeekFrom::Start(offset)).map_err(|e| SourceError::Read { path: path.to_path_buf(), source: e })?;
    let settled = now.is_none_or(|now| now - meta.mtime() >= SETTLE_SECONDS);
    let reader = MboxReader::starting_at(BufReader::with_capacity(1 << 16, file), path.to_path_buf(), offset);
    Ok(Following { reader, held: VecDeque::new(), settled, source: source.to_string(), dev, ino, fetched_at })
}

/// An mbox read message by message, each handed out only once the next
/// has been seen (or the file has settled): the last one may still be
/// being written.
struct Following<R> {
    reader: MboxReader<R>,
    held: VecDeque<(RawMessage, u64)>,
    settled: bool,
    source: String,
    dev: u64,
    ino: u64,
    fetched_at: i64,
}

impl<R: std::io::BufRead> Iterator for Following<R> {
    type Item = Result<Envelope, SourceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.held.len() > 1 {
                break;
            }
            match self.reader.next() {
                Some(Ok(raw)) => {
                    let resume = self.reader.resume_offset();
                    self.held.push_back((raw, resume));
                }
                Some(Err(e)) => return Some(Err(e)),
                None if self.settled => break,
                None => {
                    // The last message waits for the next pass.
                    if self.held.len() <= 1 {
                        self.held.clear();
                    }
                    break;
                }
            }
        }
        let (raw, resume) = self.held.pop_front()?;
        let token = mbox_token(self.dev, self.ino, resume);
        Some(Ok(envelope(raw, &self.source, token, self.fetched_at)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mbox_tokens_round_trip() {
        assert_eq!(parse_mbox_token(&mbox_token(2049, 77, 1234)), Some((2049, 77, 1234)));
        assert_eq!(parse_mbox_token("1:2"), None);
    }
}
