//! Applying secrets (tau', alpha', beta') to an SRS: the serial reference, and the parallel
//! update that must equal it byte for byte.

use std::convert::Infallible;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{Curve, Group};
use lockstep_shard::{Check, Control, Pool, split};

use super::Srs;
use crate::curve;

/// The three secrets of one update: a contribution's or the beacon's. Wiped when dropped.
pub struct Secrets {
    pub(crate) tau: Scalar,
    pub(crate) alpha: Scalar,
    pub(crate) beta: Scalar,
}

impl Secrets {
    /// Secrets from known values (tests, and the beacon, whose values are public).
    pub fn from_scalars(tau: Scalar, alpha: Scalar, beta: Scalar) -> Self {
        Self { tau, alpha, beta }
    }
}

impl Drop for Secrets {
    fn drop(&mut self) {
        curve::wipe_scalar(&mut self.tau);
        curve::wipe_scalar(&mut self.alpha);
        curve::wipe_scalar(&mut self.beta);
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secrets(..)")
    }
}

/// The serial reference: gnark's loop, one point and one affine conversion at a time.
pub fn update_serial(srs: &mut Srs, secrets: &Secrets) {
    let n = srs.n();
    srs.alpha_tau[0] = (srs.alpha_tau[0] * secrets.alpha).to_affine();
    srs.beta_tau[0] = (srs.beta_tau[0] * secrets.beta).to_affine();
    srs.beta_g2 = (srs.beta_g2 * secrets.beta).to_affine();
    let mut power = secrets.tau;
    for i in 1..n {
        srs.g1_tau[i] = (srs.g1_tau[i] * power).to_affine();
        srs.g2_tau[i] = (srs.g2_tau[i] * power).to_affine();
        srs.alpha_tau[i] = (srs.alpha_tau[i] * (power * secrets.alpha)).to_affine();
        srs.beta_tau[i] = (srs.beta_tau[i] * (power * secrets.beta)).to_affine();
        power *= secrets.tau;
    }
    for i in n..srs.g1_tau.len() {
        srs.g1_tau[i] = (srs.g1_tau[i] * power).to_affine();
        power *= secrets.tau;
    }
    curve::wipe_scalar(&mut power);
}

/// Cost of one head index (three G1 and one G2 multiplication) in G1 multiplications: a G2
/// multiplication costs about two G1 ones with blst (shared/notes/peers.md: 226-276 us vs
/// 121-138 us).
const HEAD_WEIGHT: u64 = 5;

/// Tasks per worker: enough that a slow worker does not hold the run, few enough that each
/// task's `tau'^start` (one exponentiation) stays negligible.
const TASKS_PER_WORKER: usize = 4;

/// Indexes per block: one batch affine conversion (one inversion) per block and vector.
const BLOCK: usize = 256;

/// The part of the arrays one task owns.
enum Piece<'a> {
    /// Indexes `first..first + g1.len()` of the four head vectors.
    Head {
        first: usize,
        g1: &'a mut [G1Affine],
        g2: &'a mut [G2Affine],
        alpha: &'a mut [G1Affine],
        beta: &'a mut [G1Affine],
    },
    /// Indexes `first..first + g1.len()` of `g1_tau`, `first >= N`.
    Tail {
        first: usize,
        g1: &'a mut [G1Affine],
    },
}

