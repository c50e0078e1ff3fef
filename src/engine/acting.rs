//! Answering mail, in the transaction that threads it: a command mail's
//! one reply and the retest it asks for; a retest result's verdict to
//! whoever asked. What to say is decided by `act::policy` and written by
//! `render`; this only looks up what they need and queues the result in
//! the outbox.
//!
//! Each mail has a cause (`reply:<id>`, `retest:<case>:<id>`,
//! `verdict:<case>:<id>`) and the outbox holds at most one mail per
//! cause, so threading a message again (a late ancestor, a restart)
//! never answers twice. A message threaded again later is answered then
//! only if it is still fresh.

use std::collections::BTreeSet;

use super::{Acting, RetestTarget, Settings};
use crate::act::{self, policy};
use crate::case::{CaseId, CaseView, Event, EventKind};
use crate::classify::Kind;
use crate::classify::outcome::Outcome;
use crate::model::MessageId;
use crate::render;
use crate::store::{NewMail, RetestRequest, StoreError, Tx};
use crate::thread::Incoming;

/// Answers `inc` if it calls for an answer; `cases` are the cases it is
/// in now, `waiting` says an ancestor has not arrived.
pub(super) async fn act_on(
    tx: &mut Tx<'_>,
    settings: &Settings,
    inc: &Incoming,
    fetched_at: i64,
    cases: &BTreeSet<CaseId>,
    waiting: bool,
) -> Result<(), StoreError> {
    match inc.kind() {
        Kind::Command => command(tx, settings, inc, fetched_at, cases, waiting).await,
        Kind::RetestResult => verdicts(tx, settings, inc, fetched_at, cases).await,
        _ => Ok(()),
    }
}

/// A command mail: what the store knows around it, the policy's answer,
/// then what the answer changes (subscriptions), the reply, and the
/// retest it asks for.
async fn command(
    tx: &mut Tx<'_>,
    settings: &Settings,
    inc: &Incoming,
    fetched_at: i64,
    cases: &BTreeSet<CaseId>,
    waiting: bool,
) -> Result<(), StoreError> {
    let Some(acting) = settings.acting.clone() else { return Ok(()) };
    let cause = format!("reply:{}", inc.message_id);
    if tx.has_mail(&cause).await? {
        return Ok(());
    }
    let now = (acting.clock)();
    let world = look_around(tx, settings, inc, cases, now, fetched_at, waiting).await?;
    let response = match policy::respond(inc, &world, &settings.policy) {
        Ok(r) => r,
        Err(silence) => {
            tracing::info!(message_id = %inc.message_id, ?silence, "no answer");
            return Ok(());
        }
    };
    let sender = settings.policy.sender(inc).unwrap_or_default().to_string();
    for (_, answer) in &response.outcomes {
        match answer {
            policy::Answer::Subscribed { filter } => tx.subscribe(&sender, filter, now).await?,
            policy::Answer::Unsubscribed => tx.unsubscribe(&sender).await?,
            _ => {}
        }
    }
    let case = world.case.as_ref();
    let out = render::reply(inc, &response, case, &acting.identity, &cause, now, settings.policy.max_commands);
    queue(tx, "reply", case.map(|c| c.id), Some(&inc.message_id), &sender, &out, &acting.identity, now).await?;
    tracing::info!(message_id = %inc.message_id, to = %sender, auth = %inc.auth.label(), commands = response.outcomes.len(), "reply queued");
    if let (Some(target), Some(case)) = (response.request_retest, case) {
        request_retest(tx, &acting, inc, &sender, case, target, now).await?;
    }
    Ok(())
}

