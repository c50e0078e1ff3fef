//! Which case does a message belong to, and what does it do to the case?
//!
//! A robot report opens a case (a branch build summary is recorded, not a
//! case); every other message climbs the ladder in [`ladder`], strongest
//! rung first, and the first rung that finds cases attaches it to them with
//! the events its kind implies. The case vocabulary (states, events, the
//! replay that folds them) is `case`'s.
//!
//! Pure: no I/O, no clock, no SQL. The thread module never queries the
//! store: the engine looks up the candidates a message's keys name
//! ([`Incoming::lookups`]) and passes them in as [`Candidates`]; time
//! arrives as an argument.

pub mod keys;
pub mod ladder;
pub mod lifecycle;
pub mod tree;

use crate::case::{CaseFacts, CaseId, CaseView, Event, Strategy};
use crate::classify::{Classified, Kind, fix};
use crate::mail::{Mail, quote};
use crate::model::{Auth, MessageId, Verdict};
pub use ladder::decide;

/// What the bot-safety rules read of a message's headers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Safety {
    /// `Auto-Submitted` says anything but `no`.
    pub auto_submitted: bool,
    pub precedence: Option<String>,
    /// A mailing list delivered it (`List-*` headers).
    pub list_copy: bool,
    /// Empty for a bounce.
    pub return_path: Option<String>,
    pub delivery_report: bool,
}

/// One message as the threader sees it: its classification and the keys
/// the ladder matches on, computed once. The rest of the `Mail` (its body
/// above all) is not kept.
#[derive(Clone, Debug)]
pub struct Incoming {
    pub message_id: MessageId,
    /// References and In-Reply-To, nearest first.
    pub ancestors: Vec<MessageId>,
    pub subject: String,
    pub from: Option<String>,
    pub from_name: Option<String>,
    /// The To and Cc addresses, lower-cased.
    pub to: Vec<String>,
    pub cc: Vec<String>,
    /// Its References header, oldest first (a reply's References are
    /// these and the message).
    pub references: Vec<MessageId>,
    pub safety: Safety,
    pub date: Option<i64>,
    pub classified: Classified,
    /// Message-IDs in `Closes:`/`Link:` URLs of the message's own lines.
    pub links: Vec<MessageId>,
    /// HyperKitty ids (lists.01.org thread and message links) in the
    /// message's own lines before any diff: reports it names by their
    /// old archive's hash of their Message-ID (`keys::key_hyperkitty`).
    pub hyperkitty: Vec<String>,
    /// Commits the message names: the report it quotes, `Fixes:` tags, the
    /// bad column of a retest table.
    pub commits: Vec<String>,
    pub subject_key: Option<String>,
    /// A retest result without a table ("yes, this fixed the issue we
    /// reported", `Tested-by:`): the verdict its prose states.
    pub prose_verdict: Option<Verdict>,
    /// What went wrong reading or classifying it.
    pub problems: Vec<String>,
    /// How its sender was authenticated: set by the engine for the fresh
    /// mail the bot acts on (see `auth`), `none` for the rest.
    pub auth: Auth,
    /// Why the bot did not act on its commands (a reply budget used up,
    /// a loop), once it decided so: its commands are recorded as not
    /// done.
    pub withheld: Option<String>,
    /// A patch mail numbered v2 or above: its patch key and version (it
    /// may supersede a report on an earlier version).
    pub new_version: Option<(String, u32)>,
}

/// What the engine must look up for a message; empty for unrelated mail.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lookups {
    pub links: Vec<MessageId>,
    /// The `h:` keys of the reports its HyperKitty links name.
    pub hyperkitty: Vec<String>,
    pub subject_key: Option<String>,
    pub commits: Vec<String>,
}

/// Cases the engine found for a message's keys. The engine may return
/// more than matches (an index lookup by commit prefix, say); the ladder
/// checks each candidate itself.
#[derive(Clone, Debug, Default)]
pub struct Candidates {
    /// Cases holding any known ancestor of the message.
    pub by_reference: Vec<CaseView>,
    /// Cases holding a message named in a `Closes:`/`Link:` URL, or a
    /// report a HyperKitty link names.
    pub by_link: Vec<CaseView>,
    /// Cases whose subject key equals the message's.
    pub by_subject: Vec<CaseView>,
    /// Cases whose commit shares a seven-digit prefix with one the message names.
    pub by_commit: Vec<CaseView>,
    /// The fix patches a lifecycle signal reaches, with their cases
    /// (see [`lifecycle`]), and the views of those cases.
    pub fixes: Vec<lifecycle::FixPatch>,
    pub by_fix: Vec<CaseView>,
    /// A revert's: cases whose culprit has its subject or commit.
    pub by_culprit: Vec<CaseView>,
    /// A later version of a patch's: cases with its patch key.
    pub by_patch: Vec<CaseView>,
    /// The store keys these lifecycle lookups (and the HyperKitty
    /// links') read: the message is threaded again when one changes.
    pub deps: Vec<String>,
}

/// A message joining one case, with what it does there.
#[derive(Clone, Debug, PartialEq)]
pub struct Membership {
    pub case: CaseId,
    pub strategy: Strategy,
    pub events: Vec<Event>,
}

/// What to do with a message.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Not part of any case: ordinary list traffic.
    Ignore,
    /// A branch build summary: recorded, not a case.
    BuildSummary,
    /// A new report opens a case. `thread` attaches it to the cases of the
    /// thread it was sent into, if any. (Related cases are not decided
    /// here: the read side finds them from the cases' facts, so they do
    /// not depend on which report came first.)
    Open { case: Box<CaseFacts>, thread: Vec<Membership> },
    /// The message joins existing cases.
    Attach(Vec<Membership>),
}

