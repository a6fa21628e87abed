//! Base-field arithmetic on blst's own elements (`blst_fp`, `blst_fp2`: Montgomery form, always
//! fully reduced below p, so equal elements have equal limbs), for batch-affine additions:
//! multiplication, squaring and inversion by blst ([`crate::ffi`]), addition, subtraction and
//! negation here, inlined (through blst each costs a call and a quarter of a multiplication).
//! Ours are checked against blst's on random and edge values below.

use blst::{blst_fp, blst_fp2};

use crate::ffi;

/// p (also written q), the base field's modulus, little-endian 64-bit limbs.
pub const P: [u64; 6] = [
    0xb9fe_ffff_ffff_aaab,
    0x1eab_fffe_b153_ffff,
    0x6730_d2a0_f6b0_f624,
    0x6477_4b84_f385_12bf,
    0x4b1b_a7b6_434b_acd7,
    0x1a01_11ea_397f_e69a,
];

/// One in blst's Montgomery form (`2^384 mod p`), little-endian limbs.
pub const MONTGOMERY_ONE: [u64; 6] = [
    0x7609_0000_0002_fffd,
    0xebf4_000b_c40c_0002,
    0x5f48_9857_53c7_58ba,
    0x77ce_5853_7052_5745,
    0x5c07_1a97_a256_ec6d,
    0x15f6_5ec3_fa80_e493,
];

/// The operations batch-affine additions need, on fully reduced elements. Variable time where
/// blst's inversion is: for public values and witness-driven sums only.
pub trait Coordinate: Copy + Default + PartialEq + Send + Sync + 'static {
    /// `self + other`.
    #[must_use]
    fn add(&self, other: &Self) -> Self;
    /// `self - other`.
    #[must_use]
    fn sub(&self, other: &Self) -> Self;
    /// `self * other`.
    #[must_use]
    fn mul(&self, other: &Self) -> Self;
    /// `self^2`.
    #[must_use]
    fn square(&self) -> Self;
    /// `-self`.
    #[must_use]
    fn neg(&self) -> Self;
    /// `1 / self`, zero for zero (variable time).
    #[must_use]
    fn inverse(&self) -> Self;
    /// Whether this equals `other`. blst's two fields implement it limb by limb, inlined (the
    /// derived `==` on limb arrays is a call into libc's `memcmp`, 4% of a whole prove's time in
    /// the MSM's bucket scheduling); the default is `==`.
    fn equals(&self, other: &Self) -> bool {
        self == other
    }
    /// Whether this is zero.
    fn is_zero(&self) -> bool {
        self.equals(&Self::default())
    }
}

