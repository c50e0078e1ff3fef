//! The configuration file (DESIGN.md, "Configuration"): one TOML file,
//! its key names a contract that deployments and scripts write.
//!
//! Reading is strict: an unknown key is an error naming the key and the
//! file (a typo must not silently fall back to a default), a secret is
//! never written inline (`password_env` names an environment variable,
//! `password_file` a file), and `tls = "none"` is refused for any host
//! that is not loopback. With no file at all the embedded defaults apply:
//! the store `lkpbot.db`, no source, dry-run delivery into `outbox/`.
//! `config/example.toml` documents every key and its default; a test
//! parses and validates it.
//!
//! Reading the file and the secrets it names is I/O; everything else here
//! (defaults, validation) is plain data.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the config file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("config file {path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("config file {path}: {key}: {message}")]
    Key { path: PathBuf, key: String, message: String },
    #[error("config file {path}: {key}: cannot read the secret: {message}")]
    Secret { path: PathBuf, key: String, message: String },
}

/// The whole file.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub store: StoreConfig,
    pub bot: BotConfig,
    pub sources: Vec<SourceConfig>,
    pub smtp: Option<SmtpConfig>,
    pub outbox: OutboxConfig,
    pub retest: RetestConfig,
    pub digest: DigestConfig,
    pub web: WebConfig,
    pub auth: AuthConfig,
    pub trees: Vec<TreeConfig>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    /// The SQLite file.
    pub path: PathBuf,
    /// A PostgreSQL database (`postgres://user@host:port/db`), used
    /// instead of `path`.
    pub url: Option<String>,
    /// The database password: an environment variable or a file.
    pub password_env: Option<String>,
    pub password_file: Option<PathBuf>,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig { path: PathBuf::from("lkpbot.db"), url: None, password_env: None, password_file: None }
    }
}

impl StoreConfig {
    fn check(&self) -> Result<(), (&'static str, &'static str)> {
        if let Some(url) = &self.url
            && !(url.starts_with("postgres://") || url.starts_with("postgresql://"))
        {
            return Err(("url", "must be a postgres:// URL (a SQLite file is `path`)"));
        }
        if self.url.is_none() && (self.password_env.is_some() || self.password_file.is_some()) {
            return Err(("password_env", "a password is for a PostgreSQL store: set url too"));
        }
        if self.password_env.is_some() && self.password_file.is_some() {
            return Err(("password_env", "give at most one of password_env and password_file"));
        }
        Ok(())
    }

    /// The database password, if the config names where it is.
    pub fn password(&self, config_path: &Path) -> Result<Option<String>, ConfigError> {
        optional_secret(self.password_env.as_deref(), self.password_file.as_deref(), config_path, "store")
    }
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BotConfig {
    /// From of the bot's mail; mail from it is never answered.
    pub address: String,
    pub name: String,
    /// Where every message is archived: the link is this and the id.
    pub archive_url: String,
    /// Older commands are recorded, not answered.
    pub fresh_hours: i64,
    /// Days without activity after which an open case is stale.
    pub stale_days: i64,
    /// Whose retest results and requests count as the LKP team's.
    pub lkp_team: Vec<String>,
    /// May resolve, mark invalid or duplicate any case.
    pub maintainers: Vec<String>,
    /// Commands acted on per mail.
    pub max_commands: usize,
    /// Replies to one sender, and in one case, per hour at most (under
    /// `[auth] dkim = "require"`: to one sender whose mail is not
    /// authenticated, and in one case to authenticated senders).
    pub replies_per_hour: u32,
    pub case_replies_per_hour: u32,
    /// Under `require`: replies per hour to one authenticated sender, in
    /// one case to unauthenticated senders, and to all unauthenticated
    /// senders together.
    pub authenticated_replies_per_hour: u32,
    pub case_unauthenticated_replies_per_hour: u32,
    pub unauthenticated_replies_per_hour: u32,
}

impl Default for BotConfig {
    fn default() -> Self {
        BotConfig {
            address: "lkpbot@example.org".into(),
            name: "lkpbot".into(),
            archive_url: "https://lore.kernel.org/r/".into(),
            fresh_hours: 48,
            stale_days: 30,
            lkp_team: vec!["lkp@intel.com".into()],
            maintainers: Vec::new(),
            max_commands: 10,
            replies_per_hour: 10,
            case_replies_per_hour: 20,
            authenticated_replies_per_hour: 60,
            case_unauthenticated_replies_per_hour: 10,
            unauthenticated_replies_per_hour: 30,
        }
    }
}

/// What kind of source a `[[sources]]` entry is.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    Imap,
    Maildir,
    Mbox,
    /// A public-inbox v2 inbox (a lore mirror): `path` is its directory.
    #[serde(rename = "public-inbox")]
    PublicInbox,
}

