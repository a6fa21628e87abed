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
//! [`KeyTable::digest`](lockstep_psi::linkage::KeyTable::digest)); `entries_sha256` a digest of
//! the permutation's own rows. Reading keeps memory proportional to the data rows, whatever the
//! header lines claim, and accepts at most [`MAX_PREAMBLE_LINES`] `#` lines.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use anyhow::Context as _;
use lockstep_psi::linkage::{Digest, KeySpec, Pair, Pairs, Permutation, quoted};

use crate::files::{LineLimit, open_input};

/// The most `#` lines a file may start with (ours write eight at most).
const MAX_PREAMBLE_LINES: usize = 64;

const PERMUTATION_MAGIC: &str = "# lockstep psi permutation v1";
const PAIRS_MAGIC: &str = "# lockstep psi pairs v1";
const PAIRS_COLUMNS: [&str; 3] = ["joiner_row", "joiner_key", "setup_position"];

/// Writes `permutation`, made with key `spec`, as a permutation file.
///
/// # Errors
/// A write failure.
pub(crate) fn write_permutation(
    file: &mut File,
    permutation: &Permutation,
    spec: &KeySpec,
) -> anyhow::Result<()> {
    let mut columns = csv::WriterBuilder::new().from_writer(Vec::new());
    if !spec.columns.is_empty() {
        columns.write_record(&spec.columns)?;
    }
    let columns = String::from_utf8(columns.into_inner().map_err(|e| e.into_error())?)?;
    let mut out = std::io::BufWriter::new(file);
    writeln!(out, "{PERMUTATION_MAGIC}")?;
    writeln!(
        out,
        "# setup positions -> your rows; keep this file to yourself"
    )?;
    writeln!(out, "# starter_rows: {}", permutation.starter_rows())?;
    writeln!(out, "# setup_positions: {}", permutation.positions())?;
    writeln!(out, "# key_columns: {}", columns.trim_end())?;
    writeln!(out, "# normalize: {}", spec.normalize)?;
    writeln!(out, "# key_sha256: {}", permutation.key_digest())?;
    writeln!(out, "# setup_sha256: {}", permutation.setup_digest())?;
    writeln!(out, "# entries_sha256: {}", permutation.entries_digest())?;
    let mut csv = csv::Writer::from_writer(out);
    csv.write_record(["setup_position", "starter_row"])?;
    for (position, row) in permutation.entries() {
        csv.write_record([position.to_string(), (row + 1).to_string()])?;
    }
    csv.into_inner()
        .map_err(|e| e.into_error())?
        .flush()
        .context("writing the permutation")?;
    Ok(())
}

/// Reads a permutation file (given by `--permutation`) and the key spec it was made with.
///
/// # Errors
/// Not a permutation file, a missing or malformed field, a malformed row, or an invalid
/// permutation; each naming the file and, for rows, the data row.
pub(crate) fn read_permutation(path: &Path) -> anyhow::Result<(Permutation, KeySpec)> {
    let shown = path.display();
    let (fields, reader) = read_preamble(
        "--permutation",
        path,
        PERMUTATION_MAGIC,
        "psi setup --permutation-out",
    )?;
    let number = |name: &str| -> anyhow::Result<usize> { parse_field(&fields, name, path) };
    let digest = |name: &str| -> anyhow::Result<Digest> { parse_field(&fields, name, path) };
    let (starter_rows, positions) = (number("starter_rows")?, number("setup_positions")?);
    let (key_digest, setup_digest) = (digest("key_sha256")?, digest("setup_sha256")?);
    let entries_digest = digest("entries_sha256")?;
    let normalize: bool = parse_field(&fields, "normalize", path)?;
    let columns_text = field(&fields, "key_columns", path)?;
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
            .with_context(|| format!("{shown}: key_columns is not a CSV row of names"))?
    };
    let mut entries = Vec::new();
    read_rows(
        reader,
        path,
        ["setup_position", "starter_row"],
        |line, [position, row]| {
            if row == 0 {
                anyhow::bail!("{shown}: data row {line}: starter_row 0 (rows count from 1)");
            }
            entries.push((position, row - 1));
            Ok(())
        },
    )?;
    let permutation = Permutation::from_entries(
        starter_rows,
        key_digest,
        setup_digest,
        positions,
        &entries,
        Some(entries_digest),
    )
    .with_context(|| shown.to_string())?;
    Ok((permutation, KeySpec { columns, normalize }))
}

