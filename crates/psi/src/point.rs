//! P-256 points in Jacobian coordinates over [`Fe`], and scalar multiplication that is constant
//! time in the scalar: the portable backend's arithmetic (the wasm build's), byte-identical to
//! OpenSSL's, which the peers' known-answer vectors check on every build.
//!
//! - Doubling: dbl-2001-b for a = -3 (3M + 5S).
//! - Addition: add-2007-bl (11M + 5S), the exceptional cases (an input at infinity, equal inputs,
//!   opposite inputs) handled by constant-time selection, never by a branch; madd-2007-bl
//!   (7M + 4S) for an affine second input.
//! - Multiplication ([`mul_batch`]): a signed fixed window of 5 bits (digits in [-16, 16], as
//!   BoringSSL's generic P-256 does): per point a table of 1P..16P, made affine for a whole
//!   batch with one inversion, then 52 windows of 5 doublings and one mixed addition of a table
//!   entry picked by a full constant-time scan and negated by selection. The additions that
//!   cannot meet equal inputs (all but the last; the argument is at `mul_with_affine_table`)
//!   skip the doubling and the zero tests the general addition needs.
//! - [`normalize_batch`]: affine coordinates of a block with one field inversion (Montgomery's
//!   trick), intermediate values wiped.

use p256::elliptic_curve::subtle::{Choice, ConstantTimeEq};

use crate::field::Fe;

/// Bits per window of the scalar multiplication.
const WINDOW: usize = 5;

/// Windows covering a 256-bit scalar with its last carry: ceil(257 / 5).
const WINDOWS: usize = 52;

/// Table entries: 1P..16P (the digits' magnitudes).
const TABLE: usize = 1 << (WINDOW - 1);

/// A point `(X, Y, Z)` standing for the affine `(X / Z^2, Y / Z^3)`; `Z = 0` is the point at
/// infinity (whatever X and Y are).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Jacobian {
    x: Fe,
    y: Fe,
    z: Fe,
}

impl Jacobian {
    /// The point at infinity.
    pub(crate) fn identity() -> Self {
        Self {
            x: Fe::one(),
            y: Fe::one(),
            z: Fe::ZERO,
        }
    }

    /// The affine point `(x, y)`; the caller knows it is on the curve.
    pub(crate) fn from_affine(x: Fe, y: Fe) -> Self {
        Self { x, y, z: Fe::one() }
    }

    /// Whether this is the point at infinity.
    pub(crate) fn is_identity(&self) -> Choice {
        self.z.is_zero()
    }

    /// `2 * self` (dbl-2001-b, a = -3); infinity stays infinity (`Z3 = (Y + Z)^2 - Y^2 - Z^2`).
    pub(crate) fn double(&self) -> Self {
        let delta = self.z.square();
        let gamma = self.y.square();
        let beta = self.x.mul(&gamma);
        let t = self.x.sub(&delta).mul(&self.x.add(&delta));
        let alpha = t.times(3);
        let beta4 = beta.times(4);
        let x3 = alpha.square().sub(&beta.times(8));
        let z3 = self.y.add(&self.z).square().sub2(&gamma, &delta);
        let gamma8 = gamma.square().times(8);
        let y3 = alpha.mul(&beta4.sub(&x3)).sub(&gamma8);
        Self {
            x: x3,
            y: y3,
            z: z3,
        }
    }

    /// `self + other` (add-2007-bl). Equal inputs take the doubling, opposite inputs give
    /// infinity (`H = 0` makes `Z3 = 0`), an input at infinity gives the other: all by
    /// constant-time selection.
    pub(crate) fn add(&self, other: &Self) -> Self {
        let (sum, h, r) = self.add_formula(other);
        let (self_infinite, other_infinite) = (self.is_identity(), other.is_identity());
        let equal = h.is_zero() & r.is_zero() & !self_infinite & !other_infinite;
        sum.select(&self.double(), equal)
            .select(other, self_infinite)
            .select(self, other_infinite)
    }

    /// `self + other` for inputs the caller knows are not equal (unless both are at
    /// infinity), and knows which are at infinity (`self_infinite`, `other_infinite`):
    /// [`add`](Self::add) without the doubling it keeps for equal inputs (half an addition
    /// again) and without the zero tests (each a reduction to canonical form).
    fn add_distinct(&self, other: &Self, self_infinite: Choice, other_infinite: Choice) -> Self {
        let (sum, _, _) = self.add_formula(other);
        sum.select(other, self_infinite)
            .select(self, other_infinite)
    }

