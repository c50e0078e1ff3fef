//! Reading and preparing messages off the store's thread.
//!
//! A reader thread drains a source (any iterator of [`Envelope`]s: an
//! mbox, a Maildir, a mailbox fetched over IMAP) into chunks; parse
//! workers, one per core up to two, turn each message into an [`Item`]
//! (parse, classify, threading keys; a panic is caught and the message
//! kept as quarantined); the store side takes the chunks back in source
//! order, so what is stored never depends on thread timing. The queues
//! between them are bounded, so memory is too.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::classify::{self, ClassifyConfig, Kind};
use crate::mail;
use crate::model::MessageId;
use crate::source::{Checkpoint, Envelope, SourceError};
use crate::store::Waiting;
use crate::store::rows::{MAX_SUBJECT, MessageRow};
use crate::thread::Incoming;

/// A source's messages as envelopes (raw bytes, when fetched, the
/// checkpoint they advance): opened on the reader thread, then drained.
pub type Envelopes = Box<dyn Iterator<Item = Result<Envelope, SourceError>>>;
pub type Opener = Box<dyn FnOnce() -> Result<Envelopes, SourceError> + Send>;

/// How far a run has come, for progress bars.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    pub messages: u64,
    /// Bytes of the current mbox read so far, when known.
    pub offset: Option<u64>,
}

/// A message prepared for the store.
pub(super) struct Item {
    /// `None` when preparing it panicked (a bug): it is kept quarantined,
    /// its bytes stored under an id derived from them, so nothing is lost.
    pub incoming: Option<Incoming>,
    pub message_id: MessageId,
    /// Its `messages` row, made where it was parsed.
    pub row: MessageRow,
    /// Kept only when it may be needed: by a message that might join a
    /// case now or later.
    pub raw: Vec<u8>,
    pub fetched_at: i64,
    pub checkpoint: Option<Checkpoint>,
    pub offset: Option<u64>,
    /// Not a message but its removal by the archive (see
    /// [`Envelope::removed`]).
    pub removed: bool,
}

/// Whether a message's bytes may be needed: ordinary traffic that starts
/// a thread never joins a case (lifecycle mail may: a revert, a later
/// version of a patch).
fn keeps_raw(incoming: &Incoming) -> bool {
    !(incoming.kind() == Kind::Unrelated && incoming.ancestors.is_empty() && !incoming.has_lifecycle())
}

impl Item {
    pub fn new(env: Envelope, cfg: &ClassifyConfig) -> Item {
        let Envelope { bytes, original_len, fetched_at, checkpoint, offset, removed } = env;
        match prepare(&bytes, original_len, cfg) {
            Some(incoming) => {
                let row = message_row(&incoming, fetched_at);
                // Bytes that will not be kept do not wait in a queue.
                let raw = if keeps_raw(&incoming) && !removed { bytes } else { Vec::new() };
                Item {
                    message_id: incoming.message_id.clone(),
                    incoming: Some(incoming),
                    row,
                    raw,
                    fetched_at,
                    checkpoint,
                    offset,
                    removed,
                }
            }
            None => {
                let message_id = mail::synthesize_message_id(&bytes);
                let row = MessageRow {
                    message_id: message_id.to_string(),
                    kind: Kind::Unrelated.as_str(),
                    subject: String::new(),
                    from_addr: None,
                    date: None,
                    fetched_at,
                    problems: 1,
                    settled: false,
                };
                Item { incoming: None, message_id, row, raw: bytes, fetched_at, checkpoint, offset, removed }
            }
        }
    }

    /// Bytes this item holds, for batch limits.
    pub fn weight(&self) -> usize {
        self.raw.len() + self.row.subject.len() + 256
    }
}

/// Parses, classifies and takes the threading keys of one message (of
/// which a source kept `raw`, the first bytes of `original_len`); `None`
/// when that panicked (a bug, counted as a problem).
pub fn prepare(raw: &[u8], original_len: u64, cfg: &ClassifyConfig) -> Option<Incoming> {
    catch_unwind(AssertUnwindSafe(|| {
        let m = mail::parse_truncated(raw, original_len);
        let c = classify::classify(&m, cfg);
        Incoming::new(m, c)
    }))
    .ok()
}

