//! Multiplication of points by **public** scalars in variable time: the group FFT's twiddles, a
//! constraint's coefficients. Never for a secret: the time taken follows the scalar's digits.
//! Points in the prime-order subgroup only: the endomorphisms act as their eigenvalues there and
//! nowhere else, so a point off it gives a wrong product (every caller's points are
//! subgroup-checked: keys, SRS points, sums of them).
//!
//! - **G1: the GLV split.** `k = k0 + k1 lambda` with both parts below 2^128 (`glv.rs`),
//!   and `kP = k0 P + k1 phi(P)`: 128 doublings, not 255.
//! - **G2: the four-way split by `Z = |z|`** (`z = -0xd201000000010000`, the curve's parameter):
//!   `k = k0 + k1 Z + k2 Z^2 + k3 Z^3` with every part below 2^64 (`r = Z^4 - Z^2 + 1`), and
//!   `psi(P) = zP = -ZP` on G2 for the untwist-Frobenius-twist map `psi`, so
//!   `kP = k0 P - k1 psi(P) + k2 psi^2(P) - k3 psi^3(P)`: 64 doublings.
//! - **Width-`w` NAF digits** for every part (odd digits of magnitude below `2^(w-1)`, at least
//!   `w - 1` zeros after each): one doubling chain for all parts, one mixed addition for each
//!   nonzero digit of any part (about `bits / (w + 1)` a part).
//! - **Affine tables.** The odd multiples `P, 3P, ..., (2^(w-1) - 1)P` are summed projectively,
//!   turned affine for a whole batch of points with one inversion, and the endomorphisms'
//!   tables follow from them at one or two field multiplications a point.
//!
//! blst's own multiplication (`blst_p1_mult`) is constant time: a fixed window and an addition
//! at every window, whatever the digit. These save the additions of zero digits and use mixed
//! additions; the same-run figures are the first table of `lockstep-bench ceremony --phase 2`
//! (1.15x blst's in G1 and 1.25x in G2, 2026-12-07, one scalar; the widths' figures below are
//! another run's, on random scalars). The group
//! operations themselves are blst's (through blstrs): doubling, additions that handle equal
//! points and the identity, batch conversion. Tested against blstrs' multiplication below.

use std::sync::OnceLock;

use blst::{blst_fp, blst_fp2};
use blstrs::{G1Projective, G2Projective, Scalar};
use group::Group;

use crate::curve::{Curve, G1, G2};
use crate::ffi;
use crate::field::{Coordinate, MONTGOMERY_ONE, P};
use crate::glv::{self, LAMBDA};

/// G1's NAF width: `2^(w-2)` = 8 table points, about 43 additions over the two parts. Measured
/// on this machine kind (2026-12-07, batches of 2,048 random points and scalars): width 4 and 5
/// tie at 1.18-1.22x blst's multiplication, 6 is 1.12-1.13x (a table of 16 costs more than the
/// additions it saves over 128 bits).
const G1_WIDTH: u32 = 5;

/// G2's NAF width: 4 table points in each of four tables, about 51 additions. Measured as G1's:
/// width 4 1.32-1.35x blst, 5 1.28-1.31x, 6 1.13x (four tables of a costlier addition).
const G2_WIDTH: u32 = 4;

/// The most digits a part has: 128 bits and a final carry.
const MAX_DIGITS: usize = 130;

/// `|z|`, BLS12-381's parameter's magnitude (the parameter is negative).
const Z: u64 = 0xd201_0000_0001_0000;

/// The width-`w` NAF of `k` (`k` below `2^128 - 2^w`), least significant digit first, and the
/// digit count (the top digit nonzero, or zero digits for `k = 0`).
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "a digit is masked to w <= 8 bits first"
)]
fn naf(mut k: u128, w: u32, digits: &mut [i8; MAX_DIGITS]) -> usize {
    let modulus = 1i32 << w;
    let half = modulus / 2;
    let mut len = 0;
    while k != 0 {
        let digit = if k & 1 == 1 {
            let mut d = (k & (modulus as u128 - 1)) as i32;
            if d >= half {
                d -= modulus;
            }
            if d >= 0 {
                k -= d as u128;
            } else {
                k = k
                    .checked_add(u128::from(d.unsigned_abs()))
                    .expect("invariant: parts are below 2^128 - 2^w");
            }
            d as i8
        } else {
            0
        };
        digits[len] = digit;
        len += 1;
        k >>= 1;
    }
    len
}

