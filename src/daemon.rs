//! `lkpbot run`: every configured source followed, forever (or once),
//! through the one engine `ingest` uses.
//!
//! Each source is a task of its own: an IMAP mailbox (its own connection,
//! IDLE when the server offers it and the config allows, `poll_seconds`
//! as fallback and safety net), a Maildir or an mbox (looked at every
//! `poll_seconds`). A task asks the engine where its source has got to
//! (the checkpoint stored with the last message it stored), reads what is
//! new, and hands it over in batches; the engine task stores each batch in
//! one transaction, its checkpoints with it, before the task reads more.
//! So a crash at any instant loses nothing (what was not committed is
//! read again) and doubles nothing (messages are idempotent by
//! Message-ID).
//!
//! The periodic work (stale cases, retest reminders) runs hourly, and
//! also as soon as each source has made its first pass: a freshly
//! started daemon's cases are then what `ingest` of the same mail makes,
//! stale marks included.
//!
//! A source that fails (a bad password, a server down, a connection
//! dropped mid-fetch) is logged and retried with exponential backoff,
//! which starts again from the first wait once a pass has synced; the
//! others go on. On SIGINT or SIGTERM the engine finishes the batch in
//! hand and the run ends cleanly. With `once`, every source makes one
//! pass and the run ends; a source that could not be read then fails the
//! run, naming it and why.
//!
//! `[[trees]]` are followed by the engine task itself, between batches:
//! each tree's first pass comes once every mail source has made its
//! first pass (or a minute after the start, whichever is first), so the
//! mail that names its commits is in; then every `poll_seconds`. A tree
//! that cannot be read (not a repository, a branch gone) is logged,
//! naming it, and retried with backoff like a source; the rest goes on.
//! With `once`, every tree makes one pass after the sources', and one
//! that could not be read fails the run, naming it.
//!
//! Several runs may share a store (one per mailbox is a real layout):
//! each records itself in the store, says so when it finds another, and
//! sends only the mail it has claimed (see `deliver`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Notify, mpsc, oneshot, watch};

use crate::config::{Config, SourceConfig, SourceKind};
use crate::deliver::{Mailer, Sent};
use crate::engine::{Checkpoint, DigestPlan, Engine, Envelope, Envelopes, IngestStats, Opener, TreeSpec};
use crate::source::{SourceError, follow, imap, public_inbox};
use crate::store::{Store, StoreError};

/// The wall clock, as the caller reads it: seconds since the epoch.
pub type Clock = fn() -> i64;

/// The first wait after a failure; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(300);
/// RFC 2177: a client should renew IDLE before 29 minutes.
const MAX_IDLE: Duration = Duration::from_secs(29 * 60);
/// How often the daemon marks stale cases and reminds of retests.
const SWEEP_EVERY: Duration = Duration::from_secs(3600);
/// The longest the sender waits before looking at the outbox again.
const SEND_POLL: Duration = Duration::from_secs(60);
/// While mail waits for an SMTP server that did not take it, the sender
/// tries one again after this, doubling up to [`MAX_SERVER_PROBE`].
const FIRST_SERVER_PROBE: Duration = Duration::from_secs(1);
const MAX_SERVER_PROBE: Duration = Duration::from_secs(15);
/// A run not seen for this long is gone (killed): it touches its record
/// every [`TICK`].
const RUN_GONE: i64 = 5 * 60;

/// Exponential backoff: each wait twice the last, up to a maximum, from
/// the first again after a success.
#[derive(Clone, Copy, Debug)]
pub struct Backoff {
    first: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
    pub fn new(first: Duration, max: Duration) -> Backoff {
        Backoff { first, max, next: first }
    }

    /// The wait after one more failure.
    pub fn fail(&mut self) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(self.max);
        wait
    }

    /// Something worked: the next failure waits the first wait.
    pub fn reset(&mut self) {
        self.next = self.first;
    }
}

/// A source as the run knows it.
#[derive(Clone, Debug)]
pub struct SourceSpec {
    /// How it is named in logs, errors and checkpoints.
    pub name: String,
    pub kind: SpecKind,
    pub poll: Duration,
}

