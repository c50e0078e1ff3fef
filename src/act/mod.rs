//! What a command mailed into a case's thread does to the case.
//!
//! `thread` says which cases a message belongs to and what kind of
//! message it is there; this stage decides what its commands change,
//! given who sent them, by the command table (`commands::VERBS`: who may
//! run each command and what it changes); [`policy`] holds who may do
//! what and decides whether and what the bot answers. Pure: no I/O, no
//! clock, no SQL; the case and the sender arrive as values.
//!
//! Anyone may ask for a retest or a test of a patch; closing, reopening
//! or renaming a case (`fixed`, `resolve`, `invalid`, `dup`, `reopen`,
//! `title`) is for the report's addressees (the robot mails the commit's
//! author and committer), the maintainers and the LKP team. A command
//! that is not allowed, or lacks the argument it needs, is recorded as
//! discussion with the reason, and changes nothing.
//!
//! Under `[auth] dkim = "require"` who the sender is comes from its
//! authentication ([`Policy::sender`]), and a sender that was verified
//! and did not pass ([`Policy::unbelieved`]) changes no case, and its
//! retest result or test request does not count as the LKP team's: each
//! is recorded as discussion with the reason. Mail never verified
//! (history) is judged by its From, as before verification existed.

pub mod policy;

use crate::case::{CaseView, Event, EventKind};
use crate::classify::Kind;
use crate::commands::{Action, ArgUse, CommandLine, Invalid, MAX_LINE_CHARS, Who};
use crate::thread::{Decision, Incoming, Membership};
pub use policy::{Policy, counted};

/// How far ahead of the clock a Date may be and still count: clocks of
/// senders drift.
pub const CLOCK_SKEW_SECONDS: i64 = 3600;

/// Whether a message is fresh enough to act on: its Date and the time it
/// was fetched both within `fresh_hours` of `now` (DESIGN.md: a command
/// older than the window is recorded, not answered; so a first sync of a
/// mailbox with years of history, or an archive import, acts on
/// nothing). A message with no Date is never fresh: its age is unknown.
pub fn is_fresh(date: Option<i64>, fetched_at: i64, now: i64, fresh_hours: i64) -> bool {
    let window = fresh_hours.max(0) * 3600;
    let recent = |t: i64| t <= now + CLOCK_SKEW_SECONDS && now - t <= window;
    date.is_some_and(recent) && recent(fetched_at)
}

/// Gives each attachment of a command mail the events its commands cause
/// in that case, and a result or request from a sender not believed the
/// discussion it is instead; other decisions pass through unchanged.
pub fn apply(m: &Incoming, decision: Decision, cases: &[CaseView], policy: &Policy, at: i64) -> Decision {
    match m.kind() {
        Kind::Command => {}
        Kind::RetestResult | Kind::TestRequest => return unbelieved_lkp(m, decision, policy, at),
        _ => return unbelieved_lifecycle(m, decision, policy),
    }
    match decision {
        Decision::Attach(atts) => Decision::Attach(
            atts.into_iter()
                .map(|att| match cases.iter().find(|v| v.id == att.case) {
                    Some(case) => Membership { events: command_events(m, case, policy, at), ..att },
                    None => att,
                })
                .collect(),
        ),
        other => other,
    }
}

/// A retest result or test request whose sender is not believed: kept as
/// discussion with the reason (it sets no verdict and answers no request).
fn unbelieved_lkp(m: &Incoming, decision: Decision, policy: &Policy, at: i64) -> Decision {
    let Some(why) = policy.unbelieved(m) else { return decision };
    let what = if m.kind() == Kind::RetestResult { "result not judged" } else { "request not taken" };
    let note = format!("{what}: the sender is not authenticated ({why})");
    let event = Event { note: Some(note), ..Event::new(at, EventKind::Discussion, Some(m.message_id.clone())) };
    match decision {
        Decision::Attach(atts) => {
            Decision::Attach(atts.into_iter().map(|att| Membership { events: vec![event.clone()], ..att }).collect())
        }
        other => other,
    }
}

