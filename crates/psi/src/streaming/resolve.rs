//! The starter's resolve: the joiner's pairs through a permutation read an entry at a time to
//! the starter's rows, written as the sorts give them.

use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use lockstep_shard::spill::ExternalSort;
use lockstep_shard::{Control, Pool};

use super::{Budget, KeyIndex, LinkageFile, StreamingError, check_unchanged, record_at};
use crate::linkage::link_files::{PairsFile, PermutationFile};
use crate::linkage::permutation::EntriesDigest;
use crate::linkage::{FileError, KeyReader, LinkageError};

/// Resolves `pairs` through `permutation` to the starter's rows, as
/// [`linkage::resolve`](crate::linkage::resolve) then
/// [`write_resolved`](crate::linkage::write_resolved) do: `index` and `records` are the
/// starter's input now (indexed, and read again from its first row), which must be the input
/// the permutation was made from. Writes the matched row pairs' CSV to `out` and returns how
/// many.
///
/// The permutation's entries are read once, in any order as memory takes them: their ranges
/// checked as they come, then sorted on disk by row (a row listed twice) and by position (a
/// position without rows, the entries' digest, the positions' rows compared with the index's
/// keys through one more sort, the pairs' positions met). The pairs (the joiner's matched rows) are read once and checked
/// through three sorts (by row, position and key), the first refusal in file order kept as
/// memory's checks give it; the matched starter rows are read in row order, written to an
/// unnamed file, and put in `(joiner row, starter row)` order by a sort of their offsets.
///
/// # Errors
/// In this order: [`LinkageError::RowCountChanged`], [`LinkageError::KeysChanged`],
/// [`LinkageError::InvalidPermutation`] for another number of positions than keys,
/// [`LinkageError::OtherSetup`], the pairs' first error in file order as
/// [`linkage::resolve`](crate::linkage::resolve) names it (all as
/// [`StreamingError::Linkage`]); then, reading the
/// permutation, [`LinkageError::InvalidPermutation`] as
/// [`Permutation::from_entries`](crate::linkage::Permutation::from_entries) names it (too few
/// entries, an entry out of range, a row listed twice, a position without rows, edited
/// entries), or for positions that are not the input's keys; the files', the sorts' and the output's errors.
///
/// # Panics
/// Never: the sorts give back the records pushed.
#[allow(clippy::too_many_arguments, reason = "one step's inputs, each needed")]
pub fn resolve<P: Read, Q: Read, I: Read, W: Write>(
    pool: &Pool,
    control: &Control,
    permutation: PermutationFile<P>,
    index: &KeyIndex,
    pairs: PairsFile<Q>,
    records: KeyReader<I>,
    budget: &Budget<'_>,
    mut out: W,
) -> Result<u64, StreamingError> {
    let head = permutation.head;
    if index.row_count() != head.starter_rows {
        return Err(LinkageError::RowCountChanged {
            then: head.starter_rows,
            now: index.row_count(),
        }
        .into());
    }
    if index.digest() != head.key_digest {
        return Err(LinkageError::KeysChanged.into());
    }
    if head.positions != index.len() {
        return Err(invalid(format!(
            "it has {} setup positions but the input has {} distinct keys",
            head.positions,
            index.len()
        )));
    }
    if pairs.setup_digest != head.setup_digest {
        return Err(LinkageError::OtherSetup {
            permutation: head.setup_digest,
            pairs: pairs.setup_digest,
        }
        .into());
    }
    let wanted = check_pairs(pool, control, pairs, head.positions, budget)?;
    let mut wanted = wanted.peekable();

    // The entries in any order, as memory takes them: ranges checked in file order, then
    // sorted by (position, row) and by (row, entry) on disk.
    let mut by_position = ExternalSort::<16>::new(&budget.spill(5))?;
    let mut by_row = ExternalSort::<16>::new(&budget.spill(5))?;
    let (mut entries, mut out_of_range) = (0usize, None::<StreamingError>);
    let read = permutation.entries::<In<false>>(|_, position, row| {
        (|| -> Result<(), StreamingError> {
            entries += 1;
            if out_of_range.is_some() {
                // Counted still: too few entries for the positions is said first.
                return Ok(());
            }
            if position >= head.positions {
                out_of_range = Some(invalid(format!(
                    "entry {entries}: setup position {position} is outside its {} positions",
                    head.positions
                )));
            } else if row >= head.starter_rows {
                out_of_range = Some(invalid(format!(
                    "entry {entries}: starter row {} is beyond its {} rows",
                    row.saturating_add(1),
                    head.starter_rows
                )));
            } else {
                by_position.push(pool, control, pair(position, row))?;
                by_row.push(pool, control, pair(row, entries))?;
            }
            Ok(())
        })()
        .map_err(In)
    });
    read.map_err(|In(e)| e)?;
    if head.positions > entries {
        return Err(invalid(format!(
            "{entries} entries cannot cover {} setup positions",
            head.positions
        )));
    }
    if let Some(error) = out_of_range {
        return Err(error);
    }
    // A row listed twice: the lowest entry repeating an earlier entry's row, as memory names it.
    let (mut twice, mut last_row) = (None::<(usize, usize)>, None);
    for record in by_row.finish(pool, control)? {
        let record = record?;
        let (row, entry) = (row_number(&record[..8]), row_number(&record[8..]));
        if last_row == Some(row) && twice.is_none_or(|(e, _)| entry < e) {
            twice = Some((entry, row));
        }
        last_row = Some(row);
    }
    if let Some((entry, row)) = twice {
        return Err(invalid(format!(
            "entry {entry}: starter row {} is listed twice",
            row + 1
        )));
    }

    let mut groups = ExternalSort::<16>::new(&budget.spill(5))?;
    let mut by_starter = ExternalSort::<16>::new(&budget.spill(5))?;
    let mut digest = EntriesDigest::new();
    let (mut previous, mut first_row) = (None::<usize>, 0);
    // The joiner rows matched at the current position.
    let mut at_position: Vec<(usize, usize)> = Vec::new();
    for entry in by_position.finish(pool, control)? {
        let entry = entry?;
        let (position, row) = (row_number(&entry[..8]), row_number(&entry[8..]));
        digest.push(position, row);
        if previous != Some(position) {
            let expected = previous.map_or(0, |p| p + 1);
            if position != expected {
                return Err(invalid(format!(
                    "setup position {expected} has no starter row"
                )));
            }
            first_row = row;
            previous = Some(position);
            // The pairs at this position (sorted by position, then joiner row), kept while
            // the position's rows come.
            at_position.clear();
            take_at(&mut wanted, position, &mut at_position)?;
        }
        groups.push(pool, control, pair(first_row, row))?;
        for &(_, joiner_row) in &at_position {
            by_starter.push(pool, control, pair(row, joiner_row))?;
        }
    }
    // Pairs past the last position would be an invariant broken (positions were checked), and
    // a read error of the sort must not go unsaid.
    take_at(&mut wanted, usize::MAX, &mut at_position)?;
    let last = previous.map_or(0, |p| p + 1);
    if last != head.positions {
        return Err(invalid(format!("setup position {last} has no starter row")));
    }
    if digest.finish() != head.entries_digest {
        return Err(invalid(
            "its entries are not those it was written with (edited?)".to_owned(),
        ));
    }
    // Each position's rows, given by its first row, are exactly the rows of one key.
    let mut ours = groups.finish(pool, control)?;
    let index_error = |source| StreamingError::Index {
        dir: index.dir().to_owned(),
        source,
    };
    let mut theirs = index.first_row_records()?;
    loop {
        let (a, b) = (
            ours.next().transpose()?,
            theirs.next().transpose().map_err(index_error)?,
        );
        if a != b {
            return Err(invalid(
                "its setup positions do not hold exactly the rows of one key of the input each"
                    .to_owned(),
            ));
        }
        if a.is_none() {
            break;
        }
    }
    let mut records = records.digested();
    let written = write_rows(pool, control, budget, by_starter, &mut records, &mut out)?;
    check_unchanged(records, index)?;
    Ok(written)
}

