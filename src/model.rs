//! The vocabulary every stage shares: identifiers and measured values.
//!
//! Identifiers are newtypes validated in their constructors, so no bare
//! `String` id crosses a module boundary. Nothing here does I/O.

use serde::{Serialize, Serializer};
use std::fmt;

/// A Message-ID without angle brackets or surrounding whitespace, in one
/// normal form.
///
/// Compared exactly (Message-IDs are case-sensitive in their local part).
/// An ordinary id is kept as it is written, so what lkpbot shows is what
/// the header says. A header may hold any bytes, though: an id with a
/// control byte (NUL among them) or bytes that are not UTF-8 is escaped
/// instead, every such byte as `%XX` and every `%` as `%25`. Lossy
/// decoding would make distinct ids one (every bad byte a U+FFFD), and a
/// NUL would reach every table and URL that shows the id. So that no
/// escaped id can equal an ordinary one, an id that already contains what
/// an escape looks like (`%25`, or `%XX` of a control byte or of a byte
/// above 0x7F) is escaped too. Two different ids therefore never share a
/// form, with one intended exception: `%40` is `@` (lore URLs escape the
/// `@`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MessageId(String);

/// Ids are at most this long before escaping (RFC 5322's line limit).
const MAX_ID_BYTES: usize = 998;

impl MessageId {
    /// Reads an id already in the normal form, as the store keeps it:
    /// `<id@host>`, ` id@host `, `id%40host`. A `%` is kept as it is (an
    /// escaped form stays escaped, an ordinary one ordinary); a control
    /// character, which the normal form cannot hold, becomes `%XX`. So
    /// `new` of a `MessageId`'s text gives it back. Returns `None` for an
    /// empty id or one with inner whitespace or angle brackets.
    pub fn new(raw: &str) -> Option<MessageId> {
        // An id in its normal form (as the store holds them): printable
        // ASCII without brackets or `%`, which the rest leaves as it is.
        if !raw.is_empty()
            && raw.len() <= MAX_ID_BYTES
            && raw.bytes().all(|b| b.is_ascii_graphic() && !matches!(b, b'<' | b'>' | b'%'))
        {
            return Some(MessageId(raw.to_string()));
        }
        let t = raw.trim().trim_start_matches('<').trim_end_matches('>').trim();
        if t.is_empty() || t.len() > MAX_ID_BYTES || t.chars().any(|c| c.is_whitespace() || c == '<' || c == '>') {
            return None;
        }
        let t = t.replace("%40", "@");
        // Only ASCII controls are escaped (`push_char`): most ids have none.
        if !t.bytes().any(|b| b.is_ascii_control()) {
            return Some(MessageId(t));
        }
        let mut out = String::with_capacity(t.len());
        for c in t.chars() {
            push_char(&mut out, c);
        }
        Some(MessageId(out))
    }

    /// Reads an id as a header (or a decoded URL) holds it, any bytes, into
    /// the normal form (see the type): the one way such ids enter, so the
    /// same bytes always give the same id and different bytes different
    /// ids.
    pub fn from_bytes(raw: &[u8]) -> Option<MessageId> {
        let mut t = raw.trim_ascii();
        while let Some(r) = t.strip_prefix(b"<") {
            t = r;
        }
        while let Some(r) = t.strip_suffix(b">") {
            t = r;
        }
        let t = t.trim_ascii();
        if t.is_empty() || t.len() > MAX_ID_BYTES {
            return None;
        }
        // Nearly every id is printable ASCII without a `%`: nothing to
        // decode or escape, and it is its own normal form.
        if t.iter().all(|&b| b.is_ascii_graphic() && b != b'%') {
            if t.iter().any(|&b| b == b'<' || b == b'>') {
                return None;
            }
            return std::str::from_utf8(t).ok().map(|s| MessageId(s.to_string()));
        }
        let t = replace_bytes(t, b"%40", b"@");
        if !needs_escaping(&t) {
            let s = std::str::from_utf8(&t).ok()?;
            if s.chars().any(|c| c.is_whitespace() || c == '<' || c == '>') {
                return None;
            }
            return Some(MessageId(s.to_string()));
        }
        let mut out = String::with_capacity(t.len() + 8);
        for chunk in t.utf8_chunks() {
            for c in chunk.valid().chars() {
                if c.is_whitespace() || c == '<' || c == '>' {
                    return None;
                }
                if c == '%' {
                    out.push_str("%25");
                } else {
                    push_char(&mut out, c);
                }
            }
            for &b in chunk.invalid() {
                push_escape(&mut out, b);
            }
        }
        Some(MessageId(out))
    }

