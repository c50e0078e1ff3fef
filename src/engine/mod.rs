//! The imperative shell: every message from every source goes through
//! `mail::parse` -> `classify` -> `thread::decide` -> `act`, and what that
//! says is written to the store. `ingest`, the daemon and every later
//! entry point drive this one engine.
//!
//! Messages are committed in batches: one transaction holds up to
//! [`BATCH_MESSAGES`] messages (or [`BATCH_BYTES`] of them), and
//! everything a message causes (its row, its case, events, facts, raw
//! bytes, its source's checkpoint) is in the transaction that stores it.
//! The batch is looked up in one go (which of its Message-IDs and
//! ancestors are stored, and settled); ordinary list traffic (unrelated,
//! every ancestor settled) is inserted in multi-row statements, and only
//! the rest is threaded one by one (`threading`).
//!
//! Order does not matter: the store records what each unsettled message's
//! threading depends on, and a message is threaded again whenever that
//! changes (an ancestor arrives or changes cases, a case with its keys
//! opens or goes), until nothing changes. So the same messages give the
//! same cases whatever order they arrive in and however they are split
//! across runs or processes.
//!
//! Idempotent: a message whose Message-ID is stored is a duplicate and
//! changes nothing. One bad message (a panic in parsing, say) is counted
//! as a problem and kept quarantined; only store failures stop a run.

mod acting;
mod authenticating;
mod pipeline;
pub mod progress;
mod threading;
mod trees;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::act::Policy;
use crate::case::CaseId;
use crate::classify::{ClassifyConfig, Kind};
use crate::model::MessageId;
use crate::source::SourceError;
pub use crate::source::{Checkpoint, Envelope};
use crate::store::{StaleSweep, Store, StoreError};
use crate::thread::keys;
pub use acting::DigestPlan;
use pipeline::{Chunk, Item};
pub use pipeline::{Envelopes, Opener, Progress, prepare};
pub use trees::{TreePass, TreeSpec};

/// At most this many messages per transaction.
pub const BATCH_MESSAGES: usize = 1024;
/// At most this many bytes of messages held for one transaction: memory
/// stays flat however large the archive.
pub const BATCH_BYTES: usize = 1 << 20;

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IngestStats {
    /// Messages read from the sources.
    pub read: u64,
    /// Messages stored for the first time.
    pub new: u64,
    /// Messages already stored (same Message-ID).
    pub duplicates: u64,
    /// New robot reports (build summaries included).
    pub reports: u64,
    pub build_summaries: u64,
    /// Cases opened, less those whose report turned out to repeat another.
    pub cases_opened: u64,
    /// Messages other than the opening reports that joined a case.
    pub attached: u64,
    /// Messages with a problem (unreadable parts, no Message-ID, a panic).
    pub problems: u64,
    /// Sources that could not be read, or not to the end.
    pub unreadable_sources: u64,
    /// Messages of a source that could not be read (an unreadable file in
    /// a Maildir, a missing blob in a public-inbox); the rest of the
    /// source was.
    pub unreadable_messages: u64,
    /// Messages their archive removed (public-inbox `d` commits), taken
    /// out of the store, and messages not stored because their archive
    /// had removed them.
    pub removed: u64,
}

/// What the engine needs besides the store.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    pub classify: ClassifyConfig,
    pub policy: Policy,
    /// Answering commands and asking for retests; `None` records history
    /// only (an archive import).
    pub acting: Option<Acting>,
}

/// What the engine needs to answer mail.
#[derive(Clone, Debug)]
pub struct Acting {
    pub identity: crate::render::Identity,
    pub retest: RetestTarget,
    /// The wall clock (seconds since the epoch): what is fresh, and when
    /// a mail was written.
    pub clock: fn() -> i64,
    /// Who verifies the senders of the fresh mail the bot acts on;
    /// `None` (`[auth] dkim = "off"`): nobody, every sender is `none`.
    pub auth: Option<std::sync::Arc<crate::auth::Verifier>>,
}

/// Where retest requests go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetestTarget {
    /// A mail to this address.
    Email(String),
    /// The configured program, given the request as JSON (the sender runs it).
    Command,
    /// Nowhere: the request is recorded on the case only.
    None,
}

impl Settings {
    /// The classifier's defaults, and the policy they imply.
    pub fn with_classify(classify: ClassifyConfig) -> Settings {
        let policy = Policy::from_classify(&classify);
        Settings { classify, policy, acting: None }
    }
}

