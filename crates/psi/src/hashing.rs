//! Hashing elements to integers below a bound, as OpenMined's GCS and Bloom filter do:
//! a SHA-256 digest read as a 256-bit big-endian integer, reduced modulo the bound.

use sha2::{Digest, Sha256};

/// `BE(SHA-256(prefix || data)) mod bound`, for `bound >= 1`.
pub(crate) fn digest_mod(prefix: &[u8], data: &[u8], bound: u64) -> u64 {
    let digest = Sha256::new()
        .chain_update(prefix)
        .chain_update(data)
        .finalize();
    let bound = u128::from(bound.max(1));
    // Horner's rule over 64-bit limbs keeps the remainder below 2^64, so `r << 64` fits u128.
    let remainder = digest.chunks_exact(8).fold(0u128, |r, limb| {
        let mut word = [0u8; 8];
        word.copy_from_slice(limb);
        ((r << 64) | u128::from(u64::from_be_bytes(word))) % bound
    });
    u64::try_from(remainder).expect("invariant: a remainder is below its u64 bound")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_big_integer_reduction() {
        // SHA-256("abc") = ba7816bf...f20015ad; reductions computed with Python big integers.
        assert_eq!(digest_mod(b"", b"abc", 1_000_003), 127_342);
        assert_eq!(
            digest_mod(b"", b"abc", (1 << 63) - 25),
            3_682_567_201_320_725_020
        );
        assert_eq!(digest_mod(b"a", b"bc", 7), digest_mod(b"", b"abc", 7));
        assert_eq!(digest_mod(b"", b"abc", 1), 0);
    }
}
