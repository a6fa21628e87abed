//! The core under every primitive: tasks run on the pool (or inline), failures decided by the
//! lowest-position rule, panics caught, stop checks, progress summed per task, heartbeats for
//! the watchdog.

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::error::panic_message;
use crate::watchdog::{Liveness, Watchdog};
use crate::{Control, Error, Pool};

/// The shortest interval between two reports of one task to the progress sink: a task's
/// progress is summed locally and handed over at most this often (and at its end), so a
/// trivial kernel calls the sink tens of times a second, not hundreds of thousands.
const FLUSH_INTERVAL: Duration = Duration::from_millis(20);

/// The most reports between two clock reads: reads are adapted to about one a millisecond, and
/// capped so that reports that suddenly slow down are timed again within a few of them.
const MAX_CLOCK_EVERY: u32 = 32;

/// Reports summed between two hand-overs to the sink where there is no clock (a current-thread
/// pool).
const UNCLOCKED_FLUSH_EVERY: u32 = 32;

thread_local! {
    /// The watched tasks this thread is running, innermost last: a run started inside a task
    /// beats its ancestors' hearts too, so that a task waiting for a nested run is never taken
    /// for silent.
    static RUNNING: RefCell<Vec<(Arc<Liveness>, usize)>> = const { RefCell::new(Vec::new()) };
}

/// A task's view of its run: whether it should stop early, where it is, how far it got.
///
/// A task that sees [`should_stop`](Self::should_stop) may return anything: its result is never
/// observed, because the run will fail (or report cancellation) as a whole.
pub struct Check<'a> {
    start: usize,
    task: usize,
    /// The position the task is working on, for its panic's or error's report.
    current: Cell<usize>,
    /// Items done since the last hand-over to the sink.
    pending: Cell<u64>,
    /// Items reported in the current unit (block or range), for the primitive's top-up.
    reported: Cell<u64>,
    /// The clock is read every `clock_every` reports (adapted to about one read a
    /// millisecond), so that reports of microsecond blocks cost no clock each.
    clock_every: Cell<u32>,
    since_clock: Cell<u32>,
    last_clock: Cell<Option<Instant>>,
    last_flush: Cell<Option<Instant>>,
    run: &'a RunState<'a>,
}

impl std::fmt::Debug for Check<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check")
            .field("start", &self.start)
            .field("current", &self.current.get())
            .finish_non_exhaustive()
    }
}

/// One run's shared state.
pub(crate) struct RunState<'a> {
    control: &'a Control,
    /// Lowest input position known to have failed; `usize::MAX` while none has.
    first_failed: AtomicUsize,
    /// The watchdog's view, when the run is watched.
    liveness: Option<Arc<Liveness>>,
    /// The watched tasks this run was started from (their hearts beat with this run's).
    ancestors: Vec<(Arc<Liveness>, usize)>,
    /// Whether a clock may be read (not in current-thread mode: wasm has none).
    clocked: bool,
}

