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
/// the help writes it, and whether the command needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arg {
    pub field: &'static str,
    pub placeholder: &'static str,
    pub required: bool,
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

const fn arg(field: &'static str, placeholder: &'static str, required: bool) -> Option<Arg> {
    Some(Arg { field, placeholder, required })
}

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
        arg: arg("target", "<lore-link | git-url branch | sha>", false),
        plain: None,
        who: Who::Anyone,
        action: Action::Retest,
        help: "test a fix",
    },
    Verb {
        name: "fixed",
        aliases: &[],
        arg: arg("sha", "<sha>", false),
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
        arg: arg("reason", "<reason>", true),
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
        arg: arg("case", "<case>", true),
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
        arg: arg("text", "<text>", true),
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
        arg: arg("filter", "[filter]", false),
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
            Command::Unknown { .. } => None,
        }
    }

    pub fn arg(&self) -> Option<&str> {
        match self {
            Command::Known { arg, .. } => arg.as_deref(),
            Command::Unknown { .. } => None,
        }
    }
}

/// `{"command": NAME, ARG_FIELD: ARG}` (the field even when no argument
/// was given), `{"command": "unknown", "verb": ...}`.
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
    }
}