/// A scalar's canonical little-endian limbs.
fn limbs(scalar: &Scalar) -> [u64; 4] {
    let bytes = scalar.to_bytes_le();
    std::array::from_fn(|i| {
        u64::from_le_bytes(
            bytes[8 * i..8 * i + 8]
                .try_into()
                .expect("invariant: eight bytes"),
        )
    })
}

/// `(k / Z, k % Z)` over four limbs.
#[allow(
    clippy::cast_possible_truncation,
    reason = "a quotient digit and a remainder below Z fit 64 bits"
)]
fn div_z(k: [u64; 4]) -> ([u64; 4], u64) {
    let mut quotient = [0u64; 4];
    let mut rem: u128 = 0;
    for i in (0..4).rev() {
        let n = (rem << 64) | u128::from(k[i]);
        quotient[i] = (n / u128::from(Z)) as u64;
        rem = n % u128::from(Z);
    }
    (quotient, rem as u64)
}

/// G2's four parts: `k = k0 + k1 Z + k2 Z^2 + k3 Z^3`, each below `Z`.
fn split_z(k: [u64; 4]) -> [u64; 4] {
    let (q, k0) = div_z(k);
    let (q, k1) = div_z(q);
    let (q, k2) = div_z(q);
    assert!(
        q[1..] == [0; 3] && q[0] < Z,
        "invariant: k < r < Z^4 leaves a fourth part below Z"
    );
    [k0, k1, k2, q[0]]
}

/// A point's negation in affine form (the identity stays).
fn negate<C: Curve>(point: &C::Affine) -> C::Affine {
    match C::coordinates(point) {
        Some((x, y)) => C::from_coordinates(x, y.neg()),
        None => *point,
    }
}

/// `psi` on G2's affine points: `(conj(x) cx, conj(y) cy)` for `cx = 1 / (1 + u)^((p-1)/3)` and
/// `cy = 1 / (1 + u)^((p-1)/2)`.
fn psi(point: &blstrs::G2Affine) -> blstrs::G2Affine {
    let (cx, cy) = psi_coefficients();
    match G2::coordinates(point) {
        Some((x, y)) => {
            let conj = |a: blst_fp2| blst_fp2 {
                fp: [a.fp[0], a.fp[1].neg()],
            };
            G2::from_coordinates(conj(x).mul(cx), conj(y).mul(cy))
        }
        None => *point,
    }
}

/// `psi`'s two coefficients, derived once from their definitions.
fn psi_coefficients() -> &'static (blst_fp2, blst_fp2) {
    static COEFFICIENTS: OnceLock<(blst_fp2, blst_fp2)> = OnceLock::new();
    COEFFICIENTS.get_or_init(|| {
        let one = blst_fp { l: MONTGOMERY_ONE };
        let xi = blst_fp2 { fp: [one, one] };
        let p_minus_one = {
            let mut limbs = P;
            limbs[0] -= 1; // p is odd: no borrow.
            limbs
        };
        let cx = pow(&xi, &div_small(p_minus_one, 3)).inverse();
        let cy = pow(&xi, &div_small(p_minus_one, 2)).inverse();
        (cx, cy)
    })
}

/// `limbs / d` for a small `d` that divides it.
#[allow(
    clippy::cast_possible_truncation,
    reason = "each quotient digit fits 64 bits"
)]
fn div_small(limbs: [u64; 6], d: u64) -> [u64; 6] {
    let mut quotient = [0u64; 6];
    let mut rem: u128 = 0;
    for i in (0..6).rev() {
        let n = (rem << 64) | u128::from(limbs[i]);
        quotient[i] = (n / u128::from(d)) as u64;
        rem = n % u128::from(d);
    }
    assert_eq!(rem, 0, "invariant: d divides p - 1");
    quotient
}

/// `base^exponent` by squaring and multiplying (public values: constants).
fn pow(base: &blst_fp2, exponent: &[u64; 6]) -> blst_fp2 {
    let one = blst_fp { l: MONTGOMERY_ONE };
    let mut acc = blst_fp2 {
        fp: [one, blst_fp::default()],
    };
    for bit in (0..384).rev() {
        acc = acc.square();
        if exponent[bit / 64] >> (bit % 64) & 1 == 1 {
            acc = acc.mul(base);
        }
    }
    acc
}

