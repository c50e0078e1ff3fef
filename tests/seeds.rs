//! The five sample mails the product started from (`../shared/seeds/`):
//! a reply of a reply (the report only in `>> >>` quotes), a text dump of
//! a report with `±` turned into `?`, raw headers with a quoted report and
//! a rerun on another machine, a pipermail archive page with a fixup
//! column, and a report flattened onto one line. The expectations were written by reading each mail.

use lkpbot::classify::{ClassifyConfig, classify, json::to_json};
use serde_json::Value;

use crate::util;

fn seed(name: &str) -> Option<Value> {
    let path = util::shared_file(&format!("seeds/{name}"))?;
    let bytes = std::fs::read(path).unwrap();
    let mail = lkpbot::mail::parse(&bytes);
    let v = to_json(&mail, &classify(&mail, &ClassifyConfig::default()));
    // The same result with CRLF line ends.
    let crlf = lkpbot::mail::parse(&util::to_crlf(&bytes));
    assert_eq!(v, to_json(&crlf, &classify(&crlf, &ClassifyConfig::default())), "{name}: LF and CRLF differ");
    Some(v)
}

#[test]
fn reply_of_a_reply_is_a_test_request_carrying_the_quoted_report() {
    let Some(v) = seed("000_307b1dcf1f28d7aa.txt") else { return };
    assert_eq!(v["kind"], "test-request");
    let r = &v["report"];
    assert_eq!(r["commit"]["sha"], "2b0f904a5a8781498417d67226fd12c5e56053ae");
    assert_eq!(r["commit"]["subject"], "mm/cma: manage the memory of the CMA area by using the ZONE_MOVABLE");
    assert_eq!(r["tree"], "linux-next");
    assert_eq!(r["testcase"], "fio-basic");
    assert_eq!(r["test_machine"], "56 threads Intel(R) Xeon(R) CPU E5-2695 v3 @ 2.30GHz with 256G memory");
    assert_eq!(r["headline"]["metric"], "fio.read_bw_MBps");
    assert_eq!(r["headline"]["change_pct"], -16.1);
    assert_eq!(r["headline"]["direction"], "regression");
    assert_eq!(r["headline"]["base"], 11451);
    assert_eq!(r["headline"]["new"], 9605);
    let target = &v["test_request"]["targets"][0];
    assert_eq!(target["kind"], "lore-link");
    assert!(target["value"].as_str().unwrap().contains("1522913236-15776-1-git-send-email-iamjoonsoo.kim"));
}

#[test]
fn text_dump_report_with_question_marks_is_an_improvement() {
    let Some(v) = seed("001_739b0ec8efc258ee.txt") else { return };
    assert_eq!(v["kind"], "perf-improvement");
    assert_eq!(v["commit"]["sha"], "4405c5fd8434809972dd2996c4dbfe5124b01d55");
    assert_eq!(v["commit"]["short"], "4405c5fd84");
    assert_eq!(v["tree"], "linux-next");
    assert_eq!(v["branch"], "master");
    assert_eq!(v["testcase"], "vm-scalability");
    assert_eq!(v["test_machine"], "72 threads Intel(R) Xeon(R) CPU E5-2699 v3 @ 2.30GHz with 128G memory");
    let h = &v["headline"];
    assert_eq!(h["metric"], "vm-scalability.throughput");
    assert_eq!(h["change_pct"], 26.5);
    assert_eq!(h["direction"], "improvement");
    assert_eq!(h["base"], 3278698);
    assert_eq!(h["new"], 4148766);
    assert_eq!(h["base_stddev_pct"], Value::Null);
    assert_eq!(h["new_stddev_pct"], 2);
}

/// Aaron Lu of the LKP team: "Test on Broadwell-EP also showed 35%
/// regression", and the base and bad columns: the regression confirmed on
/// another machine, without a fix (the table has no row of the headline
/// metric, so its testcase's first row is read, and that is said).
#[test]
fn raw_headers_reply_rerun_on_another_machine_confirms_the_regression() {
    let Some(v) = seed("002_79b954c02ed98660.txt") else { return };
    assert_eq!(v["kind"], "retest-result");
    assert_eq!(v["outcome"]["kind"], "regression-confirmed");
    assert_eq!(v["outcome"]["metric"], "will-it-scale.workload");
    assert_eq!(v["outcome"]["change_pct"], -35.0);
    assert_eq!(v["verdict"], "still-regressed");
    assert_eq!(v["message_id"], "20180509150221.GA4848@intel.com");
    assert_eq!(v["in_reply_to"], "20180509023211.GB10016@intel.com");
    assert_eq!(v["subject"], "Re: [LKP] [lkp-robot] [mm] e27be240df: will-it-scale.per_process_ops -27.2% regression");
    let r = &v["report"];
    assert_eq!(r["commit"]["sha"], "e27be240df53f1a20c659168e722b5d9f16cc7f4");
    assert_eq!(r["tree"], "linus");
    assert_eq!(r["testcase"], "will-it-scale");
    assert_eq!(r["headline"]["metric"], "will-it-scale.per_process_ops");
    assert_eq!(r["headline"]["change_pct"], -27.2);
}

#[test]
fn pipermail_page_with_fixup_columns_is_a_retest() {
    let Some(v) = seed("003_92ffa8dcb1226acb.txt") else { return };
    assert_eq!(v["kind"], "retest-result");
    assert_eq!(v["report"]["commit"]["sha"], "ecf8443e51a862b261313c2319ab4e4aed9e6b7e");
    assert_eq!(v["report"]["headline"]["metric"], "vm-scalability.throughput");
    // First table: the patch applied on its base commit: no regression.
    let t = &v["retests"][0];
    assert_eq!(t["fix"]["short"], "57da7477067d");
    assert_eq!(t["base"]["short"], "027f55e87c30");
    assert_eq!(t["bad"]["short"], "ecf8443e51a8");
    assert_eq!(t["metric"], "vm-scalability.median");
    assert_eq!(t["metric_source"], "first-row");
    assert_eq!(t["fix_change_pct"], -0.1);
    assert_eq!(t["verdict"], "recovered");
    // Second table: the patch on top of the bad commit: worse (-33.9%).
    let t = &v["retests"][1];
    assert_eq!(t["fix"]["short"], "8ae369d45894");
    assert_eq!(t["verdict"], "not-recovered");
    assert_eq!(v["retests"].as_array().unwrap().len(), 2);
}

#[test]
fn report_flattened_onto_one_line_is_a_regression() {
    let Some(v) = seed("004_e796d42e3afc6840.txt") else { return };
    assert_eq!(v["kind"], "perf-regression");
    assert_eq!(v["commit"]["sha"], "7e12beb8ca2ac98b2ec42e0ea4b76cdc93b58654");
    assert_eq!(v["commit"]["subject"], "migrate_pages: batch flushing TLB");
    assert_eq!(v["tree"], "linus");
    assert_eq!(v["testcase"], "vm-scalability");
    assert_eq!(
        v["test_machine"],
        "96 threads 2 sockets Intel(R) Xeon(R) Platinum 8260L CPU @ 2.40GHz (Cascade Lake) with 128G memory"
    );
    assert_eq!(v["parameters"]["size"], "512G");
    let h = &v["headline"];
    assert_eq!(h["metric"], "vm-scalability.throughput");
    assert_eq!(h["change_pct"], -3.4);
    assert_eq!(h["base"], 5513665);
    assert_eq!(h["new"], 5328506);
    assert_eq!(v["tags"]["link"], "https://lore.kernel.org/oe-lkp/202303192325.ecbaf968-yujie.liu@intel.com");
}
