//! A record file's distinct keys, indexed on disk.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use lockstep_shard::spill::ExternalSort;
use lockstep_shard::{Control, Pool};
use sha2::{Digest as _, Sha256};

use super::{Budget, StreamingError};
use crate::PsiError;
use crate::linkage::{Digest, KeyDigest, KeyReader};

/// Rows read between two cancellation checks and progress reports.
const CANCEL_CHECK: usize = 1 << 12;

/// A `(SHA-256 of the key, row)` record: sorted, equal keys are adjacent, their rows ascending.
type HashRow = [u8; 40];

/// A `(first row of the key, row)` record: sorted, keys come in order of first appearance,
/// each key's rows ascending.
type FirstRow = [u8; 16];

/// A record file's keys as [`KeyTable`](crate::linkage::KeyTable) holds them (distinct keys in
/// order of first appearance, each with its rows ascending; rows with an empty key left out and
/// counted; the key-column digest), kept on disk: memory does not grow with the rows.
///
/// # Invariants
/// Its folder holds `keys` (every row's key in row order, each as its length, 8 bytes little
/// endian, then its bytes; an empty key for a row left out) and `rows` (the `(first row, row)`
/// records of every row with a key, sorted). Both are removed when the index is dropped.
#[derive(Debug)]
pub struct KeyIndex {
    folder: tempfile::TempDir,
    distinct: usize,
    keyed_rows: u64,
    row_count: usize,
    empty_rows: usize,
    first_empty_row: Option<usize>,
    digest: Digest,
}

impl KeyIndex {
    /// Reads every row's key from `reader` and indexes them, in a new folder in `budget.dir`.
    ///
    /// Progress: one step per row read (the rows' count is not known before the end).
    ///
    /// # Errors
    /// [`StreamingError::Input`] as the reader's; [`StreamingError::Spill`] from the sorts (the
    /// disk, cancellation); [`StreamingError::Index`] for the index's own files;
    /// [`PsiError::Cancelled`].
    pub fn build<R: Read>(
        mut reader: KeyReader<R>,
        budget: &Budget<'_>,
        pool: &Pool,
        control: &Control,
    ) -> Result<Self, StreamingError> {
        let folder = tempfile::Builder::new()
            .prefix(".lockstep-index-")
            .tempdir_in(budget.dir)
            .map_err(|source| StreamingError::Index {
                dir: budget.dir.to_owned(),
                source,
            })?;
        let io = |source| StreamingError::Index {
            dir: folder.path().to_owned(),
            source,
        };
        let mut keys =
            BufWriter::with_capacity(1 << 16, create(folder.path(), "keys").map_err(io)?);
        let mut by_hash = ExternalSort::<40>::new(&budget.spill(2))?;
        let mut digest = KeyDigest::new();
        let (mut empty_rows, mut first_empty_row) = (0, None);
        let mut reported = 0;
        while let Some(key) = reader.next_key()? {
            let row = reader.rows() - 1;
            if row.is_multiple_of(CANCEL_CHECK) && row > 0 {
                if control.is_cancelled() {
                    return Err(PsiError::Cancelled.into());
                }
                control.progress().advance(CANCEL_CHECK as u64);
                reported += CANCEL_CHECK;
            }
            digest.push(&key);
            keys.write_all(&(key.len() as u64).to_le_bytes())
                .and_then(|()| keys.write_all(&key))
                .map_err(io)?;
            if key.is_empty() {
                empty_rows += 1;
                first_empty_row.get_or_insert(row);
                continue;
            }
            let mut record: HashRow = [0; 40];
            record[..32].copy_from_slice(&Sha256::digest(&key));
            record[32..].copy_from_slice(&(row as u64).to_be_bytes());
            by_hash.push(pool, control, record)?;
        }
        keys.into_inner().map_err(|e| e.into_error()).map_err(io)?;
        let row_count = reader.rows();
        control.progress().advance((row_count - reported) as u64);

        // Equal keys are adjacent, the first of them at their first row.
        let mut by_first = ExternalSort::<16>::new(&budget.spill(2))?;
        let mut current: Option<([u8; 32], [u8; 8])> = None;
        let mut distinct = 0;
        for record in by_hash.finish(pool, control)? {
            let record = record?;
            let (hash, row) = split_hash_row(&record);
            let first = match current {
                Some((h, first)) if h == hash => first,
                _ => {
                    current = Some((hash, row));
                    distinct += 1;
                    row
                }
            };
            let mut pair: FirstRow = [0; 16];
            pair[..8].copy_from_slice(&first);
            pair[8..].copy_from_slice(&row);
            by_first.push(pool, control, pair)?;
        }
        let keyed_rows = by_first.len();
        let mut rows =
            BufWriter::with_capacity(1 << 16, create(folder.path(), "rows").map_err(io)?);
        for pair in by_first.finish(pool, control)? {
            rows.write_all(&pair?).map_err(io)?;
        }
        rows.into_inner().map_err(|e| e.into_error()).map_err(io)?;
        Ok(Self {
            folder,
            distinct,
            keyed_rows,
            row_count,
            empty_rows,
            first_empty_row,
            digest: digest.finish(),
        })
    }

