//! Command-line interface: parses arguments, builds the parts, runs one
//! command, and maps failures to exit codes (0 success, 1 usage or config
//! error, 2 run-time failure). Data goes to stdout; logs, progress and
//! errors to stderr. `classify` is the command without a store,
//! `cases` the store-backed ones; `failure` the exit codes.

mod cases;
mod classify;
mod failure;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use cases::summary;
pub use failure::{Failure, describe};

#[derive(Debug, Parser)]
#[command(
    name = "lkpbot",
    version,
    about = "Tracks kernel test robot (LKP) reports on a mailing list as regression cases"
)]
pub struct Cli {
    /// Configuration file (TOML); without it the embedded defaults apply.
    #[arg(long, global = true, env = "LKPBOT_CONFIG")]
    pub config: Option<PathBuf>,
    /// Store path; overrides the config file.
    #[arg(long, global = true, env = "LKPBOT_DB")]
    pub db: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Classify each message of mbox files, Maildirs or .eml files; store nothing.
    Classify {
        /// One JSON object per message, one per line.
        #[arg(long)]
        json: bool,
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Import mbox files, Maildirs or .eml files into the store, opening
    /// and following cases; history is recorded, not acted on.
    Ingest {
        /// Days without activity after which an open case is stale (0: never).
        #[arg(long, default_value_t = crate::thread::state::DEFAULT_STALE_DAYS)]
        stale_days: i64,
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// List cases: the open ones, or those in one state, or all.
    Cases {
        /// A JSON array of case objects.
        #[arg(long)]
        json: bool,
        /// `open` (the default), `all`, or a state: reported, discussed,
        /// retest-requested, retest-done, fix-posted, resolved, invalid,
        /// duplicate, stale, informational.
        #[arg(long, default_value = "open")]
        state: String,
    },
    /// One case with its facts and the timeline of its events.
    Case {
        id: i64,
        /// The case as one JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// The store used when neither `--db` nor a config names one.
pub const DEFAULT_DB: &str = "lkpbot.db";

/// The wall clock, read here at the edge and passed down as a value.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

pub fn run(cli: Cli) -> Result<(), Failure> {
    let db = cli.db.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DB));
    match cli.command {
        Command::Classify { json, paths } => classify::classify_paths(&paths, json),
        Command::Ingest { stale_days, paths } => {
            cases::ingest(&db, &paths, (stale_days > 0).then_some(stale_days), now())
        }
        Command::Cases { json, state } => cases::list(&db, &state, json, now()),
        Command::Case { id, json } => cases::show(&db, id, json, now()),
    }
}
