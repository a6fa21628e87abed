//! `ceremony phase2 new | contribute | verify | seal` and `ceremony groth16 verify`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use lockstep_ceremony::groth16::{self, Proof};
use lockstep_ceremony::phase1::Srs;
use lockstep_ceremony::phase2::{self, Phase2, Secrets, VerifyingKey};
use lockstep_ceremony::r1cs::R1cs;
use lockstep_ceremony::{FileKind, Limits};
use lockstep_files::Files;
use lockstep_shard::Pool;

use super::phase1::{check_iterations, delayed_beacon, entropy_text, timing};
use super::{Context, Opened, hex, parse_beacon};

/// Reads the circuit, naming the file in any error.
fn read_r1cs(ctx: &Context, path: &Path) -> anyhow::Result<R1cs> {
    let opened = ctx.open("--r1cs", path)?;
    opened.expect(FileKind::R1cs)?;
    R1cs::read(opened.reader)
        .with_context(|| format!("{}: not a BLS12-381 R1CS lockstep reads", path.display()))
}

/// Reads the sealed phase 1 and cuts it to the circuit's domain when it is larger (saying so).
fn read_phase1_for(ctx: &Context, pool: &Pool, path: &Path, r1cs: &R1cs) -> anyhow::Result<Srs> {
    let (srs, _) = ctx.read_srs(pool, ctx.open("--phase1", path)?, &Limits::default())?;
    let need = r1cs.domain_power();
    if srs.power() < need {
        anyhow::bail!(
            "{}: a phase 1 for 2^{} = {} constraints, but the circuit has {} (it needs 2^{need})",
            path.display(),
            srs.power(),
            srs.n(),
            r1cs.constraints()
        );
    }
    if srs.power() > need {
        ctx.session.note(&format!(
            "{}: a phase 1 for 2^{}; cut to 2^{need}, the domain of the circuit's {} constraints",
            path.display(),
            srs.power(),
            r1cs.constraints()
        ));
        return Ok(srs.truncated(need));
    }
    Ok(srs)
}

/// Reads a phase 2 object, naming the file in any error.
fn read_phase2(ctx: &Context, pool: &Pool, opened: Opened) -> anyhow::Result<(Phase2, [u8; 32])> {
    opened.expect(FileKind::Phase2)?;
    let Opened {
        path,
        mut reader,
        len,
        ..
    } = opened;
    let step = ctx.session.step("reading", None, "points");
    let limits = Limits {
        file_len: len,
        ..Limits::default()
    };
    let read = Phase2::read(pool, step.control(), &mut reader, &limits)
        .with_context(|| path.display().to_string());
    step.finish();
    read
}

/// The points of an object (for worker counts and reports).
fn points(object: &Phase2) -> u64 {
    (object.z.len() + object.pkk.len() + object.sigma_ckk.iter().map(Vec::len).sum::<usize>())
        as u64
}

/// `phase2 new`: the initial object of a circuit.
pub(crate) fn new(
    ctx: &Context,
    r1cs_path: &Path,
    phase1: &Path,
    out: &Path,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut files = Files::new();
    files.input("--r1cs", r1cs_path).input("--phase1", phase1);
    let id = files.public_output("--out", out);
    let printed = files.printed();
    let mut staged = ctx.session.prepare(&files)?;
    let r1cs = read_r1cs(ctx, r1cs_path)?;
    let pool = ctx.pool(1u64 << r1cs.domain_power())?;
    let srs = read_phase1_for(ctx, &pool, phase1, &r1cs)?;
    let step = ctx.session.step("initializing", None, "steps");
    let object = phase2::initialize_object(&pool, step.control(), &r1cs, &srs)
        .context("initializing phase 2")?;
    step.finish();
    let n = points(&object);
    let hash = ctx.write_staged(&mut staged, id, n, |control, w| {
        object.write(&pool, control, w)
    })?;
    staged.write(
        printed,
        format!(
            "initial phase 2 object for {} constraints, {} wires, {} commitment(s): {}\n",
            r1cs.constraints(),
            r1cs.wires(),
            r1cs.commitments().len(),
            hex(&hash)
        )
        .as_bytes(),
    )?;
    staged.commit()?;
    ctx.done("phase2 new", timing(n, started), &pool);
    Ok(())
}

