//! Phase 2 (per circuit) of the Groth16 ceremony, as gnark v0.15's `mpcsetup.Phase2` defines
//! it: initialized from a sealed phase 1 and a circuit's R1CS, its files byte for byte.
//!
//! [`initialize`] (parallel) and [`initialize_serial`] (the reference, gnark's loop on one
//! thread) return the same [`Phase2`] object and [`Evaluations`] at every worker count:
//! the Lagrange bases of tau, alpha tau and beta tau in G1 and of tau in G2 ([`crate::fft`]),
//! each wire's sums over the constraints that use it (left terms into `A` and `beta A`, right
//! into `B` in both groups and `alpha B`, output into `C`), `beta A + alpha B + C` per wire
//! split into the verifying key's public and commitment wires (`VKK`), the committed private
//! wires (`CKK`, one vector a commitment) and the rest (`PKK`), and
//! `Z_i = [tau^i (tau^N - 1)]_1` for `i < N - 1`, bit-reversed.
//!
//! # Parallelism
//! The transforms as [`crate::fft`] says. The constraints are read in batches of
//! [`BATCH_CONSTRAINTS`]; their terms go to the owner of their wire (`wire % workers`,
//! [`lockstep_shard::Owned`]), which applies them in constraint order, so no two workers touch
//! one wire; wires most terms use (the constant one) are spread over all owners and folded back
//! after each batch (exact group sums). `Z` and the per-wire sums are item-wise maps.
//!
//! # Memory
//! Beside the inputs: the four bases (`N` points each: `3 * 96 + 192` bytes a domain point),
//! the per-wire sums while they accumulate (five G1 and one G2 projective points, 1,008 bytes a
//! wire, plus the same per owner for each hot wire), one batch of routed terms (16 bytes a
//! term), then the outputs in affine form (`A`, `B`, `B2`, and `VKK`/`CKK`/`PKK`: `3 * 96 +
//! 192` bytes a wire; `Z`: 96 bytes a domain point). At `N` = 2^16 with as many wires:
//! about 128 MiB.

mod chain;
mod contribute;
mod file;
mod init;
mod key_file;
mod keys;
mod verify;

use blstrs::{G1Affine, G2Affine};

pub use crate::codec::KeyChecks;
pub use chain::{Chain, Start};
pub use contribute::{BEACON_DST, DST_DELTA, DST_SIGMA, Secrets, contribute, contribute_serial};
pub use init::{
    BATCH_CONSTRAINTS, fit_phase1, initialize, initialize_batched, initialize_object,
    initialize_serial, initialize_timed,
};
pub use key_file::KeyFile;
pub use keys::{KeyEncoding, KeyVector, Origin, ProvingKey, VerifyingKey, check_sealable, seal};
pub(crate) use keys::{RawParts, RawSource};
pub use verify::{Secret, VerifyError, verify_contribution, verify_descent};

use crate::phase1::UpdateProof;

/// The phase 2 object gnark's `Phase2.WriteTo` writes: the parameters a contribution updates,
/// the proofs of the last contribution, and the hash of the one before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase2 {
    /// `[delta]_1`.
    pub delta_g1: G1Affine,
    /// `[delta]_2`.
    pub delta_g2: G2Affine,
    /// The private wires' `(beta A + alpha B + C) / delta`, committed wires excluded.
    pub pkk: Vec<G1Affine>,
    /// `[tau^i (tau^N - 1) / delta]_1`, `i < N - 1`, bit-reversed.
    pub z: Vec<G1Affine>,
    /// Per commitment, `sigma_i` times its committed wires' `beta A + alpha B + C`.
    pub sigma_ckk: Vec<Vec<G1Affine>>,
    /// Per commitment, `[sigma_i]_2`.
    pub sigma_g2: Vec<G2Affine>,
    /// The proof of the last contribution's delta (zero in the initial object).
    pub delta_proof: UpdateProof,
    /// The proofs of the last contribution's sigmas.
    pub sigma_proofs: Vec<UpdateProof>,
    /// The SHA-256 of the previous object (none in the initial object).
    pub challenge: Option<[u8; 32]>,
}

