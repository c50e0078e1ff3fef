//! Lifecycle signals: what a mail says happened to a patch outside the
//! report's thread. A maintainer applied, queued or picked up the patch
//! (or series) a reply answers; a commit notification says a patch went
//! into a branch; a pull request lists the commits it carries, and
//! pr-tracker-bot says one was merged upstream; stable announces a
//! backport; a patch reverts a commit.
//!
//! Each recogniser reads what one mail says, however it is phrased: a
//! maintainer's own words ("Applied to cgroup/for-6.11.", "Thanks,
//! queued.", "Whole series applied as 6.10 material", "Picked into
//! vfs.fixes now!"), b4's "Applied, thanks!" with its `[n/m] title` and
//! `commit:` lines, patchwork-bot's "This patch was applied to TREE", the
//! robots' fixed forms. It says nothing about cases: which fix or culprit
//! a signal is about, and whether it is the fix's own author speaking, is
//! threading's to decide (`thread::ladder`). A question ("applied?"), a
//! plan ("I'll queue it once ..."), a condition, words in a quote, someone
//! reporting what others did ("it has been queued by the block
//! maintainers") and a test run ("we applied the patch on top of ... and")
//! are no signal. Pure: no I/O.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::Sender;
use super::text::sentences;
use crate::mail::{Mail, quote, subject_is_reply};
use crate::text::strip_signature;

/// What a mail says happened to a patch or a commit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "signal", rename_all = "kebab-case")]
pub enum Signal {
    /// A maintainer applied (queued, picked up, took) the patch or the
    /// series the mail answers.
    Applied(Applied),
    /// A commit notification: the commit titled `title` went into `tree`.
    Committed(Committed),
    /// A pull request, and the titles of the commits its shortlog lists.
    PullRequest { titles: Vec<String> },
    /// pr-tracker-bot: the pull request the mail answers was merged into
    /// `tree` (`torvalds/linux.git`), as the merge `commit`.
    PullMerged { tree: String, commit: Option<String> },
    /// A stable tree takes (or is offered, by AUTOSEL or a review series)
    /// the commit titled `title`; `upstream` is the mainline commit it
    /// names.
    Stable { tree: String, title: String, upstream: Option<String> },
    /// A revert of the commit titled `subject` (`Revert "<subject>"`)
    /// and of `commits` (`This reverts commit <sha>.`).
    Revert { subject: Option<String>, commits: Vec<String> },
}

impl Signal {
    pub fn name(&self) -> &'static str {
        match self {
            Signal::Applied(_) => "applied",
            Signal::Committed(_) => "committed",
            Signal::PullRequest { .. } => "pull-request",
            Signal::PullMerged { .. } => "pull-merged",
            Signal::Stable { .. } => "stable",
            Signal::Revert { .. } => "revert",
        }
    }
}

/// A maintainer's applied notice.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Applied {
    /// Where to, as the mail says it: `cgroup/for-6.11`,
    /// `bpf/bpf-next.git (master)`, `linux-next`.
    pub tree: Option<String>,
    /// The patches a b4 or patchwork-bot notice lists, with their
    /// commits; empty when the mail lists none (the patch or the whole
    /// series it answers).
    pub listed: Vec<Listed>,
    /// "I applied patches 1/5 and 2/5": only these numbers of the series.
    pub only: Vec<u32>,
    /// "Applied all except the last patch".
    pub all_but_last: bool,
    /// The commit the mail names when it lists no patches (an inline
    /// `commit <sha>` block, a commit link).
    pub commit: Option<String>,
    /// The sentence (or the notice's first line) that says so.
    pub phrase: String,
}

/// One patch of a b4 or patchwork-bot notice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Listed {
    /// `n` of `[n/m]`; none for a single patch.
    pub number: Option<u32>,
    pub title: String,
    pub commit: Option<String>,
    /// False for patchwork-bot's "(no matching commit)": not applied.
    pub applied: bool,
}

/// A commit notification.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Committed {
    pub tree: Option<String>,
    pub title: String,
    pub commit: Option<String>,
    /// Only queued (akpm's "+ x.patch added to mm-unstable branch"), not
    /// committed to a branch that stays.
    pub queued: bool,
}

/// What `mail` says happened, if anything. Never fails.
pub fn recognise(mail: &Mail, sender: Sender) -> Option<Signal> {
    if matches!(sender, Sender::Robot | Sender::Bot) {
        return None;
    }
    let from = mail.from_email().unwrap_or_default();
    let name = mail.from_name().unwrap_or("").to_ascii_lowercase();
    let subject = collapse(&mail.subject);
    if from == "pr-tracker-bot@kernel.org" {
        return pull_merged(&mail.body);
    }
    if from.starts_with("tip-bot2") || name.starts_with("tip-bot2") {
        return tip_commit(&subject, &mail.body);
    }
    if from.starts_with("patchwork-bot") {
        return patchwork_notice(&mail.body).map(Signal::Applied);
    }
    if let Some(s) = mm_commit(&subject, &mail.body) {
        return Some(s);
    }
    if let Some(s) = stable(&subject, &mail.body) {
        return Some(s);
    }
    if subject_is_reply(&subject) {
        // The robot's people apply patches to test them; and most replies
        // use none of the words.
        if matches!(sender, Sender::LkpTeam | Sender::Unknown) || !own_lines_may_say_applied(&mail.body) {
            return None;
        }
        return applied_reply(&mail.body).map(Signal::Applied);
    }
    if let Some(s) = revert(&subject, &mail.body) {
        return Some(s);
    }
    if is_pull_subject(&subject) {
        let titles = shortlog(&mail.body);
        return (!titles.is_empty()).then_some(Signal::PullRequest { titles });
    }
    // A maintainer posting a fix and applying it at once says so in the
    // patch's notes, below `---`.
    if super::fix::is_patch_subject(&subject) {
        return patch_notes(&mail.body).and_then(applied_in).map(Signal::Applied);
    }
    None
}

