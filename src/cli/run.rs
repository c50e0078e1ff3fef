//! `lkpbot run [--once]`: the daemon, wired. The config's sources (their
//! secrets read now, so a missing one is a config error, exit 1), the
//! store, the engine, SIGINT and SIGTERM; the run itself is `daemon`.

use std::path::Path;

use anyhow::Context;

use super::cases::{open, runtime, summary, write_stdout};
use super::failure::Failure;
use crate::config::Config;
use crate::daemon::{self, Shutdown};
use crate::engine::Engine;

pub(super) fn run(
    cfg: &Config,
    config_path: Option<&Path>,
    db: &Path,
    once: bool,
    clock: daemon::Clock,
) -> Result<(), Failure> {
    let sources =
        daemon::sources(cfg, config_path.unwrap_or(Path::new("lkpbot.toml"))).map_err(|e| Failure::usage(e.into()))?;
    if sources.is_empty() {
        tracing::warn!("no sources configured (see config/example.toml): nothing to follow");
    }
    let rt = runtime()?;
    let report = rt.block_on(async {
        let store = open(db).await?;
        let engine = Engine::new(store, super::settings(cfg));
        let (stop, shutdown) = Shutdown::new();
        tokio::spawn(async move {
            wait_for_signal().await;
            tracing::info!("stopping: the batch in hand is stored first");
            let _ = stop.send(true);
        });
        let (report, engine) = daemon::run(engine, sources, cfg.bot.stale_days, once, clock, shutdown)
            .await
            .context("the store failed")
            .map_err(Failure::runtime)?;
        engine.into_store().close().await.context("cannot close the store").map_err(Failure::runtime)?;
        Ok::<_, Failure>(report)
    })?;
    write_stdout(&summary(&report.stats))?;
    if report.failures.is_empty() {
        return Ok(());
    }
    let all: Vec<String> = report.failures.iter().map(|f| format!("{}: {}", f.source, f.error)).collect();
    Err(Failure::runtime(anyhow::anyhow!("could not read {}", all.join("; "))))
}

/// SIGINT or SIGTERM, whichever comes first.
async fn wait_for_signal() {
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
