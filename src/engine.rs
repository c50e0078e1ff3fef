//! The imperative shell of ingestion: each message goes through
//! `mail::parse` -> `classify` -> `thread::decide`, and what the decision
//! says is written to the store.
//!
//! Messages are committed in batches: one transaction holds up to
//! [`BATCH_MESSAGES`] messages (or [`BATCH_BYTES`] of them), and everything
//! a message causes (its row, its case, events, links, facts, raw bytes)
//! is in the transaction that stores it. The batch is looked up in one go
//! (which of its Message-IDs and ancestors are known, in which cases);
//! ordinary list traffic (unrelated, in no case's thread) is then inserted
//! in multi-row statements, and only the rest takes the per-message path.
//! That is what keeps an archive import bounded by MIME parsing.
//!
//! Idempotent: a message whose Message-ID is stored is a duplicate and
//! changes nothing, so ingesting the same archive twice changes no row.
//! One bad message (a panic in parsing, say) is counted as a problem and
//! the run goes on; only store failures stop it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use serde::Serialize;

use crate::classify::{self, ClassifyConfig, Kind};
use crate::mail;
use crate::model::MessageId;
use crate::source::{self, SourceError};
use crate::store::rows::{MessageRow, message_row};
use crate::store::{StoreError, Tx};
use crate::thread::{self, Attachment, Candidates, CaseId, Decision, Event, EventKind, Incoming, Strategy};

/// At most this many messages per transaction.
pub const BATCH_MESSAGES: usize = 1024;
/// At most this many bytes of messages held for one transaction: memory
/// stays flat however large the archive.
pub const BATCH_BYTES: usize = 8 << 20;

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
    pub cases_opened: u64,
    /// Messages other than the opening reports that joined a case.
    pub attached: u64,
    /// Messages with a problem (unreadable parts, no Message-ID, a panic).
    pub problems: u64,
    /// Sources that could not be read, or not to the end.
    pub unreadable_sources: u64,
}

/// Whether a message's raw bytes may be needed: ordinary traffic that
/// starts a thread never joins a case.
fn keeps_raw(incoming: &Incoming) -> bool {
    !(incoming.kind() == Kind::Unrelated && incoming.ancestors.is_empty())
}

/// A message read and prepared off the store's thread; `item` is `None`
/// when preparing it panicked.
struct Prepared {
    item: Option<Item>,
    offset: Option<u64>,
}

/// Consecutive messages of a source, prepared together; `error` ends the
/// source after them.
struct Chunk {
    seq: u64,
    messages: Vec<Prepared>,
    error: Option<SourceError>,
}

/// Messages per chunk: enough to make the hand-off between threads cheap;
/// and bytes, so a run of large reports does not make a large chunk.
const CHUNK_MESSAGES: usize = 64;
const CHUNK_BYTES: usize = 512 << 10;
/// Chunks parsed ahead of the store: a batch's worth, so the workers go on
/// while a batch is written.
const QUEUED_CHUNKS: usize = BATCH_MESSAGES / CHUNK_MESSAGES;

