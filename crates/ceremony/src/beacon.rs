//! The public beacon a seal applies, as a person gives it: hex text and a number of SHA-256
//! iterations, checked once here for every front end (the CLI's `--beacon` and
//! `--iterations`, a binding's `beacon=` and `iterations=`).

use crate::phase1::MAX_BEACON_ITERATIONS;

/// Why a beacon is refused. Each message starts with the argument's name (`beacon`,
/// `iterations`), so a front end prefixes its own spelling of the flag (`--`) or none.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BeaconError {
    /// No hex digits.
    #[error(
        "beacon is empty: a beacon is a public value no contributor could know in advance (a block hash, a drand round), in hex"
    )]
    Empty,
    /// A character that is not a hex digit (`at`: 1-based, after any `0x`).
    #[error(
        "beacon: {found:?} (character {at}) is not a hex digit: give the beacon as hex, 0-9 and a-f"
    )]
    NotHex {
        /// The character.
        found: char,
        /// Its position, from 1.
        at: usize,
    },
    /// An odd number of hex digits.
    #[error("beacon: {0} hex digits, an odd number (each byte is two)")]
    Odd(usize),
    /// More iterations than [`MAX_BEACON_ITERATIONS`].
    #[error(
        "iterations {0}: at most {MAX_BEACON_ITERATIONS} (2^32, about seven minutes of SHA-256)"
    )]
    Iterations(u64),
}

impl BeaconError {
    /// The stable code every front end reports: `CEREMONY_USAGE`.
    pub fn code(&self) -> &'static str {
        "CEREMONY_USAGE"
    }
}

/// The bytes of a beacon given as hex: surrounding blanks and a `0x` prefix allowed, never
/// empty (a beacon is a public value no contributor could know in advance).
///
/// # Errors
/// [`BeaconError::Empty`], [`BeaconError::NotHex`] (the first bad character),
/// [`BeaconError::Odd`].
///
/// # Panics
/// Never: the digits are checked before they are read.
pub fn parse_hex(text: &str) -> Result<Vec<u8>, BeaconError> {
    let trimmed = text.trim();
    let digits = trimmed
        .strip_prefix("0x")
        .or_else(|| trimmed.strip_prefix("0X"))
        .unwrap_or(trimmed);
    if digits.is_empty() {
        return Err(BeaconError::Empty);
    }
    if let Some((at, found)) = digits
        .chars()
        .enumerate()
        .find(|(_, c)| !c.is_ascii_hexdigit())
    {
        return Err(BeaconError::NotHex { found, at: at + 1 });
    }
    if !digits.len().is_multiple_of(2) {
        return Err(BeaconError::Odd(digits.len()));
    }
    Ok((0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).expect("invariant: checked hex digits"))
        .collect())
}

/// A seal's beacon: its bytes and the SHA-256 iterations that delay it, both checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Beacon {
    bytes: Vec<u8>,
    iterations: u64,
}

impl Beacon {
    /// The beacon `text` (hex, as [`parse_hex`]) delayed by `iterations` SHA-256 hashes.
    ///
    /// # Errors
    /// [`parse_hex`]'s, or [`BeaconError::Iterations`] above [`MAX_BEACON_ITERATIONS`].
    pub fn new(text: &str, iterations: u64) -> Result<Self, BeaconError> {
        let bytes = parse_hex(text)?;
        if iterations > MAX_BEACON_ITERATIONS {
            return Err(BeaconError::Iterations(iterations));
        }
        Ok(Self { bytes, iterations })
    }

    /// The beacon's bytes, before the delay.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The iterations it is delayed by.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_read_and_every_fault_named() {
        assert_eq!(parse_hex(" 0xA0ff ").unwrap(), [0xa0, 0xff]);
        assert_eq!(parse_hex("0X01").unwrap(), [1]);
        assert_eq!(parse_hex("0x"), Err(BeaconError::Empty));
        assert_eq!(parse_hex("  "), Err(BeaconError::Empty));
        assert_eq!(
            parse_hex("0ag1"),
            Err(BeaconError::NotHex { found: 'g', at: 3 })
        );
        assert_eq!(parse_hex("abc"), Err(BeaconError::Odd(3)));
        assert!(
            BeaconError::NotHex { found: 'z', at: 1 }
                .to_string()
                .starts_with("beacon: 'z' (character 1) is not a hex digit")
        );
    }

    #[test]
    fn iterations_are_bounded() {
        let beacon = Beacon::new("ff", MAX_BEACON_ITERATIONS).unwrap();
        assert_eq!(
            (beacon.bytes(), beacon.iterations()),
            (&[0xff][..], 1 << 32)
        );
        assert_eq!(
            Beacon::new("ff", MAX_BEACON_ITERATIONS + 1),
            Err(BeaconError::Iterations(MAX_BEACON_ITERATIONS + 1))
        );
        assert!(
            BeaconError::Iterations(5)
                .to_string()
                .starts_with("iterations 5: at most 4294967296")
        );
    }
}
