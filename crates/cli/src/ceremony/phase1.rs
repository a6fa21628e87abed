//! `ceremony phase1 new | contribute | verify | seal`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use lockstep_ceremony::Limits;
use lockstep_ceremony::phase1::{self, Phase1, Secrets};

use super::{Context, hex, parse_hex};
use crate::files::Files;
use crate::usage::UsageError;

/// The largest power `new` accepts (files of 77 GB).
const MAX_POWER: u32 = 28;

/// `phase1 new`: the initial object.
pub(crate) fn new(ctx: &Context, power: u32, out: &Path) -> anyhow::Result<()> {
    if !(1..=MAX_POWER).contains(&power) {
        return Err(UsageError(format!("--power: {power} is outside 1 to {MAX_POWER}")).into());
    }
    let mut files = Files::new();
    let id = files.public_output("--out", out);
    let mut staged = ctx.prepare(&files)?;
    let object = Phase1::initial(power);
    let pool = ctx.pool(object.srs.stored_points())?;
    let hash = ctx.write_staged(&mut staged, id, object.srs.stored_points(), |control, w| {
        object.write(&pool, control, w)
    })?;
    staged.commit()?;
    writeln!(
        std::io::stdout().lock(),
        "initial object for 2^{power}: {}",
        hex(&hash)
    )?;
    Ok(())
}

/// `phase1 contribute`: fresh secrets applied to the last object; prints the hash to publish.
pub(crate) fn contribute(
    ctx: &Context,
    input: &Path,
    out: &Path,
    entropy: Option<&str>,
) -> anyhow::Result<()> {
    let mut files = Files::new();
    files.input("--in", input);
    let id = files.public_output("--out", out);
    let mut staged = ctx.prepare(&files)?;
    let pool = ctx.pool_for_file(input)?;
    let (previous, previous_hash) = ctx.read_phase1(&pool, "--in", input, &Limits::default())?;
    let points = previous.srs.stored_points();
    let mut text = match entropy {
        Some("-") => read_entropy(std::io::stdin().lock())?,
        Some(text) => text.as_bytes().to_vec(),
        None => Vec::new(),
    };
    let secrets = Secrets::random(&text);
    zeroize::Zeroize::zeroize(&mut text);
    let step = ctx.step("contributing", Some(points));
    let next = phase1::contribute(&pool, step.control(), previous, &previous_hash, &secrets)
        .context("contributing")?;
    step.finish();
    drop(secrets);
    let hash = ctx.write_staged(&mut staged, id, points, |control, w| {
        next.write(&pool, control, w)
    })?;
    staged.commit()?;
    ctx.note(&format!(
        "contribution written to {}; publish its hash:",
        out.display()
    ));
    writeln!(
        std::io::stdout().lock(),
        "contribution hash: {}",
        hex(&hash)
    )?;
    Ok(())
}

/// Reads `--entropy -` from standard input (at most 1 MiB).
fn read_entropy(input: impl Read) -> anyhow::Result<Vec<u8>> {
    const MAX: u64 = 1 << 20;
    let mut text = Vec::new();
    input
        .take(MAX + 1)
        .read_to_end(&mut text)
        .context("reading --entropy from standard input")?;
    if text.len() as u64 > MAX {
        zeroize::Zeroize::zeroize(&mut text);
        return Err(UsageError("--entropy -: more than 1 MiB on standard input".to_owned()).into());
    }
    Ok(text)
}

