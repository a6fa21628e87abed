//! A party's token: the invitation that lets it post its messages and read the other's.

use std::fmt;
use std::str::FromStr;

use rand_core::{OsRng, RngCore};
use subtle::ConstantTimeEq;
use zeroize::Zeroize;

/// A bearer token: 256 bits from the operating system's generator, written as 64 lowercase hex
/// digits. Zeroized on drop and never printed (`Debug` shows only that it is one); the server
/// keeps only its [`TokenHash`].
///
/// Where it travels: from the server's creation response to the operator, from the operator to
/// its party (out of band: the invitation), and from the party in each request's
/// `Authorization` header. It is never logged, stored or put in a URL.
#[derive(Clone)]
pub struct Token([u8; 32]);

impl Drop for Token {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

/// Why a text is not a [`Token`], or no token could be drawn.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// Not 64 lowercase hex digits.
    #[error("a token is 64 lowercase hex digits; this is not one")]
    Malformed,
    /// The operating system's generator failed.
    #[error("the operating system's random generator failed: {0}")]
    Random(String),
}

impl Token {
    /// A new token from the operating system's generator.
    ///
    /// # Errors
    /// [`TokenError::Random`] if the generator fails.
    pub fn generate() -> Result<Self, TokenError> {
        let mut bytes = [0u8; 32];
        OsRng
            .try_fill_bytes(&mut bytes)
            .map_err(|e| TokenError::Random(e.to_string()))?;
        Ok(Self(bytes))
    }

    /// The token as the party sends it: 64 lowercase hex digits. The caller owns the secret
    /// now and must keep it out of logs.
    pub fn reveal(&self) -> String {
        hex::encode(self.0)
    }

    /// What the server stores in place of the token.
    pub fn hash(&self) -> TokenHash {
        use sha2::Digest as _;
        TokenHash(sha2::Sha256::digest(self.0).into())
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(..)")
    }
}

impl FromStr for Token {
    type Err = TokenError;

    /// Reads a token as [`reveal`](Token::reveal) writes it, with surrounding whitespace (a
    /// token file's newline) ignored.
    fn from_str(text: &str) -> Result<Self, TokenError> {
        crate::spelling::lower_hex(text.trim())
            .map(Self)
            .ok_or(TokenError::Malformed)
    }
}

/// The SHA-256 of a [`Token`]: what the server stores, and what a presented token is compared
/// with, in constant time ([`matches`](Self::matches)). A token is 256 random bits, so its hash
/// needs no salt or stretching: nothing smaller than the token itself can be guessed from it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TokenHash(pub [u8; 32]);

impl TokenHash {
    /// Whether `presented` is the token this hash was made from, in time independent of where
    /// they differ.
    pub fn matches(&self, presented: &Token) -> bool {
        self.0.ct_eq(&presented.hash().0).into()
    }
}

impl fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TokenHash({})", hex::encode(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_matches_its_hash_and_no_other() {
        let (one, two) = (Token::generate().unwrap(), Token::generate().unwrap());
        assert_ne!(one.reveal(), two.reveal());
        assert!(one.hash().matches(&one));
        assert!(!one.hash().matches(&two));
        let read: Token = format!("{}\n", one.reveal()).parse().unwrap();
        assert!(one.hash().matches(&read));
    }

    #[test]
    fn a_token_is_never_printed() {
        let token = Token::generate().unwrap();
        let shown = format!("{token:?} {:?}", token.hash());
        assert!(!shown.contains(&token.reveal()), "{shown}");
    }

    #[test]
    fn malformed_tokens_are_refused() {
        let upper = Token::generate().unwrap().reveal().to_uppercase();
        for text in ["", "x", upper.as_str(), &"0".repeat(63), &"0".repeat(66)] {
            assert_eq!(
                text.parse::<Token>().err(),
                Some(TokenError::Malformed),
                "{text:?}"
            );
        }
    }
}
