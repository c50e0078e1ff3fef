//! Threading one stored message, and everything that depended on it,
//! until nothing changes.
//!
//! [`Threader::thread`] is the whole per-message step: look up the cases
//! the message's keys name, `thread::decide`, `act::apply`, then make the
//! store say exactly that (its own case, its memberships and events,
//! what it depends on, whether it is settled), changing only what
//! differs. When a message's cases change, or it settles, or a case opens
//! or goes, the messages that depend on that are queued and threaded
//! again. Since each message's outcome is a function of the messages
//! stored (not of the order they came in), the queue ends in the same
//! state whatever the order; so in an import (the bot acts on nothing)
//! what the batch's messages wake waits in the queue until the batch
//! ends, and a message several of them wake is threaded again once; and
//! it then waits, stored, for the import's end, so a message that batch
//! after batch wakes is threaded again once in the whole import.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::Bound;

use super::pipeline::{Ahead, Item, prepare};
use super::{IngestStats, Settings};
use crate::act;
use crate::case::{CaseFacts, CaseId, CaseView, Event, EventKind, Strategy};
use crate::classify::Kind;
use crate::model::MessageId;
use crate::store::{StaleSweep, StoreError, Tx};
use crate::thread::lifecycle::{FixPatch, LifecycleLookups, is_patch};
use crate::thread::{self, Candidates, Decision, Incoming, Membership, keys};

/// How often one message may be threaded again in one cascade (in an
/// import, the batch's) before it counts as a loop (forged references
/// can make cycles). Far above what any real thread needs: a message is
/// threaded again at most once per thing it depends on that changes.
const MAX_ROUNDS: u32 = 256;

/// Kinds that join cases only by their references, never by a weaker
/// rung, and so can settle.
pub fn threads_by_references_only(kind: Kind) -> bool {
    matches!(kind, Kind::Unrelated | Kind::BuildSummary)
}

/// What a message's threading reads that may change: its ancestors
/// that are not settled, and the keys its lifecycle lookups read.
struct Waits<'w> {
    unsettled: &'w [&'w MessageId],
    lifecycle: &'w [String],
}

pub(super) struct Threader<'a, 't> {
    pub tx: &'a mut Tx<'t>,
    settings: &'a Settings,
    pub stats: &'a mut IngestStats,
    touched: &'a mut BTreeSet<CaseId>,
    /// What is to be threaded again, in threading order
    /// (`Tx::thread_order`): a message is threaded after the ancestors
    /// waiting with it, so what each of them wakes in its thread is
    /// threaded once, after all of them.
    queue: BTreeSet<Queued>,
    /// Queued, but not yet placed in that order (looked up together
    /// before the next message is taken; in an import's batch, never,
    /// since what it wakes waits for the import's end).
    unplaced: Vec<MessageId>,
    queued: HashSet<MessageId>,
    rounds: HashMap<MessageId, u32>,
    latest_fetch: i64,
    /// Patch keys some case has, as far as the batch asked (see
    /// [`Threader::patch_cases`]), and those of the cases it opened.
    patch_cases: HashSet<String>,
    /// Messages threaded into a case since the batch began.
    joined: HashSet<MessageId>,
    /// Messages settled (for the messages that refer to them) since the
    /// batch began.
    settled: HashSet<MessageId>,
    /// Cases whose events grew since their last replay, replayed once
    /// when the batch ends ([`Threader::finish`]) rather than at
    /// each message: a case of thousands of messages would otherwise be
    /// read whole for each of them. Threading reads no case's state, so
    /// nothing in the batch sees the difference; what can change a case's
    /// title (a retitle, an event changed or taken away) is replayed at
    /// once, and acting (which reads states) replays what is pending first.
    pending: BTreeSet<CaseId>,
    /// An archive import's batch: what it woke is threaded again when
    /// the import ends ([`Threader::put_off_to_import_end`]).
    put_off: bool,
    /// The import's end: the queue's next messages parsed ahead, on a
    /// thread of their own ([`Threader::import_ended`]).
    ahead: Option<Ahead>,
    /// The last queued message looked at for [`Ahead`] (handed over, or
    /// found with nothing to thread): what follows it in the queue is
    /// handed over next.
    ahead_seen: Option<Queued>,
}

/// A message's place in the queue: its place in threading order, then
/// its id.
type Queued = (i64, MessageId);

/// What a batch's threading leaves its writer ([`Threader::finish`]).
pub struct Threaded {
    /// The messages settled during the batch (for the messages that refer
    /// to them).
    pub settled: HashSet<MessageId>,
    /// The latest fetch time of the batch's new messages (Unix seconds),
    /// the time its checkpoints are stored with.
    pub latest_fetch: i64,
}

