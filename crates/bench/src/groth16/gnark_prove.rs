//! `lockstep-bench groth16 --gnark-prove-logs`: a Groth16 proof on gnark's own files, gnark
//! v0.15's `groth16.Prove` beside ours, ratios from one run.
//!
//! For each size `2^L`, the harness's `provebench -out` compiles the circuit of `2^L - 3`
//! chained squarings in gnark, makes its keys by `groth16.Setup`, times `groth16.Prove` at each
//! thread count (in process: the key in memory, the witness solved inside Prove) and writes the
//! R1CS, the keys and the witness. On those files, ours:
//! - in process: the R1CS, the key and the witness read before the time, then
//!   `prove::gnark::prove` (the witness solved inside it, as gnark's), the best of R;
//! - as a whole process: `lockstep groth16 prove --pk --r1cs --witness --trust-key` (the key
//!   read, its points checked on their curves, the proof's in their subgroups), milliseconds
//!   and peak memory;
//! - the same on the key `lockstep groth16 prepare` wrote (checked once, uncompressed: read
//!   without square roots);
//! - the key's reading alone, in process, at each worker count.
//!
//! Our proof is checked by gnark's `groth16.Verify` before any figure is printed.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use lockstep_ceremony::Limits;
use lockstep_ceremony::groth16;
use lockstep_ceremony::phase2::ProvingKey;
use lockstep_ceremony::prove::{Blinding, gnark as prover};
use lockstep_ceremony::r1cs::R1cs;
use lockstep_shard::{Control, Pool};

use crate::BenchGroth16Args;
use crate::ceremony::zkey::{Measure, mb, measured};
use crate::ceremony::{ms, ratio};

use super::prove::{better, gnark};

fn open(path: &Path) -> anyhow::Result<std::io::BufReader<std::fs::File>> {
    Ok(std::io::BufReader::new(
        std::fs::File::open(path).with_context(|| format!("{}", path.display()))?,
    ))
}

fn read_key(pool: &Pool, path: &Path) -> anyhow::Result<ProvingKey> {
    let limits = Limits {
        file_len: Some(std::fs::metadata(path)?.len()),
        ..Limits::default()
    };
    let checks = lockstep_ceremony::phase2::KeyChecks::Curve;
    Ok(ProvingKey::read_with(pool, &Control::new(), open(path)?, &limits, checks)?.0)
}

/// One size's figures.
struct Row {
    log: u32,
    gnark: BTreeMap<usize, Duration>,
    inside: Vec<Duration>,
    read: Vec<Duration>,
    cli: Vec<Measure>,
    prepared: Vec<Measure>,
}

