//! `ceremony info FILE`.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use lockstep_ceremony::{FileKind, Limits};

use super::{Context, hex};

/// Prints what a phase 1 object or a sealed SRS holds, after reading (and checking) all of it.
/// The file is read once (a pipe works); a `.ptau` or another file is named as such.
pub(crate) fn print(ctx: &Context, path: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let opened = ctx.open("FILE", path)?;
    let pool = ctx.pool_for(&opened)?;
    let size = std::fs::metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len());
    let mut out = format!("file: {}\n", path.display());
    let points = match opened.kind() {
        Some(FileKind::Phase1) => {
            let (object, hash) = ctx.read_phase1(&pool, opened, &Limits::default())?;
            let power = object.srs.power();
            writeln!(out, "kind: gnark v0.15 phase 1 object (BLS12-381)")?;
            writeln!(out, "power: {power} (N = {})", object.srs.n())?;
            size_line(&mut out, size)?;
            match object.challenge {
                None if object.is_initial() => {
                    writeln!(out, "contribution: none (the initial object)")?
                }
                None => writeln!(
                    out,
                    "contribution: none recorded (imported powers: verify a contribution on them with --previous)"
                )?,
                Some(challenge) => writeln!(
                    out,
                    "contribution: made on the object with hash {}",
                    hex(&challenge)
                )?,
            }
            writeln!(out, "hash: {}", hex(&hash))?;
            object.srs.stored_points()
        }
        Some(FileKind::Srs) => {
            let (srs, hash) = ctx.read_srs(&pool, opened, &Limits::default())?;
            writeln!(
                out,
                "kind: gnark v0.15 sealed phase 1 SRS (SrsCommons, BLS12-381)"
            )?;
            writeln!(out, "power: {} (N = {})", srs.power(), srs.n())?;
            size_line(&mut out, size)?;
            writeln!(out, "hash: {}", hex(&hash))?;
            srs.stored_points()
        }
        Some(FileKind::Ptau) => anyhow::bail!(
            "{} is a snarkjs .ptau file: `lockstep ceremony ptau import` checks it and writes it as a phase 1 object",
            path.display()
        ),
        Some(other) => anyhow::bail!(
            "{} is {}: `ceremony info` describes phase 1 objects and sealed SRSs; {}",
            path.display(),
            other.described(),
            other.read_by()
        ),
        None => anyhow::bail!(
            "{} is not a ceremony file: its first bytes are those of no phase 1 object, sealed SRS, .ptau, phase 2 object, R1CS, Groth16 key, proof or witness",
            path.display()
        ),
    };
    ctx.session.print(&out)?;
    ctx.done("info", points, started, &pool);
    Ok(())
}

/// The size line, for a regular file (a pipe's size is not known).
fn size_line(out: &mut String, size: Option<u64>) -> std::fmt::Result {
    match size {
        Some(size) => writeln!(out, "size: {size} bytes"),
        None => Ok(()),
    }
}