/// `phase2 contribute`.
pub(crate) fn contribute(
    ctx: &Context,
    input: &Path,
    out: &Path,
    entropy: Option<&str>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut files = Files::new();
    files.input("--in", input);
    let id = files.public_output("--out", out);
    let printed = files.printed();
    let mut staged = ctx.session.prepare(&files)?;
    let mut text = entropy_text(ctx, entropy)?;
    let opened = ctx.open("--in", input)?;
    let pool = ctx.pool_for(&opened)?;
    let (previous, previous_hash) = match read_phase2(ctx, &pool, opened) {
        Ok(read) => read,
        Err(error) => {
            zeroize::Zeroize::zeroize(&mut text);
            return Err(error);
        }
    };
    let n = points(&previous);
    let secrets = Secrets::random(&text, previous.sigma_g2.len());
    zeroize::Zeroize::zeroize(&mut text);
    let step = ctx.session.step("contributing", None, "points");
    let next = phase2::contribute(&pool, step.control(), previous, &previous_hash, &secrets)
        .context("contributing")?;
    step.finish();
    drop(secrets);
    let hash = ctx.write_staged(&mut staged, id, n, |control, w| {
        next.write(&pool, control, w)
    })?;
    staged.write(
        printed,
        format!("contribution hash: {}\n", hex(&hash)).as_bytes(),
    )?;
    staged.commit()?;
    ctx.done("phase2 contribute", timing(n, started), &pool);
    ctx.session.note(&format!(
        "contribution written to {}; publish the hash above",
        out.display()
    ));
    Ok(())
}

/// Whether an object is an initial one: no challenge and zero proofs.
fn is_initial(object: &Phase2) -> bool {
    object.challenge.is_none()
        && object.delta_proof.is_zero()
        && object.sigma_proofs.iter().all(|p| p.is_zero())
}

/// `phase2 verify`.
pub(crate) fn verify(
    ctx: &Context,
    chain: &[PathBuf],
    previous: Option<&Path>,
    circuit: Option<(&Path, &Path)>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let (first_path, first_flag) = match previous {
        Some(path) => (path, "--previous"),
        None => (chain[0].as_path(), "FILE"),
    };
    let opened = ctx.open(first_flag, first_path)?;
    let pool = ctx.pool_for(&opened)?;
    let (mut last, mut last_hash) = read_phase2(ctx, &pool, opened)?;
    let rest = if previous.is_some() {
        chain
    } else {
        &chain[1..]
    };
    let mut contributions = 0usize;
    if previous.is_none() {
        if is_initial(&last) {
            match circuit {
                Some((r1cs_path, phase1)) => {
                    let r1cs = read_r1cs(ctx, r1cs_path)?;
                    let srs = read_phase1_for(ctx, &pool, phase1, &r1cs)?;
                    let step = ctx.session.step("re-deriving the initial object", None, "steps");
                    let expected = phase2::initialize_object(&pool, step.control(), &r1cs, &srs)
                        .context("initializing phase 2")?;
                    step.finish();
                    if expected != last {
                        anyhow::bail!(
                            "{}: REJECTED: not the initial object of {} over {}",
                            first_path.display(),
                            r1cs_path.display(),
                            phase1.display()
                        );
                    }
                    ctx.session.print(&format!(
                        "{}: ok, the initial object of {}, hash {}\n",
                        first_path.display(),
                        r1cs_path.display(),
                        hex(&last_hash)
                    ))?;
                }
                None => ctx.session.print(&format!(
                    "{}: an initial object, not checked against a circuit (give --r1cs and --phase1)\n",
                    first_path.display()
                ))?,
            }
        } else {
            anyhow::bail!(
                "{}: REJECTED: not an initial object (it carries a contribution): give the object it was made on with --previous",
                first_path.display()
            );
        }
    }
    for path in rest {
        let (next, hash) = read_phase2(ctx, &pool, ctx.open("FILE", path)?)?;
        let step = ctx.session.step("verifying", None, "points");
        let result = phase2::verify_contribution(&pool, step.control(), &last, &last_hash, &next);
        step.finish();
        result.map_err(|error| anyhow::anyhow!("{}: REJECTED: {error}", path.display()))?;
        ctx.session.print(&format!(
            "{}: ok, contribution hash {}\n",
            path.display(),
            hex(&hash)
        ))?;
        (last, last_hash, contributions) = (next, hash, contributions + 1);
    }
    ctx.done(
        "phase2 verify",
        timing(points(&last) * chain.len() as u64, started),
        &pool,
    );
    ctx.session.print(&format!(
        "verified: {contributions} contribution(s), all valid\n"
    ))
}

