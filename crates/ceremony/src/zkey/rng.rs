//! snarkjs's randomness, drawn exactly as ffjavascript draws it, so that a beacon (and a
//! transcript's hash to G2) gives snarkjs's bytes.
//!
//! - ChaCha20 (`chacha.js`), seeded with eight big-endian u32 words of a hash: the RFC 8439
//!   keystream (nonce and counter 0) under the key made of those words little-endian, read as
//!   little-endian u32s ([`rand_chacha`]'s `ChaCha20Rng` is that keystream). `nextU64` takes
//!   the high word first.
//! - `Fr.fromRng`: four `nextU64` as the limbs of `v` (lowest first), masked to 255 bits,
//!   redrawn while `v >= r`, and taken as a Montgomery representation: `k = v 2^-256`.
//!   `Fq.fromRng` the same with six limbs, 381 bits, `q`, `2^-384`.
//! - `G.fromRng` (`wasm_curve.js`): draw `x`, then a bit, until `x^3 + b` is a square; the
//!   root whose sign is the bit; times the group's full cofactor.
//!
//! # Secrets
//! A contribution's generator ([`Draws::contribution`]) yields the secret key first: the
//! generator's state is a secret while it lives (ChaCha's state cannot be wiped through
//! `rand_chacha`; it is dropped as soon as the key and the base point are drawn), and the seed
//! bytes are wiped.

use blake2::{Blake2b512, Digest};
use blstrs::{G1Affine, G2Affine, Scalar};
use group::Curve;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use zeroize::Zeroizing;

use crate::codec::CodecError;
use crate::curve;
use crate::phase1::beacon_challenge_with;

/// G1's full cofactor, little-endian (ffjavascript's `h1`).
const G1_COFACTOR: [u8; 16] = [
    0xab, 0xaa, 0x00, 0x00, 0xab, 0xaa, 0x00, 0x8c, 0x56, 0xe1, 0x55, 0x55, 0x00, 0x8c, 0x6c, 0x39,
];

/// G2's full cofactor, little-endian (ffjavascript's `h2`; not blst's effective cofactor).
const G2_COFACTOR: [u8; 64] = [
    0xe5, 0x38, 0x72, 0x1c, 0xe3, 0x38, 0x1c, 0xcf, 0x70, 0x0c, 0x6f, 0x78, 0x6e, 0xec, 0x16, 0x16,
    0xae, 0x91, 0x66, 0x3a, 0x29, 0x7e, 0x53, 0x21, 0xef, 0x82, 0x9e, 0x4d, 0xcb, 0xf1, 0x28, 0xa6,
    0xdf, 0x7d, 0x5a, 0x2e, 0x5b, 0x20, 0x8a, 0xa6, 0xba, 0x5a, 0x08, 0x47, 0x45, 0xde, 0x91, 0xcd,
    0x02, 0xa2, 0x76, 0x28, 0x79, 0x50, 0x1d, 0x09, 0xf1, 0xe7, 0x14, 0x54, 0xa9, 0x43, 0xd5, 0x05,
];

/// r, little-endian limbs.
const R: [u64; 4] = [
    0xffff_ffff_0000_0001,
    0x53bd_a402_fffe_5bfe,
    0x3339_d808_09a1_d805,
    0x73ed_a753_299d_7d48,
];

/// q, little-endian limbs.
const Q: [u64; 6] = lockstep_bls12::P;

/// Whether little-endian limbs `a` are below `m`.
fn below(a: &[u64], m: &[u64]) -> bool {
    for (x, y) in a.iter().rev().zip(m.iter().rev()) {
        if x != y {
            return x < y;
        }
    }
    false
}

/// ffjavascript's ChaCha generator and the draws snarkjs makes from it.
pub(crate) struct Draws(ChaCha20Rng);

impl Draws {
    /// The generator seeded with the first 32 bytes of `hash` as eight big-endian words.
    pub(crate) fn from_hash(hash: &[u8]) -> Self {
        let mut key = Zeroizing::new([0u8; 32]);
        for (out, word) in key.chunks_exact_mut(4).zip(hash[..32].chunks_exact(4)) {
            out.copy_from_slice(word);
            out.reverse();
        }
        Self(ChaCha20Rng::from_seed(*key))
    }

