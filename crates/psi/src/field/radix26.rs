//! The P-256 base field in ten signed 26-bit limbs, for targets without a 64x64->128 multiply
//! (wasm32).
//!
//! Why not fiat-crypto's `p256_32`: it is a saturated 32-bit Montgomery multiplication, 96 limb
//! products and 207 add-with-carry steps per multiplication, each carry a widen-add-shift in wasm.
//! It is what BoringSSL (and so `@openmined/psi.js`) runs, and it measured level with psi.js
//! (1.03x, `js/bench/psi.js`). Here every limb product is one `i64.mul` summed without carries:
//! 100 products (55 for a square) and a Montgomery reduction that, because p's limbs are sparse
//! and p = -1 mod 2^26, needs no multiplication at all. The differential tests in `field.rs`
//! check it against RustCrypto's `p256` (fiat-crypto's 64-bit field) on random and extreme
//! inputs.
//!
//! # Representation
//! `x = sum(l[i] * 2^(26 i))`, i = 0..10, held in Montgomery form `x = a * R mod p` with
//! R = 2^260, and not unique: the value is only congruent to `a * R` mod p.
//!
//! # Invariant
//! Every limb of every [`Limbs`] an operation returns satisfies `|l[i]| < 2^27` (so
//! `|x| < 2^261`). Inputs meeting it keep every intermediate below 2^63: a product column sums
//! at most ten products below 2^54, and the reduction adds at most four terms below 2^48 and a
//! carry to each column. [`weak_reduce`] restores the invariant after additions. All functions
//! are constant time: no branch or index depends on a value.

use p256::elliptic_curve::subtle::{Choice, ConditionallySelectable, ConstantTimeEq};

/// The number of limbs.
const N: usize = 10;

/// Bits per limb.
const BITS: u32 = 26;

/// The low [`BITS`] bits.
const MASK: i64 = (1 << BITS) - 1;

/// Field limbs, least significant first (see the module's invariant).
pub(super) type Limbs = [i64; N];

/// p = 2^256 - 2^224 + 2^192 + 2^96 - 1, in limbs.
const P: Limbs = [
    0x3ff_ffff, 0x3ff_ffff, 0x3ff_ffff, 0x3_ffff, 0, 0, 0, 0x400, 0x3ff_0000, 0x3f_ffff,
];

/// R^2 mod p (R = 2^260): multiplying by it enters Montgomery form.
const R2: Limbs = [
    0x300, 0, 0x3f0_0000, 0x3ff_ffff, 0x3ff_fffb, 0x3ff_ffbf, 0x3ff_ffff, 0x3f7_ffff, 0xff_ffff,
    0x1,
];

/// One in Montgomery form (R mod p).
pub(super) const ONE: Limbs = [
    0x10, 0, 0, 0x3c0_0000, 0x3ff_ffff, 0x3ff_ffff, 0x3ff_ffff, 0x3ff_bfff, 0xf_ffff, 0,
];

/// Zero (in any form).
pub(super) const ZERO: Limbs = [0; N];

/// The Montgomery form of the canonical value `plain` (below p, big-endian).
pub(super) fn from_be_bytes(plain: &[u8; 32]) -> Limbs {
    let mut limbs = ZERO;
    let (mut buffer, mut filled, mut next) = (0u64, 0u32, 0usize);
    for &byte in plain.iter().rev() {
        buffer |= u64::from(byte) << filled;
        filled += 8;
        if filled >= BITS {
            limbs[next] = (buffer & MASK as u64) as i64;
            buffer >>= BITS;
            filled -= BITS;
            next += 1;
        }
    }
    // The last 22 bits.
    limbs[next] = buffer as i64;
    mul(&limbs, &R2)
}

/// The big-endian encoding of the canonical value of `a` (out of Montgomery form, below p).
pub(super) fn to_be_bytes(a: &Limbs) -> [u8; 32] {
    let canonical = canonical(a);
    let mut bytes = [0u8; 32];
    let (mut buffer, mut filled, mut limbs) = (0u64, 0u32, canonical.iter());
    for byte in bytes.iter_mut().rev() {
        if filled < 8 {
            let limb = limbs
                .next()
                .expect("invariant: 10 limbs hold 260 >= 256 bits");
            buffer |= (*limb as u64) << filled;
            filled += BITS;
        }
        *byte = buffer.to_le_bytes()[0];
        buffer >>= 8;
        filled -= 8;
    }
    bytes
}

