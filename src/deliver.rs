//! Sending the outbox: the only module that sends mail (and runs the
//! retest command). Rows the engine queued, each in the transaction of
//! its cause, are sent oldest first over SMTP (lettre: implicit TLS,
//! STARTTLS, plain on loopback only, AUTH), or, in a dry run (no
//! `[smtp]`), written as `.eml` files into `[outbox] dir`. A row is marked
//! sent after the server took it; a failure is retried with backoff.
//! Each mail keeps its Message-ID across retries and restarts, so the
//! rare double send (sent, then killed before it was marked) is one mail
//! to anyone who dedupes by Message-ID.

use std::path::PathBuf;
use std::time::Duration;

use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

use crate::case::{Event, EventKind};
use crate::config::{Config, ConfigError, Tls};
use crate::store::{OutboxMail, Store, StoreError};

/// The longest wait between tries of a failing mail.
const MAX_RETRY: i64 = 3600;
/// Mails sent per pass.
const PER_PASS: i64 = 50;

/// Where mail goes.
pub enum Transport {
    Smtp {
        transport: AsyncSmtpTransport<Tokio1Executor>,
        server: String,
    },
    /// A dry run: each mail a file in this folder.
    Dir(PathBuf),
}

/// The retest backend's program.
#[derive(Clone, Debug)]
pub struct RetestCommand {
    pub argv: Vec<String>,
    pub timeout: Duration,
}

/// What one pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sent {
    pub sent: u64,
    pub failed: u64,
}

pub struct Sender {
    transport: Transport,
    command: Option<RetestCommand>,
    clock: fn() -> i64,
    /// The first wait after a failure (`[outbox] retry_seconds`); it
    /// doubles up to [`MAX_RETRY`].
    first_retry: i64,
}

impl Sender {
    /// The transport the config says: `[smtp]`, else a dry run into
    /// `[outbox] dir`; the retest program when the backend is `command`.
    pub fn from_config(cfg: &Config, config_path: &std::path::Path, clock: fn() -> i64) -> Result<Sender, ConfigError> {
        let transport = match &cfg.smtp {
            None => Transport::Dir(cfg.outbox.dir.clone()),
            Some(s) => {
                let bad =
                    |message: String| ConfigError::Key { path: config_path.to_path_buf(), key: "smtp".into(), message };
                let mut params = lettre::transport::smtp::client::TlsParameters::builder(s.host.clone());
                if let Some(ca) = &s.ca_file {
                    let pem = std::fs::read(ca).map_err(|e| bad(format!("cannot read {}: {e}", ca.display())))?;
                    let cert = lettre::transport::smtp::client::Certificate::from_pem(&pem)
                        .map_err(|e| bad(format!("{}: {e}", ca.display())))?;
                    params = params.add_root_certificate(cert);
                }
                let tls = || params.clone().build_rustls().map_err(|e| bad(e.to_string()));
                use lettre::transport::smtp::client::Tls as L;
                let mode = match s.tls {
                    Tls::Implicit => L::Wrapper(tls()?),
                    Tls::Starttls => L::Required(tls()?),
                    Tls::None => L::None,
                };
                let mut b = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(s.host.clone())
                    .port(s.port)
                    .tls(mode)
                    .timeout(Some(Duration::from_secs(60)));
                if let (Some(user), Some(password)) = (&s.user, s.password(config_path)?) {
                    b = b
                        .credentials(lettre::transport::smtp::authentication::Credentials::new(user.clone(), password));
                }
                Transport::Smtp { transport: b.build(), server: format!("{}:{}", s.host, s.port) }
            }
        };
        let command = (cfg.retest.backend == crate::config::RetestBackend::Command).then(|| RetestCommand {
            argv: cfg.retest.command.clone(),
            timeout: Duration::from_secs(cfg.retest.timeout_seconds),
        });
        let first_retry = i64::try_from(cfg.outbox.retry_seconds).unwrap_or(MAX_RETRY).clamp(1, MAX_RETRY);
        Ok(Sender { transport, command, clock, first_retry })
    }

    /// A dry run into `dir`.
    pub fn to_dir(dir: PathBuf, clock: fn() -> i64) -> Sender {
        Sender { transport: Transport::Dir(dir), command: None, clock, first_retry: 30 }
    }

