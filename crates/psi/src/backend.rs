//! The seam between the protocol and P-256 scalar multiplication.
//!
//! Everything above this module (hashing to the curve, encodings, the protocol) is written once;
//! a backend only multiplies a point given in affine coordinates by the party's key or its
//! inverse and compresses the result. Both backends must give identical bytes, which the
//! known-answer tests check on every vector.

#[cfg(feature = "native")]
mod native;
mod portable;

use std::str::FromStr;

use crate::curve::{self, Affine, Element};
use crate::{Key, PointError, PsiError};

/// Which P-256 implementation multiplies points. Output bytes are identical; only speed differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// OpenSSL's P-256 (libcrypto 3, x86-64 assembly), through the `openssl` crate. Built with the
    /// `native` feature (the default).
    Native,
    /// Our pure-Rust P-256 (Jacobian formulas and a signed window over fiat-crypto's verified
    /// 64-bit field, or 26-bit limbs on wasm32): builds anywhere, wasm included.
    Portable,
}

impl Backend {
    /// The fastest backend in this build: [`Backend::Native`] when compiled in.
    pub fn fastest() -> Self {
        if cfg!(feature = "native") {
            Self::Native
        } else {
            Self::Portable
        }
    }

    /// The backends compiled into this build.
    pub fn available() -> &'static [Backend] {
        if cfg!(feature = "native") {
            &[Self::Native, Self::Portable]
        } else {
            &[Self::Portable]
        }
    }

    /// The backend's name: `native` or `portable`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Portable => "portable",
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown backend name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown backend {0:?}: expected native or portable")]
pub struct UnknownBackend(String);

impl FromStr for Backend {
    type Err = UnknownBackend;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "native" => Ok(Self::Native),
            "portable" => Ok(Self::Portable),
            other => Err(UnknownBackend(other.to_owned())),
        }
    }
}

/// Why a multiplication failed: a bad point from a message, or the backend itself.
#[derive(Debug)]
pub(crate) enum CipherError {
    Point(PointError),
    Backend(PsiError),
}

impl From<PointError> for CipherError {
    fn from(error: PointError) -> Self {
        Self::Point(error)
    }
}

impl From<PsiError> for CipherError {
    fn from(error: PsiError) -> Self {
        Self::Backend(error)
    }
}

/// Points multiplied together: one field inversion is shared by a block (Montgomery's trick),
/// so blocks of 64 make the inversion's cost per point negligible next to the multiplication.
pub(crate) const BLOCK: usize = 64;

/// A party's key prepared for one backend: the commutative cipher of OpenMined PSI.
///
/// The batch operations give every item the bytes the one-item operations give it: blocks are
/// only a way to share work, so output never depends on how items were grouped.
pub(crate) enum Cipher {
    #[cfg(feature = "native")]
    Native(native::Cipher),
    Portable(portable::Cipher),
}

impl Cipher {
    /// Prepares `key` (and its inverse) for `backend`.
    pub(crate) fn new(key: &Key, backend: Backend) -> Result<Self, PsiError> {
        match backend {
            #[cfg(feature = "native")]
            Backend::Native => Ok(Self::Native(native::Cipher::new(key)?)),
            #[cfg(not(feature = "native"))]
            Backend::Native => Err(PsiError::Backend {
                backend: "native",
                message: "not compiled into this build (the `native` feature is off)".to_owned(),
            }),
            Backend::Portable => Ok(Self::Portable(portable::Cipher::new(key))),
        }
    }

    /// `Encrypt(m) = k * H(m)`, compressed.
    pub(crate) fn encrypt(&self, message: &[u8]) -> Result<Element, PsiError> {
        one(self.encrypt_batch(&[message]))
    }

    /// [`encrypt`](Self::encrypt) for each message, in order.
    pub(crate) fn encrypt_batch<T: AsRef<[u8]>>(
        &self,
        messages: &[T],
    ) -> Vec<Result<Element, PsiError>> {
        let points: Vec<Affine> = messages
            .iter()
            .map(|m| curve::hash_to_curve(m.as_ref()))
            .collect();
        match self.multiply_batch(&points, false) {
            Ok(elements) => elements.into_iter().map(Ok).collect(),
            Err(error) => messages
                .iter()
                .map(|_| Err(for_each_item(&error)))
                .collect(),
        }
    }