impl Check<'_> {
    /// True once the run is cancelled, stalled, or a failure is known at a position before this
    /// task's first position. Costs a few relaxed atomic loads: cheap enough per item.
    pub fn should_stop(&self) -> bool {
        self.should_stop_at(self.start)
    }

    /// True once the run is cancelled, stalled, or a failure is known at a position before
    /// `position`: for tasks whose items are not contiguous (owner partitioning).
    pub fn should_stop_at(&self, position: usize) -> bool {
        self.run.first_failed.load(Ordering::Relaxed) < position
            || self.run.control.is_cancelled()
            || self.run.liveness.as_ref().is_some_and(|l| l.stopped())
    }

    /// Records that the task now works at input `position`: a panic, or an error the task
    /// returns, is reported there from now on (until the next call). Primitives that own the
    /// item loop call it themselves.
    pub fn at(&self, position: usize) {
        self.current.set(position);
    }

    /// The position the task last said it works at (its first position until it says).
    pub fn position(&self) -> usize {
        self.current.get()
    }

    /// Records `items` more items done: the run's progress sink hears of them (summed, at most
    /// every 20 ms per task, and at the task's end), and the watchdog sees the task alive. A
    /// task that runs for seconds should call it as it goes; the primitives do for the work
    /// they drive (per block, range, chunk or batch), minus what the task reported itself.
    ///
    /// A task that starts runs of its own on the same [`Control`] must not also report their
    /// items (they report them themselves): give them [`Control::nested`] to report nothing,
    /// or report nothing in the task.
    pub fn advance(&self, items: u64) {
        self.pending.set(self.pending.get() + items);
        self.reported.set(self.reported.get() + items);
        if let Some(liveness) = &self.run.liveness {
            liveness.alive(self.task);
        }
        for (liveness, task) in &self.run.ancestors {
            liveness.alive(*task);
        }
        let since = self.since_clock.get() + 1;
        if since < self.clock_every.get() {
            self.since_clock.set(since);
            return;
        }
        self.since_clock.set(0);
        if !self.run.clocked {
            self.clock_every.set(UNCLOCKED_FLUSH_EVERY);
            self.flush();
            return;
        }
        let now = Instant::now();
        if let Some(previous) = self.last_clock.get() {
            // Aim at one read a millisecond: reports of microsecond blocks read it rarely,
            // reports of slow work every time.
            let per_report = now.duration_since(previous) / self.clock_every.get().max(1);
            if let Some(liveness) = &self.run.liveness {
                liveness.gap(self.task, per_report);
            }
            let every = Duration::from_millis(1).as_nanos() / per_report.as_nanos().max(1);
            self.clock_every.set(
                u32::try_from(every)
                    .unwrap_or(MAX_CLOCK_EVERY)
                    .clamp(1, MAX_CLOCK_EVERY),
            );
        }
        self.last_clock.set(Some(now));
        match self.last_flush.get() {
            Some(last) if now.duration_since(last) < FLUSH_INTERVAL => {}
            _ => {
                self.flush();
                self.last_flush.set(Some(now));
            }
        }
    }

    /// Tops the current unit's progress up to `len` items (what the task did not report itself)
    /// and starts a new unit.
    pub(crate) fn finish_unit(&self, len: usize) {
        let missing = (len as u64).saturating_sub(self.reported.get());
        if missing > 0 {
            self.advance(missing);
        }
        self.reported.set(0);
    }

    fn flush(&self) {
        let pending = self.pending.replace(0);
        if pending > 0 {
            self.run.control.progress().advance(pending);
        }
    }
}

