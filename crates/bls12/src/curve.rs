//! The two groups an MSM runs in, behind one trait: affine coordinates (blst's own field
//! elements, through [`Coordinate`]) for batch-affine additions, the projective form for the
//! rest, and the endomorphism of the GLV split.

use std::ops::AddAssign;

use blst::{blst_fp, blst_fp2};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use group::{Curve as _, Group};

use crate::buckets::Lanes;
use crate::field::Coordinate;
use crate::glv::{BETA, LAMBDA, Z_SQUARED};

/// A group of BLS12-381 with the operations a multi-scalar multiplication needs.
pub(crate) trait Curve: 'static {
    /// The field of the affine coordinates.
    type Base: Lanes;
    /// Affine points, as stored in keys.
    type Affine: Copy + Send + Sync;
    /// Projective points, for sums.
    type Projective: Group
        + Copy
        + Send
        + Sync
        + for<'a> AddAssign<&'a Self::Affine>
        + for<'a> AddAssign<&'a Self::Projective>;

    /// The endomorphism's eigenvalue on the subgroup: `endomorphism(P) = EIGENVALUE * P`.
    const EIGENVALUE: u128;

    /// `(x, y)`, or `None` for the point at infinity.
    fn coordinates(point: &Self::Affine) -> Option<(Self::Base, Self::Base)>;

    /// The point `(x, y)`, which the caller knows to be on the curve.
    fn from_coordinates(x: Self::Base, y: Self::Base) -> Self::Affine;

    /// The endomorphism of the GLV split (one multiplication in the base field).
    fn endomorphism(point: &Self::Affine) -> Self::Affine;

    /// The affine form of one point (one inversion: for rare cases only).
    fn to_affine(point: &Self::Projective) -> Self::Affine;

    /// The affine forms of a block of points, one inversion for the block.
    fn batch_to_affine(points: &[Self::Projective], out: &mut [Self::Affine]);
}

/// G1 over Fp; `phi(x, y) = (beta x, y)`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum G1 {}

/// G2 over Fp2; `psi^2(x, y) = (beta x, -y)`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum G2 {}

const BETA_FP: blst_fp = blst_fp { l: BETA };

impl Curve for G1 {
    type Base = blst_fp;
    type Affine = G1Affine;
    type Projective = G1Projective;
    const EIGENVALUE: u128 = LAMBDA;

    #[inline]
    fn coordinates(point: &G1Affine) -> Option<(blst_fp, blst_fp)> {
        let raw = point.as_ref();
        // blst's infinity is the all-zero point (`blst_p1_affine_is_inf` tests exactly that;
        // (0, 0) is not on the curve): tested inline, not by a call per point.
        (!(raw.x.is_zero() && raw.y.is_zero())).then_some((raw.x, raw.y))
    }

    #[inline]
    fn from_coordinates(x: blst_fp, y: blst_fp) -> G1Affine {
        let mut point = G1Affine::default();
        *point.as_mut() = blst::blst_p1_affine { x, y };
        point
    }

    fn endomorphism(point: &G1Affine) -> G1Affine {
        match Self::coordinates(point) {
            Some((x, y)) => Self::from_coordinates(x.mul(&BETA_FP), y),
            None => *point,
        }
    }

    fn to_affine(point: &G1Projective) -> G1Affine {
        point.to_affine()
    }

    fn batch_to_affine(points: &[G1Projective], out: &mut [G1Affine]) {
        crate::ffi::g1_to_affine(points, out);
    }
}

impl Curve for G2 {
    type Base = blst_fp2;
    type Affine = G2Affine;
    type Projective = G2Projective;
    const EIGENVALUE: u128 = Z_SQUARED;

    #[inline]
    fn coordinates(point: &G2Affine) -> Option<(blst_fp2, blst_fp2)> {
        let raw = point.as_ref();
        // As G1's: blst's infinity is the all-zero point.
        (!(raw.x.is_zero() && raw.y.is_zero())).then_some((raw.x, raw.y))
    }

    #[inline]
    fn from_coordinates(x: blst_fp2, y: blst_fp2) -> G2Affine {
        let mut point = G2Affine::default();
        *point.as_mut() = blst::blst_p2_affine { x, y };
        point
    }

    fn endomorphism(point: &G2Affine) -> G2Affine {
        match Self::coordinates(point) {
            Some((x, y)) => {
                let x = blst_fp2 {
                    fp: [x.fp[0].mul(&BETA_FP), x.fp[1].mul(&BETA_FP)],
                };
                Self::from_coordinates(x, y.neg())
            }
            None => *point,
        }
    }

    fn to_affine(point: &G2Projective) -> G2Affine {
        point.to_affine()
    }

    fn batch_to_affine(points: &[G2Projective], out: &mut [G2Affine]) {
        crate::ffi::g2_to_affine(points, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar;
    use ff::PrimeField;
    use group::prime::PrimeCurveAffine;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    fn eigenvalue_scalar(e: u128) -> Scalar {
        Scalar::from_u128(e)
    }

    #[test]
    fn the_endomorphisms_multiply_by_their_eigenvalues() {
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        for _ in 0..8 {
            let p = G1Projective::random(&mut rng).to_affine();
            let want = (p * eigenvalue_scalar(G1::EIGENVALUE)).to_affine();
            assert_eq!(G1::endomorphism(&p), want);
            let q = G2Projective::random(&mut rng).to_affine();
            let want = (q * eigenvalue_scalar(G2::EIGENVALUE)).to_affine();
            assert_eq!(G2::endomorphism(&q), want);
        }
        assert_eq!(
            G1::endomorphism(&G1Affine::identity()),
            G1Affine::identity()
        );
        assert_eq!(
            G2::endomorphism(&G2Affine::identity()),
            G2Affine::identity()
        );
    }

    #[test]
    fn the_identity_has_no_coordinates_and_points_have_theirs() {
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        assert!(G1::coordinates(&G1Affine::identity()).is_none());
        assert!(G2::coordinates(&G2Affine::identity()).is_none());
        for _ in 0..4 {
            let p = G1Projective::random(&mut rng).to_affine();
            assert_eq!(G1::coordinates(&p).map(|(x, _)| x), Some(p.as_ref().x));
            let q = G2Projective::random(&mut rng).to_affine();
            assert_eq!(G2::coordinates(&q).map(|(x, _)| x), Some(q.as_ref().x));
        }
    }
}
