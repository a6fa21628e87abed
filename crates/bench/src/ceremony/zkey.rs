//! `lockstep-bench ceremony --snarkjs`: snarkjs's phase 2 on BLS12-381, lockstep's CLI beside
//! snarkjs 0.7.6's, whole processes on the same files (each reads its inputs and writes its
//! output; node's start is in snarkjs's times), milliseconds and peak resident memory.
//!
//! For each power `P`: a circom circuit of `2^P - 3` multiplications (its domain `2^P`),
//! compiled by circom2; powers of tau of `P + 1` made and exported by lockstep (snarkjs's
//! `powersoftau contribute` alone takes minutes there; the powers' origin does not change the
//! work); then `prepare` (`powersoftau prepare phase2`), `new` (`zkey new`), `contribute`
//! (`zkey contribute`) and `verify` (`zkey verify` from the `.r1cs` and the prepared `.ptau`, of
//! snarkjs's contributed key), snarkjs at its
//! default threads (every core) and ours at each worker count. Our outputs are checked equal to
//! snarkjs's (prepare, new) before any figure is printed.
//!
//! snarkjs's `prepare` runs below `--snarkjs-max-power` only (it grows as `N log N` from 49 s at
//! 2^11: about an hour for the 2^17 powers of P = 16); above, snarkjs's later stages read our
//! prepared file (the same bytes where both run).
//!
//! Peak memory is the process's `VmHWM`, polled every 10 ms while it runs (a peak shorter than
//! that can be missed, for either).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::{Curve, Group};
use lockstep_ceremony::circom::CircomR1cs;
use lockstep_ceremony::zkey;
use lockstep_shard::{Control, Cut, Pool};
use std::convert::Infallible;

use super::{ms, ratio};
use crate::BenchCeremonyArgs;

/// The stages.
const STAGES: [&str; 4] = ["prepare", "new", "contribute", "verify"];

/// One run: its time and peak resident memory in bytes.
#[derive(Clone, Copy, Default)]
pub(crate) struct Measure {
    pub(crate) time: Option<Duration>,
    pub(crate) peak: Option<u64>,
}

/// Runs `program args` in `dir` to completion, polling its peak memory.
pub(crate) fn measured(
    program: &Path,
    args: &[&str],
    dir: &Path,
    env: &[(&str, &str)],
) -> anyhow::Result<Measure> {
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", program.display()))?;
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    let status = loop {
        if let Ok(status) = std::fs::read_to_string(&status_file)
            && let Some(kb) = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kb * 1024);
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let time = started.elapsed();
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        std::io::Read::read_to_string(&mut e, &mut stderr)?;
    }
    anyhow::ensure!(status.success(), "{} {args:?}: {stderr}", program.display());
    Ok(Measure {
        time: Some(time),
        peak: Some(peak),
    })
}

pub(crate) fn mb(peak: Option<u64>) -> String {
    peak.map_or_else(|| "-".to_owned(), |b| format!("{:.0}", b as f64 / 1e6))
}

pub(crate) fn mem_ratio(a: Option<u64>, b: Option<u64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0 => format!("{:.2}x", a as f64 / b as f64),
        _ => "-".to_owned(),
    }
}

/// The circom source of `n` chained multiplications with a public input and an output.
pub(crate) fn circuit(n: usize) -> String {
    format!(
        "pragma circom 2.0.0;
template Chain(n) {{
  signal input x;
  signal input k;
  signal output y;
  signal s[n];
  s[0] <== x * x + k;
  for (var i = 1; i < n; i++) {{ s[i] <== s[i-1] * s[i-1] + k; }}
  y <== s[n-1];
}}
component main {{public [k]}} = Chain({n});
"
    )
}

