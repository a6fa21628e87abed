//! The P-256 base field: the operations the curve needs, over one of two limb arithmetics.
//!
//! - 64-bit targets: fiat-crypto's generated and formally verified Montgomery field
//!   ([`fiat64`]), whose limb products are 64x64->128 multiplies.
//! - 32-bit targets (wasm32), or the `field32` feature on any target so that the wasm build's
//!   arithmetic is tested natively: ten signed 26-bit limbs ([`radix26`]), whose limb products
//!   are single 32x32->64 multiplies summed without carries (why not fiat's 32-bit field: see
//!   that module).
//!
//! Everything here above the limbs (encodings, inversion and square roots by fixed
//! exponentiations) is constant time: no branch or index depends on a value. Both arithmetics
//! are checked against RustCrypto's `p256` below.

#[cfg(not(any(target_pointer_width = "32", feature = "field32")))]
mod fiat64;
#[cfg(any(target_pointer_width = "32", feature = "field32"))]
mod radix26;

#[cfg(not(any(target_pointer_width = "32", feature = "field32")))]
use fiat64 as limbs;
#[cfg(any(target_pointer_width = "32", feature = "field32"))]
use radix26 as limbs;

use limbs::Limbs;
use p256::elliptic_curve::subtle::{Choice, ConditionallySelectable, ConstantTimeEq};
use zeroize::Zeroize;

/// The field prime p = 2^256 - 2^224 + 2^192 + 2^96 - 1 (NIST SP 800-186, § 3.2.1.3), big-endian.
const P_BYTES: [u8; 32] = [
    0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
];

/// An element of the P-256 base field, in Montgomery form.
///
/// # Invariant
/// The limbs meet their arithmetic's invariant (each module states its own); the only way in
/// from outside is a canonical encoding.
#[derive(Clone, Copy)]
pub(crate) struct Fe(Limbs);

impl std::fmt::Debug for Fe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fe(")?;
        self.to_be_bytes()
            .iter()
            .try_for_each(|b| write!(f, "{b:02x}"))?;
        write!(f, ")")
    }
}

impl Fe {
    /// Zero.
    pub(crate) const ZERO: Self = Self(limbs::ZERO);

    /// One.
    pub(crate) fn one() -> Self {
        Self(limbs::ONE)
    }

    /// The element whose big-endian encoding is `bytes`, if it is below p (canonical).
    pub(crate) fn from_be_bytes(bytes: &[u8; 32]) -> Option<Self> {
        let canonical = below_p(bytes);
        let value = Self(limbs::from_be_bytes(bytes));
        bool::from(canonical).then_some(value)
    }

    /// `bytes` (any 256-bit value) reduced mod p: one conditional subtraction suffices, since
    /// 2^256 < 2p. Constant time.
    pub(crate) fn reduce_be_bytes(bytes: &[u8; 32]) -> Self {
        let mut minus_p = [0u8; 32];
        let mut borrow = 0u16;
        for i in (0..32).rev() {
            let difference = u16::from(bytes[i])
                .wrapping_sub(u16::from(P_BYTES[i]))
                .wrapping_sub(borrow);
            minus_p[i] = difference.to_le_bytes()[0];
            borrow = (difference >> 8) & 1;
        }
        // A borrow out means the value was below p: keep it.
        let keep = Choice::from(borrow.to_le_bytes()[0]);
        let mut reduced = [0u8; 32];
        for i in 0..32 {
            reduced[i] = u8::conditional_select(&minus_p[i], &bytes[i], keep);
        }
        let value = Self(limbs::from_be_bytes(&reduced));
        minus_p.zeroize();
        reduced.zeroize();
        value
    }

    /// The big-endian encoding of the canonical value.
    pub(crate) fn to_be_bytes(self) -> [u8; 32] {
        limbs::to_be_bytes(&self.0)
    }

    /// Whether the canonical value is odd.
    pub(crate) fn is_odd(&self) -> Choice {
        Choice::from(self.to_be_bytes()[31] & 1)
    }

    /// Whether this is zero.
    pub(crate) fn is_zero(&self) -> Choice {
        limbs::is_zero(&self.0)
    }

    /// `self + other`.
    pub(crate) fn add(&self, other: &Self) -> Self {
        Self(limbs::add(&self.0, &other.0))
    }

    /// `self - other`.
    pub(crate) fn sub(&self, other: &Self) -> Self {
        Self(limbs::sub(&self.0, &other.0))
    }

    /// `self - b - c`.
    pub(crate) fn sub2(&self, b: &Self, c: &Self) -> Self {
        Self(limbs::sub2(&self.0, &b.0, &c.0))
    }

    /// `k * self` for a small constant `k` in [1, 8] (one reduction for the 26-bit limbs).
    pub(crate) fn times(&self, k: u8) -> Self {
        Self(limbs::times(&self.0, k))
    }

    /// `-self`.
    pub(crate) fn neg(&self) -> Self {
        Self(limbs::neg(&self.0))
    }

    /// `2 * self`.
    pub(crate) fn double(&self) -> Self {
        self.add(self)
    }