impl<'a, 't> Threader<'a, 't> {
    pub fn new(
        tx: &'a mut Tx<'t>,
        settings: &'a Settings,
        stats: &'a mut IngestStats,
        touched: &'a mut BTreeSet<CaseId>,
    ) -> Threader<'a, 't> {
        Threader {
            tx,
            settings,
            stats,
            touched,
            queue: BTreeSet::new(),
            unplaced: Vec::new(),
            queued: HashSet::new(),
            rounds: HashMap::new(),
            latest_fetch: 0,
            patch_cases: HashSet::new(),
            joined: HashSet::new(),
            settled: HashSet::new(),
            pending: BTreeSet::new(),
            put_off: false,
            ahead: None,
            ahead_seen: None,
        }
    }

    /// Puts off to the end of the import what the batch wakes, and the
    /// replays it puts off (see `pending`): instead of being threaded
    /// again when the batch ends, a message then depends on
    /// [`keys::DEP_IMPORT_END`], which [`Threader::import_ended`] wakes;
    /// a case is marked for its replay then (`Tx::put_off_replays`).
    /// A message an import wakes again and again (a later version of a
    /// patch that every copy of a list reports on, at each copy's report)
    /// is threaded again once, not at each batch that wakes it. Nothing
    /// reads threading's state during an import but threading itself,
    /// which ends in the same state whatever the order; the dependency is
    /// stored with the batch, so an import cut short leaves it to the
    /// next one, or to the daemon's next write.
    pub fn put_off_to_import_end(&mut self) {
        self.put_off = true;
    }

    /// Threads again up to `n` of the messages an import put off, taking
    /// their dependency on its end away; how many there were. (Its
    /// replays are put off too: see `Engine::import_ended`.)
    pub async fn import_ended(&mut self, n: usize) -> Result<usize, StoreError> {
        let ids = self.tx.take_dependents(keys::DEP_IMPORT_END, n).await?;
        let taken = ids.len();
        for q in ids {
            self.enqueue_placed(q);
        }
        if taken > 0 && self.ahead.is_none() {
            self.ahead = Ahead::start(&self.settings.classify);
        }
        self.run().await?;
        Ok(taken)
    }

    /// Lends the threader the thread that parses ahead, kept across an
    /// import's end (one transaction per [`Threader::import_ended`]).
    pub fn lend_ahead(&mut self, ahead: &mut Option<Ahead>) {
        self.ahead = ahead.take();
    }

    /// Gives the thread back (see [`Threader::lend_ahead`]).
    /// (Only when its queue is empty, as after `run`: what it parsed
    /// ahead was for this transaction's queue.)
    pub fn give_back_ahead(&mut self, ahead: &mut Option<Ahead>) {
        self.ahead_seen = None;
        *ahead = self.ahead.take().filter(|a| self.queue.is_empty() && self.unplaced.is_empty() && a.idle());
    }

    /// Hands [`Ahead`] the bytes of the queue's next messages (those
    /// after the last it was handed; a message queued before that since is
    /// parsed when threaded).
    async fn send_ahead(&mut self) -> Result<(), StoreError> {
        let Threader { ahead: Some(ahead), tx, queue, ahead_seen, .. } = self else { return Ok(()) };
        while ahead.wants() {
            let next = match ahead_seen {
                None => queue.first(),
                Some(seen) => queue.range((Bound::Excluded(&*seen), Bound::Unbounded)).next(),
            };
            let Some(q) = next else { break };
            *ahead_seen = Some(q.clone());
            let id = &q.1;
            // Settled: nothing to thread.
            let Some(waiting) = tx.waiting(id).await? else { continue };
            if !ahead.send(id.clone(), waiting) {
                // Its thread is gone: the rest is parsed when threaded.
                self.ahead = None;
                break;
            }
        }
        Ok(())
    }

    /// Ends the batch's threading: threads again what is still queued (an
    /// import's batch makes it wait for the import's end instead),
    /// replays the cases whose replay was put off (see `pending`), and
    /// returns what the batch's writer still needs. The only way to get
    /// that out, so no batch commits a case whose replay is pending and
    /// not marked as put off, or
    /// leaves a message it woke neither threaded nor waiting.
    pub async fn finish(mut self) -> Result<Threaded, StoreError> {
        if self.put_off {
            let queued = std::mem::take(&mut self.queue).into_iter().map(|(_, id)| id);
            let owed: Vec<(String, MessageId)> =
                queued.chain(self.unplaced.drain(..)).map(|id| (keys::DEP_IMPORT_END.to_string(), id)).collect();
            self.queued.clear();
            self.tx.add_deps_of(&owed).await?;
        }
        self.run().await?;
        if self.put_off {
            let cases: Vec<CaseId> = std::mem::take(&mut self.pending).into_iter().collect();
            self.tx.put_off_replays(&cases).await?;
        }
        self.replay_pending().await?;
        Ok(Threaded { settled: std::mem::take(&mut self.settled), latest_fetch: self.latest_fetch })
    }