/// Writes `pairs` as a pairs file.
///
/// # Errors
/// A write failure.
pub(crate) fn write_pairs(file: &mut File, pairs: &Pairs) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(file);
    writeln!(out, "{PAIRS_MAGIC}")?;
    writeln!(
        out,
        "# matched joiner rows, for the starter's `lockstep psi resolve`"
    )?;
    writeln!(out, "# joiner_rows: {}", pairs.joiner_rows)?;
    writeln!(out, "# joiner_keys: {}", pairs.joiner_keys)?;
    writeln!(out, "# setup_sha256: {}", pairs.setup_digest)?;
    let mut csv = csv::Writer::from_writer(out);
    csv.write_record(PAIRS_COLUMNS)?;
    for pair in &pairs.pairs {
        csv.write_record([
            (pair.joiner_row + 1).to_string(),
            pair.joiner_key.to_string(),
            pair.setup_position.to_string(),
        ])?;
    }
    csv.into_inner()
        .map_err(|e| e.into_error())?
        .flush()
        .context("writing the pairs")?;
    Ok(())
}

/// Reads a pairs file (given by `--matches`), in file order.
///
/// # Errors
/// Not a pairs file, a missing or malformed field, or a malformed row, naming the file.
pub(crate) fn read_pairs(path: &Path) -> anyhow::Result<Pairs> {
    let shown = path.display();
    let (fields, reader) =
        read_preamble("--matches", path, PAIRS_MAGIC, "psi intersect --pairs-out")?;
    let joiner_rows = parse_field(&fields, "joiner_rows", path)?;
    let joiner_keys = parse_field(&fields, "joiner_keys", path)?;
    let setup_digest = parse_field(&fields, "setup_sha256", path)?;
    let mut pairs = Vec::new();
    read_rows(reader, path, PAIRS_COLUMNS, |line, [row, key, position]| {
        if row == 0 {
            anyhow::bail!("{shown}: data row {line}: joiner_row 0 (rows count from 1)");
        }
        pairs.push(Pair {
            joiner_row: row - 1,
            joiner_key: key,
            setup_position: position,
        });
        Ok(())
    })?;
    Ok(Pairs {
        joiner_rows,
        joiner_keys,
        setup_digest,
        pairs,
    })
}

type Preamble = (HashMap<String, String>, BufReader<LineLimit<File>>);

/// Reads the `# name: value` lines after the `magic` first line; the reader is left at the CSV.
fn read_preamble(flag: &str, path: &Path, magic: &str, writer: &str) -> anyhow::Result<Preamble> {
    let shown = path.display();
    let mut reader = BufReader::new(LineLimit::new(open_input(flag, path)?));
    let mut fields = HashMap::new();
    let mut first = true;
    for lines in 0.. {
        if lines == MAX_PREAMBLE_LINES {
            anyhow::bail!("{shown}: more than {MAX_PREAMBLE_LINES} lines starting with #");
        }
        let buffered = reader
            .fill_buf()
            .with_context(|| format!("reading {shown}"))?;
        if buffered.first() != Some(&b'#') {
            if first {
                anyhow::bail!(
                    "{shown} is not a file `lockstep {writer}` writes (its first line is not {magic:?})"
                );
            }
            break;
        }
        let mut line = String::new();
        reader
            .read_line(&mut line)
            .with_context(|| format!("reading {shown}: the lines starting with #"))?;
        let line = line.trim_end_matches(['\r', '\n']);
        if first {
            if line != magic {
                anyhow::bail!(
                    "{shown} is not a file `lockstep {writer}` writes (its first line is not {magic:?})"
                );
            }
            first = false;
        } else if let Some((name, value)) = line.trim_start_matches('#').trim().split_once(": ") {
            fields.insert(name.to_owned(), value.to_owned());
        } else if let Some(name) = line.trim_start_matches('#').trim().strip_suffix(':') {
            fields.insert(name.to_owned(), String::new());
        }
    }
    Ok((fields, reader))
}

fn field<'a>(
    fields: &'a HashMap<String, String>,
    name: &str,
    path: &Path,
) -> anyhow::Result<&'a str> {
    fields
        .get(name)
        .map(String::as_str)
        .with_context(|| format!("{}: the line \"# {name}: ...\" is missing", path.display()))
}

