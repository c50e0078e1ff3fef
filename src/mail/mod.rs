//! Raw bytes -> [`Mail`]: the normalised message every later stage reads.
//!
//! Owns MIME parsing (through `mail-parser`), header decoding, charset
//! decoding, html-to-text, attachment listing, address de-obfuscation and
//! the quoted/unquoted split. Best effort: [`parse`] never fails and never
//! panics; what went wrong is recorded in [`Mail::problems`].
//! Pure: no I/O, no clock.

mod bare;
pub mod quote;
mod raw_headers;
mod trace;

use crate::model::MessageId;
use mail_parser::{Address as MpAddress, HeaderName, MessageParser, MimeHeaders};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::{HashSet, VecDeque};
use std::sync::LazyLock;

pub use trace::without_trace_headers;

/// The text body is cut at this many bytes: reports are far smaller, and a
/// giant part must not make classification slow.
pub const MAX_BODY_BYTES: usize = 8 << 20;

/// The text of a `text/plain` attachment is kept up to this many bytes:
/// enough for the comparison table or the dmesg an LKP engineer attaches
/// to a retest; the kernel configs the robot attaches are cut.
pub const MAX_ATTACHMENT_TEXT: usize = 256 << 10;

/// At most this many ancestors of one message are kept: its In-Reply-To,
/// the first References entry (the thread's root) and the nearest ones.
/// Threading needs those: a reply names its report near the end of the
/// list, and a deep thread still names its root first. Kernel threads are
/// a few dozen messages deep at the most, while a broken or hostile header
/// of 100,000 ids would otherwise cost a lookup and a stored row each.
pub const MAX_ANCESTORS: usize = 64;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Address {
    pub name: Option<String>,
    pub email: Option<String>,
}

impl Address {
    /// Lower-cased e-mail address, if any.
    pub fn email_lc(&self) -> Option<String> {
        self.email.as_ref().map(|e| e.to_ascii_lowercase())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Attachment {
    pub name: Option<String>,
    pub content_type: String,
    pub size: usize,
    /// A plain-text attachment's text with LF line ends, at most
    /// [`MAX_ATTACHMENT_TEXT`] bytes of it; `None` for anything else
    /// (compressed logs, patches sent as octet streams, HTML).
    #[serde(skip)]
    pub text: Option<String>,
}

/// How the input was laid out: a real RFC 5322 message, or a text dump of
/// one (archive pages and copy-pastes have no header block).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    Rfc822,
    /// A subject line, an optional `[Author Name]` line, then the body.
    TextDump,
}

#[derive(Clone, Debug, Serialize)]
pub struct Mail {
    pub message_id: MessageId,
    /// True when the input had no usable Message-ID and one was derived
    /// from a hash of its bytes.
    pub message_id_synthesized: bool,
    pub in_reply_to: Option<MessageId>,
    /// Oldest first, as in the header.
    pub references: Vec<MessageId>,
    pub from: Option<Address>,
    pub to: Vec<Address>,
    pub cc: Vec<Address>,
    /// RFC 2047 decoded, folded lines joined, whitespace collapsed.
    pub subject: String,
    /// Seconds since the epoch, from the Date header.
    pub date: Option<i64>,
    pub list_id: Option<String>,
    /// The copy a mailing list delivered: it carries `List-Id` or another
    /// `List-*` header (RFC 2369, RFC 2919), or vger's `X-Mailing-List`.
    pub list_copy: bool,
    /// The `Auto-Submitted` header, when it says anything but `no`
    /// (`x-autoreply` for an `X-Autoreply` header without one).
    pub auto_submitted: Option<String>,
    /// The `Precedence` header, lower-cased (`bulk`, `junk`, `list`).
    pub precedence: Option<String>,
    /// The `Return-Path`, brackets stripped: empty for a bounce (`<>`).
    pub return_path: Option<String>,
    /// A delivery status notification (`multipart/report`,
    /// `message/delivery-status`): a bounce, never a person.
    pub delivery_report: bool,
    /// The text body with LF line ends.
    pub body: String,
    pub attachments: Vec<Attachment>,
    pub layout: Layout,
    pub problems: Vec<String>,
}

impl Mail {
    /// The ancestors named by In-Reply-To and References, nearest first,
    /// each once: at most [`MAX_ANCESTORS`], the root among them.
    pub fn ancestors(&self) -> Vec<&MessageId> {
        select_ancestors(self.in_reply_to.as_ref(), &self.references, MAX_ANCESTORS).0
    }

