//! Whether a mail is from whom its From says: DKIM, and ARC for lists
//! that rewrite From (`mail-auth`). The only module that asks DNS.
//!
//! A mail is authenticated when a DKIM signature passes whose `d=`
//! aligns with the From domain (relaxed: the same domain, or one a
//! subdomain of the other), that signs From and the whole body (no
//! `l=`); or, failing that, when an ARC chain validates and a sealer
//! named in `[auth] trusted_arc` (with every sealer after it trusted too,
//! so the newest message signature is a trusted one) recorded a DKIM
//! pass aligned with the original author (`X-Original-From`, else From).
//! Anything else (no signature, a body changed after signing, a key that
//! cannot be fetched or does not parse, another domain's signature) is
//! not authenticated, with the reason in words.
//!
//! Keys come from `[auth] keys_file` first (pinned records), then DNS;
//! what DNS answers is kept until its TTL ends. Verification of one mail
//! is cut off at `[auth] timeout_seconds`, never panics, and verifies at
//! most [`MAX_SIGNATURES`] signatures.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use mail_auth::common::parse::TxtRecordParser;
use mail_auth::common::verify::DomainKey;
use mail_auth::dkim::DkimError;
use mail_auth::hickory_resolver::config::{NameServerConfig, ResolverConfig, ResolverOpts};
use mail_auth::{
    AuthenticatedMessage, DkimResult, DnsError, Error, MessageAuthenticator, Parameters, ResolverCache, Txt,
};

use crate::config::{AuthConfig, ConfigError, DkimMode};
use crate::model::{Auth, AuthMethod};

/// A mail with more DKIM or ARC signatures than this is not verified:
/// each may cost a DNS lookup and an RSA verification.
pub const MAX_SIGNATURES: usize = 8;
/// DNS answers kept at most, across mails.
const MAX_CACHED: usize = 4096;

/// A record and until when it holds (`None`: pinned, for ever).
type Entries = HashMap<Box<str>, (Txt, Option<Instant>)>;

/// Key records: pinned ones (never expire) and what DNS said (until its
/// TTL ends), by `<selector>._domainkey.<domain>.`.
#[derive(Default)]
pub struct Keys {
    map: Mutex<Entries>,
}

impl Keys {
    /// Pins `record` (`v=DKIM1; k=...; p=...`) for `name`
    /// (`<selector>._domainkey.<domain>`). A record that does not parse
    /// is pinned as such: a signature that needs it says why it failed.
    pub fn pin(&self, name: &str, record: &str) {
        let txt = match DomainKey::parse(record.as_bytes()) {
            Ok(k) => Txt::DomainKey(Arc::new(k)),
            Err(e) => Txt::Error(e),
        };
        self.lock().insert(fqdn(name).into_boxed_str(), (txt, None));
    }

    /// Pins every record of a keys file: one per line, `NAME RECORD`;
    /// blank lines and `#` comments are skipped. A line that does not
    /// parse is an error naming it.
    pub fn pin_file(&self, text: &str) -> Result<usize, String> {
        let mut n = 0;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((name, record)) = line.split_once(char::is_whitespace) else {
                return Err(format!("line {}: expected \"<selector>._domainkey.<domain> v=DKIM1; ...\"", i + 1));
            };
            if !name.to_ascii_lowercase().contains("._domainkey.") {
                return Err(format!("line {}: {name} is not a <selector>._domainkey.<domain> name", i + 1));
            }
            DomainKey::parse(record.trim().as_bytes())
                .map_err(|e| format!("line {}: the record for {name} does not parse: {e}", i + 1))?;
            self.pin(name, record.trim());
            n += 1;
        }
        Ok(n)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        // A poisoned map is still a map of parsed records.
        self.map.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl ResolverCache<Box<str>, Txt> for Keys {
    fn get<Q>(&self, name: &Q) -> Option<Txt>
    where
        Box<str>: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        let map = self.lock();
        let (txt, until) = map.get(name)?;
        until.is_none_or(|t| t > Instant::now()).then(|| txt.clone())
    }

    fn remove<Q>(&self, name: &Q) -> Option<Txt>
    where
        Box<str>: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        self.lock().remove(name).map(|(t, _)| t)
    }

    fn insert(&self, key: Box<str>, value: Txt, valid_until: Instant) {
        let mut map = self.lock();
        if map.get(&key).is_some_and(|(_, until)| until.is_none()) {
            return; // pinned
        }
        if map.len() >= MAX_CACHED {
            map.retain(|_, (_, until)| until.is_none());
        }
        map.insert(key, (value, Some(valid_until)));
    }
}

