//! A step's parts computed on a cluster's executors and assembled on its driver (feature
//! `cluster`, native builds: files by path). The executors key and mask column values
//! ([`column_keys`], [`PsiHelper`](crate::PsiHelper)'s maps); the driver reads the key file
//! ([`read_key`]), hands a request's elements out ([`unpack_request`]) and writes the messages
//! and the permutation from the parts in order ([`MessageOut`], [`PermutationOut`]): the bytes
//! `lockstep psi request`, `setup --permutation-out` and `respond` write for the same rows.
//!
//! Values cross as Arrow lays a binary column out: one buffer of bytes and `len + 1` offsets
//! into it (little-endian `u32`s, ascending, the first need not be 0). Elements cross packed,
//! 33 bytes each. Files that cannot be read or written are refused with `PSI_FILE`.
//!
//! # Where key material travels
//! [`read_key`] reads a key file by the CLI's rule (a regular file of 32 bytes, private to its
//! owner unless `allow_open`) into a buffer wiped on drop; what the caller does with the bytes
//! then (a cluster's broadcast) is the caller's to document.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use lockstep_files::{Files, OutputId, SecretFile, Staged, read_secret};
use lockstep_psi::linkage::{Digest, DigestingWriter, KeySpec, LinkageError};
use lockstep_psi::streaming::{
    self, KeyColumnDigest, PermutationFacts, PermutationWriter, StreamingError,
};
use lockstep_psi::{ELEMENT_LEN, Element, ElementWriter, Key, Limits, Mode, StreamError};
use zeroize::Zeroizing;

use crate::Coded;

/// For a host process with its own signal handling (a Python interpreter, where Ctrl-C raises
/// `KeyboardInterrupt`): from now on SIGINT, SIGTERM and SIGHUP still remove the staged files of
/// the writers below, but no longer end the process. A binding calls it when it loads.
pub fn keep_process_signals() {
    lockstep_files::hand_signals_over();
}

/// A key file's bytes by the CLI's rule (`lockstep psi key new` writes one): a regular file of
/// exactly 32 bytes that group and others cannot read or write unless `allow_open`, holding a
/// usable key. The buffer is wiped when dropped.
///
/// # Errors
/// `PSI_FILE` for a file that cannot be read or breaks the rule; `PSI_KEY` for bytes that are
/// not a usable key. Each names `path`.
pub fn read_key(path: &Path, allow_open: bool) -> Result<Zeroizing<Vec<u8>>, Coded> {
    let spec = SecretFile {
        what: "key",
        len: Key::LEN as u64,
        made_by: "`lockstep psi key new` writes one",
        allow_open,
    };
    let bytes = read_secret(path, &spec).map_err(|e| Coded::new("PSI_FILE", e.to_string()))?;
    Key::from_bytes(&bytes)
        .map_err(|e| Coded::new(e.code(), format!("key {}: {e}", path.display())))?;
    Ok(bytes)
}

/// One column of values as Arrow lays it out (see the module).
#[derive(Clone, Copy, Debug)]
pub struct Column<'a> {
    /// The bytes the offsets point into.
    pub data: &'a [u8],
    /// `len + 1` little-endian `u32` offsets.
    pub offsets: &'a [u8],
}

impl Column<'_> {
    /// The offsets, checked: whole `u32`s, ascending, within `data`.
    fn offsets(&self, name: &str) -> Result<Vec<usize>, Coded> {
        if !self.offsets.len().is_multiple_of(4) || self.offsets.is_empty() {
            return Err(usage(format!(
                "column {name}: offsets must be whole little-endian u32s, at least one"
            )));
        }
        let offsets: Vec<usize> = self
            .offsets
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .collect();
        let ascending = offsets.windows(2).all(|w| w[0] <= w[1]);
        if !ascending || offsets.last().is_some_and(|&end| end > self.data.len()) {
            return Err(usage(format!(
                "column {name}: offsets must ascend within the column's {} bytes",
                self.data.len()
            )));
        }
        Ok(offsets)
    }
}

/// Keys as Arrow lays a binary column out: the bytes, and `len + 1` offsets from 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Keys {
    /// The keys' bytes, one after another.
    pub data: Vec<u8>,
    /// `len + 1` offsets into `data`, the first 0.
    pub offsets: Vec<u32>,
}