/// A part of a split scalar: its NAF and whether its table is negated.
struct Part {
    digits: [i8; MAX_DIGITS],
    len: usize,
    negate: bool,
}

impl Part {
    fn new(value: u128, width: u32, negate: bool) -> Self {
        let mut digits = [0i8; MAX_DIGITS];
        let len = naf(value, width, &mut digits);
        Self {
            digits,
            len,
            negate,
        }
    }
}

/// The joint double-and-add over `parts`, `tables[j][i] = (2i + 1) * base_j` in affine form.
fn combine<C: Curve>(parts: &[Part], tables: &[&[C::Affine]]) -> C::Projective {
    let top = parts.iter().map(|p| p.len).max().unwrap_or(0);
    let mut acc = C::Projective::identity();
    for i in (0..top).rev() {
        acc = acc.double();
        for (part, table) in parts.iter().zip(tables) {
            let d = part.digits[i];
            if d != 0 {
                let entry = &table[usize::from(d.unsigned_abs() / 2)];
                if (d < 0) != part.negate {
                    acc += &negate::<C>(entry);
                } else {
                    acc += entry;
                }
            }
        }
    }
    acc
}

/// The odd multiples `P, 3P, ..., (2^(w-1) - 1)P` of every point, projective, `2^(w-2)` a
/// point in order.
fn odd_multiples<C: Curve>(points: &[C::Projective], width: u32) -> Vec<C::Projective> {
    let per = 1usize << (width - 2);
    let mut out = Vec::with_capacity(points.len() * per);
    for p in points {
        let double = p.double();
        let mut t = *p;
        out.push(t);
        for _ in 1..per {
            t += &double;
            out.push(t);
        }
    }
    out
}

/// The points of a batch this size share one inversion (their tables' conversion).
const BATCH: usize = 32;

/// The loop both groups share: a block of [`BATCH`] points' odd multiples made affine with one
/// inversion, then `multiply(scalar, table)` for each point with its own table.
///
/// # Panics
/// If the slices' lengths differ.
fn in_batches<C: Curve>(
    points: &mut [C::Projective],
    scalars: &[Scalar],
    width: u32,
    multiply: impl Fn(&Scalar, &[C::Affine]) -> C::Projective,
) where
    C::Affine: Default,
{
    assert_eq!(points.len(), scalars.len(), "invariant: a scalar a point");
    let per = 1usize << (width - 2);
    for (points, scalars) in points.chunks_mut(BATCH).zip(scalars.chunks(BATCH)) {
        let projective = odd_multiples::<C>(points, width);
        let mut table = vec![C::Affine::default(); projective.len()];
        C::batch_to_affine(&projective, &mut table);
        for ((point, scalar), table) in points.iter_mut().zip(scalars).zip(table.chunks(per)) {
            *point = multiply(scalar, table);
        }
    }
}

/// `points[i] * scalars[i]` in place in G1, for **public** scalars (variable time) and points in
/// the prime-order subgroup, a batch of points sharing one field inversion. The same points
/// blstrs' constant-time multiplication gives, whatever the subgroup's points (the identity,
/// equal points) and scalars (zero, r - 1).
///
/// # Panics
/// If the slices' lengths differ.
pub fn g1_mul_public_batch(points: &mut [G1Projective], scalars: &[Scalar]) {
    in_batches::<G1>(points, scalars, G1_WIDTH, |scalar, table| {
        let (k1, k0) = glv::split(&limbs(scalar), LAMBDA);
        let images: Vec<_> = table.iter().map(G1::endomorphism).collect();
        let parts = [
            Part::new(k0, G1_WIDTH, false),
            Part::new(k1, G1_WIDTH, false),
        ];
        combine::<G1>(&parts, &[table, &images])
    });
}