/// The first refusal of the pairs in file order, as [`PairCheck`] in memory gives it: each
/// check's first violation found through a sort, the lowest pair number kept (ties in the
/// order memory checks them). Returns the pairs' `(position, joiner row)` records sorted.
fn check_pairs<Q: Read>(
    pool: &Pool,
    control: &Control,
    pairs: PairsFile<Q>,
    positions: usize,
    budget: &Budget<'_>,
) -> Result<lockstep_shard::spill::Sorted<16>, StreamingError> {
    let (joiner_rows, joiner_keys) = (pairs.joiner_rows, pairs.joiner_keys);
    let mut first: Option<(usize, u8, LinkageError)> = None;
    let mut keep = |pair: usize, rank: u8, error: LinkageError| {
        if first
            .as_ref()
            .is_none_or(|(p, r, _)| (pair, rank) < (*p, *r))
        {
            first = Some((pair, rank, error));
        }
    };
    let mut by_row = ExternalSort::<16>::new(&budget.spill(4))?;
    let mut by_position = ExternalSort::<32>::new(&budget.spill(4))?;
    let mut by_key = ExternalSort::<24>::new(&budget.spill(4))?;
    let read = pairs.pairs::<In<true>>(|n, p| {
        (|| -> Result<(), StreamingError> {
            let range = if p.setup_position >= positions {
                Some(LinkageError::PositionOutOfRange {
                    pair: n,
                    position: p.setup_position,
                    positions,
                })
            } else if p.joiner_row >= joiner_rows {
                Some(LinkageError::JoinerRowOutOfRange {
                    pair: n,
                    row: p.joiner_row.saturating_add(1),
                    rows: joiner_rows,
                })
            } else if p.joiner_key >= joiner_keys {
                Some(LinkageError::JoinerKeyOutOfRange {
                    pair: n,
                    key: p.joiner_key,
                    keys: joiner_keys,
                })
            } else {
                None
            };
            if let Some(error) = range {
                keep(n, 0, error);
                return Ok(());
            }
            by_row.push(pool, control, pair(p.joiner_row, n))?;
            let mut record = [0u8; 32];
            record[..16].copy_from_slice(&pair(p.setup_position, n));
            record[16..].copy_from_slice(&pair(p.joiner_key, p.joiner_row));
            by_position.push(pool, control, record)?;
            let mut record = [0u8; 24];
            record[..16].copy_from_slice(&pair(p.joiner_key, n));
            record[16..].copy_from_slice(&(p.setup_position as u64).to_be_bytes());
            by_key.push(pool, control, record)?;
            Ok(())
        })()
        .map_err(In)
    });
    read.map_err(|In(e)| e)?;
    let mut previous: Option<usize> = None;
    for record in by_row.finish(pool, control)? {
        let record = record?;
        let (row, n) = (row_number(&record[..8]), row_number(&record[8..]));
        if previous == Some(row) {
            keep(
                n,
                1,
                LinkageError::RowListedTwice {
                    pair: n,
                    row: row + 1,
                },
            );
        }
        previous = Some(row);
    }
    let mut wanted = ExternalSort::<16>::new(&budget.spill(4))?;
    let mut claimed: Option<(usize, usize)> = None;
    for record in by_position.finish(pool, control)? {
        let record = record?;
        let (position, n) = (row_number(&record[..8]), row_number(&record[8..16]));
        let (key, row) = (row_number(&record[16..24]), row_number(&record[24..]));
        match claimed {
            Some((p, first_key)) if p == position => {
                if first_key != key {
                    keep(
                        n,
                        2,
                        LinkageError::PositionClaimedTwice {
                            pair: n,
                            position,
                            first: first_key,
                            second: key,
                        },
                    );
                }
            }
            _ => claimed = Some((position, key)),
        }
        wanted.push(pool, control, pair(position, row))?;
    }
    let mut placed: Option<(usize, usize)> = None;
    for record in by_key.finish(pool, control)? {
        let record = record?;
        let (key, n) = (row_number(&record[..8]), row_number(&record[8..16]));
        let position = row_number(&record[16..]);
        match placed {
            Some((k, first_position)) if k == key => {
                if first_position != position {
                    keep(
                        n,
                        3,
                        LinkageError::KeyAtTwoPositions {
                            pair: n,
                            key,
                            first: first_position,
                            second: position,
                        },
                    );
                }
            }
            _ => placed = Some((key, position)),
        }
    }
    if let Some((_, _, error)) = first {
        return Err(error.into());
    }
    Ok(wanted.finish(pool, control)?)
}

