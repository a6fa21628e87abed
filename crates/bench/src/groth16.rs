//! `lockstep-bench groth16`: multi-scalar multiplication in G1 and G2, ns a point, ours at each
//! worker count beside gnark-crypto's `MultiExp` (the gnark harness's `msmbench`, GOMAXPROCS
//! and NbTasks at the same count) and blst's single-threaded Pippenger, ratios from one run;
//! then Groth16 prove beside snarkjs and gnark ([`prove`], [`gnark_prove`]) and phase 1
//! verification beside gnark ([`phase1_verify`]).
//!
//! Points are random and distinct on both sides (ours: a random start plus a random step again
//! and again; gnark's: the generator times random scalars), scalars uniformly random.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::Group;
use group::prime::PrimeCurveAffine;
use lockstep_bls12::{Canonical, MsmError, Plan, ffi};
use lockstep_shard::{Control, Pool};

use crate::BenchGroth16Args;

mod gnark_prove;
mod phase1_verify;
mod prove;

/// Best time of `repeats` runs of `body`.
fn best(repeats: usize, mut body: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<Duration> {
    let mut best = Duration::MAX;
    for _ in 0..repeats.max(1) {
        let started = Instant::now();
        body()?;
        best = best.min(started.elapsed());
    }
    Ok(best)
}

fn g1_points(n: usize) -> Vec<G1Affine> {
    let mut rng = rand_core::OsRng;
    let step = G1Projective::random(&mut rng);
    let mut p = G1Projective::random(&mut rng);
    let projective: Vec<G1Projective> = (0..n)
        .map(|_| {
            p += step;
            p
        })
        .collect();
    let mut out = vec![G1Affine::identity(); n];
    ffi::g1_to_affine(&projective, &mut out);
    out
}

fn g2_points(n: usize) -> Vec<G2Affine> {
    let mut rng = rand_core::OsRng;
    let step = G2Projective::random(&mut rng);
    let mut p = G2Projective::random(&mut rng);
    let projective: Vec<G2Projective> = (0..n)
        .map(|_| {
            p += step;
            p
        })
        .collect();
    let mut out = vec![G2Affine::identity(); n];
    ffi::g2_to_affine(&projective, &mut out);
    out
}

/// One of our MSMs (`lockstep_bls12::msm::g1` or `g2`).
type OurMsm<A, P> = fn(&Pool, &Control, &[A], &[Canonical]) -> Result<P, MsmError>;

/// Our MSM and blst's on the first `2^log` points, ns a point.
struct Side<'a, A, P> {
    points: &'a [A],
    scalars: &'a [Canonical],
    bytes: &'a [u8],
    ours: OurMsm<A, P>,
    blst: fn(&[A], &[u8], usize) -> P,
}

impl<A, P> Side<'_, A, P> {
    fn ours(&self, pool: &Pool, n: usize, repeats: usize) -> anyhow::Result<f64> {
        let control = Control::new();
        let time = best(repeats, || {
            (self.ours)(pool, &control, &self.points[..n], &self.scalars[..n])?;
            Ok(())
        })?;
        Ok(time.as_nanos() as f64 / n as f64)
    }

    fn blst(&self, n: usize, repeats: usize) -> anyhow::Result<f64> {
        let time = best(repeats, || {
            (self.blst)(&self.points[..n], &self.bytes[..32 * n], 255);
            Ok(())
        })?;
        Ok(time.as_nanos() as f64 / n as f64)
    }
}

/// gnark-crypto's figures for one group and size: threads -> ns a point.
fn gnark(
    harness: &Path,
    group: &str,
    log: u32,
    repeats: usize,
    workers: &[usize],
) -> anyhow::Result<BTreeMap<usize, f64>> {
    let threads: Vec<String> = workers.iter().map(usize::to_string).collect();
    let output = Command::new(harness)
        .arg("msmbench")
        .arg("-logs")
        .arg(log.to_string())
        .arg("-threads")
        .arg(threads.join(","))
        .arg("-groups")
        .arg(group)
        .arg("-reps")
        .arg(repeats.to_string())
        .output()
        .context("running the gnark harness's msmbench")?;
    anyhow::ensure!(
        output.status.success(),
        "gnark msmbench failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut out = BTreeMap::new();
    for line in String::from_utf8(output.stdout)?.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, _, threads, ns] = fields[..] else {
            anyhow::bail!("unexpected msmbench line {line:?}");
        };
        out.insert(threads.parse()?, ns.parse()?);
    }
    Ok(out)
}

