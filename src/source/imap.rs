//! The IMAP source: the only module that speaks IMAP (async-imap on
//! tokio, TLS through rustls).
//!
//! A mailbox is read by UID. Where it has got to is a checkpoint token,
//! `UIDVALIDITY:UID`, which the engine stores in the transaction that
//! stores the message with that UID; a sync fetches what is above it. A
//! changed UIDVALIDITY means the server renumbered the mailbox: the whole
//! mailbox is read again, which is harmless (messages are idempotent by
//! Message-ID). Messages are fetched in batches, at most
//! [`MAX_MESSAGE_BYTES`] of each (a partial fetch: a giant message never
//! crosses the wire whole). Waiting for new mail (IDLE, or a poll) and
//! reconnecting are the caller's (`daemon`).

use std::fmt;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::TryStreamExt;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::{Checkpoint, Envelope, MAX_MESSAGE_BYTES};
use crate::config::Tls;

/// How long connecting, TLS and login may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one command (a SELECT, a SEARCH, a batch's FETCH) may take: a
/// connection that died without a word would otherwise be waited on for
/// ever.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(300);

async fn bounded<T>(what: &str, f: impl std::future::Future<Output = Result<T, ImapError>>) -> Result<T, ImapError> {
    tokio::time::timeout(COMMAND_TIMEOUT, f)
        .await
        .map_err(|_| ImapError::Timeout(format!("{what}: no answer within {COMMAND_TIMEOUT:?}")))?
}

#[derive(Debug, thiserror::Error)]
pub enum ImapError {
    #[error("cannot connect to {host}:{port}: {source}")]
    Connect {
        host: String,
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("TLS with {host}: {message}")]
    Tls { host: String, message: String },
    #[error("{host} refused the login of {user}: {message}")]
    Login { host: String, user: String, message: String },
    #[error("{what}: {source}")]
    Protocol {
        what: String,
        #[source]
        source: async_imap::error::Error,
    },
    #[error("mailbox {mailbox} has no UIDVALIDITY")]
    NoUidValidity { mailbox: String },
    /// No answer in time, or an answer cut short.
    #[error("{0}")]
    Timeout(String),
    /// Handing fetched messages over failed (the store, or the run
    /// stopping).
    #[error("{0}")]
    Deliver(String),
}

/// How to reach and log in to a server.
#[derive(Clone)]
pub struct Account {
    pub host: String,
    pub port: u16,
    pub tls: Tls,
    pub user: String,
    pub password: String,
    /// Certificate authorities to trust besides the built-in roots.
    pub ca_file: Option<PathBuf>,
}

impl fmt::Debug for Account {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the password.
        write!(f, "Account({}@{}:{} {:?})", self.user, self.host, self.port, self.tls)
    }
}

impl Account {
    /// The name of a mailbox of this account as a checkpoint's source.
    pub fn source_name(&self, mailbox: &str) -> String {
        format!("imap://{}@{}:{}/{}", self.user, self.host, self.port, mailbox)
    }
}

/// A connection, encrypted or not (loopback only: the config refuses
/// plain text elsewhere).
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stream::Plain(_) => "Stream::Plain",
            Stream::Tls(_) => "Stream::Tls",
        })
    }
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

pub type Session = async_imap::Session<Stream>;

fn protocol(what: impl Into<String>) -> impl FnOnce(async_imap::error::Error) -> ImapError {
    let what = what.into();
    move |source| ImapError::Protocol { what, source }
}

async fn tls_wrap(tcp: TcpStream, acct: &Account) -> Result<Stream, ImapError> {
    let tls_err = |message: String| ImapError::Tls { host: acct.host.clone(), message };
    let mut roots = tokio_rustls::rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(path) = &acct.ca_file {
        let pem = std::fs::read(path).map_err(|e| tls_err(format!("cannot read {}: {e}", path.display())))?;
        for cert in rustls_pemfile::certs(&mut pem.as_slice()) {
            let cert = cert.map_err(|e| tls_err(format!("{}: {e}", path.display())))?;
            roots.add(cert).map_err(|e| tls_err(format!("{}: {e}", path.display())))?;
        }
    }
    let config = tokio_rustls::rustls::ClientConfig::builder_with_provider(Arc::new(
        tokio_rustls::rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| tls_err(e.to_string()))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = tokio_rustls::rustls::pki_types::ServerName::try_from(acct.host.clone())
        .map_err(|e| tls_err(format!("not a host name: {e}")))?;
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| tls_err(e.to_string()))?;
    Ok(Stream::Tls(Box::new(tls)))
}