/// How a connection is encrypted.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Tls {
    /// TLS from the first byte (IMAPS on 993, SMTPS on 465).
    Implicit,
    /// Plain, then STARTTLS before anything else is said.
    Starttls,
    /// No encryption: loopback only.
    None,
}

/// One `[[sources]]` entry. Which keys apply depends on `kind`; a key of
/// another kind is an error, like an unknown one.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SourceConfig {
    pub kind: SourceKind,
    // imap
    pub host: Option<String>,
    pub port: Option<u16>,
    pub tls: Option<Tls>,
    pub user: Option<String>,
    pub password_env: Option<String>,
    pub password_file: Option<PathBuf>,
    /// Only here to refuse it with a clear message.
    pub password: Option<toml::Value>,
    pub mailboxes: Option<Vec<String>>,
    pub idle: Option<bool>,
    /// A PEM file of certificate authorities to trust besides the
    /// built-in roots (a private server's own CA).
    pub ca_file: Option<PathBuf>,
    // maildir | mbox | public-inbox
    pub path: Option<PathBuf>,
    // all
    /// How often to look for new mail; with IMAP IDLE, the safety net.
    pub poll_seconds: Option<u64>,
    /// Messages fetched per round trip (IMAP).
    pub batch: Option<usize>,
}

/// One `[[trees]]` entry: a git repository whose history moves cases
/// (see `source::tree`). Read only. Whether `path` is a repository and
/// `branch` exists is checked when `run` reads it: an error for that
/// tree, naming it, while the other sources go on.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TreeConfig {
    /// How events and logs name it (`mainline`, `mm-stable`).
    pub name: String,
    /// A local clone or mirror (bare or not).
    pub path: PathBuf,
    /// The branch followed (`master`); a full ref name works too.
    #[serde(default = "default_branch")]
    pub branch: String,
    /// A fix that reaches this tree resolves its case (mainline).
    #[serde(default)]
    pub resolves: bool,
    /// How often to look for new commits.
    pub poll_seconds: Option<u64>,
}

fn default_branch() -> String {
    "master".into()
}

impl TreeConfig {
    /// A name that events can carry and logs can show, a branch git would
    /// take.
    fn check(&self) -> Result<(), (&'static str, &'static str)> {
        let name_ok = !self.name.is_empty()
            && self.name.len() <= 64
            && self.name.chars().all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
        if !name_ok {
            return Err(("name", "must be 1 to 64 letters, digits or - _ . /"));
        }
        if self.path.as_os_str().is_empty() {
            return Err(("path", "a tree needs the path of a git repository"));
        }
        let branch_ok = !self.branch.is_empty()
            && !self.branch.starts_with('-')
            && !self.branch.contains("..")
            && !self.branch.chars().any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c));
        if !branch_ok {
            return Err(("branch", "must be a branch name (`master`, `for-next`)"));
        }
        if self.poll_seconds == Some(0) {
            return Err(("poll_seconds", "must be at least 1"));
        }
        Ok(())
    }

    pub fn poll_seconds(&self) -> u64 {
        self.poll_seconds.unwrap_or(DEFAULT_POLL_SECONDS)
    }
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SmtpConfig {
    pub host: String,
    #[serde(default = "default_smtp_port")]
    pub port: u16,
    #[serde(default = "default_smtp_tls")]
    pub tls: Tls,
    pub user: Option<String>,
    pub password_env: Option<String>,
    pub password_file: Option<PathBuf>,
    pub password: Option<toml::Value>,
    /// A PEM file of certificate authorities to trust besides the usual
    /// roots.
    pub ca_file: Option<PathBuf>,
    /// The longest one mail may take to send (each reply of the server
    /// is waited for as long). A sender killed mid-send leaves its mail
    /// to another after twice this.
    #[serde(default = "default_smtp_timeout")]
    pub timeout_seconds: u64,
}