impl Pool {
    /// The core: runs `tasks` (each `(first position, input)`) and returns their results in
    /// order, or the run's failure: cancellation first, then the failure at the lowest position
    /// (tasks report theirs exactly), then a failure without a position (a nested run's stall),
    /// then this run's stall.
    ///
    /// Tasks run inline on the calling thread, in order, when the pool has no threads or a
    /// budget of one worker (identical results; no hand-over to a thread); otherwise on the
    /// pool's threads. Inline, a task whose first position is past a known failure is skipped,
    /// exactly as a parallel run would tell it to stop; positions need not increase along the
    /// tasks (owner partitioning interleaves them).
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
        self.run_watched(control, tasks, true, task)
    }

    /// [`run`](Self::run), with the watchdog on the tasks or not: tasks that only wait for runs
    /// of their own (budgeted branches), which are watched themselves, are not.
    pub(crate) fn run_watched<X, T, E>(
        &self,
        control: &Control,
        tasks: Vec<(usize, X)>,
        watched: bool,
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
        let liveness = match (self.threads(), control.watchdog()) {
            (Some(threads), watchdog)
                if watched && watchdog != Watchdog::Off && !tasks.is_empty() =>
            {
                let liveness = Arc::new(Liveness::new(watchdog, tasks.iter().map(|(p, _)| *p)));
                threads.monitor.watch(&liveness);
                Some(liveness)
            }
            _ => None,
        };
        let state = RunState {
            control,
            first_failed: AtomicUsize::new(usize::MAX),
            liveness,
            ancestors: RUNNING.with(|running| running.borrow().clone()),
            clocked: self.threads().is_some(),
        };
        let one = |(index, (position, input)): (usize, (usize, X))| {
            run_task(&state, index, position, input, &task)
        };
        let results: Vec<Option<Result<T, Error<E>>>> = match self.threads() {
            Some(threads) if self.workers() > 1 && tasks.len() > 1 => {
                let mut results = Vec::with_capacity(tasks.len());
                threads.rayon.install(|| {
                    tasks
                        .into_par_iter()
                        .enumerate()
                        .with_max_len(1)
                        .map(one)
                        .collect_into_vec(&mut results);
                });
                results
            }
            _ => tasks.into_iter().enumerate().map(one).collect(),
        };
        if control.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let mut values = Vec::with_capacity(results.len());
        let mut positioned: Option<Error<E>> = None;
        let mut unpositioned: Option<Error<E>> = None;
        let mut skipped = false;
        for result in results {
            match result {
                Some(Ok(value)) => values.push(value),
                Some(Err(error)) => match error.position() {
                    Some(at) => {
                        if positioned
                            .as_ref()
                            .is_none_or(|f| f.position().is_some_and(|p| at < p))
                        {
                            positioned = Some(error);
                        }
                    }
                    None => {
                        unpositioned.get_or_insert(error);
                    }
                },
                None => skipped = true,
            }
        }
        if let Some(failure) = positioned.or(unpositioned) {
            return Err(failure);
        }
        if let Some(stall) = state.liveness.as_ref().and_then(|l| l.stall()) {
            return Err(Error::Stalled {
                position: stall.position,
                task: stall.task,
                silent: stall.silent,
                timeout: stall.timeout,
            });
        }
        // A task is skipped only after a failure (returned above), a cancellation (which stays)
        // or a stall (recorded before the stop).
        assert!(
            !skipped,
            "invariant: a task is skipped only after a failure, a cancellation or a stall"
        );
        Ok(values)
    }
}

/// Runs one task (`None`: skipped, because the run should already stop), its panic (its
/// progress sink's included) caught at the position it last reported, its progress flushed,
/// its heartbeat slot opened and closed.
fn run_task<X, T, E>(
    state: &RunState<'_>,
    index: usize,
    position: usize,
    input: X,
    task: &(impl Fn(&Check<'_>, usize, X) -> Result<T, Error<E>> + Sync),
) -> Option<Result<T, Error<E>>> {
    let check = Check {
        start: position,
        task: index,
        current: Cell::new(position),
        pending: Cell::new(0),
        reported: Cell::new(0),
        clock_every: Cell::new(1),
        since_clock: Cell::new(0),
        last_clock: Cell::new(state.clocked.then(Instant::now)),
        last_flush: Cell::new(None),
        run: state,
    };
    if check.should_stop() {
        return None;
    }
    if let Some(liveness) = &state.liveness {
        liveness.begin(index);
        RUNNING.with(|running| running.borrow_mut().push((Arc::clone(liveness), index)));
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let outcome = task(&check, position, input);
        check.flush();
        outcome
    }))
    .unwrap_or_else(|payload| {
        Err(Error::Panic {
            position: check.current.get(),
            message: panic_message(payload.as_ref()),
        })
    });
    if let Some(liveness) = &state.liveness {
        RUNNING.with(|running| running.borrow_mut().pop());
        liveness.end(index);
    }
    if let Err(failure) = &outcome {
        let at = failure.position().unwrap_or(usize::MAX);
        state.first_failed.fetch_min(at, Ordering::Relaxed);
    }
    Some(outcome)
}