/// Starts reading `path` on a thread of its own and parsing and
/// classifying on worker threads, one per core. Memory stays bounded: each
/// worker holds two chunks in its queue and one in hand, and the merged
/// queue [`QUEUED_CHUNKS`].
fn spawn_pipeline(
    path: std::path::PathBuf,
    cfg: ClassifyConfig,
) -> (tokio::sync::mpsc::Receiver<Chunk>, Vec<std::thread::JoinHandle<()>>) {
    // Two parse workers keep one store busy; more only add memory.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 2);
    let (out_tx, out_rx) = tokio::sync::mpsc::channel::<Chunk>(QUEUED_CHUNKS);
    let mut threads = Vec::new();
    let mut inputs = Vec::new();
    for w in 0..workers {
        let (in_tx, in_rx) = std::sync::mpsc::sync_channel::<(u64, Vec<source::RawMessage>, Option<SourceError>)>(2);
        inputs.push(in_tx);
        let out = out_tx.clone();
        let cfg = cfg.clone();
        let spawned = std::thread::Builder::new().name(format!("lkpbot-parse-{w}")).spawn(move || {
            for (seq, raws, error) in in_rx {
                let messages =
                    raws.into_iter().map(|r| Prepared { item: Item::new(r.bytes, &cfg), offset: r.offset }).collect();
                // A closed queue means the store side stopped: stop too.
                if out.blocking_send(Chunk { seq, messages, error }).is_err() {
                    return;
                }
            }
        });
        threads.extend(spawned.ok());
    }
    drop(out_tx);
    let reader = std::thread::Builder::new().name("lkpbot-reader".into()).spawn(move || {
        let mut seq = 0u64;
        let mut send = |raws: Vec<source::RawMessage>, error: Option<SourceError>| -> bool {
            let Some(input) = inputs.get(usize::try_from(seq).unwrap_or(0) % inputs.len().max(1)) else {
                return false;
            };
            let ok = input.send((seq, raws, error)).is_ok();
            seq += 1;
            ok
        };
        let messages = match source::open(&path) {
            Ok(m) => m,
            Err(e) => {
                send(Vec::new(), Some(e));
                return;
            }
        };
        let mut chunk = Vec::with_capacity(CHUNK_MESSAGES);
        let mut bytes = 0;
        for raw in messages {
            match raw {
                Ok(r) => {
                    bytes += r.bytes.len();
                    chunk.push(r);
                    if chunk.len() == CHUNK_MESSAGES || bytes >= CHUNK_BYTES {
                        bytes = 0;
                        if !send(std::mem::take(&mut chunk), None) {
                            return;
                        }
                    }
                }
                Err(e) => {
                    send(std::mem::take(&mut chunk), Some(e));
                    return;
                }
            }
        }
        if !chunk.is_empty() {
            send(chunk, None);
        }
    });
    threads.extend(reader.ok());
    (out_rx, threads)
}

/// How far a run has come, for progress bars.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    pub messages: u64,
    /// Bytes of the current mbox read so far, when known.
    pub offset: Option<u64>,
}

struct Item {
    incoming: Incoming,
    /// Its `messages` row, made where it was parsed.
    row: MessageRow,
    /// Kept only when it may be needed: by a message that might join a
    /// case now or when its ancestors arrive.
    raw: Vec<u8>,
}

impl Item {
    /// Prepares one message; `None` when that panicked.
    fn new(raw: Vec<u8>, cfg: &ClassifyConfig) -> Option<Item> {
        let incoming = prepare(&raw, cfg)?;
        let row = message_row(&incoming);
        // Bytes that will not be kept do not wait in a queue.
        let raw = if keeps_raw(&incoming) { raw } else { Vec::new() };
        Some(Item { incoming, row, raw })
    }
}

/// Parses, classifies and takes the threading keys of one message; `None`
/// when that panicked (a bug, counted as a problem).
pub fn prepare(raw: &[u8], cfg: &ClassifyConfig) -> Option<Incoming> {
    catch_unwind(AssertUnwindSafe(|| {
        let m = mail::parse(raw);
        let c = classify::classify(&m, cfg);
        Incoming::new(&m, c)
    }))
    .ok()
}

/// What a batch knows about Message-IDs: stored ones with their cases,
/// which of them wait for an ancestor, which some message waits for.
struct Known {
    cases: HashMap<MessageId, Vec<CaseId>>,
    waiting: HashSet<MessageId>,
    awaited: HashSet<MessageId>,
}

pub struct Engine<'s> {
    store: &'s mut crate::store::Store,
    batch: Vec<Item>,
    batch_bytes: usize,
    /// What the last batch learnt about its Message-IDs. A thread's
    /// messages arrive close together, so the next batch's ancestors are
    /// mostly here and need no lookup. One batch's worth: bounded.
    recent: Option<Known>,
    w: Writer,
}

/// The per-message work inside a transaction (apart from the store, so
/// both can be borrowed at once).
struct Writer {
    cfg: ClassifyConfig,
    now: i64,
    stats: IngestStats,
}

