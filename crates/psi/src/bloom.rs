//! Bloom filters, as OpenMined PSI builds and queries them.
//!
//! `k = ceil(-log2(fpr))` hash functions over `8 * ceil(-n * log2(fpr) / ln 2 / 8)` bits; the
//! i-th index of an element is `(h1 + i * h2) mod bits` with `h1 = BE(SHA-256("1" || e)) mod bits`
//! and `h2 = BE(SHA-256("2" || e)) mod bits` (ASCII digits). Bit `i` is bit `i % 8` of byte `i / 8`.

use crate::PsiError;
use crate::hashing::digest_mod;

/// The most hash functions accepted in a received filter (`-log2` of the smallest positive
/// double is 1,074).
pub(crate) const MAX_HASH_FUNCTIONS: u32 = 1100;

/// The largest filter built or accepted: 2^40 bytes (a terabyte), far beyond any real set.
pub(crate) const MAX_BYTES: u64 = 1 << 40;

/// `(hash functions, bytes)` for `max_elements` elements at the corrected rate `fpr`.
pub(crate) fn parameters(max_elements: u64, fpr: f64) -> Result<(u32, u64), PsiError> {
    let too_large = || PsiError::SetupTooLarge {
        format: "bloom",
        elements: max_elements,
        fpr,
    };
    let k = (-fpr.log2()).ceil();
    #[allow(
        clippy::cast_precision_loss,
        reason = "as OpenMined computes it, in doubles"
    )]
    let bytes = (-(max_elements as f64) * fpr.log2() / 2f64.ln() / 8.0).ceil();
    if !(1.0..=f64::from(MAX_HASH_FUNCTIONS)).contains(&k)
        || !(1.0..=MAX_BYTES as f64).contains(&bytes)
    {
        return Err(too_large());
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "ranges checked"
    )]
    Ok((k as u32, bytes as u64))
}

/// The bit indexes of `element` in a filter of `num_bits` bits.
fn indexes(element: &[u8], k: u32, num_bits: u64) -> impl Iterator<Item = u64> {
    let h1 = u128::from(digest_mod(b"1", element, num_bits));
    let h2 = u128::from(digest_mod(b"2", element, num_bits));
    let bits = u128::from(num_bits);
    (0..u128::from(k)).map(move |i| {
        u64::try_from((h1 + i * h2) % bits).expect("invariant: an index is below num_bits, a u64")
    })
}

fn byte_and_mask(index: u64) -> (usize, u8) {
    (
        usize::try_from(index / 8)
            .expect("invariant: an index is below 8 * bits.len(), so its byte fits usize"),
        1 << (index % 8),
    )
}

/// Sets `element`'s bits.
pub(crate) fn insert(bits: &mut [u8], k: u32, element: &[u8]) {
    let num_bits = bits.len() as u64 * 8;
    for index in indexes(element, k, num_bits) {
        let (byte, mask) = byte_and_mask(index);
        bits[byte] |= mask;
    }
}

/// Whether all of `element`'s bits are set (`bits` is non-empty).
pub(crate) fn contains(bits: &[u8], k: u32, element: &[u8]) -> bool {
    let num_bits = bits.len() as u64 * 8;
    indexes(element, k, num_bits).all(|index| {
        let (byte, mask) = byte_and_mask(index);
        bits.get(byte).is_some_and(|b| b & mask != 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openmined_test_vector() {
        // bloom_filter_test.cpp: fpr 0.01, "Element 0".."Element 99": k = 7, 120 bytes.
        let (k, bytes) = parameters(100, 0.01).unwrap();
        assert_eq!((k, bytes), (7, 120));
        let mut bits = vec![0u8; 120];
        for i in 0..100 {
            insert(&mut bits, k, format!("Element {i}").as_bytes());
        }
        assert!((0..100).all(|i| contains(&bits, k, format!("Element {i}").as_bytes())));
        // Expected filter from OpenMined's bloom_filter_test.cpp (TestToProtobuf), in base64.
        let expected = concat!(
            "VN3/BXfUjEDvJLcxCTepUCTXGQwlTax0xHiMohCNb45uShFsznK099RH0CFVIMn91Bdc7jLkXHXr",
            "Xp1NimmZSDrYSj5sd/500nroNOdXbtd53u8cejPMGxbx7kR1E1zyO19mSkYLXq4xf7au5dFN0qhxqfLnjaCE"
        );
        assert_eq!(base64(&bits), expected);
        assert!(2f64.ln() == std::f64::consts::LN_2);
    }

    #[test]
    fn impossible_parameters_are_errors() {
        assert_eq!(parameters(1, 1e-320).unwrap().0, 1064); // ceil(1063.1)
        assert!(parameters(1, 0.0).is_err());
        assert!(parameters(u64::MAX, 1e-300).is_err());
        assert!(parameters(0, 0.5).is_err());
    }

    fn base64(bytes: &[u8]) -> String {
        const ALPHABET: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
            for i in 0..4 {
                if i <= chunk.len() {
                    out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }
}
