//! The P-256 base field on fiat-crypto's generated and formally verified 64-bit Montgomery
//! arithmetic, for targets with a 64x64->128 multiply.
//!
//! # Invariant
//! [`Limbs`] are fiat's unique saturated representation of a value below p, in Montgomery form
//! (fiat's functions require it of their inputs and ensure it of their outputs), so equality is
//! equality of limbs.

use fiat_crypto::p256_64 as fiat;
use p256::elliptic_curve::subtle::{Choice, ConstantTimeEq};

use fiat::{
    fiat_p256_montgomery_domain_field_element as Mont,
    fiat_p256_non_montgomery_domain_field_element as Plain,
};

/// Field limbs: four u64, least significant first.
pub(super) type Limbs = [u64; 4];

/// Zero.
pub(super) const ZERO: Limbs = [0; 4];

/// One in Montgomery form (2^256 mod p).
pub(super) const ONE: Limbs = [
    0x1,
    0xffff_ffff_0000_0000,
    0xffff_ffff_ffff_ffff,
    0xffff_fffe,
];

/// The Montgomery form of the canonical value `plain` (below p, big-endian).
pub(super) fn from_be_bytes(plain: &[u8; 32]) -> Limbs {
    let mut little = *plain;
    little.reverse();
    let mut limbs = ZERO;
    fiat::fiat_p256_from_bytes(&mut limbs, &little);
    let mut out = Mont(ZERO);
    fiat::fiat_p256_to_montgomery(&mut out, &Plain(limbs));
    zeroize::Zeroize::zeroize(&mut little);
    out.0
}

/// The big-endian encoding of the canonical value.
pub(super) fn to_be_bytes(a: &Limbs) -> [u8; 32] {
    let mut plain = Plain(ZERO);
    fiat::fiat_p256_from_montgomery(&mut plain, &Mont(*a));
    let mut bytes = [0u8; 32];
    fiat::fiat_p256_to_bytes(&mut bytes, &plain.0);
    bytes.reverse();
    bytes
}

/// Whether the value is zero (zero's Montgomery form is all-zero limbs).
pub(super) fn is_zero(a: &Limbs) -> Choice {
    a.ct_eq(&ZERO)
}

/// Whether `a` and `b` are the same element (the representation is unique).
pub(super) fn ct_eq(a: &Limbs, b: &Limbs) -> Choice {
    a.ct_eq(b)
}

/// `a + b`.
pub(super) fn add(a: &Limbs, b: &Limbs) -> Limbs {
    let mut out = Mont(ZERO);
    fiat::fiat_p256_add(&mut out, &Mont(*a), &Mont(*b));
    out.0
}

/// `a - b`.
pub(super) fn sub(a: &Limbs, b: &Limbs) -> Limbs {
    let mut out = Mont(ZERO);
    fiat::fiat_p256_sub(&mut out, &Mont(*a), &Mont(*b));
    out.0
}

/// `a - b - c`.
pub(super) fn sub2(a: &Limbs, b: &Limbs, c: &Limbs) -> Limbs {
    sub(&sub(a, b), c)
}

/// `k * a` for a small `k` (by additions).
pub(super) fn times(a: &Limbs, k: u8) -> Limbs {
    (1..k).fold(*a, |sum, _| add(&sum, a))
}

/// `-a`.
pub(super) fn neg(a: &Limbs) -> Limbs {
    let mut out = Mont(ZERO);
    fiat::fiat_p256_opp(&mut out, &Mont(*a));
    out.0
}

/// `a * b`.
pub(super) fn mul(a: &Limbs, b: &Limbs) -> Limbs {
    let mut out = Mont(ZERO);
    fiat::fiat_p256_mul(&mut out, &Mont(*a), &Mont(*b));
    out.0
}

/// `a^2`.
pub(super) fn square(a: &Limbs) -> Limbs {
    let mut out = Mont(ZERO);
    fiat::fiat_p256_square(&mut out, &Mont(*a));
    out.0
}

/// `acc | b` where `choice`, else `acc` (a table scan's accumulation into zero limbs).
pub(super) fn or_if(acc: &mut Limbs, b: &Limbs, choice: Choice) {
    let mask = 0u64.wrapping_sub(u64::from(choice.unwrap_u8()));
    for (a, b) in acc.iter_mut().zip(b) {
        *a |= b & mask;
    }
}

/// `b` where `choice`, else `a`.
pub(super) fn select(a: &Limbs, b: &Limbs, choice: Choice) -> Limbs {
    let mut out = ZERO;
    fiat::fiat_p256_selectznz(&mut out, choice.unwrap_u8(), a, b);
    out
}
