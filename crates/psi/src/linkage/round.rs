//! A round of record linkage, step by step: what a party's records become on the wire, and what
//! the answers become in rows. Every front end runs these, so the CLI, wasm and Node give the
//! same bytes for the same records and key.
//!
//! - [`Party`]: a party's records and their distinct keys (each masked once, in order of first
//!   appearance; rows with an empty key left out and counted).
//! - [`setup`]: the starter's setup message over its distinct keys, with the raw form's
//!   [`Permutation`] tied to the message's digest.
//! - [`request`]: the joiner's request over its distinct keys.
//! - [`intersect`]: the joiner's matched rows (and, after a raw setup, its [`Pairs`] for the
//!   starter), or the intersection's size.
//! - [`write_resolved`]: the starter's matched row pairs as CSV.

use std::io::{Read, Write};

use lockstep_shard::{Control, Pool};

use super::{Digest, FileError, KeySpec, KeyTable, Pairs, Permutation, Records, RowPair};
use crate::{Element, Joiner, PsiError, Request, Response, ServerSetup, SetupParams, Starter};

/// A party's records and their distinct keys under one key spec.
///
/// # Invariant
/// `keys` is the key table of `records` under the spec it was read with, and holds at least one
/// key.
#[derive(Clone, Debug)]
pub struct Party {
    records: Records,
    keys: KeyTable,
}

impl Party {
    /// Reads a party's record file (see [`Records::read`]) and takes every row's key.
    ///
    /// # Errors
    /// As [`Records::read`] and [`Records::keys`]; [`FileError::NoKeys`] if no row has a key.
    pub fn read(reader: impl Read, spec: &KeySpec) -> Result<Self, FileError> {
        Self::from_records(Records::read(reader, spec)?, spec)
    }

    /// A party of `records` keyed by `spec`.
    ///
    /// # Errors
    /// As [`Records::keys`]; [`FileError::NoKeys`] if no row has a key.
    pub fn from_records(records: Records, spec: &KeySpec) -> Result<Self, FileError> {
        let keys = records.keys(spec)?;
        if keys.is_empty() {
            return Err(FileError::NoKeys);
        }
        Ok(Self { records, keys })
    }

    /// The records.
    pub fn records(&self) -> &Records {
        &self.records
    }

    /// Their distinct keys.
    pub fn keys(&self) -> &KeyTable {
        &self.keys
    }

    /// The records and their distinct keys (at least one), for a front end that keeps them.
    pub fn into_parts(self) -> (Records, KeyTable) {
        (self.records, self.keys)
    }
}

/// A starter's setup, ready to send, and what it keeps.
#[derive(Clone, Debug)]
pub struct LinkedSetup {
    /// The message.
    pub message: ServerSetup,
    /// Its bytes, as sent.
    pub bytes: Vec<u8>,
    /// A raw setup's map from positions to the starter's rows, tied to `bytes` by their digest;
    /// `None` for GCS and Bloom setups, which carry no positions.
    pub permutation: Option<Permutation>,
}

/// The starter's setup over its distinct keys, in order of first appearance.
///
/// # Errors
/// As [`Starter::setup`].
pub fn setup(
    starter: &Starter,
    pool: &Pool,
    control: &Control,
    keys: &KeyTable,
    params: &SetupParams,
) -> Result<LinkedSetup, PsiError> {
    params.check(keys.len())?;
    let masked = starter.mask(pool, control, keys.values())?;
    setup_from_masked(pool, control, keys, masked, params)
}

/// [`setup`] from the distinct keys already masked (in order; whole, or concatenated from parts
/// masked elsewhere: the same bytes either way).
///
/// # Errors
/// As [`Starter::setup_from_masked`].
///
/// # Panics
/// Never: the setup's permutation orders the keys it was made from (an invariant, once the
/// caller gives one masked element per key, which is checked).
pub fn setup_from_masked(
    pool: &Pool,
    control: &Control,
    keys: &KeyTable,
    masked: Vec<Element>,
    params: &SetupParams,
) -> Result<LinkedSetup, PsiError> {
    if masked.len() != keys.len() {
        return Err(PsiError::Runtime(format!(
            "{} masked elements for {} keys",
            masked.len(),
            keys.len()
        )));
    }
    let setup = Starter::setup_from_masked(pool, control, masked, params)?;
    let bytes = setup.message.to_bytes()?;
    let permutation = setup.permutation.as_deref().map(|order| {
        Permutation::new(order, keys, Digest::of(&bytes))
            .expect("invariant: the setup's permutation orders the keys it was made from")
    });
    Ok(LinkedSetup {
        message: setup.message,
        bytes,
        permutation,
    })
}

/// The joiner's request over its distinct keys, in order of first appearance: element `i`
/// masks `keys.values()[i]`, which [`intersect`] relies on.
///
/// # Errors
/// As [`Joiner::request`].
pub fn request(
    joiner: &Joiner,
    pool: &Pool,
    control: &Control,
    keys: &KeyTable,
) -> Result<Request, PsiError> {
    joiner.request(pool, control, keys.values())
}

