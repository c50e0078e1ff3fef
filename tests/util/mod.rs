//! Helpers shared by the integration tests: where the fixtures and the
//! shared development data are, LF/CRLF variants, golden-file comparison.

#![allow(dead_code)]

pub mod bot;
pub mod dkim;
pub mod dovecot;
pub mod http;
pub mod postfix;
pub mod postgres;

use std::path::{Path, PathBuf};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixtures() -> PathBuf {
    repo().join("fixtures")
}

/// The shared development data (`corpus/`, `seeds/`): `$LKPBOT_SHARED`,
/// else `../shared` beside the checkout, else `/work/shared`.
pub fn shared() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("LKPBOT_SHARED").map(PathBuf::from),
        repo().parent().map(|p| p.join("shared")),
        Some(PathBuf::from("/work/shared")),
    ];
    candidates.into_iter().flatten().find(|p| p.join("corpus").is_dir() || p.join("seeds").is_dir())
}

/// A file of the shared data, or `None` outside CI; under CI (`CI` set) a
/// missing file fails the test, since CI always has it.
pub fn shared_file(rel: &str) -> Option<PathBuf> {
    let found = shared().map(|s| s.join(rel)).filter(|p| p.exists());
    if found.is_none() {
        assert!(std::env::var_os("CI").is_none(), "{rel} is missing from the shared data, and CI must have it");
        eprintln!("skipping: {rel} not found (set LKPBOT_SHARED); under CI this fails");
    }
    found
}

/// Every file under `dir` (recursively) whose name ends with `suffix`, sorted.
pub fn files_with_suffix(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(suffix) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// LF -> CRLF, leaving existing CRLF alone.
pub fn to_crlf(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 20);
    let mut prev = 0u8;
    for &b in bytes {
        if b == b'\n' && prev != b'\r' {
            out.push(b'\r');
        }
        out.push(b);
        prev = b;
    }
    out
}

/// Compares `actual` with the file at `expected`. With `UPDATE_EXPECT=1`
/// the file is rewritten instead; otherwise a mismatch writes
/// `NAME.actual.json` beside it and fails naming both files.
pub fn check_golden(expected: &Path, actual: &str) -> Result<(), String> {
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(expected, actual).map_err(|e| format!("cannot write {}: {e}", expected.display()))?;
        return Ok(());
    }
    let want = std::fs::read_to_string(expected).unwrap_or_default();
    if want == actual {
        return Ok(());
    }
    // `NAME.expected.json` -> `NAME.actual.json`, `NAME.txt` ->
    // `NAME.actual.txt`: never the expected file itself.
    let name = expected.file_name().unwrap_or_default().to_string_lossy().to_string();
    let actual_name = match name.strip_suffix(".expected.json") {
        Some(stem) => format!("{stem}.actual.json"),
        None => match name.rsplit_once('.') {
            Some((stem, ext)) => format!("{stem}.actual.{ext}"),
            None => format!("{name}.actual"),
        },
    };
    let actual_path = expected.with_file_name(actual_name);
    let _ = std::fs::write(&actual_path, actual);
    Err(format!("{} differs: see {}", expected.display(), actual_path.display()))
}

/// Log lines, captured.
#[derive(Clone, Default)]
pub struct Log(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Log {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for Log {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Log {
    type Writer = Log;

    fn make_writer(&'a self) -> Log {
        self.clone()
    }
}
