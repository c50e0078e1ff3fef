//! The ladder: named strategies that attach a message to cases, strongest
//! first. The first rung that finds cases wins (a fix patch also takes the
//! cases its `Closes:` names). Each rung says what it can get wrong.
//!
//! 1. [`by_references`]: any ancestor in References/In-Reply-To is in a case.
//! 2. [`by_link`]: a `Closes:`/`Link:` URL names a message of a case.
//! 3. [`by_subject`]: the normalised robot subject equals a case's.
//! 4. [`by_commit`]: a commit the message names is a case's commit.
//! 5. [`super::lifecycle`]: a lifecycle signal (an applied notice, a
//!    commit, a merge, a backport, a revert, a later version) moves the
//!    cases it is tied to, whatever rung 1 to 4 found.
//!
//! Rungs 2 to 4 are only climbed by messages the classifier relates to the
//! robot (any kind but `unrelated`): ordinary list traffic joins a case by
//! its references or not at all.

use crate::classify::Kind;
use crate::classify::outcome::Outcome;
use crate::model::Verdict;

use super::keys::{patch_key, same_commit, subject_key};
use super::{Candidates, Decision, Incoming, Membership};
use crate::case::{CaseFacts, CaseKind, CaseView, DAY, Event, EventKind, Strategy};

/// How long after a report a reply can still be matched by its subject.
pub const SUBJECT_WINDOW_DAYS: i64 = 365;

/// Rung 1: References and In-Reply-To, any ancestor (the engine passes the
/// cases of every known ancestor).
///
/// False positives: a reply that starts a new topic in an old thread, and
/// a message that references a report only because its author's mail
/// client kept a long References list (cross-posted threads). Both are
/// still conversation in the case's thread, so they count as discussion.
pub fn by_references(c: &Candidates) -> Vec<&CaseView> {
    c.by_reference.iter().collect()
}

/// Rung 2: the report's Message-ID inside a `Closes:` or `Link:` URL of
/// the message's own (unquoted) lines, the form fix patches use; or a
/// lists.01.org HyperKitty link to the report's thread or message (the
/// robot's archive until 2022), which names it by a hash of its
/// Message-ID that only reports offer (`h:` keys).
///
/// False positives: a `Link:` to the report in a patch that only mentions
/// it ("see also"), and a `Closes:` that names the wrong report by mistake.
pub fn by_link<'a>(m: &Incoming, c: &'a Candidates) -> Vec<&'a CaseView> {
    if m.links_anything() { c.by_link.iter().collect() } else { Vec::new() }
}

/// Rung 3: the robot subject with `Re:`, `[LKP]`, `[lkp-robot]`, list tags
/// and whitespace normalised ([`subject_key`]), within
/// [`SUBJECT_WINDOW_DAYS`] of the report. This is what threads archive
/// copies without headers (pipermail text dumps).
///
/// False positives: the robot reporting the same commit and metric with
/// the same change twice (both cases match, and the message joins both);
/// a human who reuses a report's subject for another topic.
pub fn by_subject<'a>(m: &Incoming, c: &'a Candidates, at: i64) -> Vec<&'a CaseView> {
    let Some(key) = &m.subject_key else { return Vec::new() };
    c.by_subject
        .iter()
        .filter(|v| v.facts.subject_key.as_ref() == Some(key))
        .filter(|v| at >= v.facts.opened_at - DAY && at <= v.facts.opened_at + SUBJECT_WINDOW_DAYS * DAY)
        .collect()
}

