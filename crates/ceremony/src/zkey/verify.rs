//! `snarkjs zkey verify` (`zkey_verify_fromr1cs.js`, `zkey_verify_frominit.js`): a `.zkey`
//! checked against its circuit and the `.ptau` it was made from.
//!
//! # Checks, in order (the first that fails is the error)
//! 1. Each contribution: its transcript recomputed from the circuit hash and the earlier
//!    public keys; `e(g1_s, g2_spx) = e(g1_sx, s')` for `s'` the transcript's hash to G2 (the
//!    proof of knowledge of `k`); `e(delta_before, g2_spx) = e(deltaAfter, s')` (delta moved by
//!    that `k`); a beacon's `g1_s` and `g1_sx` recomputed from its hash and exponent.
//! 2. The header against the initial key regenerated from the `.r1cs` and `.ptau` ([`super::new`]):
//!    sizes, `alpha_1`, `beta_1`, `beta_2`, `gamma_2`; `delta_1` the last `deltaAfter`;
//!    `e(delta_1, g2) = e(g1, delta_2)`.
//! 3. The circuit hash; sections 3-7 (IC, coefficients, A, B1, B2) equal to the initial key's,
//!    the first differing point or entry named.
//! 4. Sections 8 (C) and 9 (H): the initial key's divided by delta, by random linear
//!    combinations with independent 128-bit coefficients (`e(sum c_i P_i, delta_2) =
//!    e(sum c_i P0_i, g2)`); a failing section is bisected (fresh coefficients each time) to
//!    name its first bad point.
//!
//! Stronger than snarkjs: every point of the file is checked on its curve and in its subgroup
//! when read ([`Zkey::read`]); snarkjs checks neither.

use std::io::{Read, Seek};

use blstrs::{G1Affine, G2Affine};
use group::Curve;
use lockstep_shard::{Control, Pool};

use super::contribute::{beacon_key, contribution_hash, transcript};
use super::rng::hash_to_g2;
use super::{Zkey, ZkeyError};
use crate::circom::CircomR1cs;
use crate::codec::Limits;
use crate::curve::{self, Coefficients, PowerSegment};

/// Why a `.zkey` was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ZkeyVerifyError {
    /// The initial key could not be made (the circuit or the `.ptau`), or the run failed.
    #[error(transparent)]
    Zkey(#[from] ZkeyError),
    /// The key could not be read ([`verify_file`]).
    #[error(transparent)]
    Key(ZkeyError),
    /// A contribution's check failed.
    #[error("contribution #{number}{name}: {problem}", number = .index + 1, name = .name.as_deref().map(|n| format!(" ({n})")).unwrap_or_default())]
    Contribution {
        /// Its index (0 for the first).
        index: usize,
        /// Its name, if any.
        name: Option<String>,
        /// What failed.
        problem: &'static str,
    },
    /// The key does not match the initial key made from the `.r1cs` and `.ptau`.
    #[error("{0}")]
    Initial(String),
}

/// One verified contribution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// Its name, if any.
    pub name: Option<String>,
    /// The hash snarkjs prints for it.
    pub hash: [u8; 64],
    /// A beacon's hash and exponent.
    pub beacon: Option<(Vec<u8>, u8)>,
}

/// What a verified key holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verification {
    /// The circuit hash.
    pub circuit_hash: [u8; 64],
    /// The contributions in order.
    pub contributions: Vec<Verified>,
}

/// Reads the `.zkey` `key` and verifies it ([`verify`]). Faster than [`Zkey::read`] then
/// [`verify`]: sections 3 and 5-7 are read checked on their curves only, since each of their
/// points must then equal the initial key's (checked) point, which settles its subgroup.
///
/// # Errors
/// As [`verify`]; the key's reading errors.
pub fn verify_file<R: Read + Seek, K: Read + Seek>(
    pool: &Pool,
    control: &Control,
    r1cs: &CircomR1cs,
    ptau: R,
    key: K,
    limits: &Limits,
) -> Result<(Zkey, Verification), ZkeyVerifyError> {
    let key = Zkey::read_with(
        pool,
        control,
        key,
        limits,
        super::file::Checks::VerifierSettles,
    )
    .map_err(ZkeyVerifyError::Key)?;
    let verification = verify(pool, control, r1cs, ptau, &key, limits)?;
    Ok((key, verification))
}

