//! Golden tests over `fixtures/classify/**/NAME.eml`: each message is
//! classified with LF and with CRLF line ends, both must give the same
//! JSON, and that JSON must equal `NAME.expected.json` byte for byte.
//! `UPDATE_EXPECT=1 cargo test` rewrites the expected files for review.

use crate::util;
use lkpbot::classify::{ClassifyConfig, classify, json::to_json};

/// The one entry point of these tests: classify bytes the way the CLI does.
fn classify_json(bytes: &[u8]) -> serde_json::Value {
    let mail = lkpbot::mail::parse(bytes);
    let c = classify(&mail, &ClassifyConfig::default());
    to_json(&mail, &c)
}

fn check(path: &std::path::Path) -> Result<(), String> {
    let lf = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let crlf = util::to_crlf(&lf);
    let a = classify_json(&lf);
    let b = classify_json(&crlf);
    if a != b {
        return Err(format!("{}: LF and CRLF differ:\nLF:   {a}\nCRLF: {b}", path.display()));
    }
    let pretty = serde_json::to_string_pretty(&a).expect("json") + "\n";
    let expected = path.with_file_name(
        path.file_name().unwrap().to_string_lossy().trim_end_matches(".eml").to_string() + ".expected.json",
    );
    util::check_golden(&expected, &pretty)
}

#[test]
fn fixtures_match_their_expected_json() {
    let files = util::files_with_suffix(&util::fixtures().join("classify"), ".eml");
    assert!(files.len() >= 20, "found only {} fixtures", files.len());
    let failures: Vec<String> = files.iter().filter_map(|f| check(f).err()).collect();
    assert!(failures.is_empty(), "{} of {} fixtures failed:\n{}", failures.len(), files.len(), failures.join("\n"));
}

/// The directory a fixture sits in names the kind it must get, so a
/// regenerated expected file cannot silently change a kind.
#[test]
fn fixtures_get_the_kind_their_directory_names() {
    let root = util::fixtures().join("classify");
    for f in util::files_with_suffix(&root, ".eml") {
        let dir = f.parent().unwrap().file_name().unwrap().to_string_lossy().to_string();
        let want = match dir.as_str() {
            "perf" => vec!["perf-regression", "perf-improvement"],
            "dmesg" => vec!["functional"],
            "build" => vec!["build"],
            "build-summary" => vec!["build-summary"],
            "retest" => vec!["retest-result"],
            "request" => vec!["test-request"],
            "command" => vec!["command"],
            "fix" => vec!["fix-posted"],
            "discussion" => vec!["discussion"],
            "unrelated" => vec!["unrelated"],
            // Lifecycle mail keeps whatever kind it has and must carry
            // its signal.
            "lifecycle" => vec!["discussion", "unrelated", "fix-posted"],
            other => panic!("unknown fixture directory {other}"),
        };
        let json = classify_json(&std::fs::read(&f).unwrap());
        if dir == "lifecycle" {
            assert!(json["lifecycle"]["signal"].is_string(), "{}: no lifecycle signal", f.display());
        }
        let got = json["kind"].as_str().unwrap().to_string();
        assert!(want.contains(&got.as_str()), "{}: kind {got}, want one of {want:?}", f.display());
    }
}

/// A reply's kind never depends on whether it quotes the report: every
/// retest result, test request and discussion fixture keeps its kind with
/// its quoted lines removed.
#[test]
fn reply_kinds_do_not_depend_on_quoting() {
    let root = util::fixtures().join("classify");
    let mut n = 0;
    for dir in ["retest", "request", "discussion"] {
        for f in util::files_with_suffix(&root.join(dir), ".eml") {
            let bytes = std::fs::read(&f).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            let unquoted: String = text.split_inclusive('\n').filter(|l| !l.trim_start().starts_with('>')).collect();
            let with = classify_json(&bytes)["kind"].clone();
            let without = classify_json(unquoted.as_bytes())["kind"].clone();
            assert_eq!(with, without, "{}: kind changes when the quote is removed", f.display());
            n += 1;
        }
    }
    assert!(n >= 20, "found only {n} fixtures");
}

/// Malformed, hostile and huge inputs under `fixtures/weird/` must merely
/// not panic, and still yield one classification each.
#[test]
fn weird_mail_does_not_panic() {
    let files = util::files_with_suffix(&util::fixtures().join("weird"), "");
    assert!(!files.is_empty());
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        let v = classify_json(&bytes);
        assert!(v["kind"].is_string(), "{}", f.display());
    }
}