fn default_smtp_timeout() -> u64 {
    60
}

fn default_smtp_port() -> u16 {
    587
}

fn default_smtp_tls() -> Tls {
    Tls::Starttls
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct OutboxConfig {
    /// Dry run: replies written here as `.eml` files.
    pub dir: PathBuf,
    /// The first wait before a failed mail is tried again; it doubles up
    /// to an hour.
    pub retry_seconds: u64,
}

impl Default for OutboxConfig {
    fn default() -> Self {
        OutboxConfig { dir: PathBuf::from("outbox"), retry_seconds: 30 }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RetestBackend {
    Email,
    Command,
    None,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RetestConfig {
    pub backend: RetestBackend,
    /// Backend `email`: where requests go.
    pub to: String,
    /// Backend `command`: run with the request as JSON on stdin.
    pub command: Vec<String>,
    pub timeout_seconds: u64,
    /// Days after which an unanswered request gets one reminder; as many
    /// again after that, it is recorded as timed out.
    pub remind_days: i64,
}

impl Default for RetestConfig {
    fn default() -> Self {
        RetestConfig {
            backend: RetestBackend::Email,
            to: "lkp@intel.com".into(),
            command: Vec::new(),
            timeout_seconds: 600,
            remind_days: 7,
        }
    }
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DigestConfig {
    pub weekday: String,
    /// UTC.
    pub hour: u8,
    /// List addresses; subscribers come on top.
    pub to: Vec<String>,
    /// People who get it, each with the cases they want (as `#lkp
    /// subscribe` takes them).
    pub subscribers: Vec<SubscriberConfig>,
    /// Where the full lists are, for "and N more" (a dashboard).
    pub more_url: Option<String>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SubscriberConfig {
    pub address: String,
    #[serde(default)]
    pub filter: String,
}

impl Default for DigestConfig {
    fn default() -> Self {
        DigestConfig { weekday: "monday".into(), hour: 8, to: Vec::new(), subscribers: Vec::new(), more_url: None }
    }
}

impl DigestConfig {
    /// Monday is 0.
    pub fn weekday_index(&self) -> u8 {
        WEEKDAYS
            .iter()
            .position(|d| d.eq_ignore_ascii_case(&self.weekday))
            .and_then(|i| u8::try_from(i).ok())
            .unwrap_or(0)
    }
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct WebConfig {
    pub listen: String,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig { listen: "127.0.0.1:8080".into() }
    }
}

/// What to make of a DKIM signature.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DkimMode {
    /// Nothing is verified: every sender is who From says.
    Off,
    /// Fresh mail the bot acts on is verified, and the result recorded.
    Record,
    /// As `record`; a command that changes a case needs a pass.
    Require,
}

/// `[auth]`: who a command mail is from.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    pub dkim: DkimMode,
    /// ARC sealers (a list server that rewrites From) whose recorded DKIM
    /// pass for the original author is believed.
    pub trusted_arc: Vec<String>,
    /// DKIM key records pinned in a file, one per line
    /// (`<selector>._domainkey.<domain> v=DKIM1; k=rsa; p=...`), asked
    /// before DNS. Empty: none.
    pub keys_file: PathBuf,
    /// DNS servers to ask for keys (`IP` or `IP:PORT`); empty: the
    /// system's (`/etc/resolv.conf`).
    pub nameservers: Vec<String>,
    /// The longest the verification of one message may take (DNS
    /// included); what takes longer is not authenticated.
    pub timeout_seconds: u64,
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            dkim: DkimMode::Require,
            trusted_arc: Vec::new(),
            keys_file: PathBuf::new(),
            nameservers: Vec::new(),
            timeout_seconds: 10,
        }
    }
}

impl AuthConfig {
    /// The keys of `[auth]` that can be wrong: nameservers that are not
    /// addresses, a zero timeout.
    fn check(&self) -> Result<(), (String, &'static str)> {
        if let Some(i) = self.nameservers.iter().position(|ns| nameserver(ns).is_none()) {
            return Err((format!("nameservers[{i}]"), "an IP address, or IP:PORT"));
        }
        if self.timeout_seconds == 0 {
            return Err(("timeout_seconds".into(), "must be at least 1"));
        }
        Ok(())
    }

    /// The pinned key records' text (empty without `keys_file`).
    pub fn keys(&self, config_path: &Path) -> Result<String, ConfigError> {
        if self.keys_file.as_os_str().is_empty() {
            return Ok(String::new());
        }
        std::fs::read_to_string(&self.keys_file).map_err(|e| ConfigError::Key {
            path: config_path.to_path_buf(),
            key: "auth.keys_file".into(),
            message: format!("cannot read {}: {e}", self.keys_file.display()),
        })
    }
}

/// Seconds between looks for new mail when a source says nothing.
pub const DEFAULT_POLL_SECONDS: u64 = 300;
/// Messages fetched per IMAP round trip.
pub const DEFAULT_BATCH: usize = 200;

const WEEKDAYS: [&str; 7] = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

impl Config {
    /// Reads and validates a config file. Paths in it (a Maildir, a
    /// secret file, the store) are taken relative to the file's folder.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.to_path_buf(), source })?;
        let mut cfg = Config::parse(&text, path)?;
        if let Some(dir) = path.parent() {
            cfg.resolve_paths(dir);
        }
        Ok(cfg)
    }

    /// Parses and validates config text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let cfg: Config = toml::from_str(text)
            .map_err(|e| ConfigError::Invalid { path: path.to_path_buf(), message: one_line(&e.to_string()) })?;
        cfg.validate(path)?;
        Ok(cfg)
    }

    fn resolve_paths(&mut self, dir: &Path) {
        let fix = |p: &mut PathBuf| {
            if p.is_relative() && !dir.as_os_str().is_empty() {
                *p = dir.join(&*p);
            }
        };
        fix(&mut self.store.path);
        if let Some(p) = &mut self.store.password_file {
            fix(p);
        }
        fix(&mut self.outbox.dir);
        for s in &mut self.sources {
            for p in [&mut s.path, &mut s.password_file, &mut s.ca_file].into_iter().flatten() {
                fix(p);
            }
        }
        if let Some(s) = &mut self.smtp {
            for p in [&mut s.password_file, &mut s.ca_file].into_iter().flatten() {
                fix(p);
            }
        }
        for t in &mut self.trees {
            fix(&mut t.path);
        }
        if !self.auth.keys_file.as_os_str().is_empty() {
            fix(&mut self.auth.keys_file);
        }
    }

    /// Checks what the types cannot: which keys go with which kind, no
    /// inline secrets, no plain text off loopback, sane numbers.
    pub fn validate(&self, path: &Path) -> Result<(), ConfigError> {
        let bad = |(key, message): (String, &str)| ConfigError::Key {
            path: path.to_path_buf(),
            key,
            message: message.to_string(),
        };
        self.check_bot().map_err(bad)?;
        self.store.check().map_err(|(k, m)| bad((format!("store.{k}"), m)))?;
        for (i, s) in self.sources.iter().enumerate() {
            s.check().map_err(|(k, m)| bad((format!("sources[{i}].{k}"), m)))?;
        }
        if let Some(s) = &self.smtp {
            s.check().map_err(|(k, m)| bad((format!("smtp.{k}"), m)))?;
        }
        for (i, t) in self.trees.iter().enumerate() {
            t.check().map_err(|(k, m)| bad((format!("trees[{i}].{k}"), m)))?;
            if self.trees[..i].iter().any(|o| o.name == t.name) {
                return Err(bad((format!("trees[{i}].name"), "another tree has this name")));
            }
        }
        self.auth.check().map_err(|(k, m)| bad((format!("auth.{k}"), m)))
    }

    /// The bot's own settings: `[bot]`, `[digest]`, `[retest]`.
    fn check_bot(&self) -> Result<(), (String, &'static str)> {
        let bad = |key: &str, message| Err((key.to_string(), message));
        if self.bot.fresh_hours < 0 {
            return bad("bot.fresh_hours", "must not be negative");
        }
        if self.bot.stale_days < 0 {
            return bad("bot.stale_days", "must not be negative");
        }
        if !WEEKDAYS.contains(&self.digest.weekday.to_ascii_lowercase().as_str()) {
            return bad("digest.weekday", "must be a day of the week (monday .. sunday)");
        }
        if self.digest.hour > 23 {
            return bad("digest.hour", "must be 0 to 23 (UTC)");
        }
        if let Some(i) = self.digest.subscribers.iter().position(|sub| !sub.address.contains('@')) {
            return Err((format!("digest.subscribers[{i}].address"), "must be a mail address"));
        }
        if self.bot.max_commands == 0 {
            return bad("bot.max_commands", "must be at least 1");
        }
        if self.retest.remind_days < 1 {
            return bad("retest.remind_days", "must be at least 1");
        }
        if self.retest.backend == RetestBackend::Command && self.retest.command.is_empty() {
            return bad("retest.command", "backend \"command\" needs the command to run");
        }
        Ok(())
    }
}