/// Whether the value is zero mod p.
pub(super) fn is_zero(a: &Limbs) -> Choice {
    canonical(a).ct_eq(&ZERO)
}

/// Whether `a` and `b` are the same element.
pub(super) fn ct_eq(a: &Limbs, b: &Limbs) -> Choice {
    is_zero(&sub(a, b))
}

/// `a + b`.
pub(super) fn add(a: &Limbs, b: &Limbs) -> Limbs {
    weak_reduce(std::array::from_fn(|i| a[i] + b[i]))
}

/// `a - b`.
pub(super) fn sub(a: &Limbs, b: &Limbs) -> Limbs {
    weak_reduce(std::array::from_fn(|i| a[i] - b[i]))
}

/// `a - b - c`, reduced once.
pub(super) fn sub2(a: &Limbs, b: &Limbs, c: &Limbs) -> Limbs {
    weak_reduce(std::array::from_fn(|i| a[i] - b[i] - c[i]))
}

/// `k * a` for a small `k` (at most 8: the limbs stay below 2^30 before the reduction).
pub(super) fn times(a: &Limbs, k: u8) -> Limbs {
    debug_assert!(k <= 8);
    let k = i64::from(k);
    weak_reduce(std::array::from_fn(|i| k * a[i]))
}

/// `-a`.
pub(super) fn neg(a: &Limbs) -> Limbs {
    weak_reduce(std::array::from_fn(|i| -a[i]))
}

/// `a * b` (Montgomery: `a * b / R`).
pub(super) fn mul(a: &Limbs, b: &Limbs) -> Limbs {
    let mut c = [0i64; 2 * N];
    for i in 0..N {
        for j in 0..N {
            c[i + j] += a[i] * b[j];
        }
    }
    montgomery_reduce(c)
}

/// `a^2`: the cross products once, doubled (55 products).
pub(super) fn square(a: &Limbs) -> Limbs {
    let doubled: Limbs = std::array::from_fn(|i| 2 * a[i]);
    let mut c = [0i64; 2 * N];
    for i in 0..N {
        c[2 * i] += a[i] * a[i];
        for j in i + 1..N {
            c[i + j] += doubled[i] * a[j];
        }
    }
    montgomery_reduce(c)
}

/// `b` where `choice`, else `a`.
pub(super) fn select(a: &Limbs, b: &Limbs, choice: Choice) -> Limbs {
    std::array::from_fn(|i| i64::conditional_select(&a[i], &b[i], choice))
}

/// `acc | b` where `choice`, else `acc` (a table scan's accumulation into zero limbs).
pub(super) fn or_if(acc: &mut Limbs, b: &Limbs, choice: Choice) {
    let mask = -i64::from(choice.unwrap_u8());
    for (a, b) in acc.iter_mut().zip(b) {
        *a |= b & mask;
    }
}

/// `c / R mod p` for product columns below 2^59 in magnitude, within the invariant.
///
/// Word-by-word Montgomery reduction in radix 2^26: since p = -1 mod 2^26, the multiple of p
/// that clears column i is `m = c[i] mod 2^26`, and adding `m * p` is five shifted additions
/// (p's non-zero terms): -m at column i (clearing its low bits, so the rest carries up),
/// m * 2^96, m * 2^192, -m * 2^224 and m * 2^256.
#[inline(always)]
fn montgomery_reduce(mut c: [i64; 2 * N]) -> Limbs {
    for i in 0..N {
        let m = c[i] & MASK;
        c[i + 1] += c[i] >> BITS;
        c[i + 3] += m << 18; // 2^96 = 2^(3*26 + 18)
        c[i + 7] += m << 10; // 2^192 = 2^(7*26 + 10)
        c[i + 8] -= m << 16; // 2^224 = 2^(8*26 + 16)
        c[i + 9] += m << 22; // 2^256 = 2^(9*26 + 22)
    }
    weak_reduce(std::array::from_fn(|i| c[N + i]))
}

