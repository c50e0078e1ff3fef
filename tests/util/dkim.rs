//! Signing test mail with the keys of `fixtures/auth/` (made for the
//! tests, used nowhere else), and the keys file that pins their records,
//! so a verifier never asks real DNS.

use mail_auth::common::crypto::{Ed25519Key, RsaKey, Sha256, SigningKey};
use mail_auth::common::headers::HeaderWriter;
use mail_auth::dkim::DkimSigner;

/// Nothing listens here: a key that is not pinned cannot be fetched.
pub const NO_DNS: &str = "127.0.0.1:9";

/// The headers a signature covers unless a test says otherwise.
pub const SIGNED: &[&str] = &["From", "To", "Subject", "Date", "Message-ID"];

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(super::fixtures().join("auth").join(name)).unwrap()
}

pub fn rsa() -> RsaKey<Sha256> {
    #[allow(deprecated)]
    RsaKey::<Sha256>::from_rsa_pem(&String::from_utf8(fixture("rsa-2048.pem")).unwrap()).unwrap()
}

pub fn ed25519() -> Ed25519Key {
    Ed25519Key::from_pkcs8_maybe_unchecked_der(&fixture("ed25519.pk8")).unwrap()
}

pub fn rsa_record() -> String {
    format!("v=DKIM1; k=rsa; p={}", String::from_utf8(fixture("rsa-2048.pub.b64")).unwrap())
}

pub fn ed25519_record() -> String {
    format!("v=DKIM1; k=ed25519; p={}", String::from_utf8(fixture("ed25519.pub.b64")).unwrap())
}

/// The keys file the end-to-end tests use: `rsa` and `ed` of
/// example.org, `rsa` of other.org and of intel.com, `arc` of
/// lists.example.net.
pub fn keys_file() -> String {
    format!(
        "# test keys\nrsa._domainkey.example.org {}\ned._domainkey.example.org {}\nrsa._domainkey.other.org {}\n\
         arc._domainkey.lists.example.net {}\nrsa._domainkey.intel.com {}\n",
        rsa_record(),
        ed25519_record(),
        rsa_record(),
        rsa_record(),
        rsa_record()
    )
}

/// `text` with a DKIM-Signature of `domain` (selector `selector`) over
/// `headers`.
pub fn sign<K: SigningKey>(key: K, domain: &str, selector: &str, headers: &[&str], text: &str) -> String {
    let sig = DkimSigner::from_key(key)
        .domain(domain)
        .selector(selector)
        .headers(headers.iter().copied())
        .sign(text.as_bytes())
        .unwrap();
    sig.to_header() + text
}

/// `mail` (LF or CRLF line ends) signed with the RSA key as `domain`'s
/// selector `rsa`, over From, To, Cc, Subject, Date, Message-ID,
/// In-Reply-To and References; CRLF line ends, as it goes over the wire.
pub fn signed(domain: &str, mail: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(mail).replace("\r\n", "\n").replace('\n', "\r\n");
    let headers = ["From", "To", "Cc", "Subject", "Date", "Message-ID", "In-Reply-To", "References"];
    sign(rsa(), domain, "rsa", &headers, &text).into_bytes()
}