/// The keys of rows whose columns, named `header`, hold `columns` (each the same number of
/// rows), keyed on the columns `key` names in order (a name may come twice, as `--column` may),
/// by the engine's record rules ([`KeyColumns::key`](lockstep_psi::linkage::KeyColumns::key)):
/// one column's field as it is, several joined unambiguously, `normalize` trimming, lowercasing
/// and collapsing whitespace. A row whose key is empty gets an empty key (a record file's row
/// without one: left out of the set, counted in the key column's digest). `first_row` is the
/// first row's 0-based number in the whole input, for errors.
///
/// # Errors
/// `PSI_USAGE` for columns of different lengths, malformed offsets or as many names as columns
/// not given; `PSI_INPUT` for a key naming no column or a column the header names twice, and for
/// a field that is not UTF-8 under `normalize` (naming its row, 1-based); `PSI_LIMIT` past 2 GiB
/// of keys in one call (Arrow's binary offsets are `i32`s).
pub fn column_keys(
    header: &[String],
    columns: &[Column<'_>],
    key: &[String],
    normalize: bool,
    first_row: u64,
) -> Result<Keys, Coded> {
    if columns.len() != header.len() {
        return Err(usage(format!(
            "{} columns with {} names",
            columns.len(),
            header.len()
        )));
    }
    let spec = KeySpec {
        columns: key.to_vec(),
        normalize,
    };
    let names: Vec<&[u8]> = header.iter().map(|n| n.as_bytes()).collect();
    let located = spec.locate(&names).map_err(input)?;
    let offsets = columns
        .iter()
        .zip(header)
        .map(|(column, name)| column.offsets(name))
        .collect::<Result<Vec<_>, _>>()?;
    let rows = offsets.first().map_or(0, |o| o.len() - 1);
    if let Some(other) = offsets.iter().position(|o| o.len() - 1 != rows) {
        return Err(usage(format!(
            "column {} has {} rows, column {} has {rows}",
            header[other],
            offsets[other].len() - 1,
            header[0]
        )));
    }
    let first = usize::try_from(first_row)
        .ok()
        .and_then(|first| first.checked_add(rows))
        .map(|end| end - rows)
        .ok_or_else(|| usage("first_row past usize"))?;
    let mut keys = Keys {
        data: Vec::new(),
        offsets: Vec::with_capacity(rows + 1),
    };
    keys.offsets.push(0);
    for row in 0..rows {
        let key = located
            .key(first + row, |i| {
                columns
                    .get(i)
                    .map(|c| &c.data[offsets[i][row]..offsets[i][row + 1]])
            })
            .map_err(input)?;
        keys.data.extend_from_slice(&key);
        let end = i32::try_from(keys.data.len())
            .map_err(|_| Coded::new("PSI_LIMIT", "more than 2 GiB of keys in one call"))?;
        keys.offsets.push(end.unsigned_abs());
    }
    Ok(keys)
}

/// A column's values and ends as [`PartMaps::mask_part`](crate::PartMaps::mask_part) takes
/// them: the bytes from the first offset to the last, and each value's end from there.
///
/// # Errors
/// `PSI_USAGE` for malformed offsets.
///
/// # Panics
/// Never: checked offsets are at least one.
pub fn packed(column: &Column<'_>) -> Result<(Vec<u8>, Vec<u32>), Coded> {
    let offsets = column.offsets("values")?;
    let start = offsets[0];
    let end = *offsets
        .last()
        .expect("invariant: offsets checked non-empty");
    let ends = offsets[1..]
        .iter()
        .map(|&o| u32::try_from(o - start))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| Coded::new("PSI_LIMIT", "more than 4 GiB of values in one call"))?;
    Ok((column.data[start..end].to_vec(), ends))
}

/// Copies the request at `request` (read within `joiner_count` elements, checked whole as
/// `psi respond` checks it) to a new file `packed`, its elements packed in request order, for
/// helpers to re-mask a range each. Returns the count.
///
/// # Errors
/// `PSI_FILE` for a file that cannot be read or written; the request's own refusals
/// (`PSI_MESSAGE`, `PSI_LIMIT`, `PSI_ROUND` for a request of the other mode than `size_only`).
pub fn unpack_request(
    request: &Path,
    packed: &Path,
    joiner_count: u64,
    size_only: bool,
) -> Result<u64, Coded> {
    if joiner_count == 0 {
        return Err(usage("joiner_count must be at least 1"));
    }
    let mut files = Files::new();
    files.input("request", request);
    let out = files.output("packed", packed, false);
    let mut staged = files.prepare(&|_| {}).map_err(file_error)?;
    let reader = lockstep_files::open_input("request", request).map_err(file_error)?;
    let mode = if size_only {
        Mode::SizeOnly
    } else {
        Mode::Reveal
    };
    let writer = BufWriter::with_capacity(1 << 20, staged.file(out));
    let count = streaming::unpack_request(
        std::io::BufReader::new(reader),
        Limits::max_elements(joiner_count),
        mode,
        writer,
    )
    .map_err(|e| streaming_error(e, &request.display().to_string()))?;
    staged.commit().map_err(file_error)?;
    Ok(count)
}