/// Runs the bench and prints one table per power.
pub(crate) fn run(
    args: &BenchCeremonyArgs,
    worker_counts: &[usize],
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
    let mut out = std::io::stdout().lock();
    for &power in &args.powers {
        anyhow::ensure!(
            (4..=20).contains(&power),
            "--powers: {power} is outside 4 to 20"
        );
        let dir = tempfile::tempdir()?;
        let d = dir.path();
        note(&format!(
            "power {power}: compiling the circuit and making the powers..."
        ));
        std::fs::write(d.join("c.circom"), circuit((1 << power) - 3))?;
        let circom_path = circom.to_string_lossy().into_owned();
        measured(
            &node,
            &[
                &circom_path,
                "c.circom",
                "--r1cs",
                "--prime",
                "bls12381",
                "-o",
                ".",
            ],
            d,
            &[],
        )?;
        let ptau_power = (power + 1).to_string();
        for step in [
            &[
                "ceremony",
                "phase1",
                "new",
                "--power",
                &ptau_power,
                "--out",
                "c0",
            ][..],
            &[
                "ceremony",
                "phase1",
                "contribute",
                "--in",
                "c0",
                "--out",
                "c1",
            ],
            &["ceremony", "ptau", "export", "c1", "--out", "p.ptau"],
        ] {
            measured(&lockstep, step, d, &[])?;
        }
        let sj = snarkjs.to_string_lossy().into_owned();
        let theirs = |a: &[&str]| -> anyhow::Result<Measure> {
            let mut full = vec![sj.as_str()];
            full.extend(a);
            measured(&node, &full, d, &[])
        };
        note(&format!("power {power}: snarkjs..."));
        let mut columns: Vec<(String, [Measure; 4])> = Vec::new();
        let mut s = [Measure::default(); 4];
        if power < args.snarkjs_max_power {
            s[0] = theirs(&[
                "powersoftau",
                "prepare",
                "phase2",
                "p.ptau",
                "pp-theirs.ptau",
            ])?;
        } else {
            // snarkjs's prepare of 2^(P+1) powers takes an hour at P = 16 (48 s at 2^11, 221 s
            // at 2^13 here, growing as N log N): its later stages read our prepared file, the
            // same bytes (checked where both run).
            note(&format!(
                "power {power}: snarkjs prepare skipped (--snarkjs-max-power {})",
                args.snarkjs_max_power
            ));
            measured(
                &lockstep,
                &[
                    "--quiet",
                    "ceremony",
                    "ptau",
                    "prepare",
                    "p.ptau",
                    "--out",
                    "pp-theirs.ptau",
                ],
                d,
                &[],
            )?;
        }
        s[1] = theirs(&["zkey", "new", "c.r1cs", "pp-theirs.ptau", "k0-theirs.zkey"])?;
        s[2] = theirs(&[
            "zkey",
            "contribute",
            "k0-theirs.zkey",
            "k1-theirs.zkey",
            "-e=bench",
        ])?;
        s[3] = theirs(&[
            "zkey",
            "verify",
            "c.r1cs",
            "pp-theirs.ptau",
            "k1-theirs.zkey",
        ])?;
        columns.push(("snarkjs".to_owned(), s));
        for &w in worker_counts {
            note(&format!("power {power}: lockstep {w} workers..."));
            let workers = w.to_string();
            let ours = |a: &[&str]| -> anyhow::Result<Measure> {
                let mut full = vec!["--workers", workers.as_str(), "--quiet", "ceremony"];
                full.extend(a);
                measured(&lockstep, &full, d, &[])
            };
            let mut m = [Measure::default(); 4];
            let (pp, k0, k1) = (
                format!("pp-{w}.ptau"),
                format!("k0-{w}.zkey"),
                format!("k1-{w}.zkey"),
            );
            m[0] = ours(&["ptau", "prepare", "p.ptau", "--out", &pp])?;
            m[1] = ours(&["zkey", "new", "c.r1cs", &pp, "--out", &k0])?;
            m[2] = ours(&[
                "zkey",
                "contribute",
                "--in",
                &k0,
                "--out",
                &k1,
                "--entropy",
                "bench",
            ])?;
            m[3] = ours(&["zkey", "verify", "c.r1cs", &pp, "k1-theirs.zkey"])?;
            let checked = if power < args.snarkjs_max_power {
                vec![(&pp, "pp-theirs.ptau"), (&k0, "k0-theirs.zkey")]
            } else {
                vec![(&k0, "k0-theirs.zkey")]
            };
            for (mine, theirs) in checked {
                anyhow::ensure!(
                    std::fs::read(d.join(mine))? == std::fs::read(d.join(theirs))?,
                    "power {power}: our {mine} differs from snarkjs's {theirs}"
                );
            }
            columns.push((format!("{w}w"), m));
        }
        let top = worker_counts.last().copied().unwrap_or(1);
        let most = columns.last().map(|(_, m)| *m).unwrap_or_default();
        let sjm = columns[0].1;
        writeln!(
            out,
            "\nsnarkjs phase 2, power {power} ({} constraints, domain 2^{power}; powers of 2^{}), whole processes: ms and peak MB",
            (1u64 << power) - 3,
            power + 1
        )?;
        write!(out, "{:<11}", "stage")?;
        for (name, _) in &columns {
            write!(out, " {:>10} {:>7}", format!("{name} ms"), "MB")?;
        }
        writeln!(
            out,
            " {:>13} {:>13}",
            format!("snarkjs/{top}w"),
            "memory ratio"
        )?;
        for (i, stage) in STAGES.iter().enumerate() {
            write!(out, "{stage:<11}")?;
            for (_, m) in &columns {
                write!(out, " {:>10} {:>7}", ms(m[i].time), mb(m[i].peak))?;
            }
            writeln!(
                out,
                " {:>13} {:>13}",
                ratio(sjm[i].time, most[i].time),
                mem_ratio(sjm[i].peak, most[i].peak)
            )?;
        }
        // The subgroup checks our new and verify make and snarkjs does not, timed alone on the
        // same workers: new's (zkey::new_checks), and verify's, those plus the key's C and H.
        let circuit = CircomR1cs::read(std::io::BufReader::new(std::fs::File::open(
            d.join("c.r1cs"),
        )?))?;
        let (g1, g2) = zkey::new_checks(&circuit);
        let header = circuit.header();
        let c_and_h =
            u64::from(header.wires - header.public() - 1) + (1u64 << header.domain_power());
        note(&format!("power {power}: the subgroup checks alone..."));
        let new_checks = checks_alone(top, g1, g2)?;
        let verify_checks = checks_alone(top, g1 + c_and_h, g2)?;
        writeln!(
            out,
            "subgroup checks alone ({top}w, blst's, of points snarkjs never checks): new's {g1} G1 + {g2} G2 {} ms, verify's {} G1 + {g2} G2 {} ms",
            ms(Some(new_checks)),
            g1 + c_and_h,
            ms(Some(verify_checks))
        )?;
        for (i, checks) in [(1, new_checks), (3, verify_checks)] {
            let rest = most[i].time.map(|t| t.saturating_sub(checks));
            writeln!(
                out,
                "{:<11} ours {top}w less its checks (estimate) {:>8} ms: snarkjs/that {:>8}; checks {:.0}% of ours",
                STAGES[i],
                ms(rest),
                ratio(sjm[i].time, rest),
                most[i]
                    .time
                    .map_or(0.0, |t| 100.0 * checks.as_secs_f64() / t.as_secs_f64())
            )?;
        }
    }
    Ok(())
}

