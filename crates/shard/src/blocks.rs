//! In-place block maps over several slices cut by the same ranges.

use std::ops::Range;

use crate::maps::TASKS_PER_WORKER;
use crate::{Check, Control, Error, Pool, split};

/// Items per block of [`Pool::update_items`]: stop checks and progress between blocks.
const UPDATE_BLOCK: usize = 1024;

/// Slices of one length cut together: a block of each, by the same ranges. Implemented for
/// `&mut [T]` (written in place), `&[T]` (read) and tuples of up to six of them, so a kernel can
/// read some arrays and write others block by block.
pub trait Parts: Send + Sized {
    /// The length of the first slice.
    fn len(&self) -> usize;

    /// Whether the first slice is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether every slice has the first one's length.
    fn lengths_agree(&self) -> bool;

    /// Every slice cut at `mid`: `(..mid, mid..)`.
    fn split_at(self, mid: usize) -> (Self, Self);
}

impl<T: Send> Parts for &mut [T] {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }

    fn lengths_agree(&self) -> bool {
        true
    }

    fn split_at(self, mid: usize) -> (Self, Self) {
        self.split_at_mut(mid)
    }
}

impl<T: Sync> Parts for &[T] {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }

    fn lengths_agree(&self) -> bool {
        true
    }

    fn split_at(self, mid: usize) -> (Self, Self) {
        <[T]>::split_at(self, mid)
    }
}

macro_rules! tuple_parts {
    ($first:ident $(, $rest:ident)*) => {
        #[allow(non_snake_case, reason = "one binding per tuple member, named by its type")]
        impl<$first: Parts $(, $rest: Parts)*> Parts for ($first, $($rest,)*) {
            fn len(&self) -> usize {
                self.0.len()
            }

            fn lengths_agree(&self) -> bool {
                let ($first, $($rest,)*) = self;
                $first.lengths_agree() $(&& $rest.len() == $first.len() && $rest.lengths_agree())*
            }

            fn split_at(self, mid: usize) -> (Self, Self) {
                let ($first, $($rest,)*) = self;
                let $first = $first.split_at(mid);
                $(let $rest = $rest.split_at(mid);)*
                (($first.0, $($rest.0,)*), ($first.1, $($rest.1,)*))
            }
        }
    };
}

tuple_parts!(A);
tuple_parts!(A, B);
tuple_parts!(A, B, C);
tuple_parts!(A, B, C, D);
tuple_parts!(A, B, C, D, E);
tuple_parts!(A, B, C, D, E, F);

/// How [`Pool::for_each_block`] cuts its parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut<'a> {
    /// Blocks of this many items (0 counts as 1; the last may be shorter), grouped a few tasks
    /// per worker.
    Blocks(usize),
    /// These ranges, each one task: increasing, disjoint, within the parts (gaps are not
    /// visited). For work weighted unevenly along the slices ([`split::weighted`]).
    Ranges(&'a [Range<usize>]),
}