#[derive(Clone, Debug)]
pub enum SpecKind {
    Imap {
        account: imap::Account,
        mailbox: String,
        idle: bool,
        batch: usize,
    },
    Maildir {
        path: PathBuf,
    },
    Mbox {
        path: PathBuf,
    },
    /// A public-inbox v2 inbox: each epoch's checkpoint is its own
    /// (`NAME/git/N.git`).
    PublicInbox {
        path: PathBuf,
    },
}

/// The `[[trees]]` of a config, each with its poll interval.
pub fn trees(cfg: &Config) -> Vec<(TreeSpec, Duration)> {
    cfg.trees
        .iter()
        .map(|t| {
            let spec =
                TreeSpec { name: t.name.clone(), path: t.path.clone(), branch: t.branch.clone(), resolves: t.resolves };
            (spec, Duration::from_secs(t.poll_seconds()))
        })
        .collect()
}

/// A tree a run follows: when its next pass is due (`None`: once the
/// mail sources have made their first pass), its backoff after failures.
struct FollowedTree {
    spec: TreeSpec,
    poll: Duration,
    due: Option<Instant>,
    backoff: Backoff,
}

/// The trees of a run.
struct Trees(Vec<FollowedTree>);

/// A tree's first pass waits at most this long for the mail sources'.
const TREES_FIRST_WAIT: Duration = Duration::from_secs(60);

impl Trees {
    fn new(trees: Vec<(TreeSpec, Duration)>) -> Trees {
        let backoff = Backoff::new(FIRST_BACKOFF, MAX_BACKOFF);
        Trees(trees.into_iter().map(|(spec, poll)| FollowedTree { spec, poll, due: None, backoff }).collect())
    }

    /// Makes the first passes due now.
    fn start(&mut self) {
        for t in self.0.iter_mut().filter(|t| t.due.is_none()) {
            t.due = Some(Instant::now());
        }
    }

    /// Passes over the trees that are due; a tree that cannot be read is
    /// logged and tried again after its backoff. Only the store's
    /// failures are errors.
    async fn pass_due(&mut self, engine: &mut Engine, clock: Clock, started: Instant) -> Result<bool, StoreError> {
        if started.elapsed() >= TREES_FIRST_WAIT {
            self.start();
        }
        let mut any = false;
        for t in &mut self.0 {
            if t.due.is_none_or(|d| d > Instant::now()) {
                continue;
            }
            let wait = match tree_pass(engine, &t.spec, clock).await? {
                Ok(()) => {
                    any = true;
                    t.backoff.reset();
                    t.poll
                }
                Err(error) => {
                    let wait = t.backoff.fail();
                    tracing::warn!(tree = %t.spec.name, %error, retry_in = ?wait, "tree failed; retrying");
                    wait
                }
            };
            t.due = Some(Instant::now() + wait);
        }
        Ok(any)
    }

    /// One pass over every tree (a `once` run's); the trees that could
    /// not be read, with why.
    async fn pass_all(&self, engine: &mut Engine, clock: Clock) -> Result<Vec<SourceFailure>, StoreError> {
        let mut failed = Vec::new();
        for t in &self.0 {
            if let Err(error) = tree_pass(engine, &t.spec, clock).await? {
                failed.push(SourceFailure { source: t.spec.source(), error });
            }
        }
        Ok(failed)
    }
}

/// One pass over a tree, logged; its error names the tree.
async fn tree_pass(engine: &mut Engine, spec: &TreeSpec, clock: Clock) -> Result<Result<(), String>, StoreError> {
    let started = Instant::now();
    Ok(match engine.follow_tree(spec, clock()).await? {
        Ok(p) => {
            tracing::info!(
                tree = %spec.name,
                commits = p.commits,
                events = p.events,
                forgotten = p.forgotten,
                rewritten = p.rewritten,
                seconds = started.elapsed().as_secs_f64(),
                "tree read"
            );
            Ok(())
        }
        Err(e) => Err(e.to_string()),
    })
}