    /// add-2007-bl as it is, with its H and R: right unless an input is at infinity or the
    /// inputs are equal (then all zeros).
    fn add_formula(&self, other: &Self) -> (Self, Fe, Fe) {
        let z1z1 = self.z.square();
        let z2z2 = other.z.square();
        let u1 = self.x.mul(&z2z2);
        let u2 = other.x.mul(&z1z1);
        let s1 = self.y.mul(&other.z).mul(&z2z2);
        let s2 = other.y.mul(&self.z).mul(&z1z1);
        let h = u2.sub(&u1);
        let i = h.times(2).square();
        let j = h.mul(&i);
        let r = s2.sub(&s1).times(2);
        let v = u1.mul(&i);
        let x3 = r.square().sub2(&j, &v.times(2));
        let y3 = r.mul(&v.sub(&x3)).sub(&s1.mul(&j).times(2));
        let z3 = self.z.add(&other.z).square().sub2(&z1z1, &z2z2).mul(&h);
        let sum = Self {
            x: x3,
            y: y3,
            z: z3,
        };
        (sum, h, r)
    }

    /// `self + (x2, y2)` for an affine `(x2, y2)` the caller knows is not `self` (madd-2007-bl,
    /// 7M + 4S), and knows which input is at infinity (`other_infinite`: the affine
    /// coordinates then mean nothing).
    fn add_mixed_distinct(
        &self,
        (x2, y2): (&Fe, &Fe),
        self_infinite: Choice,
        other_infinite: Choice,
    ) -> Self {
        let z1z1 = self.z.square();
        let u2 = x2.mul(&z1z1);
        let s2 = y2.mul(&self.z).mul(&z1z1);
        let h = u2.sub(&self.x);
        let hh = h.square();
        let i = hh.times(4);
        let j = h.mul(&i);
        let r = s2.sub(&self.y).times(2);
        let v = self.x.mul(&i);
        let x3 = r.square().sub2(&j, &v.times(2));
        let y3 = r.mul(&v.sub(&x3)).sub(&self.y.mul(&j).times(2));
        let z3 = self.z.add(&h).square().sub2(&z1z1, &hh);
        let sum = Self {
            x: x3,
            y: y3,
            z: z3,
        };
        sum.select(&Self::from_affine(*x2, *y2), self_infinite)
            .select(self, other_infinite)
    }

    /// `-self`.
    #[cfg(test)]
    pub(crate) fn neg(&self) -> Self {
        Self {
            y: self.y.neg(),
            ..*self
        }
    }

    /// `other` where `choice`, else `self`.
    pub(crate) fn select(&self, other: &Self, choice: Choice) -> Self {
        Self {
            x: self.x.select(&other.x, choice),
            y: self.y.select(&other.y, choice),
            z: self.z.select(&other.z, choice),
        }
    }

    fn wipe(&mut self) {
        self.x.wipe();
        self.y.wipe();
        self.z.wipe();
    }

    /// `scalar * self` for a point of the group (order n, or infinity): [`mul_batch`] of one
    /// point, the reference its tests compare batches with.
    #[cfg(test)]
    pub(crate) fn mul(&self, scalar: &[u8; 32]) -> Self {
        match normalize_batch(&[*self])[0] {
            Some(affine) => mul_batch(&[affine], scalar)
                .pop()
                .expect("invariant: one product per point"),
            None => Self::identity(),
        }
    }
}

/// The scalar's signed digits, least significant first: `k = sum d_i 32^i` with each
/// `d_i` in [-16, 16]. Constant time: each window's value `v` (5 bits plus the carry, 0..=32)
/// becomes `v - 32` with a carry when `v > 16`, by arithmetic, not a branch.
fn recode(scalar: &[u8; 32]) -> [i8; WINDOWS] {
    let mut little = *scalar;
    little.reverse();
    let bit = |i: usize| -> u16 {
        if i < 256 {
            u16::from((little[i / 8] >> (i % 8)) & 1)
        } else {
            0
        }
    };
    let mut digits = [0i8; WINDOWS];
    let mut carry = 0u16;
    for (w, digit) in digits.iter_mut().enumerate() {
        let window = (0..WINDOW).fold(0u16, |v, b| v | (bit(w * WINDOW + b) << b));
        let v = window + carry;
        carry = (v + 15) >> WINDOW;
        #[allow(
            clippy::cast_possible_truncation,
            reason = "v < 2^5 + 1 and carry < 2: a digit in [-16, 16]"
        )]
        let signed = (v as i16 - (carry << WINDOW) as i16) as i8;
        *digit = signed;
    }
    zeroize::Zeroize::zeroize(&mut little);
    digits
}

