//! How clear a change is against the noise the robot prints beside it
//! (DESIGN.md, "thread": Significance).
//!
//! A perf case's change is `clear` when |change| is at least
//! [`CLEAR_FACTOR`] times the larger %stddev of its base and new columns,
//! else `marginal`. LKP prints a %stddev only above 2%, so one it does not
//! print counts as [`UNPRINTED_STDDEV_PCT`].
//!
//! A fix verdict says the same of the part of the change it rests on,
//! with the same rule on the two columns compared:
//!
//! - `recovered` rests on the recovered share: the fix's move away from
//!   the bad commit, `(fix - bad) / bad`, against the larger %stddev of
//!   the bad and fix columns;
//! - `not-recovered` rests on what is left: the fix's distance from the
//!   base, `(fix - base) / base`, against the larger %stddev of the base
//!   and fix columns;
//! - `partly-recovered` says both, so both must be clear.
//!
//! So the fix column's noise enters every verdict, as the "new" side of
//! the comparison it makes. Fail rates (`fail:runs` rows: no %stddev is
//! ever printed) move in percentage points rather than percent, so a
//! fix that takes a failure from every run to none is clear, and one that
//! leaves it failing as often is a clear not-recovered.

use serde::Serialize;

use super::{CaseFacts, CaseKind, CaseRecord, CaseRetest, EventKind, in_time_order};
use crate::model::{MessageId, Verdict};

/// |change| must be at least this many times the noise to be clear.
pub const CLEAR_FACTOR: f64 = 3.0;
/// LKP prints a %stddev only above 2%: one it leaves out counts as this.
pub const UNPRINTED_STDDEV_PCT: f64 = 2.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Significance {
    /// Well outside the noise.
    Clear,
    /// Within a few %stddev of nothing: it may be noise.
    Marginal,
}

impl Significance {
    pub fn as_str(self) -> &'static str {
        match self {
            Significance::Clear => "clear",
            Significance::Marginal => "marginal",
        }
    }
}

/// The rule: a change of `change_pct` measured between two columns with
/// these %stddev (`None`: not printed).
pub fn of_change(change_pct: f64, stddev_a: Option<f64>, stddev_b: Option<f64>) -> Significance {
    let sd = |s: Option<f64>| s.filter(|s| s.is_finite()).map_or(UNPRINTED_STDDEV_PCT, f64::abs);
    let noise = sd(stddev_a).max(sd(stddev_b));
    if change_pct.is_finite() && change_pct.abs() >= CLEAR_FACTOR * noise {
        Significance::Clear
    } else if change_pct.is_infinite() {
        // Up from nothing (a metric at zero): no noise explains that.
        Significance::Clear
    } else {
        Significance::Marginal
    }
}

/// A perf case's significance; `None` for any other case, or one whose
/// report states no change.
pub fn of_case(f: &CaseFacts) -> Option<Significance> {
    if !matches!(f.kind, CaseKind::PerfRegression | CaseKind::PerfImprovement) {
        return None;
    }
    Some(of_change(f.change_pct?, f.base_stddev_pct, f.new_stddev_pct))
}

/// A number of a retest column (`{"value": 12.5, "stddev_pct": 3}`).
fn num(v: &serde_json::Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

/// The change from `from` to `to`, in percent of `from` (percentage
/// points for fail rates).
fn change(from: f64, to: f64, fail_rate: bool) -> f64 {
    if fail_rate {
        (to - from) * 100.0
    } else if from == 0.0 {
        if to == 0.0 { 0.0 } else { f64::INFINITY }
    } else {
        (to - from) / from.abs() * 100.0
    }
}

/// The significance of one fix column's verdict, from the column as
/// extracted (`fix`, `base`, `bad` with `value` and `stddev_pct`,
/// `values`, `verdict`); `None` without a verdict or the numbers.
pub fn of_retest(facts: &serde_json::Value) -> Option<Significance> {
    let named = facts["verdict"].as_str()?;
    let verdict = [Verdict::Recovered, Verdict::PartlyRecovered, Verdict::NotRecovered]
        .into_iter()
        .find(|v| v.as_str() == named)?;
    of_verdict(verdict, facts)
}

/// [`of_retest`] with the verdict given.
pub fn of_verdict(verdict: Verdict, facts: &serde_json::Value) -> Option<Significance> {
    let fail_rate = facts["values"].as_str() == Some("fail-rate");
    let col = |name: &str| Some((num(&facts[name]["value"])?, num(&facts[name]["stddev_pct"])));
    let (fix, fix_sd) = col("fix")?;
    let recovered = || col("bad").map(|(bad, sd)| of_change(change(bad, fix, fail_rate), sd, fix_sd));
    let left = || col("base").map(|(base, sd)| of_change(change(base, fix, fail_rate), sd, fix_sd));
    match verdict {
        Verdict::Recovered => recovered(),
        Verdict::NotRecovered => left(),
        Verdict::PartlyRecovered => Some(recovered()?.max(left()?)),
    }
}

/// The fix column a retest result's verdict comes from: its first column
/// with a verdict, as threading reads the result.
fn judged<'a>(retests: &'a [CaseRetest], message_id: &MessageId) -> Option<&'a CaseRetest> {
    retests.iter().filter(|r| &r.message_id == message_id && r.verdict.is_some()).min_by_key(|r| r.idx)
}