impl SourceConfig {
    /// The keys of one source: those its kind needs, none it does not.
    fn check(&self) -> Result<(), (&'static str, &'static str)> {
        if self.password.is_some() {
            return Err(("password", "secrets never sit inline: use password_env or password_file"));
        }
        let imap_only = [
            ("host", self.host.is_some()),
            ("port", self.port.is_some()),
            ("tls", self.tls.is_some()),
            ("user", self.user.is_some()),
            ("password_env", self.password_env.is_some()),
            ("password_file", self.password_file.is_some()),
            ("mailboxes", self.mailboxes.is_some()),
            ("idle", self.idle.is_some()),
            ("ca_file", self.ca_file.is_some()),
            ("batch", self.batch.is_some()),
        ];
        match self.kind {
            SourceKind::Imap => {
                if self.path.is_some() {
                    return Err(("path", "is for kind maildir, mbox or public-inbox, not imap"));
                }
                let host = self.host.as_deref().ok_or(("host", "an imap source needs a host"))?;
                if self.user.is_none() {
                    return Err(("user", "an imap source needs a user"));
                }
                if self.password_env.is_none() == self.password_file.is_none() {
                    return Err(("password_env", "give exactly one of password_env and password_file"));
                }
                if self.tls() == Tls::None && !is_loopback(host) {
                    return Err(("tls", "\"none\" is only allowed for a loopback host"));
                }
                if self.mailboxes.as_ref().is_some_and(Vec::is_empty) {
                    return Err(("mailboxes", "must name at least one mailbox"));
                }
                if self.batch == Some(0) {
                    return Err(("batch", "must be at least 1"));
                }
            }
            SourceKind::Maildir | SourceKind::Mbox | SourceKind::PublicInbox => {
                if let Some((k, _)) = imap_only.iter().find(|(_, set)| *set) {
                    return Err((k, "is for kind imap only"));
                }
                if self.path.is_none() {
                    return Err(("path", "a maildir, mbox or public-inbox source needs a path"));
                }
            }
        }
        if self.poll_seconds == Some(0) {
            return Err(("poll_seconds", "must be at least 1"));
        }
        Ok(())
    }