    pub fn is_reply(&self) -> bool {
        self.in_reply_to.is_some() || !self.references.is_empty() || subject_is_reply(&self.subject)
    }

    pub fn from_email(&self) -> Option<String> {
        self.from.as_ref().and_then(Address::email_lc)
    }

    pub fn from_name(&self) -> Option<&str> {
        self.from.as_ref().and_then(|a| a.name.as_deref())
    }
}

/// In-Reply-To, then References from the nearest back, each id once and
/// at most `max` in all, with a place kept for the root (the first
/// References entry), which comes last. Linear in the length of the
/// header. The flag says whether a distinct id was left out.
fn select_ancestors<'a>(
    in_reply_to: Option<&'a MessageId>,
    references: &'a [MessageId],
    max: usize,
) -> (Vec<&'a MessageId>, bool) {
    let mut out: Vec<&MessageId> = Vec::with_capacity(max.min(references.len() + 1));
    let mut seen: HashSet<&MessageId> = HashSet::with_capacity(out.capacity());
    if let Some(p) = in_reply_to
        && max > 0
    {
        seen.insert(p);
        out.push(p);
    }
    let root = references.first();
    let mut cut = false;
    for r in references.iter().skip(1).rev() {
        if seen.contains(r) {
            continue;
        }
        let root_place = usize::from(root.is_some_and(|root| root != r && !seen.contains(root)));
        if out.len() + root_place >= max {
            cut = true;
            break;
        }
        seen.insert(r);
        out.push(r);
    }
    if let Some(root) = root
        && !seen.contains(root)
    {
        if out.len() < max {
            out.push(root);
        } else {
            cut = true;
        }
    }
    (out, cut)
}

/// References ids held while reading, besides the root: room for
/// repeats among the nearest [`MAX_ANCESTORS`].
const REFERENCES_WINDOW: usize = 4 * MAX_ANCESTORS;

/// The References ids that [`Mail::ancestors`] will use, the root first,
/// read in one pass that holds at most [`REFERENCES_WINDOW`] of them, so a
/// header of 100,000 ids goes no further than this; a cut is a problem.
fn references_of(value: &[u8], in_reply_to: Option<&MessageId>, problems: &mut Vec<String>) -> Vec<MessageId> {
    let mut total = 0usize;
    let mut root: Option<MessageId> = None;
    let mut nearest: VecDeque<Cow<'_, [u8]>> = VecDeque::new();
    let mut dropped = false;
    for span in raw_headers::id_spans(value) {
        total += 1;
        if root.is_none() {
            root = MessageId::from_bytes(&span);
            continue;
        }
        if nearest.len() == REFERENCES_WINDOW {
            nearest.pop_front();
            dropped = true;
        }
        nearest.push_back(span);
    }
    let references: Vec<MessageId> =
        root.into_iter().chain(nearest.iter().filter_map(|s| MessageId::from_bytes(s))).collect();
    let (kept, cut) = select_ancestors(in_reply_to, &references, MAX_ANCESTORS);
    if !(cut || dropped) {
        return references;
    }
    problems.push(format!("references: {total} ids, kept {}: In-Reply-To, the root and the nearest", kept.len()));
    // Oldest first again; In-Reply-To stays out unless References names it.
    let listed = in_reply_to.is_some_and(|p| references.contains(p));
    kept.into_iter().rev().filter(|id| listed || Some(*id) != in_reply_to).cloned().collect()
}

