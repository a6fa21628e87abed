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
/// `for u in updates { apply(&mut targets[target(u)], u)? }`, at every owner count and on every
/// pool, provided updates to *different* targets are independent (which owning each target
/// exclusively makes true): every target sees exactly its own updates, once each, in input order.
///
/// # Hot targets
/// A target most updates hit (R1CS's constant-one wire) serializes its owner: with two owners and
/// 70% of updates on one target, one owner does 85% of the work, and two workers are slower than
/// the serial loop (the crate's bench). [`with_hot`](Self::with_hot) spreads a hot target's
/// updates over every owner (by position), each into a partial of its own, folded into the
/// target in owner order at the end of every batch, failed ones included. That equals the serial
/// loop only when applying updates and combining partials are exact and order-free (sums of
/// integers or of group elements, never floating point): it is an opt-in for such targets.
///
/// # Memory
/// The targets (twice while [`new`](Self::new) moves a vector of them into the parts and while
/// [`into_vec`](Self::into_vec) moves them back; once with [`from_fn`](Self::from_fn) and
/// [`get`](Self::get)), one partial per owner per hot target, plus one routed entry (two words) per
/// update of a batch; [`apply_stream`](Self::apply_stream) holds two batches of updates and of
/// routes (the one applied and the one read meanwhile).
pub struct Owned<S> {
    /// `parts[w][j]` is target `j * owners + w`.
    parts: Vec<Vec<S>>,
    len: usize,
    /// Reused per-owner routes of a batch.
    routes: Vec<Vec<Route>>,
    /// Hot targets, ascending, with their partials per owner.
    hot: Vec<Hot<S>>,
    fold: Option<Fold<S>>,
}

/// How hot targets' partials start and fold into their target.
struct Fold<S> {
    empty: Box<Empty<S>>,
    combine: Box<Combine<S>>,
}

type Empty<S> = dyn Fn() -> S + Send + Sync;
type Combine<S> = dyn Fn(&mut S, S) + Send + Sync;

#[derive(Debug)]
struct Hot<S> {
    id: usize,
    partials: Vec<S>,
}

/// One update routed to its owner: its index in the batch and where it goes.
#[derive(Clone, Copy, Debug)]
struct Route {
    index: usize,
    to: Slot,
}

/// Where an owner applies an update.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// The owner's own target at this index of its part.
    Own(usize),
    /// The owner's partial of this hot target (an index into the hot list).
    Hot(usize),
}

impl<S: std::fmt::Debug> std::fmt::Debug for Owned<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Owned")
            .field("parts", &self.parts)
            .field("hot", &self.hot)
            .finish_non_exhaustive()
    }
}

impl<S: Send> Owned<S> {
    /// Partitions `targets` among `owners` owners (0 counts as 1). Use the pool's worker count
    /// for full parallelism; any count gives the same result.
    pub fn new(targets: Vec<S>, owners: usize) -> Self {
        let owners = owners.max(1);
        let len = targets.len();
        let mut parts: Vec<Vec<S>> = (0..owners)
            .map(|w| Vec::with_capacity(len.saturating_sub(w).div_ceil(owners)))
            .collect();
        for (id, target) in targets.into_iter().enumerate() {
            parts[id % owners].push(target);
        }
        Self::from_parts(parts, len)
    }

    /// Owners' parts (`parts[w][j]` is target `j * owners + w`) of `len` targets, no hot ones.
    fn from_parts(parts: Vec<Vec<S>>, len: usize) -> Self {
        let owners = parts.len();
        Self {
            parts,
            len,
            routes: vec![Vec::new(); owners],
            hot: Vec::new(),
            fold: None,
        }
    }

