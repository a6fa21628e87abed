//! Record files: CSV with a header (when key columns are named) or plain text, one value per
//! line; the rules every front end reads them by.
//!
//! - Plain text: one value per line, `\n` or `\r\n` endings, a last line without one, a UTF-8
//!   byte-order mark at the start dropped; a blank line is a row with an empty value (left out
//!   of the set, and counted).
//! - CSV: a header row naming the columns (an empty file is refused), then data records as the
//!   `csv` crate reads them (RFC 4180 quoting; a blank line is no record); every record must
//!   have the header's number of fields.
//! - Lines longer than [`MAX_LINE`] (1 MiB) are refused: a binary or endless input fails at once
//!   instead of filling memory.
//! - Rows are numbered from 1 in everything a user sees, in file order.
//!
//! Rows are held in memory, to write matched rows back out ([`Records::write_rows`]).

use std::io::{BufRead, Read, Write};

use super::keys::KeyDigest;
use super::{Digest, FileError, KeyColumns, KeySpec, KeyTable, KeyTableBuilder, LinkageError};

/// The longest line a record file (or linkage file) may have: rows are far shorter, and a
/// binary or endless input (`/dev/zero`) fails here instead of filling memory.
pub const MAX_LINE: usize = 1 << 20;

/// A record file held in memory: its header (CSV only) and its rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Records {
    header: Option<csv::ByteRecord>,
    rows: Vec<csv::ByteRecord>,
}

impl Records {
    /// Reads a record file: CSV with a header row when `spec` names columns, else plain text
    /// with one value per line (see the module's rules).
    ///
    /// # Errors
    /// [`FileError::Read`] if `reader` fails or a line passes [`MAX_LINE`];
    /// [`FileError::Csv`] for malformed CSV (its position, never its content);
    /// [`FileError::EmptyCsv`] for a CSV file without a header row.
    pub fn read(reader: impl Read, spec: &KeySpec) -> Result<Self, FileError> {
        let reader = LineLimit::new(reader);
        if spec.columns.is_empty() {
            return Ok(Self {
                header: None,
                rows: read_lines(reader)?,
            });
        }
        let mut csv = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(reader);
        let header = csv.byte_headers().map_err(FileError::Csv)?.clone();
        if header.is_empty() {
            return Err(FileError::EmptyCsv);
        }
        let rows = csv
            .byte_records()
            .collect::<Result<Vec<_>, _>>()
            .map_err(FileError::Csv)?;
        Ok(Self {
            header: Some(header),
            rows,
        })
    }

