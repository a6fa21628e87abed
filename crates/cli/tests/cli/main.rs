//! The `lockstep` binary, run as a user runs it.
//!
//! - `info`: version, parallelism, worker policy and its errors.
//! - `psi`: every PSI subcommand over real files, the demo, worker counts.
//! - `psi_files`: outputs never over inputs, all outputs or none, interruptions, special files.
//! - `psi_fixtures`: every PSI output byte for byte against files an earlier binary made.
//! - `psi_resolve`: resolve refuses another input and pairs no honest joiner sends.
//! - `psi_limits`: memory bounded on hostile messages and inputs.
//! - `psi_errors`: clear errors, safe defaults, usage errors exit 2.
//! - `rules`: issue 17's general rules on every engine: pipes, a full disk, unprintable results.
//! - `ceremony_hostile`: pipes, unprintable results, bounded delays, wrong kinds (issue 17).
//! - `memory`: every command under an address-space limit fails cleanly or runs (issue 28).
//! - `plan`: plan validate and run over raw and .npy files, and their errors.
//! - `plan_hostile`: large outputs streamed, reads bounded, echoed ids escaped (issue 17).

#![allow(
    clippy::unwrap_used,
    clippy::cast_possible_truncation,
    reason = "helpers of tests: a failure is a test failure"
)]

mod ceremony;
mod ceremony_hostile;
mod ceremony_phase2;
mod ceremony_snarkjs;
pub(crate) mod ceremony_zkey;
#[path = "../support/gnark.rs"]
mod gnark;
mod groth16_gnark;
mod groth16_snarkjs;
mod info;
mod memory;
mod plan;
mod plan_hostile;
mod psi;
mod psi_errors;
mod psi_files;
mod psi_fixtures;
pub(crate) mod psi_limits;
mod psi_resolve;
mod psi_streaming;
pub(crate) mod rules;

use std::path::Path;
use std::process::Command;

/// What a run of the binary gave.
pub(crate) struct Run {
    pub(crate) ok: bool,
    /// The exit code (`None` if a signal ended the process).
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// The binary, ready to run in `dir` without LOCKSTEP_WORKERS.
pub(crate) fn command(dir: Option<&Path>, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lockstep"));
    cmd.args(args).env_remove("LOCKSTEP_WORKERS");
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    cmd
}

/// Runs `lockstep` with `args` in `dir` (or the current directory), without LOCKSTEP_WORKERS
/// unless `env` sets it.
pub(crate) fn lockstep_in(dir: Option<&Path>, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = command(dir, args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run lockstep");
    Run {
        ok: out.status.success(),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `lockstep` with `args` in the current directory.
pub(crate) fn lockstep(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let run = lockstep_in(None, args, env);
    (run.ok, run.stdout, run.stderr)
}

/// Runs in `dir`, which must succeed.
pub(crate) fn ok(dir: &Path, args: &[&str]) -> Run {
    let r = lockstep_in(Some(dir), args, &[]);
    assert!(r.ok, "lockstep {args:?} failed: {}", r.stderr);
    r
}

/// Runs in `dir`, which must fail with exit `code` and `message` in its error.
pub(crate) fn fails_with(dir: &Path, args: &[&str], code: i32, message: &str) -> Run {
    let r = lockstep_in(Some(dir), args, &[]);
    assert!(!r.ok, "lockstep {args:?} succeeded");
    assert_eq!(
        r.code,
        Some(code),
        "lockstep {args:?}: exit code; stderr {:?}",
        r.stderr
    );
    assert!(
        r.stderr.contains(message),
        "lockstep {args:?}: expected {message:?} in {:?}",
        r.stderr
    );
    r
}

/// Runs in `dir`, which must fail (exit 1) with `message` in its error.
pub(crate) fn fails(dir: &Path, args: &[&str], message: &str) -> Run {
    fails_with(dir, args, 1, message)
}

/// How a command's status line names the worker count it ran on: `1 worker`, `3 workers`.
pub(crate) fn ran_on(workers: &str) -> String {
    if workers == "1" {
        "1 worker".to_owned()
    } else {
        format!("{workers} workers")
    }
}

/// `base` followed by `more`.
pub(crate) fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

/// Two small organisations: a clinic (starter) and a registry (joiner), keyed on name + birth
/// date, with case and spacing differences and a duplicate row; and their keys.
pub(crate) fn organisations(dir: &Path) {
    std::fs::write(
        dir.join("clinic.csv"),
        "id,name,dob,note\n\
         c1,Ada Lovelace,1815-12-10,x\n\
         c2,Alan Turing,1912-06-23,y\n\
         c3,Grace Hopper,1906-12-09,z\n\
         c4,Ada Lovelace,1815-12-10,dup\n\
         c5,,,\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("registry.csv"),
        "name,dob,city\n\
         grace  hopper,1906-12-09,Arlington\n\
         Edsger Dijkstra,1930-05-11,Nuenen\n\
         ADA LOVELACE ,1815-12-10,London\n",
    )
    .unwrap();
    ok(dir, &["psi", "key", "new", "--out", "clinic.key"]);
    ok(dir, &["psi", "key", "new", "--out", "registry.key"]);
}

/// The clinic's input flags.
pub(crate) const CLINIC: [&str; 8] = [
    "--input",
    "clinic.csv",
    "--column",
    "name",
    "--column",
    "dob",
    "--normalize",
    "--quiet",
];

/// The registry's input flags.
pub(crate) const REGISTRY: [&str; 8] = [
    "--input",
    "registry.csv",
    "--column",
    "name",
    "--column",
    "dob",
    "--normalize",
    "--quiet",
];

/// A whole raw round in `dir` (after [`organisations`]): request.bin, setup.bin, perm.csv,
/// response.bin, matches.csv and pairs.csv.
pub(crate) fn raw_round(dir: &Path) {
    ok(
        dir,
        &with(
            &[
                "psi",
                "request",
                "--key",
                "registry.key",
                "--out",
                "request.bin",
            ],
            &REGISTRY,
        ),
    );
    ok(
        dir,
        &with(
            &[
                "psi",
                "setup",
                "--key",
                "clinic.key",
                "--joiner-count",
                "3",
                "--permutation-out",
                "perm.csv",
                "--out",
                "setup.bin",
            ],
            &CLINIC,
        ),
    );
    ok(
        dir,
        &[
            "psi",
            "respond",
            "--key",
            "clinic.key",
            "--request",
            "request.bin",
            "--joiner-count",
            "3",
            "--out",
            "response.bin",
            "-q",
        ],
    );
    ok(
        dir,
        &intersect(
            "setup.bin",
            "response.bin",
            &[
                "--request",
                "request.bin",
                "--out",
                "matches.csv",
                "--pairs-out",
                "pairs.csv",
            ],
        ),
    );
}

/// The registry's intersect command over `setup` and `response`, then `more`.
pub(crate) fn intersect<'a>(setup: &'a str, response: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "psi",
        "intersect",
        "--key",
        "registry.key",
        "--setup",
        setup,
        "--response",
        response,
    ];
    args.extend_from_slice(&REGISTRY);
    args.extend_from_slice(more);
    args
}

/// The resolve command of a raw round, writing `out`.
pub(crate) fn resolve_args<'a>(out: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "psi",
        "resolve",
        "--permutation",
        "perm.csv",
        "--matches",
        "pairs.csv",
        "--out",
        out,
    ];
    args.extend_from_slice(&CLINIC);
    args.extend_from_slice(more);
    args
}

/// The names of the temporary files lockstep left in `dir`.
pub(crate) fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".lockstep-tmp-") || n.starts_with(".tmp"))
        .collect()
}
