//! The `lockstep` binary, run as a user runs it.
//!
//! - `info`: version, parallelism, worker policy and its errors.
//! - `psi`: every PSI subcommand over real files, the demo, and bad input.

#![allow(
    clippy::unwrap_used,
    reason = "helpers of tests: a failure is a test failure"
)]

mod info;
mod psi;

use std::path::Path;
use std::process::Command;

/// What a run of the binary gave.
pub(crate) struct Run {
    pub(crate) ok: bool,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `lockstep` with `args` in `dir` (or the current directory), without LOCKSTEP_WORKERS
/// unless `env` sets it.
pub(crate) fn lockstep_in(dir: Option<&Path>, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lockstep"));
    cmd.args(args).env_remove("LOCKSTEP_WORKERS");
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run lockstep");
    Run {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `lockstep` with `args` in the current directory.
pub(crate) fn lockstep(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let run = lockstep_in(None, args, env);
    (run.ok, run.stdout, run.stderr)
}
