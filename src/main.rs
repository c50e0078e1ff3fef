//! The `lkpbot` binary: parse the command line, run, print the error chain
//! once, exit with the code the failure maps to.
#![deny(clippy::unwrap_used)]

use clap::Parser;

fn main() {
    let cli = lkpbot::cli::Cli::parse();
    if let Err(f) = lkpbot::cli::run(cli) {
        eprintln!("lkpbot: {:#}", f.error);
        std::process::exit(f.code);
    }
}