    /// Reads an id from a URL path segment (a lore link): `%XX` escapes
    /// are decoded to the bytes they stand for, which are then read like a
    /// header's ([`MessageId::from_bytes`]), so a link and the header name
    /// the same id.
    pub fn from_url_segment(segment: &str) -> Option<MessageId> {
        let b = segment.as_bytes();
        let hex = |x: u8| char::from(x).to_digit(16);
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            match (b[i], b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex)) {
                (b'%', Some(h), Some(l)) => {
                    out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
                    i += 3;
                }
                (c, _, _) => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        MessageId::from_bytes(&out)
    }

    /// The message in the archive whose base URL is `archive_url` (`[bot]
    /// archive_url`): the one way every stage links a message.
    pub fn link(&self, archive_url: &str) -> String {
        format!("{archive_url}{}", self.url_segment())
    }

    /// The id as a URL path segment: every byte a path segment cannot
    /// hold as it is (`%`, `/`, `?`, `#`, non-ASCII) as `%XX`.
    pub fn url_segment(&self) -> String {
        let mut out = String::with_capacity(self.0.len());
        for &b in self.0.as_bytes() {
            if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b) {
                out.push(char::from(b));
            } else {
                push_escape(&mut out, b);
            }
        }
        out
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key (in the store's `message_keys`) a robot report offers
    /// under its HyperKitty id: `h:` and [`MessageId::hyperkitty_id`].
    pub fn hyperkitty_key(&self) -> String {
        hyperkitty_key(&self.hyperkitty_id())
    }

    /// The id HyperKitty (the lists.01.org archive, where the robot's
    /// mail lived until 2022) gives the message in its URLs
    /// (`.../message/<ID>/`, and `.../thread/<ID>/` for the thread the
    /// message starts): the SHA-1 of the Message-ID without angle
    /// brackets, in base32 (RFC 4648, upper case, no padding: 32
    /// characters).
    pub fn hyperkitty_id(&self) -> String {
        use sha1::Digest;
        const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
        let hash = sha1::Sha1::digest(self.0.as_bytes());
        let mut out = String::with_capacity(32);
        // 160 bits: 32 groups of five, high bits first.
        let (mut acc, mut bits) = (0u32, 0u32);
        for &b in hash.iter() {
            acc = (acc << 8) | u32::from(b);
            bits += 8;
            while bits >= 5 {
                bits -= 5;
                out.push(char::from(ALPHABET[((acc >> bits) & 31) as usize]));
            }
            acc &= (1 << bits) - 1;
        }
        out
    }
}

/// `from` made `to` everywhere in `t`.
fn replace_bytes(t: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(t.len());
    let mut i = 0;
    while i < t.len() {
        if t[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(t[i]);
            i += 1;
        }
    }
    out
}

/// Whether an id must be escaped: it has a control byte or bytes that are
/// not UTF-8, or it already holds what an escape looks like (a `%` then
/// two hex digits naming `%`, a control byte or a byte above 0x7F), which
/// an ordinary id must not, or an escaped id could equal it.
fn needs_escaping(t: &[u8]) -> bool {
    if t.iter().any(u8::is_ascii_control) || std::str::from_utf8(t).is_err() {
        return true;
    }
    let hex = |b: u8| char::from(b).to_digit(16);
    t.windows(3).any(|w| match (w[0], hex(w[1]), hex(w[2])) {
        (b'%', Some(h), Some(l)) => {
            let v = h * 16 + l;
            v < 0x20 || v == 0x25 || v >= 0x7f
        }
        _ => false,
    })
}

/// A character of an id, escaped when it is a control character.
fn push_char(out: &mut String, c: char) {
    match u8::try_from(c) {
        Ok(b) if b.is_ascii_control() => push_escape(out, b),
        _ => out.push(c),
    }
}

fn push_escape(out: &mut String, b: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('%');
    out.push(char::from(HEX[usize::from(b >> 4)]));
    out.push(char::from(HEX[usize::from(b & 0xf)]));
}

impl fmt::Display for MessageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for MessageId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// A git commit id, full or abbreviated: 7 to 40 hex digits, lower-cased.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CommitSha(String);

impl CommitSha {
    pub fn new(raw: &str) -> Option<CommitSha> {
        let t = raw.trim();
        if (7..=40).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_hexdigit()) {
            Some(CommitSha(t.to_ascii_lowercase()))
        } else {
            None
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_full(&self) -> bool {
        self.0.len() == 40
    }

    /// The ten-digit abbreviation the robot uses in subjects.
    pub fn short(&self) -> &str {
        &self.0[..self.0.len().min(10)]
    }

    /// True when one id abbreviates the other (either way round).
    pub fn matches(&self, other: &CommitSha) -> bool {
        self.0.starts_with(&other.0) || other.0.starts_with(&self.0)
    }
}

impl fmt::Display for CommitSha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for CommitSha {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// Whether a metric change is good or bad news.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    Regression,
    Improvement,
}

impl Direction {
    pub fn parse(word: &str) -> Option<Direction> {
        match word.to_ascii_lowercase().as_str() {
            "regression" => Some(Direction::Regression),
            "improvement" => Some(Direction::Improvement),
            _ => None,
        }
    }
}

/// The outcome of a retest with a fix column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Recovered,
    PartlyRecovered,
    NotRecovered,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Recovered => "recovered",
            Verdict::PartlyRecovered => "partly-recovered",
            Verdict::NotRecovered => "not-recovered",
        }
    }
}

