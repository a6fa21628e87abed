//! The two record-linkage files of a raw round: the starter's permutation and the joiner's
//! pairs. Both are CSV preceded by `# name: value` lines (pandas reads them with
//! `comment="#"`):
//!
//! ```text
//! # lockstep psi permutation v1
//! # setup positions -> your rows; keep this file to yourself
//! # starter_rows: 5
//! # setup_positions: 3
//! # key_columns: name,dob
//! # normalize: true
//! # key_sha256: 1b4f...
//! # setup_sha256: 9c0e...
//! # entries_sha256: 5d21...
//! setup_position,starter_row
//! 0,3
//! ```
//!
//! ```text
//! # lockstep psi pairs v1
//! # matched joiner rows, for the starter's `lockstep psi resolve`
//! # joiner_rows: 3
//! # joiner_keys: 3
//! # setup_sha256: 9c0e...
//! joiner_row,joiner_key,setup_position
//! 1,0,1
//! ```
//!
//! Rows are 1-based, key numbers and positions 0-based. `setup_sha256` is the `sha256sum` of the
//! setup message file; `key_sha256` a digest of the starter's key column (see
//! [`KeyTable::digest`](super::KeyTable::digest)); `entries_sha256` a digest of the
//! permutation's own rows. Reading keeps memory proportional to the data rows, whatever the
//! header lines claim, accepts at most [`MAX_PREAMBLE_LINES`] `#` lines and no line longer than
//! [`MAX_LINE`](super::MAX_LINE).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};

use super::records::LineLimit;
use super::{Digest, FileError, KeySpec, Pair, Pairs, Permutation, quoted};

/// The most `#` lines a file may start with (ours write nine at most).
pub const MAX_PREAMBLE_LINES: usize = 64;

/// The first line of a permutation file.
pub const PERMUTATION_MAGIC: &str = "# lockstep psi permutation v1";
/// The first line of a pairs file.
pub const PAIRS_MAGIC: &str = "# lockstep psi pairs v1";

const PERMUTATION_COLUMNS: [&str; 2] = ["setup_position", "starter_row"];
const PAIRS_COLUMNS: [&str; 3] = ["joiner_row", "joiner_key", "setup_position"];

/// Writes `permutation`, made with key `spec`, as a permutation file.
///
/// # Errors
/// [`FileError::Write`] for a write failure.
pub fn write_permutation(
    out: impl Write,
    permutation: &Permutation,
    spec: &KeySpec,
) -> Result<(), FileError> {
    let head = PermutationHead {
        starter_rows: permutation.starter_rows(),
        positions: permutation.positions(),
        key_digest: permutation.key_digest(),
        setup_digest: permutation.setup_digest(),
        entries_digest: permutation.entries_digest(),
    };
    let mut out = std::io::BufWriter::new(out);
    out.write_all(permutation_preamble(&head, spec)?.as_bytes())
        .map_err(FileError::Write)?;
    let mut rows = PermutationRows::new(out)?;
    for (position, row) in permutation.entries() {
        rows.push(position, row)?;
    }
    rows.finish()?.0.flush().map_err(FileError::Write)
}

/// What a permutation file says of itself in its `#` lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PermutationHead {
    /// The starter's rows when the setup was made.
    pub starter_rows: usize,
    /// The setup's positions.
    pub positions: usize,
    /// The digest of the starter's key column then.
    pub key_digest: Digest,
    /// The SHA-256 of the setup message.
    pub setup_digest: Digest,
    /// The digest of its entries ([`Permutation::entries_digest`]).
    pub entries_digest: Digest,
}

/// A permutation file's `#` lines, up to its column names.
pub(crate) fn permutation_preamble(
    head: &PermutationHead,
    spec: &KeySpec,
) -> Result<String, FileError> {
    let mut columns = csv::WriterBuilder::new().from_writer(Vec::new());
    if !spec.columns.is_empty() {
        columns
            .write_record(&spec.columns)
            .map_err(FileError::from_csv_write)?;
    }
    let columns = columns
        .into_inner()
        .map_err(|e| FileError::Write(e.into_error()))?;
    let columns = String::from_utf8_lossy(&columns);
    Ok(format!(
        "{PERMUTATION_MAGIC}\n\
         # setup positions -> your rows; keep this file to yourself\n\
         # starter_rows: {}\n\
         # setup_positions: {}\n\
         # key_columns: {}\n\
         # normalize: {}\n\
         # key_sha256: {}\n\
         # setup_sha256: {}\n\
         # entries_sha256: {}\n",
        head.starter_rows,
        head.positions,
        columns.trim_end(),
        spec.normalize,
        head.key_digest,
        head.setup_digest,
        head.entries_digest
    ))
}

