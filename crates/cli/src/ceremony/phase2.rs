//! `ceremony phase2 new | verify | seal` and `ceremony groth16 verify`, and phase 2 objects as
//! a contribution chain (`phase2 contribute`: [`super::contribute`]).

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use lockstep_ceremony::chain::Verdict;
use lockstep_ceremony::groth16::{self, Proof};
use lockstep_ceremony::phase1::Srs;
use lockstep_ceremony::phase2::{self, Origin, Phase2, Secrets, Start, VerifyingKey};
use lockstep_ceremony::r1cs::R1cs;
use lockstep_ceremony::{CodecError, FileKind, Limits};
use lockstep_shard::{Control, Pool};

use super::contribute::Chained;
use super::phase1::judged;
use super::{Beacon, Context, Opened, hex};
use crate::args::BeaconArgs;

impl Chained for Phase2 {
    type Secrets = Secrets;
    const COMMAND: &'static str = "phase2 contribute";

    fn read(ctx: &Context, pool: &Pool, opened: Opened) -> anyhow::Result<(Self, [u8; 32])> {
        read_phase2(ctx, pool, opened)
    }

    fn points(&self) -> u64 {
        Phase2::points(self)
    }

    fn counted(&self) -> Option<u64> {
        None
    }

    fn secrets(&self, entropy: &[u8]) -> Secrets {
        Secrets::random(entropy, self.sigma_g2.len())
    }

    fn contribute(
        self,
        pool: &Pool,
        control: &Control,
        hash: &[u8; 32],
        secrets: &Secrets,
    ) -> anyhow::Result<Self> {
        Ok(phase2::contribute(pool, control, self, hash, secrets)?)
    }

    fn write<W: Write>(
        &self,
        pool: &Pool,
        control: &Control,
        out: W,
    ) -> Result<[u8; 32], CodecError> {
        Phase2::write(self, pool, control, out)
    }
}

/// Reads the circuit, naming the file in any error.
pub(super) fn read_r1cs(ctx: &Context, path: &Path) -> anyhow::Result<R1cs> {
    let opened = ctx.open("--r1cs", path)?;
    opened.expect(FileKind::R1cs)?;
    // A regular file holds its length; a pipe at most what the machine's memory could hold
    // of it (the reader keeps the sections it reads).
    let max = opened
        .len
        .or_else(lockstep_files::physical_memory)
        .unwrap_or(u64::MAX);
    R1cs::read_at_most(opened.reader, max)
        .with_context(|| format!("{}: not a BLS12-381 R1CS lockstep reads", path.display()))
}

/// Reads the sealed phase 1 and cuts it to the circuit's domain when it is larger (saying so).
fn read_phase1_for(ctx: &Context, pool: &Pool, path: &Path, r1cs: &R1cs) -> anyhow::Result<Srs> {
    let (srs, _) = ctx.read_srs(pool, ctx.open("--phase1", path)?, &Limits::default())?;
    let (power, n, need) = (srs.power(), srs.n(), r1cs.domain_power());
    let fitted = phase2::fit_phase1(srs, r1cs).map_err(|_| {
        anyhow::anyhow!(
            "{}: a phase 1 for 2^{power} = {n} constraints, but the circuit has {} (it needs 2^{need})",
            path.display(),
            r1cs.constraints()
        )
    })?;
    if power > need {
        ctx.session.note(&format!(
            "{}: a phase 1 for 2^{power}; cut to 2^{need}, the domain of the circuit's {} constraints",
            path.display(),
            r1cs.constraints()
        ));
    }
    Ok(fitted)
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

/// `phase2 new`: the initial object of a circuit.
pub(crate) fn new(
    ctx: &Context,
    r1cs_path: &Path,
    phase1: &Path,
    out: &Path,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut outputs = ctx.stage(
        &[("--r1cs", r1cs_path), ("--phase1", phase1)],
        &[("--out", out)],
    )?;
    let r1cs = read_r1cs(ctx, r1cs_path)?;
    let pool = ctx.pool(1u64 << r1cs.domain_power())?;
    let srs = read_phase1_for(ctx, &pool, phase1, &r1cs)?;
    let step = ctx.session.step("initializing", None, "steps");
    let object = phase2::initialize_object(&pool, step.control(), &r1cs, &srs)
        .context("initializing phase 2")?;
    step.finish();
    let n = object.points();
    let hash = ctx.write_output(&mut outputs, 0, n, |control, w| {
        object.write(&pool, control, w)
    })?;
    outputs.commit(&format!(
        "initial phase 2 object for {} constraints, {} wires, {} commitment(s): {}\n",
        r1cs.constraints(),
        r1cs.wires(),
        r1cs.commitments().len(),
        hex(&hash)
    ))?;
    ctx.done("phase2 new", n, started, &pool);
    Ok(())
}

/// How a chain's verdicts are said: on standard output (`phase2 verify`) or as notes
/// (`phase2 seal`, whose output is the keys' hashes).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdicts {
    Printed,
    Noted,
}