/// Moves the `(position, joiner row)` records of `wanted` at `position` into `at` (those before
/// it are skipped: a position the permutation has no entry for is refused after the pass).
fn take_at(
    wanted: &mut std::iter::Peekable<lockstep_shard::spill::Sorted<16>>,
    position: usize,
    at: &mut Vec<(usize, usize)>,
) -> Result<(), StreamingError> {
    loop {
        let next = match wanted.peek() {
            None => return Ok(()),
            Some(Ok(next)) => *next,
            Some(Err(_)) => {
                return Err(wanted
                    .next()
                    .expect("invariant: peeked")
                    .expect_err("invariant: peeked an error")
                    .into());
            }
        };
        let p = row_number(&next[..8]);
        if p > position {
            return Ok(());
        }
        if p == position {
            at.push((p, row_number(&next[8..])));
        }
        wanted.next();
    }
}

/// A step's error while a linkage file is read, the file's own (a malformed row) named as the
/// pairs' (`PAIRS`) or the permutation's.
struct In<const PAIRS: bool>(StreamingError);

impl<const PAIRS: bool> From<FileError> for In<PAIRS> {
    fn from(error: FileError) -> Self {
        let file = if PAIRS {
            LinkageFile::Pairs
        } else {
            LinkageFile::Permutation
        };
        Self(StreamingError::Reading(file, error))
    }
}

fn invalid(what: String) -> StreamingError {
    LinkageError::InvalidPermutation(what).into()
}