    /// Replays the cases whose replay was put off (see `pending`).
    async fn replay_pending(&mut self) -> Result<(), StoreError> {
        for case in std::mem::take(&mut self.pending) {
            self.tx.replay(case).await?;
        }
        Ok(())
    }

    /// The messages settled since the batch began (for the messages that
    /// refer to them), which the batch may have looked up before.
    pub fn settled(&self) -> &HashSet<MessageId> {
        &self.settled
    }

    /// Whether `id` was threaded into a case since the batch began.
    pub fn joined(&self, id: &MessageId) -> bool {
        self.joined.contains(id)
    }

    /// Learns which of `keys` (the patch keys of a batch's later
    /// versions) some case has, before the batch is threaded.
    pub async fn ask_patch_cases(&mut self, keys: &[&str]) -> Result<(), StoreError> {
        if !keys.is_empty() {
            self.patch_cases = self.tx.patch_keys_with_cases(keys).await?;
        }
        Ok(())
    }

    /// Whether a case with the patch key `key` may exist: one the batch
    /// found stored or opened since. Cases closed since still count,
    /// which only costs a message the full threading.
    pub fn patch_cases(&self, key: &str) -> bool {
        self.patch_cases.contains(key)
    }

    pub fn count_new(&mut self, item: &Item) {
        self.stats.new += 1;
        self.latest_fetch = self.latest_fetch.max(item.fetched_at);
        let Some(inc) = &item.incoming else {
            self.stats.problems += 1;
            return;
        };
        if inc.kind().is_report() {
            self.stats.reports += 1;
        }
        if inc.kind() == Kind::BuildSummary {
            self.stats.build_summaries += 1;
        }
        if !inc.problems.is_empty() {
            self.stats.problems += 1;
            tracing::warn!(message_id = %inc.message_id, problems = %inc.problems.join("; "), "message read with problems");
        }
    }

    /// Threads a new message that is not plain list traffic (its row and
    /// bytes stored just now), then whatever was waiting for it. Returns whether it is settled
    /// for the messages that refer to it (as the store's `settled` says).
    pub async fn store_new(&mut self, inc: &Incoming, fetched_at: i64) -> Result<bool, StoreError> {
        let id = &inc.message_id;
        if inc.auth != crate::model::Auth::default() {
            self.tx.set_auth(id, &inc.auth).await?;
        }
        self.store_facts(inc).await?;
        let offered: Vec<(String, MessageId)> =
            thread::lifecycle::offered(inc).into_iter().map(|k| (k, id.clone())).collect();
        self.tx.insert_keys(&offered).await?;
        let settled = self.thread(inc, fetched_at, true).await?;
        let mut changed = vec![keys::dep_message(id)];
        changed.extend(offered.iter().map(|(k, _)| keys::dep_key(k)));
        self.enqueue_dependents(&changed).await?;
        self.run_or_defer().await?;
        Ok(settled)
    }

    /// Threads again what looked up the keys plain messages offered,
    /// stored just now.
    pub async fn offered(&mut self, offered: &[(String, MessageId)]) -> Result<(), StoreError> {
        let keys: Vec<String> = offered.iter().map(|(k, _)| keys::dep_key(k)).collect();
        self.enqueue_dependents(&keys).await?;
        self.run_or_defer().await
    }

    /// Takes a stored message out of the store with what it caused (the
    /// case it opened, its memberships and events), then threads again
    /// whatever depended on it.
    pub async fn remove(&mut self, id: &MessageId) -> Result<(), StoreError> {
        let mut changed = vec![keys::dep_message(id)];
        // What looked up the keys it offered (a fix's title).
        changed.extend(self.tx.keys_of(id, "").await?.iter().map(|k| keys::dep_key(k)));
        if let Some(v) = self.tx.case_opened_by(id).await? {
            let members = self.tx.delete_case(v.id).await?;
            self.touched.remove(&v.id);
            changed.extend(keys::case_deps(&v.facts));
            for m in members.into_iter().filter(|m| m != id) {
                changed.push(keys::dep_message(&m));
                self.enqueue(m);
            }
            tracing::info!(case = v.id.0, message_id = %id, "case closed: its report was removed from the archive");
        }
        for case in self.tx.delete_message(id).await?.unwrap_or_default() {
            self.tx.replay(case).await?;
            self.touched.insert(case);
        }
        tracing::info!(message_id = %id, "message removed from the archive");
        self.enqueue_dependents(&changed).await?;
        self.run().await
    }

