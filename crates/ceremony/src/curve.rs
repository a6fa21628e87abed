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
use lockstep_shard::{Control, Pool, split};
use pairing::{MillerLoopResult, MultiMillerLoop};
use sha2::{Digest, Sha256};

use lockstep_bls12::ffi;

pub(crate) use lockstep_bls12::ffi::{
    Refusal, expand_message_xmd, fp_standard, g1_from_draw, g1_from_montgomery,
    g1_from_montgomery_checked, g1_mult_public, g1_to_affine, g1_uncompress_checked, g2_from_draw,
    g2_from_montgomery, g2_from_montgomery_checked, g2_mult_public, g2_to_affine,
    g2_uncompress_checked, pairing_coefficients, wipe_scalar,
};

/// Points per multi-scalar-multiplication task at most: Pippenger's buckets pay more the larger
/// the batch, so tasks are only cut smaller to give every worker a few.
const MSM_TASK_POINTS: usize = 1 << 16;

/// Points per task at least, however many workers there are.
const MSM_MIN_TASK_POINTS: usize = 2048;

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

/// The affine points a multi-scalar multiplication runs over.
pub(crate) trait MsmPoint: Copy + Send + Sync {
    /// The group's projective form.
    type Sum: Group + Send + Copy;
    /// Single-threaded Pippenger over `nbits`-bit scalars, `ceil(nbits / 8)` bytes each.
    fn msm(points: &[Self], scalars: &[u8], nbits: usize) -> Self::Sum;
}

impl MsmPoint for G1Affine {
    type Sum = G1Projective;
    fn msm(points: &[Self], scalars: &[u8], nbits: usize) -> G1Projective {
        ffi::g1_msm(points, scalars, nbits)
    }
}

impl MsmPoint for G2Affine {
    type Sum = G2Projective;
    fn msm(points: &[Self], scalars: &[u8], nbits: usize) -> G2Projective {
        ffi::g2_msm(points, scalars, nbits)
    }
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

/// The sums of several jobs in one parallel run, so that small jobs keep every worker busy:
/// every job is cut into tasks (at most [`MSM_TASK_POINTS`]; with several workers about two
/// per worker over all jobs, at least [`MSM_MIN_TASK_POINTS`]), each a single-threaded
/// Pippenger. The sums are the same group elements at every worker count (partial sums are
/// exact).
///
/// # Errors
/// Cancellation or a stall of the run.
pub(crate) fn msm_many<P: MsmPoint, const JOBS: usize>(
    pool: &Pool,
    control: &Control,
    jobs: [MsmJob<'_, P>; JOBS],
) -> Result<[P::Sum; JOBS], lockstep_shard::Error<Infallible>> {
    let lens: Vec<Vec<split::Segment>> = jobs
        .iter()
        .map(|job| {
            job.segments
                .iter()
                .map(|s| split::Segment {
                    len: s.points.len(),
                    weight: 1,
                })
                .collect()
        })
        .collect();
    let totals: Vec<usize> = lens.iter().map(|l| l.iter().map(|s| s.len).sum()).collect();
    let grand: usize = totals.iter().sum();
    // One worker: the largest batches (Pippenger's cost per point falls with the batch size).
    let per_task = if pool.workers() <= 1 {
        MSM_TASK_POINTS
    } else {
        grand
            .div_ceil(2 * pool.workers())
            .clamp(MSM_MIN_TASK_POINTS, MSM_TASK_POINTS)
    };
    // Tasks in job order, positioned along the concatenation of the jobs.
    let mut tasks = Vec::new();
    let mut offset = 0;
    for (job, &total) in totals.iter().enumerate() {
        for range in split::fixed(total, per_task) {
            tasks.push((offset + range.start, (job, range)));
        }
        offset += total;
    }
    let partial = pool.map_tasks(control, tasks, |check, (job, range)| {
        let MsmJob {
            segments,
            coefficients,
        } = &jobs[job];
        let bits = coefficients.bits();
        let mut sum = P::Sum::identity();
        for (index, local) in split::by_segment(range, &lens[job]) {
            let segment = &segments[index];
            let first = segment.first + local.start as u64;
            let mut scalars = Vec::with_capacity(local.len() * bits.div_ceil(8));
            coefficients.fill(first..first + local.len() as u64, &mut scalars);
            sum += P::msm(&segment.points[local.clone()], &scalars, bits);
            check.advance(local.len() as u64);
            if check.should_stop() {
                break;
            }
        }
        Ok::<_, Infallible>((job, sum))
    })?;
    let mut sums = [P::Sum::identity(); JOBS];
    for (job, sum) in partial {
        sums[job] += sum;
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
