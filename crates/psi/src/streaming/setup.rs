//! The starter's setup, masked block by block; a raw setup sorted on disk and written with its
//! permutation as the sorts give them.

use std::io::Write;

use lockstep_shard::spill::ExternalSort;
use lockstep_shard::{Control, Pool};

use super::{
    Budget, KeyIndex, PermutationFacts, PermutationWriter, StreamingError, mask_in_blocks,
};
use crate::linkage::{Digest, DigestingWriter, KeySpec};
use crate::params::Sizing;
use crate::{
    Bloom, ELEMENT_LEN, Element, ElementWriter, Gcs, ServerSetup, SetupParams, Starter, bloom, gcs,
};

/// An `(element, key index)` record: sorted, the raw setup's `(bytes, index)` order.
type ElementKey = [u8; ELEMENT_LEN + 8];

/// What a streamed setup wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetupWritten {
    /// `raw`, `gcs` or `bloom`.
    pub format: &'static str,
    /// The message's length in bytes.
    pub bytes: u64,
    /// Its SHA-256, as the permutation names it.
    pub digest: Digest,
}

/// Writes the starter's setup over `index`'s distinct keys to `out` and, for a raw setup given
/// `permutation`, its permutation file (made with `spec`): the bytes
/// [`linkage::setup`](crate::linkage::setup) then `to_bytes` and
/// [`write_permutation`](crate::linkage::write_permutation) give for the same rows. Returns
/// what was written and both outputs.
///
/// A raw setup's `(element, key)` records are sorted on disk, the message written as they come
/// out; its permutation is two more sorts (by key, to meet each key's rows, then by position),
/// its rows written to an unnamed file in `budget.dir` and put behind its `#` lines once the
/// message's digest is known. A GCS sorts its hashes on disk; its code and a Bloom filter are
/// held in memory (they are the message, about its length), and encoded whole.
///
/// Progress: one step per key masked.
///
/// # Errors
/// As [`SetupParams::check`] before any work ([`StreamingError::Psi`]); a permutation asked of
/// a GCS or Bloom setup ([`PsiError::NotRaw`](crate::PsiError::NotRaw)); the sorts', the
/// index's and the outputs' errors; [`PsiError::Cancelled`](crate::PsiError::Cancelled).
///
/// # Panics
/// Never: the sorts give back the records pushed (each key once, with its rows).
#[allow(clippy::too_many_arguments, reason = "one step's inputs, each needed")]
pub fn setup<W: Write, P: Write>(
    starter: &Starter,
    pool: &Pool,
    control: &Control,
    index: &KeyIndex,
    params: &SetupParams,
    spec: &KeySpec,
    budget: &Budget<'_>,
    out: W,
    permutation: Option<P>,
) -> Result<(SetupWritten, W, Option<P>), StreamingError> {
    let sizing = params.sizing(index.len())?;
    let keys = index.len() as u64;
    let mut out = DigestingWriter::new(out);
    let (format, permutation) = match sizing {
        Sizing::Raw => {
            let mut sorted = ExternalSort::<{ ELEMENT_LEN + 8 }>::new(&budget.spill(2))?;
            mask_in_blocks(
                index,
                budget,
                |block| starter.mask(pool, control, block),
                |k, e| {
                    let mut record: ElementKey = [0; ELEMENT_LEN + 8];
                    record[..ELEMENT_LEN].copy_from_slice(e.as_bytes());
                    record[ELEMENT_LEN..].copy_from_slice(&(k as u64).to_be_bytes());
                    Ok(sorted.push(pool, control, record)?)
                },
            )?;
            let mut by_key = match permutation {
                Some(_) => Some(ExternalSort::<16>::new(&budget.spill(2))?),
                None => None,
            };
            let mut writer = ElementWriter::raw_setup(&mut out, keys)?;
            for (position, record) in sorted.finish(pool, control)?.enumerate() {
                let record = record?;
                let element = Element::from_slice(&record[..ELEMENT_LEN])
                    .expect("invariant: a sorted record holds an element masked here");
                writer.push(&element)?;
                if let Some(by_key) = &mut by_key {
                    let mut pair = [0u8; 16];
                    pair[..8].copy_from_slice(&record[ELEMENT_LEN..]);
                    pair[8..].copy_from_slice(&(position as u64).to_be_bytes());
                    by_key.push(pool, control, pair)?;
                }
            }
            writer.finish()?;
            out.flush().map_err(|e| StreamingError::Write(e.into()))?;
            let permutation = match (permutation, by_key) {
                (Some(file), Some(by_key)) => Some(write_permutation(
                    pool,
                    control,
                    index,
                    spec,
                    budget,
                    by_key,
                    out.digest(),
                    file,
                )?),
                _ => None,
            };
            ("raw", permutation)
        }
        Sizing::Gcs {
            hash_range,
            max_elements,
            fpr,
        } => {
            refuse_permutation(permutation.is_some(), "gcs")?;
            let mut hashes = ExternalSort::<8>::new(&budget.spill(1))?;
            let mut last = 0;
            mask_in_blocks(
                index,
                budget,
                |block| starter.mask(pool, control, block),
                |_, e| {
                    let hash = gcs::element_hash(e.as_ref(), hash_range);
                    last = last.max(hash);
                    Ok(hashes.push(pool, control, hash.to_be_bytes())?)
                },
            )?;
            let mut encoder = gcs::Encoder::new(last, keys, max_elements, fpr)?;
            for hash in hashes.finish(pool, control)? {
                encoder.push(u64::from_be_bytes(hash?));
            }
            let (div, bits) = encoder.finish();
            let message = ServerSetup::Gcs(Gcs {
                div,
                hash_range,
                bits,
            });
            write_whole(&mut out, &message)?;
            ("gcs", None)
        }
        Sizing::Bloom {
            hash_functions,
            bytes,
        } => {
            refuse_permutation(permutation.is_some(), "bloom")?;
            let mut bits = vec![0u8; bytes];
            mask_in_blocks(
                index,
                budget,
                |block| starter.mask(pool, control, block),
                |_, e| {
                    bloom::insert(&mut bits, hash_functions, e.as_ref());
                    Ok(())
                },
            )?;
            let message = ServerSetup::Bloom(Bloom {
                num_hash_functions: hash_functions,
                bits,
            });
            write_whole(&mut out, &message)?;
            ("bloom", None)
        }
    };
    let written = SetupWritten {
        format,
        bytes: out.written(),
        digest: out.digest(),
    };
    Ok((written, out.into_inner(), permutation))
}