    /// `self * other`.
    pub(crate) fn mul(&self, other: &Self) -> Self {
        Self(limbs::mul(&self.0, &other.0))
    }

    /// `self^2`.
    pub(crate) fn square(&self) -> Self {
        Self(limbs::square(&self.0))
    }

    /// `self^(2^k)`.
    fn square_times(&self, k: usize) -> Self {
        (0..k).fold(*self, |x, _| x.square())
    }

    /// `self^(2^n - 1)` for n = 1, 2, 3, 6, 12, 15, 30, 32: the building blocks of the two fixed
    /// exponents below (an addition chain of 30 squarings and 7 multiplications).
    fn ones(&self) -> Ones {
        let x1 = *self;
        let x2 = x1.square().mul(&x1);
        let x3 = x2.square().mul(&x1);
        let x6 = x3.square_times(3).mul(&x3);
        let x12 = x6.square_times(6).mul(&x6);
        let x15 = x12.square_times(3).mul(&x3);
        let x30 = x15.square_times(15).mul(&x15);
        let x32 = x30.square_times(2).mul(&x2);
        Ones { x1, x30, x32 }
    }

    /// `self^((p + 1) / 4)`, a square root of `self` when it has one (p = 3 mod 4).
    /// `(p + 1) / 4 = (2^32 - 1) * 2^222 + 2^190 + 2^94`.
    fn sqrt_candidate(&self) -> Self {
        let Ones { x1, x32, .. } = self.ones();
        x32.square_times(32)
            .mul(&x1)
            .square_times(96)
            .mul(&x1)
            .square_times(94)
    }

    /// A square root of `self` (the one `self^((p+1)/4)` gives), if `self` is a square.
    /// Constant time but for the answer.
    pub(crate) fn sqrt(&self) -> Option<Self> {
        let root = self.sqrt_candidate();
        bool::from(root.square().ct_eq(self)).then_some(root)
    }

    /// `self^-1` (`self^(p-2)`, Fermat); zero for zero. Constant time.
    /// `p - 2`, from the top bit: 32 ones, 31 zeros, a one, 96 zeros, 94 ones, a zero, a one.
    pub(crate) fn invert(&self) -> Self {
        let Ones { x1, x30, x32 } = self.ones();
        x32.square_times(32)
            .mul(&x1)
            .square_times(96)
            .square_times(32)
            .mul(&x32)
            .square_times(32)
            .mul(&x32)
            .square_times(30)
            .mul(&x30)
            .square_times(2)
            .mul(&x1)
    }

    /// Conditional assignment: `other` where `choice`, else `self`.
    pub(crate) fn select(&self, other: &Self, choice: Choice) -> Self {
        Self(limbs::select(&self.0, &other.0, choice))
    }

    /// ORs `other`'s limbs into these where `choice`: a constant-time table lookup starts from
    /// [`Fe::ZERO`] and ORs in every entry under its own choice, exactly one of them true (or
    /// none), leaving that entry (or zero). Cheaper than a selection per entry.
    pub(crate) fn or_if(&mut self, other: &Self, choice: Choice) {
        limbs::or_if(&mut self.0, &other.0, choice);
    }

    /// Wipes the limbs (for values derived from secrets).
    pub(crate) fn wipe(&mut self) {
        self.0.zeroize();
    }
}

/// `x^(2^n - 1)` for the n the fixed exponents need.
struct Ones {
    x1: Fe,
    x30: Fe,
    x32: Fe,
}

/// Whether the big-endian `bytes` are below p. Constant time.
fn below_p(bytes: &[u8; 32]) -> Choice {
    let mut borrow = 0u16;
    for i in (0..32).rev() {
        let difference = u16::from(bytes[i])
            .wrapping_sub(u16::from(P_BYTES[i]))
            .wrapping_sub(borrow);
        borrow = (difference >> 8) & 1;
    }
    Choice::from(borrow.to_le_bytes()[0])
}

impl ConstantTimeEq for Fe {
    fn ct_eq(&self, other: &Self) -> Choice {
        limbs::ct_eq(&self.0, &other.0)
    }
}

impl PartialEq for Fe {
    fn eq(&self, other: &Self) -> bool {
        self.ct_eq(other).into()
    }
}