/// Runs the table on gnark's files.
pub(crate) fn run(
    args: &BenchGroth16Args,
    workers: &[usize],
    harness: &Path,
    note: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let lockstep = std::path::absolute(&args.lockstep)?;
    anyhow::ensure!(
        lockstep.exists(),
        "{} is not built: run `cargo build --release -p lockstep-cli` first",
        lockstep.display()
    );
    let repeats = args.repeats.max(1);
    let mut rows = Vec::new();
    for &log in &args.gnark_prove_logs {
        anyhow::ensure!(
            (4..=22).contains(&log),
            "--gnark-prove-logs: {log} is outside 4 to 22"
        );
        let dir = tempfile::tempdir()?;
        let d = dir.path();
        note(&format!("gnark prove 2^{log}: gnark (and its files)..."));
        let gnark = gnark(harness, log, workers, repeats, Some(d))?;
        let file = |ext: &str| d.join(format!("c-{log}.{ext}"));
        let r1cs = R1cs::read(open(&file("r1cs"))?)?;
        let witness = groth16::read_witness(open(&file("wit"))?)?;
        let mut inside = Vec::new();
        let mut read = Vec::new();
        for &w in workers {
            note(&format!(
                "gnark prove 2^{log}: ours in process at {w} workers..."
            ));
            let pool = Pool::new(w)?;
            let mut best_read = Duration::MAX;
            let mut key = None;
            for _ in 0..repeats {
                let started = Instant::now();
                key = Some(read_key(&pool, &file("pk"))?);
                best_read = best_read.min(started.elapsed());
            }
            let key = key.expect("invariant: at least one repeat");
            let mut best = Duration::MAX;
            for _ in 0..repeats {
                let started = Instant::now();
                prover::prove(
                    &pool,
                    &Control::new(),
                    &r1cs,
                    &key,
                    &witness,
                    &Blinding::random(),
                )?;
                best = best.min(started.elapsed());
            }
            inside.push(best);
            read.push(best_read);
        }
        note(&format!("gnark prove 2^{log}: lockstep groth16 prepare..."));
        measured(
            &lockstep,
            &[
                "-q",
                "groth16",
                "prepare",
                "--pk",
                &file("pk").to_string_lossy(),
                "--out",
                &file("prepared").to_string_lossy(),
            ],
            d,
            &[],
        )?;
        let mut cli = vec![Measure::default(); workers.len()];
        let mut prepared = vec![Measure::default(); workers.len()];
        for _ in 0..repeats {
            for (k, w) in workers.iter().enumerate() {
                for (key, slot) in [("pk", &mut cli[k]), ("prepared", &mut prepared[k])] {
                    note(&format!(
                        "gnark prove 2^{log}: ours (the CLI, {key}) at {w} workers..."
                    ));
                    let m = measured(
                        &lockstep,
                        &[
                            "--workers",
                            &w.to_string(),
                            "-q",
                            "groth16",
                            "prove",
                            "--pk",
                            &file(key).to_string_lossy(),
                            "--r1cs",
                            &file("r1cs").to_string_lossy(),
                            "--witness",
                            &file("wit").to_string_lossy(),
                            "--proof",
                            "proof",
                            "--public",
                            "public",
                            "--trust-key",
                        ],
                        d,
                        &[],
                    )?;
                    *slot = better(*slot, m);
                    let verdict = std::process::Command::new(harness)
                        .args(["gverify", "-vk"])
                        .arg(file("vk"))
                        .args(["-proof", "proof", "-public", "public"])
                        .current_dir(d)
                        .output()?;
                    anyhow::ensure!(
                        verdict.status.success(),
                        "gnark's groth16.Verify refused our proof at 2^{log}: {}",
                        String::from_utf8_lossy(&verdict.stderr)
                    );
                    std::fs::remove_file(d.join("proof"))?;
                    std::fs::remove_file(d.join("public"))?;
                }
            }
        }
        rows.push(Row {
            log,
            gnark,
            inside,
            read,
            cli,
            prepared,
        });
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "\nGroth16 prove on gnark's files (2^L - 3 chained squarings compiled by gnark, groth16.Setup's key), ms, best of {repeats}: gnark v0.15 groth16.Prove in process (the key in memory, the witness solved inside); ours in process (the same); the key's reading alone (in process, its points on their curves); ours as a whole process (lockstep groth16 prove --pk --trust-key: the R1CS, witness and key read, the key's points on their curves) on gnark's key and on the key groth16 prepare wrote, the latter's peak MB"
    )?;
    write!(out, "{:<6}", "size")?;
    for w in workers {
        write!(
            out,
            " {:>9} {:>10} {:>8} {:>9} {:>8} {:>9} {:>9} {:>6} {:>9}",
            format!("gnark {w}t"),
            format!("inside {w}w"),
            "gnark/us",
            format!("read {w}w"),
            format!("cli {w}w"),
            "gnark/cli",
            format!("prep {w}w"),
            "MB",
            "gnark/prep"
        )?;
    }
    writeln!(out)?;
    for row in rows {
        write!(out, "2^{:<4}", row.log)?;
        for (k, w) in workers.iter().enumerate() {
            let g = row.gnark.get(w).copied();
            write!(
                out,
                " {:>9} {:>10} {:>8} {:>9} {:>8} {:>9} {:>9} {:>6} {:>9}",
                ms(g),
                ms(Some(row.inside[k])),
                ratio(g, Some(row.inside[k])),
                ms(Some(row.read[k])),
                ms(row.cli[k].time),
                ratio(g, row.cli[k].time),
                ms(row.prepared[k].time),
                mb(row.prepared[k].peak),
                ratio(g, row.prepared[k].time)
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}
