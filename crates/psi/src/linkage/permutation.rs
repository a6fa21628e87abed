//! The starter's map from raw-setup positions back to its rows.

use sha2::{Digest as _, Sha256};

use super::{Digest, KeyTable, LinkageError};

/// What the entries digest starts with, so it is never the digest of anything else.
const ENTRIES_DIGEST_DOMAIN: &[u8] = b"lockstep psi permutation entries v1\0";

/// [`Permutation::entries_digest`], fed an entry at a time: one definition for a permutation in
/// memory and one written as a sort gives its entries.
pub(crate) struct EntriesDigest(Sha256);

impl EntriesDigest {
    pub(crate) fn new() -> Self {
        Self(Sha256::new().chain_update(ENTRIES_DIGEST_DOMAIN))
    }

    /// Adds the next `(setup position, starter row)`, in position then row order.
    pub(crate) fn push(&mut self, position: usize, row: usize) {
        self.0.update((position as u64).to_le_bytes());
        self.0.update((row as u64).to_le_bytes());
    }

    pub(crate) fn finish(self) -> Digest {
        Digest::from_hasher(self.0)
    }
}

/// Which of the starter's rows each position of its raw setup stands for, and what it was made
/// from: the starter's row count and key-column digest, and the setup message's digest.
///
/// It is the starter's alone: with it, the positions the joiner sends back name the starter's
/// rows. [`resolve`](super::resolve) refuses an input whose row count or key digest differ
/// (the rows would be the wrong ones) and pairs made from another setup.
///
/// # Invariants
/// Every position has at least one row; every row is below the row count and appears at most
/// once; rows of a position are ascending.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Permutation {
    starter_rows: usize,
    key_digest: Digest,
    setup_digest: Digest,
    rows_at: Vec<Vec<usize>>,
}

impl Permutation {
    /// The permutation of a raw setup made from `keys.values()`: `permutation[position]` is the
    /// distinct key at `position` (as [`Setup::permutation`](crate::Setup::permutation) gives
    /// it); `setup_digest` is the SHA-256 of the setup message sent.
    ///
    /// # Errors
    /// [`LinkageError::InvalidPermutation`] if `permutation` does not name each distinct key of
    /// `keys` exactly once (it was made from other keys).
    pub fn new(
        permutation: &[usize],
        keys: &KeyTable,
        setup_digest: Digest,
    ) -> Result<Self, LinkageError> {
        if permutation.len() != keys.len() {
            return Err(LinkageError::InvalidPermutation(format!(
                "the setup has {} positions but the input has {} distinct keys",
                permutation.len(),
                keys.len()
            )));
        }
        let mut seen = vec![false; keys.len()];
        let mut rows_at = Vec::with_capacity(permutation.len());
        for (position, &key) in permutation.iter().enumerate() {
            if seen.get(key).copied().unwrap_or(true) {
                return Err(LinkageError::InvalidPermutation(format!(
                    "position {position} names key {key}, which is out of range or named twice"
                )));
            }
            seen[key] = true;
            rows_at.push(keys.rows(key).to_vec());
        }
        Ok(Self {
            starter_rows: keys.row_count(),
            key_digest: keys.digest(),
            setup_digest,
            rows_at,
        })
    }

    /// A permutation as a front end read it back: `entries` are `(position, row)` pairs in any
    /// order, over `positions` positions and `starter_rows` rows; `entries_digest`, when given,
    /// is the [`entries_digest`](Self::entries_digest) the writer recorded. Memory is
    /// proportional to `entries`, whatever the two counts claim.
    ///
    /// # Errors
    /// [`LinkageError::InvalidPermutation`] naming the first entry (1-based, in the order
    /// given) that breaks an invariant: a position or row out of range, a row listed twice, or
    /// a position without rows; or entries whose digest is not `entries_digest` (edited).
    pub fn from_entries(
        starter_rows: usize,
        key_digest: Digest,
        setup_digest: Digest,
        positions: usize,
        entries: &[(usize, usize)],
        entries_digest: Option<Digest>,
    ) -> Result<Self, LinkageError> {
        let invalid = |entry: usize, what: String| {
            Err(LinkageError::InvalidPermutation(format!(
                "entry {}: {what}",
                entry + 1
            )))
        };
        // Every position holds a row, so there are no more positions than entries: checked
        // before anything is allocated by the counts.
        if positions > entries.len() {
            return Err(LinkageError::InvalidPermutation(format!(
                "{} entries cannot cover {positions} setup positions",
                entries.len()
            )));
        }
        let mut rows_at = vec![Vec::new(); positions];
        for (entry, &(position, row)) in entries.iter().enumerate() {
            if position >= positions {
                return invalid(
                    entry,
                    format!("setup position {position} is outside its {positions} positions"),
                );
            }
            if row >= starter_rows {
                return invalid(
                    entry,
                    format!(
                        "starter row {} is beyond its {starter_rows} rows",
                        row.saturating_add(1)
                    ),
                );
            }
            rows_at[position].push(row);
        }
        let mut by_row: Vec<(usize, usize)> = entries
            .iter()
            .enumerate()
            .map(|(entry, &(_, row))| (row, entry))
            .collect();
        by_row.sort_unstable();
        if let Some(twice) = by_row
            .windows(2)
            .filter(|w| w[0].0 == w[1].0)
            .map(|w| w[1])
            .min_by_key(|&(_, entry)| entry)
        {
            return invalid(
                twice.1,
                format!("starter row {} is listed twice", twice.0 + 1),
            );
        }
        if let Some(empty) = rows_at.iter().position(Vec::is_empty) {
            return Err(LinkageError::InvalidPermutation(format!(
                "setup position {empty} has no starter row"
            )));
        }
        rows_at.iter_mut().for_each(|rows| rows.sort_unstable());
        let permutation = Self {
            starter_rows,
            key_digest,
            setup_digest,
            rows_at,
        };
        if entries_digest.is_some_and(|d| d != permutation.entries_digest()) {
            return Err(LinkageError::InvalidPermutation(
                "its entries are not those it was written with (edited?)".to_owned(),
            ));
        }
        Ok(permutation)
    }

