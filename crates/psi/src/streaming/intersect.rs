//! The joiner's view of a round: the response unmasked block by block, joined with the setup
//! on disk, the matched rows and pairs written as the sorts give them.

use std::io::{Read, Write};

use lockstep_shard::spill::ExternalSort;
use lockstep_shard::{Control, Pool};

use super::{
    Budget, KeyIndex, LinkageFile, StreamingError, check_unchanged, element_weight, in_blocks,
    record_at,
};
use crate::linkage::link_files::{PairsRows, pairs_preamble};
use crate::linkage::records::RowsWriter;
use crate::linkage::{DigestingReader, FileError, KeyReader, Learn};
use crate::{
    ELEMENT_LEN, Element, ElementReader, Joiner, Limits, Mode, PsiError, RawSetupReader,
    ServerSetup, StreamedSetup, bloom, gcs,
};

/// An `(element, key index)` record: sorted, equal elements adjacent.
type ElementKey = [u8; ELEMENT_LEN + 8];

/// What a whole response holds, checked before it is read as the joiner means to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponseScan {
    /// Its elements.
    pub elements: u64,
    /// Whether they are sorted by bytes (a size-only starter's response is).
    pub sorted: bool,
    /// The SHA-256 of its bytes: its second reading must give the same.
    pub digest: crate::linkage::Digest,
}

/// Reads a whole response, checking every element's form and the bound as
/// [`Response::read`](crate::Response::read) does, without keeping them.
///
/// # Errors
/// As [`Response::read`](crate::Response::read).
pub fn scan_response(reader: impl Read, limits: Limits) -> Result<ResponseScan, PsiError> {
    let mut response = ElementReader::response(DigestingReader::new(reader), limits)?;
    let (mut sorted, mut previous) = (true, None);
    while let Some(element) = response.next_element()? {
        sorted &= previous.is_none_or(|p| p <= element);
        previous = Some(element);
    }
    Ok(ResponseScan {
        elements: response.count(),
        sorted,
        digest: response.get_ref().digest(),
    })
}

/// What the joiner found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    /// Distinct keys found in the setup.
    pub size: usize,
    /// Matched rows written (a row matched at two positions counts twice; none for the size).
    pub rows: u64,
    /// Whether the setup was raw.
    pub raw: bool,
}

/// Where the matched rows go: the joiner's record file read again (by the spec its index was
/// built with) and the CSV they are written to.
pub struct RowsOut<I: Read, W: Write> {
    /// The records, from their first row.
    pub records: KeyReader<I>,
    /// The output.
    pub out: W,
}