/// `Re:`, `RE:`, `Aw:` and friends at the start, possibly after list tags.
pub fn subject_is_reply(subject: &str) -> bool {
    let mut s = subject.trim_start();
    while let Some(rest) = s.strip_prefix('[') {
        match rest.find(']') {
            Some(end) => s = rest[end + 1..].trim_start(),
            None => return false,
        }
    }
    let lower = s.get(..4).unwrap_or(s).to_ascii_lowercase();
    lower.starts_with("re:") || lower.starts_with("aw:") || lower.starts_with("re :")
}

/// One parser for every message: building its header table per message
/// costs as much as parsing a small mail. Only the headers [`parse`] reads
/// are decoded; every other one is skipped (a list server's mail carries
/// a dozen `Received` and `List-*` lines). Skipped headers keep their
/// place, so `header_raw` still reads `List-Id` and `Auto-Submitted`.
/// The Message-ID headers are read from the bytes ([`raw_headers`]).
static PARSER: LazyLock<MessageParser> = LazyLock::new(|| {
    MessageParser::new()
        .with_mime_headers()
        .header_date(HeaderName::Date)
        .header_address(HeaderName::From)
        .header_address(HeaderName::To)
        .header_address(HeaderName::Cc)
        .header_text(HeaderName::Subject)
        .default_header_ignore()
});

/// Parses the start of a message that a source cut (`raw` is what it
/// kept, `original_len` the size of the whole), and records the cut among
/// the problems: what was lost may be a report's tail or an attachment.
pub fn parse_truncated(raw: &[u8], original_len: u64) -> Mail {
    let mut m = parse(raw);
    if original_len > raw.len() as u64 {
        m.problems.push(format!("message: cut at {} of {original_len} bytes", raw.len()));
    }
    m
}

/// Parses one message. Never fails: a message mail-parser cannot read at
/// all still yields a `Mail` with the raw text as its body and a problem.
pub fn parse(raw: &[u8]) -> Mail {
    let raw = strip_mbox_from_line(raw);
    // mail-parser and the header test read the block without NUL bytes;
    // the ids are read from `raw`, where a NUL inside an id is kept.
    let clean = raw_headers::without_nuls(raw);
    if !bare::has_header_block(&clean) {
        return bare::parse_text_dump(raw);
    }
    let mut problems = Vec::new();
    if let Cow::Owned(_) = clean {
        problems.push("header: NUL bytes removed".to_string());
    }
    let Some(msg) = PARSER.parse(&clean[..]) else {
        problems.push("mime: message could not be parsed; using raw text".to_string());
        let mut m = bare::parse_text_dump(raw);
        m.problems.extend(problems);
        return m;
    };

    let ids = raw_headers::id_headers(raw);
    let (message_id, synthesized) = match ids.message_id.and_then(raw_headers::message_id) {
        Some(id) => (id, false),
        None => {
            problems.push("header: no usable Message-ID; synthesized one from the content".into());
            (synthesize_message_id(raw), true)
        }
    };
    let in_reply_to =
        ids.in_reply_to.and_then(|v| raw_headers::id_spans(v).filter_map(|id| MessageId::from_bytes(&id)).last());
    let references = ids.references.map(|v| references_of(v, in_reply_to.as_ref(), &mut problems)).unwrap_or_default();
    let subject = collapse_ws(msg.subject().unwrap_or(""));
    let date = msg.date().map(|d| d.to_timestamp());
    if msg.date().is_none() && msg.header_raw("Date").is_some() {
        problems.push("header: Date could not be parsed".into());
    }
    let list_id = msg.header_raw("List-Id").and_then(list_id);
    let list_copy = msg.headers().iter().any(|h| is_list_header(h.name()));
    let auto_submitted = msg
        .header_raw("Auto-Submitted")
        .map(|v| v.trim().to_ascii_lowercase())
        .filter(|v| !v.is_empty() && v != "no")
        .or_else(|| msg.header_raw("X-Autoreply").map(|_| "x-autoreply".to_string()));
    let precedence = msg.header_raw("Precedence").map(|v| v.trim().to_ascii_lowercase()).filter(|v| !v.is_empty());
    let return_path = msg
        .header_raw("Return-Path")
        .map(|v| v.trim().trim_start_matches('<').trim_end_matches('>').trim().to_string());
    let delivery_report = msg.content_type().is_some_and(|c| {
        let t = format!("{}/{}", c.ctype(), c.subtype().unwrap_or("")).to_ascii_lowercase();
        t == "multipart/report" || t == "message/delivery-status"
    });

    let body = text_body(&msg, &clean);
    let body = normalise_text(body, &mut problems);

    let attachments = attachments(&msg);

    Mail {
        message_id,
        message_id_synthesized: synthesized,
        in_reply_to,
        references,
        from: msg.from().and_then(first_address),
        to: msg.to().map(all_addresses).unwrap_or_default(),
        cc: msg.cc().map(all_addresses).unwrap_or_default(),
        subject,
        date,
        list_id,
        list_copy,
        auto_submitted,
        precedence,
        return_path,
        delivery_report,
        body,
        attachments,
        layout: Layout::Rfc822,
        problems,
    }
}

