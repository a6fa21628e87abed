//! BLS12-381 building blocks on blst: batch affine conversion, parallel multi-scalar
//! multiplication, pairing-product checks, hashing to the scalar field and to G2.
//!
//! Every function here returns the same value at every worker count: point additions are exact,
//! and affine coordinates are unique, so neither the order of partial sums nor the size of a
//! conversion block reaches the result.

use std::convert::Infallible;

use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Prepared, G2Projective, Gt, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use lockstep_shard::{Control, Pool};
use pairing::{MillerLoopResult, MultiMillerLoop};
use sha2::{Digest, Sha256};

use lockstep_bls12::{Canonical, ffi};

pub(crate) use lockstep_bls12::ffi::{
    Refusal, expand_message_xmd, fp_standard, g1_from_draw, g1_from_montgomery,
    g1_from_montgomery_checked, g1_to_affine, g1_uncompress_checked, g2_from_draw,
    g2_from_montgomery, g2_from_montgomery_checked, g2_to_affine, g2_uncompress_checked,
    pairing_coefficients, wipe_scalar,
};
pub(crate) use lockstep_bls12::g1_mul_public;

/// Points per call of the parallel MSM at most: past 2^20 Pippenger gains little a point, and
/// the MSM's own memory (endomorphism images and scalar halves, about 130 bytes a G1 point and
/// 230 a G2 one) stays near 130 MB and 230 MB.
pub(crate) const MSM_CHUNK_POINTS: usize = 1 << 20;

/// Overwrites secret scalars with zero in a way the compiler keeps.
pub(crate) fn wipe_scalars(scalars: &mut [Scalar]) {
    for s in scalars {
        wipe_scalar(s);
    }
}

/// The generator of G1.
pub(crate) fn g1() -> G1Affine {
    G1Affine::generator()
}

/// The generator of G2.
pub(crate) fn g2() -> G2Affine {
    G2Affine::generator()
}

/// The uncompressed (96-byte, ZCash flags) encoding of a G1 point, as gnark's `Marshal`.
pub(crate) fn g1_uncompressed(point: &G1Affine) -> [u8; 96] {
    point.to_uncompressed()
}

/// RFC 9380 hash to G2 (`BLS12381G2_XMD:SHA-256_SSWU_RO_`) with domain separation tag `dst`.
pub(crate) fn hash_to_g2(msg: &[u8], dst: &[u8]) -> G2Affine {
    G2Projective::hash_to_curve(msg, dst, &[]).to_affine()
}

/// gnark's `fr.Hash(msg, dst, count)`: `expand_message_xmd` (SHA-256) to 48 bytes per element,
/// each read big-endian and reduced modulo r.
pub(crate) fn hash_to_scalars<const COUNT: usize>(msg: &[u8], dst: &[u8]) -> [Scalar; COUNT] {
    let all = hash_to_scalar_vec(msg, dst, COUNT);
    std::array::from_fn(|i| all[i])
}

/// [`hash_to_scalars`] for a count known at run time.
pub(crate) fn hash_to_scalar_vec(msg: &[u8], dst: &[u8], count: usize) -> Vec<Scalar> {
    const L: usize = 48;
    let mut bytes = vec![0u8; count * L];
    expand_message_xmd(&mut bytes, msg, dst);
    let out = (0..count)
        .map(|i| ffi::scalar_from_be_wide(&bytes[i * L..(i + 1) * L]))
        .collect();
    zeroize::Zeroize::zeroize(&mut bytes);
    out
}

/// The big-endian integer `bytes` reduced modulo r.
pub(crate) fn scalar_from_be_wide(bytes: &[u8]) -> Scalar {
    ffi::scalar_from_be_wide(bytes)
}