impl Pool {
    /// Calls `f(check, range, block)` for each block of `parts` (every slice cut by the same
    /// ranges), in parallel, each block visited exactly once; blocks write in place what they
    /// own. The blocks are the same at every worker count (workers only take different groups
    /// of them), so the result equals the serial loop `for r in blocks { f(r, parts[r])? }` on
    /// every pool.
    ///
    /// No per-item result or allocation: the kernel sees whole blocks, so a nanosecond-scale
    /// kernel runs at the speed of its serial loop (see the crate's README for figures).
    ///
    /// Progress: each block's length when it ends (less what `f` reported itself with
    /// [`Check::advance`]), summed per task. Stop checks come between blocks; a long range
    /// should check [`Check::should_stop`] and report progress itself.
    ///
    /// # Errors
    /// The failure (error or panic of `f`) at the lowest position: a block's failure is at its
    /// first position, or where `f` last said it was with [`Check::at`]. [`Error::Cancelled`],
    /// [`Error::Stalled`]. On failure, the parts hold some blocks done and some not.
    ///
    /// # Panics
    /// If the slices' lengths differ, or [`Cut::Ranges`] are not increasing, disjoint and within
    /// the parts (bugs in the caller, as with `copy_from_slice`).
    pub fn for_each_block<P, E>(
        &self,
        control: &Control,
        parts: P,
        cut: Cut<'_>,
        f: impl Fn(&Check<'_>, Range<usize>, P) -> Result<(), E> + Sync,
    ) -> Result<(), Error<E>>
    where
        P: Parts,
        E: Send,
    {
        self.for_each_block_at(control, 0, parts, cut, f)
    }

    /// [`for_each_block`](Self::for_each_block) over parts that sit at input position `base`
    /// of a larger input: ranges stay indexes into the parts, positions (tasks' starts, failures,
    /// [`Check::at`]) are `base + index`.
    pub(crate) fn for_each_block_at<P, E>(
        &self,
        control: &Control,
        base: usize,
        parts: P,
        cut: Cut<'_>,
        f: impl Fn(&Check<'_>, Range<usize>, P) -> Result<(), E> + Sync,
    ) -> Result<(), Error<E>>
    where
        P: Parts,
        E: Send,
    {
        assert!(
            parts.lengths_agree(),
            "for_each_block: the parts' slices have different lengths"
        );
        let len = parts.len();
        let block = |check: &Check<'_>, range: Range<usize>, piece: P| -> Result<(), Error<E>> {
            check.at(base + range.start);
            let n = range.len();
            f(check, range, piece).map_err(|source| Error::Task {
                position: check.position(),
                source,
            })?;
            check.finish_unit(n);
            Ok(())
        };
        match cut {
            Cut::Blocks(block_len) => {
                let blocks = split::fixed(len, block_len);
                let groups = split::balanced(blocks.len(), self.workers() * TASKS_PER_WORKER);
                let mut rest = parts;
                let mut tasks = Vec::with_capacity(groups.len());
                for group in groups {
                    let span = blocks[group.start].start..blocks[group.end - 1].end;
                    let (head, tail) = rest.split_at(span.len());
                    rest = tail;
                    tasks.push((base + span.start, (group, head)));
                }
                self.run(control, tasks, |check, _, (group, mut piece)| {
                    for range in &blocks[group] {
                        if check.should_stop() {
                            break;
                        }
                        let (head, tail) = piece.split_at(range.len());
                        piece = tail;
                        block(check, range.clone(), head)?;
                    }
                    Ok(())
                })?;
            }
            Cut::Ranges(ranges) => {
                let mut rest = parts;
                let mut cursor = 0;
                let mut tasks = Vec::with_capacity(ranges.len());
                for range in ranges {
                    assert!(
                        cursor <= range.start && range.start <= range.end && range.end <= len,
                        "for_each_block: range {range:?} is not increasing, disjoint and within 0..{len}"
                    );
                    let (_, tail) = rest.split_at(range.start - cursor);
                    let (piece, tail) = tail.split_at(range.len());
                    rest = tail;
                    cursor = range.end;
                    tasks.push((base + range.start, (range.clone(), piece)));
                }
                self.run(control, tasks, |check, _, (range, piece)| {
                    block(check, range, piece)
                })?;
            }
        }
        Ok(())
    }

    /// Updates every item in place, in parallel: the same as `for (i, x) in data.iter_mut()
    /// .enumerate() { update(i, x)? }`. Built on [`for_each_block`](Self::for_each_block) with
    /// blocks of 1,024 items.
    ///
    /// # Errors
    /// The failure (error or panic) of the lowest-index item that fails, at its exact position;
    /// [`Error::Cancelled`]. On error the contents of `data` are unspecified (some items updated,
    /// some not); callers that must keep their input work on a copy.
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
        self.for_each_block(
            control,
            data,
            Cut::Blocks(UPDATE_BLOCK),
            |check, range, block: &mut [T]| {
                for (position, item) in range.zip(block) {
                    check.at(position);
                    update(position, item)?;
                }
                Ok(())
            },
        )
    }
}
