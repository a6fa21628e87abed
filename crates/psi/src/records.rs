//! Reading record-linkage keys from files: CSV with a header, or plain text with one value per
//! line.
//!
//! # Keys
//! - One `--column`: the key is the field's bytes, exactly (so it interoperates with any other
//!   OpenMined PSI user hashing the same strings).
//! - Several columns: the key is the concatenation of `<byte length>:<field>` for each column in
//!   order (`3:Ada10:1815-12-10`), which no two different field lists share.
//! - Plain text: each line without its line ending (`\n` or `\r\n`).
//! - With normalization: each field is trimmed, lowercased and its runs of whitespace collapsed
//!   to one space before joining (it must be UTF-8 then).
//!
//! Rows are data records as the CSV reader sees them (a blank line in a CSV file is no record; in
//! a plain-text file it is a row with an empty value). Rows whose key is empty are left out of
//! the set and reported, never silently matched.
//! Each distinct key is masked once; the rows holding it are kept locally, so duplicate rows
//! neither leak their multiplicity to the other party nor lose their match.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

/// Errors reading or writing record files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordsError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The CSV is malformed (unbalanced quotes, a row with another field count than the header).
    #[error("{path}: {message}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// The CSV reader's explanation, with its line.
        message: String,
    },
    /// A named column is not in the header.
    #[error("{path}: no column named {column:?}; the header has {available}")]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The column asked for.
        column: String,
        /// The header's columns, quoted and comma-separated.
        available: String,
    },
    /// The file has no header row although columns were named.
    #[error("{path}: the file is empty; a CSV input needs a header row naming its columns")]
    NoHeader {
        /// The file.
        path: PathBuf,
    },
    /// Normalization needs UTF-8 text.
    #[error("{path}: row {row}, column {column:?} is not UTF-8 text, which --normalize needs")]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// The 1-based data row.
        row: usize,
        /// The column.
        column: String,
    },
}

/// How keys are taken from a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeySpec {
    /// The CSV columns forming the key, in order; empty for a plain-text file.
    pub columns: Vec<String>,
    /// Trim, lowercase and collapse whitespace in each field.
    pub normalize: bool,
}

/// A record file held in memory: its header (CSV only) and its rows.
#[derive(Clone, Debug)]
pub struct Table {
    path: PathBuf,
    header: Option<csv::ByteRecord>,
    rows: Vec<csv::ByteRecord>,
}

/// The distinct keys of a table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Keys {
    /// Each distinct non-empty key once, in order of first appearance.
    pub values: Vec<Vec<u8>>,
    /// `rows[k]`: the 0-based data rows holding `values[k]`, ascending.
    pub rows: Vec<Vec<usize>>,
    /// The 0-based data rows whose key is empty (left out).
    pub empty_rows: Vec<usize>,
}

impl Table {
    /// Reads `path`: a CSV file with a header when `spec.columns` is non-empty, else a plain
    /// text file with one value per line.
    ///
    /// # Errors
    /// [`RecordsError::Io`], [`RecordsError::Csv`], [`RecordsError::NoHeader`].
    pub fn read(path: &Path, spec: &KeySpec) -> Result<Self, RecordsError> {
        let file = std::fs::File::open(path).map_err(|source| RecordsError::Io {
            path: path.to_owned(),
            source,
        })?;
        let reader = std::io::BufReader::with_capacity(1 << 16, file);
        if spec.columns.is_empty() {
            Self::from_lines(path, reader)
        } else {
            Self::from_csv(path, reader)
        }
    }

    /// Reads CSV with a header row.
    ///
    /// # Errors
    /// [`RecordsError::Csv`] for malformed CSV, [`RecordsError::NoHeader`] for an empty file.
    pub fn from_csv(path: &Path, reader: impl Read) -> Result<Self, RecordsError> {
        let csv_error = |e: csv::Error| RecordsError::Csv {
            path: path.to_owned(),
            message: e.to_string(),
        };
        let mut csv = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(reader);
        let header = csv.byte_headers().map_err(csv_error)?.clone();
        if header.is_empty() {
            return Err(RecordsError::NoHeader {
                path: path.to_owned(),
            });
        }
        let rows = csv
            .byte_records()
            .collect::<Result<Vec<_>, _>>()
            .map_err(csv_error)?;
        Ok(Self {
            path: path.to_owned(),
            header: Some(header),
            rows,
        })
    }

