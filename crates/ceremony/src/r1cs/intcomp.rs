//! A decoder of the integer compression gnark packs R1CS instructions with (the Go module
//! `github.com/ronanh/intcomp` v1.1.1, `UncompressUint32` / `UncompressUint64`), written from
//! its format; no Rust crate reads it.
//!
//! A stream is a sequence of blocks and one trailing word (the last block's length, ignored).
//! A block is either
//! - **bit-packed** (32-bit: at least 128 values, a multiple of 128; 64-bit: of 256): header
//!   `[values, words, first]` (64-bit: `[values | words << 32, first]`), then per 128 (256)
//!   values one word of four `(zigzag flag, bit length)` bytes and four groups of 32 (64) deltas
//!   packed least significant bit first in that many words each; or
//! - **variable-byte** (fewer values): header `[values, words]` (64-bit: one word), then the
//!   deltas as little-endian base-128 varints, bytes taken from each word's most significant
//!   end; `0x80` bytes pad the last word.
//!
//! Deltas add with wrapping to the previous value (a bit-packed block starts from `first`, a
//! variable-byte one from 0), zigzag-decoded when the group's flag says so.
//!
//! Every length is checked against the input: a malformed stream is an error, never a panic
//! or an allocation larger than the input can describe.

/// Why a compressed stream could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Malformed(pub(crate) &'static str);

/// The unsigned integers the format packs: 32-bit words of 32 values a group, or 64-bit ones
/// of 64.
pub(crate) trait Word: Copy + Default + PartialEq + std::fmt::Debug {
    /// Bits of a word, and values in a group.
    const BITS: u32;
    fn from_u64(v: u64) -> Self;
    fn to_u64(self) -> u64;
    fn wrapping_add(self, other: Self) -> Self;
}

impl Word for u32 {
    const BITS: u32 = 32;
    fn from_u64(v: u64) -> Self {
        // Truncation is the format's: values are 32 bits.
        #[allow(
            clippy::cast_possible_truncation,
            reason = "a 32-bit lane of the format"
        )]
        let v = v as u32;
        v
    }
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
    fn wrapping_add(self, other: Self) -> Self {
        u32::wrapping_add(self, other)
    }
}

impl Word for u64 {
    const BITS: u32 = 64;
    fn from_u64(v: u64) -> Self {
        v
    }
    fn to_u64(self) -> u64 {
        self
    }
    fn wrapping_add(self, other: Self) -> Self {
        u64::wrapping_add(self, other)
    }
}

/// Decodes a whole stream of `W` words into at most `max` values.
///
/// # Errors
/// A block whose lengths the input does not hold, that claims more values than its words can
/// carry, or more than `max` values in all (before they are allocated).
pub(crate) fn decode<W: Word>(words: &[W], max: usize) -> Result<Vec<W>, Malformed> {
    let Some((_trailer, mut rest)) = words.split_last() else {
        return Ok(Vec::new());
    };
    let group = W::BITS as usize;
    let packed_block = 4 * group;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let (values, block_words) = header::<W>(rest)?;
        if block_words == 0 || block_words > rest.len() {
            return Err(Malformed("a block's length runs past the stream"));
        }
        let (block, tail) = rest.split_at(block_words);
        if values > max.saturating_sub(out.len()) {
            return Err(Malformed("more values than the call data can describe"));
        }
        if values >= packed_block {
            // Each value of a packed block costs at least one header bit per 32/64 values,
            // and a block of `w` words holds at most `w * BITS` values.
            if values % packed_block != 0 || values / packed_block > block_words {
                return Err(Malformed(
                    "a bit-packed block's value count is not whole blocks",
                ));
            }
            unpack_block(block, values, &mut out)?;
        } else {
            var_byte_block(block, values, &mut out)?;
        }
        rest = tail;
    }
    Ok(out)
}

