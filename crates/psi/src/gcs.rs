//! Golomb-compressed sets, as OpenMined PSI builds and reads them.
//!
//! A set of hashes in `[0, hash_range)` is sorted, deduplicated and stored as the gaps between
//! consecutive values (the first gap from 0), each gap as a unary quotient `gap >> div` (that
//! many 0 bits, then a 1) and a `div`-bit remainder, bits least significant first.

use crate::PsiError;
use crate::hashing::digest_mod;

/// The largest divisor exponent accepted: a 62-bit remainder keeps every shift in range.
pub(crate) const MAX_DIV: u32 = 62;

/// The largest hash range, as a double: below 2^63, so it fits the proto's int64.
const MAX_HASH_RANGE: f64 = 9.223_372_036_854_775e18;

/// `trunc(max_elements / (fpr / joiner_count))`, the hash range OpenMined derives from the set
/// sizes and the false-positive rate (corrected by the joiner count), in doubles as it does.
///
/// # Errors
/// [`PsiError::GcsTooLarge`] with the smallest rate that fits, when the range passes 2^63.
pub(crate) fn hash_range(max_elements: u64, joiner_count: u64, fpr: f64) -> Result<u64, PsiError> {
    let Some(range) = range_of(max_elements, joiner_count, fpr) else {
        return Err(match smallest_rate(max_elements, joiner_count) {
            Some(smallest_fpr) => PsiError::GcsTooLarge {
                elements: max_elements,
                joiner_count,
                fpr,
                smallest_fpr,
            },
            None => PsiError::SetupTooLarge {
                format: "gcs",
                elements: max_elements,
                fpr: corrected(fpr, joiner_count),
            },
        });
    };
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "range checked; the truncation is OpenMined's"
    )]
    Ok(range as u64)
}

#[allow(
    clippy::cast_precision_loss,
    reason = "as OpenMined computes it, in doubles"
)]
fn corrected(fpr: f64, joiner_count: u64) -> f64 {
    fpr / joiner_count as f64
}

/// The hash range as a double, if it is in `[1, 2^63)`.
fn range_of(max_elements: u64, joiner_count: u64, fpr: f64) -> Option<f64> {
    #[allow(
        clippy::cast_precision_loss,
        reason = "as OpenMined computes it, in doubles"
    )]
    let range = max_elements as f64 / corrected(fpr, joiner_count);
    (1.0..MAX_HASH_RANGE).contains(&range).then_some(range)
}

/// The smallest rate with two significant digits whose hash range fits, if one below 1 does.
fn smallest_rate(max_elements: u64, joiner_count: u64) -> Option<f64> {
    #[allow(clippy::cast_precision_loss, reason = "an estimate, checked below")]
    let bound = max_elements as f64 * joiner_count as f64 / MAX_HASH_RANGE;
    if !(bound > 0.0 && bound < 1.0) {
        return None;
    }
    // bound = d.ddd * 10^(exponent + 1): try the two-digit mantissas from its own upwards,
    // each parsed from its decimal text so that it prints back as written.
    #[allow(clippy::cast_possible_truncation, reason = "a small exponent")]
    let exponent = bound.log10().floor() as i32 - 1;
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "10 to 100"
    )]
    let first = (bound / 10f64.powi(exponent)).floor() as u32;
    (first..first + 20)
        .filter_map(|mantissa| format!("{mantissa}e{exponent}").parse::<f64>().ok())
        .take_while(|&rate| rate < 1.0)
        .find(|&rate| range_of(max_elements, joiner_count, rate).is_some())
}

/// The hash of one masked element: `BE(SHA-256(element)) mod hash_range`.
pub(crate) fn element_hash(element: &[u8], hash_range: u64) -> u64 {
    digest_mod(&[], element, hash_range)
}

