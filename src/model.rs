//! The vocabulary every stage shares: identifiers and measured values.
//!
//! Identifiers are newtypes validated in their constructors, so no bare
//! `String` id crosses a module boundary. Nothing here does I/O.

use serde::{Serialize, Serializer};
use std::fmt;

/// A Message-ID without angle brackets or surrounding whitespace.
///
/// Compared exactly (Message-IDs are case-sensitive in their local part).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MessageId(String);

impl MessageId {
    /// Normalises `<id@host>`, ` id@host `, and `id%40host` (lore URLs escape
    /// the `@`). Returns `None` for an empty id or one with inner whitespace.
    pub fn new(raw: &str) -> Option<MessageId> {
        let t = raw.trim().trim_start_matches('<').trim_end_matches('>').trim();
        if t.is_empty() || t.len() > 998 || t.chars().any(|c| c.is_whitespace() || c == '<' || c == '>') {
            return None;
        }
        let t = if t.contains("%40") { t.replace("%40", "@") } else { t.to_string() };
        Some(MessageId(t))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_id_normalises_brackets_and_escapes() {
        let a = MessageId::new(" <202605121641.b6a60cb0-lkp@intel.com> ").unwrap();
        let b = MessageId::new("202605121641.b6a60cb0-lkp%40intel.com").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.as_str(), "202605121641.b6a60cb0-lkp@intel.com");
        assert!(MessageId::new("<>").is_none());
        assert!(MessageId::new("a b@c").is_none());
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