fn pair(a: usize, b: usize) -> [u8; 16] {
    let mut record = [0u8; 16];
    record[..8].copy_from_slice(&(a as u64).to_be_bytes());
    record[8..].copy_from_slice(&(b as u64).to_be_bytes());
    record
}

fn number(bytes: &[u8]) -> u64 {
    u64::from_be_bytes(bytes.try_into().expect("invariant: 8 bytes"))
}

fn row_number(bytes: &[u8]) -> usize {
    usize::try_from(number(bytes)).expect("invariant: counted in usize")
}

/// Writes the resolved pairs, `(starter row, joiner row)` records sorted by starter row: each
/// starter row's line written (in that order) to an unnamed file, then copied out in
/// `(joiner row, starter row)` order.
fn write_rows<I: Read, W: Write>(
    pool: &Pool,
    control: &Control,
    budget: &Budget<'_>,
    by_starter: ExternalSort<16>,
    records: &mut KeyReader<I>,
    out: &mut W,
) -> Result<u64, StreamingError> {
    let failed = LinkageFile::Rows.error();
    let spill_error = |source| StreamingError::Index {
        dir: budget.dir.to_owned(),
        source,
    };
    let mut header = csv::Writer::from_writer(Vec::new());
    let mut fields: Vec<&[u8]> = vec![b"joiner_row", b"starter_row"];
    let own = records
        .header_fields()
        .iter()
        .map(|f| f.to_vec())
        .collect::<Vec<_>>();
    fields.extend(own.iter().map(Vec::as_slice));
    header
        .write_record(&fields)
        .map_err(|e| failed(FileError::from_csv_write(e)))?;
    let header = header
        .into_inner()
        .map_err(|e| failed(FileError::Write(e.into_error())))?;

    let lines = tempfile::tempfile_in(budget.dir).map_err(spill_error)?;
    let mut lines = BufWriter::with_capacity(1 << 16, lines);
    let mut offset = 0u64;
    let mut by_joiner = ExternalSort::<32>::new(&budget.spill(4))?;
    for record in by_starter.finish(pool, control)? {
        let record = record?;
        let (starter_row, joiner_row) = (row_number(&record[..8]), row_number(&record[8..]));
        let fields = record_at(records, starter_row)?;
        let numbers = [(joiner_row + 1).to_string(), (starter_row + 1).to_string()];
        let mut row: Vec<&[u8]> = numbers.iter().map(String::as_bytes).collect();
        row.extend(fields.iter());
        // A writer a line: its bytes are the line as the in-memory writer writes it.
        let mut line = csv::Writer::from_writer(Vec::with_capacity(128));
        line.write_record(&row)
            .map_err(|e| failed(FileError::from_csv_write(e)))?;
        let bytes = line
            .into_inner()
            .map_err(|e| failed(FileError::Write(e.into_error())))?;
        lines.write_all(&bytes).map_err(spill_error)?;
        let mut entry = [0u8; 32];
        entry[..8].copy_from_slice(&(joiner_row as u64).to_be_bytes());
        entry[8..16].copy_from_slice(&(starter_row as u64).to_be_bytes());
        entry[16..24].copy_from_slice(&offset.to_be_bytes());
        entry[24..].copy_from_slice(&(bytes.len() as u64).to_be_bytes());
        by_joiner.push(pool, control, entry)?;
        offset += bytes.len() as u64;
    }
    let mut lines = lines
        .into_inner()
        .map_err(|e| spill_error(e.into_error()))?;
    lines.seek(SeekFrom::Start(0)).map_err(spill_error)?;
    let mut lines = BufReader::with_capacity(1 << 16, lines);
    let mut at = 0u64;
    let mut out = BufWriter::with_capacity(1 << 20, out);
    out.write_all(&header)
        .map_err(|e| failed(FileError::Write(e)))?;
    let mut buffer = Vec::new();
    let mut written = 0;
    for entry in by_joiner.finish(pool, control)? {
        let entry = entry?;
        let (start, len) = (number(&entry[16..24]), number(&entry[24..]));
        if start != at {
            let signed = |offset: u64| i64::try_from(offset).expect("invariant: a file offset");
            lines
                .seek_relative(signed(start) - signed(at))
                .map_err(spill_error)?;
        }
        buffer.resize(
            usize::try_from(len).expect("invariant: a line in memory"),
            0,
        );
        lines.read_exact(&mut buffer).map_err(spill_error)?;
        at = start + len;
        out.write_all(&buffer)
            .map_err(|e| failed(FileError::Write(e)))?;
        written += 1;
    }
    out.flush().map_err(|e| failed(FileError::Write(e)))?;
    Ok(written)
}
