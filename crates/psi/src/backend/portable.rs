//! The portable backend: RustCrypto `p256` (constant-time, pure Rust, builds for wasm).

use p256::elliptic_curve::sec1::{FromEncodedPoint, ToEncodedPoint};
use p256::{AffinePoint, EncodedPoint, ProjectivePoint, Scalar};
use zeroize::Zeroize;

use crate::curve::{Affine, Element};
use crate::{Key, PointError, PsiError};

/// The key and its inverse as p256 scalars, zeroized on drop.
pub(crate) struct Cipher {
    key: Scalar,
    inverse: Scalar,
}

impl Cipher {
    pub(crate) fn new(key: &Key) -> Self {
        let key = key.scalar();
        let inverse =
            Option::from(key.invert()).expect("invariant: a Key is nonzero, so its inverse exists");
        Self { key, inverse }
    }

    /// `scalar * point` for each point (the key, or its inverse), compressed, in order.
    pub(crate) fn multiply_batch(
        &self,
        points: &[Affine],
        inverse: bool,
    ) -> Result<Vec<Element>, PsiError> {
        let scalar = if inverse { &self.inverse } else { &self.key };
        points
            .iter()
            .map(|point| {
                let encoded = EncodedPoint::from_affine_coordinates(
                    &(*point.x()).into(),
                    &(*point.y()).into(),
                    false,
                );
                // p256 checks the curve equation again; `Affine` is on the curve already.
                let affine: AffinePoint = Option::from(AffinePoint::from_encoded_point(&encoded))
                    .ok_or_else(|| failure(&PointError::NotOnCurve))?;
                let product = (ProjectivePoint::from(affine) * scalar).to_affine();
                Element::from_slice(product.to_encoded_point(true).as_bytes())
                    .map_err(|reason| failure(&reason))
            })
            .collect()
    }
}

fn failure(reason: &PointError) -> PsiError {
    PsiError::Backend {
        backend: "portable",
        message: format!("a point {reason}"),
    }
}

impl Drop for Cipher {
    fn drop(&mut self) {
        self.key.zeroize();
        self.inverse.zeroize();
    }
}
