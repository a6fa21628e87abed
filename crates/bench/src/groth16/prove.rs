//! `lockstep-bench groth16 --prove-logs`: a Groth16 proof of a circom circuit, lockstep's CLI
//! (`lockstep groth16 prove`) at each worker count beside `snarkjs groth16 prove` (0.7.6, its
//! default threads: every core), whole processes on the same files (each reads the key and the
//! witness and writes `proof.json` and `public.json`; node's start is in snarkjs's times),
//! milliseconds and peak resident memory, and beside gnark v0.15's `groth16.Prove` on the same
//! circuit written in gnark (the harness's `provebench`: in process, the key in memory, the
//! witness solved inside Prove, GOMAXPROCS at each worker count), ratios from one run.
//!
//! For each size `2^L`: the circuit of `2^L - 3` chained squarings (`s[i] = s[i-1]^2 + k`: a
//! witness of full-width values, the MSMs' hard case; its domain `2^L`), compiled by circom2;
//! its key made from known secrets (`zkey::from_known_secrets`, the key `zkey new` makes from
//! a `.ptau` with those secrets: preparing a `.ptau` of 2^17 takes minutes); the witness by
//! `snarkjs wtns calculate`. Our proof is checked by `snarkjs groth16 verify` before any figure
//! is printed.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;
use blstrs::Scalar;
use ff::Field;
use lockstep_ceremony::circom::CircomR1cs;
use lockstep_ceremony::phase1::Secrets;
use lockstep_ceremony::zkey::{self, NEW_ORDER};
use lockstep_shard::{Control, Pool};

use crate::BenchGroth16Args;
use crate::ceremony::zkey::{Measure, circuit, mb, measured, mem_ratio};
use crate::ceremony::{ms, ratio};

/// The best (shortest) of two measures; the peak the larger.
pub(super) fn better(a: Measure, b: Measure) -> Measure {
    Measure {
        time: match (a.time, b.time) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        },
        peak: a.peak.max(b.peak),
    }
}

/// gnark's `groth16.Prove` at `log` for each thread count: threads -> time; with `out`, the
/// harness writes the circuit's files there too (`provebench -out`).
pub(super) fn gnark(
    harness: &std::path::Path,
    log: u32,
    workers: &[usize],
    repeats: usize,
    out: Option<&std::path::Path>,
) -> anyhow::Result<std::collections::BTreeMap<usize, std::time::Duration>> {
    let threads: Vec<String> = workers.iter().map(usize::to_string).collect();
    let mut command = std::process::Command::new(harness);
    command
        .args([
            "provebench",
            "-logs",
            &log.to_string(),
            "-threads",
            &threads.join(","),
        ])
        .args(["-reps", &repeats.max(1).to_string()]);
    if let Some(dir) = out {
        command.arg("-out").arg(dir);
    }
    let output = command
        .output()
        .context("running the gnark harness's provebench")?;
    anyhow::ensure!(
        output.status.success(),
        "gnark provebench failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut out = std::collections::BTreeMap::new();
    for line in String::from_utf8(output.stdout)?.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let ["prove", _, threads, _, ms] = fields[..] else {
            anyhow::bail!("unexpected provebench line {line:?}");
        };
        out.insert(
            threads.parse()?,
            std::time::Duration::from_secs_f64(ms.parse::<f64>()? / 1e3),
        );
    }
    Ok(out)
}

/// Our prover in this process on the key and witness in `d` (read once, outside the time, as
/// gnark's key is in memory when its Prove is timed): the best time at each worker count.
fn in_process(
    d: &std::path::Path,
    workers: &[usize],
    repeats: usize,
) -> anyhow::Result<Vec<std::time::Duration>> {
    use lockstep_ceremony::circom::Witness;
    use lockstep_ceremony::prove::{Blinding, snarkjs};
    use lockstep_ceremony::{KeyChecks, Limits, zkey::Zkey};
    let pool = Pool::new(*workers.iter().max().unwrap_or(&1))?;
    let key = Zkey::read_for_proving(
        &pool,
        &Control::new(),
        std::io::BufReader::new(std::fs::File::open(d.join("c.zkey"))?),
        &Limits::default(),
        KeyChecks::Curve,
    )?;
    let witness = Witness::read(std::io::BufReader::new(std::fs::File::open(
        d.join("w.wtns"),
    )?))?;
    workers
        .iter()
        .map(|&w| {
            let pool = Pool::new(w)?;
            let mut best = std::time::Duration::MAX;
            for _ in 0..repeats.max(1) {
                let started = std::time::Instant::now();
                snarkjs::prove(&pool, &Control::new(), &key, &witness, &Blinding::random())?;
                best = best.min(started.elapsed());
            }
            Ok(best)
        })
        .collect()
}

