//! Ordered maps: results in input order, one per task, range, item or block of items.

use std::ops::Range;

use crate::memory::{try_reserve, try_with_capacity};
use crate::{Check, Control, Error, Pool, split};

/// Items between two stop checks (and progress reports) inside one task of an item-wise map:
/// small enough that a stop is seen within microseconds for curve-operation-sized items, large
/// enough that the checks cost nothing next to trivial items.
const CHECK_STRIDE: usize = 64;

/// Tasks per worker in item-wise maps: a few, so that a worker slowed by the host's other load
/// does not hold the whole run back (idle workers steal the remaining tasks).
pub(crate) const TASKS_PER_WORKER: usize = 4;

impl Pool {
    /// Runs `task` on every `(position, input)` pair, in parallel, and returns the results in the
    /// order of `tasks`. This is the primitive the other operations are built on; use it when a
    /// task must own something (for example a mutable part of a buffer from [`split::parts_mut`]).
    ///
    /// `position` is the first input position a task covers; positions must increase along
    /// `tasks`, so that the lowest-position failure is also the first task's in order.
    ///
    /// Progress: what the tasks report with [`Check::advance`]; a task that runs for seconds
    /// should report as it goes (the watchdog fails a run whose tasks fall silent).
    ///
    /// # Errors
    /// [`Error::Cancelled`] if `control` is cancelled before the run ends; otherwise the failure
    /// (error or panic) of the first failing task in order, at the position it last reported with
    /// [`Check::at`] (its first position if it never did); [`Error::Stalled`].
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
        self.run(control, tasks, |check, _, input| {
            task(check, input).map_err(|source| Error::Task {
                position: check.position(),
                source,
            })
        })
    }

    /// Runs `task` on each range (ranges from [`split`], in increasing order) and returns the
    /// results in range order.
    ///
    /// Progress: each range's length, as it finishes (less what the task reported itself).
    ///
    /// # Errors
    /// As [`map_tasks`](Self::map_tasks); a task error is reported at its range's first position
    /// unless the task said otherwise with [`Check::at`].
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
        self.run(control, tasks, |check, _, range: Range<usize>| {
            let len = range.len();
            let value = task(check, range).map_err(|source| Error::Task {
                position: check.position(),
                source,
            })?;
            check.finish_unit(len);
            Ok(value)
        })
    }

    /// Maps every item to an output, in parallel, and returns the outputs in input order:
    /// `output[i] == map(i, &items[i])`, exactly as the serial loop would produce.
    ///
    /// Progress: every item, reported every 64 items and summed per task.
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
        let mut out = try_with_capacity(items.len())?;
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
                    check.at(position);
                    part.push(
                        map(position, item).map_err(|source| Error::Task { position, source })?,
                    );
                }
                Ok(())
            },
        )?;
        try_reserve(out, items.len())?;
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
    /// Progress: whole blocks, summed per task; stop checks come between blocks.
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
                check.at(first);
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
        let mut out = try_with_capacity(items.len())?;
        parts.into_iter().for_each(|part| out.extend(part));
        Ok(out)
    }

    /// The loop under the item-wise maps: splits `items` into a few tasks per worker, walks each
    /// task's range in blocks of `stride` (item `i` at position `base + i`), checks for a stop
    /// between blocks and reports each block's progress.
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
        let ranges = split::balanced(items.len(), self.workers() * TASKS_PER_WORKER);
        let tasks = ranges.into_iter().map(|r| (base + r.start, r)).collect();
        self.run(control, tasks, |check, _, range: Range<usize>| {
            let mut part = try_with_capacity(range.len())?;
            for within in split::fixed(range.len(), stride) {
                if check.should_stop() {
                    break;
                }
                let start = range.start + within.start;
                let end = range.start + within.end;
                block(check, base + start, &items[start..end], &mut part)?;
                check.finish_unit(within.len());
            }
            Ok(part)
        })
    }
}