    /// `ReEncrypt(c) = k * c`, compressed.
    pub(crate) fn reencrypt(&self, element: &Element) -> Result<Element, CipherError> {
        one(self.reencrypt_batch(std::slice::from_ref(element)))
    }

    /// [`reencrypt`](Self::reencrypt) for each element, in order.
    pub(crate) fn reencrypt_batch(
        &self,
        elements: &[Element],
    ) -> Vec<Result<Element, CipherError>> {
        self.decode_and_multiply(elements, false)
    }

    /// `Decrypt(c) = k^-1 * c`, compressed.
    pub(crate) fn decrypt(&self, element: &Element) -> Result<Element, CipherError> {
        one(self.decrypt_batch(std::slice::from_ref(element)))
    }

    /// [`decrypt`](Self::decrypt) for each element, in order.
    pub(crate) fn decrypt_batch(&self, elements: &[Element]) -> Vec<Result<Element, CipherError>> {
        self.decode_and_multiply(elements, true)
    }

    /// Decodes each element and multiplies the points that decode; an element that does not
    /// decode gets its own error and does not hold up the rest of the batch.
    fn decode_and_multiply(
        &self,
        elements: &[Element],
        inverse: bool,
    ) -> Vec<Result<Element, CipherError>> {
        let decoded: Vec<Result<Affine, PointError>> =
            elements.iter().map(curve::decompress).collect();
        let points: Vec<Affine> = decoded
            .iter()
            .filter_map(|d| d.as_ref().ok().copied())
            .collect();
        let products = self.multiply_batch(&points, inverse).and_then(|products| {
            if products.len() == points.len() {
                Ok(products)
            } else {
                Err(PsiError::Backend {
                    backend: "batch",
                    message: format!("{} products for {} points", products.len(), points.len()),
                })
            }
        });
        let mut products = match products {
            Ok(products) => products.into_iter(),
            Err(error) => {
                return decoded
                    .into_iter()
                    .map(|d| match d {
                        Ok(_) => Err(CipherError::Backend(for_each_item(&error))),
                        Err(reason) => Err(CipherError::Point(reason)),
                    })
                    .collect();
            }
        };
        decoded
            .into_iter()
            .map(|d| match d {
                Ok(_) => products.next().ok_or_else(|| {
                    CipherError::Backend(PsiError::Backend {
                        backend: "batch",
                        message: "a product went missing".to_owned(),
                    })
                }),
                Err(reason) => Err(CipherError::Point(reason)),
            })
            .collect()
    }

    /// `scalar * point` for each point (the key, or its inverse), compressed, in order.
    fn multiply_batch(&self, points: &[Affine], inverse: bool) -> Result<Vec<Element>, PsiError> {
        match self {
            #[cfg(feature = "native")]
            Self::Native(cipher) => cipher.multiply_batch(points, inverse),
            Self::Portable(cipher) => cipher.multiply_batch(points, inverse),
        }
    }
}

/// A block-wide backend failure, repeated for each item of the block (so the run reports it at
/// the block's first item). Input cannot cause one: only the backend failing (an allocation
/// refused, say) does.
fn for_each_item(error: &PsiError) -> PsiError {
    match error {
        PsiError::Backend { backend, message } => PsiError::Backend {
            backend,
            message: message.clone(),
        },
        other => PsiError::Backend {
            backend: "batch",
            message: other.to_string(),
        },
    }
}

/// The single result of a batch of one.
fn one<T, E>(results: Vec<Result<T, E>>) -> Result<T, E>
where
    E: From<PsiError>,
{
    results.into_iter().next().unwrap_or_else(|| {
        Err(E::from(PsiError::Backend {
            backend: "batch",
            message: "no result for one item".to_owned(),
        }))
    })
}