/// Runs the MSM table for each group.
pub(crate) fn run(
    args: &BenchGroth16Args,
    workers: &[usize],
    note: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let harness = if args.no_peers {
        None
    } else {
        Some(crate::ceremony::build_harness(&args.gnark)?)
    };
    let msm = if args.no_msm {
        Ok(())
    } else {
        tables(args, workers, harness.as_deref(), note)
    };
    let result = msm
        .and_then(|()| {
            if args.no_prove || args.prove_logs.is_empty() {
                Ok(())
            } else {
                prove::run(args, workers, harness.as_deref(), note)
            }
        })
        .and_then(|()| match &harness {
            Some(harness) if !args.no_prove && !args.gnark_prove_logs.is_empty() => {
                gnark_prove::run(args, workers, harness, note)
            }
            _ => Ok(()),
        })
        .and_then(|()| {
            if args.no_verify || args.verify_powers.is_empty() {
                Ok(())
            } else {
                phase1_verify::run(args, workers, harness.as_deref(), note)
            }
        });
    if let Some(harness) = harness {
        let _ = std::fs::remove_file(harness);
    }
    result
}

/// Each group's table, gnark's run for each size just before ours.
fn tables(
    args: &BenchGroth16Args,
    workers: &[usize],
    harness: Option<&Path>,
    note: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let most = args.logs.iter().copied().max().unwrap_or(12);
    anyhow::ensure!(most <= 22, "--logs: at most 22");
    let n = 1usize << most;
    note(&format!("random points and scalars, 2^{most}..."));
    let scalars: Vec<Canonical> = (0..n)
        .map(|_| Canonical::from_scalar(&Scalar::random(rand_core::OsRng)))
        .collect();
    let bytes: Vec<u8> = scalars
        .iter()
        .flat_map(|k| k.to_scalar().to_bytes_le())
        .collect();
    let pools: Vec<(usize, Pool)> = workers
        .iter()
        .map(|&w| Ok((w, Pool::new(w)?)))
        .collect::<anyhow::Result<_>>()?;
    let mut out = std::io::stdout().lock();
    for group in &args.groups {
        let rows = match group.as_str() {
            "g1" => {
                let points = g1_points(n);
                let side = Side {
                    points: &points,
                    scalars: &scalars,
                    bytes: &bytes,
                    ours: lockstep_bls12::msm::g1,
                    blst: ffi::g1_msm,
                };
                table(&side, group, args, &pools, harness, note)?
            }
            "g2" => {
                let points = g2_points(n);
                let side = Side {
                    points: &points,
                    scalars: &scalars,
                    bytes: &bytes,
                    ours: lockstep_bls12::msm::g2,
                    blst: ffi::g2_msm,
                };
                table(&side, group, args, &pools, harness, note)?
            }
            other => anyhow::bail!("--groups: unknown group {other:?} (g1, g2)"),
        };
        writeln!(
            out,
            "\nMSM {}, ns a point, best of {} (gnark: gnark-crypto MultiExp; blst: its Pippenger, 1 thread)",
            group.to_uppercase(),
            args.repeats.max(1)
        )?;
        write!(out, "{:<6} {:>7}", "size", "blst")?;
        for (w, _) in &pools {
            write!(
                out,
                " {:>9} {:>9} {:>8} {:>12}",
                format!("ours {w}w"),
                format!("gnark {w}t"),
                "gnark/us",
                "plan"
            )?;
        }
        writeln!(out)?;
        for (log, blst, per_worker, peers) in rows {
            write!(out, "2^{log:<4} {blst:>7.0}")?;
            for ((w, _), (ours, plan)) in pools.iter().zip(per_worker) {
                let theirs = peers.get(w).copied();
                let theirs_text = theirs.map_or("-".to_owned(), |t| format!("{t:.0}"));
                let ratio = theirs.map_or("-".to_owned(), |t| format!("{:.2}x", t / ours));
                let plan = format!("c{} x{}", plan.c, plan.ranges);
                write!(out, " {ours:>9.0} {theirs_text:>9} {ratio:>8} {plan:>12}")?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

/// Per size: blst's ns a point, ours and our plan at each pool, gnark's by thread count.
type Row = (u32, f64, Vec<(f64, Plan)>, BTreeMap<usize, f64>);

fn table<A, P>(
    side: &Side<'_, A, P>,
    group: &str,
    args: &BenchGroth16Args,
    pools: &[(usize, Pool)],
    harness: Option<&Path>,
    note: &dyn Fn(&str),
) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for &log in &args.logs {
        let n = 1usize << log;
        let peers = match harness {
            Some(harness) => {
                note(&format!("2^{log}: gnark-crypto MultiExp..."));
                let workers: Vec<usize> = pools.iter().map(|(w, _)| *w).collect();
                gnark(harness, group, log, args.repeats, &workers)?
            }
            None => BTreeMap::new(),
        };
        note(&format!("2^{log}: blst..."));
        let blst = side.blst(n, args.repeats)?;
        let mut per_worker = Vec::new();
        for (w, pool) in pools {
            note(&format!("2^{log}: ours {w} workers..."));
            let ours = side.ours(pool, n, args.repeats)?;
            per_worker.push((ours, Plan::choose(2 * n, 128, *w)));
        }
        rows.push((log, blst, per_worker, peers));
    }
    Ok(rows)
}