/// The divisor exponent OpenMined picks for a sorted list: with `avg = (last + 1) / len` and
/// `p = 1 / avg`, `max(0, round(-log2(-log2(1 - p))))`, all in doubles.
///
/// When `p` is below double precision (`1 - p == 1`: an average gap above 2^53, a few elements
/// spread over a huge hash range) that formula is infinite, and OpenMined's conversion of it to
/// an integer undefined; `-log2(1 - p)` is then computed as `-log1p(-p) / ln 2`, its exact value.
/// Every other list gets OpenMined's bytes.
///
/// The list is told by its `count` of values (duplicates counted) and its `last`.
fn divisor_of(last: u64, count: u64) -> Option<u32> {
    #[allow(
        clippy::cast_precision_loss,
        reason = "as OpenMined computes it, in doubles"
    )]
    let average = (last + 1) as f64 / count as f64;
    let probability = 1.0 / average;
    let mut bits_per_gap = -(1.0 - probability).log2();
    if bits_per_gap == 0.0 {
        bits_per_gap = -(-probability).ln_1p() / std::f64::consts::LN_2;
    }
    let div = (-bits_per_gap.log2()).round().max(0.0);
    // An absurd exponent only comes from a hash range beyond 2^63.
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "range checked"
    )]
    (div <= f64::from(MAX_DIV)).then_some(div as u32)
}

/// Compresses a sorted list of hashes (duplicates allowed, and skipped).
///
/// # Errors
/// [`PsiError::SetupTooLarge`] if the list's spread needs a divisor above [`MAX_DIV`].
pub(crate) fn compress(
    sorted: &[u64],
    max_elements: u64,
    fpr: f64,
) -> Result<(u32, Vec<u8>), PsiError> {
    let Some(&last) = sorted.last() else {
        return Ok((0, Vec::new()));
    };
    let mut encoder = Encoder::new(last, sorted.len() as u64, max_elements, fpr)?;
    sorted.iter().for_each(|&value| encoder.push(value));
    Ok(encoder.finish())
}

/// A Golomb code written a value at a time, for a list too long to hold: [`compress`]'s bytes
/// when given the same sorted values, whose count and last value it is told first (they fix the
/// divisor).
pub(crate) struct Encoder {
    div: u32,
    writer: BitWriter,
    previous: Option<u64>,
}

impl Encoder {
    /// An encoder of `count` sorted values (at least one) ending at `last`.
    ///
    /// # Errors
    /// [`PsiError::SetupTooLarge`] as [`compress`].
    pub(crate) fn new(
        last: u64,
        count: u64,
        max_elements: u64,
        fpr: f64,
    ) -> Result<Self, PsiError> {
        let div = divisor_of(last, count.max(1)).ok_or(PsiError::SetupTooLarge {
            format: "gcs",
            elements: max_elements,
            fpr,
        })?;
        Ok(Self {
            div,
            writer: BitWriter::default(),
            previous: None,
        })
    }

    /// Adds the next value (not below the last one; an equal one is skipped).
    pub(crate) fn push(&mut self, value: u64) {
        if self.previous.is_some_and(|p| value <= p) {
            return;
        }
        let gap = value - self.previous.unwrap_or(0);
        self.writer.zeros(gap >> self.div);
        self.writer.bit(true);
        self.writer.bits(gap & ((1u64 << self.div) - 1), self.div);
        self.previous = Some(value);
    }

    /// The divisor exponent and the code.
    pub(crate) fn finish(self) -> (u32, Vec<u8>) {
        (self.div, self.writer.finish())
    }
}

/// The values of a Golomb code, in order, decoded one at a time (constant memory, whatever the
/// code's length). Yields an error, then ends, if the code ends inside a remainder or its values
/// overflow.
pub(crate) struct Values<'a> {
    bits: &'a [u8],
    div: u32,
    position: u64,
    sum: u64,
    failed: bool,
}

/// The values of the code `bits` with divisor exponent `div` (at most [`MAX_DIV`]).
pub(crate) fn values(bits: &[u8], div: u32) -> Values<'_> {
    Values {
        bits,
        div: div.min(MAX_DIV),
        position: 0,
        sum: 0,
        failed: false,
    }
}

impl Iterator for Values<'_> {
    type Item = Result<u64, PsiError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        // The unary quotient: zeros up to the next 1 bit; none left means the code has ended.
        let one = next_one(self.bits, self.position)?;
        let quotient = one - self.position;
        let start = one + 1;
        let div = u64::from(self.div);
        if start + div > self.bits.len() as u64 * 8 {
            self.failed = true;
            return Some(Err(PsiError::InvalidSetup(
                "the GCS code ends inside a remainder".to_owned(),
            )));
        }
        let remainder = (0..div)
            .filter(|&j| {
                let i = start + j;
                let byte = self.bits[usize::try_from(i / 8)
                    .expect("invariant: i is below the code's length in bits")];
                (byte >> (i % 8)) & 1 == 1
            })
            .fold(0u64, |r, j| r | (1 << j));
        self.position = start + div;
        let gap = quotient
            .checked_shl(self.div)
            .filter(|g| g >> self.div == quotient)
            .map(|g| g | remainder);
        match gap.and_then(|g| self.sum.checked_add(g)) {
            Some(sum) => {
                self.sum = sum;
                Some(Ok(sum))
            }
            None => {
                self.failed = true;
                Some(Err(PsiError::InvalidSetup(
                    "the GCS values overflow".to_owned(),
                )))
            }
        }
    }
}

