//! `ceremony phase1 new | verify | seal`, and phase 1 objects as a contribution chain
//! (`phase1 contribute`: [`super::contribute`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use lockstep_ceremony::chain::ChainError;
use lockstep_ceremony::phase1::{self, Phase1, Secrets};
use lockstep_ceremony::{CodecError, DEFAULT_MAX_POWER, Limits};
use lockstep_shard::{Control, Pool};

use super::contribute::Chained;
use super::{Beacon, Context, Opened, hex};
use crate::args::BeaconArgs;
use crate::usage::usage;

impl Chained for Phase1 {
    type Secrets = Secrets;
    const COMMAND: &'static str = "contribute";

    fn read(ctx: &Context, pool: &Pool, opened: Opened) -> anyhow::Result<(Self, [u8; 32])> {
        ctx.read_phase1(pool, opened, &Limits::default())
    }

    fn points(&self) -> u64 {
        self.srs.stored_points()
    }

    fn counted(&self) -> Option<u64> {
        Some(self.points())
    }

    fn secrets(&self, entropy: &[u8]) -> Secrets {
        Secrets::random(entropy)
    }

    fn contribute(
        self,
        pool: &Pool,
        control: &Control,
        hash: &[u8; 32],
        secrets: &Secrets,
    ) -> anyhow::Result<Self> {
        Ok(phase1::contribute(pool, control, self, hash, secrets)?)
    }

    fn write<W: Write>(
        &self,
        pool: &Pool,
        control: &Control,
        out: W,
    ) -> Result<[u8; 32], CodecError> {
        Phase1::write(self, pool, control, out)
    }
}

/// `phase1 new`: the initial object.
pub(crate) fn new(ctx: &Context, power: u32, out: &Path) -> anyhow::Result<()> {
    if !(1..=DEFAULT_MAX_POWER).contains(&power) {
        usage!("--power: {power} is outside 1 to {DEFAULT_MAX_POWER}");
    }
    let started = Instant::now();
    let mut outputs = ctx.stage(&[], &[("--out", out)])?;
    let object = Phase1::initial(power)?;
    let points = object.srs.stored_points();
    let pool = ctx.pool(points)?;
    let hash = ctx.write_output(&mut outputs, 0, points, |control, w| {
        object.write(&pool, control, w)
    })?;
    outputs.commit(&format!("initial object for 2^{power}: {}\n", hex(&hash)))?;
    ctx.done("new", points, started, &pool);
    Ok(())
}

/// `phase1 verify`: a chain from the initial object (or from `--previous`), then optionally
/// the seal; the rules are the engine's ([`phase1::Chain`]), this reads, reports and prints.
pub(crate) fn verify(
    ctx: &Context,
    chain: &[PathBuf],
    previous: Option<&Path>,
    sealed: Option<(&Path, &str)>,
    iterations: u64,
) -> anyhow::Result<()> {
    let sealed = match sealed {
        Some((path, text)) => Some((path, Beacon::new(text, iterations)?)),
        None => None,
    };
    let started = Instant::now();
    let (mut walked, rest, pool) = match previous {
        Some(path) => {
            let opened = ctx.open("--previous", path)?;
            let pool = ctx.pool_for(&opened)?;
            let (object, hash) = ctx.read_phase1(&pool, opened, &Limits::default())?;
            (phase1::Chain::after(object, hash), chain, pool)
        }
        None => {
            let first = &chain[0];
            let opened = ctx.open("FILE", first)?;
            let pool = ctx.pool_for(&opened)?;
            let (object, hash) = ctx.read_phase1(&pool, opened, &Limits::default())?;
            let step = ctx.session.step("verifying", None, "points");
            let started = phase1::Chain::from_first(&pool, step.control(), object, hash);
            step.finish();
            let (walked, verdict) = judged(first, started)?;
            ctx.session
                .print(&format!("{}: {verdict}\n", first.display()))?;
            (walked, &chain[1..], pool)
        }
    };
    for path in rest {
        let (next, hash) =
            ctx.read_phase1(&pool, ctx.open("FILE", path)?, &walked.next_limits())?;
        let step = ctx.session.step("verifying", None, "points");
        let verdict = walked.push(&pool, step.control(), next, hash);
        step.finish();
        let verdict = judged(path, verdict)?;
        ctx.session
            .print(&format!("{}: {verdict}\n", path.display()))?;
    }
    let contributions = walked.contributions();
    // Every file read, and the seal's points if it is checked too.
    let points = walked.stored_points() * (chain.len() as u64 + u64::from(sealed.is_some()));
    if let Some((path, beacon)) = sealed {
        let challenge = beacon.delayed(ctx)?;
        let (srs, hash) =
            ctx.read_srs(&pool, ctx.open("--sealed", path)?, &walked.next_limits())?;
        let step = ctx
            .session
            .step("sealing", Some(walked.stored_points()), "points");
        let verdict = walked.check_seal(
            &pool,
            step.control(),
            &srs,
            hash,
            &challenge,
            beacon.iterations(),
        );
        step.finish();
        let verdict = judged(path, verdict)?;
        ctx.session
            .print(&format!("{}: {verdict}\n", path.display()))?;
    }
    ctx.done("verify", points, started, &pool);
    ctx.session.print(&format!(
        "verified: {contributions} contribution(s), all valid\n"
    ))
}

/// A chain step's result, its refusal named with the file: `FILE: REJECTED: ...`.
pub(super) fn judged<T>(path: &Path, result: Result<T, ChainError>) -> anyhow::Result<T> {
    result.map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))
}

/// `phase1 seal`: the final SRS from the last contribution and a public beacon.
pub(crate) fn seal(
    ctx: &Context,
    input: &Path,
    beacon: &BeaconArgs,
    out: &Path,
) -> anyhow::Result<()> {
    let beacon = Beacon::from_args(beacon)?;
    let started = Instant::now();
    let mut outputs = ctx.stage(&[("--in", input)], &[("--out", out)])?;
    let opened = ctx.open("--in", input)?;
    let pool = ctx.pool_for(&opened)?;
    let (last, last_hash) = ctx.read_phase1(&pool, opened, &Limits::default())?;
    let points = last.srs.stored_points();
    let challenge = beacon.delayed(ctx)?;
    let step = ctx.session.step("sealing", Some(points), "points");
    let srs =
        phase1::seal(&pool, step.control(), last, &last_hash, &challenge).context("sealing")?;
    step.finish();
    let hash = ctx.write_output(&mut outputs, 0, points, |control, w| {
        srs.write(&pool, control, w)
    })?;
    outputs.commit(&format!("sealed SRS hash: {}\n", hex(&hash)))?;
    ctx.done("seal", points, started, &pool);
    Ok(())
}
