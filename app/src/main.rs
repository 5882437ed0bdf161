//! The `berth` binary: the window (`berth` alone), `berth server`, and the CLI verbs.
//!
//! Owns argument parsing and printing, the window and the renderer. It holds no state the
//! server owns: every verb is one or a few calls over the socket, and the window goes through
//! the same commands in-process.

mod cli;
mod config;
mod decide;
mod doctor;
mod hook_install;
mod json_edit;
mod logs;
// The renderer's API is wider than the window uses yet (tests and examples use the rest).
mod git_cli;
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
        Err(err) => {
            eprintln!("berth: {err:#}");
            ExitCode::from(1)
        }
    }
}
