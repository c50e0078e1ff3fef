//! Commands addressed to the bot, read from a mail's unquoted lines, and
//! the table of every command ([`VERBS`]): its name, argument, who may
//! run it, what it does and its help line, in one entry, so a new verb
//! touches one place. Reading is syntax only: `act` applies the table
//! (who may, what changes, rate limits), `render` writes the replies. Quoted lines never count (a reply quoting someone's
//! `#lkp retest` must not retest again), and at most [`MAX_COMMANDS`] are
//! read from one mail. Case-insensitive. Pure.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

use crate::case::EventKind;
use crate::mail::quote;
use crate::text::{Needles, edit_distance, strip_signature};

/// The most commands read from one mail; `[bot] max_commands` may act on
/// fewer.
pub const MAX_COMMANDS: usize = 10;

/// The longest command line read, in characters (a wrapped argument
/// joined): a longer one is refused whole, its reply says the limit, and
/// none of it is read.
pub const MAX_LINE_CHARS: usize = 1000;

/// Who may run a command. Under `[auth] dkim = "require"` all but
/// `Anyone` need a sender whose mail is authenticated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// Anyone on the thread.
    Anyone,
    /// Anyone whose mail is authenticated (a forged From must not
    /// subscribe its victim).
    Authenticated,
    /// The report's addressees (the robot mails the commit's author and
    /// committer), the maintainers and the LKP team, authenticated.
    Deciders,
}

/// Where a command's argument goes in the event it records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgUse {
    /// The event's note (the line itself when there is no argument).
    Note,
    /// The event's fix commit; the note is the line.
    FixCommit,
}

/// What a command does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Asks the LKP team to run the report's test again (on the argument,
    /// if any): the case records `retest-requested`.
    Retest,
    /// Records `event` in the case, with the argument where `arg` says;
    /// the reply says `done` (or `done_with`, the argument in place of
    /// `{arg}`, when there is one).
    Change {
        event: EventKind,
        arg: ArgUse,
        done: &'static str,
        done_with: Option<&'static str>,
    },
    /// The case's state, in the reply.
    Status,
    /// The commands, in the reply.
    Help,
    /// The weekly digest for the sender (the argument is a filter).
    Subscribe,
    Unsubscribe,
}

impl Action {
    /// Whether the command is about the case of the thread it is sent in.
    pub fn needs_case(self) -> bool {
        matches!(self, Action::Retest | Action::Change { .. } | Action::Status)
    }
}

/// A command's argument: its name (the field in `classify --json`), how
/// the help writes it, whether the command needs it, what it may be and
/// how long (in characters): anything else is refused with a reply that
/// says what is accepted ([`Verb::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arg {
    pub field: &'static str,
    pub placeholder: &'static str,
    pub required: bool,
    pub kind: ArgKind,
    pub max_chars: usize,
}

/// What an argument may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// Any text (control characters are cleaned wherever it is shown).
    Text,
    /// Something LKP can test, and nothing a program could take for
    /// more: a URL (http, https or git; a URL may be followed by a branch
    /// name), a branch name (git's rules, with a narrower alphabet and no
    /// leading `-`) or a commit SHA.
    Target,
}

impl ArgKind {
    /// What an argument of this kind is, in words.
    pub fn noun(self) -> &'static str {
        match self {
            ArgKind::Text => "text",
            ArgKind::Target => "test target",
        }
    }

    /// Whether `arg` is one of this kind.
    pub fn accepts(self, arg: &str) -> bool {
        match self {
            ArgKind::Text => true,
            ArgKind::Target => is_target(arg),
        }
    }
}

/// Why a command is refused before it is read any further: too long, or
/// an argument that is not of its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invalid {
    /// The line is over [`MAX_LINE_CHARS`]: it has `chars`.
    LineTooLong { chars: usize },
    /// The argument (`field` of `#lkp verb`) is over `max` characters.
    ArgTooLong { verb: &'static str, field: &'static str, max: usize, chars: usize },
    /// The argument is not of its kind ([`ArgKind`]); `usage` the
    /// command's syntax.
    NotAccepted { kind: ArgKind, usage: String },
}