/// Rung 4: a commit the message names (the report it quotes, a `Fixes:`
/// tag, the bad column of a retest) is a case's commit. When several cases
/// share the commit (another testcase, another tree), those that also match
/// the testcase and metric or signature the message quotes win.
///
/// False positives: a message that names the commit for another reason
/// (a revert discussion, a bisect of something else); a `Fixes:` tag on a
/// fix for a different symptom of the same commit.
pub fn by_commit<'a>(m: &Incoming, c: &'a Candidates) -> Vec<&'a CaseView> {
    let hits: Vec<&CaseView> = c
        .by_commit
        .iter()
        .filter(|v| v.facts.commit.as_deref().is_some_and(|cc| m.commits.iter().any(|x| same_commit(x, cc))))
        .collect();
    let Some(r) = m.classified.any_report() else { return hits };
    let metric = r.headline.as_ref().map(|h| h.metric.as_str());
    let signature = r.signatures.first().map(|s| s.signature.as_str());
    let precise: Vec<&CaseView> = hits
        .iter()
        .copied()
        .filter(|v| r.testcase.is_none() || v.facts.testcase == r.testcase)
        .filter(|v| {
            (metric.is_some() && v.facts.metric.as_deref() == metric)
                || (signature.is_some() && v.facts.signature.as_deref() == signature)
                || (metric.is_none() && signature.is_none())
        })
        .collect();
    if precise.is_empty() { hits } else { precise }
}

/// Decides what `m` does, given the cases its keys found. `now` stands in
/// for a missing Date.
pub fn decide(m: &Incoming, c: &Candidates, now: i64) -> Decision {
    let at = m.at(now);
    let kind = m.kind();
    if kind == Kind::BuildSummary && c.by_reference.is_empty() {
        return Decision::BuildSummary;
    }
    if let Some(case) = case_facts(m, at) {
        return open_or_repeat(m, case, c, at);
    }
    let mut hits: Vec<(&CaseView, Strategy)> =
        by_references(c).into_iter().map(|v| (v, Strategy::References)).collect();
    if hits.is_empty() && kind != Kind::Unrelated {
        let rungs = [
            (by_link(m, c), Strategy::Link),
            (by_subject(m, c, at), Strategy::Subject),
            (by_commit(m, c), Strategy::Commit),
        ];
        if let Some((found, strategy)) = rungs.into_iter().find(|(found, _)| !found.is_empty()) {
            hits = found.into_iter().map(|v| (v, strategy)).collect();
        }
    } else if kind == Kind::FixPosted {
        // A fix posted in one thread may close reports of others.
        for v in by_link(m, c) {
            if !hits.iter().any(|(h, _)| h.id == v.id) {
                hits.push((v, Strategy::Link));
            }
        }
    }
    let lifecycle = super::lifecycle::events(m, c, at);
    if hits.is_empty() && lifecycle.is_empty() {
        return Decision::Ignore;
    }
    let events = events_for(m, at);
    let mut atts: Vec<Membership> =
        hits.into_iter().map(|(v, strategy)| Membership { case: v.id, strategy, events: events.clone() }).collect();
    // Rung 5, whatever the others found: a lifecycle signal moves the
    // cases it is tied to; in a case's thread it is more than talk.
    for (case, e) in lifecycle {
        match atts.iter_mut().find(|a| a.case == case) {
            Some(a) => {
                a.events.retain(|x| x.kind != EventKind::Discussion);
                a.events.push(e);
            }
            None => atts.push(Membership { case, strategy: Strategy::Lifecycle, events: vec![e] }),
        }
    }
    Decision::Attach(atts)
}

/// A report: the robot repeating itself in a case's thread joins that
/// case; anything else opens a new one.
fn open_or_repeat(m: &Incoming, case: CaseFacts, c: &Candidates, at: i64) -> Decision {
    let id = Some(m.message_id.clone());
    let repeats = c.by_reference.iter().any(|v| same_report(&v.facts, &case));
    let thread = c
        .by_reference
        .iter()
        .map(|v| {
            let events = if repeats && same_report(&v.facts, &case) {
                reported_again(m, at)
            } else {
                vec![Event::new(at, EventKind::RelatedReport, id.clone())]
            };
            Membership { case: v.id, strategy: Strategy::References, events }
        })
        .collect();
    if repeats { Decision::Attach(thread) } else { Decision::Open { case: Box::new(case), thread } }
}

