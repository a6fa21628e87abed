//! Phase 1 of the Groth16 MPC (powers of tau), as gnark v0.15's
//! `backend/groth16/bls12-381/mpcsetup`: the same objects, the same bytes, the same checks.
//!
//! A ceremony is a chain: the initial object ([`Phase1::initial`]), then contributions, each
//! made from its predecessor with fresh secrets ([`contribute`]) and carrying the SHA-256 of
//! its predecessor's bytes as its challenge, then a seal from a public random beacon
//! ([`seal`]) that yields the final [`Srs`].

mod chain;
mod file;
mod proof;
mod srs;
mod update;
mod verify;

use std::convert::Infallible;

use lockstep_shard::{Control, Pool};
use sha2::{Digest, Sha256};

pub use chain::Chain;
pub use file::{phase1_len, srs_len};
pub(crate) use proof::pok_base_dst;
pub use proof::{UpdateProof, Value};
pub use srs::Srs;
pub use update::{Secrets, update, update_serial};
pub(crate) use verify::first_bad_point;
pub use verify::{VerifyError, check_powers, verify_contribution};

use crate::codec::CodecError;
use crate::curve;

/// The three update proofs of a contribution (all zero in the initial object).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Proofs {
    /// For tau.
    pub tau: UpdateProof,
    /// For alpha.
    pub alpha: UpdateProof,
    /// For beta.
    pub beta: UpdateProof,
}

/// One object of the phase 1 chain (gnark's `Phase1`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase1 {
    /// The contributor's update proofs.
    pub proofs: Proofs,
    /// The SRS after this contribution.
    pub srs: Srs,
    /// SHA-256 of the predecessor's bytes; `None` in the initial object only.
    pub challenge: Option<[u8; 32]>,
}

impl Phase1 {
    /// The initial object for domain size `2^power` (gnark's `NewPhase1(N)`).
    ///
    /// # Errors
    /// [`CodecError::Memory`] if its vectors cannot be allocated.
    ///
    /// # Panics
    /// If `power` is 0 or above 40 (the CLI bounds it).
    pub fn initial(power: u32) -> Result<Self, CodecError> {
        Ok(Self {
            proofs: Proofs::default(),
            srs: Srs::one(power)?,
            challenge: None,
        })
    }

    /// Whether this is an initial object: no challenge, zero proofs, every point a generator.
    pub fn is_initial(&self) -> bool {
        let (g1, g2) = (curve::g1(), curve::g2());
        let srs = &self.srs;
        self.challenge.is_none()
            && self.proofs == Proofs::default()
            && srs.beta_g2 == g2
            && srs.g2_tau.iter().all(|p| *p == g2)
            && [&srs.g1_tau, &srs.alpha_tau, &srs.beta_tau]
                .iter()
                .all(|v| v.iter().all(|p| *p == g1))
    }
}

/// Domain separation tag of the beacon (gnark's `Seal`).
pub const BEACON_DST: &[u8] = b"Groth16 MPC Setup - Phase 1";

/// Domain separation tag under which a contribution's secrets are derived from the operating
/// system's randomness and the contributor's entropy.
const CONTRIBUTION_DST: &[u8] = b"lockstep ceremony phase 1 contribution secrets";

/// The most entropy text a contributor may mix in (1 MiB): more is surely a mistake (a file
/// piped by accident), and front ends refuse it before reading further.
pub const MAX_ENTROPY_BYTES: usize = 1 << 20;

impl Secrets {
    /// Fresh secrets: 64 bytes of operating-system randomness, mixed with the SHA-256 of the
    /// contributor's `entropy` (may be empty) through `expand_message_xmd`, 64 bytes reduced
    /// modulo r per secret; zero is redrawn. Intermediate bytes are wiped.
    pub fn random(entropy: &[u8]) -> Self {
        use rand_core::RngCore;
        use zeroize::Zeroize;
        loop {
            let mut seed = [0u8; 96];
            rand_core::OsRng.fill_bytes(&mut seed[..64]);
            seed[64..].copy_from_slice(&Sha256::digest(entropy));
            let mut wide = [0u8; 192];
            curve::expand_message_xmd(&mut wide, &seed, CONTRIBUTION_DST);
            seed.zeroize();
            let secrets = Self::from_scalars(
                curve::scalar_from_be_wide(&wide[..64]),
                curve::scalar_from_be_wide(&wide[64..128]),
                curve::scalar_from_be_wide(&wide[128..]),
            );
            wide.zeroize();
            let zero = blstrs::Scalar::from(0u64);
            if secrets.tau != zero && secrets.alpha != zero && secrets.beta != zero {
                return secrets;
            }
        }
    }

