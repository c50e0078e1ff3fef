//! The mail the bot writes: a template (a file in `templates/`) filled
//! in, wrapped for a kernel list (plain text, lines of at most 78
//! columns, a footer of two lines), and framed as a message: threaded
//! (`In-Reply-To`, `References`, `Re:`), marked `Auto-Submitted` so other
//! bots leave it alone, and with a Message-ID derived from its cause, so
//! writing it again gives the same message. Pure.

use crate::act::policy::{Answer, Response};
use crate::case::CaseView;
use crate::commands::{self, ArgKind, Invalid};
use crate::model::MessageId;
use crate::thread::Incoming;

/// Lines of what the bot writes are at most this long.
pub const WIDTH: usize = 78;
/// Everyone a mail of the bot goes to, To and Cc together, at most: a
/// forged mail must not make the bot write to hundreds.
pub const MAX_RECIPIENTS: usize = 20;
/// A Subject is cut to this many characters (a mail's can be any length).
pub const MAX_SUBJECT_CHARS: usize = 250;
/// A header line is at most this many bytes (RFC 5322).
pub const MAX_LINE_BYTES: usize = 998;
/// The most of a command line a reply quotes, in characters: quoted
/// lines are not wrapped, and `> ` and this many fit in [`WIDTH`] (what
/// a command changed, its whole argument, is said in the reply's words).
const QUOTED_CHARS: usize = WIDTH - 2;

/// Every template, by name, as shipped.
pub const TEMPLATES: &[(&str, &str)] = &[
    ("reply", include_str!("../templates/reply.txt")),
    ("retest-requested", include_str!("../templates/retest-requested.txt")),
    ("already-requested", include_str!("../templates/already-requested.txt")),
    ("done", include_str!("../templates/done.txt")),
    ("not-allowed", include_str!("../templates/not-allowed.txt")),
    ("not-authenticated", include_str!("../templates/not-authenticated.txt")),
    ("missing-argument", include_str!("../templates/missing-argument.txt")),
    ("too-long", include_str!("../templates/too-long.txt")),
    ("bad-argument", include_str!("../templates/bad-argument.txt")),
    ("unknown", include_str!("../templates/unknown.txt")),
    ("case-not-found", include_str!("../templates/case-not-found.txt")),
    ("status", include_str!("../templates/status.txt")),
    ("help", include_str!("../templates/help.txt")),
    ("subscribed", include_str!("../templates/subscribed.txt")),
    ("unsubscribed", include_str!("../templates/unsubscribed.txt")),
    ("bad-filter", include_str!("../templates/bad-filter.txt")),
    ("digest", include_str!("../templates/digest.txt")),
    ("ignored", include_str!("../templates/ignored.txt")),
    ("case", include_str!("../templates/case.txt")),
    ("footer", include_str!("../templates/footer.txt")),
    ("retest-request", include_str!("../templates/retest-request.txt")),
    ("verdict", include_str!("../templates/verdict.txt")),
    ("reminder", include_str!("../templates/reminder.txt")),
    ("limit", include_str!("../templates/limit.txt")),
];

fn template(name: &str) -> &'static str {
    TEMPLATES.iter().find(|(n, _)| *n == name).map_or("", |(_, t)| t)
}