    /// Threads again what waited for `ids`, stored just now.
    pub async fn arrived(&mut self, ids: &[MessageId]) -> Result<(), StoreError> {
        let keys: Vec<String> = ids.iter().map(keys::dep_message).collect();
        self.enqueue_dependents(&keys).await?;
        self.run_or_defer().await
    }

    /// The facts of the message alone: written once, whatever its cases.
    async fn store_facts(&mut self, inc: &Incoming) -> Result<(), StoreError> {
        let id = &inc.message_id;
        let cls = &inc.classified;
        let facts = match (&cls.own_report, &cls.build) {
            (Some(r), _) => Some(to_json(r)),
            (None, Some(b)) => Some(to_json(b)),
            (None, None) => None,
        };
        if let Some(f) = facts {
            self.tx.insert_report(id, cls.kind.as_str(), &f).await?;
        }
        if let Some(s) = &cls.build_summary {
            self.tx.insert_build_summary(id, inc.date, s, &to_json(s)).await?;
        }
        for (i, r) in cls.retests.iter().enumerate() {
            let fix = r.fix.sha.as_ref().map_or_else(|| r.fix.short.clone(), |s| s.to_string());
            let idx = i64::try_from(i).unwrap_or(i64::MAX);
            self.tx.insert_retest(id, idx, &fix, &r.metric, r.verdict, &to_json(r)).await?;
        }
        Ok(())
    }

    async fn enqueue_dependents(&mut self, keys: &[String]) -> Result<(), StoreError> {
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        for id in self.tx.dependents(&keys).await? {
            self.enqueue(id);
        }
        Ok(())
    }

    /// Queues `id` (placed in the queue's order before the next message
    /// is taken).
    fn enqueue(&mut self, id: MessageId) {
        if self.queued.insert(id.clone()) {
            self.unplaced.push(id);
        }
    }

    /// Queues a message whose place in threading order is known.
    fn enqueue_placed(&mut self, q: Queued) {
        if self.queued.insert(q.1.clone()) {
            self.queue.insert(q);
        }
    }

    /// Places in the queue what was queued without its place.
    async fn place(&mut self) -> Result<(), StoreError> {
        if self.unplaced.is_empty() {
            return Ok(());
        }
        let ids = std::mem::take(&mut self.unplaced);
        let asked: Vec<&str> = ids.iter().map(MessageId::as_str).collect();
        let placed = self.tx.thread_order(&asked).await?;
        // Not stored (taken away since): nothing to thread.
        let found: HashSet<&MessageId> = placed.iter().map(|(_, id)| id).collect();
        for id in ids.iter().filter(|id| !found.contains(id)) {
            self.queued.remove(id);
        }
        self.queue.extend(placed);
        Ok(())
    }

    /// Threads the queue again now where the bot acts on what it threads;
    /// in an import, when the batch ends ([`Threader::finish`]), so that a
    /// message several of the batch's messages wake is threaded again
    /// once (a case of a patch that every copy of a list reports on wakes
    /// each copy's later version of it, at each copy's report).
    async fn run_or_defer(&mut self) -> Result<(), StoreError> {
        if self.settings.acting.is_some() { self.run().await } else { Ok(()) }
    }

    /// Threads queued messages again until the queue is empty.
    async fn run(&mut self) -> Result<(), StoreError> {
        self.rounds.clear();
        self.place().await?;
        self.send_ahead().await?;
        loop {
            // What the last message woke, placed before the next is taken.
            self.place().await?;
            let Some((_, id)) = self.queue.pop_first() else { break };
            self.queued.remove(&id);
            let ahead = self.ahead.as_mut().and_then(|a| a.take(&id));
            self.send_ahead().await?;
            let rounds = self.rounds.entry(id.clone()).or_insert(0);
            *rounds += 1;
            if *rounds > MAX_ROUNDS {
                self.stats.problems += 1;
                tracing::warn!(message_id = %id, "threading this message does not settle (a reference loop?); left as it is");
                continue;
            }
            let (waiting, parsed) = match ahead {
                Some(parsed) => parsed,
                None => {
                    // A settled message has no bytes and needs no threading.
                    let Some(waiting) = self.tx.waiting(&id).await? else { continue };
                    let parsed = prepare(&waiting.raw, waiting.raw.len() as u64, &self.settings.classify);
                    (waiting, parsed)
                }
            };
            let Some(mut inc) = parsed else {
                self.stats.problems += 1;
                tracing::error!(message_id = %id, "a stored message could not be parsed again (a bug in lkpbot)");
                continue;
            };
            // Stored under this id (a synthesized one is derived from the
            // same bytes, but the row is what the cases point at).
            inc.auth = waiting.auth;
            inc.withheld = waiting.withheld;
            inc.message_id = id;
            self.thread(&inc, waiting.fetched_at, false).await?;
        }
        Ok(())
    }

