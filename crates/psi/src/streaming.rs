//! PSI steps past memory: a party's distinct keys indexed by external sorts on disk, messages
//! read and written an element at a time. Native builds only (the sorts spill to files).
//!
//! Each step's output is byte for byte the in-memory step's ([`linkage::request`],
//! [`Starter::respond`](crate::Starter::respond)) at every memory bound, run count and worker
//! count: the sorts order records by all their bytes
//! ([`ExternalSort`](lockstep_shard::spill::ExternalSort)), and masking an element does not
//! depend on the others, so masking block by block gives the whole's bytes.
//!
//! - [`KeyIndex`]: a record file's distinct keys, in order of first appearance, with each key's
//!   rows, built without a hash map: `(SHA-256 of the key, row)` records sorted give each key's
//!   first row, and `(first row, row)` records sorted give the keys in order of first
//!   appearance with their rows ascending ([`KeyTable`](crate::linkage::KeyTable)'s order).
//! - [`request`]: the joiner's request over a [`KeyIndex`], written as it is masked.
//! - [`scan_request`], [`respond`]: the starter's response to a request read twice, once to
//!   check it whole (its mode may come after its elements) and once to re-mask it.
//!
//! # Memory
//! A step holds at most its [`Budget::memory`]: three quarters in sort runs and their merge
//! buffers (see [`spill`](lockstep_shard::spill)), a quarter in masking blocks (a block holds at
//! least one key, however long), plus fixed buffers (64 KiB a file read, 1 MiB for the output).
//! Nothing grows with the row count, except what the step's message is (a GCS code or a Bloom
//! filter, read or written whole) and, in an intersection, the key numbers of a run of equal
//! response elements and the positions one key matched (only a starter that repeats elements
//! makes either).
//!
//! # Disk
//! The index takes each row's key (8 bytes and the key) and 16 bytes a row in its folder, and
//! its sorts up to twice 40 bytes a row while they merge; a size-only response sorts 33 bytes an
//! element. Everything is made in a folder inside [`SpillConfig::dir`], removed when the index
//! or step is dropped.
//!
//! # Assumption
//! Keys are told apart by their SHA-256: two keys with one digest would be taken for one (a
//! collision of SHA-256, which nobody has found).
//!
//! [`linkage::request`]: crate::linkage::request

mod index;
mod intersect;
mod permutation;
mod request;
mod resolve;
mod respond;
mod setup;

pub use index::{FirstKeys, Groups, KeyIndex};
pub use intersect::{Found, ResponseScan, RowsOut, intersect, scan_response};
pub use lockstep_shard::spill::{SpillConfig, SpillError};
pub use permutation::{KeyColumnDigest, PermutationFacts, PermutationWriter};
pub use request::request;
pub use resolve::resolve;
pub use respond::{RequestScan, respond, scan_request, unpack_request};
pub use setup::{SetupWritten, setup};

use std::path::{Path, PathBuf};

use crate::linkage::{FileError, KeyReader, LinkageError};
use crate::{ELEMENT_LEN, Element, PsiError, StreamError};

/// The fewest keys (or elements) a masking block holds: enough for 16 workers of
/// [`GRAIN`](crate::GRAIN)'s 256 keys to each get some, whatever the memory bound.
pub const MIN_BLOCK: usize = 4096;

/// The most keys (or elements) a masking block holds: about 2 s of curve work on one core.
pub const MAX_BLOCK: usize = 1 << 16;