    pub fn tls(&self) -> Tls {
        self.tls.unwrap_or(Tls::Implicit)
    }

    /// The IMAP port: the `port` key, else the usual one for `tls`.
    pub fn imap_port(&self) -> u16 {
        self.port.unwrap_or(if self.tls() == Tls::Implicit { 993 } else { 143 })
    }

    pub fn mailboxes(&self) -> Vec<String> {
        self.mailboxes.clone().unwrap_or_else(|| vec!["INBOX".into()])
    }

    pub fn poll_seconds(&self) -> u64 {
        self.poll_seconds.unwrap_or(DEFAULT_POLL_SECONDS)
    }

    pub fn batch(&self) -> usize {
        self.batch.unwrap_or(DEFAULT_BATCH)
    }

    /// The password, from the environment variable or file the config
    /// names (never from the config itself).
    pub fn password(&self, config_path: &Path, index: usize) -> Result<String, ConfigError> {
        read_secret(
            self.password_env.as_deref(),
            self.password_file.as_deref(),
            config_path,
            &format!("sources[{index}]"),
        )
    }
}

impl SmtpConfig {
    /// The keys of `[smtp]`: secrets kept out of the file, TLS off only
    /// on this machine.
    fn check(&self) -> Result<(), (&'static str, &'static str)> {
        if self.password.is_some() {
            return Err(("password", "secrets never sit inline: use password_env or password_file"));
        }
        if self.password_env.is_some() && self.password_file.is_some() {
            return Err(("password_env", "give at most one of password_env and password_file"));
        }
        if self.tls == Tls::None && !is_loopback(&self.host) {
            return Err(("tls", "\"none\" is only allowed for a loopback host"));
        }
        Ok(())
    }