/// Fresh mail that would move a case by itself (a maintainer's applied
/// notice, a merge, a revert, a later version; a merge into mainline's
/// resolution) from a sender not believed: each such event is kept as
/// discussion with the reason, and the case does not move.
fn unbelieved_lifecycle(m: &Incoming, decision: Decision, policy: &Policy) -> Decision {
    let Some(why) = policy.unbelieved(m) else { return decision };
    let demote = |atts: Vec<Membership>| -> Vec<Membership> {
        atts.into_iter()
            .map(|mut att| {
                for e in att.events.iter_mut().filter(|e| e.kind.is_lifecycle() || e.kind == EventKind::Resolved) {
                    e.note = Some(format!("{} not taken: the sender is not authenticated ({why})", e.kind.as_str()));
                    e.kind = EventKind::Discussion;
                }
                att
            })
            .collect()
    };
    match decision {
        Decision::Attach(atts) => Decision::Attach(demote(atts)),
        Decision::Open { case, thread } => Decision::Open { case, thread: demote(thread) },
        other => other,
    }
}

/// The events `m`'s commands cause in `case`, by the command table: one
/// per command that does something ([`counted`]: help lines quoted back
/// and commands beyond `max_commands` do nothing), else one discussion
/// event. A command its sender may not run, or that lacks the argument
/// it needs, is recorded as discussion with the reason.
pub fn command_events(m: &Incoming, case: &CaseView, policy: &Policy, at: i64) -> Vec<Event> {
    let id = Some(m.message_id.clone());
    let ev = |kind, note: Option<String>| Event { note, ..Event::new(at, kind, id.clone()) };
    let allowed = policy.may_change(policy.sender(m), case);
    let unbelieved = policy.unbelieved(m);
    let mut out = Vec::new();
    let (counted, _) = counted(&m.classified.commands, policy.max_commands);
    if let Some(why) = &m.withheld {
        // The bot did not act on it: nothing it asks is done.
        let lines: Vec<&str> = counted.iter().map(|c| c.line.as_str()).collect();
        return vec![ev(EventKind::Discussion, Some(format!("not done: {} ({why})", lines.join("; "))))];
    }
    for CommandLine { command, line } in counted {
        if let Some(why) = command.invalid() {
            out.push(ev(EventKind::Discussion, Some(format!("not done: {line} ({})", invalid_note(&why)))));
            continue;
        }
        let Some(verb) = command.verb() else { continue };
        let arg = command.arg();
        let event = match verb.action {
            Action::Retest => ev(EventKind::RetestRequested, Some(line.clone())),
            Action::Change { event, arg: ArgUse::FixCommit, .. } => {
                Event { fix_commit: arg.map(str::to_string), ..ev(event, Some(line.clone())) }
            }
            Action::Change { event, arg: ArgUse::Note, .. } => {
                ev(event, Some(arg.map_or_else(|| line.clone(), str::to_string)))
            }
            Action::Status | Action::Help | Action::Subscribe | Action::Unsubscribe => continue,
        };
        let missing = verb.arg.is_some_and(|a| a.required) && arg.is_none();
        if missing {
            out.push(ev(EventKind::Discussion, Some(format!("not done: {line} (the command needs an argument)"))));
        } else if verb.who == Who::Deciders && !allowed {
            out.push(ev(
                EventKind::Discussion,
                Some(format!(
                    "not allowed: {line} (only the report's addressees, the maintainers and the LKP team may)"
                )),
            ));
        } else if let Some(why) = unbelieved.filter(|_| verb.who != Who::Anyone) {
            out.push(ev(
                EventKind::Discussion,
                Some(format!("not done: {line} (the sender is not authenticated: {why})")),
            ));
        } else {
            out.push(event);
        }
    }
    if out.is_empty() {
        out.push(ev(EventKind::Discussion, None));
    }
    out
}

