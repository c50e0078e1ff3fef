//! Command-line interface: parses arguments, builds the parts, runs one
//! command, and maps failures to exit codes (0 success, 1 usage or config
//! error, 2 run-time failure). Data goes to stdout; logs, progress and
//! errors to stderr. `classify` is the command without a store, `cases`
//! the store-backed ones, `run` the daemon; `failure` the exit codes.
//! The config file is read here, once, and its parts handed down.

mod cases;
mod classify;
mod copy;
mod digest;
mod failure;
mod ingest;
mod outbox;
mod run;
mod serve;
mod store;

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::act::Policy;
use crate::classify::ClassifyConfig;
use crate::config::Config;
use crate::engine::Settings;

pub use failure::{Failure, describe};
pub use ingest::summary;

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
    /// SQLite store file; overrides the config file's `[store]` (its
    /// `path`, and its `url` too).
    #[arg(long, global = true, env = "LKPBOT_DB")]
    pub db: Option<PathBuf>,
    /// How logs are written to stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Human)]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: CliCommand,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// One readable line per event.
    Human,
    /// One JSON object per event.
    Json,
}

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Copies the store (`--db`, else `[store]`) into an empty PostgreSQL
    /// database or SQLite file, either way; refuses a target that holds
    /// anything.
    Copy {
        /// A `postgres://` URL (the password in it or in PGPASSWORD) or
        /// a SQLite file's path.
        #[arg(long)]
        to: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum CliCommand {
    /// Classify each message of mbox files, Maildirs or .eml files; store nothing.
    Classify {
        /// One JSON object per message, one per line.
        #[arg(long)]
        json: bool,
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Follow every configured source (IMAP mailboxes, Maildirs, mbox
    /// files) and keep the cases current, until SIGINT or SIGTERM.
    Run {
        /// One pass over every source, then exit.
        #[arg(long)]
        once: bool,
    },
    /// Import mbox files, Maildirs or .eml files into the store, opening
    /// and following cases; history is recorded, not acted on.
    Ingest {
        /// Days without activity after which an open case is stale (0:
        /// never); `[bot] stale_days` of the config, else 30.
        #[arg(long)]
        stale_days: Option<i64>,
        /// Answer the archive's fresh commands too (replies, retest
        /// requests), and send them; by default history is recorded only.
        #[arg(long)]
        act: bool,
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
        /// The order: `attention` (what needs someone first: open
        /// regressions no fix has reached, then fixes posted, then fixes
        /// applied, stale last; reported again as still there in the last
        /// seven days first, then clear before marginal, then |change| and
        /// age), or `age`, `oldest`, `activity`, `severity`; by id without.
        #[arg(long)]
        sort: Option<String>,
    },
    /// The weekly digest: preview it (`--print`, `--json`), or send it
    /// now (`--send`, still at most once per week and recipient).
    Digest {
        /// Print the digest as the lists get it (the default).
        #[arg(long)]
        print: bool,
        /// Queue and send it now.
        #[arg(long, conflicts_with = "print")]
        send: bool,
        /// The model as JSON.
        #[arg(long)]
        json: bool,
        /// A day of the week to digest (YYYY-MM-DD); default: today's week
        /// for a preview, last week for `--send`.
        #[arg(long)]
        date: Option<String>,
    },
    /// Outgoing mail: queued, sent, failing (with the reason).
    Outbox {
        /// A JSON array of mails.
        #[arg(long)]
        json: bool,
    },
    /// One case with its facts and the timeline of its events.
    Case {
        id: i64,
        /// The case as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// The store itself.
    Store {
        #[command(subcommand)]
        command: StoreCommand,
    },
    /// The read-only web dashboard and JSON API over the store, until
    /// SIGINT or SIGTERM; safe beside `run` on the same store.
    Serve {
        /// Address to listen on; `[web] listen` of the config, else
        /// 127.0.0.1:8080.
        #[arg(long)]
        listen: Option<String>,
    },
}

/// The wall clock, read here at the edge and passed down as a value.
pub(crate) fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Logging to stderr: info for the daemon (a line per sync and per case
/// event), warnings for the rest, unless `RUST_LOG` says otherwise.
pub fn init_logging(cli: &Cli) {
    // `ingest` away from a terminal logs its progress instead of a bar.
    let default = match cli.command {
        CliCommand::Run { .. } => "info",
        CliCommand::Ingest { .. } => "warn,lkpbot::progress=info",
        _ => "warn",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let fmt = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    match cli.log_format {
        LogFormat::Human => fmt.init(),
        LogFormat::Json => fmt.json().init(),
    }
}

/// What the engine needs, from the config: the LKP team and the bot's
/// own address for the classifier, who may do what for `act`.
pub fn settings(cfg: &Config) -> Settings {
    let mut classify = ClassifyConfig::default();
    for a in &cfg.bot.lkp_team {
        let a = a.to_lowercase();
        if !classify.lkp_team.contains(&a) {
            classify.lkp_team.push(a);
        }
    }
    classify.bot_addresses.push(cfg.bot.address.to_lowercase());
    let policy = Policy {
        maintainers: cfg.bot.maintainers.iter().map(|a| a.to_lowercase()).collect(),
        bot_address: cfg.bot.address.to_lowercase(),
        fresh_hours: cfg.bot.fresh_hours,
        max_commands: cfg.bot.max_commands,
        replies_per_sender_hour: cfg.bot.replies_per_hour,
        replies_per_case_hour: cfg.bot.case_replies_per_hour,
        authenticated_replies_per_sender_hour: cfg.bot.authenticated_replies_per_hour,
        unauthenticated_replies_per_case_hour: cfg.bot.case_unauthenticated_replies_per_hour,
        unauthenticated_replies_per_hour: cfg.bot.unauthenticated_replies_per_hour,
        require_auth: cfg.auth.dkim == crate::config::DkimMode::Require,
        ..Policy::from_classify(&classify)
    };
    Settings { classify, policy, acting: None }
}

/// Who gets the digest, from `[digest]` (subscribers' filters checked
/// here: a bad one is a config error).
pub fn digest_plan(cfg: &Config) -> Result<crate::engine::DigestPlan, Failure> {
    let mut subscribers = Vec::new();
    for (i, s) in cfg.digest.subscribers.iter().enumerate() {
        let f = crate::case::SubscriptionFilter::parse(&s.filter)
            .map_err(|e| Failure::usage(anyhow::anyhow!("config: digest.subscribers[{i}].filter: {e}")))?;
        subscribers.push((s.address.to_lowercase(), f));
    }
    Ok(crate::engine::DigestPlan {
        to: cfg.digest.to.clone(),
        subscribers,
        stale_days: cfg.bot.stale_days,
        more: crate::digest::Links::new(cfg.digest.more_url.as_deref()),
    })
}

/// The settings of a bot that answers: who it is, where
/// retest requests go, and the clock.
pub fn acting_settings(cfg: &Config, clock: fn() -> i64) -> Settings {
    use crate::config::RetestBackend as B;
    let mut s = settings(cfg);
    let identity = crate::render::Identity {
        address: cfg.bot.address.clone(),
        name: cfg.bot.name.clone(),
        archive_url: cfg.bot.archive_url.clone(),
    };
    let retest = match cfg.retest.backend {
        B::Email => crate::engine::RetestTarget::Email(cfg.retest.to.clone()),
        B::Command => crate::engine::RetestTarget::Command,
        B::None => crate::engine::RetestTarget::None,
    };
    s.acting = Some(crate::engine::Acting { identity, retest, clock, auth: None });
    s
}

/// [`acting_settings`] with the sender verification `[auth]` asks for
/// (its keys file read now: a bad one is a config error).
pub fn acting_settings_with_auth(
    cfg: &Config,
    config_path: Option<&std::path::Path>,
    clock: fn() -> i64,
) -> Result<Settings, Failure> {
    let mut s = acting_settings(cfg, clock);
    let path = config_path.unwrap_or(std::path::Path::new("lkpbot.toml"));
    let verifier = crate::auth::Verifier::from_config(&cfg.auth, path).map_err(|e| Failure::usage(e.into()))?;
    if let Some(a) = s.acting.as_mut() {
        a.auth = verifier.map(std::sync::Arc::new);
    }
    Ok(s)
}

/// Where the store is: `--db` (a SQLite file) wins over the config's
/// `[store]`, whose `url` wins over its `path`.
fn store_location(cli: &Cli, cfg: &Config) -> Result<crate::store::Location, Failure> {
    use crate::store::Location;
    if let Some(path) = &cli.db {
        return Ok(Location::Sqlite(path.clone()));
    }
    let Some(url) = &cfg.store.url else { return Ok(Location::Sqlite(cfg.store.path.clone())) };
    let config_path = cli.config.as_deref().unwrap_or(std::path::Path::new("lkpbot.toml"));
    let password = cfg.store.password(config_path).map_err(|e| Failure::usage(e.into()))?;
    Location::postgres(url, password).map_err(|e| Failure::usage(e.into()))
}

pub fn run(cli: Cli) -> Result<(), Failure> {
    let cfg = match &cli.config {
        Some(path) => Config::load(path).map_err(|e| Failure::usage(e.into()))?,
        None => Config::default(),
    };
    let db = store_location(&cli, &cfg)?;
    match cli.command {
        CliCommand::Classify { json, paths } => classify::classify_paths(&paths, json, &settings(&cfg).classify),
        CliCommand::Run { once } => run::run(&cfg, cli.config.as_deref(), &db, once, now),
        CliCommand::Ingest { stale_days, act, paths } => {
            let days = stale_days.unwrap_or(cfg.bot.stale_days);
            let settings =
                if act { acting_settings_with_auth(&cfg, cli.config.as_deref(), now)? } else { settings(&cfg) };
            let send = act.then(|| (cfg.clone(), cli.config.clone().unwrap_or_else(|| PathBuf::from("lkpbot.toml"))));
            ingest::ingest(&db, &paths, settings, send, (days > 0).then_some(days), now())
        }
        CliCommand::Outbox { json } => outbox::outbox(&db, json),
        CliCommand::Digest { print: _, send, json, date } => {
            let week = match &date {
                Some(d) => crate::digest::Week::of_date(d)
                    .ok_or_else(|| Failure::usage(anyhow::anyhow!("--date {d}: not a date (YYYY-MM-DD)")))?,
                None if send => crate::digest::Week::containing(now()).previous(),
                None => crate::digest::Week::containing(now()),
            };
            let plan = digest_plan(&cfg)?;
            if send {
                let path = cli.config.clone().unwrap_or_else(|| PathBuf::from("lkpbot.toml"));
                run::send_digest(&cfg, &path, &db, &week, &plan, now)
            } else {
                digest::digest(&db, &week, &plan, &cfg.bot, json)
            }
        }
        CliCommand::Cases { json, state, sort } => {
            cases::list(&db, &state, sort.as_deref(), json, now(), &cfg.bot.archive_url)
        }
        CliCommand::Case { id, json } => cases::show(&db, id, json, now(), &cfg.bot.archive_url),
        CliCommand::Store { command: StoreCommand::Copy { to } } => copy::copy(&db, &to),
        CliCommand::Serve { listen } => {
            serve::serve(&db, listen.as_deref().unwrap_or(&cfg.web.listen), &cfg.bot.archive_url, now)
        }
    }
}