    pub fn password(&self, config_path: &Path) -> Result<Option<String>, ConfigError> {
        optional_secret(self.password_env.as_deref(), self.password_file.as_deref(), config_path, "smtp")
    }
}

/// [`read_secret`] where the secret is optional: `None` when the config
/// names no place for it.
fn optional_secret(
    env: Option<&str>,
    file: Option<&Path>,
    config_path: &Path,
    section: &str,
) -> Result<Option<String>, ConfigError> {
    if env.is_none() && file.is_none() {
        return Ok(None);
    }
    read_secret(env, file, config_path, section).map(Some)
}

fn read_secret(
    env: Option<&str>,
    file: Option<&Path>,
    config_path: &Path,
    section: &str,
) -> Result<String, ConfigError> {
    let err = |key: &str, message: String| ConfigError::Secret {
        path: config_path.to_path_buf(),
        key: format!("{section}.{key}"),
        message,
    };
    if let Some(var) = env {
        return std::env::var(var).map_err(|_| err("password_env", format!("environment variable {var} is not set")));
    }
    if let Some(f) = file {
        let text = std::fs::read_to_string(f).map_err(|e| err("password_file", format!("{}: {e}", f.display())))?;
        // A trailing newline is the editor's, not the password's.
        return Ok(text.trim_end_matches(['\n', '\r']).to_string());
    }
    Err(err("password_env", "no password_env or password_file".into()))
}

/// `IP`, `IP:PORT` or `[IPv6]:PORT` as a socket address (port 53 by
/// default).
pub fn nameserver(s: &str) -> Option<std::net::SocketAddr> {
    let s = s.trim();
    s.parse().ok().or_else(|| s.parse::<IpAddr>().ok().map(|ip| std::net::SocketAddr::new(ip, 53)))
}