/// Verifies `key` against the circuit `r1cs` and the `.ptau` `ptau` (see the module's checks).
///
/// # Errors
/// [`ZkeyVerifyError`]: the first check that fails, named; the initial key's errors.
pub fn verify<R: Read + Seek>(
    pool: &Pool,
    control: &Control,
    r1cs: &CircomR1cs,
    ptau: R,
    key: &Zkey,
    limits: &Limits,
) -> Result<Verification, ZkeyVerifyError> {
    let contributions = check_contributions(control, key)?;
    let init = super::new(pool, control, r1cs, ptau, limits)?;
    check_against(pool, control, key, &init)?;
    Ok(Verification {
        circuit_hash: key.circuit_hash,
        contributions,
    })
}

/// The chain of contributions (check 1).
fn check_contributions(control: &Control, key: &Zkey) -> Result<Vec<Verified>, ZkeyVerifyError> {
    let mut delta = curve::g1();
    let mut out = Vec::with_capacity(key.contributions.len());
    for index in 0..key.contributions.len() {
        out.push(check_one(control, key, index, &delta)?);
        delta = key.contributions[index].delta_after;
    }
    Ok(out)
}

/// Contribution `index` of `key`, made on `[delta]_1 = delta`.
fn check_one(
    control: &Control,
    key: &Zkey,
    index: usize,
    delta: &G1Affine,
) -> Result<Verified, ZkeyVerifyError> {
    let c = &key.contributions[index];
    let fail = |problem| ZkeyVerifyError::Contribution {
        index,
        name: c.name.clone(),
        problem,
    };
    if transcript(
        &key.circuit_hash,
        &key.contributions[..index],
        &c.g1_s,
        &c.g1_sx,
    ) != c.transcript
    {
        return Err(fail(
            "its transcript is not the hash of the circuit and the contributions before it",
        ));
    }
    let sp = hash_to_g2(&c.transcript);
    let identity = |p: &G1Affine| bool::from(group::prime::PrimeCurveAffine::is_identity(p));
    if identity(&c.g1_s)
        || identity(&c.g1_sx)
        || !curve::same_ratio(&c.g1_s, &c.g2_spx, &c.g1_sx, &sp)
    {
        return Err(fail(
            "its public key's G1 and G2 parts do not have the same ratio",
        ));
    }
    if identity(&c.delta_after) || !curve::same_ratio(delta, &c.g2_spx, &c.delta_after, &sp) {
        return Err(fail(
            "deltaAfter does not follow its public key from the delta before it",
        ));
    }
    let beacon = match (c.kind, &c.beacon_hash, c.iterations_exp) {
        (0, _, _) => None,
        (1, Some(hash), Some(exp)) => {
            let (g1_s, g1_sx) = beacon_key(control, hash, exp).map_err(ZkeyVerifyError::Zkey)?;
            if g1_s != c.g1_s || g1_sx != c.g1_sx {
                return Err(fail(
                    "its key is not the one its beacon hash and exponent give",
                ));
            }
            Some((hash.clone(), exp))
        }
        (1, _, _) => return Err(fail("a beacon without its hash or exponent")),
        _ => return Err(fail("a type other than 0 (contribution) or 1 (beacon)")),
    };
    Ok(Verified {
        name: c.name.clone(),
        hash: contribution_hash(c),
        beacon,
    })
}

