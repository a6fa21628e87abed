//! Verification of a phase 2 contribution against its predecessor (gnark's `Phase2.Verify`),
//! with random linear combinations: two multi-scalar multiplications per secret and a few
//! pairings, not a pairing per point.
//!
//! # Soundness
//! A vector update `next_i = x * prev_i` is checked as `e(sum c_i next_i, R) = e(sum c_i prev_i,
//! pi)` with independent 128-bit coefficients `c_i` from the operating system (gnark uses the
//! powers of one random scalar; either works). If some `next_i != x * prev_i`, the combined
//! differences are a random combination of non-zero elements of a group of prime order `r`,
//! zero with probability at most `2^-128`: a bad contribution passes each vector check with
//! probability at most `2^-128`. On failure, a bisection with fresh coefficients names the
//! first bad point in file order.

use std::convert::Infallible;

use blstrs::{G1Affine, G2Affine};
use group::Curve;
use group::prime::PrimeCurveAffine;
use lockstep_shard::{Control, Pool};

use super::Phase2;
use super::contribute::{DST_DELTA, sigma_dst};
use crate::codec::Location;
use crate::curve::{self, Coefficients, MsmJob, PowerSegment, msm_many};
use crate::phase1::{UpdateProof, first_bad_point, pok_base_dst};

/// Which secret of a contribution a check is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Secret {
    /// delta.
    Delta,
    /// The sigma of commitment `i`.
    Sigma(usize),
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Delta => f.write_str("delta"),
            Self::Sigma(i) => write!(f, "sigma[{i}]"),
        }
    }
}

/// Why a phase 2 contribution does not verify: the check that failed and, where it can, the
/// first bad point.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The contribution carries no challenge: only the initial object may.
    #[error("challenge: the contribution has none (it does not name its predecessor)")]
    MissingChallenge,
    /// The challenge is not the predecessor's hash.
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
    /// The vectors' lengths or the commitment count differ from the predecessor's.
    #[error("shape: {0} differs from the predecessor's (another circuit?)")]
    Shape(&'static str),
    /// A commitment `[x]_1` is the point at infinity.
    #[error("{secret} proof: the commitment is the point at infinity (a zero contribution)")]
    ZeroContribution {
        /// Which secret.
        secret: Secret,
    },
    /// The proof of knowledge does not verify.
    #[error("{secret} proof of knowledge: does not verify for its commitment and challenge")]
    ProofOfKnowledge {
        /// Which secret.
        secret: Secret,
    },
    /// A point is not its predecessor's moved by the committed secret.
    #[error("{secret} update: {}", match .location {
        Some(location) => format!("{location} is not its predecessor's moved by the committed value"),
        None => "the points are not their predecessors' moved by the committed value".to_owned(),
    })]
    Update {
        /// Which secret.
        secret: Secret,
        /// The first bad point, in file order, when the bisection finds it.
        location: Option<Location>,
    },
    /// A point of the object to seal is not the initial object's moved by the secret its
    /// `[delta]_2` or `[sigma_i]_2` carries ([`verify_descent`]): the chain did not start from
    /// this circuit's initial object over this phase 1.
    #[error("{secret}: {} (another phase 1, another circuit, or a changed point)", match .location {
        Some(location) => format!("{location} is not the initial object's moved by the chain's {secret}"),
        None => format!("the points are not the initial object's moved by the chain's {secret}"),
    })]
    Descent {
        /// Which secret.
        secret: Secret,
        /// The first bad point, in file order, when the bisection finds it.
        location: Option<Location>,
    },
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

/// G1 points a proof must move by its secret: a named vector (or a single named value),
/// before and after.
#[derive(Clone, Copy)]
struct Moves<'a> {
    name: &'static str,
    /// Whether its points are named by index (`Z[7]`) or it is one value (`[delta]_1`).
    indexed: bool,
    before: &'a [G1Affine],
    after: &'a [G1Affine],
}

