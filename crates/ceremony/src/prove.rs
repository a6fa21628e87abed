//! Groth16 proving with the ceremony's keys: snarkjs's prover over a `.zkey` and a circom
//! witness ([`snarkjs::prove`]), on `lockstep-bls12`'s parallel MSM and the odd-coset transforms
//! of `prove/coset.rs` (crate-private).
//!
//! # Determinism
//! A proof is a function of the key, the witness and the blinding `r`, `s`: the same points at
//! every worker count. With the blinding fixed ([`Blinding::fixed`], for tests), it equals
//! [`snarkjs::prove_reference`], which computes it from the definition.
//!
//! # Secrets
//! The blinding (from the operating system's randomness, [`Blinding::random`]) is wiped when
//! dropped and multiplied only by blst's constant-time multiplication; the witness's MSMs are
//! variable time (see [`snarkjs`]'s "Secrets"). Neither is written, logged or printed.

mod coset;
pub mod gnark;
pub mod snarkjs;

use blstrs::Scalar;
use ff::Field;

use crate::circom::CircomError;
use crate::codec::CodecError;
use crate::curve;
use crate::zkey::ZkeyError;

/// A proof's blinding scalars `r` and `s`, wiped when dropped.
pub struct Blinding {
    r: Scalar,
    s: Scalar,
}

impl Blinding {
    /// Two scalars from the operating system's randomness: what makes a proof zero-knowledge.
    pub fn random() -> Self {
        Self {
            r: Scalar::random(rand_core::OsRng),
            s: Scalar::random(rand_core::OsRng),
        }
    }

    /// Fixed scalars, for tests that compare a proof with a reference: two proofs with the same
    /// blinding tell their difference of witnesses, so never prove for real with it.
    #[doc(hidden)]
    pub fn fixed(r: Scalar, s: Scalar) -> Self {
        Self { r, s }
    }

    pub(crate) fn r(&self) -> &Scalar {
        &self.r
    }

    pub(crate) fn s(&self) -> &Scalar {
        &self.s
    }
}

impl Drop for Blinding {
    fn drop(&mut self) {
        curve::wipe_scalar(&mut self.r);
        curve::wipe_scalar(&mut self.s);
    }
}

impl std::fmt::Debug for Blinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Blinding(..)")
    }
}

/// Why a proof could not be made or was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProveError {
    /// The proving key.
    #[error(transparent)]
    Zkey(#[from] ZkeyError),
    /// The witness file.
    #[error(transparent)]
    Circom(#[from] CircomError),
    /// gnark's R1CS file.
    #[error(transparent)]
    R1cs(#[from] crate::r1cs::R1csError),
    /// gnark's witness did not solve the circuit.
    #[error(transparent)]
    Solve(#[from] crate::r1cs::SolveError),
    /// gnark's witness file, or a proof that does not verify.
    #[error(transparent)]
    Groth16(#[from] crate::groth16::Groth16Error),
    /// A read or write error, cancellation.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// The witness is not as long as the key's circuit has wires.
    #[error(
        "the witness holds {witness} values, the key's circuit has {wires} wires: a witness of another circuit"
    )]
    WitnessLength {
        /// The witness's values.
        witness: usize,
        /// The circuit's wires, the constant one included.
        wires: usize,
    },
    /// A domain the prover cannot transform on.
    #[error(
        "the key's domain is 2^{0}: above 2^31, which BLS12-381's scalar field has no odd coset for"
    )]
    Domain(u32),
    /// The key's sections disagree with its header.
    #[error("the proving key: {0}")]
    Key(String),
    /// The key's points outside their subgroups put the proof's outside too.
    #[error(
        "the proving key holds points outside their subgroups (a .zkey's sections 5-9, or gnark's vectors): the proof made from it is not a proof"
    )]
    KeyPoints,
    /// The proof made does not verify under the key.
    #[error(
        "the proof made from this witness does not verify under the key: the witness does not satisfy the key's circuit (computed for another build of the circuit?), or the key's sections 4-9 do not belong with its header (give the circuit with --r1cs to name a broken constraint)"
    )]
    Unsatisfied,
    /// The witness's first value, the constant wire, is not one.
    #[error("the witness's value 0 (the constant wire) is not 1: not a circom witness")]
    ConstantWire,
    /// Another number of public signals than the key's.
    #[error("{given} public signals given, the key has {key}")]
    PublicCount {
        /// Given.
        given: usize,
        /// The key's.
        key: usize,
    },
    /// A snarkjs JSON file (verification key, proof, public signals) is not one.
    #[error("{0}")]
    Json(String),
    /// The pairing check fails.
    #[error("proof refused: the pairing check fails for these public signals under this key")]
    Refused,
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