/// Replies of the bot counted against one of its budgets within the
/// hour (`act::policy`), as the store counts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spent {
    /// Replies and limit notices made.
    pub sent: u32,
    /// When the oldest was made (a place frees an hour later).
    pub oldest: Option<i64>,
    /// Of them, limit notices.
    pub notices: u32,
}

/// How a message's sender was authenticated, if at all: the answer to
/// "is this mail from whom it says?". Verification is done once, when a
/// fresh message the bot would act on arrives, and stored with it; every
/// other message (history, discussion) was never verified
/// ([`AuthMethod::Unverified`], the default), which shows as `none` too.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Auth {
    pub method: AuthMethod,
    /// The address it vouches for: the From of a DKIM pass, the original
    /// author a trusted ARC sealer recorded. `None` when not authenticated.
    pub author: Option<String>,
    /// What was found, in words: why it is not authenticated (no
    /// signature, the body changed, the key could not be fetched), or
    /// which signature passed.
    pub reason: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum AuthMethod {
    /// Never verified: history, discussion, or `[auth] dkim = "off"`.
    /// Judged by its From, as a mail from before verification was.
    #[default]
    Unverified,
    /// Verified, and not authenticated (the reason says why).
    None,
    /// A DKIM signature of this domain passed, aligned with From.
    Dkim(String),
    /// A trusted ARC sealer (this domain) recorded a DKIM pass for the
    /// original author (a list that rewrites From).
    Arc(String),
}

impl Auth {
    /// Not authenticated, for `reason`.
    pub fn none(reason: impl Into<String>) -> Auth {
        Auth { method: AuthMethod::None, author: None, reason: reason.into() }
    }

    pub fn is_authenticated(&self) -> bool {
        matches!(self.method, AuthMethod::Dkim(_) | AuthMethod::Arc(_))
    }

    /// Whether it was verified at all (authenticated or not).
    pub fn was_verified(&self) -> bool {
        self.method != AuthMethod::Unverified
    }

    /// `dkim:<domain>`, `arc:<sealer>` or `none`: how events show it.
    pub fn label(&self) -> String {
        match &self.method {
            AuthMethod::Unverified | AuthMethod::None => "none".into(),
            AuthMethod::Dkim(d) => format!("dkim:{d}"),
            AuthMethod::Arc(s) => format!("arc:{s}"),
        }
    }

    /// Reads back what [`Auth::label`] wrote (anything else is `none`;
    /// no label at all: never verified).
    pub fn from_parts(label: Option<&str>, author: Option<String>, reason: Option<String>) -> Auth {
        let method = match label.map(|l| l.split_once(':')) {
            None => AuthMethod::Unverified,
            Some(Some(("dkim", d))) if !d.is_empty() => AuthMethod::Dkim(d.to_string()),
            Some(Some(("arc", s))) if !s.is_empty() => AuthMethod::Arc(s.to_string()),
            Some(_) => AuthMethod::None,
        };
        let author = author.filter(|_| matches!(method, AuthMethod::Dkim(_) | AuthMethod::Arc(_)));
        Auth { method, author, reason: reason.unwrap_or_default() }
    }
}