/// What `phase2 seal` is given.
pub(crate) struct SealArgs<'a> {
    pub(crate) input: &'a Path,
    pub(crate) r1cs: &'a Path,
    pub(crate) phase1: &'a Path,
    pub(crate) beacon: &'a str,
    pub(crate) iterations: u64,
    pub(crate) pk: &'a Path,
    pub(crate) vk: &'a Path,
}

/// `phase2 seal`: the beacon's update and the keys.
pub(crate) fn seal(ctx: &Context, args: &SealArgs<'_>) -> anyhow::Result<()> {
    let beacon = parse_beacon(args.beacon)?;
    check_iterations(args.iterations)?;
    let started = Instant::now();
    let mut files = Files::new();
    files
        .input("--in", args.input)
        .input("--r1cs", args.r1cs)
        .input("--phase1", args.phase1);
    let pk_id = files.public_output("--pk", args.pk);
    let vk_id = files.public_output("--vk", args.vk);
    let printed = files.printed();
    let mut staged = ctx.session.prepare(&files)?;
    let opened = ctx.open("--in", args.input)?;
    let pool = ctx.pool_for(&opened)?;
    let (last, last_hash) = read_phase2(ctx, &pool, opened)?;
    let r1cs = read_r1cs(ctx, args.r1cs)?;
    let srs = read_phase1_for(ctx, &pool, args.phase1, &r1cs)?;
    let step = ctx.session.step("deriving the evaluations", None, "steps");
    let (_, evaluations) =
        phase2::initialize(&pool, step.control(), &r1cs, &srs).context("initializing phase 2")?;
    step.finish();
    // Before the beacon's delay, which may take minutes.
    phase2::check_sealable(&last, &srs, &evaluations).map_err(|error| {
        anyhow::anyhow!(
            "{}: not a phase 2 object of {} over {} ({error})",
            args.input.display(),
            args.r1cs.display(),
            args.phase1.display()
        )
    })?;
    let challenge = delayed_beacon(ctx, &beacon, args.iterations)?;
    let step = ctx.session.step("sealing", None, "points");
    let (pk, vk) = phase2::seal(
        &pool,
        step.control(),
        last,
        &last_hash,
        &srs,
        &evaluations,
        &challenge,
    )
    .context("sealing")?;
    step.finish();
    let n = (pk.a.len() + pk.b.len() + pk.z.len() + pk.k.len() + pk.b2.len()) as u64;
    let pk_hash = ctx.write_staged(&mut staged, pk_id, n, |control, w| {
        pk.write(&pool, control, w)
    })?;
    let vk_hash = ctx.write_staged(&mut staged, vk_id, vk.k.len() as u64, |control, w| {
        vk.write(&pool, control, w)
    })?;
    staged.write(
        printed,
        format!(
            "proving key hash: {}\nverifying key hash: {}\n",
            hex(&pk_hash),
            hex(&vk_hash)
        )
        .as_bytes(),
    )?;
    staged.commit()?;
    ctx.done("phase2 seal", timing(n, started), &pool);
    Ok(())
}

/// `groth16 verify`.
pub(crate) fn groth16_verify(
    ctx: &Context,
    vk_path: &Path,
    proof_path: &Path,
    public_path: &Path,
) -> anyhow::Result<()> {
    let read = |flag: &str, path: &Path, kind: FileKind| -> anyhow::Result<_> {
        let opened = ctx.open(flag, path)?;
        opened.expect(kind)?;
        Ok(opened.reader)
    };
    let vk = VerifyingKey::read(read("--vk", vk_path, FileKind::VerifyingKey)?)
        .with_context(|| format!("{}: not a gnark BLS12-381 verifying key", vk_path.display()))?;
    let proof = Proof::read(read("--proof", proof_path, FileKind::Proof)?)
        .with_context(|| format!("{}: not a gnark BLS12-381 proof", proof_path.display()))?;
    let public =
        groth16::read_public_witness(read("--public", public_path, FileKind::PublicWitness)?)
            .with_context(|| format!("{}: not a gnark public witness", public_path.display()))?;
    groth16::verify(&vk, &proof, &public)
        .map_err(|error| anyhow::anyhow!("{}: REJECTED: {error}", proof_path.display()))?;
    ctx.session.print(&format!(
        "{}: ok, a valid proof for {} public input(s)\n",
        proof_path.display(),
        public.len()
    ))
}
