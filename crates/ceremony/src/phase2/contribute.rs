//! Contributions (gnark's `Phase2.Contribute`) and the beacon's final update (`Seal`): a
//! secret delta, and a secret sigma per commitment.

use std::convert::Infallible;

use blstrs::{G1Affine, G1Projective, Scalar};
use ff::Field;
use group::Curve;
use lockstep_shard::{Control, Cut, Error, Pool};
use sha2::{Digest, Sha256};

use super::Phase2;
use crate::curve;
use crate::phase1::UpdateProof;

/// The hash-to-G2 DST byte of delta's update proof (gnark's `DST_DELTA`); sigma `i` uses
/// `DST_SIGMA + i`.
pub const DST_DELTA: u8 = 0;

/// The first sigma's DST byte (gnark's `DST_SIGMA`).
pub const DST_SIGMA: u8 = 1;

/// Domain separation tag of the beacon (gnark's `Seal`: no space before the 2).
pub const BEACON_DST: &[u8] = b"Groth16 MPC Setup - Phase2";

/// Domain separation tag under which a contribution's secrets are derived from the operating
/// system's randomness and the contributor's entropy.
const CONTRIBUTION_DST: &[u8] = b"lockstep ceremony phase 2 contribution secrets";

/// Points per block of the parallel scalings: one batched affine conversion a block.
const SCALE_BLOCK: usize = 256;

/// A contribution's secrets, delta and one sigma per commitment. Wiped when dropped; never
/// written, logged or printed.
pub struct Secrets {
    pub(crate) delta: Scalar,
    pub(crate) sigmas: Vec<Scalar>,
}

impl Secrets {
    /// Secrets from known values (tests, and the beacon, whose values are public).
    pub fn from_scalars(delta: Scalar, sigmas: Vec<Scalar>) -> Self {
        Self { delta, sigmas }
    }

    /// Fresh secrets for an object with `commitments` commitments: 64 bytes of operating-system
    /// randomness and the SHA-256 of the contributor's `entropy`, then per secret `i`
    /// (delta first) 64 bytes of `expand_message_xmd(seed || i)` reduced modulo r; zero is
    /// redrawn. Intermediate bytes are wiped.
    ///
    /// # Panics
    /// If `commitments` is 2^32 or more.
    pub fn random(entropy: &[u8], commitments: usize) -> Self {
        use rand_core::RngCore;
        use zeroize::Zeroize;
        loop {
            let mut seed = [0u8; 100];
            rand_core::OsRng.fill_bytes(&mut seed[..64]);
            seed[64..96].copy_from_slice(&Sha256::digest(entropy));
            let mut wide = [0u8; 64];
            let mut draw = |i: usize| {
                let index = u32::try_from(i).expect("invariant: fewer than 2^32 commitments");
                seed[96..].copy_from_slice(&index.to_be_bytes());
                curve::expand_message_xmd(&mut wide, &seed, CONTRIBUTION_DST);
                curve::scalar_from_be_wide(&wide)
            };
            let delta = draw(0);
            let sigmas = (1..=commitments).map(&mut draw).collect();
            let secrets = Self::from_scalars(delta, sigmas);
            seed.zeroize();
            wide.zeroize();
            if secrets.all_non_zero() {
                return secrets;
            }
        }
    }

    /// The beacon's values (gnark's `BeaconContributions(hash, "Groth16 MPC Setup - Phase2",
    /// beacon, 1 + commitments)`): `fr.Hash(last_hash || beacon)`, redone with `=` appended
    /// while one is zero.
    ///
    /// # Panics
    /// Above [`MAX_COMMITMENTS`](crate::r1cs::MAX_COMMITMENTS) commitments (gnark panics
    /// there too; readers refuse such objects).
    pub fn beacon(last_hash: &[u8; 32], beacon: &[u8], commitments: usize) -> Self {
        let mut msg = Vec::with_capacity(32 + beacon.len() + 1);
        msg.extend_from_slice(last_hash);
        msg.extend_from_slice(beacon);
        loop {
            let mut all = curve::hash_to_scalar_vec(&msg, BEACON_DST, 1 + commitments);
            let delta = all.remove(0);
            let secrets = Self::from_scalars(delta, all);
            if secrets.all_non_zero() {
                return secrets;
            }
            msg.push(b'=');
        }
    }

    fn all_non_zero(&self) -> bool {
        !bool::from(self.delta.is_zero()) && self.sigmas.iter().all(|s| !bool::from(s.is_zero()))
    }
}

impl Drop for Secrets {
    fn drop(&mut self) {
        curve::wipe_scalar(&mut self.delta);
        for s in &mut self.sigmas {
            curve::wipe_scalar(s);
        }
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secrets(..)")
    }
}