    /// The number of distinct keys.
    pub fn len(&self) -> usize {
        self.distinct
    }

    /// Whether no row has a key.
    pub fn is_empty(&self) -> bool {
        self.distinct == 0
    }

    /// Every row counted, including those left out.
    pub fn row_count(&self) -> usize {
        self.row_count
    }

    /// The rows left out for an empty key.
    pub fn empty_rows(&self) -> usize {
        self.empty_rows
    }

    /// The first (0-based) row left out for an empty key.
    pub fn first_empty_row(&self) -> Option<usize> {
        self.first_empty_row
    }

    /// The key-column digest, [`KeyTable::digest`](crate::linkage::KeyTable::digest)'s.
    pub fn digest(&self) -> Digest {
        self.digest
    }

    /// The distinct keys in order of first appearance: what
    /// [`KeyTable::values`](crate::linkage::KeyTable::values) holds, read back from disk.
    ///
    /// # Errors
    /// [`StreamingError::Index`] if the index's files cannot be opened.
    pub fn first_keys(&self) -> Result<FirstKeys, StreamingError> {
        Ok(FirstKeys {
            rows: BufReader::with_capacity(1 << 16, self.open("rows")?),
            left: self.keyed_rows,
            keys: BufReader::with_capacity(1 << 16, self.open("keys")?),
            next_row: 0,
            dir: self.folder.path().to_owned(),
        })
    }

    /// Each distinct key's rows (ascending), keys in order of first appearance: what
    /// [`KeyTable::rows`](crate::linkage::KeyTable::rows) gives for `0..len()`. One key's rows
    /// are in memory at a time.
    ///
    /// # Errors
    /// [`StreamingError::Index`] if the index's files cannot be opened.
    pub fn groups(&self) -> Result<Groups, StreamingError> {
        Ok(Groups {
            rows: BufReader::with_capacity(1 << 16, self.open("rows")?),
            left: self.keyed_rows,
            ahead: None,
            dir: self.folder.path().to_owned(),
        })
    }

    /// Each key's rows, a key at a time, without holding them (see [`KeyRows`]).
    pub(crate) fn key_rows(&self) -> Result<KeyRows, StreamingError> {
        Ok(KeyRows {
            rows: BufReader::with_capacity(1 << 16, self.open("rows")?),
            left: self.keyed_rows,
            group: 0,
            group_first: None,
            ahead: None,
            dir: self.folder.path().to_owned(),
        })
    }

    /// Every keyed row's `(first row of its key, row)` record, sorted (big-endian): the order a
    /// permutation's positions, each given by its first row, must give too.
    pub(crate) fn first_row_records(
        &self,
    ) -> Result<impl Iterator<Item = std::io::Result<[u8; 16]>>, StreamingError> {
        let mut rows = BufReader::with_capacity(1 << 16, self.open("rows")?);
        let mut left = self.keyed_rows;
        Ok(std::iter::from_fn(move || {
            (left > 0).then(|| {
                left -= 1;
                let mut record = [0u8; 16];
                rows.read_exact(&mut record).map(|()| record)
            })
        }))
    }

    /// The folder its files are in.
    pub(crate) fn dir(&self) -> &Path {
        self.folder.path()
    }

    fn open(&self, name: &str) -> Result<File, StreamingError> {
        File::open(self.folder.path().join(name)).map_err(|source| StreamingError::Index {
            dir: self.folder.path().to_owned(),
            source,
        })
    }
}

fn create(dir: &Path, name: &str) -> std::io::Result<File> {
    File::create_new(dir.join(name))
}

fn split_hash_row(record: &HashRow) -> ([u8; 32], [u8; 8]) {
    let hash = record[..32].try_into().expect("invariant: 32 of 40 bytes");
    let row = record[32..].try_into().expect("invariant: 8 of 40 bytes");
    (hash, row)
}

