//! Failures and the exit codes they map to (DESIGN.md, "Interfaces"): 1
//! for a usage or config error, 2 for a run-time failure.

/// An error and its causes on one line, each said once: many errors (the
/// database driver's, ours) repeat their cause in their own message, which
/// a plain `{:#}` would print again after them.
pub fn describe(error: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// An error with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub error: anyhow::Error,
}

impl Failure {
    pub fn usage(error: anyhow::Error) -> Failure {
        Failure { code: 1, error }
    }
    pub fn runtime(error: anyhow::Error) -> Failure {
        Failure { code: 2, error }
    }
}
