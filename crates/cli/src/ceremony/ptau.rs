//! `ceremony ptau import | export`: snarkjs `.ptau` files.

use std::io::{BufReader, Read, Write};
use std::path::Path;
use std::time::Instant;

use anyhow::Context as _;
use lockstep_ceremony::phase1::{Phase1, Proofs, Srs};
use lockstep_ceremony::{FileKind, Limits, ptau};
use lockstep_files::{Files, open_input};

use super::phase1::timing;
use super::{Context, hex};

/// `ptau import`: read and check a `.ptau`, write its powers as a phase 1 object or an SRS.
pub(crate) fn import(ctx: &Context, input: &Path, out: &Path, as_srs: bool) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut files = Files::new();
    files.input("FILE", input);
    let id = files.public_output("--out", out);
    let mut staged = ctx.session.prepare(&files)?;
    let pool = ctx.pool_for_file(input)?;
    let file = open_input("FILE", input)?;
    let step = ctx.session.step("reading", None, "points");
    let read = ptau::read(
        &pool,
        step.control(),
        BufReader::with_capacity(1 << 20, file),
        &Limits::default(),
    )
    .with_context(|| format!("{}", input.display()))?;
    step.finish();
    let step = ctx.session.step("verifying", None, "points");
    let checked = ptau::check(&pool, step.control(), &read.srs);
    step.finish();
    checked.map_err(|error| anyhow::anyhow!("{}: REJECTED: {error}", input.display()))?;
    ctx.session.note(&format!(
        "{}: powers of tau for 2^{} verified ({} snarkjs contribution(s) recorded, not re-checked)",
        input.display(),
        read.srs.power(),
        read.contributions
    ));
    let points = read.srs.stored_points();
    let hash = if as_srs {
        ctx.write_staged(&mut staged, id, points, |control, w| {
            read.srs.write(&pool, control, w)
        })?
    } else {
        let object = Phase1 {
            proofs: Proofs::default(),
            srs: read.srs,
            challenge: None,
        };
        ctx.write_staged(&mut staged, id, points, |control, w| {
            object.write(&pool, control, w)
        })?
    };
    staged.commit()?;
    ctx.done("ptau import", timing(points, started), &pool);
    writeln!(std::io::stdout().lock(), "imported: {}", hex(&hash))?;
    Ok(())
}

/// `ptau export`: a phase 1 object or a sealed SRS as a `.ptau`.
pub(crate) fn export(ctx: &Context, input: &Path, out: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut files = Files::new();
    files.input("FILE", input);
    let id = files.public_output("--out", out);
    let mut staged = ctx.session.prepare(&files)?;
    let pool = ctx.pool_for_file(input)?;
    let mut first = [0u8; 1];
    open_input("FILE", input)?
        .read_exact(&mut first)
        .with_context(|| format!("{}", input.display()))?;
    let srs: Srs = match FileKind::sniff(first[0]) {
        FileKind::Phase1 => {
            ctx.read_phase1(&pool, "FILE", input, &Limits::default())?
                .0
                .srs
        }
        FileKind::Srs => ctx.read_srs(&pool, "FILE", input, &Limits::default())?.0,
    };
    let points = srs.stored_points();
    let hash = ctx.write_staged(&mut staged, id, points, |control, w| {
        ptau::write(&pool, control, &srs, w)
    })?;
    staged.commit()?;
    ctx.done("ptau export", timing(points, started), &pool);
    writeln!(std::io::stdout().lock(), "exported: {}", hex(&hash))?;
    Ok(())
}
