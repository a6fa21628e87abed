//! A pool of exactly `W` worker threads and the ordered maps that run on it.

use std::cell::Cell;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::error::panic_message;
use crate::{Control, Error, PoolError, ShardPolicy, split};

/// Items between two stop checks and progress reports inside one task of an item-wise map:
/// small enough that a stop is seen within microseconds for curve-operation-sized items, large
/// enough that the checks cost nothing next to trivial items.
const CHECK_STRIDE: usize = 64;

/// Items between two progress reports inside one task of an item-wise map, at least.
const PROGRESS_STRIDE: usize = 1024;

/// Tasks per worker in item-wise maps: a few, so that a worker slowed by the host's other load
/// does not hold the whole run back (idle workers steal the remaining tasks).
const TASKS_PER_WORKER: usize = 4;

/// A pool of exactly [`workers`](Self::workers) threads, owned by the caller (never rayon's global
/// pool), and the ordered, fail-as-a-whole operations that run on it.
///
/// # Determinism
/// Every operation returns results in input order, whatever order workers finish in, and fails
/// with the error at the lowest input position (see [`Error`]). Nothing a worker computes depends
/// on which worker runs it.
///
/// # Failure
/// A task that returns an error or panics fails the whole call. Tasks after the lowest failure
/// seen so far are told to stop (their [`Check::should_stop`] turns true); tasks before it keep
/// running, because one of them may hold an earlier error, which must win. Panics are caught on
/// the worker and become [`Error::Panic`]; item-wise operations catch them per item, so their
/// positions are exact ([`map_blocks`](Self::map_blocks) catches them per block: a panic is
/// reported at its block's first item, which depends on the worker count).
#[derive(Debug)]
pub struct Pool {
    pool: rayon::ThreadPool,
    workers: usize,
}

/// A task's view of its run: whether it should stop early.
///
/// A task that sees [`should_stop`](Self::should_stop) may return anything: its result is never
/// observed, because the run will fail (or report cancellation) as a whole.
#[derive(Debug)]
pub struct Check<'a> {
    start: usize,
    /// The position the task is working on, for a panic's report (item-wise operations keep it
    /// current, so a panic is reported at its exact item whatever the split).
    current: Cell<usize>,
    run: &'a RunState<'a>,
}

#[derive(Debug)]
struct RunState<'a> {
    control: &'a Control,
    /// Lowest input position known to have failed; `usize::MAX` while none has.
    first_failed: AtomicUsize,
}

impl Check<'_> {
    /// True once the run is cancelled or a failure is known at a position before this task's
    /// first position. Costs two relaxed atomic loads: cheap enough to call once per item.
    pub fn should_stop(&self) -> bool {
        self.should_stop_at(self.start)
    }

    /// True once the run is cancelled or a failure is known at a position before `position`:
    /// for tasks whose items are not contiguous (owner partitioning), checked per item.
    pub fn should_stop_at(&self, position: usize) -> bool {
        self.run.first_failed.load(Ordering::Relaxed) < position || self.run.control.is_cancelled()
    }
}

impl Check<'_> {
    /// Records that the task now works on the item (or block) at `position`: a panic from here
    /// on is reported there, so in item-wise operations the reported position never depends on
    /// how items were split.
    pub(crate) fn enter(&self, position: usize) {
        self.current.set(position);
    }
}

impl Pool {
    /// Starts a pool of exactly `workers` threads (0 counts as 1).
    ///
    /// # Errors
    /// [`PoolError::Spawn`] if the operating system refuses the threads.
    pub fn new(workers: usize) -> Result<Self, PoolError> {
        let workers = workers.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .thread_name(|i| format!("lockstep-worker-{i}"))
            .build()
            .map_err(|source| PoolError::Spawn { workers, source })?;
        Ok(Self { pool, workers })
    }

    /// Starts a pool sized by `policy` for a run over `items` items.
    ///
    /// # Errors
    /// As [`Pool::new`].
    pub fn for_items(policy: &ShardPolicy, items: usize) -> Result<Self, PoolError> {
        Self::new(policy.workers_for(items))
    }

