//! `groth16 prove`: snarkjs's prover over a `.zkey` and a circom `.wtns`, and gnark's over its
//! proving key, R1CS and witness, by the engine (`lockstep_ceremony::prove`); this module only
//! opens, reports and writes.

use std::path::Path;
use std::time::Instant;

use anyhow::Context as _;
use lockstep_ceremony::circom::{CircomR1cs, Witness};
use lockstep_ceremony::groth16;
use lockstep_ceremony::phase2::{KeyChecks, KeyFile, ProvingKey, VerifyingKey};
use lockstep_ceremony::prove::{Blinding, gnark as gnark_prover, snarkjs};
use lockstep_ceremony::zkey::{ZkeyFile, ZkeyVector};
use lockstep_ceremony::{FileKind, Limits, SNIFF_LEN, points_at_most};

use super::Context;
use super::zkey::open_sectioned;

/// The paths `groth16 prove` takes.
pub(super) struct Files<'a> {
    pub(super) zkey: &'a Path,
    pub(super) witness: &'a Path,
    pub(super) proof: &'a Path,
    pub(super) public: &'a Path,
    pub(super) r1cs: Option<&'a Path>,
    pub(super) trust_key: bool,
}

/// `groth16 prove --zkey --witness --proof --public [--r1cs]`.
pub(super) fn snarkjs(ctx: &Context, files: &Files<'_>) -> anyhow::Result<()> {
    let (zkey_path, witness_path, proof_path, public_path) =
        (files.zkey, files.witness, files.proof, files.public);
    let started = Instant::now();
    let mut inputs = vec![("--zkey", zkey_path), ("--witness", witness_path)];
    inputs.extend(files.r1cs.map(|path| ("--r1cs", path)));
    let mut outputs = ctx.stage(
        &inputs,
        &[("--proof", proof_path), ("--public", public_path)],
    )?;
    let step = ctx.session.step("reading the witness", None, "values");
    let witness = Witness::read(open_sectioned("--witness", witness_path, FileKind::Wtns)?)
        .with_context(|| format!("{}", witness_path.display()))?;
    step.finish();
    let circuit = match files.r1cs {
        Some(path) => {
            let step = ctx
                .session
                .step("checking the witness", None, "constraints");
            let circuit = CircomR1cs::read(open_sectioned("--r1cs", path, FileKind::CircomR1cs)?)
                .with_context(|| format!("{}", path.display()))?;
            circuit.check_witness(&witness).with_context(|| {
                format!("{} against {}", witness_path.display(), path.display())
            })?;
            step.finish();
            Some((path, circuit))
        }
        None => None,
    };
    let input = open_sectioned("--zkey", zkey_path, FileKind::Zkey)?;
    let len = input.get_ref().metadata().map(|m| m.len()).unwrap_or(0);
    let pool = ctx.pool(points_at_most(len))?;
    let step = ctx.session.step("reading the key", None, "points");
    // Read by sections: A, B1, B2, C and H a chunk at a time as the MSMs take them.
    let key = ZkeyFile::open(
        &pool,
        step.control(),
        input,
        &Limits::default(),
        key_checks(files.trust_key),
    )
    .with_context(|| format!("{}", zkey_path.display()))?;
    step.finish();
    if let Some((path, circuit)) = &circuit {
        snarkjs::circuit_fits(&key.header, circuit)
            .with_context(|| format!("{} with {}", zkey_path.display(), path.display()))?;
    }
    drop(circuit);
    // The MSMs' points: A, B1, B2 over the wires, C over the private ones, H over the domain.
    let points = [ZkeyVector::A, ZkeyVector::B1, ZkeyVector::C, ZkeyVector::H]
        .map(|v| key.len(v) as u64)
        .iter()
        .sum::<u64>()
        + key.b2_len() as u64;
    let step = ctx.session.step("proving", Some(points), "points");
    let proven = snarkjs::prove_file(&pool, step.control(), &key, &witness, &Blinding::random())
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

/// A key's points in full by default, as gnark's `ReadFrom`; with --trust-key on their curves
/// only (the proof's points are checked in their subgroups either way).
fn key_checks(trust_key: bool) -> KeyChecks {
    if trust_key {
        KeyChecks::Curve
    } else {
        KeyChecks::Subgroups
    }
}

/// The paths `groth16 prove --pk` takes.
pub(super) struct GnarkFiles<'a> {
    pub(super) pk: &'a Path,
    pub(super) r1cs: &'a Path,
    pub(super) witness: &'a Path,
    pub(super) proof: &'a Path,
    pub(super) public: &'a Path,
    pub(super) vk: Option<&'a Path>,
    pub(super) trust_key: bool,
}