    /// Reads plain text, one value per line (`\n` or `\r\n` endings, a last line without one).
    ///
    /// # Errors
    /// [`RecordsError::Io`].
    pub fn from_lines(path: &Path, mut reader: impl BufRead) -> Result<Self, RecordsError> {
        let mut rows = Vec::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = reader
                .read_until(b'\n', &mut line)
                .map_err(|source| RecordsError::Io {
                    path: path.to_owned(),
                    source,
                })?;
            if read == 0 {
                break;
            }
            // A UTF-8 byte-order mark is the file's, not the first value's (the CSV reader drops
            // it the same way).
            if rows.is_empty() && line.starts_with(b"\xef\xbb\xbf") {
                line.drain(..3);
            }
            if line.last() == Some(&b'\n') {
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
            }
            let mut record = csv::ByteRecord::new();
            record.push_field(&line);
            rows.push(record);
        }
        Ok(Self {
            path: path.to_owned(),
            header: None,
            rows,
        })
    }

    /// The number of data rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no data rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The header (CSV) or `value` (plain text), as field names.
    pub fn header_fields(&self) -> Vec<Vec<u8>> {
        match &self.header {
            Some(h) => h.iter().map(<[u8]>::to_vec).collect(),
            None => vec![b"value".to_vec()],
        }
    }

    /// The fields of 0-based data row `row`.
    pub fn row(&self, row: usize) -> Option<&csv::ByteRecord> {
        self.rows.get(row)
    }

    /// The keys of every row, grouped into distinct values.
    ///
    /// # Errors
    /// [`RecordsError::MissingColumn`] for a column not in the header;
    /// [`RecordsError::NotUtf8`] for a non-UTF-8 field under normalization.
    pub fn keys(&self, spec: &KeySpec) -> Result<Keys, RecordsError> {
        let columns: Vec<usize> = match &self.header {
            None => vec![0],
            Some(header) => spec
                .columns
                .iter()
                .map(|name| {
                    header
                        .iter()
                        .position(|h| h == name.as_bytes())
                        .ok_or_else(|| RecordsError::MissingColumn {
                            path: self.path.clone(),
                            column: name.clone(),
                            available: header
                                .iter()
                                .map(|h| format!("{:?}", String::from_utf8_lossy(h)))
                                .collect::<Vec<_>>()
                                .join(", "),
                        })
                })
                .collect::<Result<_, _>>()?,
        };
        let mut keys = Keys::default();
        let mut index: std::collections::HashMap<Vec<u8>, usize> = std::collections::HashMap::new();
        for (row, record) in self.rows.iter().enumerate() {
            let key = self.key_of(row, record, &columns, spec)?;
            if key.is_empty() {
                keys.empty_rows.push(row);
                continue;
            }
            match index.get(&key) {
                Some(&k) => keys.rows[k].push(row),
                None => {
                    index.insert(key.clone(), keys.values.len());
                    keys.values.push(key);
                    keys.rows.push(vec![row]);
                }
            }
        }
        Ok(keys)
    }

    fn key_of(
        &self,
        row: usize,
        record: &csv::ByteRecord,
        columns: &[usize],
        spec: &KeySpec,
    ) -> Result<Vec<u8>, RecordsError> {
        let field = |position: usize, c: usize| -> Result<Vec<u8>, RecordsError> {
            let raw = record.get(c).unwrap_or_default();
            if !spec.normalize {
                return Ok(raw.to_vec());
            }
            let text = std::str::from_utf8(raw).map_err(|_| RecordsError::NotUtf8 {
                path: self.path.clone(),
                row: row + 1,
                column: spec
                    .columns
                    .get(position)
                    .cloned()
                    .unwrap_or_else(|| "value".into()),
            })?;
            Ok(normalize(text).into_bytes())
        };
        if columns.len() == 1 {
            return field(0, columns[0]);
        }
        let mut key = Vec::new();
        let mut all_empty = true;
        for (position, &c) in columns.iter().enumerate() {
            let value = field(position, c)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(text: &str) -> Table {
        Table::from_csv(Path::new("t.csv"), text.as_bytes()).unwrap()
    }

    fn spec(columns: &[&str], normalize: bool) -> KeySpec {
        KeySpec {
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            normalize,
        }
    }

    #[test]
    fn single_columns_are_exact_bytes_and_grouped() {
        let t = csv("id,email\n1,a@x\n2, A@X \n3,a@x\n4,\n");
        let keys = t.keys(&spec(&["email"], false)).unwrap();
        assert_eq!(keys.values, vec![b"a@x".to_vec(), b" A@X ".to_vec()]);
        assert_eq!(keys.rows, vec![vec![0, 2], vec![1]]);
        assert_eq!(keys.empty_rows, vec![3]);
        let keys = t.keys(&spec(&["email"], true)).unwrap();
        assert_eq!(keys.values, vec![b"a@x".to_vec()]);
        assert_eq!(keys.rows, vec![vec![0, 1, 2]]);
    }

    #[test]
    fn composite_keys_are_unambiguous() {
        let t = csv("a,b\nab,c\na,bc\n,\n");
        let keys = t.keys(&spec(&["a", "b"], false)).unwrap();
        assert_eq!(keys.values, vec![b"2:ab1:c".to_vec(), b"1:a2:bc".to_vec()]);
        assert_eq!(keys.empty_rows, vec![2]);
        assert_eq!(normalize("  Ada \t LOVELACE\n"), "ada lovelace");
    }

    #[test]
    fn plain_text_lines() {
        let t =
            Table::from_lines(Path::new("t.txt"), &b"\xef\xbb\xbfone\r\ntwo\n\nthree"[..]).unwrap();
        let keys = t.keys(&KeySpec::default()).unwrap();
        assert_eq!(
            keys.values,
            vec![b"one".to_vec(), b"two".to_vec(), b"three".to_vec()]
        );
        assert_eq!(keys.empty_rows, vec![2]);
        assert_eq!(t.len(), 4);
    }

    #[test]
    fn clear_errors() {
        let t = csv("id,email\n1,x\n");
        let err = t.keys(&spec(&["mail"], false)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.csv: no column named \"mail\"; the header has \"id\", \"email\""
        );
        let err = Table::from_csv(Path::new("t.csv"), &b"a,b\n1,2,3\n"[..]).unwrap_err();
        assert!(err.to_string().starts_with("t.csv: "), "{err}");
        let err = Table::from_csv(Path::new("e.csv"), &b""[..]).unwrap_err();
        assert!(matches!(err, RecordsError::NoHeader { .. }));
        let t = Table::from_csv(Path::new("t.csv"), &b"k\n\xff\n"[..]).unwrap();
        let err = t.keys(&spec(&["k"], true)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.csv: row 1, column \"k\" is not UTF-8 text, which --normalize needs"
        );
    }
}