/// Whether a line of `body` outside the quotes uses one of
/// [`MAY_SAY_APPLIED_OWN`]'s words: the lines [`applied_reply`] reads are
/// some of these (it stops at a signature, a diff or [`OWN_LIMIT`], and
/// takes text below an Outlook separator as quoted), so a body without
/// one says nothing it finds. Most replies use the words only in what
/// they quote. One search of the lower-cased body for the words as
/// literals, then each hit's line checked for quote markers.
fn own_lines_may_say_applied(body: &str) -> bool {
    static WORDS: LazyLock<regex::bytes::Regex> =
        LazyLock::new(|| regex::bytes::Regex::new(APPLIED_WORDS).expect("static regex"));
    let lower = body.as_bytes().to_ascii_lowercase();
    WORDS.find_iter(&lower).any(|m| {
        // Lower-casing keeps every byte where it was; the word starts
        // with an ASCII letter, its line after a newline.
        let line = memchr::memrchr(b'\n', &lower[..m.start()]).map_or(0, |i| i + 1);
        quote::split_line(&body[line..m.start()]).0 == 0
    })
    // Under `(?i)` "k" also matches the Kelvin sign and "s" the long s
    // (as `text::may_contain_ci` has it).
    || crate::text::has_folding_letters(body)
}

/// The verbs as [`says_applied`] and [`applied_in`] take them (past
/// forms only: "applied", not "apply" or "application"; "committed", not
/// "commit message"), "fixed" ("Fixed in mm-hotfixes.") and "done": every
/// phrase they match contains one of these, so own lines with none say
/// nothing [`applied_reply`] finds, and most of a review's own lines use
/// the verbs' stems ("apply", "commit message") but none of these.
static MAY_SAY_APPLIED_OWN: LazyLock<regex::bytes::Regex> =
    LazyLock::new(|| regex::bytes::Regex::new(&format!("(?i){APPLIED_WORDS}")).expect("static regex"));
/// [`MAY_SAY_APPLIED_OWN`]'s words, lower-case.
const APPLIED_WORDS: &str = "applied|appled|queued|picked|pushed|taken|took|merged|committed|folded|added|done|fixed";

/// `s` with its white space collapsed to single spaces; parsed mail's
/// subjects already are (`mail::collapse_ws`), and are borrowed.
fn collapse(s: &str) -> Cow<'_, str> {
    if crate::mail::is_collapsed(s) { Cow::Borrowed(s) } else { Cow::Owned(crate::mail::collapse_ws(s)) }
}

fn re(pattern: &str) -> Regex {
    crate::text::regex(pattern).expect("static regex")
}

/// `[GIT PULL]`, `[GIT PULL v2]`, `[PULL]`, `[GIT PULL REQUEST]`.
fn is_pull_subject(subject: &str) -> bool {
    static PULL: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)^\s*\[(?:GIT\s+)?PULL\b[^\]]*\]"));
    PULL.is_match(subject)
}

/// The commit titles of a pull request's shortlog: after the
/// `-----` rule, `Author (N):` then the titles indented below it (a
/// wrapped title goes on, indented deeper), until the diffstat.
pub fn shortlog(body: &str) -> Vec<String> {
    static AUTHOR: LazyLock<Regex> = LazyLock::new(|| re(r"^\S.*\(\d+\):\s*$"));
    static DIFFSTAT: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*\S+\s+\|\s+(?:\d+|Bin)\b"));
    let mut out: Vec<String> = Vec::new();
    let mut in_author = false;
    let mut indent = 0;
    for line in body.lines() {
        let l = line.trim_end();
        if AUTHOR.is_match(l) {
            in_author = true;
            indent = 0;
            continue;
        }
        if !in_author {
            continue;
        }
        if l.trim().is_empty() || DIFFSTAT.is_match(l) || !l.starts_with(' ') {
            in_author = false;
            continue;
        }
        let this = l.len() - l.trim_start().len();
        match out.last_mut() {
            // Deeper than the titles: a wrapped title goes on.
            Some(last) if indent > 0 && this > indent => {
                last.push(' ');
                last.push_str(l.trim());
            }
            _ => {
                indent = this;
                out.push(l.trim().to_string());
            }
        }
    }
    out
}

/// pr-tracker-bot's "The pull request you sent on ... has been merged
/// into torvalds/linux.git: `https://git.kernel.org/torvalds/c/<sha>`".
fn pull_merged(body: &str) -> Option<Signal> {
    static MERGED: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)has been merged into\s+(\S+?):?\s*\n\s*(\S+)?"));
    let c = MERGED.captures(body)?;
    let tree = c.get(1)?.as_str().trim_end_matches([':', '.']).to_string();
    let commit = c.get(2).and_then(|m| commit_in_url(m.as_str()));
    Some(Signal::PullMerged { tree, commit })
}

/// The commit a cgit/korg URL names: `.../c/<sha>`, `...?id=<sha>`,
/// `.../commit/<sha>`.
fn commit_in_url(url: &str) -> Option<String> {
    static SHA: LazyLock<Regex> = LazyLock::new(|| re(r"(?:/c/|[?&]id=|/commit/)([0-9a-f]{7,40})\b"));
    SHA.captures(url).and_then(|c| c.get(1)).map(|m| m.as_str().to_string())
}

/// tip-bot2: `[tip: sched/urgent] sched/fair: Fix ...` with
/// `Commit-ID: <sha>`. A revert committed is a revert.
fn tip_commit(subject: &str, body: &str) -> Option<Signal> {
    static TIP: LazyLock<Regex> = LazyLock::new(|| re(r"^\[tip:\s*([^\]]+)\]\s*(.+)$"));
    static ID: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^Commit-ID:\s*([0-9a-f]{7,40})"));
    let c = TIP.captures(subject)?;
    let title = c.get(2)?.as_str().trim().to_string();
    if let Some(r) = revert(&title, body) {
        return Some(r);
    }
    Some(Signal::Committed(Committed {
        tree: c.get(1).map(|m| format!("tip/{}", m.as_str().trim())),
        title,
        commit: ID.captures(body).and_then(|c| c.get(1)).map(|m| m.as_str().to_string()),
        queued: false,
    }))
}