/// A source that could not be read in a `once` run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFailure {
    pub source: String,
    pub error: String,
}

/// The sources of a config, one per IMAP mailbox; secrets are read here.
pub fn sources(cfg: &Config, config_path: &std::path::Path) -> Result<Vec<SourceSpec>, crate::config::ConfigError> {
    let mut out = Vec::new();
    for (i, s) in cfg.sources.iter().enumerate() {
        let poll = Duration::from_secs(s.poll_seconds());
        match s.kind {
            SourceKind::Imap => {
                let account = imap_account(s, config_path, i)?;
                for mailbox in s.mailboxes() {
                    out.push(SourceSpec {
                        name: account.source_name(&mailbox),
                        kind: SpecKind::Imap {
                            account: account.clone(),
                            mailbox,
                            idle: s.idle.unwrap_or(true),
                            batch: s.batch(),
                        },
                        poll,
                    });
                }
            }
            SourceKind::Maildir | SourceKind::Mbox | SourceKind::PublicInbox => {
                let path = s.path.clone().unwrap_or_default();
                let abs = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
                let (name, kind) = match s.kind {
                    SourceKind::Maildir => (format!("maildir:{}", abs.display()), SpecKind::Maildir { path }),
                    SourceKind::Mbox => (format!("mbox:{}", abs.display()), SpecKind::Mbox { path }),
                    _ => (format!("public-inbox:{}", abs.display()), SpecKind::PublicInbox { path }),
                };
                out.push(SourceSpec { name, kind, poll });
            }
        }
    }
    Ok(out)
}

fn imap_account(
    s: &SourceConfig,
    config_path: &std::path::Path,
    i: usize,
) -> Result<imap::Account, crate::config::ConfigError> {
    Ok(imap::Account {
        host: s.host.clone().unwrap_or_default(),
        port: s.imap_port(),
        tls: s.tls(),
        user: s.user.clone().unwrap_or_default(),
        password: s.password(config_path, i)?,
        ca_file: s.ca_file.clone(),
    })
}

/// What a source task asks of the engine task.
enum Job {
    /// Where a source has got to.
    Checkpoint { source: String, reply: oneshot::Sender<Result<Option<String>, String>> },
    /// Store these messages (one transaction, their checkpoints with them).
    Store { envelopes: Vec<Envelope>, reply: oneshot::Sender<Result<(), String>> },
    /// Store what this opener yields (a local source's new messages); a
    /// long pass logs its progress, against `total` when it is known.
    Drain { open: Opener, what: String, total: Option<u64>, reply: oneshot::Sender<Result<Vec<SourceError>, String>> },
    /// A source has made a pass: it has stored everything it had.
    Synced { source: String },
}

/// A source task's way to the engine.
#[derive(Clone)]
struct EngineHandle(mpsc::Sender<Job>);

impl EngineHandle {
    async fn checkpoint(&self, source: &str) -> Result<Option<String>, String> {
        let (reply, rx) = oneshot::channel();
        self.0.send(Job::Checkpoint { source: source.to_string(), reply }).await.map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }

    async fn store(&self, envelopes: Vec<Envelope>) -> Result<(), String> {
        let (reply, rx) = oneshot::channel();
        self.0.send(Job::Store { envelopes, reply }).await.map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }

    async fn drain(&self, open: Opener, what: &str, total: Option<u64>) -> Result<Vec<SourceError>, String> {
        let (reply, rx) = oneshot::channel();
        self.0.send(Job::Drain { open, what: what.to_string(), total, reply }).await.map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }

    /// Says a pass is done; nothing to wait for (a run that is stopping
    /// does its periodic work at the end anyway).
    async fn synced(&self, source: &str) {
        let _ = self.0.send(Job::Synced { source: source.to_string() }).await;
    }
}

fn stopped() -> String {
    "the run is stopping".into()
}

/// Turns true when the run should stop.
#[derive(Clone)]
pub struct Shutdown(watch::Receiver<bool>);