/// Consecutive messages of a source, prepared together, with the errors
/// met reading them (in source order: a fatal one ends the source, the
/// others each name a message that could not be read).
pub(super) struct Chunk {
    pub seq: u64,
    /// What its items weigh against [`QUEUED_WEIGHT`].
    pub weight: usize,
    pub items: Vec<Item>,
    pub errors: Vec<SourceError>,
}

/// Messages per chunk: enough to make the hand-off between threads cheap;
/// and bytes, so a run of large reports does not make a large chunk.
const CHUNK_MESSAGES: usize = 64;
const CHUNK_BYTES: usize = 128 << 10;
/// Chunks parsed ahead of the store, at most; and what they may weigh
/// together ([`Item::weight`]: the bytes kept, the rest nearly nothing),
/// at most. The count lets the workers go on through the whole of a
/// batch's transaction: with four chunks (about sixty messages of list
/// traffic) they stopped early in every batch while a core idled, and
/// with thirty-two the cgroups list imports 4% faster, eight copies of
/// it 10%. The weight keeps the import's peak where it was: that comes
/// with the robot's reports (tens to hundreds of KiB each, all kept),
/// which it holds to a dozen chunks where a count alone would let
/// thirty-two queue (4 MiB more at the peak of eight copies).
const QUEUED_CHUNKS: usize = 32;
const QUEUED_WEIGHT: usize = super::BATCH_BYTES * 3 / 2;
/// Chunks read ahead of each parse worker.
const READ_AHEAD: usize = 1;

/// The parsed chunks on their way to the store, in whatever order the
/// workers finish them: at most [`QUEUED_CHUNKS`] of them, weighing at
/// most [`QUEUED_WEIGHT`] (or one chunk, whatever it weighs). Dropping it
/// stops the workers and then the reader.
pub(super) struct Chunks {
    rx: tokio::sync::mpsc::Receiver<Chunk>,
    budget: std::sync::Arc<Budget>,
}

impl Chunks {
    pub async fn recv(&mut self) -> Option<Chunk> {
        let chunk = self.rx.recv().await?;
        self.budget.give(chunk.weight);
        Some(chunk)
    }

    #[cfg(test)]
    fn blocking_recv(&mut self) -> Option<Chunk> {
        let chunk = self.rx.blocking_recv()?;
        self.budget.give(chunk.weight);
        Some(chunk)
    }
}

impl Drop for Chunks {
    fn drop(&mut self) {
        self.budget.close();
    }
}

/// The weight of the chunks queued for the store, which a worker waits on
/// before it queues one more.
struct Budget {
    /// The weight queued, and whether the store side is gone.
    state: std::sync::Mutex<(usize, bool)>,
    given: std::sync::Condvar,
    cap: usize,
}

impl Budget {
    fn new(cap: usize) -> Budget {
        Budget { state: std::sync::Mutex::new((0, false)), given: std::sync::Condvar::new(), cap }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (usize, bool)> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits until `weight` fits (an empty queue takes any chunk) and
    /// counts it; false once the store side is gone.
    fn take(&self, weight: usize) -> bool {
        let mut st = self.lock();
        while !st.1 && st.0 > 0 && st.0 + weight > self.cap {
            st = self.given.wait(st).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        st.0 += weight;
        !st.1
    }

    fn give(&self, weight: usize) {
        let mut st = self.lock();
        st.0 = st.0.saturating_sub(weight);
        self.given.notify_all();
    }

    fn close(&self) {
        self.lock().1 = true;
        self.given.notify_all();
    }
}

/// Queues a parsed chunk for the store once its weight fits; false when
/// the store side is gone.
fn queue(out: &tokio::sync::mpsc::Sender<Chunk>, budget: &Budget, chunk: Chunk) -> bool {
    budget.take(chunk.weight) && out.blocking_send(chunk).is_ok()
}

type WorkerInput = (u64, Vec<Envelope>, Vec<SourceError>);

/// Starts a named thread: `std::thread::Builder` in a run, a failing one
/// in tests.
pub(super) type Start<'a> =
    &'a dyn Fn(String, Box<dyn FnOnce() + Send>) -> std::io::Result<std::thread::JoinHandle<()>>;

fn start_thread(name: String, f: Box<dyn FnOnce() + Send>) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new().name(name).spawn(move || {
        yield_to_the_store();
        f()
    })
}

/// How much lower the reader and the parse workers run than the engine
/// and the store (a nice value; Linux keeps one per thread).
const BEHIND_THE_STORE: libc::c_int = 5;

/// Lowers the calling thread's priority by [`BEHIND_THE_STORE`]. The
/// engine, which runs the store's writes on its own thread, is the
/// import's slowest stage, and on a machine whose cores the parse workers
/// fill it waited for a core: it goes first and the workers take what is
/// left. Best effort: where it fails, nothing
/// changes but the order.
fn yield_to_the_store() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid and setpriority take no pointers; for PRIO_PROCESS
    // Linux reads a thread id as that one thread.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid);
        if let Ok(tid) = libc::id_t::try_from(tid) {
            let now = libc::getpriority(libc::PRIO_PROCESS, tid);
            libc::setpriority(libc::PRIO_PROCESS, tid, now.saturating_add(BEHIND_THE_STORE).min(19));
        }
    }
}