/// Which message a [`MessageOut`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageKind {
    /// A request (`psi request`), reveal or size-only.
    Request {
        /// Size-only (`--size-only`).
        size_only: bool,
    },
    /// A response (`psi respond`): in request order, or sorted by bytes when size-only.
    Response,
    /// A raw setup (`psi setup --format raw`) of this many elements, ascending by bytes.
    RawSetup {
        /// Its elements.
        count: u64,
    },
}

/// A message written to a file from packed elements pushed in order, put in place only by
/// [`finish`](Self::finish) (a writer dropped before leaves nothing).
pub struct MessageOut {
    staged: Option<Staged>,
    writer: Option<ElementWriter<DigestingWriter<BufWriter<File>>>>,
    shown: String,
}

impl MessageOut {
    /// A `kind` message to be written to `path` (replaced at `commit` if it exists), never
    /// over one of `inputs` (the step's key file, its request).
    ///
    /// # Errors
    /// `PSI_USAGE` for `path` the same file as an input; `PSI_FILE` if `path` cannot be
    /// written; `PSI_LIMIT` for a raw setup too long to encode.
    pub fn create(path: &Path, kind: MessageKind, inputs: &[&Path]) -> Result<Self, Coded> {
        let mut files = Files::new();
        for input in inputs {
            files.input("an input", input);
        }
        let id = files.output("out", path, false);
        let mut staged = files.prepare(&|_| {}).map_err(file_error)?;
        let file = staged
            .file(id)
            .try_clone()
            .map_err(|e| Coded::new("PSI_FILE", format!("{}: {e}", path.display())))?;
        let out = DigestingWriter::new(BufWriter::with_capacity(1 << 20, file));
        let shown = path.display().to_string();
        let writer = match kind {
            MessageKind::Request { size_only } => ElementWriter::request(
                out,
                if size_only {
                    Mode::SizeOnly
                } else {
                    Mode::Reveal
                },
            ),
            MessageKind::Response => ElementWriter::response(out),
            MessageKind::RawSetup { count } => ElementWriter::raw_setup(out, count),
        }
        .map_err(|e| stream_error(e, &shown))?;
        Ok(Self {
            staged: Some(staged),
            writer: Some(writer),
            shown,
        })
    }

    /// Writes the next elements, packed (a whole number of 33-byte elements).
    ///
    /// # Errors
    /// `PSI_USAGE` after `finish` or for a length not a multiple of 33; `PSI_MESSAGE` for bytes
    /// that are not an element (naming its index in the message); a raw setup's elements out of
    /// order or past its count (`PSI_MESSAGE`); `PSI_FILE` if the file fails (every later call
    /// fails too).
    pub fn push(&mut self, packed: &[u8]) -> Result<(), Coded> {
        let writer = self.writer.as_mut().ok_or_else(finished)?;
        if !packed.len().is_multiple_of(ELEMENT_LEN) {
            return Err(usage(format!(
                "elements come packed, {ELEMENT_LEN} bytes each; {} bytes is not a whole number of them",
                packed.len()
            )));
        }
        for bytes in packed.chunks_exact(ELEMENT_LEN) {
            let element = Element::from_slice(bytes).map_err(|e| {
                Coded::new(
                    "PSI_MESSAGE",
                    format!("element {} is not a point: {e}", writer.written()),
                )
            })?;
            writer
                .push(&element)
                .map_err(|e| stream_error(e, &self.shown))?;
        }
        Ok(())
    }

    /// The elements written so far.
    pub fn written(&self) -> u64 {
        self.writer.as_ref().map_or(0, ElementWriter::written)
    }

