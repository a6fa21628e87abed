//! Keys of rows: which fields form them, and the distinct keys of a table.
//!
//! # Keys
//! - One column: the key is the field's bytes, exactly (so it interoperates with any other
//!   OpenMined PSI user hashing the same strings).
//! - Several columns: the key is the concatenation of `<byte length>:<field>` for each column in
//!   order (`3:Ada10:1815-12-10`), which no two different field lists share.
//! - Normalized: each field is trimmed, lowercased and its runs of whitespace collapsed to one
//!   space before joining (it must be UTF-8 then).
//!
//! A row whose key is empty (every key field empty) is left out of the set and reported, never
//! silently matched.

use std::collections::HashMap;

use sha2::{Digest as _, Sha256};

use super::{Digest, LinkageError, quoted, quoted_list};

/// Which columns form a key, by name, and whether fields are normalized.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeySpec {
    /// The columns forming the key, in order.
    pub columns: Vec<String>,
    /// Trim, lowercase and collapse whitespace in each field.
    pub normalize: bool,
}

/// A [`KeySpec`] located in a header (or a one-value-per-row input): the key of any row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyColumns {
    /// Field indexes of the key's columns, in key order.
    indexes: Vec<usize>,
    /// Their names, quoted for errors.
    names: Vec<String>,
    normalize: bool,
}

impl KeySpec {
    /// Finds the key's columns in `header` (the header row's fields).
    ///
    /// # Errors
    /// [`LinkageError::NoColumns`] for a spec without columns; [`LinkageError::MissingColumn`]
    /// for a column not in the header; [`LinkageError::DuplicateColumn`] for a key column whose
    /// name the header holds twice (which of the two would be ambiguous).
    pub fn locate(&self, header: &[&[u8]]) -> Result<KeyColumns, LinkageError> {
        if self.columns.is_empty() {
            return Err(LinkageError::NoColumns);
        }
        let mut indexes = Vec::with_capacity(self.columns.len());
        for name in &self.columns {
            let mut at = header
                .iter()
                .enumerate()
                .filter(|(_, h)| **h == name.as_bytes())
                .map(|(i, _)| i);
            let first = at.next().ok_or_else(|| LinkageError::MissingColumn {
                column: quoted(name.as_bytes()),
                header: quoted_list(header.iter().copied()),
            })?;
            if let Some(second) = at.next() {
                return Err(LinkageError::DuplicateColumn {
                    column: quoted(name.as_bytes()),
                    first: first + 1,
                    second: second + 1,
                });
            }
            indexes.push(first);
        }
        Ok(KeyColumns {
            indexes,
            names: self.columns.iter().map(|c| quoted(c.as_bytes())).collect(),
            normalize: self.normalize,
        })
    }
}

impl KeyColumns {
    /// The key of an input with one value per row and no header (field 0, named `value`).
    pub fn whole_row(normalize: bool) -> Self {
        Self {
            indexes: vec![0],
            names: vec!["\"value\"".to_owned()],
            normalize,
        }
    }

    /// The key of data row `row` (0-based, for errors) whose fields `field(i)` gives.
    ///
    /// # Errors
    /// [`LinkageError::MissingField`] if `field` has nothing for a key column;
    /// [`LinkageError::NotUtf8`] for a non-UTF-8 field under normalization.
    pub fn key<'a>(
        &self,
        row: usize,
        field: impl Fn(usize) -> Option<&'a [u8]>,
    ) -> Result<Vec<u8>, LinkageError> {
        let value = |position: usize| -> Result<Vec<u8>, LinkageError> {
            let raw = field(self.indexes[position]).ok_or_else(|| LinkageError::MissingField {
                row: row + 1,
                column: self.names[position].clone(),
            })?;
            if !self.normalize {
                return Ok(raw.to_vec());
            }
            let text = std::str::from_utf8(raw).map_err(|_| LinkageError::NotUtf8 {
                row: row + 1,
                column: self.names[position].clone(),
            })?;
            Ok(normalize(text).into_bytes())
        };
        if self.indexes.len() == 1 {
            return value(0);
        }
        let mut key = Vec::new();
        let mut all_empty = true;
        for position in 0..self.indexes.len() {
            let value = value(position)?;
            all_empty &= value.is_empty();
            key.extend_from_slice(format!("{}:", value.len()).as_bytes());
            key.extend_from_slice(&value);
        }
        // A composite key of empty fields only is as empty as a missing single key.
        Ok(if all_empty { Vec::new() } else { key })
    }
}