    /// Records of one value each, as a plain-text file of these lines would give (for front
    /// ends that hold values rather than a file).
    pub fn from_values<V: AsRef<[u8]>>(values: impl IntoIterator<Item = V>) -> Self {
        let rows = values
            .into_iter()
            .map(|value| {
                let mut record = csv::ByteRecord::new();
                record.push_field(value.as_ref());
                record
            })
            .collect();
        Self { header: None, rows }
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
    pub fn header_fields(&self) -> Vec<&[u8]> {
        match &self.header {
            Some(h) => h.iter().collect(),
            None => vec![b"value"],
        }
    }

    /// The fields of 0-based data row `row`, if there is one.
    pub fn row(&self, row: usize) -> Option<impl Iterator<Item = &[u8]>> {
        self.rows.get(row).map(csv::ByteRecord::iter)
    }

    /// Every row's key under `spec`, grouped into distinct keys.
    ///
    /// # Errors
    /// A key column missing from the header or named twice in it, a row without the field, a
    /// field that is not UTF-8 under normalization ([`LinkageError`]).
    pub fn keys(&self, spec: &KeySpec) -> Result<KeyTable, LinkageError> {
        let columns = match &self.header {
            None => KeyColumns::whole_row(spec.normalize),
            Some(header) => {
                let fields: Vec<&[u8]> = header.iter().collect();
                spec.locate(&fields)?
            }
        };
        let mut builder = KeyTableBuilder::new();
        for (i, record) in self.rows.iter().enumerate() {
            builder.push(columns.key(i, |c| record.get(c))?);
        }
        Ok(builder.finish())
    }

    /// Writes rows of these records as CSV: the header is `lead` then the records' own columns;
    /// each of `rows` is its `lead` values then the fields of its 0-based data row.
    ///
    /// # Errors
    /// [`FileError::Write`] for a write failure.
    ///
    /// # Panics
    /// If a row is not a row of these records (a broken invariant of the caller, which took the
    /// rows from these records' keys).
    pub fn write_rows<const N: usize>(
        &self,
        out: impl Write,
        lead: [&str; N],
        rows: impl IntoIterator<Item = ([String; N], usize)>,
    ) -> Result<(), FileError> {
        let mut writer = RowsWriter::new(out, &lead, &self.header_fields())?;
        for (values, row) in rows {
            let record = self
                .rows
                .get(row)
                .expect("invariant: rows written are rows of these records");
            writer.push(&values, record)?;
        }
        writer.finish()
    }
}

/// Rows of a record file written back out as CSV, `lead` columns first: one definition for
/// [`Records::write_rows`] and the rows a step past memory writes as it reads them again.
pub(crate) struct RowsWriter<W: Write> {
    csv: csv::Writer<std::io::BufWriter<W>>,
}

impl<W: Write> RowsWriter<W> {
    /// Writes the header: `lead`, then the record file's own columns.
    pub(crate) fn new(out: W, lead: &[&str], header: &[&[u8]]) -> Result<Self, FileError> {
        let mut csv = csv::Writer::from_writer(std::io::BufWriter::new(out));
        let mut fields: Vec<&[u8]> = lead.iter().map(|c| c.as_bytes()).collect();
        fields.extend(header);
        csv.write_record(&fields)
            .map_err(FileError::from_csv_write)?;
        Ok(Self { csv })
    }

    /// Writes a row: `values` (one a lead column), then `record`'s fields.
    pub(crate) fn push(
        &mut self,
        values: &[String],
        record: &csv::ByteRecord,
    ) -> Result<(), FileError> {
        let mut fields: Vec<&[u8]> = values.iter().map(String::as_bytes).collect();
        fields.extend(record.iter());
        self.csv
            .write_record(&fields)
            .map_err(FileError::from_csv_write)
    }

    /// Flushes what was written.
    pub(crate) fn finish(self) -> Result<(), FileError> {
        self.csv
            .into_inner()
            .map_err(|e| FileError::Write(e.into_error()))?
            .flush()
            .map_err(FileError::Write)
    }
}

/// The rows of a plain-text record file: one field each.
fn read_lines(reader: impl Read) -> Result<Vec<csv::ByteRecord>, FileError> {
    let mut reader = std::io::BufReader::with_capacity(1 << 16, reader);
    let mut rows = Vec::new();
    let mut line = Vec::new();
    while next_line(&mut reader, &mut line, rows.is_empty())? {
        let mut record = csv::ByteRecord::new();
        record.push_field(&line);
        rows.push(record);
    }
    Ok(rows)
}

/// Reads a plain-text record file's next value into `line` (its ending and, on the `first`
/// line, a byte-order mark dropped); `false` at the end of the file.
fn next_line(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    first: bool,
) -> Result<bool, FileError> {
    line.clear();
    if reader.read_until(b'\n', line).map_err(FileError::Read)? == 0 {
        return Ok(false);
    }
    if first && line.starts_with(b"\xef\xbb\xbf") {
        line.drain(..3);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
    }
    Ok(true)
}

/// A record file's keys read a row at a time, by the rules [`Records::read`] and
/// [`Records::keys`] read it: what a party too large for memory is read with.
///
/// Each row's key comes out in file order, an empty one for a row left out; the rows themselves
/// are not kept. The key columns are located in the header when the reader is made, so a
/// missing column is refused before any row is read.
pub struct KeyReader<R: Read> {
    source: KeySource<R>,
    columns: KeyColumns,
    header: Option<csv::ByteRecord>,
    /// The last row read.
    record: csv::ByteRecord,
    row: usize,
    /// The key-column digest of the rows read, when asked for ([`KeyReader::digested`]).
    digest: Option<KeyDigest>,
}

enum KeySource<R: Read> {
    Lines {
        reader: std::io::BufReader<LineLimit<R>>,
        line: Vec<u8>,
    },
    Csv(Box<csv::Reader<LineLimit<R>>>),
}

impl<R: Read> KeyReader<R> {
    /// Starts reading `reader` as a record file keyed by `spec`: CSV with a header row when
    /// `spec` names columns, else plain text with one value per line.
    ///
    /// # Errors
    /// As [`Records::read`] for the header; a key column missing from the header or named
    /// twice in it ([`FileError::Linkage`]).
    pub fn new(reader: R, spec: &KeySpec) -> Result<Self, FileError> {
        let reader = LineLimit::new(reader);
        if spec.columns.is_empty() {
            return Ok(Self {
                source: KeySource::Lines {
                    reader: std::io::BufReader::with_capacity(1 << 16, reader),
                    line: Vec::new(),
                },
                columns: KeyColumns::whole_row(spec.normalize),
                header: None,
                record: csv::ByteRecord::new(),
                row: 0,
                digest: None,
            });
        }
        let mut csv = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(reader);
        let header = csv.byte_headers().map_err(FileError::Csv)?.clone();
        if header.is_empty() {
            return Err(FileError::EmptyCsv);
        }
        let fields: Vec<&[u8]> = header.iter().collect();
        let columns = spec.locate(&fields)?;
        Ok(Self {
            source: KeySource::Csv(Box::new(csv)),
            columns,
            header: Some(header),
            record: csv::ByteRecord::new(),
            row: 0,
            digest: None,
        })
    }

