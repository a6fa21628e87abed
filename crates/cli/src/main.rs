//! `lockstep`: the command-line front of the lockstep engines.
//!
//! `main` parses arguments, calls library code and maps the outcome to an exit code:
//! 0 on success, 1 on a failed run, 2 on a usage error (clap's own, and ours: conflicting flags,
//! an output over an input, a bad worker count), which is always raised before any masking and
//! before any output is written. Record rules, file formats and worker grains are the engines'
//! (`lockstep-psi`, `lockstep-ceremony`, `lockstep-plan`); the rules of which files may be read
//! and written are `lockstep-files`'.

mod allocator;
mod args;
mod ceremony;
mod info;
mod plan;
mod progress;
mod psi;
mod serve;
mod session;
mod usage;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};
use crate::session::Session;

fn main() -> ExitCode {
    allocator::tune();
    // Before anything allocates, argument parsing included: a process left no room (a binary
    // that just fits under `ulimit -v`) says so in words that need no allocation, instead of
    // aborting in its first small buffer.
    if lockstep_shard::memory::probe(START_ROOM).is_err() {
        let _ = std::io::stderr().write_all(
            b"lockstep: error: not enough memory to run: 32 MiB beside the program cannot be allocated (is its address space limited, by ulimit -v?)\n",
        );
        return ExitCode::FAILURE;
    }
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

/// Address space every command needs beside the program for its fixed buffers and threads
/// (1 MiB I/O buffers, chunks of points, worker stacks): asked once at start, before anything
/// allocates, so a process too small to run says so instead of aborting in its first buffer. The engines' large vectors are
/// allocated fallibly with their own headroom (`lockstep_shard::memory`).
const START_ROOM: usize = 32 << 20;

fn run(cli: &Cli) -> anyhow::Result<()> {
    let policy = cli.policy()?;
    let session = Session::new(policy.clone(), cli.quiet);
    match &cli.command {
        Command::Info => session.print(&info::text(&policy)?),
        Command::Psi(args) => psi::run(args, session),
        Command::Ceremony(command) => ceremony::run(command, session),
        Command::Groth16(command) => ceremony::groth16(command, session),
        Command::Plan(command) => plan::run(command, &session),
        Command::Serve(args) => serve::run(args, &session),
    }
}