/// `groth16 prove --pk --r1cs --witness --proof --public [--vk]`: gnark's prover.
pub(super) fn gnark(ctx: &Context, files: &GnarkFiles<'_>) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut inputs = vec![
        ("--pk", files.pk),
        ("--r1cs", files.r1cs),
        ("--witness", files.witness),
    ];
    inputs.extend(files.vk.map(|path| ("--vk", path)));
    let mut outputs = ctx.stage(
        &inputs,
        &[("--proof", files.proof), ("--public", files.public)],
    )?;
    let read = |flag: &str, path: &Path, kind: FileKind| -> anyhow::Result<_> {
        let opened = ctx.open(flag, path)?;
        opened.expect(kind)?;
        Ok(opened)
    };
    let vk = match files.vk {
        Some(path) => Some(
            VerifyingKey::read(read("--vk", path, FileKind::VerifyingKey)?.reader).with_context(
                || format!("{}: not a gnark BLS12-381 verifying key", path.display()),
            )?,
        ),
        None => None,
    };
    let step = ctx.session.step("reading the witness", None, "values");
    let witness =
        groth16::read_witness(read("--witness", files.witness, FileKind::Witness)?.reader)
            .with_context(|| format!("{}: not a gnark witness", files.witness.display()))?;
    step.finish();
    let r1cs = super::phase2::read_r1cs(ctx, files.r1cs)?;
    let opened = read("--pk", files.pk, FileKind::ProvingKey)?;
    let pool = ctx.pool_for(&opened)?;
    let step = ctx.session.step("reading the key", None, "points");
    let checks = key_checks(files.trust_key);
    let not_a_key = || format!("{}: not a gnark BLS12-381 proving key", files.pk.display());
    let proving = || {
        format!(
            "proving with {} and {} for {}",
            files.pk.display(),
            files.r1cs.display(),
            files.witness.display()
        )
    };
    // A file is read a chunk of its vectors at a time (the key never whole in memory); a pipe,
    // which cannot be sought in, whole.
    let (proof, points) = if opened.len.is_some() {
        // The file sniffed, not the path opened again (KeyFile::open rewinds it).
        let (_, file) = opened.reader.into_inner().into_inner();
        let key = KeyFile::open(&pool, step.control(), file, &Limits::default(), checks)
            .with_context(not_a_key)?;
        step.finish();
        let points = key.msm_points();
        let step = ctx.session.step("proving", Some(points), "points");
        let proof = gnark_prover::prove_file(
            &pool,
            step.control(),
            &r1cs,
            &key,
            &witness,
            &Blinding::random(),
        )
        .with_context(proving)?;
        step.finish();
        (proof, points)
    } else {
        let limits = Limits {
            file_len: opened.len,
            ..Limits::default()
        };
        let (key, _) = ProvingKey::read_with(&pool, step.control(), opened.reader, &limits, checks)
            .with_context(not_a_key)?;
        step.finish();
        let points = key.msm_points();
        let step = ctx.session.step("proving", Some(points), "points");
        let proof = gnark_prover::prove(
            &pool,
            step.control(),
            &r1cs,
            &key,
            &witness,
            &Blinding::random(),
        )
        .with_context(proving)?;
        step.finish();
        (proof, points)
    };
    let public = &witness.values[..witness.public];
    let checked = match (&vk, files.vk) {
        (Some(vk), Some(path)) => {
            groth16::verify(vk, &proof, public).with_context(|| {
                format!(
                    "the proof does not verify under {}: a verifying key of another setup than {}?",
                    path.display(),
                    files.pk.display()
                )
            })?;
            ", the proof verified under the verifying key"
        }
        _ => "",
    };
    ctx.write_output(&mut outputs, 0, 0, |_, w| {
        proof
            .write(w)
            .map_err(lockstep_ceremony::CodecError::Io)
            .map(|()| [0u8; 32])
    })?;
    ctx.write_output(&mut outputs, 1, 0, |_, w| {
        groth16::write_public_witness(public, w)
            .map_err(lockstep_ceremony::CodecError::Io)
            .map(|()| [0u8; 32])
    })?;
    outputs.commit(&format!(
        "proved: {} public input(s), {} commitment(s){checked}\n",
        public.len(),
        proof.commitments.len()
    ))?;
    ctx.done("groth16 prove", points, started, &pool);
    Ok(())
}

