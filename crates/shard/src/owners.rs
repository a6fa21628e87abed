//! Owner partitioning: many updates to shared targets, without locks.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::panic_message;
use crate::{Control, Error, Pool};

/// Targets partitioned among owners: target `id` belongs to owner `id % owners`, and only that
/// owner's worker ever touches it. Updates are queued per owner, in bounded batches, keeping their
/// input order within each owner.
///
/// # Determinism
/// Applying a sequence of updates gives the same targets as the serial loop
/// `for u in updates { apply(&mut targets[target(u)], u)? }`, at every owner count, provided
/// updates to *different* targets are independent (which owning each target exclusively makes
/// true): every target sees exactly its own updates, once each, in input order.
///
/// # Memory
/// The targets themselves, plus one index (a `usize`) per update of the batch being applied.
#[derive(Debug)]
pub struct Owned<S> {
    /// `parts[w][j]` is target `j * owners + w`.
    parts: Vec<Vec<S>>,
    len: usize,
    /// Reused per-owner queues of batch indexes.
    queues: Vec<Vec<usize>>,
}

impl<S: Send> Owned<S> {
    /// Partitions `targets` among `owners` owners (0 counts as 1). Use the pool's worker count
    /// for full parallelism.
    pub fn new(targets: Vec<S>, owners: usize) -> Self {
        let owners = owners.max(1);
        let len = targets.len();
        let mut parts: Vec<Vec<S>> = (0..owners)
            .map(|w| Vec::with_capacity(len.saturating_sub(w).div_ceil(owners)))
            .collect();
        for (id, target) in targets.into_iter().enumerate() {
            parts[id % owners].push(target);
        }
        Self {
            parts,
            len,
            queues: vec![Vec::new(); owners],
        }
    }

    /// The number of owners.
    pub fn owners(&self) -> usize {
        self.parts.len()
    }

    /// The number of targets.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no targets.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The target with this id.
    pub fn get(&self, id: usize) -> Option<&S> {
        self.parts
            .get(id % self.owners())
            .and_then(|part| part.get(id / self.owners()))
    }

    /// Applies one batch of updates: `apply(&mut targets[target(u)], u)` for each `u`, each owner
    /// taking its own updates in input order, the owners in parallel on `pool`. The update at
    /// `updates[i]` has input position `first_position + i` (for errors).
    ///
    /// # Errors
    /// The failure (error or panic of `apply`, or [`Error::TargetOutOfRange`]) at the lowest input
    /// position, as the serial loop would meet it: updates before it are applied, those after it
    /// may or may not be. [`Error::Cancelled`] if cancelled.
    pub fn apply<U, E>(
        &mut self,
        pool: &Pool,
        control: &Control,
        first_position: usize,
        updates: &[U],
        target: impl Fn(&U) -> usize + Sync,
        apply: impl Fn(&mut S, &U) -> Result<(), E> + Sync,
    ) -> Result<(), Error<E>>
    where
        U: Sync,
        E: Send,
    {
        let owners = self.owners();
        self.queues.iter_mut().for_each(Vec::clear);
        // An update naming a missing target (or whose `target` panics) ends the batch there: the
        // updates before it are still applied, as the serial loop would, then its error is
        // reported.
        let mut stopped = None;
        for (index, update) in updates.iter().enumerate() {
            let position = first_position + index;
            let id = match catch_unwind(AssertUnwindSafe(|| target(update))) {
                Ok(id) => id,
                Err(payload) => {
                    stopped = Some(Error::Panic {
                        position,
                        message: panic_message(payload.as_ref()),
                    });
                    break;
                }
            };
            if id >= self.len {
                stopped = Some(Error::TargetOutOfRange {
                    position,
                    target: id,
                    targets: self.len,
                });
                break;
            }
            self.queues[id % owners].push(index);
        }
        let tasks: Vec<_> = self
            .parts
            .iter_mut()
            .zip(&self.queues)
            .map(|(part, queue)| {
                let start = queue.first().map_or(usize::MAX, |i| first_position + i);
                (start, (part, queue))
            })
            .collect();
        pool.run(control, tasks, |check, _, (part, queue)| {
            for &index in queue {
                let position = first_position + index;
                if check.should_stop_at(position) {
                    break;
                }
                let update = &updates[index];
                check.enter(position);
                apply(&mut part[target(update) / owners], update)
                    .map_err(|source| Error::Task { position, source })?;
            }
            Ok(())
        })?;
        stopped.map_or(Ok(()), Err)
    }

    /// Applies a stream of updates in batches of at most `batch` updates (0 counts as 1), each
    /// batch finished before the next is read. Returns the number of updates applied.
    ///
    /// # Errors
    /// As [`apply`](Self::apply), plus the stream's own errors at their positions.
    pub fn apply_stream<U, E>(
        &mut self,
        pool: &Pool,
        control: &Control,
        updates: impl IntoIterator<Item = Result<U, E>>,
        batch: usize,
        target: impl Fn(&U) -> usize + Sync,
        apply: impl Fn(&mut S, &U) -> Result<(), E> + Sync,
    ) -> Result<u64, Error<E>>
    where
        U: Sync,
        E: Send,
    {
        let batch = batch.max(1);
        let mut buffer = Vec::with_capacity(batch);
        let mut applied = 0usize;
        let mut updates = updates.into_iter();
        loop {
            buffer.clear();
            let mut read_error = None;
            for update in updates.by_ref().take(batch) {
                match update {
                    Ok(u) => buffer.push(u),
                    Err(source) => {
                        read_error = Some(Error::Task {
                            position: applied + buffer.len(),
                            source,
                        });
                        break;
                    }
                }
            }
            if buffer.is_empty() && read_error.is_none() {
                return Ok(applied as u64);
            }
            self.apply(pool, control, applied, &buffer, &target, &apply)?;
            applied += buffer.len();
            if let Some(error) = read_error {
                return Err(error);
            }
        }
    }

    /// The targets, back in id order.
    pub fn into_vec(self) -> Vec<S> {
        let owners = self.parts.len();
        let mut parts: Vec<_> = self.parts.into_iter().map(Vec::into_iter).collect();
        (0..self.len)
            .filter_map(|id| parts[id % owners].next())
            .collect()
    }
}
