//! The header block as bytes: where it ends, its NUL bytes, and the three
//! headers that carry Message-IDs.
//!
//! The ids are a message's identity (duplicates, threading), so they are
//! read here from the bytes rather than from mail-parser's text: that text
//! turns every byte that is not UTF-8 into U+FFFD, so two different ids
//! could come out as one. And a NUL byte anywhere in a header name (a
//! damaged archive has them) made mail-parser miss the header, or
//! [`super::bare`] take the block for no headers at all; the message then
//! got a synthesized Message-ID and lost its References, and was stored a
//! second time as a new case. NUL bytes outside an id are ignored here,
//! and dropped from the block mail-parser reads.

use std::borrow::Cow;

use crate::model::MessageId;

/// Every line as (start, end of its text, start of the next line).
fn lines(raw: &[u8]) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos >= raw.len() {
            return None;
        }
        let start = pos;
        let nl = memchr::memchr(b'\n', &raw[pos..]).map_or(raw.len(), |i| pos + i);
        pos = nl + 1;
        let end = if nl > start && raw[nl - 1] == b'\r' { nl - 1 } else { nl };
        Some((start, end, pos.min(raw.len())))
    })
}

/// A line that ends the header block: empty once NUL bytes are ignored.
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| b == 0)
}

/// The lines of the header block as (start, end) without their line end,
/// up to the blank line that ends it.
fn header_lines(raw: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    lines(raw).map(|(start, end, _)| (start, end)).take_while(|&(start, end)| !is_blank(&raw[start..end]))
}

/// The header block with its NUL bytes dropped (the blank line that ends
/// it included), then the rest as it is; borrowed when there are none.
pub(super) fn without_nuls(raw: &[u8]) -> Cow<'_, [u8]> {
    let block_end =
        lines(raw).find(|&(start, end, _)| is_blank(&raw[start..end])).map_or(raw.len(), |(_, _, next)| next);
    if memchr::memchr(0, &raw[..block_end]).is_none() {
        return Cow::Borrowed(raw);
    }
    let mut out = Vec::with_capacity(raw.len());
    out.extend(raw[..block_end].iter().filter(|&&b| b != 0));
    out.extend_from_slice(&raw[block_end..]);
    Cow::Owned(out)
}

/// The raw values of the headers that name Message-IDs; the last header of
/// a name counts, as in mail-parser.
#[derive(Default)]
pub(super) struct IdHeaders<'a> {
    pub message_id: Option<&'a [u8]>,
    pub in_reply_to: Option<&'a [u8]>,
    pub references: Option<&'a [u8]>,
}

const NAMES: [&str; 3] = ["message-id", "in-reply-to", "references"];

/// Header names compare as mail-parser compares them (case and whitespace
/// ignored), and NUL bytes in them are ignored too.
fn name_index(name: &[u8]) -> Option<usize> {
    let letters = || name.iter().filter(|&&b| b != 0 && !b.is_ascii_whitespace()).map(u8::to_ascii_lowercase);
    NAMES.iter().position(|n| letters().eq(n.bytes()))
}

pub(super) fn id_headers(raw: &[u8]) -> IdHeaders<'_> {
    let mut found: [Option<&[u8]>; 3] = [None; 3];
    // The header being read: which one, and where its value starts and ends.
    let mut current: Option<(usize, usize, usize)> = None;
    for (start, end) in header_lines(raw) {
        let line = &raw[start..end];
        // Not blank, so some byte is not NUL.
        let lead = line.iter().position(|&b| b != 0).unwrap_or(0);
        if matches!(line[lead], b' ' | b'\t') {
            if let Some((_, _, value_end)) = &mut current {
                *value_end = end;
            }
            continue;
        }
        if let Some((i, from, to)) = current.take() {
            found[i] = Some(&raw[from..to]);
        }
        current =
            memchr::memchr(b':', line).and_then(|colon| Some((name_index(&line[..colon])?, start + colon + 1, end)));
    }
    if let Some((i, from, to)) = current {
        found[i] = Some(&raw[from..to]);
    }
    let [message_id, in_reply_to, references] = found;
    IdHeaders { message_id, in_reply_to, references }
}

/// The ids of a header value: what stands between `<` and `>`, without
/// the spaces at either end (as mail-parser reads them); when there is no
/// such id, the words with no bracket in them. Only an id folded across
/// lines is copied, so a References list of any length is read in one
/// pass.
pub(super) fn id_spans(value: &[u8]) -> impl Iterator<Item = Cow<'_, [u8]>> {
    let has_bracketed = bracketed(value).next().is_some();
    let words = words(value).filter(move |w| !has_bracketed && !w.iter().any(|&b| b == b'<' || b == b'>'));
    bracketed(value).map(unfold).chain(words.map(Cow::Borrowed))
}