/// Runs the prove table.
pub(crate) fn run(
    args: &BenchGroth16Args,
    workers: &[usize],
    harness: Option<&std::path::Path>,
    note: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let lockstep = std::path::absolute(&args.lockstep)?;
    anyhow::ensure!(
        lockstep.exists(),
        "{} is not built: run `cargo build --release -p lockstep-cli` first",
        lockstep.display()
    );
    let peers = std::path::absolute(&args.peers)?;
    let snarkjs = peers.join("node_modules/snarkjs/cli.js");
    let circom = peers.join("node_modules/circom2/cli.js");
    anyhow::ensure!(
        snarkjs.exists() && circom.exists(),
        "snarkjs and circom2 are not installed in {}: run scripts/install-peers",
        peers.display()
    );
    let node = PathBuf::from("node");
    let sj = snarkjs.to_string_lossy().into_owned();
    let pool = Pool::new(*workers.iter().max().unwrap_or(&1))?;
    let mut rows = Vec::new();
    for &log in &args.prove_logs {
        anyhow::ensure!(
            (4..=20).contains(&log),
            "--prove-logs: {log} is outside 4 to 20"
        );
        let dir = tempfile::tempdir()?;
        let d = dir.path();
        note(&format!("prove 2^{log}: compiling the circuit..."));
        std::fs::write(d.join("c.circom"), circuit((1 << log) - 3))?;
        let circom_path = circom.to_string_lossy().into_owned();
        measured(
            &node,
            &[
                &circom_path,
                "c.circom",
                "--r1cs",
                "--wasm",
                "--prime",
                "bls12381",
                "-o",
                ".",
            ],
            d,
            &[],
        )?;
        note(&format!("prove 2^{log}: the key and the witness..."));
        let r1cs = CircomR1cs::read(std::io::BufReader::new(
            std::fs::File::open(d.join("c.r1cs")).context("c.r1cs")?,
        ))?;
        let secrets = Secrets::from_scalars(
            Scalar::random(rand_core::OsRng),
            Scalar::random(rand_core::OsRng),
            Scalar::random(rand_core::OsRng),
        );
        let key = zkey::from_known_secrets(&pool, &Control::new(), &r1cs, &secrets)?;
        drop(r1cs);
        key.write(
            &pool,
            &Control::new(),
            &NEW_ORDER,
            std::io::BufWriter::new(std::fs::File::create(d.join("c.zkey"))?),
        )?;
        drop(key);
        std::fs::write(d.join("in.json"), r#"{"x": "3", "k": "5"}"#)?;
        measured(
            &node,
            &[&sj, "wtns", "calculate", "c_js/c.wasm", "in.json", "w.wtns"],
            d,
            &[],
        )?;
        let gnark = match harness {
            Some(harness) => {
                note(&format!("prove 2^{log}: gnark..."));
                gnark(harness, log, workers, args.repeats, None)?
            }
            None => std::collections::BTreeMap::new(),
        };
        let snarkjs_runs = log <= args.snarkjs_max_log;
        note(&format!("prove 2^{log}: ours in process..."));
        let inside = in_process(d, workers, args.repeats)?;
        let mut theirs = Measure::default();
        let mut ours: Vec<Measure> = vec![Measure::default(); workers.len()];
        for _ in 0..args.repeats.max(1) {
            if !snarkjs_runs {
                break;
            }
            note(&format!("prove 2^{log}: snarkjs..."));
            theirs = better(
                theirs,
                measured(
                    &node,
                    &[
                        &sj,
                        "groth16",
                        "prove",
                        "c.zkey",
                        "w.wtns",
                        "p-theirs.json",
                        "x-theirs.json",
                    ],
                    d,
                    &[],
                )?,
            );
        }
        for _ in 0..args.repeats.max(1) {
            for (slot, w) in ours.iter_mut().zip(workers) {
                note(&format!("prove 2^{log}: ours at {w} workers..."));
                let w = w.to_string();
                *slot = better(
                    *slot,
                    measured(
                        &lockstep,
                        &[
                            "--workers",
                            &w,
                            "-q",
                            "groth16",
                            "prove",
                            "--trust-key",
                            "--zkey",
                            "c.zkey",
                            "--witness",
                            "w.wtns",
                            "--proof",
                            "p.json",
                            "--public",
                            "x.json",
                        ],
                        d,
                        &[],
                    )?,
                );
                std::fs::remove_file(d.join("p.json"))?;
                std::fs::remove_file(d.join("x.json"))?;
            }
        }
        note(&format!("prove 2^{log}: snarkjs verifies our proof..."));
        measured(
            &lockstep,
            &[
                "-q",
                "groth16",
                "prove",
                "--zkey",
                "c.zkey",
                "--witness",
                "w.wtns",
                "--proof",
                "p.json",
                "--public",
                "x.json",
            ],
            d,
            &[],
        )?;
        measured(
            &lockstep,
            &[
                "-q",
                "ceremony",
                "zkey",
                "export-vkey",
                "c.zkey",
                "--out",
                "vk.json",
            ],
            d,
            &[],
        )?;
        let verdict = std::process::Command::new(&node)
            .args([
                sj.as_str(),
                "groth16",
                "verify",
                "vk.json",
                "x.json",
                "p.json",
            ])
            .current_dir(d)
            .output()?;
        anyhow::ensure!(
            String::from_utf8_lossy(&verdict.stdout).contains("OK!"),
            "snarkjs groth16 verify refused our proof at 2^{log}"
        );
        rows.push((log, theirs, ours, gnark, inside));
        if std::env::var_os("LOCKSTEP_BENCH_KEEP").is_some() {
            note(&format!(
                "prove 2^{log}: files kept in {}",
                dir.keep().display()
            ));
        }
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "\nGroth16 prove, 2^L - 3 chained squarings, ms and peak MB, best of {}: ours (--trust-key: the key's sections 5-9 on their curves, as a key you made or zkey verify checked) and snarkjs 0.7.6 (its default threads) as whole processes on the same .zkey and .wtns; gnark v0.15 groth16.Prove in process (the witness solved inside it), and ours in process (inside: the key and witness read before the time)",
        args.repeats.max(1)
    )?;
    write!(out, "{:<6} {:>10} {:>7}", "size", "snarkjs", "MB")?;
    for w in workers {
        write!(
            out,
            " {:>9} {:>6} {:>10} {:>7} {:>9} {:>8}",
            format!("ours {w}w"),
            "MB",
            "snarkjs/us",
            "mem",
            format!("gnark {w}t"),
            "gnark/us"
        )?;
    }
    for w in workers {
        write!(out, " {:>10} {:>8}", format!("inside {w}w"), "gnark/us")?;
    }
    writeln!(out)?;
    for (log, theirs, ours, gnark, inside) in rows {
        write!(
            out,
            "2^{log:<4} {:>10} {:>7}",
            ms(theirs.time),
            mb(theirs.peak)
        )?;
        for (m, w) in ours.iter().zip(workers) {
            let g = gnark.get(w).copied();
            write!(
                out,
                " {:>9} {:>6} {:>10} {:>7} {:>9} {:>8}",
                ms(m.time),
                mb(m.peak),
                ratio(theirs.time, m.time),
                mem_ratio(theirs.peak, m.peak),
                ms(g),
                ratio(g, m.time)
            )?;
        }
        for (t, w) in inside.iter().zip(workers) {
            let g = gnark.get(w).copied();
            write!(out, " {:>10} {:>8}", ms(Some(*t)), ratio(g, Some(*t)))?;
        }
        writeln!(out)?;
    }
    Ok(())
}