/// [`g1_mul_public_batch`] in G2 (the four-way split).
///
/// # Panics
/// If the slices' lengths differ.
pub fn g2_mul_public_batch(points: &mut [G2Projective], scalars: &[Scalar]) {
    in_batches::<G2>(points, scalars, G2_WIDTH, |scalar, table| {
        let [k0, k1, k2, k3] = split_z(limbs(scalar));
        let psi1: Vec<_> = table.iter().map(psi).collect();
        let psi2: Vec<_> = table.iter().map(G2::endomorphism).collect();
        let psi3: Vec<_> = psi2.iter().map(psi).collect();
        let parts = [
            Part::new(u128::from(k0), G2_WIDTH, false),
            Part::new(u128::from(k1), G2_WIDTH, true),
            Part::new(u128::from(k2), G2_WIDTH, false),
            Part::new(u128::from(k3), G2_WIDTH, true),
        ];
        combine::<G2>(&parts, &[table, &psi1, &psi2, &psi3])
    });
}

/// Scalars of at most this many bits go to blst's multiplication over their bit length
/// ([`ffi::g1_mult_public`]) when multiplied one at a time: the GLV split gives them nothing
/// (one part is zero) and a lone point's table costs an inversion.
const SHORT_BITS: u32 = 128;

/// A scalar's bit length.
fn bit_length(limbs: &[u64; 4]) -> u32 {
    limbs.iter().rposition(|&l| l != 0).map_or(0, |top| {
        64 * u32::try_from(top).expect("invariant: four limbs") + 64 - limbs[top].leading_zeros()
    })
}

/// `point * scalar` in G1 for a **public** scalar and a point in the prime-order subgroup,
/// variable time: blst's multiplication over the scalar's bit length up to 128 bits,
/// [`g1_mul_public_batch`] of one above.
pub fn g1_mul_public(point: &G1Projective, scalar: &Scalar) -> G1Projective {
    if bit_length(&limbs(scalar)) <= SHORT_BITS {
        return ffi::g1_mult_public(point, scalar);
    }
    let mut out = [*point];
    g1_mul_public_batch(&mut out, std::slice::from_ref(scalar));
    out[0]
}

