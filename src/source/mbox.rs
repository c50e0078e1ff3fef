//! Streaming mbox reader (mboxo and mboxrd).
//!
//! A message starts at a `From ` line that begins the file or follows an
//! empty line. Body lines escaped as `>From ` (mboxo) or `>>From `
//! (mboxrd) lose one `>`. The file is read line by line through a
//! `BufRead`, so memory holds one message at a time.

use std::io::BufRead;
use std::path::PathBuf;

use super::{RawMessage, SourceError};

pub struct MboxReader<R> {
    reader: R,
    path: PathBuf,
    /// The separator line of the next message, already read.
    pending_from: bool,
    offset: u64,
    next_start: u64,
    line: Vec<u8>,
    done: bool,
}

impl<R: BufRead> MboxReader<R> {
    pub fn new(reader: R, path: PathBuf) -> Self {
        MboxReader { reader, path, pending_from: false, offset: 0, next_start: 0, line: Vec::new(), done: false }
    }

    /// Reads one line into `self.line`; false at end of file.
    fn read_line(&mut self) -> Result<bool, SourceError> {
        self.line.clear();
        let n = self
            .reader
            .read_until(b'\n', &mut self.line)
            .map_err(|e| SourceError::Read { path: self.path.clone(), source: e })?;
        self.offset += n as u64;
        Ok(n > 0)
    }
}

fn is_separator(line: &[u8]) -> bool {
    line.starts_with(b"From ")
}

fn is_blank(line: &[u8]) -> bool {
    line == b"\n" || line == b"\r\n"
}

/// `>From ` / `>>From ` -> one `>` less.
fn unescape(line: &[u8]) -> &[u8] {
    let gts = line.iter().take_while(|&&b| b == b'>').count();
    if gts > 0 && line[gts..].starts_with(b"From ") { &line[1..] } else { line }
}

impl<R: BufRead> Iterator for MboxReader<R> {
    type Item = Result<RawMessage, SourceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        // Find the first separator (only before the first message).
        while !self.pending_from {
            match self.read_line() {
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Ok(false) => {
                    self.done = true;
                    return None;
                }
                Ok(true) if is_separator(&self.line) => {
                    self.pending_from = true;
                    self.next_start = self.offset - self.line.len() as u64;
                }
                Ok(true) => {}
            }
        }
        let start = self.next_start;
        let mut bytes = Vec::new();
        let mut prev_blank = false;
        loop {
            match self.read_line() {
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Ok(false) => {
                    self.done = true;
                    break;
                }
                Ok(true) => {
                    if prev_blank && is_separator(&self.line) {
                        self.next_start = self.offset - self.line.len() as u64;
                        break;
                    }
                    prev_blank = is_blank(&self.line);
                    bytes.extend_from_slice(unescape(&self.line));
                }
            }
        }
        // The blank line before a separator belongs to the mbox format.
        if !self.done || bytes.ends_with(b"\n\n") || bytes.ends_with(b"\r\n\r\n") {
            if bytes.ends_with(b"\r\n") {
                bytes.truncate(bytes.len() - 2);
            } else if bytes.ends_with(b"\n") {
                bytes.truncate(bytes.len() - 1);
            }
        }
        // Growing by doubling can leave half the buffer unused; messages
        // may wait in batches, so give the slack back.
        if bytes.capacity() - bytes.len() > 64 << 10 {
            bytes.shrink_to_fit();
        }
        Some(Ok(RawMessage { bytes, offset: Some(start) }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(data: &[u8]) -> Vec<Vec<u8>> {
        MboxReader::new(data, PathBuf::from("t.mbox")).map(|m| m.unwrap().bytes).collect()
    }

    #[test]
    fn splits_and_unescapes() {
        let data = b"From a@b Mon Jan  1 00:00:00 2024\nSubject: one\n\n>From here\n>>From there\nFrom inside a line\n\nFrom c@d Mon Jan  1 00:00:00 2024\nSubject: two\n\nbody\n";
        let msgs = read(data);
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0], b"Subject: one\n\nFrom here\n>From there\nFrom inside a line\n".to_vec());
        assert_eq!(msgs[1], b"Subject: two\n\nbody\n".to_vec());
    }

    #[test]
    fn crlf_and_garbage_before_first() {
        let data = b"junk\r\nFrom a@b x\r\nSubject: one\r\n\r\nbody\r\n\r\nFrom c@d y\r\nSubject: two\r\n";
        let msgs = read(data);
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0], b"Subject: one\r\n\r\nbody\r\n".to_vec());
        assert_eq!(msgs[1], b"Subject: two\r\n".to_vec());
    }

    #[test]
    fn empty_input() {
        assert!(read(b"").is_empty());
        assert!(read(b"no separator at all\n").is_empty());
    }
}
