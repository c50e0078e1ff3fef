//! A private Dovecot (IMAP) for one test, on 127.0.0.1 and a free port,
//! in a temp dir, from the recipe in `../shared/docs/STACK.md`: started
//! in the foreground as a child, killed (SIGKILL) when dropped. Users are
//! [`USERS`], each with the password `<user>pass`.
//!
//! When `dovecot` is not installed the tests that need it skip, unless
//! `LKPBOT_REQUIRE_SERVERS` is set (CI sets it): then they fail.

use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The users, each with the password `<user>pass`.
pub const USERS: &[&str] = &["bot", "list", "alice", "lkp", "boss", "stranger", "author"];

pub struct Dovecot {
    pub dir: tempfile::TempDir,
    pub imap_port: u16,
    /// Where a Postfix delivers into it.
    pub lmtp_port: u16,
    /// With TLS: the implicit-TLS port (the plain one offers STARTTLS),
    /// and the certificate authority that signed the server's cert.
    pub tls: Option<(u16, PathBuf)>,
    child: Option<Child>,
}

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Whether a server is there; `None` means the test should skip (and it
/// has said so), a missing server under `LKPBOT_REQUIRE_SERVERS` panics.
pub fn have(program: &str) -> bool {
    let found =
        Command::new("sh").args(["-c", &format!("command -v {program}")]).output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("LKPBOT_REQUIRE_SERVERS").is_none(),
            "{program} is not installed, and LKPBOT_REQUIRE_SERVERS says the tests need it"
        );
        eprintln!("skipping: {program} is not installed (with LKPBOT_REQUIRE_SERVERS set this fails)");
    }
    found
}