fn refuse_permutation(asked: bool, format: &'static str) -> Result<(), StreamingError> {
    if asked {
        return Err(crate::PsiError::NotRaw(format).into());
    }
    Ok(())
}

fn write_whole(out: &mut impl Write, message: &ServerSetup) -> Result<(), StreamingError> {
    let bytes = message.to_bytes()?;
    out.write_all(&bytes)
        .and_then(|()| out.flush())
        .map_err(|e| StreamingError::Write(e.into()))
}

/// The permutation of a raw setup whose `(key, position)` pairs `by_key` holds: each key's
/// rows from the index at its position, sorted by position then row, written behind the `#`
/// lines that name `setup_digest`.
#[allow(clippy::too_many_arguments, reason = "one step's inputs, each needed")]
fn write_permutation<P: Write>(
    pool: &Pool,
    control: &Control,
    index: &KeyIndex,
    spec: &KeySpec,
    budget: &Budget<'_>,
    by_key: ExternalSort<16>,
    setup_digest: Digest,
    file: P,
) -> Result<P, StreamingError> {
    let mut by_position = ExternalSort::<16>::new(&budget.spill(2))?;
    let mut rows = index.key_rows()?;
    for (key, pair) in by_key.finish(pool, control)?.enumerate() {
        let pair = pair?;
        assert_eq!(
            number(&pair[..8]),
            key,
            "invariant: the sort by key gives each key of the setup once, in order"
        );
        rows.rows_of(key, |row| {
            let mut entry = [0u8; 16];
            entry[..8].copy_from_slice(&pair[8..]);
            entry[8..].copy_from_slice(&(row as u64).to_be_bytes());
            Ok(by_position.push(pool, control, entry)?)
        })?;
    }
    let mut writer = PermutationWriter::new(budget.dir)?;
    for entry in by_position.finish(pool, control)? {
        let entry = entry?;
        writer.push(number(&entry[..8]), number(&entry[8..]))?;
    }
    let facts = PermutationFacts {
        starter_rows: index.row_count(),
        positions: index.len(),
        key_digest: index.digest(),
        setup_digest,
    };
    writer.finish(&facts, spec, file)
}

fn number(bytes: &[u8]) -> usize {
    let value = u64::from_be_bytes(bytes.try_into().expect("invariant: 8 bytes"));
    usize::try_from(value).expect("invariant: counted in usize")
}
