//! `ceremony zkey ...`: snarkjs's Groth16 `.zkey` steps over circom circuits.

use std::io::{BufReader, Read, Seek};
use std::path::Path;
use std::time::Instant;

use anyhow::Context as _;
use lockstep_ceremony::circom::CircomR1cs;
use lockstep_ceremony::zkey::{self, NEW_ORDER};
use lockstep_ceremony::{FileKind, Limits, SNIFF_LEN};
use lockstep_files::{Kind, check_readable, open_input};

use super::{Context, hex};

/// Opens `path` (given as `flag`), a file of `kind` read through its section table: a pipe is
/// refused, and another ceremony file is named, before anything is read.
pub(super) fn open_sectioned(
    flag: &str,
    path: &Path,
    kind: FileKind,
) -> anyhow::Result<BufReader<std::fs::File>> {
    let shown = path.display();
    if check_readable(flag, path)? == Kind::Fifo {
        anyhow::bail!(
            "{shown} is a pipe: {} is read through its section table, which needs a file it can seek in (save it to a file first)",
            kind.described()
        );
    }
    let mut file = open_input(flag, path)?;
    let mut prefix = Vec::with_capacity(SNIFF_LEN);
    (&mut file)
        .take(SNIFF_LEN as u64)
        .read_to_end(&mut prefix)
        .and_then(|_| file.rewind())
        .with_context(|| format!("reading {shown}"))?;
    match FileKind::sniff(&prefix) {
        Some(found) if found == kind => {}
        Some(other) => anyhow::bail!(
            "{shown} is {}, not {}: {}",
            other.described(),
            kind.described(),
            other.read_by()
        ),
        None if prefix.is_empty() => anyhow::bail!("{shown}: empty file"),
        None => anyhow::bail!("{shown} is not {}", kind.described()),
    }
    Ok(BufReader::with_capacity(1 << 20, file))
}

/// `zkey new R1CS PTAU --out FILE`.
pub(crate) fn new(ctx: &Context, r1cs: &Path, ptau: &Path, out: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut outputs = ctx.stage(&[("R1CS", r1cs), ("PTAU", ptau)], &[("--out", out)])?;
    let step = ctx.session.step("reading the circuit", None, "terms");
    let circuit = CircomR1cs::read(open_sectioned("R1CS", r1cs, FileKind::CircomR1cs)?)
        .with_context(|| format!("{}", r1cs.display()))?;
    step.finish();
    let input = open_sectioned("PTAU", ptau, FileKind::Ptau)?;
    let h = circuit.header();
    let work = circuit.terms() as u64 + (1u64 << h.domain_power()) * 6;
    let pool = ctx.pool(work)?;
    let step = ctx.session.step("making the key", Some(work), "points");
    let key = zkey::new(&pool, step.control(), &circuit, input, &Limits::default())
        .with_context(|| format!("{} with {}", r1cs.display(), ptau.display()))?;
    step.finish();
    let points =
        (3 * u64::from(h.wires)) + key.h.len() as u64 + key.ic.len() as u64 + key.c.len() as u64;
    let hash = ctx.write_output(&mut outputs, 0, points, |control, w| {
        key.write(&pool, control, &NEW_ORDER, w)
    })?;
    outputs.commit(&format!(
        "Circuit hash: \n{}\nwritten: {}\n",
        zkey::format_hash(&key.circuit_hash),
        hex(&hash)
    ))?;
    ctx.done("zkey new", points, started, &pool);
    Ok(())
}
