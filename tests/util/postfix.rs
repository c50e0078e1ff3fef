//! A private Postfix for one test, on 127.0.0.1 and a free port, that
//! delivers every message over LMTP into a private Dovecot (recipe in
//! `../shared/docs/STACK.md`): mail to `alice@example.org` lands in
//! Dovecot user `alice`'s INBOX. Stopped (SIGKILL) when dropped, and it
//! can be stopped and started again to test what the bot does meanwhile.

use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use super::dovecot::{free_port, have};

pub struct Postfix {
    pub dir: tempfile::TempDir,
    pub smtp_port: u16,
    running: bool,
}

impl Postfix {
    /// A Postfix delivering into the Dovecot whose LMTP port is `lmtp`;
    /// `None` (and a note) when Postfix is not installed, a panic when
    /// `LKPBOT_REQUIRE_SERVERS` says it must be.
    pub fn start(lmtp: u16) -> Option<Postfix> {
        Postfix::start_with(lmtp, "")
    }

    /// The same, with `main_cf` added to its `main.cf` (e.g. a `sleep`
    /// restriction that holds a client mid-transaction).
    pub fn start_with(lmtp: u16, main_cf: &str) -> Option<Postfix> {
        if !have("postfix") {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let p = Postfix { dir, smtp_port: free_port(), running: false };
        p.write_config(lmtp, main_cf);
        let mut p = p;
        p.resume();
        Some(p)
    }

    fn write_config(&self, lmtp: u16, extra: &str) {
        let d = self.dir.path();
        for sub in ["etc", "spool", "data"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        run("chmod", &["755", d.to_str().unwrap()]);
        run("chown", &["postfix", d.join("data").to_str().unwrap()]);
        let dd = d.display();
        let main = format!(
            "compatibility_level = 3.7\nqueue_directory = {dd}/spool\ndata_directory = {dd}/data\n\
             maillog_file_prefixes = {dd}\nmaillog_file = {dd}/postfix.log\ninet_interfaces = loopback-only\n\
             inet_protocols = ipv4\nmyhostname = mx.test.local\nmydomain = test.local\nmydestination =\n\
             local_recipient_maps =\nalias_maps =\nalias_database =\nmynetworks = 127.0.0.0/8\n\
             smtpd_relay_restrictions = permit_mynetworks, reject\nrelay_domains =\n\
             default_transport = lmtp:inet:127.0.0.1:{lmtp}\nrelay_transport = lmtp:inet:127.0.0.1:{lmtp}\n\
             smtputf8_enable = no\nbiff = no\nqueue_run_delay = 1s\nminimal_backoff_time = 1s\nmaximal_backoff_time = 2s\n{extra}"
        );
        let master = format!(
            "127.0.0.1:{port} inet n - n - - smtpd\n\
             pickup    unix  n       -       n       60      1       pickup\n\
             cleanup   unix  n       -       n       -       0       cleanup\n\
             qmgr      unix  n       -       n       300     1       qmgr\n\
             rewrite   unix  -       -       n       -       -       trivial-rewrite\n\
             bounce    unix  -       -       n       -       0       bounce\n\
             defer     unix  -       -       n       -       0       bounce\n\
             trace     unix  -       -       n       -       0       bounce\n\
             verify    unix  -       -       n       -       1       verify\n\
             flush     unix  n       -       n       1000?   0       flush\n\
             proxymap  unix  -       -       n       -       -       proxymap\n\
             smtp      unix  -       -       n       -       -       smtp\n\
             relay     unix  -       -       n       -       -       smtp\n\
             showq     unix  n       -       n       -       -       showq\n\
             error     unix  -       -       n       -       -       error\n\
             retry     unix  -       -       n       -       -       error\n\
             discard   unix  -       -       n       -       -       discard\n\
             lmtp      unix  -       -       n       -       -       lmtp\n\
             anvil     unix  -       -       n       -       1       anvil\n\
             scache    unix  -       -       n       -       1       scache\n\
             postlog   unix-dgram n  -       n       -       1       postlogd\n",
            port = self.smtp_port
        );
        std::fs::write(d.join("etc/main.cf"), main).unwrap();
        std::fs::write(d.join("etc/master.cf"), master).unwrap();
        // Postfix waits out a config younger than two seconds.
        run(
            "touch",
            &["-d", "-1 min", d.join("etc/main.cf").to_str().unwrap(), d.join("etc/master.cf").to_str().unwrap()],
        );
    }

    fn etc(&self) -> String {
        self.dir.path().join("etc").display().to_string()
    }

    /// Starts (or starts again) the server and waits for its port.
    pub fn resume(&mut self) {
        let out = Command::new("postfix").args(["-c", &self.etc(), "start"]).output().unwrap();
        assert!(out.status.success(), "postfix start: {}{}", String::from_utf8_lossy(&out.stderr), self.log());
        self.running = true;
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", self.smtp_port)).is_err() {
            assert!(Instant::now() < deadline, "postfix did not start: {}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the server (its master and every child); mail to it fails
    /// until [`Postfix::resume`].
    pub fn stop(&mut self) {
        if !self.running {
            return;
        }
        self.running = false;
        let pid_file = self.dir.path().join("spool/pid/master.pid");
        if let Ok(pid) = std::fs::read_to_string(&pid_file) {
            let pid = pid.trim();
            let _ = Command::new("kill").args(["-KILL", "--", &format!("-{pid}")]).status();
            let _ = Command::new("kill").args(["-KILL", pid]).status();
        }
        let _ = std::fs::remove_file(&pid_file);
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.smtp_port)).is_ok() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        // Children it left are reaped with the sandbox; their ports are
        // closed, which is what matters here.
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("postfix.log")).unwrap_or_default()
    }
}

impl Drop for Postfix {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(program: &str, args: &[&str]) {
    let st = Command::new(program).args(args).status().unwrap();
    assert!(st.success(), "{program} {args:?}");
}