/// One command: everything about it is here, so a new verb is one entry
/// of [`VERBS`].
#[derive(Debug, PartialEq, Eq)]
pub struct Verb {
    /// `#lkp NAME`.
    pub name: &'static str,
    /// Other spellings of the name.
    pub aliases: &'static [&'static str],
    pub arg: Option<Arg>,
    /// The plain-English form the help names beside it ("please retest").
    pub plain: Option<&'static str>,
    pub who: Who,
    pub action: Action,
    /// What the help says it does.
    pub help: &'static str,
}

const fn arg(field: &'static str, placeholder: &'static str, required: bool, max_chars: usize) -> Option<Arg> {
    Some(Arg { field, placeholder, required, kind: ArgKind::Text, max_chars })
}

/// The longest title (`#lkp title`).
pub const MAX_TITLE_CHARS: usize = 200;

/// Every command, in the order the help lists them.
pub const VERBS: &[Verb] = &[
    Verb {
        name: "retest",
        aliases: &[],
        arg: None,
        plain: Some("please retest"),
        who: Who::Anyone,
        action: Action::Retest,
        help: "run the report's test again",
    },
    Verb {
        name: "test",
        aliases: &[],
        arg: Some(Arg {
            field: "target",
            placeholder: "<lore-link | git-url branch | sha>",
            required: false,
            kind: ArgKind::Target,
            max_chars: 300,
        }),
        plain: None,
        who: Who::Anyone,
        action: Action::Retest,
        help: "test a fix",
    },
    Verb {
        name: "fixed",
        aliases: &[],
        arg: arg("sha", "<sha>", false, 200),
        plain: None,
        who: Who::Deciders,
        action: Action::Change {
            event: EventKind::Resolved,
            arg: ArgUse::FixCommit,
            done: "marked resolved",
            done_with: Some("marked resolved, fixed by {arg}"),
        },
        help: "the fix is merged: resolve",
    },
    Verb {
        name: "resolve",
        aliases: &["resolved"],
        arg: None,
        plain: None,
        who: Who::Deciders,
        action: Action::Change {
            event: EventKind::Resolved,
            arg: ArgUse::Note,
            done: "marked resolved",
            done_with: None,
        },
        help: "close the case",
    },
    Verb {
        name: "invalid",
        aliases: &[],
        arg: arg("reason", "<reason>", true, 500),
        plain: None,
        who: Who::Deciders,
        action: Action::Change {
            event: EventKind::Invalid,
            arg: ArgUse::Note,
            done: "marked invalid",
            done_with: Some("marked invalid ({arg})"),
        },
        help: "not a real regression",
    },
    Verb {
        name: "dup",
        aliases: &["duplicate"],
        arg: arg("case", "<case>", true, 100),
        plain: None,
        who: Who::Deciders,
        action: Action::Change {
            event: EventKind::Duplicate,
            arg: ArgUse::Note,
            done: "marked a duplicate",
            done_with: Some("marked a duplicate of case {arg}"),
        },
        help: "the same as another case",
    },
    Verb {
        name: "reopen",
        aliases: &[],
        arg: None,
        plain: None,
        who: Who::Deciders,
        action: Action::Change { event: EventKind::Reopened, arg: ArgUse::Note, done: "reopened", done_with: None },
        help: "open a closed case again",
    },
    Verb {
        name: "title",
        aliases: &[],
        arg: arg("text", "<text>", true, MAX_TITLE_CHARS),
        plain: None,
        who: Who::Deciders,
        action: Action::Change {
            event: EventKind::Retitled,
            arg: ArgUse::Note,
            done: "retitled",
            done_with: Some("retitled \"{arg}\""),
        },
        help: "rename the case",
    },
    Verb {
        name: "status",
        aliases: &[],
        arg: None,
        plain: None,
        who: Who::Anyone,
        action: Action::Status,
        help: "the case's state",
    },
    Verb {
        name: "help",
        aliases: &[],
        arg: None,
        plain: None,
        who: Who::Anyone,
        action: Action::Help,
        help: "this list",
    },
    Verb {
        name: "subscribe",
        aliases: &[],
        arg: arg("filter", "[filter]", false, 200),
        plain: None,
        who: Who::Authenticated,
        action: Action::Subscribe,
        help: "the weekly digest",
    },
    Verb {
        name: "unsubscribe",
        aliases: &[],
        arg: None,
        plain: None,
        who: Who::Anyone,
        action: Action::Unsubscribe,
        help: "no more digests",
    },
];

