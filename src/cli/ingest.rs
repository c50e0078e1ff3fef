//! `lkpbot ingest`: mbox files, Maildirs and `.eml` files through the
//! engine into the store, with a progress bar on a terminal and a
//! summary; `--act` sends what it answered.

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::store::Location;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use super::failure::Failure;
use super::store::{open, runtime, write_stdout};
use crate::engine::progress::Meter;
use crate::engine::{Engine, IngestStats, Settings};

/// `lkpbot ingest PATH...`
pub fn ingest(
    db: &Location,
    paths: &[PathBuf],
    settings: Settings,
    send: Option<(crate::config::Config, PathBuf)>,
    stale_days: Option<i64>,
    now: i64,
) -> Result<(), Failure> {
    let rt = runtime()?;
    let (stats, failed) = rt.block_on(async {
        let store = open(db).await?;
        let mut engine = Engine::new(store, settings);
        // Counted once: a public-inbox's count walks each epoch's history.
        let hints: Vec<u64> = paths.iter().map(|p| crate::source::size_hint(p)).collect();
        let total: u64 = hints.iter().sum();
        let bar = progress_bar(total);
        let mut meter = Meter::new(describe_paths(paths), Some(total));
        let mut done_bytes = 0;
        let mut failed = Vec::new();
        for (path, hint) in paths.iter().zip(&hints) {
            let mut on_progress = |p: crate::engine::Progress| {
                let p = crate::engine::Progress { offset: Some(done_bytes + p.offset.unwrap_or(0)), ..p };
                match &bar {
                    Some(b) => {
                        b.set_position(p.offset.unwrap_or(0));
                        if p.messages.is_multiple_of(256) {
                            b.set_message(meter.describe(&p));
                        }
                    }
                    None => meter.log(&p),
                }
            };
            let r = engine.ingest_path(path, now, &mut on_progress).await;
            let errors = r
                .with_context(|| format!("cannot store messages from {}", path.display()))
                .map_err(Failure::runtime)?;
            for e in &errors {
                if let Some(b) = &bar {
                    b.suspend(|| eprintln!("lkpbot: {e}"));
                } else {
                    eprintln!("lkpbot: {e}");
                }
            }
            if !errors.is_empty() {
                failed.push(path.display().to_string());
            }
            done_bytes += hint;
        }
        let stats = engine.finish().await.context("cannot finish the import").map_err(Failure::runtime)?;
        if let Some(days) = stale_days {
            engine.sweep_stale(now, days).await.context("cannot mark stale cases").map_err(Failure::runtime)?;
        }
        let mut store = engine.into_store();
        if let Some((cfg, path)) = &send {
            let sender =
                crate::deliver::Mailer::from_config(cfg, path, super::now).map_err(|e| Failure::usage(e.into()))?;
            let sent = sender.send_due(&mut store).await.context("cannot send the outbox").map_err(Failure::runtime)?;
            if sent.failed > 0 {
                eprintln!("lkpbot: {} mails could not be sent yet; `lkpbot outbox` says why", sent.failed);
            }
        }
        store.close().await.context("cannot close the store").map_err(Failure::runtime)?;
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        Ok::<_, Failure>((stats, failed))
    })?;
    write_stdout(&summary(&stats))?;
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::usage(anyhow::anyhow!("could not read: {}", failed.join(", "))))
    }
}

/// What an import reads, for its progress lines.
fn describe_paths(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(" ")
}

/// A progress bar on stderr, only when stderr is a terminal (otherwise
/// progress is logged every few seconds): how much of the input is read
/// (bytes of mbox files, commits of public-inboxes), messages, their rate
/// and the time left.
fn progress_bar(total: u64) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = if total > 0 { ProgressBar::new(total) } else { ProgressBar::new_spinner() };
    let style = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}

/// The summary `ingest` prints.
pub fn summary(s: &IngestStats) -> String {
    let rows = [
        ("messages read", s.read),
        ("new", s.new),
        ("duplicates", s.duplicates),
        ("reports", s.reports),
        ("  of which build summaries", s.build_summaries),
        ("cases opened", s.cases_opened),
        ("messages attached", s.attached),
        ("problems", s.problems),
    ];
    let mut out = String::new();
    for (label, n) in rows {
        out.push_str(&format!("{label:<28}{n:>8}\n"));
    }
    if s.unreadable_sources > 0 {
        out.push_str(&format!("{:<28}{:>8}\n", "unreadable sources", s.unreadable_sources));
    }
    if s.unreadable_messages > 0 {
        out.push_str(&format!("{:<28}{:>8}\n", "unreadable messages", s.unreadable_messages));
    }
    if s.removed > 0 {
        out.push_str(&format!("{:<28}{:>8}\n", "removed by the archive", s.removed));
    }
    out
}
