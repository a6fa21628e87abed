//! Multi-scalar multiplication `sum k_i P_i` for public scalars: the GLV split, then
//! Pippenger's buckets with signed digits, accumulated batch-affine, windows and point ranges
//! run as tasks on a [`Pool`].
//!
//! # Determinism
//! Every task's sum is an exact group element, and the window sums are combined in a fixed
//! order, so the result is the same point at every worker count and every plan (window count
//! and widths, ranges, batch size); the plan changes the cost only.
//!
//! # Secrets
//! Variable time: which buckets fill, which additions collide, and the digits skipped depend on
//! the scalars. For public scalars (verifiers' random coefficients, public inputs) and for a
//! prover's witness, as every Groth16 prover runs it (gnark's, snarkjs's and
//! blst's own Pippenger are variable-time too); never for key material: secrets such as a
//! contribution's tau or a proof's blinding r and s are multiplied on blst's constant-time
//! path instead. The scalars' copies the MSM makes (the GLV halves, the scalars past the 0/1
//! grouping) are wiped when dropped.
//!
//! # Memory
//! Besides the inputs: the endomorphism images of the points (one affine point each), the
//! halves (16 bytes a point, twice), and per running task `2^(w-1)` affine buckets for its
//! window of `w` bits, with a state byte (97 bytes each in G1, 193 in G2; at most 2^16 buckets,
//! planned from about 2^19 points up: 6.4 MB in G1, 12.6 MB in G2).

use std::convert::Infallible;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use group::Group;
use lockstep_shard::{Control, Pool, split};

use crate::buckets::Buckets;
use crate::curve::{Curve, G1, G2};
use crate::digits::{self, MAX_WINDOW, windows};
use crate::field::Coordinate;
use crate::glv;
use crate::scalar::Canonical;
use zeroize::Zeroizing;

/// Why a multi-scalar multiplication did not run.
#[derive(Debug, thiserror::Error)]
pub enum MsmError {
    /// The inputs differ in length.
    #[error("{points} points but {scalars} scalars")]
    Lengths {
        /// Points given.
        points: usize,
        /// Scalars given.
        scalars: usize,
    },
    /// The run was cancelled or stalled.
    #[error(transparent)]
    Run(#[from] lockstep_shard::Error<Infallible>),
}

/// The cost of one batch-affine bucket addition, in units where reducing one bucket costs
/// [`REDUCE_COST`].
const ADD_COST: u64 = 10;

/// The cost of one bucket of a window (its reduction, and the cache its slot takes from every
/// addition), in [`ADD_COST`]'s units. Read from the calibration below at 2^19 points, one worker
/// (2026-12-07, Intel Xeon, 2 MB L2): a window of 2^20 G1 halves took 160 ms with 3,891 buckets
/// on average (10 windows) and 177 ms with 36,864 (8 windows), so a bucket costs about 3.3
/// additions (0.50 us against 0.15 us); in G2 about 2.1 (0.90 against 0.42 us). G1's figure
/// is taken for both; with it the plan takes 8 windows at 2^19 points on one worker, the
/// measured best of both groups.
const REDUCE_COST: u64 = 33;

/// The widest window a plan takes: 2^16 buckets (6.4 MB in G1, 12.6 MB in G2 a running task,
/// times the workers). Wider saves few additions at the sizes measured and costs more than it
/// saves: at 2^19 points, one worker, 7 windows (19 and 18 bits) took 1,543 ms in G1 against
/// 1,413 for 8 (17 and 16 bits), 1,459 for 9 (15, 14) and 1,601 for 10 (13, 12); G2 4,190,
/// 3,788, 4,128 and 4,439 ms.
const WIDEST_PLANNED: u32 = 17;

/// Additions per batch: one inversion (about 100 multiplications) shared by enough additions
/// that it costs under one multiplication each, few enough that the batch's buckets rarely
/// collide.
const BATCH: usize = 256;

/// Digits read (and their buckets prefetched) ahead of their additions.
const AHEAD: usize = 16;

/// Entries between two stop checks and progress reports in a task.
const STRIDE: usize = 4096;

/// How one MSM is cut: `windows` windows over halves of `bits` bits, the widest `c` bits
/// (the bits spread evenly: widths differ by at most one bit), `ranges` point ranges per window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The widest window's width in bits.
    pub c: u32,
    /// Windows.
    pub windows: u32,
    /// Point ranges each window is cut into (one task each).
    pub ranges: usize,
    /// The halves' bit length the windows cover (a final carry besides).
    pub bits: u32,
}

