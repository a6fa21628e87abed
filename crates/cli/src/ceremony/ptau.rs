//! `ceremony ptau import | export`: snarkjs `.ptau` files.

use std::io::{BufReader, Read, Seek};
use std::path::Path;
use std::time::Instant;

use anyhow::Context as _;
use lockstep_ceremony::phase1::{Phase1, Proofs, Srs};
use lockstep_ceremony::{FileKind, Limits, SNIFF_LEN, points_at_most, ptau};
use lockstep_files::{Kind, check_readable, open_input};

use super::{Context, hex};

/// `ptau import`: read and check a `.ptau`, write its powers as a phase 1 object or an SRS.
/// A `.ptau` is read through its section table, so the input must be a file (a pipe is refused
/// clearly, before anything is read).
pub(crate) fn import(ctx: &Context, input: &Path, out: &Path, as_srs: bool) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut outputs = ctx.stage(&[("FILE", input)], &[("--out", out)])?;
    let shown = input.display();
    let (file, len) = open_ptau(input)?;
    let pool = ctx.pool(points_at_most(len))?;
    let step = ctx.session.step("reading", None, "points");
    let read = ptau::read(
        &pool,
        step.control(),
        BufReader::with_capacity(1 << 20, file),
        &Limits::default(),
    )
    .with_context(|| format!("{shown}"))?;
    step.finish();
    let step = ctx.session.step("verifying", None, "points");
    let checked = ptau::check(&pool, step.control(), &read.srs);
    step.finish();
    checked.map_err(|error| anyhow::anyhow!("{shown}: REJECTED: {error}"))?;
    ctx.session.note(&format!(
        "{shown}: powers of tau for 2^{} verified ({} snarkjs contribution(s) recorded, not re-checked)",
        read.srs.power(),
        read.contributions
    ));
    let points = read.srs.stored_points();
    let hash = if as_srs {
        ctx.write_output(&mut outputs, 0, points, |control, w| {
            read.srs.write(&pool, control, w)
        })?
    } else {
        let object = Phase1 {
            proofs: Proofs::default(),
            srs: read.srs,
            challenge: None,
        };
        ctx.write_output(&mut outputs, 0, points, |control, w| {
            object.write(&pool, control, w)
        })?
    };
    outputs.commit(&format!("imported: {}\n", hex(&hash)))?;
    ctx.done("ptau import", points, started, &pool);
    Ok(())
}

/// `ptau prepare`: snarkjs's `powersoftau prepare phase2`, byte for byte.
pub(crate) fn prepare(ctx: &Context, input: &Path, out: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut outputs = ctx.stage(&[("FILE", input)], &[("--out", out)])?;
    let shown = input.display();
    let (file, len) = open_ptau(input)?;
    let pool = ctx.pool(points_at_most(len))?;
    // The output holds about three times the input's points (every power's blocks).
    let points = 3 * points_at_most(len) * 48 / 96;
    let hash = ctx
        .write_output(&mut outputs, 0, points, |control, w| {
            ptau::prepare(
                &pool,
                control,
                BufReader::with_capacity(1 << 20, file),
                w,
                &Limits::default(),
            )
            .map(|p| p.sha256)
        })
        .with_context(|| format!("{shown}"))?;
    outputs.commit(&format!("prepared: {}\n", hex(&hash)))?;
    ctx.done("ptau prepare", points, started, &pool);
    Ok(())
}

/// Opens a `.ptau` given as FILE: a seekable file whose first bytes are a `.ptau`'s (another
/// ceremony file is named). Returns it rewound, and its length.
fn open_ptau(input: &Path) -> anyhow::Result<(std::fs::File, u64)> {
    let shown = input.display();
    if check_readable("FILE", input)? == Kind::Fifo {
        anyhow::bail!(
            "{shown} is a pipe: a .ptau is read through its section table, which needs a file it can seek in (save it to a file first)"
        );
    }
    let mut file = open_input("FILE", input)?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut prefix = Vec::with_capacity(SNIFF_LEN);
    (&mut file)
        .take(SNIFF_LEN as u64)
        .read_to_end(&mut prefix)
        .and_then(|_| file.rewind())
        .with_context(|| format!("reading {shown}"))?;
    match FileKind::sniff(&prefix) {
        Some(FileKind::Ptau) => {}
        Some(other @ (FileKind::Phase1 | FileKind::Srs)) => anyhow::bail!(
            "{shown} is {}, not a snarkjs .ptau file (`ptau export` writes a .ptau from it)",
            other.described()
        ),
        Some(other) => anyhow::bail!(
            "{shown} is {}, not a snarkjs .ptau file: {}",
            other.described(),
            other.read_by()
        ),
        None if prefix.is_empty() => anyhow::bail!("{shown}: empty file"),
        None => anyhow::bail!("{shown} is not a snarkjs .ptau file (no \"ptau\" magic)"),
    }
    Ok((file, len))
}

/// `ptau export`: a phase 1 object or a sealed SRS as a `.ptau`; the input is read once (a pipe
/// works).
pub(crate) fn export(ctx: &Context, input: &Path, out: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut outputs = ctx.stage(&[("FILE", input)], &[("--out", out)])?;
    let opened = ctx.open("FILE", input)?;
    let pool = ctx.pool_for(&opened)?;
    let srs: Srs = match opened.kind() {
        Some(FileKind::Srs) => ctx.read_srs(&pool, opened, &Limits::default())?.0,
        Some(FileKind::Ptau) => anyhow::bail!(
            "{} is a snarkjs .ptau file already: `ptau export` takes a phase 1 object or a sealed SRS",
            input.display()
        ),
        Some(other) if other != FileKind::Phase1 => {
            anyhow::bail!(
                "{} is {}, not a phase 1 object or a sealed SRS: {}",
                input.display(),
                other.described(),
                other.read_by()
            )
        }
        // A phase 1 object, or no ceremony file: the reader names what is wrong with it.
        _ => ctx.read_phase1(&pool, opened, &Limits::default())?.0.srs,
    };
    let points = srs.stored_points();
    let hash = ctx.write_output(&mut outputs, 0, points, |control, w| {
        ptau::write(&pool, control, &srs, w)
    })?;
    outputs.commit(&format!("exported: {}\n", hex(&hash)))?;
    ctx.done("ptau export", points, started, &pool);
    Ok(())
}