/// blst's subgroup checks alone on `workers` workers, `g1` G1 and `g2` G2 points: a few
/// distinct points cycled (a check's cost does not depend on the point).
fn checks_alone(workers: usize, g1: u64, g2: u64) -> anyhow::Result<Duration> {
    const DISTINCT: usize = 64;
    let pool = Pool::new(workers)?;
    let control = Control::new();
    let scalars: Vec<Scalar> = (1..=DISTINCT as u64)
        .map(|i| Scalar::from(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
        .collect();
    let p1: Vec<G1Affine> = scalars
        .iter()
        .map(|s| (G1Projective::generator() * s).to_affine())
        .collect();
    let p2: Vec<G2Affine> = scalars
        .iter()
        .map(|s| (G2Projective::generator() * s).to_affine())
        .collect();
    let started = Instant::now();
    let inside = all_inside(&pool, &control, &p1, g1, |p| {
        bool::from(p.is_torsion_free())
    })? && all_inside(&pool, &control, &p2, g2, |p| {
        bool::from(p.is_torsion_free())
    })?;
    let took = started.elapsed();
    anyhow::ensure!(
        inside,
        "a multiple of the generator failed its subgroup check"
    );
    Ok(took)
}

/// Whether `count` checks `inside` of `points`, cycled, all pass, on `pool`.
fn all_inside<A: Sync>(
    pool: &Pool,
    control: &Control,
    points: &[A],
    count: u64,
    inside: fn(&A) -> bool,
) -> anyhow::Result<bool> {
    let mut ok = vec![false; usize::try_from(count)?];
    pool.for_each_block(
        control,
        &mut ok[..],
        Cut::Blocks(256),
        |_, range, out: &mut [bool]| {
            for (ok, i) in out.iter_mut().zip(range) {
                *ok = inside(&points[i % points.len()]);
            }
            Ok::<_, Infallible>(())
        },
    )?;
    Ok(ok.iter().all(|&ok| ok))
}