    /// A contribution's generator (`getRandomRng`): blake2b-512 of 64 bytes from the operating
    /// system and the contributor's entropy.
    pub(crate) fn contribution(entropy: &[u8]) -> Self {
        let mut os = Zeroizing::new([0u8; 64]);
        rand_core::OsRng.fill_bytes(&mut os[..]);
        let mut hash = Zeroizing::new([0u8; 64]);
        hash.copy_from_slice(
            &Blake2b512::new()
                .chain_update(&os[..])
                .chain_update(entropy)
                .finalize(),
        );
        Self::from_hash(&hash[..])
    }

    /// A beacon's generator (`rngFromBeaconParams`): SHA-256 applied `2^exp` times to `hash`.
    ///
    /// # Errors
    /// [`CodecError::TooManyIterations`] above 2^32 iterations (exponents 33 to 63, which
    /// snarkjs takes, would run for hours to centuries); cancellation.
    pub(crate) fn beacon(
        control: &lockstep_shard::Control,
        hash: &[u8],
        exp: u8,
    ) -> Result<Self, CodecError> {
        let iterations = 1u64.checked_shl(u32::from(exp)).unwrap_or(u64::MAX);
        let value = beacon_challenge_with(control, hash, iterations)?;
        Ok(Self::from_hash(&value))
    }

    fn next_u32(&mut self) -> u32 {
        self.0.next_u32()
    }

    fn next_u64(&mut self) -> u64 {
        let high = u64::from(self.next_u32());
        (high << 32) | u64::from(self.next_u32())
    }

    /// `Fr.fromRng`.
    pub(crate) fn scalar(&mut self) -> Scalar {
        loop {
            let mut v = [0u64; 4];
            for limb in &mut v {
                *limb = self.next_u64();
            }
            v[3] &= (1 << 63) - 1;
            if below(&v, &R) {
                // blst holds scalars in Montgomery form (R = 2^256): limbs v are v 2^-256.
                return Scalar::from(blst::blst_fr { l: v });
            }
        }
    }

    /// `Fq.fromRng`, as Montgomery limbs (blst's representation).
    fn fq(&mut self) -> [u64; 6] {
        loop {
            let mut v = [0u64; 6];
            for limb in &mut v {
                *limb = self.next_u64();
            }
            v[5] &= (1 << 61) - 1;
            if below(&v, &Q) {
                return v;
            }
        }
    }

    /// `G1.fromRng`.
    pub(crate) fn g1(&mut self) -> G1Affine {
        loop {
            let x = self.fq();
            let greatest = self.next_u32() & 1 == 1;
            if let Some(p) = curve::g1_from_draw(x, greatest, &G1_COFACTOR) {
                return p.to_affine();
            }
        }
    }

    /// `G2.fromRng`.
    pub(crate) fn g2(&mut self) -> G2Affine {
        loop {
            let x = [self.fq(), self.fq()];
            let greatest = self.next_u32() & 1 == 1;
            if let Some(p) = curve::g2_from_draw(x, greatest, &G2_COFACTOR) {
                return p.to_affine();
            }
        }
    }
}

/// snarkjs's `hashToG2`: `G2.fromRng` seeded with a transcript's first 32 bytes.
pub(crate) fn hash_to_g2(transcript: &[u8; 64]) -> G2Affine {
    Draws::from_hash(transcript).g2()
}

#[cfg(test)]
mod tests {
    use group::prime::PrimeCurveAffine;

    use super::*;

    #[test]
    fn cofactors_and_moduli_are_the_curve_s() {
        // h1 * r is the G1 curve's order, q + 1 - t with t = x + 1, x = -0xd201000000010000.
        let big = |b: &[u8]| num_bigint::BigUint::from_bytes_le(b);
        let r = big(&R.iter().flat_map(|l| l.to_le_bytes()).collect::<Vec<_>>());
        let q = big(&Q.iter().flat_map(|l| l.to_le_bytes()).collect::<Vec<_>>());
        let x = num_bigint::BigUint::from(0xd201_0000_0001_0000u64);
        // t = x + 1 with x negative: q + 1 - t = q + x.
        assert_eq!(big(&G1_COFACTOR) * &r, &q + &x);
        // Draws land in the subgroups.
        let mut d = Draws::from_hash(&[7u8; 64]);
        for _ in 0..3 {
            let p = d.g1();
            assert!(bool::from(p.is_on_curve()) && bool::from(p.is_torsion_free()));
            let p = d.g2();
            assert!(bool::from(p.is_on_curve()) && bool::from(p.is_torsion_free()));
            assert!(!bool::from(p.is_identity()));
        }
    }
}