/// Whether `prod e(p_i, q_i) == 1`, in one multi-Miller loop and one final exponentiation.
pub(crate) fn pairing_product_is_one(terms: &[(G1Affine, G2Affine)]) -> bool {
    let prepared: Vec<(G1Affine, G2Prepared)> = terms
        .iter()
        .map(|(p, q)| (*p, G2Prepared::from(*q)))
        .collect();
    let refs: Vec<(&G1Affine, &G2Prepared)> = prepared.iter().map(|(p, q)| (p, q)).collect();
    let gt: Gt = Bls12::multi_miller_loop(&refs).final_exponentiation();
    bool::from(gt.is_identity())
}

/// Whether `e(a, b) == e(c, d)`.
pub(crate) fn same_ratio(a: &G1Affine, b: &G2Affine, c: &G1Affine, d: &G2Affine) -> bool {
    pairing_product_is_one(&[(*a, *b), (-*c, *d)])
}

/// One segment of a multi-scalar multiplication: `points[i]` gets the coefficient of index
/// `first + i`.
pub(crate) struct PowerSegment<'a, P> {
    pub(crate) points: &'a [P],
    pub(crate) first: u64,
}

/// The coefficients of a random linear combination, by index.
#[derive(Clone, Copy)]
pub(crate) enum Coefficients<'a> {
    /// `rho^index`: full-size scalars whose sums telescope (one MSM gives a vector's sum both
    /// without its last point and shifted by one).
    Powers(&'a Scalar),
    /// 128 bits of `SHA-256(seed || index)`: independent, half-size scalars, half the cost.
    Random128(&'a [u8; 32]),
}

impl Coefficients<'_> {
    /// Bits per coefficient.
    fn bits(self) -> usize {
        match self {
            Self::Powers(_) => 255,
            Self::Random128(_) => 128,
        }
    }

    /// Appends the coefficients of `range`, little-endian, `bits / 8` rounded up bytes each.
    fn fill(self, range: std::ops::Range<u64>, out: &mut Vec<u8>) {
        match self {
            Self::Powers(rho) => {
                let mut power = rho.pow_vartime([range.start]);
                for _ in range {
                    out.extend_from_slice(&power.to_bytes_le());
                    power *= rho;
                }
            }
            Self::Random128(seed) => {
                for index in range {
                    let digest = Sha256::new()
                        .chain_update(seed)
                        .chain_update(index.to_le_bytes())
                        .finalize();
                    out.extend_from_slice(&digest[..16]);
                }
            }
        }
    }
}

/// The affine points a multi-scalar multiplication runs over, all in the prime-order subgroup
/// (every caller's points come from the strict decoders): `lockstep-bls12`'s MSM splits the
/// scalars by an endomorphism whose eigenvalue holds there only.
pub(crate) trait MsmPoint: Copy + Send + Sync {
    /// The group's projective form.
    type Sum: Group + Send + Copy;
    /// `lockstep-bls12`'s parallel MSM on `pool`.
    fn msm(
        pool: &Pool,
        control: &Control,
        points: &[Self],
        scalars: &[Canonical],
    ) -> Result<Self::Sum, lockstep_bls12::MsmError>;
}

impl MsmPoint for G1Affine {
    type Sum = G1Projective;
    fn msm(
        pool: &Pool,
        control: &Control,
        points: &[Self],
        scalars: &[Canonical],
    ) -> Result<G1Projective, lockstep_bls12::MsmError> {
        lockstep_bls12::msm::g1(pool, control, points, scalars)
    }
}

impl MsmPoint for G2Affine {
    type Sum = G2Projective;
    fn msm(
        pool: &Pool,
        control: &Control,
        points: &[Self],
        scalars: &[Canonical],
    ) -> Result<G2Projective, lockstep_bls12::MsmError> {
        lockstep_bls12::msm::g2(pool, control, points, scalars)
    }
}

