//! The portable backend: our P-256 arithmetic (`point`, over `field`: fiat-crypto's verified
//! 64-bit field, or the 26-bit limbs on wasm32; constant time in the key), pure Rust, the wasm
//! build's. A block's tables share one field inversion, and so do its products' affine
//! coordinates.

use zeroize::Zeroizing;

use crate::curve::{Affine, Element};
use crate::field::Fe;
use crate::point::{Jacobian, mul_batch, normalize_batch};
use crate::{Key, PsiError};

/// The key and its inverse as big-endian scalar bytes, wiped on drop.
pub(crate) struct Cipher {
    key: Zeroizing<[u8; 32]>,
    inverse: Zeroizing<[u8; 32]>,
}

impl Cipher {
    pub(crate) fn new(key: &Key) -> Self {
        let scalar = key.scalar();
        let inverse = Option::from(scalar.invert())
            .expect("invariant: a Key is nonzero, so its inverse exists");
        let bytes = |s: &p256::Scalar| Zeroizing::new(<[u8; 32]>::from(s.to_bytes()));
        let mut inverse_scalar: p256::Scalar = inverse;
        let out = Self {
            key: bytes(&scalar),
            inverse: bytes(&inverse_scalar),
        };
        zeroize::Zeroize::zeroize(&mut inverse_scalar);
        out
    }

    /// `scalar * point` for each point (the key, or its inverse), compressed, in order.
    pub(crate) fn multiply_batch(
        &self,
        points: &[Affine],
        inverse: bool,
    ) -> Result<Vec<Element>, PsiError> {
        let scalar = if inverse { &self.inverse } else { &self.key };
        let affine: Vec<(Fe, Fe)> = points.iter().map(Affine::coordinates).collect();
        let products: Vec<Jacobian> = mul_batch(&affine, scalar);
        normalize_batch(&products)
            .into_iter()
            .map(|affine| {
                // A nonzero scalar below the order times a point of the prime-order group is
                // never infinity.
                let (x, y) = affine.ok_or_else(|| PsiError::Backend {
                    backend: "portable",
                    message: "a product is the point at infinity".to_owned(),
                })?;
                let mut bytes = [0u8; 33];
                bytes[0] = 0x02 | y.is_odd().unwrap_u8();
                bytes[1..].copy_from_slice(&x.to_be_bytes());
                Element::from_slice(&bytes).map_err(|reason| PsiError::Backend {
                    backend: "portable",
                    message: format!("a product {reason}"),
                })
            })
            .collect()
    }
}