    /// Threads one stored message: candidates, decision, and the store
    /// made to match it. Returns whether the message is settled for the
    /// messages that refer to it. `fresh`: stored just now, so in no case
    /// and waiting for nothing yet.
    async fn thread(&mut self, inc: &Incoming, fetched_at: i64, fresh: bool) -> Result<bool, StoreError> {
        let id = &inc.message_id;
        // Only a report opens a case.
        let own = if fresh || !inc.kind().is_report() { None } else { self.tx.case_opened_by(id).await? };
        // Ancestors: which are settled (they never change and need no
        // watching), and the cases of the rest.
        let ancestors: Vec<&MessageId> = inc.ancestors.iter().filter(|a| *a != id).collect();
        let asked: Vec<&str> = ancestors.iter().map(|a| a.as_str()).collect();
        let known = self.tx.lookup(&asked).await?;
        let unsettled: Vec<&MessageId> =
            ancestors.iter().copied().filter(|a| known.get(*a).is_none_or(|k| !k.settled)).collect();
        let stored: Vec<&str> = unsettled.iter().filter(|a| known.contains_key(**a)).map(|a| a.as_str()).collect();
        let mut ref_cases: Vec<CaseId> = self.tx.cases_of(&stored).await?.into_values().flatten().collect();
        ref_cases.sort();
        ref_cases.dedup();
        // A report's own case is not a thread it was sent into.
        ref_cases.retain(|c| own.as_ref().is_none_or(|o| o.id != *c));
        let c = self.candidates(inc, &ref_cases).await?;
        let decision = thread::decide(inc, &c, fetched_at);
        let views: Vec<CaseView> =
            [&c.by_reference, &c.by_link, &c.by_subject, &c.by_commit, &c.by_fix, &c.by_culprit, &c.by_patch]
                .into_iter()
                .flatten()
                .cloned()
                .collect();
        let decision = act::apply(inc, decision, &views, &self.settings.policy, inc.at(fetched_at));
        let metrics: HashMap<CaseId, String> =
            views.iter().filter_map(|v| Some((v.id, v.facts.metric.clone().or(v.facts.signature.clone())?))).collect();
        let waits = Waits { unsettled: &unsettled, lifecycle: &c.deps };
        let (settled, cases) = self.apply(inc, own, decision, waits, &metrics, fresh).await?;
        if self.settings.acting.is_some() {
            self.replay_pending().await?;
        }
        if self.settings.acting.is_some()
            && super::acting::act_on(self.tx, self.settings, inc, fetched_at, &cases, !unsettled.is_empty()).await?
        {
            // Not acted on after all: threaded again, its events say so.
            self.enqueue(id.clone());
        }
        Ok(settled)
    }

    /// Looks up the cases a message's keys name.
    async fn candidates(&mut self, inc: &Incoming, ref_cases: &[CaseId]) -> Result<Candidates, StoreError> {
        let mut c = Candidates::default();
        if !ref_cases.is_empty() {
            c.by_reference = self.tx.case_views(ref_cases).await?;
        }
        let l = inc.lookups(!c.by_reference.is_empty());
        if !l.links.is_empty() {
            c.by_link = self.tx.cases_of_messages(&l.links).await?;
        }
        if !l.hyperkitty.is_empty() {
            // The reports offering the keys; it waits on them (the keys,
            // through its dependencies) and on their cases.
            let refs: Vec<&str> = l.hyperkitty.iter().map(String::as_str).collect();
            let reports = self.tx.messages_with_keys(&refs).await?;
            c.deps.extend(reports.iter().map(keys::dep_message));
            if !reports.is_empty() {
                for v in self.tx.cases_of_messages(&reports).await? {
                    if !c.by_link.iter().any(|x| x.id == v.id) {
                        c.by_link.push(v);
                    }
                }
            }
        }
        if let Some(k) = &l.subject_key {
            c.by_subject = self.tx.cases_by_subject_key(k).await?;
        }
        if !l.commits.is_empty() {
            c.by_commit = self.tx.cases_by_commit(&l.commits).await?;
        }
        let l = inc.lifecycle_lookups();
        if !l.is_empty() {
            self.lifecycle_candidates(inc, &l, &mut c).await?;
        }
        Ok(c)
    }

