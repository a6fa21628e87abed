//! The joiner's matched pairs, and resolving them to the starter's rows.

use std::collections::{HashMap, HashSet};

use super::{Digest, KeyTable, LinkageError, Permutation};
use crate::Match;

/// One matched joiner row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pair {
    /// The joiner's 0-based data row.
    pub joiner_row: usize,
    /// The row's key, numbered among the matched keys in order of their first row (0, 1, ...):
    /// local to these pairs, never the key's request index.
    pub joiner_key: usize,
    /// The position in the starter's raw setup it matched.
    pub setup_position: usize,
}

/// What a joiner sends back after a raw round, so that the starter can name the matched rows:
/// every matched joiner row with its key's number and the setup position it matched, the
/// joiner's row and key counts, and the digest of the setup the pairs answer.
///
/// Sending it tells the starter which of the joiner's rows matched (that is its purpose), the
/// joiner's row count, and which matched rows share a key (the positions tell that too); nothing
/// about unmatched keys. Keys are numbered afresh rather than by request index: a request index
/// would tie the joiner's masked element `b * H(v)` to a value `v` the starter knows, and with it
/// recognise `v` in every later request made with the same joiner key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pairs {
    /// The joiner's data rows, those left out for an empty key included.
    pub joiner_rows: usize,
    /// The joiner's distinct keys (the request's length).
    pub joiner_keys: usize,
    /// The SHA-256 of the setup message the pairs answer.
    pub setup_digest: Digest,
    /// The pairs, by joiner row.
    pub pairs: Vec<Pair>,
}

/// A matched `(joiner row, starter row)`, both 0-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowPair {
    /// The joiner's row.
    pub joiner_row: usize,
    /// The starter's row.
    pub starter_row: usize,
}

impl Pairs {
    /// The pairs of an association table (from [`Joiner::association_table`](
    /// crate::Joiner::association_table) over the request of `keys.values()`), one per joiner
    /// row holding a matched key, sorted by joiner row, keys numbered in order of first row.
    ///
    /// # Errors
    /// [`LinkageError::JoinerKeyOutOfRange`] if the table names a request index `keys` does not
    /// have (it was made from other keys).
    pub fn from_table(
        table: &[Match],
        keys: &KeyTable,
        setup_digest: Digest,
    ) -> Result<Self, LinkageError> {
        // (row, request index, position), by row.
        let mut rows = Vec::with_capacity(table.len());
        for (i, m) in table.iter().enumerate() {
            if m.joiner_index >= keys.len() {
                return Err(LinkageError::JoinerKeyOutOfRange {
                    pair: i + 1,
                    key: m.joiner_index,
                    keys: keys.len(),
                });
            }
            rows.extend(
                keys.rows(m.joiner_index)
                    .iter()
                    .map(|&row| (row, m.joiner_index, m.setup_position)),
            );
        }
        rows.sort_unstable();
        let mut numbers: HashMap<usize, usize> = HashMap::new();
        let pairs = rows
            .into_iter()
            .map(|(joiner_row, index, setup_position)| {
                let next = numbers.len();
                Pair {
                    joiner_row,
                    joiner_key: *numbers.entry(index).or_insert(next),
                    setup_position,
                }
            })
            .collect();
        Ok(Self {
            joiner_rows: keys.row_count(),
            joiner_keys: keys.len(),
            setup_digest,
            pairs,
        })
    }
}

/// The matched `(joiner row, starter row)` pairs, sorted: each pair's setup position through
/// the permutation to every starter row holding that key.
///
/// `starter_keys` is the starter's key table computed again from its input now; it must be the
/// table the setup was made from.
///
/// # Errors
/// In this order, so that the most telling fault is named:
/// - [`LinkageError::RowCountChanged`], [`LinkageError::KeysChanged`]: the input is not the one
///   the permutation was made from (rows reordered, keys edited, another file or other key
///   options);
/// - [`LinkageError::InvalidPermutation`]: a position does not hold exactly the rows of one
///   distinct key of the input, or a key has no position (the permutation was spliced or
///   edited);
/// - [`LinkageError::OtherSetup`]: the pairs answer another setup;
/// - for the first pair (in the given order) that no honest joiner sends:
///   [`LinkageError::PositionOutOfRange`], [`LinkageError::JoinerRowOutOfRange`],
///   [`LinkageError::JoinerKeyOutOfRange`], [`LinkageError::RowListedTwice`],
///   [`LinkageError::PositionClaimedTwice`] (each position holds one distinct starter key, so
///   one joiner key at most matches it), [`LinkageError::KeyAtTwoPositions`].
pub fn resolve(
    permutation: &Permutation,
    starter_keys: &KeyTable,
    pairs: &Pairs,
) -> Result<Vec<RowPair>, LinkageError> {
    if starter_keys.row_count() != permutation.starter_rows() {
        return Err(LinkageError::RowCountChanged {
            then: permutation.starter_rows(),
            now: starter_keys.row_count(),
        });
    }
    if starter_keys.digest() != permutation.key_digest() {
        return Err(LinkageError::KeysChanged);
    }
    check_groups(permutation, starter_keys)?;
    if pairs.setup_digest != permutation.setup_digest() {
        return Err(LinkageError::OtherSetup {
            permutation: permutation.setup_digest(),
            pairs: pairs.setup_digest,
        });
    }
    let mut check = PairCheck::new(pairs, permutation.positions());
    let mut resolved = Vec::new();
    for (i, pair) in pairs.pairs.iter().enumerate() {
        check.check(i + 1, pair)?;
        resolved.extend(
            permutation
                .rows_at(pair.setup_position)
                .iter()
                .map(|&starter_row| RowPair {
                    joiner_row: pair.joiner_row,
                    starter_row,
                }),
        );
    }
    resolved.sort_unstable();
    Ok(resolved)
}

