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
    /// Whether whole lines are taken straight from the reader's buffer
    /// ([`Self::take_lines`]); off only in tests, to compare with the
    /// piece-by-piece path.
    whole_lines: bool,
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

    /// Makes room for `n` more bytes (as far as the cap keeps them) at
    /// once, for what [`MboxReader::take_lines`] is about to push.
    /// Later pushes of a message longer than a buffer grow it as
    /// [`Self::push`] does.
    fn reserve(&mut self, n: usize) {
        if self.bytes.capacity() == 0 {
            self.bytes.reserve_exact(n.min(self.max));
        }
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
            whole_lines: true,
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

    /// Takes the whole lines the reader's buffer holds, at a line start
    /// inside a message, straight into `message`: what [`Self::read_piece`]
    /// line by line would, in a few copies. Only a line that starts with
    /// `From ` or `>`s and `From ` is looked at: a separator when the line
    /// before it is blank (`prev_blank` carries that across calls), else
    /// one `>` less. Stops before a separator ([`Lines::Separator`]: not
    /// consumed) or after the last whole line ([`Lines::Taken`]);
    /// [`Lines::None`] when the buffer holds no whole line (a line longer
    /// than it, or the end of the file), left to `read_piece`.
    fn take_lines(&mut self, message: &mut Capped, prev_blank: &mut bool) -> Result<Lines, SourceError> {
        let buf = loop {
            match self.reader.fill_buf() {
                Ok(b) => break b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(SourceError::Read { path: self.path.clone(), source: e }),
            }
        };
        let Some(last_nl) = memchr::memrchr(b'\n', buf) else { return Ok(Lines::None) };
        let lines = &buf[..=last_nl];
        // The stretches to copy: everything but the `>` an escaped line
        // loses.
        let mut cuts: Vec<usize> = Vec::new();
        let mut end = lines.len();
        let mut separator = false;
        let mut at = 0;
        while let Some(i) = memchr::memmem::find(&lines[at..], b"From ") {
            let p = at + i;
            at = p + 5;
            let start = memchr::memrchr(b'\n', &lines[..p]).map_or(0, |n| n + 1);
            let gts = p - start;
            if lines[start..p].iter().any(|&b| b != b'>') {
                continue;
            }
            if gts > 0 {
                cuts.push(start);
                continue;
            }
            let blank_before = if start == 0 { *prev_blank } else { line_before_is_blank(&lines[..start]) };
            if blank_before {
                end = start;
                separator = true;
                break;
            }
        }
        let copied = end - cuts.len();
        message.reserve(copied);
        let mut from = 0;
        for cut in cuts {
            message.push(&lines[from..cut]);
            from = cut + 1;
        }
        message.push(&lines[from..end]);
        if end > 0 {
            *prev_blank = line_before_is_blank(&lines[..end]);
        }
        self.reader.consume(end);
        self.offset += end as u64;
        // `read_piece` starts a line: what it read last is over.
        self.line.clear();
        Ok(if separator { Lines::Separator } else { Lines::Taken })
    }
}

/// What [`MboxReader::take_lines`] found.
enum Lines {
    Taken,
    Separator,
    None,
}

/// Whether the last line of `text` (which ends with a line end) is blank.
fn line_before_is_blank(text: &[u8]) -> bool {
    text == b"\n" || text == b"\r\n" || text.ends_with(b"\n\n") || text.ends_with(b"\n\r\n")
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
            if self.whole_lines && (self.line.is_empty() || self.line.ends_with(b"\n")) {
                let found = match self.take_lines(&mut message, &mut prev_blank) {
                    Ok(found) => found,
                    Err(e) => {
                        self.done = true;
                        return Some(Err(e));
                    }
                };
                match found {
                    Lines::None => {}
                    Lines::Taken => {
                        in_separator = false;
                        continue;
                    }
                    Lines::Separator => match self.read_piece() {
                        Ok(_) => {
                            self.next_start = self.piece_offset();
                            break;
                        }
                        Err(e) => {
                            self.done = true;
                            return Some(Err(e));
                        }
                    },
                }
            }
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

    /// Messages, lengths and offsets as the piece-by-piece path reads them
    /// (`whole_lines` off) and as whole lines from buffers of every size
    /// read them, for mboxes made of lines that start or look like
    /// separators, escapes, blank lines and lines longer than a piece.
    #[test]
    fn whole_lines_read_as_pieces_do() {
        const LINES: &[&[u8]] = &[
            b"From a@b Mon Jan  1 00:00:00 2024\n",
            b"From x\r\n",
            b">From me\n",
            b">>From you\n",
            b">>x From\n",
            b"\n",
            b"\r\n",
            b"Subject: s\n",
            b"From: a@b\n",
            b"body From here\n",
            b"0123456789012From 345\n",
            b"> quoted\n",
            b">\n",
            b"no line end",
        ];
        fn read_all(input: &[u8], whole_lines: bool, capacity: usize, max: usize) -> (Vec<(Vec<u8>, u64, u64)>, u64) {
            let mut r = MboxReader::new(std::io::BufReader::with_capacity(capacity, input), PathBuf::from("t.mbox"))
                .with_limits(max, 8);
            r.whole_lines = whole_lines;
            let got = r.by_ref().map(|m| m.unwrap()).map(|m| (m.bytes, m.original_len, m.offset.unwrap())).collect();
            (got, r.resume_offset())
        }
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut messages = 0;
        for _ in 0..300 {
            let n = 1 + next() % 24;
            let mut input: Vec<u8> = Vec::new();
            for i in 0..n {
                let pick = (next() % LINES.len() as u64) as usize;
                // A line without its end only ends the file.
                if LINES[pick].ends_with(b"\n") || i == n - 1 {
                    input.extend_from_slice(LINES[pick]);
                }
            }
            for max in [12, 1 << 20] {
                let want = read_all(&input, false, 1 << 20, max);
                messages += want.0.len();
                for capacity in (1..=40).chain([1 << 20]) {
                    let got = read_all(&input, true, capacity, max);
                    assert_eq!(
                        got,
                        want,
                        "capacity {capacity}, cap {max}, input {:?}",
                        String::from_utf8_lossy(&input)
                    );
                }
            }
        }
        assert!(messages > 300, "the inputs hold messages: {messages}");
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