/// The engine owns its store: every message of every source goes through
/// it, and its callers read the store through it (or take it back).
pub struct Engine {
    store: Store,
    settings: Settings,
    batch: Vec<Item>,
    batch_bytes: usize,
    /// Message-IDs the last batch found stored, and whether each is
    /// settled. Both facts are for ever (messages are never deleted, and
    /// settled never ends), so no other process can make them stale; a
    /// thread's messages arrive close together, so the next batch's
    /// ancestors are mostly here and need no lookup. One batch's worth.
    recent: HashMap<MessageId, bool>,
    stats: IngestStats,
    /// Cases changed in this run, for the stale sweep.
    touched: BTreeSet<CaseId>,
    /// Whether an import of this engine may have put threading or
    /// replays off to its end since `import_ended` last ran (true at
    /// first: an import cut short may have left them).
    end_owed: bool,
}

impl Engine {
    pub fn new(store: Store, settings: Settings) -> Engine {
        Engine {
            store,
            settings,
            batch: Vec::new(),
            batch_bytes: 0,
            recent: HashMap::new(),
            stats: IngestStats::default(),
            touched: BTreeSet::new(),
            end_owed: true,
        }
    }

    pub fn stats(&self) -> &IngestStats {
        &self.stats
    }

    pub fn store(&mut self) -> &mut Store {
        &mut self.store
    }

    pub fn into_store(self) -> Store {
        self.store
    }

    /// Drains a source: reading, parsing and classifying run on threads of
    /// their own, a bounded queue ahead of the store, so a multi-core
    /// machine parses the next batch while the last one is written.
    /// Returns, in source order, what could not be read: messages that
    /// could not (the rest was read), and last, if the source could not be
    /// opened or read to the end, why; each is counted in the stats. Store
    /// failures are fatal.
    pub async fn ingest(
        &mut self,
        open: Opener,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Vec<SourceError>, StoreError> {
        let (mut rx, threads) = pipeline::spawn(open, self.settings.classify.clone());
        // Chunks arrive in any order from the workers; they are stored in
        // the order of the source, so case ids do not depend on timing.
        let mut waiting: BTreeMap<u64, Chunk> = BTreeMap::new();
        let mut next = 0u64;
        let mut failed = Vec::new();
        'recv: while let Some(chunk) = rx.recv().await {
            waiting.insert(chunk.seq, chunk);
            while let Some(chunk) = waiting.remove(&next) {
                next += 1;
                for item in chunk.items {
                    let offset = item.offset;
                    self.push_item(item).await?;
                    progress(Progress { messages: self.stats.read, offset });
                }
                let mut end = false;
                for e in chunk.errors {
                    if e.is_message() {
                        self.stats.unreadable_messages += 1;
                    } else {
                        self.stats.unreadable_sources += 1;
                    }
                    end |= e.is_fatal();
                    failed.push(e);
                }
                if end {
                    break 'recv;
                }
            }
        }
        // Closing the queue stops the workers and then the reader.
        drop(rx);
        for t in threads {
            let _ = t.join();
        }
        self.flush().await?;
        self.import_ended().await?;
        Ok(failed)
    }

    /// Threads again what an import put off to its end (see
    /// `Threader::put_off_to_import_end`), then replays the cases whose
    /// replay it put off, a transaction per [`BATCH_MESSAGES`] of either.
    /// Nothing, not even a transaction, when this engine put nothing off
    /// since it last did this and no other process wrote since (one cut
    /// short may have left work): a daemon finishes every job this way.
    async fn import_ended(&mut self) -> Result<(), StoreError> {
        if !self.end_owed && !self.store.others_wrote().await? {
            return Ok(());
        }
        let mut ahead = None;
        loop {
            let mut tx = self.store.begin().await?;
            let mut th = threading::Threader::new(&mut tx, &self.settings, &mut self.stats, &mut self.touched);
            th.put_off_to_import_end();
            th.lend_ahead(&mut ahead);
            let n = th.import_ended(BATCH_MESSAGES).await?;
            th.give_back_ahead(&mut ahead);
            th.finish().await?;
            tx.commit().await?;
            if n == 0 {
                break;
            }
        }
        loop {
            let mut tx = self.store.begin().await?;
            let n = tx.replay_due(BATCH_MESSAGES).await?;
            tx.commit().await?;
            if n == 0 {
                self.end_owed = false;
                return Ok(());
            }
        }
    }