/// Andrew Morton's mm-commits mails: `+ x.patch added to mm-unstable
/// branch` (queued) and `[merged mm-stable] x.patch removed from -mm
/// tree` (committed to a branch that goes upstream). The title is the
/// body's "The patch titled / Subject: ...". Dropped, withdrawn and
/// to-be-updated patches say nothing.
fn mm_commit(subject: &str, body: &str) -> Option<Signal> {
    static ADDED: LazyLock<Regex> =
        LazyLock::new(|| re(r"^\+ \S+\.patch added to (?:the )?(?:-mm )?(\S+?)(?: branch| tree)?$"));
    static MERGED: LazyLock<Regex> = LazyLock::new(|| re(r"^\[merged ([^\]]+)\] \S+\.patch removed from -mm tree$"));
    static TITLED: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)patch titled\s*\n\s*Subject:\s*(.+)$"));
    // What both subjects start with: most mail is neither.
    if !subject.starts_with("+ ") && !subject.starts_with("[merged ") {
        return None;
    }
    let (tree, queued) = if let Some(c) = ADDED.captures(subject) {
        (c.get(1)?.as_str().to_string(), true)
    } else if let Some(c) = MERGED.captures(subject) {
        (c.get(1)?.as_str().to_string(), false)
    } else {
        return None;
    };
    let title = TITLED.captures(body)?.get(1)?.as_str().trim().to_string();
    if let Some(r) = revert(&title, body) {
        return Some(r);
    }
    Some(Signal::Committed(Committed { tree: Some(tree), title, commit: None, queued }))
}

/// Stable: `Patch "<title>" has been added to the 6.1-stable tree`,
/// `[PATCH AUTOSEL 6.6 05/20] <title>`, `[PATCH 6.1 012/345] <title>`
/// (a stable review series); "FAILED: patch ... failed to apply" is none.
fn stable(subject: &str, body: &str) -> Option<Signal> {
    static ADDED: LazyLock<Regex> = LazyLock::new(|| re(r#"^Patch "(.+)" has been added to the (\S+-stable) tree$"#));
    static AUTOSEL: LazyLock<Regex> =
        LazyLock::new(|| re(r"^\[PATCH AUTOSEL(?:\s+(\d+\.\d+(?:\.\d+)?))?(?:\s+\d+/\d+)?\]\s*(.+)$"));
    static REVIEW: LazyLock<Regex> = LazyLock::new(|| re(r"^\[PATCH (\d+\.\d+)(?:\.\d+)? \d+/\d+\]\s*(.+)$"));
    static UPSTREAM: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?mi)^\s*(?:\[\s*)?(?:upstream )?commit:?\s+([0-9a-f]{12,40})\b(?:\s+upstream)?"));
    // What the three subjects start with: most mail is none of them.
    if !subject.starts_with("Patch \"") && !subject.starts_with("[PATCH ") {
        return None;
    }
    let (tree, title) = if let Some(c) = ADDED.captures(subject) {
        (c.get(2)?.as_str().to_string(), c.get(1)?.as_str())
    } else if let Some(c) = AUTOSEL.captures(subject) {
        (c.get(1).map_or_else(|| "stable".to_string(), |v| format!("{}-stable", v.as_str())), c.get(2)?.as_str())
    } else if let Some(c) = REVIEW.captures(subject) {
        (format!("{}-stable", c.get(1)?.as_str()), c.get(2)?.as_str())
    } else {
        return None;
    };
    let title = title.trim().trim_start_matches("[PATCH]").trim().to_string();
    let upstream = UPSTREAM.captures(body).and_then(|c| c.get(1)).map(|m| m.as_str().to_string());
    Some(Signal::Stable { tree, title, upstream })
}

/// A revert posted or committed: `Revert "<subject>"` (after a subsystem
/// prefix too: `block: Revert "block: ..."`) and `This reverts commit
/// <sha>`. A reply to one is not: the signal is the revert itself.
pub fn revert(subject: &str, body: &str) -> Option<Signal> {
    static REVERTS: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)This reverts commit\s+([0-9a-f]{7,40})\b"));
    let title = super::subject::strip_tags(subject);
    let subject = reverted_subject(title);
    let commits: Vec<String> = if subject.is_some() || title.to_ascii_lowercase().starts_with("revert") {
        let mut v: Vec<String> =
            REVERTS.captures_iter(body).filter_map(|c| c.get(1)).map(|m| m.as_str().into()).collect();
        v.dedup();
        v
    } else {
        Vec::new()
    };
    (subject.is_some() || !commits.is_empty()).then_some(Signal::Revert { subject, commits })
}

/// The subject a `Revert "..."` title reverts: the text between the
/// first quote after `Revert` and the last quote.
pub fn reverted_subject(title: &str) -> Option<String> {
    let lower = title.to_ascii_lowercase();
    let at = lower.find("revert \"")?;
    let rest = &title[at + "revert \"".len()..];
    let end = rest.rfind('"')?;
    let s = rest[..end].trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// patchwork-bot: "This patch was applied to bpf/bpf-next.git (master)"
/// or "This series was applied to ...", then its summary: `- [v2,3/5]
/// title` and the commit link, or "(no matching commit)".
fn patchwork_notice(body: &str) -> Option<Applied> {
    static HEAD: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?m)^This (?:patch|series|patchset|patch set) was applied to (.+?)\s*$"));
    static ITEM: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*- \[([^\]]*)\]\s*(.+?)\s*$"));
    let head = HEAD.captures(body)?;
    let tree = head.get(1).map(|m| m.as_str().trim_end_matches(':').trim().to_string());
    let mut listed: Vec<Listed> = Vec::new();
    for line in body.lines() {
        if let Some(c) = ITEM.captures(line) {
            let tag = c.get(1).map_or("", |m| m.as_str());
            let number = tag.split(',').find_map(|p| p.split_once('/')).and_then(|(n, _)| n.trim().parse().ok());
            listed.push(Listed {
                number,
                title: c.get(2).map_or("", |m| m.as_str()).to_string(),
                commit: None,
                applied: true,
            });
        } else if let Some(last) = listed.last_mut()
            && last.commit.is_none()
            && last.applied
        {
            let t = line.trim();
            if t == "(no matching commit)" {
                last.applied = false;
            } else if let Some(sha) = commit_in_url(t) {
                last.commit = Some(sha);
            }
        }
    }
    Some(Applied { tree, listed, phrase: head.get(0)?.as_str().trim().to_string(), ..Applied::default() })
}

