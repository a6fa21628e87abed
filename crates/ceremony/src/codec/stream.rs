//! Chunked, hashed reading and writing of point vectors.

use std::io::{self, Read, Write};

use lockstep_shard::{Control, Pool, memory};
use sha2::{Digest, Sha256};

use super::{BLOCK_POINTS, CHUNK_POINTS, CodecError, Location, Point, PointProblem};

/// A reader that hashes (SHA-256) and counts every byte it delivers.
pub(crate) struct HashingReader<R> {
    inner: R,
    /// The offset where the input ends, if known.
    end: Option<u64>,
    hasher: Sha256,
    offset: u64,
    /// Whether bytes were skipped: the hash is then not the input's.
    skipped: bool,
}

/// An input a reader can step over bytes of: by seeking a file, or by reading and dropping.
pub(crate) trait Skip: Read {
    /// Steps over the next `bytes` bytes.
    ///
    /// # Errors
    /// As the input's seek or read.
    fn skip(&mut self, bytes: u64) -> io::Result<()>;
}

impl<S: Skip + ?Sized> Skip for &mut S {
    fn skip(&mut self, bytes: u64) -> io::Result<()> {
        (**self).skip(bytes)
    }
}

/// A buffered input stepped over by reading and dropping (any reader: a pipe too).
pub(crate) struct Discarding<R>(pub(crate) io::BufReader<R>);

impl<R: Read> Read for Discarding<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: Read> Skip for Discarding<R> {
    fn skip(&mut self, bytes: u64) -> io::Result<()> {
        let dropped = io::copy(&mut (&mut self.0).take(bytes), &mut io::sink())?;
        if dropped < bytes {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(())
    }
}

/// A buffered file stepped over by seeking (its buffer kept when the step lands in it).
pub(crate) struct Seeking<R>(pub(crate) io::BufReader<R>);

impl<R: Read> Read for Seeking<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: Read + io::Seek> Skip for Seeking<R> {
    fn skip(&mut self, bytes: u64) -> io::Result<()> {
        let step =
            i64::try_from(bytes).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        self.0.seek_relative(step)
    }
}

impl<R: Read> HashingReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self::at(inner, 0)
    }

    /// A reader whose first byte sits at `offset` of the file, for errors that name offsets.
    pub(crate) fn at(inner: R, offset: u64) -> Self {
        Self {
            inner,
            end: None,
            hasher: Sha256::new(),
            offset,
            skipped: false,
        }
    }

    /// Tells the reader the input's total length (for exact allocations).
    pub(crate) fn with_end(mut self, end: Option<u64>) -> Self {
        self.end = end;
        self
    }

    /// Whether the input is known to hold `bytes` more bytes.
    pub(crate) fn holds(&self, bytes: u64) -> bool {
        self.end
            .is_some_and(|end| end.saturating_sub(self.offset) >= bytes)
    }

    /// Bytes delivered so far: the offset of the next byte.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// Fills `buf`, or fails with [`CodecError::Truncated`] naming `location`.
    pub(crate) fn fill(&mut self, buf: &mut [u8], location: Location) -> Result<(), CodecError> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.inner.read(&mut buf[filled..]) {
                Ok(0) => {
                    self.account(&buf[..filled]);
                    return Err(CodecError::Truncated {
                        location,
                        offset: self.offset,
                    });
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(CodecError::Io(e)),
            }
        }
        self.account(buf);
        Ok(())
    }

    fn account(&mut self, bytes: &[u8]) {
        self.hasher.update(bytes);
        self.offset += bytes.len() as u64;
    }

    /// Checks that nothing follows, and returns the SHA-256 of everything read.
    ///
    /// # Panics
    /// If bytes were skipped (a bug in the caller: the hash would not be the input's); such a
    /// reader ends with [`finish_unhashed`](Self::finish_unhashed).
    pub(crate) fn finish(self) -> Result<[u8; 32], CodecError> {
        assert!(
            !self.skipped,
            "invariant: a reader that skipped bytes has no hash of its input"
        );
        self.finish_unhashed()
    }

    /// Checks that nothing follows; the SHA-256 of the bytes delivered (not of the input, if
    /// bytes were skipped).
    pub(crate) fn finish_unhashed(mut self) -> Result<[u8; 32], CodecError> {
        let mut probe = [0u8; 1];
        loop {
            match self.inner.read(&mut probe) {
                Ok(0) => return Ok(self.hasher.finalize().into()),
                Ok(_) => {
                    return Err(CodecError::TrailingBytes {
                        offset: self.offset,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(CodecError::Io(e)),
            }
        }
    }
}

impl<R: Skip> HashingReader<R> {
    /// Steps over `bytes` bytes (unhashed: see [`finish`](Self::finish)), or fails with
    /// [`CodecError::Truncated`] naming `location` if the input is known to end first.
    ///
    /// A skip needs the input's length ([`with_end`](Self::with_end)): a file sought past its
    /// end reads as ended, not as cut short.
    pub(crate) fn skip(&mut self, bytes: u64, location: Location) -> Result<(), CodecError> {
        let Some(end) = self.end else {
            return Err(CodecError::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                "stepping over a vector needs the input's length",
            )));
        };
        if end.saturating_sub(self.offset) < bytes {
            return Err(CodecError::Truncated {
                location,
                offset: end,
            });
        }
        self.inner.skip(bytes).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => CodecError::Truncated {
                location,
                offset: self.offset,
            },
            _ => CodecError::Io(e),
        })?;
        self.offset += bytes;
        self.skipped = true;
        Ok(())
    }
}