/// What the store knows around a command mail, for the policy: its case
/// (the first it is in) replayed, who may change it, a pending retest,
/// and the replies of the last hour.
async fn look_around(
    tx: &mut Tx<'_>,
    settings: &Settings,
    inc: &Incoming,
    cases: &BTreeSet<CaseId>,
    now: i64,
    fetched_at: i64,
    waiting: bool,
) -> Result<policy::World, StoreError> {
    let case: Option<CaseView> = match cases.iter().next() {
        Some(c) => tx.case_views(&[*c]).await?.pop(),
        None => None,
    };
    let sender = settings.policy.sender(inc).unwrap_or_default();
    let mut world = policy::World {
        now,
        fetched_at,
        replies_to_sender: tx.mails_to_since("reply", sender, now - 3600).await?,
        waiting,
        verifying: settings.acting.as_ref().is_some_and(|a| a.auth.is_some()),
        ..policy::World::default()
    };
    if let Some(c) = &case {
        world.may_change = settings.policy.may_change(settings.policy.sender(inc), c);
        world.pending_retest =
            tx.open_retest_requests(c.id).await?.first().map(|r| (r.requested_at, r.requested_by.clone()));
        world.replies_in_case = tx.case_mails_since("reply", c.id, now - 3600).await?;
        world.progress = Some(crate::case::replay(c.facts.kind, &tx.events(c.id).await?).0);
    }
    world.case = case;
    Ok(world)
}

/// Records the retest a command asked for and hands it to the backend:
/// a mail to the LKP team, or the configured program's request.
async fn request_retest(
    tx: &mut Tx<'_>,
    acting: &Acting,
    inc: &Incoming,
    sender: &str,
    case: &CaseView,
    target: Option<String>,
    now: i64,
) -> Result<(), StoreError> {
    let request = RetestRequest {
        case: case.id,
        message_id: inc.message_id.clone(),
        requested_by: sender.to_string(),
        requested_at: now,
        target: target.clone(),
        answered_at: None,
        reminded_at: None,
        timed_out_at: None,
    };
    tx.add_retest_request(&request).await?;
    let report = tx.report_facts(&case.facts.report_message_id).await?;
    let facts = render::RetestRequestFacts {
        requester: sender.to_string(),
        ..render::RetestRequestFacts::new(case, report.as_ref(), inc, target.as_deref(), &acting.identity)
    };
    let cause = format!("retest:{}:{}", case.id, inc.message_id);
    match &acting.retest {
        RetestTarget::Email(to) => {
            let out = render::retest_request(&facts, to, &case.facts.report_message_id, &acting.identity, &cause, now);
            let id = &acting.identity;
            queue(tx, "retest-request", Some(case.id), Some(&inc.message_id), sender, &out, id, now).await?;
        }
        RetestTarget::Command => {
            // The sender runs the program with this JSON on stdin.
            let json = serde_json::to_vec(&facts).unwrap_or_default();
            let row = OutboxRow {
                kind: "retest-command",
                case: Some(case.id),
                in_reply_to: Some(&inc.message_id),
                addressee: sender,
                subject: format!("retest request: case {}", case.id),
                recipients: Vec::new(),
            };
            let message_id = render::message_id(&cause, &acting.identity);
            tx.enqueue(&row.new_mail(&cause, &message_id, json, &acting.identity, now)).await?;
        }
        RetestTarget::None => {}
    }
    tracing::info!(case = case.id.0, requested_by = %sender, "retest requested");
    Ok(())
}

