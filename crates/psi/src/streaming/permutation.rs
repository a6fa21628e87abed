//! A raw setup's permutation file written as its entries come, in position then row order:
//! from the streamed setup's sort, or from a cluster's sort assembled on its driver.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use super::{LinkageFile, StreamingError};
use crate::linkage::link_files::{PermutationHead, PermutationRows, permutation_preamble};
use crate::linkage::{Digest, FileError, KeyDigest, KeySpec, LinkageError};

/// Writes a permutation file an entry at a time: the bytes
/// [`write_permutation`](crate::linkage::write_permutation) gives for the same entries.
///
/// The `#` lines name the entries' digest, so the entries go to an unnamed file in a folder of
/// the caller's until [`finish`](Self::finish) writes the lines, then copies them behind.
///
/// # Invariants
/// Entries come strictly ascending by `(position, row)`, positions from 0 without a gap (every
/// position has a row), and `finish` checks the positions' count and the highest row against
/// the facts; a pushed entry that breaks this is refused and nothing of it written. That a row
/// comes under one position only is the caller's to keep (its check needs every row at once; a
/// file breaking it is refused when read back): a setup's own sort gives each row once.
pub struct PermutationWriter {
    rows: PermutationRows<BufWriter<File>>,
    dir: std::path::PathBuf,
    last: Option<(usize, usize)>,
    /// The highest row pushed.
    top_row: usize,
}

/// What a permutation's `#` lines say besides its entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PermutationFacts {
    /// The starter's rows (every row, keyed or not).
    pub starter_rows: usize,
    /// The setup's positions (its elements).
    pub positions: usize,
    /// The digest of the starter's key column ([`KeyColumnDigest`]).
    pub key_digest: Digest,
    /// The SHA-256 of the setup message.
    pub setup_digest: Digest,
}

impl PermutationWriter {
    /// A writer whose entries wait in an unnamed file in `dir`.
    ///
    /// # Errors
    /// [`StreamingError::Index`] if the file cannot be made; [`StreamingError::Output`] if its
    /// column names cannot be written.
    pub fn new(dir: &Path) -> Result<Self, StreamingError> {
        let body = tempfile::tempfile_in(dir).map_err(|source| StreamingError::Index {
            dir: dir.to_owned(),
            source,
        })?;
        let rows = PermutationRows::new(BufWriter::with_capacity(1 << 16, body))
            .map_err(LinkageFile::Permutation.error())?;
        Ok(Self {
            rows,
            dir: dir.to_owned(),
            last: None,
            top_row: 0,
        })
    }

    /// Writes the entry `(setup position, 0-based starter row)`.
    ///
    /// # Errors
    /// [`LinkageError::InvalidPermutation`] for an entry out of order or a position skipped;
    /// [`StreamingError::Output`] if the file fails.
    pub fn push(&mut self, position: usize, row: usize) -> Result<(), StreamingError> {
        let next = self.last.map_or(0, |(last, _)| last + 1);
        let in_order = match self.last {
            None => position == 0,
            Some(last) => (position, row) > last && position <= next,
        };
        if !in_order {
            return Err(LinkageError::InvalidPermutation(format!(
                "entry (position {position}, row {row}) does not follow {}",
                self.last.map_or_else(
                    || "the start (position 0 first)".to_owned(),
                    |(p, r)| format!("(position {p}, row {r}) in position then row order")
                )
            ))
            .into());
        }
        self.rows
            .push(position, row)
            .map_err(LinkageFile::Permutation.error())?;
        self.last = Some((position, row));
        self.top_row = self.top_row.max(row);
        Ok(())
    }

    /// The positions pushed so far (one past the last entry's).
    pub fn positions(&self) -> usize {
        self.last.map_or(0, |(position, _)| position + 1)
    }

    /// Writes the `#` lines `facts` and `spec` give, then the entries, to `out`; returns it.
    ///
    /// # Errors
    /// [`LinkageError::InvalidPermutation`] if the entries cover another number of positions
    /// than `facts.positions`, or name a row at or past `facts.starter_rows`;
    /// [`StreamingError::Output`] and [`StreamingError::Index`] for the files.
    pub fn finish<W: Write>(
        self,
        facts: &PermutationFacts,
        spec: &KeySpec,
        mut out: W,
    ) -> Result<W, StreamingError> {
        if self.positions() != facts.positions {
            return Err(LinkageError::InvalidPermutation(format!(
                "its entries cover {} positions, the setup has {}",
                self.positions(),
                facts.positions
            ))
            .into());
        }
        if self.last.is_some() && self.top_row >= facts.starter_rows {
            return Err(LinkageError::InvalidPermutation(format!(
                "row {} is past the starter's {} rows",
                self.top_row + 1,
                facts.starter_rows
            ))
            .into());
        }
        let written = LinkageFile::Permutation.error();
        let index_error = |source| StreamingError::Index {
            dir: self.dir.clone(),
            source,
        };
        let (body, entries_digest) = self.rows.finish().map_err(&written)?;
        let mut body = body.into_inner().map_err(|e| index_error(e.into_error()))?;
        body.seek(SeekFrom::Start(0)).map_err(index_error)?;
        let head = PermutationHead {
            starter_rows: facts.starter_rows,
            positions: facts.positions,
            key_digest: facts.key_digest,
            setup_digest: facts.setup_digest,
            entries_digest,
        };
        let preamble = permutation_preamble(&head, spec).map_err(&written)?;
        out.write_all(preamble.as_bytes())
            .and_then(|()| std::io::copy(&mut body, &mut out).map(drop))
            .and_then(|()| out.flush())
            .map_err(|e| written(FileError::Write(e)))?;
        Ok(out)
    }
}

/// The digest of a starter's key column ([`KeyTable::digest`](crate::linkage::KeyTable::digest)),
/// fed every row's key in row order (empty for a row without one), with the rows counted: what a
/// permutation made elsewhere than from a record file names.
#[derive(Clone)]
pub struct KeyColumnDigest {
    digest: KeyDigest,
    rows: usize,
}

impl Default for KeyColumnDigest {
    fn default() -> Self {
        Self::new()
    }
}

impl KeyColumnDigest {
    /// No rows yet.
    pub fn new() -> Self {
        Self {
            digest: KeyDigest::new(),
            rows: 0,
        }
    }

    /// Adds the next row's key.
    pub fn push(&mut self, key: &[u8]) {
        self.digest.push(key);
        self.rows += 1;
    }

    /// The rows pushed.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The digest.
    pub fn finish(self) -> Digest {
        self.digest.finish()
    }
}