/// Connects, encrypts as configured, and logs in.
pub async fn connect(acct: &Account) -> Result<Session, ImapError> {
    tokio::time::timeout(CONNECT_TIMEOUT, connect_inner(acct)).await.map_err(|_| {
        ImapError::Timeout(format!("no login to {}:{} within {CONNECT_TIMEOUT:?}", acct.host, acct.port))
    })?
}

async fn connect_inner(acct: &Account) -> Result<Session, ImapError> {
    let tcp = TcpStream::connect((acct.host.as_str(), acct.port)).await.map_err(|source| ImapError::Connect {
        host: acct.host.clone(),
        port: acct.port,
        source,
    })?;
    let mut client = match acct.tls {
        Tls::Implicit => async_imap::Client::new(tls_wrap(tcp, acct).await?),
        Tls::None => async_imap::Client::new(Stream::Plain(tcp)),
        Tls::Starttls => {
            let mut plain = async_imap::Client::new(Stream::Plain(tcp));
            greeting(&mut plain, acct).await?;
            plain.run_command_and_check_ok("STARTTLS", None).await.map_err(protocol("STARTTLS"))?;
            let Stream::Plain(tcp) = plain.into_inner() else {
                return Err(ImapError::Tls { host: acct.host.clone(), message: "not a plain connection".into() });
            };
            // No greeting follows STARTTLS.
            let client = async_imap::Client::new(tls_wrap(tcp, acct).await?);
            return login(client, acct).await;
        }
    };
    greeting(&mut client, acct).await?;
    login(client, acct).await
}

async fn greeting(client: &mut async_imap::Client<Stream>, acct: &Account) -> Result<(), ImapError> {
    match client.read_response().await {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(ImapError::Connect {
            host: acct.host.clone(),
            port: acct.port,
            source: std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed before its greeting"),
        }),
        Err(source) => Err(ImapError::Connect { host: acct.host.clone(), port: acct.port, source }),
    }
}

async fn login(client: async_imap::Client<Stream>, acct: &Account) -> Result<Session, ImapError> {
    client.login(&acct.user, &acct.password).await.map_err(|(e, _)| ImapError::Login {
        host: acct.host.clone(),
        user: acct.user.clone(),
        message: e.to_string(),
    })
}

/// Whether the server offers IDLE.
pub async fn has_idle(session: &mut Session) -> Result<bool, ImapError> {
    let caps = session.capabilities().await.map_err(protocol("CAPABILITY"))?;
    Ok(caps.has_str("IDLE"))
}

/// A mailbox's checkpoint token: `UIDVALIDITY:UID` of the last message
/// stored.
pub fn token(uidvalidity: u32, uid: u32) -> String {
    format!("{uidvalidity}:{uid}")
}

pub fn parse_token(token: &str) -> Option<(u32, u32)> {
    let (v, u) = token.split_once(':')?;
    Some((v.parse().ok()?, u.parse().ok()?))
}

/// What one sync of a mailbox did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Synced {
    pub messages: u64,
    /// The mailbox was renumbered (or never read): read from the start.
    pub full: bool,
}

/// UIDs as an IMAP set, runs folded: `1:3,7,9:10`.
pub fn uid_set(uids: &[u32]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < uids.len() {
        let start = uids[i];
        let mut end = start;
        while i + 1 < uids.len() && uids[i + 1] == end + 1 {
            i += 1;
            end = uids[i];
        }
        if !out.is_empty() {
            out.push(',');
        }
        if start == end {
            out.push_str(&start.to_string());
        } else {
            out.push_str(&format!("{start}:{end}"));
        }
        i += 1;
    }
    out
}