/// What phase 2 derives from the circuit and phase 1 and no contribution changes: the keys'
/// circuit part (gnark's `Phase2Evaluations`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluations {
    /// Per wire, `[A_j(tau)]_1`.
    pub a: Vec<G1Affine>,
    /// Per wire, `[B_j(tau)]_1`.
    pub b: Vec<G1Affine>,
    /// Per wire, `[B_j(tau)]_2`.
    pub b2: Vec<G2Affine>,
    /// The public wires' (wire 0 included) and the commitment wires' `beta A + alpha B + C`.
    pub vkk: Vec<G1Affine>,
    /// Per commitment, its committed private wires' `beta A + alpha B + C`.
    pub ckk: Vec<Vec<G1Affine>>,
    /// Per commitment, the public wires it commits to, then earlier commitments as their
    /// positions among the public inputs (gnark's `PublicAndCommitmentCommitted`).
    pub public_and_commitment_committed: Vec<Vec<usize>>,
}

/// Why phase 2 could not be initialized.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Phase2Error {
    /// The phase 1 domain is smaller than the circuit.
    #[error(
        "the circuit has {constraints} constraints, more than the phase 1 domain N = {n} holds"
    )]
    Phase1TooSmall {
        /// The circuit's constraints.
        constraints: usize,
        /// The phase 1 domain size.
        n: usize,
    },
    /// A commitment commits to a commitment wire that is not among the circuit's commitments.
    #[error("commitment {index} commits to wire {wire}, which is no commitment's")]
    Commitment {
        /// The commitment.
        index: usize,
        /// The wire.
        wire: usize,
    },
    /// The object to seal is not of the circuit the evaluations are of.
    #[error("the object is not of this circuit: {0}")]
    Mismatch(String),
    /// The object to seal does not descend from the circuit's initial object over the phase 1
    /// ([`verify_descent`]).
    #[error(
        "the object does not descend from this circuit's initial object over this phase 1: {0}"
    )]
    Descent(#[source] VerifyError),
    /// The run was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// A worker stopped reporting progress, or panicked (a bug).
    #[error("worker failure: {0}")]
    Worker(String),
    /// A vector of the object, the transforms or the accumulation could not be allocated: an
    /// error, never an abort.
    #[error("{what}: {bytes} bytes cannot be allocated")]
    Memory {
        /// The vector.
        what: &'static str,
        /// The bytes refused.
        bytes: usize,
    },
}

impl Phase2 {
    /// Whether this is an initial object: no challenge and zero proofs (its points are the
    /// circuit's over its phase 1, which only re-deriving them can check).
    pub fn is_initial(&self) -> bool {
        self.challenge.is_none()
            && self.delta_proof.is_zero()
            && self.sigma_proofs.iter().all(UpdateProof::is_zero)
    }

    /// The points the object holds (for worker counts and reports).
    pub fn points(&self) -> u64 {
        (self.z.len() + self.pkk.len() + self.sigma_ckk.iter().map(Vec::len).sum::<usize>()) as u64
    }
}

impl Phase2Error {
    /// The error for `what`, which could not be allocated.
    pub(crate) fn memory(
        what: &'static str,
    ) -> impl FnOnce(lockstep_shard::memory::AllocError) -> Self {
        move |error| Self::Memory {
            what,
            bytes: error.bytes,
        }
    }
}

impl<E> From<lockstep_shard::Error<E>> for Phase2Error
where
    lockstep_shard::Error<E>: std::fmt::Display,
{
    fn from(error: lockstep_shard::Error<E>) -> Self {
        match error {
            lockstep_shard::Error::Cancelled => Self::Cancelled,
            lockstep_shard::Error::Memory(error) => Self::Memory {
                what: "a parallel run's output",
                bytes: error.bytes,
            },
            other => Self::Worker(other.to_string()),
        }
    }
}
