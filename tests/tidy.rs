//! Architecture invariants from ARCHITECTURE.md, checked on the source.

use crate::util;

/// Modules that must stay pure: no I/O, no clock, no environment.
const PURE: &[&str] = &[
    "src/mail",
    "src/classify",
    "src/commands.rs",
    "src/model.rs",
    "src/case",
    "src/thread",
    "src/act",
    "src/text.rs",
    "src/render.rs",
    "src/digest.rs",
];

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
    "Timestamp::now",
    "Zoned::now",
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

/// Which stages each stage may use (ARCHITECTURE.md, "Layers"): data
/// flows one way, so a stage never reaches for one that comes after it.
/// `cli` and the crate roots may use everything.
const LAYERS: &[(&str, &[&str])] = &[
    ("model", &[]),
    ("text", &[]),
    ("case", &["model"]),
    ("mail", &["model"]),
    ("commands", &["case", "mail", "model", "text"]),
    ("classify", &["commands", "mail", "model", "text"]),
    ("thread", &["case", "classify", "mail", "model"]),
    ("config", &[]),
    ("source", &["model", "config"]),
    ("auth", &["config", "model"]),
    ("store", &["case", "classify", "model"]),
    ("view", &["case", "classify", "model", "text"]),
    ("digest", &["case", "classify", "model", "text"]),
    ("act", &["thread", "case", "classify", "commands", "mail", "model"]),
    ("render", &["act", "thread", "case", "classify", "commands", "model", "text"]),
    ("engine", &["source", "auth", "store", "digest", "render", "act", "thread", "case", "classify", "mail", "model"]),
    ("deliver", &["store", "case", "config", "model"]),
    ("daemon", &["engine", "deliver", "digest", "source", "store", "case", "config", "model"]),
    ("web", &["view", "store", "case", "classify", "model", "text"]),
];

/// Stages that must not use another, whatever the order above allows:
/// the read model and the case vocabulary are `case`'s, so the stages
/// that show or decide about cases compile without the store; who may
/// do what is `act`'s, and the digest comes after it.
const NEVER: &[(&str, &str)] = &[
    ("digest", "store"),
    ("view", "store"),
    ("act", "store"),
    ("render", "store"),
    ("act", "digest"),
    ("store", "thread"),
];

/// The top-level module a source file belongs to.
fn stage_of(rel: &str) -> &str {
    let first = rel.split('/').next().unwrap_or(rel);
    first.strip_suffix(".rs").unwrap_or(first)
}

/// The first name after every `prefix` in `code`, and every name of a
/// `prefix{a, b::c}` group (over lines too).
fn names_after(code: &str, prefix: &str) -> Vec<String> {
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect() };
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        rest = &rest[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(inner.split(',').map(|p| ident(p.trim())));
        } else {
            out.push(ident(rest));
        }
    }
    out.retain(|n| !n.is_empty());
    out
}

/// Every `crate::NAME` (NAME a module or item) named outside comments,
/// and every name of a `use crate::{a, b::c}` group.
fn crate_refs(text: &str) -> Vec<String> {
    let code: String = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
    names_after(&code, "crate::")
}

#[test]
fn crate_refs_read_groups_over_lines() {
    let text = "use crate::{\n    store::Tx,\n    digest,\n};\n// crate::web\nlet x = crate::view::f();";
    assert_eq!(crate_refs(text), ["store", "digest", "view"]);
}

#[test]
fn stages_use_only_the_stages_before_them() {
    let src = util::repo().join("src");
    let files = util::files_with_suffix(&src, ".rs");
    let stages: Vec<&str> = LAYERS.iter().map(|(s, _)| *s).collect();
    let mut bad = Vec::new();
    let mut checked = 0;
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        let stage = stage_of(&rel);
        let Some((_, allowed)) = LAYERS.iter().find(|(s, _)| *s == stage) else { continue };
        checked += 1;
        let text = std::fs::read_to_string(f).unwrap();
        for name in crate_refs(&text) {
            if stages.contains(&name.as_str()) && name != stage && !allowed.contains(&name.as_str()) {
                bad.push(format!("{rel}: {stage} uses {name}"));
            }
        }
    }
    assert!(checked > 30, "checked only {checked} files");
    for (stage, banned) in NEVER {
        let (_, allowed) = LAYERS.iter().find(|(s, _)| s == stage).unwrap();
        assert!(!allowed.contains(banned), "LAYERS lets {stage} use {banned}");
    }
    bad.sort();
    bad.dedup();
    assert!(bad.is_empty(), "imports against the direction of the pipeline:\n{}", bad.join("\n"));
    // The table itself is a order: each stage only lists stages above it.
    for (i, (stage, allowed)) in LAYERS.iter().enumerate() {
        for a in *allowed {
            let j = stages.iter().position(|s| s == a).unwrap();
            assert!(j < i, "{stage} may use {a}, which comes after it");
        }
    }
}

