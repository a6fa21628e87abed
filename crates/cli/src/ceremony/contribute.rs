//! `phase1 contribute` and `phase2 contribute`: one run for both phases' objects. The entropy
//! is read first (too much of it is a usage error before a long read), mixed with the operating
//! system's randomness into the phase's secrets, and wiped; the secrets are dropped (the engine
//! wipes them) before the contribution is written; the hash to publish is printed before the
//! contribution replaces anything.

use std::io::{Read, Write};
use std::time::Instant;

use anyhow::Context as _;
use lockstep_ceremony::CodecError;
use lockstep_ceremony::phase1::MAX_ENTROPY_BYTES;
use lockstep_shard::{Control, Pool};
use zeroize::Zeroizing;

use super::{Context, Opened, hex};
use crate::args::ContributeArgs;
use crate::usage::UsageError;

/// An object of a contribution chain, as `contribute` reads, updates and writes it.
pub(crate) trait Chained: Sized {
    /// The secrets of one contribution (wiped by the engine when dropped).
    type Secrets;
    /// How the command names itself in its report (`contribute`, `phase2 contribute`).
    const COMMAND: &'static str;

    /// Reads the last object of the chain and the SHA-256 of its bytes, naming the file in any
    /// error.
    fn read(ctx: &Context, pool: &Pool, opened: Opened) -> anyhow::Result<(Self, [u8; 32])>;
    /// Its points (for reports and the write's progress).
    fn points(&self) -> u64;
    /// The contribution step's total for its progress bar, where the engine counts points.
    fn counted(&self) -> Option<u64>;
    /// Fresh secrets for a contribution on `self`, `entropy` mixed into the system's randomness.
    fn secrets(&self, entropy: &[u8]) -> Self::Secrets;
    /// The next object: `self` updated by `secrets` under the challenge `hash`.
    fn contribute(
        self,
        pool: &Pool,
        control: &Control,
        hash: &[u8; 32],
        secrets: &Self::Secrets,
    ) -> anyhow::Result<Self>;
    /// Writes the object and returns the SHA-256 of its bytes.
    fn write<W: Write>(
        &self,
        pool: &Pool,
        control: &Control,
        out: W,
    ) -> Result<[u8; 32], CodecError>;
}

/// Runs a contribution to a chain of `T` objects; prints the hash to publish.
pub(crate) fn contribute<T: Chained>(ctx: &Context, args: &ContributeArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut outputs = ctx.stage(&[("--in", &args.input)], &[("--out", &args.out)])?;
    // The entropy first: too much of it is a usage error before the (long) read of --in.
    let text = entropy_text(ctx, args.entropy.as_deref())?;
    let opened = ctx.open("--in", &args.input)?;
    let pool = ctx.pool_for(&opened)?;
    let (previous, previous_hash) = T::read(ctx, &pool, opened)?;
    let points = previous.points();
    let secrets = previous.secrets(&text);
    drop(text);
    let step = ctx
        .session
        .step("contributing", previous.counted(), "points");
    let next = previous
        .contribute(&pool, step.control(), &previous_hash, &secrets)
        .context("contributing")?;
    step.finish();
    drop(secrets);
    let hash = ctx.write_output(&mut outputs, 0, points, |control, w| {
        next.write(&pool, control, w)
    })?;
    outputs.commit(&format!("contribution hash: {}\n", hex(&hash)))?;
    ctx.done(T::COMMAND, points, started, &pool);
    ctx.session.note(&format!(
        "contribution written to {}; publish the hash above",
        args.out.display()
    ));
    Ok(())
}

/// The text of `--entropy`: given, read from standard input for `-`, or none; wiped when
/// dropped.
pub(super) fn entropy_text(
    ctx: &Context,
    entropy: Option<&str>,
) -> anyhow::Result<Zeroizing<Vec<u8>>> {
    Ok(match entropy {
        Some("-") => read_entropy(ctx, std::io::stdin().lock())?,
        Some(text) => Zeroizing::new(text.as_bytes().to_vec()),
        None => Zeroizing::new(Vec::new()),
    })
}

/// Reads `--entropy -` from standard input (at most [`MAX_ENTROPY_BYTES`]); an empty input is
/// said (the contribution then rests on the system's randomness alone).
fn read_entropy(ctx: &Context, input: impl Read) -> anyhow::Result<Zeroizing<Vec<u8>>> {
    const MAX: u64 = MAX_ENTROPY_BYTES as u64;
    // Room for all it may read, so the buffer never moves and leaves an unwiped copy behind.
    let mut text = Zeroizing::new(Vec::with_capacity(MAX_ENTROPY_BYTES + 1));
    input
        .take(MAX + 1)
        .read_to_end(&mut text)
        .context("reading --entropy from standard input")?;
    if text.len() as u64 > MAX {
        return Err(UsageError("--entropy -: more than 1 MiB on standard input".to_owned()).into());
    }
    if text.is_empty() {
        ctx.session.note(
            "--entropy -: standard input was empty; the contribution uses the system's randomness alone",
        );
    }
    Ok(text)
}