/// A writer that hashes (SHA-256) and counts every byte it passes on.
pub(crate) struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
    offset: u64,
}

impl<W: Write> HashingWriter<W> {
    pub(crate) fn new(inner: W) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
            offset: 0,
        }
    }

    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<(), CodecError> {
        self.inner.write_all(bytes)?;
        self.hasher.update(bytes);
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Flushes, and returns the SHA-256 of everything written and the writer.
    pub(crate) fn finish(mut self) -> Result<([u8; 32], W), CodecError> {
        self.inner.flush()?;
        Ok((self.hasher.finalize().into(), self.inner))
    }
}

/// Reads and checks one point.
pub(crate) fn read_point<P: Point, R: Read>(
    reader: &mut HashingReader<R>,
    location: Location,
) -> Result<P, CodecError> {
    let offset = reader.offset();
    let mut bytes = P::Bytes::default();
    reader.fill(bytes.as_mut(), location)?;
    P::decode(&bytes).map_err(|problem| CodecError::Point {
        location,
        offset,
        problem,
    })
}

/// Why one item of a streamed vector failed.
#[derive(Debug, thiserror::Error)]
enum ItemFailure {
    #[error("{0}")]
    Bad(PointProblem),
    #[error("{0}")]
    Short(CodecError),
    #[error("{0}")]
    Memory(memory::AllocError),
}

/// Reads `count` points of the vector `name` (indexes from `first_index`), decoding and
/// checking each chunk on the workers. The error is the first bad point in file order.
pub(crate) fn read_points<P: Point, R: Read>(
    pool: &Pool,
    control: &Control,
    reader: &mut HashingReader<R>,
    name: &'static str,
    first_index: u64,
    count: usize,
) -> Result<Vec<P>, CodecError> {
    read_vector(
        pool,
        control,
        reader,
        name,
        first_index,
        count,
        P::decode,
        None,
    )
}

/// [`read_points`] after `lead`, a value the file does not store (a vector's generator), in
/// one allocation.
pub(crate) fn read_points_after<P: Point, R: Read>(
    pool: &Pool,
    control: &Control,
    reader: &mut HashingReader<R>,
    name: &'static str,
    lead: P,
    count: usize,
) -> Result<Vec<P>, CodecError> {
    read_vector(pool, control, reader, name, 1, count, P::decode, Some(lead))
}

/// [`read_points`] for any fixed-width encoding `B` and its checking decoder.
// The vector's name, first index, count, decoder and lead are what its three callers differ
// in; a struct for them would only be unpacked here.
#[allow(clippy::too_many_arguments)]
pub(crate) fn read_vector<P, B, R>(
    pool: &Pool,
    control: &Control,
    reader: &mut HashingReader<R>,
    name: &'static str,
    first_index: u64,
    count: usize,
    decode: fn(&B) -> Result<P, PointProblem>,
    lead: Option<P>,
) -> Result<Vec<P>, CodecError>
where
    P: Copy + Default + Send + Sync,
    B: Copy + Default + Send + Sync + AsMut<[u8]>,
    R: Read,
{
    let size = size_of::<B>() as u64;
    let start = reader.offset();
    // All at once if the rest of the input holds the vector (a sparse file or a pipe can claim
    // terabytes it does not have), else grown with the points actually read; fallibly either
    // way, so a vector that does not fit is an error naming it.
    let memory = |source| CodecError::Memory {
        what: name,
        refused: source,
    };
    let room = if reader.holds(count as u64 * size) {
        count
    } else {
        count.min(CHUNK_POINTS)
    };
    let mut out: Vec<P> =
        memory::try_with_capacity(room.saturating_add(usize::from(lead.is_some())))
            .map_err(memory)?;
    out.extend(lead);

    let mut delivered = 0usize;
    let result = pool.pipeline_blocks(
        control,
        CHUNK_POINTS,
        BLOCK_POINTS,
        |buf: &mut Vec<B>, n| {
            let take = n.min(count - delivered);
            for _ in 0..take {
                let mut bytes = B::default();
                let location = Location::element(name, first_index + delivered as u64);
                reader
                    .fill(bytes.as_mut(), location)
                    .map_err(ItemFailure::Short)?;
                buf.push(bytes);
                delivered += 1;
            }
            Ok(())
        },
        |check, position, inputs, outputs: &mut [P]| {
            for (k, (bytes, slot)) in inputs.iter().zip(outputs.iter_mut()).enumerate() {
                check.at(position + k);
                *slot = decode(bytes).map_err(ItemFailure::Bad)?;
            }
            Ok(())
        },
        |_, points| {
            memory::try_reserve(&mut out, points.len()).map_err(ItemFailure::Memory)?;
            out.extend_from_slice(points);
            Ok(())
        },
    );
    match result {
        Ok(_) => Ok(out),
        Err(lockstep_shard::Error::Task { position, source }) => Err(match source {
            ItemFailure::Short(error) => error,
            ItemFailure::Memory(source) => memory(source),
            ItemFailure::Bad(problem) => CodecError::Point {
                location: Location::element(name, first_index + position as u64),
                offset: start + position as u64 * size,
                problem,
            },
        }),
        Err(other) => Err(worker_failure(other)),
    }
}