/// `sum scalars[i] * points[i]` through `lockstep-bls12`'s parallel MSM on the whole pool, in
/// chunks of at most [`MSM_CHUNK_POINTS`] points (the MSM's own memory bounded), chunks in
/// order; the same group element at every worker count. Progress: each chunk's points.
///
/// # Errors
/// Cancellation or a stall of the run.
///
/// # Panics
/// If the slices differ in length (a bug in the caller).
pub(crate) fn msm_chunked<P: MsmPoint>(
    pool: &Pool,
    control: &Control,
    points: &[P],
    scalars: &[Canonical],
) -> Result<P::Sum, lockstep_shard::Error<Infallible>> {
    assert_eq!(points.len(), scalars.len(), "invariant: one scalar a point");
    let mut sum = P::Sum::identity();
    for (points, scalars) in points
        .chunks(MSM_CHUNK_POINTS)
        .zip(scalars.chunks(MSM_CHUNK_POINTS))
    {
        sum += P::msm(pool, &control.nested(), points, scalars).map_err(|e| match e {
            lockstep_bls12::MsmError::Run(run) => run,
            lockstep_bls12::MsmError::Lengths { .. } => {
                unreachable!("invariant: chunks of equal slices")
            }
        })?;
        control.progress().advance(points.len() as u64);
    }
    Ok(sum)
}

/// One multi-scalar multiplication of [`msm_many`]: `sum over segments s, points i of
/// c(s.first + i) * s.points[i]` for the coefficients `c`.
pub(crate) struct MsmJob<'a, P> {
    pub(crate) segments: Vec<PowerSegment<'a, P>>,
    pub(crate) coefficients: Coefficients<'a>,
}