impl Plan {
    /// `windows` windows over halves of `bits` bits (at most 128), each cut into `ranges`.
    ///
    /// # Panics
    /// If the windows would be wider than 21 bits or more than `bits + 1` (an invariant of the
    /// callers).
    #[must_use]
    pub(crate) fn new(bits: u32, windows: u32, ranges: usize) -> Self {
        assert!(
            bits <= 128 && (1..=bits + 1).contains(&windows),
            "invariant: halves of at most 128 bits, 1 to bits + 1 windows"
        );
        let c = digits::widest(bits, windows);
        assert!(c <= MAX_WINDOW, "invariant: windows of at most 21 bits");
        Self {
            c,
            windows,
            ranges: ranges.max(1),
            bits,
        }
    }

    /// The cheapest plan by the cost model for `entries` non-zero halves of at most `bits`
    /// bits on `workers` workers: the rounds of tasks the slowest worker runs, a task costing
    /// its additions plus its window's buckets (on average over the windows: their widths
    /// differ by one bit).
    ///
    /// # Panics
    /// Never: some plan is always found (an invariant checked on the way).
    #[must_use]
    pub fn choose(entries: usize, bits: u32, workers: usize) -> Self {
        let workers = workers.max(1);
        let bits = bits.clamp(1, 128);
        let mut best: Option<(u64, Plan)> = None;
        let fewest = windows(bits, WIDEST_PLANNED.min(MAX_WINDOW));
        let most = windows(bits, 2);
        for k in fewest..=most {
            let buckets: u64 = digits::layout(bits, k)
                .iter()
                .map(|w| 1u64 << (w.width() - 1))
                .sum();
            let most_ranges = if workers == 1 { 1 } else { 4 * workers };
            for ranges in 1..=most_ranges {
                let tasks = k as usize * ranges;
                let rounds = tasks.div_ceil(workers) as u64;
                let per_task = (entries.div_ceil(ranges) as u64) * ADD_COST
                    + buckets * REDUCE_COST / u64::from(k);
                let cost = rounds * per_task;
                if best.is_none_or(|(b, _)| cost < b) {
                    best = Some((cost, Plan::new(bits, k, ranges)));
                }
            }
        }
        best.expect("invariant: at least one plan").1
    }
}

/// `sum scalars[i] * points[i]` in G1, for points in the prime-order subgroup and public
/// scalars (see the module's "Secrets"), on `pool`'s workers under `control`; the same point at
/// every worker count.
///
/// # Errors
/// [`MsmError::Lengths`] if the slices differ in length; [`MsmError::Run`] on cancellation or a
/// stall.
pub fn g1(
    pool: &Pool,
    control: &Control,
    points: &[G1Affine],
    scalars: &[Canonical],
) -> Result<G1Projective, MsmError> {
    msm::<G1>(pool, control, points, scalars)
}

/// [`g1`] in G2.
///
/// # Errors
/// As [`g1`].
pub fn g2(
    pool: &Pool,
    control: &Control,
    points: &[G2Affine],
    scalars: &[Canonical],
) -> Result<G2Projective, MsmError> {
    msm::<G2>(pool, control, points, scalars)
}

/// `sum scalars[i] * points[i]` in `C`, for points in the prime-order subgroup (the
/// endomorphism's eigenvalue holds there only) and public scalars (see the module's
/// "Secrets"), on `pool`'s workers under `control`.
///
/// # Errors
/// [`MsmError::Lengths`] if the slices differ in length; [`MsmError::Run`] on cancellation or a
/// stall.
pub(crate) fn msm<C: Curve>(
    pool: &Pool,
    control: &Control,
    points: &[C::Affine],
    scalars: &[Canonical],
) -> Result<C::Projective, MsmError> {
    if points.len() != scalars.len() {
        return Err(MsmError::Lengths {
            points: points.len(),
            scalars: scalars.len(),
        });
    }
    let trivial = scalars
        .iter()
        .filter(|k| **k == Canonical::ZERO || **k == Canonical::ONE)
        .count();
    if trivial > 0 && trivial >= scalars.len() / TRIVIAL_SHARE {
        return grouped::<C>(pool, control, points, scalars, trivial);
    }
    let halves = split_scalars::<C>(pool, control, scalars)?;
    let images = endomorphism_images::<C>(pool, control, points)?;
    let entries = halves.iter().filter(|h| **h != 0).count();
    let bits = halves
        .iter()
        .map(|h| 128 - h.leading_zeros())
        .max()
        .unwrap_or(0);
    if bits == 0 {
        return Ok(C::Projective::identity());
    }
    let plan = Plan::choose(entries, bits, pool.workers());
    Ok(run_plan::<C>(
        pool, control, points, &images, &halves, plan, true,
    )?)
}