/// `scalar * P` for each affine point P of `points` (on the curve), in order, the scalar 32
/// big-endian bytes below the group order (a secret key), by a signed window of 5 bits with
/// every point's table 1P..16P in affine coordinates,
/// one field inversion for all the tables ([`normalize_batch`]): every addition but the last is
/// then a mixed one (7M + 4S against 11M + 5S), which more than pays for the normalisation.
/// Constant time in the scalar; the tables are wiped.
pub(crate) fn mul_batch(points: &[(Fe, Fe)], scalar: &[u8; 32]) -> Vec<Jacobian> {
    let finite = Choice::from(0);
    let mut jacobian = Vec::with_capacity(points.len() * TABLE);
    for &(x, y) in points {
        let point = Jacobian::from_affine(x, y);
        jacobian.push(point);
        jacobian.push(point.double());
        for _ in 2..TABLE {
            let last = jacobian[jacobian.len() - 1];
            jacobian.push(last.add_distinct(&point, finite, finite));
        }
    }
    let mut tables: Vec<(Fe, Fe)> = normalize_batch(&jacobian)
        .into_iter()
        .map(|entry| entry.expect("invariant: kP for k in 1..=16 is not infinity (16 < n)"))
        .collect();
    for entry in &mut jacobian {
        entry.wipe();
    }
    let mut digits = recode(scalar);
    let out = tables
        .chunks_exact(TABLE)
        .map(|table| mul_with_affine_table(table, &digits))
        .collect();
    for (x, y) in &mut tables {
        x.wipe();
        y.wipe();
    }
    zeroize::Zeroize::zeroize(&mut digits);
    out
}

/// The window loop of [`mul_batch`] over one point's affine table: every window doubles five
/// times, scans the whole table and adds once, whatever the digits.
///
/// No addition here meets equal inputs, so they skip the doubling [`Jacobian::add`]
/// keeps for them (half an addition again). With `A_j = sum_{i >= j} d_i 32^(i-j)` the
/// accumulator after window j, the addition at window j adds `d_j P` to `32 A_(j+1) P`:
/// - for j >= 1, `|32 A_(j+1)| <= k / 32^j + 32 < n / 2` and `|d_j| <= 16`, so the two are
///   equal mod n only as integers, that is when `A_(j+1) = 0` and `d_j = 0`: both at
///   infinity, which the formula's selections handle;
/// - for j = 0, `32 A_1 = k - d_0` with `d_0 = k (mod 32)`; equal inputs need
///   `k = 2 d_0 (mod n)`, and no k in [1, n) has both (n = 17 mod 32).
///
/// The last addition takes the full [`Jacobian::add`] all the same (one doubling per
/// multiplication), so that the argument is not all that stands between a scalar and a
/// wrong product. The table's additions `(m - 1) P + P` (m = 3..16) never meet equal
/// inputs.
fn mul_with_affine_table(table: &[(Fe, Fe)], digits: &[i8; WINDOWS]) -> Jacobian {
    let mut acc = Jacobian::identity();
    let mut acc_infinite = Choice::from(1);
    for (window, &digit) in digits.iter().enumerate().rev() {
        for _ in 0..WINDOW {
            acc = acc.double();
        }
        let negative = (digit as u8) >> 7;
        let sign = -i16::from(negative);
        let magnitude = ((i16::from(digit) ^ sign) - sign) as u32;
        let (mut x, mut y) = (Fe::ZERO, Fe::ZERO);
        for (k, (entry_x, entry_y)) in (1u32..).zip(table.iter()) {
            let hit = magnitude.ct_eq(&k);
            x.or_if(entry_x, hit);
            y.or_if(entry_y, hit);
        }
        let mut y = y.select(&y.neg(), Choice::from(negative));
        let chosen_infinite = magnitude.ct_eq(&0);
        acc = if window == 0 {
            // The full addition, as in Jacobian::mul.
            let chosen = Jacobian::from_affine(x, y).select(&Jacobian::identity(), chosen_infinite);
            acc.add(&chosen)
        } else {
            acc.add_mixed_distinct((&x, &y), acc_infinite, chosen_infinite)
        };
        acc_infinite &= chosen_infinite;
        x.wipe();
        y.wipe();
    }
    acc
}