    /// This reader, taking the key-column digest
    /// ([`KeyTable::digest`](super::KeyTable::digest)) of every row it reads from now on: from
    /// its first row, the digest a file read a second time must give again.
    #[must_use]
    pub fn digested(mut self) -> Self {
        self.digest = Some(KeyDigest::new());
        self
    }

    /// The digest of the rows read so far, when [`digested`](Self::digested).
    pub fn digest(&self) -> Option<Digest> {
        self.digest.clone().map(KeyDigest::finish)
    }

    /// The rows read so far.
    pub fn rows(&self) -> usize {
        self.row
    }

    /// The header (CSV) or `value` (plain text), as field names:
    /// [`Records::header_fields`]'.
    pub fn header_fields(&self) -> Vec<&[u8]> {
        match &self.header {
            Some(h) => h.iter().collect(),
            None => vec![b"value"],
        }
    }

    /// The next row's fields, `None` after the last row.
    ///
    /// # Errors
    /// As [`Records::read`], for this row.
    pub fn next_record(&mut self) -> Result<Option<&csv::ByteRecord>, FileError> {
        let more = match &mut self.source {
            KeySource::Lines { reader, line } => {
                let more = next_line(reader, line, self.row == 0)?;
                if more {
                    self.record.clear();
                    self.record.push_field(line);
                }
                more
            }
            KeySource::Csv(reader) => reader
                .read_byte_record(&mut self.record)
                .map_err(FileError::Csv)?,
        };
        if !more {
            return Ok(None);
        }
        if let Some(digest) = &mut self.digest {
            let record = &self.record;
            digest.push(&self.columns.key(self.row, |c| record.get(c))?);
        }
        self.row += 1;
        Ok(Some(&self.record))
    }

    /// The fields of the last row read (none before the first).
    pub fn last_record(&self) -> &csv::ByteRecord {
        &self.record
    }

    /// The next row's key (empty: the row is left out), `None` after the last row.
    ///
    /// # Errors
    /// As [`Records::read`] and [`Records::keys`], for this row.
    pub fn next_key(&mut self) -> Result<Option<Vec<u8>>, FileError> {
        if self.next_record()?.is_none() {
            return Ok(None);
        }
        let record = &self.record;
        Ok(Some(self.columns.key(self.row - 1, |c| record.get(c))?))
    }
}

/// A reader that fails once a line passes [`MAX_LINE`] bytes, naming the line.
#[derive(Debug)]
pub struct LineLimit<R> {
    inner: R,
    line: usize,
    in_line: usize,
}

impl<R: Read> LineLimit<R> {
    /// `inner`, held to lines of at most [`MAX_LINE`] bytes.
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            line: 1,
            in_line: 0,
        }
    }
}