/// `localhost` or a loopback address.
pub fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost") || h.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// toml's messages quote the offending line over several lines: keep
/// them on one, as every other error is.
fn one_line(s: &str) -> String {
    s.split('\n').map(str::trim).filter(|l| !l.is_empty() && *l != "|").collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("test.toml"))
    }

    /// The stale window is the config's: 30 days unless `[bot]
    /// stale_days` says otherwise (`ingest --stale-days` on top).
    #[test]
    fn stale_days_default_to_thirty() {
        assert_eq!(parse("").unwrap().bot.stale_days, 30);
        assert_eq!(parse("[bot]\nstale_days = 7\n").unwrap().bot.stale_days, 7);
    }

    #[test]
    fn no_file_is_the_embedded_defaults() {
        let c = parse("").unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(c.store.path, PathBuf::from("lkpbot.db"));
        assert!(c.sources.is_empty());
        assert!(c.smtp.is_none());
        assert_eq!(c.outbox.dir, PathBuf::from("outbox"));
        assert_eq!(c.bot.fresh_hours, 48);
    }

    #[test]
    fn unknown_keys_are_named() {
        for (text, key) in [
            ("[store]\npaht = \"x\"\n", "paht"),
            ("[bot]\nfresh_hour = 3\n", "fresh_hour"),
            ("[nonsense]\n", "nonsense"),
            ("[[sources]]\nkind = \"maildir\"\npath = \"m\"\npoll = 3\n", "poll"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(key) && e.contains("test.toml"), "{e}");
        }
    }

    #[test]
    fn rules_the_types_cannot_say() {
        let imap = "[[sources]]\nkind = \"imap\"\nhost = \"imap.example.org\"\nuser = \"u\"\n";
        for (text, key) in [
            (format!("{imap}password = \"hunter2\"\n"), "sources[0].password"),
            (format!("{imap}password_env = \"P\"\ntls = \"none\"\n"), "sources[0].tls"),
            (imap.to_string(), "sources[0].password_env"),
            (format!("{imap}password_env = \"P\"\npath = \"x\"\n"), "sources[0].path"),
            ("[[sources]]\nkind = \"mbox\"\npath = \"a\"\nhost = \"h\"\n".into(), "sources[0].host"),
            ("[[sources]]\nkind = \"maildir\"\n".into(), "sources[0].path"),
            ("[smtp]\nhost = \"smtp.example.org\"\ntls = \"none\"\n".into(), "smtp.tls"),
            ("[smtp]\nhost = \"h\"\npassword = \"x\"\n".into(), "smtp.password"),
            ("[digest]\nweekday = \"caturday\"\n".into(), "digest.weekday"),
            ("[[digest.subscribers]]\naddress = \"nobody\"\n".into(), "digest.subscribers[0].address"),
            ("[bot]\nmax_commands = 0\n".into(), "bot.max_commands"),
            ("[auth]\nnameservers = [\"127.0.0.1:53\", \"dns\"]\n".into(), "auth.nameservers[1]"),
            ("[auth]\ntimeout_seconds = 0\n".into(), "auth.timeout_seconds"),
            ("[[sources]]\nkind = \"mbox\"\npath = \"a\"\npoll_seconds = 0\n".into(), "sources[0].poll_seconds"),
            ("[[trees]]\nname = \"\"\npath = \"/srv/linux\"\n".into(), "trees[0].name"),
            ("[[trees]]\nname = \"a b\"\npath = \"/srv/linux\"\n".into(), "trees[0].name"),
            ("[[trees]]\nname = \"linus\"\npath = \"\"\n".into(), "trees[0].path"),
            ("[[trees]]\nname = \"linus\"\npath = \"l\"\nbranch = \"a..b\"\n".into(), "trees[0].branch"),
            ("[[trees]]\nname = \"x\"\npath = \"l\"\n[[trees]]\nname = \"x\"\npath = \"m\"\n".into(), "trees[1].name"),
            ("[[trees]]\nname = \"x\"\npath = \"l\"\nresolve = true\n".into(), "resolve"),
        ] {
            let e = parse(&text).unwrap_err().to_string();
            assert!(e.contains(key), "{text}: {e}");
        }
        let ok = parse(&format!("{imap}password_env = \"P\"\n")).unwrap();
        assert_eq!(ok.sources[0].tls(), Tls::Implicit);
        assert_eq!(ok.sources[0].imap_port(), 993);
        assert_eq!(ok.sources[0].mailboxes(), ["INBOX"]);
        let local = parse(
            "[[sources]]\nkind = \"imap\"\nhost = \"127.0.0.1\"\nuser = \"u\"\npassword_env = \"P\"\ntls = \"none\"\n",
        )
        .unwrap();
        assert_eq!(local.sources[0].imap_port(), 143);
        let t = parse("[[trees]]\nname = \"mainline\"\npath = \"/srv/linux\"\nresolves = true\n").unwrap();
        assert_eq!((t.trees[0].branch.as_str(), t.trees[0].resolves), ("master", true));
        assert_eq!(t.trees[0].poll_seconds(), DEFAULT_POLL_SECONDS);
    }

    #[test]
    fn loopback_hosts() {
        for h in ["localhost", "127.0.0.1", "127.8.9.1", "::1", "[::1]"] {
            assert!(is_loopback(h), "{h}");
        }
        for h in ["example.org", "10.0.0.1", "localhost.example.org"] {
            assert!(!is_loopback(h), "{h}");
        }
    }
}
