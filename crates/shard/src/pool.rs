//! A pool of exactly `W` worker threads, or none (current-thread), and what runs on it.

use std::sync::Arc;

use crate::watchdog::Monitor;
use crate::{PoolError, placement};

/// A pool of exactly [`workers`](Self::workers) threads, owned by the caller (never rayon's global
/// pool), or a current-thread pool that runs everything inline; and the ordered, fail-as-a-whole
/// operations that run on it.
///
/// # Determinism
/// Every operation returns results in input order, whatever order workers finish in, and fails
/// with the error at the lowest input position (see [`Error`](crate::Error)). Nothing a worker
/// computes depends on which worker runs it, so a current-thread pool gives the same results as
/// any pool.
///
/// # Failure
/// A task that returns an error or panics fails the whole call. Tasks after the lowest failure
/// seen so far are told to stop (their [`Check::should_stop`](crate::Check::should_stop) turns
/// true); tasks before it keep running, because one of them may hold an earlier error, which must
/// win. Panics are caught on the worker and become [`Error::Panic`](crate::Error::Panic) at the
/// position the task last reported (exact items in item-wise operations). A task silent for
/// longer than the [`Watchdog`](crate::Watchdog) allows stops the run with
/// [`Error::Stalled`](crate::Error::Stalled).
#[derive(Debug)]
pub struct Pool {
    threads: Option<Arc<Threads>>,
    workers: usize,
}

/// The threads of a pool and their watchdog, shared by its budgeted views.
pub(crate) struct Threads {
    pub(crate) rayon: rayon::ThreadPool,
    pub(crate) monitor: Monitor,
}

impl std::fmt::Debug for Threads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Threads")
            .field("threads", &self.rayon.current_num_threads())
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// Starts a pool of exactly `workers` threads (0 counts as 1).
    ///
    /// On Linux, a pool of two threads or more whose process may run on at least as many CPUs
    /// pins each thread to a CPU of its own (the pools of a process take turns at the first),
    /// so that its workers never share a CPU while another sits idle; `LOCKSTEP_PIN=0`
    /// ([`PIN_ENV`](crate::PIN_ENV)) leaves them to the kernel. The calling thread is never
    /// pinned.
    ///
    /// # Errors
    /// [`PoolError::Spawn`] if the operating system refuses the threads.
    pub fn new(workers: usize) -> Result<Self, PoolError> {
        let workers = workers.max(1);
        let cpus = placement::for_pool(workers);
        let rayon = rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .thread_name(|i| format!("lockstep-worker-{i}"))
            .start_handler(move |i| {
                if let Some(&cpu) = cpus.as_ref().and_then(|cpus| cpus.get(i)) {
                    placement::pin_current_thread(cpu);
                }
            })
            .build()
            .map_err(|cause| PoolError::Spawn { workers, cause })?;
        Ok(Self {
            threads: Some(Arc::new(Threads {
                rayon,
                monitor: Monitor::default(),
            })),
            workers,
        })
    }

    /// A pool without threads: every operation runs inline on the calling thread, in input
    /// order, with the results, errors, progress and cancellation of any other pool. For
    /// targets without threads (wasm) and synchronous callers. It has no watchdog (nothing
    /// could run beside a silent task) and reads no clock.
    pub fn current_thread() -> Self {
        Self {
            threads: None,
            workers: 1,
        }
    }

    /// The number of workers work is split for: the pool's threads, or a budgeted view's share
    /// of them; 1 for a current-thread pool.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Whether this pool runs everything on the calling thread.
    pub fn is_current_thread(&self) -> bool {
        self.threads.is_none()
    }

    pub(crate) fn threads(&self) -> Option<&Threads> {
        self.threads.as_deref()
    }

    /// A view of the same threads that splits work for `workers` workers (at least 1): what a
    /// branch of a budgeted fork-join runs its own operations on.
    pub(crate) fn with_budget(&self, workers: usize) -> Self {
        Self {
            threads: self.threads.clone(),
            workers: workers.max(1),
        }
    }

    /// Runs `on_workers` on the pool while `on_caller` runs on the calling thread, and returns
    /// both results: the overlap of the chunk pipeline and of owner partitioning. Without
    /// threads, or with one worker, runs `on_workers` then `on_caller` on the calling thread:
    /// one worker's runs are inline anyway (see `run`), and handing each chunk to a thread and
    /// back cost about 0.1 ms a chunk (a one-worker run is then one thread, as asked).
    pub(crate) fn overlap<A: Send, B>(
        &self,
        on_workers: impl FnOnce() -> A + Send,
        on_caller: impl FnOnce() -> B,
    ) -> (A, B) {
        match self.threads() {
            Some(threads) if self.workers > 1 => {
                let mut a = None;
                let b = threads.rayon.in_place_scope(|scope| {
                    scope.spawn(|_| a = Some(on_workers()));
                    on_caller()
                });
                (
                    a.expect("invariant: the scope ran its spawned job before returning"),
                    b,
                )
            }
            _ => {
                let a = on_workers();
                (a, on_caller())
            }
        }
    }
}