/// The notes of a patch mail: between the `---` that ends the commit
/// message and the diffstat or diff.
fn patch_notes(body: &str) -> Option<&str> {
    let start = body.find("\n---\n")? + 5;
    let rest = &body[start..];
    let end = rest.find("\ndiff --git ").or_else(|| rest.find(" files changed")).unwrap_or(rest.len());
    Some(&rest[..end.min(rest.len())])
}

/// A reply's own words, read for an applied notice: each own block (the
/// unquoted lines between quotes) with the quoted lines just before it,
/// for a bare "Done." that answers "could you squash this in?".
fn applied_reply(body: &str) -> Option<Applied> {
    let (own, answers_a_request) = own_text(body);
    if own.trim().is_empty() {
        return None;
    }
    if let Some(a) = applied_in(&own) {
        return Some(a);
    }
    answers_a_request.then(|| done(&own)).flatten()
}

/// The unquoted lines of a reply up to its signature and any diff, at
/// most [`OWN_LIMIT`] bytes; and whether an own line saying only "Done"
/// follows quoted lines asking to apply, squash or pick something up.
fn own_text(body: &str) -> (String, bool) {
    static ASKS: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?i)\b(?:apply|applied|squash\w*|fold\w*|amend\w*|pick(?:ed)? (?:it |this |them )?up|take|queue|merge)\b")
    });
    let mut own = String::new();
    let mut recent_quote: Vec<&str> = Vec::new();
    let mut asks = false;
    for (depth, line) in quote::lines(body) {
        if depth > 0 {
            recent_quote.push(line);
            continue;
        }
        let t = line.trim();
        if t == "--" || line.starts_with("diff --git ") || own.len() > OWN_LIMIT {
            break;
        }
        if is_done(t) && recent_quote.iter().rev().take(6).any(|q| ASKS.is_match(q)) {
            asks = true;
        }
        if !t.is_empty() {
            recent_quote.clear();
        }
        own.push_str(line);
        own.push('\n');
    }
    (own, asks)
}

/// How much of a reply's own text is read: applied notices come first,
/// or right after the quote they answer.
const OWN_LIMIT: usize = 6000;

fn is_done(line: &str) -> bool {
    static DONE: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)^(?:(?:yep|yes|ok|okay|sure)[,!.]?\s+)?done[.!]*(?:,?\s*thanks?!?\.?)?$"));
    DONE.is_match(line)
}

/// A reply that only says "Done" to a request to apply or squash.
fn done(own: &str) -> Option<Applied> {
    let line = own.lines().map(str::trim).find(|l| is_done(l))?;
    Some(Applied { phrase: line.to_string(), ..Applied::default() })
}

/// The first sentence of `text` that says its writer applied, queued or
/// picked up the patch, with what it says about where and which.
pub fn applied_in(text: &str) -> Option<Applied> {
    // The quote may use the words where a reply's own lines do not, a
    // patch's notes mostly do not: then no sentence of them says applied.
    if !MAY_SAY_APPLIED_OWN.is_match(text.as_bytes()) {
        return None;
    }
    let text = strip_signature(text);
    let listed = b4_listing(text);
    let commit = inline_commit(text);
    for s in sentences(text) {
        let Some(tree) = says_applied(&s.text) else { continue };
        let only = only_numbers(&s.text);
        let all_but_last = ALL_BUT_LAST.is_match(&s.text);
        return Some(Applied {
            tree,
            listed,
            only,
            all_but_last,
            commit: commit.clone(),
            phrase: s.text.chars().take(200).collect(),
        });
    }
    // A maintainer showing the commit they just added ("I've fixed it up
    // with the patch below", "I added a fixup now:" then `commit <sha>`
    // and its `Author:` line).
    let c = commit?;
    static SHOWN: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?i)\bI(?:'ve| have)?\s+(?:just\s+|now\s+)?(?:fixed it up|added a fix-?up|committed|added the fix)\b")
    });
    let phrase = sentences(text).into_iter().find(|s| SHOWN.is_match(&s.text))?.text;
    Some(Applied { commit: Some(c), phrase, ..Applied::default() })
}

static ALL_BUT_LAST: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\ball(?: patches)? (?:but|except(?: for)?) (?:the )?last(?: one| patch)?\b"));