    /// [`Engine::ingest`] over an mbox file, a Maildir or a `.eml` file,
    /// every message dated `fetched_at` if it has no Date.
    pub async fn ingest_path(
        &mut self,
        path: &Path,
        fetched_at: i64,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Vec<SourceError>, StoreError> {
        self.ingest(file_source(path.to_path_buf(), fetched_at), progress).await
    }

    /// Takes one message; it is stored with its batch.
    pub async fn push(&mut self, env: Envelope) -> Result<(), StoreError> {
        let item = Item::new(env, &self.settings.classify);
        self.push_item(item).await
    }

    async fn push_item(&mut self, item: Item) -> Result<(), StoreError> {
        self.stats.read += 1;
        self.batch_bytes += item.weight();
        self.batch.push(item);
        if self.batch.len() >= BATCH_MESSAGES || self.batch_bytes >= BATCH_BYTES {
            self.flush().await?;
        }
        Ok(())
    }

    /// Stores the pending batch in one transaction.
    pub async fn flush(&mut self) -> Result<(), StoreError> {
        if self.store.take_rethread_pending() {
            self.rethread_backfilled().await?;
        }
        if self.batch.is_empty() {
            return Ok(());
        }
        let items = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        // DNS before the write lock is taken.
        let mut auths = authenticating::verify(&self.settings, &items).await;
        let mut tx = self.store.begin().await?;
        // Look up each own id and each ancestor that the last batch did
        // not already find stored.
        let mut status: HashMap<MessageId, bool> = HashMap::new();
        let mut ask: Vec<&str> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        for it in &items {
            let ancestors = it.incoming.iter().flat_map(|i| i.ancestors.iter());
            for id in std::iter::once(&it.message_id).chain(ancestors) {
                if !seen.insert(id.as_str()) {
                    continue;
                }
                match self.recent.get(id) {
                    Some(&settled) => {
                        status.insert(id.clone(), settled);
                    }
                    None => ask.push(id.as_str()),
                }
            }
        }
        for (id, k) in tx.lookup(&ask).await? {
            status.insert(id, k.settled);
        }
        // Which of the stored messages still waiting are in a case: the
        // others are where a reply's references lead nowhere yet.
        let waiting: Vec<&str> = status.iter().filter(|(_, settled)| !**settled).map(|(id, _)| id.as_str()).collect();
        let in_case: HashSet<MessageId> = tx.cases_of(&waiting).await?.into_keys().collect();
        let own: Vec<&str> = items.iter().map(|it| it.message_id.as_str()).collect();
        let mut removed = tx.removed(&own).await?;
        let mut checkpoints: BTreeMap<String, String> = BTreeMap::new();
        let versions: Vec<&str> = items.iter().filter_map(|it| later_version(it.incoming.as_ref()?)).collect();
        let mut th = threading::Threader::new(&mut tx, &self.settings, &mut self.stats, &mut self.touched);
        if self.settings.acting.is_none() {
            th.put_off_to_import_end();
            self.end_owed = true;
        }
        th.ask_patch_cases(&versions).await?;
        let mut plain = Plain::default();
        // The parsed mail, freed behind the engine when the batch is done.
        let mut spent: Vec<crate::thread::Incoming> = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            if let Some(c) = &item.checkpoint {
                checkpoints.insert(c.source.clone(), c.token.clone());
            }
            if item.removed {
                // The archive removed it: out of the store, for good.
                plain.flush(&mut th).await?;
                th.stats.removed += 1;
                th.tx.record_removal(&item.message_id, item.fetched_at).await?;
                if status.remove(&item.message_id).is_some() {
                    th.remove(&item.message_id).await?;
                }
                removed.insert(item.message_id);
                continue;
            }
            if removed.contains(&item.message_id) {
                th.stats.removed += 1;
                continue;
            }
            if status.contains_key(&item.message_id) {
                th.stats.duplicates += 1;
                continue;
            }
            th.count_new(&item);
            let Item { incoming, message_id, mut row, raw, fetched_at, .. } = item;
            let Some(mut inc) = incoming else {
                tracing::error!(
                    message_id = %message_id,
                    "a message could not be parsed (a bug in lkpbot); its bytes are kept under this id"
                );
                plain.flush(&mut th).await?;
                th.tx.insert_messages(vec![row]).await?;
                th.tx.insert_raw(&[(&message_id, &raw)]).await?;
                status.insert(message_id, false);
                continue;
            };
            // Ordinary list traffic: unrelated, and every ancestor settled,
            // not here, or waiting in no case (it joins cases by its
            // references only), so it is in no case now. With every
            // ancestor settled it never will be: one small row, settled
            // too. Else it keeps its bytes and waits for the ancestors
            // that are not settled, as threading it would record. (Stored
            // in this batch, an ancestor is in a case only if threading
            // put it there.)
            // (A pull request too: it only offers the titles it carries.)
            // A later version of a patch no case reports on supersedes
            // nothing yet: it waits for such a case with its bytes, and
            // for its replies it is settled, as threading it would say.
            // (Unless it is fresh mail whose sender was verified: that
            // is threaded one by one, and its verdict kept.)
            let version = later_version(&inc).filter(|k| !th.patch_cases(k) && !auths.contains_key(&i));
            // Threading may have settled what the batch looked up.
            let settled = |a: &MessageId| status.get(a) == Some(&true) || th.settled().contains(a);
            if inc.kind() == Kind::Unrelated
                && (!inc.has_lifecycle() || version.is_some())
                && inc.ancestors.iter().all(|a| {
                    *a != message_id && (!status.contains_key(a) || settled(a) || !in_case.contains(a) && !th.joined(a))
                })
            {
                let mut waits: Vec<String> =
                    inc.ancestors.iter().filter(|a| !settled(a)).map(keys::dep_message).collect();
                // What it waits for that is not here yet: when it comes,
                // this message is threaded again (see `Plain::ids`).
                plain.unseen.extend(inc.ancestors.iter().filter(|a| !settled(a) && !status.contains_key(*a)).cloned());
                row.settled = waits.is_empty();
                waits.extend(version.map(keys::dep_patch));
                waits.sort();
                waits.dedup();
                status.insert(message_id.clone(), row.settled);
                plain
                    .offered
                    .extend(crate::thread::lifecycle::offered(&inc).into_iter().map(|k| (k, message_id.clone())));
                plain.rows.push(row);
                if !waits.is_empty() {
                    plain.deps.extend(waits.into_iter().map(|k| (k, message_id.clone())));
                    plain.raws.push((message_id.clone(), kept_bytes(&inc, raw)));
                }
                if plain.unseen.contains(&message_id) || th.tx.may_have_dependents(&keys::dep_message(&message_id)) {
                    plain.ids.push(message_id);
                }
                spent.push(inc);
                continue;
            }
            // Its row and bytes go in with the plain messages before it.
            plain.rows.push(row);
            plain.raws.push((message_id.clone(), kept_bytes(&inc, raw)));
            plain.flush(&mut th).await?;
            if let Some(a) = auths.remove(&i) {
                inc.auth = a;
            }
            let settled = th.store_new(&inc, fetched_at).await?;
            status.insert(message_id, settled);
            spent.push(inc);
        }
        plain.flush(&mut th).await?;
        let threaded = th.finish().await?;
        status.extend(threaded.settled.into_iter().map(|id| (id, true)));
        for (source, token) in &checkpoints {
            tx.set_checkpoint(source, token, threaded.latest_fetch).await?;
        }
        tx.commit().await?;
        let recent = std::mem::replace(&mut self.recent, status);
        pipeline::free_behind(Box::new((spent, recent)));
        Ok(())
    }

