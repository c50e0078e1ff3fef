//! Arbitrary bytes through the whole pure front of the pipeline: MIME
//! parsing, classification, command parsing and the JSON view. Any panic
//! is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mail = lkpbot::mail::parse(data);
    let c = lkpbot::classify::classify(&mail, &lkpbot::classify::ClassifyConfig::default());
    let _ = lkpbot::classify::json::to_json(&mail, &c);
    let _ = lkpbot::commands::parse(&mail.body);
});
