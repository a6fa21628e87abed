//! The native backend: OpenSSL's P-256 through the `openssl` crate (no `unsafe` here).
//!
//! Only the scalar multiplication and the compression run in OpenSSL: points arrive as affine
//! coordinates (hashed or decompressed above the seam, avoiding OpenSSL's slow generic square
//! root), and OpenSSL checks again that they are on the curve. The key and its inverse are
//! `BIGNUM`s flagged constant-time and cleared on drop.

use openssl::bn::{BigNum, BigNumContext};
use openssl::ec::{EcGroup, EcPoint, PointConversionForm};
use openssl::error::ErrorStack;
use openssl::nid::Nid;
use zeroize::Zeroize;

use super::CipherError;
use crate::curve::{Affine, Element};
use crate::{Key, PointError, PsiError};

/// A secret `BIGNUM`: constant-time flagged, cleared (`BN_clear`) before it is freed.
struct SecretBigNum(BigNum);

impl SecretBigNum {
    fn from_be(bytes: &[u8]) -> Result<Self, ErrorStack> {
        let mut number = BigNum::from_slice(bytes)?;
        number.set_const_time();
        Ok(Self(number))
    }
}

impl Drop for SecretBigNum {
    fn drop(&mut self) {
        self.0.clear();
    }
}

pub(crate) struct Cipher {
    group: EcGroup,
    key: SecretBigNum,
    inverse: SecretBigNum,
}

/// The uncompressed SEC1 encoding `0x04 || x || y`.
fn uncompressed(point: &Affine) -> [u8; 65] {
    let mut out = [0u8; 65];
    out[0] = 0x04;
    out[1..33].copy_from_slice(&point.x);
    out[33..].copy_from_slice(&point.y);
    out
}

fn backend_error(error: &ErrorStack) -> PsiError {
    PsiError::Backend {
        backend: "native",
        message: error.to_string(),
    }
}

impl Cipher {
    pub(crate) fn new(key: &Key) -> Result<Self, PsiError> {
        let group =
            EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).map_err(|e| backend_error(&e))?;
        let mut scalar = key.scalar();
        // The inverse is computed in constant time by p256; nonzero key by `Key`'s invariant.
        let mut inverse: p256::Scalar = Option::from(scalar.invert()).unwrap_or(p256::Scalar::ONE);
        let mut inverse_bytes = inverse.to_bytes();
        let made = SecretBigNum::from_be(key.to_bytes().as_ref()).and_then(|key| {
            Ok(Self {
                group,
                key,
                inverse: SecretBigNum::from_be(inverse_bytes.as_ref())?,
            })
        });
        scalar.zeroize();
        inverse.zeroize();
        inverse_bytes[..].zeroize();
        made.map_err(|e| backend_error(&e))
    }

    /// `scalar * point` (the key, or its inverse), compressed.
    pub(crate) fn multiply(&self, point: &Affine, inverse: bool) -> Result<Element, CipherError> {
        let fail = |e: ErrorStack| CipherError::Backend(backend_error(&e));
        let mut ctx = BigNumContext::new().map_err(fail)?;
        // OpenSSL refuses coordinates off the curve here; the callers have checked already.
        let input = EcPoint::from_bytes(&self.group, &uncompressed(point), &mut ctx)
            .map_err(|_| CipherError::Point(PointError::NotOnCurve))?;
        let scalar = if inverse {
            &self.inverse.0
        } else {
            &self.key.0
        };
        let mut product = EcPoint::new(&self.group).map_err(fail)?;
        product
            .mul2(&self.group, &input, scalar, &mut ctx)
            .map_err(fail)?;
        let bytes = product
            .to_bytes(&self.group, PointConversionForm::COMPRESSED, &mut ctx)
            .map_err(fail)?;
        Element::from_slice(&bytes).map_err(|reason| {
            CipherError::Backend(PsiError::Backend {
                backend: "native",
                message: format!("a product {reason}"),
            })
        })
    }
}
