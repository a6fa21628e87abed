//! The `ceremony` engine of lockstep: a Groth16 trusted-setup ceremony over BLS12-381.
//!
//! Phase 1 (powers of tau) reads and writes gnark v0.15's files byte for byte
//! ([`phase1::Phase1::read`], [`phase1::Phase1::write`]), contributes and seals as gnark does,
//! and verifies contributions with random linear combinations ([`phase1::verify_contribution`]).
//!
//! Phase 2 (per circuit) is gnark v0.15's `Phase2` byte for byte: a circuit's serialized R1CS
//! ([`r1cs::R1cs::read`]) and a sealed phase 1 give the initial object
//! ([`phase2::initialize`], its Lagrange bases by [`fft`]); contributions, verification and the
//! seal give gnark's Groth16 proving and verifying keys ([`phase2::seal`]), whose proofs
//! [`groth16::verify`] checks.
//!
//! Proving: snarkjs's Groth16 prover over a `.zkey` and a circom witness
//! ([`prove::snarkjs::prove`]), its proof checked before it is returned.
//!
//! # Determinism
//! Every parallel step runs on a [`lockstep_shard::Pool`] and equals its serial reference byte
//! for byte at every worker count: the update ([`phase1::update`] against
//! [`phase1::update_serial`]), the codec (chunks of [`codec::CHUNK_POINTS`] decoded or encoded
//! at fixed offsets, chunks in order; the first bad point in file order is the error), the group
//! FFT ([`fft::lagrange`] against [`fft::lagrange_serial`]), phase 2's initialization and
//! contribution ([`phase2::initialize`], [`phase2::contribute`] against their `_serial` forms).
//!
//! # Secrets
//! A contribution's secrets live in [`phase1::Secrets`], wiped when dropped; the per-point
//! powers of tau are wiped at the end of each task. They are never written, logged or printed.
//! Key material travels: OS randomness and the contributor's entropy -> `Secrets::random` ->
//! `contribute` (update proofs, then the SRS update on the workers) -> dropped. Phase 2's delta
//! and sigmas travel the same way through [`phase2::Secrets`]. Multiplications by secrets use
//! blst's constant-time multiplication; the variable-time one (`lockstep_bls12::public_mul`: GLV
//! or the four-way `psi` split with NAF digits, or blst's over the bit length up to 128 bits) is
//! used on public scalars only (FFT twiddles, R1CS coefficients, public inputs).
//!
//! # Unsafe code
//! None: the blst calls blstrs does not expose safely are `lockstep-bls12`'s (its `ffi.rs`).
#![forbid(unsafe_code)]

pub mod beacon;
pub mod binfile;
pub mod chain;
pub mod circom;
pub mod codec;
mod curve;
pub mod describe;
mod file_kind;
pub mod groth16;
pub mod phase1;
pub mod phase2;
pub mod prove;
pub mod ptau;
pub mod r1cs;
pub mod reference;
pub mod zkey;

pub use codec::{
    CodecError, DEFAULT_MAX_POWER, KeyChecks, Limits, Location, PointProblem, contribution_len,
};
pub use file_kind::{FileKind, SNIFF_LEN, points_at_most};
/// The group FFT lives in the curve core; re-exported where the ceremony's callers found it.
pub use lockstep_bls12::fft;

/// The ceremony's shard grain: a worker gets at least 128 points, milliseconds of curve work (a
/// G1 decode with its subgroup check takes tens of microseconds, a G2 one and an update more),
/// below which a thread costs more than it saves. Ask the shard policy for a run's workers in it:
/// `policy.decide(points, GRAIN)`.
pub const GRAIN: lockstep_shard::Grain = lockstep_shard::Grain::new(128, "points");