/// A permutation file's rows from its column names on, written an entry at a time (in
/// position then row order), digested as they go.
pub(crate) struct PermutationRows<W: Write> {
    csv: csv::Writer<W>,
    digest: super::permutation::EntriesDigest,
}

impl<W: Write> PermutationRows<W> {
    /// Writes the column names.
    pub(crate) fn new(out: W) -> Result<Self, FileError> {
        let mut csv = csv::Writer::from_writer(out);
        csv.write_record(PERMUTATION_COLUMNS)
            .map_err(FileError::from_csv_write)?;
        Ok(Self {
            csv,
            digest: super::permutation::EntriesDigest::new(),
        })
    }

    /// Writes `(setup position, 0-based starter row)`.
    pub(crate) fn push(&mut self, position: usize, row: usize) -> Result<(), FileError> {
        self.digest.push(position, row);
        self.csv
            .write_record([position.to_string(), (row + 1).to_string()])
            .map_err(FileError::from_csv_write)
    }

    /// The output and the entries' digest.
    pub(crate) fn finish(self) -> Result<(W, Digest), FileError> {
        let out = self
            .csv
            .into_inner()
            .map_err(|e| FileError::Write(e.into_error()))?;
        Ok((out, self.digest.finish()))
    }
}

/// Reads a permutation file and the key spec it was made with.
///
/// # Errors
/// Not a permutation file, a missing or malformed field, a malformed row (each naming the
/// line and field), or an invalid permutation ([`FileError::Linkage`]).
pub fn read_permutation(reader: impl Read) -> Result<(Permutation, KeySpec), FileError> {
    let file = PermutationFile::open(reader)?;
    let (head, spec) = (file.head, file.spec.clone());
    let mut entries = Vec::new();
    file.entries::<FileError>(|_, position, row| {
        entries.push((position, row));
        Ok(())
    })?;
    let permutation = Permutation::from_entries(
        head.starter_rows,
        head.key_digest,
        head.setup_digest,
        head.positions,
        &entries,
        Some(head.entries_digest),
    )?;
    Ok((permutation, spec))
}

/// A permutation file whose `#` lines are read, its entries not yet: how a step past memory
/// reads one.
pub struct PermutationFile<R: Read> {
    /// What its `#` lines say.
    pub head: PermutationHead,
    /// The key spec it was made with.
    pub spec: KeySpec,
    reader: BufReader<LineLimit<R>>,
}

impl<R: Read> PermutationFile<R> {
    /// Reads a permutation file's `#` lines.
    ///
    /// # Errors
    /// Not a permutation file, a missing or malformed field.
    pub fn open(reader: R) -> Result<Self, FileError> {
        let (fields, reader) =
            read_preamble(reader, PERMUTATION_MAGIC, "psi setup --permutation-out")?;
        let head = PermutationHead {
            starter_rows: fields.parse("starter_rows")?,
            positions: fields.parse("setup_positions")?,
            key_digest: fields.parse("key_sha256")?,
            setup_digest: fields.parse("setup_sha256")?,
            entries_digest: fields.parse("entries_sha256")?,
        };
        let normalize: bool = fields.parse("normalize")?;
        let columns_text = fields.get("key_columns")?;
        let columns = if columns_text.is_empty() {
            Vec::new()
        } else {
            csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(columns_text.as_bytes())
                .records()
                .next()
                .transpose()
                .ok()
                .flatten()
                .map(|r| r.iter().map(str::to_owned).collect())
                .ok_or(FileError::BadField {
                    field: "key_columns",
                    value: quoted(columns_text.as_bytes()),
                })?
        };
        Ok(Self {
            head,
            spec: KeySpec { columns, normalize },
            reader,
        })
    }