/// The text parts one after the other (HTML ones as text), at most about
/// `MAX_BODY_BYTES`; for a message whose only part mail-parser could not
/// type, the raw bytes after the header block.
fn text_body(msg: &mail_parser::Message<'_>, clean: &[u8]) -> String {
    let mut body = String::new();
    for i in 0..msg.text_body_count() {
        if let Some(t) = msg.body_text(i) {
            if !body.is_empty() {
                body.push('\n');
            }
            body.push_str(&t);
        }
        if body.len() > MAX_BODY_BYTES {
            break;
        }
    }
    if body.is_empty() && msg.text_body_count() == 0 && msg.attachment_count() == 0 {
        // A message whose only part mail-parser could not type: fall back
        // to the raw bytes after the header block.
        body = String::from_utf8_lossy(bare::after_headers(clean)).into_owned();
    }
    body
}

/// The attachments: name, type, size and (plain text) their text.
fn attachments(msg: &mail_parser::Message<'_>) -> Vec<Attachment> {
    msg.attachments()
        .map(|p| {
            let content_type = p
                .content_type()
                .map(|c| match c.subtype() {
                    Some(s) => format!("{}/{}", c.ctype(), s),
                    None => c.ctype().to_string(),
                })
                .unwrap_or_else(|| "application/octet-stream".into())
                .to_ascii_lowercase();
            let raw = p.contents();
            // Measured with LF line ends, so a message's size does not
            // depend on how it was stored.
            let size = raw.len() - raw.windows(2).filter(|w| w == b"\r\n").count();
            let text = (p.is_text() && !p.is_text_html()).then(|| p.text_contents()).flatten().map(attachment_text);
            Attachment { name: p.attachment_name().map(str::to_string), content_type, size, text }
        })
        .collect()
}

/// `List-Id`, `List-Post`, `List-Unsubscribe`, ... and vger's
/// `X-Mailing-List`, in any case.
fn is_list_header(name: &str) -> bool {
    let n = name.as_bytes();
    n.get(..5).is_some_and(|p| p.eq_ignore_ascii_case(b"list-")) || name.eq_ignore_ascii_case("X-Mailing-List")
}

/// `List-Id: Linux kernel list <linux-kernel.vger.kernel.org>` -> the id.
fn list_id(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let id = match (raw.rfind('<'), raw.rfind('>')) {
        (Some(a), Some(b)) if a < b => &raw[a + 1..b],
        _ => raw,
    };
    let id = id.trim();
    (!id.is_empty()).then(|| id.to_string())
}