/// Verifies `next` as the contribution that follows `previous` (whose bytes hash to
/// `previous_hash`), in gnark's order: the challenge, the shapes, each sigma (proof of
/// knowledge, `SigmaCKK[i]` and `[sigma_i]_2` moved by it), then delta (proof of knowledge,
/// `[delta]_1`, `PKK` and `Z` moved by it, the last two backwards, and `[delta]_2`).
///
/// Stricter than gnark in one point, as phase 1: a contribution without a challenge is refused.
///
/// # Errors
/// The first check that fails.
pub fn verify_contribution(
    pool: &Pool,
    control: &Control,
    previous: &Phase2,
    previous_hash: &[u8; 32],
    next: &Phase2,
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
    same_shape(previous, next)?;
    for (i, proof) in next.sigma_proofs.iter().enumerate() {
        let secret = Secret::Sigma(i);
        let moves = [Moves {
            name: "SigmaCKK",
            indexed: true,
            before: &previous.sigma_ckk[i],
            after: &next.sigma_ckk[i],
        }];
        check(
            pool,
            control,
            proof,
            previous_hash,
            sigma_dst(i),
            secret,
            &moves,
        )?;
        if !proof.moves_g2(&previous.sigma_g2[i], &next.sigma_g2[i]) {
            return Err(VerifyError::Update {
                secret,
                location: Some(Location::element("[sigma]_2", i as u64)),
            });
        }
    }
    // In file order, so the bisection names the first bad point in the file (the combined
    // check does not depend on the order). delta divides Z and PKK: the new points times delta
    // are the old ones.
    let moves = [
        Moves {
            name: "[delta]_1",
            indexed: false,
            before: std::slice::from_ref(&previous.delta_g1),
            after: std::slice::from_ref(&next.delta_g1),
        },
        Moves {
            name: "PKK",
            indexed: true,
            before: &next.pkk,
            after: &previous.pkk,
        },
        Moves {
            name: "Z",
            indexed: true,
            before: &next.z,
            after: &previous.z,
        },
    ];
    let proof = &next.delta_proof;
    check(
        pool,
        control,
        proof,
        previous_hash,
        DST_DELTA,
        Secret::Delta,
        &moves,
    )?;
    if !proof.moves_g2(&previous.delta_g2, &next.delta_g2) {
        return Err(VerifyError::Update {
            secret: Secret::Delta,
            location: Some(Location::value("[delta]_2")),
        });
    }
    Ok(())
}

/// The shapes `next` must share with `previous`: `Z`'s and `PKK`'s lengths, the commitment
/// count (at most what gnark seals) and each `SigmaCKK`'s length.
fn same_shape(previous: &Phase2, next: &Phase2) -> Result<(), VerifyError> {
    if next.z.len() != previous.z.len() {
        return Err(VerifyError::Shape("Z's length"));
    }
    if next.pkk.len() != previous.pkk.len() {
        return Err(VerifyError::Shape("PKK's length"));
    }
    if next.sigma_g2.len() > crate::r1cs::MAX_COMMITMENTS {
        return Err(VerifyError::Shape(
            "the commitment count (above the most gnark seals)",
        ));
    }
    if next.sigma_g2.len() != previous.sigma_g2.len()
        || next.sigma_ckk.len() != previous.sigma_ckk.len()
        || next.sigma_proofs.len() != previous.sigma_g2.len()
    {
        return Err(VerifyError::Shape("the commitment count"));
    }
    if next
        .sigma_ckk
        .iter()
        .zip(&previous.sigma_ckk)
        .any(|(a, b)| a.len() != b.len())
    {
        return Err(VerifyError::Shape("a SigmaCKK's length"));
    }
    Ok(())
}

/// Verifies that `last` descends from `initial` (a circuit's initial object over a phase 1)
/// through any chain of contributions: `[delta]_1` is `initial`'s moved by the delta that
/// `last`'s `[delta]_2` carries, `PKK` and `Z` are `initial`'s divided by it, and each
/// `SigmaCKK[i]` is `initial`'s moved by the sigma `[sigma_i]_2` carries (`x` such that
/// `e(after, base) = e(before, [x]_2)` with `base` the initial `[x]_2`, a generator).
///
/// Every chain that verifies from `initial` ends in such an object, so this refuses nothing a
/// verified chain reaches; it refuses an object of another circuit of the same shape, one
/// initialized over another phase 1, and moved or swapped points, for any caller that holds
/// only the last object. It does not verify the chain's proofs ([`verify_contribution`] does).
/// Cost: the two MSMs of one verification.
///
/// # Errors
/// [`VerifyError::Shape`] if the shapes differ; [`VerifyError::ZeroContribution`] for a secret
/// that is zero (`[x]_2` at infinity); [`VerifyError::Descent`] naming the first point in file
/// order that does not follow; cancellation.
pub fn verify_descent(
    pool: &Pool,
    control: &Control,
    initial: &Phase2,
    last: &Phase2,
) -> Result<(), VerifyError> {
    same_shape(initial, last)?;
    for (i, (before, after)) in initial.sigma_g2.iter().zip(&last.sigma_g2).enumerate() {
        let secret = Secret::Sigma(i);
        if bool::from(after.is_identity()) {
            return Err(VerifyError::ZeroContribution { secret });
        }
        let moves = [Moves {
            name: "SigmaCKK",
            indexed: true,
            before: &initial.sigma_ckk[i],
            after: &last.sigma_ckk[i],
        }];
        if let Some(location) = bad_move(pool, control, before, after, &moves)? {
            return Err(VerifyError::Descent { secret, location });
        }
    }
    if bool::from(last.delta_g2.is_identity()) {
        return Err(VerifyError::ZeroContribution {
            secret: Secret::Delta,
        });
    }
    let moves = [
        Moves {
            name: "[delta]_1",
            indexed: false,
            before: std::slice::from_ref(&initial.delta_g1),
            after: std::slice::from_ref(&last.delta_g1),
        },
        Moves {
            name: "PKK",
            indexed: true,
            before: &last.pkk,
            after: &initial.pkk,
        },
        Moves {
            name: "Z",
            indexed: true,
            before: &last.z,
            after: &initial.z,
        },
    ];
    match bad_move(pool, control, &initial.delta_g2, &last.delta_g2, &moves)? {
        Some(location) => Err(VerifyError::Descent {
            secret: Secret::Delta,
            location,
        }),
        None => Ok(()),
    }
}

