//! Owner partitioning: many updates to shared targets, without locks.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::panic_message;
use crate::{Control, Error, Pool};

/// Updates between two progress reports (and stop checks) of an owner.
const OWNER_STRIDE: usize = 64;

/// Why an owner-partitioned update failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OwnedError<E> {
    /// The run failed (an update's error or panic, cancellation, a stall).
    #[error(transparent)]
    Run(#[from] Error<E>),
    /// An update named a target outside the target set.
    #[error(
        "update at input position {position} names target {target}, but there are only {targets} targets"
    )]
    TargetOutOfRange {
        /// The update's position in its input.
        position: usize,
        /// The target it names.
        target: usize,
        /// The number of targets.
        targets: usize,
    },
}

impl<E> OwnedError<E> {
    /// The input position the failure belongs to, if it has one.
    pub fn position(&self) -> Option<usize> {
        match self {
            Self::Run(error) => error.position(),
            Self::TargetOutOfRange { position, .. } => Some(*position),
        }
    }
}

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
/// # Hot targets
/// A target most updates hit (R1CS's constant-one wire) serializes its owner: with two owners and
/// 70% of updates on one target, one owner does 85% of the work (measured in the crate's bench).
/// [`with_hot`](Self::with_hot) spreads a hot target's updates over every owner, each into a
/// partial target of its own, combined into the target in owner order at the end of each
/// batch. That equals the serial loop only when applying updates and combining partials are
/// exact and order-free (sums of integers or of group elements, never floating point): it is an
/// opt-in for such targets.
///
/// # Memory
/// The targets, one partial per owner per hot target, plus, in [`apply_stream`](Self::apply_stream),
/// two batches of updates (the one applied and the one read meanwhile) and one index (a `usize`)
/// per update of the batch applied.
pub struct Owned<S> {
    /// `parts[w][j]` is target `j * owners + w`.
    parts: Vec<Vec<S>>,
    len: usize,
    /// Reused per-owner queues of batch indexes.
    queues: Vec<Vec<usize>>,
    /// Hot targets, ascending, with their partials per owner.
    hot: Vec<Hot<S>>,
    /// Folds a partial into its target and leaves it empty.
    combine: Option<Box<Combine<S>>>,
}

type Combine<S> = dyn Fn(&mut S, &mut S) + Send + Sync;

