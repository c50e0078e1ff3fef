//! How well the recognisers read replies they were not written for: the
//! hand-labelled replies of `fixtures/labels/` (see its README) against
//! what `classify` makes of each message alone. Precision and recall per
//! measured kind are printed, with every disagreement, and pinned.

use std::collections::{BTreeMap, HashMap};

use lkpbot::classify::lifecycle::Signal;
use lkpbot::classify::{self, Classified, ClassifyConfig, Kind};
use lkpbot::mail::Mail;

use crate::util;

/// One hand label.
struct Label {
    kind: String,
    outcome: String,
    flags: String,
    disputed: bool,
}

fn labels(file: &str) -> BTreeMap<String, Label> {
    let path = util::fixtures().join("labels").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 6, "{file}: not six columns: {line}");
        let label =
            Label { kind: f[1].to_string(), outcome: f[2].to_string(), flags: f[4].to_string(), disputed: f[5] != "-" };
        assert!(out.insert(f[0].to_string(), label).is_none(), "{file}: {} twice", f[0]);
    }
    out
}

/// The messages of a corpus mbox the labels name, classified alone.
fn classified(mbox: &str, ids: &BTreeMap<String, Label>) -> Option<HashMap<String, (Mail, Classified)>> {
    let path = util::shared_file(&format!("corpus/{mbox}"))?;
    let cfg = ClassifyConfig::default();
    let mut out = HashMap::new();
    for raw in lkpbot::source::open(&path).expect("open corpus") {
        let mail = lkpbot::mail::parse(&raw.expect("read corpus").bytes);
        let id = mail.message_id.to_string();
        if ids.contains_key(&id) {
            let c = classify::classify(&mail, &cfg);
            out.insert(id, (mail, c));
        }
    }
    let missing: Vec<&String> = ids.keys().filter(|id| !out.contains_key(*id)).collect();
    assert!(missing.is_empty(), "{} labelled ids not in {mbox}: {missing:?}", missing.len());
    Some(out)
}

/// The measured kinds.
const MEASURED: [Kind; 3] = [Kind::TestRequest, Kind::RetestResult, Kind::FixPosted];

/// The outcome a classified retest result states, in the labels' words.
fn outcome_of(c: &Classified) -> String {
    use classify::outcome::Outcome;
    match &c.outcome {
        Some(Outcome::FixJudged { verdict, .. }) => verdict.as_str().to_string(),
        Some(o) => o.kind_str().to_string(),
        None => "-".to_string(),
    }
}

/// Precision and recall of one kind on one set.
#[derive(Clone, Copy, Debug, Default)]
struct Score {
    tp: usize,
    fp: usize,
    fn_: usize,
}

impl Score {
    fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 { 1.0 } else { self.tp as f64 / (self.tp + self.fp) as f64 }
    }
    fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 { 1.0 } else { self.tp as f64 / (self.tp + self.fn_) as f64 }
    }
}

/// What measuring a set found.
struct Measured {
    scores: BTreeMap<&'static str, Score>,
    outcomes_agree: usize,
    outcomes_total: usize,
    flags_found: usize,
    flags_total: usize,
    flags_wrong: usize,
    /// Maintainers' applied notices (the `applied` flag) against the
    /// lifecycle recogniser's `applied` signal.
    applied: Score,
    report: String,
}

fn measure(name: &str, labels: &BTreeMap<String, Label>, got: &HashMap<String, (Mail, Classified)>) -> Measured {
    let mut scores: BTreeMap<&'static str, Score> = MEASURED.iter().map(|k| (k.as_str(), Score::default())).collect();
    let mut wrong = Vec::new();
    let (mut outcomes_agree, mut outcomes_total, mut flags_found, mut flags_total, mut flags_wrong) = (0, 0, 0, 0, 0);
    let mut applied = Score::default();
    for (id, label) in labels {
        let (mail, c) = &got[id];
        let kind = c.kind.as_str();
        for k in MEASURED {
            let s = scores.get_mut(k.as_str()).expect("measured kind");
            match (label.kind == k.as_str(), kind == k.as_str()) {
                (true, true) => s.tp += 1,
                (false, true) => s.fp += 1,
                (true, false) => s.fn_ += 1,
                (false, false) => {}
            }
        }
        let measured_label = MEASURED.iter().any(|k| k.as_str() == label.kind);
        let measured_kind = MEASURED.contains(&c.kind);
        if (measured_label || measured_kind) && label.kind != kind {
            let d = if label.disputed { " (disputed)" } else { "" };
            let why = c.test_request.as_ref().map(|r| format!(" [{}]", cut(&r.phrase))).unwrap_or_default();
            wrong.push(format!("  {id}: labelled {}{d}, classified {kind}{why} | {}", label.kind, cut(&mail.subject)));
        }
        // Outcomes are compared where the label is not disputed.
        if label.kind == "retest-result" && kind == "retest-result" {
            let o = outcome_of(c);
            if !label.disputed {
                outcomes_total += 1;
                outcomes_agree += usize::from(o == label.outcome);
            }
            if o != label.outcome {
                let d = if label.disputed { " (disputed)" } else { "" };
                wrong.push(format!("  {id}: outcome labelled {}{d}, classified {o}", label.outcome));
            }
        }
        if label.flags.contains("cannot-reproduce") {
            flags_total += 1;
            if c.cannot_reproduce {
                flags_found += 1;
            } else {
                wrong.push(format!("  {id}: cannot-reproduce not flagged"));
            }
        } else if c.cannot_reproduce {
            flags_wrong += 1;
            wrong.push(format!("  {id}: flagged cannot-reproduce, labelled {}", label.kind));
        }
        let said = match &c.lifecycle {
            Some(Signal::Applied(a)) => Some(a.phrase.clone()),
            _ => None,
        };
        let d = if label.disputed { " (disputed)" } else { "" };
        match (label.flags.contains("applied"), said) {
            (true, Some(_)) => applied.tp += 1,
            (false, Some(phrase)) => {
                applied.fp += 1;
                wrong.push(format!("  {id}: read as applied, not labelled so{d} [{}]", cut(&phrase)));
            }
            (true, None) => {
                applied.fn_ += 1;
                wrong.push(format!("  {id}: applied{d}, not read so | {}", cut(&mail.subject)));
            }
            (false, None) => {}
        }
    }
    let mut report = format!("{name}: {} replies\n  kind            precision  recall   (tp fp fn)\n", labels.len());
    for (k, s) in scores.iter().map(|(k, s)| (*k, s)).chain([("applied (flag)", &applied)]) {
        report.push_str(&format!(
            "  {k:<15} {:>7.1}%  {:>6.1}%   ({} {} {})\n",
            s.precision() * 100.0,
            s.recall() * 100.0,
            s.tp,
            s.fp,
            s.fn_
        ));
    }
    report.push_str(&format!(
        "  retest outcomes agreeing (undisputed labels): {outcomes_agree}/{outcomes_total}; cannot-reproduce flags found: {flags_found}/{flags_total}, wrongly set: {flags_wrong}\n"
    ));
    if !wrong.is_empty() {
        report.push_str(&format!("  disagreements ({}):\n{}\n", wrong.len(), wrong.join("\n")));
    }
    Measured { scores, outcomes_agree, outcomes_total, flags_found, flags_total, flags_wrong, applied, report }
}

