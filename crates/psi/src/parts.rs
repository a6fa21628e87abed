//! A round's work in parts, for front ends whose workers are separate instances that each hold
//! the key (Web Workers or worker threads each running their own wasm module), not the threads
//! of one [`Pool`](lockstep_shard::Pool).
//!
//! Every step is a map over items, each item's output depending on that item alone, followed by
//! a merge that needs them all:
//!
//! | step | map (anywhere, per part) | merge (one party, on the whole) |
//! |---|---|---|
//! | setup | [`Starter::mask`](crate::Starter::mask) the distinct keys | [`linkage::setup_from_masked`](crate::linkage::setup_from_masked): sort with the permutation, GCS, Bloom |
//! | request | [`Joiner::mask`](crate::Joiner::mask) the distinct keys | [`Joiner::request_from_masked`](crate::Joiner::request_from_masked) |
//! | respond | [`Starter::remask`](crate::Starter::remask) the request's elements | [`Starter::response_from_remasked`](crate::Starter::response_from_remasked): sorted when size-only |
//! | intersect | [`Joiner::unmask`](crate::Joiner::unmask) the response's elements | [`linkage::intersect_unmasked`](crate::linkage::intersect_unmasked): lookups, association table |
//!
//! The items are split by [`ranges`]; each part's outputs, concatenated in part order, are the
//! whole map's, so the merged message is byte-identical to the one-instance run (and to the
//! native CLI's) at any part count. A part's errors name whole-message indexes (the map takes its
//! part's first index), and the lowest part's first error is the run's, as on one instance.
//! Elements cross between instances packed, [`ELEMENT_LEN`] bytes each ([`pack`], [`unpack`]).

use std::ops::Range;

use crate::{ELEMENT_LEN, Element, PsiError};

/// The parts of `items` for `count` instances: contiguous, in order, covering `0..items` once,
/// lengths differing by at most one (the longer first); fewer than `count` when there are fewer
/// items, none for no items. The same split as the native pool's.
pub fn ranges(items: usize, count: usize) -> Vec<Range<usize>> {
    lockstep_shard::split::balanced(items, count)
}

/// `elements` back to back, [`ELEMENT_LEN`] bytes each.
pub fn pack(elements: &[Element]) -> Vec<u8> {
    elements.iter().flat_map(|e| *e.as_bytes()).collect()
}

/// The elements packed in `bytes` (as [`pack`] writes them), each checked as a message's
/// element is.
///
/// # Errors
/// [`PsiError::Runtime`] for a length that is not a multiple of [`ELEMENT_LEN`] or an element
/// whose prefix is not a point's, naming the first (parts come from our own instances: either
/// is a bug, not input).
pub fn unpack(bytes: &[u8]) -> Result<Vec<Element>, PsiError> {
    if !bytes.len().is_multiple_of(ELEMENT_LEN) {
        return Err(PsiError::Runtime(format!(
            "a part of {} bytes is not whole elements of {ELEMENT_LEN}",
            bytes.len()
        )));
    }
    bytes
        .chunks_exact(ELEMENT_LEN)
        .enumerate()
        .map(|(index, chunk)| {
            Element::from_slice(chunk)
                .map_err(|reason| PsiError::Runtime(format!("a part's element {index} {reason}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_every_item_once_in_order() {
        for items in [0, 1, 2, 3, 4, 5, 7, 100] {
            for count in 1..=5 {
                let parts = ranges(items, count);
                assert_eq!(parts.len(), count.min(items));
                let covered: Vec<usize> = parts.iter().flat_map(Clone::clone).collect();
                assert_eq!(covered, (0..items).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn packing_round_trips_and_refuses_partial_elements() {
        let mut bytes = [7u8; ELEMENT_LEN];
        bytes[0] = 0x02;
        // A part is checked as an element (length, prefix), not decoded.
        let element = Element::from_slice(&bytes).unwrap();
        assert_eq!(
            unpack(&pack(&[element, element])).unwrap(),
            [element, element]
        );
        assert!(unpack(&[0x02u8; ELEMENT_LEN + 1]).is_err());
        let infinity = [0u8; ELEMENT_LEN];
        assert!(
            unpack(&infinity)
                .unwrap_err()
                .to_string()
                .contains("element 0")
        );
        assert!(unpack(&[]).unwrap().is_empty());
    }
}
