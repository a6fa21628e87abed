//! Splitting `N` items into contiguous ranges.
//!
//! Every function here returns ranges that are non-empty, disjoint, in increasing order and that
//! together cover `0..N` exactly once. Which worker runs a range never affects output bytes: the
//! ranges only decide who computes what, and results are put back by position.

use std::ops::Range;

/// Splits `0..items` into `min(parts, items)` contiguous ranges whose lengths differ by at most
/// one, the longer ones first. `parts == 0` counts as 1; `items == 0` gives no ranges.
pub fn balanced(items: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1).min(items);
    if parts == 0 {
        return Vec::new();
    }
    let (base, extra) = (items / parts, items % parts);
    let mut start = 0;
    (0..parts)
        .map(|k| {
            let len = base + usize::from(k < extra);
            let range = start..start + len;
            start += len;
            range
        })
        .collect()
}

/// Splits `0..items` into contiguous ranges of at most `len` items (the last may be shorter).
/// `len == 0` counts as 1.
pub fn fixed(items: usize, len: usize) -> Vec<Range<usize>> {
    let len = len.max(1);
    (0..items)
        .step_by(len)
        .map(|start| start..(start + len).min(items))
        .collect()
}

/// A run of items with the same cost per item, one part of a [`weighted`] split's input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Number of items.
    pub len: usize,
    /// Relative cost of one item (for example 4 for an index that updates four points, 1 for one).
    pub weight: u64,
}

/// Splits the concatenation of `segments` into at most `parts` contiguous ranges of about equal
/// total cost, where an item costs its segment's weight.
///
/// Indexes are global: segment `s` holds the indexes after those of segments `0..s`. A range may
/// span a segment boundary; [`by_segment`] cuts it back into per-segment local ranges.
/// Each range's cost is within one item's weight of `total / parts`. Zero-weight items go with
/// the range before them (or the first range). If every weight is zero this is [`balanced`].
///
/// # Panics
/// Never: a cut inside a segment is at most the segment's length.
pub fn weighted(segments: &[Segment], parts: usize) -> Vec<Range<usize>> {
    let items: usize = segments.iter().map(|s| s.len).sum();
    let parts = parts.max(1).min(items);
    let total: u128 = segments
        .iter()
        .map(|s| s.len as u128 * u128::from(s.weight))
        .sum();
    if parts == 0 || total == 0 {
        return balanced(items, parts);
    }
    // Cut k sits at the first index i where cost(0..i) * parts >= k * total.
    let mut cuts = Vec::with_capacity(parts + 1);
    cuts.push(0);
    for k in 1..parts {
        let goal = k as u128 * total;
        let (mut start, mut cost) = (0usize, 0u128);
        let mut cut = items;
        for seg in segments {
            let seg_cost = seg.len as u128 * u128::from(seg.weight) * parts as u128;
            if seg.weight > 0 && cost * parts as u128 + seg_cost >= goal {
                let need = goal.saturating_sub(cost * parts as u128);
                let step = u128::from(seg.weight) * parts as u128;
                let within = need.div_ceil(step);
                cut = start
                    + usize::try_from(within)
                        .expect("invariant: within <= seg.len by the branch condition");
                break;
            }
            start += seg.len;
            cost += seg.len as u128 * u128::from(seg.weight);
        }
        cuts.push(cut);
    }
    cuts.push(items);
    cuts.windows(2)
        .filter(|w| w[0] < w[1])
        .map(|w| w[0]..w[1])
        .collect()
}

/// Cuts a global `range` over the concatenation of `segments` into `(segment index, local range)`
/// pairs, in order, skipping empty pieces.
pub fn by_segment(range: Range<usize>, segments: &[Segment]) -> Vec<(usize, Range<usize>)> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for (index, seg) in segments.iter().enumerate() {
        let end = start + seg.len;
        let (lo, hi) = (range.start.max(start), range.end.min(end));
        if lo < hi {
            pieces.push((index, lo - start..hi - start));
        }
        start = end;
    }
    pieces
}