    /// [`new`](Self::new) with target `id` made by `make(id)` in its owner's part: no vector of
    /// all the targets exists beside the parts (for large targets, half the peak memory).
    ///
    /// # Errors
    /// [`AllocError`](crate::memory::AllocError) if a part cannot be allocated (nothing of
    /// `make` runs for that part or later ones).
    pub fn from_fn(
        len: usize,
        owners: usize,
        mut make: impl FnMut(usize) -> S,
    ) -> Result<Self, crate::memory::AllocError> {
        let owners = owners.max(1);
        let mut parts: Vec<Vec<S>> = crate::memory::try_with_capacity(owners)?;
        for w in 0..owners {
            let mut part =
                crate::memory::try_with_capacity(len.saturating_sub(w).div_ceil(owners))?;
            part.extend((w..len).step_by(owners).map(&mut make));
            parts.push(part);
        }
        Ok(Self::from_parts(parts, len))
    }

    /// Declares `ids` hot (see the type's documentation): each owner applies its share of their
    /// updates (round robin by position) to a partial made by `empty`, and after every batch
    /// `combine(target, partial)` folds the partials into the target in owner order, each
    /// partial then starting again from `empty()`. Ids outside the targets are ignored.
    pub fn with_hot(
        mut self,
        ids: &[usize],
        empty: impl Fn() -> S + Send + Sync + 'static,
        combine: impl Fn(&mut S, S) + Send + Sync + 'static,
    ) -> Self {
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
        self.fold = Some(Fold {
            empty: Box::new(empty),
            combine: Box::new(combine),
        });
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
    /// are folded in at the end, even after a failure (see [`with_hot`](Self::with_hot)).
    ///
    /// Progress: every update applied, reported every 64 updates of an owner.
    ///
    /// # Errors
    /// The failure (error or panic of `target` or `apply`, or
    /// [`OwnedError::TargetOutOfRange`]) at the lowest input position, as the serial loop would
    /// meet it: updates before it are applied, those after it may or may not be. A panic of a
    /// hot target's `empty` or `combine` is a failure at the batch's first position.
    /// Cancellation and stalls.
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
        let router = self.router();
        let mut routes = std::mem::take(&mut self.routes);
        let stopped = router.route(first_position, updates, &target, &mut routes);
        let applied = self.apply_routed(pool, control, first_position, updates, &routes, &apply);
        self.routes = routes;
        finish_batch(applied, self.fold_hot(first_position), stopped)
    }

    /// What routing a batch needs to know: the targets, owners and hot ids.
    fn router(&self) -> Router {
        Router {
            len: self.len,
            owners: self.owners(),
            hot: self.hot.iter().map(|h| h.id).collect(),
        }
    }

    /// Applies a routed batch (`routes[w]`: owner `w`'s updates), the owners in parallel.
    fn apply_routed<U, E>(
        &mut self,
        pool: &Pool,
        control: &Control,
        first_position: usize,
        updates: &[U],
        routes: &[Vec<Route>],
        apply: &(impl Fn(&mut S, &U) -> Result<(), E> + Sync),
    ) -> Result<(), Error<E>>
    where
        U: Sync,
        E: Send,
    {
        let owners = self.owners();
        // Owner w's partials of every hot target, in hot order.
        let mut hot_partials: Vec<Vec<&mut S>> = (0..owners).map(|_| Vec::new()).collect();
        for hot in &mut self.hot {
            for (w, partial) in hot.partials.iter_mut().enumerate() {
                hot_partials[w].push(partial);
            }
        }
        // Owners' first positions interleave; the run core handles any order.
        let tasks: Vec<_> = self
            .parts
            .iter_mut()
            .zip(routes)
            .zip(hot_partials)
            .map(|((part, routes), partials)| {
                let start = routes
                    .first()
                    .map_or(usize::MAX, |r| first_position + r.index);
                (start, (part, routes, partials))
            })
            .collect();
        pool.run(control, tasks, |check, _, (part, routes, mut partials)| {
            for (n, route) in routes.iter().enumerate() {
                let position = first_position + route.index;
                if n % OWNER_STRIDE == 0 {
                    if n > 0 {
                        check.advance(OWNER_STRIDE as u64);
                    }
                    if check.should_stop_at(position) {
                        return Ok(());
                    }
                }
                check.at(position);
                let slot = match route.to {
                    Slot::Own(j) => &mut part[j],
                    Slot::Hot(h) => &mut *partials[h],
                };
                apply(slot, &updates[route.index])
                    .map_err(|source| Error::Task { position, source })?;
            }
            // The updates since the last report: a full stride when the queue's length is a
            // multiple of it.
            let last = routes.len().saturating_sub(1) / OWNER_STRIDE * OWNER_STRIDE;
            check.advance((routes.len() - last) as u64);
            Ok(())
        })?;
        Ok(())
    }

