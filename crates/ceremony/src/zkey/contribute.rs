//! `snarkjs zkey contribute` and `zkey beacon` (`zkey_contribute.js`, `zkey_beacon.js`): a new
//! delta, byte for byte as snarkjs builds it.
//!
//! From the generator ([`Draws`]): the secret `k` (`Fr.fromRng`), then `[s]_1` (`G1.fromRng`);
//! `[s k]_1`; the transcript, blake2b-512 of the circuit hash, every earlier contribution's
//! public key (`deltaAfter`, `g1_s`, `g1_sx`, `g2_spx`, transcript: 544 bytes in snarkjs's
//! uncompressed form) and `[s]_1`, `[s k]_1`; `[s' k]_2` for `s'` the transcript's hash to G2;
//! `delta` times `k`; sections 8 (`C`) and 9 (`H`) times `k^-1`. A beacon draws from SHA-256
//! iterated `2^exp` times over its hash, so the same inputs give the same bytes as snarkjs.
//!
//! # Secrets
//! `k` and `k^-1` are multiplied on blst's constant-time paths only, on the workers (each
//! point of sections 8 and 9 one multiplication), and wiped when done; the generator that drew
//! `k` is dropped before any point is multiplied. Nothing secret is written, printed or logged.

use std::convert::Infallible;

use blake2::{Blake2b512, Digest};
use blstrs::{G1Affine, G1Projective, Scalar};
use ff::Field;
use group::Curve;
use lockstep_shard::{Control, Cut, Pool};

use super::hash::{g1_u, g2_u};
use super::rng::{Draws, hash_to_g2};
use super::{Contribution, Zkey, ZkeyError};
use crate::curve;

/// Points per block of the scaling.
const BLOCK: usize = 256;

/// A contribution's public key as snarkjs hashes it (`hashPubKey`).
pub(crate) fn public_key_bytes(c: &Contribution) -> Vec<u8> {
    let mut out = Vec::with_capacity(544);
    out.extend(g1_u(&c.delta_after));
    out.extend(g1_u(&c.g1_s));
    out.extend(g1_u(&c.g1_sx));
    out.extend(g2_u(&c.g2_spx));
    out.extend(c.transcript);
    out
}

/// The contribution hash snarkjs prints: blake2b-512 of the public key.
pub fn contribution_hash(c: &Contribution) -> [u8; 64] {
    Blake2b512::digest(public_key_bytes(c)).into()
}

/// The transcript a contribution following `earlier` makes with `[s]_1`, `[s k]_1`.
pub(crate) fn transcript(
    circuit_hash: &[u8; 64],
    earlier: &[Contribution],
    g1_s: &G1Affine,
    g1_sx: &G1Affine,
) -> [u8; 64] {
    let mut h = Blake2b512::new();
    h.update(circuit_hash);
    for c in earlier {
        h.update(public_key_bytes(c));
    }
    h.update(g1_u(g1_s));
    h.update(g1_u(g1_sx));
    h.finalize().into()
}

/// What a contribution records besides its points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A participant's contribution (its randomness from the operating system and entropy).
    Contribution,
    /// A beacon: its hash and iteration exponent.
    Beacon {
        /// The beacon's bytes (1 to 255).
        hash: Vec<u8>,
        /// SHA-256 is applied `2^exp` times (10 to 32 here; snarkjs takes up to 63).
        exp: u8,
    },
}

/// `k` and `[s]_1` drawn from `draws` (the generator is consumed, and dropped here).
fn key_and_base(mut draws: Draws) -> (Scalar, G1Affine) {
    let k = draws.scalar();
    let g1_s = draws.g1();
    (k, g1_s)
}

/// `points * factor` on the pool, on blst's constant-time multiplication (`factor` is secret).
fn scale(
    pool: &Pool,
    control: &Control,
    points: &[G1Affine],
    factor: &Scalar,
) -> Result<Vec<G1Affine>, ZkeyError> {
    let mut out = lockstep_shard::memory::try_filled(points.len(), G1Affine::default())
        .map_err(ZkeyError::memory("the scaled points"))?;
    pool.for_each_block(
        control,
        (points, &mut out[..]),
        Cut::Blocks(BLOCK),
        |_, _, (input, output): (&[G1Affine], &mut [G1Affine])| {
            let scaled: Vec<G1Projective> = input
                .iter()
                .map(|p| G1Projective::from(p) * factor)
                .collect();
            curve::g1_to_affine(&scaled, output);
            Ok::<_, Infallible>(())
        },
    )?;
    Ok(out)
}

