//! Command-line interface: parses arguments, builds the parts, runs one
//! command, and maps failures to exit codes (0 success, 1 usage or config
//! error, 2 run-time failure). Data goes to stdout; logs, progress and
//! errors to stderr.

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::classify::{self, ClassifyConfig, Kind, json::to_json};
use crate::mail;
use crate::source;

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

/// An error with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub error: anyhow::Error,
}

impl Failure {
    pub fn usage(error: anyhow::Error) -> Failure {
        Failure { code: 1, error }
    }
    pub fn runtime(error: anyhow::Error) -> Failure {
        Failure { code: 2, error }
    }
}

pub fn run(cli: Cli) -> Result<(), Failure> {
    let db = cli.db.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DB));
    match cli.command {
        Command::Classify { json, paths } => classify_paths(&paths, json),
        Command::Ingest { stale_days, paths } => {
            crate::cli_cases::ingest(&db, &paths, (stale_days > 0).then_some(stale_days), now())
        }
        Command::Cases { json, state } => crate::cli_cases::list(&db, &state, json, now()),
        Command::Case { id, json } => crate::cli_cases::show(&db, id, json, now()),
    }
}

/// A one-line, human-readable summary of a classified message.
pub fn summary_line(m: &mail::Mail, c: &classify::Classified) -> String {
    let mut s = format!("{:<16} {}", c.kind.as_str(), m.message_id);
    if let Some(commit) = c.commit()
        && let Some(short) = &commit.short
    {
        s.push_str(&format!("  {short}"));
    }
    if let Some(r) = c.any_report() {
        if let Some(h) = &r.headline {
            // A signed change only when the table gave one; the current
            // template's prose states the size alone.
            let change = match (h.change_pct, h.stated_change_pct) {
                (Some(n), _) => format!(" {:+}%", n.0),
                (None, Some(n)) => format!(" {}%", n.0),
                (None, None) => String::new(),
            };
            s.push_str(&format!("  {}{}", h.metric, change));
        } else if let Some(sig) = r.signatures.first() {
            s.push_str(&format!("  {}", sig.signature));
        }
        if let Some(t) = &r.testcase {
            s.push_str(&format!("  ({t})"));
        }
    }
    if let Some(r) = c.retests.first() {
        s.push_str(&format!("  fix {} {}", r.fix.short, r.verdict.map_or("no verdict", |v| v.as_str())));
    }
    if c.kind == Kind::Unrelated && !m.subject.is_empty() {
        let subj: String = m.subject.chars().take(60).collect();
        s.push_str(&format!("  {subj}"));
    }
    for p in m.problems.iter().chain(&c.problems) {
        if p.starts_with("mime") || p.starts_with("header") || p.starts_with("message") {
            s.push_str(&format!("  [{p}]"));
        }
    }
    s
}

fn classify_paths(paths: &[PathBuf], json: bool) -> Result<(), Failure> {
    let cfg = ClassifyConfig::default();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut failed = Vec::new();
    for path in paths {
        let messages = match source::open(path) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("lkpbot: {e}");
                failed.push(path.display().to_string());
                continue;
            }
        };
        for raw in messages {
            let raw = match raw {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("lkpbot: {e}");
                    let name = path.display().to_string();
                    if !failed.contains(&name) {
                        failed.push(name);
                    }
                    if e.is_fatal() {
                        break;
                    }
                    continue;
                }
            };
            let m = mail::parse_truncated(&raw.bytes, raw.original_len);
            let c = classify::classify(&m, &cfg);
            let line = if json { to_json(&m, &c).to_string() } else { summary_line(&m, &c) };
            if let Err(e) = writeln!(out, "{line}") {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    return Ok(());
                }
                return Err(Failure::runtime(anyhow::Error::new(e).context("cannot write to stdout")));
            }
        }
    }
    if let Err(e) = out.flush()
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(Failure::runtime(anyhow::Error::new(e).context("cannot write to stdout")));
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::usage(anyhow::anyhow!("could not read: {}", failed.join(", "))))
    }
}