/// Writes `points` compressed, encoding each chunk on the workers, chunks in order.
pub(crate) fn write_points<P: Point, W: Write>(
    pool: &Pool,
    control: &Control,
    writer: &mut HashingWriter<W>,
    points: &[P],
) -> Result<(), CodecError> {
    write_vector(pool, control, writer, points, P::encode)
}

/// [`write_points`] for any fixed-width encoding.
pub(crate) fn write_vector<P, B, W>(
    pool: &Pool,
    control: &Control,
    writer: &mut HashingWriter<W>,
    points: &[P],
    encode: fn(&P) -> B,
) -> Result<(), CodecError>
where
    P: Copy + Send + Sync,
    B: Copy + Default + Send + Sync + AsRef<[u8]>,
    W: Write,
{
    let mut next = 0usize;
    let mut bytes = Vec::with_capacity(CHUNK_POINTS * size_of::<B>());
    let result = pool.pipeline_blocks(
        control,
        CHUNK_POINTS,
        BLOCK_POINTS,
        |buf: &mut Vec<P>, n| {
            let take = n.min(points.len() - next);
            buf.extend_from_slice(&points[next..next + take]);
            next += take;
            Ok::<_, CodecError>(())
        },
        |_, _, inputs, outputs: &mut [B]| {
            for (point, slot) in inputs.iter().zip(outputs.iter_mut()) {
                *slot = encode(point);
            }
            Ok(())
        },
        |_, encoded| {
            // One write (and one hash update) per chunk, not per point.
            bytes.clear();
            for point in encoded {
                bytes.extend_from_slice(point.as_ref());
            }
            writer.put(&bytes)
        },
    );
    match result {
        Ok(_) => Ok(()),
        Err(lockstep_shard::Error::Task { source, .. }) => Err(source),
        Err(other) => Err(worker_failure(other)),
    }
}

/// Writes gnark's slice codec: a u32 BE count, then the points compressed.
///
/// # Panics
/// With 2^32 points or more (no file the formats describe holds that many).
pub(crate) fn write_counted<P: Point, W: Write>(
    pool: &Pool,
    control: &Control,
    writer: &mut HashingWriter<W>,
    points: &[P],
) -> Result<(), CodecError> {
    let count = u32::try_from(points.len()).expect("invariant: fewer than 2^32 points");
    writer.put(&count.to_be_bytes())?;
    write_points(pool, control, writer, points)
}

/// Reads gnark's slice codec (a u32 BE count, then the points), naming the points `name[i]`.
pub(crate) fn read_counted<P: Point, R: Read>(
    pool: &Pool,
    control: &Control,
    reader: &mut HashingReader<R>,
    name: &'static str,
) -> Result<Vec<P>, CodecError> {
    let mut count = [0u8; 4];
    reader.fill(&mut count, Location::value(name))?;
    let count = u32::from_be_bytes(count) as usize;
    read_points(pool, control, reader, name, 0, count)
}

/// Writes a challenge as gnark's `WriteBytesShort`: a length byte (0 or 32), then the bytes.
pub(crate) fn write_challenge<W: Write>(
    writer: &mut HashingWriter<W>,
    challenge: Option<&[u8; 32]>,
) -> Result<(), CodecError> {
    match challenge {
        Some(challenge) => {
            writer.put(&[32])?;
            writer.put(challenge)
        }
        None => writer.put(&[0]),
    }
}

/// Reads a challenge written by [`write_challenge`]; another length than 0 or 32 is refused.
pub(crate) fn read_challenge<R: Read>(
    reader: &mut HashingReader<R>,
) -> Result<Option<[u8; 32]>, CodecError> {
    let offset = reader.offset();
    let mut len = [0u8; 1];
    reader.fill(&mut len, Location::value("challenge"))?;
    match len[0] {
        0 => Ok(None),
        32 => {
            let mut challenge = [0u8; 32];
            reader.fill(&mut challenge, Location::value("challenge"))?;
            Ok(Some(challenge))
        }
        other => Err(CodecError::ChallengeLength { len: other, offset }),
    }
}

/// Maps the runtime's own failures (cancel, stall, panic) to a codec error.
pub(crate) fn worker_failure<E>(error: lockstep_shard::Error<E>) -> CodecError
where
    lockstep_shard::Error<E>: std::fmt::Display,
{
    match error {
        lockstep_shard::Error::Cancelled => CodecError::Cancelled,
        lockstep_shard::Error::Memory(refused) => CodecError::Memory {
            what: "a run's output",
            refused,
        },
        other => CodecError::Worker(other.to_string()),
    }
}
