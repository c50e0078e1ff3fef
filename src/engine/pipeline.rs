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
use crate::store::rows::{MessageRow, message_row};
use crate::thread::Incoming;

/// A source of messages: opened on the reader thread, then drained.
pub type Messages = Box<dyn Iterator<Item = Result<Envelope, SourceError>>>;
pub type Opener = Box<dyn FnOnce() -> Result<Messages, SourceError> + Send>;

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
/// a thread never joins a case.
fn keeps_raw(incoming: &Incoming) -> bool {
    !(incoming.kind() == Kind::Unrelated && incoming.ancestors.is_empty())
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
        Incoming::new(&m, c)
    }))
    .ok()
}

/// Consecutive messages of a source, prepared together, with the errors
/// met reading them (in source order: a fatal one ends the source, the
/// others each name a message that could not be read).
pub(super) struct Chunk {
    pub seq: u64,
    pub items: Vec<Item>,
    pub errors: Vec<SourceError>,
}

/// Messages per chunk: enough to make the hand-off between threads cheap;
/// and bytes, so a run of large reports does not make a large chunk.
const CHUNK_MESSAGES: usize = 64;
const CHUNK_BYTES: usize = 256 << 10;
/// Chunks parsed ahead of the store: a batch's worth of bytes, so the
/// workers go on while a batch is written.
const QUEUED_CHUNKS: usize = super::BATCH_BYTES / CHUNK_BYTES;

type WorkerInput = (u64, Vec<Envelope>, Vec<SourceError>);

/// Starts the reader thread and the parse workers. Memory stays bounded:
/// each worker holds two chunks in its queue and one in hand, and the
/// merged queue [`QUEUED_CHUNKS`].
pub(super) fn spawn(
    open: Opener,
    cfg: ClassifyConfig,
) -> (tokio::sync::mpsc::Receiver<Chunk>, Vec<std::thread::JoinHandle<()>>) {
    // Two parse workers keep one store busy; more only add memory.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 2);
    let (out_tx, out_rx) = tokio::sync::mpsc::channel::<Chunk>(QUEUED_CHUNKS);
    let mut threads = Vec::new();
    let mut inputs = Vec::new();
    for w in 0..workers {
        let (in_tx, in_rx) = std::sync::mpsc::sync_channel::<WorkerInput>(2);
        inputs.push(in_tx);
        let out = out_tx.clone();
        let cfg = cfg.clone();
        let spawned = std::thread::Builder::new().name(format!("lkpbot-parse-{w}")).spawn(move || {
            for (seq, envs, errors) in in_rx {
                let items = envs.into_iter().map(|e| Item::new(e, &cfg)).collect();
                // A closed queue means the store side stopped: stop too.
                if out.blocking_send(Chunk { seq, items, errors }).is_err() {
                    return;
                }
            }
        });
        threads.extend(spawned.ok());
    }
    drop(out_tx);
    let reader = std::thread::Builder::new().name("lkpbot-reader".into()).spawn(move || {
        let mut seq = 0u64;
        let mut send = |envs: Vec<Envelope>, errors: Vec<SourceError>| -> bool {
            let Some(input) = inputs.get(usize::try_from(seq).unwrap_or(0) % inputs.len().max(1)) else {
                return false;
            };
            let ok = input.send((seq, envs, errors)).is_ok();
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
    threads.extend(reader.ok());
    (out_rx, threads)
}