/// Splits `data` into the mutable parts named by `ranges`, so each worker owns what it writes.
///
/// # Panics
/// If `ranges` are not in increasing order, overlap, or reach past `data.len()`: ranges come from
/// this module's functions, so that is a bug in the caller, not bad input.
pub fn parts_mut<'a, T>(mut data: &'a mut [T], ranges: &[Range<usize>]) -> Vec<&'a mut [T]> {
    let mut consumed = 0;
    let mut parts = Vec::with_capacity(ranges.len());
    for range in ranges {
        assert!(
            range.start >= consumed && range.start <= range.end,
            "ranges must be ordered and disjoint"
        );
        let rest = std::mem::take(&mut data);
        let (_, rest) = rest.split_at_mut(range.start - consumed);
        let (part, rest) = rest.split_at_mut(range.end - range.start);
        parts.push(part);
        data = rest;
        consumed = range.end;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn assert_cover(ranges: &[Range<usize>], items: usize) {
        let mut next = 0;
        for r in ranges {
            assert_eq!(r.start, next, "ranges {ranges:?} skip or overlap");
            assert!(r.end > r.start, "empty range in {ranges:?}");
            next = r.end;
        }
        assert_eq!(next, items, "ranges {ranges:?} do not end at {items}");
    }

    proptest! {
        #[test]
        fn balanced_covers_each_index_once(items in 0usize..5000, parts in 0usize..70) {
            let ranges = balanced(items, parts);
            assert_cover(&ranges, items);
            prop_assert_eq!(ranges.len(), parts.max(1).min(items));
            let lens: Vec<usize> = ranges.iter().map(|r| r.len()).collect();
            if let (Some(max), Some(min)) = (lens.iter().max(), lens.iter().min()) {
                prop_assert!(max - min <= 1);
            }
            prop_assert!(lens.windows(2).all(|w| w[0] >= w[1]));
        }

        #[test]
        fn fixed_covers_each_index_once(items in 0usize..5000, len in 0usize..300) {
            let ranges = fixed(items, len);
            assert_cover(&ranges, items);
            prop_assert!(ranges.iter().all(|r| r.len() <= len.max(1)));
        }

        #[test]
        fn weighted_covers_and_balances(
            segs in proptest::collection::vec((0usize..3000, 0u64..9), 0..5),
            parts in 0usize..40,
        ) {
            let segments: Vec<Segment> =
                segs.iter().map(|&(len, weight)| Segment { len, weight }).collect();
            let items: usize = segments.iter().map(|s| s.len).sum();
            let ranges = weighted(&segments, parts);
            assert_cover(&ranges, items);
            prop_assert!(ranges.len() <= parts.max(1));
            let weight_at = |i: usize| {
                by_segment(i..i + 1, &segments).first().map_or(0, |(s, _)| segments[*s].weight)
            };
            let total: u64 = segments.iter().map(|s| s.len as u64 * s.weight).sum();
            let max_w = segments.iter().filter(|s| s.len > 0).map(|s| s.weight).max().unwrap_or(0);
            if total > 0 {
                let ideal = total as f64 / parts.max(1).min(items) as f64;
                for r in &ranges {
                    let cost: u64 = r.clone().map(weight_at).sum();
                    prop_assert!(
                        (cost as f64) <= ideal + 2.0 * max_w as f64,
                        "range {:?} costs {} against ideal {}", r, cost, ideal
                    );
                }
            }
            // Pieces map back onto the global range exactly.
            for r in &ranges {
                let pieces = by_segment(r.clone(), &segments);
                prop_assert_eq!(pieces.iter().map(|(_, p)| p.len()).sum::<usize>(), r.len());
            }
        }

        #[test]
        fn parts_mut_hands_out_every_element_once(items in 0usize..2000, parts in 0usize..20) {
            let mut data: Vec<usize> = vec![0; items];
            let ranges = balanced(items, parts);
            for (part, range) in parts_mut(&mut data, &ranges).into_iter().zip(&ranges) {
                for (slot, index) in part.iter_mut().zip(range.clone()) {
                    *slot += index + 1;
                }
            }
            prop_assert!(data.iter().enumerate().all(|(i, v)| *v == i + 1));
        }
    }

    #[test]
    fn weighted_separates_a_heavy_head_from_a_light_tail() {
        // The ceremony's shape: N indexes of 4 points, then N - 1 of one point.
        let n = 1 << 10;
        let segments = [
            Segment { len: n, weight: 4 },
            Segment {
                len: n - 1,
                weight: 1,
            },
        ];
        let ranges = weighted(&segments, 5);
        assert_eq!(ranges.len(), 5);
        let costs: Vec<u64> = ranges
            .iter()
            .map(|r| {
                by_segment(r.clone(), &segments)
                    .iter()
                    .map(|(s, p)| p.len() as u64 * segments[*s].weight)
                    .sum()
            })
            .collect();
        let total = 5 * n as u64 - 1;
        assert!(
            costs.iter().all(|&c| c.abs_diff(total / 5) <= 4),
            "{costs:?}"
        );
        assert_eq!(by_segment(0..0, &segments), vec![]);
        assert_eq!(
            by_segment(n - 2..n + 3, &segments),
            vec![(0, n - 2..n), (1, 0..3)]
        );
    }
}