/// The joiner's view of a round over `index`'s keys: the response `response` reads (checked
/// whole first: [`scan_response`],
/// [`Joiner::check_response_facts`](crate::Joiner::check_response_facts)) unmasked a block at
/// a time and looked up in `setup` (whose bytes `DigestingReader` hashes, as the pairs name
/// them). Writes the matched rows and, after a raw setup, the pairs: the files
/// [`linkage::intersect`](crate::linkage::intersect), [`Intersection::write_rows`](
/// crate::linkage::Intersection::write_rows) and [`write_pairs`](crate::linkage::write_pairs)
/// give for the same messages and rows.
///
/// A raw setup is joined with the unmasked `(element, key)` records sorted on disk; the matches
/// are sorted by key to meet each key's rows, then by row, and the two outputs written as the
/// last sort gives them. A GCS is walked beside the unmasked elements' hashes sorted on disk; a
/// Bloom filter is looked up directly. A repeated response element holds its keys' indexes in
/// memory while it is joined.
///
/// Progress: one step per response element unmasked.
///
/// # Errors
/// [`PsiError::SizeOnly`] for rows asked of a size-only joiner; as
/// [`linkage::intersect`](crate::linkage::intersect) for the elements and the setup (read as it
/// is joined); [`StreamingError::Changed`] if the response gives other elements than its scan;
/// the sorts', the index's and the outputs' errors.
///
/// # Panics
/// Never: every key index sorted is below the index's key count (the response was checked to
/// hold one element per key).
#[allow(clippy::too_many_arguments, reason = "one step's inputs, each needed")]
pub fn intersect<S: Read, R: Read, I: Read, W: Write, P: Write>(
    joiner: &Joiner,
    pool: &Pool,
    control: &Control,
    index: &KeyIndex,
    setup: StreamedSetup<DigestingReader<S>>,
    scan: ResponseScan,
    response: R,
    limits: Limits,
    learn: Learn,
    budget: &Budget<'_>,
    rows_out: Option<RowsOut<I, W>>,
    pairs_out: Option<P>,
) -> Result<Found, StreamingError> {
    if learn == Learn::Rows && joiner.mode() == Mode::SizeOnly {
        return Err(PsiError::SizeOnly.into());
    }
    let keys = index.len();
    if scan.elements != keys as u64 {
        return Err(PsiError::ResponseLength {
            response: usize::try_from(scan.elements).unwrap_or(usize::MAX),
            request: keys,
        }
        .into());
    }
    let mut response = ElementReader::response(DigestingReader::new(response), limits)?;
    let raw = matches!(setup, StreamedSetup::Raw(_));
    if pairs_out.is_some() && !raw {
        return Err(PsiError::NotRaw(format_of(&setup)).into());
    }
    // Every element's key found, by key then position (a GCS or Bloom setup has no positions).
    let mut found = ExternalSort::<16>::new(&budget.spill(2))?;
    let mut size = 0;
    match setup {
        StreamedSetup::Raw(mut elements) => {
            let mut unmasked = ExternalSort::<{ ELEMENT_LEN + 8 }>::new(&budget.spill(2))?;
            unmask_in_blocks(
                joiner,
                pool,
                control,
                &mut response,
                &scan,
                budget,
                |k, e| {
                    let mut record: ElementKey = [0; ELEMENT_LEN + 8];
                    record[..ELEMENT_LEN].copy_from_slice(e.as_bytes());
                    record[ELEMENT_LEN..].copy_from_slice(&(k as u64).to_be_bytes());
                    Ok(unmasked.push(pool, control, record)?)
                },
            )?;
            let sorted = unmasked.finish(pool, control)?;
            size = join_raw(sorted, &mut elements, |k, position, first| {
                if learn == Learn::Rows {
                    found.push(pool, control, pair(k as u64, position))?;
                }
                Ok(usize::from(first))
            })?;
            if learn == Learn::Size {
                return Ok(Found { size, rows: 0, raw });
            }
            let digest = elements.get_ref().digest();
            let found = found.finish(pool, control)?;
            let rows = by_row(pool, control, index, budget, found)?;
            let rows = write_raw(index, digest, rows, rows_out, pairs_out)?;
            return Ok(Found { size, rows, raw });
        }
        StreamedSetup::Whole(ServerSetup::Bloom(filter)) => {
            unmask_in_blocks(
                joiner,
                pool,
                control,
                &mut response,
                &scan,
                budget,
                |k, e| {
                    if bloom::contains(&filter.bits, filter.num_hash_functions, e.as_ref()) {
                        size += 1;
                        if learn == Learn::Rows {
                            found.push(pool, control, pair(k as u64, 0))?;
                        }
                    }
                    Ok(())
                },
            )?;
        }
        StreamedSetup::Whole(ServerSetup::Gcs(code)) => {
            let mut hashes = ExternalSort::<16>::new(&budget.spill(2))?;
            unmask_in_blocks(
                joiner,
                pool,
                control,
                &mut response,
                &scan,
                budget,
                |k, e| {
                    let hash = gcs::element_hash(e.as_ref(), code.hash_range);
                    Ok(hashes.push(pool, control, pair(hash, k))?)
                },
            )?;
            let sorted = hashes.finish(pool, control)?.map(|record| {
                record
                    .map(|r| (u64::from_be_bytes(half(&r[..8])), number(&r[8..])))
                    .map_err(StreamingError::from)
            });
            gcs::walk_members(&code.bits, code.div, sorted, |k| {
                size += 1;
                if learn == Learn::Rows {
                    found.push(pool, control, pair(k as u64, 0))?;
                }
                Ok::<_, StreamingError>(())
            })?;
        }
        StreamedSetup::Whole(ServerSetup::Raw(_)) => {
            return Err(PsiError::Runtime(
                "a raw setup is joined element by element: give it as StreamedSetup::Raw, as \
                 StreamedSetup::read makes it"
                    .to_owned(),
            )
            .into());
        }
    }
    if learn == Learn::Size {
        return Ok(Found { size, rows: 0, raw });
    }
    let found = found.finish(pool, control)?;
    let rows = by_row(pool, control, index, budget, found)?;
    let mut written = 0;
    if let Some(RowsOut { records, out }) = rows_out {
        let mut records = records.digested();
        let header = records
            .header_fields()
            .iter()
            .map(|f| f.to_vec())
            .collect::<Vec<_>>();
        let header: Vec<&[u8]> = header.iter().map(Vec::as_slice).collect();
        let failed = LinkageFile::Rows.error();
        let mut writer = RowsWriter::new(out, &["joiner_row"], &header).map_err(&failed)?;
        for record in rows {
            let row = number(&record?[..8]);
            writer
                .push(&[(row + 1).to_string()], record_at(&mut records, row)?)
                .map_err(&failed)?;
            written += 1;
        }
        writer.finish().map_err(&failed)?;
        check_unchanged(records, index)?;
    }
    Ok(Found {
        size,
        rows: written,
        raw,
    })
}