/// A block's value count and its length in words.
fn header<W: Word>(block: &[W]) -> Result<(usize, usize), Malformed> {
    let first = block[0].to_u64();
    if W::BITS == 32 {
        let len = block
            .get(1)
            .ok_or(Malformed("a block header is cut short"))?
            .to_u64();
        Ok((to_usize(first)?, to_usize(len)?))
    } else {
        Ok((to_usize(first & 0xffff_ffff)?, to_usize(first >> 32)?))
    }
}

fn to_usize(v: u64) -> Result<usize, Malformed> {
    usize::try_from(v).map_err(|_| Malformed("a length does not fit in memory"))
}

/// A bit-packed block: header, then per `4 * BITS` values one descriptor word and four groups.
fn unpack_block<W: Word>(block: &[W], values: usize, out: &mut Vec<W>) -> Result<(), Malformed> {
    let (mut previous, mut at) = if W::BITS == 32 {
        (
            *block
                .get(2)
                .ok_or(Malformed("a block header is cut short"))?,
            3,
        )
    } else {
        (
            *block
                .get(1)
                .ok_or(Malformed("a block header is cut short"))?,
            2,
        )
    };
    let group = W::BITS as usize;
    out.reserve(values);
    for _ in 0..values / (4 * group) {
        let descriptor = block
            .get(at)
            .ok_or(Malformed("a bit-packed block is cut short"))?
            .to_u64();
        at += 1;
        for shift in [24u32, 16, 8, 0] {
            let byte = (descriptor >> shift) & 0xff;
            let zigzag = byte & 0x80 != 0;
            let bits = usize::try_from(byte & 0x7f).map_err(|_| Malformed("bit length"))?;
            if bits > group {
                return Err(Malformed("a group's bit length exceeds its word size"));
            }
            let packed = block
                .get(at..at + bits)
                .ok_or(Malformed("a bit-packed group is cut short"))?;
            at += bits;
            for k in 0..group {
                let raw = extract(packed, k * bits, bits, W::BITS);
                let delta = if zigzag {
                    // (-(v & 1)) ^ (v >> 1), in the word's width.
                    let v = raw;
                    let sign = if v & 1 == 1 { mask(W::BITS) } else { 0 };
                    sign ^ (v >> 1)
                } else {
                    raw
                };
                previous = previous.wrapping_add(W::from_u64(delta));
                out.push(previous);
            }
        }
    }
    if at != block.len() {
        return Err(Malformed(
            "a bit-packed block's length disagrees with its groups",
        ));
    }
    Ok(())
}

