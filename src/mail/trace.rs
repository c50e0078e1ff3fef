//! The bytes of a message as the store keeps them to read it again.
//!
//! A list mail's header block is often half of it, and most of that block
//! is the trace of its way here: `Received` lines, DKIM and ARC
//! signatures, authentication results, spam scores. [`parse`](super::parse)
//! reads none of them (the sender is verified once, when the message
//! arrives, and the verdict is stored beside it), so what the store keeps
//! of ordinary list traffic that waits to be threaded again goes without
//! them: the same [`Mail`](super::Mail) from fewer bytes.

use std::borrow::Cow;

use super::bare::has_header_block;
use super::strip_mbox_from_line;

/// Header fields that only trace a message's way: named exactly, in any
/// case.
const TRACE: &[&[u8]] = &[
    b"received",
    b"x-received",
    b"dkim-signature",
    b"x-google-dkim-signature",
    b"domainkey-signature",
    b"authentication-results",
    b"received-spf",
    b"x-google-smtp-source",
    b"x-original-authentication-results",
    b"x-forwarded-encrypted",
    b"x-coremail-antispam",
];

/// ... and by prefix: ARC sets, spam and virus scanners' verdicts, the
/// transport headers of Exchange and Gmail.
const TRACE_PREFIXES: &[&[u8]] = &[
    b"arc-",
    b"x-spam",
    b"x-virus-",
    b"x-ms-",
    b"x-microsoft-",
    b"x-forefront-",
    b"x-gm-",
    b"x-ironport-",
    b"x-proofpoint-",
];

fn is_trace(name: &[u8]) -> bool {
    TRACE.iter().any(|t| name.eq_ignore_ascii_case(t))
        || TRACE_PREFIXES.iter().any(|p| name.len() > p.len() && name[..p.len()].eq_ignore_ascii_case(p))
}

/// `raw` without its trace header fields (see the module doc); `raw` as
/// it is where that could read differently: no header block (a text dump
/// is read whole), NUL bytes in it, or a block that would no longer be
/// taken for one.
pub fn without_trace_headers(raw: &[u8]) -> Cow<'_, [u8]> {
    let message = strip_mbox_from_line(raw);
    let from_line = raw.len() - message.len();
    let mut out: Vec<u8> = Vec::new();
    // `raw[copied..at]` is kept and not yet copied.
    let (mut copied, mut at) = (0, from_line);
    let mut dropping = false;
    let mut dropped = false;
    while at < raw.len() {
        let end = memchr::memchr(b'\n', &raw[at..]).map_or(raw.len(), |i| at + i + 1);
        let line = &raw[at..end];
        if line.contains(&0) {
            return Cow::Borrowed(raw);
        }
        if line == b"\n" || line == b"\r\n" {
            break;
        }
        let continued = line.starts_with(b" ") || line.starts_with(b"\t");
        if !continued {
            let name = line.iter().position(|&b| b == b':').map(|c| &line[..c]);
            dropping = name.is_some_and(is_trace);
        }
        if dropping {
            if !dropped {
                out.reserve(raw.len());
            }
            out.extend_from_slice(&raw[copied..at]);
            copied = end;
            dropped = true;
        }
        at = end;
    }
    if !dropped || !has_header_block(message) {
        return Cow::Borrowed(raw);
    }
    out.extend_from_slice(&raw[copied..]);
    if !has_header_block(&out[from_line..]) {
        return Cow::Borrowed(raw);
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_mail(a: &[u8], b: &[u8]) {
        let (a, b) = (super::super::parse(a), super::super::parse(b));
        assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    }

    #[test]
    fn trace_fields_go_with_their_folded_lines() {
        let raw = b"Received: from a by b;\r\n\tMon, 1 Jan 2024 00:00:00 +0000\r\n\
            From: Dev <dev@example.org>\r\nARC-Seal: i=1; a=rsa-sha256;\r\n  b=xyz\r\n\
            Subject: [PATCH] mm: fix\r\nX-Spam-Score: 1\r\nDKIM-Signature: v=1;\r\n d=x\r\n\
            List-Id: <linux-mm.kvack.org>\r\nMessage-ID: <p@x>\r\n\r\nReceived: in the body stays\r\n";
        let kept = without_trace_headers(raw);
        assert_eq!(
            &kept[..],
            b"From: Dev <dev@example.org>\r\nSubject: [PATCH] mm: fix\r\n\
              List-Id: <linux-mm.kvack.org>\r\nMessage-ID: <p@x>\r\n\r\nReceived: in the body stays\r\n"
                .as_slice()
        );
        same_mail(raw, &kept);
    }

    #[test]
    fn an_mbox_from_line_stays() {
        let raw = b"From dev@x Mon Jan  1 00:00:00 2024\nReceived: x\nFrom: a@x\nSubject: s\n\nbody\n";
        assert_eq!(
            &without_trace_headers(raw)[..],
            b"From dev@x Mon Jan  1 00:00:00 2024\nFrom: a@x\nSubject: s\n\nbody\n"
        );
    }

    #[test]
    fn what_could_read_differently_is_kept_whole() {
        // Nothing to drop; NUL bytes in the block; a text dump; a block
        // whose only known field is a trace (without it, a text dump).
        for raw in [
            b"From: a@x\nSubject: s\n\nbody\n".as_slice(),
            b"Received: x\0\nFrom: a@x\n\nbody\n",
            b"Re: a subject line\n\n[Dev]\nbody\n",
            b"Received: x\nFoo: y\n\nbody\n",
        ] {
            assert!(matches!(without_trace_headers(raw), Cow::Borrowed(_)), "{}", String::from_utf8_lossy(raw));
        }
        // A body line that looks like a trace field is the body's.
        assert!(matches!(without_trace_headers(b"From: a@x\n\nReceived: x\n"), Cow::Borrowed(_)));
    }
}
