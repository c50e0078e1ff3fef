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
use crate::store::{Claim, Failure, OutboxMail, Store, StoreError};

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

/// Sends the outbox's due mail through its transport (SMTP, a directory
/// of files for dry runs), claiming each row first.
pub struct Mailer {
    transport: Transport,
    command: Option<RetestCommand>,
    clock: fn() -> i64,
    /// The first wait after a failure (`[outbox] retry_seconds`); it
    /// doubles up to [`MAX_RETRY`].
    first_retry: i64,
    /// The longest one mail may take (`[smtp] timeout_seconds`).
    limit: Duration,
    /// Whose claims this sender's are: this process, uniquely.
    owner: String,
}

/// The limit of a dry run's file write.
const DIR_LIMIT: Duration = Duration::from_secs(60);

/// A name for this process (and this sender in it) no other process
/// shares: `<host>:<pid>:<n>`.
pub fn process_name(clock: fn() -> i64) -> String {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}:{}:{}.{n}", host_name(), std::process::id(), clock())
}

/// This machine's name, for logs and claims.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// Why a mail was not sent, and whose fault that was.
type SendResult = Result<Option<String>, (Failure, String)>;

impl Mailer {
    /// The transport the config says: `[smtp]`, else a dry run into
    /// `[outbox] dir`; the retest program when the backend is `command`.
    pub fn from_config(cfg: &Config, config_path: &std::path::Path, clock: fn() -> i64) -> Result<Mailer, ConfigError> {
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
                    .timeout(Some(Duration::from_secs(s.timeout_seconds.max(1))));
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
        let limit = cfg.smtp.as_ref().map_or(DIR_LIMIT, |s| Duration::from_secs(s.timeout_seconds.max(1)));
        Ok(Mailer { transport, command, clock, first_retry, limit, owner: process_name(clock) })
    }

    /// A dry run into `dir`.
    pub fn to_dir(dir: PathBuf, clock: fn() -> i64) -> Mailer {
        Mailer {
            transport: Transport::Dir(dir),
            command: None,
            clock,
            first_retry: 30,
            limit: DIR_LIMIT,
            owner: process_name(clock),
        }
    }

    /// Whose claims this sender takes.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// A claim made now: held twice as long as a send may take.
    fn claim(&self, now: i64) -> Claim {
        let secs = |d: Duration| i64::try_from(d.as_secs()).unwrap_or(i64::MAX / 4).saturating_mul(2);
        let command = self.command.as_ref().map_or(self.limit, |c| c.timeout);
        Claim { owner: self.owner.clone(), now, mail_lease: secs(self.limit), command_lease: secs(command) }
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
        // Mail waits for a server that did not take it: one of it is
        // tried now, due or not, so that a server back is seen at once.
        let mut probe = store.waits_for_server().await?;
        for _ in 0..PER_PASS {
            let now = (self.clock)();
            let due = if all { i64::MAX } else { now };
            let Some(mail) = store.claim_mail(&self.claim(now), due, probe).await? else { break };
            tracing::debug!(kind = %mail.kind, message_id = %mail.message_id, "sending");
            let command = mail.kind == "retest-command";
            let result = if command { self.run_command(&mail).await } else { self.send_one(&mail).await };
            let now = (self.clock)();
            match result {
                Ok(note) => {
                    let event = note
                        .map(|note| Event { note: Some(note), ..Event::new(now, EventKind::RetestDispatched, None) });
                    if !store.mark_sent(mail.id, &self.owner, now, mail.case.zip(event.as_ref())).await? {
                        tracing::warn!(message_id = %mail.message_id, "sent after its claim lapsed: another sender may send it too");
                    }
                    out.sent += 1;
                    tracing::info!(kind = %mail.kind, message_id = %mail.message_id, to = %mail.recipients.join(" "), "sent");
                    if probe && !command {
                        probe = false;
                        let n = store.server_answers(now).await?;
                        if n > 0 {
                            tracing::info!(mails = n, "the server takes mail again: what waited for it goes now");
                        }
                    }
                }
                Err((failure, e)) => {
                    let wait = (self.first_retry << mail.attempts.clamp(0, 16)).min(MAX_RETRY);
                    store.mark_failed(mail.id, &self.owner, &e, failure, now + wait).await?;
                    out.failed += 1;
                    tracing::warn!(kind = %mail.kind, message_id = %mail.message_id, error = %e, cause = failure.as_str(), retry_in = wait, "not sent");
                    if failure == Failure::Server {
                        // The rest would fail the same way.
                        break;
                    }
                }
            }
        }
        Ok(out)
    }

    /// Sends one mail; for a retest request, what to record on the case.
    async fn send_one(&self, mail: &OutboxMail) -> SendResult {
        let note =
            (mail.kind == "retest-request").then(|| format!("retest request mailed to {}", mail.recipients.join(", ")));
        let refused = |e: String| (Failure::Mail, e);
        match &self.transport {
            Transport::Smtp { transport, .. } => {
                let from = mail.sender.parse().map_err(|e| refused(format!("sender {}: {e}", mail.sender)))?;
                let to = mail
                    .recipients
                    .iter()
                    .map(|r| r.parse().map_err(|e| refused(format!("recipient {r}: {e}"))))
                    .collect::<Result<Vec<_>, _>>()?;
                let envelope = lettre::address::Envelope::new(Some(from), to).map_err(|e| refused(e.to_string()))?;
                match tokio::time::timeout(self.limit, transport.send_raw(&envelope, &mail.raw)).await {
                    Err(_) => return Err((Failure::Server, format!("no answer within {:?}", self.limit))),
                    Ok(Err(e)) => return Err((smtp_failure(&e), e.to_string())),
                    Ok(Ok(_)) => {}
                }
            }
            Transport::Dir(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| refused(format!("{}: {e}", dir.display())))?;
                let name = format!("{:06}-{}.eml", mail.id, mail.kind);
                let tmp = dir.join(format!(".{name}.tmp"));
                std::fs::write(&tmp, &mail.raw).map_err(|e| refused(format!("{}: {e}", tmp.display())))?;
                std::fs::rename(&tmp, dir.join(&name)).map_err(|e| refused(format!("{}: {e}", dir.display())))?;
            }
        }
        Ok(note)
    }

    /// Runs the retest program with the request (JSON) on stdin; its exit
    /// status and the start of its output are recorded on the case.
    async fn run_command(&self, mail: &OutboxMail) -> SendResult {
        self.run_program(mail).await.map_err(|e| (Failure::Mail, e))
    }

    async fn run_program(&self, mail: &OutboxMail) -> Result<Option<String>, String> {
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

/// Whose fault an SMTP error is: a reply about this mail (a refused
/// recipient, a full mailbox) is the mail's; no connection, TLS, a
/// timeout, an unreadable reply or 421 (the service is closing) is the
/// server's.
fn smtp_failure(e: &lettre::transport::smtp::Error) -> Failure {
    match e.status() {
        Some(code) if code.to_string() != "421" => Failure::Mail,
        _ => Failure::Server,
    }
}
