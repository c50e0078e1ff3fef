//! A reading aid for the labelled replies (`fixtures/labels/`): prints
//! what the classifier reads in the named messages of the corpus, sentence
//! by sentence, to read a disagreement between a label and the classifier.
//!
//! ```text
//! cargo run --example show_labelled -- MESSAGE-ID [MESSAGE-ID ...]
//! ```
//!
//! The corpus is read from `../shared/corpus/` (or `$LKPBOT_SHARED/corpus`).

use std::path::PathBuf;

use lkpbot::classify::{self, ClassifyConfig};

fn main() {
    let ids: Vec<String> = std::env::args().skip(1).collect();
    if ids.is_empty() {
        eprintln!("usage: show_labelled MESSAGE-ID [MESSAGE-ID ...]");
        std::process::exit(2);
    }
    let shared = std::env::var_os("LKPBOT_SHARED")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"), PathBuf::from);
    for mbox in ["lkp-threads.mbox", "lkp-lifecycle.mbox"] {
        let path = shared.join("corpus").join(mbox);
        let messages = match lkpbot::source::open(&path) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                std::process::exit(1);
            }
        };
        for raw in messages {
            let raw = match raw {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("{}: {e}", path.display());
                    continue;
                }
            };
            let mail = lkpbot::mail::parse(&raw.bytes);
            if !ids.contains(&mail.message_id.to_string()) {
                continue;
            }
            let c = classify::classify(&mail, &ClassifyConfig::default());
            println!("== {} {} {:?} {:?}", mail.message_id, c.kind.as_str(), c.sender, c.outcome);
            let own = lkpbot::mail::quote::unquoted(&mail.body);
            for s in classify::text::sentences(lkpbot::text::strip_signature(&own)) {
                println!("  | {}", s.text);
            }
        }
    }
}
