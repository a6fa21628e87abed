//! Scalars as a multi-scalar multiplication reads them: canonical (not Montgomery) values below
//! r, little-endian 64-bit limbs. Files hold scalars this way (circom's `.wtns` as 32
//! little-endian bytes), so a witness needs no conversion, only the check that each is below r.

use blstrs::Scalar;

/// r, the order of the groups, little-endian limbs.
const R: [u64; 4] = [
    0xffff_ffff_0000_0001,
    0x53bd_a402_fffe_5bfe,
    0x3339_d808_09a1_d805,
    0x73ed_a753_299d_7d48,
];

/// A scalar below r in canonical form.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Canonical([u64; 4]);

/// A witness's scalars are secrets: copies made for an MSM are wiped by their owner
/// (`zeroize::Zeroizing<Vec<Canonical>>`).
impl zeroize::Zeroize for Canonical {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

/// A value at or above r where a scalar was expected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("scalar {index} is not below the group order r")]
pub struct NotCanonical {
    /// Its position in the input, from 0.
    pub index: usize,
}

impl Canonical {
    /// Zero.
    pub const ZERO: Self = Self([0; 4]);

    /// One.
    pub const ONE: Self = Self([1, 0, 0, 0]);

    /// The value of 32 little-endian bytes, if below r.
    #[must_use]
    pub fn from_le_bytes(bytes: &[u8; 32]) -> Option<Self> {
        let limbs: [u64; 4] = std::array::from_fn(|i| {
            let mut limb = [0u8; 8];
            limb.copy_from_slice(&bytes[8 * i..8 * i + 8]);
            u64::from_le_bytes(limb)
        });
        Self::from_limbs(limbs)
    }

    /// The value of little-endian limbs, if below r.
    #[must_use]
    pub fn from_limbs(limbs: [u64; 4]) -> Option<Self> {
        // Below r: the first limb from the top that differs is smaller.
        let below = limbs
            .iter()
            .rev()
            .zip(R.iter().rev())
            .find(|(a, b)| a != b)
            .is_some_and(|(a, b)| a < b);
        below.then_some(Self(limbs))
    }

    /// The canonical value of a field element.
    ///
    /// # Panics
    /// Never: a field element is below r (an invariant checked on the way).
    #[must_use]
    pub fn from_scalar(scalar: &Scalar) -> Self {
        let bytes = scalar.to_bytes_le();
        Self::from_le_bytes(&bytes).expect("invariant: a field element is below r")
    }

    /// The field element of this value.
    ///
    /// # Panics
    /// Never: a canonical value is below r (an invariant checked on the way).
    #[must_use]
    pub fn to_scalar(self) -> Scalar {
        let mut bytes = [0u8; 32];
        for (chunk, limb) in bytes.chunks_exact_mut(8).zip(self.0) {
            chunk.copy_from_slice(&limb.to_le_bytes());
        }
        Option::from(Scalar::from_bytes_le(&bytes))
            .expect("invariant: a canonical value is below r")
    }

    /// Little-endian limbs.
    #[must_use]
    pub fn limbs(&self) -> &[u64; 4] {
        &self.0
    }

    /// Whether this is zero.
    #[must_use]
    pub fn is_zero(&self) -> bool {
        self.0 == [0; 4]
    }
}

/// Reads `bytes` as consecutive 32-byte little-endian scalars.
///
/// # Errors
/// The first scalar at or above r, by position.
///
/// # Panics
/// If `bytes` is not a whole number of scalars (the caller cuts them).
pub fn scalars_from_le_bytes(bytes: &[u8]) -> Result<Vec<Canonical>, NotCanonical> {
    assert!(
        bytes.len().is_multiple_of(32),
        "invariant: whole 32-byte scalars"
    );
    bytes
        .chunks_exact(32)
        .enumerate()
        .map(|(index, chunk)| {
            let chunk: &[u8; 32] = chunk.try_into().expect("invariant: chunks of 32");
            Canonical::from_le_bytes(chunk).ok_or(NotCanonical { index })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    fn le(limbs: [u64; 4]) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (chunk, limb) in out.chunks_exact_mut(8).zip(limbs) {
            chunk.copy_from_slice(&limb.to_le_bytes());
        }
        out
    }

    #[test]
    fn r_and_above_are_refused_and_below_kept() {
        let mut r_minus_one = R;
        r_minus_one[0] -= 1;
        assert_eq!(
            Canonical::from_limbs(r_minus_one),
            Some(Canonical(r_minus_one))
        );
        assert_eq!(Canonical::from_limbs(R), None);
        let mut above = R;
        above[3] += 1;
        assert_eq!(Canonical::from_limbs(above), None);
        assert_eq!(Canonical::from_limbs([u64::MAX; 4]), None);
        assert_eq!(Canonical::from_limbs([0; 4]), Some(Canonical::ZERO));
        let mut bytes = le(r_minus_one).to_vec();
        bytes.extend(le([5, 0, 0, 0]));
        bytes.extend(le(R));
        bytes.extend(le([u64::MAX; 4]));
        assert_eq!(
            scalars_from_le_bytes(&bytes),
            Err(NotCanonical { index: 2 })
        );
        assert_eq!(
            NotCanonical { index: 2 }.to_string(),
            "scalar 2 is not below the group order r"
        );
        assert_eq!(
            Canonical(r_minus_one).to_scalar(),
            -Scalar::ONE,
            "r - 1 is minus one"
        );
    }

    #[test]
    fn field_elements_round_trip() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        for _ in 0..64 {
            let s = Scalar::random(&mut rng);
            assert_eq!(Canonical::from_scalar(&s).to_scalar(), s);
            assert_eq!(
                Canonical::from_le_bytes(&s.to_bytes_le()),
                Some(Canonical::from_scalar(&s))
            );
        }
    }
}
