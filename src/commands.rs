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

/// The most commands read from one mail; `[bot] max_commands` may act on
/// fewer.
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
/// "please retest" and "please test this patch", each alone on its line
/// or after a short address ("Oliver, please retest"): see [`Please`].
static PLEASE_RETEST: LazyLock<Please> =
    LazyLock::new(|| Please(Regex::new(r"(?i)^please\s+re-?test\s*[.!]?\s*$").expect("static regex")));
static PLEASE_TEST_PATCH: LazyLock<Please> = LazyLock::new(|| {
    Please(
        Regex::new(r"(?i)^please\s+test\s+(?:this|the\s+(?:attached|following|below))\s+patch\b")
            .expect("static regex"),
    )
});
/// What may address the bot before the comma: word characters, spaces,
/// dots and dashes (at most [`ADDRESS_CHARS`] of them).
static ADDRESS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[\w .-]+$").expect("static regex"));
const ADDRESS_CHARS: usize = 40;

/// A pattern that matches at the start of a line, or after a short
/// address and a comma: `^(?:[\w .-]{1,40},\s*)?PATTERN`. The address is
/// checked in code, not in the pattern: forty repetitions of Unicode `\w`
/// compile to an automaton whose search cache costs megabytes on every
/// thread that classifies.
struct Please(Regex);

impl Please {
    fn is_match(&self, line: &str) -> bool {
        if self.0.is_match(line) {
            return true;
        }
        // The address cannot hold a comma: only the first one can end it.
        let Some((head, rest)) = line.split_once(',') else { return false };
        head.chars().count() <= ADDRESS_CHARS && ADDRESS.is_match(head) && self.0.is_match(rest.trim_start())
    }
}

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

/// Every command in the unquoted part of `body`, in order, at most
/// [`MAX_COMMANDS`]. An argument a mail client wrapped onto the next
/// line is joined back (see `continues`).
pub fn parse(body: &str) -> Vec<CommandLine> {
    if !may_contain(body) {
        return Vec::new();
    }
    let own = quote::unquoted(body);
    let own = strip_signature(&own);
    let lines: Vec<&str> = own.lines().map(str::trim).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i];
        i += 1;
        if t.len() > 400 {
            continue;
        }
        let (command, line) = if LKP.is_match(t) {
            let mut line = t.to_string();
            let mut last = t;
            while let Some(next) = lines.get(i).copied().filter(|n| continues(last, n)) {
                let joined_url = line.split_whitespace().last().is_some_and(|w| w.contains("://"));
                if !joined_url || next.contains(' ') {
                    line.push(' ');
                }
                line.push_str(next);
                last = next;
                i += 1;
            }
            match LKP.captures(&line) {
                Some(c) => (parse_lkp(c.get(1).map_or("", |m| m.as_str()), c.get(2).map(|m| m.as_str())), line),
                None => continue,
            }
        } else if PLEASE_RETEST.is_match(t) {
            (Command::Retest, t.to_string())
        } else if PLEASE_TEST_PATCH.is_match(t) {
            (Command::Test { target: None }, t.to_string())
        } else {
            continue;
        };
        out.push(CommandLine { command, line });
        if out.len() == MAX_COMMANDS {
            break;
        }
    }
    out
}

/// How long a line must be for its end to count as a wrap: clients wrap
/// at 72 to 80 columns.
const WRAPPED_AT: usize = 60;

/// Whether `next` is the rest of `line`, wrapped by a mail client: `line`
/// ran to the wrap width (or ends inside a URL), and `next` is text, not a
/// blank line, a quote or another command.
fn continues(line: &str, next: &str) -> bool {
    let in_url = line.split_whitespace().last().is_some_and(|w| w.contains("://")) && !next.contains(' ');
    (line.len() >= WRAPPED_AT || in_url)
        && !next.is_empty()
        && !next.starts_with('>')
        && !LKP.is_match(next)
        && !PLEASE_RETEST.is_match(next)
}

/// The verbs `#lkp` knows, for help texts and "did you mean".
pub const VERBS: &[&str] = &[
    "retest",
    "test",
    "fixed",
    "resolve",
    "invalid",
    "dup",
    "reopen",
    "title",
    "subscribe",
    "unsubscribe",
    "status",
    "help",
];

/// The verb nearest to an unknown one, if any is near (a typo).
pub fn nearest_verb(verb: &str) -> Option<&'static str> {
    let v = verb.to_ascii_lowercase();
    VERBS
        .iter()
        .map(|k| (edit_distance(&v, k), *k))
        .filter(|(d, k)| *d <= (k.len() / 3).max(1) || k.starts_with(&v) && v.len() >= 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
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
        assert_eq!(cmds("Oliver Sang-2, please  re-test.\n"), vec![Command::Retest]);
        assert_eq!(cmds("Dr. Zoë, please test this patch\n"), vec![Command::Test { target: None }]);
        // The address is short, has no comma of its own, and is not empty.
        assert!(cmds("Hi, Oliver, please retest\n").is_empty());
        assert!(cmds(", please retest\n").is_empty());
        assert!(cmds("Someone whose name runs past forty characters, please retest\n").is_empty());
        assert!(cmds("Oliver: see below, please retest\n").is_empty());
        assert_eq!(cmds("Please test this patch on top of next:\n"), vec![Command::Test { target: None }]);
        assert!(cmds("Could you please retest with the fix applied to your tree and the config?\n").is_empty());
    }

    #[test]
    fn quoted_and_signature_lines_do_not_count() {
        assert!(cmds("> #lkp retest\n>> please retest\n").is_empty());
        assert!(cmds("thanks\n-- \n#lkp help\n").is_empty());
    }

    #[test]
    fn wrapped_arguments_are_joined() {
        let body = "#lkp title mm: the frobnicator takes the page lock twice on the slow\npath under memory pressure\n\nthanks\n";
        assert_eq!(
            cmds(body),
            vec![Command::Title {
                text: Some(
                    "mm: the frobnicator takes the page lock twice on the slow path under memory pressure".into()
                )
            }]
        );
        let url = "#lkp test https://lore.kernel.org/all/20260512101010.12345-1-jack@\nsuse.cz/\n";
        assert_eq!(
            cmds(url),
            vec![Command::Test {
                target: Some("https://lore.kernel.org/all/20260512101010.12345-1-jack@suse.cz/".into())
            }]
        );
        // A short command line is whole: the next line is prose.
        assert_eq!(cmds("#lkp invalid flaky\nThanks, Bob\n"), vec![Command::Invalid { reason: Some("flaky".into()) }]);
        // Nor does a wrapped line swallow the next command.
        let two = "#lkp title a title that is long enough to have been wrapped by the client\n#lkp status\n";
        assert_eq!(cmds(two).len(), 2);
    }

    #[test]
    fn typos_have_a_nearest_verb() {
        assert_eq!(nearest_verb("retset"), Some("retest"));
        assert_eq!(nearest_verb("reslove"), Some("resolve"));
        assert_eq!(nearest_verb("unsub"), Some("unsubscribe"));
        assert_eq!(nearest_verb("frobnicate"), None);
    }

    #[test]
    fn at_most_ten() {
        assert_eq!(parse(&"#lkp status\n".repeat(50)).len(), MAX_COMMANDS);
    }
}