impl ProveError {
    pub(crate) fn memory(
        what: &'static str,
    ) -> impl FnOnce(lockstep_shard::memory::AllocError) -> Self {
        move |refused| Self::Memory { what, refused }
    }
}

impl<E> From<lockstep_shard::Error<E>> for ProveError
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

/// `sum scalars_i points_i` over a key's vector read `chunk` points at a time by `read` (the
/// points at a range of the vector): the sum of the chunks' MSMs, the same point as one MSM
/// over the whole vector.
fn msm_by_chunks<P, C, E>(
    pool: &lockstep_shard::Pool,
    control: &lockstep_shard::Control,
    chunk: usize,
    scalars: &[lockstep_bls12::Canonical],
    mut read: impl FnMut(std::ops::Range<usize>) -> Result<C, E>,
) -> Result<P::Sum, ProveError>
where
    P: curve::MsmPoint,
    C: AsRef<[P]>,
    ProveError: From<E>,
{
    use group::Group;
    let mut sum = P::Sum::identity();
    for start in (0..scalars.len()).step_by(chunk) {
        let end = scalars.len().min(start + chunk);
        let points = read(start..end)?;
        sum += curve::msm_chunked(pool, control, points.as_ref(), &scalars[start..end])?;
    }
    Ok(sum)
}

/// Scalars derived from a witness (the constraint vectors on the domain, the quotient), wiped
/// when dropped, on every path.
pub(crate) struct Secret(pub(crate) Vec<Scalar>);

impl Drop for Secret {
    fn drop(&mut self) {
        curve::wipe_scalars(&mut self.0);
    }
}

impl std::ops::Deref for Secret {
    type Target = Vec<Scalar>;
    fn deref(&self) -> &Vec<Scalar> {
        &self.0
    }
}

impl std::ops::DerefMut for Secret {
    fn deref_mut(&mut self) -> &mut Vec<Scalar> {
        &mut self.0
    }
}

/// `values` as canonical scalars for an MSM, written in place into storage wiped when dropped
/// (a witness's or a quotient's copies: no worker's partial output is left behind).
///
/// # Errors
/// Memory for the copy, cancellation.
fn canonical_secret(
    pool: &lockstep_shard::Pool,
    control: &lockstep_shard::Control,
    values: &[Scalar],
) -> Result<zeroize::Zeroizing<Vec<lockstep_bls12::Canonical>>, ProveError> {
    use lockstep_bls12::Canonical;
    let mut out = zeroize::Zeroizing::new(
        lockstep_shard::memory::try_filled(values.len(), Canonical::ZERO)
            .map_err(ProveError::memory("the MSM's scalars"))?,
    );
    pool.for_each_block(
        control,
        &mut out[..],
        lockstep_shard::Cut::Blocks(1 << 12),
        |_, range, out: &mut [Canonical]| {
            for (o, v) in out.iter_mut().zip(&values[range]) {
                *o = Canonical::from_scalar(v);
            }
            Ok::<_, std::convert::Infallible>(())
        },
    )?;
    Ok(out)
}
