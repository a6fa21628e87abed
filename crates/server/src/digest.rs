//! A message body's name in the store: its SHA-256.

use std::fmt;
use std::str::FromStr;

/// The SHA-256 of a message body: its address in a [`Store`](crate::Store) and what makes a
/// retried upload of the same bytes recognisable. Written as 64 lowercase hex digits, and read
/// only from exactly that, so an id taken from a request path can never name anything else
/// (`..`, `%2e%2e`, an upper-case or shorter form).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(pub [u8; 32]);

/// Why a text is not a [`Digest`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a digest is 64 lowercase hex digits (SHA-256); this is not one")]
pub struct DigestError;

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        use sha2::Digest as _;
        Self(sha2::Sha256::digest(bytes).into())
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

impl FromStr for Digest {
    type Err = DigestError;

    fn from_str(text: &str) -> Result<Self, DigestError> {
        crate::spelling::lower_hex(text)
            .map(Self)
            .ok_or(DigestError)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_reads_back_from_its_one_spelling() {
        let digest = Digest::of(b"abc");
        let text = digest.to_string();
        assert_eq!(
            text,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(text.parse::<Digest>(), Ok(digest));
    }

    #[test]
    fn path_like_and_other_spellings_are_refused() {
        let upper = Digest::of(b"abc").to_string().to_uppercase();
        for text in [
            "",
            "..",
            "../etc/passwd",
            "%2e%2e",
            upper.as_str(),
            &"a".repeat(63),
            &"a".repeat(65),
            &format!("{}/", "a".repeat(63)),
        ] {
            assert_eq!(text.parse::<Digest>(), Err(DigestError), "{text:?}");
        }
    }
}