/// Whether every move holds for `x` with `pok = x * base`: `None` if so, else the first bad
/// point in file order (`Some(None)` if the bisection, with fresh coefficients, finds none).
fn bad_move(
    pool: &Pool,
    control: &Control,
    base: &G2Affine,
    pok: &G2Affine,
    moves: &[Moves<'_>],
) -> Result<Option<Option<Location>>, VerifyError> {
    let total: usize = moves.iter().map(|m| m.before.len()).sum();
    let holds = |lo: usize, hi: usize| moved(pool, control, base, pok, moves, lo..hi + 1);
    if total == 0 || holds(0, total - 1)? {
        return Ok(None);
    }
    // The moves come in file order: the first vector with a bad point holds the first one.
    for m in moves {
        let single = std::slice::from_ref(m);
        let holds = |lo: usize, hi: usize| moved(pool, control, base, pok, single, lo..hi + 1);
        if let Some(index) = first_bad_point(m.before.len(), holds)? {
            return Ok(Some(Some(if m.indexed {
                Location::element(m.name, index)
            } else {
                Location::value(m.name)
            })));
        }
    }
    Ok(Some(None))
}

/// A proof's commitment, its proof of knowledge, and its G1 moves.
fn check(
    pool: &Pool,
    control: &Control,
    proof: &UpdateProof,
    challenge: &[u8],
    dst: u8,
    secret: Secret,
    moves: &[Moves<'_>],
) -> Result<(), VerifyError> {
    if proof.is_zero() {
        return Err(VerifyError::ZeroContribution { secret });
    }
    let base = pok_base_dst(&proof.commitment, challenge, dst);
    if !curve::same_ratio(&proof.commitment, &base, &curve::g1(), &proof.pok) {
        return Err(VerifyError::ProofOfKnowledge { secret });
    }
    match bad_move(pool, control, &base, &proof.pok, moves)? {
        Some(location) => Err(VerifyError::Update { secret, location }),
        None => Ok(()),
    }
}

/// Whether `after_i = x * before_i` over `range` of the concatenated moves:
/// `e(sum c_i after_i, R) = e(sum c_i before_i, pi)`, two MSMs in one parallel run.
fn moved(
    pool: &Pool,
    control: &Control,
    base: &G2Affine,
    pok: &G2Affine,
    moves: &[Moves<'_>],
    range: std::ops::Range<usize>,
) -> Result<bool, VerifyError> {
    let seed = curve::random_seed();
    let coefficients = Coefficients::Random128(&seed);
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let mut offset = 0usize;
    for m in moves {
        let (lo, hi) = (
            range.start.max(offset),
            range.end.min(offset + m.before.len()),
        );
        if lo < hi {
            let first = (lo - range.start) as u64;
            before.push(PowerSegment {
                points: &m.before[lo - offset..hi - offset],
                first,
            });
            after.push(PowerSegment {
                points: &m.after[lo - offset..hi - offset],
                first,
            });
        }
        offset += m.before.len();
    }
    let [b, a] = msm_many(
        pool,
        control,
        [
            MsmJob {
                segments: before,
                coefficients,
            },
            MsmJob {
                segments: after,
                coefficients,
            },
        ],
    )?;
    Ok(curve::same_ratio(&a.to_affine(), base, &b.to_affine(), pok))
}