impl<S: std::fmt::Debug> std::fmt::Debug for Owned<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Owned")
            .field("parts", &self.parts)
            .field("hot", &self.hot)
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
struct Hot<S> {
    id: usize,
    partials: Vec<S>,
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
            hot: Vec::new(),
            combine: None,
        }
    }

    /// Declares `ids` hot (see the type's documentation): each owner applies its share of their
    /// updates (round robin by position) to a partial made by `empty`, and after every batch
    /// `combine(target, partial)` folds the partials into the target in owner order; it must add
    /// the partial into the target and leave the partial as `empty` made it. Ids outside the
    /// targets are ignored.
    pub fn with_hot(
        mut self,
        ids: &[usize],
        empty: impl Fn() -> S,
        combine: impl Fn(&mut S, &mut S) + Send + Sync + 'static,
    ) -> Self {
        self.combine = Some(Box::new(combine));
        let mut ids: Vec<usize> = ids.iter().copied().filter(|&id| id < self.len).collect();
        ids.sort_unstable();
        ids.dedup();
        let owners = self.owners();
        self.hot = ids
            .into_iter()
            .map(|id| Hot {
                id,
                partials: (0..owners).map(|_| empty()).collect(),
            })
            .collect();
        self
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
    /// `updates[i]` has input position `first_position + i` (for errors). Hot targets' partials
    /// are folded in at the end (see [`with_hot`](Self::with_hot)).
    ///
    /// Progress: every update applied, reported every 64 updates of an owner.
    ///
    /// # Errors
    /// The failure (error or panic of `apply`, or [`OwnedError::TargetOutOfRange`]) at the lowest
    /// input position, as the serial loop would meet it: updates before it are applied, those
    /// after it may or may not be. Cancellation and stalls.
    pub fn apply<U, E>(
        &mut self,
        pool: &Pool,
        control: &Control,
        first_position: usize,
        updates: &[U],
        target: impl Fn(&U) -> usize + Sync,
        apply: impl Fn(&mut S, &U) -> Result<(), E> + Sync,
    ) -> Result<(), OwnedError<E>>
    where
        U: Sync,
        E: Send,
    {
        let mut queues = std::mem::take(&mut self.queues);
        let stopped = self
            .router()
            .route(first_position, updates, &target, &mut queues);
        let applied = self.apply_routed(
            pool,
            control,
            first_position,
            updates,
            &queues,
            &target,
            &apply,
        );
        self.queues = queues;
        applied?;
        self.fold_hot();
        stopped.map_or(Ok(()), Err)
    }

    /// What routing a batch needs to know: the targets, owners and hot ids.
    fn router(&self) -> Router {
        Router {
            len: self.len,
            owners: self.owners(),
            hot: self.hot.iter().map(|h| h.id).collect(),
        }
    }

    /// Applies a routed batch (`queues[w]`: owner `w`'s batch indexes), the owners in parallel.
    #[allow(
        clippy::too_many_arguments,
        reason = "the pieces of one batch, kept apart for the overlap"
    )]
    fn apply_routed<U, E>(
        &mut self,
        pool: &Pool,
        control: &Control,
        first_position: usize,
        updates: &[U],
        queues: &[Vec<usize>],
        target: &(impl Fn(&U) -> usize + Sync),
        apply: &(impl Fn(&mut S, &U) -> Result<(), E> + Sync),
    ) -> Result<(), Error<E>>
    where
        U: Sync,
        E: Send,
    {
        let owners = self.owners();
        let hot_ids: Vec<usize> = self.hot.iter().map(|h| h.id).collect();
        // Owner w's partials of every hot target, in hot order.
        let mut hot_partials: Vec<Vec<&mut S>> = (0..owners).map(|_| Vec::new()).collect();
        for hot in &mut self.hot {
            for (w, partial) in hot.partials.iter_mut().enumerate() {
                hot_partials[w].push(partial);
            }
        }
        let tasks: Vec<_> = self
            .parts
            .iter_mut()
            .zip(queues)
            .zip(hot_partials)
            .map(|((part, queue), partials)| {
                let start = queue.first().map_or(usize::MAX, |i| first_position + i);
                (start, (part, queue, partials))
            })
            .collect();
        pool.run(control, tasks, |check, _, (part, queue, mut partials)| {
            for (n, &index) in queue.iter().enumerate() {
                let position = first_position + index;
                if n % OWNER_STRIDE == 0 {
                    if n > 0 {
                        check.advance(OWNER_STRIDE as u64);
                    }
                    if check.should_stop_at(position) {
                        return Ok(());
                    }
                }
                let update = &updates[index];
                check.at(position);
                let id = target(update);
                let slot = match hot_ids.binary_search(&id) {
                    Ok(h) => &mut *partials[h],
                    Err(_) => &mut part[id / owners],
                };
                apply(slot, update).map_err(|source| Error::Task { position, source })?;
            }
            check.advance((queue.len() % OWNER_STRIDE) as u64);
            Ok(())
        })?;
        Ok(())
    }

    /// Folds every hot target's partials into it, in owner order.
    fn fold_hot(&mut self) {
        let owners = self.owners();
        let Some(combine) = &self.combine else {
            return;
        };
        for hot in &mut self.hot {
            let target = &mut self.parts[hot.id % owners][hot.id / owners];
            for partial in &mut hot.partials {
                combine(target, partial);
            }
        }
    }

    /// Applies a stream of updates in batches of at most `batch` updates (0 counts as 1): while
    /// the owners apply one batch, the calling thread reads the next (double buffering, as the
    /// chunk pipeline does). Returns the number of updates applied. Progress and hot targets as
    /// in [`apply`](Self::apply).
    ///
    /// # Errors
    /// As [`apply`](Self::apply), plus the stream's own errors at their positions (after the
    /// updates before them are applied).
    pub fn apply_stream<U, E>(
        &mut self,
        pool: &Pool,
        control: &Control,
        updates: impl IntoIterator<Item = Result<U, E>>,
        batch: usize,
        target: impl Fn(&U) -> usize + Sync,
        apply: impl Fn(&mut S, &U) -> Result<(), E> + Sync,
    ) -> Result<u64, OwnedError<E>>
    where
        U: Send + Sync,
        E: Send,
    {
        let batch = batch.max(1);
        let router = self.router();
        let mut updates = updates.into_iter();
        let (mut current, mut next) = (Vec::with_capacity(batch), Vec::with_capacity(batch));
        let mut queues = std::mem::take(&mut self.queues);
        let mut next_queues = vec![Vec::new(); self.owners()];
        let mut applied = 0usize;
        let mut read_error = read_batch(&mut updates, &mut current, batch, applied);
        let mut stopped = router.route(applied, &current, &target, &mut queues);
        loop {
            if current.is_empty() {
                self.queues = queues;
                return read_error.or(stopped).map_or(Ok(applied as u64), Err);
            }
            if control.is_cancelled() {
                return Err(Error::Cancelled.into());
            }
            let next_position = applied + current.len();
            let ended = stopped.is_some() || read_error.is_some();
            let owned: &mut Self = self;
            // The owners apply this batch while the caller reads and routes the next.
            let (done, (fetched, next_stopped)) = pool.overlap(
                || owned.apply_routed(pool, control, applied, &current, &queues, &target, &apply),
                || {
                    next.clear();
                    if ended {
                        return (None, None);
                    }
                    let fetched = read_batch(&mut updates, &mut next, batch, next_position);
                    let routed = router.route(next_position, &next, &target, &mut next_queues);
                    (fetched, routed)
                },
            );
            done?;
            self.fold_hot();
            if let Some(failure) = stopped {
                return Err(failure);
            }
            applied = next_position;
            if let Some(error) = read_error {
                return Err(error);
            }
            read_error = fetched;
            stopped = next_stopped;
            std::mem::swap(&mut current, &mut next);
            std::mem::swap(&mut queues, &mut next_queues);
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

/// Where a batch's updates go: owner `id % owners`, or, for a hot target, owner `index % owners`.
struct Router {
    len: usize,
    owners: usize,
    /// Hot target ids, ascending.
    hot: Vec<usize>,
}

impl Router {
    /// Routes `updates` (at positions from `first_position`) into `queues` (cleared first), as
    /// batch indexes per owner in input order; returns the failure that ends the batch early, if
    /// any: an update naming a missing target (or whose `target` panics). The updates before it
    /// are still routed, to be applied as the serial loop would.
    fn route<U, E>(
        &self,
        first_position: usize,
        updates: &[U],
        target: &(impl Fn(&U) -> usize + Sync),
        queues: &mut [Vec<usize>],
    ) -> Option<OwnedError<E>> {
        queues.iter_mut().for_each(Vec::clear);
        for (index, update) in updates.iter().enumerate() {
            let position = first_position + index;
            let id = match catch_unwind(AssertUnwindSafe(|| target(update))) {
                Ok(id) => id,
                Err(payload) => {
                    return Some(OwnedError::Run(Error::Panic {
                        position,
                        message: panic_message(payload.as_ref()),
                    }));
                }
            };
            if id >= self.len {
                return Some(OwnedError::TargetOutOfRange {
                    position,
                    target: id,
                    targets: self.len,
                });
            }
            let owner = if self.hot.binary_search(&id).is_ok() {
                index % self.owners
            } else {
                id % self.owners
            };
            queues[owner].push(index);
        }
        None
    }
}

/// Reads up to `batch` updates into the empty `buffer`; returns the stream's error, if any,
/// positioned after the updates read before it (which stay in `buffer`).
fn read_batch<U, E>(
    updates: &mut impl Iterator<Item = Result<U, E>>,
    buffer: &mut Vec<U>,
    batch: usize,
    position: usize,
) -> Option<OwnedError<E>> {
    for update in updates.by_ref().take(batch) {
        match update {
            Ok(u) => buffer.push(u),
            Err(source) => {
                return Some(OwnedError::Run(Error::Task {
                    position: position + buffer.len(),
                    source,
                }));
            }
        }
    }
    None
}
