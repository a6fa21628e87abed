//! `ceremony info FILE`.

use std::io::{Read, Write};
use std::path::Path;
use std::time::Instant;

use lockstep_ceremony::{FileKind, Limits};
use lockstep_files::open_input;

use super::phase1::timing;
use super::{Context, hex};

/// Prints what a phase 1 object or a sealed SRS holds, after reading (and checking) all of it.
pub(crate) fn print(ctx: &Context, path: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut first = [0u8; 1];
    let len = open_input("FILE", path)?.read(&mut first)?;
    if len == 0 {
        anyhow::bail!("{}: empty file", path.display());
    }
    let pool = ctx.pool_for_file(path)?;
    let mut out = std::io::stdout().lock();
    let size = std::fs::metadata(path)?.len();
    let points = match FileKind::sniff(first[0]) {
        FileKind::Phase1 => {
            let (object, hash) = ctx.read_phase1(&pool, "FILE", path, &Limits::default())?;
            let power = object.srs.power();
            writeln!(out, "file: {}", path.display())?;
            writeln!(out, "kind: gnark v0.15 phase 1 object (BLS12-381)")?;
            writeln!(out, "power: {power} (N = {})", object.srs.n())?;
            writeln!(out, "size: {size} bytes")?;
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
        FileKind::Srs => {
            let (srs, hash) = ctx.read_srs(&pool, "FILE", path, &Limits::default())?;
            writeln!(out, "file: {}", path.display())?;
            writeln!(
                out,
                "kind: gnark v0.15 sealed phase 1 SRS (SrsCommons, BLS12-381)"
            )?;
            writeln!(out, "power: {} (N = {})", srs.power(), srs.n())?;
            writeln!(out, "size: {size} bytes")?;
            writeln!(out, "hash: {}", hex(&hash))?;
            srs.stored_points()
        }
    };
    ctx.done("info", timing(points, started), &pool);
    Ok(())
}