/// Where a sentence says its writer applied the patch: `Some(tree)`
/// (the tree when named), `None` when it does not say so.
fn says_applied(sentence: &str) -> Option<Option<String>> {
    // The verb: the sentence opens with it ("Applied to ...", "Thanks,
    // queued."), its subject is the patch ("Whole series applied", "It's
    // already queued up"), or its writer did it ("I've applied ...",
    // "I fixed the typo and applied to ...", "I added this to mm-new").
    static OPENS: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?ix)^(?:(?:ok(?:ay)?|yep|yes|great|nice|good|cool|hi\s+\w+|hello|thanks?(?:\s+you)?(?:\s+(?:all|both|everyone|\w+))?|thx|ty)[,!.]?\s+)*
            (?:(?:now|also|just|finally)\s+)?
            (?:applied|queued|picked(?:\s+up)?|pushed|taken|merged|committed|folded
               |fixed\s+(?:\(and\s+updated\s+)?in\s+(?:the\s+)?[\w.-]+[/.-][\w./-]*)\b",
        )
    });
    static PATCH_SUBJECT: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?ix)^(?:(?:ok(?:ay)?|yep|thanks?)[,!.]?\s+)*
            (?:(?:the\s+)?(?:whole\s+|entire\s+|full\s+)?(?:series|patch(?:es|set)?|set|change|fix|commit|v\d+)
              |all(?:\s+(?:two|three|four|five|\d+))?(?:\s+patches)?|both(?:\s+patches)?|this(?:\s+one)?|these|it)
            (?:'s|\s+is|\s+are|\s+got|\s+now)?\s+
            (?:(?:now|also|already|just)\s+)?
            (?:applied|queued|picked(?:\s+up)?|pushed|taken|merged|committed)\b")
    });
    // Its writer did it; "took" and "picked" need the patch as their
    // object ("I took a look" is no notice), "added" a tree.
    static WRITER: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?ix)^(?:(?:ok(?:ay)?|yep|yes|yeah|thanks?(?:\s+\w+)?|hi\s+\w+|weird)[,!.]?\s+)*
            (?:i|we)(?:'ve|\s+have)?\s+(?:(?:now|just|also|already|finally|then|actually)\s+)?
            (?:(?:[\w'/.-]+,?\s+){1,8}?and\s+(?:then\s+)?)?
            (?:applied|appled|queued|pushed|folded|merged|committed
               |(?:took|taken|picked(?:\s+up)?)\s+(?:it|this|them|these|'em|the\s+(?:patch|series|fix|set)|patch|v\d|\d)
               |added\s+(?:this|it|them|the\s+(?:patch|fix|series))\s+(?:to|into)\b)")
    });
    // Not a statement of its writer's deed: a question anywhere; before
    // the verb a plan, a condition or a negation; after it someone
    // else's deed or a test run.
    static BEFORE: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?ix)\b(?:will|would|'ll|should|shall|could|can|may|might|going\s+to|plan(?:ning)?|unless|if|once
            |whether|not|n't|never|no\s+longer|wanted|want|try(?:ing)?|please|when)\b")
    });
    // A test run, whoever speaks: the patch applied on top of something,
    // locally, to see, and then tested or run.
    static TEST_RUN: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?ix)\b(?:locally|on\s+top\b|upon|cleanly|to\s+test|for\s+testing|test\s+run|machines?|system|box
            |on\s+(?:the\s+)?(?:latest|current|mainline|commit|base)|to\s+see|for\s+a\s+(?:try|test)|below\s+diff|up\s+to
            |and\s+(?:tested|ran|run|built|booted|tried|changed|saw|see|got|confirmed|did|the\s+(?:problem|warning|issue|crash|bug)
              |it\s+(?:works|builds|boots|fixes|is)|i\s+(?:see|saw|was|still|can|could|get|got)|there\s+(?:was|is)))\b")
    });
    // After "I applied ..." or "It is queued ...", someone else's deed or
    // a second thought: "by the block maintainers", ", but I still see
    // it", "dropped this one". (An opening "Applied to X w/ tags added
    // by Y" is the maintainer's own.)
    static NOT_MINE: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?x)\b(?:by\s+(?:the\b|[A-Z]\w+)|(?i:yet|before|dropped\s+this|consideration|account))\b|,\s*but\b")
    });
    static NOTICED: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)^(?:i\s+(?:notice|noticed|see|saw)|it\s+seems|looks\s+like|seems)\b"));
    let s = sentence.trim();
    // Every verb below contains one of these words, and most of a reply's
    // sentences have none: one search rather than the four patterns.
    if s.len() > 300 || !MAY_SAY_APPLIED_OWN.is_match(s.as_bytes()) || NOTICED.is_match(s) {
        return None;
    }
    let (m, opens) = match OPENS.find(s) {
        Some(m) => (m, true),
        None => (PATCH_SUBJECT.find(s).or_else(|| WRITER.find(s))?, false),
    };
    let after = &s[m.end()..];
    if s.contains('?')
        || BEFORE.is_match(&s[..m.start()])
        || BEFORE.is_match(m.as_str())
        || TEST_RUN.is_match(after)
        || !opens && NOT_MINE.is_match(after)
    {
        return None;
    }
    // "I added this to <tree>": the match took the "to" already, and
    // without a tree it is something else ("added it to the changelog").
    let rest = &s[m.end()..];
    if m.as_str().ends_with("to") {
        return tree_after(&format!(" to{rest}")).map(Some);
    }
    Some(tree_after(rest))
}

/// The tree a notice names after its verb: "to cgroup/for-6.11", "into
/// the linux-next branch", "to the vfs.fixes branch of the vfs/vfs.git
/// tree", "to mm.git's mm-new branch".
fn tree_after(rest: &str) -> Option<String> {
    static BRANCH_OF: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?i)\b(?:to|into|in)\s+the\s+(\S+)\s+branch\s+of\s+(?:the\s+)?(\S+?)(?:\s+tree)?[.,!]?(?:\s|$)")
    });
    static TO: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)^(?:\s*(?:and\s+(?:pushed|queued|applied|merged)|all|only|it|this|them|these|the\s+(?:patch|series|set|fix)|patch(?:es)?[\s\d/,.and]*|[\d-]+|the\s+following\s+patch))*\s*\b(?:to|into|in|on)\s+(?:the\s+)?(.+?)(?:\s+(?:branch|tree|for|as|now|with|along|and|thanks|which|so)\b|\s+-\s|\s+w/|\s+(?:after|but|since|because|manually)\b|[,;!()]|\.(?:\s|$)|$)",
        )
    });
    if let Some(c) = BRANCH_OF.captures(rest) {
        return Some(format!("{} {}", c.get(2)?.as_str(), c.get(1)?.as_str()));
    }
    let t = TO.captures(rest)?.get(1)?.as_str().trim().trim_end_matches(['.', ':']);
    let t = t.strip_suffix(" tree").or_else(|| t.strip_suffix(" branch")).unwrap_or(t);
    // A tree's name has a slash, a dot, a dash or a digit (`for-next`,
    // `vfs.fixes`, `cgroup/for-6.11`), or is one of the usual branch
    // words: "in this one" names none.
    let named = t.contains(['/', '.', '-', '_']) || t.contains(|c: char| c.is_ascii_digit());
    let version = t.strip_prefix(['v', 'V']).is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()));
    let word = ["next", "fixes", "master", "main", "queue", "stable", "urgent"].iter().any(|w| t.ends_with(w));
    let short = t.split_whitespace().count() <= 3 && !t.contains(['[', '"']);
    ((named || word) && !version && short && t.len() <= 60).then(|| t.to_string())
}