impl Verb {
    /// The verb `#lkp WORD` names, by name or alias (any case).
    pub fn named(word: &str) -> Option<&'static Verb> {
        let w = word.to_ascii_lowercase();
        VERBS.iter().find(|v| v.name == w || v.aliases.contains(&w.as_str()))
    }

    /// How the command is written, with its argument's placeholder:
    /// `#lkp test <lore-link | git-url branch | sha>`.
    pub fn syntax(&self) -> String {
        match &self.arg {
            Some(a) => format!("#lkp {} {}", self.name, a.placeholder),
            None => format!("#lkp {}", self.name),
        }
    }

    /// The command's line in the help, as the bot writes it: its syntax
    /// (and plain form), then what it does.
    pub fn help_line(&self) -> String {
        let syntax = match self.plain {
            Some(p) => format!("{}, {p}", self.syntax()),
            None => self.syntax(),
        };
        if syntax.len() < 36 { format!("{syntax:<36} {}", self.help) } else { format!("{syntax}   {}", self.help) }
    }

    /// Whether `arg` is an argument this command takes: not over its
    /// length, and of its kind. A verb without an argument ignores what
    /// follows it, so anything goes.
    pub fn check(&self, arg: Option<&str>) -> Result<(), Invalid> {
        let (Some(a), Some(spec)) = (arg, self.arg) else { return Ok(()) };
        let chars = a.chars().count();
        if chars > spec.max_chars {
            return Err(Invalid::ArgTooLong { verb: self.name, field: spec.field, max: spec.max_chars, chars });
        }
        if !spec.kind.accepts(a) {
            return Err(Invalid::NotAccepted { kind: spec.kind, usage: self.syntax() });
        }
        Ok(())
    }

    /// What the reply says a change did, with the command's argument.
    pub fn done_text(&self, arg: Option<&str>) -> String {
        let Action::Change { done, done_with, .. } = self.action else { return "done".into() };
        match (done_with, arg) {
            (Some(with), Some(a)) => with.replace("{arg}", a),
            _ => done.to_string(),
        }
    }
}

/// Whether `line` is one of the bot's own help lines (or a command's
/// syntax with its placeholder), copied back: someone quoting the help,
/// not asking. Spaces do not count: a mail client may re-flow them.
pub fn is_help_line(line: &str) -> bool {
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase();
    let line = norm(line);
    VERBS.iter().any(|v| line == norm(&v.help_line()) || (v.arg.is_some() && line == norm(&v.syntax())))
}

/// The commands of the help, one line each, indented for a reply.
pub fn help_text() -> String {
    VERBS.iter().map(|v| format!("  {}", v.help_line())).collect::<Vec<_>>().join("\n")
}

/// A command as read from a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// A verb of [`VERBS`] and its argument, if one was given.
    Known { verb: &'static Verb, arg: Option<String> },
    /// `#lkp <something we do not know>`: answered with the help text.
    Unknown { verb: String },
    /// A line over [`MAX_LINE_CHARS`] (`chars` of them), not read beyond
    /// its first word (`verb`, as written): refused.
    TooLong { verb: String, chars: usize },
}

impl Command {
    /// The command `name` (a verb of [`VERBS`]) with `arg`; `None` for a
    /// name that is no verb.
    pub fn new(name: &str, arg: Option<&str>) -> Option<Command> {
        Some(Command::Known { verb: Verb::named(name)?, arg: arg.map(str::to_string) })
    }

    /// The verb, unless the command is unknown.
    pub fn verb(&self) -> Option<&'static Verb> {
        match self {
            Command::Known { verb, .. } => Some(verb),
            Command::Unknown { .. } | Command::TooLong { .. } => None,
        }
    }

    pub fn arg(&self) -> Option<&str> {
        match self {
            Command::Known { arg, .. } => arg.as_deref(),
            Command::Unknown { .. } | Command::TooLong { .. } => None,
        }
    }

    /// Why the command is refused before anything else is asked of it
    /// (who sent it, the case): a line or an argument over its limit, an
    /// argument not of its kind. The events and the reply both ask this.
    pub fn invalid(&self) -> Option<Invalid> {
        match self {
            Command::Known { verb, arg } => verb.check(arg.as_deref()).err(),
            Command::TooLong { chars, .. } => Some(Invalid::LineTooLong { chars: *chars }),
            Command::Unknown { .. } => None,
        }
    }
}

