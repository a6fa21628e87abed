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
    /// RustCrypto's pure-Rust `p256`: about 3x slower, but builds anywhere, wasm included.
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

/// A party's key prepared for one backend: the commutative cipher of OpenMined PSI.
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
        let point = curve::hash_to_curve(message);
        self.multiply(&point, false).map_err(|e| match e {
            CipherError::Backend(error) => error,
            // A hashed point is always on the curve.
            CipherError::Point(reason) => PsiError::Backend {
                backend: "hash to curve",
                message: format!("hashed point {reason}"),
            },
        })
    }

    /// `ReEncrypt(c) = k * c`, compressed.
    pub(crate) fn reencrypt(&self, element: &Element) -> Result<Element, CipherError> {
        self.multiply(&curve::decompress(element)?, false)
    }

    /// `Decrypt(c) = k^-1 * c`, compressed.
    pub(crate) fn decrypt(&self, element: &Element) -> Result<Element, CipherError> {
        self.multiply(&curve::decompress(element)?, true)
    }

    fn multiply(&self, point: &Affine, inverse: bool) -> Result<Element, CipherError> {
        match self {
            #[cfg(feature = "native")]
            Self::Native(cipher) => cipher.multiply(point, inverse),
            Self::Portable(cipher) => cipher.multiply(point, inverse),
        }
    }
}