    /// The beacon's secrets (gnark's `BeaconContributions`): `fr.Hash(sha256(last object) ||
    /// beacon, "Groth16 MPC Setup - Phase 1", 3)`, redone with `=` appended while one is zero.
    pub fn beacon(last_hash: &[u8; 32], beacon: &[u8]) -> Self {
        let mut msg = Vec::with_capacity(32 + beacon.len() + 1);
        msg.extend_from_slice(last_hash);
        msg.extend_from_slice(beacon);
        loop {
            let [tau, alpha, beta] = curve::hash_to_scalars::<3>(&msg, BEACON_DST);
            let zero = blstrs::Scalar::from(0u64);
            if tau != zero && alpha != zero && beta != zero {
                return Self::from_scalars(tau, alpha, beta);
            }
            msg.push(b'=');
        }
    }
}

/// The most SHA-256 iterations a seal applies to its beacon: 2^32, about seven minutes at
/// ~100 ns a hash. A delay is meant to take minutes, not to run forever on a typo.
pub const MAX_BEACON_ITERATIONS: u64 = 1 << 32;

/// Iterations between two progress reports (and cancellation checks) of
/// [`beacon_challenge_with`]: about 0.1 s.
const BEACON_BLOCK: u64 = 1 << 20;

/// The beacon bytes gnark's `Seal` takes, from a public beacon value and a number of SHA-256
/// iterations (a delay: 0 passes the value as is, `k` hashes it `k` times).
pub fn beacon_challenge(beacon: &[u8], iterations: u64) -> Vec<u8> {
    let mut value = beacon.to_vec();
    for _ in 0..iterations {
        value = Sha256::digest(&value).to_vec();
    }
    value
}

/// [`beacon_challenge`], reporting each block of iterations to `control`'s progress and
/// stopping when it is cancelled; iterations above [`MAX_BEACON_ITERATIONS`] are refused.
///
/// # Errors
/// [`CodecError::TooManyIterations`] above the maximum, before any work;
/// [`CodecError::Cancelled`].
pub fn beacon_challenge_with(
    control: &Control,
    beacon: &[u8],
    iterations: u64,
) -> Result<Vec<u8>, CodecError> {
    if iterations > MAX_BEACON_ITERATIONS {
        return Err(CodecError::TooManyIterations {
            iterations,
            max: MAX_BEACON_ITERATIONS,
        });
    }
    control.progress().start(Some(iterations));
    let mut value = beacon.to_vec();
    let mut done = 0;
    while done < iterations {
        if control.is_cancelled() {
            return Err(CodecError::Cancelled);
        }
        let block = BEACON_BLOCK.min(iterations - done);
        for _ in 0..block {
            value = Sha256::digest(&value).to_vec();
        }
        done += block;
        control.progress().advance(block);
    }
    Ok(value)
}

/// The next object of the chain: `previous` updated by `secrets`, with update proofs under the
/// challenge `previous_hash` (the SHA-256 of the predecessor's bytes, as [`Phase1::read`] and
/// [`Phase1::write`] return it). Equal at every worker count to the serial
/// [`contribute_serial`].
///
/// # Errors
/// Cancellation or a stall of the run.
pub fn contribute(
    pool: &Pool,
    control: &Control,
    previous: Phase1,
    previous_hash: &[u8; 32],
    secrets: &Secrets,
) -> Result<Phase1, lockstep_shard::Error<Infallible>> {
    let mut next = with_proofs(previous, previous_hash, secrets);
    update(pool, control, &mut next.srs, secrets)?;
    Ok(next)
}

/// The serial reference of [`contribute`].
pub fn contribute_serial(previous: Phase1, previous_hash: &[u8; 32], secrets: &Secrets) -> Phase1 {
    let mut next = with_proofs(previous, previous_hash, secrets);
    update_serial(&mut next.srs, secrets);
    next
}

fn with_proofs(previous: Phase1, previous_hash: &[u8; 32], secrets: &Secrets) -> Phase1 {
    let proofs = Proofs {
        tau: UpdateProof::new(&secrets.tau, previous_hash, Value::Tau),
        alpha: UpdateProof::new(&secrets.alpha, previous_hash, Value::Alpha),
        beta: UpdateProof::new(&secrets.beta, previous_hash, Value::Beta),
    };
    Phase1 {
        proofs,
        srs: previous.srs,
        challenge: Some(*previous_hash),
    }
}

/// The sealed SRS (gnark's `Seal`): the last object's SRS updated by the beacon's secrets
/// ([`Secrets::beacon`]). `last_hash` is the SHA-256 of the last object's bytes.
///
/// # Errors
/// Cancellation or a stall of the run.
pub fn seal(
    pool: &Pool,
    control: &Control,
    last: Phase1,
    last_hash: &[u8; 32],
    beacon: &[u8],
) -> Result<Srs, lockstep_shard::Error<Infallible>> {
    let secrets = Secrets::beacon(last_hash, beacon);
    let mut srs = last.srs;
    update(pool, control, &mut srs, &secrets)?;
    Ok(srs)
}