/// Decompresses a Golomb code into its sorted values.
///
/// # Errors
/// [`PsiError::InvalidSetup`] if the code ends inside a remainder or its values overflow.
pub(crate) fn decompress(bits: &[u8], div: u32) -> Result<Vec<u64>, PsiError> {
    values(bits, div).collect()
}

/// For each of `hashes`, whether the code holds it: one pass over the code beside the sorted
/// hashes (OpenMined's `golomb_intersect`), so memory is the joiner's, not the code's. The whole
/// code is read, so a malformed one is refused even after the last match.
///
/// # Errors
/// As [`decompress`].
pub(crate) fn members(bits: &[u8], div: u32, hashes: &[u64]) -> Result<Vec<bool>, PsiError> {
    let mut order: Vec<usize> = (0..hashes.len()).collect();
    order.sort_unstable_by_key(|&i| (hashes[i], i));
    let mut found = vec![false; hashes.len()];
    let sorted = order.iter().map(|&i| Ok::<_, PsiError>((hashes[i], i)));
    walk_members(bits, div, sorted, |i| {
        found[i] = true;
        Ok(())
    })?;
    Ok(found)
}

/// Walks the whole code beside the joiner's hashes `sorted` (ascending, each with its index),
/// giving `hit` the index of each hash the code holds, in the order given: [`members`] for
/// hashes too many to hold. The code is walked to its end, so a code that does not decode is
/// refused whatever the hashes.
///
/// # Errors
/// As [`values`] ([`PsiError::InvalidSetup`]), `sorted`'s and `hit`'s.
pub(crate) fn walk_members<E: From<PsiError>>(
    bits: &[u8],
    div: u32,
    sorted: impl Iterator<Item = Result<(u64, usize), E>>,
    mut hit: impl FnMut(usize) -> Result<(), E>,
) -> Result<(), E> {
    let mut sorted = sorted.fuse();
    let mut pending: Option<(u64, usize)> = None;
    for value in values(bits, div) {
        let value = value?;
        loop {
            let (hash, index) = match pending.take() {
                Some(next) => next,
                None => match sorted.next() {
                    Some(next) => next?,
                    None => break,
                },
            };
            if hash > value {
                pending = Some((hash, index));
                break;
            }
            if hash == value {
                hit(index)?;
            }
        }
    }
    Ok(())
}

/// The index of the first 1 bit at or after `from`, if any.
fn next_one(bits: &[u8], from: u64) -> Option<u64> {
    let mut byte = usize::try_from(from / 8).ok()?;
    let mut mask = 0xffu8 << (from % 8);
    while let Some(&b) = bits.get(byte) {
        let hit = b & mask;
        if hit != 0 {
            return Some(byte as u64 * 8 + u64::from(hit.trailing_zeros()));
        }
        byte += 1;
        mask = 0xff;
    }
    None
}

#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    len: u64,
}

impl BitWriter {
    fn bit(&mut self, one: bool) {
        let byte = usize::try_from(self.len / 8)
            .expect("invariant: the code's length in bytes is a Vec length");
        if byte == self.bytes.len() {
            self.bytes.push(0);
        }
        if one {
            self.bytes[byte] |= 1 << (self.len % 8);
        }
        self.len += 1;
    }

    fn zeros(&mut self, count: u64) {
        self.len += count;
        let needed = usize::try_from(self.len.div_ceil(8))
            .expect("invariant: a GCS code of a set held in memory fits usize bytes");
        self.bytes.resize(needed, 0);
    }

    fn bits(&mut self, value: u64, count: u32) {
        (0..count).for_each(|j| self.bit((value >> j) & 1 == 1));
    }