/// Scalars grouped by size pay off once this share of them (one in `TRIVIAL_SHARE`) are 0 or 1.
const TRIVIAL_SHARE: usize = 16;

/// Buckets the points of scalar one are spread over: a batch of as many additions never
/// collides, and shares one inversion.
const ONES_BUCKETS: u32 = 256;

/// [`msm`] with its scalars grouped by size (a circom witness is mostly 0 and 1): zeros
/// dropped; the points of scalar one summed apart, round-robin over [`ONES_BUCKETS`]
/// batch-affine buckets in ranges on the pool (in one window's buckets they would all fall in
/// bucket 1, each collision a projective addition); the rest through the windows. Group sums are
/// exact, so the sum is the same point.
fn grouped<C: Curve>(
    pool: &Pool,
    control: &Control,
    points: &[C::Affine],
    scalars: &[Canonical],
    trivial: usize,
) -> Result<C::Projective, MsmError> {
    let rest = scalars.len() - trivial;
    let mut ones = lockstep_shard::memory::try_with_capacity(trivial)
        .map_err(lockstep_shard::Error::<Infallible>::from)?;
    let mut rest_points = lockstep_shard::memory::try_with_capacity(rest)
        .map_err(lockstep_shard::Error::<Infallible>::from)?;
    // The scalars' copies, wiped when dropped.
    let mut rest_scalars = Zeroizing::new(
        lockstep_shard::memory::try_with_capacity(rest)
            .map_err(lockstep_shard::Error::<Infallible>::from)?,
    );
    for (p, k) in points.iter().zip(scalars) {
        if *k == Canonical::ONE {
            ones.push(*p);
        } else if *k != Canonical::ZERO {
            rest_points.push(*p);
            rest_scalars.push(*k);
        }
    }
    let ranges = split::balanced(ones.len(), pool.workers().max(1));
    let tasks: Vec<(usize, std::ops::Range<usize>)> =
        ranges.into_iter().map(|r| (r.start, r)).collect();
    let sums = pool.map_tasks(control, tasks, |check, range| {
        let mut acc = Buckets::<C>::new(ONES_BUCKETS as usize, ONES_BUCKETS as usize, true);
        for (slot, i) in (0u32..).zip(range.clone()) {
            if let Some((x, y)) = C::coordinates(&ones[i]) {
                acc.add(slot % ONES_BUCKETS, x, y);
            }
        }
        check.advance(range.len() as u64);
        Ok::<_, Infallible>(acc.total())
    })?;
    let mut sum = C::Projective::identity();
    for s in sums {
        sum += &s;
    }
    if !rest_points.is_empty() {
        sum += &msm::<C>(pool, control, &rest_points, &rest_scalars)?;
    }
    Ok(sum)
}