impl Incoming {
    /// Takes what threading needs from a parsed and classified message,
    /// moving the mail's fields rather than copying them.
    pub fn new(mut mail: Mail, mut classified: Classified) -> Incoming {
        let mut problems: Vec<String> = std::mem::take(&mut mail.problems);
        problems.extend(classified.problems.iter().cloned());
        // The classifier read it already, outside the reply's tables.
        let prose_verdict = if classified.retests.is_empty() { classified.prose_verdict } else { None };
        let mut links = Vec::new();
        let mut hyperkitty = Vec::new();
        let mut commits: Vec<String> = Vec::new();
        let mut subject_key = None;
        // Unrelated mail is attached by its references or not at all, so
        // its text is not read again.
        let own_text = classified.own_text.take();
        if classified.kind != Kind::Unrelated {
            // The classifier's copy of the unquoted lines, else (its own
            // mail, which it does not read) the body's.
            let own = own_text.unwrap_or_else(|| quote::unquoted(&mail.body));
            links = keys::link_ids(&own);
            hyperkitty = fix::hyperkitty_links(fix::before_diff(&own)).into_iter().map(|l| l.id).collect();
            if let Some(f) = &classified.fix {
                for id in &f.closes {
                    if !links.contains(id) {
                        links.push(id.clone());
                    }
                }
                commits.extend(f.fixes.iter().map(|x| x.sha.clone()));
            }
            if let Some(c) = classified.commit() {
                commits.extend(c.sha.as_ref().map(|s| s.to_string()).or_else(|| c.short.clone()));
            }
            for r in &classified.retests {
                commits.extend(r.bad.sha.as_ref().map(|s| s.to_string()).or_else(|| Some(r.bad.short.clone())));
            }
            // A patch's `Link:` to itself (b4 adds one) names the cases it
            // is in already: a membership that would hold itself up.
            links.retain(|l| *l != mail.message_id);
            commits.retain(|c| keys::commit_prefix(c).is_some());
            commits.dedup();
            subject_key = keys::subject_key(&mail.subject);
        }
        let ancestors = mail.ancestors().into_iter().cloned().collect();
        let new_version = lifecycle::new_version(&mail.subject);
        let lower_case = |a: crate::mail::Address| {
            a.email.map(|mut e| {
                e.make_ascii_lowercase();
                e
            })
        };
        Incoming {
            from: mail.from_email(),
            from_name: mail.from.and_then(|a| a.name),
            message_id: mail.message_id,
            ancestors,
            subject: mail.subject,
            to: mail.to.into_iter().filter_map(lower_case).collect(),
            cc: mail.cc.into_iter().filter_map(lower_case).collect(),
            references: mail.references,
            safety: Safety {
                auto_submitted: mail.auto_submitted.is_some(),
                precedence: mail.precedence,
                list_copy: mail.list_copy,
                return_path: mail.return_path,
                delivery_report: mail.delivery_report,
            },
            date: mail.date,
            classified,
            links,
            hyperkitty,
            commits,
            subject_key,
            prose_verdict,
            problems,
            auth: Auth::default(),
            withheld: None,
            new_version,
        }
    }

    pub fn kind(&self) -> Kind {
        self.classified.kind
    }

    /// When the message happened: its Date, else `now` (when it was read).
    pub fn at(&self, now: i64) -> i64 {
        self.date.unwrap_or(now)
    }

    /// What this message's threading depends on, as store keys: the
    /// `unsettled` ancestors (not stored yet, or stored and not settled:
    /// their cases may still change), and for mail the classifier relates
    /// to the robot, whatever the weaker rungs look up (the messages its
    /// links name, the cases with its subject key or its commits). When
    /// any of these changes the message is threaded again, so where it
    /// ends does not depend on arrival order.
    pub fn dependencies<'a>(&self, unsettled: impl IntoIterator<Item = &'a MessageId>) -> Vec<String> {
        let mut out: Vec<String> = unsettled.into_iter().map(keys::dep_message).collect();
        let l = self.lookups(false);
        out.extend(l.links.iter().map(keys::dep_message));
        out.extend(l.hyperkitty.iter().map(|k| keys::dep_key(k)));
        out.extend(l.subject_key.as_deref().map(keys::dep_subject));
        out.extend(l.commits.iter().filter_map(|c| keys::commit_prefix(c)).map(|p| keys::dep_commit(&p)));
        out.sort();
        out.dedup();
        out
    }

    /// What the engine must look up besides the cases of the ancestors.
    /// `in_cases` says whether those already found any.
    pub fn lookups(&self, in_cases: bool) -> Lookups {
        let kind = self.kind();
        if kind == Kind::Unrelated || kind == Kind::BuildSummary {
            return Lookups::default();
        }
        if kind.is_report() {
            // A report opens its own case (or repeats one of its thread's):
            // only its references count.
            return Lookups::default();
        }
        let (links, hyperkitty) = if !in_cases || kind == Kind::FixPosted {
            (self.links.clone(), self.hyperkitty.iter().map(|h| keys::key_hyperkitty(h)).collect())
        } else {
            (Vec::new(), Vec::new())
        };
        if in_cases {
            return Lookups { links, hyperkitty, ..Lookups::default() };
        }
        Lookups { links, hyperkitty, subject_key: self.subject_key.clone(), commits: self.commits.clone() }
    }

    /// Whether its own lines link a message by an archive URL (lore's
    /// Message-ID, HyperKitty's hash of one).
    pub fn links_anything(&self) -> bool {
        !self.links.is_empty() || !self.hyperkitty.is_empty()
    }
}