/// `{name}` placeholders of `template` replaced by their values, in one
/// pass: a value is never read again, so text from mail that holds
/// `{case_id}` stays as written. Unknown placeholders are left.
pub fn fill(template: &str, vars: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(template.len() + 64);
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let value =
            rest[1..].find('}').and_then(|j| vars.iter().find(|(k, _)| *k == &rest[1..=j]).map(|(_, v)| (j, v)));
        match value {
            Some((j, v)) => {
                out.push_str(v);
                rest = &rest[j + 2..];
            }
            None => {
                out.push('{');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Lines longer than [`WIDTH`] broken at spaces; quoted lines (`>`) and
/// words longer than a line (a URL) are left whole. A line's lead (its
/// indentation, or a field's name and the spaces after it, as in
/// `config:         x86_64`) is kept as written, and what is broken off
/// is indented under the text after it.
pub fn wrap(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.lines() {
        if line.chars().count() <= WIDTH || line.starts_with('>') {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let (lead, rest) = line.split_at(lead_len(line));
        let indent = " ".repeat(lead.chars().count());
        let mut cur = lead.to_string();
        for word in phrases(rest) {
            if cur.len() > lead.len() && cur.chars().count() + 1 + word.chars().count() > WIDTH {
                out.push_str(&cur);
                out.push('\n');
                cur.clone_from(&indent);
            } else if cur.len() > lead.len() {
                cur.push(' ');
            }
            cur.push_str(&word);
        }
        out.push_str(&cur);
        out.push('\n');
    }
    out
}

/// The words of `text`, a phrase in double quotes (a command, a filter)
/// kept as one when it fits on a line.
fn phrases(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open: Option<String> = None;
    for word in text.split_whitespace() {
        match open.take() {
            Some(mut p) => {
                p.push(' ');
                p.push_str(word);
                if word.contains('"') {
                    out.push(p);
                } else {
                    open = Some(p);
                }
            }
            None if word.starts_with('"') && word[1..].find('"').is_none() => open = Some(word.to_string()),
            None => out.push(word.to_string()),
        }
    }
    if let Some(p) = open {
        out.extend(p.split(' ').map(str::to_string));
    }
    out.into_iter()
        .flat_map(|p| if p.chars().count() > WIDTH / 2 { p.split(' ').map(str::to_string).collect() } else { vec![p] })
        .collect()
}

/// How much of a line to keep as written when wrapping it: its leading
/// spaces, or a field's name and the run of two or more spaces after it.
fn lead_len(line: &str) -> usize {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    if spaces > 0 {
        return spaces;
    }
    let Some(colon) = line.find(':') else { return 0 };
    let after = &line[colon + 1..];
    let gap = after.len() - after.trim_start_matches(' ').len();
    let name = &line[..colon];
    if gap >= 2 && !name.is_empty() && name.len() <= 20 && !name.contains("  ") { colon + 1 + gap } else { 0 }
}

/// Who the bot is in what it writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub address: String,
    pub name: String,
    /// The archive's base URL: a link is this and the Message-ID.
    pub archive_url: String,
}

impl Identity {
    fn domain(&self) -> &str {
        self.address.rsplit_once('@').map_or("lkpbot.invalid", |(_, d)| d)
    }
}

/// A mail ready to be queued.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outgoing {
    /// What made it (the outbox holds one mail per cause).
    pub cause: String,
    /// Without brackets.
    pub message_id: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub subject: String,
    pub in_reply_to: Option<MessageId>,
    /// Oldest first.
    pub references: Vec<MessageId>,
    pub body: String,
    pub date: i64,
}

/// The Message-ID of the mail `cause` makes: the same cause, the same id.
pub fn message_id(cause: &str, id: &Identity) -> String {
    let h = crate::model::Fnv::of(cause.as_bytes());
    format!("lkpbot.{h:016x}@{}", id.domain())
}

/// The mail a thread's message gets in answer: it replies to `parent`
/// (whose References are `references`), or starts a thread of its own.
pub struct Parent<'a> {
    pub message_id: &'a MessageId,
    pub references: &'a [MessageId],
}

/// The one constructor of a mail the bot writes: its Message-ID derived
/// from `cause`, threaded under `parent`, the body with the footer and
/// wrapped at [`WIDTH`]; at most [`MAX_RECIPIENTS`] in all (To first, each
/// once, never the bot itself), the Subject cut to [`MAX_SUBJECT_CHARS`]
/// (and folded when sent, see [`Outgoing::to_rfc5322`]). Every kind of
/// mail (reply, retest request, reminder, verdict, digest) is made here.
#[allow(clippy::too_many_arguments)]
pub fn compose(
    id: &Identity,
    cause: &str,
    to: Vec<String>,
    cc: Vec<String>,
    subject: String,
    parent: Option<Parent<'_>>,
    body: &str,
    now: i64,
) -> Outgoing {
    let (in_reply_to, references) = match parent {
        Some(p) => {
            let mut refs = p.references.to_vec();
            refs.push(p.message_id.clone());
            (Some(p.message_id.clone()), refs)
        }
        None => (None, Vec::new()),
    };
    let mut seen: Vec<String> = vec![id.address.to_ascii_lowercase()];
    let mut keep = |a: &String| {
        let lower = a.to_ascii_lowercase();
        let new = !a.is_empty() && !seen.contains(&lower) && seen.len() <= MAX_RECIPIENTS;
        if new {
            seen.push(lower);
        }
        new
    };
    let to: Vec<String> = to.into_iter().filter(&mut keep).collect();
    let cc: Vec<String> = cc.into_iter().filter(&mut keep).collect();
    let subject = crate::text::clean(&subject);
    let subject = match subject.char_indices().nth(MAX_SUBJECT_CHARS) {
        Some((i, _)) => format!("{}...", &subject[..i]),
        None => subject.into_owned(),
    };
    Outgoing {
        cause: cause.to_string(),
        message_id: message_id(cause, id),
        to,
        cc,
        subject,
        in_reply_to,
        references,
        body: wrap(&with_footer(body, id)),
        date: now,
    }
}

fn rfc2822(t: i64) -> String {
    let t = t.clamp(0, 253_402_300_799);
    jiff::Timestamp::from_second(t)
        .map_or_else(|_| String::new(), |ts| ts.strftime("%a, %d %b %Y %H:%M:%S +0000").to_string())
}

/// A header value of printable ASCII stays; anything else is an RFC 2047
/// encoded word (UTF-8, base64).
fn header_text(s: &str) -> String {
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return s.to_string();
    }
    format!("=?utf-8?b?{}?=", base64(s.as_bytes()))
}