/// [`g1_mul_public`] in G2.
pub fn g2_mul_public(point: &G2Projective, scalar: &Scalar) -> G2Projective {
    if bit_length(&limbs(scalar)) <= SHORT_BITS {
        return ffi::g2_mult_public(point, scalar);
    }
    let mut out = [*point];
    g2_mul_public_batch(&mut out, std::slice::from_ref(scalar));
    out[0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::G2Affine;
    use ff::{Field, PrimeField};
    use group::Curve as _;
    use proptest::prelude::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    fn from_u128(v: u128) -> Scalar {
        Scalar::from_u128(v)
    }

    /// Scalars at the edges of every split: zero, one, r - 1, the eigenvalues and powers of
    /// `Z` and their neighbours, the largest parts.
    fn edge_scalars() -> Vec<Scalar> {
        let z = Scalar::from(Z);
        let lambda = from_u128(LAMBDA);
        let mut out = vec![
            Scalar::ZERO,
            Scalar::ONE,
            Scalar::from(2u64),
            Scalar::from(15u64),
            Scalar::from(16u64),
            Scalar::from(17u64),
            -Scalar::ONE,
            -Scalar::from(2u64),
            from_u128(u128::MAX),
            from_u128(u128::from(u64::MAX)),
            -from_u128(u128::MAX),
        ];
        for base in [lambda, z, z * z, z * z * z, lambda * lambda] {
            for delta in [-Scalar::ONE, Scalar::ZERO, Scalar::ONE] {
                out.push(base + delta);
                out.push(-(base + delta));
            }
        }
        // Every part at its largest: Z - 1 in each of the four.
        let zm = Scalar::from(Z - 1);
        out.push(zm + zm * z + zm * z * z + zm * z * z * z);
        out
    }

    #[test]
    fn naf_digits_sum_to_the_value_and_are_sparse() {
        let mut digits = [0i8; MAX_DIGITS];
        for (v, w) in [
            (0u128, 5),
            (1, 5),
            (15, 5),
            (16, 5),
            (31, 4),
            (LAMBDA, 5),
            (LAMBDA + 1, 5),
            (u128::MAX - 64, 6),
            (u128::from(u64::MAX), 4),
        ] {
            let len = naf(v, w, &mut digits);
            let mut back: u128 = 0;
            for i in (0..len).rev() {
                let d = i128::from(digits[i]);
                assert!(
                    d == 0 || (d % 2 != 0 && d.abs() < 1 << (w - 1)),
                    "{d} at {i}"
                );
                back = back.wrapping_mul(2).wrapping_add_signed(d);
                if d != 0 {
                    let next = (i.saturating_sub(w as usize - 1)..i).map(|j| digits[j]);
                    assert!(
                        next.clone().all(|e| e == 0),
                        "{v}: a nonzero within w of {i}"
                    );
                }
            }
            assert_eq!(back, v, "digits of {v}");
            assert!(len == 0 || digits[len - 1] != 0, "top digit of {v}");
        }
    }

    #[test]
    fn the_four_parts_recompose() {
        for k in edge_scalars() {
            let parts = split_z(limbs(&k));
            let z = Scalar::from(Z);
            let back = Scalar::from(parts[0])
                + Scalar::from(parts[1]) * z
                + Scalar::from(parts[2]) * z * z
                + Scalar::from(parts[3]) * z * z * z;
            assert_eq!(back, k);
            assert!(parts.iter().all(|&p| p < Z));
        }
    }

    #[test]
    fn psi_multiplies_by_z() {
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        for _ in 0..4 {
            let p = G2Projective::random(&mut rng);
            let want = -(p * Scalar::from(Z));
            assert_eq!(G2Projective::from(psi(&p.to_affine())), want);
        }
        assert_eq!(psi(&G2Affine::default()), G2Affine::default());
    }

    fn check_g1(points: &[G1Projective], scalars: &[Scalar]) {
        let mut got = points.to_vec();
        g1_mul_public_batch(&mut got, scalars);
        for (i, ((g, p), s)) in got.iter().zip(points).zip(scalars).enumerate() {
            assert_eq!(g.to_affine(), (p * s).to_affine(), "G1 point {i}");
        }
        for (p, s) in points.iter().zip(scalars) {
            assert_eq!(g1_mul_public(p, s), p * s, "G1 one at a time");
        }
    }

    fn check_g2(points: &[G2Projective], scalars: &[Scalar]) {
        let mut got = points.to_vec();
        g2_mul_public_batch(&mut got, scalars);
        for (i, ((g, p), s)) in got.iter().zip(points).zip(scalars).enumerate() {
            assert_eq!(g.to_affine(), (p * s).to_affine(), "G2 point {i}");
        }
        for (p, s) in points.iter().zip(scalars) {
            assert_eq!(g2_mul_public(p, s), p * s, "G2 one at a time");
        }
    }

    #[test]
    fn edge_scalars_and_points_match_blst() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let scalars = edge_scalars();
        let g1 = G1Projective::random(&mut rng);
        let g2 = G2Projective::random(&mut rng);
        // One point repeated (equal table rows), the identity, the generator.
        let mut p1 = vec![g1; scalars.len()];
        p1[1] = G1Projective::identity();
        p1[2] = G1Projective::generator();
        let mut p2 = vec![g2; scalars.len()];
        p2[1] = G2Projective::identity();
        p2[2] = G2Projective::generator();
        check_g1(&p1, &scalars);
        check_g2(&p2, &scalars);
        // The identity by every scalar.
        check_g1(&vec![G1Projective::identity(); scalars.len()], &scalars);
        check_g2(&vec![G2Projective::identity(); scalars.len()], &scalars);
        // Batches of 0, 1, and past one batch.
        check_g1(&[], &[]);
        let many: Vec<Scalar> = (0..BATCH + 3).map(|_| Scalar::random(&mut rng)).collect();
        let points: Vec<G1Projective> = (0..BATCH + 3)
            .map(|_| G1Projective::random(&mut rng))
            .collect();
        check_g1(&points, &many);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn random_scalars_match_blst(seed in any::<u64>(), small in any::<u64>()) {
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            let scalars = [Scalar::random(&mut rng), Scalar::from(small), -Scalar::from(small)];
            let p1: Vec<G1Projective> = (0..3).map(|_| G1Projective::random(&mut rng)).collect();
            let p2: Vec<G2Projective> = (0..3).map(|_| G2Projective::random(&mut rng)).collect();
            check_g1(&p1, &scalars);
            check_g2(&p2, &scalars);
        }
    }
}
