//! snarkjs's Groth16 `.zkey` over BLS12-381, byte for byte as snarkjs 0.7.6 writes it: the
//! initial key of a circom circuit ([`new`]), and the file ([`Zkey::read`], [`Zkey::write`]).
//!
//! # Layout (iden3 container `"zkey"`, version 1, 10 sections)
//! 1. u32 1 (Groth16).
//! 2. The header: u32 48, q, u32 32, r, u32 `nVars`, u32 `nPublic`, u32 `domainSize`, then
//!    `alpha_1`, `beta_1`, `beta_2`, `gamma_2`, `delta_1`, `delta_2`.
//! 3. `IC`: `nPublic + 1` G1 points.
//! 4. The coefficients: a u32 count, then entries of u32 matrix (0 = A, 1 = B), u32 constraint,
//!    u32 signal and the coefficient times `R^2` mod r (32 bytes LE).
//! 5. `A`, 6. `B1` (G1), 7. `B2` (G2): `nVars` points each.
//! 8. `C`: `nVars - nPublic - 1` G1 points, divided by delta.
//! 9. `H`: `domainSize` G1 points, divided by delta.
//! 10. The circuit hash (64 bytes, blake2b-512) and the contributions.
//!
//! Points are affine, coordinates little-endian in Montgomery form (as in `.ptau` files),
//! infinity all zeros. `zkey new` writes the sections in the order 1, 2, 4, 3, 9, 8, 5, 6, 7,
//! 10; `zkey contribute` and `beacon` in 1..10: [`Zkey::write`] takes the order.

mod contribute;
mod file;
mod hash;
mod key_file;
mod known;
mod new;
mod rng;
mod verify;
pub(crate) mod vkey;

use blstrs::{G1Affine, G2Affine};

pub use contribute::{Kind, beacon, contribute, contribution_hash};
pub(crate) use file::check_coefficients;
pub use file::{NEW_ORDER, ORDER, contribution_len};
pub use hash::{HashedPoints, circuit_hash, format_hash, hashed_h_points};
pub use key_file::{ZkeyFile, ZkeyVector};
pub use known::from_known_secrets;
pub use new::{new, new_checks, new_serial, new_work};
pub use verify::{
    Verification, Verified, ZkeyVerifyError, verify, verify_contribution, verify_file,
};
pub use vkey::verification_key_json;

use crate::binfile::BinfileError;
use crate::circom::CircomError;
use crate::codec::CodecError;
use crate::ptau::PtauError;

/// What a `.zkey`'s header holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Wires, the constant 1 included.
    pub n_vars: u32,
    /// Public signals (outputs and public inputs).
    pub n_public: u32,
    /// The domain's power (`domainSize = 2^power`).
    pub power: u32,
    /// `[alpha]_1`.
    pub alpha1: G1Affine,
    /// `[beta]_1`.
    pub beta1: G1Affine,
    /// `[beta]_2`.
    pub beta2: G2Affine,
    /// `[gamma]_2` (the generator: snarkjs never changes it).
    pub gamma2: G2Affine,
    /// `[delta]_1`.
    pub delta1: G1Affine,
    /// `[delta]_2`.
    pub delta2: G2Affine,
}

/// One contribution recorded in section 10.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contribution {
    /// `[delta]_1` after it.
    pub delta_after: G1Affine,
    /// The proof of knowledge: `[s]_1`, `[s x]_1`, `[s' x]_2` for the transcript's point `s'`.
    pub g1_s: G1Affine,
    /// `[s x]_1`.
    pub g1_sx: G1Affine,
    /// `[s' x]_2`.
    pub g2_spx: G2Affine,
    /// The transcript it was made on (blake2b-512).
    pub transcript: [u8; 64],
    /// 0 for a contribution, 1 for a beacon.
    pub kind: u32,
    /// The contributor's name, if given.
    pub name: Option<String>,
    /// A beacon's iteration exponent.
    pub iterations_exp: Option<u8>,
    /// A beacon's hash.
    pub beacon_hash: Option<Vec<u8>>,
}

/// A snarkjs Groth16 `.zkey`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Zkey {
    /// Section 2.
    pub header: Header,
    /// Section 3.
    pub ic: Vec<G1Affine>,
    /// Section 4, as stored (the count, then 44 bytes an entry).
    pub coefficients: Vec<u8>,
    /// Section 5.
    pub a: Vec<G1Affine>,
    /// Section 6.
    pub b1: Vec<G1Affine>,
    /// Section 7.
    pub b2: Vec<G2Affine>,
    /// Section 8.
    pub c: Vec<G1Affine>,
    /// Section 9.
    pub h: Vec<G1Affine>,
    /// The circuit hash (section 10).
    pub circuit_hash: [u8; 64],
    /// The contributions (section 10), in order.
    pub contributions: Vec<Contribution>,
}

impl Zkey {
    /// The domain's size.
    pub fn domain_size(&self) -> usize {
        1 << self.header.power
    }
}

/// Why a `.zkey` could not be made, read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ZkeyError {
    /// The container.
    #[error(transparent)]
    Binfile(#[from] BinfileError),
    /// A read or write error, a bad point, cancellation.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// The circuit's file.
    #[error(transparent)]
    Circom(#[from] CircomError),
    /// The `.ptau`.
    #[error(transparent)]
    Ptau(#[from] PtauError),
    /// Another protocol than Groth16.
    #[error("section 1: protocol {0}, not Groth16 (1): a PLONK or FFLONK key")]
    Protocol(u32),
    /// Another curve.
    #[error("the key is for another curve ({0}), not BLS12-381")]
    Curve(String),
    /// The header or a section disagrees with the format.
    #[error("{0}")]
    Format(String),
    /// A circuit snarkjs's circuit hash cannot be computed for from the powers alone.
    #[error(
        "a circuit of 2^{power} rows on a .ptau of power {power}: snarkjs's circuit hash for it reads one point past the .ptau's tauG1 (bytes of the next section), so no key made from these powers can be checked against snarkjs's; use a .ptau of power {} or more",
        .power + 1
    )]
    HashPastPowers {
        /// The circuit's and the `.ptau`'s power.
        power: u32,
    },
    /// Memory could not be allocated.
    #[error("{what}: {refused}")]
    Memory {
        /// What was being allocated.
        what: &'static str,
        /// The bytes refused.
        refused: lockstep_shard::memory::AllocError,
    },
    /// A worker failed (a bug), or the run stalled.
    #[error("worker failure: {0}")]
    Worker(String),
}

impl ZkeyError {
    pub(crate) fn memory(
        what: &'static str,
    ) -> impl FnOnce(lockstep_shard::memory::AllocError) -> Self {
        move |refused| Self::Memory { what, refused }
    }
}

impl<E> From<lockstep_shard::Error<E>> for ZkeyError
where
    lockstep_shard::Error<E>: std::fmt::Display,
{
    fn from(error: lockstep_shard::Error<E>) -> Self {
        match error {
            lockstep_shard::Error::Cancelled => Self::Codec(CodecError::Cancelled),
            lockstep_shard::Error::Memory(refused) => Self::Memory {
                what: "a parallel run's output",
                refused,
            },
            other => Self::Worker(other.to_string()),
        }
    }
}