/// Seconds since the epoch -> `YYYY-MM-DDTHH:MM:SSZ` (UTC). Times beyond
/// what a calendar can show (a hostile Date header) are clamped to the
/// first or last second it can.
pub fn rfc3339(ts: i64) -> String {
    let min = jiff::Timestamp::MIN.as_second();
    let max = jiff::Timestamp::MAX.as_second();
    jiff::Timestamp::from_second(ts.clamp(min, max))
        .map_or_else(|_| "1970-01-01T00:00:00Z".to_string(), |t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
}

/// FNV-1a, 64 bits: the stable hash of bytes every stage uses (an id
/// for a message that has none, an outgoing mail's Message-ID, a table's
/// checksum). Not for anything an attacker may aim at: it only names.
#[derive(Clone, Copy, Debug)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    pub fn finish(self) -> u64 {
        self.0
    }

    /// The hash of `bytes`.
    pub fn of(bytes: &[u8]) -> u64 {
        let mut h = Fnv::default();
        h.write(bytes);
        h.finish()
    }
}

/// The key of the robot report whose HyperKitty id is `id`: what a
/// lists.01.org link to the report's thread or message names.
pub fn hyperkitty_key(id: &str) -> String {
    format!("h:{id}")
}

#[cfg(test)]
mod tests {

