//! Message-IDs read from the raw header bytes: every `fixtures/ids/NAME.eml`
//! against `NAME.expected.json` (its ids, the subject, the problems), with
//! LF and with CRLF line ends. The fixtures hold what damaged and
//! non-conforming mail puts in ids: NUL and control bytes, bytes that are
//! not UTF-8, literal `%`, ids folded across lines; and NUL bytes outside
//! the ids, which must change nothing. `UPDATE_EXPECT=1` rewrites the
//! expected files for review.

use serde_json::{Value, json};

use crate::util;

/// The one entry point: what parsing makes of a message's ids.
fn ids_json(bytes: &[u8]) -> Value {
    let m = lkpbot::mail::parse(bytes);
    json!({
        "message_id": m.message_id,
        "message_id_synthesized": m.message_id_synthesized,
        "in_reply_to": m.in_reply_to,
        "references": m.references,
        "subject": m.subject,
        "problems": m.problems,
    })
}

fn check(path: &std::path::Path) -> Result<(), String> {
    let lf = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (a, b) = (ids_json(&lf), ids_json(&util::to_crlf(&lf)));
    if a != b {
        return Err(format!("{}: LF and CRLF differ:\nLF:   {a}\nCRLF: {b}", path.display()));
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy().replace(".eml", ".expected.json");
    util::check_golden(&path.with_file_name(name), &(serde_json::to_string_pretty(&a).expect("json") + "\n"))
}

#[test]
fn ids_match_their_expected_json() {
    let files = util::files_with_suffix(&util::fixtures().join("ids"), ".eml");
    assert!(files.len() >= 5, "found only {} fixtures", files.len());
    let failures: Vec<String> = files.iter().filter_map(|f| check(f).err()).collect();
    assert!(failures.is_empty(), "{} of {} fixtures failed:\n{}", failures.len(), files.len(), failures.join("\n"));
}

/// The NULs of `nul-bytes-outside-ids.eml` taken out give the same ids:
/// a NUL outside an id never makes a message another one.
#[test]
fn nul_bytes_outside_ids_change_no_id() {
    let with = std::fs::read(util::fixtures().join("ids/nul-bytes-outside-ids.eml")).unwrap();
    assert!(with.contains(&0));
    let without: Vec<u8> = with.iter().copied().filter(|&b| b != 0).collect();
    let (mut a, b) = (ids_json(&with), ids_json(&without));
    assert_eq!(a["problems"], json!(["header: NUL bytes removed"]));
    a["problems"] = json!([]);
    assert_eq!(a, b);
}