/// [`msm`] on a given plan, through the field's vector kernel when `vector` and the CPU has it
/// (tests run every plan shape, both ways, against the reference).
pub(crate) fn run_plan<C: Curve>(
    pool: &Pool,
    control: &Control,
    points: &[C::Affine],
    images: &[C::Affine],
    halves: &[u128],
    plan: Plan,
    vector: bool,
) -> Result<C::Projective, lockstep_shard::Error<Infallible>> {
    let n = points.len();
    let total = halves.len();
    let point = |i: usize| if i < n { &points[i] } else { &images[i - n] };
    let layout = digits::layout(plan.bits, plan.windows);
    let ranges = split::balanced(total, plan.ranges);
    let mut tasks = Vec::with_capacity(layout.len() * ranges.len());
    for j in 0..layout.len() {
        for range in &ranges {
            tasks.push((j * total + range.start, (j, range.clone())));
        }
    }
    let sums = pool.map_tasks(control, tasks, |check, (j, range)| {
        let window = layout[j];
        let buckets = 1usize << (window.width() - 1);
        let mut acc = Buckets::<C>::new(buckets, BATCH.min(buckets / 4 + 1), vector);
        for chunk in split::fixed(range.len(), STRIDE) {
            let first = range.start + chunk.start;
            // Digits a block ahead of their additions, their buckets prefetched: past L1 the
            // buckets' reads are the additions' latency.
            let mut ahead = [(0usize, 0u32, false); AHEAD];
            for (start, block) in (first..)
                .step_by(AHEAD)
                .zip(halves[first..range.start + chunk.end].chunks(AHEAD))
            {
                let mut count = 0;
                for (i, &half) in (start..).zip(block) {
                    let (magnitude, negative) = window.digit(half);
                    if magnitude != 0 {
                        acc.prefetch(magnitude - 1);
                        ahead[count] = (i, magnitude, negative);
                        count += 1;
                    }
                }
                for &(i, magnitude, negative) in &ahead[..count] {
                    if let Some((x, y)) = C::coordinates(point(i)) {
                        acc.add(magnitude - 1, x, if negative { y.neg() } else { y });
                    }
                }
            }
            check.advance(chunk.len() as u64);
            if check.should_stop() {
                break;
            }
        }
        Ok::<_, Infallible>((j, acc.sum()))
    })?;
    let mut windows = vec![C::Projective::identity(); layout.len()];
    for (j, sum) in sums {
        windows[j] += &sum;
    }
    // Horner's rule from the top window down: times 2^(w_j), then window j's sum.
    let mut acc = C::Projective::identity();
    for (sum, window) in windows.iter().zip(&layout).rev() {
        for _ in 0..window.width() {
            acc = acc.double();
        }
        acc += sum;
    }
    Ok(acc)
}

/// The halves of every scalar: `k0` of scalar `i` at `i`, `k1` at `n + i`; a scalar below
/// 2^128 is its own `k0` (grouped by bit length: `k1 = 0` costs nothing).
fn split_scalars<C: Curve>(
    pool: &Pool,
    control: &Control,
    scalars: &[Canonical],
) -> Result<Zeroizing<Vec<u128>>, lockstep_shard::Error<Infallible>> {
    // Written in place into storage wiped when dropped: the halves are the scalars' (a
    // witness's) copies.
    let n = scalars.len();
    let mut halves = Zeroizing::new(lockstep_shard::memory::try_filled(2 * n, 0u128)?);
    let (lows, highs) = halves.split_at_mut(n);
    pool.for_each_block(
        control,
        (lows, highs),
        lockstep_shard::Cut::Blocks(1 << 12),
        |_, range, (lows, highs): (&mut [u128], &mut [u128])| {
            for ((low, high), k) in lows.iter_mut().zip(highs.iter_mut()).zip(&scalars[range]) {
                let limbs = k.limbs();
                (*low, *high) = if limbs[2] == 0 && limbs[3] == 0 {
                    // Already a half: split, a 128-bit scalar would put its high half (0 or 1)
                    // of a third of the points in one bucket.
                    ((u128::from(limbs[1]) << 64) | u128::from(limbs[0]), 0)
                } else {
                    let (high, low) = glv::split(limbs, C::EIGENVALUE);
                    (low, high)
                };
            }
            Ok::<_, Infallible>(())
        },
    )?;
    Ok(halves)
}

/// `endomorphism(P)` for every point, in order.
fn endomorphism_images<C: Curve>(
    pool: &Pool,
    control: &Control,
    points: &[C::Affine],
) -> Result<Vec<C::Affine>, lockstep_shard::Error<Infallible>> {
    pool.map_items(control, points, |_, p| {
        Ok::<_, Infallible>(C::endomorphism(p))
    })
}

#[cfg(test)]
#[allow(
    clippy::cast_possible_truncation,
    reason = "limb and digit splits in test references"
)]
mod tests {
    use super::*;
    use crate::ffi;
    use blstrs::Scalar;
    use ff::Field;
    use group::prime::PrimeCurveAffine;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{RngCore, SeedableRng};

