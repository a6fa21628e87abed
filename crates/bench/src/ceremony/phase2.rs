//! `lockstep-bench ceremony --phase 2`: phase 2 stages in milliseconds on the harness's test
//! circuit with `2^P - 3` constraints (domain `N = 2^P`): ours (serial reference, then each
//! worker count) beside gnark v0.15's `Initialize`, `Contribute` and `VerifyPhase2`
//! (GOMAXPROCS=1 and 2), ratios from the same run.
//!
//! Rows: `fft` (the four Lagrange transforms, timed inside init), `accumulate` (the rest of
//! init: per-wire sums, `Z`, the split), `init` (the object and the evaluations: gnark's `Initialize`), `new` (the
//! object alone, encoded: what `phase2 new` runs; no G2 transform), `contribute` (with encoding), `verify` (one contribution against its
//! predecessor: what ours re-derives is nothing but the proofs' bases; two MSMs a secret),
//! `seal` (the beacon's update and the keys, encoded), and `chain` = init + verify + seal, what
//! gnark's `VerifyPhase2` does (it re-runs `Initialize` to rebuild the evaluations).

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::Context as _;
use lockstep_ceremony::phase1::{self, Srs};
use lockstep_ceremony::phase2::{self, Secrets};
use lockstep_ceremony::r1cs::R1cs;
use lockstep_shard::{Control, Pool};
use sha2::{Digest, Sha256};

use super::{harness_stages, keep_best, ms, ratio, timed};

/// The rows of the table.
const ROWS: [&str; 8] = [
    "fft",
    "accumulate",
    "init",
    "new",
    "contribute",
    "verify",
    "seal",
    "chain",
];

type Times = [Option<Duration>; 8];

/// Ours on `pool`.
fn ours(pool: &Pool, r1cs: &R1cs, srs: &Srs) -> anyhow::Result<Times> {
    let control = Control::new();
    let (init, (initial, evaluations, fft)) =
        timed(|| Ok(phase2::initialize_timed(pool, &control, r1cs, srs)?))?;
    let (new, ()) = timed(|| {
        let object = phase2::initialize_object(pool, &control, r1cs, srs)?;
        object.write(pool, &control, std::io::sink())?;
        Ok(())
    })?;
    let mut bytes = Vec::new();
    let h0 = initial.write(pool, &control, &mut bytes)?;
    let secrets = Secrets::random(b"bench", initial.sigma_g2.len());
    let (contribute, (next, h1)) = timed(|| {
        let next = phase2::contribute(pool, &control, initial.clone(), &h0, &secrets)?;
        let mut bytes = Vec::new();
        let hash = next.write(pool, &control, &mut bytes)?;
        Ok((next, hash))
    })?;
    let (verify, ()) = timed(|| {
        Ok(phase2::verify_contribution(
            pool, &control, &initial, &h0, &next,
        )?)
    })?;
    let (seal, ()) = timed(|| {
        let origin = phase2::Origin {
            initial: &initial,
            srs,
            evaluations: &evaluations,
        };
        let (pk, vk) = phase2::seal(pool, &control, origin, next, &h1, b"bench beacon")?;
        pk.write(pool, &control, std::io::sink())?;
        vk.write(pool, &control, std::io::sink())?;
        Ok(())
    })?;
    Ok([
        Some(fft),
        Some(init.saturating_sub(fft)),
        Some(init),
        Some(new),
        Some(contribute),
        Some(verify),
        Some(seal),
        Some(init + verify + seal),
    ])
}

/// The serial references (init and contribute).
fn serial(r1cs: &R1cs, srs: &Srs) -> anyhow::Result<Times> {
    let (init, (initial, _)) = timed(|| Ok(phase2::initialize_serial(r1cs, srs)?))?;
    let h0: [u8; 32] = Sha256::digest(b"bench").into();
    let secrets = Secrets::random(b"bench", initial.sigma_g2.len());
    let (contribute, _) = timed(|| Ok(phase2::contribute_serial(initial, &h0, &secrets)))?;
    let mut times: Times = [None; 8];
    times[2] = Some(init);
    times[4] = Some(contribute);
    Ok(times)
}

