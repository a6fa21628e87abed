//! The ordered chunk pipeline: bounded-memory parallel processing of a stream.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::panic_message;
use crate::{Check, Control, Cut, Error, Pool};

/// What a finished [`Pool::pipeline`] run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PipelineStats {
    /// Items read, processed and written.
    pub items: u64,
    /// Chunks written.
    pub chunks: u64,
}

impl Pool {
    /// Streams items through `process` in fixed-size chunks with bounded memory.
    ///
    /// - `read(buf, n)` appends up to `n` items of the stream to the empty `buf`, in stream order;
    ///   appending none means the stream has ended. It runs on the calling thread, and reading
    ///   chunk `i + 1` overlaps the workers' processing of chunk `i` (on a pool of two workers or
    ///   more: one worker reads and processes in turn, on the calling thread).
    /// - `process(position, &item)` maps one item; the items of a chunk are processed in
    ///   parallel, each into its fixed offset of the chunk's output.
    /// - `write(first_position, outputs)` receives each chunk's outputs, chunks in stream order,
    ///   on the calling thread.
    ///
    /// # Determinism
    /// The sequence of `write` calls (positions and outputs) equals the serial loop's
    /// `for chunk in stream { write(chunk.map(process)) }` at every worker count.
    ///
    /// # Memory
    /// At most two input chunks (the one being processed and the one being read) and one output
    /// chunk of items are alive at once, whatever the stream's length. In bytes:
    /// `2 * chunk_items * size_of::<I>() + 2 * chunk_items * size_of::<O>()` (the workers'
    /// per-task output parts are moved into the chunk's output buffer), plus whatever `read` and
    /// `write` buffer themselves. Input and output buffers are reused from chunk to chunk.
    ///
    /// # Progress and cancellation
    /// `control`'s sink advances by each chunk's length once it is written (the caller starts the
    /// step, with the total if it knows it). Cancellation is checked before each chunk and between
    /// items, so a cancelled run stops within one chunk and writes nothing after the cancel is seen.
    ///
    /// # Panics
    /// If `read` appends more than `n` items (a bug in the reader, which would break the memory
    /// bound).
    ///
    /// # Errors
    /// The failure at the lowest stream position, whichever stage it comes from: a `process` error
    /// at its item, a `write` error at its chunk's first position, a `read` error at the position
    /// of the first item it failed to deliver (items it appended before failing are processed and
    /// written first). A panic in `read` or `write` is not caught: they run on the calling thread. [`Error::Cancelled`] if cancelled: output already
    /// written stays written, and the caller must discard it.
    pub fn pipeline<I, O, E>(
        &self,
        control: &Control,
        chunk_items: usize,
        read: impl FnMut(&mut Vec<I>, usize) -> Result<(), E>,
        process: impl Fn(usize, &I) -> Result<O, E> + Sync,
        write: impl FnMut(usize, &[O]) -> Result<(), E>,
    ) -> Result<PipelineStats, Error<E>>
    where
        I: Send + Sync,
        O: Send,
        E: Send,
    {
        self.stream(
            control,
            chunk_items,
            read,
            |pool, inner, position, chunk, output| {
                output.clear();
                pool.map_items_into(inner, chunk, position, output, &process)
            },
            write,
        )
    }