    /// Looks up what a lifecycle signal names (see `thread::lifecycle`):
    /// the fix patches it reaches and their cases, the cases of a
    /// reverted culprit or a superseded patch; and records the keys read.
    async fn lifecycle_candidates(
        &mut self,
        inc: &Incoming,
        l: &LifecycleLookups,
        c: &mut Candidates,
    ) -> Result<(), StoreError> {
        let mut fixes: Vec<MessageId> = Vec::new();
        if l.answered {
            // The patch it answers: the nearest stored ancestor that is a
            // patch mail; a fix itself, or a cover letter of fixes.
            let asked: Vec<&str> = inc.ancestors.iter().map(MessageId::as_str).collect();
            let heads = self.tx.heads(&asked).await?;
            let patch =
                inc.ancestors.iter().find_map(|a| Some((a, heads.get(a)?)).filter(|(_, h)| is_patch(&h.subject)));
            if let Some((a, h)) = patch {
                if h.kind == Kind::FixPosted.as_str() {
                    fixes.push(a.clone());
                } else {
                    let key = keys::key_cover(a);
                    c.deps.push(keys::dep_key(&key));
                    fixes.extend(self.tx.messages_with_keys(&[key.as_str()]).await?);
                }
            }
        }
        let mut titles: Vec<String> = l.titles.iter().map(|t| keys::key_title(t)).collect();
        if let Some(pull) = &l.pull {
            titles.extend(self.tx.keys_of(pull, "pt:").await?.iter().filter_map(|k| keys::pulled_title(k)));
        }
        if !titles.is_empty() {
            c.deps.extend(titles.iter().map(|t| keys::dep_key(t)));
            let refs: Vec<&str> = titles.iter().map(String::as_str).collect();
            fixes.extend(self.tx.messages_with_keys(&refs).await?);
        }
        fixes.sort();
        fixes.dedup();
        if !fixes.is_empty() {
            c.deps.extend(fixes.iter().map(keys::dep_message));
            c.fixes = fix_patches(self.tx, fixes).await?;
            let mut ids: Vec<CaseId> = c.fixes.iter().flat_map(|f| f.cases.iter().copied()).collect();
            ids.sort();
            ids.dedup();
            if !ids.is_empty() {
                c.by_fix = self.tx.case_views(&ids).await?;
            }
        }
        if !l.culprit_subjects.is_empty() || !l.culprit_commits.is_empty() {
            c.deps.extend(l.culprit_subjects.iter().map(|s| keys::dep_culprit(s)));
            c.deps
                .extend(l.culprit_commits.iter().filter_map(|x| keys::commit_prefix(x)).map(|p| keys::dep_commit(&p)));
            c.by_culprit = culprit_cases(self.tx, &l.culprit_subjects, &l.culprit_commits).await?;
        }
        if let Some(p) = &l.patch {
            c.deps.push(keys::dep_patch(p));
            c.by_patch = self.tx.cases_by_patch_key(&[p.as_str()]).await?;
        }
        Ok(())
    }