impl Eq for Fe {}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::FieldElement;
    use sha2::{Digest, Sha256};

    /// Deterministic values spread over the field (SHA-256 of a counter), with the edges.
    fn values() -> Vec<[u8; 32]> {
        let mut p_minus_1 = P_BYTES;
        p_minus_1[31] -= 1;
        let mut out = vec![[0u8; 32], p_minus_1, {
            let mut one = [0u8; 32];
            one[31] = 1;
            one
        }];
        out.extend((0u32..200).map(|i| <[u8; 32]>::from(Sha256::digest(i.to_be_bytes()))));
        out
    }

    /// The same value in RustCrypto's field (itself from fiat-crypto, 64-bit), the reference.
    fn theirs(bytes: &[u8; 32]) -> Option<FieldElement> {
        Option::from(FieldElement::from_bytes(&(*bytes).into()))
    }

    fn same(ours: &Fe, reference: &FieldElement) {
        assert_eq!(ours.to_be_bytes(), <[u8; 32]>::from(reference.to_bytes()));
    }

    #[test]
    fn arithmetic_equals_rustcrypto_p256() {
        let values = values();
        for (i, a) in values.iter().enumerate() {
            let b = &values[(i * 7 + 3) % values.len()];
            let (Some(ra), Some(rb)) = (theirs(a), theirs(b)) else {
                assert!(Fe::from_be_bytes(a).is_none() || Fe::from_be_bytes(b).is_none());
                continue;
            };
            let (fa, fb) = (Fe::from_be_bytes(a).unwrap(), Fe::from_be_bytes(b).unwrap());
            assert_eq!(fa.to_be_bytes(), *a, "round trip");
            same(&fa.add(&fb), &(ra + rb));
            same(&fa.sub(&fb), &(ra - rb));
            same(&fa.neg(), &(-ra));
            same(&fa.double(), &ra.double());
            same(&fa.mul(&fb), &(ra * rb));
            same(&fa.square(), &ra.square());
            let inverse: Option<FieldElement> = ra.invert().into();
            match inverse {
                Some(inv) => same(&fa.invert(), &inv),
                None => assert!(bool::from(fa.invert().is_zero())),
            }
            let root: Option<FieldElement> = ra.sqrt().into();
            match (fa.sqrt(), root) {
                (Some(ours), Some(reference)) => {
                    // Both roots square to a; ours is a^((p+1)/4), as p256's is.
                    same(&ours, &reference);
                    same(&ours.square(), &ra);
                }
                (None, None) => {}
                (ours, reference) => panic!("sqrt disagrees: {ours:?} vs {reference:?}"),
            }
            assert_eq!(bool::from(fa.is_odd()), bool::from(ra.is_odd()));
            assert_eq!(bool::from(fa.is_zero()), bool::from(ra.is_zero()));
            assert_eq!(fa.select(&fb, Choice::from(0)), fa);
            assert_eq!(fa.select(&fb, Choice::from(1)), fb);
        }
    }

    #[test]
    fn encodings_are_canonical_and_reduction_subtracts_p_once() {
        assert!(Fe::from_be_bytes(&P_BYTES).is_none());
        assert!(Fe::from_be_bytes(&[0xff; 32]).is_none());
        assert_eq!(Fe::reduce_be_bytes(&P_BYTES), Fe::ZERO);
        // p + 5, the carry rippling through p's trailing 0xff bytes.
        let mut p_plus_5 = P_BYTES;
        let mut carry = 5u16;
        for byte in p_plus_5.iter_mut().rev() {
            let sum = u16::from(*byte) + carry;
            *byte = sum.to_le_bytes()[0];
            carry = sum >> 8;
        }
        let reduced = Fe::reduce_be_bytes(&p_plus_5);
        let mut five = [0u8; 32];
        five[31] = 5;
        assert_eq!(reduced.to_be_bytes(), five);
        assert_eq!(Fe::one().to_be_bytes()[31], 1);
        assert_eq!(Fe::one().invert(), Fe::one());
        assert!(bool::from(Fe::ZERO.invert().is_zero()));
    }

    proptest::proptest! {
        /// Long chains of operations, so that the 26-bit limbs' loose (non-canonical) forms
        /// feed every operation, against the reference on every step.
        #[test]
        fn operation_chains_equal_rustcrypto_p256(
            seeds in proptest::collection::vec(proptest::array::uniform32(proptest::num::u8::ANY), 4),
            ops in proptest::collection::vec((0u8..8, 0usize..4, 0usize..4), 1..120),
        ) {
            let mut ours: Vec<Fe> = seeds.iter().map(Fe::reduce_be_bytes).collect();
            let mut reference: Vec<FieldElement> =
                ours.iter().map(|x| theirs(&x.to_be_bytes()).unwrap()).collect();
            for (op, i, j) in ops {
                let (a, b, ra, rb) = (ours[i], ours[j], reference[i], reference[j]);
                let (x, rx) = match op {
                    0 => (a.add(&b), ra + rb),
                    1 => (a.sub(&b), ra - rb),
                    2 => (a.neg(), -ra),
                    3 => (a.mul(&b), ra * rb),
                    4 => (a.square(), ra.square()),
                    5 => (a.double().double().double(), ra.double().double().double()),
                    6 if j == 0 => (a.times(8), ra.double().double().double()),
                    6 if j == 1 => (a.times(3), ra.double() + ra),
                    6 if j == 2 => (a.sub2(&b, &ours[(j + 1) % 4]), ra - rb - reference[(j + 1) % 4]),
                    _ => (a.select(&b, Choice::from(u8::from(i & 1 == 1))),
                          if i & 1 == 1 { rb } else { ra }),
                };
                same(&x, &rx);
                proptest::prop_assert_eq!(bool::from(x.is_zero()), bool::from(rx.is_zero()));
                proptest::prop_assert_eq!(bool::from(x.ct_eq(&a)), ra == rx);
                ours[i] = x;
                reference[i] = rx;
            }
        }
    }
}