    /// [`pipeline`](Self::pipeline) whose process step gets blocks of items and writes their
    /// outputs in place: `process(check, first_position, inputs, outputs)` fills `outputs` (the
    /// block's slots of the chunk's output buffer, reused from chunk to chunk: they hold
    /// `O::default()` the first time and the previous chunk's values after, so `process` writes
    /// every slot) from `inputs`, for work shared by a block (one field inversion for a block of
    /// points). Blocks are `block_len` items (0 counts as 1) from the start of each chunk, the
    /// same at every worker count.
    ///
    /// # Determinism
    /// As [`pipeline`](Self::pipeline): the sequence of `write` calls equals the serial loop's.
    ///
    /// # Memory
    /// At most two input chunks and one output chunk, with no per-task parts:
    /// `2 * chunk_items * size_of::<I>() + chunk_items * size_of::<O>()` bytes, plus what
    /// `read`, `process` and `write` hold themselves.
    ///
    /// # Errors
    /// As [`pipeline`](Self::pipeline), except that a block's failure is at its first position
    /// unless `process` says where with [`Check::at`](crate::Check::at).
    ///
    /// # Panics
    /// As [`pipeline`](Self::pipeline).
    pub fn pipeline_blocks<I, O, E>(
        &self,
        control: &Control,
        chunk_items: usize,
        block_len: usize,
        read: impl FnMut(&mut Vec<I>, usize) -> Result<(), E>,
        process: impl Fn(&Check<'_>, usize, &[I], &mut [O]) -> Result<(), E> + Sync,
        write: impl FnMut(usize, &[O]) -> Result<(), E>,
    ) -> Result<PipelineStats, Error<E>>
    where
        I: Send + Sync,
        O: Send + Default,
        E: Send,
    {
        self.stream(
            control,
            chunk_items,
            read,
            |pool, inner, position, chunk, output| {
                output.truncate(chunk.len());
                output.resize_with(chunk.len(), O::default);
                pool.for_each_block_at(
                    inner,
                    position,
                    (chunk, &mut output[..]),
                    Cut::Blocks(block_len),
                    |check, range, (inputs, outputs)| {
                        process(check, position + range.start, inputs, outputs)
                    },
                )
            },
            write,
        )
    }

    /// The pipeline's loop: `process_chunk(pool, inner control, first position, chunk, output)`
    /// fills the output buffer for one chunk on the workers while the next chunk is read.
    fn stream<I, O, E>(
        &self,
        control: &Control,
        chunk_items: usize,
        mut read: impl FnMut(&mut Vec<I>, usize) -> Result<(), E>,
        process_chunk: impl Fn(&Pool, &Control, usize, &[I], &mut Vec<O>) -> Result<(), Error<E>> + Sync,
        mut write: impl FnMut(usize, &[O]) -> Result<(), E>,
    ) -> Result<PipelineStats, Error<E>>
    where
        I: Send + Sync,
        O: Send,
        E: Send,
    {
        let chunk_items = chunk_items.max(1);
        let mut stats = PipelineStats::default();
        let mut position = 0usize;
        let mut current: Vec<I> = Vec::with_capacity(chunk_items);
        let mut next: Vec<I> = Vec::with_capacity(chunk_items);
        let mut output: Vec<O> = Vec::with_capacity(chunk_items);

        // Progress is reported per written chunk, so the inner runs report nowhere.
        let inner = Control::new()
            .with_cancel(control.cancel_token().clone())
            .with_watchdog(control.watchdog());
        // A read that fails after appending items still delivers them: they are processed and
        // written like any chunk, then the failure (positioned after them) ends the run, as in
        // the serial loop.
        let mut read_failure = read_chunk(&mut read, &mut current, chunk_items, position);
        while !current.is_empty() {
            if control.is_cancelled() {
                return Err(Error::Cancelled);
            }
            let next_position = position + current.len();
            let (processed, fetched) = self.overlap(
                // The runs inside catch their tasks' panics; this catches the rest (a panicking
                // `O::default`, say) at the chunk's first position.
                || {
                    catch_unwind(AssertUnwindSafe(|| {
                        process_chunk(self, &inner, position, &current, &mut output)
                    }))
                    .unwrap_or_else(|payload| {
                        Err(Error::Panic {
                            position,
                            message: panic_message(payload.as_ref()),
                        })
                    })
                },
                // Runs on the calling thread while the workers process.
                || {
                    if read_failure.is_none() {
                        read_chunk(&mut read, &mut next, chunk_items, next_position)
                    } else {
                        next.clear();
                        None
                    }
                },
            );
            // Deterministic order of failure: this chunk's items, then its write, then the read
            // that ended this chunk, then the read of the next one (whose positions come after).
            processed?;
            if control.is_cancelled() {
                return Err(Error::Cancelled);
            }
            write(position, &output).map_err(|source| Error::Task { position, source })?;
            control.progress().advance(current.len() as u64);
            stats.items += current.len() as u64;
            stats.chunks += 1;
            if let Some(failure) = read_failure {
                return Err(failure);
            }
            read_failure = fetched;
            position = next_position;
            current.clear();
            std::mem::swap(&mut current, &mut next);
        }
        read_failure.map_or(Ok(stats), Err)
    }
}

/// Reads one chunk into `buf` (cleared first). Returns the read's failure, if any, positioned
/// after the items it did append (which stay in `buf`).
fn read_chunk<I, E>(
    read: &mut impl FnMut(&mut Vec<I>, usize) -> Result<(), E>,
    buf: &mut Vec<I>,
    chunk_items: usize,
    position: usize,
) -> Option<Error<E>> {
    buf.clear();
    let outcome = read(buf, chunk_items);
    assert!(
        buf.len() <= chunk_items,
        "pipeline reader appended {} items when asked for at most {chunk_items}",
        buf.len()
    );
    outcome.err().map(|source| Error::Task {
        position: position + buf.len(),
        source,
    })
}
