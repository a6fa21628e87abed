//! `lockstep-bench ceremony`: phase 1 stages (phase 2 with `--phase 2`: [`phase2`]) in milliseconds, ours (serial reference, then each
//! worker count) beside gnark v0.15 through the harness (GOMAXPROCS=1 and 2) and snarkjs 0.7.6,
//! with ratios taken in the same run (this machine is shared and noisy).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use lockstep_ceremony::phase1::{self, Phase1, Secrets};
use lockstep_ceremony::{Limits, reference};
use lockstep_shard::{Control, Pool};
use sha2::{Digest, Sha256};

use crate::BenchCeremonyArgs;

mod phase2;
pub(crate) mod zkey;

/// The stages, as the gnark harness names them.
pub(crate) const STAGES: [&str; 5] = ["new", "contribute", "read", "verify", "seal"];

/// Best time per stage (`None`: not run).
pub(crate) type Times = [Option<Duration>; 5];

fn keep(best: &mut Times, times: Times) {
    keep_best(best, &times);
}

/// Keeps the faster of each pair of timings (a missing one yields to the other).
fn keep_best(best: &mut [Option<Duration>], times: &[Option<Duration>]) {
    for (b, &t) in best.iter_mut().zip(times) {
        *b = match (*b, t) {
            (Some(b), Some(t)) => Some(b.min(t)),
            (b, t) => b.or(t),
        };
    }
}

