//! Commands addressed to the bot, read from a mail's unquoted lines.
//!
//! Syntax only: who may run a command, rate limits and replies belong to
//! later stages. Quoted lines never count (a reply quoting someone's
//! `#lkp retest` must not retest again), and at most [`MAX_COMMANDS`] are
//! read from one mail. Case-insensitive. Pure.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

use crate::mail::quote;
use crate::text::{Needles, strip_signature};

pub const MAX_COMMANDS: usize = 10;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "command", rename_all = "kebab-case")]
pub enum Command {
    /// `please retest`, `#lkp retest`.
    Retest,
    /// `#lkp test <lore-link | git-url branch | sha>`, or "please test this
    /// patch" with the patch inline or attached (no argument).
    Test {
        target: Option<String>,
    },
    Fixed {
        sha: Option<String>,
    },
    Resolve,
    Invalid {
        reason: Option<String>,
    },
    Dup {
        case: Option<String>,
    },
    Reopen,
    Title {
        text: Option<String>,
    },
    Subscribe {
        filter: Option<String>,
    },
    Unsubscribe,
    Status,
    Help,
    /// `#lkp <something we do not know>`: answered with the help text.
    Unknown {
        verb: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CommandLine {
    #[serde(flatten)]
    pub command: Command,
    /// The line as written, for the reply to quote.
    pub line: String,
}

static LKP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^#lkp(?:\s+(\S+))?(?:\s+(.*?))?\s*$").expect("static regex"));
static PLEASE_RETEST: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^(?:[\w .-]{1,40},\s*)?please\s+re-?test\s*[.!]?\s*$").expect("static regex"));
static PLEASE_TEST_PATCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:[\w .-]{1,40},\s*)?please\s+test\s+(?:this|the\s+(?:attached|following|below))\s+patch\b")
        .expect("static regex")
});

fn arg(s: Option<&str>) -> Option<String> {
    s.map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

fn parse_lkp(verb: &str, rest: Option<&str>) -> Command {
    match verb.to_ascii_lowercase().as_str() {
        "retest" => Command::Retest,
        "test" => Command::Test { target: arg(rest) },
        "fixed" => Command::Fixed { sha: arg(rest) },
        "resolve" | "resolved" => Command::Resolve,
        "invalid" => Command::Invalid { reason: arg(rest) },
        "dup" | "duplicate" => Command::Dup { case: arg(rest) },
        "reopen" => Command::Reopen,
        "title" => Command::Title { text: arg(rest) },
        "subscribe" => Command::Subscribe { filter: arg(rest) },
        "unsubscribe" => Command::Unsubscribe,
        "status" => Command::Status,
        "help" | "" => Command::Help,
        other => Command::Unknown { verb: other.chars().take(40).collect() },
    }
}

static NEEDLES: LazyLock<Needles> = LazyLock::new(|| Needles::new(&["#lkp", "retest", "re-test", "please test"]));

/// Cheap test run before [`parse`] on every message: whether any line
/// could hold a command at all.
pub fn may_contain(body: &str) -> bool {
    may_contain_lower(&body.as_bytes().to_ascii_lowercase())
}

/// [`may_contain`] on a body the caller already lower-cased.
pub fn may_contain_lower(lower: &[u8]) -> bool {
    NEEDLES.any_in(lower)
}

/// Every command in the unquoted part of `body`, in order.
pub fn parse(body: &str) -> Vec<CommandLine> {
    if !may_contain(body) {
        return Vec::new();
    }
    let own = quote::unquoted(body);
    let own = strip_signature(&own);
    let mut out = Vec::new();
    for line in own.lines() {
        let t = line.trim();
        if t.len() > 400 {
            continue;
        }
        let command = if let Some(c) = LKP.captures(t) {
            parse_lkp(c.get(1).map_or("", |m| m.as_str()), c.get(2).map(|m| m.as_str()))
        } else if PLEASE_RETEST.is_match(t) {
            Command::Retest
        } else if PLEASE_TEST_PATCH.is_match(t) {
            Command::Test { target: None }
        } else {
            continue;
        };
        out.push(CommandLine { command, line: t.to_string() });
        if out.len() == MAX_COMMANDS {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmds(body: &str) -> Vec<Command> {
        parse(body).into_iter().map(|c| c.command).collect()
    }

    #[test]
    fn recognises_each_command() {
        let body = "#lkp retest\n#LKP test https://lore.kernel.org/r/x@y\n#lkp fixed 01b9da291c\n#lkp resolve\n\
                    #lkp invalid not a kernel issue\n#lkp dup 12\n#lkp reopen\n#lkp title New title\n";
        assert_eq!(
            cmds(body),
            vec![
                Command::Retest,
                Command::Test { target: Some("https://lore.kernel.org/r/x@y".into()) },
                Command::Fixed { sha: Some("01b9da291c".into()) },
                Command::Resolve,
                Command::Invalid { reason: Some("not a kernel issue".into()) },
                Command::Dup { case: Some("12".into()) },
                Command::Reopen,
                Command::Title { text: Some("New title".into()) },
            ]
        );
        assert_eq!(
            cmds("#lkp subscribe tree:linus\n#lkp unsubscribe\n#lkp status\n#lkp help\n#lkp frobnicate\n"),
            vec![
                Command::Subscribe { filter: Some("tree:linus".into()) },
                Command::Unsubscribe,
                Command::Status,
                Command::Help,
                Command::Unknown { verb: "frobnicate".into() },
            ]
        );
    }

    #[test]
    fn plain_english_forms() {
        assert_eq!(cmds("Please retest.\n"), vec![Command::Retest]);
        assert_eq!(cmds("Oliver, please retest\n"), vec![Command::Retest]);
        assert_eq!(cmds("Please test this patch on top of next:\n"), vec![Command::Test { target: None }]);
        assert!(cmds("Could you please retest with the fix applied to your tree and the config?\n").is_empty());
    }

    #[test]
    fn quoted_and_signature_lines_do_not_count() {
        assert!(cmds("> #lkp retest\n>> please retest\n").is_empty());
        assert!(cmds("thanks\n-- \n#lkp help\n").is_empty());
    }

    #[test]
    fn at_most_ten() {
        assert_eq!(parse(&"#lkp status\n".repeat(50)).len(), MAX_COMMANDS);
    }
}
