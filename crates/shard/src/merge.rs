//! k-way merge of sorted shard outputs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One shard's sorted output: items sorted by their bytes, and for each item the index, within
/// the shard's input, of the input it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SortedShard<T> {
    /// Items in ascending byte order.
    pub items: Vec<T>,
    /// `permutation[j]` is the shard-local input index of `items[j]`.
    pub permutation: Vec<usize>,
    /// The index of the shard's first input in the whole input: added to its permutation.
    pub offset: usize,
}

/// The merged output of several [`SortedShard`]s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merged<T> {
    /// All items in ascending byte order.
    pub items: Vec<T>,
    /// `permutation[j]` is the whole-input index of `items[j]`.
    pub permutation: Vec<usize>,
}

/// Why shards could not be merged (a bug in whoever produced them, reported rather than merged
/// into a wrong answer).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// A shard's permutation has a different length from its items.
    #[error("shard {shard} has {items} items but a permutation of {permutation}")]
    LengthMismatch {
        /// The shard's index in the merge's input.
        shard: usize,
        /// Its item count.
        items: usize,
        /// Its permutation length.
        permutation: usize,
    },
    /// A shard's items are not in ascending byte order.
    #[error("shard {shard} is not sorted at item {index}")]
    Unsorted {
        /// The shard's index in the merge's input.
        shard: usize,
        /// The first item that is smaller than the one before it.
        index: usize,
    },
}

/// Merges shards sorted by bytes into one sorted output, carrying each shard's offset into the
/// permutation.
///
/// # Determinism
/// Equal items are taken from the lower-numbered shard first, and within a shard in their order,
/// so the output is a function of the shards alone. When every item is distinct, the merged
/// items and permutation are exactly those of sorting the whole input at once.
///
/// # Errors
/// [`MergeError`] if a shard is unsorted or its permutation length differs from its item count.
pub fn merge_sorted_by_bytes<T: AsRef<[u8]>>(
    shards: Vec<SortedShard<T>>,
) -> Result<Merged<T>, MergeError> {
    for (shard, s) in shards.iter().enumerate() {
        if s.items.len() != s.permutation.len() {
            return Err(MergeError::LengthMismatch {
                shard,
                items: s.items.len(),
                permutation: s.permutation.len(),
            });
        }
        if let Some(index) = s
            .items
            .windows(2)
            .position(|w| w[0].as_ref() > w[1].as_ref())
        {
            return Err(MergeError::Unsorted {
                shard,
                index: index + 1,
            });
        }
    }
    // Pass 1, borrowing: the sequence of shards to take the next item from.
    let total: usize = shards.iter().map(|s| s.items.len()).sum();
    let mut order: Vec<usize> = Vec::with_capacity(total);
    {
        let mut next = vec![0usize; shards.len()];
        let mut heap: BinaryHeap<Reverse<(&[u8], usize)>> = shards
            .iter()
            .enumerate()
            .filter_map(|(k, s)| s.items.first().map(|item| Reverse((item.as_ref(), k))))
            .collect();
        while let Some(Reverse((_, k))) = heap.pop() {
            order.push(k);
            next[k] += 1;
            if let Some(item) = shards[k].items.get(next[k]) {
                heap.push(Reverse((item.as_ref(), k)));
            }
        }
    }
    // Pass 2, moving: each shard is consumed front to back, so plain iterators suffice.
    let mut sources: Vec<_> = shards
        .into_iter()
        .map(|s| (s.offset, s.items.into_iter(), s.permutation.into_iter()))
        .collect();
    let mut merged = Merged {
        items: Vec::with_capacity(total),
        permutation: Vec::with_capacity(total),
    };
    for k in order {
        let (offset, items, permutation) = &mut sources[k];
        if let (Some(item), Some(local)) = (items.next(), permutation.next()) {
            merged.items.push(item);
            merged.permutation.push(*offset + local);
        }
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn shard_of(values: &[Vec<u8>], offset: usize) -> SortedShard<Vec<u8>> {
        let mut idx: Vec<usize> = (0..values.len()).collect();
        idx.sort_by(|&a, &b| values[a].cmp(&values[b]).then(a.cmp(&b)));
        SortedShard {
            items: idx.iter().map(|&i| values[i].clone()).collect(),
            permutation: idx,
            offset,
        }
    }

    proptest! {
        #[test]
        fn merge_equals_sorting_everything(
            values in proptest::collection::hash_set(proptest::collection::vec(any::<u8>(), 0..6), 0..300),
            parts in 1usize..7,
        ) {
            let values: Vec<Vec<u8>> = values.into_iter().collect();
            let whole = shard_of(&values, 0);
            let shards = crate::split::balanced(values.len(), parts)
                .into_iter()
                .map(|r| shard_of(&values[r.clone()], r.start))
                .collect();
            let merged = merge_sorted_by_bytes(shards).unwrap();
            prop_assert_eq!(merged.items, whole.items);
            prop_assert_eq!(merged.permutation, whole.permutation);
        }

        #[test]
        fn repeated_values_keep_bytes_and_point_at_their_inputs(
            values in proptest::collection::vec(0u8..4, 0..200),
            parts in 1usize..7,
        ) {
            let values: Vec<Vec<u8>> = values.into_iter().map(|v| vec![v]).collect();
            let shards = crate::split::balanced(values.len(), parts)
                .into_iter()
                .map(|r| shard_of(&values[r.clone()], r.start))
                .collect();
            let merged = merge_sorted_by_bytes(shards).unwrap();
            let mut sorted = values.clone();
            sorted.sort();
            prop_assert_eq!(&merged.items, &sorted);
            for (item, &input) in merged.items.iter().zip(&merged.permutation) {
                prop_assert_eq!(item, &values[input]);
            }
            let mut seen = merged.permutation.clone();
            seen.sort_unstable();
            prop_assert_eq!(seen, (0..values.len()).collect::<Vec<_>>());
        }
    }

    #[test]
    fn malformed_shards_are_refused() {
        let unsorted = SortedShard {
            items: vec![vec![2u8], vec![1]],
            permutation: vec![0, 1],
            offset: 0,
        };
        assert_eq!(
            merge_sorted_by_bytes(vec![unsorted]),
            Err(MergeError::Unsorted { shard: 0, index: 1 })
        );
        let short = SortedShard {
            items: vec![vec![1u8]],
            permutation: vec![],
            offset: 0,
        };
        let err = merge_sorted_by_bytes(vec![shard_of(&[], 0), short]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "shard 1 has 1 items but a permutation of 0"
        );
        assert_eq!(
            merge_sorted_by_bytes::<Vec<u8>>(vec![]).unwrap(),
            Merged {
                items: vec![],
                permutation: vec![]
            }
        );
    }
}