fn timed<T>(body: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<(Duration, T)> {
    let started = Instant::now();
    let value = body()?;
    Ok((started.elapsed(), value))
}

/// Ours on `pool`: new (initial object and its bytes), contribute (update and encode), read
/// (decode and check), verify (against the initial object), seal.
fn ours(pool: &Pool, power: u32) -> anyhow::Result<Times> {
    let control = Control::new();
    let (new, (initial, initial_hash)) = timed(|| {
        let initial = Phase1::initial(power)?;
        let mut bytes = Vec::new();
        let hash = initial.write(pool, &control, &mut bytes)?;
        Ok((initial, hash))
    })?;
    let secrets = Secrets::random(b"bench");
    let (contribute, bytes) = timed(|| {
        let next = phase1::contribute(pool, &control, initial.clone(), &initial_hash, &secrets)?;
        let mut bytes = Vec::new();
        next.write(pool, &control, &mut bytes)?;
        Ok(bytes)
    })?;
    let (read, (next, hash)) = timed(|| {
        Ok(Phase1::read(
            pool,
            &control,
            &bytes[..],
            &Limits::default(),
        )?)
    })?;
    let (verify, ()) = timed(|| {
        Ok(phase1::verify_contribution(
            pool,
            &control,
            &initial,
            &initial_hash,
            &next,
        )?)
    })?;
    let (seal, _) = timed(|| Ok(phase1::seal(pool, &control, next, &hash, b"bench beacon")?))?;
    Ok([
        Some(new),
        Some(contribute),
        Some(read),
        Some(verify),
        Some(seal),
    ])
}

/// The serial references: the same stages one point at a time (verify has no serial variant).
fn serial(power: u32) -> anyhow::Result<Times> {
    let (new, initial) = timed(|| {
        let initial = Phase1::initial(power)?;
        let _ = reference::phase1_bytes(&initial);
        Ok(initial)
    })?;
    let initial_hash: [u8; 32] = Sha256::digest(reference::phase1_bytes(&initial)).into();
    let secrets = Secrets::random(b"bench");
    let (contribute, bytes) = timed(|| {
        let next = phase1::contribute_serial(initial, &initial_hash, &secrets);
        Ok(reference::phase1_bytes(&next))
    })?;
    let (read, next) = timed(|| Ok(reference::phase1_from_bytes(&bytes, &Limits::default())?))?;
    let hash: [u8; 32] = Sha256::digest(&bytes).into();
    let (seal, _) = timed(|| {
        let mut srs = next.srs;
        phase1::update_serial(&mut srs, &Secrets::beacon(&hash, b"bench beacon"));
        Ok(srs)
    })?;
    Ok([Some(new), Some(contribute), Some(read), None, Some(seal)])
}

/// Runs the gnark harness with `args` at `procs` GOMAXPROCS and returns its `stage ns` lines.
fn harness_stages<S: AsRef<std::ffi::OsStr>>(
    harness: &Path,
    args: &[S],
    procs: usize,
) -> anyhow::Result<Vec<(String, Duration)>> {
    let output = Command::new(harness)
        .args(args)
        .env("GOMAXPROCS", procs.to_string())
        .output()
        .with_context(|| format!("running {}", harness.display()))?;
    anyhow::ensure!(
        output.status.success(),
        "gnark harness: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut stages = Vec::new();
    for line in String::from_utf8(output.stdout)?.lines() {
        let mut parts = line.split_whitespace();
        if let (Some(stage), Some(ns)) = (parts.next(), parts.next()) {
            stages.push((stage.to_owned(), Duration::from_nanos(ns.parse()?)));
        }
    }
    Ok(stages)
}

/// gnark through the harness at `procs` GOMAXPROCS, each stage the best of `reps` runs.
pub(crate) fn gnark(
    harness: &Path,
    power: u32,
    procs: usize,
    reps: usize,
) -> anyhow::Result<Times> {
    let args = [
        "bench".to_owned(),
        "-power".to_owned(),
        power.to_string(),
        "-reps".to_owned(),
        reps.max(1).to_string(),
    ];
    let mut times: Times = [None; 5];
    for (stage, time) in harness_stages(harness, &args, procs)? {
        if let Some(i) = STAGES.iter().position(|s| *s == stage) {
            times[i] = Some(time);
        }
    }
    Ok(times)
}

/// snarkjs `powersoftau contribute` and `verify` (whole processes, node's start included).
fn snarkjs(peers: &Path, power: u32) -> anyhow::Result<Times> {
    let cli = std::path::absolute(peers.join("node_modules/snarkjs/cli.js"))?;
    anyhow::ensure!(
        cli.exists(),
        "snarkjs is not installed in {}: run scripts/install-peers",
        peers.display()
    );
    let dir = tempfile::tempdir()?;
    let run = |args: &[&str]| -> anyhow::Result<Duration> {
        let started = Instant::now();
        let out = Command::new("node")
            .arg(&cli)
            .args(args)
            .current_dir(dir.path())
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "snarkjs {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(started.elapsed())
    };
    let new = run(&[
        "powersoftau",
        "new",
        "bls12381",
        &power.to_string(),
        "p0.ptau",
    ])?;
    let contribute = run(&[
        "powersoftau",
        "contribute",
        "p0.ptau",
        "p1.ptau",
        "--name=bench",
        "-e=bench",
    ])?;
    let verify = run(&["powersoftau", "verify", "p1.ptau"])?;
    Ok([Some(new), Some(contribute), None, Some(verify), None])
}

pub(crate) fn build_harness(dir: &Path) -> anyhow::Result<PathBuf> {
    let out = std::env::temp_dir().join(format!("lockstep-gnark-harness-{}", std::process::id()));
    let status = Command::new("go")
        .args(["build", "-o"])
        .arg(&out)
        .arg(".")
        .current_dir(dir)
        .status()
        .context("running go build (is Go on PATH? see scripts/install-gnark)")?;
    anyhow::ensure!(
        status.success(),
        "building the gnark harness in {} failed",
        dir.display()
    );
    Ok(out)
}

pub(crate) fn ms(d: Option<Duration>) -> String {
    d.map_or_else(
        || "-".to_owned(),
        |d| format!("{:.1}", d.as_secs_f64() * 1e3),
    )
}

pub(crate) fn ratio(a: Option<Duration>, b: Option<Duration>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > Duration::ZERO => {
            format!("{:.2}x", a.as_secs_f64() / b.as_secs_f64())
        }
        _ => "-".to_owned(),
    }
}

/// Runs the bench and prints one table per power.
pub(crate) fn run(
    args: &BenchCeremonyArgs,
    worker_counts: &[usize],
    quiet: bool,
) -> anyhow::Result<()> {
    let note = |text: &str| {
        if !quiet {
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        }
    };
    if args.snarkjs {
        return zkey::run(args, worker_counts, &note);
    }
    let pools: Vec<(usize, Pool)> = worker_counts
        .iter()
        .map(|&w| Ok((w, Pool::new(w)?)))
        .collect::<anyhow::Result<_>>()?;
    if args.phase == 2 {
        // The circuits come from gnark's compiler, so the harness is built even without peers.
        let harness = build_harness(&args.gnark)?;
        let result = phase2::run(args, &harness, &pools, &note);
        let _ = std::fs::remove_file(harness);
        return result;
    }
    let harness = if args.no_peers {
        None
    } else {
        Some(build_harness(&args.gnark)?)
    };
    let mut out = std::io::stdout().lock();
    for &power in &args.powers {
        anyhow::ensure!(
            (1..=24).contains(&power),
            "--powers: {power} is outside 1 to 24"
        );
        let mut columns: Vec<(String, Times)> = Vec::new();
        let mut record =
            |name: String, times: Times| match columns.iter_mut().find(|(n, _)| *n == name) {
                Some((_, best)) => keep(best, times),
                None => columns.push((name, times)),
            };
        for round in 1..=args.repeats.max(1) {
            if power <= args.serial_max_power {
                note(&format!(
                    "power {power}, round {round}: serial reference..."
                ));
                record("serial".to_owned(), serial(power)?);
            }
            for (w, pool) in &pools {
                note(&format!(
                    "power {power}, round {round}: lockstep {w} workers..."
                ));
                record(format!("{w}w"), ours(pool, power)?);
            }
            if let Some(harness) = &harness {
                for procs in [1, 2] {
                    note(&format!(
                        "power {power}, round {round}: gnark GOMAXPROCS={procs}..."
                    ));
                    record(format!("gnark{procs}"), gnark(harness, power, procs, 1)?);
                }
                if power <= args.snarkjs_max_power {
                    note(&format!("power {power}, round {round}: snarkjs..."));
                    record("snarkjs".to_owned(), snarkjs(&args.peers, power)?);
                }
            }
        }
        let get = |name: &str| columns.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
        let none: Times = [None; 5];
        let one = get("1w").unwrap_or(none);
        let most = worker_counts
            .last()
            .and_then(|w| get(&format!("{w}w")))
            .unwrap_or(none);
        let top = worker_counts.last().copied().unwrap_or(1);
        let (g1, g2, sj) = (
            get("gnark1").unwrap_or(none),
            get("gnark2").unwrap_or(none),
            get("snarkjs").unwrap_or(none),
        );
        writeln!(
            out,
            "\nceremony phase 1, power {power} (N = {}), best of {} interleaved rounds, ms",
            1u64 << power,
            args.repeats.max(1)
        )?;
        write!(out, "{:<11}", "stage")?;
        for (name, _) in &columns {
            write!(out, " {name:>10}")?;
        }
        let labels = [
            "gnark1/1w".to_owned(),
            format!("gnark2/{top}w"),
            format!("1w/{top}w"),
            format!("snarkjs/{top}w"),
        ];
        for label in &labels {
            write!(out, " {label:>11}")?;
        }
        writeln!(out)?;
        for (i, stage) in STAGES.iter().enumerate() {
            write!(out, "{stage:<11}")?;
            for (_, times) in &columns {
                write!(out, " {:>10}", ms(times[i]))?;
            }
            for (a, b) in [
                (g1[i], one[i]),
                (g2[i], most[i]),
                (one[i], most[i]),
                (sj[i], most[i]),
            ] {
                write!(out, " {:>11}", ratio(a, b))?;
            }
            writeln!(out)?;
        }
    }
    if let Some(harness) = harness {
        let _ = std::fs::remove_file(harness);
    }
    Ok(())
}