/// The sum of one job ([`msm_many`] with one job).
///
/// # Errors
/// Cancellation or a stall of the run.
pub(crate) fn msm<P: MsmPoint>(
    pool: &Pool,
    control: &Control,
    segments: &[PowerSegment<'_, P>],
    coefficients: Coefficients<'_>,
) -> Result<P::Sum, lockstep_shard::Error<Infallible>> {
    let segments = segments
        .iter()
        .map(|s| PowerSegment {
            points: s.points,
            first: s.first,
        })
        .collect();
    let [sum] = msm_many(
        pool,
        control,
        [MsmJob {
            segments,
            coefficients,
        }],
    )?;
    Ok(sum)
}

/// The sums of several jobs, one after another, each through `lockstep-bls12`'s parallel MSM on
/// the whole pool in chunks of at most [`MSM_CHUNK_POINTS`] points along the concatenation of
/// its segments (so that the MSM's own memory, its endomorphism images and scalar halves, stays
/// bounded however large the job). The sums are the same group elements at every worker count
/// (partial sums are exact). Progress: each chunk's points as it ends.
///
/// # Errors
/// Cancellation or a stall of the run.
pub(crate) fn msm_many<P: MsmPoint, const JOBS: usize>(
    pool: &Pool,
    control: &Control,
    jobs: [MsmJob<'_, P>; JOBS],
) -> Result<[P::Sum; JOBS], lockstep_shard::Error<Infallible>> {
    let mut sums = [P::Sum::identity(); JOBS];
    let mut points: Vec<P> = Vec::new();
    let mut bytes = Vec::new();
    let mut scalars = Vec::new();
    for (job, sum) in jobs.iter().zip(&mut sums) {
        let width = job.coefficients.bits().div_ceil(8);
        let mut flush = |points: &mut Vec<P>, bytes: &mut Vec<u8>| {
            if points.is_empty() {
                return Ok(());
            }
            scalars.clear();
            scalars.extend(bytes.chunks_exact(width).map(|chunk| {
                let mut le = [0u8; 32];
                le[..width].copy_from_slice(chunk);
                Canonical::from_le_bytes(&le)
                    .expect("invariant: coefficients are field elements or 128-bit values")
            }));
            *sum += P::msm(pool, &control.nested(), points, &scalars).map_err(|e| match e {
                lockstep_bls12::MsmError::Run(run) => run,
                lockstep_bls12::MsmError::Lengths { .. } => {
                    unreachable!("invariant: one coefficient a point")
                }
            })?;
            control.progress().advance(points.len() as u64);
            points.clear();
            bytes.clear();
            Ok::<_, lockstep_shard::Error<Infallible>>(())
        };
        for segment in &job.segments {
            let mut at = 0;
            while at < segment.points.len() {
                let take = (MSM_CHUNK_POINTS - points.len()).min(segment.points.len() - at);
                points.extend_from_slice(&segment.points[at..at + take]);
                let first = segment.first + at as u64;
                job.coefficients
                    .fill(first..first + take as u64, &mut bytes);
                at += take;
                if points.len() == MSM_CHUNK_POINTS {
                    flush(&mut points, &mut bytes)?;
                }
            }
        }
        flush(&mut points, &mut bytes)?;
    }
    Ok(sums)
}

/// 32 random bytes from the operating system: a verifier's seed for [`Coefficients::Random128`].
pub(crate) fn random_seed() -> [u8; 32] {
    let mut seed = [0u8; 32];
    rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut seed);
    seed
}

/// A uniformly random non-zero scalar from the operating system, for verifiers' random linear
/// combinations (not secret: it only has to be unpredictable to whoever wrote the file).
pub(crate) fn random_nonzero_scalar() -> Scalar {
    loop {
        let s = Scalar::random(rand_core::OsRng);
        if !bool::from(s.is_zero()) {
            return s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::Curve;

    /// The serial reference of [`msm_many`]: one scalar multiplication per point.
    fn naive<P>(job: &MsmJob<'_, P>) -> P::Sum
    where
        P: MsmPoint + std::ops::Mul<Scalar, Output = P::Sum>,
    {
        let mut sum = P::Sum::identity();
        for segment in &job.segments {
            let mut bytes = Vec::new();
            let first = segment.first;
            job.coefficients
                .fill(first..first + segment.points.len() as u64, &mut bytes);
            let width = job.coefficients.bits().div_ceil(8);
            for (point, raw) in segment.points.iter().zip(bytes.chunks_exact(width)) {
                let mut wide = [0u8; 64];
                // Little-endian coefficient bytes, as a big-endian integer for the reduction.
                for (k, b) in raw.iter().enumerate() {
                    wide[63 - k] = *b;
                }
                sum += *point * scalar_from_be_wide(&wide);
            }
        }
        sum
    }

    #[test]
    fn msm_many_equals_one_multiplication_per_point_on_every_pool() {
        // 5,000 distinct points: more than one task at every worker count.
        let mut points = Vec::with_capacity(5000);
        let mut p = G1Projective::generator();
        for _ in 0..5000 {
            points.push(p.to_affine());
            p = p.double() + G1Projective::generator();
        }
        let rho = Scalar::from(0x1234_5678u64).pow_vartime([3]);
        let seed = [7u8; 32];
        let jobs = || {
            [
                MsmJob {
                    segments: vec![
                        PowerSegment {
                            points: &points[..3000],
                            first: 0,
                        },
                        PowerSegment {
                            points: &points[3000..],
                            first: 3000,
                        },
                    ],
                    coefficients: Coefficients::Powers(&rho),
                },
                MsmJob {
                    segments: vec![PowerSegment {
                        points: &points[1..4097],
                        first: 5,
                    }],
                    coefficients: Coefficients::Random128(&seed),
                },
            ]
        };
        let expected = jobs().map(|job| naive(&job).to_affine());
        let mut pools: Vec<Pool> = [1, 2, 3, 5]
            .iter()
            .map(|&w| Pool::new(w).unwrap())
            .collect();
        pools.push(Pool::current_thread());
        for pool in &pools {
            let got = msm_many(pool, &Control::new(), jobs()).unwrap();
            assert_eq!(
                got.map(|s| s.to_affine()),
                expected,
                "{} workers",
                pool.workers()
            );
        }
    }
}
