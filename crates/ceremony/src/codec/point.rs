//! One point's strict encoding: compressed only, canonical, on the curve, in the subgroup.

use blstrs::{G1Affine, G2Affine};

use crate::curve::{self, Refusal};

/// What is wrong with one encoded point, in the order the checks run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PointProblem {
    /// The compression flag is clear: an uncompressed point. gnark's reader accepts these; ours
    /// does not (one encoding per point keeps the challenge hash of a file well defined).
    #[error("uncompressed encoding (only compressed points are accepted)")]
    Uncompressed,
    /// Bad flags, a coordinate not below the field modulus, or an infinity with other bits set.
    #[error("non-canonical encoding")]
    NonCanonical,
    /// No curve point has this x coordinate.
    #[error("not on the curve")]
    NotOnCurve,
    /// On the curve but outside the prime-order subgroup.
    #[error("not in the prime-order subgroup")]
    NotInSubgroup,
}

impl From<Refusal> for PointProblem {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::Encoding => Self::NonCanonical,
            Refusal::NotOnCurve => Self::NotOnCurve,
            Refusal::NotInSubgroup => Self::NotInSubgroup,
        }
    }
}

/// The compressed form of a point, fixed width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compressed<const N: usize>(pub [u8; N]);

impl<const N: usize> Default for Compressed<N> {
    fn default() -> Self {
        Self([0; N])
    }
}

/// A group whose points the codec reads and writes.
pub trait Point: Copy + Default + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    /// Bytes of a compressed point.
    const SIZE: usize;
    /// `"G1"` or `"G2"`.
    const GROUP: &'static str;
    /// The fixed-width compressed bytes.
    type Bytes: Copy + Default + Send + Sync + AsRef<[u8]> + AsMut<[u8]>;
    /// Decodes and checks one point (see [`PointProblem`] for the checks, in order).
    ///
    /// # Errors
    /// The first check that fails.
    fn decode(bytes: &Self::Bytes) -> Result<Self, PointProblem>;
    /// The canonical compressed encoding (gnark's and ZCash's flags).
    fn encode(&self) -> Self::Bytes;
}

impl<const N: usize> AsRef<[u8]> for Compressed<N> {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl<const N: usize> AsMut<[u8]> for Compressed<N> {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

/// The compression flag of the first byte.
const COMPRESSED: u8 = 0x80;

impl Point for G1Affine {
    const SIZE: usize = 48;
    const GROUP: &'static str = "G1";
    type Bytes = Compressed<48>;

    fn decode(bytes: &Compressed<48>) -> Result<Self, PointProblem> {
        if bytes.0[0] & COMPRESSED == 0 {
            return Err(PointProblem::Uncompressed);
        }
        Ok(curve::g1_uncompress_checked(&bytes.0)?)
    }

    fn encode(&self) -> Compressed<48> {
        Compressed(self.to_compressed())
    }
}

impl Point for G2Affine {
    const SIZE: usize = 96;
    const GROUP: &'static str = "G2";
    type Bytes = Compressed<96>;

    fn decode(bytes: &Compressed<96>) -> Result<Self, PointProblem> {
        if bytes.0[0] & COMPRESSED == 0 {
            return Err(PointProblem::Uncompressed);
        }
        Ok(curve::g2_uncompress_checked(&bytes.0)?)
    }

    fn encode(&self) -> Compressed<96> {
        Compressed(self.to_compressed())
    }
}

/// How a proving key's points are checked when read (gnark's keys and snarkjs's `.zkey`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyChecks {
    /// Every point canonical, on its curve and in its subgroup (gnark's `ReadFrom`).
    Subgroups,
    /// Every point canonical and on its curve; the subgroups left to the caller. A prover that
    /// checks the proof's points in their subgroups before it writes them may read so: a key
    /// point outside its subgroup then refuses the proof or leaves nothing of itself in it.
    Curve,
}