impl<'s> Engine<'s> {
    /// `now` (seconds since the epoch) dates messages without a Date and
    /// decides what is stale.
    pub fn new(store: &'s mut crate::store::Store, cfg: ClassifyConfig, now: i64) -> Engine<'s> {
        Engine {
            store,
            batch: Vec::new(),
            batch_bytes: 0,
            recent: None,
            w: Writer { cfg, now, stats: IngestStats::default() },
        }
    }

    pub fn stats(&self) -> &IngestStats {
        &self.w.stats
    }

    /// Reads every message of an mbox, Maildir or .eml file. A source that
    /// cannot be opened or read to the end is counted and returned as an
    /// error after what could be read is stored; store failures are fatal.
    ///
    /// Reading, parsing and classifying run on a thread of their own, a
    /// bounded queue ahead of the store, so a multi-core machine parses the
    /// next batch while the last one is written. The queue bounds memory.
    pub async fn ingest_path(
        &mut self,
        path: &Path,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Option<SourceError>, StoreError> {
        let (mut rx, threads) = spawn_pipeline(path.to_path_buf(), self.w.cfg.clone());
        // Chunks arrive in any order from the workers; they are stored in
        // the order of the source, so case ids do not depend on timing.
        let mut waiting: BTreeMap<u64, Chunk> = BTreeMap::new();
        let mut next = 0u64;
        let mut failed = None;
        'recv: while let Some(chunk) = rx.recv().await {
            waiting.insert(chunk.seq, chunk);
            while let Some(chunk) = waiting.remove(&next) {
                next += 1;
                for p in chunk.messages {
                    self.push_prepared(p.item).await?;
                    progress(Progress { messages: self.w.stats.read, offset: p.offset });
                }
                if let Some(e) = chunk.error {
                    self.w.stats.unreadable_sources += 1;
                    failed = Some(e);
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
        Ok(failed)
    }

    /// Takes one raw message; it is stored with its batch.
    pub async fn push(&mut self, raw: Vec<u8>) -> Result<(), StoreError> {
        let item = Item::new(raw, &self.w.cfg);
        self.push_prepared(item).await
    }

    /// Takes a message already parsed and classified (`None`: it could
    /// not be, and counts as a problem).
    async fn push_prepared(&mut self, item: Option<Item>) -> Result<(), StoreError> {
        self.w.stats.read += 1;
        let Some(item) = item else {
            self.w.stats.problems += 1;
            return Ok(());
        };
        self.batch_bytes += item.raw.len() + item.incoming.subject.len() + 256;
        self.batch.push(item);
        if self.batch.len() >= BATCH_MESSAGES || self.batch_bytes >= BATCH_BYTES {
            self.flush().await?;
        }
        Ok(())
    }

    /// Stores the pending batch in one transaction.
    pub async fn flush(&mut self) -> Result<(), StoreError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let items = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        let mut tx = self.store.begin().await?;
        let own: Vec<&str> = items.iter().map(|it| it.incoming.message_id.as_str()).collect();
        let own_set: HashSet<&str> = own.iter().copied().collect();
        let recent = self.recent.take();
        // Look up each own id, and each ancestor that is neither in this
        // batch (not stored yet) nor known from the last one.
        let mut ids: Vec<&str> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut from_recent: Vec<&MessageId> = Vec::new();
        for it in &items {
            for (n, id) in std::iter::once(&it.incoming.message_id).chain(&it.incoming.ancestors).enumerate() {
                if !seen.insert(id.as_str()) {
                    continue;
                }
                let ancestor = n > 0;
                if ancestor && own_set.contains(id.as_str()) {
                    continue;
                }
                if recent.as_ref().is_some_and(|r| r.cases.contains_key(id)) {
                    from_recent.push(id);
                } else {
                    ids.push(id.as_str());
                }
            }
        }
        let mut cases = tx.known(&ids).await?;
        let mut waiting = tx.waiting(&ids).await?;
        let awaited = tx.awaited(&own).await?;
        if let Some(r) = &recent {
            for id in from_recent {
                if let Some(c) = r.cases.get(id) {
                    cases.insert(id.clone(), c.clone());
                }
                if r.waiting.contains(id) {
                    waiting.insert(id.clone());
                }
            }
        }
        let mut known = Known { cases, waiting, awaited };
        let mut plain: Vec<Plain> = Vec::new();
        for item in items {
            let inc = &item.incoming;
            if known.cases.contains_key(&inc.message_id) {
                self.w.stats.duplicates += 1;
                continue;
            }
            self.w.count_new(inc);
            let mut ref_cases: Vec<CaseId> =
                inc.ancestors.iter().filter_map(|a| known.cases.get(a)).flatten().copied().collect();
            ref_cases.sort();
            ref_cases.dedup();
            let waits_on: Vec<MessageId> = inc
                .ancestors
                .iter()
                .filter(|a| !known.cases.contains_key(*a) || known.waiting.contains(*a))
                .cloned()
                .collect();
            let rich =
                !ref_cases.is_empty() || inc.kind() != Kind::Unrelated || known.awaited.contains(&inc.message_id);
            if !rich {
                known.cases.insert(inc.message_id.clone(), Vec::new());
                if !waits_on.is_empty() {
                    known.waiting.insert(inc.message_id.clone());
                    known.awaited.extend(waits_on.iter().cloned());
                }
                plain.push(Plain { row: item.row, waits_on, raw: item.raw });
                continue;
            }
            flush_plain(&mut tx, &mut plain).await?;
            let changed = self.w.thread_one(&mut tx, item, &ref_cases, &waits_on).await?;
            known.awaited.extend(waits_on);
            for (id, cases, waiting) in changed {
                let entry = known.cases.entry(id.clone()).or_default();
                for c in cases {
                    if !entry.contains(&c) {
                        entry.push(c);
                    }
                }
                if waiting {
                    known.waiting.insert(id);
                } else {
                    known.waiting.remove(&id);
                }
            }
        }
        flush_plain(&mut tx, &mut plain).await?;
        tx.commit().await?;
        self.recent = Some(known);
        Ok(())
    }

    /// Stores what is left and marks stale the open cases without activity
    /// for `stale_days` (none when `None`).
    pub async fn finish(mut self, stale_days: Option<i64>) -> Result<IngestStats, StoreError> {
        self.flush().await?;
        if let Some(days) = stale_days {
            let mut tx = self.store.begin().await?;
            for (id, kind, _) in tx.open_cases().await? {
                let events = tx.events(id).await?;
                let times = thread::stale_times(kind, &events, self.w.now, days);
                if tx.set_stale_marks(id, &times).await? {
                    replay_case(&mut tx, id).await?;
                }
            }
            tx.commit().await?;
        }
        Ok(self.w.stats)
    }
}

impl Writer {
    fn count_new(&mut self, inc: &Incoming) {
        self.stats.new += 1;
        if inc.kind().is_report() {
            self.stats.reports += 1;
        }
        if inc.kind() == Kind::BuildSummary {
            self.stats.build_summaries += 1;
        }
        if !inc.problems.is_empty() {
            self.stats.problems += 1;
        }
    }

    /// The per-message path: candidates, decision, writes, and then the
    /// replies that were waiting for this message. Returns the messages
    /// whose cases or waiting status changed.
    async fn thread_one(
        &mut self,
        tx: &mut Tx<'_>,
        item: Item,
        ref_cases: &[CaseId],
        waits_on: &[MessageId],
    ) -> Result<Vec<(MessageId, Vec<CaseId>, bool)>, StoreError> {
        let inc = &item.incoming;
        tx.insert_messages(vec![item.row]).await?;
        let (cases, _) = self.thread_stored(tx, inc, ref_cases).await?;
        let waits: Vec<(&MessageId, &MessageId)> = waits_on.iter().map(|a| (&inc.message_id, a)).collect();
        tx.add_pending(&waits).await?;
        if !cases.is_empty() || !waits.is_empty() {
            tx.insert_raw(&[(&inc.message_id, &item.raw)]).await?;
        }
        let mut changed = vec![(inc.message_id.clone(), cases.clone(), !waits.is_empty())];
        // What waits for a message that itself waits, and is in no case,
        // keeps waiting: its fate is not known yet.
        if waits.is_empty() || !cases.is_empty() {
            self.settle(tx, &inc.message_id, cases, &mut changed).await?;
        }
        Ok(changed)
    }

    /// Threads a stored message: finds candidates, decides, applies.
    /// Returns the cases it is in and whether it joined one now.
    async fn thread_stored(
        &mut self,
        tx: &mut Tx<'_>,
        inc: &Incoming,
        ref_cases: &[CaseId],
    ) -> Result<(Vec<CaseId>, bool), StoreError> {
        let c = candidates(tx, inc, ref_cases).await?;
        let decision = thread::decide(inc, &c, self.now);
        self.apply(tx, inc, decision).await
    }

    async fn apply(
        &mut self,
        tx: &mut Tx<'_>,
        inc: &Incoming,
        decision: Decision,
    ) -> Result<(Vec<CaseId>, bool), StoreError> {
        let id = &inc.message_id;
        let cls = &inc.classified;
        let mut cases = Vec::new();
        let mut joined = false;
        match decision {
            Decision::Ignore => {}
            Decision::BuildSummary => {
                if let Some(s) = &cls.build_summary {
                    tx.insert_build_summary(id, inc.date, s, &to_json(s)).await?;
                }
            }
            Decision::Open { case, related, thread } => {
                let existing = tx.cases_of_messages(std::slice::from_ref(id)).await?;
                let case_id = match existing.iter().find(|v| v.facts.report_message_id == *id) {
                    Some(v) => v.id,
                    None => {
                        let case_id = tx.open_case(&case).await?;
                        tx.attach(case_id, id, Strategy::Report).await?;
                        tx.add_events(case_id, &[Event::new(case.opened_at, EventKind::Reported, Some(id.clone()))])
                            .await?;
                        self.stats.cases_opened += 1;
                        case_id
                    }
                };
                cases.push(case_id);
                self.store_report(tx, inc, Some(case_id)).await?;
                for (other, rel) in related {
                    tx.link(case_id, other, rel).await?;
                }
                for att in thread {
                    self.attach(tx, id, &att).await?;
                    cases.push(att.case);
                }
            }
            Decision::Attach(atts) => {
                for att in &atts {
                    joined |= self.attach(tx, id, att).await?;
                    cases.push(att.case);
                }
                if cls.kind.is_report() {
                    self.store_report(tx, inc, atts.first().map(|a| a.case)).await?;
                }
                if joined {
                    self.stats.attached += 1;
                    for (i, r) in cls.retests.iter().enumerate() {
                        let fix = r.fix.sha.as_ref().map_or_else(|| r.fix.short.clone(), |s| s.to_string());
                        let idx = i64::try_from(i).unwrap_or(i64::MAX);
                        tx.insert_retest(id, idx, &fix, &r.metric, r.verdict, &to_json(r)).await?;
                    }
                }
            }
        }
        Ok((cases, joined))
    }

    async fn store_report(&mut self, tx: &mut Tx<'_>, inc: &Incoming, case: Option<CaseId>) -> Result<(), StoreError> {
        let cls = &inc.classified;
        let facts = match (&cls.own_report, &cls.build) {
            (Some(r), _) => to_json(r),
            (None, Some(b)) => to_json(b),
            (None, None) => return Ok(()),
        };
        tx.insert_report(&inc.message_id, case, cls.kind.as_str(), &facts).await
    }

    /// Puts a message in a case with its events and replays the case;
    /// false when it was in the case already.
    async fn attach(&mut self, tx: &mut Tx<'_>, id: &MessageId, att: &Attachment) -> Result<bool, StoreError> {
        if !tx.attach(att.case, id, att.strategy).await? {
            return Ok(false);
        }
        tx.add_events(att.case, &att.events).await?;
        replay_case(tx, att.case).await?;
        Ok(true)
    }

    /// Settles the messages that waited for `first`: when it is in cases,
    /// they are threaded again (their references now reach a case); when
    /// not, the ones that wait for nothing more lose their raw bytes. Then
    /// the same for what waited for them.
    async fn settle(
        &mut self,
        tx: &mut Tx<'_>,
        first: &MessageId,
        first_cases: Vec<CaseId>,
        changed: &mut Vec<(MessageId, Vec<CaseId>, bool)>,
    ) -> Result<(), StoreError> {
        let mut work = vec![(first.clone(), first_cases)];
        while let Some((parent, parent_cases)) = work.pop() {
            for child in tx.take_pending(&parent).await? {
                let mut cases = Vec::new();
                let mut joined = false;
                if !parent_cases.is_empty()
                    && let Some(raw) = tx.raw(&child).await?
                {
                    match prepare(&raw, &self.cfg) {
                        Some(inc) => {
                            let ancestors: Vec<&str> = inc.ancestors.iter().map(MessageId::as_str).collect();
                            let mut refs: Vec<CaseId> = tx.known(&ancestors).await?.into_values().flatten().collect();
                            refs.sort();
                            refs.dedup();
                            (cases, joined) = self.thread_stored(tx, &inc, &refs).await?;
                        }
                        None => self.stats.problems += 1,
                    }
                }
                let waiting = tx.is_waiting(&child).await?;
                if !waiting {
                    tx.drop_raw_if_unneeded(&child).await?;
                }
                changed.push((child.clone(), cases.clone(), waiting));
                if !waiting || joined {
                    if cases.is_empty() {
                        cases =
                            tx.cases_of_messages(std::slice::from_ref(&child)).await?.iter().map(|v| v.id).collect();
                    }
                    work.push((child, cases));
                }
            }
        }
        Ok(())
    }
}

/// An ordinary message: in no case, its row buffered for a multi-row
/// insert; its bytes are kept while it waits for ancestors.
struct Plain {
    row: MessageRow,
    waits_on: Vec<MessageId>,
    raw: Vec<u8>,
}

/// Inserts the buffered ordinary messages: their rows, and for those
/// waiting for an ancestor, the pending references and raw bytes.
async fn flush_plain(tx: &mut Tx<'_>, plain: &mut Vec<Plain>) -> Result<(), StoreError> {
    if plain.is_empty() {
        return Ok(());
    }
    let mut rows = Vec::with_capacity(plain.len());
    let mut waiting = Vec::new();
    for p in plain.drain(..) {
        if !p.waits_on.is_empty() {
            waiting.push((crate::store::rows::message_id(&p.row.message_id)?, p.waits_on, p.raw));
        }
        rows.push(p.row);
    }
    tx.insert_messages(rows).await?;
    let waits: Vec<(&MessageId, &MessageId)> =
        waiting.iter().flat_map(|(id, waits, _)| waits.iter().map(move |a| (id, a))).collect();
    tx.add_pending(&waits).await?;
    let raws: Vec<(&MessageId, &[u8])> = waiting.iter().map(|(id, _, raw)| (id, raw.as_slice())).collect();
    tx.insert_raw(&raws).await
}

/// Looks up the cases a message's keys name.
async fn candidates(tx: &mut Tx<'_>, inc: &Incoming, ref_cases: &[CaseId]) -> Result<Candidates, StoreError> {
    let mut c = Candidates::default();
    if !ref_cases.is_empty() {
        c.by_reference = tx.case_views(ref_cases).await?;
    }
    let l = inc.lookups(!c.by_reference.is_empty());
    if !l.links.is_empty() {
        c.by_link = tx.cases_of_messages(&l.links).await?;
    }
    if let Some(k) = &l.subject_key {
        c.by_subject = tx.cases_by_subject_key(k).await?;
    }
    if !l.commits.is_empty() {
        c.by_commit = tx.cases_by_commit(&l.commits).await?;
    }
    if let Some(k) = &l.patch_key {
        c.by_patch = tx.cases_by_patch_key(k).await?;
    }
    Ok(c)
}

/// Recomputes a case's state and summary from its events.
async fn replay_case(tx: &mut Tx<'_>, case: CaseId) -> Result<(), StoreError> {
    let Some(view) = tx.case_views(&[case]).await?.pop() else { return Ok(()) };
    let events = tx.events(case).await?;
    let (progress, _) = thread::replay(view.facts.kind, &events);
    tx.set_progress(case, &progress, view.facts.opened_at).await
}

fn to_json<T: Serialize>(x: &T) -> String {
    serde_json::to_string(x).unwrap_or_else(|_| "null".into())
}
