//! The writer's log checkpointed on a thread of its own.
//!
//! In WAL mode SQLite appends every commit to the log, and a checkpoint
//! copies the log back into the database file and syncs it. Left to
//! SQLite, the connection that commits runs the checkpoint itself, in its
//! `COMMIT`: during an archive import that stalls the engine for a tenth
//! of a second or more each time, and with it the parse workers, whose
//! bounded queue fills behind it (each of the dips in CPU use seen in a
//! profile of the cgroups list's import).
//!
//! A [`Checkpointer`] is a second connection to the same file, on a thread
//! of its own, running passive checkpoints (which never block the writer
//! and never wait for it). The writer's connection gets a WAL hook in
//! place of SQLite's automatic checkpoint: after a commit that leaves
//! [`BEHIND`] pages or more in the log it wakes the thread (without
//! waiting), so that a checkpoint may catch up with the writer and the
//! log start over. When it has not by twice that (the writer commits
//! back to back), the hook wakes the thread only each [`BEHIND`] pages
//! the log grows by, so a page the writer changes in many commits is
//! copied once per checkpoint rather than once per commit. Should
//! the log still reach [`BACKSTOP`] pages, the writer checkpoints in its
//! commit as before, which also lets the log start over (SQLite restarts
//! it at the first commit after a checkpoint that copied all of it, which
//! a checkpoint racing the writer's commits may never see), copying only
//! what the thread has not.
//!
//! Both limits grow with the store ([`limits`]): a large store's commits
//! change index pages all over it, and the fewer checkpoints copy each of
//! those once for more commits. A small store keeps them, so that what
//! is left to copy when the store closes stays small.

use std::ffi::{CString, c_char, c_int, c_void};
use std::path::Path;
use std::ptr::{self, NonNull};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use libsqlite3_sys as ffi;

/// Pages of log (4 KiB each) past which the thread is woken: 32 MiB; and,
/// past twice that, what the log grows by between two wakes. Woken after
/// every commit however long the log, the thread copied each commit's
/// pages on their own soon after it, and synced the file each time: on
/// the million-message archive it copied 11 GB of a 13.9 GB log in 20
/// CPU-seconds; woken each 32 MiB there, it takes 11 to 13.
pub const BEHIND: c_int = 8192;
/// Pages of log after which the writer checkpoints in its commit: 256 MiB.
pub const BACKSTOP: c_int = 65536;

/// The limits (pages of log: when to wake the thread, when the writer
/// checkpoints itself) for a store of `db_pages` pages, from the base
/// ones: the wake point an eighth of the store, from the base up to four
/// times it, and the backstop eight times that once it has grown. On the
/// worst-case million-message archive (a 3 GB store) the import took
/// 52.9 s against 55.5 (medians of three alternating runs), and the
/// cgroups list (a 96 MB store, whose limits stay) the same time. The
/// grown limits from the start made the list 5% slower: its close
/// copied up to 256 MiB of log. The backstop at eight times the wake
/// point rather than four halves the checkpoints the writer waits for
/// (each 70 to 260 ms of syncing; 22 of them, 5.3 s, on the worst case):
/// 70.4 and 71.3 s against 74.8 and 75.8 in alternating runs, peak RSS
/// 60 MiB against 57 (the longer log's index).
pub fn limits(db_pages: u64, behind: c_int, backstop: c_int) -> (c_int, c_int) {
    let grown = c_int::try_from(db_pages / 8).unwrap_or(c_int::MAX).min(behind.saturating_mul(4));
    if grown <= behind {
        return (behind, backstop);
    }
    (grown, backstop.max(grown.saturating_mul(8)))
}

/// What the writer's WAL hook reads: where to wake the thread, and the
/// limits. Shared with the hook through a raw pointer (see
/// [`Checkpointer::install`]).
struct Hook {
    wake: SyncSender<()>,
    limits: Arc<Limits>,
    /// Checkpoints the writer ran itself (the backstop).
    inline: AtomicU64,
    /// Pages in the log when the hook last woke the thread (only the
    /// writer's hook touches it).
    woken_at: AtomicI32,
}

/// The hook's limits, which the thread sets after each checkpoint
/// ([`limits`]).
struct Limits {
    behind: AtomicI32,
    backstop: AtomicI32,
}

/// The thread and its connection.
pub struct Checkpointer {
    /// `None` only once dropped.
    hook: Option<Arc<Hook>>,
    /// Whether the writer's connection holds a pointer to `hook` (then it
    /// must be taken off before `hook` may go).
    installed: bool,
    thread: Option<JoinHandle<()>>,
    done: Arc<AtomicU64>,
}

/// A connection of the thread's own, closed when it ends.
struct Conn(NonNull<ffi::sqlite3>);

// SAFETY: the connection is opened by the thread that starts the
// checkpointer and from then on used only by the checkpointer's thread
// (opened without SQLite's per-connection mutex: one user at a time).
unsafe impl Send for Conn {}