/// A matched row of the joiner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchedRow {
    /// The 0-based row.
    pub row: usize,
    /// The setup position its key matched (raw setups only).
    pub setup_position: Option<usize>,
}

/// What the joiner learned from a round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intersection {
    /// Distinct keys found in the setup.
    pub size: usize,
    /// Every row whose key was found, ascending (empty when only the size was asked for).
    pub rows: Vec<MatchedRow>,
    /// After a raw setup (and not size-only), the pairs the starter resolves to its rows.
    pub pairs: Option<Pairs>,
    /// Whether the setup was raw (rows then carry positions).
    pub raw: bool,
}

/// What the joiner asks of [`intersect`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Learn {
    /// The matched rows (and, after a raw setup, the pairs).
    Rows,
    /// The intersection's size only (the only choice after a size-only request).
    Size,
}

/// The joiner's view of a round: the response (to the request of `keys`, made by
/// [`request`]) looked up in the setup, whose message bytes have digest `setup_digest`.
///
/// The caller checks the response against the request first
/// ([`Joiner::check_response`](crate::Joiner::check_response)).
///
/// # Errors
/// As [`Joiner::intersect`], [`Joiner::intersection_size`] and
/// [`Joiner::association_table`].
#[allow(clippy::too_many_arguments, reason = "one round's inputs, each needed")]
pub fn intersect(
    joiner: &Joiner,
    pool: &Pool,
    control: &Control,
    setup: &ServerSetup,
    setup_digest: Digest,
    response: &Response,
    keys: &KeyTable,
    learn: Learn,
) -> Result<Intersection, PsiError> {
    if response.elements.len() != keys.len() {
        return Err(PsiError::ResponseLength {
            response: response.elements.len(),
            request: keys.len(),
        });
    }
    setup.validate()?;
    let unmasked = joiner.unmask(pool, control, &response.elements, 0)?;
    intersect_unmasked(joiner, setup, setup_digest, &unmasked, keys, learn)
}

/// [`intersect`] from the response's elements already unmasked (in order; whole, or
/// concatenated from parts unmasked elsewhere: the same result either way).
///
/// # Errors
/// [`PsiError::ResponseLength`] for other than one element per key; as
/// [`Joiner::intersect_unmasked`], [`Joiner::intersection_size_unmasked`] and
/// [`Joiner::association_table_unmasked`].
///
/// # Panics
/// Never: the association table indexes the request of `keys` (an invariant, once the
/// length is checked).
pub fn intersect_unmasked(
    joiner: &Joiner,
    setup: &ServerSetup,
    setup_digest: Digest,
    unmasked: &[Element],
    keys: &KeyTable,
    learn: Learn,
) -> Result<Intersection, PsiError> {
    if unmasked.len() != keys.len() {
        return Err(PsiError::ResponseLength {
            response: unmasked.len(),
            request: keys.len(),
        });
    }
    let raw = matches!(setup, ServerSetup::Raw(_));
    if learn == Learn::Size {
        let size = Joiner::intersection_size_unmasked(setup, unmasked)?;
        return Ok(Intersection {
            size,
            rows: Vec::new(),
            pairs: None,
            raw,
        });
    }
    if !raw {
        let found = joiner.intersect_unmasked(setup, unmasked)?;
        let rows = keys
            .rows_of(&found)
            .into_iter()
            .map(|row| MatchedRow {
                row,
                setup_position: None,
            })
            .collect();
        return Ok(Intersection {
            size: found.len(),
            rows,
            pairs: None,
            raw,
        });
    }
    let table = joiner.association_table_unmasked(setup, unmasked)?;
    let pairs = Pairs::from_table(&table, keys, setup_digest)
        .expect("invariant: the association table indexes the request of these keys");
    let mut distinct: Vec<usize> = table.iter().map(|m| m.joiner_index).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let rows = pairs
        .pairs
        .iter()
        .map(|p| MatchedRow {
            row: p.joiner_row,
            setup_position: Some(p.setup_position),
        })
        .collect();
    Ok(Intersection {
        size: distinct.len(),
        rows,
        pairs: Some(pairs),
        raw,
    })
}

impl Intersection {
    /// Writes the matched rows as CSV: `joiner_row` (1-based) and, after a raw setup,
    /// `setup_position`, then the joiner's own columns.
    ///
    /// # Errors
    /// [`FileError::Write`] for a write failure.
    pub fn write_rows(&self, records: &Records, out: impl Write) -> Result<(), FileError> {
        if self.raw {
            let rows = self.rows.iter().map(|m| {
                let position = m.setup_position.map_or_else(String::new, |p| p.to_string());
                ([(m.row + 1).to_string(), position], m.row)
            });
            records.write_rows(out, ["joiner_row", "setup_position"], rows)
        } else {
            let rows = self.rows.iter().map(|m| ([(m.row + 1).to_string()], m.row));
            records.write_rows(out, ["joiner_row"], rows)
        }
    }
}