/// A header, folded: `name: value` broken before spaces so each line
/// keeps to [`WIDTH`] where it can and never passes [`MAX_LINE_BYTES`].
/// Printable ASCII is folded at its spaces (a word too long even for a
/// line of its own is encoded instead); anything else becomes encoded
/// words of at most 75 characters each, one per line (RFC 2047: the space
/// between them is not part of the text).
fn folded_header(name: &str, value: &str) -> String {
    let ascii = value.bytes().all(|b| (0x20..0x7f).contains(&b));
    let fits = value.split(' ').all(|w| name.len() + 2 + w.len() <= MAX_LINE_BYTES);
    let words: Vec<String> = if ascii && fits {
        value.split(' ').map(str::to_string).collect()
    } else {
        // 45 bytes of UTF-8 (never half a character) make 60 of base64.
        let mut chunks: Vec<&str> = Vec::new();
        let mut rest = value;
        while !rest.is_empty() {
            let mut end = rest.len().min(45);
            while !rest.is_char_boundary(end) {
                end -= 1;
            }
            let (chunk, tail) = rest.split_at(end.max(rest.chars().next().map_or(1, char::len_utf8)));
            chunks.push(chunk);
            rest = tail;
        }
        chunks.into_iter().map(|c| format!("=?utf-8?b?{}?=", base64(c.as_bytes()))).collect()
    };
    let mut out = format!("{name}:");
    let mut line = out.len();
    for (i, w) in words.iter().enumerate() {
        if i > 0 && line + 1 + w.len() > WIDTH && !(ascii && fits && w.is_empty()) {
            out.push_str("\r\n");
            line = 0;
        }
        out.push(' ');
        out.push_str(w);
        line += 1 + w.len();
    }
    out
}

fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n =
            (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(char::from(T[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

impl Outgoing {
    /// Everyone it goes to.
    pub fn recipients(&self) -> Vec<String> {
        let mut all: Vec<String> = self.to.iter().chain(&self.cc).cloned().collect();
        all.dedup();
        all
    }

    /// The message as it is sent: headers, a blank line, the body, CRLF
    /// line ends.
    pub fn to_rfc5322(&self, id: &Identity) -> Vec<u8> {
        let mut h = Vec::new();
        h.push(format!("From: {} <{}>", header_text(&id.name), id.address));
        h.push(format!("To: {}", self.to.join(", ")));
        if !self.cc.is_empty() {
            h.push(format!("Cc: {}", self.cc.join(",\r\n ")));
        }
        // Text from mail (a title, a reason, a target) never carries
        // control characters into the bot's mail.
        h.push(folded_header("Subject", &crate::text::clean(&self.subject)));
        h.push(format!("Date: {}", rfc2822(self.date)));
        h.push(format!("Message-ID: <{}>", self.message_id));
        if let Some(p) = &self.in_reply_to {
            h.push(format!("In-Reply-To: <{p}>"));
        }
        if !self.references.is_empty() {
            let refs: Vec<String> = self.references.iter().map(|r| format!("<{r}>")).collect();
            h.push(format!("References: {}", refs.join("\r\n ")));
        }
        h.push("MIME-Version: 1.0".into());
        h.push("Content-Type: text/plain; charset=utf-8".into());
        h.push("Content-Transfer-Encoding: 8bit".into());
        // Other robots must not answer the bot, nor vacation replies.
        h.push("Auto-Submitted: auto-replied".into());
        let mut out = h.join("\r\n");
        out.push_str("\r\n\r\n");
        out.push_str(&crate::text::clean(&self.body).replace('\n', "\r\n"));
        out.into_bytes()
    }
}

/// The body's end: the signature separator and the two-line footer.
fn with_footer(body: &str, id: &Identity) -> String {
    let footer = fill(template("footer"), &[("bot", id.name.clone())]);
    format!("{}\n-- \n{}", body.trim_end(), footer)
}

fn re(subject: &str) -> String {
    let s = subject.trim();
    if s.len() >= 3 && s[..3].eq_ignore_ascii_case("re:") { s.to_string() } else { format!("Re: {s}") }
}

/// A commit as replies name it: at most twelve digits.
fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

fn day(t: i64) -> String {
    crate::model::rfc3339(t).get(..10).unwrap_or("").to_string()
}

/// The first name of a sender, else the address.
fn greeting_name(m: &Incoming) -> String {
    m.from_name
        .clone()
        .and_then(|n| n.split_whitespace().next().map(str::to_string))
        .or_else(|| m.from.clone())
        .unwrap_or_else(|| "there".into())
}

/// What the bot says about each command.
fn outcome_text(line: &str, o: &Answer, case: Option<&CaseView>, max: usize) -> String {
    let case_id = case.map_or(String::new(), |c| c.id.0.to_string());
    let vars = |extra: Vec<(&'static str, String)>| {
        let mut v = vec![("line", crate::text::cut(line, QUOTED_CHARS)), ("case_id", case_id.clone())];
        v.extend(extra);
        v
    };
    let (name, v) = match o {
        Answer::RetestRequested { target } => {
            let f = case.map(|c| &c.facts);
            (
                "retest-requested",
                vars(vec![
                    ("testcase", f.and_then(|f| f.testcase.clone()).unwrap_or_else(|| "the test".into())),
                    (
                        "commit",
                        f.and_then(|f| f.commit.as_deref().map(|c| c.get(..12).unwrap_or(c).to_string()))
                            .unwrap_or_else(|| "the reported commit".into()),
                    ),
                    ("target", target.as_ref().map_or(String::new(), |t| format!(" with {t}"))),
                ]),
            )
        }
        Answer::AlreadyRequested { since, by } => {
            ("already-requested", vars(vec![("by", by.clone()), ("when", format!("on {}", day(*since)))]))
        }
        Answer::Done { what } => ("done", vars(vec![("what", what.clone())])),
        Answer::NotAllowed => {
            ("not-allowed", vars(vec![("addressees", case.map_or(String::new(), |c| c.facts.report_to.join(", ")))]))
        }
        Answer::NotAuthenticated { reason } => ("not-authenticated", vars(vec![("reason", reason.clone())])),
        Answer::MissingArgument { usage } => ("missing-argument", vars(vec![("usage", usage.clone())])),
        Answer::Invalid(why) => invalid_text(why, vars(vec![])),
        Answer::Unknown { verb, nearest } => (
            "unknown",
            vars(vec![
                ("verb", verb.clone()),
                ("nearest", nearest.map_or(String::new(), |n| format!(" (did you mean \"#lkp {n}\"?)"))),
                ("commands", commands::help_text()),
            ]),
        ),
        Answer::CaseNotFound => ("case-not-found", vars(vec![])),
        Answer::Status { verdict, fix, last_activity } => {
            let c = case.map(|c| (c.state.as_str().to_string(), day(c.facts.opened_at)));
            let (state, opened) = c.unwrap_or_default();
            let verdict = match (verdict, fix) {
                (Some(v), Some(f)) => format!(", retest verdict {} (fix {})", v.as_str(), short(f)),
                (Some(v), None) => format!(", retest verdict {}", v.as_str()),
                (None, _) => String::new(),
            };
            (
                "status",
                vars(vec![
                    ("state", state),
                    ("verdict", verdict),
                    ("opened", opened),
                    ("updated", day(*last_activity)),
                ]),
            )
        }
        Answer::Help => ("help", vars(vec![("commands", commands::help_text())])),
        Answer::Subscribed { filter } => ("subscribed", vars(vec![("filter", filter.clone())])),
        Answer::Unsubscribed => ("unsubscribed", vars(vec![])),
        Answer::BadFilter { why } => ("bad-filter", vars(vec![("why", why.clone())])),
        Answer::Ignored => ("ignored", vars(vec![("max", max.to_string())])),
    };
    fill(template(name), &v)
}

/// The template and words of a refused command.
fn invalid_text(why: &Invalid, mut v: Vec<(&'static str, String)>) -> (&'static str, Vec<(&'static str, String)>) {
    let too_long = |what: String, max: usize, chars: usize| {
        [("what", what), ("max", max.to_string()), ("chars", chars.to_string())]
    };
    match why {
        Invalid::LineTooLong { chars } => {
            v.extend(too_long("a command line".into(), commands::MAX_LINE_CHARS, *chars));
            ("too-long", v)
        }
        Invalid::ArgTooLong { verb, field, max, chars } => {
            v.extend(too_long(format!("the {field} of \"#lkp {verb}\""), *max, *chars));
            ("too-long", v)
        }
        Invalid::NotAccepted { kind, usage } => {
            let accepted = match kind {
                ArgKind::Target => {
                    "a test target is a URL (http, https or git: the lore link of the patch, or a git \
                     tree's URL and a branch name), a branch name or a commit SHA, without quotes or shell \
                     characters"
                }
                ArgKind::Text => "the argument is not text",
            };
            v.extend([("accepted", accepted.to_string()), ("usage", usage.clone())]);
            ("bad-argument", v)
        }
    }
}

/// Who a reply goes to: the sender (as authenticated, else From), with
/// the thread's recipients as the report had them (its To and Cc: the
/// commit's author, the maintainers, the lists, the LKP team) in Cc;
/// never the addresses a command mail adds.
pub struct Addressees<'a> {
    pub sender: &'a str,
    pub thread: &'a [String],
}

/// The one reply to a command mail.
#[allow(clippy::too_many_arguments)]
pub fn reply(
    m: &Incoming,
    r: &Response,
    case: Option<&CaseView>,
    to: &Addressees<'_>,
    id: &Identity,
    cause: &str,
    now: i64,
    max: usize,
) -> Outgoing {
    let outcomes: Vec<String> =
        r.outcomes.iter().map(|(cl, o)| outcome_text(&cl.line, o, case, max).trim_end().to_string()).collect();
    let case_text = case.map_or(String::new(), |c| {
        fill(
            template("case"),
            &[
                ("case_id", c.id.0.to_string()),
                ("title", c.facts.title.clone()),
                ("link", c.facts.report_message_id.link(&id.archive_url)),
            ],
        )
    });
    let body = fill(
        template("reply"),
        &[("name", greeting_name(m)), ("outcomes", outcomes.join("\n\n")), ("case", case_text.trim_end().to_string())],
    );
    let parent = Parent { message_id: &m.message_id, references: &m.references };
    compose(id, cause, vec![to.sender.to_string()], to.thread.to_vec(), re(&m.subject), Some(parent), &body, now)
}

/// The one notice that a reply budget is used up: to the sender alone,
/// in the thread.
pub fn limit_notice(
    m: &Incoming,
    sender: &str,
    until: &str,
    why: &str,
    id: &Identity,
    cause: &str,
    now: i64,
) -> Outgoing {
    let body =
        fill(template("limit"), &[("name", greeting_name(m)), ("until", until.to_string()), ("why", why.to_string())]);
    let parent = Parent { message_id: &m.message_id, references: &m.references };
    compose(id, cause, vec![sender.to_string()], Vec::new(), re(&m.subject), Some(parent), &body, now)
}

/// What the retest backend is asked, as text (the mail) and as JSON (the
/// command).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RetestRequestFacts {
    pub case: i64,
    pub title: String,
    pub report: String,
    pub report_link: String,
    pub request: String,
    pub request_link: String,
    pub requester: String,
    pub commit: Option<String>,
    pub base: Option<String>,
    pub tree: Option<String>,
    pub testcase: Option<String>,
    pub test_machine: Option<String>,
    pub parameters: Option<String>,
    pub config: Option<String>,
    pub compiler: Option<String>,
    /// What to test: a lore link, a git URL and branch, a SHA, or "the
    /// patch in the request".
    pub target: String,
}

impl RetestRequestFacts {
    /// From the case and its report's extracted facts; the request's own
    /// fields (who, which mail) left empty.
    pub fn of_case(
        case: &CaseView,
        report: Option<&serde_json::Value>,
        target: Option<&str>,
        id: &Identity,
    ) -> RetestRequestFacts {
        let s = |k: &str| report.and_then(|r| r.get(k)).and_then(|v| v.as_str()).map(str::to_string);
        let params = report
            .and_then(|r| r.get("parameters"))
            .and_then(|p| p.as_object())
            .map(|o| o.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or(""))).collect::<Vec<_>>().join(" "));
        let base = report
            .and_then(|r| r.get("table"))
            .and_then(|t| t.get("commits"))
            .and_then(|c| c.get(0))
            .and_then(|c| c.as_str())
            .map(str::to_string);
        let tree = [case.facts.tree.as_deref(), case.facts.branch.as_deref()].into_iter().flatten().collect::<Vec<_>>();
        RetestRequestFacts {
            case: case.id.0,
            title: case.facts.title.clone(),
            report: case.facts.report_message_id.to_string(),
            report_link: case.facts.report_message_id.link(&id.archive_url),
            request: String::new(),
            request_link: String::new(),
            requester: String::new(),
            commit: case.facts.commit.clone(),
            base,
            tree: (!tree.is_empty()).then(|| tree.join(":")),
            testcase: case.facts.testcase.clone(),
            test_machine: s("test_machine"),
            parameters: params,
            config: s("config"),
            compiler: s("compiler"),
            target: target.map_or_else(|| "the patch in the request (inline or attached)".to_string(), str::to_string),
        }
    }

    /// From the case, its report's extracted facts and the command mail.
    pub fn new(
        case: &CaseView,
        report: Option<&serde_json::Value>,
        m: &Incoming,
        target: Option<&str>,
        id: &Identity,
    ) -> RetestRequestFacts {
        RetestRequestFacts {
            request: m.message_id.to_string(),
            request_link: m.message_id.link(&id.archive_url),
            requester: m.from.clone().unwrap_or_default(),
            ..RetestRequestFacts::of_case(case, report, target, id)
        }
    }
}

/// The mail asking the LKP team to rerun, in the report's thread.
pub fn retest_request(
    f: &RetestRequestFacts,
    to: &str,
    report: &MessageId,
    id: &Identity,
    cause: &str,
    now: i64,
) -> Outgoing {
    let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let body = fill(
        template("retest-request"),
        &[
            ("requester", f.requester.clone()),
            ("report_link", f.report_link.clone()),
            ("case_id", f.case.to_string()),
            ("title", f.title.clone()),
            ("commit", dash(&f.commit)),
            ("base", dash(&f.base)),
            ("tree", dash(&f.tree)),
            ("testcase", dash(&f.testcase)),
            ("machine", dash(&f.test_machine)),
            ("parameters", dash(&f.parameters)),
            ("config", dash(&f.config)),
            ("compiler", dash(&f.compiler)),
            ("target", f.target.clone()),
            ("request_link", f.request_link.clone()),
        ],
    );
    let subject = format!("retest request: case {}: {}", f.case, f.title);
    let parent = Parent { message_id: report, references: &[] };
    compose(id, cause, vec![to.to_string()], Vec::new(), subject, Some(parent), &body, now)
}

/// The weekly digest as a mail to `to`.
pub fn digest(subject: &str, body: &str, to: &str, id: &Identity, cause: &str, now: i64) -> Outgoing {
    let text = fill(template("digest"), &[("body", body.trim_end().to_string())]);
    compose(id, cause, vec![to.to_string()], Vec::new(), subject.to_string(), None, &text, now)
}

/// A reminder of a retest request nobody answered.
pub fn reminder(f: &RetestRequestFacts, requested_at: i64, to: &str, id: &Identity, cause: &str, now: i64) -> Outgoing {
    let body = fill(
        template("reminder"),
        &[
            ("requester", f.requester.clone()),
            ("case_id", f.case.to_string()),
            ("requested", day(requested_at)),
            ("report_link", f.report_link.clone()),
            ("title", f.title.clone()),
            ("request_link", f.request_link.clone()),
        ],
    );
    let report = MessageId::new(&f.report);
    let subject = format!("reminder: retest request: case {}: {}", f.case, f.title);
    let parent = report.as_ref().map(|r| Parent { message_id: r, references: &[] });
    compose(id, cause, vec![to.to_string()], Vec::new(), subject, parent, &body, now)
}

/// The verdict, to whoever asked for the retest.
#[allow(clippy::too_many_arguments)]
pub fn verdict(
    requester: &str,
    requested_at: i64,
    result: &Incoming,
    case: &CaseView,
    verdict: &str,
    share: Option<f64>,
    fix: &str,
    metric: &str,
    id: &Identity,
    cause: &str,
    now: i64,
) -> Outgoing {
    let case_text = fill(
        template("case"),
        &[
            ("case_id", case.id.0.to_string()),
            ("title", case.facts.title.clone()),
            ("link", case.facts.report_message_id.link(&id.archive_url)),
        ],
    );
    let body = fill(
        template("verdict"),
        &[
            ("name", requester.split('@').next().unwrap_or(requester).to_string()),
            ("requested", day(requested_at)),
            ("verdict", verdict.to_string()),
            ("share", share.map_or(String::new(), |s| format!(", {:.0}% of the regression recovered", s * 100.0))),
            ("fix", fix.to_string()),
            ("metric", metric.to_string()),
            ("result_link", result.message_id.link(&id.archive_url)),
            ("case", case_text.trim_end().to_string()),
        ],
    );
    let parent = Parent { message_id: &result.message_id, references: &result.references };
    compose(id, cause, vec![requester.to_string()], Vec::new(), re(&result.subject), Some(parent), &body, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_fills() {
        assert!(TEMPLATES.len() >= 15);
        for (name, t) in TEMPLATES {
            let vars: Vec<(&str, String)> = t
                .match_indices('{')
                .filter_map(|(i, _)| t[i + 1..].split_once('}').map(|(k, _)| k))
                .map(|k| (k, "x".to_string()))
                .collect();
            let out = fill(t, &vars);
            assert!(!out.contains('{') && !out.trim().is_empty(), "{name}: {out}");
            for line in wrap(&out).lines() {
                assert!(line.chars().count() <= WIDTH || !line.contains(' '), "{name}: {line}");
            }
        }
    }

    /// Text from mail is inserted once, never read for placeholders again.
    #[test]
    fn fill_inserts_values_as_written() {
        let t = "Done: case {case_id} retitled \"{what}\" {unknown}.";
        let out = fill(t, &[("what", "{case_id} {what}".into()), ("case_id", "7".into())]);
        assert_eq!(out, "Done: case 7 retitled \"{case_id} {what}\" {unknown}.");
        assert_eq!(fill("{", &[]), "{");
        assert_eq!(fill("a}{b", &[("b", "c".into())]), "a}{b");
    }

    #[test]
    fn fields_wrap_under_their_value() {
        let w = wrap(&format!("config:         {}\n", "word ".repeat(20)));
        let lines: Vec<&str> = w.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("config:         word"));
        assert!(lines[1].starts_with("                word"));
    }

    #[test]
    fn long_lines_wrap_and_quotes_stay() {
        let long = "word ".repeat(40);
        let w = wrap(&format!("{long}\n> {long}\n"));
        let lines: Vec<&str> = w.lines().collect();
        assert!(lines[..lines.len() - 1].iter().all(|l| l.len() <= WIDTH));
        assert!(lines.last().unwrap().starts_with("> ") && lines.last().unwrap().len() > WIDTH);
    }

    fn bot() -> Identity {
        Identity {
            address: "bot@example.org".into(),
            name: "lkpbot".into(),
            archive_url: "https://lore.kernel.org/r/".into(),
        }
    }

    /// However many addresses come in, a mail goes to at most twenty,
    /// each once, the To first, never the bot.
    #[test]
    fn at_most_twenty_recipients() {
        let cc: Vec<String> = (0..300).map(|i| format!("user{i:03}@example.net")).collect();
        let to = vec!["Dev@Example.org".to_string()];
        let mut cc_with = vec!["dev@example.org".to_string(), "BOT@example.org".to_string()];
        cc_with.extend(cc);
        let out = compose(&bot(), "c", to, cc_with, "Re: x".into(), None, "hi", 0);
        assert_eq!(out.to, ["Dev@Example.org"]);
        assert_eq!(out.recipients().len(), MAX_RECIPIENTS);
        assert_eq!(out.cc.first().map(String::as_str), Some("user000@example.net"));
        assert!(!out.recipients().iter().any(|r| r.eq_ignore_ascii_case("bot@example.org")));
    }

    /// A Subject of any length is cut, folded, and no line of the mail's
    /// header passes 998 bytes (`tests/answers.rs` reads them back).
    #[test]
    fn subjects_are_cut_and_folded() {
        for subject in [
            format!("Re: {}", "word ".repeat(2000)),
            format!("Re: {}", "x".repeat(10_000)),
            format!("Re: {}", "é".repeat(5000)),
            format!("Re: [linus:master] [mm]  01b9da291c: {}", "ü word ".repeat(100)),
        ] {
            let out = compose(&bot(), "c", vec!["a@example.org".into()], vec![], subject.clone(), None, "hi", 0);
            assert!(out.subject.chars().count() <= MAX_SUBJECT_CHARS + 3, "{}", out.subject);
            let raw = String::from_utf8(out.to_rfc5322(&bot())).unwrap();
            let head = raw.split("\r\n\r\n").next().unwrap();
            for line in head.split("\r\n") {
                assert!(line.len() <= MAX_LINE_BYTES, "{} bytes: {line}", line.len());
            }
        }
        // An ordinary subject folds at its spaces, lines within 78.
        let s = "Re: [linus:master] [mm]  01b9da291c: stress-ng.switch.ops_per_sec 67.7% regression on a long line";
        let raw =
            compose(&bot(), "c", vec!["a@example.org".into()], vec![], s.into(), None, "hi", 0).to_rfc5322(&bot());
        let raw = String::from_utf8(raw).unwrap();
        let subject: Vec<&str> = raw
            .split("\r\n")
            .skip_while(|l| !l.starts_with("Subject:"))
            .take_while(|l| l.starts_with("Subject:") || l.starts_with(' '))
            .collect();
        assert!(subject.len() == 2 && subject.iter().all(|l| l.len() <= WIDTH), "{subject:?}");
        assert_eq!(subject.join(""), format!("Subject: {s}"));
    }

    #[test]
    fn ids_are_stable_and_encoded_words_are_ascii() {
        let id = Identity {
            address: "bot@example.org".into(),
            name: "lkpbot".into(),
            archive_url: "https://lore.kernel.org/r/".into(),
        };
        assert_eq!(message_id("reply:a@b", &id), message_id("reply:a@b", &id));
        assert_ne!(message_id("reply:a@b", &id), message_id("reply:a@c", &id));
        assert!(message_id("x", &id).ends_with("@example.org"));
        assert_eq!(header_text("Re: plain"), "Re: plain");
        assert_eq!(header_text("Re: café"), "=?utf-8?b?UmU6IGNhZsOp?=");
        assert_eq!(base64(b"ab"), "YWI=");
    }
}