/// The checks [`resolve`] makes of each pair (its position, row and key in range, no row listed
/// twice, one key a position and one position a key), a pair at a time: shared with the resolve
/// of a step past memory.
pub(crate) struct PairCheck {
    positions: usize,
    joiner_rows: usize,
    joiner_keys: usize,
    rows_seen: HashSet<usize>,
    key_at: HashMap<usize, usize>,
    position_of: HashMap<usize, usize>,
}

impl PairCheck {
    /// The checks of `pairs` against a setup of `positions` positions.
    pub(crate) fn new(pairs: &Pairs, positions: usize) -> Self {
        Self {
            positions,
            joiner_rows: pairs.joiner_rows,
            joiner_keys: pairs.joiner_keys,
            rows_seen: HashSet::with_capacity(pairs.pairs.len()),
            key_at: HashMap::new(),
            position_of: HashMap::new(),
        }
    }

    /// Checks pair number `n` (1-based), after the pairs before it.
    pub(crate) fn check(&mut self, n: usize, pair: &Pair) -> Result<(), LinkageError> {
        let &Pair {
            joiner_row,
            joiner_key,
            setup_position,
        } = pair;
        if setup_position >= self.positions {
            return Err(LinkageError::PositionOutOfRange {
                pair: n,
                position: setup_position,
                positions: self.positions,
            });
        }
        if joiner_row >= self.joiner_rows {
            return Err(LinkageError::JoinerRowOutOfRange {
                pair: n,
                row: joiner_row.saturating_add(1),
                rows: self.joiner_rows,
            });
        }
        if joiner_key >= self.joiner_keys {
            return Err(LinkageError::JoinerKeyOutOfRange {
                pair: n,
                key: joiner_key,
                keys: self.joiner_keys,
            });
        }
        if !self.rows_seen.insert(joiner_row) {
            return Err(LinkageError::RowListedTwice {
                pair: n,
                row: joiner_row + 1,
            });
        }
        let first = *self.key_at.entry(setup_position).or_insert(joiner_key);
        if first != joiner_key {
            return Err(LinkageError::PositionClaimedTwice {
                pair: n,
                position: setup_position,
                first,
                second: joiner_key,
            });
        }
        let first = *self.position_of.entry(joiner_key).or_insert(setup_position);
        if first != setup_position {
            return Err(LinkageError::KeyAtTwoPositions {
                pair: n,
                key: joiner_key,
                first,
                second: setup_position,
            });
        }
        Ok(())
    }
}