    fn finish(self) -> Vec<u8> {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn single_value_seven() {
        // OpenMined's golomb_test: {7} has div 2 and encodes as 0b00001110
        // (one 0 for the quotient 1, the stop bit, remainder 3 as 1,1).
        let (div, bits) = compress(&[7], 1, 0.5).unwrap();
        assert_eq!((div, bits.clone()), (2, vec![0b0000_1110]));
        assert_eq!(decompress(&bits, div).unwrap(), vec![7]);
    }

    #[test]
    fn the_hash_range_fits_int64_or_names_the_smallest_rate() {
        assert_eq!(hash_range(100, 100, 0.5).unwrap(), 20_000);
        // 96,000 joiner keys at 1e-9: 96,000^2 / 1e-9 = 9.2e18, just under 2^63.
        assert!(hash_range(96_000, 96_000, 1e-9).is_ok());
        let err = hash_range(100_000, 100_000, 1e-9).unwrap_err();
        let PsiError::GcsTooLarge { smallest_fpr, .. } = err else {
            panic!("{err}");
        };
        assert_eq!(smallest_fpr, 1.1e-9);
        assert!(hash_range(100_000, 100_000, smallest_fpr).is_ok());
        assert!(hash_range(100_000, 100_000, 1.0e-9).is_err());
        assert_eq!(
            err.to_string(),
            "a GCS setup of 100000 elements for 100000 joiner elements at false-positive rate \
             1e-9 needs a hash range beyond 2^63, which OpenMined's message cannot carry; the \
             smallest rate that works at this size is 1.1e-9, and a raw or Bloom setup has no \
             such limit"
        );
        // No rate below 1 fits: a generic error.
        assert!(matches!(
            hash_range(u64::MAX, u64::MAX, 0.5),
            Err(PsiError::SetupTooLarge { .. })
        ));
    }

    #[test]
    fn sparse_lists_beyond_double_precision_get_a_finite_divisor() {
        // Three hashes over a range of 9e18: 1 - p rounds to 1 in doubles.
        let values = [5, 3_000_000_000_000_000_000, 9_000_000_000_000_000_000];
        let (div, bits) = compress(&values, 100_000, 1.1e-9).unwrap();
        assert_eq!(div, 61);
        assert_eq!(decompress(&bits, div).unwrap(), values);
    }

    #[test]
    fn empty_and_degenerate_lists() {
        assert_eq!(compress(&[], 1, 0.1).unwrap(), (0, vec![]));
        assert_eq!(decompress(&[], 5).unwrap(), Vec::<u64>::new());
        // Dense and duplicated lists give a NaN or infinite log, which OpenMined clamps to 0.
        assert_eq!(compress(&[0, 1, 2, 3], 4, 0.1).unwrap().0, 0);
        assert_eq!(compress(&[0, 0, 0], 3, 0.1).unwrap().0, 0);
        assert_eq!(
            decompress(&compress(&[0, 0, 0], 3, 0.1).unwrap().1, 0).unwrap(),
            vec![0]
        );
    }

    #[test]
    fn truncated_or_overflowing_codes_are_refused() {
        // A stop bit in the last bit, then a 5-bit remainder that is not there.
        assert!(matches!(
            decompress(&[0x80], 5),
            Err(PsiError::InvalidSetup(_))
        ));
        // 63 zero bytes of quotient at div 62 overflow u64.
        let mut bits = vec![0u8; 63];
        bits.push(1);
        bits.extend([0; 8]);
        assert!(matches!(
            decompress(&bits, 62),
            Err(PsiError::InvalidSetup(_))
        ));
    }

    proptest! {
        #[test]
        fn round_trip(mut values in proptest::collection::vec(0u64..1_000_000_000, 1..400)) {
            values.sort_unstable();
            let (div, bits) = compress(&values, values.len() as u64, 0.001).unwrap();
            let mut distinct = values.clone();
            distinct.dedup();
            prop_assert_eq!(decompress(&bits, div).unwrap(), distinct);
        }

        #[test]
        fn members_equals_lookup_in_the_decompressed_set(
            mut values in proptest::collection::vec(0u64..100_000, 1..300),
            probes in proptest::collection::vec(0u64..100_000, 0..300),
        ) {
            values.sort_unstable();
            let (div, bits) = compress(&values, values.len() as u64, 0.01).unwrap();
            let found = members(&bits, div, &probes).unwrap();
            for (probe, hit) in probes.iter().zip(found) {
                prop_assert_eq!(hit, values.binary_search(probe).is_ok());
            }
        }

        #[test]
        fn arbitrary_codes_never_panic(bits in proptest::collection::vec(any::<u8>(), 0..64), div in 0u32..=62) {
            let _ = decompress(&bits, div);
            let _ = members(&bits, div, &[0, 1, 2, 1 << 40]);
        }
    }
}
