//! P-256 points in Jacobian coordinates over [`Fe`], and scalar multiplication that is constant
//! time in the scalar: the portable backend's arithmetic (the wasm build's), byte-identical to
//! OpenSSL's, which the peers' known-answer vectors check on every build.
//!
//! - Doubling: dbl-2001-b for a = -3 (3M + 5S).
//! - Addition: add-2007-bl (11M + 5S), the exceptional cases (an input at infinity, equal inputs,
//!   opposite inputs) handled by constant-time selection, never by a branch.
//! - Multiplication: a signed fixed window of 5 bits (digits in [-16, 16], as BoringSSL's generic
//!   P-256 does): a table of 1P..16P, 52 windows of 5 doublings and one addition of a table entry
//!   picked by a full constant-time scan and negated by selection.
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
        let alpha = t.double().add(&t);
        let beta4 = beta.double().double();
        let x3 = alpha.square().sub(&beta4.double());
        let z3 = self.y.add(&self.z).square().sub(&gamma).sub(&delta);
        let gamma8 = gamma.square().double().double().double();
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
        let (sum, equal) = self.add_inner(other);
        sum.select(&self.double(), equal)
    }

    /// `self + other` for inputs the caller knows are not equal (unless both are at
    /// infinity): [`add`](Self::add) without the doubling it computes for equal inputs, which
    /// costs half an addition again. An input at infinity and opposite inputs are handled.
    fn add_distinct(&self, other: &Self) -> Self {
        self.add_inner(other).0
    }

    /// add-2007-bl with the infinity cases selected, and whether the inputs were equal (the
    /// one case where the formula's result, all zeros, is wrong).
    fn add_inner(&self, other: &Self) -> (Self, Choice) {
        let z1z1 = self.z.square();
        let z2z2 = other.z.square();
        let u1 = self.x.mul(&z2z2);
        let u2 = other.x.mul(&z1z1);
        let s1 = self.y.mul(&other.z).mul(&z2z2);
        let s2 = other.y.mul(&self.z).mul(&z1z1);
        let h = u2.sub(&u1);
        let i = h.double().square();
        let j = h.mul(&i);
        let r = s2.sub(&s1).double();
        let v = u1.mul(&i);
        let x3 = r.square().sub(&j).sub(&v.double());
        let y3 = r.mul(&v.sub(&x3)).sub(&s1.mul(&j).double());
        let z3 = self.z.add(&other.z).square().sub(&z1z1).sub(&z2z2).mul(&h);
        let sum = Self {
            x: x3,
            y: y3,
            z: z3,
        };
        let equal = h.is_zero() & r.is_zero() & !self.is_identity() & !other.is_identity();
        let result = sum.select(other, self.is_identity());
        (result.select(self, other.is_identity()), equal)
    }

    /// `-self`.
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

    /// `scalar * self`, the scalar 32 big-endian bytes below the group order (a secret key),
    /// `self` a point of the group (order n, or infinity): constant time in the scalar (every
    /// window doubles five times, scans the whole table, adds once).
    ///
    /// No addition here meets equal inputs, so they skip the doubling [`add`](Self::add)
    /// keeps for them (half an addition again). With `A_j = sum_{i >= j} d_i 32^(i-j)` the
    /// accumulator after window j, the addition at window j adds `d_j P` to `32 A_(j+1) P`:
    /// - for j >= 1, `|32 A_(j+1)| <= k / 32^j + 32 < n / 2` and `|d_j| <= 16`, so the two are
    ///   equal mod n only as integers, that is when `A_(j+1) = 0` and `d_j = 0`: both at
    ///   infinity, which the formula's selections handle;
    /// - for j = 0, `32 A_1 = k - d_0` with `d_0 = k (mod 32)`; equal inputs need
    ///   `k = 2 d_0 (mod n)`, and no k in [1, n) has both (n = 17 mod 32).
    ///
    /// The last addition takes the full [`add`](Self::add) all the same (one doubling per
    /// multiplication), so that the argument is not all that stands between a scalar and a
    /// wrong product. The table's additions `(m - 1) P + P` (m = 3..16) never meet equal
    /// inputs.
    pub(crate) fn mul(&self, scalar: &[u8; 32]) -> Self {
        let mut table = [Self::identity(); TABLE];
        table[0] = *self;
        table[1] = self.double();
        for k in 2..TABLE {
            table[k] = table[k - 1].add_distinct(self);
        }
        let mut digits = recode(scalar);
        let mut acc = Self::identity();
        for (window, &digit) in digits.iter().enumerate().rev() {
            for _ in 0..WINDOW {
                acc = acc.double();
            }
            let negative = (digit as u8) >> 7;
            // |digit| without a branch: (d ^ s) - s with s = 0 or -1.
            let sign = -i16::from(negative);
            let magnitude = ((i16::from(digit) ^ sign) - sign) as u32;
            let mut chosen = Self::identity();
            for (k, entry) in (1u32..).zip(table.iter()) {
                chosen = chosen.select(entry, magnitude.ct_eq(&k));
            }
            chosen = chosen.select(&chosen.neg(), Choice::from(negative));
            acc = if window == 0 {
                acc.add(&chosen)
            } else {
                acc.add_distinct(&chosen)
            };
            chosen.wipe();
        }
        for entry in &mut table {
            entry.wipe();
        }
        zeroize::Zeroize::zeroize(&mut digits);
        acc
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