/// `groth16 prepare --pk --out`: gnark's key checked and written uncompressed, a chunk at a
/// time.
pub(super) fn prepare(ctx: &Context, pk: &Path, out: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut outputs = ctx.stage(&[("--pk", pk)], &[("--out", out)])?;
    let opened = ctx.open("--pk", pk)?;
    opened.expect(FileKind::ProvingKey)?;
    let pool = ctx.pool_for(&opened)?;
    let not_a_key = || format!("{}: not a gnark BLS12-381 proving key", pk.display());
    let result = |wires: usize, hash: &[u8; 32]| {
        format!(
            "prepared: {wires} wires, every point checked in its subgroup, written uncompressed; sha256 {}\n",
            super::context::hex(hash)
        )
    };
    // A file is read a chunk of its vectors at a time, each point checked as it is written (the
    // key never whole in memory); a pipe, which cannot be sought in, whole.
    let points = if opened.len.is_some() {
        let step = ctx.session.step("reading the key's head", None, "points");
        // The file sniffed, not the path opened again (KeyFile::open rewinds it).
        let (_, file) = opened.reader.into_inner().into_inner();
        let key = KeyFile::open(
            &pool,
            step.control(),
            file,
            &Limits::default(),
            KeyChecks::Subgroups,
        )
        .with_context(not_a_key)?;
        step.finish();
        let points = key.msm_points();
        // A bad point is found as it is written: named with the file it came from.
        let hash = ctx
            .write_output(&mut outputs, 0, points, |control, w| {
                key.write_raw(&pool, control, w)
            })
            .with_context(|| format!("preparing {}", pk.display()))?;
        outputs.commit(&result(key.infinity_a.len(), &hash))?;
        points
    } else {
        let limits = Limits {
            file_len: opened.len,
            ..Limits::default()
        };
        let step = ctx
            .session
            .step("reading and checking the key", None, "points");
        let (key, _) = ProvingKey::read_with(
            &pool,
            step.control(),
            opened.reader,
            &limits,
            KeyChecks::Subgroups,
        )
        .with_context(not_a_key)?;
        step.finish();
        let points = key.msm_points();
        let hash = ctx.write_output(&mut outputs, 0, points, |control, w| {
            key.write_raw(&pool, control, w)
        })?;
        outputs.commit(&result(key.infinity_a.len(), &hash))?;
        points
    };
    ctx.done("groth16 prepare", points, started, &pool);
    Ok(())
}

/// Whether `path` (given as `flag`) holds JSON, snarkjs's files: its first non-blank byte `{`
/// or `[` (gnark's binary files start otherwise). A pipe is not peeked at (its bytes would be
/// gone): it is read as gnark's key, which may come through one.
pub(super) fn is_json(flag: &str, path: &Path) -> anyhow::Result<bool> {
    if lockstep_files::check_readable(flag, path)? == lockstep_files::Kind::Fifo {
        return Ok(false);
    }
    let mut file = lockstep_files::open_input(flag, path)?;
    let mut head = [0u8; 64];
    let n = std::io::Read::read(&mut file, &mut head)
        .with_context(|| format!("reading {}", path.display()))?;
    Ok(snarkjs::is_json(&head[..n]))
}

/// A snarkjs JSON file, whole; a ceremony file of another kind is named.
fn read_json(flag: &str, path: &Path) -> anyhow::Result<String> {
    let file = lockstep_files::open_input(flag, path)?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, snarkjs::JSON_LIMIT + 1),
        &mut bytes,
    )
    .with_context(|| format!("reading {}", path.display()))?;
    anyhow::ensure!(
        bytes.len() as u64 <= snarkjs::JSON_LIMIT,
        "{}: larger than {} bytes",
        path.display(),
        snarkjs::JSON_LIMIT
    );
    if let Some(kind) = FileKind::sniff(&bytes[..bytes.len().min(SNIFF_LEN)]) {
        anyhow::bail!(
            "{} is {}, not snarkjs's JSON ({flag}: a verification key, proof or public signals)",
            path.display(),
            kind.described()
        );
    }
    String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{}: not JSON (not UTF-8 text)", path.display()))
}

/// `groth16 verify` on snarkjs's files: `--vk verification_key.json --proof proof.json
/// --public public.json`, as `snarkjs groth16 verify`.
pub(super) fn verify_snarkjs(
    ctx: &Context,
    vk_path: &Path,
    proof_path: &Path,
    public_path: &Path,
) -> anyhow::Result<()> {
    let vk = snarkjs::verification_key_from_json(&read_json("--vk", vk_path)?)
        .with_context(|| format!("{}", vk_path.display()))?;
    let proof = snarkjs::proof_from_json(&read_json("--proof", proof_path)?)
        .with_context(|| format!("{}", proof_path.display()))?;
    let public = snarkjs::public_from_json(&read_json("--public", public_path)?)
        .with_context(|| format!("{}", public_path.display()))?;
    snarkjs::verify_with(&vk, &proof, &public)
        .map_err(|error| anyhow::anyhow!("{}: REJECTED: {error}", proof_path.display()))?;
    ctx.session.print(&format!(
        "{}: ok, a valid proof for {} public signal(s)\n",
        proof_path.display(),
        public.len()
    ))
}
