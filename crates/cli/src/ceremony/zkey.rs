//! `ceremony zkey ...`: snarkjs's Groth16 `.zkey` steps over circom circuits.

use std::io::{BufReader, Read, Seek};
use std::path::Path;
use std::time::Instant;

use anyhow::Context as _;
use lockstep_ceremony::circom::CircomR1cs;
use lockstep_ceremony::zkey::{self, NEW_ORDER, ORDER, Zkey, ZkeyVerifyError};
use lockstep_ceremony::{FileKind, Limits, SNIFF_LEN, points_at_most};
use lockstep_files::{Kind, check_readable, open_input};
use lockstep_shard::Pool;

use super::beacon::parse_beacon;
use super::contribute::entropy_text;
use super::{Context, hex};
use crate::args::ZkeyCommand;
use crate::usage::usage;

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
fn new(ctx: &Context, r1cs: &Path, ptau: &Path, out: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut outputs = ctx.stage(&[("R1CS", r1cs), ("PTAU", ptau)], &[("--out", out)])?;
    let step = ctx.session.step("reading the circuit", None, "terms");
    let circuit = CircomR1cs::read(open_sectioned("R1CS", r1cs, FileKind::CircomR1cs)?)
        .with_context(|| format!("{}", r1cs.display()))?;
    step.finish();
    let input = open_sectioned("PTAU", ptau, FileKind::Ptau)?;
    let h = circuit.header();
    let work = zkey::new_work(&circuit);
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

/// Runs a `ceremony zkey` subcommand.
pub(crate) fn run(ctx: &Context, command: &ZkeyCommand) -> anyhow::Result<()> {
    match command {
        ZkeyCommand::New { r1cs, ptau, out } => new(ctx, r1cs, ptau, out),
        ZkeyCommand::Contribute {
            input,
            out,
            name,
            entropy,
        } => contribute(ctx, input, out, name.as_deref(), entropy.as_deref()),
        ZkeyCommand::Beacon {
            input,
            out,
            beacon: text,
            exp,
            name,
        } => beacon(ctx, input, out, text, *exp, name.as_deref()),
        ZkeyCommand::Verify { r1cs, ptau, zkey } => verify(ctx, r1cs, ptau, zkey),
        ZkeyCommand::ExportVkey { zkey, out } => export_vkey(ctx, zkey, out),
    }
}

/// Reads the `.zkey` given as `flag`, every point checked.
fn read_zkey(ctx: &Context, flag: &str, path: &Path) -> anyhow::Result<(Zkey, Pool)> {
    let input = open_sectioned(flag, path, FileKind::Zkey)?;
    let len = input.get_ref().metadata().map(|m| m.len()).unwrap_or(0);
    let pool = ctx.pool(points_at_most(len))?;
    let step = ctx.session.step("reading the key", None, "points");
    let key = Zkey::read(&pool, step.control(), input, &Limits::default())
        .with_context(|| format!("{}", path.display()))?;
    step.finish();
    Ok((key, pool))
}

/// The points a key holds (for progress and the summary line).
fn key_points(key: &Zkey) -> u64 {
    (key.ic.len() + 3 * key.a.len() + key.c.len() + key.h.len()) as u64
}

/// `zkey contribute --in --out [--name] [--entropy]` (and a `.zkey` ceremony's participant).
pub(super) fn contribute(
    ctx: &Context,
    input: &Path,
    out: &Path,
    name: Option<&str>,
    entropy: Option<&str>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut outputs = ctx.stage(&[("--in", input)], &[("--out", out)])?;
    let text = entropy_text(ctx, entropy)?;
    let (key, pool) = read_zkey(ctx, "--in", input)?;
    let circuit_hash = key.circuit_hash;
    let points = key_points(&key);
    let step = ctx.session.step("contributing", None, "points");
    let (next, hash) =
        zkey::contribute(&pool, step.control(), key, name, &text).context("contributing")?;
    drop(text);
    step.finish();
    ctx.write_output(&mut outputs, 0, points, |control, w| {
        next.write(&pool, control, &ORDER, w)
    })?;
    outputs.commit(&format!(
        "Circuit Hash: \n{}\nContribution Hash: \n{}\n",
        zkey::format_hash(&circuit_hash),
        zkey::format_hash(&hash)
    ))?;
    ctx.done("zkey contribute", points, started, &pool);
    ctx.session.note(&format!(
        "contribution written to {}; publish the contribution hash above",
        out.display()
    ));
    Ok(())
}

/// `zkey beacon --in --out --beacon HEX --exp N [--name]`.
fn beacon(
    ctx: &Context,
    input: &Path,
    out: &Path,
    hex_text: &str,
    exp: u8,
    name: Option<&str>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut outputs = ctx.stage(&[("--in", input)], &[("--out", out)])?;
    let bytes = parse_beacon(hex_text)?;
    if bytes.len() > 255 {
        usage!(
            "--beacon: {} bytes, at most 255 (snarkjs's limit)",
            bytes.len()
        );
    }
    if !(10..=32).contains(&exp) {
        usage!(
            "--exp {exp}: from 10 to 32 (2^32 SHA-256 iterations take minutes; snarkjs's 33 to 63 would take hours to centuries)"
        );
    }
    let (key, pool) = read_zkey(ctx, "--in", input)?;
    let points = key_points(&key);
    let step = ctx
        .session
        .step("beacon delay and contribution", Some(1 << exp), "hashes");
    let (next, hash) = zkey::beacon(&pool, step.control(), key, name, &bytes, exp)
        .context("applying the beacon")?;
    step.finish();
    ctx.write_output(&mut outputs, 0, points, |control, w| {
        next.write(&pool, control, &ORDER, w)
    })?;
    outputs.commit(&format!(
        "Contribution Hash: \n{}\n",
        zkey::format_hash(&hash)
    ))?;
    ctx.done("zkey beacon", points, started, &pool);
    Ok(())
}

/// `zkey verify R1CS PTAU ZKEY`.
fn verify(ctx: &Context, r1cs: &Path, ptau: &Path, zkey_path: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let circuit = CircomR1cs::read(open_sectioned("R1CS", r1cs, FileKind::CircomR1cs)?)
        .with_context(|| format!("{}", r1cs.display()))?;
    let powers = open_sectioned("PTAU", ptau, FileKind::Ptau)?;
    let input = open_sectioned("ZKEY", zkey_path, FileKind::Zkey)?;
    let len = input.get_ref().metadata().map(|m| m.len()).unwrap_or(0);
    let pool = ctx.pool(points_at_most(len))?;
    let step = ctx.session.step("verifying", None, "points");
    let verdict = zkey::verify_file(
        &pool,
        step.control(),
        &circuit,
        powers,
        input,
        &Limits::default(),
    );
    step.finish();
    let (key, report) = match verdict {
        Ok(verified) => verified,
        Err(ZkeyVerifyError::Key(error)) => {
            return Err(anyhow::Error::new(error).context(format!("{}", zkey_path.display())));
        }
        Err(ZkeyVerifyError::Zkey(error)) => {
            return Err(anyhow::Error::new(error).context(format!(
                "{} with {}",
                r1cs.display(),
                ptau.display()
            )));
        }
        Err(refusal) => anyhow::bail!("{}: REJECTED: {refusal}", zkey_path.display()),
    };
    let mut text = format!(
        "Circuit Hash: \n{}\n",
        zkey::format_hash(&report.circuit_hash)
    );
    for (i, c) in report.contributions.iter().enumerate().rev() {
        text.push_str("-------------------------\n");
        text.push_str(&format!(
            "contribution #{} {}:\n{}\n",
            i + 1,
            c.name.as_deref().unwrap_or(""),
            zkey::format_hash(&c.hash)
        ));
        if let Some((hash, exp)) = &c.beacon {
            text.push_str(&format!(
                "Beacon generator: {}\nBeacon iterations Exp: {exp}\n",
                hex(hash)
            ));
        }
    }
    text.push_str("-------------------------\nZKey Ok!\n");
    ctx.session.print(&text)?;
    ctx.done("zkey verify", key_points(&key), started, &pool);
    Ok(())
}

/// `zkey export-vkey ZKEY --out FILE`.
fn export_vkey(ctx: &Context, zkey_path: &Path, out: &Path) -> anyhow::Result<()> {
    let mut outputs = ctx.stage(&[("ZKEY", zkey_path)], &[("--out", out)])?;
    let (key, _) = read_zkey(ctx, "ZKEY", zkey_path)?;
    let json = zkey::verification_key_json(&key);
    ctx.write_output(&mut outputs, 0, 0, |_, w| {
        std::io::Write::write_all(w, json.as_bytes()).map_err(lockstep_ceremony::CodecError::Io)?;
        Ok::<_, lockstep_ceremony::CodecError>([0u8; 32])
    })?;
    outputs.commit("")?;
    Ok(())
}