/// Files saved from an mbox often keep their `From ` separator line.
fn strip_mbox_from_line(raw: &[u8]) -> &[u8] {
    if raw.starts_with(b"From ") {
        match raw.iter().position(|&b| b == b'\n') {
            Some(nl) => &raw[nl + 1..],
            None => raw,
        }
    } else {
        raw
    }
}

fn first_address(a: &MpAddress<'_>) -> Option<Address> {
    a.first().map(convert_addr)
}

fn all_addresses(a: &MpAddress<'_>) -> Vec<Address> {
    a.iter().map(convert_addr).collect()
}

fn convert_addr(a: &mail_parser::Addr<'_>) -> Address {
    let mut name = a.name().map(collapse_ws).filter(|n| !n.is_empty());
    let mut email = a.address().map(|e| e.trim().to_string()).filter(|e| !e.is_empty());
    // Pipermail writes `oliver.sang at intel.com`; mail-parser then sees no
    // address, only a name.
    if email.as_deref().is_none_or(|e| !e.contains('@')) {
        let candidate = email.clone().or_else(|| name.clone()).unwrap_or_default();
        if let Some(e) = deobfuscate_address(&candidate) {
            if name.as_deref() == Some(candidate.as_str()) {
                name = None;
            }
            email = Some(e);
        }
    }
    Address { name, email }
}

/// `xxx at intel.com` -> `xxx@intel.com`.
pub fn deobfuscate_address(s: &str) -> Option<String> {
    let s = s.trim();
    let (user, host) = s.split_once(" at ")?;
    let user = user.trim().rsplit(' ').next()?;
    let host = host.trim().split(' ').next()?;
    if user.is_empty() || !host.contains('.') {
        return None;
    }
    Some(format!("{user}@{host}"))
}