/// A report sent again into its case: one `reported-again` event for each
/// "[still regression on TREE SHA]" line it carries (the tree, the
/// commit, and "still regression" or "test failed" as the note: where LKP
/// saw it since), else one bare.
fn reported_again(m: &Incoming, at: i64) -> Vec<Event> {
    let again = || Event::new(at, EventKind::ReportedAgain, Some(m.message_id.clone()));
    let lines = m.classified.own_report.as_ref().map_or(&[][..], |r| r.still_on.as_slice());
    if lines.is_empty() {
        return vec![again()];
    }
    lines
        .iter()
        .map(|s| {
            let mut e = again();
            e.note = Some(s.status.clone());
            e.tree = Some(s.tree.clone());
            e.tree_commit = Some(s.sha.clone());
            e
        })
        .collect()
}

/// The same regression reported again: same commit, same testcase, same
/// metric or signature.
fn same_report(a: &CaseFacts, b: &CaseFacts) -> bool {
    let commits = match (&a.commit, &b.commit) {
        (Some(x), Some(y)) => same_commit(x, y),
        _ => false,
    };
    commits && a.kind == b.kind && a.testcase == b.testcase && a.metric == b.metric && a.signature == b.signature
}

/// The patch key of a report: the reported commit's subject, else the
/// patch it was applied from, else a patch subject the mail replies to.
pub fn report_patch_key(m: &Incoming) -> Option<String> {
    let c = &m.classified;
    let (commit, patch) = match (&c.own_report, &c.build) {
        (Some(r), _) => (r.commit.as_ref(), r.patch.as_ref()),
        (None, Some(b)) => (b.commit.as_ref(), b.patch.as_ref()),
        (None, None) => (None, None),
    };
    commit
        .and_then(|x| x.subject.as_deref())
        .or_else(|| patch.and_then(|p| p.subject.as_deref()))
        .and_then(patch_key)
        .or_else(|| if crate::classify::fix::is_patch_subject(&m.subject) { patch_key(&m.subject) } else { None })
}

/// The facts of the case a report opens; `None` for anything else.
pub fn case_facts(m: &Incoming, at: i64) -> Option<CaseFacts> {
    let c = &m.classified;
    let kind = match c.kind {
        Kind::PerfRegression => CaseKind::PerfRegression,
        Kind::PerfImprovement => CaseKind::PerfImprovement,
        Kind::Functional => CaseKind::Functional,
        Kind::Build => CaseKind::Build,
        _ => return None,
    };
    let title = crate::classify::subject::strip_reply_prefixes(&m.subject).to_string();
    let title = if title.is_empty() { m.message_id.to_string() } else { title };
    let mut f = CaseFacts {
        report_to: m.to.clone(),
        subject_key: m.subject_key.clone().or_else(|| subject_key(&m.subject)),
        patch_key: report_patch_key(m),
        ..CaseFacts::new(kind, title, m.message_id.clone(), at)
    };
    let commit = if let Some(r) = &c.own_report {
        f.tree = r.tree.clone();
        f.branch = r.branch.clone();
        f.testcase = r.testcase.clone();
        if let Some(h) = &r.headline {
            f.metric = Some(h.metric.clone());
            f.change_pct = h.change_pct.or(h.stated_change_pct).map(|n| n.0);
            f.direction = h.direction;
            f.base_stddev_pct = h.base_stddev_pct.map(|n| n.0);
            f.new_stddev_pct = h.new_stddev_pct.map(|n| n.0);
        }
        f.signature = r.signatures.first().map(|s| s.signature.clone());
        r.commit.as_ref()
    } else if let Some(b) = &c.build {
        f.tree = b.tree.clone();
        f.branch = b.branch.clone();
        f.signature = b.items.first().map(|s| truncate(s, 200));
        b.commit.as_ref()
    } else {
        None
    };
    if let Some(cr) = commit {
        f.commit = cr.sha.as_ref().map(|s| s.to_string()).or_else(|| cr.short.clone());
        f.commit_subject = cr.subject.clone();
    }
    if f.commit.is_none() {
        f.commit = c.subject.short_sha.clone();
    }
    Some(f)
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => s[..i].to_string(),
        None => s.to_string(),
    }
}