    /// Gives each entry, in file order, to `entry`: its 1-based data line, its setup position
    /// and its 0-based starter row.
    ///
    /// # Errors
    /// A malformed row (naming its line and field), or `entry`'s error.
    pub fn entries<E: From<FileError>>(
        self,
        mut entry: impl FnMut(usize, usize, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        read_rows(self.reader, PERMUTATION_COLUMNS, |line, [position, row]| {
            if row == 0 {
                return Err(FileError::RowZero {
                    line,
                    field: "starter_row",
                }
                .into());
            }
            entry(line, position, row - 1)
        })
    }
}

/// Writes `pairs` as a pairs file.
///
/// # Errors
/// [`FileError::Write`] for a write failure.
pub fn write_pairs(out: impl Write, pairs: &Pairs) -> Result<(), FileError> {
    let mut out = std::io::BufWriter::new(out);
    out.write_all(
        pairs_preamble(pairs.joiner_rows, pairs.joiner_keys, pairs.setup_digest).as_bytes(),
    )
    .map_err(FileError::Write)?;
    let mut rows = PairsRows::new(out)?;
    for pair in &pairs.pairs {
        rows.push(pair.joiner_row, pair.joiner_key, pair.setup_position)?;
    }
    rows.finish()?.flush().map_err(FileError::Write)
}

/// A pairs file's `#` lines, up to its column names.
pub(crate) fn pairs_preamble(
    joiner_rows: usize,
    joiner_keys: usize,
    setup_digest: Digest,
) -> String {
    format!(
        "{PAIRS_MAGIC}\n\
         # matched joiner rows, for the starter's `lockstep psi resolve`\n\
         # joiner_rows: {joiner_rows}\n\
         # joiner_keys: {joiner_keys}\n\
         # setup_sha256: {setup_digest}\n"
    )
}

/// A pairs file's rows from its column names on, written a pair at a time.
pub(crate) struct PairsRows<W: Write> {
    csv: csv::Writer<W>,
}

impl<W: Write> PairsRows<W> {
    /// Writes the column names.
    pub(crate) fn new(out: W) -> Result<Self, FileError> {
        let mut csv = csv::Writer::from_writer(out);
        csv.write_record(PAIRS_COLUMNS)
            .map_err(FileError::from_csv_write)?;
        Ok(Self { csv })
    }

    /// Writes a pair: the 0-based joiner row, its key's number, the setup position.
    pub(crate) fn push(
        &mut self,
        row: usize,
        key: usize,
        position: usize,
    ) -> Result<(), FileError> {
        self.csv
            .write_record([(row + 1).to_string(), key.to_string(), position.to_string()])
            .map_err(FileError::from_csv_write)
    }

    /// The output.
    pub(crate) fn finish(self) -> Result<W, FileError> {
        self.csv
            .into_inner()
            .map_err(|e| FileError::Write(e.into_error()))
    }
}

/// Reads a pairs file, in file order.
///
/// # Errors
/// Not a pairs file, a missing or malformed field, or a malformed row, each naming the line
/// and field.
pub fn read_pairs(reader: impl Read) -> Result<Pairs, FileError> {
    let file = PairsFile::open(reader)?;
    let mut pairs = Pairs {
        joiner_rows: file.joiner_rows,
        joiner_keys: file.joiner_keys,
        setup_digest: file.setup_digest,
        pairs: Vec::new(),
    };
    file.pairs::<FileError>(|_, pair| {
        pairs.pairs.push(pair);
        Ok(())
    })?;
    Ok(pairs)
}

/// A pairs file whose `#` lines are read, its pairs not yet: how a step past memory reads one.
pub struct PairsFile<R: Read> {
    /// The joiner's data rows.
    pub joiner_rows: usize,
    /// The joiner's distinct keys.
    pub joiner_keys: usize,
    /// The SHA-256 of the setup the pairs answer.
    pub setup_digest: Digest,
    reader: BufReader<LineLimit<R>>,
}

impl<R: Read> PairsFile<R> {
    /// Reads a pairs file's `#` lines.
    ///
    /// # Errors
    /// Not a pairs file, a missing or malformed field.
    pub fn open(reader: R) -> Result<Self, FileError> {
        let (fields, reader) = read_preamble(reader, PAIRS_MAGIC, "psi intersect --pairs-out")?;
        Ok(Self {
            joiner_rows: fields.parse("joiner_rows")?,
            joiner_keys: fields.parse("joiner_keys")?,
            setup_digest: fields.parse("setup_sha256")?,
            reader,
        })
    }

