//! Byte strings packed as the JS side sends them: bytes back to back and a `u32` end offset
//! each.

use crate::linkage;

/// Why packed values (`values` + `ends`) do not describe a list of byte strings.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PackError {
    /// An end offset is below the one before it.
    #[error("packed values: ends[{index}] = {end} is below ends[{previous_index}] = {previous}", previous_index = .index - 1)]
    Decreasing {
        /// The first index whose end is below its predecessor's.
        index: usize,
        /// Its end offset.
        end: u32,
        /// The end offset before it.
        previous: u32,
    },
    /// The last end offset is not the length of `values`.
    #[error("packed values: the last end offset is {last} but the values hold {len} bytes")]
    Length {
        /// The last end offset (0 for no offsets).
        last: u64,
        /// The length of the value bytes.
        len: u64,
    },
    /// Values to pack whose bytes reach 4 GiB, past a `u32` end offset.
    #[error("packed values: value {index} ends past 4 GiB, beyond a u32 end offset")]
    TooLarge {
        /// The first value that ends past it.
        index: usize,
    },
}

/// The distinct keys a step masks, packed as the JS side sends values: bytes back to back and
/// each one's end offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Items {
    /// The keys' bytes, back to back.
    pub values: Vec<u8>,
    /// The end offset of each.
    pub ends: Vec<u32>,
}

/// The byte strings `values` packs, checked against `ends`: `values[ends[i-1]..ends[i]]`
/// (with `ends[-1] = 0`), borrowed, in order.
///
/// # Errors
/// [`PackError::Decreasing`] for an end below its predecessor (the first such index),
/// [`PackError::Length`] when the last end is not `values.len()`.
pub fn unpack<'a>(values: &'a [u8], ends: &[u32]) -> Result<Vec<&'a [u8]>, PackError> {
    let mut start = 0usize;
    let mut out = Vec::with_capacity(ends.len());
    for (index, &end) in ends.iter().enumerate() {
        let end_at = usize::try_from(end).unwrap_or(usize::MAX);
        if end_at < start {
            return Err(PackError::Decreasing {
                index,
                end,
                previous: ends[index - 1],
            });
        }
        let Some(value) = values.get(start..end_at) else {
            break;
        };
        out.push(value);
        start = end_at;
    }
    if out.len() != ends.len() || start != values.len() {
        return Err(PackError::Length {
            last: ends.last().map_or(0, |&end| u64::from(end)),
            len: values.len() as u64,
        });
    }
    Ok(out)
}

/// The distinct keys, packed.
///
/// # Errors
/// [`PackError::TooLarge`] when the keys total 4 GiB or more (a `u32` offset cannot end them;
/// a wasm32 instance cannot hold them, a native party can).
pub(super) fn pack_keys(keys: &linkage::KeyTable) -> Result<Items, PackError> {
    let mut values = Vec::new();
    let mut ends = Vec::with_capacity(keys.len());
    for key in keys.values() {
        values.extend_from_slice(key);
        let end =
            u32::try_from(values.len()).map_err(|_| PackError::TooLarge { index: ends.len() })?;
        ends.push(end);
    }
    Ok(Items { values, ends })
}