/// Trims, lowercases and collapses each run of whitespace into one space.
pub fn normalize(text: &str) -> String {
    text.split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every row's key, grouped into distinct keys in order of first appearance.
///
/// # Invariants
/// `values` are distinct and non-empty; `rows(k)` is ascending and non-empty; every row is in
/// exactly one of `rows(k)` or `empty_rows`; the digest covers every row's key in row order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyTable {
    values: Vec<Vec<u8>>,
    rows: Vec<Vec<usize>>,
    empty_rows: Vec<usize>,
    row_count: usize,
    digest: Digest,
}

/// Builds a [`KeyTable`] one row at a time.
pub struct KeyTableBuilder {
    table: KeyTable,
    index: HashMap<Vec<u8>, usize>,
    digest: KeyDigest,
}

/// The key-column digest (see [`KeyTable::digest`]), fed a row's key at a time: one definition
/// for the table built in memory and the index sorted on disk.
#[derive(Clone)]
pub(crate) struct KeyDigest(Sha256);

impl KeyDigest {
    pub(crate) fn new() -> Self {
        Self(Sha256::new().chain_update(KEY_DIGEST_DOMAIN))
    }

    /// Adds the next row's key (empty for a row left out).
    pub(crate) fn push(&mut self, key: &[u8]) {
        self.0.update((key.len() as u64).to_le_bytes());
        self.0.update(key);
    }

    pub(crate) fn finish(self) -> Digest {
        Digest::from_hasher(self.0)
    }
}

/// What the key-column digest starts with, so it is never the digest of anything else.
const KEY_DIGEST_DOMAIN: &[u8] = b"lockstep psi key column v1\0";

impl Default for KeyTableBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl KeyTableBuilder {
    /// An empty table.
    pub fn new() -> Self {
        Self {
            table: KeyTable {
                values: Vec::new(),
                rows: Vec::new(),
                empty_rows: Vec::new(),
                row_count: 0,
                digest: Digest::of(b""),
            },
            index: HashMap::new(),
            digest: KeyDigest::new(),
        }
    }

    /// Adds the next row's key (empty: the row is left out).
    pub fn push(&mut self, key: Vec<u8>) {
        let row = self.table.row_count;
        self.table.row_count += 1;
        self.digest.push(&key);
        if key.is_empty() {
            self.table.empty_rows.push(row);
            return;
        }
        match self.index.get(&key) {
            Some(&k) => self.table.rows[k].push(row),
            None => {
                self.index.insert(key.clone(), self.table.values.len());
                self.table.values.push(key);
                self.table.rows.push(vec![row]);
            }
        }
    }

    /// The table of the rows pushed.
    pub fn finish(mut self) -> KeyTable {
        self.table.digest = self.digest.finish();
        self.table
    }
}

impl KeyTable {
    /// The table of `keys`, one per row in row order.
    pub fn build(keys: impl IntoIterator<Item = Vec<u8>>) -> Self {
        let mut builder = KeyTableBuilder::new();
        keys.into_iter().for_each(|k| builder.push(k));
        builder.finish()
    }

    /// Each distinct non-empty key once, in order of first appearance: the values to mask.
    pub fn values(&self) -> &[Vec<u8>] {
        &self.values
    }

    /// The number of distinct keys.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no row has a non-empty key.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The rows (ascending) holding distinct key `key`; empty for an index out of range.
    pub fn rows(&self, key: usize) -> &[usize] {
        self.rows.get(key).map_or(&[], Vec::as_slice)
    }

    /// The rows of any of `keys`, ascending.
    pub fn rows_of(&self, keys: &[usize]) -> Vec<usize> {
        let mut rows: Vec<usize> = keys.iter().flat_map(|&k| self.rows(k)).copied().collect();
        rows.sort_unstable();
        rows
    }

    /// The rows (ascending) whose key is empty, left out of the set.
    pub fn empty_rows(&self) -> &[usize] {
        &self.empty_rows
    }

    /// Every row counted, including those left out.
    pub fn row_count(&self) -> usize {
        self.row_count
    }