/// A retest result in cases with requests the bot made: each requester
/// hears the verdict once, and the requests are answered.
async fn verdicts(
    tx: &mut Tx<'_>,
    settings: &Settings,
    inc: &Incoming,
    fetched_at: i64,
    cases: &BTreeSet<CaseId>,
) -> Result<(), StoreError> {
    let Some(acting) = settings.acting.clone() else { return Ok(()) };
    if let Some(why) = settings.policy.unbelieved(inc) {
        // Kept as discussion (`act::apply`): it answers no request.
        tracing::info!(message_id = %inc.message_id, reason = %why, "result not judged: the sender is not authenticated");
        return Ok(());
    }
    let now = (acting.clock)();
    let fresh = act::is_fresh(inc.date, fetched_at, now, settings.policy.fresh_hours);
    let r = inc.classified.retests.iter().find(|r| r.verdict.is_some()).or(inc.classified.retests.first());
    let outcome = inc.classified.outcome.as_ref();
    let verdict = r.and_then(|r| r.verdict).or(inc.prose_verdict).or(outcome.and_then(Outcome::verdict));
    // A rerun without a fix, or a result without a verdict, says so.
    let verdict_text = match outcome {
        Some(Outcome::FixJudged { .. }) | None => {
            verdict.map_or("no verdict in the result", |v| v.as_str()).to_string()
        }
        Some(o) => o.summary(),
    };
    let share = r.and_then(|r| r.recovered_share).map(|n| n.0);
    let fix = r
        .map(|r| r.fix.short.clone())
        .or_else(|| outcome.and_then(Outcome::fix).map(str::to_string))
        .unwrap_or_else(|| "-".to_string());
    let metric = r.map_or_else(|| "-".to_string(), |r| r.metric.clone());
    for case_id in cases {
        let requests = tx.open_retest_requests(*case_id).await?;
        if requests.is_empty() {
            continue;
        }
        let Some(case) = tx.case_views(&[*case_id]).await?.pop() else { continue };
        if fresh {
            for req in &requests {
                let cause = format!("verdict:{}:{}", case.id, req.message_id);
                let out = render::verdict(
                    &req.requested_by,
                    req.requested_at,
                    inc,
                    &case,
                    &verdict_text,
                    share,
                    &fix,
                    &metric,
                    &acting.identity,
                    &cause,
                    now,
                );
                let id = &acting.identity;
                queue(tx, "verdict", Some(case.id), Some(&inc.message_id), &req.requested_by, &out, id, now).await?;
                tracing::info!(case = case.id.0, to = %req.requested_by, verdict = %verdict_text, "verdict queued");
            }
        }
        tx.answer_retest_requests(case.id, &inc.message_id, now).await?;
    }
    Ok(())
}

/// Queues a mail the bot wrote: the outbox row of `out`, which answers
/// `in_reply_to` (in `case`, for `addressee`).
#[allow(clippy::too_many_arguments)]
async fn queue(
    tx: &mut Tx<'_>,
    kind: &'static str,
    case: Option<CaseId>,
    in_reply_to: Option<&MessageId>,
    addressee: &str,
    out: &render::Outgoing,
    identity: &render::Identity,
    now: i64,
) -> Result<bool, StoreError> {
    let row =
        OutboxRow { kind, case, in_reply_to, addressee, subject: out.subject.clone(), recipients: out.recipients() };
    tx.enqueue(&row.new_mail(&out.cause, &out.message_id, out.to_rfc5322(identity), identity, now)).await
}

/// What an outbox row says besides its bytes.
struct OutboxRow<'a> {
    kind: &'static str,
    case: Option<CaseId>,
    in_reply_to: Option<&'a MessageId>,
    addressee: &'a str,
    subject: String,
    recipients: Vec<String>,
}

impl OutboxRow<'_> {
    /// The one place an outbox row is made: a mail's, or the retest
    /// program's request.
    fn new_mail(self, cause: &str, message_id: &str, raw: Vec<u8>, identity: &render::Identity, now: i64) -> NewMail {
        NewMail {
            cause: cause.to_string(),
            kind: self.kind,
            case: self.case,
            in_reply_to: self.in_reply_to.cloned(),
            message_id: message_id.to_string(),
            addressee: Some(self.addressee.to_string()),
            recipients: self.recipients,
            sender: identity.address.clone(),
            subject: self.subject,
            raw,
            created_at: now,
        }
    }
}