impl Dovecot {
    /// A fresh server, ready to accept connections; `None` if there is no
    /// dovecot here (see [`have`]).
    pub fn start() -> Option<Dovecot> {
        if !have("dovecot") {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut d = Dovecot { dir, imap_port: free_port(), lmtp_port: free_port(), tls: None, child: None };
        d.write_config();
        d.launch();
        Some(d)
    }

    /// A server that speaks TLS: implicit on one port, STARTTLS on the
    /// other, with a certificate for 127.0.0.1 signed by a CA made now.
    pub fn start_with_tls() -> Option<Dovecot> {
        if !have("dovecot") || !have("openssl") {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let ca = make_certificates(dir.path());
        let mut d =
            Dovecot { dir, imap_port: free_port(), lmtp_port: free_port(), tls: Some((free_port(), ca)), child: None };
        d.write_config();
        d.launch();
        Some(d)
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn config(&self) -> PathBuf {
        self.path().join("dovecot.conf")
    }

    fn write_config(&self) {
        let d = self.path();
        for sub in ["run", "state", "mail"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        // Auth runs as dovecot, mail as nobody: both must reach the files.
        run("chmod", &["755", d.to_str().unwrap()]);
        run("chown", &["nobody:nogroup", d.join("mail").to_str().unwrap()]);
        let users: String = USERS.iter().map(|u| format!("{u}:{{PLAIN}}{u}pass::::\n")).collect();
        std::fs::write(d.join("users"), users).unwrap();
        let lmtp = self.lmtp_port;
        let (ssl, imaps) = match &self.tls {
            Some((port, _)) => {
                (format!("yes\nssl_cert = <{0}/server.pem\nssl_key = <{0}/server.key", d.display()), *port)
            }
            None => ("no".to_string(), 0),
        };
        let conf = format!(
            "base_dir = {d}/run\nstate_dir = {d}/state\ninstance_name = dovecot-test-{imap}\nlog_path = {d}/dovecot.log\n\
             protocols = imap lmtp\nlisten = 127.0.0.1\nssl = {ssl}\ndisable_plaintext_auth = no\nauth_mechanisms = plain login\n\
             mail_location = maildir:{d}/mail/%n\n\
             passdb {{\n  driver = passwd-file\n  args = scheme=PLAIN username_format=%n {d}/users\n}}\n\
             userdb {{\n  driver = static\n  args = uid=nobody gid=nogroup home={d}/mail/%n\n}}\n\
             service imap-login {{\n  inet_listener imap {{\n    address = 127.0.0.1\n    port = {imap}\n  }}\n  inet_listener imaps {{\n    address = 127.0.0.1\n    port = {imaps}\n  }}\n}}\n\
             service lmtp {{\n  inet_listener lmtp {{\n    address = 127.0.0.1\n    port = {lmtp}\n  }}\n}}\n",
            d = d.display(),
            imap = self.imap_port,
        );
        std::fs::write(self.config(), conf).unwrap();
    }

    fn launch(&mut self) {
        // A process group of its own, so a kill takes every worker with
        // the master, as a crash of the machine's server would.
        let child = Command::new("dovecot")
            .args(["-F", "-c", self.config().to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.imap_port)).is_err() {
            assert!(Instant::now() < deadline, "dovecot did not start: {}", self.log());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Kills the server and every connection it serves (as a crash
    /// would); the port is free again after.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", c.id())]).status();
            let _ = c.kill();
            let _ = c.wait();
        }
        // Its workers notice the master is gone and exit; wait for the port.
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.imap_port)).is_ok() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Starts the server again on the same port, with the same mail.
    pub fn restart(&mut self) {
        self.kill();
        self.launch();
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.path().join("dovecot.log")).unwrap_or_default()
    }

    /// `doveadm ARGS` against this instance.
    pub fn doveadm(&self, args: &[&str]) -> String {
        let out = Command::new("doveadm").arg("-c").arg(self.config()).args(args).output().unwrap();
        assert!(out.status.success(), "doveadm {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Every message in `user`'s INBOX, in order.
    pub fn messages(&self, user: &str) -> Vec<Vec<u8>> {
        let port = self.imap_port;
        let user = user.to_string();
        crate::thread::block_on(async move {
            let mut session = login(port, &user).await;
            let mb = session.select("INBOX").await.unwrap();
            let mut out = Vec::new();
            if mb.exists > 0 {
                use futures_util::TryStreamExt;
                let fetched: Vec<async_imap::types::Fetch> =
                    session.fetch("1:*", "BODY.PEEK[]").await.unwrap().try_collect().await.unwrap();
                out = fetched.iter().filter_map(|f| f.body().map(<[u8]>::to_vec)).collect();
            }
            session.logout().await.unwrap();
            out
        })
    }

    /// Appends messages to `user`'s INBOX over IMAP, in order.
    pub fn append(&self, user: &str, msgs: &[Vec<u8>]) {
        let port = self.imap_port;
        let user = user.to_string();
        let msgs = msgs.to_vec();
        crate::thread::block_on(async move {
            let mut session = login(port, &user).await;
            for m in &msgs {
                session.append("INBOX", None, None, m).await.unwrap();
            }
            session.logout().await.unwrap();
        });
    }
}

/// An IMAP session as `user` (password `<user>pass`) on 127.0.0.1:`port`.
async fn login(port: u16, user: &str) -> async_imap::Session<tokio::net::TcpStream> {
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut client = async_imap::Client::new(tcp);
    client.read_response().await.unwrap();
    client.login(user, format!("{user}pass")).await.map_err(|(e, _)| e).unwrap()
}

impl Drop for Dovecot {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A CA and a server certificate for 127.0.0.1 signed by it, in `dir`;
/// returns the CA's file.
fn make_certificates(dir: &Path) -> PathBuf {
    let p = |f: &str| dir.join(f).to_str().unwrap().to_string();
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    let (ca_key, ca_pem) = (p("ca.key"), p("ca.pem"));
    ca.extend(["-keyout", &ca_key, "-out", &ca_pem, "-days", "2", "-subj", "/CN=lkpbot test CA"]);
    ca.extend(["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"]);
    run_quiet("openssl", &ca);
    let mut req = vec!["req"];
    req.extend(ec);
    let (key, csr) = (p("server.key"), p("server.csr"));
    req.extend(["-keyout", &key, "-out", &csr, "-subj", "/CN=127.0.0.1"]);
    run_quiet("openssl", &req);
    let ext = p("server.ext");
    std::fs::write(
        &ext,
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    let cert = p("server.pem");
    run_quiet(
        "openssl",
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca_pem,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-out",
            &cert,
            "-days",
            "2",
            "-extfile",
            &ext,
        ],
    );
    dir.join("ca.pem")
}

fn run_quiet(program: &str, args: &[&str]) {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(out.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn run(program: &str, args: &[&str]) {
    let st = Command::new(program).args(args).status().unwrap();
    assert!(st.success(), "{program} {args:?}");
}