/// The affine coordinates of `points`, in order, with one field inversion for all of them
/// (Montgomery's trick); `None` for a point at infinity (whose Z is taken as 1 in the chain, so
/// that it costs the others nothing). Intermediate products are wiped.
pub(crate) fn normalize_batch(points: &[Jacobian]) -> Vec<Option<(Fe, Fe)>> {
    let mut prefix = Vec::with_capacity(points.len());
    let mut running = Fe::one();
    for point in points {
        let z = point.z.select(&Fe::one(), point.is_identity());
        running = running.mul(&z);
        prefix.push(running);
    }
    let mut inverse = running.invert();
    let mut out = vec![None; points.len()];
    for (k, point) in points.iter().enumerate().rev() {
        let z = point.z.select(&Fe::one(), point.is_identity());
        let before = if k == 0 { Fe::one() } else { prefix[k - 1] };
        let mut z_inverse = inverse.mul(&before);
        inverse = inverse.mul(&z);
        let mut zz = z_inverse.square();
        let x = point.x.mul(&zz);
        let y = point.y.mul(&zz.mul(&z_inverse));
        out[k] = (!bool::from(point.is_identity())).then_some((x, y));
        z_inverse.wipe();
        zz.wipe();
    }
    for value in &mut prefix {
        value.wipe();
    }
    inverse.wipe();
    running.wipe();
    out
}