    /// The digest of every row's key in row order (a domain-separated SHA-256 over each key's
    /// length and bytes): equal for the same keys in the same rows, different otherwise.
    pub fn digest(&self) -> Digest {
        self.digest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(names: &[&str]) -> Vec<Vec<u8>> {
        names.iter().map(|n| n.as_bytes().to_vec()).collect()
    }

    fn spec(columns: &[&str], normalize: bool) -> KeySpec {
        KeySpec {
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            normalize,
        }
    }

    fn table(columns: &KeyColumns, rows: &[&[&str]]) -> Result<KeyTable, LinkageError> {
        let mut builder = KeyTableBuilder::new();
        for (row, fields) in rows.iter().enumerate() {
            builder.push(columns.key(row, |i| fields.get(i).map(|f| f.as_bytes()))?);
        }
        Ok(builder.finish())
    }

    fn locate(names: &[&str], spec: &KeySpec) -> Result<KeyColumns, LinkageError> {
        let header = header(names);
        let fields: Vec<&[u8]> = header.iter().map(Vec::as_slice).collect();
        spec.locate(&fields)
    }

    #[test]
    fn single_columns_are_exact_bytes_and_grouped() {
        let rows: [&[&str]; 4] = [&["1", "a@x"], &["2", " A@X "], &["3", "a@x"], &["4", ""]];
        let exact = locate(&["id", "email"], &spec(&["email"], false)).unwrap();
        let keys = table(&exact, &rows).unwrap();
        assert_eq!(keys.values(), [b"a@x".to_vec(), b" A@X ".to_vec()]);
        assert_eq!(keys.rows(0), [0, 2]);
        assert_eq!(keys.rows(1), [1]);
        assert_eq!(keys.empty_rows(), [3]);
        assert_eq!(keys.row_count(), 4);
        assert_eq!(keys.rows_of(&[1, 0]), [0, 1, 2]);
        let normalized = locate(&["id", "email"], &spec(&["email"], true)).unwrap();
        let keys = table(&normalized, &rows).unwrap();
        assert_eq!(keys.values(), [b"a@x".to_vec()]);
        assert_eq!(keys.rows(0), [0, 1, 2]);
    }

    #[test]
    fn composite_keys_are_unambiguous() {
        let columns = locate(&["a", "b"], &spec(&["a", "b"], false)).unwrap();
        let keys = table(&columns, &[&["ab", "c"], &["a", "bc"], &["", ""]]).unwrap();
        assert_eq!(keys.values(), [b"2:ab1:c".to_vec(), b"1:a2:bc".to_vec()]);
        assert_eq!(keys.empty_rows(), [2]);
        assert_eq!(normalize("  Ada \t LOVELACE\n"), "ada lovelace");
    }

    #[test]
    fn the_digest_sees_order_edits_and_empty_rows() {
        let whole = KeyColumns::whole_row(false);
        let digest = |rows: &[&[&str]]| table(&whole, rows).unwrap().digest();
        let base = digest(&[&["a"], &["b"], &[""]]);
        assert_eq!(base, digest(&[&["a"], &["b"], &[""]]));
        assert_ne!(base, digest(&[&["b"], &["a"], &[""]]));
        assert_ne!(base, digest(&[&["a"], &["c"], &[""]]));
        assert_ne!(base, digest(&[&["a"], &["b"]]));
        assert_ne!(base, digest(&[&["a"], &["b"], &[""], &[""]]));
        // Length prefixes: ["ab"] and ["a", "b"] differ.
        assert_ne!(digest(&[&["ab"]]), digest(&[&["a"], &["b"]]));
    }

    #[test]
    fn clear_errors() {
        let err = locate(&["id", "email"], &spec(&["mail"], false)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no column named \"mail\"; the header has \"id\", \"email\""
        );
        let wide: Vec<String> = (0..100).map(|i| format!("column{i}")).collect();
        let wide: Vec<&str> = wide.iter().map(String::as_str).collect();
        let err = locate(&wide, &spec(&["mail"], false)).unwrap_err();
        assert!(err.to_string().len() < 260, "{err}");
        let err = locate(&["email", "id", "email"], &spec(&["email"], false)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the header names column \"email\" twice (columns 1 and 3): the key would be ambiguous"
        );
        // A duplicate column not used by the key is harmless.
        assert!(locate(&["x", "id", "x"], &spec(&["id"], false)).is_ok());
        assert_eq!(
            locate(&["id"], &spec(&[], false)).unwrap_err(),
            LinkageError::NoColumns
        );
        let columns = locate(&["k"], &spec(&["k"], true)).unwrap();
        let err = columns.key(0, |_| Some(&b"\xff"[..])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "row 1, column \"k\" is not UTF-8 text, which normalization needs"
        );
        let err = columns.key(4, |_| None).unwrap_err();
        assert_eq!(err.to_string(), "row 5 has no field for column \"k\"");
    }
}