/// Checks that each position of `permutation` holds exactly the rows of one distinct key of
/// `keys`, and each key one position: a permutation spliced from another file, or with rows
/// moved between positions of different keys, fails here even with matching header digests.
fn check_groups(permutation: &Permutation, keys: &KeyTable) -> Result<(), LinkageError> {
    let invalid = |what: String| Err(LinkageError::InvalidPermutation(what));
    if permutation.positions() != keys.len() {
        return invalid(format!(
            "it has {} setup positions but the input has {} distinct keys",
            permutation.positions(),
            keys.len()
        ));
    }
    let mut key_of_row = vec![None; keys.row_count()];
    for key in 0..keys.len() {
        for &row in keys.rows(key) {
            key_of_row[row] = Some(key);
        }
    }
    let mut placed = vec![false; keys.len()];
    for position in 0..permutation.positions() {
        let rows = permutation.rows_at(position);
        let key = rows
            .first()
            .and_then(|&row| key_of_row.get(row).copied().flatten());
        match key {
            Some(key) if keys.rows(key) == rows && !placed[key] => placed[key] = true,
            _ => {
                return invalid(format!(
                    "setup position {position} does not hold exactly the rows of one key of the input"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(keys: &[&str]) -> KeyTable {
        KeyTable::build(keys.iter().map(|k| k.as_bytes().to_vec()))
    }

    /// A starter with keys b, a, "", b (rows 0-3), its setup sorted a, b; a joiner with keys
    /// x, b, b, a (rows 0-3, request indexes x=0, b=1, a=2).
    fn round() -> (KeyTable, Permutation, Pairs) {
        let starter = table(&["b", "a", "", "b"]);
        let setup = Digest::of(b"setup");
        let permutation = Permutation::new(&[1, 0], &starter, setup).unwrap();
        let joiner = table(&["x", "b", "b", "a"]);
        let association = [
            Match {
                setup_position: 0,
                joiner_index: 2,
            },
            Match {
                setup_position: 1,
                joiner_index: 1,
            },
        ];
        let pairs = Pairs::from_table(&association, &joiner, setup).unwrap();
        (starter, permutation, pairs)
    }

    #[test]
    fn an_honest_round_resolves_to_every_row_pair() {
        let (starter, permutation, pairs) = round();
        assert_eq!((pairs.joiner_rows, pairs.joiner_keys), (4, 3));
        // Keys numbered by first row: "b" (rows 1, 2) is key 0, "a" (row 3) key 1.
        assert_eq!(
            pairs.pairs,
            [
                Pair {
                    joiner_row: 1,
                    joiner_key: 0,
                    setup_position: 1
                },
                Pair {
                    joiner_row: 2,
                    joiner_key: 0,
                    setup_position: 1
                },
                Pair {
                    joiner_row: 3,
                    joiner_key: 1,
                    setup_position: 0
                },
            ]
        );
        let rows: Vec<(usize, usize)> = resolve(&permutation, &starter, &pairs)
            .unwrap()
            .iter()
            .map(|p| (p.joiner_row, p.starter_row))
            .collect();
        assert_eq!(rows, [(1, 0), (1, 3), (2, 0), (2, 3), (3, 1)]);
    }

    #[test]
    fn another_input_is_refused() {
        let (_, permutation, pairs) = round();
        let reordered = table(&["a", "b", "", "b"]);
        assert_eq!(
            resolve(&permutation, &reordered, &pairs),
            Err(LinkageError::KeysChanged)
        );
        let longer = table(&["b", "a", "", "b", "c"]);
        assert_eq!(
            resolve(&permutation, &longer, &pairs),
            Err(LinkageError::RowCountChanged { then: 4, now: 5 })
        );
    }

    #[test]
    fn a_spliced_permutation_is_refused() {
        let (starter, permutation, pairs) = round();
        let d = permutation.setup_digest();
        // A row of "a" moved to the position of "b", digests kept.
        let moved =
            Permutation::from_entries(4, starter.digest(), d, 2, &[(0, 1), (0, 0), (1, 3)], None)
                .unwrap();
        assert_eq!(
            resolve(&moved, &starter, &pairs).unwrap_err().to_string(),
            "the permutation is invalid: setup position 0 does not hold exactly the rows of one key of the input"
        );
        // A row of "b" left at "a"'s position.
        let split =
            Permutation::from_entries(4, starter.digest(), d, 2, &[(0, 1), (0, 3), (1, 0)], None)
                .unwrap();
        assert!(matches!(
            resolve(&split, &starter, &pairs),
            Err(LinkageError::InvalidPermutation(_))
        ));
    }

    #[test]
    fn pairs_of_another_setup_are_refused() {
        let (starter, permutation, mut pairs) = round();
        pairs.setup_digest = Digest::of(b"another setup");
        let err = resolve(&permutation, &starter, &pairs).unwrap_err();
        assert!(matches!(err, LinkageError::OtherSetup { .. }), "{err}");
    }

    #[test]
    fn pairs_no_honest_joiner_sends_are_refused() {
        let (starter, permutation, pairs) = round();
        let forged = |edit: &dyn Fn(&mut Pairs)| {
            let mut p = pairs.clone();
            edit(&mut p);
            resolve(&permutation, &starter, &p).unwrap_err().to_string()
        };
        assert_eq!(
            forged(&|p| p.pairs[0].setup_position = 2),
            "pair 1: setup position 2 is outside the setup's 2 positions"
        );
        assert_eq!(
            forged(&|p| p.pairs[2].joiner_row = 4),
            "pair 3: joiner row 5 is beyond the joiner's 4 rows"
        );
        assert_eq!(
            forged(&|p| p.pairs[1].joiner_key = 3),
            "pair 2: joiner key 3 is beyond the joiner's 3 keys"
        );
        assert_eq!(
            forged(&|p| p.pairs[1].joiner_row = 1),
            "pair 2: joiner row 2 is listed twice"
        );
        assert_eq!(
            forged(&|p| p.pairs[2].setup_position = 1),
            "pair 3: setup position 1 is claimed by joiner keys 0 and 1; it holds one key, so no honest joiner matches it twice"
        );
        assert_eq!(
            forged(&|p| p.pairs[1].setup_position = 0),
            "pair 2: joiner key 0 claims setup positions 1 and 0; positions hold distinct keys, so no honest joiner matches one key twice"
        );
    }
}