/// gnark's `p2bench` at `procs` GOMAXPROCS: init, contribute, and VerifyPhase2 as `chain`.
fn gnark(harness: &Path, r1cs: &Path, srs: &Path, procs: usize) -> anyhow::Result<Times> {
    let args = [
        "p2bench".as_ref(),
        "-reps".as_ref(),
        "1".as_ref(),
        "-r1cs".as_ref(),
        r1cs.as_os_str(),
        "-srs".as_ref(),
        srs.as_os_str(),
    ];
    let mut times: Times = [None; 8];
    for (stage, time) in harness_stages(harness, &args, procs)? {
        let row = match stage.as_str() {
            "init" => 2,
            "contribute" => 4,
            "verify" => 7,
            _ => continue,
        };
        times[row] = Some(time);
    }
    Ok(times)
}

/// The primitive the transforms spend their time in, on both sides: ns per G1 and G2 scalar
/// multiplication by random 255-bit scalars (projective; 1,024 drawn once, the same for every
/// contender, since ours is variable time in the scalar's digits): blst's constant-time GLV/GLS (what
/// the serial reference calls), ours (`lockstep_bls12::g1_mul_public_batch`, what the
/// transforms call, in batches of 32 as their blocks are), and gnark-crypto's
/// `ScalarMultiplication` through the harness's `mulbench`; best of 3 runs of 1,024 in a row.
fn multiplications(harness: &Path, out: &mut impl Write) -> anyhow::Result<()> {
    use ff::Field;
    use group::Group;
    const RUN: u32 = 1024;
    const BATCH: usize = 32;
    let scalars: Vec<blstrs::Scalar> = (0..RUN)
        .map(|_| blstrs::Scalar::random(rand_core::OsRng))
        .collect();
    // [blst G1, blst G2, ours G1, ours G2]
    let mut best = [Duration::MAX; 4];
    for _ in 0..3 {
        let (g1, p) = timed(|| {
            let mut p = blstrs::G1Projective::generator();
            for scalar in &scalars {
                p *= scalar;
            }
            Ok(p)
        })?;
        let (g2, q) = timed(|| {
            let mut q = blstrs::G2Projective::generator();
            for scalar in &scalars {
                q *= scalar;
            }
            Ok(q)
        })?;
        let (ours1, p1) = timed(|| {
            let mut batch: Vec<_> = (1..=BATCH as u64)
                .map(|i| blstrs::G1Projective::generator() * blstrs::Scalar::from(i))
                .collect();
            for round in scalars.chunks(BATCH) {
                lockstep_bls12::g1_mul_public_batch(&mut batch, round);
            }
            Ok(batch[0])
        })?;
        let (ours2, q2) = timed(|| {
            let mut batch: Vec<_> = (1..=BATCH as u64)
                .map(|i| blstrs::G2Projective::generator() * blstrs::Scalar::from(i))
                .collect();
            for round in scalars.chunks(BATCH) {
                lockstep_bls12::g2_mul_public_batch(&mut batch, round);
            }
            Ok(batch[0])
        })?;
        // Ours multiplied the generator (its batch's first point) by each round's first scalar.
        let power = scalars
            .chunks(BATCH)
            .fold(blstrs::Scalar::ONE, |acc, round| acc * round[0]);
        anyhow::ensure!(
            p1 == blstrs::G1Projective::generator() * power
                && q2 == blstrs::G2Projective::generator() * power,
            "ours and blst's multiplications differ"
        );
        anyhow::ensure!(
            !bool::from(p.is_identity() | q.is_identity()),
            "a degenerate run"
        );
        best = [
            best[0].min(g1 / RUN),
            best[1].min(g2 / RUN),
            best[2].min(ours1 / RUN),
            best[3].min(ours2 / RUN),
        ];
    }
    let mut theirs = [None; 2];
    for (stage, time) in harness_stages(harness, &["mulbench", "-reps", "3"], 1)? {
        match stage.as_str() {
            "g1mul" => theirs[0] = Some(time),
            "g2mul" => theirs[1] = Some(time),
            _ => {}
        }
    }
    writeln!(
        out,
        "\nscalar multiplication, one core, us per operation (best of 3 runs of 1,024)"
    )?;
    writeln!(
        out,
        "{:<6} {:>10} {:>10} {:>12} {:>10} {:>11}",
        "group", "blst", "ours", "gnark-crypto", "blst/ours", "gnark/ours"
    )?;
    for (i, group) in ["G1", "G2"].iter().enumerate() {
        writeln!(
            out,
            "{group:<6} {:>10.1} {:>10.1} {:>12} {:>10} {:>11}",
            best[i].as_secs_f64() * 1e6,
            best[i + 2].as_secs_f64() * 1e6,
            theirs[i].map_or_else(
                || "-".to_owned(),
                |t| format!("{:.1}", t.as_secs_f64() * 1e6)
            ),
            ratio(Some(best[i]), Some(best[i + 2])),
            ratio(theirs[i], Some(best[i + 2]))
        )?;
    }
    Ok(())
}

