//! `lkpbot classify`: every message of the given paths, classified and
//! printed (one line, or one JSON object, each); nothing is stored.

use std::io::Write;
use std::path::PathBuf;

use super::failure::Failure;
use crate::classify::{self, ClassifyConfig, Kind, json::to_json};
use crate::mail;
use crate::source;

/// A one-line, human-readable summary of a classified message.
pub fn summary_line(m: &mail::Mail, c: &classify::Classified) -> String {
    let mut s = format!("{:<16} {}", c.kind.as_str(), m.message_id);
    if let Some(commit) = c.commit()
        && let Some(short) = &commit.short
    {
        s.push_str(&format!("  {short}"));
    }
    if let Some(r) = c.any_report() {
        if let Some(h) = &r.headline {
            // A signed change only when the table gave one; the current
            // template's prose states the size alone.
            let change = match (h.change_pct, h.stated_change_pct) {
                (Some(n), _) => format!(" {:+}%", n.0),
                (None, Some(n)) => format!(" {}%", n.0),
                (None, None) => String::new(),
            };
            s.push_str(&format!("  {}{}", h.metric, change));
        } else if let Some(sig) = r.signatures.first() {
            s.push_str(&format!("  {}", sig.signature));
        }
        if let Some(t) = &r.testcase {
            s.push_str(&format!("  ({t})"));
        }
    }
    if let Some(r) = c.retests.first() {
        s.push_str(&format!("  fix {} {}", r.fix.short, r.verdict.map_or("no verdict", |v| v.as_str())));
    }
    if c.kind == Kind::Unrelated && !m.subject.is_empty() {
        let subj: String = m.subject.chars().take(60).collect();
        s.push_str(&format!("  {subj}"));
    }
    for p in m.problems.iter().chain(&c.problems) {
        if p.starts_with("mime") || p.starts_with("header") || p.starts_with("message") {
            s.push_str(&format!("  [{p}]"));
        }
    }
    s
}

/// `lkpbot classify`: who is who (the robot, the LKP team, the bot itself)
/// as the config says, so a mail is classified as `ingest` would.
pub(super) fn classify_paths(paths: &[PathBuf], json: bool, cfg: &ClassifyConfig) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut failed = Vec::new();
    for path in paths {
        let messages = match source::open(path) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("lkpbot: {e}");
                failed.push(path.display().to_string());
                continue;
            }
        };
        for raw in messages {
            let raw = match raw {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("lkpbot: {e}");
                    let name = path.display().to_string();
                    if !failed.contains(&name) {
                        failed.push(name);
                    }
                    if e.is_fatal() {
                        break;
                    }
                    continue;
                }
            };
            // A public-inbox removal is no message of the archive.
            if raw.removed {
                continue;
            }
            let m = mail::parse_truncated(&raw.bytes, raw.original_len);
            let c = classify::classify(&m, cfg);
            let line =
                if json { to_json(&m, &c).to_string() } else { crate::text::clean(&summary_line(&m, &c)).into_owned() };
            if let Err(e) = writeln!(out, "{line}") {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    return Ok(());
                }
                return Err(Failure::runtime(anyhow::Error::new(e).context("cannot write to stdout")));
            }
        }
    }
    if let Err(e) = out.flush()
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(Failure::runtime(anyhow::Error::new(e).context("cannot write to stdout")));
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::usage(anyhow::anyhow!("could not read: {}", failed.join(", "))))
    }
}