/// The next object of the chain: `previous` updated by `secrets`, with update proofs under
/// the challenge `previous_hash` (the SHA-256 of the predecessor's bytes). Equal at every
/// worker count to [`contribute_serial`].
///
/// Key material: the secrets are read here and by the workers' scalings (blst's
/// constant-time multiplication); `delta^-1` lives in this call and is wiped before it returns.
///
/// # Errors
/// Cancellation or a stall of the run.
///
/// # Panics
/// If `secrets` has another number of sigmas than `previous` has commitments (a caller's bug:
/// [`Secrets::random`] takes the count from the object).
pub fn contribute(
    pool: &Pool,
    control: &Control,
    previous: Phase2,
    previous_hash: &[u8; 32],
    secrets: &Secrets,
) -> Result<Phase2, Error<Infallible>> {
    let mut next = with_proofs(previous, previous_hash, secrets);
    update(pool, control, &mut next, secrets)?;
    Ok(next)
}

/// The serial reference of [`contribute`].
///
/// # Panics
/// As [`contribute`].
pub fn contribute_serial(previous: Phase2, previous_hash: &[u8; 32], secrets: &Secrets) -> Phase2 {
    let mut next = with_proofs(previous, previous_hash, secrets);
    update_serial(&mut next, secrets);
    next
}

fn with_proofs(mut previous: Phase2, previous_hash: &[u8; 32], secrets: &Secrets) -> Phase2 {
    assert_eq!(
        secrets.sigmas.len(),
        previous.sigma_g2.len(),
        "invariant: one sigma per commitment"
    );
    previous.challenge = Some(*previous_hash);
    previous.delta_proof = UpdateProof::with_dst(&secrets.delta, previous_hash, DST_DELTA);
    previous.sigma_proofs = secrets
        .sigmas
        .iter()
        .enumerate()
        .map(|(i, s)| UpdateProof::with_dst(s, previous_hash, sigma_dst(i)))
        .collect();
    previous
}

/// Sigma `i`'s DST byte.
pub(crate) fn sigma_dst(i: usize) -> u8 {
    u8::try_from(usize::from(DST_SIGMA) + i).expect("invariant: at most 255 commitments")
}

/// gnark's `update`: the sigmas into `[sigma_i]_2` and `SigmaCKK[i]`, delta into `[delta]_1`
/// and `[delta]_2`, `delta^-1` into `Z` and `PKK`. Serial, one conversion a point.
pub(crate) fn update_serial(p: &mut Phase2, secrets: &Secrets) {
    for (i, s) in secrets.sigmas.iter().enumerate() {
        p.sigma_g2[i] = (p.sigma_g2[i] * s).to_affine();
        for point in &mut p.sigma_ckk[i] {
            *point = (*point * s).to_affine();
        }
    }
    p.delta_g2 = (p.delta_g2 * secrets.delta).to_affine();
    p.delta_g1 = (p.delta_g1 * secrets.delta).to_affine();
    let mut inverse = inverse(&secrets.delta);
    for point in p.z.iter_mut().chain(p.pkk.iter_mut()) {
        *point = (*point * inverse).to_affine();
    }
    curve::wipe_scalar(&mut inverse);
}

/// [`update_serial`] with the vectors scaled on `pool`.
pub(crate) fn update(
    pool: &Pool,
    control: &Control,
    p: &mut Phase2,
    secrets: &Secrets,
) -> Result<(), Error<Infallible>> {
    for (i, s) in secrets.sigmas.iter().enumerate() {
        p.sigma_g2[i] = (p.sigma_g2[i] * s).to_affine();
        scale(pool, control, &mut p.sigma_ckk[i], s)?;
    }
    p.delta_g2 = (p.delta_g2 * secrets.delta).to_affine();
    p.delta_g1 = (p.delta_g1 * secrets.delta).to_affine();
    let mut inverse = inverse(&secrets.delta);
    let result = scale(pool, control, &mut p.z, &inverse)
        .and_then(|()| scale(pool, control, &mut p.pkk, &inverse));
    curve::wipe_scalar(&mut inverse);
    result
}

fn inverse(delta: &Scalar) -> Scalar {
    delta
        .invert()
        .expect("invariant: secrets are non-zero (drawn so, and the beacon's redrawn)")
}

/// `points[i] *= s` for every point, blocks converted to affine together.
fn scale(
    pool: &Pool,
    control: &Control,
    points: &mut [G1Affine],
    s: &Scalar,
) -> Result<(), Error<Infallible>> {
    pool.for_each_block(
        control,
        points,
        Cut::Blocks(SCALE_BLOCK),
        |_, _, block: &mut [G1Affine]| {
            let scaled: Vec<G1Projective> = block.iter().map(|p| p * s).collect();
            curve::g1_to_affine(&scaled, block);
            Ok(())
        },
    )
}
