//! The `lkpbot` binary: parse the command line, set up logging, run,
//! print the error chain once, exit with the code the failure maps to.
#![deny(clippy::unwrap_used)]

use clap::Parser;

mod alloc;

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
    lkpbot::cli::init_logging(&cli);
    if let Err(f) = lkpbot::cli::run(cli) {
        eprintln!("lkpbot: {}", lkpbot::cli::describe(&f.error));
        std::process::exit(f.code);
    }
}
