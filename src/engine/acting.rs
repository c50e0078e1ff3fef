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
/// in now, `waiting` says an ancestor has not arrived. Returns whether
/// the bot just decided not to act on its commands (a budget, a loop):
/// the message is then threaded again, so its case records them as not
/// done.
pub(super) async fn act_on(
    tx: &mut Tx<'_>,
    settings: &Settings,
    inc: &Incoming,
    fetched_at: i64,
    cases: &BTreeSet<CaseId>,
    waiting: bool,
) -> Result<bool, StoreError> {
    match inc.kind() {
        Kind::Command => command(tx, settings, inc, fetched_at, cases, waiting).await,
        Kind::RetestResult => verdicts(tx, settings, inc, fetched_at, cases).await.map(|()| false),
        _ => Ok(false),
    }
}

/// A command mail: what the store knows around it, the policy's answer,
/// then what the answer changes (subscriptions), the reply, and the
/// retest it asks for; or, when a budget is used up or the sender is a
/// loop, the decision not to act on it (with the one notice that says
/// so). Every deliberate silence is logged, with its reason.
async fn command(
    tx: &mut Tx<'_>,
    settings: &Settings,
    inc: &Incoming,
    fetched_at: i64,
    cases: &BTreeSet<CaseId>,
    waiting: bool,
) -> Result<bool, StoreError> {
    let Some(acting) = settings.acting.clone() else { return Ok(false) };
    let cause = format!("reply:{}", inc.message_id);
    if inc.withheld.is_some() || tx.has_mail(&cause).await? {
        return Ok(false);
    }
    let now = (acting.clock)();
    let world = look_around(tx, settings, inc, cases, now, fetched_at, waiting).await?;
    let rules = &settings.policy;
    let sender = rules.sender(inc).unwrap_or_default().to_string();
    let response = match policy::respond(inc, &world, rules) {
        Ok(r) => r,
        Err(silence) if silence.withholds() => {
            let why = policy::withheld_reason(silence, inc, &world, rules);
            tx.set_withheld(&inc.message_id, &why).await?;
            tracing::info!(message_id = %inc.message_id, from = %sender, reason = %why, "not acted on");
            if let policy::Silence::RateLimited { budget, until, tell: true } = silence {
                let used = policy::budget_used(budget, inc, &world, rules);
                let until = policy::hh_mm(until);
                let out = render::limit_notice(inc, &sender, &until, &used, &acting.identity, &cause, now);
                let case = world.case.as_ref().map(|c| c.id);
                queue(tx, "limit", case, Some(&inc.message_id), &sender, &out, &acting.identity, now).await?;
                tracing::info!(message_id = %inc.message_id, to = %sender, "limit notice queued");
            }
            return Ok(true);
        }
        Err(silence) => {
            tracing::info!(message_id = %inc.message_id, from = %sender, reason = ?silence, "no answer");
            return Ok(false);
        }
    };
    for (_, answer) in &response.outcomes {
        match answer {
            policy::Answer::Subscribed { filter } => tx.subscribe(&sender, filter, now).await?,
            policy::Answer::Unsubscribed => tx.unsubscribe(&sender).await?,
            _ => {}
        }
    }
    let case = world.case.as_ref();
    let thread = match case {
        Some(c) => thread_recipients(tx, c).await?,
        None => Vec::new(),
    };
    let to = render::Addressees { sender: &sender, thread: &thread };
    let out = render::reply(inc, &response, case, &to, &acting.identity, &cause, now, rules.max_commands);
    queue(tx, "reply", case.map(|c| c.id), Some(&inc.message_id), &sender, &out, &acting.identity, now).await?;
    tracing::info!(message_id = %inc.message_id, to = %sender, auth = %inc.auth.label(), commands = response.outcomes.len(), "reply queued");
    if let (Some(target), Some(case)) = (response.request_retest, case) {
        request_retest(tx, &acting, inc, &sender, case, target, now).await?;
    }
    Ok(false)
}