/// `phase1 verify`: a chain from the initial object (or from `--previous`), then optionally
/// the seal.
pub(crate) fn verify(
    ctx: &Context,
    chain: &[PathBuf],
    previous: Option<&Path>,
    sealed: Option<(&Path, &str)>,
    iterations: u64,
) -> anyhow::Result<()> {
    let beacon = match sealed {
        Some((_, text)) => Some(parse_hex("--beacon", text)?),
        None => None,
    };
    let mut stdout = std::io::stdout().lock();
    let first = &chain[0];
    let pool = ctx.pool_for_file(first)?;
    let (mut last, mut last_hash, rest) = match previous {
        Some(path) => {
            let (object, hash) = ctx.read_phase1(&pool, "--previous", path, &Limits::default())?;
            (object, hash, chain)
        }
        None => {
            let (object, hash) = ctx.read_phase1(&pool, "FILE", first, &Limits::default())?;
            if object.is_initial() {
                writeln!(
                    stdout,
                    "{}: the initial object for 2^{}",
                    first.display(),
                    object.srs.power()
                )?;
                (object, hash, &chain[1..])
            } else {
                let initial = Phase1::initial(object.srs.power());
                let initial_hash =
                    initial.write(&pool, &lockstep_shard::Control::new(), std::io::sink())?;
                verify_one(ctx, &pool, &initial, &initial_hash, &object, first)?;
                writeln!(
                    stdout,
                    "{}: ok, contribution hash {}",
                    first.display(),
                    hex(&hash)
                )?;
                (object, hash, &chain[1..])
            }
        }
    };
    let mut contributions = usize::from(previous.is_none() && !last.is_initial());
    for path in rest {
        let limits = Limits {
            power: Some(last.srs.power()),
            ..Limits::default()
        };
        let (next, hash) = ctx.read_phase1(&pool, "FILE", path, &limits)?;
        verify_one(ctx, &pool, &last, &last_hash, &next, path)?;
        writeln!(
            stdout,
            "{}: ok, contribution hash {}",
            path.display(),
            hex(&hash)
        )?;
        (last, last_hash, contributions) = (next, hash, contributions + 1);
    }
    if let (Some((path, _)), Some(beacon)) = (sealed, beacon) {
        let challenge = phase1::beacon_challenge(&beacon, iterations);
        let (srs, hash) = ctx.read_srs(
            &pool,
            "--sealed",
            path,
            &Limits {
                power: Some(last.srs.power()),
                ..Limits::default()
            },
        )?;
        let step = ctx.step("sealing", Some(last.srs.stored_points()));
        let expected =
            phase1::seal(&pool, step.control(), last, &last_hash, &challenge).context("sealing")?;
        step.finish();
        if srs != expected {
            anyhow::bail!(
                "{}: REJECTED: not the seal of the chain with this beacon and {iterations} iterations",
                path.display()
            );
        }
        writeln!(
            stdout,
            "{}: ok, the seal of the chain, hash {}",
            path.display(),
            hex(&hash)
        )?;
    }
    writeln!(
        stdout,
        "verified: {contributions} contribution(s), all valid"
    )?;
    Ok(())
}

fn verify_one(
    ctx: &Context,
    pool: &lockstep_shard::Pool,
    previous: &Phase1,
    previous_hash: &[u8; 32],
    next: &Phase1,
    path: &Path,
) -> anyhow::Result<()> {
    let step = ctx.step("verifying", None);
    let result = phase1::verify_contribution(pool, step.control(), previous, previous_hash, next);
    step.finish();
    result.map_err(|error| anyhow::anyhow!("{}: REJECTED: {error}", path.display()))
}

/// `phase1 seal`: the final SRS from the last contribution and a public beacon.
pub(crate) fn seal(
    ctx: &Context,
    input: &Path,
    beacon: &str,
    iterations: u64,
    out: &Path,
) -> anyhow::Result<()> {
    let beacon = parse_hex("--beacon", beacon)?;
    let mut files = Files::new();
    files.input("--in", input);
    let id = files.public_output("--out", out);
    let mut staged = ctx.prepare(&files)?;
    let pool = ctx.pool_for_file(input)?;
    let (last, last_hash) = ctx.read_phase1(&pool, "--in", input, &Limits::default())?;
    let points = last.srs.stored_points();
    let challenge = phase1::beacon_challenge(&beacon, iterations);
    let step = ctx.step("sealing", Some(points));
    let srs =
        phase1::seal(&pool, step.control(), last, &last_hash, &challenge).context("sealing")?;
    step.finish();
    let hash = ctx.write_staged(&mut staged, id, points, |control, w| {
        srs.write(&pool, control, w)
    })?;
    staged.commit()?;
    writeln!(std::io::stdout().lock(), "sealed SRS hash: {}", hex(&hash))?;
    Ok(())
}