fn row_at(bytes: &[u8]) -> usize {
    let row = u64::from_be_bytes(bytes.try_into().expect("invariant: a row is 8 bytes"));
    usize::try_from(row).expect("invariant: rows were counted in usize")
}

/// The index's keys walked in order, one key's rows at a time, none held: what a step that
/// meets each key's rows in key order reads (a key shared by every row costs no memory).
#[derive(Debug)]
pub(crate) struct KeyRows {
    rows: BufReader<File>,
    left: u64,
    /// The key of the last record read, and its first row.
    group: usize,
    group_first: Option<[u8; 8]>,
    /// The next record not given yet: its key and row.
    ahead: Option<(usize, usize)>,
    dir: std::path::PathBuf,
}

impl KeyRows {
    fn peek(&mut self) -> std::io::Result<Option<(usize, usize)>> {
        if self.ahead.is_none() && self.left > 0 {
            let mut record: FirstRow = [0; 16];
            self.rows.read_exact(&mut record)?;
            self.left -= 1;
            let first: [u8; 8] = record[..8].try_into().expect("invariant: 8 of 16 bytes");
            if self.group_first != Some(first) {
                if self.group_first.is_some() {
                    self.group += 1;
                }
                self.group_first = Some(first);
            }
            self.ahead = Some((self.group, row_at(&record[8..])));
        }
        Ok(self.ahead)
    }

    /// Gives every row of key `key` (ascending) to `each`. Keys are asked in ascending order;
    /// a key asked again, or skipped, gives nothing.
    ///
    /// # Errors
    /// [`StreamingError::Index`] if the index's file cannot be read; `each`'s.
    pub(crate) fn rows_of(
        &mut self,
        key: usize,
        mut each: impl FnMut(usize) -> Result<(), StreamingError>,
    ) -> Result<(), StreamingError> {
        loop {
            let next = self.peek().map_err(|source| StreamingError::Index {
                dir: self.dir.clone(),
                source,
            })?;
            match next {
                Some((group, _)) if group < key => self.ahead = None,
                Some((group, row)) if group == key => {
                    each(row)?;
                    self.ahead = None;
                }
                _ => return Ok(()),
            }
        }
    }
}

/// Each distinct key's rows, from [`KeyIndex::groups`].
#[derive(Debug)]
pub struct Groups {
    rows: BufReader<File>,
    left: u64,
    /// A record read past the end of the last group.
    ahead: Option<FirstRow>,
    dir: std::path::PathBuf,
}

impl Groups {
    fn next_record(&mut self) -> std::io::Result<Option<FirstRow>> {
        if let Some(record) = self.ahead.take() {
            return Ok(Some(record));
        }
        if self.left == 0 {
            return Ok(None);
        }
        let mut record: FirstRow = [0; 16];
        self.rows.read_exact(&mut record)?;
        self.left -= 1;
        Ok(Some(record))
    }

    fn next_group(&mut self) -> std::io::Result<Option<Vec<usize>>> {
        let Some(first) = self.next_record()? else {
            return Ok(None);
        };
        let mut rows = vec![row_at(&first[8..])];
        while let Some(record) = self.next_record()? {
            if record[..8] != first[..8] {
                self.ahead = Some(record);
                break;
            }
            rows.push(row_at(&record[8..]));
        }
        Ok(Some(rows))
    }
}

impl Iterator for Groups {
    type Item = Result<Vec<usize>, StreamingError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_group()
            .map_err(|source| StreamingError::Index {
                dir: self.dir.clone(),
                source,
            })
            .transpose()
    }
}

/// The distinct keys in order of first appearance, from [`KeyIndex::first_keys`].
#[derive(Debug)]
pub struct FirstKeys {
    rows: BufReader<File>,
    /// Records of `rows` not yet read.
    left: u64,
    keys: BufReader<File>,
    /// The row whose key the `keys` file holds next.
    next_row: usize,
    dir: std::path::PathBuf,
}

impl FirstKeys {
    /// The next key's first row: the next record naming its own row as its first.
    fn next_first(&mut self) -> std::io::Result<Option<usize>> {
        while self.left > 0 {
            let mut record: FirstRow = [0; 16];
            self.rows.read_exact(&mut record)?;
            self.left -= 1;
            if record[..8] == record[8..] {
                return Ok(Some(row_at(&record[..8])));
            }
        }
        Ok(None)
    }