    /// The definition, serially: one constant-time multiplication per point.
    fn naive<C: Curve>(points: &[C::Affine], scalars: &[Canonical]) -> C::Projective
    where
        C::Affine: std::ops::Mul<Scalar, Output = C::Projective>,
    {
        let mut sum = C::Projective::identity();
        for (p, k) in points.iter().zip(scalars) {
            sum += &(*p * k.to_scalar());
        }
        sum
    }

    fn bytes(scalars: &[Canonical]) -> Vec<u8> {
        scalars
            .iter()
            .flat_map(|k| k.to_scalar().to_bytes_le())
            .collect()
    }

    fn pools() -> Vec<Pool> {
        let mut pools = vec![Pool::current_thread()];
        pools.extend([1, 2, 3, 5].map(|w| Pool::new(w).unwrap()));
        pools
    }

    fn random_scalars(rng: &mut ChaCha20Rng, n: usize) -> Vec<Canonical> {
        (0..n)
            .map(|_| Canonical::from_scalar(&Scalar::random(&mut *rng)))
            .collect()
    }

    fn g1_points(rng: &mut ChaCha20Rng, n: usize) -> Vec<G1Affine> {
        // Distinct points cheaply: a random start, then a random step added again and again.
        let step = G1Projective::random(&mut *rng);
        let mut p = G1Projective::random(&mut *rng);
        let projective: Vec<G1Projective> = (0..n)
            .map(|_| {
                p += step;
                p
            })
            .collect();
        let mut out = vec![G1Affine::identity(); n];
        ffi::g1_to_affine(&projective, &mut out);
        out
    }

    fn g2_points(rng: &mut ChaCha20Rng, n: usize) -> Vec<G2Affine> {
        let step = G2Projective::random(&mut *rng);
        let mut p = G2Projective::random(&mut *rng);
        let projective: Vec<G2Projective> = (0..n)
            .map(|_| {
                p += step;
                p
            })
            .collect();
        let mut out = vec![G2Affine::identity(); n];
        ffi::g2_to_affine(&projective, &mut out);
        out
    }

    /// Scalar sets that stress the digits and the buckets.
    fn scalar_cases(rng: &mut ChaCha20Rng, n: usize) -> Vec<(&'static str, Vec<Canonical>)> {
        let minus_one = Canonical::from_scalar(&-Scalar::ONE);
        let lambda = Canonical::from_limbs([LAMBDA_LOW, LAMBDA_HIGH, 0, 0]).unwrap();
        vec![
            ("random", random_scalars(rng, n)),
            ("zeros", vec![Canonical::ZERO; n]),
            ("ones", vec![Canonical::ONE; n]),
            ("r - 1", vec![minus_one; n]),
            ("lambda", vec![lambda; n]),
            (
                "around 2^128",
                (0..n)
                    .map(|i| {
                        let limbs = match i % 4 {
                            0 => [u64::MAX, u64::MAX, 0, 0],
                            1 => [0, 0, 1, 0],
                            2 => [1, 0, 1, 0],
                            _ => [rng.next_u64(), rng.next_u64(), 0, 0],
                        };
                        Canonical::from_limbs(limbs).unwrap()
                    })
                    .collect(),
            ),
            (
                "mixed small",
                (0..n)
                    .map(|i| {
                        let v = match i % 5 {
                            0 => 0,
                            1 => 1,
                            2 => rng.next_u64() % 1000,
                            3 => u64::MAX,
                            _ => rng.next_u64(),
                        };
                        Canonical::from_limbs([v, 0, 0, 0]).unwrap()
                    })
                    .collect(),
            ),
            (
                // A circom witness: mostly 0 and 1 (grouped apart), a few wide values.
                "witness-like",
                (0..n)
                    .map(|i| match (i % 7, rng.next_u32() % 3) {
                        (0, _) => random_scalars(rng, 1)[0],
                        (_, 0) => Canonical::ZERO,
                        (_, 1) => Canonical::ONE,
                        _ => Canonical::from_limbs([u64::from(rng.next_u32() % 3 + 2), 0, 0, 0])
                            .unwrap(),
                    })
                    .collect(),
            ),
            (
                "one scalar of each kind then repeats",
                (0..n)
                    .map(|i| {
                        if i % 2 == 0 {
                            minus_one
                        } else {
                            Canonical::ONE
                        }
                    })
                    .collect(),
            ),
        ]
    }

    const LAMBDA_LOW: u64 = glv::LAMBDA as u64;
    const LAMBDA_HIGH: u64 = (glv::LAMBDA >> 64) as u64;

