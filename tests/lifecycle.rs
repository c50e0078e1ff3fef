//! Lifecycle on the real archive: `lkp-threads.mbox` with
//! `lkp-lifecycle.mbox` (fix patches and their threads, applied notices,
//! pull requests and pr-tracker-bot's merges, reverts, later versions of
//! reported patches) ingested together; each report with a lifecycle
//! signal must reach the state `fixtures/lifecycle/strongest.tsv` gives
//! it, and no other case may reach a lifecycle state.

use std::collections::BTreeMap;

use lkpbot::case::{CaseFilter, CaseRecord, CaseState};
use lkpbot::store::Store;

use crate::thread::{NOW, block_on, engine};
use crate::util;

/// The labelled reports: report Message-ID to the state it must reach,
/// the signal read as its strongest, and how it was read.
fn labels() -> BTreeMap<String, (String, String, String)> {
    let text = std::fs::read_to_string(util::fixtures().join("lifecycle/strongest.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 5, "bad label line: {l}");
            (f[0].to_string(), (f[1].to_string(), f[2].to_string(), f[4].to_string()))
        })
        .collect()
}

fn corpus_cases() -> Option<Vec<CaseRecord>> {
    let threads = util::shared_file("corpus/lkp-threads.mbox")?;
    let lifecycle = util::shared_file("corpus/lkp-lifecycle.mbox")?;
    let dir = tempfile::tempdir().unwrap();
    Some(block_on(async {
        let mut engine = engine(Store::open(&dir.path().join("lkpbot.db")).await.unwrap());
        for p in [&threads, &lifecycle] {
            assert!(engine.ingest_path(p, NOW, &mut |_| {}).await.unwrap().is_empty());
        }
        engine.finish().await.unwrap();
        engine.store().cases(CaseFilter::All, true).await.unwrap()
    }))
}

/// What a lifecycle signal leaves a case in.
fn is_lifecycle_state(s: CaseState) -> bool {
    matches!(
        s,
        CaseState::FixPosted
            | CaseState::FixApplied
            | CaseState::FixMerged
            | CaseState::Resolved
            | CaseState::Reverted
            | CaseState::Superseded
    )
}

#[test]
fn every_report_with_a_signal_reaches_the_state_of_its_strongest() {
    let Some(cases) = corpus_cases() else { return };
    let labels = labels();
    let mut caught: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut wrong = Vec::new();
    let by_report: BTreeMap<String, &CaseRecord> =
        cases.iter().map(|c| (c.view.facts.report_message_id.to_string(), c)).collect();
    for (report, (want, signal, _)) in &labels {
        let got = by_report.get(report).map_or("no case", |c| c.view.state.as_str());
        let e = caught.entry(want.as_str()).or_default();
        e.1 += 1;
        if got == want {
            e.0 += 1;
        } else {
            wrong.push(format!("  {report}: {got}, labelled {want} ({signal})"));
        }
    }
    for c in &cases {
        let r = c.view.facts.report_message_id.to_string();
        if is_lifecycle_state(c.view.state) && !labels.contains_key(&r) {
            wrong.push(format!("  {r}: {}, not labelled (a signal guessed?)", c.view.state.as_str()));
        }
    }
    let figures: Vec<String> = caught.iter().map(|(s, (n, of))| format!("{s} {n}/{of}")).collect();
    eprintln!("lifecycle labels: {} reports; caught: {}", labels.len(), figures.join(", "));
    assert!(wrong.is_empty(), "{} disagreements:\n{}", wrong.len(), wrong.join("\n"));
    // The figures the README quotes.
    assert_eq!(labels.len(), 292);
    assert_eq!(caught.get("superseded"), Some(&(236, 236)));
}
