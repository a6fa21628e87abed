//! The three messages two parties exchange, as values: their forms, and the structure a lookup
//! relies on ([`ServerSetup::validate`]). Encoding is `encode`'s, decoding `decode`'s.

use crate::curve::Element;
use crate::{PsiError, bloom, gcs};

/// Whether the joiner learns the intersection itself or only its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// The joiner learns which of its elements are in the intersection (`reveal_intersection`).
    Reveal,
    /// The joiner learns the intersection's size only: the response is sorted by bytes, so its
    /// order says nothing about the request's.
    SizeOnly,
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Reveal => "reveal-intersection",
            Self::SizeOnly => "size-only",
        })
    }
}

/// A joiner's request: its masked elements, in its input order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// Whether the intersection is to be revealed.
    pub mode: Mode,
    /// `k_joiner * H(value)` for each value, in input order.
    pub elements: Vec<Element>,
}

/// A starter's response: the request's elements masked again with the starter's key, in request
/// order ([`Mode::Reveal`]) or sorted by bytes ([`Mode::SizeOnly`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// `k_starter * element` for each request element.
    pub elements: Vec<Element>,
}

/// A Golomb-compressed set of element hashes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gcs {
    /// The Golomb parameter: remainders have this many bits (0..=62).
    pub div: u32,
    /// Element hashes are `SHA-256(element) mod hash_range` (1..=2^63-1).
    pub hash_range: u64,
    /// The code, bits least significant first.
    pub bits: Vec<u8>,
}

/// A Bloom filter of masked elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bloom {
    /// Hash functions per element (at least 1).
    pub num_hash_functions: u32,
    /// The filter, bit `i` in byte `i / 8` at position `i % 8` (at least one byte).
    pub bits: Vec<u8>,
}

/// A starter's setup message: its masked set in one of three forms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerSetup {
    /// The masked elements themselves, sorted by bytes: exact, and the only form that supports
    /// the association table.
    Raw(Vec<Element>),
    /// A Golomb-compressed set: smallest, with a false-positive rate.
    Gcs(Gcs),
    /// A Bloom filter: fastest to query, with a false-positive rate.
    Bloom(Bloom),
}

impl ServerSetup {
    /// The form's name: `raw`, `gcs` or `bloom`.
    pub fn format_name(&self) -> &'static str {
        match self {
            Self::Raw(_) => "raw",
            Self::Gcs(_) => "gcs",
            Self::Bloom(_) => "bloom",
        }
    }

    /// Checks the structure a lookup relies on: raw elements sorted; a GCS divisor exponent in
    /// 0..=62 and a hash range in 1..2^63; a Bloom filter with 1..=1100 hash functions and
    /// 1 to 2^40 bytes. `from_bytes` calls it; so does the joiner, since the fields are public.
    ///
    /// # Errors
    /// [`PsiError::InvalidSetup`] naming the fault.
    pub fn validate(&self) -> Result<(), PsiError> {
        let invalid = |reason: String| Err(PsiError::InvalidSetup(reason));
        match self {
            Self::Raw(elements) => match elements.windows(2).position(|w| w[0] > w[1]) {
                Some(i) => invalid(format!(
                    "raw elements are not sorted: element {} is smaller than element {i}",
                    i + 1
                )),
                None => Ok(()),
            },
            Self::Gcs(g) if g.div > gcs::MAX_DIV => invalid(format!(
                "the GCS divisor exponent is {}, outside 0..={}",
                g.div,
                gcs::MAX_DIV
            )),
            Self::Gcs(g) if g.hash_range == 0 || g.hash_range > i64::MAX as u64 => {
                invalid(format!(
                    "the GCS hash range is {}; it must be in 1..2^63",
                    g.hash_range
                ))
            }
            Self::Bloom(b) if !(1..=bloom::MAX_HASH_FUNCTIONS).contains(&b.num_hash_functions) => {
                invalid(format!(
                    "the Bloom filter has {} hash functions, outside 1..={}",
                    b.num_hash_functions,
                    bloom::MAX_HASH_FUNCTIONS
                ))
            }
            Self::Bloom(b) if b.bits.is_empty() => {
                invalid("the Bloom filter has no bits".to_owned())
            }
            Self::Bloom(b) if b.bits.len() as u64 > bloom::MAX_BYTES => invalid(format!(
                "the Bloom filter has {} bytes, more than {}",
                b.bits.len(),
                bloom::MAX_BYTES
            )),
            Self::Gcs(_) | Self::Bloom(_) => Ok(()),
        }
    }
}
