//! A party's secret key.
//!
//! # Where key material travels
//! A [`Key`] holds 32 big-endian bytes in a zeroize-on-drop buffer. Backends derive their own
//! forms from it when a [`Starter`](crate::Starter) or [`Joiner`](crate::Joiner) is built (a
//! p256 `Scalar` and its inverse; OpenSSL `BIGNUM`s flagged constant-time and cleared with
//! `BN_clear` on drop), and those live as long as the party. [`Key::to_bytes`] returns a
//! zeroizing copy for the caller to store; nothing else copies the key, and it is never printed
//! (`Debug` shows `Key(<secret>)`). Zeroization is best effort, as everywhere in Rust: the
//! compiler may leave copies of values in registers or on the stack.

use p256::elliptic_curve::subtle::ConstantTimeEq;
use p256::elliptic_curve::{Field, PrimeField};
use p256::{FieldBytes, Scalar};
use rand_core::{OsRng, RngCore};
use zeroize::{Zeroize, Zeroizing};

use crate::PsiError;

/// A P-256 secret scalar `k` with `1 < k < n - 1`.
///
/// # Invariant
/// The bytes are the canonical 32-byte big-endian form of a scalar in `[2, n - 2]`: the keys 1
/// and `n - 1` are refused as weak (masking with them publishes `H(m)` or `-H(m)`, which anyone
/// can recompute from a guess of `m`).
#[derive(Clone)]
pub struct Key {
    // Boxed so that moving a `Key` does not leave copies of the bytes on the stack.
    bytes: Box<Zeroizing<[u8; 32]>>,
}

impl Key {
    /// The length of an exported key ([`to_bytes`](Self::to_bytes)) and of a key file: 32
    /// big-endian bytes, left-padded with zeros.
    pub const LEN: usize = 32;

    /// A fresh key from the operating system's random number generator, uniform in `[2, n - 2]`
    /// (rejection sampling: a draw outside is redrawn).
    ///
    /// # Errors
    /// [`PsiError::Randomness`] if the operating system cannot provide random bytes.
    pub fn generate() -> Result<Self, PsiError> {
        loop {
            let mut bytes = Zeroizing::new([0u8; 32]);
            OsRng
                .try_fill_bytes(bytes.as_mut())
                .map_err(|e| PsiError::Randomness(e.to_string()))?;
            if let Ok(key) = Self::from_bytes(bytes.as_ref()) {
                return Ok(key);
            }
        }
    }

    /// The key whose big-endian encoding is `bytes` (any length; leading zero bytes are
    /// ignored), as OpenMined PSI's `CreateFromKey` reads it.
    ///
    /// # Errors
    /// [`PsiError::KeyTooLong`] if more than 32 bytes remain after leading zeros;
    /// [`PsiError::KeyOutOfRange`] if the value is 0 or not below the group order;
    /// [`PsiError::WeakKey`] for 1 and `n - 1`.
    ///
    /// # Constant time
    /// The range and weak-key checks run in constant time in the value; the position of the
    /// first nonzero byte (the key's byte length) is not secret.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, PsiError> {
        let start = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
        let significant = &bytes[start..];
        if significant.len() > 32 {
            return Err(PsiError::KeyTooLong(significant.len()));
        }
        let mut padded = Box::new(Zeroizing::new([0u8; 32]));
        padded[32 - significant.len()..].copy_from_slice(significant);
        let mut scalar = Self::scalar_of(&padded).ok_or(PsiError::KeyOutOfRange)?;
        let zero = bool::from(scalar.is_zero());
        let one = bool::from(scalar.ct_eq(&Scalar::ONE));
        let minus_one = bool::from(scalar.ct_eq(&-Scalar::ONE));
        scalar.zeroize();
        match (zero, one, minus_one) {
            (true, _, _) => Err(PsiError::KeyOutOfRange),
            (_, true, _) => Err(PsiError::WeakKey("1")),
            (_, _, true) => Err(PsiError::WeakKey("n - 1")),
            _ => Ok(Self { bytes: padded }),
        }
    }

    /// The key as 32 big-endian bytes (left-padded with zeros), in a buffer zeroized on drop.
    /// This is the form `lockstep psi key new` writes and OpenMined's `GetPrivateKeyBytes`
    /// returns.
    pub fn to_bytes(&self) -> Zeroizing<[u8; 32]> {
        Zeroizing::new(**self.bytes)
    }

    /// The key as a p256 scalar (nonzero by the invariant). The caller zeroizes its copy.
    pub(crate) fn scalar(&self) -> Scalar {
        Self::scalar_of(&self.bytes).expect("invariant: a Key's bytes are a scalar in [1, n)")
    }

    /// The scalar of 32 big-endian bytes, if below n; the intermediate copy is zeroized.
    fn scalar_of(bytes: &[u8; 32]) -> Option<Scalar> {
        let mut repr = FieldBytes::default();
        repr.copy_from_slice(bytes);
        let scalar = Option::<Scalar>::from(Scalar::from_repr(repr));
        repr[..].zeroize();
        scalar
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(<secret>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: &str = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551";

    fn n_plus(delta: i8) -> Vec<u8> {
        let mut n = hex::decode(N).unwrap();
        let last = n.len() - 1;
        n[last] = n[last].wrapping_add_signed(delta);
        n
    }

    #[test]
    fn range_is_two_to_n_minus_two() {
        assert!(matches!(Key::from_bytes(&[]), Err(PsiError::KeyOutOfRange)));
        assert!(matches!(
            Key::from_bytes(&[0; 40]),
            Err(PsiError::KeyOutOfRange)
        ));
        assert!(matches!(
            Key::from_bytes(&n_plus(0)),
            Err(PsiError::KeyOutOfRange)
        ));
        assert!(matches!(
            Key::from_bytes(&n_plus(1)),
            Err(PsiError::KeyOutOfRange)
        ));
        assert!(matches!(
            Key::from_bytes(&n_plus(-1)),
            Err(PsiError::WeakKey("n - 1"))
        ));
        assert_eq!(
            *Key::from_bytes(&n_plus(-2)).unwrap().to_bytes(),
            n_plus(-2)[..]
        );
        assert!(matches!(
            Key::from_bytes(&[0, 0, 1]),
            Err(PsiError::WeakKey("1"))
        ));
        let two = Key::from_bytes(&[2]).unwrap();
        assert_eq!(two.to_bytes()[31], 2);
        assert!(matches!(
            Key::from_bytes(&[1; 33]),
            Err(PsiError::KeyTooLong(33))
        ));
    }

    #[test]
    fn leading_zeros_do_not_matter() {
        let short = Key::from_bytes(&[7; 31]).unwrap();
        let mut long = vec![0; 9];
        long.extend([7; 31]);
        assert_eq!(
            *short.to_bytes(),
            *Key::from_bytes(&long).unwrap().to_bytes()
        );
        assert_eq!(short.to_bytes()[0], 0);
    }

    #[test]
    fn generated_keys_differ_and_never_print() {
        let (a, b) = (Key::generate().unwrap(), Key::generate().unwrap());
        assert_ne!(*a.to_bytes(), *b.to_bytes());
        assert_eq!(format!("{a:?}"), "Key(<secret>)");
    }
}