impl Drop for Conn {
    fn drop(&mut self) {
        // SAFETY: opened by `open`, closed once, with no statement left.
        unsafe { ffi::sqlite3_close(self.0.as_ptr()) };
    }
}

impl Checkpointer {
    /// Opens a second connection to the store at `path` and starts the
    /// thread; an error if the file cannot be opened (the writer then
    /// keeps SQLite's own checkpoints).
    pub fn start(path: &Path) -> std::io::Result<Checkpointer> {
        Self::spawn(path, BEHIND, BACKSTOP, true)
    }

    /// [`Checkpointer::start`] with other limits (pages of log), which stay
    /// as given.
    #[cfg(test)]
    pub fn start_with(path: &Path, behind: c_int, backstop: c_int) -> std::io::Result<Checkpointer> {
        Self::spawn(path, behind, backstop, false)
    }

    /// [`Checkpointer::start`] with other base limits, grown with the store.
    #[cfg(test)]
    pub fn start_growing(path: &Path, behind: c_int, backstop: c_int) -> std::io::Result<Checkpointer> {
        Self::spawn(path, behind, backstop, true)
    }

    /// The limits the hook goes by now.
    #[cfg(test)]
    pub fn limits_now(&self) -> (c_int, c_int) {
        let l = &self.hook.as_ref().expect("not dropped").limits;
        (l.behind.load(Ordering::Relaxed), l.backstop.load(Ordering::Relaxed))
    }

    fn spawn(path: &Path, behind: c_int, backstop: c_int, grows: bool) -> std::io::Result<Checkpointer> {
        let conn = open(path)?;
        let (wake, woken) = mpsc::sync_channel(1);
        let done = Arc::new(AtomicU64::new(0));
        let counted = done.clone();
        let set = Arc::new(Limits { behind: AtomicI32::new(behind), backstop: AtomicI32::new(backstop) });
        let read = set.clone();
        let store = path.to_path_buf();
        let grow = move || {
            if !grows {
                return;
            }
            // The store's size; unknown (the file is gone), the limits stay.
            let Ok(m) = std::fs::metadata(&store) else { return };
            let (b, s) = limits(m.len() / 4096, behind, backstop);
            set.behind.store(b, Ordering::Relaxed);
            set.backstop.store(s, Ordering::Relaxed);
        };
        let thread = std::thread::Builder::new()
            .name("lkpbot-checkpoint".into())
            .spawn(move || run(conn, woken, &counted, grow))?;
        let hook = Arc::new(Hook { wake, limits: read, inline: AtomicU64::new(0), woken_at: AtomicI32::new(0) });
        Ok(Checkpointer { hook: Some(hook), installed: false, thread: Some(thread), done })
    }

    /// Puts the hook on the writer's connection `db`, in place of SQLite's
    /// automatic checkpoint.
    ///
    /// # Safety
    /// The caller holds `db` locked (no other thread uses it), and calls
    /// [`Checkpointer::uninstall`] with it locked before this checkpointer
    /// is dropped, unless the connection is closed by then.
    pub unsafe fn install(&mut self, db: NonNull<ffi::sqlite3>) {
        let Some(hook) = &self.hook else { return };
        let ctx = Arc::as_ptr(hook).cast_mut().cast::<c_void>();
        // SAFETY: `ctx` stays valid while `self.hook` lives, which the
        // caller keeps for as long as the hook is on the connection.
        unsafe { ffi::sqlite3_wal_hook(db.as_ptr(), Some(wal_hook), ctx) };
        self.installed = true;
    }

    /// Takes the hook off the writer's connection `db` (SQLite's automatic
    /// checkpoint does not come back: the connection is closing).
    ///
    /// # Safety
    /// The caller holds `db` locked; it is the connection `install` was
    /// given.
    pub unsafe fn uninstall(&mut self, db: NonNull<ffi::sqlite3>) {
        if self.installed {
            // SAFETY: as the caller promises.
            unsafe { ffi::sqlite3_wal_hook(db.as_ptr(), None, ptr::null_mut()) };
            self.installed = false;
        }
    }