/// Fetches what `mailbox` holds above `after` (a stored checkpoint
/// token), `batch` messages at a time, in UID order, and hands each batch
/// to `deliver` (which stores it, with its checkpoints, before the next
/// is fetched; its error ends the sync). `now` dates each fetch.
pub async fn sync_mailbox<F, Fut>(
    session: &mut Session,
    acct: &Account,
    mailbox: &str,
    after: Option<&str>,
    batch: usize,
    now: fn() -> i64,
    mut deliver: F,
) -> Result<Synced, ImapError>
where
    F: FnMut(Vec<Envelope>) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let mb = bounded("SELECT", async { session.select(mailbox).await.map_err(protocol(format!("SELECT {mailbox}"))) })
        .await?;
    let validity = mb.uid_validity.ok_or_else(|| ImapError::NoUidValidity { mailbox: mailbox.to_string() })?;
    let (last, full) = match after.and_then(parse_token) {
        Some((v, u)) if v == validity => (u, false),
        Some((v, _)) => {
            tracing::warn!(mailbox, old = v, new = validity, "UIDVALIDITY changed: reading the whole mailbox again");
            (0, true)
        }
        None => (0, true),
    };
    let mut synced = Synced { messages: 0, full };
    if mb.exists == 0 {
        return Ok(synced);
    }
    // `n:*` always matches the last message, even below n: filter.
    let query = format!("UID {}:*", last.saturating_add(1));
    let found =
        bounded("UID SEARCH", async { session.uid_search(&query).await.map_err(protocol("UID SEARCH")) }).await?;
    let mut uids: Vec<u32> = found.into_iter().filter(|&u| u > last).collect();
    uids.sort_unstable();
    let source = acct.source_name(mailbox);
    for chunk in uids.chunks(batch.max(1)) {
        let query = format!("(UID RFC822.SIZE BODY.PEEK[]<0.{MAX_MESSAGE_BYTES}>)");
        let fetched: Vec<async_imap::types::Fetch> = bounded("UID FETCH", async {
            session
                .uid_fetch(uid_set(chunk), &query)
                .await
                .map_err(protocol("UID FETCH"))?
                .try_collect()
                .await
                .map_err(protocol("UID FETCH"))
        })
        .await?;
        let at = now();
        let mut envs: Vec<(u32, Envelope)> = fetched
            .iter()
            .filter_map(|f| {
                let uid = f.uid?;
                let body = f.body()?;
                let original_len = f.size.map_or(body.len() as u64, u64::from).max(body.len() as u64);
                let mut env = Envelope::new(body.to_vec(), at);
                env.original_len = original_len;
                env.checkpoint = Some(Checkpoint { source: source.clone(), token: token(validity, uid) });
                Some((uid, env))
            })
            .collect();
        envs.sort_by_key(|(uid, _)| *uid);
        // A message expunged since the SEARCH is not in the answer, and is
        // gone: what is asked is what is still there.
        let mut wanted: Vec<u32> = chunk.to_vec();
        if envs.len() < chunk.len() {
            let gone = expunged(session, chunk, &envs).await?;
            if !gone.is_empty() {
                tracing::info!(mailbox, count = gone.len(), "messages expunged before they were fetched");
                wanted.retain(|u| !gone.contains(u));
            }
        }
        // A connection lost mid-FETCH can end the answer early: store only
        // the unbroken run of what was asked, so the checkpoint never
        // passes a message that was not stored; the rest is fetched again.
        let whole = envs.len() == wanted.len();
        let run = envs.iter().zip(&wanted).take_while(|((u, _), want)| u == *want).count();
        envs.truncate(run);
        synced.messages += envs.len() as u64;
        deliver(envs.into_iter().map(|(_, e)| e).collect()).await.map_err(ImapError::Deliver)?;
        if !whole {
            return Err(ImapError::Timeout(format!("UID FETCH: {run} of {} messages came back", wanted.len())));
        }
    }
    Ok(synced)
}

/// Which of the messages asked for (`chunk`) and not in the answer
/// (`got`) the mailbox no longer holds: a UID SEARCH of the missing
/// names those still there.
async fn expunged(session: &mut Session, chunk: &[u32], got: &[(u32, Envelope)]) -> Result<Vec<u32>, ImapError> {
    let missing: Vec<u32> = chunk.iter().copied().filter(|u| !got.iter().any(|(g, _)| g == u)).collect();
    let query = format!("UID {}", uid_set(&missing));
    let there =
        bounded("UID SEARCH", async { session.uid_search(&query).await.map_err(protocol("UID SEARCH")) }).await?;
    Ok(missing.into_iter().filter(|u| !there.contains(u)).collect())
}

/// What woke an IDLE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woken {
    /// The server said something (new mail, most likely).
    NewData,
    /// The wait ran out: look anyway.
    Timeout,
}

/// Waits in IDLE on the selected mailbox for up to `wait`; gives the
/// session back.
pub async fn idle(session: Session, wait: Duration) -> Result<(Session, Woken), ImapError> {
    let mut handle = session.idle();
    handle.init().await.map_err(protocol("IDLE"))?;
    let (fut, _stop) = handle.wait_with_timeout(wait);
    let woken = match fut.await.map_err(protocol("IDLE"))? {
        async_imap::extensions::idle::IdleResponse::NewData(_) => Woken::NewData,
        _ => Woken::Timeout,
    };
    let session = handle.done().await.map_err(protocol("DONE"))?;
    Ok((session, woken))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_sets_fold_runs() {
        assert_eq!(uid_set(&[1, 2, 3, 7, 9, 10]), "1:3,7,9:10");
        assert_eq!(uid_set(&[5]), "5");
        assert_eq!(uid_set(&[]), "");
    }

    #[test]
    fn tokens_round_trip() {
        assert_eq!(parse_token(&token(1_700_000_000, 42)), Some((1_700_000_000, 42)));
        assert_eq!(parse_token("junk"), None);
        assert_eq!(parse_token("1:x"), None);
    }
}