/// What a message that joins a case does there.
pub fn events_for(m: &Incoming, at: i64) -> Vec<Event> {
    let c = &m.classified;
    let id = Some(m.message_id.clone());
    let ev = |kind| Event::new(at, kind, id.clone());
    match c.kind {
        Kind::RetestResult => vec![retest_event(m, ev)],
        Kind::TestRequest => {
            let mut e = ev(EventKind::RetestRequested);
            e.note = cannot_reproduce(m);
            vec![e]
        }
        Kind::FixPosted => {
            let mut e = ev(EventKind::FixPosted);
            e.note = c.fix.as_ref().map(|f| f.patch_subject.clone());
            vec![e]
        }
        // What a command does is decided by `act`, which knows who may
        // do what; here it is a message in the thread.
        // Report kinds are handled by `open_or_repeat`; everything else in
        // a case's thread is conversation, whatever the classifier saw in
        // it alone.
        _ => {
            let mut e = ev(EventKind::Discussion);
            e.note = cannot_reproduce(m);
            vec![e]
        }
    }
}

/// A developer's "I cannot reproduce it", noted on the event it causes.
fn cannot_reproduce(m: &Incoming) -> Option<String> {
    m.classified.cannot_reproduce.then(|| "could not reproduce it".to_string())
}

/// What a retest result does in its case, by what it found: a fix judged
/// (its verdict and fix column), the report's test run again without a
/// fix (confirmed, or still present in a later tree), or a fix run whose
/// result the mail does not give.
fn retest_event(m: &Incoming, ev: impl Fn(EventKind) -> Event) -> Event {
    let c = &m.classified;
    let kind = match &c.outcome {
        Some(Outcome::RegressionConfirmed { .. }) => EventKind::Confirmed,
        Some(Outcome::StillPresent { .. }) => EventKind::StillPresent,
        Some(Outcome::ResultUnknown { .. }) => EventKind::ResultUnknown,
        Some(Outcome::NotReproduced { .. }) => EventKind::NotReproduced,
        Some(Outcome::FixJudged { .. }) | None => EventKind::RetestDone,
    };
    let mut e = ev(kind);
    let column = c.retests.iter().find(|r| r.verdict.is_some()).or(c.retests.first());
    match (&c.outcome, column) {
        (Some(Outcome::FixJudged { .. }) | None, Some(r)) => {
            e.verdict = r.verdict;
            e.fix_commit = Some(r.fix.sha.as_ref().map_or_else(|| r.fix.short.clone(), |s| s.to_string()));
            e.note = Some(retest_note(r.verdict, &r.metric));
        }
        (None, None) => {
            e.verdict = m.prose_verdict;
            e.note = Some(retest_note(m.prose_verdict, "as the reply says; no table"));
        }
        (Some(Outcome::FixJudged { verdict, fix }), None) => {
            // Judged by the prose, or by an attached log that shows the
            // reported issue (the problems say which).
            e.verdict = Some(*verdict);
            e.fix_commit = fix.clone();
            let by = if m.prose_verdict.is_some() { "as the reply says; no table" } else { "by the attached log" };
            e.note = Some(retest_note(e.verdict, by));
        }
        (Some(Outcome::ResultUnknown { fix, .. }), _) => {
            e.fix_commit = fix.clone();
            e.note = c.outcome.as_ref().map(Outcome::summary);
        }
        (Some(o), _) => e.note = Some(o.summary()),
    }
    e
}

fn retest_note(verdict: Option<Verdict>, metric: &str) -> String {
    format!("{} ({metric})", verdict.map_or("no verdict", Verdict::as_str))
}
