//! `lockstep`: the command-line front of the lockstep engines.
//!
//! `main` parses arguments, calls library code and maps the outcome to an exit code:
//! 0 on success, 1 on a failed run, 2 on a usage error (clap's own code).

mod args;
mod info;
#[cfg_attr(
    not(test),
    expect(dead_code, reason = "the engines' subcommands are its first users")
)]
mod progress;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // `{:#}` prints the whole context chain on one line: "reading x: no such file".
            let _ = writeln!(std::io::stderr(), "lockstep: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    let policy = cli.policy()?;
    let mut out = std::io::stdout().lock();
    match &cli.command {
        Command::Info => info::print(&mut out, &policy),
    }
}