    /// Makes the store hold what `decision` says of the message, changing
    /// only what differs, and queues what depends on any change: its own
    /// case, its memberships and their events, the cases replayed, then
    /// whether it is settled or what it waits for.
    async fn apply(
        &mut self,
        inc: &Incoming,
        own: Option<CaseView>,
        decision: Decision,
        waits: Waits<'_>,
        metrics: &HashMap<CaseId, String>,
        fresh: bool,
    ) -> Result<(bool, BTreeSet<CaseId>), StoreError> {
        let Waits { unsettled, lifecycle: lifecycle_deps } = waits;
        let id = &inc.message_id;
        let before: Vec<(CaseId, Strategy)> = if fresh { Vec::new() } else { self.tx.memberships(id).await? };
        let (opens, atts) = match decision {
            Decision::Ignore | Decision::BuildSummary => (None, Vec::new()),
            Decision::Open { case, thread } => (Some(case), thread),
            Decision::Attach(atts) => (None, atts),
        };
        let mut changed: Vec<String> = Vec::new();
        // Cases to replay: at once (`true`) or with the batch's end.
        let mut replay: BTreeMap<CaseId, bool> = BTreeMap::new();
        let own_case = self.own_case(id, opens, own, &mut changed, &mut replay).await?;
        let joined = self.join_cases(id, own_case, atts, &before, metrics, &mut replay).await?;
        for (case, now) in replay {
            if now {
                self.pending.remove(&case);
                self.tx.replay(case).await?;
            } else {
                self.pending.insert(case);
            }
            self.touched.insert(case);
        }
        let was: BTreeSet<CaseId> = before.iter().map(|(c, _)| *c).collect();
        let now: BTreeSet<CaseId> = own_case.into_iter().chain(joined).collect();
        if !now.is_empty() {
            self.joined.insert(id.clone());
        }
        if was != now {
            changed.push(keys::dep_message(id));
            if own_case.is_none() {
                match (was.is_empty(), now.is_empty()) {
                    (true, false) => self.stats.attached += 1,
                    (false, true) => self.stats.attached = self.stats.attached.saturating_sub(1),
                    _ => {}
                }
            }
        }
        // Threaded by references to ancestors that are all settled (so in
        // no case): nothing its references say can change.
        let by_references = threads_by_references_only(inc.kind()) && unsettled.is_empty();
        let settled = by_references && now.is_empty() && !inc.has_lifecycle();
        if settled {
            if self.tx.settle(id, fresh).await? {
                changed.push(keys::dep_message(id));
            }
        } else if by_references && inc.has_lifecycle() {
            // Lifecycle mail waits for what it names, however long, with
            // its bytes; what its replies see of it (its cases by
            // reference: none; lifecycle memberships never count) cannot
            // change, whatever cases it moves, so for them it is settled
            // and they need not wait.
            let mut deps = lifecycle_deps.to_vec();
            deps.sort();
            deps.dedup();
            if self.tx.settle_waiting(id, &deps, fresh).await? {
                changed.push(keys::dep_message(id));
            }
        } else {
            let mut deps = inc.dependencies(unsettled.iter().copied());
            deps.extend(lifecycle_deps.iter().cloned());
            deps.sort();
            deps.dedup();
            self.tx.set_deps(id, &deps, fresh).await?;
        }
        changed.sort();
        changed.dedup();
        self.enqueue_dependents(&changed).await?;
        let for_replies = settled || by_references && inc.has_lifecycle();
        if for_replies {
            self.settled.insert(id.clone());
        }
        Ok((for_replies, now))
    }

    /// Makes the message's memberships (besides its own case) and their
    /// events those of `atts`, changing only what differs; returns the
    /// cases it is in.
    async fn join_cases(
        &mut self,
        id: &MessageId,
        own_case: Option<CaseId>,
        atts: Vec<Membership>,
        before: &[(CaseId, Strategy)],
        metrics: &HashMap<CaseId, String>,
        replay: &mut BTreeMap<CaseId, bool>,
    ) -> Result<Vec<CaseId>, StoreError> {
        let mut want: BTreeMap<CaseId, Membership> = BTreeMap::new();
        for att in atts {
            if Some(att.case) != own_case {
                want.entry(att.case).or_insert(att);
            }
        }
        let leaving: Vec<CaseId> =
            before.iter().map(|(c, _)| *c).filter(|c| Some(*c) != own_case && !want.contains_key(c)).collect();
        // Its events in every case, read once: a later version of a patch
        // is in every case of its patch key.
        let mut stored =
            if want.is_empty() && leaving.is_empty() { HashMap::new() } else { self.tx.events_of(id).await? };
        // A case is replayed at once only where its title may change (a
        // `retitled` event added, changed or taken away), since threading
        // reads the title; the rest of a replay waits for the batch's end.
        for case in leaving {
            self.tx.detach(case, id).await?;
            let now = stored.remove(&case).is_some_and(|e| e.has(EventKind::Retitled));
            *replay.entry(case).or_insert(now) |= now;
        }
        for (case, att) in &want {
            let had = before.iter().find(|(c, _)| c == case).map(|(_, s)| *s);
            if had != Some(att.strategy) {
                self.tx.attach(*case, id, att.strategy).await?;
            }
            let events = stored.remove(case).unwrap_or_default();
            let put = self.tx.put_events_over(*case, events, &att.events).await?;
            if put.any || had.is_none() {
                let now = put.title;
                *replay.entry(*case).or_insert(now) |= now;
                for e in &att.events {
                    let metric = metrics.get(case).map_or("", String::as_str);
                    tracing::info!(case = case.0, event = e.kind.as_str(), metric, message_id = %id, "case event");
                }
            }
        }
        Ok(want.into_keys().collect())
    }