/// Why a streamed step failed. Its temporary files are removed either way.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StreamingError {
    /// The record file could not be read or keyed (a front end adds the file:
    /// [`FileError::in_file`]).
    #[error(transparent)]
    Input(#[from] FileError),
    /// A linkage file could not be written (a front end adds the file:
    /// [`FileError::in_file`]).
    #[error("writing the {0}")]
    Output(LinkageFile, #[source] FileError),
    /// A linkage file read as it is used is malformed (a front end adds the file).
    #[error("reading the {0}")]
    Reading(LinkageFile, #[source] FileError),
    /// The linkage files do not agree: an input that is not the permutation's, an invalid
    /// permutation, pairs no honest joiner sends.
    #[error(transparent)]
    Linkage(#[from] LinkageError),
    /// A message could not be read, an element not masked, or the step was cancelled.
    #[error(transparent)]
    Psi(#[from] PsiError),
    /// A sort failed (its temporary files, the disk limit, cancellation).
    #[error(transparent)]
    Spill(#[from] SpillError),
    /// The output could not be written.
    #[error(transparent)]
    Write(#[from] StreamError),
    /// The index's own files could not be written or read back.
    #[error("the key index in {}", .dir.display())]
    Index {
        /// The index's folder.
        dir: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A file read twice gave other bytes the second time (it changed while it was read).
    #[error("the {what} changed while it was read: its second reading differs from its first")]
    Changed {
        /// The file (`request`, `response`, `record file`).
        what: &'static str,
    },
}

/// Which linkage file a step was reading or writing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkageFile {
    /// The raw setup's permutation.
    Permutation,
    /// The joiner's pairs.
    Pairs,
    /// The joiner's matched rows.
    Rows,
}

impl std::fmt::Display for LinkageFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Permutation => "permutation",
            Self::Pairs => "pairs",
            Self::Rows => "matched rows",
        })
    }
}

impl LinkageFile {
    /// A closure mapping a write error to this output's.
    fn error(self) -> impl Fn(FileError) -> StreamingError {
        move |e| StreamingError::Output(self, e)
    }
}

/// What a streamed step may take: where it spills, how much memory, and its masking blocks.
#[derive(Clone, Copy, Debug)]
pub struct Budget<'a> {
    /// The folder its temporary folders are made in.
    pub dir: &'a Path,
    /// The most bytes it holds in sort runs (three quarters) and masking blocks (a quarter).
    pub memory: usize,
    /// The most bytes its sorts may take on disk; `None`: the folder's free space when each
    /// starts.
    pub disk: Option<u64>,
    /// The most keys (or elements) masked at once: [`Budget::new`] takes a quarter of `memory`
    /// at 128 bytes a key, between [`MIN_BLOCK`] and [`MAX_BLOCK`]. A block is also cut at a
    /// quarter of `memory` in bytes (long keys), and holds at least one key. Any length gives
    /// the same bytes.
    pub block: usize,
}

impl<'a> Budget<'a> {
    /// A budget of `memory` bytes spilling into `dir`, its disk limited by the free space.
    pub fn new(dir: &'a Path, memory: usize) -> Self {
        Self {
            dir,
            memory,
            disk: None,
            block: (memory / 4 / 128).clamp(MIN_BLOCK, MAX_BLOCK),
        }
    }

    /// The sort of one of `shares` equal parts of the sorts' three quarters of the memory.
    fn spill(&self, shares: usize) -> SpillConfig<'a> {
        SpillConfig {
            dir: self.dir,
            memory: self.memory / 4 * 3 / shares.max(1),
            disk: self.disk,
        }
    }

    /// The most keys a block holds.
    fn block(&self) -> usize {
        self.block.max(1)
    }

    /// The most bytes a block holds (at least one key whatever its length).
    fn block_bytes(&self) -> usize {
        self.memory / 4
    }
}

/// Masks `index`'s distinct keys in order of first appearance, a block at a time with `mask`,
/// and gives each element with its key's index to `each`, in order.
fn mask_in_blocks(
    index: &KeyIndex,
    budget: &Budget<'_>,
    mask: impl Fn(&[Vec<u8>]) -> Result<Vec<Element>, PsiError>,
    mut each: impl FnMut(usize, Element) -> Result<(), StreamingError>,
) -> Result<(), StreamingError> {
    let mut keys = index.first_keys()?;
    // A key takes its bytes, its vector's, and its element's.
    let weigh = |key: &Vec<u8>| key.len() + 24 + ELEMENT_LEN;
    in_blocks(
        budget,
        index.len(),
        weigh,
        || keys.next().transpose(),
        |first, block| {
            for (k, element) in (first..).zip(mask(block)?) {
                each(k, element)?;
            }
            Ok(())
        },
    )
    .map(drop)
}

/// The bytes an element takes in a block: itself, and the one it becomes.
fn element_weight(_: &Element) -> usize {
    2 * ELEMENT_LEN
}

/// Takes the items `next` gives a block at a time (at most `budget.block` items and
/// `budget.block_bytes` bytes by `weigh`, at least one item; the last block shorter), and gives
/// each block with its first item's index to `each`, in order: how every step masks, re-masks
/// and unmasks a stream. Returns the items taken.
fn in_blocks<T>(
    budget: &Budget<'_>,
    expected: usize,
    weigh: impl Fn(&T) -> usize,
    mut next: impl FnMut() -> Result<Option<T>, StreamingError>,
    mut each: impl FnMut(usize, &[T]) -> Result<(), StreamingError>,
) -> Result<usize, StreamingError> {
    let mut block = Vec::with_capacity(budget.block().min(expected));
    let (mut first, mut bytes) = (0, 0);
    loop {
        let item = next()?;
        let ended = item.is_none();
        if let Some(item) = item {
            bytes += weigh(&item);
            block.push(item);
        }
        let full = block.len() >= budget.block() || bytes >= budget.block_bytes();
        if !block.is_empty() && (full || ended) {
            each(first, &block)?;
            first += block.len();
            block.clear();
            bytes = 0;
        }
        if ended {
            return Ok(first);
        }
    }
}

/// Row `row` (0-based, not before the last one read) of `records`, read on to it.
fn record_at<I: std::io::Read>(
    records: &mut KeyReader<I>,
    row: usize,
) -> Result<&csv::ByteRecord, StreamingError> {
    while records.rows() <= row {
        if records.next_record()?.is_none() {
            return Err(StreamingError::Changed {
                what: "record file",
            });
        }
    }
    Ok(records.last_record())
}

/// Reads `records` (digested from its first row) to its end and checks that its keys are the
/// ones `index` was built from: a record file whose keys were edited between its two readings
/// is refused (its staged output never replaces anything). A row's other columns are written
/// as the second reading finds them.
fn check_unchanged<I: std::io::Read>(
    mut records: KeyReader<I>,
    index: &KeyIndex,
) -> Result<(), StreamingError> {
    while records.next_record()?.is_some() {}
    match records.digest() {
        Some(digest) if digest == index.digest() => Ok(()),
        _ => Err(StreamingError::Changed {
            what: "record file",
        }),
    }
}

#[cfg(test)]
mod tests;