/// The significance of the verdict the retest result `message_id` gave
/// the fix `fix` (a `retest-done` event's).
pub fn of_result(retests: &[CaseRetest], message_id: &MessageId, fix: &str) -> Option<Significance> {
    let r = judged(retests, message_id).filter(|r| same_fix(&r.fix_commit, fix))?;
    of_verdict(r.verdict?, &r.facts)
}

/// The significance of a case's verdict: that of the last fix judged.
pub fn of_case_verdict(c: &CaseRecord) -> Option<Significance> {
    c.verdict?;
    let last = in_time_order(&c.events).into_iter().rev().find(|e| e.kind == EventKind::RetestDone)?;
    of_result(&c.retests, last.message_id.as_ref()?, last.fix_commit.as_deref()?)
}

/// The significance of one column of a retest result: the fix `fix`
/// measured on `metric`.
pub fn of_column(retests: &[CaseRetest], message_id: &MessageId, fix: &str, metric: &str) -> Option<Significance> {
    let r =
        retests.iter().find(|r| &r.message_id == message_id && r.metric == metric && same_fix(&r.fix_commit, fix))?;
    of_verdict(r.verdict?, &r.facts)
}

fn same_fix(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b) || super::same_commit(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use Significance::{Clear, Marginal};

    /// Headlines as the robot prints them.
    #[test]
    fn the_rule_on_report_headlines() {
        // stress-ng.switch.ops_per_sec: 38288993 -67.7% 12355813 ± 3%
        assert_eq!(of_change(-67.7, None, Some(3.0)), Clear);
        // aim7.jobs-per-min -6.3%, no %stddev printed: 3 x 2% = 6%.
        assert_eq!(of_change(-6.3, None, None), Clear);
        // unixbench.score -3.3%, no %stddev printed.
        assert_eq!(of_change(-3.3, None, None), Marginal);
        // will-it-scale.per_thread_ops -7.7% with 3% on the new side.
        assert_eq!(of_change(-7.7, None, Some(3.0)), Marginal);
        // fio.read_iops -43.3% with ± 12% on the base side: 36% is enough.
        assert_eq!(of_change(-43.3, Some(12.0), Some(2.0)), Clear);
        // Exactly three times the noise is clear; a hair under is not.
        assert_eq!(of_change(-9.0, Some(3.0), None), Clear);
        assert_eq!(of_change(8.99, Some(3.0), None), Marginal);
        // An improvement by the same rule.
        assert_eq!(of_change(125.0, Some(40.0), Some(5.0)), Clear);
        assert_eq!(of_change(f64::NAN, None, None), Marginal);
    }

    fn column(value: f64, sd: Option<f64>) -> serde_json::Value {
        json!({"short": "0123456789", "value": value, "stddev_pct": sd})
    }

    fn retest(
        base: (f64, Option<f64>),
        bad: (f64, Option<f64>),
        fix: (f64, Option<f64>),
        v: &str,
    ) -> serde_json::Value {
        json!({
            "base": column(base.0, base.1), "bad": column(bad.0, bad.1), "fix": column(fix.0, fix.1),
            "values": "metric", "verdict": v,
        })
    }

    /// Fix columns as LKP's retest replies print them.
    #[test]
    fn the_rule_on_fix_verdicts() {
        // 38288993, 12355813 ± 3%, fix 37956520 ± 2%: recovered from -67.7%.
        let r = retest((38288993.0, None), (12355813.0, Some(3.0)), (37956520.0, Some(2.0)), "recovered");
        assert_eq!(of_retest(&r), Some(Clear));
        // vm-scalability.throughput 57522 -> 55603 (-3.3%), fix 57100 ± 4%:
        // "recovered" by the numbers, but the move (+2.7%) is inside the noise.
        let r = retest((57522.0, Some(3.0)), (55603.0, None), (57100.0, Some(4.0)), "recovered");
        assert_eq!(of_retest(&r), Some(Marginal));
        // netperf 100 -> 62.1, fix 63.0: not recovered, and clearly so: the
        // fix is still 37% below the base.
        let r = retest((100.0, None), (62.1, Some(2.0)), (63.0, None), "not-recovered");
        assert_eq!(of_retest(&r), Some(Clear));
        // unixbench 1000 -> 967 (-3.3%), fix 970: not recovered, but the
        // fix is within noise of the base too: marginal.
        let r = retest((1000.0, None), (967.0, None), (970.0, None), "not-recovered");
        assert_eq!(of_retest(&r), Some(Marginal));
        // Partly: halfway back from -40%: both parts are clear.
        let r = retest((100.0, Some(2.0)), (60.0, Some(2.0)), (80.0, Some(3.0)), "partly-recovered");
        assert_eq!(of_retest(&r), Some(Clear));
        // Partly, with a noisy fix column (± 15%): neither part is clear.
        let r = retest((100.0, Some(2.0)), (60.0, Some(2.0)), (80.0, Some(15.0)), "partly-recovered");
        assert_eq!(of_retest(&r), Some(Marginal));
        // No verdict, no numbers: nothing to say.
        assert_eq!(of_retest(&json!({"verdict": null})), None);
        assert_eq!(of_retest(&json!({"verdict": "recovered", "fix": {"value": 1}})), None);
    }

    /// A retest result with a table per test: the verdict (and its
    /// significance) is its first column's, on the case and on its event
    /// alike, whatever the later columns say.
    #[test]
    fn a_result_with_several_columns_is_judged_by_its_first() {
        use crate::case::{CaseId, CaseState, CaseView, Event};
        let id = MessageId::new("Zk702CrvXpE6P8fy@xsang-OptiPlex-9020").unwrap();
        let column = |idx, base, bad, fix, v: &str| CaseRetest {
            message_id: id.clone(),
            idx,
            fix_commit: "fd2296741e".into(),
            metric: format!("will-it-scale.{idx}.per_process_ops"),
            verdict: Some(Verdict::PartlyRecovered),
            facts: retest((base, None), (bad, None), (fix, None), v),
        };
        let retests = vec![
            // 91713 -> 79833, fix 87614: +9.7% from bad, -4.5% from base.
            column(0, 91713.0, 79833.0, 87614.0, "partly-recovered"),
            // 187483 -> 151162, fix 164714: +9.0% and -12.1%: both clear.
            column(1, 187483.0, 151162.0, 164714.0, "partly-recovered"),
        ];
        assert_eq!(of_retest(&retests[1].facts), Some(Clear));
        assert_eq!(of_result(&retests, &id, "fd2296741e2686ed6ecd05187e4"), Some(Marginal));
        let facts = CaseFacts::new(CaseKind::PerfRegression, "t".into(), MessageId::new("r@x").unwrap(), 0);
        let mut e = Event::new(10, EventKind::RetestDone, Some(id.clone()));
        e.verdict = Some(Verdict::PartlyRecovered);
        e.fix_commit = Some("fd2296741e2686ed6ecd05187e4".into());
        let c = CaseRecord {
            verdict: e.verdict,
            fix_commit: e.fix_commit.clone(),
            events: vec![e],
            retests,
            ..CaseRecord::bare(CaseView { id: CaseId(1), state: CaseState::RetestDone, facts }, 10)
        };
        assert_eq!(of_case_verdict(&c), Some(Marginal));
    }

    /// `fail:runs` rows: fail rates in percentage points.
    #[test]
    fn fail_rates_move_in_points() {
        let fail = |base: f64, bad: f64, fix: f64, v: &str| {
            json!({"base": {"value": base}, "bad": {"value": bad}, "fix": {"value": fix},
                   "values": "fail-rate", "verdict": v})
        };
        // 0:20 -> 20:20, the fix 0:20: recovered, clearly.
        assert_eq!(of_retest(&fail(0.0, 1.0, 0.0, "recovered")), Some(Clear));
        // 0 -> 1, the fix still 1: clearly not recovered.
        assert_eq!(of_retest(&fail(0.0, 1.0, 1.0, "not-recovered")), Some(Clear));
        // 0 -> 0.05 (1 of 20 runs), fix 0: one run is no evidence.
        assert_eq!(of_retest(&fail(0.0, 0.05, 0.0, "recovered")), Some(Marginal));
    }
}