/// Carries every limb into the next and folds the bits above 2^256 back with
/// 2^256 = 2^224 - 2^192 - 2^96 + 1 (mod p). For limbs below 2^60 in magnitude and a value
/// below 2^263 (a sum of two elements, or a reduced product of two), the result meets the
/// invariant: limbs 0..8 are in [0, 2^26) and limb 9 in [0, 2^22) before the fold, and the
/// folded multiple `h` of 2^256 is below 2^7 in magnitude, so the fold's terms (`h` times 1,
/// 2^18, 2^10 and 2^16 at limbs 0, 3, 7 and 8) stay below 2^25.
#[inline(always)]
fn weak_reduce(mut l: Limbs) -> Limbs {
    for i in 0..N - 1 {
        l[i + 1] += l[i] >> BITS;
        l[i] &= MASK;
    }
    let high = l[N - 1] >> 22;
    l[N - 1] &= (1 << 22) - 1;
    l[0] += high;
    l[3] -= high << 18; // 2^96
    l[7] -= high << 10; // 2^192
    l[8] += high << 16; // 2^224
    l
}

/// The value of `a / R` (out of Montgomery form) as the unique limbs of an integer in [0, p).
///
/// Montgomery reduction of `a` alone (no product): `(a + m p) / R` with `|a| < 2^261` and
/// `0 <= m < R` lies in (-2, p + 2), so one conditional addition and one conditional
/// subtraction of p make it canonical.
fn canonical(a: &Limbs) -> Limbs {
    let mut c = [0i64; 2 * N];
    c[..N].copy_from_slice(a);
    for i in 0..N {
        let m = c[i] & MASK;
        c[i + 1] += c[i] >> BITS;
        c[i + 3] += m << 18;
        c[i + 7] += m << 10;
        c[i + 8] -= m << 16;
        c[i + 9] += m << 22;
    }
    let mut u: Limbs = std::array::from_fn(|i| c[N + i]);
    carry(&mut u);
    // u in (-2, p + 2): add p if negative (the top limb's sign after carrying).
    let negative = Choice::from((u[N - 1] >> 63) as u8 & 1);
    let mut plus_p: Limbs = std::array::from_fn(|i| u[i] + P[i]);
    carry(&mut plus_p);
    u = select(&u, &plus_p, negative);
    // u in [0, p + 2): subtract p unless that goes negative.
    let mut minus_p: Limbs = std::array::from_fn(|i| u[i] - P[i]);
    carry(&mut minus_p);
    let below_p = Choice::from((minus_p[N - 1] >> 63) as u8 & 1);
    select(&minus_p, &u, below_p)
}

/// Carries limbs 0..9 into [0, 2^26), leaving the sign in the top limb.
fn carry(l: &mut Limbs) {
    for i in 0..N - 1 {
        l[i + 1] += l[i] >> BITS;
        l[i] &= MASK;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The limbs of the big-endian integer `bytes`, as they are (no Montgomery form).
    fn plain(bytes: &[u8; 32]) -> Limbs {
        let mut limbs = ZERO;
        for position in 0..256u32 {
            let bit = (bytes[31 - (position / 8) as usize] >> (position % 8)) & 1;
            limbs[(position / BITS) as usize] |= i64::from(bit) << (position % BITS);
        }
        limbs
    }

    #[test]
    fn constants_are_their_values() {
        // p's limbs encode p: canonical(P * R) would need a product; compare bit patterns.
        let p = [
            0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff,
        ];
        assert_eq!(plain(&p), P);
        // ONE's canonical value is 1; R2 taken out of Montgomery form twice is 1 as well.
        let mut one = [0u8; 32];
        one[31] = 1;
        assert_eq!(to_be_bytes(&ONE), one);
        assert_eq!(to_be_bytes(&canonical(&R2)), one);
    }

    #[test]
    fn extreme_limbs_stay_within_the_invariant() {
        // Every limb at the invariant's edge, of both signs: products and sums keep it.
        let edge = (1i64 << 27) - 1;
        for a in [
            [edge; N],
            [-edge; N],
            std::array::from_fn(|i| if i % 2 == 0 { edge } else { -edge }),
        ] {
            for out in [
                mul(&a, &a),
                square(&a),
                add(&a, &a),
                sub(&a, &neg(&a)),
                canonical(&a),
            ] {
                assert!(out.iter().all(|l| l.abs() < 1 << 27), "{out:x?}");
            }
            assert_eq!(to_be_bytes(&mul(&a, &a)), to_be_bytes(&square(&a)));
            // And the values are right: the canonical square of a / R, by RustCrypto's p256.
            let value = p256::FieldElement::from_bytes(&to_be_bytes(&a).into()).unwrap();
            assert_eq!(
                to_be_bytes(&square(&a)),
                <[u8; 32]>::from(value.square().to_bytes())
            );
        }
    }
}