/// What [`free_behind`] hands over: anything the engine is done with.
type Spent = Box<dyn Send>;

/// Frees `spent` on a thread of its own, at the parse workers' priority
/// ([`BEHIND_THE_STORE`]). A batch's parsed mail is many small
/// allocations made on the workers; freeing them took a sixth of the
/// engine's time, which is the import's slowest stage. When that thread
/// cannot start, or is [`SPENT_QUEUED`] batches behind, `spent` is freed
/// here.
pub(super) fn free_behind(spent: Spent) {
    static FREER: std::sync::OnceLock<Option<std::sync::mpsc::SyncSender<Spent>>> = std::sync::OnceLock::new();
    let freer = FREER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Spent>(SPENT_QUEUED);
        let free = Box::new(move || rx.into_iter().for_each(drop));
        start_thread("lkpbot-free".into(), free).ok().map(|_| tx)
    });
    if let Some(tx) = freer {
        // Full or gone: freed by the caller, as without the thread.
        let _ = tx.try_send(spent);
    }
}

/// How many batches may wait to be freed by [`free_behind`]'s thread.
const SPENT_QUEUED: usize = 2;

/// Starts the reader thread and the parse workers. Memory stays bounded:
/// the workers' shared queue holds [`READ_AHEAD`] chunks a worker, each
/// worker one in hand, and the merged queue what [`Chunks`] says.
pub(super) fn spawn(open: Opener, cfg: ClassifyConfig) -> (Chunks, Vec<std::thread::JoinHandle<()>>) {
    spawn_with(open, cfg, &start_thread)
}