    /// Threads again, as when the keys are offered, the mail that waits
    /// on `h:` keys the store gave reports stored before they offered
    /// them (once, after the open that added them).
    async fn rethread_backfilled(&mut self) -> Result<(), StoreError> {
        let mut tx = self.store.begin().await?;
        let offered = tx.take_rethread(&keys::dep_key(""), &keys::key_hyperkitty("")).await?;
        if !offered.is_empty() {
            let mut th = threading::Threader::new(&mut tx, &self.settings, &mut self.stats, &mut self.touched);
            th.offered(&offered).await?;
            th.finish().await?;
        }
        tx.commit().await
    }

    /// Stores what is left; returns what was done since the last
    /// `finish` (and starts counting again).
    pub async fn finish(&mut self) -> Result<IngestStats, StoreError> {
        self.flush().await?;
        self.import_ended().await?;
        Ok(std::mem::take(&mut self.stats))
    }

    /// Reminds the retest backend of requests unanswered for
    /// `remind_days`, once; a request still unanswered as long again is
    /// recorded on its case as timed out.
    pub async fn remind(&mut self, now: i64, remind_days: i64) -> Result<(), StoreError> {
        let Some(acting) = self.settings.acting.clone() else { return Ok(()) };
        self.flush().await?;
        let mut tx = self.store.begin().await?;
        acting::remind(&mut tx, &acting, now, remind_days).await?;
        tx.commit().await
    }

