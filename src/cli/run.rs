//! `lkpbot run [--once]`: the daemon, wired. The config's sources (their
//! secrets read now, so a missing one is a config error, exit 1), the
//! store, the engine, SIGINT and SIGTERM; the run itself is `daemon`.

use std::path::Path;

use anyhow::Context;

use super::failure::Failure;
use super::ingest::summary;
use super::store::{open, runtime, write_stdout};
use crate::config::Config;
use crate::daemon::{self, RunSettings, Shutdown};
use crate::deliver::Mailer;
use crate::engine::Engine;
use crate::store::{Location, Store};

pub(super) fn run(
    cfg: &Config,
    config_path: Option<&Path>,
    db: &Location,
    once: bool,
    clock: daemon::Clock,
) -> Result<(), Failure> {
    let config_path = config_path.unwrap_or(Path::new("lkpbot.toml"));
    let plan = super::digest_plan(cfg)?;
    let sources = daemon::sources(cfg, config_path).map_err(|e| Failure::usage(e.into()))?;
    let trees = daemon::trees(cfg);
    if sources.is_empty() && trees.is_empty() {
        tracing::warn!("no sources configured (see config/example.toml): nothing to follow");
    }
    let rt = runtime()?;
    let report = rt.block_on(async {
        // The SMTP connection pool lives in the runtime: build it here.
        let sender = Mailer::from_config(cfg, config_path, clock).map_err(|e| Failure::usage(e.into()))?;
        let store = open(db).await?;
        // The sender writes what it sent through a connection of its own.
        let outbox_store = Store::connect(db).await.map_err(|e| Failure::runtime(e.into()))?;
        let engine = Engine::new(store, super::acting_settings_with_auth(cfg, Some(config_path), clock)?);
        let (stop, shutdown) = Shutdown::new();
        tokio::spawn(async move {
            wait_for_signal().await;
            tracing::info!("stopping: the batch in hand is stored first");
            let _ = stop.send(true);
        });
        let settings = RunSettings {
            stale_days: cfg.bot.stale_days,
            remind_days: cfg.retest.remind_days,
            once,
            clock,
            sender: Some((sender, outbox_store)),
            digest: Some((cfg.digest.weekday_index(), cfg.digest.hour, plan)),
            trees,
        };
        let (report, engine) = daemon::run(engine, sources, settings, shutdown)
            .await
            .context("the store failed")
            .map_err(Failure::runtime)?;
        engine.into_store().close().await.context("cannot close the store").map_err(Failure::runtime)?;
        Ok::<_, Failure>(report)
    })?;
    let mut text = summary(&report.stats);
    text.push_str(&format!("{:<28}{:>8}\n", "mails sent", report.sent.sent));
    if report.sent.failed > 0 {
        text.push_str(&format!("{:<28}{:>8}\n", "mails to retry", report.sent.failed));
    }
    write_stdout(&text)?;
    if report.failures.is_empty() {
        return Ok(());
    }
    let all: Vec<String> = report.failures.iter().map(|f| format!("{}: {}", f.source, f.error)).collect();
    Err(Failure::runtime(anyhow::anyhow!("could not read {}", all.join("; "))))
}

/// SIGINT or SIGTERM, whichever comes first.
pub(super) async fn wait_for_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}

/// `lkpbot digest --send`: queues the digest of `week` for every
/// recipient (at most once per week and recipient) and sends the outbox.
pub(super) fn send_digest(
    cfg: &Config,
    config_path: &Path,
    db: &Location,
    week: &crate::digest::Week,
    plan: &crate::engine::DigestPlan,
    clock: daemon::Clock,
) -> Result<(), Failure> {
    let rt = runtime()?;
    let (queued, sent) = rt.block_on(async {
        let sender = Mailer::from_config(cfg, config_path, clock).map_err(|e| Failure::usage(e.into()))?;
        let store = open(db).await?;
        let mut engine = Engine::new(store, super::acting_settings(cfg, clock));
        let queued = engine
            .queue_digests(week, plan, clock())
            .await
            .context("cannot queue the digest")
            .map_err(Failure::runtime)?;
        let mut store = engine.into_store();
        let sent = sender.send_all(&mut store).await.context("cannot send the outbox").map_err(Failure::runtime)?;
        store.close().await.context("cannot close the store").map_err(Failure::runtime)?;
        Ok::<_, Failure>((queued, sent))
    })?;
    write_stdout(&format!("digest {}: {queued} queued, {} sent, {} to retry\n", week.name, sent.sent, sent.failed))
}