/// [`spawn`], starting threads with `start`. A parse worker that cannot
/// start is said and left out (with none, the reader parses); a reader
/// that cannot start is the source's fatal error, never an empty source.
pub(super) fn spawn_with(
    open: Opener,
    cfg: ClassifyConfig,
    start: Start<'_>,
) -> (Chunks, Vec<std::thread::JoinHandle<()>>) {
    // Two parse workers keep one store busy; more only add memory.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 2);
    let (out_tx, out_rx) = tokio::sync::mpsc::channel::<Chunk>(QUEUED_CHUNKS);
    let budget = std::sync::Arc::new(Budget::new(QUEUED_WEIGHT));
    let mut threads = Vec::new();
    // One queue for all workers: whichever is free takes the next chunk,
    // so a slow chunk (a run of large reports) holds up one worker, not
    // every chunk dealt to it after.
    let (in_tx, in_rx) = std::sync::mpsc::sync_channel::<WorkerInput>(READ_AHEAD * workers);
    let in_rx = std::sync::Arc::new(std::sync::Mutex::new(in_rx));
    for w in 0..workers {
        let in_rx = in_rx.clone();
        let out = out_tx.clone();
        let cfg = cfg.clone();
        let budget = budget.clone();
        let worker = Box::new(move || {
            loop {
                // A worker that panicked holding the lock left the queue
                // whole: take it.
                let next = in_rx.lock().unwrap_or_else(std::sync::PoisonError::into_inner).recv();
                let Ok((seq, envs, errors)) = next else { return };
                // A closed queue means the store side stopped: stop too.
                if !queue(&out, &budget, parse_chunk(seq, envs, errors, &cfg)) {
                    return;
                }
            }
        });
        match start(format!("lkpbot-parse-{w}"), worker) {
            Ok(t) => threads.push(t),
            Err(e) => tracing::warn!(error = %e, "a parse worker could not start; the others parse"),
        }
    }
    drop(in_rx);
    // Without workers the reader parses what it reads.
    let direct = threads.is_empty().then(|| out_tx.clone());
    let input = (!threads.is_empty()).then_some(in_tx);
    let report = out_tx;
    let reader_budget = budget.clone();
    let reader = Box::new(move || {
        let mut seq = 0u64;
        let mut send = |envs: Vec<Envelope>, errors: Vec<SourceError>| -> bool {
            let ok = match (&direct, &input) {
                (Some(out), _) => queue(out, &reader_budget, parse_chunk(seq, envs, errors, &cfg)),
                (None, Some(input)) => input.send((seq, envs, errors)).is_ok(),
                (None, None) => false,
            };
            seq += 1;
            ok
        };
        let messages = match open() {
            Ok(m) => m,
            Err(e) => {
                send(Vec::new(), vec![e]);
                return;
            }
        };
        let mut chunk = Vec::with_capacity(CHUNK_MESSAGES);
        let mut errors = Vec::new();
        let mut bytes = 0;
        for env in messages {
            match env {
                Ok(e) => {
                    bytes += e.bytes.len();
                    chunk.push(e);
                }
                // One unreadable message: said, and the rest goes on.
                Err(e) if !e.is_fatal() => errors.push(e),
                Err(e) => {
                    errors.push(e);
                    send(std::mem::take(&mut chunk), errors);
                    return;
                }
            }
            if chunk.len() == CHUNK_MESSAGES || bytes >= CHUNK_BYTES || errors.len() >= CHUNK_MESSAGES {
                bytes = 0;
                if !send(std::mem::take(&mut chunk), std::mem::take(&mut errors)) {
                    return;
                }
            }
        }
        if !chunk.is_empty() || !errors.is_empty() {
            send(chunk, errors);
        }
    });
    match start("lkpbot-reader".into(), reader) {
        Ok(t) => threads.push(t),
        Err(e) => {
            // The queue is empty and has room: the engine reads this error
            // as the source's end.
            let _ =
                report.try_send(Chunk { seq: 0, weight: 0, items: Vec::new(), errors: vec![SourceError::Thread(e)] });
        }
    }
    (Chunks { rx: out_rx, budget }, threads)
}

/// Prepares the messages of one chunk.
fn parse_chunk(seq: u64, envs: Vec<Envelope>, errors: Vec<SourceError>, cfg: &ClassifyConfig) -> Chunk {
    let items: Vec<Item> = envs.into_iter().map(|e| Item::new(e, cfg)).collect();
    let weight = items.iter().map(Item::weight).sum();
    Chunk { seq, weight, items, errors }
}

/// The row of a message read at `fetched_at`; `settled` is decided when it
/// is stored.
pub fn message_row(m: &Incoming, fetched_at: i64) -> MessageRow {
    let mut subject = m.subject.clone();
    if subject.len() > MAX_SUBJECT {
        let mut cut = MAX_SUBJECT;
        while !subject.is_char_boundary(cut) {
            cut -= 1;
        }
        subject.truncate(cut);
    }
    MessageRow {
        message_id: m.message_id.to_string(),
        kind: m.kind().as_str(),
        subject,
        from_addr: m.from.clone(),
        date: m.date,
        fetched_at,
        problems: i64::try_from(m.problems.len()).unwrap_or(i64::MAX),
        settled: false,
    }
}

/// Stored messages parsed again ahead of their threading, on a thread of
/// its own. The end of an import threads again, one after another, the
/// messages it put off and what they wake
/// ([`super::threading::Threader::import_ended`]); parsing each again was
/// a fourth of that while the other core idled. The store side reads the
/// next messages of its queue (in its own transaction) and hands their
/// bytes over up to [`AHEAD`] messages before it threads them; they come
/// back parsed, in the same order.
///
/// A message's waiting row (its bytes, how its sender was verified, why
/// the bot withheld from it) changes only when that message itself is
/// stored, threaded or removed, and a message is in the queue once: so
/// what was read of a queued message is what reading it when its turn
/// comes would give.
pub(super) struct Ahead {
    /// Handed over, in queue order, with what of their rows is not parsed.
    sent: std::collections::VecDeque<(MessageId, Waiting)>,
    to: std::sync::mpsc::SyncSender<Vec<u8>>,
    from: std::sync::mpsc::Receiver<Option<Incoming>>,
}

/// How many messages [`Ahead`] parses before they are threaded, at most.
const AHEAD: usize = 4;