fn fqdn(name: &str) -> String {
    let mut n = name.trim().to_ascii_lowercase();
    if !n.ends_with('.') {
        n.push('.');
    }
    n
}

/// Verifies senders, as `[auth]` says.
pub struct Verifier {
    authenticator: MessageAuthenticator,
    keys: Keys,
    trusted_arc: Vec<String>,
    timeout: Duration,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier").field("trusted_arc", &self.trusted_arc).field("timeout", &self.timeout).finish()
    }
}

impl Verifier {
    /// The verifier `[auth]` asks for (`None` with `dkim = "off"`): its
    /// pinned keys read, its resolver set up (not yet asked anything).
    pub fn from_config(cfg: &AuthConfig, config_path: &std::path::Path) -> Result<Option<Verifier>, ConfigError> {
        if cfg.dkim == DkimMode::Off {
            return Ok(None);
        }
        let bad = |key: &str, message: String| ConfigError::Key {
            path: config_path.to_path_buf(),
            key: format!("auth.{key}"),
            message,
        };
        let servers: Vec<std::net::SocketAddr> =
            cfg.nameservers.iter().filter_map(|s| crate::config::nameserver(s)).collect();
        let v = Verifier::new(&servers, cfg.trusted_arc.clone(), Duration::from_secs(cfg.timeout_seconds.max(1)))
            .map_err(|e| bad("nameservers", e))?;
        v.keys.pin_file(&cfg.keys(config_path)?).map_err(|e| bad("keys_file", e))?;
        Ok(Some(v))
    }

    /// A verifier asking `nameservers` (none: the system's resolver), no
    /// key pinned yet.
    pub fn new(
        nameservers: &[std::net::SocketAddr],
        trusted_arc: Vec<String>,
        timeout: Duration,
    ) -> Result<Verifier, String> {
        let mut opts = ResolverOpts::default();
        // A DNS server that does not answer must fail the lookup, with a
        // reason, well before the verification's own limit (a lookup
        // tries UDP, then TCP, each this long).
        opts.timeout = (timeout / 4).min(Duration::from_secs(5));
        opts.attempts = 1;
        let authenticator = if nameservers.is_empty() {
            // Without a usable resolv.conf no key can be fetched: each
            // signature then says so, and only pinned keys verify.
            MessageAuthenticator::new_system_conf().or_else(|e| {
                tracing::warn!(error = %e, "no DNS resolver from the system: only [auth] keys_file keys verify");
                MessageAuthenticator::new(ResolverConfig::from_name_servers(Vec::new()), opts.clone())
            })
        } else {
            let servers = nameservers
                .iter()
                .map(|a| {
                    let mut ns = NameServerConfig::udp_and_tcp(a.ip());
                    for c in &mut ns.connections {
                        c.port = a.port();
                    }
                    ns
                })
                .collect();
            MessageAuthenticator::new(ResolverConfig::from_name_servers(servers), opts)
        }
        .map_err(|e| format!("cannot set up the DNS resolver: {e}"))?;
        let trusted_arc = trusted_arc.iter().map(|d| d.trim().trim_end_matches('.').to_ascii_lowercase()).collect();
        Ok(Verifier { authenticator, keys: Keys::default(), trusted_arc, timeout })
    }

    /// The pinned keys (and what DNS said).
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// How the sender of `raw` is authenticated. Never fails: what could
    /// not be verified (in time) is not authenticated, with the reason.
    pub async fn verify(&self, raw: &[u8]) -> Auth {
        let work = std::panic::AssertUnwindSafe(self.verify_mail(raw)).catch_unwind();
        match tokio::time::timeout(self.timeout, work).await {
            Ok(Ok(auth)) => auth,
            Ok(Err(_)) => Auth::none("the verifier failed on this message (a bug in lkpbot)"),
            Err(_) => Auth::none(format!("not verified within {}s", self.timeout.as_secs())),
        }
    }