    /// Gives each pair, in file order, to `pair` with its 1-based number.
    ///
    /// # Errors
    /// A malformed row (naming its line and field), or `pair`'s error.
    pub fn pairs<E: From<FileError>>(
        self,
        mut pair: impl FnMut(usize, Pair) -> Result<(), E>,
    ) -> Result<(), E> {
        read_rows(self.reader, PAIRS_COLUMNS, |line, [row, key, position]| {
            if row == 0 {
                return Err(FileError::RowZero {
                    line,
                    field: "joiner_row",
                }
                .into());
            }
            pair(
                line,
                Pair {
                    joiner_row: row - 1,
                    joiner_key: key,
                    setup_position: position,
                },
            )
        })
    }
}

/// The `# name: value` lines of a file.
struct Preamble(HashMap<String, String>);

impl Preamble {
    fn get(&self, name: &'static str) -> Result<&str, FileError> {
        self.0
            .get(name)
            .map(String::as_str)
            .ok_or(FileError::MissingField(name))
    }

    fn parse<T: std::str::FromStr>(&self, name: &'static str) -> Result<T, FileError> {
        let text = self.get(name)?;
        text.parse().map_err(|_| FileError::BadField {
            field: name,
            value: quoted(text.as_bytes()),
        })
    }
}

/// Reads the `# name: value` lines after the `magic` first line; the reader is left at the CSV.
fn read_preamble<R: Read>(
    reader: R,
    magic: &'static str,
    writer: &'static str,
) -> Result<(Preamble, BufReader<LineLimit<R>>), FileError> {
    let not_this = FileError::NotThisFormat { writer, magic };
    let mut reader = BufReader::new(LineLimit::new(reader));
    let mut fields = HashMap::new();
    let mut first = true;
    for lines in 0.. {
        if lines == MAX_PREAMBLE_LINES {
            return Err(FileError::LongPreamble(MAX_PREAMBLE_LINES));
        }
        let buffered = reader.fill_buf().map_err(FileError::Read)?;
        if buffered.first() != Some(&b'#') {
            if first {
                return Err(not_this);
            }
            break;
        }
        let mut line = Vec::new();
        reader
            .read_until(b'\n', &mut line)
            .map_err(FileError::Read)?;
        let line = String::from_utf8(line).map_err(|_| {
            FileError::Read(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "a line starting with # is not UTF-8 text",
            ))
        })?;
        let line = line.trim_end_matches(['\r', '\n']);
        if first {
            if line != magic {
                return Err(not_this);
            }
            first = false;
        } else if let Some((name, value)) = line.trim_start_matches('#').trim().split_once(": ") {
            fields.insert(name.to_owned(), value.to_owned());
        } else if let Some(name) = line.trim_start_matches('#').trim().strip_suffix(':') {
            fields.insert(name.to_owned(), String::new());
        }
    }
    Ok((Preamble(fields), reader))
}

