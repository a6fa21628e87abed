//! The native backend: OpenSSL's P-256 through the `openssl` crate.
//!
//! Only the scalar multiplication runs in OpenSSL (its constant-time x86-64 assembly). Points
//! arrive as affine coordinates, hashed or decompressed above the seam (OpenSSL's generic square
//! root is slow) and on the curve by construction; products leave as Jacobian coordinates, and
//! a block of them shares one field inversion (Montgomery's trick, RustCrypto's field) before
//! compression. The key and its inverse are `BIGNUM`s flagged constant-time and cleared on drop.
//! Only a product's affine form is public: its Jacobian coordinates depend on the key too, so
//! they are inverted in constant time, never output, and cleared after use.

mod libcrypto;

use openssl::bn::{BigNum, BigNumContext, BigNumRef};
use openssl::ec::{EcGroup, EcPoint};
use openssl::error::ErrorStack;
use openssl::nid::Nid;
use p256::{FieldBytes, FieldElement};
use zeroize::{Zeroize, Zeroizing};

use crate::curve::{self, Affine, Element};
use crate::{Key, PsiError};

/// A secret `BIGNUM`: constant-time flagged, cleared (`BN_clear`) before it is freed.
struct SecretBigNum(BigNum);

impl SecretBigNum {
    fn new() -> Result<Self, ErrorStack> {
        Ok(Self(BigNum::new()?))
    }

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
        // The inverse is computed in constant time by p256.
        let mut inverse: p256::Scalar = Option::from(scalar.invert())
            .expect("invariant: a Key is nonzero, so its inverse exists");
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

    /// `scalar * point` for each point (the key, or its inverse), compressed, in order.
    pub(crate) fn multiply_batch(
        &self,
        points: &[Affine],
        inverse: bool,
    ) -> Result<Vec<Element>, PsiError> {
        curve::compress_jacobian(&self.products(points, inverse)?)
    }

    /// The products in Jacobian coordinates `(X, Y, Z)`, as field elements.
    fn products(
        &self,
        points: &[Affine],
        inverse: bool,
    ) -> Result<Zeroizing<Vec<[FieldElement; 3]>>, PsiError> {
        let fail = |e: ErrorStack| backend_error(&e);
        let scalar = if inverse {
            &self.inverse.0
        } else {
            &self.key.0
        };
        let mut ctx = BigNumContext::new().map_err(fail)?;
        let one = BigNum::from_u32(1).map_err(fail)?;
        let new = || SecretBigNum::new().map_err(fail);
        let (mut x, mut y, mut z) = (new()?, new()?, new()?);
        let mut input = EcPoint::new(&self.group).map_err(fail)?;
        let mut product = EcPoint::new(&self.group).map_err(fail)?;
        let mut out = Zeroizing::new(Vec::with_capacity(points.len()));
        for point in points {
            // `Affine` is on the curve by construction; confirming it costs a few field
            // multiplications and keeps an invalid-curve point from ever meeting the key here.
            if !point.is_on_curve() {
                return Err(PsiError::Backend {
                    backend: "native",
                    message: "a point off the curve reached the multiplication".to_owned(),
                });
            }
            libcrypto::set_affine(&self.group, &mut input, point, &one, &mut ctx).map_err(fail)?;
            product
                .mul2(&self.group, &input, scalar, &mut ctx)
                .map_err(fail)?;
            libcrypto::coordinates(
                &self.group,
                &product,
                &mut x.0,
                &mut y.0,
                &mut z.0,
                &mut ctx,
            )
            .map_err(fail)?;
            out.push([field(&x.0)?, field(&y.0)?, field(&z.0)?]);
        }
        Ok(out)
    }
}

/// A coordinate OpenSSL returned (reduced mod p) as a field element.
fn field(number: &BigNumRef) -> Result<FieldElement, PsiError> {
    let mut bytes = FieldBytes::default();
    let mut padded = Zeroizing::new(number.to_vec_padded(32).map_err(|e| backend_error(&e))?);
    bytes.copy_from_slice(&padded);
    padded.zeroize();
    Option::from(FieldElement::from_bytes(&bytes)).ok_or_else(|| PsiError::Backend {
        backend: "native",
        message: "a coordinate is not reduced mod p".to_owned(),
    })
}