/// Writes the starter's matched row pairs (from [`resolve`](super::resolve)) as CSV:
/// `joiner_row`, `starter_row` (both 1-based), then the starter's own columns.
///
/// # Errors
/// [`FileError::Write`] for a write failure.
pub fn write_resolved(
    records: &Records,
    resolved: &[RowPair],
    out: impl Write,
) -> Result<(), FileError> {
    let rows = resolved.iter().map(|p| {
        let numbers = [
            (p.joiner_row + 1).to_string(),
            (p.starter_row + 1).to_string(),
        ];
        (numbers, p.starter_row)
    });
    records.write_rows(out, ["joiner_row", "starter_row"], rows)
}

/// The plain join of two key tables: every `(joiner row, starter row)` pair (0-based, sorted)
/// whose keys are equal. What a round's resolved pairs must equal; the reference for tests and
/// demos, with no cryptography.
pub fn plain_join(starter: &KeyTable, joiner: &KeyTable) -> Vec<RowPair> {
    let starter_rows: std::collections::HashMap<&[u8], &[usize]> = starter
        .values()
        .iter()
        .enumerate()
        .map(|(k, v)| (v.as_slice(), starter.rows(k)))
        .collect();
    let mut pairs = Vec::new();
    for (k, value) in joiner.values().iter().enumerate() {
        if let Some(rows) = starter_rows.get(value.as_slice()) {
            for &joiner_row in joiner.rows(k) {
                pairs.extend(rows.iter().map(|&starter_row| RowPair {
                    joiner_row,
                    starter_row,
                }));
            }
        }
    }
    pairs.sort_unstable();
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Backend, Key, Mode, SetupFormat};

    fn party(text: &str) -> Party {
        let spec = KeySpec {
            columns: vec!["email".to_owned()],
            normalize: true,
        };
        Party::read(text.as_bytes(), &spec).unwrap()
    }

    #[test]
    fn a_raw_round_matches_the_plain_join_duplicates_included() {
        let starter = party("id,email\ns1,ada@x\ns2,grace@x\ns3, ADA@x\ns4,\ns5,alan@x\n");
        let joiner = party("email,city\nalan@x,a\nada@x,b\nbob@x,c\nalan@x,d\n");
        let (pool, control) = (Pool::new(2).unwrap(), Control::new());
        let s = Starter::new(&Key::generate().unwrap(), Mode::Reveal, Backend::Portable).unwrap();
        let j = Joiner::new(&Key::generate().unwrap(), Mode::Reveal, Backend::Portable).unwrap();
        let params = SetupParams {
            format: SetupFormat::Raw,
            fpr: 1e-9,
            joiner_count: 3,
        };
        let linked = setup(&s, &pool, &control, starter.keys(), &params).unwrap();
        // Three distinct keys (ada twice), rows with an empty key left out.
        assert_eq!(starter.keys().len(), 3);
        assert_eq!(starter.keys().empty_rows(), [3]);
        let request = request(&j, &pool, &control, joiner.keys()).unwrap();
        assert_eq!(request.elements.len(), 3);
        let response = s.respond(&pool, &control, &request).unwrap();
        let found = intersect(
            &j,
            &pool,
            &control,
            &linked.message,
            Digest::of(&linked.bytes),
            &response,
            joiner.keys(),
            Learn::Rows,
        )
        .unwrap();
        assert_eq!(found.size, 2);
        assert_eq!(
            found.rows.iter().map(|m| m.row).collect::<Vec<_>>(),
            [0, 1, 3]
        );
        let permutation = linked.permutation.unwrap();
        let pairs = found.pairs.clone().unwrap();
        let resolved = super::super::resolve(&permutation, starter.keys(), &pairs).unwrap();
        assert_eq!(resolved, plain_join(starter.keys(), joiner.keys()));
        let mut out = Vec::new();
        write_resolved(starter.records(), &resolved, &mut out).unwrap();
        assert!(String::from_utf8(out).unwrap().starts_with(
            "joiner_row,starter_row,id,email\n1,5,s5,alan@x\n2,1,s1,ada@x\n2,3,s3, ADA@x\n"
        ));
        let mut out = Vec::new();
        found.write_rows(joiner.records(), &mut out).unwrap();
        assert!(
            String::from_utf8(out)
                .unwrap()
                .starts_with("joiner_row,setup_position,email,city\n1,"),
        );
        let size = intersect(
            &j,
            &pool,
            &control,
            &linked.message,
            Digest::of(&linked.bytes),
            &response,
            joiner.keys(),
            Learn::Size,
        )
        .unwrap();
        assert_eq!((size.size, size.rows.len(), size.pairs), (2, 0, None));
    }

    #[test]
    fn a_party_without_keys_is_refused() {
        let spec = KeySpec {
            columns: vec!["email".to_owned()],
            normalize: false,
        };
        let err = Party::read(&b"email\n\n\"\"\n"[..], &spec).unwrap_err();
        assert_eq!(
            err.in_file("x.csv").to_string(),
            "x.csv: no row has a non-empty key; nothing to intersect"
        );
    }
}