    /// Ends the message; returns the SHA-256 of its bytes (what a permutation names). The file
    /// is put in place by [`commit`](Self::commit).
    ///
    /// # Errors
    /// `PSI_USAGE` after `finish`; a raw setup given fewer elements than its count
    /// (`PSI_MESSAGE`); `PSI_FILE` if the file fails.
    pub fn finish(&mut self) -> Result<Digest, Coded> {
        let writer = self.writer.take().ok_or_else(finished)?;
        match writer.finish() {
            Ok(out) => Ok(out.digest()),
            Err(e) => {
                // A message cut short is never put in place.
                self.abort();
                Err(stream_error(e, &self.shown))
            }
        }
    }

    /// Drops the message unwritten: its staged file is removed, and `commit` refuses.
    pub fn abort(&mut self) {
        self.writer = None;
        self.staged = None;
    }

    /// Puts the finished message in place (replacing a file there).
    ///
    /// # Errors
    /// `PSI_USAGE` before `finish` or twice; `PSI_FILE` if the file cannot be put in place.
    pub fn commit(&mut self) -> Result<(), Coded> {
        commit(self.writer.is_none(), &mut self.staged)
    }
}

impl std::fmt::Debug for MessageOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageOut")
            .field("out", &self.shown)
            .field("written", &self.written())
            .finish_non_exhaustive()
    }
}

/// Puts `staged` in place once its writer has `finished`.
fn commit(finished: bool, staged: &mut Option<Staged>) -> Result<(), Coded> {
    if !finished {
        return Err(usage("finish this writer before committing it"));
    }
    let staged = staged
        .take()
        .ok_or_else(|| usage("this writer is committed already"))?;
    staged.commit().map_err(file_error)
}

/// A permutation file (`psi setup --permutation-out`) written from a cluster's parts: every
/// row's key in row order ([`keys`](Self::keys)), then the `(position, row)` entries in position
/// then row order ([`entries`](Self::entries)), put in place by [`finish`](Self::finish).
pub struct PermutationOut {
    staged: Option<Staged>,
    id: OutputId,
    keys: KeyColumnDigest,
    writer: Option<PermutationWriter>,
    spec: KeySpec,
}

impl PermutationOut {
    /// A permutation of a setup keyed on `columns` (`normalize`d or not) to be written to
    /// `path`, its entries waiting in an unnamed file in `dir`, never over one of `inputs` (the
    /// key file) nor over `setup`, the setup it goes with.
    ///
    /// # Errors
    /// `PSI_USAGE` for `path` the same file as an input or the setup; `PSI_FILE` if `path` or
    /// `dir` cannot be written.
    pub fn create(
        path: &Path,
        dir: &Path,
        columns: &[String],
        normalize: bool,
        inputs: &[&Path],
        setup: &Path,
    ) -> Result<Self, Coded> {
        if std::path::absolute(path).ok() == std::path::absolute(setup).ok() {
            return Err(usage(format!(
                "the permutation {} is the setup's file: name another",
                path.display()
            )));
        }
        let mut files = Files::new();
        for input in inputs.iter().chain([&setup]) {
            files.input("an input", input);
        }
        let id = files.output("permutation", path, false);
        let staged = files.prepare(&|_| {}).map_err(file_error)?;
        let writer = PermutationWriter::new(dir)
            .map_err(|e| streaming_error(e, &path.display().to_string()))?;
        Ok(Self {
            staged: Some(staged),
            id,
            keys: KeyColumnDigest::new(),
            writer: Some(writer),
            spec: KeySpec {
                columns: columns.to_vec(),
                normalize,
            },
        })
    }

    /// The next rows' keys, in row order (an empty key for a row without one).
    ///
    /// # Errors
    /// `PSI_USAGE` for malformed offsets or after `finish`.
    pub fn keys(&mut self, keys: &Column<'_>) -> Result<(), Coded> {
        if self.writer.is_none() {
            return Err(finished());
        }
        let offsets = keys.offsets("keys")?;
        for pair in offsets.windows(2) {
            self.keys.push(&keys.data[pair[0]..pair[1]]);
        }
        Ok(())
    }

    /// The next entries, `positions[i]` with 0-based `rows[i]`.
    ///
    /// # Errors
    /// `PSI_USAGE` for lists of different lengths or after `finish`; `PSI_INPUT` for an entry
    /// out of order; `PSI_FILE` if the file fails.
    pub fn entries(&mut self, positions: &[u64], rows: &[u64]) -> Result<(), Coded> {
        let writer = self.writer.as_mut().ok_or_else(finished)?;
        if positions.len() != rows.len() {
            return Err(usage(format!(
                "{} positions with {} rows",
                positions.len(),
                rows.len()
            )));
        }
        for (&position, &row) in positions.iter().zip(rows) {
            let (Ok(position), Ok(row)) = (usize::try_from(position), usize::try_from(row)) else {
                return Err(Coded::new("PSI_LIMIT", "a position or row past usize"));
            };
            writer
                .push(position, row)
                .map_err(|e| streaming_error(e, "the permutation"))?;
        }
        Ok(())
    }