/// Applies the key drawn from `draws` to `key`: the next key and the contribution's hash.
fn apply(
    pool: &Pool,
    control: &Control,
    mut key: Zkey,
    draws: Draws,
    name: Option<&str>,
    kind: Kind,
) -> Result<(Zkey, [u8; 64]), ZkeyError> {
    let (mut k, g1_s) = key_and_base(draws);
    let g1_sx = (G1Projective::from(g1_s) * k).to_affine();
    let transcript = transcript(&key.circuit_hash, &key.contributions, &g1_s, &g1_sx);
    let g2_spx = (blstrs::G2Projective::from(hash_to_g2(&transcript)) * k).to_affine();
    key.header.delta1 = (G1Projective::from(key.header.delta1) * k).to_affine();
    key.header.delta2 = (blstrs::G2Projective::from(key.header.delta2) * k).to_affine();
    let mut k_inv = Option::<Scalar>::from(k.invert())
        .expect("invariant: k is not 0 (Fr.fromRng draws 0 with probability 2^-255)");
    curve::wipe_scalar(&mut k);
    let scaled = scale(pool, control, &key.c, &k_inv)
        .and_then(|c| Ok((c, scale(pool, control, &key.h, &k_inv)?)));
    curve::wipe_scalar(&mut k_inv);
    let (c, h) = scaled?;
    key.c = c;
    key.h = h;
    let (iterations_exp, beacon_hash, kind) = match kind {
        Kind::Contribution => (None, None, 0),
        Kind::Beacon { hash, exp } => (Some(exp), Some(hash), 1),
    };
    let record = Contribution {
        delta_after: key.header.delta1,
        g1_s,
        g1_sx,
        g2_spx,
        transcript,
        kind,
        name: name.map(str::to_owned),
        iterations_exp,
        beacon_hash,
    };
    let hash = contribution_hash(&record);
    key.contributions.push(record);
    Ok((key, hash))
}

/// `zkey contribute`: a contribution with randomness from the operating system mixed with
/// `entropy` (as snarkjs: blake2b-512 of 64 OS bytes and the entropy), named `name`. Returns
/// the next key (to write in [`super::ORDER`]) and the contribution hash to publish.
///
/// # Errors
/// Memory, cancellation, a stall of the run.
///
/// # Panics
/// If the drawn key is 0 (probability 2^-255).
pub fn contribute(
    pool: &Pool,
    control: &Control,
    key: Zkey,
    name: Option<&str>,
    entropy: &[u8],
) -> Result<(Zkey, [u8; 64]), ZkeyError> {
    apply(
        pool,
        control,
        key,
        Draws::contribution(entropy),
        name,
        Kind::Contribution,
    )
}

/// `zkey beacon`: the contribution of a public beacon `hash` (1 to 255 bytes) through `2^exp`
/// SHA-256 iterations (`exp` from 10 to 32): deterministic, snarkjs's bytes for the same
/// inputs.
///
/// # Errors
/// [`ZkeyError::Format`] for a hash or an exponent out of range; the iterations' cancellation.
///
/// # Panics
/// If the drawn key is 0 (probability 2^-255).
pub fn beacon(
    pool: &Pool,
    control: &Control,
    key: Zkey,
    name: Option<&str>,
    hash: &[u8],
    exp: u8,
) -> Result<(Zkey, [u8; 64]), ZkeyError> {
    check_beacon(hash, exp)?;
    let draws = Draws::beacon(control, hash, exp)?;
    apply(
        pool,
        control,
        key,
        draws,
        name,
        Kind::Beacon {
            hash: hash.to_vec(),
            exp,
        },
    )
}

/// A beacon's hash and exponent as snarkjs bounds them (1 to 255 bytes; 10 to 63), and the
/// exponent within the 2^32 iterations lockstep applies.
pub(crate) fn check_beacon(hash: &[u8], exp: u8) -> Result<(), ZkeyError> {
    if hash.is_empty() || hash.len() > 255 {
        return Err(ZkeyError::Format(format!(
            "a beacon hash of {} bytes: 1 to 255 are taken",
            hash.len()
        )));
    }
    if !(10..=32).contains(&exp) {
        return Err(ZkeyError::Format(format!(
            "beacon iteration exponent {exp}: 10 to 32 are taken (2^32 SHA-256 iterations take minutes; snarkjs's 33 to 63 would take hours to centuries)"
        )));
    }
    Ok(())
}

/// The beacon's `k` and `[s]_1`, `[s k]_1` as a verifier recomputes them.
pub(crate) fn beacon_key(
    control: &Control,
    hash: &[u8],
    exp: u8,
) -> Result<(G1Affine, G1Affine), ZkeyError> {
    let (mut k, g1_s) = key_and_base(Draws::beacon(control, hash, exp)?);
    let g1_sx = (G1Projective::from(g1_s) * k).to_affine();
    curve::wipe_scalar(&mut k);
    Ok((g1_s, g1_sx))
}
