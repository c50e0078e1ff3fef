//! Architecture invariants from ARCHITECTURE.md, checked on the source.

use crate::util;

/// Modules that must stay pure: no I/O, no clock, no environment.
const PURE: &[&str] = &["src/mail", "src/classify", "src/commands.rs", "src/model.rs", "src/thread"];

const FORBIDDEN: &[&str] = &[
    "std::fs",
    "std::net",
    "std::env",
    "std::process",
    "tokio",
    "sqlx",
    "SystemTime",
    "Instant::now",
    "Utc::now",
    "rand::",
];

#[test]
fn pure_modules_do_no_io_and_read_no_clock() {
    let mut files = Vec::new();
    for p in PURE {
        let path = util::repo().join(p);
        if path.is_dir() {
            files.extend(util::files_with_suffix(&path, ".rs"));
        } else {
            files.push(path);
        }
    }
    assert!(files.len() >= 10, "found only {} files", files.len());
    let mut bad = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for word in FORBIDDEN {
                if line.contains(word) {
                    bad.push(format!("{}:{}: {word}", f.display(), n + 1));
                }
            }
        }
    }
    assert!(bad.is_empty(), "pure modules must not do I/O:\n{}", bad.join("\n"));
}

/// `src/lib.rs` and `src/main.rs` deny `unwrap()` outside tests.
#[test]
fn unwrap_is_denied_in_the_crate_roots() {
    for f in ["src/lib.rs", "src/main.rs"] {
        let text = std::fs::read_to_string(util::repo().join(f)).unwrap();
        assert!(text.contains("#![deny(clippy::unwrap_used)]"), "{f} lacks the unwrap deny");
    }
}