/// `a == b` over six limbs, without a call.
#[inline(always)]
fn limbs_equal(a: &[u64; 6], b: &[u64; 6]) -> bool {
    a.iter().zip(b).fold(0, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `a - b` over six limbs, and the borrow out.
#[inline(always)]
fn sub_limbs(a: &[u64; 6], b: &[u64; 6]) -> ([u64; 6], bool) {
    let mut out = [0u64; 6];
    let mut borrow = false;
    for i in 0..6 {
        let (d, b1) = a[i].overflowing_sub(b[i]);
        let (d, b2) = d.overflowing_sub(u64::from(borrow));
        out[i] = d;
        borrow = b1 | b2;
    }
    (out, borrow)
}

/// `a + b` over six limbs (no carry out: both are below p < 2^381).
#[inline(always)]
fn add_limbs(a: &[u64; 6], b: &[u64; 6]) -> [u64; 6] {
    let mut out = [0u64; 6];
    let mut carry = false;
    for i in 0..6 {
        let (s, c1) = a[i].overflowing_add(b[i]);
        let (s, c2) = s.overflowing_add(u64::from(carry));
        out[i] = s;
        carry = c1 | c2;
    }
    out
}

#[inline(always)]
fn fp_add(a: &blst_fp, b: &blst_fp) -> blst_fp {
    let sum = add_limbs(&a.l, &b.l);
    let (reduced, borrow) = sub_limbs(&sum, &P);
    blst_fp {
        l: if borrow { sum } else { reduced },
    }
}

#[inline(always)]
fn fp_sub(a: &blst_fp, b: &blst_fp) -> blst_fp {
    let (diff, borrow) = sub_limbs(&a.l, &b.l);
    blst_fp {
        l: if borrow { add_limbs(&diff, &P) } else { diff },
    }
}

#[inline(always)]
fn fp_neg(a: &blst_fp) -> blst_fp {
    if limbs_equal(&a.l, &[0; 6]) {
        *a
    } else {
        blst_fp {
            l: sub_limbs(&P, &a.l).0,
        }
    }
}

impl Coordinate for blst_fp {
    #[inline]
    fn add(&self, other: &Self) -> Self {
        fp_add(self, other)
    }
    #[inline]
    fn sub(&self, other: &Self) -> Self {
        fp_sub(self, other)
    }
    #[inline]
    fn mul(&self, other: &Self) -> Self {
        ffi::fp_mul(self, other)
    }
    #[inline]
    fn square(&self) -> Self {
        ffi::fp_sqr(self)
    }
    #[inline]
    fn neg(&self) -> Self {
        fp_neg(self)
    }
    fn inverse(&self) -> Self {
        ffi::fp_inverse(self)
    }
    #[inline]
    fn equals(&self, other: &Self) -> bool {
        limbs_equal(&self.l, &other.l)
    }
}

impl Coordinate for blst_fp2 {
    #[inline]
    fn add(&self, other: &Self) -> Self {
        blst_fp2 {
            fp: [
                fp_add(&self.fp[0], &other.fp[0]),
                fp_add(&self.fp[1], &other.fp[1]),
            ],
        }
    }
    #[inline]
    fn sub(&self, other: &Self) -> Self {
        blst_fp2 {
            fp: [
                fp_sub(&self.fp[0], &other.fp[0]),
                fp_sub(&self.fp[1], &other.fp[1]),
            ],
        }
    }
    #[inline]
    fn mul(&self, other: &Self) -> Self {
        ffi::fp2_mul(self, other)
    }
    #[inline]
    fn square(&self) -> Self {
        ffi::fp2_sqr(self)
    }
    #[inline]
    fn neg(&self) -> Self {
        blst_fp2 {
            fp: [fp_neg(&self.fp[0]), fp_neg(&self.fp[1])],
        }
    }
    fn inverse(&self) -> Self {
        ffi::fp2_inverse(self)
    }
    #[inline]
    fn equals(&self, other: &Self) -> bool {
        limbs_equal(&self.fp[0].l, &other.fp[0].l) & limbs_equal(&self.fp[1].l, &other.fp[1].l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// blst's own addition, subtraction and negation, the reference.
    fn blst_ops(a: &blst_fp, b: &blst_fp) -> (blst_fp, blst_fp, blst_fp) {
        let mut sum = blst_fp::default();
        let mut diff = blst_fp::default();
        let mut neg = blst_fp::default();
        ffi::fp_reference_ops(a, b, &mut sum, &mut diff, &mut neg);
        (sum, diff, neg)
    }

    fn reduced(limbs: [u64; 6]) -> blst_fp {
        // Any six limbs, brought below p by blst's multiplication by one (Montgomery R).
        let one = blst_fp { l: MONTGOMERY_ONE };
        let mut top = limbs;
        top[5] &= 0x0fff_ffff_ffff_ffff;
        ffi::fp_mul(&blst_fp { l: top }, &one)
    }

    fn check(a: blst_fp, b: blst_fp) {
        let (sum, diff, neg) = blst_ops(&a, &b);
        assert_eq!(a.add(&b), sum, "{a:?} + {b:?}");
        assert_eq!(a.sub(&b), diff, "{a:?} - {b:?}");
        assert_eq!(a.neg(), neg, "-{a:?}");
        let a2 = blst_fp2 { fp: [a, b] };
        let b2 = blst_fp2 { fp: [b, a] };
        assert_eq!(a2.sub(&b2).fp, [diff, blst_ops(&b, &a).1]);
        assert_eq!(a2.add(&b2).fp, [sum, sum]);
        assert_eq!(a.equals(&b), a == b, "{a:?} equals {b:?}");
        assert!(a.equals(&a) && a2.equals(&a2));
        assert_eq!(a2.equals(&b2), a == b);
        assert_eq!(a.is_zero(), a == blst_fp::default());
    }

    #[test]
    fn edge_values_agree_with_blst() {
        let mut p_minus_one = P;
        p_minus_one[0] -= 1;
        let edges = [
            blst_fp::default(),
            blst_fp {
                l: [1, 0, 0, 0, 0, 0],
            },
            blst_fp { l: p_minus_one },
            blst_fp {
                l: [0, 0, 0, 0, 0, 1],
            },
            blst_fp {
                l: [
                    u64::MAX,
                    u64::MAX,
                    u64::MAX,
                    u64::MAX,
                    u64::MAX,
                    0x1a01_11ea_397f_e699,
                ],
            },
        ];
        for a in edges {
            for b in edges {
                check(a, b);
            }
        }
    }

    proptest! {
        #[test]
        fn random_values_agree_with_blst(a in any::<[u64; 6]>(), b in any::<[u64; 6]>()) {
            check(reduced(a), reduced(b));
        }
    }
}