impl Ahead {
    /// Starts the thread; `None` if it cannot start (messages are then
    /// parsed as they are threaded).
    pub fn start(cfg: &ClassifyConfig) -> Option<Ahead> {
        let (to, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(AHEAD);
        let (tx, from) = std::sync::mpsc::sync_channel::<Option<Incoming>>(AHEAD);
        let cfg = cfg.clone();
        let work = Box::new(move || {
            for raw in rx {
                // Its bytes are freed here too, off the store's thread.
                if tx.send(prepare(&raw, raw.len() as u64, &cfg)).is_err() {
                    return;
                }
            }
        });
        match start_thread("lkpbot-again".into(), work) {
            Ok(_) => Some(Ahead { sent: Default::default(), to, from }),
            Err(e) => {
                tracing::warn!(error = %e, "no thread to parse waiting messages ahead: parsed as they are threaded");
                None
            }
        }
    }

    /// Whether nothing is handed over.
    pub fn idle(&self) -> bool {
        self.sent.is_empty()
    }

    /// Whether it takes another message.
    pub fn wants(&self) -> bool {
        self.sent.len() < AHEAD
    }

    /// Hands over `id`'s waiting row (its bytes are parsed on the
    /// thread); false if the thread is gone.
    pub fn send(&mut self, id: MessageId, mut waiting: Waiting) -> bool {
        let raw = std::mem::take(&mut waiting.raw);
        if self.to.send(raw).is_err() {
            return false;
        }
        self.sent.push_back((id, waiting));
        true
    }

    /// The queue's front was taken: `id` as parsed ahead, with the rest
    /// of its waiting row (`Some(None)`: it could not be parsed), if it
    /// was handed over; else `None` (it is read and parsed as without
    /// this), as when the thread is gone.
    pub fn take(&mut self, id: &MessageId) -> Option<(Waiting, Option<Incoming>)> {
        if self.sent.front().is_none_or(|(next, _)| next != id) {
            return None;
        }
        let (_, waiting) = self.sent.pop_front()?;
        let parsed = self.from.recv().ok()?;
        Some((waiting, parsed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn workers_run_behind_the_store() {
        // SAFETY: as in `yield_to_the_store`.
        let nice = || unsafe {
            libc::getpriority(libc::PRIO_PROCESS, libc::id_t::try_from(libc::syscall(libc::SYS_gettid)).unwrap())
        };
        let ours = nice();
        let (tx, rx) = std::sync::mpsc::channel();
        start_thread("w".into(), Box::new(move || tx.send(nice()).unwrap())).unwrap().join().unwrap();
        assert_eq!(rx.recv().unwrap(), (ours + BEHIND_THE_STORE).min(19));
        assert_eq!(nice(), ours, "the calling thread keeps its priority");
    }

    /// What is handed over comes back parsed, in order, with the rest of
    /// its row; a message that was not handed over (or not next) is left
    /// to its caller and takes nothing that was.
    #[test]
    fn waiting_mail_comes_back_parsed_in_queue_order() {
        let cfg = ClassifyConfig::default();
        let mut ahead = Ahead::start(&cfg).expect("a thread");
        let mail = |n: u32| format!("Message-ID: <m{n}@x>\nSubject: s{n}\nFrom: a@x\n\nbody {n}\n").into_bytes();
        let id = |n: u32| MessageId::new(&format!("m{n}@x")).unwrap();
        let row = |n: u32| Waiting {
            raw: mail(n),
            fetched_at: i64::from(n),
            auth: Default::default(),
            withheld: (n == 2).then(|| "withheld".to_string()),
        };
        // The queue: m0 (settled, say: nothing handed over), m1, m2, ...
        for n in 1..=AHEAD as u32 {
            assert!(ahead.wants());
            assert!(ahead.send(id(n), row(n)));
        }
        assert!(!ahead.wants(), "no more than AHEAD at once");
        // m0 is read by the caller.
        assert!(ahead.take(&id(0)).is_none());
        for n in 1..=AHEAD as u32 {
            let (waiting, parsed) = ahead.take(&id(n)).expect("handed over");
            let inc = parsed.expect("parsed");
            assert_eq!(inc.message_id, id(n));
            assert_eq!(waiting.fetched_at, i64::from(n));
            assert_eq!(waiting.withheld.is_some(), n == 2);
            assert!(waiting.raw.is_empty(), "the bytes went to the thread");
        }
        assert!(ahead.idle());
    }

    #[test]
    fn spent_mail_is_freed_on_a_thread_of_its_own() {
        /// Says on which thread it is dropped.
        struct Tell(std::sync::mpsc::Sender<Option<String>>);
        impl Drop for Tell {
            fn drop(&mut self) {
                let _ = self.0.send(std::thread::current().name().map(String::from));
            }
        }
        // Other tests' batches may fill the queue for a moment: then the
        // caller frees, so it is tried a few times.
        let freed_behind = (0..50).any(|_| {
            let (tx, rx) = std::sync::mpsc::channel();
            free_behind(Box::new(Tell(tx)));
            let on = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
            on.as_deref() == Some("lkpbot-free")
        });
        assert!(freed_behind, "never freed on its own thread");
    }

    /// A chunk waits while the queue's weight would pass the cap, a queue
    /// holding nothing takes any chunk, and a closed budget lets a waiting
    /// worker go with `false` (it would otherwise wait for ever once the
    /// store side stopped).
    #[test]
    fn the_queue_is_bounded_by_weight() {
        let b = std::sync::Arc::new(Budget::new(100));
        assert!(b.take(300), "an empty queue takes a chunk over the cap");
        b.give(300);
        assert!(b.take(60));
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = {
            let b = b.clone();
            std::thread::spawn(move || tx.send(b.take(60)).unwrap())
        };
        let waited = rx.recv_timeout(std::time::Duration::from_millis(200));
        assert!(waited.is_err(), "60 + 60 over a cap of 100 went through");
        b.give(60);
        assert!(rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap());
        waiter.join().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = {
            let b = b.clone();
            std::thread::spawn(move || tx.send(b.take(60)).unwrap())
        };
        assert!(rx.recv_timeout(std::time::Duration::from_millis(200)).is_err());
        b.close();
        assert!(!rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap(), "closed, yet taken");
        waiter.join().unwrap();
    }

    fn source(n: usize) -> Opener {
        Box::new(move || {
            let msgs: Vec<Result<Envelope, SourceError>> = (0..n)
                .map(|i| {
                    let raw = format!("Message-ID: <m{i}@x>\nSubject: s{i}\n\nbody\n");
                    Ok(Envelope::new(raw.into_bytes(), 1))
                })
                .collect();
            Ok(Box::new(msgs.into_iter()) as Envelopes)
        })
    }

    /// Every chunk the pipeline hands back, in source order.
    fn drain(mut rx: Chunks, threads: Vec<std::thread::JoinHandle<()>>) -> Vec<Chunk> {
        let mut out = Vec::new();
        while let Some(c) = rx.blocking_recv() {
            out.push(c);
        }
        for t in threads {
            t.join().unwrap();
        }
        out.sort_by_key(|c| c.seq);
        out
    }

    fn refuse(
        prefix: &'static str,
    ) -> impl Fn(String, Box<dyn FnOnce() + Send>) -> std::io::Result<std::thread::JoinHandle<()>> {
        move |name, f| {
            if name.starts_with(prefix) { Err(std::io::Error::other("no threads left")) } else { start_thread(name, f) }
        }
    }

    /// Parse workers that cannot start: the reader parses, and every
    /// message still comes back (it used to be lost without a word).
    #[test]
    fn workers_that_cannot_start_lose_nothing() {
        let (rx, threads) = spawn_with(source(200), ClassifyConfig::default(), &refuse("lkpbot-parse"));
        let chunks = drain(rx, threads);
        let ids: Vec<String> = chunks.iter().flat_map(|c| c.items.iter().map(|i| i.message_id.to_string())).collect();
        assert_eq!(ids.len(), 200);
        assert_eq!(ids[199], "m199@x");
        assert!(chunks.iter().all(|c| c.errors.is_empty()));
    }

    /// A reader that cannot start is the source's fatal error, not an
    /// empty source.
    #[test]
    fn a_reader_that_cannot_start_is_an_error() {
        let (rx, threads) = spawn_with(source(5), ClassifyConfig::default(), &refuse("lkpbot-"));
        let chunks = drain(rx, threads);
        assert_eq!(chunks.len(), 1);
        assert!(chunks[0].items.is_empty());
        assert!(matches!(chunks[0].errors[..], [SourceError::Thread(_)]));
        assert!(chunks[0].errors[0].is_fatal());
    }
}