    /// The case the message opens, keeps, or (its report repeating a case
    /// of the thread it was sent into) closes into another.
    async fn own_case(
        &mut self,
        id: &MessageId,
        opens: Option<Box<CaseFacts>>,
        own: Option<CaseView>,
        changed: &mut Vec<String>,
        replay: &mut BTreeMap<CaseId, bool>,
    ) -> Result<Option<CaseId>, StoreError> {
        Ok(match (opens, own) {
            (Some(facts), None) => {
                let case = self.tx.open_case(&facts).await?;
                self.patch_cases.extend(facts.patch_key.clone());
                self.tx.attach(case, id, Strategy::Report).await?;
                let reported = Event::new(facts.opened_at, EventKind::Reported, Some(id.clone()));
                self.tx.put_events(case, Some(id), &[reported]).await?;
                self.stats.cases_opened += 1;
                changed.extend(keys::case_deps(&facts));
                replay.insert(case, false);
                tracing::info!(case = case.0, kind = facts.kind.as_str(), metric = facts.metric.as_deref().unwrap_or(""), message_id = %id, "case opened");
                Some(case)
            }
            (Some(_), Some(v)) => Some(v.id),
            (None, Some(v)) => {
                // Its report repeats a case of the thread it was sent into.
                let members = self.tx.delete_case(v.id).await?;
                self.stats.cases_opened = self.stats.cases_opened.saturating_sub(1);
                self.touched.remove(&v.id);
                changed.extend(keys::case_deps(&v.facts));
                for m in members {
                    changed.push(keys::dep_message(&m));
                    self.enqueue(m);
                }
                tracing::info!(case = v.id.0, message_id = %id, "case closed into the case its report repeats");
                None
            }
            (None, None) => None,
        })
    }
}

/// The fix patches among `ids` (stored messages classified as a fix
/// posted), with their cases.
pub(super) async fn fix_patches(tx: &mut Tx<'_>, ids: Vec<MessageId>) -> Result<Vec<FixPatch>, StoreError> {
    let asked: Vec<&str> = ids.iter().map(MessageId::as_str).collect();
    let mut heads = tx.heads(&asked).await?;
    let mut cases = tx.cases_of(&asked).await?;
    let mut out = Vec::new();
    for id in ids {
        let Some(h) = heads.remove(&id).filter(|h| h.kind == Kind::FixPosted.as_str()) else { continue };
        let cases = cases.remove(&id).unwrap_or_default();
        out.push(FixPatch { message_id: id, subject: h.subject, from: h.from, cases });
    }
    Ok(out)
}

/// Cases whose culprit has one of `subjects` or shares a prefix with one
/// of `commits` (a revert's lookups).
pub(super) async fn culprit_cases(
    tx: &mut Tx<'_>,
    subjects: &[String],
    commits: &[String],
) -> Result<Vec<CaseView>, StoreError> {
    let refs: Vec<&str> = subjects.iter().map(String::as_str).collect();
    let mut out = tx.cases_by_commit_subject(&refs).await?;
    if !commits.is_empty() {
        out.extend(tx.cases_by_commit(commits).await?);
    }
    Ok(out)
}

/// Cases a stale sweep reads in two statements: their views, and all
/// their events (held at once, so few).
const SWEEP_CHUNK: usize = 16;

/// Marks stale the open cases and `also` without activity for
/// `stale_days` before `now`, keeping the marks that still hold.
pub(super) async fn sweep_stale(
    tx: &mut Tx<'_>,
    also: &BTreeSet<CaseId>,
    now: i64,
    stale_days: i64,
) -> Result<StaleSweep, StoreError> {
    let mut cases: BTreeSet<CaseId> = tx.open_cases().await?.into_iter().map(|(id, _)| id).collect();
    cases.extend(also);
    let cases: Vec<CaseId> = cases.into_iter().collect();
    let mut swept = StaleSweep::default();
    // A chunk of cases at a time, two statements (a case was three; the
    // worst-case million's import touched 9,486 cases).
    for chunk in cases.chunks(SWEEP_CHUNK) {
        let views = tx.case_views(chunk).await?;
        let mut events = tx.events_of_cases(chunk).await?;
        for view in views {
            let (all, stale) = events.remove(&view.id).unwrap_or_default();
            let marks: Vec<Event> = crate::case::stale_times(view.facts.kind, &all, now, stale_days)
                .into_iter()
                .map(|t| Event::new(t, EventKind::Stale, None))
                .collect();
            swept.cases += 1;
            if tx.put_events_over(view.id, stale, &marks).await?.any {
                swept.changed += 1;
                tx.replay(view.id).await?;
            }
        }
    }
    Ok(swept)
}

fn to_json<T: serde::Serialize>(x: &T) -> String {
    serde_json::to_string(x).unwrap_or_else(|_| "null".into())
}