impl<R: Read> Read for LineLimit<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &b in &buf[..n] {
            if b == b'\n' {
                self.line += 1;
                self.in_line = 0;
            } else {
                self.in_line += 1;
                if self.in_line > MAX_LINE {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "line {} is longer than {MAX_LINE} bytes: this is not a record file",
                            self.line
                        ),
                    ));
                }
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(columns: &[&str]) -> KeySpec {
        KeySpec {
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            normalize: false,
        }
    }

    #[test]
    fn plain_text_lines() {
        let records = Records::read(&b"\xef\xbb\xbfone\r\ntwo\n\nthree"[..], &spec(&[])).unwrap();
        let keys = records.keys(&spec(&[])).unwrap();
        assert_eq!(
            keys.values(),
            [b"one".to_vec(), b"two".to_vec(), b"three".to_vec()]
        );
        assert_eq!(keys.empty_rows(), [2]);
        assert_eq!(keys.row_count(), 4);
        assert_eq!(records.header_fields(), [b"value"]);
        assert_eq!(records, Records::from_values(["one", "two", "", "three"]));
        // A byte-order mark is dropped from the first line only.
        let records = Records::read(&b"a\n\xef\xbb\xbfb\n"[..], &spec(&[])).unwrap();
        assert_eq!(records.row(1).unwrap().next(), Some(&b"\xef\xbb\xbfb"[..]));
    }

    #[test]
    fn csv_with_a_header() {
        let records =
            Records::read(&b"id,email\n1,a\n\n2,\"b,c\"\n"[..], &spec(&["email"])).unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records.header_fields(), [&b"id"[..], b"email"]);
        let keys = records.keys(&spec(&["email"])).unwrap();
        assert_eq!(keys.values(), [b"a".to_vec(), b"b,c".to_vec()]);
        assert_eq!(
            records.keys(&spec(&["mail"])).unwrap_err().to_string(),
            "no column named \"mail\"; the header has \"id\", \"email\""
        );
        let err = Records::read(&b"a,b\n1,2,3\n"[..], &spec(&["a"])).unwrap_err();
        assert!(matches!(err, FileError::Csv(_)));
        let text = err.in_file("t.csv").to_string();
        assert!(text.starts_with("reading t.csv: "), "{text}");
        assert!(text.contains("found record with 3 fields"), "{text}");
        assert!(!text.contains("1,2,3"), "{text}");
        let err = Records::read(&b""[..], &spec(&["a"])).unwrap_err();
        assert_eq!(
            err.in_file("e.csv").to_string(),
            "e.csv: the file is empty; a CSV input needs a header row naming its columns"
        );
    }

    #[test]
    fn matched_rows_are_written_after_their_lead_columns() {
        let records = Records::read(&b"id,email\n1,a\n2,\"b,c\"\n"[..], &spec(&["email"])).unwrap();
        let mut out = Vec::new();
        records
            .write_rows(&mut out, ["joiner_row"], [(["2".to_owned()], 1)])
            .unwrap();
        assert_eq!(out, b"joiner_row,id,email\n2,2,\"b,c\"\n");
    }

    #[test]
    fn endless_lines_fail_early() {
        let err = Records::read(std::io::repeat(b'x'), &spec(&[])).unwrap_err();
        assert_eq!(
            err.in_file("/dev/zero").to_string(),
            "reading /dev/zero: line 1 is longer than 1048576 bytes: this is not a record file"
        );
        let err = Records::read(std::io::repeat(b'x'), &spec(&["a"])).unwrap_err();
        assert!(
            err.to_string()
                .contains("line 1 is longer than 1048576 bytes"),
            "{err}"
        );
        let mut reader = LineLimit::new(&b"a\nbb\n"[..]);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        assert_eq!(out, b"a\nbb\n");
    }
}
