//! `lockstep`: the command-line front of the lockstep engines.
//!
//! `main` parses arguments, calls library code and maps the outcome to an exit code:
//! 0 on success, 1 on a failed run, 2 on a usage error (clap's own, and ours: conflicting flags,
//! an output over an input, a bad worker count), which is always raised before any masking and
//! before any output is written.

mod args;
mod bench;
mod ceremony;
mod files;
mod info;
mod plan;
mod progress;
mod psi;
mod usage;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use crate::args::{BenchCommand, Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // `{:#}` prints the whole context chain on one line: "reading x: no such file".
            let _ = writeln!(std::io::stderr(), "lockstep: error: {error:#}");
            if usage::is_usage(&error) {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    match &cli.command {
        Command::Info => info::print(&mut std::io::stdout().lock(), &cli.policy()?),
        Command::Psi(args) => psi::run(args, cli.policy()?, cli.quiet),
        Command::Ceremony(command) => ceremony::run(command, cli.policy()?, cli.quiet),
        Command::Plan(command) => plan::run(command, cli.policy()?, cli.quiet),
        Command::Bench(BenchCommand::Psi(args)) => {
            bench::psi(args, &cli.bench_worker_counts()?, cli.quiet)
        }
        Command::Bench(BenchCommand::Ceremony(args)) => {
            bench::ceremony::run(args, &cli.bench_worker_counts()?, cli.quiet)
        }
        Command::Bench(BenchCommand::Plan(args)) => {
            bench::plan::run(args, &cli.bench_worker_counts()?)
        }
    }
}
