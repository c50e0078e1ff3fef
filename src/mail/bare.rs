//! Inputs without an RFC 5322 header block.
//!
//! Archive pages and copy-pastes of list mail arrive as plain text: often a
//! subject line, a blank line, an `[Author Name]` line and the body. They
//! still carry reports worth extracting, so they become a [`Mail`] with a
//! synthesized Message-ID rather than an error.

use super::{Address, Layout, Mail, collapse_ws, normalise_text, synthesize_message_id};

/// Header names whose presence in the first block makes it a header block.
/// A lone `Re: [LKP] ...` subject line is syntactically a header too, so
/// syntax alone is not enough.
const KNOWN_HEADERS: &[&str] = &[
    "from",
    "to",
    "cc",
    "subject",
    "date",
    "message-id",
    "received",
    "return-path",
    "delivered-to",
    "mime-version",
    "content-type",
    "in-reply-to",
    "references",
    "sender",
    "list-id",
    "reply-to",
    "dkim-signature",
    "received-spf",
    "authentication-results",
    "arc-seal",
    "x-mailer",
    "user-agent",
];

/// True when the bytes start with a plausible header block.
pub(super) fn has_header_block(raw: &[u8]) -> bool {
    // Works on bytes and decides on the first known header name: this runs
    // on every message, and a real header block names one within lines.
    for (n, line) in raw.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return false;
        }
        if line.starts_with(b" ") || line.starts_with(b"\t") {
            if n == 0 {
                return false;
            }
            continue;
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return false;
        };
        let name = &line[..colon];
        if name.is_empty() || !name.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
            return false;
        }
        let prefixed = |p: &[u8]| name.len() > p.len() && name[..p.len()].eq_ignore_ascii_case(p);
        if KNOWN_HEADERS.iter().any(|h| h.as_bytes().eq_ignore_ascii_case(name)) || prefixed(b"x-") || prefixed(b"arc-")
        {
            return true;
        }
    }
    false
}

/// The bytes after the first blank line.
pub(super) fn after_headers(raw: &[u8]) -> &[u8] {
    let mut i = 0;
    while i < raw.len() {
        let end = raw[i..].iter().position(|&b| b == b'\n').map_or(raw.len(), |p| i + p);
        let line = &raw[i..end];
        if line.is_empty() || line == b"\r" {
            return raw.get(end + 1..).unwrap_or(&[]);
        }
        i = end + 1;
    }
    &[]
}

/// Decodes text of unknown charset: UTF-8 when it is valid, else
/// Windows-1252 (a superset of Latin-1 for printable text), byte by byte.
pub(super) fn decode_unknown(raw: &[u8]) -> String {
    match std::str::from_utf8(raw) {
        Ok(s) => s.to_string(),
        Err(_) => raw.iter().map(|&b| windows_1252(b)).collect(),
    }
}

fn windows_1252(b: u8) -> char {
    const HIGH: [char; 32] = [
        '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8d}', 'Ž', '\u{8f}', '\u{90}', '‘',
        '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9d}', 'ž', 'Ÿ',
    ];
    match b {
        0x80..=0x9f => HIGH[usize::from(b - 0x80)],
        _ => char::from(b),
    }
}

pub(super) fn parse_text_dump(raw: &[u8]) -> Mail {
    let mut problems = vec!["layout: no header block; read as a text dump".to_string()];
    let text = normalise_text(decode_unknown(raw), &mut problems);
    let lines: Vec<&str> = text.split('\n').collect();
    let mut subject = String::new();
    let mut from = None;
    let mut start = 0;

    let first = lines.first().map(|l| l.trim()).unwrap_or("");
    let second_blank = lines.get(1).is_some_and(|l| l.trim().is_empty());
    if second_blank && looks_like_subject(first) {
        subject = collapse_ws(first);
        start = 2;
        // Skip blank lines, then an optional `[Author Name]` line.
        while lines.get(start).is_some_and(|l| l.trim().is_empty()) {
            start += 1;
        }
        if let Some(l) = lines.get(start) {
            let t = l.trim();
            if t.len() > 2 && t.len() < 120 && t.starts_with('[') && t.ends_with(']') && !t[1..].contains('[') {
                from = Some(Address { name: Some(t[1..t.len() - 1].trim().to_string()), email: None });
                start += 1;
            }
        }
    }
    let body = lines.get(start..).map(|l| l.join("\n")).unwrap_or_default();

    Mail {
        message_id: synthesize_message_id(raw),
        message_id_synthesized: true,
        in_reply_to: None,
        references: Vec::new(),
        from,
        to: Vec::new(),
        cc: Vec::new(),
        subject,
        date: None,
        list_id: None,
        list_copy: false,
        auto_submitted: None,
        precedence: None,
        return_path: None,
        delivery_report: false,
        body,
        attachments: Vec::new(),
        layout: Layout::TextDump,
        problems,
    }
}

/// A subject line is short and carries a tag or a reply prefix; a greeting
/// ("Greeting,", "Hello,") or a sentence of the body is not one.
fn looks_like_subject(line: &str) -> bool {
    if line.is_empty() || line.len() > 300 || line.ends_with(',') {
        return false;
    }
    line.contains('[') || super::subject_is_reply(line) || line.contains(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_block_detection() {
        assert!(has_header_block(b"From: a@b.c\nSubject: x\n\nbody"));
        assert!(has_header_block(b"Received-SPF: pass\r\nDate:   Wed\r\n\r\nbody"));
        assert!(!has_header_block(b"Re: [lkp-robot] [mm/cma] 2b0f904a5a: x\n\n[Joonsoo Kim]\n"));
        assert!(!has_header_block(b"Greeting,\nFYI, we noticed"));
        assert!(!has_header_block(b""));
    }

    #[test]
    fn text_dump_with_subject_and_author() {
        let m = parse_text_dump(b"[LKP] Re: [mm/mremap] ecf8443e51: x -29.4% regression\n\n[Liu, Yujie]\n\nHi,\n");
        assert_eq!(m.subject, "[LKP] Re: [mm/mremap] ecf8443e51: x -29.4% regression");
        assert_eq!(m.from.unwrap().name.as_deref(), Some("Liu, Yujie"));
        assert_eq!(m.body, "\nHi,\n");
    }

    #[test]
    fn text_dump_without_subject() {
        let m = parse_text_dump(b"Greeting,\nFYI, we noticed");
        assert_eq!(m.subject, "");
        assert!(m.body.starts_with("Greeting,"));
    }

    #[test]
    fn latin1_bytes_are_decoded() {
        assert_eq!(decode_unknown(b"a \xb1 3%"), "a ± 3%");
    }
}
