//! Streaming mbox reader (mboxo and mboxrd).
//!
//! A message starts at a `From ` line that begins the file or follows an
//! empty line. Body lines escaped as `>From ` (mboxo) or `>>From `
//! (mboxrd) lose one `>`. The file is read through a `BufRead` in pieces
//! of at most `PIECE_BYTES`, and a message keeps at most
//! [`MAX_MESSAGE_BYTES`], so memory holds one bounded message at a time
//! however long its lines are.

use std::io::BufRead;
use std::path::PathBuf;

use super::{MAX_MESSAGE_BYTES, RawMessage, SourceError};

/// The most of one line held at once. `read_until` would hold a whole
/// line, and a 200 MB body on one line is a line. Only the first piece of
/// a line can be a separator or an escaped `>From `, and that needs a few
/// bytes, so any size above that is correct; this one keeps the number of
/// calls low.
const PIECE_BYTES: usize = 64 << 10;

pub struct MboxReader<R> {
    reader: R,
    path: PathBuf,
    /// The separator line of the next message, already read.
    pending_from: bool,
    offset: u64,
    next_start: u64,
    /// The piece of a line read last: the whole line when it is shorter
    /// than `piece_bytes`.
    line: Vec<u8>,
    /// Whether `line` begins a line (false for the later pieces of a long one).
    line_start: bool,
    done: bool,
    max_message: usize,
    piece_bytes: usize,
}

/// A message as it is read: its first `max` bytes, and the length and the
/// last bytes of all of it (which tell whether it ends with the blank line
/// the mbox format adds before a separator).
struct Capped {
    bytes: Vec<u8>,
    len: u64,
    tail: [u8; 4],
    max: usize,
}

impl Capped {
    fn new(max: usize) -> Capped {
        Capped { bytes: Vec::new(), len: 0, tail: [0; 4], max }
    }

    fn push(&mut self, piece: &[u8]) {
        self.len += piece.len() as u64;
        let add = piece.len().min(self.max.saturating_sub(self.bytes.len()));
        if self.bytes.capacity() - self.bytes.len() < add {
            // Doubling could reserve twice the cap for a message cut at it.
            let want = (self.bytes.capacity() * 2).max(self.bytes.len() + add).min(self.max);
            self.bytes.reserve_exact(want - self.bytes.len());
        }
        self.bytes.extend_from_slice(&piece[..add]);
        let keep = piece.len().min(4);
        self.tail.rotate_left(keep);
        self.tail[4 - keep..].copy_from_slice(&piece[piece.len() - keep..]);
    }

    /// Whether the whole message ends with `suffix` (at most 4 bytes).
    fn ends_with(&self, suffix: &[u8]) -> bool {
        self.len >= suffix.len() as u64 && self.tail.ends_with(suffix)
    }

    /// Drops the line end of a final blank line: it belongs to the mbox
    /// format. `always`: a separator followed, so the blank line is there.
    fn strip_separator_blank(&mut self, always: bool) {
        if !(always || self.ends_with(b"\n\n") || self.ends_with(b"\r\n\r\n")) {
            return;
        }
        let strip = if self.ends_with(b"\r\n") {
            2
        } else if self.ends_with(b"\n") {
            1
        } else {
            0
        };
        self.len -= strip;
        let kept = usize::try_from(self.len).unwrap_or(usize::MAX);
        self.bytes.truncate(kept);
    }

    fn into_raw(mut self, offset: u64) -> RawMessage {
        // Growing by doubling leaves a third of the buffer unused on
        // average; messages wait in queues and batches (thousands at a
        // time), so give the slack back: a copy costs less than the memory.
        if self.bytes.capacity() - self.bytes.len() > self.bytes.len() / 16 + 256 {
            self.bytes.shrink_to_fit();
        }
        RawMessage { bytes: self.bytes, original_len: self.len, offset: Some(offset), removed: false }
    }
}

impl<R: BufRead> MboxReader<R> {
    pub fn new(reader: R, path: PathBuf) -> Self {
        MboxReader {
            reader,
            path,
            pending_from: false,
            offset: 0,
            next_start: 0,
            line: Vec::new(),
            line_start: true,
            done: false,
            max_message: MAX_MESSAGE_BYTES,
            piece_bytes: PIECE_BYTES,
        }
    }

    /// A reader of a file already read up to `offset` (a followed mbox):
    /// offsets are reported from the start of the file.
    pub fn starting_at(reader: R, path: PathBuf, offset: u64) -> Self {
        let mut r = MboxReader::new(reader, path);
        r.offset = offset;
        r.next_start = offset;
        r
    }

    /// Where reading would go on after the message returned last: the
    /// start of the next message, or the end of the file.
    pub fn resume_offset(&self) -> u64 {
        if self.done { self.offset } else { self.next_start }
    }

    /// Small limits, so tests can cut messages and split lines cheaply.
    #[cfg(test)]
    fn with_limits(mut self, max_message: usize, piece_bytes: usize) -> Self {
        self.max_message = max_message;
        self.piece_bytes = piece_bytes;
        self
    }

