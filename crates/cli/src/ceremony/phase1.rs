//! `ceremony phase1 new | contribute | verify | seal`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use lockstep_ceremony::phase1::{self, MAX_BEACON_ITERATIONS, MAX_ENTROPY_BYTES, Phase1, Secrets};
use lockstep_ceremony::{DEFAULT_MAX_POWER, Limits};
use lockstep_files::Files;

use super::{Context, hex, parse_beacon};
use crate::session::Timing;
use crate::usage::{UsageError, usage};

/// `phase1 new`: the initial object.
pub(crate) fn new(ctx: &Context, power: u32, out: &Path) -> anyhow::Result<()> {
    if !(1..=DEFAULT_MAX_POWER).contains(&power) {
        return Err(UsageError(format!(
            "--power: {power} is outside 1 to {DEFAULT_MAX_POWER}"
        ))
        .into());
    }
    let started = Instant::now();
    let mut files = Files::new();
    let id = files.public_output("--out", out);
    let printed = files.printed();
    let mut staged = ctx.session.prepare(&files)?;
    let object = Phase1::initial(power)?;
    let points = object.srs.stored_points();
    let pool = ctx.pool(points)?;
    let hash = ctx.write_staged(&mut staged, id, points, |control, w| {
        object.write(&pool, control, w)
    })?;
    // Printed before the file is in place: a result that cannot be shown replaces nothing.
    staged.write(
        printed,
        format!("initial object for 2^{power}: {}\n", hex(&hash)).as_bytes(),
    )?;
    staged.commit()?;
    ctx.done("new", timing(points, started), &pool);
    Ok(())
}

/// `phase1 contribute`: fresh secrets applied to the last object; prints the hash to publish.
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
    // The entropy first: too much of it is a usage error before the (long) read of --in.
    let mut text = entropy_text(ctx, entropy)?;
    let opened = ctx.open("--in", input)?;
    let pool = ctx.pool_for(&opened)?;
    let (previous, previous_hash) = match ctx.read_phase1(&pool, opened, &Limits::default()) {
        Ok(read) => read,
        Err(error) => {
            zeroize::Zeroize::zeroize(&mut text);
            return Err(error);
        }
    };
    let points = previous.srs.stored_points();
    let secrets = Secrets::random(&text);
    zeroize::Zeroize::zeroize(&mut text);
    let step = ctx.session.step("contributing", Some(points), "points");
    let next = phase1::contribute(&pool, step.control(), previous, &previous_hash, &secrets)
        .context("contributing")?;
    step.finish();
    drop(secrets);
    let hash = ctx.write_staged(&mut staged, id, points, |control, w| {
        next.write(&pool, control, w)
    })?;
    // The hash to publish is printed before the contribution replaces anything: a run that
    // cannot show it (a full disk, a closed pipe) fails with no output replaced.
    staged.write(
        printed,
        format!("contribution hash: {}\n", hex(&hash)).as_bytes(),
    )?;
    staged.commit()?;
    ctx.done("contribute", timing(points, started), &pool);
    ctx.session.note(&format!(
        "contribution written to {}; publish the hash above",
        out.display()
    ));
    Ok(())
}

/// The text of `--entropy`: given, read from standard input for `-`, or none.
pub(crate) fn entropy_text(ctx: &Context, entropy: Option<&str>) -> anyhow::Result<Vec<u8>> {
    Ok(match entropy {
        Some("-") => read_entropy(ctx, std::io::stdin().lock())?,
        Some(text) => text.as_bytes().to_vec(),
        None => Vec::new(),
    })
}

/// Reads `--entropy -` from standard input (at most [`MAX_ENTROPY_BYTES`]); an empty input is
/// said (the contribution then rests on the system's randomness alone).
fn read_entropy(ctx: &Context, input: impl Read) -> anyhow::Result<Vec<u8>> {
    const MAX: u64 = MAX_ENTROPY_BYTES as u64;
    let mut text = Vec::new();
    input
        .take(MAX + 1)
        .read_to_end(&mut text)
        .context("reading --entropy from standard input")?;
    if text.len() as u64 > MAX {
        zeroize::Zeroize::zeroize(&mut text);
        return Err(UsageError("--entropy -: more than 1 MiB on standard input".to_owned()).into());
    }
    if text.is_empty() {
        ctx.session.note(
            "--entropy -: standard input was empty; the contribution uses the system's randomness alone",
        );
    }
    Ok(text)
}

