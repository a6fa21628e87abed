//! The GLV split: a scalar `k < r` becomes two halves of at most 128 bits, `k = k0 + k1 * e`,
//! where `e` is the eigenvalue of an endomorphism that costs one field multiplication, so that
//! `k * P = k0 * P + k1 * endo(P)` and a multi-scalar multiplication runs over twice the points
//! with half the bits.
//!
//! - G1: `phi(x, y) = (beta * x, y)` acts on the subgroup as multiplication by
//!   `lambda = z^2 - 1` (`lambda^2 + lambda + 1 = r`), for the cube root of unity [`BETA`].
//! - G2: `psi^2(x, y) = (beta * x, -y)` (the square of the untwist-Frobenius-twist map) acts as
//!   multiplication by `z^2 = lambda + 1`.
//!
//! Both eigenvalues are just under 2^128 with their top bit set, and `r = e^2 - e + 1` or
//! `e^2 + e + 1`, so the quotient and remainder of `k` by `e` are the halves: no lattice
//! rounding, and both halves are below 2^128. The identities hold on the prime-order subgroups
//! only: points off them give wrong sums (every caller's points are subgroup-checked).

/// `lambda = z^2 - 1` for BLS12-381's `z = -0xd201000000010000`: G1's eigenvalue of
/// [`BETA`]'s endomorphism.
pub(crate) const LAMBDA: u128 = 0xac45_a401_0001_a402_0000_0000_ffff_ffff;

/// `z^2 = lambda + 1`: G2's eigenvalue of `psi^2`.
pub(crate) const Z_SQUARED: u128 = LAMBDA + 1;

/// The cube root of unity in Fp (Montgomery limbs, blst's form) with `phi(P) = lambda * P` on
/// G1: standard value `0x1a0111ea...00000000aaac`.
pub(crate) const BETA: [u64; 6] = [
    0xcd03_c9e4_8671_f071,
    0x5dab_2246_1fcd_a5d2,
    0x5870_42af_d385_1b95,
    0x8eb6_0ebe_01ba_cb9e,
    0x03f9_7d6e_83d0_50d2,
    0x18f0_2065_5463_8741,
];

/// `(k / divisor, k % divisor)` for a canonical scalar `k` (little-endian limbs, below r) and a
/// divisor whose top bit is set: Knuth's long division by a two-limb divisor, one 64-bit
/// quotient digit a step. Variable time in nothing but the (at most two) corrections of each
/// estimated digit; the scalars it splits are public.
///
/// # Panics
/// If the divisor's top bit is clear (an invariant of the two constants above).
#[allow(
    clippy::cast_possible_truncation,
    reason = "limb splits: keeping the low 64 bits is the intent"
)]
pub(crate) fn split(k: &[u64; 4], divisor: u128) -> (u128, u128) {
    assert!(divisor >> 127 == 1, "invariant: a normalised divisor");
    let (d1, d0) = ((divisor >> 64) as u64, divisor as u64);
    let mut quotient: u128 = 0;
    let mut rem: u128 = 0;
    for &limb in k.iter().rev() {
        // The dividend of this step, rem * 2^64 + limb, as (n2, n1, n0), with rem < divisor.
        let (n2, n1, n0) = ((rem >> 64) as u64, rem as u64, limb);
        // Knuth's estimate from the top two limbs over the divisor's top limb: at most two
        // above the true digit, never below it.
        let mut digit: u64 = if n2 >= d1 {
            u64::MAX
        } else {
            let estimate = rem / u128::from(d1);
            u64::try_from(estimate).expect("invariant: n2 < d1 keeps the digit in 64 bits")
        };
        loop {
            let (p2, p1, p0) = mul_192(digit, d1, d0);
            if (p2, p1, p0) <= (n2, n1, n0) {
                // The difference is below the divisor, so its low 128 bits are all of it.
                rem = ((u128::from(n1) << 64) | u128::from(n0))
                    .wrapping_sub((u128::from(p1) << 64) | u128::from(p0));
                break;
            }
            digit -= 1;
        }
        quotient = (quotient << 64) | u128::from(digit);
    }
    (quotient, rem)
}

/// `digit * (d1 * 2^64 + d0)` as three limbs, most significant first.
#[allow(
    clippy::cast_possible_truncation,
    reason = "limb splits: keeping the low 64 bits is the intent"
)]
fn mul_192(digit: u64, d1: u64, d0: u64) -> (u64, u64, u64) {
    let low = u128::from(digit) * u128::from(d0);
    let high = u128::from(digit) * u128::from(d1) + (low >> 64);
    ((high >> 64) as u64, high as u64, low as u64)
}

#[cfg(test)]
#[allow(
    clippy::cast_possible_truncation,
    reason = "limb and digit splits in test references"
)]
mod tests {
    use super::*;
    use num_bigint::BigUint;
    use proptest::prelude::*;

    fn r() -> BigUint {
        BigUint::parse_bytes(
            b"73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001",
            16,
        )
        .unwrap()
    }

    fn limbs(value: &BigUint) -> [u64; 4] {
        let digits = value.to_u64_digits();
        std::array::from_fn(|i| digits.get(i).copied().unwrap_or(0))
    }

    fn check(value: &BigUint, divisor: u128) {
        let (q, rem) = split(&limbs(value), divisor);
        let d = BigUint::from(divisor);
        assert_eq!(BigUint::from(q), value / &d, "quotient of {value:x}");
        assert_eq!(BigUint::from(rem), value % &d, "remainder of {value:x}");
    }

    #[test]
    fn the_eigenvalues_are_the_curve_s() {
        let z = BigUint::from(0xd201_0000_0001_0000u64);
        let lambda = BigUint::from(LAMBDA);
        assert_eq!(&z * &z - 1u32, lambda);
        assert_eq!(&lambda * &lambda + &lambda + 1u32, r());
        assert_eq!(BigUint::from(Z_SQUARED), &z * &z);
    }

    #[test]
    fn edge_scalars_split_exactly() {
        let r = r();
        for divisor in [LAMBDA, Z_SQUARED] {
            let d = BigUint::from(divisor);
            for value in [
                BigUint::from(0u32),
                BigUint::from(1u32),
                &d - 1u32,
                d.clone(),
                &d + 1u32,
                &d * &d - 1u32,
                &d * &d,
                &r - 1u32,
                &r - 2u32,
                BigUint::from(u128::MAX),
                BigUint::from(u64::MAX),
            ] {
                check(&value, divisor);
            }
        }
    }

    proptest! {
        #[test]
        fn random_scalars_split_exactly(a in any::<[u64; 4]>()) {
            let value = BigUint::from_slice(
                &a.iter().flat_map(|l| [*l as u32, (l >> 32) as u32]).collect::<Vec<_>>(),
            ) % r();
            check(&value, LAMBDA);
            check(&value, Z_SQUARED);
        }
    }
}