/// Calls `row(line, values)` for each data row, with the named number columns' values and the
/// row's 1-based number, one row in memory at a time.
fn read_rows<const N: usize, E: From<FileError>>(
    reader: impl Read,
    names: [&'static str; N],
    mut row: impl FnMut(usize, [usize; N]) -> Result<(), E>,
) -> Result<(), E> {
    let mut csv = csv::Reader::from_reader(reader);
    let header = csv.byte_headers().map_err(FileError::Csv)?.clone();
    if !header.iter().eq(names.iter().map(|n| n.as_bytes())) {
        return Err(FileError::Columns(names.join(",")).into());
    }
    let mut record = csv::ByteRecord::new();
    let mut line = 0;
    while csv.read_byte_record(&mut record).map_err(FileError::Csv)? {
        line += 1;
        if record.len() != N {
            return Err(FileError::RowFields {
                line,
                found: record.len(),
                expected: N,
            }
            .into());
        }
        let mut values = [0usize; N];
        for ((value, field), text) in values.iter_mut().zip(names).zip(record.iter()) {
            *value = std::str::from_utf8(text)
                .ok()
                .and_then(|t| t.parse::<usize>().ok())
                .ok_or_else(|| FileError::NotANumber {
                    line,
                    field,
                    value: quoted(text),
                })?;
        }
        row(line, values)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linkage::KeyTable;

    #[test]
    fn permutation_and_pairs_files_round_trip() {
        let keys = KeyTable::build(["b", "a", "", "b"].map(|k| k.as_bytes().to_vec()));
        let permutation = Permutation::new(&[1, 0], &keys, Digest::of(b"setup")).unwrap();
        let spec = KeySpec {
            columns: vec!["name".to_owned(), "date, of birth".to_owned()],
            normalize: true,
        };
        let mut file = Vec::new();
        write_permutation(&mut file, &permutation, &spec).unwrap();
        let text = String::from_utf8(file.clone()).unwrap();
        assert!(
            text.contains("# key_columns: name,\"date, of birth\"\n"),
            "{text}"
        );
        assert!(
            text.ends_with("setup_position,starter_row\n0,2\n1,1\n1,4\n"),
            "{text}"
        );
        assert_eq!(read_permutation(&file[..]).unwrap(), (permutation, spec));

        let pairs = Pairs {
            joiner_rows: 4,
            joiner_keys: 3,
            setup_digest: Digest::of(b"setup"),
            pairs: vec![Pair {
                joiner_row: 3,
                joiner_key: 0,
                setup_position: 0,
            }],
        };
        let mut file = Vec::new();
        write_pairs(&mut file, &pairs).unwrap();
        assert!(
            String::from_utf8_lossy(&file)
                .ends_with("joiner_row,joiner_key,setup_position\n4,0,0\n")
        );
        assert_eq!(read_pairs(&file[..]).unwrap(), pairs);
    }

    #[test]
    fn other_files_are_refused_naming_line_and_field() {
        let message = |text: String| {
            read_pairs(text.as_bytes())
                .unwrap_err()
                .in_file("x.csv")
                .to_string()
        };
        assert_eq!(
            message("joiner_row,setup_position\n1,0\n".to_owned()),
            "x.csv is not a file `lockstep psi intersect --pairs-out` writes (its first line is not \"# lockstep psi pairs v1\")"
        );
        let digest = Digest::of(b"");
        let head = format!(
            "{PAIRS_MAGIC}\n# joiner_rows: 3\n# joiner_keys: 3\n# setup_sha256: {digest}\n"
        );
        assert_eq!(
            message(format!(
                "{PAIRS_MAGIC}\n# joiner_rows: 3\n# setup_sha256: {digest}\njoiner_row,joiner_key,setup_position\n"
            )),
            "x.csv: the line \"# joiner_keys: ...\" is missing"
        );
        assert_eq!(
            message(format!("{PAIRS_MAGIC}\n# joiner_rows: many\n")),
            "x.csv: joiner_rows \"many\" is not what it should be"
        );
        assert_eq!(
            message(format!(
                "{head}joiner_row,joiner_key,setup_position\n1,0,x\n"
            )),
            "x.csv: data row 1: setup_position \"x\" is not a number"
        );
        assert_eq!(
            message(format!(
                "{head}joiner_row,joiner_key,setup_position\n1,0,1\n0,0,2\n"
            )),
            "x.csv: data row 2: joiner_row 0 (rows count from 1)"
        );
        assert_eq!(
            message(format!("{head}joiner_row,joiner_key\n")),
            "x.csv: the columns must be joiner_row,joiner_key,setup_position"
        );
        assert!(
            message(format!("{head}joiner_row,joiner_key,setup_position\n1,0\n"))
                .contains("found record with 2 fields"),
        );
        let many = format!("{PAIRS_MAGIC}\n{}", "# x: 1\n".repeat(70));
        assert_eq!(message(many), "x.csv: more than 64 lines starting with #");
    }
}