    /// A digest of [`entries`](Self::entries) in their order: a writer records it so that a
    /// reader sees entries edited, moved or spliced in, which the structure alone cannot show
    /// (two positions' rows swapped, say).
    pub fn entries_digest(&self) -> Digest {
        let mut digest = EntriesDigest::new();
        self.entries()
            .for_each(|(position, row)| digest.push(position, row));
        digest.finish()
    }

    /// Every `(setup position, starter row)`, by position then row.
    pub fn entries(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.rows_at
            .iter()
            .enumerate()
            .flat_map(|(position, rows)| rows.iter().map(move |&row| (position, row)))
    }

    /// The starter rows (ascending) at `position`; empty outside the setup.
    pub fn rows_at(&self, position: usize) -> &[usize] {
        self.rows_at.get(position).map_or(&[], Vec::as_slice)
    }

    /// The setup's positions (its distinct keys).
    pub fn positions(&self) -> usize {
        self.rows_at.len()
    }

    /// The starter's rows when the setup was made, those left out for an empty key included.
    pub fn starter_rows(&self) -> usize {
        self.starter_rows
    }

    /// The digest of the starter's key column when the setup was made.
    pub fn key_digest(&self) -> Digest {
        self.key_digest
    }

    /// The SHA-256 of the setup message.
    pub fn setup_digest(&self) -> Digest {
        self.setup_digest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> KeyTable {
        KeyTable::build(["b", "a", "", "b"].map(|k| k.as_bytes().to_vec()))
    }

    #[test]
    fn positions_map_to_every_row_of_their_key() {
        let keys = keys();
        // Sorted setup: "a" (key 1) first, then "b" (key 0).
        let p = Permutation::new(&[1, 0], &keys, Digest::of(b"setup")).unwrap();
        assert_eq!(p.entries().collect::<Vec<_>>(), [(0, 1), (1, 0), (1, 3)]);
        assert_eq!((p.positions(), p.starter_rows()), (2, 4));
        let again = Permutation::from_entries(
            4,
            keys.digest(),
            Digest::of(b"setup"),
            2,
            &[(1, 3), (0, 1), (1, 0)],
            Some(p.entries_digest()),
        )
        .unwrap();
        assert_eq!(again, p);
        // Two positions' rows swapped: a valid structure, but not the entries written.
        let swapped = Permutation::from_entries(
            4,
            keys.digest(),
            Digest::of(b"setup"),
            2,
            &[(1, 1), (0, 0), (0, 3)],
            Some(p.entries_digest()),
        );
        assert_eq!(
            swapped.unwrap_err().to_string(),
            "the permutation is invalid: its entries are not those it was written with (edited?)"
        );
    }

    #[test]
    fn broken_permutations_are_refused() {
        let keys = keys();
        let d = Digest::of(b"s");
        assert!(Permutation::new(&[0], &keys, d).is_err());
        assert!(Permutation::new(&[0, 0], &keys, d).is_err());
        assert!(Permutation::new(&[0, 2], &keys, d).is_err());
        let from = |entries: &[(usize, usize)]| {
            Permutation::from_entries(4, d, d, 2, entries, None)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            from(&[(0, 1), (2, 0)]),
            "the permutation is invalid: entry 2: setup position 2 is outside its 2 positions"
        );
        assert_eq!(
            from(&[(0, 4), (1, 0)]),
            "the permutation is invalid: entry 1: starter row 5 is beyond its 4 rows"
        );
        assert_eq!(
            from(&[(0, 1), (1, 1)]),
            "the permutation is invalid: entry 2: starter row 2 is listed twice"
        );
        assert_eq!(
            from(&[(0, 1), (0, 2)]),
            "the permutation is invalid: setup position 1 has no starter row"
        );
        assert_eq!(
            from(&[(0, 1)]),
            "the permutation is invalid: 1 entries cannot cover 2 setup positions"
        );
        // Counts as large as a file may claim allocate nothing.
        assert!(Permutation::from_entries(usize::MAX, d, d, usize::MAX, &[(0, 0)], None).is_err());
    }
}