fn format_of<R: Read>(setup: &StreamedSetup<R>) -> &'static str {
    match setup {
        StreamedSetup::Raw(_) => "raw",
        StreamedSetup::Whole(s) => s.format_name(),
    }
}

/// `(a, b)` as 16 bytes, big-endian: sorted, by `a` then `b`.
fn pair(a: u64, b: usize) -> [u8; 16] {
    let mut record = [0u8; 16];
    record[..8].copy_from_slice(&a.to_be_bytes());
    record[8..].copy_from_slice(&(b as u64).to_be_bytes());
    record
}

fn half(bytes: &[u8]) -> [u8; 8] {
    bytes.try_into().expect("invariant: 8 bytes")
}

fn number(bytes: &[u8]) -> usize {
    usize::try_from(u64::from_be_bytes(half(bytes))).expect("invariant: counted in usize")
}

/// Unmasks the response's elements `budget.block` at a time, giving each with its index to
/// `each`; the response must hold `keys` elements, as its scan found.
#[allow(clippy::too_many_arguments, reason = "one stage's inputs, each needed")]
fn unmask_in_blocks<R: Read>(
    joiner: &Joiner,
    pool: &Pool,
    control: &Control,
    response: &mut ElementReader<DigestingReader<R>>,
    scan: &ResponseScan,
    budget: &Budget<'_>,
    mut each: impl FnMut(usize, Element) -> Result<(), StreamingError>,
) -> Result<(), StreamingError> {
    let expected = usize::try_from(scan.elements).unwrap_or(usize::MAX);
    in_blocks(
        budget,
        expected,
        element_weight,
        || Ok(response.next_element()?),
        |first, block| {
            for (k, element) in (first..).zip(joiner.unmask(pool, control, block, first)?) {
                each(k, element)?;
            }
            Ok(())
        },
    )?;
    // Every key index given is below the scan's count, the index's keys: unless the response
    // changed, which its digest tells.
    if response.get_ref().digest() != scan.digest {
        return Err(StreamingError::Changed { what: "response" });
    }
    Ok(())
}

/// Joins the sorted unmasked `(element, key)` records with the raw setup's elements (sorted,
/// in position order), reading the setup to its end: `matched(key, position, first)` for each
/// pair of equal elements (`first`: the key's first match) returns what it counts. Returns the
/// sum.
fn join_raw<S: Read>(
    mut unmasked: impl Iterator<Item = Result<ElementKey, lockstep_shard::spill::SpillError>>,
    setup: &mut RawSetupReader<S>,
    mut matched: impl FnMut(usize, usize, bool) -> Result<usize, StreamingError>,
) -> Result<usize, StreamingError> {
    // The keys of the current run of equal unmasked elements, and the record after it.
    let mut run: Vec<usize> = Vec::new();
    let mut run_element: Option<[u8; ELEMENT_LEN]> = None;
    let mut run_matched = false;
    let mut ahead = unmasked.next().transpose()?;
    let mut counted = 0;
    let mut position = 0;
    while let Some(element) = setup.next_element()? {
        let element = *element.as_bytes();
        // Move on to the first run not below the setup's element.
        while run_element.is_none_or(|e| e < element) {
            let Some(record) = ahead.take() else {
                run_element = None;
                break;
            };
            let head: [u8; ELEMENT_LEN] = record[..ELEMENT_LEN]
                .try_into()
                .expect("invariant: an element's bytes");
            run.clear();
            run.push(number(&record[ELEMENT_LEN..]));
            run_element = Some(head);
            run_matched = false;
            ahead = unmasked.next().transpose()?;
            while let Some(next) = ahead.filter(|r| r[..ELEMENT_LEN] == head) {
                run.push(number(&next[ELEMENT_LEN..]));
                ahead = unmasked.next().transpose()?;
            }
        }
        if run_element == Some(element) {
            for &k in &run {
                counted += matched(k, position, !run_matched)?;
            }
            run_matched = true;
        }
        position += 1;
    }
    Ok(counted)
}