/// All ones in a `bits`-wide word.
fn mask(bits: u32) -> u64 {
    if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// `bits` bits from bit `start` of `packed` (least significant first, `width`-bit words).
fn extract<W: Word>(packed: &[W], start: usize, bits: usize, width: u32) -> u64 {
    if bits == 0 {
        return 0;
    }
    let width = width as usize;
    let (word, offset) = (start / width, start % width);
    let low = packed[word].to_u64() >> offset;
    let got = width - offset;
    let value = if got < bits {
        low | (packed[word + 1].to_u64() << got)
    } else {
        low
    };
    value & mask(u32::try_from(bits).unwrap_or(64))
}

/// A variable-byte block: varints from each word's most significant byte down.
fn var_byte_block<W: Word>(block: &[W], values: usize, out: &mut Vec<W>) -> Result<(), Malformed> {
    let skip = if W::BITS == 32 { 2 } else { 1 };
    let data = block
        .get(skip..)
        .ok_or(Malformed("a variable-byte block header is cut short"))?;
    let bytes_per_word = W::BITS / 8;
    let mut previous = W::default();
    let (mut delta, mut shift) = (0u64, 0u32);
    let mut produced = 0usize;
    for word in data {
        let word = word.to_u64();
        for k in (0..bytes_per_word).rev() {
            let byte = (word >> (8 * k)) & 0xff;
            if shift < 64 {
                delta = delta.wrapping_add((byte & 0x7f) << shift);
            }
            shift += 7;
            if byte & 0x80 == 0 {
                if produced == values {
                    return Err(Malformed(
                        "a variable-byte block holds more values than it says",
                    ));
                }
                previous = previous.wrapping_add(W::from_u64(delta));
                out.push(previous);
                produced += 1;
                delta = 0;
                shift = 0;
            }
        }
    }
    if produced != values {
        return Err(Malformed(
            "a variable-byte block holds fewer values than it says",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packs `deltas` as one group the way the format does (for fixtures).
    fn pack32(deltas: &[u32], bits: usize) -> Vec<u32> {
        let mut out = vec![0u32; bits];
        for (k, &d) in deltas.iter().enumerate() {
            for b in 0..bits {
                if d >> b & 1 == 1 {
                    let at = k * bits + b;
                    out[at / 32] |= 1 << (at % 32);
                }
            }
        }
        out
    }

    #[test]
    fn an_empty_stream_is_no_values() {
        assert_eq!(decode::<u32>(&[], 0).unwrap(), Vec::<u32>::new());
    }

    #[test]
    fn variable_byte_blocks_decode_deltas_from_the_high_byte() {
        // Values 1, 2, 300: deltas 1, 1, 298 = [0xaa, 0x02]; bytes 01 01 aa 02 in one word.
        let stream = [3u32, 3, 0x0101_aa02, 3];
        assert_eq!(decode(&stream, usize::MAX).unwrap(), vec![1, 2, 300]);
        // Padded with 0x80: values 5 then nothing more.
        assert_eq!(decode(&[1u32, 3, 0x0580_8080, 3], 1).unwrap(), vec![5]);
    }

    #[test]
    fn bit_packed_blocks_add_deltas_to_the_first_value() {
        // 128 values 10, 11, ..., 137: deltas 0 then 1s; groups of bit length 1.
        let values: Vec<u32> = (10..138).collect();
        let mut deltas = vec![0u32];
        deltas.extend(std::iter::repeat_n(1, 127));
        let mut block = vec![128u32, 0, 10, 0x0101_0101];
        for group in deltas.chunks(32) {
            block.extend(pack32(group, 1));
        }
        block[1] = u32::try_from(block.len()).unwrap();
        block.push(block[1]);
        assert_eq!(decode(&block, usize::MAX).unwrap(), values);
    }

    #[test]
    fn zigzag_groups_step_down() {
        // 128 values from 1000 stepping -1: zigzag(-1) = 1, first delta 0.
        let values: Vec<u32> = (0..128).map(|i| 1000 - i).collect();
        let mut deltas = vec![0u32];
        deltas.extend(std::iter::repeat_n(1, 127));
        let mut block = vec![128u32, 0, 1000, 0x8181_8181];
        for group in deltas.chunks(32) {
            block.extend(pack32(group, 1));
        }
        block[1] = u32::try_from(block.len()).unwrap();
        block.push(0);
        assert_eq!(decode(&block, usize::MAX).unwrap(), values);
    }

    #[test]
    fn malformed_streams_are_errors() {
        for bad in [
            vec![5u32, 9, 0, 0],                // runs past the stream
            vec![2u32, 3, 0x0101_0101, 0],      // more values than said
            vec![3u32, 3, 0x0180_8080, 0],      // fewer
            vec![128u32, 4, 0, 0x2100_0000, 0], // bit length 33
            vec![200u32, 4, 0, 0, 0],           // not whole packed blocks
            vec![7u32, 0],                      // header cut short
        ] {
            assert!(decode(&bad, usize::MAX).is_err(), "{bad:x?}");
        }
        // A valid block of 3 values, with room for 2.
        assert!(decode(&[3u32, 3, 0x0101_aa02, 3], 2).is_err());
    }

    #[test]
    fn sixty_four_bit_variable_bytes() {
        // Values 0, 4, 9: deltas 0, 4, 5, high bytes first, padded.
        let word = 0x0004_0580_8080_8080u64;
        assert_eq!(
            decode(&[3u64 | (2 << 32), word, 2], 3).unwrap(),
            vec![0, 4, 9]
        );
    }
}
