//! `ceremony info FILE`.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::Context as _;
use lockstep_ceremony::circom::{CircomR1cs, Witness};
use lockstep_ceremony::zkey::{self, Zkey};
use lockstep_ceremony::{FileKind, Limits};
use lockstep_shard::Control;

use super::{Context, hex};

/// Prints what a phase 1 object, a sealed SRS, a circom `.r1cs` or `.wtns` or a snarkjs `.zkey`
/// holds, after reading (and checking) all of it. A gnark file is read once (a pipe works);
/// circom's and snarkjs's are read through their section tables (a file); a `.ptau` or another
/// file is named as such.
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
        Some(FileKind::CircomR1cs) => {
            drop(opened);
            let input = super::zkey::open_sectioned("FILE", path, FileKind::CircomR1cs)?;
            let r1cs = CircomR1cs::read(input).with_context(|| format!("{}", path.display()))?;
            let h = r1cs.header();
            writeln!(out, "kind: circom .r1cs (BLS12-381)")?;
            size_line(&mut out, size)?;
            // snarkjs's `r1cs info` lines, in its order.
            writeln!(out, "Curve: bls12-381")?;
            writeln!(out, "# of Wires: {}", h.wires)?;
            writeln!(out, "# of Constraints: {}", h.constraints)?;
            writeln!(out, "# of Private Inputs: {}", h.private_inputs)?;
            writeln!(out, "# of Public Inputs: {}", h.public_inputs)?;
            writeln!(out, "# of Labels: {}", h.labels)?;
            writeln!(out, "# of Outputs: {}", h.outputs)?;
            writeln!(
                out,
                "Groth16 domain: 2^{} (snarkjs's zkey new needs a .ptau of power {} or more)",
                h.domain_power(),
                h.domain_power()
            )?;
            r1cs.terms() as u64
        }
        Some(FileKind::Wtns) => {
            drop(opened);
            let input = super::zkey::open_sectioned("FILE", path, FileKind::Wtns)?;
            let witness = Witness::read(input).with_context(|| format!("{}", path.display()))?;
            writeln!(out, "kind: circom .wtns witness (BLS12-381)")?;
            size_line(&mut out, size)?;
            writeln!(
                out,
                "values: {} (the constant 1 first)",
                witness.values().len()
            )?;
            witness.values().len() as u64
        }
        Some(FileKind::Zkey) => {
            drop(opened);
            let input = super::zkey::open_sectioned("FILE", path, FileKind::Zkey)?;
            let key = Zkey::read(&pool, &Control::new(), input, &Limits::default())
                .with_context(|| format!("{}", path.display()))?;
            let h = &key.header;
            writeln!(out, "kind: snarkjs Groth16 .zkey (BLS12-381)")?;
            size_line(&mut out, size)?;
            writeln!(out, "wires: {}", h.n_vars)?;
            writeln!(out, "public signals: {}", h.n_public)?;
            writeln!(out, "domain: 2^{}", h.power)?;
            writeln!(out, "contributions: {}", key.contributions.len())?;
            for (i, c) in key.contributions.iter().enumerate() {
                let what = if c.kind == 1 {
                    "beacon"
                } else {
                    "contribution"
                };
                writeln!(
                    out,
                    "  #{} {what} {}:
{}",
                    i + 1,
                    c.name.as_deref().unwrap_or(""),
                    zkey::format_hash(&zkey::contribution_hash(c))
                )?;
            }
            writeln!(
                out,
                "Circuit Hash:
{}",
                zkey::format_hash(&key.circuit_hash)
            )?;
            (key.ic.len() + 3 * key.a.len() + key.c.len() + key.h.len()) as u64
        }
        Some(FileKind::Ptau) => anyhow::bail!(
            "{} is a snarkjs .ptau file: `lockstep ceremony ptau import` checks it and writes it as a phase 1 object",
            path.display()
        ),
        Some(other) => anyhow::bail!(
            "{} is {}: `ceremony info` describes phase 1 objects, sealed SRSs, circom .r1cs and .wtns files and snarkjs .zkey files; {}",
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