/// A refused command's reason, as its event records it.
fn invalid_note(why: &Invalid) -> String {
    match why {
        Invalid::LineTooLong { chars } => {
            format!("the line has {chars} characters; a command line is at most {MAX_LINE_CHARS}")
        }
        Invalid::ArgTooLong { field, max, chars, .. } => {
            format!("the {field} has {chars} characters; at most {max}")
        }
        Invalid::NotAccepted { kind, .. } => format!("not a {}", kind.noun()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::{CaseFacts, CaseId, CaseKind, CaseState};
    use crate::classify::ClassifyConfig;
    use crate::commands;
    use crate::model::MessageId;

    fn case() -> CaseView {
        CaseView {
            id: CaseId(7),
            state: CaseState::Reported,
            facts: CaseFacts {
                report_to: vec!["author@example.org".into()],
                ..CaseFacts::new(CaseKind::PerfRegression, "t".into(), MessageId::new("r@x").unwrap(), 0)
            },
        }
    }

    fn mail(from: &str, body: &str) -> Incoming {
        let raw = format!(
            "From: {from}\nSubject: Re: x\nMessage-ID: <m@x>\nIn-Reply-To: <r@x>\nDate: Mon, 1 Jun 2026 10:00:00 +0000\n\n{body}\n"
        );
        let m = crate::mail::parse(raw.as_bytes());
        let mut c = crate::classify::classify(&m, &ClassifyConfig::default());
        c.kind = Kind::Command;
        c.commands = commands::parse(&m.body);
        Incoming::new(m, c)
    }

    /// Who may do what: each row a sender, a command, and the events it
    /// causes in the case.
    #[test]
    fn who_may_do_what() {
        let policy = Policy {
            maintainers: vec!["boss@example.org".into()],
            lkp_team: vec!["lkp@intel.com".into()],
            ..Policy::default()
        };
        let rows: &[(&str, &str, &[EventKind])] = &[
            ("anyone@example.net", "please retest", &[EventKind::RetestRequested]),
            ("anyone@example.net", "#lkp test 0123456789abcdef", &[EventKind::RetestRequested]),
            ("anyone@example.net", "#lkp resolve", &[EventKind::Discussion]),
            ("anyone@example.net", "#lkp invalid noise", &[EventKind::Discussion]),
            ("anyone@example.net", "#lkp reopen", &[EventKind::Discussion]),
            ("anyone@example.net", "#lkp status", &[EventKind::Discussion]),
            ("author@example.org", "#lkp resolve", &[EventKind::Resolved]),
            ("author@example.org", "#lkp fixed 0123456789ab", &[EventKind::Resolved]),
            ("boss@example.org", "#lkp dup 12", &[EventKind::Duplicate]),
            ("boss@example.org", "#lkp title a better title", &[EventKind::Retitled]),
            ("lkp@intel.com", "#lkp invalid flaky", &[EventKind::Invalid]),
            ("lkp@intel.com", "#lkp reopen", &[EventKind::Reopened]),
            ("author@example.org", "#lkp retest\n#lkp resolve", &[EventKind::RetestRequested, EventKind::Resolved]),
            // A command without the argument it needs changes nothing (the
            // reply says it needs one).
            ("author@example.org", "#lkp invalid", &[EventKind::Discussion]),
            ("author@example.org", "#lkp dup", &[EventKind::Discussion]),
            ("author@example.org", "#lkp title", &[EventKind::Discussion]),
            // The bot's own help lines, pasted back, ask for nothing.
            (
                "author@example.org",
                "  #lkp fixed <sha>                     the fix is merged: resolve",
                &[EventKind::Discussion],
            ),
            (
                "anyone@example.net",
                "#lkp test <lore-link | git-url branch | sha>   test a fix",
                &[EventKind::Discussion],
            ),
        ];
        for (from, body, want) in rows {
            let m = mail(from, body);
            let got: Vec<EventKind> = command_events(&m, &case(), &policy, 5).iter().map(|e| e.kind).collect();
            assert_eq!(&got, want, "{from}: {body}");
        }
    }

    /// A command over its limits, or with a test target that is none, is
    /// discussion saying why, whoever sends it: no retest is recorded as
    /// requested, no title changes.
    #[test]
    fn refused_commands_change_nothing() {
        let policy = Policy { maintainers: vec!["boss@example.org".into()], ..Policy::default() };
        let title = format!("#lkp title {}", "t".repeat(201));
        let line = format!("#lkp title {}", "t".repeat(1000));
        let rows: &[(&str, &str)] = &[
            ("#lkp test ; rm -rf / #", "not done: #lkp test ; rm -rf / # (not a test target)"),
            (&title, "(the text has 201 characters; at most 200)"),
            (&line, "(the line has 1011 characters; a command line is at most 1000)"),
        ];
        for (body, note) in rows {
            let got = command_events(&mail("boss@example.org", body), &case(), &policy, 5);
            assert_eq!(got.len(), 1, "{got:?}");
            assert_eq!(got[0].kind, EventKind::Discussion, "{body}");
            let n = got[0].note.as_deref().unwrap_or("");
            assert!(n.starts_with("not done: #lkp ") && n.ends_with(note), "{n}");
            assert!(n.chars().count() < 400, "{n}");
        }
    }

    /// Under `require`: who the sender is comes from its authentication;
    /// a verified sender that did not pass changes nothing, and its
    /// result or LKP request is discussion; history (never verified) is
    /// judged by From.
    #[test]
    fn require_believes_only_authenticated_senders() {
        use crate::model::{Auth, AuthMethod};
        let policy = Policy { maintainers: vec!["boss@example.org".into()], require_auth: true, ..Policy::default() };
        let forged = Auth::none("no DKIM signature");
        let dkim = |who: &str| Auth {
            method: AuthMethod::Dkim("example.org".into()),
            author: Some(who.into()),
            reason: "DKIM signature of example.org (s=s1) verified".into(),
        };
        let arc = Auth {
            method: AuthMethod::Arc("lists.example.net".into()),
            author: Some("boss@example.org".into()),
            reason: String::new(),
        };
        let rows: Vec<(&str, &str, Auth, EventKind, Option<&str>)> = vec![
            ("boss@example.org", "#lkp resolve", forged.clone(), EventKind::Discussion, Some("no DKIM signature")),
            ("boss@example.org", "#lkp title x", forged.clone(), EventKind::Discussion, Some("not authenticated")),
            ("boss@example.org", "#lkp resolve", dkim("boss@example.org"), EventKind::Resolved, None),
            // A list that rewrote From: the original author a trusted seal
            // vouches for is who may.
            ("list@lists.example.net", "#lkp resolve", arc, EventKind::Resolved, None),
            // History: never verified, judged by From.
            ("boss@example.org", "#lkp resolve", Auth::default(), EventKind::Resolved, None),
            // Anyone may ask for a retest, believed or not.
            ("anyone@example.net", "please retest", forged.clone(), EventKind::RetestRequested, None),
            // Not allowed is said before not authenticated.
            ("anyone@example.net", "#lkp resolve", forged, EventKind::Discussion, Some("not allowed")),
        ];
        for (from, body, auth, want, note) in rows {
            let mut m = mail(from, body);
            m.auth = auth;
            let got = command_events(&m, &case(), &policy, 5);
            assert_eq!(got.iter().map(|e| e.kind).collect::<Vec<_>>(), [want], "{from}: {body}");
            if let Some(n) = note {
                assert!(got[0].note.as_deref().unwrap_or("").contains(n), "{from}: {body}: {got:?}");
            }
        }
        // `record` only records: From is believed.
        let mut m = mail("boss@example.org", "#lkp resolve");
        m.auth = Auth::none("no DKIM signature");
        let record = Policy { require_auth: false, ..policy };
        assert_eq!(command_events(&m, &case(), &record, 5)[0].kind, EventKind::Resolved);
    }

    /// `m` joins case 7 by its references with events of `kinds`.
    fn attached(m: &Incoming, kinds: &[EventKind]) -> Decision {
        let events = kinds.iter().map(|k| Event::new(5, *k, Some(m.message_id.clone()))).collect();
        Decision::Attach(vec![Membership { case: CaseId(7), strategy: crate::case::Strategy::References, events }])
    }

    /// An LKP retest result or request from a sender not believed is
    /// discussion with the reason; believed, or history, it counts.
    #[test]
    fn an_unbelieved_result_is_discussion() {
        use crate::model::Auth;
        let policy = Policy { require_auth: true, ..Policy::default() };
        let mut m = mail("lkp@intel.com", "the fix recovers it");
        m.classified.kind = Kind::RetestResult;
        m.classified.commands.clear();
        let d = attached(&m, &[EventKind::RetestDone]);
        assert_eq!(apply(&m, d.clone(), &[case()], &policy, 5), d, "history counts");
        m.auth = Auth::none("the key rsa._domainkey.intel.com could not be fetched");
        let Decision::Attach(atts) = apply(&m, d.clone(), &[case()], &policy, 5) else { panic!() };
        assert_eq!(atts[0].events.len(), 1);
        assert_eq!(atts[0].events[0].kind, EventKind::Discussion);
        let note = atts[0].events[0].note.clone().unwrap();
        assert!(note.starts_with("result not judged") && note.contains("could not be fetched"), "{note}");
        assert_eq!(apply(&m, d.clone(), &[case()], &Policy::default(), 5), d, "record only records");
    }

    /// A maintainer's applied notice or a merge into mainline that was
    /// verified and did not pass moves nothing: discussion with the
    /// reason; believed, history, or under `record`, it counts.
    #[test]
    fn an_unbelieved_lifecycle_signal_is_discussion() {
        use crate::model::Auth;
        let policy = Policy { require_auth: true, ..Policy::default() };
        let mut m = mail("maintainer@example.org", "Applied to for-next, thanks!");
        m.classified.kind = Kind::Discussion;
        m.classified.commands.clear();
        let d = attached(&m, &[EventKind::FixApplied, EventKind::Resolved]);
        assert_eq!(apply(&m, d.clone(), &[case()], &policy, 5), d, "history counts");
        m.auth = Auth::none("no DKIM signature");
        let Decision::Attach(atts) = apply(&m, d.clone(), &[case()], &policy, 5) else { panic!() };
        let kinds: Vec<EventKind> = atts[0].events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [EventKind::Discussion, EventKind::Discussion]);
        let note = atts[0].events[0].note.clone().unwrap();
        assert!(note.starts_with("fix-applied not taken") && note.contains("no DKIM signature"), "{note}");
        assert_eq!(apply(&m, d.clone(), &[case()], &Policy::default(), 5), d, "record only records");
    }

    /// With `max_commands = 2` a third command changes nothing: the reply
    /// says it was ignored, and the case agrees.
    #[test]
    fn commands_beyond_the_limit_change_nothing() {
        let policy = Policy { max_commands: 2, ..Policy::default() };
        let m = mail("author@example.org", "#lkp status\n#lkp status\n#lkp resolve");
        let got: Vec<EventKind> = command_events(&m, &case(), &policy, 5).iter().map(|e| e.kind).collect();
        assert_eq!(got, [EventKind::Discussion]);
        let m = mail("author@example.org", "#lkp resolve\n#lkp status\n#lkp reopen");
        let got: Vec<EventKind> = command_events(&m, &case(), &policy, 5).iter().map(|e| e.kind).collect();
        assert_eq!(got, [EventKind::Resolved]);
    }

    #[test]
    fn fresh_is_recent_by_date_and_by_fetch() {
        let now = 1_000_000_000;
        let h = 3600;
        // (date, fetched, fresh)
        let rows = [
            (Some(now - h), now, true),
            (Some(now - 47 * h), now - h, true),
            (Some(now - 49 * h), now, false), // an old mail fetched now: a first sync of history
            (Some(now - h), now - 49 * h, false), // fetched long ago, acted on then or never
            (None, now, false),
            (Some(now + 30 * 60), now, true), // a sender's clock a little fast
            (Some(now + 3 * h), now, false),  // a Date in the future is not believed
        ];
        for (date, fetched, want) in rows {
            assert_eq!(is_fresh(date, fetched, now, 48), want, "{date:?} {fetched}");
        }
        assert!(!is_fresh(Some(now), now - 1, now, 0));
        assert!(is_fresh(Some(now), now, now, 0));
    }

    #[test]
    fn other_kinds_pass_through() {
        let m = mail("anyone@example.net", "#lkp resolve");
        let mut plain = m.clone();
        plain.classified.kind = Kind::Discussion;
        let d = Decision::Attach(vec![Membership {
            case: CaseId(7),
            strategy: crate::case::Strategy::References,
            events: vec![],
        }]);
        assert_eq!(apply(&plain, d.clone(), &[case()], &Policy::default(), 5), d);
    }
}