fn cut(s: &str) -> String {
    s.chars().take(70).collect()
}

/// Fails when a kind's precision or recall drops below its floor.
fn check(m: &Measured, floors: &[(&str, f64, f64)]) {
    let mut bad = Vec::new();
    for &(k, p, r) in floors {
        let s = m.scores[k];
        if s.precision() < p || s.recall() < r {
            bad.push(format!(
                "{k}: precision {:.1}% (floor {:.1}%), recall {:.1}% (floor {:.1}%)",
                s.precision() * 100.0,
                p * 100.0,
                s.recall() * 100.0,
                r * 100.0
            ));
        }
    }
    assert!(bad.is_empty(), "{}\n{}", bad.join("\n"), m.report);
}

/// The targets: precision at least 99% and recall at least 97% per kind.
const TARGET: [(&str, f64, f64); 3] =
    [("test-request", 0.99, 0.97), ("retest-result", 0.99, 0.97), ("fix-posted", 0.99, 0.97)];

/// The lifecycle recogniser's maintainers' applied notices (the labels'
/// `applied` flag): precision and recall floors.
const APPLIED_TARGET: (f64, f64) = (0.99, 0.95);

/// Prints a set's figures and fails unless every kind meets the targets,
/// every undisputed outcome agrees and every "cannot reproduce" flag is
/// found and none set wrongly.
fn meets_the_targets(m: &Measured) {
    eprintln!("{}", m.report);
    check(m, &TARGET);
    let a = m.applied;
    assert!(
        a.precision() >= APPLIED_TARGET.0 && a.recall() >= APPLIED_TARGET.1,
        "applied notices: precision {:.1}%, recall {:.1}% (floors {:.0}%, {:.0}%)\n{}",
        a.precision() * 100.0,
        a.recall() * 100.0,
        APPLIED_TARGET.0 * 100.0,
        APPLIED_TARGET.1 * 100.0,
        m.report
    );
    assert_eq!(m.outcomes_agree, m.outcomes_total, "{}", m.report);
    assert_eq!(m.flags_found, m.flags_total, "{}", m.report);
    assert_eq!(m.flags_wrong, 0, "{}", m.report);
}

/// The development set: the replies of `lkp-threads.mbox` and the lifecycle
/// replies outside fix threads, labelled before the recognisers were
/// reworked.
#[test]
fn development_set_precision_and_recall() {
    let threads = labels("threads.tsv");
    let other = labels("lifecycle-other.tsv");
    let Some(got_threads) = classified("lkp-threads.mbox", &threads) else { return };
    let Some(got_other) = classified("lkp-lifecycle.mbox", &other) else { return };
    let mut all: BTreeMap<String, Label> = threads;
    all.extend(other);
    let mut got = got_threads;
    got.extend(got_other);
    let m = measure("development set (lkp-threads.mbox and the lifecycle replies outside fix threads)", &all, &got);
    meets_the_targets(&m);
}

/// The held-out set: the replies in the lifecycle fix patches' threads,
/// labelled only after the recognisers were frozen and measured before any
/// change to them. That first measurement met the targets for every kind
/// (it holds no request and no result); the "cannot reproduce" flag found
/// 2 of 3 and was set on two opinions, which `outcome.rs` now tells apart
/// (the README keeps both figures).
#[test]
fn held_out_set_precision_and_recall() {
    let fix = labels("lifecycle-fix-threads.tsv");
    let Some(got) = classified("lkp-lifecycle.mbox", &fix) else { return };
    let m = measure("held-out set (the lifecycle fix patches' threads)", &fix, &got);
    meets_the_targets(&m);
}