    /// Where mail goes, for logs.
    pub fn describe(&self) -> String {
        match &self.transport {
            Transport::Smtp { server, .. } => format!("SMTP {server}"),
            Transport::Dir(d) => format!("dry run into {}", d.display()),
        }
    }

    /// Sends what is due; a failure is recorded and retried later.
    pub async fn send_due(&self, store: &mut Store) -> Result<Sent, StoreError> {
        self.send(store, false).await
    }

    /// Sends every mail not sent yet, due or not (a pass by hand, `run
    /// --once`, does not wait out a backoff).
    pub async fn send_all(&self, store: &mut Store) -> Result<Sent, StoreError> {
        self.send(store, true).await
    }

    async fn send(&self, store: &mut Store, all: bool) -> Result<Sent, StoreError> {
        let mut out = Sent::default();
        let now = if all { i64::MAX } else { (self.clock)() };
        for mail in store.due_mail(now, PER_PASS).await? {
            let result =
                if mail.kind == "retest-command" { self.run_command(&mail).await } else { self.send_one(&mail).await };
            let now = (self.clock)();
            match result {
                Ok(note) => {
                    store.mark_sent(mail.id, now).await?;
                    out.sent += 1;
                    tracing::info!(kind = %mail.kind, message_id = %mail.message_id, to = %mail.recipients.join(" "), "sent");
                    if let (Some(case), Some(note)) = (mail.case, note) {
                        let mut e = Event::new(now, EventKind::RetestDispatched, None);
                        e.note = Some(note);
                        store.record_event(case, &e).await?;
                    }
                }
                Err(e) => {
                    let wait = (self.first_retry << mail.attempts.clamp(0, 16)).min(MAX_RETRY);
                    store.mark_failed(mail.id, &e, now + wait).await?;
                    out.failed += 1;
                    tracing::warn!(kind = %mail.kind, message_id = %mail.message_id, error = %e, retry_in = wait, "not sent");
                }
            }
        }
        Ok(out)
    }

    /// Sends one mail; for a retest request, what to record on the case.
    async fn send_one(&self, mail: &OutboxMail) -> Result<Option<String>, String> {
        let note =
            (mail.kind == "retest-request").then(|| format!("retest request mailed to {}", mail.recipients.join(", ")));
        match &self.transport {
            Transport::Smtp { transport, .. } => {
                let from = mail.sender.parse().map_err(|e| format!("sender {}: {e}", mail.sender))?;
                let to = mail
                    .recipients
                    .iter()
                    .map(|r| r.parse().map_err(|e| format!("recipient {r}: {e}")))
                    .collect::<Result<Vec<_>, _>>()?;
                let envelope = lettre::address::Envelope::new(Some(from), to).map_err(|e| e.to_string())?;
                transport.send_raw(&envelope, &mail.raw).await.map_err(|e| e.to_string())?;
            }
            Transport::Dir(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                let name = format!("{:06}-{}.eml", mail.id, mail.kind);
                let tmp = dir.join(format!(".{name}.tmp"));
                std::fs::write(&tmp, &mail.raw).map_err(|e| format!("{}: {e}", tmp.display()))?;
                std::fs::rename(&tmp, dir.join(&name)).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
        }
        Ok(note)
    }

    /// Runs the retest program with the request (JSON) on stdin; its exit
    /// status and the start of its output are recorded on the case.
    async fn run_command(&self, mail: &OutboxMail) -> Result<Option<String>, String> {
        let Some(cmd) = &self.command else { return Err("no [retest] command configured".into()) };
        let Some((program, args)) = cmd.argv.split_first() else { return Err("the retest command is empty".into()) };
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot run {program}: {e}"))?;
        if let Some(mut stdin) = child.stdin.take() {
            use tokio::io::AsyncWriteExt;
            stdin.write_all(&mail.raw).await.map_err(|e| format!("{program}: {e}"))?;
        }
        let out = tokio::time::timeout(cmd.timeout, child.wait_with_output())
            .await
            .map_err(|_| format!("{program} did not finish within {:?}", cmd.timeout))?
            .map_err(|e| format!("{program}: {e}"))?;
        let text = String::from_utf8_lossy(if out.stdout.is_empty() { &out.stderr } else { &out.stdout });
        let first: String = text.trim().chars().take(200).collect();
        if !out.status.success() {
            return Err(format!("{program} exited with {}: {first}", out.status));
        }
        Ok(Some(format!("retest command exited 0: {first}")))
    }
}
