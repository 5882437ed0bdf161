//! The `berth` binary: the window (`berth` alone), `berth server`, and the CLI verbs.
//!
//! Owns argument parsing and printing, the window and the renderer. It holds no state the
//! server owns: every verb is one or a few calls over the socket, and the window goes through
//! the same commands in-process.

// First: its `outln!`/`out!` macros are used by the verbs' modules below.
#[macro_use]
mod out;

mod cli;
mod config;
mod decide;
mod doctor;
mod hook_install;
mod json_edit;
mod logs;
mod mcp;
mod mcp_install;
// The renderer's API is wider than the window uses yet (tests and examples use the rest).
mod git_cli;
#[cfg(test)]
mod hint_tests;
#[allow(dead_code, unused_imports)]
mod render;
mod safe_file;
mod shell_init;
mod ssh_attach;
mod task_cli;
mod window;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        // The reader of standard output went away: a normal end, quietly (see `out`).
        Err(err) if out::is_closed(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("berth: {err:#}");
            ExitCode::from(1)
        }
    }
}