    /// Folds every hot target's partials into it, in owner order, each partial starting again
    /// from empty; a panic of `empty` or `combine` is a failure at `first_position`.
    fn fold_hot<E>(&mut self, first_position: usize) -> Result<(), Error<E>> {
        let Some(fold) = &self.fold else {
            return Ok(());
        };
        let owners = self.parts.len();
        let (parts, hot) = (&mut self.parts, &mut self.hot);
        catch_unwind(AssertUnwindSafe(|| {
            for hot in hot.iter_mut() {
                let target = &mut parts[hot.id % owners][hot.id / owners];
                for partial in &mut hot.partials {
                    let partial = std::mem::replace(partial, (fold.empty)());
                    (fold.combine)(target, partial);
                }
            }
        }))
        .map_err(|payload| Error::Panic {
            position: first_position,
            message: panic_message(payload.as_ref()),
        })
    }

    /// Applies a stream of updates in batches of at most `batch` updates (0 counts as 1): while
    /// the owners apply one batch, the calling thread reads and routes the next (double
    /// buffering, as the chunk pipeline does). Returns the number of updates applied. Progress
    /// and hot targets as in [`apply`](Self::apply).
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
        let mut routes = std::mem::take(&mut self.routes);
        let mut next_routes = vec![Vec::new(); self.owners()];
        let mut applied = 0usize;
        let mut read_error = read_batch(&mut updates, &mut current, batch, applied);
        let mut stopped = router.route(applied, &current, &target, &mut routes);
        loop {
            if current.is_empty() {
                self.routes = routes;
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
                || owned.apply_routed(pool, control, applied, &current, &routes, &apply),
                || {
                    next.clear();
                    if ended {
                        return (None, None);
                    }
                    let fetched = read_batch(&mut updates, &mut next, batch, next_position);
                    let routed = router.route(next_position, &next, &target, &mut next_routes);
                    (fetched, routed)
                },
            );
            let folded = self.fold_hot(applied);
            finish_batch(done, folded, stopped)?;
            applied = next_position;
            if let Some(error) = read_error {
                return Err(error);
            }
            read_error = fetched;
            stopped = next_stopped;
            std::mem::swap(&mut current, &mut next);
            std::mem::swap(&mut routes, &mut next_routes);
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

/// A batch's outcome: the apply's failure (the lowest position, the batch's routing stop
/// coming after every update it let through), else the fold's, else the routing stop.
fn finish_batch<E>(
    applied: Result<(), Error<E>>,
    folded: Result<(), Error<E>>,
    stopped: Option<OwnedError<E>>,
) -> Result<(), OwnedError<E>> {
    applied?;
    folded?;
    stopped.map_or(Ok(()), Err)
}

/// Where a batch's updates go: owner `id % owners`, or, for a hot target, owner `index % owners`.
struct Router {
    len: usize,
    owners: usize,
    /// Hot target ids, ascending.
    hot: Vec<usize>,
}

impl Router {
    /// Routes `updates` (at positions from `first_position`) into `routes` (cleared first), per
    /// owner in input order; returns the failure that ends the batch early, if any: an update
    /// naming a missing target (or whose `target` panics). The updates before it are still
    /// routed, to be applied as the serial loop would.
    fn route<U, E>(
        &self,
        first_position: usize,
        updates: &[U],
        target: &(impl Fn(&U) -> usize + Sync),
        routes: &mut [Vec<Route>],
    ) -> Option<OwnedError<E>> {
        routes.iter_mut().for_each(Vec::clear);
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
            let (owner, to) = match self.hot.binary_search(&id) {
                Ok(h) => (index % self.owners, Slot::Hot(h)),
                Err(_) => (id % self.owners, Slot::Own(id / self.owners)),
            };
            routes[owner].push(Route { index, to });
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