    /// Checkpoints the thread ran, and the writer in its commits.
    pub fn counts(&self) -> (u64, u64) {
        let inline = self.hook.as_ref().map_or(0, |h| h.inline.load(Ordering::Relaxed));
        (self.done.load(Ordering::Relaxed), inline)
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        let Some(hook) = self.hook.take() else { return };
        if self.installed {
            // A connection still points at the hook: it stays, and with it
            // the thread (which ends with the process).
            std::mem::forget(hook);
            return;
        }
        // The last sender goes with the hook: the thread's wait ends.
        drop(hook);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn open(path: &Path) -> std::io::Result<Conn> {
    let invalid = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, what.to_string());
    let name = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| invalid("a NUL in the store's path"))?;
    let mut db: *mut ffi::sqlite3 = ptr::null_mut();
    // SAFETY: `name` is a valid C string and `db` a place for the handle.
    let rc = unsafe {
        ffi::sqlite3_open_v2(name.as_ptr(), &mut db, ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_NOMUTEX, ptr::null())
    };
    let conn = NonNull::new(db).map(Conn);
    if rc != ffi::SQLITE_OK {
        // SAFETY: errstr returns a static string for any code.
        let why = unsafe { std::ffi::CStr::from_ptr(ffi::sqlite3_errstr(rc)) }.to_string_lossy().into_owned();
        drop(conn);
        return Err(std::io::Error::other(format!("cannot open {} to checkpoint it: {why}", path.display())));
    }
    let conn = conn.ok_or_else(|| std::io::Error::other("SQLite gave no connection"))?;
    // A checkpoint syncs as the writer's connection would (NORMAL).
    let pragma = c"PRAGMA synchronous = NORMAL";
    // SAFETY: a valid connection and statement text.
    unsafe { ffi::sqlite3_exec(conn.0.as_ptr(), pragma.as_ptr(), None, ptr::null_mut(), ptr::null_mut()) };
    Ok(conn)
}

/// The thread: a passive checkpoint each time it is woken, then `grow`
/// (the limits, to the store's size), until the writer's side is gone.
fn run(conn: Conn, woken: Receiver<()>, done: &AtomicU64, grow: impl Fn()) {
    while woken.recv().is_ok() {
        let (mut log, mut copied) = (0, 0);
        // SAFETY: this thread's own connection; the main database.
        let rc = unsafe {
            ffi::sqlite3_wal_checkpoint_v2(
                conn.0.as_ptr(),
                ptr::null(),
                ffi::SQLITE_CHECKPOINT_PASSIVE,
                &mut log,
                &mut copied,
            )
        };
        if rc == ffi::SQLITE_OK {
            done.fetch_add(1, Ordering::Relaxed);
        } else if rc != ffi::SQLITE_BUSY {
            // SAFETY: errstr returns a static string for any code.
            let why = unsafe { std::ffi::CStr::from_ptr(ffi::sqlite3_errstr(rc)) }.to_string_lossy();
            tracing::warn!(%why, "a checkpoint of the store's log failed; the writer checkpoints it later");
        }
        // Busy: the writer is checkpointing itself; nothing to do.
        grow();
    }
}

/// The writer's WAL hook: SQLite calls it after each commit with the pages
/// in the log.
unsafe extern "C" fn wal_hook(ctx: *mut c_void, db: *mut ffi::sqlite3, name: *const c_char, pages: c_int) -> c_int {
    // SAFETY: `ctx` is the `Hook` `install` gave, alive while installed.
    let hook = unsafe { &*ctx.cast_const().cast::<Hook>() };
    let last = hook.woken_at.load(Ordering::Relaxed);
    // Fewer pages than then: the log has started over since.
    let last = if pages < last { 0 } else { last };
    let behind = hook.limits.behind.load(Ordering::Relaxed);
    if pages >= hook.limits.backstop.load(Ordering::Relaxed) {
        // As SQLite's own hook does; its result is the next commit's news.
        // SAFETY: the connection and database name SQLite passed us.
        unsafe { ffi::sqlite3_wal_checkpoint(db, name) };
        hook.inline.fetch_add(1, Ordering::Relaxed);
        hook.woken_at.store(0, Ordering::Relaxed);
    } else if pages >= behind && (pages < behind.saturating_mul(2) || pages - last >= behind) {
        hook.woken_at.store(pages, Ordering::Relaxed);
        // Full: already woken and not yet started, so this commit's pages
        // will be in that checkpoint too. Disconnected: the thread is
        // gone, and the backstop still holds.
        let _ = hook.wake.try_send(());
    }
    ffi::SQLITE_OK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_grow_with_the_store_up_to_four_times_the_base() {
        // A small store (the cgroups list's: 96 MB, 23,500 pages) keeps them.
        assert_eq!(limits(0, BEHIND, BACKSTOP), (BEHIND, BACKSTOP));
        assert_eq!(limits(23_500, BEHIND, BACKSTOP), (BEHIND, BACKSTOP));
        // Past eight times the wake point, an eighth of the store; the
        // backstop eight times that.
        assert_eq!(limits(8 * 8192 + 8, BEHIND, BACKSTOP), (8193, 65_544));
        assert_eq!(limits(160_000, BEHIND, BACKSTOP), (20_000, 160_000));
        // At most four times the base: a 3 GB store and larger.
        assert_eq!(limits(750_000, BEHIND, BACKSTOP), (32_768, 262_144));
        assert_eq!(limits(u64::MAX, 512, c_int::MAX), (2048, c_int::MAX));
        // Limits set out of reach stay there.
        assert_eq!(limits(750_000, c_int::MAX, 64), (c_int::MAX, 64));
    }
}