/// The beacon's iterations, checked against the most a seal applies.
pub(crate) fn check_iterations(iterations: u64) -> anyhow::Result<()> {
    if iterations > MAX_BEACON_ITERATIONS {
        usage!(
            "--iterations {iterations}: at most {MAX_BEACON_ITERATIONS} (2^32, about seven minutes of SHA-256)"
        );
    }
    Ok(())
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
        Some((_, text)) => Some(parse_beacon(text)?),
        None => None,
    };
    check_iterations(iterations)?;
    let started = Instant::now();
    let first = &chain[0];
    let (mut last, mut last_hash, rest, pool) = match previous {
        Some(path) => {
            let opened = ctx.open("--previous", path)?;
            let pool = ctx.pool_for(&opened)?;
            let (object, hash) = ctx.read_phase1(&pool, opened, &Limits::default())?;
            (object, hash, chain, pool)
        }
        None => {
            let opened = ctx.open("FILE", first)?;
            let pool = ctx.pool_for(&opened)?;
            let (object, hash) = ctx.read_phase1(&pool, opened, &Limits::default())?;
            if object.is_initial() {
                ctx.session.print(&format!(
                    "{}: the initial object for 2^{}\n",
                    first.display(),
                    object.srs.power()
                ))?;
            } else {
                let initial = Phase1::initial(object.srs.power())?;
                let initial_hash =
                    initial.write(&pool, &lockstep_shard::Control::new(), std::io::sink())?;
                verify_one(ctx, &pool, &initial, &initial_hash, &object, first)?;
                ctx.session.print(&format!(
                    "{}: ok, contribution hash {}\n",
                    first.display(),
                    hex(&hash)
                ))?;
            }
            (object, hash, &chain[1..], pool)
        }
    };
    let mut contributions = usize::from(previous.is_none() && !last.is_initial());
    for path in rest {
        let limits = Limits {
            power: Some(last.srs.power()),
            ..Limits::default()
        };
        let (next, hash) = ctx.read_phase1(&pool, ctx.open("FILE", path)?, &limits)?;
        verify_one(ctx, &pool, &last, &last_hash, &next, path)?;
        ctx.session.print(&format!(
            "{}: ok, contribution hash {}\n",
            path.display(),
            hex(&hash)
        ))?;
        (last, last_hash, contributions) = (next, hash, contributions + 1);
    }
    // Every file read, and the seal's points if it is checked too.
    let points = last.srs.stored_points() * (chain.len() as u64 + u64::from(sealed.is_some()));
    if let (Some((path, _)), Some(beacon)) = (sealed, beacon) {
        let challenge = delayed_beacon(ctx, &beacon, iterations)?;
        let (srs, hash) = ctx.read_srs(
            &pool,
            ctx.open("--sealed", path)?,
            &Limits {
                power: Some(last.srs.power()),
                ..Limits::default()
            },
        )?;
        let step = ctx
            .session
            .step("sealing", Some(last.srs.stored_points()), "points");
        let expected =
            phase1::seal(&pool, step.control(), last, &last_hash, &challenge).context("sealing")?;
        step.finish();
        if srs != expected {
            anyhow::bail!(
                "{}: REJECTED: not the seal of the chain with this beacon and {iterations} iterations",
                path.display()
            );
        }
        ctx.session.print(&format!(
            "{}: ok, the seal of the chain, hash {}\n",
            path.display(),
            hex(&hash)
        ))?;
    }
    ctx.done("verify", timing(points, started), &pool);
    ctx.session.print(&format!(
        "verified: {contributions} contribution(s), all valid\n"
    ))
}

fn verify_one(
    ctx: &Context,
    pool: &lockstep_shard::Pool,
    previous: &Phase1,
    previous_hash: &[u8; 32],
    next: &Phase1,
    path: &Path,
) -> anyhow::Result<()> {
    let step = ctx.session.step("verifying", None, "points");
    let result = phase1::verify_contribution(pool, step.control(), previous, previous_hash, next);
    step.finish();
    result.map_err(|error| anyhow::anyhow!("{}: REJECTED: {error}", path.display()))
}

/// The beacon after its delay of `iterations` SHA-256 hashes, with a progress bar.
pub(crate) fn delayed_beacon(
    ctx: &Context,
    beacon: &[u8],
    iterations: u64,
) -> anyhow::Result<Vec<u8>> {
    if iterations == 0 {
        return Ok(beacon.to_vec());
    }
    let step = ctx.session.step("beacon delay", Some(iterations), "hashes");
    let challenge = phase1::beacon_challenge_with(step.control(), beacon, iterations)
        .context("the beacon's delay")?;
    step.finish();
    Ok(challenge)
}

/// `phase1 seal`: the final SRS from the last contribution and a public beacon.
pub(crate) fn seal(
    ctx: &Context,
    input: &Path,
    beacon: &str,
    iterations: u64,
    out: &Path,
) -> anyhow::Result<()> {
    let beacon = parse_beacon(beacon)?;
    check_iterations(iterations)?;
    let started = Instant::now();
    let mut files = Files::new();
    files.input("--in", input);
    let id = files.public_output("--out", out);
    let printed = files.printed();
    let mut staged = ctx.session.prepare(&files)?;
    let opened = ctx.open("--in", input)?;
    let pool = ctx.pool_for(&opened)?;
    let (last, last_hash) = ctx.read_phase1(&pool, opened, &Limits::default())?;
    let points = last.srs.stored_points();
    let challenge = delayed_beacon(ctx, &beacon, iterations)?;
    let step = ctx.session.step("sealing", Some(points), "points");
    let srs =
        phase1::seal(&pool, step.control(), last, &last_hash, &challenge).context("sealing")?;
    step.finish();
    let hash = ctx.write_staged(&mut staged, id, points, |control, w| {
        srs.write(&pool, control, w)
    })?;
    staged.write(
        printed,
        format!("sealed SRS hash: {}\n", hex(&hash)).as_bytes(),
    )?;
    staged.commit()?;
    ctx.done("seal", timing(points, started), &pool);
    Ok(())
}

/// `points` of work since `started`.
pub(crate) fn timing(points: u64, started: Instant) -> Timing {
    Timing {
        items: points,
        elapsed: started.elapsed(),
    }
}