/// Verifies `next` as one contribution on `previous` (what a coordinator checks of an upload
/// on its head, without the circuit or the powers): `previous`'s contributions then one more,
/// checked as in [`verify`] from `previous`'s delta; the header but delta, the circuit hash
/// and sections 3-7 equal to `previous`'s; sections 8 and 9 `previous`'s times the ratio of
/// the deltas (random linear combinations, bisected to the first bad point).
///
/// # Errors
/// [`ZkeyVerifyError`]: the first check that fails.
pub fn verify_contribution(
    pool: &Pool,
    control: &Control,
    previous: &Zkey,
    next: &Zkey,
) -> Result<Verified, ZkeyVerifyError> {
    let fail = |text: &str| Err(ZkeyVerifyError::Initial(text.to_owned()));
    let count = previous.contributions.len();
    if next.contributions.len() != count + 1 {
        return fail(&format!(
            "the key records {} contributions; one more than the {count} before it was expected",
            next.contributions.len()
        ));
    }
    let public = |c: &super::Contribution| {
        (
            c.delta_after,
            c.g1_s,
            c.g1_sx,
            c.g2_spx,
            c.transcript,
            c.kind,
        )
    };
    if let Some(i) =
        (0..count).find(|&i| public(&next.contributions[i]) != public(&previous.contributions[i]))
    {
        return fail(&format!(
            "contribution #{} is not the one the key before it records",
            i + 1
        ));
    }
    let (h, p) = (&next.header, &previous.header);
    if (
        h.n_vars, h.n_public, h.power, h.alpha1, h.beta1, h.beta2, h.gamma2,
    ) != (
        p.n_vars, p.n_public, p.power, p.alpha1, p.beta1, p.beta2, p.gamma2,
    ) {
        return fail("the header (section 2) differs from the key before it beyond delta");
    }
    let verified = check_one(control, next, count, &p.delta1)?;
    if h.delta1 != next.contributions[count].delta_after {
        return fail("delta_1 is not the contribution's deltaAfter (header, section 2)");
    }
    if !curve::same_ratio(&h.delta1, &curve::g2(), &curve::g1(), &h.delta2) {
        return fail("delta_2 does not match delta_1 (header, section 2)");
    }
    same_sections(
        pool,
        control,
        next,
        previous,
        "the previous key's",
        &p.delta2,
    )?;
    Ok(verified)
}

/// Checks 2 to 4, against the regenerated initial key.
fn check_against(
    pool: &Pool,
    control: &Control,
    key: &Zkey,
    init: &Zkey,
) -> Result<(), ZkeyVerifyError> {
    let fail = |text: String| Err(ZkeyVerifyError::Initial(text));
    let (h, i) = (&key.header, &init.header);
    if (h.n_vars, h.n_public, h.power) != (i.n_vars, i.n_public, i.power) {
        return fail(format!(
            "the key is for another circuit: {} wires, {} public, domain 2^{}; the .r1cs gives {}, {}, 2^{}",
            h.n_vars, h.n_public, h.power, i.n_vars, i.n_public, i.power
        ));
    }
    for (name, same) in [
        ("alpha_1", h.alpha1 == i.alpha1),
        ("beta_1", h.beta1 == i.beta1),
        ("beta_2", h.beta2 == i.beta2),
        ("gamma_2", h.gamma2 == i.gamma2),
    ] {
        if !same {
            return fail(format!("{name} is not the .ptau's (header, section 2)"));
        }
    }
    let last = key
        .contributions
        .last()
        .map_or(curve::g1(), |c| c.delta_after);
    if h.delta1 != last {
        return fail(
            "delta_1 is not the last contribution's deltaAfter (header, section 2)".to_owned(),
        );
    }
    if !curve::same_ratio(&h.delta1, &curve::g2(), &curve::g1(), &h.delta2) {
        return fail("delta_2 does not match delta_1 (header, section 2)".to_owned());
    }
    same_sections(pool, control, key, init, "the initial key's", &curve::g2())
}