    #[test]
    fn g1_sums_equal_the_definition_and_blst_on_every_pool() {
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        let pools = pools();
        for n in [1usize, 2, 3, 7, 31, 33, 255, 257, 1023, 1025] {
            let mut points = g1_points(&mut rng, n);
            for (name, scalars) in scalar_cases(&mut rng, n) {
                let want = naive::<G1>(&points, &scalars);
                let blst = ffi::g1_msm(&points, &bytes(&scalars), 255);
                assert_eq!(want, blst, "blst agrees on {name}, n = {n}");
                for pool in &pools {
                    let got = msm::<G1>(pool, &Control::new(), &points, &scalars).unwrap();
                    assert_eq!(got, want, "{name}, n = {n}, {} workers", pool.workers());
                }
            }
            if n > 4 {
                // Repeated points, negated points and the point at infinity among the others.
                points[1] = points[0];
                points[2] = -points[0];
                points[3] = G1Affine::identity();
                points[4] = points[0];
                let scalars = random_scalars(&mut rng, n);
                let want = naive::<G1>(&points, &scalars);
                for pool in &pools {
                    let got = msm::<G1>(pool, &Control::new(), &points, &scalars).unwrap();
                    assert_eq!(got, want, "repeats, n = {n}, {} workers", pool.workers());
                }
            }
        }
    }

    #[test]
    fn g2_sums_equal_the_definition_and_blst_on_every_pool() {
        let mut rng = ChaCha20Rng::seed_from_u64(12);
        let pools = pools();
        for n in [1usize, 3, 33, 257] {
            let mut points = g2_points(&mut rng, n);
            for (name, scalars) in scalar_cases(&mut rng, n) {
                let want = naive::<G2>(&points, &scalars);
                assert_eq!(want, ffi::g2_msm(&points, &bytes(&scalars), 255));
                for pool in &pools {
                    let got = msm::<G2>(pool, &Control::new(), &points, &scalars).unwrap();
                    assert_eq!(got, want, "{name}, n = {n}, {} workers", pool.workers());
                }
            }
            if n > 4 {
                points[1] = points[0];
                points[2] = -points[0];
                points[3] = G2Affine::identity();
                let scalars = random_scalars(&mut rng, n);
                let want = naive::<G2>(&points, &scalars);
                let got = msm::<G2>(&pools[3], &Control::new(), &points, &scalars).unwrap();
                assert_eq!(got, want, "repeats, n = {n}");
            }
        }
    }

    #[test]
    fn every_plan_shape_gives_the_same_sum() {
        let mut rng = ChaCha20Rng::seed_from_u64(13);
        let n = 300;
        let points = g1_points(&mut rng, n);
        let scalars = random_scalars(&mut rng, n);
        let want = naive::<G1>(&points, &scalars);
        let pool = Pool::new(3).unwrap();
        let control = Control::new();
        let halves = split_scalars::<G1>(&pool, &control, &scalars).unwrap();
        let images = endomorphism_images::<G1>(&pool, &control, &points).unwrap();
        // Window counts from the fewest (7: 19 and 18 bits) to 24, then on to the most (129: a
        // bit each); past 16 bits the buckets, not the points, are the work: one range.
        let counts = (windows(128, MAX_WINDOW)..=24).chain([26, 33, 43, 64, 65, 100, 129]);
        for k in counts {
            let c = digits::widest(128, k);
            for ranges in if c <= 16 { &[1, 2, 7][..] } else { &[1][..] } {
                let ranges = *ranges;
                let plan = Plan::new(128, k, ranges);
                assert_eq!(plan.c, c);
                for vector in [false, true] {
                    let got =
                        run_plan::<G1>(&pool, &control, &points, &images, &halves, plan, vector)
                            .unwrap();
                    assert_eq!(got, want, "{plan:?}, vector {vector}");
                }
            }
        }
    }

