//! Verification of a contribution against its predecessor, with random linear combinations:
//! one multi-scalar multiplication per group and a handful of pairings, not one pairing per
//! point.

use std::convert::Infallible;

use blstrs::{G1Affine, G2Affine, Scalar};
use ff::Field;
use group::Curve;
use group::prime::PrimeCurveAffine;
use lockstep_shard::{Control, Pool};

use super::file::names;
use super::{Phase1, Srs, UpdateProof, Value};
use crate::codec::Location;
use crate::curve::{self, Coefficients, MsmJob, PowerSegment, msm, msm_many};

/// Why a contribution (or a set of powers) does not verify. Each names the check that failed,
/// and where it can, the first bad point.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The contribution carries no challenge: only the initial object may.
    #[error("challenge: the contribution has none (it does not name its predecessor)")]
    MissingChallenge,
    /// The challenge is not the predecessor's hash: the contribution skips or repeats a step.
    #[error(
        "challenge: the contribution was made on {found}, not on its predecessor {expected} \
         (it skips or repeats a step of the chain)"
    )]
    ChallengeMismatch {
        /// The challenge in the file, hex.
        found: String,
        /// The predecessor's SHA-256, hex.
        expected: String,
    },
    /// The domain sizes differ.
    #[error("domain size: 2^{found} after 2^{expected}")]
    PowerMismatch {
        /// The contribution's power.
        found: u32,
        /// The predecessor's power.
        expected: u32,
    },
    /// A commitment `[x]_1` is the point at infinity: a zero secret would erase the SRS.
    #[error("{} proof: the commitment is the point at infinity (a zero contribution)", .value.name())]
    ZeroContribution {
        /// Which secret.
        value: Value,
    },
    /// The proof of knowledge of `x` does not verify.
    #[error("{} proof of knowledge: does not verify for its commitment and challenge", .value.name())]
    ProofOfKnowledge {
        /// Which secret.
        value: Value,
    },
    /// A point is not its predecessor's times the committed secret.
    #[error("{} update: {location} is not the previous {location} times the committed value", .value.name())]
    Update {
        /// Which secret.
        value: Value,
        /// Which point.
        location: Location,
    },
    /// The vectors are not consecutive powers of one tau.
    #[error("powers of tau: {}", match .location {
        Some(location) => format!("{location} breaks the ratio of consecutive powers"),
        None => "the vectors do not share one ratio of consecutive powers".to_owned(),
    })]
    Ratio {
        /// The first point in file order that breaks the ratio, when it could be found.
        location: Option<Location>,
    },
    /// `[tau]_1` and `[tau]_2` are not the same power (one of the two is bad; in a contribution
    /// the tau proof has already vouched for `[tau]_1`).
    #[error("powers of tau: G1 Tau[1] and G2 Tau[1] are not the same power of tau")]
    TauMismatch,
    /// `[tau]_1` is the point at infinity.
    #[error("powers of tau: G1 Tau[1] is the point at infinity (tau = 0)")]
    Degenerate,
    /// The run was cancelled, or a worker failed.
    #[error("{0}")]
    Run(String),
}