/// `{"command": NAME, ARG_FIELD: ARG}` (the field even when no argument
/// was given), `{"command": "unknown", "verb": ...}`,
/// `{"command": "too-long", "verb": ..., "chars": N}`.
impl Serialize for Command {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        match self {
            Command::Known { verb, arg } => {
                m.serialize_entry("command", verb.name)?;
                if let Some(a) = &verb.arg {
                    m.serialize_entry(a.field, arg)?;
                }
            }
            Command::Unknown { verb } => {
                m.serialize_entry("command", "unknown")?;
                m.serialize_entry("verb", verb)?;
            }
            Command::TooLong { verb, chars } => {
                m.serialize_entry("command", "too-long")?;
                m.serialize_entry("verb", verb)?;
                m.serialize_entry("chars", chars)?;
            }
        }
        m.end()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CommandLine {
    #[serde(flatten)]
    pub command: Command,
    /// The line as written, for the reply to quote.
    pub line: String,
}

static LKP: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?i)^#lkp(?:\s+(\S+))?(?:\s+(.*?))?\s*$").expect("static regex"));
/// "please retest" and "please test this patch", each alone on its line
/// or after a short address ("Oliver, please retest"): see [`Please`].
static PLEASE_RETEST: LazyLock<Please> =
    LazyLock::new(|| Please(crate::text::regex(r"(?i)^please\s+re-?test\s*[.!]?\s*$").expect("static regex")));
static PLEASE_TEST_PATCH: LazyLock<Please> = LazyLock::new(|| {
    Please(
        crate::text::regex(r"(?i)^please\s+test\s+(?:this|the\s+(?:attached|following|below))\s+patch\b")
            .expect("static regex"),
    )
});
/// What may address the bot before the comma: word characters, spaces,
/// dots and dashes (at most [`ADDRESS_CHARS`] of them).
static ADDRESS: LazyLock<Regex> = LazyLock::new(|| crate::text::regex(r"^[\w .-]+$").expect("static regex"));
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