    #[test]
    fn g2_plan_shapes_give_the_same_sum_with_and_without_the_kernel() {
        let mut rng = ChaCha20Rng::seed_from_u64(14);
        let n = 200;
        let points = g2_points(&mut rng, n);
        let scalars = random_scalars(&mut rng, n);
        let want = naive::<G2>(&points, &scalars);
        let pool = Pool::new(2).unwrap();
        let control = Control::new();
        let halves = split_scalars::<G2>(&pool, &control, &scalars).unwrap();
        let images = endomorphism_images::<G2>(&pool, &control, &points).unwrap();
        for c in [2, 5, 8, 11, 13, 16] {
            for ranges in [1, 3] {
                let plan = Plan::new(128, windows(128, c), ranges);
                for vector in [false, true] {
                    let got =
                        run_plan::<G2>(&pool, &control, &points, &images, &halves, plan, vector)
                            .unwrap();
                    assert_eq!(got, want, "{plan:?}, vector {vector}");
                }
            }
        }
    }

    #[test]
    fn lengths_must_agree_and_empty_sums_are_zero() {
        let pool = Pool::current_thread();
        let points = [G1Affine::generator(); 2];
        let err = msm::<G1>(&pool, &Control::new(), &points, &[Canonical::ONE]).unwrap_err();
        assert_eq!(err.to_string(), "2 points but 1 scalars");
        let zero = msm::<G1>(&pool, &Control::new(), &[], &[]).unwrap();
        assert_eq!(zero, G1Projective::identity());
    }

    #[test]
    fn plans_cut_large_runs_for_every_worker() {
        let one = Plan::choose(1 << 17, 128, 1);
        assert_eq!(one.ranges, 1);
        assert!((10..=WIDEST_PLANNED).contains(&one.c), "{one:?}");
        let many = Plan::choose(1 << 21, 128, 16);
        assert!(many.windows as usize * many.ranges >= 16, "{many:?}");
    }
}

/// The cost model's calibration on this machine: `cargo test --release -p lockstep-bls12 --
/// --ignored calibrate --nocapture` times one worker at 7 to 13 windows (19 to 10 bits) on
/// 2^16 random points (`CALIBRATE_LOG=19` for 2^19, where the constants were read; G1 and G2)
/// and prints the time, the additions and the buckets of each plan, from which `ADD_COST` and
/// `REDUCE_COST` are read.
#[cfg(test)]
mod calibration {
    use super::*;
    use crate::ffi;
    use blstrs::Scalar;
    use ff::Field;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    fn time<C: Curve>(points: &[C::Affine], scalars: &[Canonical]) {
        let pool = Pool::current_thread();
        let control = Control::new();
        let halves = split_scalars::<C>(&pool, &control, scalars).unwrap();
        let images = endomorphism_images::<C>(&pool, &control, points).unwrap();
        for k in 7..=13 {
            let plan = Plan::new(128, k, 1);
            let c = plan.c;
            let mut best = f64::MAX;
            for _ in 0..3 {
                let started = std::time::Instant::now();
                run_plan::<C>(&pool, &control, points, &images, &halves, plan, true).unwrap();
                best = best.min(started.elapsed().as_secs_f64() * 1e3);
            }
            let adds = plan.windows as usize * halves.len();
            let buckets: usize = digits::layout(128, k)
                .iter()
                .map(|w| 1usize << (w.width() - 1))
                .sum();
            #[allow(clippy::print_stdout, reason = "the calibration's report")]
            {
                println!(
                    "{k:>2} windows, widest {c:>2}: {best:8.1} ms, {adds} additions, {buckets} buckets"
                );
            }
        }
    }

    #[test]
    #[ignore = "a measurement, not a test: run by hand with --release"]
    fn calibrate() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        // 2^16 points unless CALIBRATE_LOG says otherwise.
        let log: u32 = std::env::var("CALIBRATE_LOG")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(16);
        let n = 1 << log;
        let scalars: Vec<Canonical> = (0..n)
            .map(|_| Canonical::from_scalar(&Scalar::random(&mut rng)))
            .collect();
        let step = G1Projective::random(&mut rng);
        let mut p = step;
        let g1: Vec<G1Projective> = (0..n)
            .map(|_| {
                p += step;
                p
            })
            .collect();
        let mut points = vec![G1Affine::default(); n];
        ffi::g1_to_affine(&g1, &mut points);
        time::<G1>(&points, &scalars);
        let step = G2Projective::random(&mut rng);
        let mut p = step;
        let g2: Vec<G2Projective> = (0..n)
            .map(|_| {
                p += step;
                p
            })
            .collect();
        let mut points = vec![G2Affine::default(); n];
        ffi::g2_to_affine(&g2, &mut points);
        time::<G2>(&points, &scalars);
    }
}