/// Reminders and timeouts of unanswered retest requests (see
/// `Engine::remind`).
pub(super) async fn remind(tx: &mut Tx<'_>, acting: &Acting, now: i64, remind_days: i64) -> Result<(), StoreError> {
    let period = remind_days.max(1) * 86_400;
    for req in tx.overdue_retest_requests(now - period).await? {
        let Some(case) = tx.case_views(&[req.case]).await?.pop() else { continue };
        if req.reminded_at.is_some() {
            tx.mark_timed_out(&req, now).await?;
            let mut e = Event::new(now, EventKind::RetestTimedOut, None);
            e.note = Some(format!("no result for the retest {} asked for", req.requested_by));
            tx.add_event(case.id, &e).await?;
            tx.replay(case.id).await?;
            tracing::info!(case = case.id.0, "retest request timed out");
            continue;
        }
        let RetestTarget::Email(to) = &acting.retest else {
            tx.mark_reminded(&req, now).await?;
            continue;
        };
        let report = tx.report_facts(&case.facts.report_message_id).await?;
        // The request as it was made, from the case and what it named.
        let facts = render::RetestRequestFacts {
            request: req.message_id.to_string(),
            request_link: req.message_id.link(&acting.identity.archive_url),
            requester: req.requested_by.clone(),
            ..render::RetestRequestFacts::of_case(&case, report.as_ref(), req.target.as_deref(), &acting.identity)
        };
        let cause = format!("reminder:{}:{}", case.id, req.message_id);
        let out = render::reminder(&facts, req.requested_at, to, &acting.identity, &cause, now);
        let report = Some(&case.facts.report_message_id);
        queue(tx, "reminder", Some(case.id), report, &req.requested_by, &out, &acting.identity, now).await?;
        tx.mark_reminded(&req, now).await?;
        tracing::info!(case = case.id.0, "retest reminder queued");
    }
    Ok(())
}

/// Who gets the weekly digest, and what.
#[derive(Clone, Debug, Default)]
pub struct DigestPlan {
    /// List addresses: every case.
    pub to: Vec<String>,
    /// Subscribers from the config, with their filters (the store's come
    /// on top).
    pub subscribers: Vec<(String, crate::case::SubscriptionFilter)>,
    pub stale_days: i64,
    /// Where "and N more" points.
    pub more: String,
}

/// Queues the digest of `week` for every recipient, at most once per
/// week and recipient; a subscriber whose cases are quiet gets nothing.
/// Returns how many mails were queued now.
pub(super) async fn digests(
    tx: &mut Tx<'_>,
    acting: &Acting,
    week: &crate::digest::Week,
    plan: &DigestPlan,
    now: i64,
) -> Result<u32, StoreError> {
    use crate::digest;
    let cases = tx.all_cases().await?;
    let archive = &acting.identity.archive_url;
    let mut queued = 0;
    let mut mails: Vec<(String, digest::Model)> = Vec::new();
    let all = digest::model(&cases, week, plan.stale_days, archive, None);
    for to in &plan.to {
        mails.push((to.clone(), all.clone()));
    }
    let mut subscribers = plan.subscribers.clone();
    for (address, filter) in tx.subscriptions().await? {
        match crate::case::SubscriptionFilter::parse(&filter) {
            Ok(f) => subscribers.push((address, f)),
            Err(e) => tracing::warn!(%address, error = %e, "a subscription's filter cannot be read"),
        }
    }
    for (address, filter) in subscribers {
        let m = digest::model(&cases, week, plan.stale_days, archive, Some((&filter, &address)));
        if !m.is_empty() {
            mails.push((address, m));
        }
    }
    for (to, m) in mails {
        let cause = format!("digest:{}:{}", week.name, to.to_lowercase());
        if tx.has_mail(&cause).await? {
            continue;
        }
        let subject = digest::subject(&m);
        let body = digest::render(&m, &acting.identity.name, &plan.more);
        let out = render::digest(&subject, &body, &to, &acting.identity, &cause, now);
        if queue(tx, "digest", None, None, &to, &out, &acting.identity, now).await? {
            queued += 1;
            tracing::info!(week = %week.name, %to, "digest queued");
        }
    }
    Ok(queued)
}