    /// Reads the next piece of a line into `self.line`: up to and with its
    /// `\n`, or `piece_bytes` of it; false at end of file.
    fn read_piece(&mut self) -> Result<bool, SourceError> {
        self.line_start = self.line.is_empty() || self.line.ends_with(b"\n");
        self.line.clear();
        while self.line.len() < self.piece_bytes {
            let buf = match self.reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(SourceError::Read { path: self.path.clone(), source: e }),
            };
            if buf.is_empty() {
                break;
            }
            let room = &buf[..buf.len().min(self.piece_bytes - self.line.len())];
            let (take, ends_line) = match memchr::memchr(b'\n', room) {
                Some(i) => (i + 1, true),
                None => (room.len(), false),
            };
            self.line.extend_from_slice(&room[..take]);
            self.reader.consume(take);
            if ends_line {
                break;
            }
        }
        self.offset += self.line.len() as u64;
        Ok(!self.line.is_empty())
    }

    /// Where the piece just read began.
    fn piece_offset(&self) -> u64 {
        self.offset - self.line.len() as u64
    }
}

fn is_separator(line: &[u8]) -> bool {
    line.starts_with(b"From ")
}

fn is_blank_line(line: &[u8]) -> bool {
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
        loop {
            match self.read_message()? {
                Ok(m) if m.is_blank() => {}
                other => return Some(other),
            }
        }
    }
}

impl<R: BufRead> MboxReader<R> {
    /// The next message, blank ones included.
    fn read_message(&mut self) -> Option<Result<RawMessage, SourceError>> {
        if self.done {
            return None;
        }
        // Find the first separator (only before the first message).
        while !self.pending_from {
            match self.read_piece() {
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Ok(false) => {
                    self.done = true;
                    return None;
                }
                Ok(true) if self.line_start && is_separator(&self.line) => {
                    self.pending_from = true;
                    self.next_start = self.piece_offset();
                }
                Ok(true) => {}
            }
        }
        let start = self.next_start;
        let mut message = Capped::new(self.max_message);
        let mut prev_blank = false;
        // The rest of a separator line longer than a piece is not message.
        let mut in_separator = true;
        loop {
            match self.read_piece() {
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Ok(false) => {
                    self.done = true;
                    break;
                }
                Ok(true) if !self.line_start => {
                    if !in_separator {
                        prev_blank = false;
                        message.push(&self.line);
                    }
                }
                Ok(true) => {
                    in_separator = false;
                    if prev_blank && is_separator(&self.line) {
                        self.next_start = self.piece_offset();
                        break;
                    }
                    prev_blank = is_blank_line(&self.line);
                    message.push(unescape(&self.line));
                }
            }
        }
        message.strip_separator_blank(!self.done);
        Some(Ok(message.into_raw(start)))
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

    /// Every input read with a message cap of 16 bytes and lines split into
    /// pieces of 8: (mbox, [(kept bytes, original length, offset)]).
    #[test]
    fn long_lines_are_read_in_pieces_and_messages_cut() {
        type Case = (&'static [u8], &'static [(&'static [u8], u64, u64)]);
        let cases: &[Case] = &[
            // Short messages are whole.
            (b"From a\nx: 1\n\nbody\n", &[(b"x: 1\n\nbody\n", 11, 0)]),
            // A long message keeps its first 16 bytes and its full length,
            // and the next message is found.
            (
                b"From a\nSubject: long\n\n0123456789012345678901234567890123456789\n\nFrom b\nx: 2\n",
                &[(b"Subject: long\n\n0", 56, 0), (b"x: 2\n", 5, 64)],
            ),
            // The last piece of a long line is not a blank line, so the
            // `From ` line after it is not a separator.
            (b"From a\nx\n\nAAAAAAAA\nFrom b\n", &[(b"x\n\nAAAAAAAA\nFrom", 19, 0)]),
            // A later piece of a line that starts with `From ` is not one
            // either, even after a blank line.
            (b"From a\nx\n\n12345678From b\n\nFrom c\nz\n", &[(b"x\n\n12345678From ", 18, 0), (b"z\n", 2, 26)]),
            // A separator longer than a piece is skipped whole.
            (b"From aaaaaaaaaaaa\nx\n\nFrom bbbbbbbbbbbbbbbb\ny\n", &[(b"x\n", 2, 0), (b"y\n", 2, 21)]),
            // A separator right after a cut message, CRLF line ends.
            (
                b"From a\r\nSubject: long long long\r\n\r\nFrom b\r\ny\r\n",
                &[(b"Subject: long lo", 25, 0), (b"y\r\n", 3, 35)],
            ),
            // Blank messages are none (only whitespace, or nothing).
            (b"From a\n\nFrom b\nx: 1\n\nFrom c\n \n", &[(b"x: 1\n", 5, 8)]),
            // `>From ` is unescaped in the first piece of a line only (26:
            // the one in a later piece kept its `>`).
            (b"From a\nx\n\n>From me\n12345678>From \n", &[(b"x\n\nFrom me\n12345", 26, 0)]),
        ];
        for (input, want) in cases {
            let got: Vec<(Vec<u8>, u64, u64)> = MboxReader::new(*input, PathBuf::from("t.mbox"))
                .with_limits(16, 8)
                .map(|m| m.unwrap())
                .map(|m| (m.bytes, m.original_len, m.offset.unwrap()))
                .collect();
            let want: Vec<(Vec<u8>, u64, u64)> = want.iter().map(|(b, n, o)| (b.to_vec(), *n, *o)).collect();
            assert_eq!(got, want, "input {:?}", String::from_utf8_lossy(input));
        }
    }
}