    /// Queues the digest of `week` for every recipient of `plan` (at most
    /// once per week and recipient); returns how many mails were queued.
    pub async fn queue_digests(
        &mut self,
        week: &crate::digest::Week,
        plan: &DigestPlan,
        now: i64,
    ) -> Result<u32, StoreError> {
        let Some(acting) = self.settings.acting.clone() else { return Ok(0) };
        self.flush().await?;
        let mut tx = self.store.begin().await?;
        let n = acting::digests(&mut tx, &acting, week, plan, now).await?;
        tx.commit().await?;
        Ok(n)
    }

    /// Marks stale the open cases (and the cases changed since the last
    /// sweep) without activity for `stale_days` before `now`, keeping the
    /// marks that still hold.
    pub async fn sweep_stale(&mut self, now: i64, stale_days: i64) -> Result<StaleSweep, StoreError> {
        self.flush().await?;
        let mut tx = self.store.begin().await?;
        let swept = threading::sweep_stale(&mut tx, &self.touched, now, stale_days).await?;
        tx.commit().await?;
        self.touched.clear();
        Ok(swept)
    }
}

/// What the store keeps of a message's bytes to thread it again: list
/// traffic (unrelated mail: most of what waits) without the trace of its
/// way here, which reading it again never looks at (its sender, when
/// verified, was verified before this); the rest as it came.
fn kept_bytes(inc: &crate::thread::Incoming, raw: Vec<u8>) -> Vec<u8> {
    if inc.kind() != Kind::Unrelated {
        return raw;
    }
    let trimmed = match crate::mail::without_trace_headers(&raw) {
        std::borrow::Cow::Owned(t) => Some(t),
        std::borrow::Cow::Borrowed(_) => None,
    };
    trimmed.unwrap_or(raw)
}

/// The patch key of a later version of a patch that moves nothing else
/// (no applied notice, merge or revert of its own).
fn later_version(inc: &crate::thread::Incoming) -> Option<&str> {
    let (key, _) = inc.new_version.as_ref()?;
    inc.signal().is_none_or(|s| matches!(s, crate::classify::lifecycle::Signal::PullRequest { .. })).then_some(key)
}

/// Ordinary messages of a batch, buffered for multi-row inserts (with
/// the row and bytes of the next message threaded one by one).
#[derive(Default)]
struct Plain {
    rows: Vec<crate::store::rows::MessageRow>,
    /// The bytes of those that wait for missing ancestors, and what they
    /// wait for.
    raws: Vec<(MessageId, Vec<u8>)>,
    deps: Vec<(String, MessageId)>,
    /// Those that messages stored before them wait for: the messages
    /// after them in the batch were threaded knowing they are here (a
    /// reply in the same batch as the unsettled message it answers
    /// waits for it, as it would in a later batch, and is not threaded
    /// again).
    ids: Vec<MessageId>,
    /// What the batch's plain messages wait for that was not stored yet
    /// when they were.
    unseen: HashSet<MessageId>,
    /// The keys they offer (a pull request's titles).
    offered: Vec<(String, MessageId)>,
}

impl Plain {
    /// Inserts the buffered messages; then threads again what waited for
    /// them (asked once all are in: one may wait for another).
    async fn flush(&mut self, th: &mut threading::Threader<'_, '_>) -> Result<(), StoreError> {
        if self.rows.is_empty() {
            return Ok(());
        }
        th.tx.insert_messages(std::mem::take(&mut self.rows)).await?;
        let raws = std::mem::take(&mut self.raws);
        if !raws.is_empty() {
            let refs: Vec<(&MessageId, &[u8])> = raws.iter().map(|(id, b)| (id, b.as_slice())).collect();
            th.tx.insert_raw(&refs).await?;
        }
        let deps = std::mem::take(&mut self.deps);
        if !deps.is_empty() {
            th.tx.add_deps_of(&deps).await?;
        }
        let offered = std::mem::take(&mut self.offered);
        if !offered.is_empty() {
            th.tx.insert_keys(&offered).await?;
            th.offered(&offered).await?;
        }
        // Each was waited for when it was buffered, or is now that the
        // dependencies above are in: nothing to filter.
        let arrived = std::mem::take(&mut self.ids);
        if !arrived.is_empty() {
            th.arrived(&arrived).await?;
        }
        Ok(())
    }
}

/// An mbox file, a Maildir or a `.eml` file as a source.
pub fn file_source(path: PathBuf, fetched_at: i64) -> Opener {
    Box::new(move || {
        let messages = crate::source::open(&path)?;
        let envelopes = messages.map(move |r| r.map(|raw| Envelope::from_raw(raw, fetched_at, None)));
        Ok(Box::new(envelopes) as Envelopes)
    })
}
