//! The `lkpbot` binary: parse the command line, set up logging, run,
//! print the error chain once, exit with the code the failure maps to.
#![deny(clippy::unwrap_used)]

use clap::Parser;

fn main() {
    // clap's own `parse` exits 2 on a bad argument; DESIGN.md gives usage
    // errors exit 1, so the error is printed here and mapped.
    let cli = match lkpbot::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` print to stdout and are not errors;
            // a closed stdout (`lkpbot --help | head -1`) is not one either.
            let _ = e.print();
            std::process::exit(if e.use_stderr() { 1 } else { 0 });
        }
    };
    // Logs go to stderr, warnings and errors unless RUST_LOG says more.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter(filter).with_target(false).init();
    if let Err(f) = lkpbot::cli::run(cli) {
        eprintln!("lkpbot: {}", lkpbot::cli::describe(&f.error));
        std::process::exit(f.code);
    }
}