impl Verdicts {
    fn say(self, ctx: &Context, path: &Path, verdict: &Verdict) -> anyhow::Result<()> {
        let line = format!("{}: {verdict}", path.display());
        match self {
            Self::Printed => ctx.session.print(&format!("{line}\n"))?,
            Self::Noted => ctx.session.note(&line),
        }
        Ok(())
    }
}

/// Reads `files` in order and hands each to `chain` ([`phase2::Chain::push`]), saying each
/// verdict.
fn walk(
    ctx: &Context,
    pool: &Pool,
    chain: &mut phase2::Chain<'_>,
    files: &[PathBuf],
    verdicts: Verdicts,
) -> anyhow::Result<()> {
    for path in files {
        let (next, hash) = read_phase2(ctx, pool, ctx.open("FILE", path)?)?;
        let step = ctx.session.step("verifying", None, "points");
        let verdict = chain.push(pool, step.control(), next, hash);
        step.finish();
        verdicts.say(ctx, path, &judged(path, verdict)?)?;
    }
    Ok(())
}

/// The chain of `files` from its first file, against `start` (the circuit's initial object
/// re-derived) where there is one ([`phase2::Chain::from_first`]), every contribution verified.
fn chain_from_start<'a>(
    ctx: &Context,
    pool: &Pool,
    files: &[PathBuf],
    start: Option<Start<'a>>,
    verdicts: Verdicts,
) -> anyhow::Result<phase2::Chain<'a>> {
    let first_path = &files[0];
    let (first, first_hash) = read_phase2(ctx, pool, ctx.open("FILE", first_path)?)?;
    let step = ctx.session.step("verifying", None, "points");
    let started = phase2::Chain::from_first(pool, step.control(), first, first_hash, start);
    step.finish();
    let (mut chain, verdict) = judged(first_path, started)?;
    verdicts.say(ctx, first_path, &verdict)?;
    walk(ctx, pool, &mut chain, &files[1..], verdicts)?;
    Ok(chain)
}

/// The words naming a circuit's initial object over a phase 1: `c.r1cs over srs`.
fn origin(r1cs: &Path, phase1: &Path) -> String {
    format!("{} over {}", r1cs.display(), phase1.display())
}

/// `phase2 verify`.
pub(crate) fn verify(
    ctx: &Context,
    chain_files: &[PathBuf],
    previous: Option<&Path>,
    circuit: Option<(&Path, &Path)>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let (first_path, first_flag) = match previous {
        Some(path) => (path, "--previous"),
        None => (chain_files[0].as_path(), "FILE"),
    };
    let pool = ctx.pool_for(&ctx.open(first_flag, first_path)?)?;
    let chain = match previous {
        Some(path) => {
            let (object, hash) = read_phase2(ctx, &pool, ctx.open("--previous", path)?)?;
            let mut chain = phase2::Chain::after(Cow::Owned(object), hash);
            walk(ctx, &pool, &mut chain, chain_files, Verdicts::Printed)?;
            chain
        }
        None => {
            let start = match circuit {
                Some((r1cs_path, phase1)) => {
                    let r1cs = read_r1cs(ctx, r1cs_path)?;
                    let srs = read_phase1_for(ctx, &pool, phase1, &r1cs)?;
                    let step = ctx
                        .session
                        .step("re-deriving the initial object", None, "steps");
                    let object = phase2::initialize_object(&pool, step.control(), &r1cs, &srs)
                        .context("initializing phase 2")?;
                    step.finish();
                    let named = origin(r1cs_path, phase1);
                    Some(Start::new(&pool, Cow::Owned(object), named)?)
                }
                None => None,
            };
            chain_from_start(ctx, &pool, chain_files, start, Verdicts::Printed)?
        }
    };
    let contributions = chain.contributions();
    ctx.done(
        "phase2 verify",
        chain.last().points() * chain_files.len() as u64,
        started,
        &pool,
    );
    ctx.session.print(&format!(
        "verified: {contributions} contribution(s), all valid\n"
    ))
}