impl Shutdown {
    pub fn new() -> (watch::Sender<bool>, Shutdown) {
        let (tx, rx) = watch::channel(false);
        (tx, Shutdown(rx))
    }

    pub fn is_set(&self) -> bool {
        *self.0.borrow()
    }

    /// Returns when the run should stop.
    pub async fn wait(&mut self) {
        while !*self.0.borrow_and_update() {
            if self.0.changed().await.is_err() {
                // The sender is gone: nobody can ask to stop any more.
                std::future::pending::<()>().await;
            }
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    pub stats: IngestStats,
    pub failures: Vec<SourceFailure>,
    /// Mails sent, and tries that failed (to be retried).
    pub sent: Sent,
}

/// How a run goes besides its sources.
pub struct RunSettings {
    pub stale_days: i64,
    /// Days before an unanswered retest request is reminded (then timed
    /// out).
    pub remind_days: i64,
    pub once: bool,
    pub clock: Clock,
    /// What sends the outbox, and its own connection to the store (the
    /// engine keeps writing through its own).
    pub sender: Option<(Mailer, Store)>,
    /// When the weekly digest goes out (Monday is 0; the hour is UTC), and
    /// to whom.
    pub digest: Option<(u8, u8, DigestPlan)>,
    /// The `[[trees]]` followed, each with its poll interval.
    pub trees: Vec<(TreeSpec, Duration)>,
}

/// How often the run looks at the clock for its periodic work (the digest,
/// stale cases, reminders) when no mail comes.
const TICK: Duration = Duration::from_secs(60);

/// The periodic work of a run: cases without activity for `stale_days`
/// marked stale, unanswered retest requests reminded (and timed out).
async fn sweep(engine: &mut Engine, stale_days: i64, remind_days: i64, now: i64) -> Result<(), StoreError> {
    if stale_days > 0 {
        engine.sweep_stale(now, stale_days).await?;
    }
    engine.remind(now, remind_days).await
}

/// Queues the digest if one is due and not queued by this run yet.
async fn digest_if_due(
    engine: &mut Engine,
    digest: &Option<(u8, u8, DigestPlan)>,
    last: &mut Option<String>,
    now: i64,
) -> Result<bool, StoreError> {
    let Some((weekday, hour, plan)) = digest else { return Ok(false) };
    let Some(week) = crate::digest::due_week(now, *weekday, *hour) else { return Ok(false) };
    if last.as_deref() == Some(week.name.as_str()) {
        return Ok(false);
    }
    let queued = engine.queue_digests(&week, plan, now).await?;
    *last = Some(week.name);
    Ok(queued > 0)
}

/// Runs every source through `engine` until `shutdown` (or, with `once`,
/// until each has made one pass).
pub async fn run(
    mut engine: Engine,
    sources: Vec<SourceSpec>,
    settings: RunSettings,
    shutdown: Shutdown,
) -> Result<(RunReport, Engine), StoreError> {
    let RunSettings { stale_days, remind_days, once, clock, sender, digest, trees } = settings;
    let mut trees = Trees::new(trees);
    let started = Instant::now();
    let mail_sources = sources.len();
    let me = announce(&mut engine, clock).await?;
    let mut digested: Option<String> = None;
    let mut tick = tokio::time::interval(TICK);
    let outbox = Arc::new(Notify::new());
    let (engine_done, done) = watch::channel(false);
    let sending = sender.map(|(s, store)| tokio::spawn(send_loop(s, store, outbox.clone(), done, clock, once)));
    let (tx, mut rx) = mpsc::channel::<Job>(4);
    let mut tasks = spawn_sources(sources, EngineHandle(tx), once, clock, &shutdown);
    let mut report = RunReport::default();
    let mut stop = shutdown.clone();
    let mut last_sweep = Instant::now();
    // Sources that have made their first pass: each first pass is swept at
    // once, so a fresh daemon's cases are at once what `ingest` of the same
    // mail makes (stale marks included), not an hour later.
    let mut synced = std::collections::HashSet::new();
    // Open while a mail source may send work; a run with no mail source
    // but trees goes on following them.
    let mut mail_open = true;
    loop {
        let job = tokio::select! {
            job = rx.recv(), if mail_open => job.map(Some),
            _ = tick.tick(), if !once => Some(None),
            _ = stop.wait() => None,
        };
        let Some(job) = job else {
            if mail_open && !once && !shutdown.is_set() && !trees.0.is_empty() {
                mail_open = false;
                trees.start();
                trees.pass_due(&mut engine, clock, started).await?;
                continue;
            }
            break;
        };
        let Some(job) = job else {
            // A tick: the periodic work below, nothing stored.
            let r = async {
                engine.store().touch_run(&me.owner, clock()).await?;
                if digest_if_due(&mut engine, &digest, &mut digested, clock()).await? {
                    outbox.notify_one();
                }
                if last_sweep.elapsed() >= SWEEP_EVERY {
                    sweep(&mut engine, stale_days, remind_days, clock()).await?;
                    outbox.notify_one();
                    last_sweep = Instant::now();
                }
                Ok(())
            }
            .await;
            if let Err(e) = r {
                recover(engine.store(), e).await?;
            }
            if trees.pass_due(&mut engine, clock, started).await? {
                outbox.notify_one();
            }
            continue;
        };
        if let Job::Synced { source } = job {
            // A `once` run sweeps when its passes are done.
            if !once && synced.insert(source.clone()) {
                if let Err(e) = sweep(&mut engine, stale_days, remind_days, clock()).await {
                    synced.remove(&source);
                    recover(engine.store(), e).await?;
                    continue;
                }
                tracing::info!(%source, "first pass done: stale cases marked, retests reminded");
                if synced.len() >= mail_sources {
                    trees.start();
                    trees.pass_due(&mut engine, clock, started).await?;
                }
                outbox.notify_one();
                last_sweep = Instant::now();
            }
            continue;
        }
        let r = async {
            answer(&mut engine, job).await?;
            add(&mut report.stats, &engine.finish().await?);
            Ok(())
        }
        .await;
        if let Err(e) = r {
            recover(engine.store(), e).await?;
        }
        outbox.notify_one();
    }
    drop(rx);
    while let Some(r) = tasks.join_next().await {
        match r {
            Ok(Err(f)) => report.failures.push(f),
            Ok(Ok(())) => {}
            Err(e) => report.failures.push(SourceFailure { source: "?".into(), error: e.to_string() }),
        }
    }
    add(&mut report.stats, &engine.finish().await?);
    if once {
        // The trees after the mail their commits may name.
        report.failures.extend(trees.pass_all(&mut engine, clock).await?);
    }
    sweep(&mut engine, stale_days, remind_days, clock()).await?;
    digest_if_due(&mut engine, &digest, &mut digested, clock()).await?;
    // The sender sends what is due now, then stops.
    let _ = engine_done.send(true);
    if let Some(t) = sending {
        match t.await {
            Ok(Ok(s)) => report.sent = s,
            Ok(Err(e)) => return Err(e),
            Err(e) => tracing::error!(error = %e, "the sender stopped"),
        }
    }
    engine.store().end_run(&me.owner).await?;
    Ok((report, engine))
}

/// After a store error: when it was the connection (a PostgreSQL server
/// restarted or failed over), connect again, waiting with backoff, and
/// go on. The transaction the connection was in never committed, so no
/// batch is half-stored: the source that sent it heard of the failure
/// and fetches it again from its stored checkpoint. Any other error (and
/// a server that does not come back) ends the run.
async fn recover(store: &mut Store, e: StoreError) -> Result<(), StoreError> {
    match store.reconnect_if_lost().await {
        Ok(true) => {
            tracing::warn!(error = %e, "the store's connection was lost: connected again, the batch is fetched again");
            Ok(())
        }
        Ok(false) => Err(e),
        Err(again) => {
            tracing::error!(error = %again, "the store's server did not come back");
            Err(e)
        }
    }
}

/// Records this run in the store and warns of any other run using it
/// (they share the work: each mail goes out through whichever claims it).
async fn announce(engine: &mut Engine, clock: Clock) -> Result<crate::store::RunRecord, StoreError> {
    let me = crate::store::RunRecord {
        owner: crate::deliver::process_name(clock),
        host: crate::deliver::host_name(),
        pid: i64::from(std::process::id()),
        started_at: clock(),
        seen_at: clock(),
    };
    for other in engine.store().register_run(&me, clock() - RUN_GONE).await? {
        tracing::warn!(
            pid = other.pid,
            host = %other.host,
            since = other.started_at,
            "another lkpbot run is using this store: the two share the work, each mail sent by whichever claims it"
        );
    }
    Ok(me)
}

/// A task per source, each reaching the engine through its own clone of
/// `handle`; the engine's channel closes when the last one ends.
fn spawn_sources(
    sources: Vec<SourceSpec>,
    handle: EngineHandle,
    once: bool,
    clock: Clock,
    shutdown: &Shutdown,
) -> tokio::task::JoinSet<Result<(), SourceFailure>> {
    let mut tasks = tokio::task::JoinSet::new();
    for spec in sources {
        let (h, sd) = (handle.clone(), shutdown.clone());
        tasks.spawn(async move {
            let name = spec.name.clone();
            follow_source(spec, h, once, clock, sd).await.map_err(|error| SourceFailure { source: name, error })
        });
    }
    tasks
}

/// Does what a source task asked and answers it. A store that fails
/// fails the run: the source hears why, and the error ends the run.
async fn answer(engine: &mut Engine, job: Job) -> Result<(), StoreError> {
    fn reply<T>(to: oneshot::Sender<Result<T, String>>, r: Result<T, StoreError>) -> Result<(), StoreError> {
        match r {
            Ok(x) => {
                let _ = to.send(Ok(x));
                Ok(())
            }
            Err(e) => {
                let _ = to.send(Err(e.to_string()));
                Err(e)
            }
        }
    }
    match job {
        Job::Checkpoint { source, reply: to } => reply(to, engine.store().checkpoint(&source).await),
        Job::Store { envelopes, reply: to } => reply(to, store_batch(engine, envelopes).await),
        Job::Drain { open, what, total, reply: to } => reply(to, drain(engine, open, what, total).await),
        Job::Synced { .. } => Ok(()),
    }
}

/// Sends the outbox whenever the engine has queued mail, and when a retry
/// is due; after the engine is `done`, one last pass of what is due, then
/// it ends.
async fn send_loop(
    sender: Mailer,
    mut store: Store,
    queued: Arc<Notify>,
    mut done: watch::Receiver<bool>,
    clock: Clock,
    once: bool,
) -> Result<Sent, StoreError> {
    tracing::info!(to = %sender.describe(), "sending the outbox");
    let mut total = Sent::default();
    let mut probe = Backoff::new(FIRST_SERVER_PROBE, MAX_SERVER_PROBE);
    loop {
        let finished = *done.borrow_and_update();
        // The last pass of a `--once` run tries everything unsent.
        let r = async {
            let s =
                if finished && once { sender.send_all(&mut store).await? } else { sender.send_due(&mut store).await? };
            total.sent += s.sent;
            total.failed += s.failed;
            if finished {
                return Ok(None);
            }
            // Until the engine queues more, the next retry is due, or the
            // engine is done (and at least once a minute); while mail waits
            // for a server, soon enough to see it back.
            let mut wait = match store.next_mail_due().await? {
                Some(t) => Duration::from_secs(u64::try_from(t - clock()).unwrap_or(0)).min(SEND_POLL),
                None => SEND_POLL,
            };
            if s.sent > 0 {
                probe.reset();
            }
            if store.waits_for_server().await? {
                wait = wait.min(probe.fail());
            }
            Ok(Some(wait))
        }
        .await;
        let wait = match r {
            Ok(Some(wait)) => wait,
            Ok(None) => break,
            Err(e) => {
                recover(&mut store, e).await?;
                Duration::ZERO
            }
        };
        tokio::select! {
            _ = queued.notified() => {}
            _ = tokio::time::sleep(wait.max(Duration::from_millis(100))) => {}
            _ = done.changed() => {}
        }
    }
    store.close().await?;
    Ok(total)
}

/// Stores what a local source yields, logging the progress of a long pass.
async fn drain(
    engine: &mut Engine,
    open: Opener,
    what: String,
    total: Option<u64>,
) -> Result<Vec<SourceError>, StoreError> {
    let mut meter = crate::engine::progress::Meter::new(what, total);
    engine.ingest(open, &mut |p| meter.log(&p)).await
}

/// Stores one batch in one transaction; large batches are parsed on the
/// engine's worker threads.
async fn store_batch(engine: &mut Engine, envelopes: Vec<Envelope>) -> Result<(), StoreError> {
    let n = envelopes.len();
    let open: Opener = Box::new(move || Ok(Box::new(envelopes.into_iter().map(Ok)) as Envelopes));
    engine.ingest(open, &mut |_| {}).await?;
    tracing::debug!(messages = n, "batch stored");
    Ok(())
}

fn add(total: &mut IngestStats, s: &IngestStats) {
    total.read += s.read;
    total.new += s.new;
    total.duplicates += s.duplicates;
    total.reports += s.reports;
    total.build_summaries += s.build_summaries;
    total.cases_opened += s.cases_opened;
    total.attached += s.attached;
    total.problems += s.problems;
    total.unreadable_sources += s.unreadable_sources;
    total.unreadable_messages += s.unreadable_messages;
    total.removed += s.removed;
}

/// One source, forever: passes over what is new, a wait between them,
/// and backoff after failures. With `once`, one pass; its failure is the
/// task's.
async fn follow_source(
    spec: SourceSpec,
    engine: EngineHandle,
    once: bool,
    clock: Clock,
    mut shutdown: Shutdown,
) -> Result<(), String> {
    let mut backoff = Backoff::new(FIRST_BACKOFF, MAX_BACKOFF);
    loop {
        let mut synced = false;
        let r = tokio::select! {
            r = source_session(&spec, &engine, once, clock, &mut synced) => r,
            _ = shutdown.wait() => return Ok(()),
        };
        // A connection that synced was a good one: the drop that ended it
        // is the first of its kind.
        if synced {
            backoff.reset();
        }
        match r {
            Ok(()) => return Ok(()),
            // Stopping is not the source's failure.
            Err(_) if shutdown.is_set() => return Ok(()),
            Err(e) if once => return Err(e),
            Err(e) => {
                let wait = backoff.fail();
                tracing::warn!(source = %spec.name, error = %e, retry_in = ?wait, "source failed; retrying");
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = shutdown.wait() => return Ok(()),
                }
            }
        }
    }
}

/// One connection's worth of a source: passes until an error (which ends
/// it) or, with `once`, after the first pass. `good` turns true when a
/// pass has been stored.
async fn source_session(
    spec: &SourceSpec,
    engine: &EngineHandle,
    once: bool,
    clock: Clock,
    good: &mut bool,
) -> Result<(), String> {
    match &spec.kind {
        SpecKind::Imap { account, mailbox, idle, batch } => {
            let mut session = imap::connect(account).await.map_err(|e| e.to_string())?;
            let use_idle = *idle && imap::has_idle(&mut session).await.map_err(|e| e.to_string())?;
            loop {
                let started = Instant::now();
                let after = engine.checkpoint(&spec.name).await?;
                let synced =
                    imap::sync_mailbox(&mut session, account, mailbox, after.as_deref(), *batch, clock, |envs| {
                        let engine = engine.clone();
                        async move { engine.store(envs).await }
                    })
                    .await
                    .map_err(|e| e.to_string())?;
                tracing::info!(
                    source = %spec.name,
                    messages = synced.messages,
                    full = synced.full,
                    seconds = started.elapsed().as_secs_f64(),
                    "synced"
                );
                *good = true;
                engine.synced(&spec.name).await;
                if once {
                    let _ = session.logout().await;
                    return Ok(());
                }
                if use_idle {
                    let (s, woken) = imap::idle(session, spec.poll.min(MAX_IDLE)).await.map_err(|e| e.to_string())?;
                    session = s;
                    tracing::debug!(source = %spec.name, ?woken, "idle ended");
                } else {
                    tokio::time::sleep(spec.poll).await;
                    session.noop().await.map_err(|e| format!("NOOP: {e}"))?;
                }
            }
        }
        SpecKind::Maildir { path } | SpecKind::Mbox { path } => loop {
            let started = Instant::now();
            let after = engine.checkpoint(&spec.name).await?;
            let (path, name, maildir) =
                (path.clone(), spec.name.clone(), matches!(spec.kind, SpecKind::Maildir { .. }));
            let fetched_at = clock();
            let open: Opener = Box::new(move || {
                let it: Envelopes = if maildir {
                    Box::new(follow::maildir_after(&path, &name, after.as_deref(), fetched_at)?)
                } else {
                    let settle = (!once).then_some(fetched_at);
                    Box::new(follow::mbox_after(&path, &name, after.as_deref(), fetched_at, settle)?)
                };
                Ok(it)
            });
            let errors = engine.drain(open, &spec.name, None).await?;
            local_pass_done(spec, engine, started, &errors, good).await?;
            if once {
                return Ok(());
            }
            tokio::time::sleep(spec.poll).await;
        },
        SpecKind::PublicInbox { path } => loop {
            let started = Instant::now();
            let epochs = public_inbox::epochs(path).map_err(|e| e.to_string())?;
            let mut todo = Vec::new();
            for epoch in epochs {
                let token = engine.checkpoint(&public_inbox::epoch_source(&spec.name, &epoch)).await?;
                todo.push((epoch, token));
            }
            // What is left to read, for the progress of a long pass
            // (walking the history is quick next to reading it).
            let counted = todo.clone();
            let total = tokio::task::spawn_blocking(move || {
                counted.iter().map(|(e, t)| public_inbox::pending(&e.path, t.as_deref()).unwrap_or(0)).sum::<u64>()
            })
            .await
            .ok();
            let (inbox, fetched_at) = (spec.name.clone(), clock());
            let open: Opener = Box::new(move || {
                let read = public_inbox::InboxReader::new(todo).map(move |r| {
                    r.map(|(epoch, entry)| {
                        let source = public_inbox::epoch_source(&inbox, &epoch);
                        let checkpoint = Checkpoint { source, token: entry.position.token() };
                        Envelope::from_raw(entry.raw, fetched_at, Some(checkpoint))
                    })
                });
                Ok(Box::new(read) as Envelopes)
            });
            let errors = engine.drain(open, &spec.name, total).await?;
            local_pass_done(spec, engine, started, &errors, good).await?;
            if once {
                return Ok(());
            }
            tokio::time::sleep(spec.poll).await;
        },
    }
}

/// Ends a pass over a local source (Maildir, mbox, public-inbox): its
/// errors judged, the pass logged, the session marked good and the
/// engine told, so the first pass is swept at once.
async fn local_pass_done(
    spec: &SourceSpec,
    engine: &EngineHandle,
    started: Instant,
    errors: &[SourceError],
    good: &mut bool,
) -> Result<(), String> {
    pass_errors(&spec.name, errors)?;
    tracing::info!(source = %spec.name, seconds = started.elapsed().as_secs_f64(), "synced");
    *good = true;
    engine.synced(&spec.name).await;
    Ok(())
}

/// What could not be read in a pass over a local source: a message is
/// logged (the rest was read, and it is read again next pass where its
/// source can tell); the source, or a part of it (an epoch), fails the
/// pass.
fn pass_errors(source: &str, errors: &[SourceError]) -> Result<(), String> {
    for e in errors.iter().filter(|e| e.is_message()) {
        tracing::warn!(source, error = %e, "cannot read a message");
    }
    let failed: Vec<String> = errors.iter().filter(|e| !e.is_message()).map(|e| e.to_string()).collect();
    if failed.is_empty() { Ok(()) } else { Err(failed.join("; ")) }
}