    async fn verify_mail(&self, raw: &[u8]) -> Auth {
        let Some(msg) = AuthenticatedMessage::parse(raw) else {
            return Auth::none("the message could not be read for DKIM");
        };
        let from = match msg.from.as_slice() {
            [one] => one.trim().to_ascii_lowercase(),
            [] => return Auth::none("no From address"),
            _ => return Auth::none("more than one From address"),
        };
        let signatures = msg.dkim_headers.len() + msg.ams_headers.len();
        if signatures > MAX_SIGNATURES {
            return Auth::none(format!("{signatures} signatures: more than {MAX_SIGNATURES} are not verified"));
        }
        let params = Parameters::new(&msg).with_txt_cache(&self.keys);
        let outputs = self.authenticator.verify_dkim(params).await;
        let mut reasons = Vec::new();
        for o in &outputs {
            match (o.result(), o.signature()) {
                (DkimResult::Pass, Some(sig)) => {
                    let d = sig.d.trim_end_matches('.').to_ascii_lowercase();
                    if sig.l > 0 {
                        reasons.push(format!("the signature of {d} covers only part of the body (l=)"));
                    } else if !sig.h.iter().any(|h| h.eq_ignore_ascii_case("from")) {
                        reasons.push(format!("the signature of {d} does not sign From"));
                    } else if !aligned(&d, domain_of(&from)) {
                        reasons.push(format!("the signature of {d} is not of From's domain ({})", domain_of(&from)));
                    } else {
                        return Auth {
                            reason: format!("DKIM signature of {d} (s={}) verified", sig.s),
                            method: AuthMethod::Dkim(d),
                            author: Some(from),
                        };
                    }
                }
                (r, sig) => reasons.push(describe(r, sig.map(|s| (s.d.as_str(), s.s.as_str())))),
            }
        }
        if outputs.is_empty() {
            let unread = msg.headers.iter().filter(|(name, _)| name.eq_ignore_ascii_case(b"DKIM-Signature")).count();
            reasons.push(match unread {
                0 => "no DKIM signature".into(),
                n => format!("a malformed signature: {n} DKIM-Signature header(s) could not be read"),
            });
        }
        if !msg.ams_headers.is_empty() || msg.has_arc_errors {
            match self.arc(&msg, &from).await {
                Ok(auth) => return auth,
                Err(why) => reasons.push(why),
            }
        }
        Auth::none(reasons.join("; "))
    }

    /// A trusted sealer's word for the original author.
    async fn arc(&self, msg: &AuthenticatedMessage<'_>, from: &str) -> Result<Auth, String> {
        if self.trusted_arc.is_empty() {
            return Err("an ARC seal, but [auth] trusted_arc names no sealer".into());
        }
        let params = Parameters::new(msg).with_txt_cache(&self.keys);
        let out = self.authenticator.verify_arc(params).await;
        match out.result() {
            DkimResult::Pass => {}
            r => return Err(format!("ARC chain: {}", describe(r, None))),
        }
        let author = original_author(msg).unwrap_or_else(|| from.to_string());
        let author_domain = domain_of(&author).to_string();
        // Newest first: a sealer's word counts only while every sealer
        // after it is trusted too (only the newest message signature is
        // verified, so an untrusted hop could have replaced the rest).
        for set in out.sets().iter().rev() {
            let sealer = set.seal.header.d.trim_end_matches('.').to_ascii_lowercase();
            if !self.trusted_arc.contains(&sealer) {
                return Err(format!("ARC sealed by {sealer}, which [auth] trusted_arc does not name"));
            }
            if let Some(d) = dkim_passes(set.results.value).into_iter().find(|d| aligned(d, &author_domain)) {
                return Ok(Auth {
                    reason: format!("{sealer} recorded a DKIM pass of {d} for {author}"),
                    method: AuthMethod::Arc(sealer),
                    author: Some(author),
                });
            }
        }
        Err(format!("no trusted ARC sealer recorded a DKIM pass for {author}"))
    }
}

/// A DKIM result that is not a pass, in words; `sig` is the signature's
/// domain and selector.
fn describe(r: &DkimResult, sig: Option<(&str, &str)>) -> String {
    let who = sig.map_or_else(|| "a DKIM signature".to_string(), |(d, s)| format!("the signature of {d} (s={s})"));
    let key = sig.map_or_else(String::new, |(d, s)| format!(" {s}._domainkey.{d}"));
    match r {
        DkimResult::Pass => format!("{who} passed"),
        DkimResult::None => "no DKIM signature".into(),
        DkimResult::Neutral(Error::Dkim(DkimError::FailedBodyHashMatch)) => {
            format!("{who}: the body changed after signing")
        }
        DkimResult::Neutral(Error::Dkim(DkimError::SignatureExpired)) => format!("{who} has expired"),
        DkimResult::Neutral(e) if sig.is_none() => format!("a malformed signature: {e}"),
        DkimResult::Neutral(e) => format!("{who}: {e}"),
        DkimResult::Fail(e) => format!("{who} does not verify: {e}"),
        DkimResult::TempError(Error::Dns(e)) | DkimResult::PermError(Error::Dns(e @ DnsError::Resolver(_))) => {
            format!("{who}: the key{key} could not be fetched: {e}")
        }
        DkimResult::PermError(Error::Dns(DnsError::RecordNotFound(_))) => {
            format!("{who}: no key is published at{key}")
        }
        DkimResult::PermError(e) | DkimResult::TempError(e) => {
            format!("{who}: the key record{key} cannot be used: {e}")
        }
    }
}