/// What `phase2 seal` is given.
pub(crate) struct SealArgs<'a> {
    pub(crate) chain: &'a [PathBuf],
    pub(crate) r1cs: &'a Path,
    pub(crate) phase1: &'a Path,
    pub(crate) beacon: &'a BeaconArgs,
    pub(crate) pk: &'a Path,
    pub(crate) vk: &'a Path,
}

/// `phase2 seal`: the chain verified from the circuit's initial object over the phase 1 (as
/// gnark's `VerifyPhase2`, which seals only what it verified), then the beacon's update and the
/// keys. Nothing is written unless every check holds.
pub(crate) fn seal(ctx: &Context, args: &SealArgs<'_>) -> anyhow::Result<()> {
    let beacon = Beacon::from_args(args.beacon)?;
    let started = Instant::now();
    let inputs: Vec<_> = args
        .chain
        .iter()
        .map(|path| ("FILE", path.as_path()))
        .chain([("--r1cs", args.r1cs), ("--phase1", args.phase1)])
        .collect();
    let mut outputs = ctx.stage(&inputs, &[("--pk", args.pk), ("--vk", args.vk)])?;
    let pool = ctx.pool_for(&ctx.open("FILE", &args.chain[0])?)?;
    let r1cs = read_r1cs(ctx, args.r1cs)?;
    let srs = read_phase1_for(ctx, &pool, args.phase1, &r1cs)?;
    let step = ctx
        .session
        .step("deriving the initial object", None, "steps");
    let (initial, evaluations) =
        phase2::initialize(&pool, step.control(), &r1cs, &srs).context("initializing phase 2")?;
    step.finish();
    let start = Start::new(
        &pool,
        Cow::Borrowed(&initial),
        origin(args.r1cs, args.phase1),
    )?;
    let chain = chain_from_start(ctx, &pool, args.chain, Some(start), Verdicts::Noted)?;
    let contributions = chain.contributions();
    let (last, last_hash) = chain.into_last();
    let shown = args.chain[args.chain.len() - 1].display();
    if contributions == 0 {
        anyhow::bail!(
            "{shown}: the initial object, with no contribution: its keys' delta would be the beacon's alone, which is public (contribute at least once)"
        );
    }
    let origin = Origin {
        initial: &initial,
        srs: &srs,
        evaluations: &evaluations,
    };
    // Before the beacon's delay, which may take minutes.
    phase2::check_sealable(&pool, &Control::new(), origin, &last)
        .map_err(|error| anyhow::anyhow!("{shown}: REJECTED: {error}"))?;
    let challenge = beacon.delayed(ctx)?;
    let step = ctx.session.step("sealing", None, "points");
    let last = last.into_owned();
    let (pk, vk) = phase2::seal(&pool, step.control(), origin, last, &last_hash, &challenge)
        .context("sealing")?;
    step.finish();
    let n = (pk.a.len() + pk.b.len() + pk.z.len() + pk.k.len() + pk.b2.len()) as u64;
    let pk_hash = ctx.write_output(&mut outputs, 0, n, |control, w| pk.write(&pool, control, w))?;
    let vk_hash = ctx.write_output(&mut outputs, 1, vk.k.len() as u64, |control, w| {
        vk.write(&pool, control, w)
    })?;
    outputs.commit(&format!(
        "proving key hash: {}\nverifying key hash: {}\n",
        hex(&pk_hash),
        hex(&vk_hash)
    ))?;
    ctx.done("phase2 seal", n, started, &pool);
    ctx.session.note(&format!(
        "sealed after {contributions} verified contribution(s)"
    ));
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