fn parse_field<T: std::str::FromStr>(
    fields: &HashMap<String, String>,
    name: &str,
    path: &Path,
) -> anyhow::Result<T> {
    let text = field(fields, name, path)?;
    text.parse().map_err(|_| {
        anyhow::anyhow!(
            "{}: {name} {} is not what it should be",
            path.display(),
            quoted(text.as_bytes())
        )
    })
}

/// Calls `row(line, values)` for each data row, with the named number columns' values and the
/// row's 1-based number, one row in memory at a time.
fn read_rows<const N: usize>(
    reader: BufReader<LineLimit<File>>,
    path: &Path,
    names: [&str; N],
    mut row: impl FnMut(usize, [usize; N]) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let shown = path.display();
    let mut csv = csv::Reader::from_reader(reader);
    let header = csv
        .byte_headers()
        .with_context(|| format!("reading {shown}"))?
        .clone();
    if !header.iter().eq(names.iter().map(|n| n.as_bytes())) {
        anyhow::bail!("{shown}: the columns must be {}", names.join(","));
    }
    let mut record = csv::ByteRecord::new();
    let mut line = 0;
    while csv
        .read_byte_record(&mut record)
        .with_context(|| format!("reading {shown}"))?
    {
        line += 1;
        if record.len() != N {
            anyhow::bail!(
                "{shown}: data row {line} has {} fields, not {N}",
                record.len()
            );
        }
        let mut values = [0usize; N];
        for ((value, name), text) in values.iter_mut().zip(names).zip(record.iter()) {
            *value = std::str::from_utf8(text)
                .ok()
                .and_then(|t| t.parse::<usize>().ok())
                .with_context(|| {
                    format!(
                        "{shown}: data row {line}: {name} {} is not a number",
                        quoted(text)
                    )
                })?;
        }
        row(line, values)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_psi::linkage::KeyTable;

    #[test]
    fn permutation_and_pairs_files_round_trip() {
        let temp = tempfile::tempdir().unwrap();
        let keys = KeyTable::build(["b", "a", "", "b"].map(|k| k.as_bytes().to_vec()));
        let permutation = Permutation::new(&[1, 0], &keys, Digest::of(b"setup")).unwrap();
        let spec = KeySpec {
            columns: vec!["name".to_owned(), "date, of birth".to_owned()],
            normalize: true,
        };
        let path = temp.path().join("perm.csv");
        write_permutation(&mut File::create(&path).unwrap(), &permutation, &spec).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("# key_columns: name,\"date, of birth\"\n"),
            "{text}"
        );
        assert!(
            text.ends_with("setup_position,starter_row\n0,2\n1,1\n1,4\n"),
            "{text}"
        );
        assert_eq!(read_permutation(&path).unwrap(), (permutation, spec));

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
        let path = temp.path().join("pairs.csv");
        write_pairs(&mut File::create(&path).unwrap(), &pairs).unwrap();
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .ends_with("joiner_row,joiner_key,setup_position\n4,0,0\n")
        );
        assert_eq!(read_pairs(&path).unwrap(), pairs);
    }

    #[test]
    fn other_files_are_refused_clearly() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("x.csv");
        std::fs::write(&path, "joiner_row,setup_position\n1,0\n").unwrap();
        let err = format!("{:#}", read_pairs(&path).unwrap_err());
        assert!(
            err.contains("is not a file `lockstep psi intersect --pairs-out` writes"),
            "{err}"
        );
        std::fs::write(
            &path,
            format!("{PAIRS_MAGIC}\n# joiner_rows: 3\n# setup_sha256: {}\njoiner_row,joiner_key,setup_position\n", Digest::of(b"")),
        )
        .unwrap();
        let err = format!("{:#}", read_pairs(&path).unwrap_err());
        assert!(
            err.ends_with("the line \"# joiner_keys: ...\" is missing"),
            "{err}"
        );
        std::fs::write(
            &path,
            format!("{PAIRS_MAGIC}\n# joiner_rows: 3\n# joiner_keys: 3\n# setup_sha256: {}\njoiner_row,joiner_key,setup_position\n1,0,x\n", Digest::of(b"")),
        )
        .unwrap();
        let err = format!("{:#}", read_pairs(&path).unwrap_err());
        assert!(
            err.ends_with("data row 1: setup_position \"x\" is not a number"),
            "{err}"
        );
    }
}
