//! Record files: CSV with a header (when key columns are named) or plain text, one value per
//! line. Rows are held in memory, to write matched rows back out.
//!
//! Rows are data records as the CSV reader sees them (a blank line in a CSV file is no record;
//! in a plain-text file it is a row with an empty value). Lines longer than 1 MiB are refused.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use lockstep_psi::linkage::{KeyColumns, KeySpec, KeyTable, KeyTableBuilder};

use crate::files::{LineLimit, open_input};

/// A record file held in memory: its header (CSV only) and its rows.
pub(crate) struct Table {
    path: PathBuf,
    header: Option<csv::ByteRecord>,
    rows: Vec<csv::ByteRecord>,
}

impl Table {
    /// Reads `path` (given by `flag`): CSV with a header row when `spec` names columns, else
    /// plain text with one value per line (`\n` or `\r\n` endings, a last line without one, a
    /// UTF-8 byte-order mark dropped).
    ///
    /// # Errors
    /// The file cannot be read or is not a file or pipe; malformed CSV (with its position, never
    /// its content); an empty CSV file; a line over the limit.
    pub(crate) fn read(flag: &str, path: &Path, spec: &KeySpec) -> anyhow::Result<Self> {
        let reader = LineLimit::new(open_input(flag, path)?);
        let shown = path.display();
        if spec.columns.is_empty() {
            let mut reader = std::io::BufReader::with_capacity(1 << 16, reader);
            let mut rows = Vec::new();
            let mut line = Vec::new();
            loop {
                line.clear();
                if reader
                    .read_until(b'\n', &mut line)
                    .with_context(|| format!("reading {shown}"))?
                    == 0
                {
                    break;
                }
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
            return Ok(Self {
                path: path.to_owned(),
                header: None,
                rows,
            });
        }
        let mut csv = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(reader);
        let header = csv
            .byte_headers()
            .with_context(|| format!("reading {shown}"))?
            .clone();
        if header.is_empty() {
            anyhow::bail!(
                "{shown}: the file is empty; a CSV input needs a header row naming its columns"
            );
        }
        let rows = csv
            .byte_records()
            .collect::<Result<Vec<_>, _>>()
            .with_context(|| format!("reading {shown}"))?;
        Ok(Self {
            path: path.to_owned(),
            header: Some(header),
            rows,
        })
    }

    /// The header (CSV) or `value` (plain text), as field names.
    pub(crate) fn header_fields(&self) -> Vec<Vec<u8>> {
        match &self.header {
            Some(h) => h.iter().map(<[u8]>::to_vec).collect(),
            None => vec![b"value".to_vec()],
        }
    }

    /// The fields of 0-based data row `row`.
    pub(crate) fn row(&self, row: usize) -> Option<&csv::ByteRecord> {
        self.rows.get(row)
    }

    /// Writes rows of this table as CSV to `file`: the header is `lead` then the table's own
    /// columns; each of `rows` is its `lead` values then the fields of its 0-based table row.
    ///
    /// # Errors
    /// A write failure; a row outside the table (a broken invariant of the caller).
    pub(crate) fn write_rows<const N: usize>(
        &self,
        file: &mut std::fs::File,
        lead: [&str; N],
        rows: impl IntoIterator<Item = ([String; N], usize)>,
    ) -> anyhow::Result<()> {
        let mut csv = csv::Writer::from_writer(std::io::BufWriter::new(file));
        let mut header: Vec<Vec<u8>> = lead.iter().map(|c| c.as_bytes().to_vec()).collect();
        header.extend(self.header_fields());
        csv.write_record(&header)?;
        for (values, row) in rows {
            let record = self.row(row).with_context(|| {
                format!("invariant: row {row} is a row of {}", self.path.display())
            })?;
            let mut fields: Vec<&[u8]> = values.iter().map(String::as_bytes).collect();
            fields.extend(record.iter());
            csv.write_record(&fields)?;
        }
        csv.into_inner().map_err(|e| e.into_error())?.flush()?;
        Ok(())
    }

    /// Every row's key, grouped into distinct keys.
    ///
    /// # Errors
    /// A key column missing from the header or named twice in it; a field that is not UTF-8
    /// under normalization; each naming the file.
    pub(crate) fn keys(&self, spec: &KeySpec) -> anyhow::Result<KeyTable> {
        let shown = self.path.display();
        let columns = match &self.header {
            None => KeyColumns::whole_row(spec.normalize),
            Some(header) => {
                let fields: Vec<&[u8]> = header.iter().collect();
                spec.locate(&fields).with_context(|| shown.to_string())?
            }
        };
        let mut builder = KeyTableBuilder::new();
        for (i, record) in self.rows.iter().enumerate() {
            builder.push(
                columns
                    .key(i, |c| record.get(c))
                    .with_context(|| shown.to_string())?,
            );
        }
        Ok(builder.finish())
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
    fn plain_text_lines_and_csv() {
        let temp = tempfile::tempdir().unwrap();
        let text = temp.path().join("t.txt");
        std::fs::write(&text, b"\xef\xbb\xbfone\r\ntwo\n\nthree").unwrap();
        let t = Table::read("--input", &text, &spec(&[])).unwrap();
        let keys = t.keys(&spec(&[])).unwrap();
        assert_eq!(
            keys.values(),
            [b"one".to_vec(), b"two".to_vec(), b"three".to_vec()]
        );
        assert_eq!(keys.empty_rows(), [2]);
        assert_eq!(keys.row_count(), 4);
        let csv = temp.path().join("t.csv");
        std::fs::write(&csv, b"id,email\n1,a\n2,b\n").unwrap();
        let t = Table::read("--input", &csv, &spec(&["email"])).unwrap();
        assert_eq!(t.keys(&spec(&["email"])).unwrap().len(), 2);
        let err = format!("{:#}", t.keys(&spec(&["mail"])).unwrap_err());
        assert!(
            err.starts_with(&format!("{}: no column named", csv.display())),
            "{err}"
        );
        std::fs::write(&csv, b"a,b\n1,2,3\n").unwrap();
        let err = format!(
            "{:#}",
            Table::read("--input", &csv, &spec(&["a"])).err().unwrap()
        );
        assert!(err.contains("found record with 3 fields"), "{err}");
        assert!(!err.contains("1,2,3"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_no_record_files() {
        let err = format!(
            "{:#}",
            Table::read("--input", Path::new("/dev/zero"), &spec(&[]))
                .err()
                .unwrap()
        );
        assert_eq!(
            err,
            "/dev/zero is a character device: --input takes a regular file or a pipe"
        );
    }
}