pub(crate) fn collapse_ws(s: &str) -> String {
    // Most names and subjects are collapsed already: one copy.
    if is_collapsed(s) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Whether `s` is what [`collapse_ws`] makes of it: words (as
/// `split_whitespace` cuts them) with one space between them.
pub(crate) fn is_collapsed(s: &str) -> bool {
    // After a space, or at the start: a space there is one too many.
    let mut after_space = true;
    for c in s.chars() {
        if c == ' ' {
            if after_space {
                return false;
            }
            after_space = true;
        } else if c.is_whitespace() {
            return false;
        } else {
            after_space = false;
        }
    }
    !after_space || s.is_empty()
}

/// LF line ends, no NULs, bounded size.
pub(crate) fn normalise_text(s: String, problems: &mut Vec<String>) -> String {
    // Most bodies need nothing: keep the String rather than copy it (one
    // vectorised pass tells).
    if s.len() <= MAX_BODY_BYTES && memchr::memchr2(b'\r', b'\0', s.as_bytes()).is_none() {
        return s;
    }
    let mut out = if s.contains('\r') { s.replace("\r\n", "\n").replace('\r', "\n") } else { s };
    if out.contains('\0') {
        out = out.replace('\0', "");
        problems.push("body: NUL bytes removed".into());
    }
    if out.len() > MAX_BODY_BYTES {
        out.truncate(char_floor(&out, MAX_BODY_BYTES));
        problems.push(format!("body: cut at {MAX_BODY_BYTES} bytes"));
    }
    out
}

/// The start of an attachment's text, at most [`MAX_ATTACHMENT_TEXT`]
/// bytes of it, with LF line ends and no NULs. Cut after the line ends
/// are made LF, so an attachment keeps the same text whichever line ends
/// it was stored with.
fn attachment_text(t: &str) -> String {
    let t = &t[..char_floor(t, 2 * MAX_ATTACHMENT_TEXT)];
    if !t.contains(['\r', '\0']) {
        // Most attachments (the robot's kernel configs) need no change.
        return t[..char_floor(t, MAX_ATTACHMENT_TEXT)].to_string();
    }
    let mut out = t.replace("\r\n", "\n").replace('\r', "\n").replace('\0', "");
    out.truncate(char_floor(&out, MAX_ATTACHMENT_TEXT));
    out
}

/// The largest char boundary of `s` at or below `max`.
fn char_floor(s: &str, max: usize) -> usize {
    let mut cut = s.len().min(max);
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    cut
}

/// A stable id for a message that has none: FNV-1a of its bytes.
pub(crate) fn synthesize_message_id(raw: &[u8]) -> MessageId {
    let mut h = crate::model::Fnv::default();
    // The same message with CRLF or LF gets one id.
    for piece in raw.split(|&b| b == b'\r') {
        h.write(piece);
    }
    let h = h.finish();
    MessageId::new(&format!("{h:016x}@no-message-id.lkpbot")).expect("hex id is a valid Message-ID")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_collapses_to_single_spaces() {
        assert_eq!(collapse_ws("  [PATCH v2]\t mm:\r\n  fix\u{a0}\u{b}it  "), "[PATCH v2] mm: fix it");
        assert_eq!(collapse_ws(" \t\n"), "");
        assert_eq!(collapse_ws("one"), "one");
        for s in ["", "one", "a b", " a", "a ", "a  b", "a\tb", "a\u{a0}b", "Zoë Kim", "[PATCH v2] mm: x"] {
            assert_eq!(is_collapsed(s), collapse_ws(s) == s, "{s:?}");
        }
    }

    #[test]
    fn reply_subjects() {
        assert!(subject_is_reply("Re: [LKP] foo"));
        assert!(subject_is_reply("[LKP] Re: [mm/mremap] ecf8443e51: x"));
        assert!(subject_is_reply("RE: [PATCH] x"));
        assert!(!subject_is_reply("[linus:master] [mm] 01b9da291c: x 67.7% regression"));
        assert!(!subject_is_reply("[unterminated"));
    }

    #[test]
    fn pipermail_addresses() {
        assert_eq!(deobfuscate_address("oliver.sang at intel.com").as_deref(), Some("oliver.sang@intel.com"));
        assert_eq!(deobfuscate_address("Sang, Oliver"), None);
    }

    /// (In-Reply-To, References, max) -> (ancestors nearest first, cut).
    #[test]
    fn ancestors_are_the_parent_the_root_and_the_nearest() {
        type Case = (Option<&'static str>, &'static [&'static str], usize, &'static [&'static str], bool);
        let cases: &[Case] = &[
            (None, &[], 4, &[], false),
            (Some("p"), &[], 4, &["p"], false),
            (Some("c"), &["a", "b", "c"], 4, &["c", "b", "a"], false),
            // The root keeps its place; the middle goes.
            (Some("e"), &["a", "b", "c", "d", "e"], 4, &["e", "d", "c", "a"], true),
            (Some("x"), &["a", "b", "c", "d", "e"], 3, &["x", "e", "a"], true),
            (None, &["a", "b", "c", "d", "e"], 3, &["e", "d", "a"], true),
            (Some("a"), &["a", "b", "c"], 2, &["a", "c"], true),
            // Repeats count once, at their nearest place.
            (Some("c"), &["a", "b", "a", "c", "c"], 4, &["c", "a", "b"], false),
            (None, &["a", "a", "a"], 1, &["a"], false),
        ];
        for (irt, refs, max, want, want_cut) in cases {
            let irt = irt.and_then(MessageId::new);
            let refs: Vec<MessageId> = refs.iter().filter_map(|r| MessageId::new(r)).collect();
            let (got, cut) = select_ancestors(irt.as_ref(), &refs, *max);
            let got: Vec<&str> = got.iter().map(|m| m.as_str()).collect();
            assert_eq!((&got[..], cut), (*want, *want_cut), "irt {irt:?} refs {refs:?} max {max}");
        }
    }

    #[test]
    fn synthesized_ids_ignore_line_ends() {
        assert_eq!(synthesize_message_id(b"a\r\nb\r\n"), synthesize_message_id(b"a\nb\n"));
    }
}
