//! A private PostgreSQL on 127.0.0.1 (recipe 5d of
//! `../shared/docs/STACK.md`): one server per test binary, started on
//! first use, and a fresh database per test ([`fresh_db`]). A test that
//! stops and starts its server has one of its own ([`PgServer::start`]).
//!
//! The binaries are found under `/usr/lib/postgresql/*/bin` (the newest);
//! when there are none the tests that need them skip, unless
//! `LKPBOT_REQUIRE_SERVERS` is set (CI sets it): then they fail. The
//! server runs as the `postgres` user (it refuses root) and dies with the
//! test binary (a parent-death signal); a data directory a killed run
//! left behind is removed by the next.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::dovecot::free_port;

/// The newest PostgreSQL's `bin` directory, if one is installed.
pub fn bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin)| bin.join("postgres").exists() && bin.join("initdb").exists())
        .collect();
    dirs.sort();
    dirs.pop().map(|(_, bin)| bin)
}

/// Whether PostgreSQL is here; a missing one under
/// `LKPBOT_REQUIRE_SERVERS` panics, else the caller skips.
pub fn have() -> Option<PathBuf> {
    let bin = bin_dir();
    if bin.is_none() {
        assert!(
            std::env::var_os("LKPBOT_REQUIRE_SERVERS").is_none(),
            "PostgreSQL is not installed (/usr/lib/postgresql/*/bin), and LKPBOT_REQUIRE_SERVERS says the tests need it"
        );
        eprintln!("skipping: PostgreSQL is not installed (with LKPBOT_REQUIRE_SERVERS set this fails)");
    }
    bin
}

/// A server of one test: stopped (and its directory removed) when dropped.
pub struct PgServer {
    bin: PathBuf,
    pub dir: PathBuf,
    pub port: u16,
    /// Commits reach the WAL on disk before they are acknowledged, so a
    /// killed server keeps them (off for the shared server: faster).
    durable: bool,
    child: Option<Child>,
}

const DIR_PREFIX: &str = "lkpbot-pg-";

impl PgServer {
    /// A fresh server, ready for connections; `None` when PostgreSQL is
    /// not installed (see [`have`]).
    pub fn start() -> Option<PgServer> {
        PgServer::start_with(false)
    }

    /// A server whose acknowledged commits survive [`PgServer::crash`].
    pub fn start_durable() -> Option<PgServer> {
        PgServer::start_with(true)
    }

    fn start_with(durable: bool) -> Option<PgServer> {
        let bin = have()?;
        remove_leftovers();
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "{DIR_PREFIX}{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        chown_to_postgres(&dir);
        let out = Command::new(bin.join("initdb"))
            .args(["-D", dir.join("data").to_str().unwrap(), "-U", "postgres", "-A", "trust", "-E", "UTF8"])
            .args(["--locale=C.UTF-8", "--no-sync"])
            .as_postgres()
            .output()
            .unwrap();
        assert!(out.status.success(), "initdb failed: {}", String::from_utf8_lossy(&out.stderr));
        let mut s = PgServer { bin, dir, port: free_port(), durable, child: None };
        s.launch();
        Some(s)
    }

    /// The URL of database `db` on this server.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// Starts the server on its data directory (again).
    pub fn launch(&mut self) {
        let child = Command::new(self.bin.join("postgres"))
            .args(["-D", self.dir.join("data").to_str().unwrap(), "-p", &self.port.to_string()])
            .args(["-k", self.dir.to_str().unwrap(), "-c", "listen_addresses=127.0.0.1"])
            .args(["-c", "fsync=off", "-c", "full_page_writes=off"])
            .args(["-c", if self.durable { "synchronous_commit=on" } else { "synchronous_commit=off" }])
            .args(["-c", "shared_buffers=16MB", "-c", "max_connections=200"])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(self.dir.join("pg.log")).map(Stdio::from).unwrap_or(Stdio::null()))
            .as_postgres()
            .spawn()
            .unwrap();
        self.child = Some(child);
        self.wait_ready();
    }

    fn wait_ready(&self) {
        let start = Instant::now();
        loop {
            let ok = Command::new(self.bin.join("pg_isready"))
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", "-q"])
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "PostgreSQL did not start: see {}", self.dir.display());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the server as a crash would (`pg_ctl stop -m immediate`:
    /// SIGQUIT, no checkpoint) and waits until it is gone.
    pub fn crash(&mut self) {
        if let Some(mut c) = self.child.take() {
            unsafe { libc::kill(c.id() as i32, libc::SIGQUIT) };
            let _ = c.wait();
        }
    }

    /// Runs `sql` as the superuser in database `db`.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        self.try_psql(db, sql).unwrap_or_else(|e| panic!("psql {sql}: {e}"))
    }

    /// [`PgServer::psql`], its failure an error.
    pub fn try_psql(&self, db: &str, sql: &str) -> Result<String, String> {
        let out = Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", "-d", db])
            .args(["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .unwrap();
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).to_string());
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// A new empty database; its URL.
    pub fn create_db(&self) -> String {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!("t{}", N.fetch_add(1, Ordering::Relaxed));
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.crash();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

trait AsPostgres {
    fn as_postgres(&mut self) -> &mut Self;
}

impl AsPostgres for Command {
    /// Runs as the `postgres` user (the server refuses root), and dies
    /// with the thread that started it.
    fn as_postgres(&mut self) -> &mut Command {
        let (uid, gid) = postgres_ids();
        unsafe {
            self.pre_exec(move || {
                if libc::getuid() == 0 && (libc::setgid(gid) != 0 || libc::setuid(uid) != 0) {
                    return Err(std::io::Error::last_os_error());
                }
                // After setuid, which clears it.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            })
        }
    }
}

fn postgres_ids() -> (u32, u32) {
    let id = |flag: &str| -> u32 {
        let out = Command::new("id").args([flag, "postgres"]).output().ok();
        out.and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok()).unwrap_or(0)
    };
    (id("-u"), id("-g"))
}

fn chown_to_postgres(dir: &Path) {
    let (uid, gid) = postgres_ids();
    let c = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
    unsafe { libc::chown(c.as_ptr(), uid, gid) };
}

/// Data directories of test runs that were killed (their process is gone).
fn remove_leftovers() {
    for e in std::fs::read_dir(std::env::temp_dir()).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = name.strip_prefix(DIR_PREFIX).and_then(|r| r.split('-').next()?.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// The server this test binary shares, started by the first test that
/// asks, on a thread of its own that lives as long as the binary (the
/// parent-death signal follows the thread that started the server).
pub fn shared() -> Option<&'static PgServer> {
    static SERVER: OnceLock<Option<&'static PgServer>> = OnceLock::new();
    *SERVER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let server: Option<&'static PgServer> = PgServer::start().map(|s| &*Box::leak(Box::new(s)));
            if let Some(s) = server {
                // Statics are never dropped: the directory goes at exit.
                let _ = SHARED_DIR.set(s.dir.clone());
                unsafe { libc::atexit(remove_shared_dir) };
            }
            let _ = tx.send(server);
            loop {
                std::thread::park();
            }
        });
        rx.recv().unwrap()
    })
}

static SHARED_DIR: OnceLock<PathBuf> = OnceLock::new();

extern "C" fn remove_shared_dir() {
    if let Some(dir) = SHARED_DIR.get() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A fresh database on the shared server: its URL; `None` when
/// PostgreSQL is not installed (the test skips).
pub fn fresh_db() -> Option<String> {
    Some(shared()?.create_db())
}