/// The first names of every `super::NAME`, `crate::MODULE::NAME` and
/// every name of `super::{a, b::c}` (and `crate::MODULE::{...}`) in `code`.
fn sibling_refs(code: &str, module: &str) -> Vec<String> {
    let mut out = names_after(code, "super::");
    out.extend(names_after(code, &format!("crate::{module}::")));
    out
}

#[test]
fn sibling_refs_read_every_name_of_a_group() {
    let code = "use super::{alpha, beta::X};\nuse super::{\n    gamma,\n    delta,\n};\nuse crate::m::{eps, zeta};\nlet x = super::eta::f();";
    let mut got = sibling_refs(code, "m");
    got.sort();
    assert_eq!(got, ["alpha", "beta", "delta", "eps", "eta", "gamma", "zeta"]);
}

/// The files of one module never import each other in a circle (a child
/// using its parent `mod.rs` is how Rust modules share types and does not
/// count; two siblings using each other does).
#[test]
fn sibling_files_do_not_import_each_other_in_a_circle() {
    let src = util::repo().join("src");
    let mut dirs: Vec<std::path::PathBuf> =
        std::fs::read_dir(&src).unwrap().flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    assert!(dirs.len() >= 5);
    let mut cycles = Vec::new();
    for dir in dirs {
        let module = dir.file_name().unwrap().to_string_lossy().to_string();
        let files: Vec<String> = util::files_with_suffix(&dir, ".rs")
            .iter()
            .filter(|p| p.parent() == Some(dir.as_path()))
            .map(|p| p.file_stem().unwrap().to_string_lossy().to_string())
            .filter(|s| s != "mod")
            .collect();
        let mut edges: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for f in &files {
            let text = std::fs::read_to_string(dir.join(format!("{f}.rs"))).unwrap();
            let code: String = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .take_while(|l| !l.contains("#[cfg(test)]"))
                .collect::<Vec<_>>()
                .join("\n");
            let used = sibling_refs(&code, &module);
            for g in &files {
                if g != f && used.contains(g) {
                    edges.entry(f.as_str()).or_default().push(g.as_str());
                }
            }
        }
        // A depth-first search for a way back.
        for start in edges.keys() {
            let mut stack: Vec<Vec<&str>> = vec![vec![start]];
            while let Some(path) = stack.pop() {
                let last = *path.last().unwrap();
                for next in edges.get(last).into_iter().flatten() {
                    if next == start {
                        cycles.push(format!("{module}: {} -> {start}", path.join(" -> ")));
                    } else if !path.contains(next) {
                        let mut p = path.clone();
                        p.push(next);
                        stack.push(p);
                    }
                }
            }
        }
    }
    cycles.sort();
    cycles.dedup();
    assert!(cycles.is_empty(), "files that import each other:\n{}", cycles.join("\n"));
}

/// Only `source/imap.rs` speaks IMAP, only `deliver.rs` sends mail, only
/// `web/` speaks HTTP (ARCHITECTURE.md, "Invariants").
#[test]
fn only_the_imap_source_speaks_imap_and_only_deliver_sends() {
    let src = util::repo().join("src");
    let mut bad = Vec::new();
    for f in util::files_with_suffix(&src, ".rs") {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(&f).unwrap();
        if rel != "source/imap.rs" && text.contains("async_imap") {
            bad.push(format!("{rel} speaks IMAP"));
        }
        if rel != "deliver.rs" && text.contains("lettre") {
            bad.push(format!("{rel} sends mail"));
        }
        if !rel.starts_with("web/") && (text.contains("axum") || text.contains("askama")) {
            bad.push(format!("{rel} speaks HTTP"));
        }
    }
    assert!(bad.is_empty(), "{bad:?}");
}