/// The recipients of a case's report, To then Cc, as it had them: whom a
/// reply in its thread copies. (The case's facts keep only its To.)
async fn thread_recipients(tx: &mut Tx<'_>, case: &CaseView) -> Result<Vec<String>, StoreError> {
    let Some((raw, _)) = tx.raw(&case.facts.report_message_id).await? else {
        return Ok(case.facts.report_to.clone());
    };
    let report = crate::mail::parse(&raw);
    Ok(report.to.iter().chain(&report.cc).filter_map(crate::mail::Address::email_lc).collect())
}

/// What the store knows around a command mail, for the policy: its case
/// (the first it is in) replayed, who may change it, a pending retest,
/// the replies of the last hour counted against its sender's budgets,
/// and the thread's recent mail (for the loop breaker).
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
    let rules = &settings.policy;
    let sender = rules.sender(inc).unwrap_or_default();
    // Under `require`, authenticated and unauthenticated senders are
    // counted apart.
    let class = rules.require_auth.then_some(rules.unbelieved(inc).is_some());
    let since = now - policy::BUDGET_WINDOW;
    let mut world = policy::World {
        now,
        fetched_at,
        to_sender: tx.replies_since(since, Some(sender), None, class).await?,
        waiting,
        verifying: settings.acting.as_ref().is_some_and(|a| a.auth.is_some()),
        ..policy::World::default()
    };
    if class == Some(true) {
        world.unauthenticated = tx.replies_since(since, None, None, Some(true)).await?;
    }
    if let Some(c) = &case {
        world.may_change = rules.may_change(rules.sender(inc), c);
        world.pending_retest =
            tx.open_retest_requests(c.id).await?.first().map(|r| (r.requested_at, r.requested_by.clone()));
        world.in_case = tx.replies_since(since, None, Some(c.id), class).await?;
        world.progress = Some(crate::case::replay(c.facts.kind, &tx.events(c.id).await?).0);
        (world.thread, world.answers) = thread_history(tx, rules, inc, c.id, fetched_at.min(now)).await?;
    }
    world.case = case;
    Ok(world)
}

/// What the loop breaker needs of a case's thread: its recent messages
/// (the bot's own left out) and the bot's recent mails answering someone.
/// Which mail each of the sender's own messages answers is read from its
/// bytes, and only when the sender answers one of the bot's mails (a loop
/// is possible at all).
async fn thread_history(
    tx: &mut Tx<'_>,
    rules: &crate::act::Policy,
    inc: &Incoming,
    case: CaseId,
    at: i64,
) -> Result<(Vec<policy::Post>, Vec<policy::BotMail>), StoreError> {
    // Three rounds of ten minutes, and a margin.
    let recent = at - (policy::LOOP_ROUNDS as i64 + 1) * policy::LOOP_WINDOW;
    let answers: Vec<policy::BotMail> = tx
        .answers_in_case(case, recent)
        .await?
        .into_iter()
        .filter_map(|(id, in_reply_to, at)| Some(policy::BotMail { message_id: MessageId::new(&id)?, in_reply_to, at }))
        .collect();
    let answers_bot = inc.ancestors.first().is_some_and(|p| answers.iter().any(|b| &b.message_id == p));
    let mut thread = Vec::new();
    for (message_id, from, at, withheld) in tx.case_posts(case, recent).await? {
        if from.as_deref().is_some_and(|f| f.eq_ignore_ascii_case(&rules.bot_address)) {
            continue;
        }
        let same_sender =
            from.as_deref().is_some_and(|f| inc.from.as_deref().is_some_and(|s| s.eq_ignore_ascii_case(f)));
        let in_reply_to = if message_id == inc.message_id {
            inc.ancestors.first().cloned()
        } else if answers_bot && same_sender {
            tx.raw(&message_id).await?.and_then(|(raw, _)| crate::mail::parse(&raw).in_reply_to)
        } else {
            None
        };
        let looped = withheld.is_some_and(|w| w.starts_with("loop:"));
        thread.push(policy::Post { message_id, from, at, in_reply_to, looped });
    }
    Ok((thread, answers))
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
    /// Where "and N more" and the stale count point.
    pub more: crate::digest::Links,
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