/// The parallel update: equal to [`update_serial`] byte for byte at every worker count.
///
/// The indexes `1..N` (four points each) and `N..2N-1` (one point each) are cut by
/// [`split::weighted`] into ranges of equal cost; each task computes `tau'^start` once and steps
/// by `tau'`, converting to affine once per block. Progress is counted in points.
///
/// # Panics
/// Never on a well-formed [`Srs`] (its invariants fix the vector lengths).
///
/// # Errors
/// Cancellation or a stall; on error `srs` holds some points updated and some not, and must be
/// discarded.
pub fn update(
    pool: &Pool,
    control: &Control,
    srs: &mut Srs,
    secrets: &Secrets,
) -> Result<(), lockstep_shard::Error<Infallible>> {
    let n = srs.n();
    srs.alpha_tau[0] = (srs.alpha_tau[0] * secrets.alpha).to_affine();
    srs.beta_tau[0] = (srs.beta_tau[0] * secrets.beta).to_affine();
    srs.beta_g2 = (srs.beta_g2 * secrets.beta).to_affine();

    let segments = [
        split::Segment {
            len: n - 1,
            weight: HEAD_WEIGHT,
        },
        split::Segment {
            len: srs.g1_tau.len() - n,
            weight: 1,
        },
    ];
    let ranges = split::weighted(&segments, pool.workers() * TASKS_PER_WORKER);
    let mut head_ranges = Vec::new();
    let mut tail_ranges = Vec::new();
    let mut owners = Vec::new();
    for (task, range) in ranges.iter().enumerate() {
        for (segment, local) in split::by_segment(range.clone(), &segments) {
            if segment == 0 {
                head_ranges.push(local);
            } else {
                tail_ranges.push(local);
            }
            owners.push((task, segment));
        }
    }

    let (g1_head, g1_tail) = srs.g1_tau.split_at_mut(n);
    let mut g1_head = split::parts_mut(&mut g1_head[1..], &head_ranges).into_iter();
    let mut g2_head = split::parts_mut(&mut srs.g2_tau[1..], &head_ranges).into_iter();
    let mut alpha_head = split::parts_mut(&mut srs.alpha_tau[1..], &head_ranges).into_iter();
    let mut beta_head = split::parts_mut(&mut srs.beta_tau[1..], &head_ranges).into_iter();
    let mut g1_tail = split::parts_mut(g1_tail, &tail_ranges).into_iter();
    let (mut head_starts, mut tail_starts) = (head_ranges.iter(), tail_ranges.iter());

    let mut tasks: Vec<(usize, Vec<Piece<'_>>)> = ranges
        .iter()
        .map(|range| (range.start, Vec::new()))
        .collect();
    for (task, segment) in owners {
        let piece = if segment == 0 {
            let start = head_starts
                .next()
                .expect("invariant: one head range per head piece");
            Piece::Head {
                first: 1 + start.start,
                g1: g1_head
                    .next()
                    .expect("invariant: parts_mut gives one part per range"),
                g2: g2_head
                    .next()
                    .expect("invariant: parts_mut gives one part per range"),
                alpha: alpha_head
                    .next()
                    .expect("invariant: parts_mut gives one part per range"),
                beta: beta_head
                    .next()
                    .expect("invariant: parts_mut gives one part per range"),
            }
        } else {
            let start = tail_starts
                .next()
                .expect("invariant: one tail range per tail piece");
            Piece::Tail {
                first: n + start.start,
                g1: g1_tail
                    .next()
                    .expect("invariant: parts_mut gives one part per range"),
            }
        };
        tasks[task].1.push(piece);
    }

    pool.map_tasks(control, tasks, |check, pieces| {
        for piece in pieces {
            match piece {
                Piece::Head {
                    first,
                    g1,
                    g2,
                    alpha,
                    beta,
                } => {
                    update_head(check, secrets, first, g1, g2, alpha, beta);
                }
                Piece::Tail { first, g1 } => update_tail(check, secrets, first, g1),
            }
            if check.should_stop() {
                break;
            }
        }
        Ok::<_, Infallible>(())
    })?;
    Ok(())
}

fn update_head(
    check: &Check<'_>,
    secrets: &Secrets,
    first: usize,
    g1: &mut [G1Affine],
    g2: &mut [G2Affine],
    alpha: &mut [G1Affine],
    beta: &mut [G1Affine],
) {
    let mut power = secrets.tau.pow_vartime([first as u64]);
    let mut scaled;
    let mut g1_out = vec![G1Projective::identity(); BLOCK];
    let mut g2_out = vec![G2Projective::identity(); BLOCK];
    let mut start = 0;
    while start < g1.len() {
        let end = (start + BLOCK).min(g1.len());
        let len = end - start;
        let mut alpha_out = vec![G1Projective::identity(); len];
        let mut beta_out = vec![G1Projective::identity(); len];
        for k in 0..len {
            let i = start + k;
            g1_out[k] = g1[i] * power;
            g2_out[k] = g2[i] * power;
            scaled = power * secrets.alpha;
            alpha_out[k] = alpha[i] * scaled;
            scaled = power * secrets.beta;
            beta_out[k] = beta[i] * scaled;
            curve::wipe_scalar(&mut scaled);
            power *= secrets.tau;
        }
        curve::g1_to_affine(&g1_out[..len], &mut g1[start..end]);
        curve::g2_to_affine(&g2_out[..len], &mut g2[start..end]);
        curve::g1_to_affine(&alpha_out, &mut alpha[start..end]);
        curve::g1_to_affine(&beta_out, &mut beta[start..end]);
        check.advance(4 * len as u64);
        start = end;
        if check.should_stop() {
            break;
        }
    }
    curve::wipe_scalar(&mut power);
}

fn update_tail(check: &Check<'_>, secrets: &Secrets, first: usize, g1: &mut [G1Affine]) {
    let mut power = secrets.tau.pow_vartime([first as u64]);
    let mut out = vec![G1Projective::identity(); BLOCK];
    let mut start = 0;
    while start < g1.len() {
        let end = (start + BLOCK).min(g1.len());
        for (slot, point) in out.iter_mut().zip(&g1[start..end]) {
            *slot = point * power;
            power *= secrets.tau;
        }
        curve::g1_to_affine(&out[..end - start], &mut g1[start..end]);
        check.advance((end - start) as u64);
        start = end;
        if check.should_stop() {
            break;
        }
    }
    curve::wipe_scalar(&mut power);
}
