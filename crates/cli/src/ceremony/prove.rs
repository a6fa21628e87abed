//! `groth16 prove`: snarkjs's prover over a `.zkey` and a circom `.wtns`, by the engine
//! (`lockstep_ceremony::prove`); this module only opens, reports and writes.

use std::path::Path;
use std::time::Instant;

use anyhow::Context as _;
use lockstep_ceremony::circom::Witness;
use lockstep_ceremony::prove::{Blinding, snarkjs};
use lockstep_ceremony::zkey::Zkey;
use lockstep_ceremony::{FileKind, Limits, points_at_most};

use super::Context;
use super::zkey::open_sectioned;

/// `groth16 prove --zkey --witness --proof --public`.
pub(super) fn snarkjs(
    ctx: &Context,
    zkey_path: &Path,
    witness_path: &Path,
    proof_path: &Path,
    public_path: &Path,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut outputs = ctx.stage(
        &[("--zkey", zkey_path), ("--witness", witness_path)],
        &[("--proof", proof_path), ("--public", public_path)],
    )?;
    let step = ctx.session.step("reading the witness", None, "values");
    let witness = Witness::read(open_sectioned("--witness", witness_path, FileKind::Wtns)?)
        .with_context(|| format!("{}", witness_path.display()))?;
    step.finish();
    let input = open_sectioned("--zkey", zkey_path, FileKind::Zkey)?;
    let len = input.get_ref().metadata().map(|m| m.len()).unwrap_or(0);
    let pool = ctx.pool(points_at_most(len))?;
    let step = ctx.session.step("reading the key", None, "points");
    let key = Zkey::read_for_proving(&pool, step.control(), input, &Limits::default())
        .with_context(|| format!("{}", zkey_path.display()))?;
    step.finish();
    // The MSMs' points: A, B1, B2 over the wires, C over the private ones, H over the domain.
    let points = (3 * key.a.len() + key.c.len() + key.h.len()) as u64;
    let step = ctx.session.step("proving", Some(points), "points");
    let proven = snarkjs::prove(&pool, step.control(), &key, &witness, &Blinding::random())
        .with_context(|| {
            format!(
                "proving with {} for {}",
                zkey_path.display(),
                witness_path.display()
            )
        })?;
    step.finish();
    for (index, text) in [proven.proof.to_json(), snarkjs::public_json(&proven.public)]
        .into_iter()
        .enumerate()
    {
        ctx.write_output(&mut outputs, index, 0, |_, w| {
            std::io::Write::write_all(w, text.as_bytes())
                .map_err(lockstep_ceremony::CodecError::Io)?;
            Ok::<_, lockstep_ceremony::CodecError>([0u8; 32])
        })?;
    }
    outputs.commit(&format!(
        "proved: {} public signal(s), the proof checked against the key\n",
        proven.public.len()
    ))?;
    ctx.done("groth16 prove", points, started, &pool);
    Ok(())
}