/// The circuit hash, sections 3-7 equal to `earlier`'s, and sections 8 and 9 `earlier`'s
/// divided by the key's delta over `earlier`'s (`earlier_delta2`).
fn same_sections(
    pool: &Pool,
    control: &Control,
    key: &Zkey,
    earlier: &Zkey,
    whose: &str,
    earlier_delta2: &G2Affine,
) -> Result<(), ZkeyVerifyError> {
    let fail = |text: String| Err(ZkeyVerifyError::Initial(text));
    if key.circuit_hash != earlier.circuit_hash {
        return fail("the circuit hash is not the one this .r1cs and .ptau give: a key of another circuit or powers (section 10)".to_owned());
    }
    let first_difference =
        |a: &[G1Affine], b: &[G1Affine]| a.iter().zip(b).position(|(x, y)| x != y);
    for (id, name, at) in [
        (3, "IC", first_difference(&key.ic, &earlier.ic)),
        (5, "A", first_difference(&key.a, &earlier.a)),
        (6, "B1", first_difference(&key.b1, &earlier.b1)),
        (
            7,
            "B2",
            key.b2.iter().zip(&earlier.b2).position(|(x, y)| x != y),
        ),
    ] {
        if let Some(index) = at {
            return fail(format!(
                "section {id} ({name}): point {index} is not {whose}"
            ));
        }
    }
    if key.coefficients != earlier.coefficients {
        let entry = key
            .coefficients
            .get(4..)
            .unwrap_or_default()
            .chunks(44)
            .zip(earlier.coefficients.get(4..).unwrap_or_default().chunks(44))
            .position(|(x, y)| x != y);
        return fail(match entry {
            Some(e) => format!("section 4 (coefficients): entry {e} is not {whose}"),
            None => "section 4 (coefficients): another count of entries".to_owned(),
        });
    }
    for (id, name, got, before) in [(8, "C", &key.c, &earlier.c), (9, "H", &key.h, &earlier.h)] {
        let got = Scaled {
            points: got,
            delta2: &key.header.delta2,
        };
        let before = Scaled {
            points: before,
            delta2: earlier_delta2,
        };
        if got.points.len() != before.points.len() {
            return fail(format!("section {id} ({name}): another count of points"));
        }
        if !divided(pool, control, got, before, 0..got.points.len())? {
            let index = first_bad(pool, control, got, before)?;
            return fail(match index {
                Some(index) => {
                    format!("section {id} ({name}): point {index} is not {whose} divided by delta")
                }
                None => format!("section {id} ({name}) is not {whose} divided by delta"),
            });
        }
    }
    Ok(())
}

/// A section and the `[delta]_2` its points are divided by.
#[derive(Clone, Copy)]
struct Scaled<'a> {
    points: &'a [G1Affine],
    delta2: &'a G2Affine,
}

/// Whether `got[range]` times its delta is `earlier[range]` times its own (`e(sum c_i got_i,
/// delta_got) = e(sum c_i earlier_i, delta_earlier)`), by one random linear combination.
fn divided(
    pool: &Pool,
    control: &Control,
    got: Scaled<'_>,
    earlier: Scaled<'_>,
    range: std::ops::Range<usize>,
) -> Result<bool, ZkeyVerifyError> {
    let seed = curve::random_seed();
    fn segment(points: &[G1Affine], range: std::ops::Range<usize>) -> PowerSegment<'_, G1Affine> {
        PowerSegment {
            first: range.start as u64,
            points: &points[range],
        }
    }
    let run = |error: lockstep_shard::Error<std::convert::Infallible>| {
        ZkeyVerifyError::Zkey(error.into())
    };
    let [mine, theirs] = curve::msm_many(
        pool,
        control,
        [
            curve::MsmJob {
                segments: vec![segment(got.points, range.clone())],
                coefficients: Coefficients::Random128(&seed),
            },
            curve::MsmJob {
                segments: vec![segment(earlier.points, range)],
                coefficients: Coefficients::Random128(&seed),
            },
        ],
    )
    .map_err(run)?;
    Ok(curve::same_ratio(
        &mine.to_affine(),
        got.delta2,
        &theirs.to_affine(),
        earlier.delta2,
    ))
}

/// The first point of a failing section, by bisection with fresh coefficients.
fn first_bad(
    pool: &Pool,
    control: &Control,
    got: Scaled<'_>,
    earlier: Scaled<'_>,
) -> Result<Option<usize>, ZkeyVerifyError> {
    let (mut lo, mut hi) = (0, got.points.len());
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if !divided(pool, control, got, earlier, lo..mid)? {
            hi = mid;
        } else if !divided(pool, control, got, earlier, mid..hi)? {
            lo = mid;
        } else {
            return Ok(None);
        }
    }
    Ok((lo < hi).then_some(lo))
}
