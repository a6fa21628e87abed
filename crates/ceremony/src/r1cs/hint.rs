//! A hint's call in gnark's call data (`BlueprintGenericHint`): `[size, id, k]`, then for each
//! of the `k` inputs its term count `t` and `t` `(coefficient id, wire)` pairs, then the
//! output wires' range `[start, end)`. `size` counts every word, itself included.

use std::ops::Range;

use super::Terms;

/// One hint call, borrowed from the call data.
#[derive(Clone, Debug)]
pub struct HintCall<'a> {
    /// The hint's id (the FNV-1a hash of its function's name).
    pub id: u32,
    /// Each input: a linear combination of wires.
    pub inputs: Vec<Terms<'a>>,
    /// The wires the hint's outputs go to.
    pub outputs: Range<u32>,
}

/// Decodes the call at the start of `data`, checking its framing: its size word against its
/// counts and against `data`.
///
/// # Errors
/// What is wrong, in words.
pub(crate) fn decode(data: &[u32]) -> Result<HintCall<'_>, String> {
    let word = |at: usize| {
        data.get(at)
            .copied()
            .ok_or_else(|| "its call data runs past the end".to_owned())
    };
    let size = word(0)? as usize;
    if size > data.len() {
        return Err("its call data runs past the end".to_owned());
    }
    let data = &data[..size];
    let word = |at: usize| {
        data.get(at)
            .copied()
            .ok_or_else(|| "its call data is shorter than its counts say".to_owned())
    };
    let id = word(1)?;
    let count = word(2)? as usize;
    // Each input takes at least one word: a count beyond the data is a lie, refused before
    // any allocation for it.
    if count > size {
        return Err(format!("{count} inputs in {size} words"));
    }
    let mut inputs = Vec::with_capacity(count);
    let mut at = 3usize;
    for _ in 0..count {
        let terms = word(at)? as usize;
        let end = terms
            .checked_mul(2)
            .and_then(|t| t.checked_add(at + 1))
            .filter(|&end| end <= size)
            .ok_or_else(|| "its call data is shorter than its counts say".to_owned())?;
        inputs.push(Terms(&data[at + 1..end]));
        at = end;
    }
    let (start, end) = (word(at)?, word(at + 1)?);
    if at + 2 != size {
        return Err(format!("its size says {size} words, its counts {}", at + 2));
    }
    if start > end {
        return Err(format!("its outputs run from wire {start} down to {end}"));
    }
    Ok(HintCall {
        id,
        inputs,
        outputs: start..end,
    })
}

/// gnark's hint id of a function's full name: 32-bit FNV-1a (`solver.GetHintID`).
pub fn hint_id(name: &str) -> u32 {
    name.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_decodes_and_bad_framing_is_named() {
        // id 7, two inputs: [2 * w3], [1 * w0 + 4 * w5]; outputs [10, 12).
        let data = [12, 7, 2, 1, 2, 3, 2, 1, 0, 4, 5, 10, 12];
        let call = decode(&data[..12]).unwrap_err();
        assert!(call.contains("shorter") || call.contains("past"), "{call}");
        let mut good = data.to_vec();
        good[0] = 13;
        let call = decode(&good).unwrap();
        assert_eq!(call.id, 7);
        assert_eq!(call.inputs.len(), 2);
        assert_eq!(call.inputs[1].len(), 2);
        assert_eq!(call.outputs, 10..12);
        let mut longer = good.clone();
        longer[0] = 14;
        longer.push(0);
        assert!(decode(&longer).unwrap_err().contains("size says 14"));
        let mut reversed = good.clone();
        reversed[11] = 13;
        assert!(decode(&reversed).unwrap_err().contains("down to"));
        let mut lying = good;
        lying[2] = u32::MAX;
        assert!(decode(&lying).is_err());
    }

    #[test]
    fn hint_ids_are_gnarks() {
        // FNV-1a's published vectors.
        assert_eq!(hint_id(""), 0x811c_9dc5);
        assert_eq!(hint_id("a"), 0xe40c_292c);
        assert_eq!(hint_id("foobar"), 0xbf9c_f968);
    }
}
