//! Where raw messages come from: mbox files, Maildirs and single `.eml`
//! files (IMAP joins them later). An I/O edge: it reads files and nothing
//! else, and hands out [`RawMessage`]s one at a time so memory stays flat
//! however large the archive.

pub mod maildir;
pub mod mbox;

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

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
    #[error("{path} is not an mbox file, a Maildir or a mail file")]
    NotMail { path: PathBuf },
}

/// One message as it arrived, before any parsing.
#[derive(Clone, Debug)]
pub struct RawMessage {
    pub bytes: Vec<u8>,
    /// Byte offset of the message in an mbox file.
    pub offset: Option<u64>,
}

/// The kinds of offline source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Mbox,
    Maildir,
    Eml,
}

/// Tells the format of `path` by looking at it.
pub fn detect(path: &Path) -> Result<Format, SourceError> {
    let meta = std::fs::metadata(path).map_err(|e| SourceError::Open { path: path.into(), source: e })?;
    if meta.is_dir() {
        return if maildir::is_maildir(path) {
            Ok(Format::Maildir)
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

/// Total size in bytes of what `path` holds, for progress bars.
pub fn size_hint(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| if m.is_dir() { 0 } else { m.len() }).unwrap_or(0)
}

pub type Messages = Box<dyn Iterator<Item = Result<RawMessage, SourceError>>>;

/// Opens any offline source and iterates over its messages.
pub fn open(path: &Path) -> Result<Messages, SourceError> {
    match detect(path)? {
        Format::Mbox => {
            let f = File::open(path).map_err(|e| SourceError::Open { path: path.into(), source: e })?;
            Ok(Box::new(mbox::MboxReader::new(BufReader::with_capacity(1 << 16, f), path.to_path_buf())))
        }
        Format::Maildir => Ok(Box::new(maildir::read(path)?)),
        Format::Eml => {
            let bytes = std::fs::read(path).map_err(|e| SourceError::Read { path: path.into(), source: e })?;
            Ok(Box::new(std::iter::once(Ok(RawMessage { bytes, offset: None }))))
        }
    }
}