impl From<lockstep_shard::Error<Infallible>> for VerifyError {
    fn from(error: lockstep_shard::Error<Infallible>) -> Self {
        Self::Run(error.to_string())
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A G1 point an update proof must move: its name, index, value before and after.
type G1Move<'a> = (&'static str, u64, &'a G1Affine, &'a G1Affine);

/// Verifies `next` as the contribution that follows `previous` (whose bytes hash to
/// `previous_hash`), in gnark's order: the challenge, the domain size, the tau, alpha and beta
/// proofs (non-zero commitment, proof of knowledge, the update of `[tau]_1`, `[alpha]_1`,
/// `[beta]_1` and `[beta]_2` by the committed values), then the powers of `next` ([`check_powers`]).
///
/// Stricter than gnark in one point: a contribution without a challenge is refused (gnark skips
/// the comparison then, and relies on the proofs alone).
///
/// # Errors
/// The first check that fails.
pub fn verify_contribution(
    pool: &Pool,
    control: &Control,
    previous: &Phase1,
    previous_hash: &[u8; 32],
    next: &Phase1,
) -> Result<(), VerifyError> {
    match &next.challenge {
        None => return Err(VerifyError::MissingChallenge),
        Some(found) if found != previous_hash => {
            return Err(VerifyError::ChallengeMismatch {
                found: hex(found),
                expected: hex(previous_hash),
            });
        }
        Some(_) => {}
    }
    let (found, expected) = (next.srs.power(), previous.srs.power());
    if found != expected {
        return Err(VerifyError::PowerMismatch { found, expected });
    }
    let (prev, new) = (&previous.srs, &next.srs);
    let tau_moves = [(names::G1_TAU, 1, &prev.g1_tau[1], &new.g1_tau[1])];
    let alpha_moves = [(names::ALPHA_TAU, 0, &prev.alpha_tau[0], &new.alpha_tau[0])];
    let beta_moves = [(names::BETA_TAU, 0, &prev.beta_tau[0], &new.beta_tau[0])];
    let checks: [(Value, &UpdateProof, &[G1Move<'_>]); 3] = [
        (Value::Tau, &next.proofs.tau, &tau_moves),
        (Value::Alpha, &next.proofs.alpha, &alpha_moves),
        (Value::Beta, &next.proofs.beta, &beta_moves),
    ];
    for (value, proof, moves) in checks {
        if proof.is_zero() {
            return Err(VerifyError::ZeroContribution { value });
        }
        if !proof.knows(previous_hash, value) {
            return Err(VerifyError::ProofOfKnowledge { value });
        }
        for &(name, index, before, after) in moves {
            if !proof.moves_g1(previous_hash, value, before, after) {
                return Err(VerifyError::Update {
                    value,
                    location: Location::element(name, index),
                });
            }
        }
    }
    if !next.proofs.beta.moves_g2(&prev.beta_g2, &new.beta_g2) {
        return Err(VerifyError::Update {
            value: Value::Beta,
            location: Location::value(names::BETA_G2),
        });
    }
    check_powers(pool, control, new)
}

/// Checks that the SRS holds consecutive powers of one tau: `g1_tau`, `alpha_tau` and
/// `beta_tau` each advance by the ratio `[tau]_2 = g2_tau[1]` at every index, `[tau]_1` and
/// `[tau]_2` agree, and `g2_tau[i]` matches `g1_tau[i]` for every `i < N`.
///
/// Two randomized checks, a few multi-scalar multiplications (MSMs) and pairings in all:
/// - A, the ratio of the first `N` powers in G1: with `rho` random, `T = sum rho^i a_i` over
///   `i < N - 1` and `S = sum rho^i a_(i+1)`, then `e(T, [tau]_2) = e(S, g2)`. Powers of one `rho`
///   give both sums from one MSM (gnark's approach), so these `N` points cost one full-size MSM.
/// - B, everything else against those powers, with independent 128-bit `r_i` shared by the
///   vectors and full-size random `g1, g2, g3`: with `B = sum r_i g2_tau[i]`,
///   `e(sum r_i (g1_tau[i] + g1 g1_tau[N-1+i] + g2 alpha_tau[i] + g3 beta_tau[i]), g2)
///   = e(g1 + g1 g1_tau[N-1] + g2 alpha_tau[0] + g3 beta_tau[0], B)`: half-size scalars for the
///   other `3N - 1` G1 points and the `N` G2 points (a G2 point costs about three G1 points).
///
/// A cheating file passes with probability at most about `N / r + 2^-127`. On failure, checks
/// per vector with fresh randomness and a bisection find the first bad point in file order.
///
/// # Errors
/// [`VerifyError::Degenerate`], [`VerifyError::Ratio`], or a run failure.
pub fn check_powers(pool: &Pool, control: &Control, srs: &Srs) -> Result<(), VerifyError> {
    let tau1 = srs.g1_tau[1];
    let tau2 = srs.g2_tau[1];
    if bool::from(tau1.is_identity()) {
        return Err(VerifyError::Degenerate);
    }
    if !curve::same_ratio(&tau1, &curve::g2(), &curve::g1(), &tau2) {
        return Err(VerifyError::TauMismatch);
    }
    if powers_hold(pool, control, srs)? {
        return Ok(());
    }
    Err(VerifyError::Ratio {
        location: first_bad_point_in_file(pool, control, srs)?,
    })
}

/// Checks A and B of [`check_powers`]: the five G1 sums in one parallel run, then the G2 sum.
fn powers_hold(pool: &Pool, control: &Control, srs: &Srs) -> Result<bool, VerifyError> {
    let n = srs.n();
    let (tau2, last) = (srs.g2_tau[1], n as u64 - 1);
    let rho = curve::random_nonzero_scalar();
    let seed = curve::random_seed();
    let r = Coefficients::Random128(&seed);
    let job = |points, coefficients| MsmJob {
        segments: vec![PowerSegment { points, first: 0 }],
        coefficients,
    };
    let [full, g1_low, g1_high, alpha, beta] = msm_many(
        pool,
        control,
        [
            job(&srs.g1_tau[..n], Coefficients::Powers(&rho)),
            job(&srs.g1_tau[..n], r),
            job(&srs.g1_tau[n - 1..], r),
            job(&srs.alpha_tau, r),
            job(&srs.beta_tau, r),
        ],
    )?;
    // A: T = F - rho^(N-1) a_(N-1), S = rho^-1 (F - a_0).
    let truncated = full - srs.g1_tau[n - 1] * rho.pow_vartime([last]);
    let inverse = Option::<Scalar>::from(rho.invert()).expect("invariant: rho is non-zero");
    let shifted = (full - srs.g1_tau[0]) * inverse;
    if !curve::same_ratio(
        &truncated.to_affine(),
        &tau2,
        &shifted.to_affine(),
        &curve::g2(),
    ) {
        return Ok(false);
    }
    // B.
    let b = msm(
        pool,
        control,
        &[PowerSegment {
            points: &srs.g2_tau[..],
            first: 0,
        }],
        r,
    )?;
    let [c1, c2, c3] = [(); 3].map(|()| curve::random_nonzero_scalar());
    let left = g1_low + g1_high * c1 + alpha * c2 + beta * c3;
    let base = curve::g1() + srs.g1_tau[n - 1] * c1 + srs.alpha_tau[0] * c2 + srs.beta_tau[0] * c3;
    Ok(curve::same_ratio(
        &left.to_affine(),
        &curve::g2(),
        &base.to_affine(),
        &b.to_affine(),
    ))
}

/// The first point in file order that breaks the powers (the slow path, after a failed check):
/// `G1 Tau` by its own ratio, then `G2 Tau` against the G1 powers, then `G1 BetaTau` and
/// `G1 AlphaTau` by their ratios, each with fresh randomness.
fn first_bad_point_in_file(
    pool: &Pool,
    control: &Control,
    srs: &Srs,
) -> Result<Option<Location>, VerifyError> {
    let tau2 = srs.g2_tau[1];
    if let Some(i) = first_bad_g1(pool, control, &srs.g1_tau, &tau2)? {
        return Ok(Some(Location::element(names::G1_TAU, i)));
    }
    let holds = |lo: usize, hi: usize| {
        g2_matches_g1(pool, control, &srs.g1_tau[lo..=hi], &srs.g2_tau[lo..=hi])
    };
    if let Some(i) = first_bad_point(srs.n(), holds)? {
        return Ok(Some(Location::element(names::G2_TAU, i)));
    }
    for (name, vector) in [
        (names::BETA_TAU, &srs.beta_tau),
        (names::ALPHA_TAU, &srs.alpha_tau),
    ] {
        if let Some(i) = first_bad_g1(pool, control, vector, &tau2)? {
            return Ok(Some(Location::element(name, i)));
        }
    }
    Ok(None)
}

/// Whether the G1 vectors advance by `[tau]_2` everywhere: `T = F - sum_s rho^(o_s + n_s - 1)
/// a_s[last]`, `S = rho^-1 (F - sum_s rho^(o_s) a_s[0])` from one MSM `F = sum rho^k a_k`.
fn g1_ratio_holds(
    pool: &Pool,
    control: &Control,
    vectors: &[&[G1Affine]],
    tau2: &G2Affine,
) -> Result<bool, VerifyError> {
    let rho = curve::random_nonzero_scalar();
    let mut segments = Vec::with_capacity(vectors.len());
    let mut first = 0u64;
    for vector in vectors {
        segments.push(PowerSegment {
            points: vector,
            first,
        });
        first += vector.len() as u64;
    }
    let full = msm(pool, control, &segments, Coefficients::Powers(&rho))?;
    let (mut truncated, mut shifted) = (full, full);
    for segment in &segments {
        let n = segment.points.len() as u64;
        let last = segment.points[segment.points.len() - 1];
        truncated -= last * rho.pow_vartime([segment.first + n - 1]);
        shifted -= segment.points[0] * rho.pow_vartime([segment.first]);
    }
    let inverse = Option::<Scalar>::from(rho.invert()).expect("invariant: rho is non-zero");
    let shifted = shifted * inverse;
    Ok(curve::same_ratio(
        &truncated.to_affine(),
        tau2,
        &shifted.to_affine(),
        &curve::g2(),
    ))
}

/// Whether `g2[i] = [x_i]_2` for `g1[i] = [x_i]_1` at every `i`, with 128-bit coefficients.
fn g2_matches_g1(
    pool: &Pool,
    control: &Control,
    g1: &[G1Affine],
    g2: &[G2Affine],
) -> Result<bool, VerifyError> {
    let seed = curve::random_seed();
    let coefficients = Coefficients::Random128(&seed);
    let left = msm(
        pool,
        control,
        &[PowerSegment {
            points: g1,
            first: 0,
        }],
        coefficients,
    )?;
    let right = msm(
        pool,
        control,
        &[PowerSegment {
            points: g2,
            first: 0,
        }],
        coefficients,
    )?;
    Ok(curve::same_ratio(
        &left.to_affine(),
        &curve::g2(),
        &curve::g1(),
        &right.to_affine(),
    ))
}

/// The first index `i >= 1` with `v[i] != tau * v[i-1]` (G1), by bisection over pair ranges.
fn first_bad_g1(
    pool: &Pool,
    control: &Control,
    vector: &[G1Affine],
    tau2: &G2Affine,
) -> Result<Option<u64>, VerifyError> {
    bisect(vector.len() - 1, |lo, hi| {
        g1_ratio_holds(pool, control, &[&vector[lo..=hi]], tau2)
    })
}

/// Over `pairs` consecutive pairs `(v[j], v[j+1])`, finds the first bad one given
/// `holds(lo, hi)`: whether the pairs `lo..hi` (the points `lo..=hi`) keep the ratio. Returns the
/// index of the pair's second point. `None` if the whole range holds (a failed combined check
/// that the bisection cannot reproduce).
fn bisect(
    pairs: usize,
    holds: impl Fn(usize, usize) -> Result<bool, VerifyError>,
) -> Result<Option<u64>, VerifyError> {
    if pairs == 0 || holds(0, pairs)? {
        return Ok(None);
    }
    let (mut lo, mut hi) = (0, pairs);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if holds(lo, mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(Some(lo as u64 + 1))
}

/// Over points `0..n`, the first bad one given `holds(lo, hi)`: whether the points `lo..=hi`
/// are all good. `None` if all hold.
pub(crate) fn first_bad_point<E>(
    n: usize,
    holds: impl Fn(usize, usize) -> Result<bool, E>,
) -> Result<Option<u64>, E> {
    if n == 0 || holds(0, n - 1)? {
        return Ok(None);
    }
    // Invariant: some point in lo..hi is bad, and none before lo.
    let (mut lo, mut hi) = (0, n);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if holds(lo, mid - 1)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(Some(lo as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bisect_finds_the_first_bad_pair() {
        // Points 0..=10; point 7 is bad, so pairs 6 and 7 fail: the first bad point is 7.
        let bad_point = 7;
        let holds =
            |lo: usize, hi: usize| Ok::<_, VerifyError>(!(lo < bad_point && bad_point <= hi));
        assert_eq!(bisect(10, holds).unwrap(), Some(7));
        let all_good = |_: usize, _: usize| Ok::<_, VerifyError>(true);
        assert_eq!(bisect(10, all_good).unwrap(), None);
        for bad in [0usize, 1, 5, 9] {
            let holds = |lo: usize, hi: usize| Ok::<_, VerifyError>(!(lo..=hi).contains(&bad));
            assert_eq!(first_bad_point(10, holds).unwrap(), Some(bad as u64));
        }
        assert_eq!(first_bad_point(10, all_good).unwrap(), None);
    }
}