impl ConstantTimeEq for Jacobian {
    /// Whether the two stand for the same point: `X1 Z2^2 = X2 Z1^2` and `Y1 Z2^3 = Y2 Z1^3`,
    /// or both at infinity.
    fn ct_eq(&self, other: &Self) -> Choice {
        let z1z1 = self.z.square();
        let z2z2 = other.z.square();
        let same_x = self.x.mul(&z2z2).ct_eq(&other.x.mul(&z1z1));
        let same_y = self
            .y
            .mul(&z2z2.mul(&other.z))
            .ct_eq(&other.y.mul(&z1z1.mul(&self.z)));
        let both_infinite = self.is_identity() & other.is_identity();
        let neither = !self.is_identity() & !other.is_identity();
        both_infinite | (neither & same_x & same_y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::elliptic_curve::PrimeField;
    use p256::elliptic_curve::sec1::{FromEncodedPoint, ToEncodedPoint};
    use p256::{AffinePoint, EncodedPoint, ProjectivePoint, Scalar};
    use sha2::{Digest, Sha256};

    /// The generator.
    fn g() -> Jacobian {
        let hex = |h: &str| {
            let mut bytes = [0u8; 32];
            for (i, b) in bytes.iter_mut().enumerate() {
                *b = u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap();
            }
            Fe::from_be_bytes(&bytes).unwrap()
        };
        Jacobian::from_affine(
            hex("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"),
            hex("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5"),
        )
    }

    /// Ours as SEC1 uncompressed bytes, infinity as `[0]`.
    fn encode(point: &Jacobian) -> Vec<u8> {
        match normalize_batch(std::slice::from_ref(point))[0] {
            None => vec![0],
            Some((x, y)) => [&[4u8][..], &x.to_be_bytes(), &y.to_be_bytes()].concat(),
        }
    }

    /// RustCrypto's point as the same bytes.
    fn theirs(point: &ProjectivePoint) -> Vec<u8> {
        let encoded = point.to_affine().to_encoded_point(false);
        if encoded.is_identity() {
            vec![0]
        } else {
            encoded.as_bytes().to_vec()
        }
    }

    fn scalar(i: u32) -> [u8; 32] {
        let bytes: [u8; 32] = Sha256::digest(i.to_be_bytes()).into();
        // Below the order n: take the scalar RustCrypto reduces it to.
        let reduced =
            <Scalar as p256::elliptic_curve::ops::Reduce<p256::U256>>::reduce_bytes(&bytes.into());
        reduced.to_bytes().into()
    }

    fn their_scalar(bytes: &[u8; 32]) -> Scalar {
        Option::from(Scalar::from_repr((*bytes).into())).unwrap()
    }

    #[test]
    fn multiplication_equals_rustcrypto_p256() {
        let their_g = ProjectivePoint::GENERATOR;
        for i in 0..40 {
            let k = scalar(i);
            let point = g().mul(&scalar(1000 + i));
            let their_point = their_g * their_scalar(&scalar(1000 + i));
            assert_eq!(encode(&point), theirs(&their_point));
            assert_eq!(
                encode(&point.mul(&k)),
                theirs(&(their_point * their_scalar(&k))),
                "scalar {i}"
            );
        }
        // Edges: 0, 1, 2, n - 1, and scalars whose digits are all +16 or -16 or 0.
        let mut n_minus_1 = [0u8; 32];
        n_minus_1.copy_from_slice(&(-Scalar::ONE).to_bytes());
        let mut sixteens = [0u8; 32];
        for (i, b) in sixteens.iter_mut().enumerate() {
            *b = if i % 5 == 0 { 0x84 } else { 0x21 };
        }
        let mut one = [0u8; 32];
        one[31] = 1;
        let mut two = [0u8; 32];
        two[31] = 2;
        for k in [[0u8; 32], one, two, n_minus_1, sixteens, [0x7f; 32]] {
            let reference =
                Option::<Scalar>::from(Scalar::from_repr(k.into())).map(|s| theirs(&(their_g * s)));
            if let Some(reference) = reference {
                assert_eq!(encode(&g().mul(&k)), reference, "{k:02x?}");
            }
        }
    }

    #[test]
    fn exceptional_additions_are_right() {
        let p = g().mul(&scalar(7));
        let q = g().mul(&scalar(8));
        let inf = Jacobian::identity();
        // P + P is 2P; P + (-P) is infinity; P + inf and inf + P are P; inf + inf is inf.
        assert_eq!(encode(&p.add(&p)), encode(&p.double()));
        assert_eq!(encode(&p.add(&p.neg())), vec![0]);
        assert_eq!(encode(&p.add(&inf)), encode(&p));
        assert_eq!(encode(&inf.add(&p)), encode(&p));
        assert_eq!(encode(&inf.add(&inf)), vec![0]);
        assert_eq!(encode(&inf.double()), vec![0]);
        // Equal points in different Jacobian representations (Z != 1) still double.
        let p2 = p.double().add(&p.neg()); // p, with another Z
        assert!(bool::from(p2.ct_eq(&p)));
        assert_eq!(encode(&p.add(&p2)), encode(&p.double()));
        assert_eq!(encode(&p.add(&q)), encode(&q.add(&p)));
        // The table of a multiplication meets its accumulator: 17 * P computed both ways.
        let mut seventeen = [0u8; 32];
        seventeen[31] = 17;
        let mut sum = inf;
        for _ in 0..17 {
            sum = sum.add(&p);
        }
        assert_eq!(encode(&p.mul(&seventeen)), encode(&sum));
    }

    #[test]
    fn scalars_whose_last_addition_meets_equal_inputs_are_right() {
        // k = 2 d_0 (mod n) for |d_0| <= 16: 2..=32 and n - 32..=n - 2 (and their neighbours).
        let their_g = ProjectivePoint::GENERATOR;
        for small in 0u64..=40 {
            for s in [Scalar::from(small), -Scalar::from(small)] {
                let k: [u8; 32] = s.to_bytes().into();
                assert_eq!(encode(&g().mul(&k)), theirs(&(their_g * s)), "{small}");
            }
        }
    }

    #[test]
    fn batches_with_affine_tables_equal_one_by_one() {
        let points: Vec<(Fe, Fe)> = (0..9)
            .map(|i| {
                let p = normalize_batch(&[g().mul(&scalar(50 + i))])[0].unwrap();
                (p.0, p.1)
            })
            .collect();
        let mut scalars: Vec<[u8; 32]> = (0..6).map(|i| scalar(900 + i)).collect();
        for small in [0u64, 1, 2, 17, 32, 33] {
            scalars.push(Scalar::from(small).to_bytes().into());
            scalars.push((-Scalar::from(small)).to_bytes().into());
        }
        for k in &scalars {
            let batch = mul_batch(&points, k);
            for (point, product) in points.iter().zip(&batch) {
                let one = Jacobian::from_affine(point.0, point.1).mul(k);
                assert_eq!(encode(product), encode(&one), "{k:02x?}");
            }
        }
        assert!(mul_batch(&[], &scalars[0]).is_empty());
    }

    #[test]
    fn recoding_is_exact() {
        for i in 0..200 {
            let k = scalar(i);
            let digits = recode(&k);
            assert!(digits.iter().all(|d| (-16..=16).contains(d)), "{digits:?}");
            // sum d_i 32^i over 260 bits equals k: check through little-endian base 2^5 sums.
            let mut value = [0i64; 9]; // 32-bit chunks, signed, carried at the end
            for (w, &d) in digits.iter().enumerate() {
                let bit = w * 5;
                value[bit / 32] += i64::from(d) << (bit % 32);
            }
            let mut out = [0u8; 32];
            let mut carry = 0i64;
            for (chunk, v) in value.iter().enumerate().take(8) {
                let total = v + carry;
                let word = total.rem_euclid(1 << 32);
                carry = (total - word) >> 32;
                out[28 - 4 * chunk..32 - 4 * chunk]
                    .copy_from_slice(&u32::try_from(word).unwrap().to_be_bytes());
            }
            assert_eq!(carry + value[8], 0);
            assert_eq!(out, k);
        }
        let _ = AffinePoint::from_encoded_point(&EncodedPoint::identity());
    }
}