/// The words of a value; NUL bytes at either end of a word are outside it.
fn words(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|b| b.is_ascii_whitespace())
        .map(|w| {
            let start = w.iter().position(|&b| b != 0).unwrap_or(w.len());
            let end = w.iter().rposition(|&b| b != 0).map_or(start, |i| i + 1);
            &w[start..end]
        })
        .filter(|w| !w.is_empty())
}

/// Some mailers fold a long id across lines (`<CAL...OP\n =H4Q@mail...>`);
/// an id holds no whitespace, so the line break and the spaces around it
/// go. Other whitespace stays, and the id is then refused.
fn unfold(id: &[u8]) -> Cow<'_, [u8]> {
    if memchr::memchr(b'\n', id).is_none() {
        return Cow::Borrowed(id);
    }
    let lines = id.split(|&b| b == b'\n').count();
    let mut out = Vec::with_capacity(id.len());
    for (i, line) in id.split(|&b| b == b'\n').enumerate() {
        let line = if i > 0 { line.trim_ascii_start() } else { line };
        let line = if i + 1 < lines { line.trim_ascii_end() } else { line };
        out.extend_from_slice(line);
    }
    Cow::Owned(out)
}

fn bracketed(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        loop {
            let open = pos + memchr::memchr(b'<', value.get(pos..)?)?;
            let close = open + 1 + memchr::memchr2(b'>', b'<', &value[open + 1..])?;
            pos = close;
            if value[close] == b'<' {
                continue; // `<a <b>`: the second `<` starts the id
            }
            pos = close + 1;
            let id = value[open + 1..close].trim_ascii();
            if !id.is_empty() {
                return Some(id);
            }
        }
    })
}

/// The Message-ID: the last id of the value; with no bracketed id, the
/// value must be one word.
pub(super) fn message_id(value: &[u8]) -> Option<MessageId> {
    if bracketed(value).next().is_none() && words(value).count() > 1 {
        return None;
    }
    id_spans(value).last().and_then(|id| MessageId::from_bytes(&id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(value: &[u8]) -> Vec<String> {
        id_spans(value).map(|s| String::from_utf8_lossy(&s).into_owned()).collect()
    }

    #[test]
    fn ids_of_a_value() {
        let cases: &[(&[u8], &[&str])] = &[
            (b" <a@b>", &["a@b"]),
            (b" <a@b>\n <c@d>\t<e@f> (comment)", &["a@b", "c@d", "e@f"]),
            (b" < a@b >", &["a@b"]),
            (b" bare@id", &["bare@id"]),
            (b" \0", &[]),
            (b" \0bare\0id\0 ", &["bare\0id"]),
            (b" one@x two@y", &["one@x", "two@y"]),
            (b" <> <a <b@c>", &["b@c"]),
            (b" <a\0b@c> \0", &["a\0b@c"]),
            // Folded inside the brackets: the break goes, a space stays.
            (b" <CAL+OP\r\n =H4Q@mail> <a \n b@c>", &["CAL+OP=H4Q@mail", "ab@c"]),
            (b" <a b@c>", &["a b@c"]),
            (b" <unterminated", &[]),
            (b"", &[]),
        ];
        for (value, want) in cases {
            assert_eq!(ids(value), *want, "{:?}", String::from_utf8_lossy(value));
        }
    }

    #[test]
    fn id_headers_are_found_through_folding_case_and_nuls() {
        let raw = b"From: a\r\nmessage-id: <first@x>\r\nIn-Reply-To:\r\n <p@x>\r\n\0References: <r1@x>\r\n\0\t<r2@x>\r\nMessage\0-ID: <last@x>\r\nX: y\r\n\0\r\nMessage-ID: <body@x>\r\n";
        let h = id_headers(raw);
        assert_eq!(h.message_id, Some(&b" <last@x>"[..]));
        assert_eq!(ids(h.in_reply_to.unwrap()), ["p@x"]);
        assert_eq!(ids(h.references.unwrap()), ["r1@x", "r2@x"]);
    }

    #[test]
    fn nuls_leave_the_header_block_only() {
        let raw = b"Sub\0ject: a\0b\n\0From: c\n\0\nbody\0\n";
        assert_eq!(&without_nuls(raw)[..], b"Subject: ab\nFrom: c\n\nbody\0\n");
        assert!(matches!(without_nuls(b"Subject: a\n\nbody\0"), Cow::Borrowed(_)));
    }
}
