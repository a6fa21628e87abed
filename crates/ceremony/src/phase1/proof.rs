//! Update proofs: a commitment `[x]_1` to a contribution's secret `x` and a proof of knowledge
//! `x * R`, where `R` hashes the commitment and the challenge to G2 (gnark's `UpdateProof`).

use blstrs::{G1Affine, G2Affine, Scalar};
use group::Curve;

use crate::curve;

/// Which secret an update proof is for; its byte is the hash-to-G2 domain separation tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// tau (tag 0).
    Tau,
    /// alpha (tag 1).
    Alpha,
    /// beta (tag 2).
    Beta,
}

impl Value {
    /// The one-byte DST gnark uses for this value.
    pub fn dst(self) -> u8 {
        match self {
            Self::Tau => 0,
            Self::Alpha => 1,
            Self::Beta => 2,
        }
    }

    /// The value's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Tau => "tau",
            Self::Alpha => "alpha",
            Self::Beta => "beta",
        }
    }
}

/// The proof a contributor publishes for one secret.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct UpdateProof {
    /// `[x]_1`.
    pub commitment: G1Affine,
    /// `x * R`, `R = HashToG2(uncompressed [x]_1 || challenge, [dst])`.
    pub pok: G2Affine,
}

/// `R`: the base of the proof of knowledge.
pub(crate) fn pok_base(commitment: &G1Affine, challenge: &[u8], value: Value) -> G2Affine {
    pok_base_dst(commitment, challenge, value.dst())
}

/// `R` under a one-byte DST (phase 2's: 0 for delta, `1 + i` for sigma `i`).
pub(crate) fn pok_base_dst(commitment: &G1Affine, challenge: &[u8], dst: u8) -> G2Affine {
    let mut msg = Vec::with_capacity(96 + challenge.len());
    msg.extend_from_slice(&curve::g1_uncompressed(commitment));
    msg.extend_from_slice(challenge);
    curve::hash_to_g2(&msg, &[dst])
}

impl UpdateProof {
    /// The proof for secret `x` under `challenge`.
    pub(crate) fn new(x: &Scalar, challenge: &[u8], value: Value) -> Self {
        Self::with_dst(x, challenge, value.dst())
    }

    /// The proof for secret `x` under `challenge` and a one-byte DST.
    pub(crate) fn with_dst(x: &Scalar, challenge: &[u8], dst: u8) -> Self {
        let commitment = (curve::g1() * x).to_affine();
        let base = pok_base_dst(&commitment, challenge, dst);
        let pok = (base * x).to_affine();
        Self { commitment, pok }
    }

    /// Whether the commitment is the point at infinity (the initial object's proofs are).
    pub fn is_zero(&self) -> bool {
        bool::from(group::prime::PrimeCurveAffine::is_identity(
            &self.commitment,
        ))
    }

    /// Whether `pok = x * R` for the `x` of `[x]_1`: `e([x]_1, R) = e(g1, pok)`.
    pub(crate) fn knows(&self, challenge: &[u8], value: Value) -> bool {
        let base = pok_base(&self.commitment, challenge, value);
        curve::same_ratio(&self.commitment, &base, &curve::g1(), &self.pok)
    }

    /// Whether `next = x * previous` in G1: `e(next, R) = e(previous, pok)`.
    pub(crate) fn moves_g1(
        &self,
        challenge: &[u8],
        value: Value,
        previous: &G1Affine,
        next: &G1Affine,
    ) -> bool {
        let base = pok_base(&self.commitment, challenge, value);
        curve::same_ratio(next, &base, previous, &self.pok)
    }

    /// Whether `next = x * previous` in G2: `e([x]_1, previous) = e(g1, next)`.
    pub(crate) fn moves_g2(&self, previous: &G2Affine, next: &G2Affine) -> bool {
        curve::same_ratio(&self.commitment, previous, &curve::g1(), next)
    }
}