/// "I applied patches 1/5 and 2/5" (and "2.5", a typo of it).
fn only_numbers(sentence: &str) -> Vec<u32> {
    static PATCHES: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?i)\bpatch(?:es)?\s+((?:\d+\s*[/.]\s*\d+|\d+)(?:\s*(?:,|and|&)\s*(?:\d+\s*[/.]\s*\d+|\d+))*)")
    });
    static NUM: LazyLock<Regex> = LazyLock::new(|| re(r"(\d+)(?:\s*[/.]\s*\d+)?"));
    let Some(c) = PATCHES.captures(sentence) else { return Vec::new() };
    let list = c.get(1).map_or("", |m| m.as_str());
    NUM.captures_iter(list).filter_map(|n| n.get(1)?.as_str().parse().ok()).collect()
}

/// b4's `[n/m] title` lines, each followed by `commit: <sha>` or a
/// commit link.
fn b4_listing(text: &str) -> Vec<Listed> {
    static ITEM: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*\[(\d+)/(\d+)\]\s+(.+?)\s*$"));
    static COMMIT: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*commit:\s*([0-9a-f]{7,40})\b"));
    let mut out: Vec<Listed> = Vec::new();
    for line in text.lines() {
        if let Some(c) = line.trim_start().starts_with('[').then(|| ITEM.captures(line)).flatten() {
            out.push(Listed {
                number: c.get(1).and_then(|m| m.as_str().parse().ok()),
                title: c.get(3).map_or("", |m| m.as_str()).to_string(),
                commit: None,
                applied: true,
            });
        } else if let Some(last) = out.last_mut()
            && last.commit.is_none()
        {
            last.commit = COMMIT
                .captures(line)
                .and_then(|c| c.get(1))
                .map(|m| m.as_str().to_string())
                .or_else(|| commit_in_url(line.trim()));
        }
    }
    out
}