    fn next_key(&mut self) -> Result<Option<Vec<u8>>, StreamingError> {
        let dir = self.dir.clone();
        let io = |source| StreamingError::Index {
            dir: dir.clone(),
            source,
        };
        let Some(first) = self.next_first().map_err(io)? else {
            return Ok(None);
        };
        loop {
            let mut len = [0u8; 8];
            self.keys.read_exact(&mut len).map_err(io)?;
            let len = u64::from_le_bytes(len);
            let row = self.next_row;
            self.next_row += 1;
            if row < first {
                self.keys
                    .seek_relative(i64::try_from(len).map_err(|_| io(corrupt()))?)
                    .map_err(io)?;
                continue;
            }
            let mut key = vec![0; usize::try_from(len).map_err(|_| io(corrupt()))?];
            self.keys.read_exact(&mut key).map_err(io)?;
            if row != first || key.is_empty() {
                return Err(io(corrupt()));
            }
            return Ok(Some(key));
        }
    }
}

fn corrupt() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "its files do not agree (changed while in use)",
    )
}

impl Iterator for FirstKeys {
    type Item = Result<Vec<u8>, StreamingError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_key().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linkage::{KeySpec, KeyTable, Records};
    use proptest::prelude::*;

    fn index(text: &[u8], memory: usize, workers: usize) -> (tempfile::TempDir, KeyIndex) {
        let dir = tempfile::tempdir().unwrap();
        let spec = KeySpec::default();
        let budget = Budget::new(dir.path(), memory);
        let pool = Pool::new(workers).unwrap();
        let index = KeyIndex::build(
            KeyReader::new(text, &spec).unwrap(),
            &budget,
            &pool,
            &Control::new(),
        )
        .unwrap();
        (dir, index)
    }

    fn table(text: &[u8]) -> KeyTable {
        let spec = KeySpec::default();
        Records::read(text, &spec).unwrap().keys(&spec).unwrap()
    }

    fn assert_same(index: &KeyIndex, table: &KeyTable) {
        assert_eq!(index.len(), table.len());
        assert_eq!(index.row_count(), table.row_count());
        assert_eq!(index.empty_rows(), table.empty_rows().len());
        assert_eq!(index.first_empty_row(), table.empty_rows().first().copied());
        assert_eq!(index.digest(), table.digest());
        let keys: Vec<Vec<u8>> = index.first_keys().unwrap().map(Result::unwrap).collect();
        assert_eq!(keys, table.values());
        let groups: Vec<Vec<usize>> = index.groups().unwrap().map(Result::unwrap).collect();
        let rows: Vec<Vec<usize>> = (0..table.len()).map(|k| table.rows(k).to_vec()).collect();
        assert_eq!(groups, rows);
        // Walked a key at a time, every other key skipped: the same rows, none held.
        let mut walker = index.key_rows().unwrap();
        for k in (0..table.len()).step_by(2) {
            let mut got = Vec::new();
            walker
                .rows_of(k, |row| {
                    got.push(row);
                    Ok(())
                })
                .unwrap();
            assert_eq!(got, table.rows(k));
        }
    }

    #[test]
    fn the_index_is_the_key_table_at_every_memory_and_worker_count() {
        // 3,000 rows of 400 keys, blank rows among them: many runs at 400 bytes of memory
        // (5 records a run), merged in more than one pass.
        let text: String = (0..3000u32)
            .map(|i| {
                let k = i.wrapping_mul(2_654_435_761) % 401;
                if k == 400 {
                    "\n".to_owned()
                } else {
                    format!("key{k}\n")
                }
            })
            .collect();
        let expected = table(text.as_bytes());
        for memory in [400, 4096, 1 << 20] {
            for workers in [1, 2, 3, 5] {
                assert_same(&index(text.as_bytes(), memory, workers).1, &expected);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn random_files_index_as_their_tables(
            rows in proptest::collection::vec(0u8..12, 0..300),
            memory in 40usize..2000,
        ) {
            let text: String = rows
                .iter()
                .map(|&k| if k == 0 { "\n".to_owned() } else { format!("{}\n", "v".repeat(usize::from(k))) })
                .collect();
            let (_dir, index) = index(text.as_bytes(), memory, 2);
            assert_same(&index, &table(text.as_bytes()));
        }
    }

    #[test]
    fn its_folder_goes_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let budget = Budget::new(dir.path(), 100);
        let index = KeyIndex::build(
            KeyReader::new(&b"a\nb\na\n"[..], &KeySpec::default()).unwrap(),
            &budget,
            &Pool::new(1).unwrap(),
            &Control::new(),
        )
        .unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        drop(index);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