/// The domain of an address (all of it when there is no `@`).
fn domain_of(address: &str) -> &str {
    address.rsplit_once('@').map_or(address, |(_, d)| d).trim_end_matches('.')
}

/// Relaxed alignment without the public suffix list: the same domain, or
/// one a subdomain of the other, the shorter having at least two labels
/// (so `d=org` aligns with nothing).
pub fn aligned(signer: &str, from_domain: &str) -> bool {
    let (a, b) = (signer.to_ascii_lowercase(), from_domain.to_ascii_lowercase());
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.is_empty() || !short.contains('.') {
        return false;
    }
    long == short || long.ends_with(&format!(".{short}"))
}

/// The author a list that rewrote From kept in `X-Original-From`.
fn original_author(msg: &AuthenticatedMessage<'_>) -> Option<String> {
    let (_, value) = msg.headers.iter().find(|(name, _)| name.eq_ignore_ascii_case(b"X-Original-From"))?;
    let text = String::from_utf8_lossy(value);
    let addr = match (text.rfind('<'), text.rfind('>')) {
        (Some(a), Some(b)) if a < b => &text[a + 1..b],
        _ => text.trim(),
    };
    let addr = addr.trim().to_ascii_lowercase();
    (addr.contains('@') && !addr.contains(char::is_whitespace)).then_some(addr)
}

/// The domains an Authentication-Results text records a DKIM pass for
/// (`dkim=pass header.d=example.org`, or `header.i=@example.org`).
pub fn dkim_passes(results: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(results);
    let mut out = Vec::new();
    for clause in text.split(';') {
        let mut words = clause.split_whitespace();
        if !words.next().is_some_and(|w| w.eq_ignore_ascii_case("dkim=pass")) {
            continue;
        }
        for w in words {
            let lower = w.to_ascii_lowercase();
            let value = lower.strip_prefix("header.d=").or_else(|| lower.strip_prefix("header.i="));
            if let Some(v) = value {
                let v = v.trim_matches('"');
                let d = v.rsplit_once('@').map_or(v, |(_, d)| d).trim_end_matches('.');
                if !d.is_empty() {
                    out.push(d.to_string());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relaxed_alignment() {
        for (d, from, want) in [
            ("intel.com", "intel.com", true),
            ("Intel.COM", "intel.com", true),
            ("intel.com", "linux.intel.com", true),
            ("mail.intel.com", "intel.com", true),
            ("intel.com", "notintel.com", false),
            ("example.org", "intel.com", false),
            ("com", "intel.com", false),
            ("", "intel.com", false),
        ] {
            assert_eq!(aligned(d, from), want, "{d} / {from}");
        }
    }

    #[test]
    fn authentication_results_passes() {
        let aar = b" i=1; subspace.kernel.org;\r\n\tdkim=pass (2048-bit key) header.d=Example.org header.s=s1 header.b=abc;\r\n\
                    \tdkim=fail header.d=other.org; dkim=pass header.i=\"@lists.example.net\"; spf=pass smtp.mailfrom=x.org";
        assert_eq!(dkim_passes(aar), ["example.org", "lists.example.net"]);
        assert!(dkim_passes(b"i=1; x; dkim=none").is_empty());
    }

    #[test]
    fn a_keys_file_line_that_does_not_parse_is_named() {
        let keys = Keys::default();
        let err = keys.pin_file("# test keys\n\ns1._domainkey.example.org v=DKIM1; k=rsa; p=!!!\n").unwrap_err();
        assert!(err.starts_with("line 3:"), "{err}");
        assert!(keys.pin_file("nonsense\n").unwrap_err().contains("line 1"));
        assert!(keys.pin_file("example.org v=DKIM1; p=abc\n").unwrap_err().contains("not a <selector>._domainkey"));
    }
}