    /// Against Python's hashlib and base64 (`base64.b32encode(
    /// hashlib.sha1(id.encode()).digest())`), which HyperKitty uses.
    #[test]
    fn hyperkitty_ids() {
        let id = |s: &str| super::MessageId::new(s).unwrap().hyperkitty_id();
        assert_eq!(id("<20210601080000.GA1234@xsang-OptiPlex-9020>"), "VMDYQRH3JWQY2SLZ46RQ5EJAXIE2BK6O");
        assert_eq!(id("202606011200.eeee0001-lkp@intel.com"), "VBGYQECMVY3P2QVF7XOISILWHJ4QLEB4");
        assert_eq!(id("a@b"), "2AZYWIZED4JE6LED7JXVQIMSAA437BO3");
    }

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_778_590_612), "2026-05-12T12:56:52Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(-86_400), "1969-12-31T00:00:00Z");
        assert!(rfc3339(i64::MAX).starts_with("9999-12-"), "{}", rfc3339(i64::MAX));
    }

    /// The published FNV-1a 64 test vectors.
    #[test]
    fn fnv_1a() {
        assert_eq!(Fnv::of(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(Fnv::of(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(Fnv::of(b"foobar"), 0x8594_4171_f739_67e8);
    }

    use super::*;

    #[test]
    fn auth_labels_read_back() {
        let dkim = Auth {
            method: AuthMethod::Dkim("intel.com".into()),
            author: Some("a@intel.com".into()),
            reason: "".into(),
        };
        assert!(dkim.is_authenticated());
        assert_eq!(dkim.label(), "dkim:intel.com");
        assert_eq!(Auth::from_parts(Some("dkim:intel.com"), Some("a@intel.com".into()), Some("".into())), dkim);
        let arc = Auth::from_parts(Some("arc:subspace.kernel.org"), Some("a@b.org".into()), None);
        assert_eq!(arc.method, AuthMethod::Arc("subspace.kernel.org".into()));
        for bad in [None, Some("none"), Some("dkim:"), Some("spf:x.org")] {
            let a = Auth::from_parts(bad, Some("x@y".into()), Some("why".into()));
            assert!(!a.is_authenticated(), "{bad:?}");
            assert_eq!(a.author, None);
            assert_eq!(a.label(), "none");
            assert_eq!(a.was_verified(), bad.is_some(), "{bad:?}");
        }
        assert_eq!(Auth::default().method, AuthMethod::Unverified);
    }

    #[test]
    fn message_id_normalises_brackets_and_escapes() {
        let a = MessageId::new(" <202605121641.b6a60cb0-lkp@intel.com> ").unwrap();
        let b = MessageId::new("202605121641.b6a60cb0-lkp%40intel.com").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.as_str(), "202605121641.b6a60cb0-lkp@intel.com");
        assert!(MessageId::new("<>").is_none());
        assert!(MessageId::new("a b@c").is_none());
    }

    /// Header bytes -> normal form.
    #[test]
    fn message_ids_from_bytes_escape_losslessly() {
        let cases: &[(&[u8], Option<&str>)] = &[
            (b"<a@b>", Some("a@b")),
            (b" <a\0b@x> ", Some("a%00b@x")),
            (b"a\xffb@x", Some("a%FFb@x")),
            (b"a\x01\x1f\x7f@x", Some("a%01%1F%7F@x")),
            (b"%00@x", Some("%2500@x")),
            (b"%25@x", Some("%2525@x")),
            // An ordinary `%` stays: the 2019 robot ids have one.
            (b"50%off@x", Some("50%off@x")),
            (b"201904300624.FRc2x66b%lkp@intel.com", Some("201904300624.FRc2x66b%lkp@intel.com")),
            (b"a%7e@x", Some("a%7e@x")),
            (b"a%40x", Some("a@x")),
            (b"a%%40x", Some("a%@x")),
            (b"a%C3%A9@x", Some("a%25C3%25A9@x")),
            (b"\xc3\xa9t\xc3@x", Some("\u{e9}t%C3@x")),
            (b"<>", None),
            (b"a b@x", None),
            (b"a\tb@x", None),
            (b"a<b@x", None),
            (b"a>b@x", None),
            (b" <1234.abc-def+x_y=z@host.example> ", Some("1234.abc-def+x_y=z@host.example")),
        ];
        for (raw, want) in cases {
            let got = MessageId::from_bytes(raw);
            assert_eq!(got.as_ref().map(MessageId::as_str), *want, "{:?}", String::from_utf8_lossy(raw));
            // What the store keeps reads back as the same id.
            if let Some(id) = got {
                assert_eq!(MessageId::new(id.as_str()), Some(id.clone()));
            }
        }
    }

    /// A lore link names the id its header has; the archive link built
    /// from an id leads back to it.
    #[test]
    fn message_ids_in_urls() {
        let header = MessageId::from_bytes(b"<201904300624.FRc2x66b%lkp@intel.com>").unwrap();
        let from_link = MessageId::from_url_segment("201904300624.FRc2x66b%25lkp@intel.com").unwrap();
        assert_eq!(from_link, header);
        assert_eq!(header.url_segment(), "201904300624.FRc2x66b%25lkp@intel.com");
        assert_eq!(MessageId::from_url_segment(&header.url_segment()), Some(header));
        let plain = MessageId::from_url_segment("20260512.b6a60cb0-lkp%40intel.com").unwrap();
        assert_eq!(plain.as_str(), "20260512.b6a60cb0-lkp@intel.com");
        assert_eq!(plain.url_segment(), plain.as_str());
    }

    #[test]
    fn distinct_raw_ids_stay_distinct() {
        let raws: &[&[u8]] =
            &[b"a\0", b"a%00", b"a%2500", b"a\xff", b"a%FF", b"a%25FF", b"a%", b"a%25", b"a\xef\xbf\xbd", b"a\xfe"];
        let ids: std::collections::BTreeSet<MessageId> = raws.iter().filter_map(|r| MessageId::from_bytes(r)).collect();
        assert_eq!(ids.len(), raws.len(), "{ids:?}");
    }

    /// Text in the normal form (the store, lore URLs) is kept; a control
    /// character is escaped all the same.
    #[test]
    fn message_ids_in_normal_form_read_back_unchanged() {
        for (raw, want) in
            [("a%2525@x", "a%2525@x"), ("a%00@x", "a%00@x"), ("a\0@x", "a%00@x"), ("a%25lkp%40x", "a%25lkp@x")]
        {
            assert_eq!(MessageId::new(raw).unwrap().as_str(), want);
        }
    }

    #[test]
    fn commit_sha_validates_and_abbreviates() {
        let s = CommitSha::new("01B9DA291C4969354807B52956F4AAE1F41B4924").unwrap();
        assert!(s.is_full());
        assert_eq!(s.short(), "01b9da291c");
        assert!(s.matches(&CommitSha::new("01b9da291c").unwrap()));
        assert!(CommitSha::new("01b9da").is_none());
        assert!(CommitSha::new("not-a-sha").is_none());
    }
}