/// Each matched key's rows, from `(key, position)` records sorted by key: `(row, key number,
/// position)` sorted by row, keys numbered by rank among the matched keys. Keys come in order of
/// first appearance, so a key's rank is its place in the order of its first row: the pairs'
/// numbering, without a map.
fn by_row(
    pool: &Pool,
    control: &Control,
    index: &KeyIndex,
    budget: &Budget<'_>,
    found: lockstep_shard::spill::Sorted<16>,
) -> Result<lockstep_shard::spill::Sorted<24>, StreamingError> {
    let mut rows = ExternalSort::<24>::new(&budget.spill(2))?;
    let mut key_rows = index.key_rows()?;
    // The positions the current key matched (one, but for a setup that repeats elements), and
    // its number among the matched keys.
    let mut positions: Vec<usize> = Vec::new();
    let (mut current, mut numbered) = (None::<usize>, 0usize);
    let mut flush = |key: usize, number: usize, positions: &[usize]| {
        key_rows.rows_of(key, |row| {
            for &position in positions {
                let mut entry = [0u8; 24];
                entry[..8].copy_from_slice(&(row as u64).to_be_bytes());
                entry[8..16].copy_from_slice(&(number as u64).to_be_bytes());
                entry[16..].copy_from_slice(&(position as u64).to_be_bytes());
                rows.push(pool, control, entry)?;
            }
            Ok(())
        })
    };
    for record in found {
        let record = record?;
        let (k, position) = (number(&record[..8]), number(&record[8..]));
        if current != Some(k) {
            if let Some(key) = current {
                flush(key, numbered, &positions)?;
                numbered += 1;
            }
            current = Some(k);
            positions.clear();
        }
        positions.push(position);
    }
    if let Some(key) = current {
        flush(key, numbered, &positions)?;
    }
    Ok(rows.finish(pool, control)?)
}

/// Writes a raw round's matched rows and pairs from `(row, key number, position)` records
/// sorted by row; returns the rows written.
fn write_raw<I: Read, W: Write, P: Write>(
    index: &KeyIndex,
    setup_digest: crate::linkage::Digest,
    rows: lockstep_shard::spill::Sorted<24>,
    rows_out: Option<RowsOut<I, W>>,
    pairs_out: Option<P>,
) -> Result<u64, StreamingError> {
    let (pairs_failed, rows_failed) = (LinkageFile::Pairs.error(), LinkageFile::Rows.error());
    let mut pairs = match pairs_out {
        Some(mut out) => {
            out.write_all(pairs_preamble(index.row_count(), index.len(), setup_digest).as_bytes())
                .map_err(|e| pairs_failed(FileError::Write(e)))?;
            Some(PairsRows::new(out).map_err(&pairs_failed)?)
        }
        None => None,
    };
    let (mut records, mut writer) = match rows_out {
        Some(RowsOut { records, out }) => {
            let records = records.digested();
            let header: Vec<Vec<u8>> = records.header_fields().iter().map(|f| f.to_vec()).collect();
            let header: Vec<&[u8]> = header.iter().map(Vec::as_slice).collect();
            let writer = RowsWriter::new(out, &["joiner_row", "setup_position"], &header)
                .map_err(&rows_failed)?;
            (Some(records), Some(writer))
        }
        None => (None, None),
    };
    let mut written = 0;
    for entry in rows {
        let entry = entry?;
        let (row, key, position) = (
            number(&entry[..8]),
            number(&entry[8..16]),
            number(&entry[16..]),
        );
        if let Some(pairs) = &mut pairs {
            pairs.push(row, key, position).map_err(&pairs_failed)?;
        }
        if let (Some(records), Some(writer)) = (&mut records, &mut writer) {
            let record = record_at(records, row)?;
            writer
                .push(&[(row + 1).to_string(), position.to_string()], record)
                .map_err(&rows_failed)?;
        }
        written += 1;
    }
    if let Some(pairs) = pairs {
        pairs
            .finish()
            .and_then(|mut out| out.flush().map_err(FileError::Write))
            .map_err(&pairs_failed)?;
    }
    if let Some(writer) = writer {
        writer.finish().map_err(&rows_failed)?;
    }
    if let Some(records) = records {
        check_unchanged(records, index)?;
    }
    Ok(written)
}