/// Runs the phase 2 bench and prints one table per power.
pub(crate) fn run(
    args: &crate::BenchCeremonyArgs,
    harness: &Path,
    pools: &[(usize, Pool)],
    note: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if !args.no_peers {
        note("scalar multiplications, blst and gnark-crypto...");
        multiplications(harness, &mut out)?;
    }
    let dir = tempfile::tempdir()?;
    let top_pool = &pools.last().context("no worker counts")?.1;
    for &power in &args.powers {
        anyhow::ensure!(
            (2..=20).contains(&power),
            "--powers: {power} is outside 2 to 20 for phase 2"
        );
        note(&format!("power {power}: phase 1 SRS and the circuit..."));
        let mut srs = Srs::one(power)?;
        phase1::update(
            top_pool,
            &Control::new(),
            &mut srs,
            &phase1::Secrets::random(b"bench"),
        )?;
        let srs_path = dir.path().join(format!("srs-{power}"));
        srs.write(
            top_pool,
            &Control::new(),
            std::io::BufWriter::new(std::fs::File::create(&srs_path)?),
        )?;
        let r1cs_path = dir.path().join(format!("circuit-{power}.r1cs"));
        let constraints = (1u64 << power).to_string();
        let status = Command::new(harness)
            .args(["r1cs", "-constraints", &constraints, "-out"])
            .arg(&r1cs_path)
            .output()?;
        anyhow::ensure!(
            status.status.success(),
            "the harness could not write the circuit"
        );
        let r1cs = R1cs::read(std::io::BufReader::new(std::fs::File::open(&r1cs_path)?))?;
        let mut columns: Vec<(String, Times)> = Vec::new();
        let mut record =
            |name: String, times: Times| match columns.iter_mut().find(|(n, _)| *n == name) {
                Some((_, best)) => keep_best(best, &times),
                None => columns.push((name, times)),
            };
        for round in 1..=args.repeats.max(1) {
            if power <= args.serial_max_power {
                note(&format!(
                    "power {power}, round {round}: serial reference..."
                ));
                record("serial".to_owned(), serial(&r1cs, &srs)?);
            }
            for (w, pool) in pools {
                note(&format!(
                    "power {power}, round {round}: lockstep {w} workers..."
                ));
                record(format!("{w}w"), ours(pool, &r1cs, &srs)?);
            }
            if !args.no_peers {
                for procs in [1, 2] {
                    note(&format!(
                        "power {power}, round {round}: gnark GOMAXPROCS={procs}..."
                    ));
                    record(
                        format!("gnark{procs}"),
                        gnark(harness, &r1cs_path, &srs_path, procs)?,
                    );
                }
            }
        }
        let get = |name: &str| columns.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
        let none: Times = [None; 8];
        let top = pools.last().map_or(1, |(w, _)| *w);
        let one = get("1w").unwrap_or(none);
        let most = get(&format!("{top}w")).unwrap_or(none);
        let (g1, g2) = (get("gnark1").unwrap_or(none), get("gnark2").unwrap_or(none));
        writeln!(
            out,
            "\nceremony phase 2, power {power} (N = {}, {} constraints, {} wires), best of {} interleaved rounds, ms",
            1u64 << power,
            r1cs.constraints(),
            r1cs.wires(),
            args.repeats.max(1)
        )?;
        write!(out, "{:<11}", "stage")?;
        for (name, _) in &columns {
            write!(out, " {name:>10}")?;
        }
        for label in [
            "gnark1/1w".to_owned(),
            format!("gnark2/{top}w"),
            format!("1w/{top}w"),
        ] {
            write!(out, " {label:>11}")?;
        }
        writeln!(out)?;
        for (i, row) in ROWS.iter().enumerate() {
            write!(out, "{row:<11}")?;
            for (_, times) in &columns {
                write!(out, " {:>10}", ms(times[i]))?;
            }
            for (a, b) in [(g1[i], one[i]), (g2[i], most[i]), (one[i], most[i])] {
                write!(out, " {:>11}", ratio(a, b))?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}