fn given(s: Option<&str>) -> Option<String> {
    s.map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

fn parse_lkp(word: &str, rest: Option<&str>) -> Command {
    let word = if word.is_empty() { "help" } else { word };
    match Verb::named(word) {
        // A verb without an argument ignores what follows it.
        Some(verb) => Command::Known { verb, arg: verb.arg.and_then(|_| given(rest)) },
        None => Command::Unknown { verb: word.to_ascii_lowercase().chars().take(40).collect() },
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
    parse_unquoted(&quote::unquoted(body))
}

/// [`parse`] on the unquoted lines of a body (`mail::quote::unquoted`),
/// which the classifier computes once per message.
pub fn parse_unquoted(own: &str) -> Vec<CommandLine> {
    if !may_contain(own) {
        return Vec::new();
    }
    let own = strip_signature(own);
    let lines: Vec<&str> = own.lines().map(str::trim).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i];
        i += 1;
        let (command, line) = if is_lkp(t) {
            let mut line = t.to_string();
            let mut last = t;
            // Joined while under the limit (and a little over, to tell).
            while let Some(next) =
                lines.get(i).copied().filter(|n| line.len() <= 4 * MAX_LINE_CHARS && continues(last, n))
            {
                let joined_url = line.split_whitespace().last().is_some_and(|w| w.contains("://"));
                if !joined_url || next.contains(' ') {
                    line.push(' ');
                }
                line.push_str(next);
                last = next;
                i += 1;
            }
            let chars = line.chars().count();
            if chars > MAX_LINE_CHARS {
                let verb = line.split_whitespace().nth(1).unwrap_or("");
                let verb = verb.to_ascii_lowercase().chars().take(40).collect();
                (Command::TooLong { verb, chars }, crate::text::cut(&line, KEPT_CHARS))
            } else {
                match LKP.captures(&line) {
                    Some(c) => (parse_lkp(c.get(1).map_or("", |m| m.as_str()), c.get(2).map(|m| m.as_str())), line),
                    None => continue,
                }
            }
        } else if t.len() > 400 {
            continue;
        } else if PLEASE_RETEST.is_match(t) {
            (parse_lkp("retest", None), t.to_string())
        } else if PLEASE_TEST_PATCH.is_match(t) {
            (parse_lkp("test", None), t.to_string())
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

/// How much of a line over [`MAX_LINE_CHARS`] is kept, for the reply to
/// quote.
const KEPT_CHARS: usize = 72;

/// Whether `line` starts a `#lkp` command: `#lkp` alone or followed by
/// white space (as [`LKP`] reads it), checked before the line is read.
fn is_lkp(line: &str) -> bool {
    line.get(..4).is_some_and(|h| h.eq_ignore_ascii_case("#lkp"))
        && line[4..].chars().next().is_none_or(char::is_whitespace)
}

/// A test target ([`ArgKind::Target`]): a URL, a branch name or a SHA
/// alone, or a URL and a branch name.
fn is_target(s: &str) -> bool {
    let words: Vec<&str> = s.split_whitespace().collect();
    match words[..] {
        [one] => is_url(one) || is_sha(one) || is_branch(one),
        [url, branch] => is_url(url) && is_branch(branch),
        _ => false,
    }
}

/// `http`, `https` or `git` URL: a host (names of letters, digits and
/// dashes; no user), an optional port, and a path, query or fragment of
/// URL characters that no shell reads as more (no quotes, `;`, `$`,
/// `|`, `<`, `>`, backquotes, brackets or spaces).
fn is_url(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once("://") else { return false };
    if !["http", "https", "git"].iter().any(|k| scheme.eq_ignore_ascii_case(k)) {
        return false;
    }
    let (authority, path) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
    let (host, port) = authority.split_once(':').unwrap_or((authority, "80"));
    let label =
        |l: &str| !l.is_empty() && !l.starts_with('-') && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    host.len() <= 253
        && host.split('.').all(label)
        && (1..=5).contains(&port.len())
        && port.chars().all(|c| c.is_ascii_digit())
        && path.chars().all(|c| c.is_ascii_alphanumeric() || "-._~:/?#@&+,=%".contains(c))
}

/// A commit SHA, abbreviated to 7 hex digits or more (64 for SHA-256).
fn is_sha(s: &str) -> bool {
    (7..=64).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// A branch name by `git check-ref-format`'s rules, on a narrower
/// alphabet (letters, digits, `-`, `_`, `.`, `/`, `+`) and never starting
/// with `-` (a program would take it for an option): no empty component,
/// none starting with `.` or ending with `.lock`, no `..`, not ending in
/// `.` or `/`.
fn is_branch(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./+".contains(c))
        && !s.contains("..")
        && !s.ends_with('.')
        && s.split('/').all(|c| !c.is_empty() && !c.starts_with('.') && !c.ends_with(".lock"))
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

/// The verb nearest to an unknown one, if any is near (a typo).
pub fn nearest_verb(verb: &str) -> Option<&'static str> {
    let v = verb.to_ascii_lowercase();
    VERBS
        .iter()
        .map(|k| (edit_distance(&v, k.name), k.name))
        .filter(|(d, k)| *d <= (k.len() / 3).max(1) || k.starts_with(&v) && v.len() >= 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmds(body: &str) -> Vec<Command> {
        parse(body).into_iter().map(|c| c.command).collect()
    }

    /// The command `name` with `arg`.
    fn c(name: &str, arg: Option<&str>) -> Command {
        Command::new(name, arg).unwrap()
    }

    #[test]
    fn recognises_each_command() {
        let body = "#lkp retest\n#LKP test https://lore.kernel.org/r/x@y\n#lkp fixed 01b9da291c\n#lkp resolve\n\
                    #lkp invalid not a kernel issue\n#lkp dup 12\n#lkp reopen\n#lkp title New title\n";
        assert_eq!(
            cmds(body),
            vec![
                c("retest", None),
                c("test", Some("https://lore.kernel.org/r/x@y")),
                c("fixed", Some("01b9da291c")),
                c("resolve", None),
                c("invalid", Some("not a kernel issue")),
                c("dup", Some("12")),
                c("reopen", None),
                c("title", Some("New title")),
            ]
        );
        assert_eq!(
            cmds("#lkp subscribe tree:linus\n#lkp unsubscribe\n#lkp status\n#lkp help\n#lkp frobnicate\n"),
            vec![
                c("subscribe", Some("tree:linus")),
                c("unsubscribe", None),
                c("status", None),
                c("help", None),
                Command::Unknown { verb: "frobnicate".into() },
            ]
        );
    }

    #[test]
    fn plain_english_forms() {
        assert_eq!(cmds("Please retest.\n"), vec![c("retest", None)]);
        assert_eq!(cmds("Oliver, please retest\n"), vec![c("retest", None)]);
        assert_eq!(cmds("Oliver Sang-2, please  re-test.\n"), vec![c("retest", None)]);
        assert_eq!(cmds("Dr. Zoë, please test this patch\n"), vec![c("test", None)]);
        // The address is short, has no comma of its own, and is not empty.
        assert!(cmds("Hi, Oliver, please retest\n").is_empty());
        assert!(cmds(", please retest\n").is_empty());
        assert!(cmds("Someone whose name runs past forty characters, please retest\n").is_empty());
        assert!(cmds("Oliver: see below, please retest\n").is_empty());
        assert_eq!(cmds("Please test this patch on top of next:\n"), vec![c("test", None)]);
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
            vec![c(
                "title",
                Some("mm: the frobnicator takes the page lock twice on the slow path under memory pressure")
            )]
        );
        let url = "#lkp test https://lore.kernel.org/all/20260512101010.12345-1-jack@\nsuse.cz/\n";
        assert_eq!(
            cmds(url),
            vec![c("test", Some("https://lore.kernel.org/all/20260512101010.12345-1-jack@suse.cz/"))]
        );
        // A short command line is whole: the next line is prose.
        assert_eq!(cmds("#lkp invalid flaky\nThanks, Bob\n"), vec![c("invalid", Some("flaky"))]);
        // Nor does a wrapped line swallow the next command.
        let two = "#lkp title a title that is long enough to have been wrapped by the client\n#lkp status\n";
        assert_eq!(cmds(two).len(), 2);
    }

    /// What `#lkp test` takes: a URL, a URL and a branch, a branch name
    /// or a SHA; nothing a shell or a program could read as more.
    #[test]
    fn test_targets() {
        let test = Verb::named("test").unwrap();
        let ok = [
            "https://lore.kernel.org/r/20260530.fix-1-jane@example.org",
            "https://lore.kernel.org/all/CAHk-=wgX+Yz%40abc@mail.gmail.com/",
            "git://git.kernel.org/pub/scm/linux/kernel/git/tip/tip.git x86/urgent",
            "https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/commit/?id=01b9da291c&h=master",
            "HTTP://example.org:8080/x.git mm-unstable",
            "01b9da291c",
            "01b9da291c4969354807b52956f4aae1f41b4924",
            "mm-everything-2026-05-12-01-02",
            "for-next/v6.10+fix",
            "https://example.org",
        ];
        for t in ok {
            assert_eq!(test.check(Some(t)), Ok(()), "{t}");
        }
        let refused = [
            "; rm -rf / #",
            "`reboot`",
            "$(reboot)",
            "https://lore.kernel.org/r/x;reboot",
            "https://example.org/$(id)",
            "https://example.org/a b c",
            "https://user:pw@example.org/x.git",
            "https://exa_mple.org",
            "https://-example.org/",
            "https://example.org:99999999/",
            "ftp://example.org/x",
            "file:///etc/passwd",
            "https://",
            "--upload-pack=touch /tmp/x",
            "-x",
            "main..next",
            "a//b",
            "a/.hidden",
            "refs/heads/x.lock",
            "branch.",
            "branch/",
            "'quoted'",
            "a b",
            "https://example.org/x.git main extra",
            "main https://example.org/x.git",
            "x\u{1b}[2J",
            "lore.kernel.org/r/x@y",
            "<20260530.fix-1-jane@example.org>",
        ];
        for t in refused {
            let want = Invalid::NotAccepted { kind: ArgKind::Target, usage: test.syntax() };
            assert_eq!(test.check(Some(t)), Err(want), "{t}");
        }
        // The limit first.
        let long = format!("https://example.org/{}", "x".repeat(300));
        assert!(matches!(test.check(Some(&long)), Err(Invalid::ArgTooLong { max: 300, .. })));
        // A verb without an argument takes anything after it (and ignores it).
        assert_eq!(Verb::named("retest").unwrap().check(Some("; rm -rf /")), Ok(()));
        assert_eq!(test.check(None), Ok(()));
    }

    /// A title over 200 characters and a line over 1,000 are refused,
    /// saying by how much; a line over the limit is not read, and what is
    /// kept of it is short.
    #[test]
    fn over_long_lines_and_arguments() {
        let title = |n: usize| format!("#lkp title {}", "t".repeat(n));
        assert_eq!(parse(&title(200))[0].command.invalid(), None);
        assert_eq!(
            parse(&title(201))[0].command.invalid(),
            Some(Invalid::ArgTooLong { verb: "title", field: "text", max: MAX_TITLE_CHARS, chars: 201 })
        );
        // Characters, not bytes.
        assert_eq!(parse(&format!("#lkp title {}", "é".repeat(200)))[0].command.invalid(), None);
        let lines = parse(&format!(
            "{}
#lkp status
",
            title(10_000)
        ));
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].command, Command::TooLong { verb: "title".into(), chars: 10_011 });
        assert_eq!(lines[0].command.invalid(), Some(Invalid::LineTooLong { chars: 10_011 }));
        assert_eq!(lines[0].line.chars().count(), KEPT_CHARS);
        assert_eq!(lines[1].command, c("status", None));
        // Wrapped onto many lines, joined: the same.
        let wrapped = format!(
            "#lkp invalid {}\n",
            "words that go on and on and on and on and on and on and on and on and on\n".repeat(40)
        );
        let lines = parse(&wrapped);
        assert!(matches!(lines[0].command, Command::TooLong { chars, .. } if chars > MAX_LINE_CHARS), "{lines:?}");
        // Exactly the limit is read.
        let exact = format!("#lkp status {}", "x".repeat(MAX_LINE_CHARS - 12));
        assert_eq!(exact.chars().count(), MAX_LINE_CHARS);
        assert_eq!(parse(&exact)[0].command, c("status", None));
        // `#lkpfoo` is no command, however long.
        assert!(parse(&format!("#lkpx {}", "y".repeat(5000))).is_empty());
        // A line of 4 MiB is read in bounded work (no joining past the
        // limit) and is one refusal.
        let huge = format!("#lkp test {}\n", "a".repeat(4 << 20));
        let lines = parse(&huge);
        assert!(matches!(lines[..], [CommandLine { command: Command::TooLong { .. }, .. }]));
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

    /// The help the bot sends is never read back as a request, and never
    /// wraps (a wrapped help line would be half a command).
    #[test]
    fn help_lines_are_not_commands() {
        for v in VERBS {
            let line = format!("  {}", v.help_line());
            assert!(line.chars().count() <= 76, "{line}");
            assert!(is_help_line(&line), "{line}");
            assert!(is_help_line(&line.split_whitespace().collect::<Vec<_>>().join("  ")), "{line}");
        }
        assert!(is_help_line("#lkp test <lore-link | git-url branch | sha>"));
        assert!(!is_help_line("#lkp test 0123456789ab"));
        assert!(!is_help_line("#lkp retest"));
        assert!(!is_help_line("please retest"));
        // Each parses as a command (or an unknown one): only the rule says
        // it is the help.
        assert_eq!(parse(&help_text()).len(), MAX_COMMANDS);
    }

    #[test]
    fn every_verb_has_one_entry_and_its_aliases_are_its_own() {
        for (i, v) in VERBS.iter().enumerate() {
            assert_eq!(Verb::named(v.name).map(|x| x.name), Some(v.name));
            for a in v.aliases {
                assert_eq!(Verb::named(a).map(|x| x.name), Some(v.name));
            }
            assert!(VERBS[i + 1..].iter().all(|w| w.name != v.name && !w.aliases.contains(&v.name)));
            assert_eq!(nearest_verb(v.name), Some(v.name));
        }
    }

    /// `classify --json` writes a command as `{"command", ARG_FIELD, "line"}`.
    #[test]
    fn json_names_the_argument() {
        let json = serde_json::to_string(&parse("#lkp test abc\n#lkp retest\n#lkp fixed\n#lkp frob x\n")).unwrap();
        assert_eq!(
            json,
            r##"[{"command":"test","target":"abc","line":"#lkp test abc"},{"command":"retest","line":"#lkp retest"},{"command":"fixed","sha":null,"line":"#lkp fixed"},{"command":"unknown","verb":"frob","line":"#lkp frob x"}]"##
        );
        let json = serde_json::to_string(&parse(&format!("#LKP Title {}", "x".repeat(MAX_LINE_CHARS)))).unwrap();
        assert!(
            json.starts_with(r##"[{"command":"too-long","verb":"title","chars":1011,"line":"#LKP Title xxx"##),
            "{json}"
        );
    }
}
