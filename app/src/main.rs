//! The `berth` binary: the window (a later issue), `berth server`, and the CLI verbs.
//!
//! Owns argument parsing and printing. It holds no state the server owns: every verb is one
//! or a few calls over the socket.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("berth: {err:#}");
            ExitCode::from(1)
        }
    }
}