    /// The number of worker threads.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Runs `task` on every `(position, input)` pair, in parallel, and returns the results in the
    /// order of `tasks`. This is the primitive the other operations are built on; use it when a
    /// task must own something (for example a mutable part of a buffer from [`split::parts_mut`]).
    ///
    /// `position` is the first input position a task covers; positions must increase along
    /// `tasks`, so that the lowest-position failure is also the first task's in order.
    ///
    /// # Errors
    /// [`Error::Cancelled`] if `control` is cancelled before the run ends; otherwise the failure
    /// (error or panic) of the first failing task in order, with its position.
    pub fn map_tasks<X, T, E>(
        &self,
        control: &Control,
        tasks: Vec<(usize, X)>,
        task: impl Fn(&Check<'_>, X) -> Result<T, E> + Sync,
    ) -> Result<Vec<T>, Error<E>>
    where
        X: Send,
        T: Send,
        E: Send,
    {
        self.run(control, tasks, |check, position, input| {
            task(check, input).map_err(|source| Error::Task { position, source })
        })
    }

    /// Runs `task` on each range (ranges from [`split`], in increasing order) and returns the
    /// results in range order.
    ///
    /// # Errors
    /// As [`map_tasks`](Self::map_tasks); a task error is reported at its range's first position.
    pub fn map_ranges<T, E>(
        &self,
        control: &Control,
        ranges: &[Range<usize>],
        task: impl Fn(&Check<'_>, Range<usize>) -> Result<T, E> + Sync,
    ) -> Result<Vec<T>, Error<E>>
    where
        T: Send,
        E: Send,
    {
        let tasks = ranges.iter().map(|r| (r.start, r.clone())).collect();
        self.map_tasks(control, tasks, task)
    }

    /// Maps every item to an output, in parallel, and returns the outputs in input order:
    /// `output[i] == map(i, &items[i])`, exactly as the serial loop would produce.
    ///
    /// Progress: `control`'s sink advances by the number of items as they complete, in steps of
    /// at most 1,024 items (the caller starts the step).
    ///
    /// # Errors
    /// The failure of the lowest-index item that fails, an error or a panic (reported at the
    /// exact item that panicked, whatever the worker count); [`Error::Cancelled`] if cancelled.
    pub fn map_items<I, O, E>(
        &self,
        control: &Control,
        items: &[I],
        map: impl Fn(usize, &I) -> Result<O, E> + Sync,
    ) -> Result<Vec<O>, Error<E>>
    where
        I: Sync,
        O: Send,
        E: Send,
    {
        let mut out = Vec::with_capacity(items.len());
        self.map_items_into(control, items, 0, &mut out, map)?;
        Ok(out)
    }

    /// [`map_items`](Self::map_items) appending to `out`, with item `i` at input position
    /// `base + i`.
    pub(crate) fn map_items_into<I, O, E>(
        &self,
        control: &Control,
        items: &[I],
        base: usize,
        out: &mut Vec<O>,
        map: impl Fn(usize, &I) -> Result<O, E> + Sync,
    ) -> Result<(), Error<E>>
    where
        I: Sync,
        O: Send,
        E: Send,
    {
        let parts = self.map_in_blocks(
            control,
            items,
            base,
            CHECK_STRIDE,
            |check, first, block, part| {
                for (position, item) in (first..).zip(block) {
                    check.enter(position);
                    part.push(
                        map(position, item).map_err(|source| Error::Task { position, source })?,
                    );
                }
                Ok(())
            },
        )?;
        out.reserve(items.len());
        parts.into_iter().for_each(|part| out.extend(part));
        Ok(())
    }

    /// Maps items a block of consecutive items at a time, for work that is cheaper per item when
    /// done together (one field inversion shared by a block of points, say), and returns the
    /// outputs in input order.
    ///
    /// `map(first, block)` receives the items at positions `first..first + block.len()` (at least
    /// one and at most `max(block_len, 1)` of them) and returns one result per item, in order.
    /// Block boundaries depend on the worker count, so `map` must give each item the result it
    /// would give that item alone; then `output[i]` is the same at every worker count.
    ///
    /// Progress: `control`'s sink advances by whole blocks, in steps of under
    /// `1,024 + block_len` items; stop checks come between blocks.
    ///
    /// # Errors
    /// The error of the lowest-position item whose result is an error; [`Error::Panic`] at a
    /// block's first position if `map` panics or returns a number of results other than its
    /// block's length (a block that panics is reported so even if an earlier item of it holds
    /// an error); [`Error::Cancelled`] if cancelled.
    pub fn map_blocks<I, O, E>(
        &self,
        control: &Control,
        items: &[I],
        block_len: usize,
        map: impl Fn(usize, &[I]) -> Vec<Result<O, E>> + Sync,
    ) -> Result<Vec<O>, Error<E>>
    where
        I: Sync,
        O: Send,
        E: Send,
    {
        let parts = self.map_in_blocks(
            control,
            items,
            0,
            block_len.max(1),
            |check, first, block, part| {
                check.enter(first);
                let results = map(first, block);
                if results.len() != block.len() {
                    return Err(Error::Panic {
                        position: first,
                        message: format!(
                            "a block map returned {} results for {} items",
                            results.len(),
                            block.len()
                        ),
                    });
                }
                for (position, result) in (first..).zip(results) {
                    part.push(result.map_err(|source| Error::Task { position, source })?);
                }
                Ok(())
            },
        )?;
        let mut out = Vec::with_capacity(items.len());
        parts.into_iter().for_each(|part| out.extend(part));
        Ok(out)
    }

    /// The loop under the item-wise maps: splits `items` into a few tasks per worker, walks each
    /// task's range in blocks of `stride` (item `i` at position `base + i`), checks for a stop
    /// between blocks and reports progress in steps of about [`PROGRESS_STRIDE`] items.
    /// `block(check, first, items, part)` appends the block's outputs to its task's `part`.
    fn map_in_blocks<I, O, E>(
        &self,
        control: &Control,
        items: &[I],
        base: usize,
        stride: usize,
        block: impl Fn(&Check<'_>, usize, &[I], &mut Vec<O>) -> Result<(), Error<E>> + Sync,
    ) -> Result<Vec<Vec<O>>, Error<E>>
    where
        I: Sync,
        O: Send,
        E: Send,
    {
        let ranges = split::balanced(items.len(), self.workers * TASKS_PER_WORKER);
        let tasks = ranges.into_iter().map(|r| (base + r.start, r)).collect();
        self.run(control, tasks, |check, _, range: Range<usize>| {
            let mut part = Vec::with_capacity(range.len());
            let mut unreported = 0;
            for within in split::fixed(range.len(), stride) {
                if check.should_stop() {
                    break;
                }
                let start = range.start + within.start;
                let end = range.start + within.end;
                block(check, base + start, &items[start..end], &mut part)?;
                unreported += within.len();
                if unreported >= PROGRESS_STRIDE {
                    control.progress().advance(unreported as u64);
                    unreported = 0;
                }
            }
            control.progress().advance(unreported as u64);
            Ok(part)
        })
    }

    /// Updates every item in place, in parallel: the same as `for (i, x) in data.iter_mut()
    /// .enumerate() { update(i, x)? }`. Each worker owns the contiguous part it writes.
    ///
    /// # Errors
    /// As [`map_items`](Self::map_items). On error the contents of `data` are unspecified
    /// (some items updated, some not); callers that must keep their input work on a copy.
    pub fn update_items<T, E>(
        &self,
        control: &Control,
        data: &mut [T],
        update: impl Fn(usize, &mut T) -> Result<(), E> + Sync,
    ) -> Result<(), Error<E>>
    where
        T: Send,
        E: Send,
    {
        let ranges = split::balanced(data.len(), self.workers * TASKS_PER_WORKER);
        let tasks = ranges
            .iter()
            .map(|r| r.start)
            .zip(split::parts_mut(data, &ranges))
            .collect();
        self.run(control, tasks, |check, start, part: &mut [T]| {
            let mut unreported = 0;
            for (k, block) in part.chunks_mut(CHECK_STRIDE).enumerate() {
                if check.should_stop() {
                    return Ok(());
                }
                let first = start + k * CHECK_STRIDE;
                for (position, item) in (first..).zip(block.iter_mut()) {
                    check.enter(position);
                    update(position, item).map_err(|source| Error::Task { position, source })?;
                }
                unreported += block.len();
                if unreported >= PROGRESS_STRIDE {
                    control.progress().advance(unreported as u64);
                    unreported = 0;
                }
            }
            control.progress().advance(unreported as u64);
            Ok(())
        })?;
        Ok(())
    }

    /// Runs `f` on this pool's threads (so that nested rayon calls use this pool).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }

    pub(crate) fn rayon(&self) -> &rayon::ThreadPool {
        &self.pool
    }

    /// The core: runs tasks in parallel, catches panics, applies the lowest-failure rule.
    /// Tasks report failures with their exact positions.
    pub(crate) fn run<X, T, E>(
        &self,
        control: &Control,
        tasks: Vec<(usize, X)>,
        task: impl Fn(&Check<'_>, usize, X) -> Result<T, Error<E>> + Sync,
    ) -> Result<Vec<T>, Error<E>>
    where
        X: Send,
        T: Send,
        E: Send,
    {
        if control.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let state = RunState {
            control,
            first_failed: AtomicUsize::new(usize::MAX),
        };
        let mut results: Vec<Result<T, Error<E>>> = Vec::with_capacity(tasks.len());
        self.pool.install(|| {
            tasks
                .into_par_iter()
                .with_max_len(1)
                .map(|(position, input)| {
                    let check = Check {
                        start: position,
                        current: Cell::new(position),
                        run: &state,
                    };
                    if check.should_stop() {
                        // Never observed: a failure before this task or cancellation decides.
                        return Err(Error::Cancelled);
                    }
                    let outcome = catch_unwind(AssertUnwindSafe(|| task(&check, position, input)))
                        .unwrap_or_else(|payload| {
                            Err(Error::Panic {
                                position: check.current.get(),
                                message: panic_message(payload.as_ref()),
                            })
                        });
                    if let Err(failure) = &outcome {
                        let at = failure.position().unwrap_or(usize::MAX);
                        state.first_failed.fetch_min(at, Ordering::Relaxed);
                    }
                    outcome
                })
                .collect_into_vec(&mut results);
        });
        if control.is_cancelled() {
            return Err(Error::Cancelled);
        }
        // The failure at the lowest position wins. Tasks skipped because of an earlier failure
        // left a position-less placeholder, which never beats a real failure.
        let mut values = Vec::with_capacity(results.len());
        let mut failure: Option<Error<E>> = None;
        for result in results {
            match result {
                Ok(value) => values.push(value),
                Err(error) => {
                    let at = error.position().unwrap_or(usize::MAX);
                    if failure
                        .as_ref()
                        .is_none_or(|f| at < f.position().unwrap_or(usize::MAX))
                    {
                        failure = Some(error);
                    }
                }
            }
        }
        failure.map_or(Ok(values), Err)
    }
}