    /// Writes the file for a setup of `positions` elements whose SHA-256 is `setup_digest`
    /// ([`MessageOut::finish`]), to be put in place by [`commit`](Self::commit).
    ///
    /// # Errors
    /// `PSI_USAGE` after `finish`; `PSI_INPUT` if the entries cover another number of positions
    /// or name a row past the keys given; `PSI_FILE` if the file fails.
    pub fn finish(&mut self, positions: u64, setup_digest: Digest) -> Result<(), Coded> {
        let writer = self.writer.take().ok_or_else(finished)?;
        let staged = self.staged.as_mut().ok_or_else(finished)?;
        let keys = std::mem::take(&mut self.keys);
        let facts = PermutationFacts {
            starter_rows: keys.rows(),
            positions: usize::try_from(positions)
                .map_err(|_| Coded::new("PSI_LIMIT", "positions past usize"))?,
            key_digest: keys.finish(),
            setup_digest,
        };
        let out = BufWriter::with_capacity(1 << 20, staged.file(self.id));
        let written = writer
            .finish(&facts, &self.spec, out)
            .map_err(|e| streaming_error(e, "the permutation"))
            .and_then(|out| {
                out.into_inner()
                    .map(drop)
                    .map_err(|e| Coded::new("PSI_FILE", e.error().to_string()))
            });
        if written.is_err() {
            // A permutation cut short is never put in place.
            self.abort();
        }
        written
    }

    /// Drops the permutation unwritten: its staged file is removed, and `commit` refuses.
    pub fn abort(&mut self) {
        self.writer = None;
        self.staged = None;
    }

    /// Puts the finished permutation in place (replacing a file there).
    ///
    /// # Errors
    /// `PSI_USAGE` before `finish` or twice; `PSI_FILE` if the file cannot be put in place.
    pub fn commit(&mut self) -> Result<(), Coded> {
        commit(self.writer.is_none(), &mut self.staged)
    }
}

impl std::fmt::Debug for PermutationOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermutationOut")
            .field("spec", &self.spec)
            .field("rows", &self.keys.rows())
            .finish_non_exhaustive()
    }
}

fn usage(message: impl Into<String>) -> Coded {
    Coded::new("PSI_USAGE", message)
}

fn input(error: LinkageError) -> Coded {
    Coded::new("PSI_INPUT", error.to_string())
}

fn finished() -> Coded {
    usage("this writer has finished")
}

/// The files layer's refusal: a usage one (an output over an input) as `PSI_USAGE`.
fn file_error(error: lockstep_files::Error) -> Coded {
    let code = match error.kind() {
        lockstep_files::ErrorKind::Usage => "PSI_USAGE",
        _ => "PSI_FILE",
    };
    Coded::new(code, error.to_string())
}

/// A streamed message's failure: the engine's code for the elements, `PSI_FILE` for the file.
fn stream_error(error: StreamError, shown: &str) -> Coded {
    match error {
        StreamError::Io(e) => Coded::new("PSI_FILE", format!("writing {shown}: {e}")),
        StreamError::Message(e) => Coded::new(e.code(), e.to_string()),
        other => Coded::new("PSI_FILE", format!("writing {shown}: {other}")),
    }
}

/// A streamed step's failure by its kind: the engine's codes, `PSI_FILE` for files.
fn streaming_error(error: StreamingError, shown: &str) -> Coded {
    match error {
        StreamingError::Psi(e) => Coded::new(e.code(), format!("{shown}: {e}")),
        StreamingError::Linkage(e) => Coded::new("PSI_INPUT", e.to_string()),
        StreamingError::Input(e) => Coded::new("PSI_INPUT", format!("{shown}: {e}")),
        StreamingError::Write(e) => stream_error(e, shown),
        other => Coded::new("PSI_FILE", format!("{shown}: {}", chain(&other))),
    }
}

/// An error and its sources, `: `-joined.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(next) = source {
        text.push_str(": ");
        text.push_str(&next.to_string());
        source = next.source();
    }
    text
}

#[cfg(test)]
mod tests;