/// An inline `commit <sha>` block with its `Author:` line.
fn inline_commit(text: &str) -> Option<String> {
    static BLOCK: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^commit ([0-9a-f]{40})\b.*\n(?:Merge:.*\n)?Author:"));
    BLOCK.captures(text).and_then(|c| c.get(1)).map(|m| m.as_str().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(text: &str) -> Option<Applied> {
        applied_reply(text)
    }

    /// The verbs' stems alone ("apply", "commit message", "queue") say
    /// nothing; each past form the patterns take passes the word gate.
    #[test]
    fn only_the_verbs_past_forms_open_the_gate() {
        let review = "Please apply the fix to the queue, and the commit message\nshould say why. I'd merge it then.\n";
        assert!(!MAY_SAY_APPLIED_OWN.is_match(review.as_bytes()));
        assert_eq!(applied(review), None);
        for notice in [
            "Applied to cgroup/for-6.11.",
            "Thanks, queued.",
            "Picked into vfs.fixes now!",
            "Pushed to for-next.",
            "Taken, thanks.",
            "I took the patch into mm-hotfixes.",
            "Merged into the tip tree.",
            "Committed to for-next.",
            "Folded into the original patch.",
            "I added this to mm-new.",
            "Fixed in mm-hotfixes.",
            "I appled patches 1/5 and 2/5.",
        ] {
            assert!(MAY_SAY_APPLIED_OWN.is_match(notice.as_bytes()), "{notice}");
            assert!(applied_in(notice).is_some(), "{notice}");
        }
    }

    /// However the maintainer puts it.
    #[test]
    fn maintainers_applied_notices() {
        let yes = [
            (
                "On Mon, Jun 17, 2024 at 10:39:40AM -0400, W wrote:\n> x\n\nApplied to cgroup/for-6.11.\n\nThanks.\n",
                Some("cgroup/for-6.11"),
            ),
            ("Patch applied.  Thanks.\n", None),
            ("Thanks, queued.\n-- Sebastian\n", None),
            ("Whole series applied as 6.10 material, thanks!\n", None),
            ("Applied to 6.5/scsi-queue, thanks!\n", Some("6.5/scsi-queue")),
            ("Applied and pushed into the linux-next branch, thanks!\n", Some("linux-next")),
            ("Weird. Thanks for the reminder, Jan! Picked into vfs.fixes now!\n", Some("vfs.fixes")),
            ("Thanks, I added this to mm.git's mm-new branch, along with a note.\n", Some("mm.git's mm-new")),
            (
                "Applied to the vfs.fixes branch of the vfs/vfs.git tree.\nPatches in the vfs.fixes branch should appear in linux-next soon.\n",
                Some("vfs/vfs.git vfs.fixes"),
            ),
            (
                "I fixed the Subject typos and applied to for-next/move-kunit-tests,\nthanks!\n",
                Some("for-next/move-kunit-tests"),
            ),
            ("It's already queued up and will go out today.\n", None),
            ("I folded in this one and added a link to it as well.\n", None),
            ("Queued for 6.17, thanks.\n", None),
            ("Applied to linux-kselftest next\n\nthanks,\n-- Shuah\n", Some("linux-kselftest next")),
            ("Taken into my tree, thanks!\n", None),
            ("Merged into drm-misc-next, thanks.\n", Some("drm-misc-next")),
            ("I fixed this one, and applied the set to md-next.\n", Some("md-next")),
            ("I actually applied only patch 4/9 to the net-next tree.\n", Some("net-next")),
            ("I've taken 1-9 into for-7.3 - please respin 10-11.\n", Some("for-7.3")),
            ("Now queued up, thanks.\n", None),
            ("I applied as-is for now but further cleanups are welcome.\n", None),
            ("Applied to cgroup/for-6.12 w/ a typo fix and Waiman's reviewed-by added.\n", Some("cgroup/for-6.12")),
            (
                "Applied to cgroup/for-6.8 but I wonder whether this would be useful in non-root cgroups too.\n",
                Some("cgroup/for-6.8"),
            ),
            (
                "Applied to cgroup/for-7.2 after back-merging for-7.1-fixes to pick up dde2f938d02f.\n",
                Some("cgroup/for-7.2"),
            ),
            (
                "Fixed in bpf-next with commit:\nhttps://lore.kernel.org/all/20240405142637.577046-1-arnd@kernel.org/\n",
                None,
            ),
        ];
        for (text, want) in yes {
            let a = applied(text).unwrap_or_else(|| panic!("not applied: {text:?}"));
            assert_eq!(a.tree.as_deref(), want, "{text:?}");
        }
    }

    /// A question, a plan, a condition, someone else's deed, a test run,
    /// a quote, an author's local tree: no notice.
    #[test]
    fn not_applied() {
        let no = [
            "Applied?\n",
            "Should I apply this to for-next?\n",
            "I'll queue it once the discussion settles.\n",
            "I will apply it unless there are objections.\n",
            "If nobody objects I'll take it.\n",
            "I applied it locally and the warning is gone.\n",
            "We applied this patch on top of 304a68b9c6 and tested it, but cannot reproduce.\n",
            "I applied this series and changed these from #if to #ifdef.\n",
            "I notice it has been applied to linux-next, so I will resend.\n",
            "The patch has been queue up by the block maintainers for Linux 6.11.\n",
            "> Applied to cgroup/for-6.11.\n\nThanks for taking it!\n",
            "This was not applied yet.\n",
            "Did you send the patch to me so I can apply it on top of what I have in next?\n",
            "Managed to reproduce locally and my suggested fix works so I'm going to fold it.\n",
            "Done.\n",
            "It applied Arnd' patch first and then applied this patch on top.\n",
            "Fixed in v2.\n",
            "I took a look at the series and it seems fine.\n",
            "I applied below diff and the problem is gone:\n",
            "I've done a quick test with this patch set applied and I was able to trigger this:\n",
            "I also added this to the changelog\n",
            "It was already merged into mm-stable (so headed toward v6.11 AFAICT).\n",
            "The patch has been picked up for mm-unstable.\n",
            "I picked cgroup_all_* because it's easier on the eyes.\n",
            "I have applied this new patch to my test system and there was no regression.\n",
            "I applied this patch, but I still don't see the two new fields.\n",
        ];
        for text in no {
            assert!(applied(text).is_none(), "taken for applied: {text:?}");
        }
    }

    /// Only the reply's own lines are read for the words of a notice: a
    /// quote full of them says nothing, a notice under a quote without
    /// them is still one.
    #[test]
    fn own_lines_say_applied_not_the_quote() {
        let quoted =
            "On Mon, A wrote:\n> Applied to for-next, then merged and pushed; commit abc.\n\nLooks good to me.\n";
        assert!(applied(quoted).is_none());
        let fixed =
            "On Mon, A wrote:\n> This fixes commit 1234567 (\"mm: x\").\n\nFixed in mm-hotfixes-unstable, thanks.\n";
        assert!(applied(fixed).is_some());
    }

    /// A maintainer's "Fixed in <branch>" is read whatever the quote
    /// above it says: the word gate on the whole body takes "fixed" as
    /// `applied_in` does (a quote without the other verbs' stems used to
    /// stop it there).
    #[test]
    fn fixed_in_a_branch_passes_the_body_gate() {
        let raw = "From: Maintainer <m@kernel.org>\nTo: list@vger.kernel.org\nSubject: Re: [PATCH] mm: x\n\
                   Message-ID: <r1@kernel.org>\nIn-Reply-To: <p1@example.org>\n\n\
                   On Mon, A wrote:\n> This stops the null dereference in foo().\n\n\
                   Fixed in mm-hotfixes-unstable, thanks.\n";
        let mail = crate::mail::parse(raw.as_bytes());
        match recognise(&mail, Sender::Human) {
            Some(Signal::Applied(a)) => assert!(a.phrase.starts_with("Fixed in mm-hotfixes-unstable"), "{a:?}"),
            other => panic!("not read as applied: {other:?}"),
        }
        // The quote's words alone still say nothing.
        let quoted = raw
            .replace("Fixed in mm-hotfixes-unstable, thanks.", "Looks good to me.")
            .replace("This stops", "Fixed in mm-hotfixes-unstable. This stops");
        assert!(recognise(&crate::mail::parse(quoted.as_bytes()), Sender::Human).is_none());
    }

    /// The body gate reads only the lines outside the quotes, any case.
    #[test]
    fn the_body_gate_reads_own_lines() {
        assert!(!own_lines_may_say_applied("On Mon, A wrote:\n> Applied to for-next.\n>> merged\n\nLooks good.\n"));
        assert!(own_lines_may_say_applied("> Looks good?\n\nThanks, QUEUED.\n"));
        assert!(own_lines_may_say_applied("Applied"));
        assert!(!own_lines_may_say_applied("Please apply it to the queue.\n"));
        // `(?i)` takes the Kelvin sign for "k": "ta\u{212A}en" may say taken.
        assert!(own_lines_may_say_applied("ta\u{212A}en, thanks\n"));
    }

    /// "Done" answers a quoted request to apply or squash.
    #[test]
    fn done_answers_a_request() {
        let text = "On Wed, Matthew Wilcox wrote:\n> This patch should fix it.\n>\n> Christian, can you squash the fix in?\n\nYep, done!\n";
        assert!(applied(text).is_some());
        let other = "> Does it still happen with rc3?\n\nDone, no change.\n";
        assert!(applied(other).is_none());
    }

    #[test]
    fn b4_and_partial_notices() {
        let b4 = "On Wed, 18 Dec 2024 18:16:13 +0800, Ming Lei wrote:\n> Fixes two regressions.\n\nApplied, thanks!\n\n[1/2] block: Revert \"block: Fix potential deadlock\"\n      commit: 224749be6c23efe7fb8a030854f4fc5d1dd813b3\n[2/2] block: avoid to reuse `hctx`\n      commit: 85672ca9ceeaa1dcf2777a7048af5f4aee3fd02b\n\nBest regards,\n-- \nJens Axboe\n";
        let a = applied(b4).unwrap();
        assert_eq!(a.listed.len(), 2);
        assert_eq!(a.listed[1].title, "block: avoid to reuse `hctx`");
        assert_eq!(a.listed[1].commit.as_deref(), Some("85672ca9ceeaa1dcf2777a7048af5f4aee3fd02b"));
        let url = "Applied to for-next, thanks!\n\n[1/1] selftests: lib: remove x\n      https://git.kernel.org/kees/c/03d0e920d775\n";
        assert_eq!(applied(url).unwrap().listed[0].commit.as_deref(), Some("03d0e920d775"));
        assert_eq!(applied("I appled patches 1/5 and 2.5 - The rest need to be split up.\n").unwrap().only, [1, 2]);
        assert!(applied("Applied all except the last patch to linux-kselftest next\n").unwrap().all_but_last);
    }

    #[test]
    fn patchwork_bot() {
        let body = "Hello:\n\nThis series was applied to riscv/linux.git (fixes)\nby Tejun Heo <tj@kernel.org>:\n\nOn Wed, 22 May 2024 you wrote:\n> Centralizes.\n\nHere is the summary with links:\n  - [v5,01/68] selftests: Compile with -D_GNU_SOURCE\n    (no matching commit)\n  - [v5,09/68] selftests/cgroup: Drop define _GNU_SOURCE\n    https://git.kernel.org/riscv/c/c1457d9aad5e\n\nYou are awesome, thank you!\n";
        let a = patchwork_notice(body).unwrap();
        assert_eq!(a.tree.as_deref(), Some("riscv/linux.git (fixes)"));
        assert_eq!(a.listed.len(), 2);
        assert!(!a.listed[0].applied);
        assert_eq!((a.listed[1].number, a.listed[1].commit.as_deref()), (Some(9), Some("c1457d9aad5e")));
    }

    #[test]
    fn pull_requests_and_merges() {
        let pull = "Hi Linus,\n\nPlease pull!\n\n----------------------------------------------------------------\nblock-6.13-20241220\n\n----------------------------------------------------------------\nLuis Chamberlain (2):\n      block/bdev: use helper for max block size check\n      nvme: use blk_validate_block_size() for max LBA check\n\nMing Lei (1):\n      block: avoid to reuse `hctx` not removed from cpuhp\n        callback list\n\n block/bdev.c | 3 +--\n 1 file changed\n";
        assert_eq!(
            shortlog(pull),
            [
                "block/bdev: use helper for max block size check",
                "nvme: use blk_validate_block_size() for max LBA check",
                "block: avoid to reuse `hctx` not removed from cpuhp callback list"
            ]
        );
        let merged = "The pull request you sent on Fri, 20 Dec 2024 09:25:37 -0700:\n\n> git://git.kernel.dk/linux.git tags/block-6.13-20241220\n\nhas been merged into torvalds/linux.git:\nhttps://git.kernel.org/torvalds/c/11167b29e53b9a06635309445ead7edfd54e6616\n\nThank you!\n";
        assert_eq!(
            pull_merged(merged),
            Some(Signal::PullMerged {
                tree: "torvalds/linux.git".into(),
                commit: Some("11167b29e53b9a06635309445ead7edfd54e6616".into())
            })
        );
    }

    #[test]
    fn stable_reverts_and_commits() {
        let review = stable(
            "[PATCH 6.19 033/311] cgroup: Wait for dying tasks to leave on rmdir",
            "6.19-stable review patch.\n\n[ Upstream commit 1b164b876c36c3eb5561dd9b37702b04401b0166 ]\n",
        );
        assert_eq!(
            review,
            Some(Signal::Stable {
                tree: "6.19-stable".into(),
                title: "cgroup: Wait for dying tasks to leave on rmdir".into(),
                upstream: Some("1b164b876c36c3eb5561dd9b37702b04401b0166".into())
            })
        );
        let added = stable("Patch \"mm: fix foo\" has been added to the 6.1-stable tree", "");
        assert!(matches!(added, Some(Signal::Stable { ref tree, .. }) if tree == "6.1-stable"));
        assert!(stable("FAILED: patch \"[PATCH] mm: fix foo\" failed to apply to 6.1-stable tree", "").is_none());
        assert_eq!(
            revert("[PATCH 1/2] block: Revert \"block: Fix potential deadlock\"", "This reverts commit 4c1e2f0a.\n"),
            Some(Signal::Revert {
                subject: Some("block: Fix potential deadlock".into()),
                commits: vec!["4c1e2f0a".into()]
            })
        );
        assert!(revert("[PATCH] mm: revert to the old way", "").is_none());
        let tip = tip_commit(
            "[tip: sched/urgent] sched/fair: Fix the thing",
            "The following commit has been merged into the sched/urgent branch of tip:\n\nCommit-ID:     0123456789abcdef0123456789abcdef01234567\n",
        );
        assert!(matches!(tip, Some(Signal::Committed(Committed { ref tree, ref commit, queued: false, .. }))
            if tree.as_deref() == Some("tip/sched/urgent") && commit.as_deref() == Some("0123456789abcdef0123456789abcdef01234567")));
        let mm = mm_commit(
            "+ mm-fix-foo.patch added to mm-hotfixes-unstable branch",
            "The patch titled\n     Subject: mm: fix foo\nhas been added to the -mm mm-hotfixes-unstable branch.\n",
        );
        assert!(
            matches!(mm, Some(Signal::Committed(Committed { ref title, queued: true, .. })) if title == "mm: fix foo")
        );
        let merged = mm_commit(
            "[merged mm-stable] mm-fix-foo.patch removed from -mm tree",
            "The quilt patch titled\n     Subject: mm: fix foo\nhas been removed from the -mm tree.\n",
        );
        assert!(
            matches!(merged, Some(Signal::Committed(Committed { ref tree, queued: false, .. })) if tree.as_deref() == Some("mm-stable"))
        );
        assert!(mm_commit("[to-be-updated] mm-fix-foo.patch removed from -mm tree", "").is_none());
    }
}
