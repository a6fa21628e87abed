//! Silence is caught: a run whose tasks report no progress for too long fails.
//!
//! Each pool with threads has one monitor thread, started by its first watched run. A run
//! registers its tasks' [`Liveness`]; every task's progress report stamps its slot; the monitor
//! wakes a few times per timeout and, when a running task has been silent longer than the run's
//! timeout, marks the run stalled and tells every task to stop. The run then fails with
//! [`Error::Stalled`](crate::Error::Stalled) naming the task, as soon as its tasks return: a
//! task that neither reports nor checks [`Check::should_stop`](crate::Check::should_stop)
//! cannot be stopped from outside its thread, so the error waits for it to return (the
//! supervising JavaScript pool terminates such a worker instead).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

/// When a run's silence becomes a failure.
///
/// The default, [`Watchdog::DEFAULT`], adapts to the run: a task silent for longer than
/// `max(2 minutes, 50 x the longest interval between two reports of any of its tasks so far)`
/// stalls it. The intervals are timed by the tasks themselves (averaged over the few reports
/// between two clock reads, about a millisecond apart) and include the wait for a task's first
/// report. The work the primitives drive reports per block or chunk: PSI's 64-point blocks take
/// ~5 ms, a trivial kernel's 4,096-item block under a microsecond, the ceremony's 4,096-point
/// chunks up to a second; two minutes is far beyond all of them, and a run whose reports are
/// naturally slow gets fifty times its slowest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watchdog {
    /// No watchdog: a silent task is waited for.
    Off,
    /// A task silent for longer than this fails the run.
    After(Duration),
    /// A task silent for longer than `max(floor, factor x the longest gap seen)` fails the run.
    Adaptive {
        /// The shortest timeout.
        floor: Duration,
        /// How many times the longest gap between reports seen so far a silence may last.
        factor: u32,
    },
}

impl Watchdog {
    /// Two minutes, or 50 times the longest gap seen.
    pub const DEFAULT: Self = Self::Adaptive {
        floor: Duration::from_secs(120),
        factor: 50,
    };
}

impl Default for Watchdog {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What a stalled run knows about its silent task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stall {
    /// The task's index among the run's tasks.
    pub(crate) task: usize,
    /// The task's first input position.
    pub(crate) position: usize,
    /// How long it had been silent.
    pub(crate) silent: Duration,
    /// The timeout it passed.
    pub(crate) timeout: Duration,
}

/// A slot per task: a heartbeat count the task bumps with each progress report, which the
/// monitor compares between patrols (tasks never read a clock for it). A cache line each, so
/// that tasks beating their own slots never contend.
#[repr(align(64))]
struct Slot {
    position: usize,
    running: AtomicBool,
    beats: AtomicU64,
    /// The longest interval between two reports the task timed, in nanoseconds.
    longest_gap: AtomicU64,
}

/// What the monitor last saw of a slot: its beat count and when that count last changed.
#[derive(Clone, Copy)]
struct Seen {
    beats: u64,
    since: Instant,
    running: bool,
}

/// One watched run: its tasks' heartbeats, and whether the monitor stopped it.
pub(crate) struct Liveness {
    watchdog: Watchdog,
    slots: Vec<Slot>,
    /// The monitor's own view of the slots.
    seen: Mutex<Vec<Option<Seen>>>,
    stop: AtomicBool,
    stall: Mutex<Option<Stall>>,
}

impl Liveness {
    pub(crate) fn new(watchdog: Watchdog, positions: impl Iterator<Item = usize>) -> Self {
        let slots: Vec<Slot> = positions
            .map(|position| Slot {
                position,
                running: AtomicBool::new(false),
                beats: AtomicU64::new(0),
                longest_gap: AtomicU64::new(0),
            })
            .collect();
        let seen = vec![None; slots.len()];
        Self {
            watchdog,
            slots,
            seen: Mutex::new(seen),
            stop: AtomicBool::new(false),
            stall: Mutex::new(None),
        }
    }

    /// Task `task` starts.
    pub(crate) fn begin(&self, task: usize) {
        let slot = &self.slots[task];
        slot.beats.fetch_add(1, Ordering::Relaxed);
        slot.running.store(true, Ordering::Relaxed);
    }

    /// Task `task` shows life (a progress report): one relaxed increment of its own line.
    pub(crate) fn alive(&self, task: usize) {
        self.slots[task].beats.fetch_add(1, Ordering::Relaxed);
    }

    /// Task `task` timed an interval of `gap` between its reports.
    pub(crate) fn gap(&self, task: usize, gap: Duration) {
        let gap = u64::try_from(gap.as_nanos()).unwrap_or(u64::MAX);
        let slot = &self.slots[task];
        if gap > slot.longest_gap.load(Ordering::Relaxed) {
            slot.longest_gap.fetch_max(gap, Ordering::Relaxed);
        }
    }

    /// The longest interval between reports any task timed.
    fn longest_gap(&self) -> Duration {
        Duration::from_nanos(
            self.slots
                .iter()
                .map(|s| s.longest_gap.load(Ordering::Relaxed))
                .max()
                .unwrap_or(0),
        )
    }

    /// Task `task` ends.
    pub(crate) fn end(&self, task: usize) {
        self.slots[task].running.store(false, Ordering::Relaxed);
    }

    /// Whether the monitor has stopped the run.
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The stall that stopped the run, if one did.
    pub(crate) fn stall(&self) -> Option<Stall> {
        *self.stall.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The run's timeout, given the longest gap seen so far.
    fn timeout(&self, longest_gap: Duration) -> Option<Duration> {
        match self.watchdog {
            Watchdog::Off => None,
            Watchdog::After(timeout) => Some(timeout),
            Watchdog::Adaptive { floor, factor } => {
                Some(floor.max(longest_gap.saturating_mul(factor)))
            }
        }
    }

    /// Compares every running task's heartbeat with the last patrol's; stops the run when the
    /// longest-silent task has been silent longer than the timeout. Returns how soon to look
    /// again.
    fn inspect(&self) -> Duration {
        let now = Instant::now();
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let mut silent_task: Option<(usize, Duration)> = None;
        for (task, (slot, seen)) in self.slots.iter().zip(seen.iter_mut()).enumerate() {
            let running = slot.running.load(Ordering::Relaxed);
            let beats = slot.beats.load(Ordering::Relaxed);
            match seen {
                Some(s) if s.beats == beats && s.running && running => {
                    let silent = now.duration_since(s.since);
                    if silent_task.is_none_or(|(_, longest)| silent > longest) {
                        silent_task = Some((task, silent));
                    }
                }
                _ => {
                    *seen = Some(Seen {
                        beats,
                        since: now,
                        running,
                    });
                }
            }
        }
        drop(seen);
        let timeout = self.timeout(self.longest_gap());
        if let (Some(timeout), Some((task, silent))) = (timeout, silent_task)
            && silent > timeout
        {
            let mut stall = self.stall.lock().unwrap_or_else(PoisonError::into_inner);
            stall.get_or_insert(Stall {
                task,
                position: self.slots[task].position,
                silent,
                timeout,
            });
            self.stop.store(true, Ordering::Relaxed);
        }
        self.period()
    }

    /// How often the run wants to be looked at: a quarter of its timeout, within 5 ms and 1 s.
    fn period(&self) -> Duration {
        self.timeout(self.longest_gap())
            .map_or(Duration::from_secs(3600), |timeout| {
                (timeout / 4).clamp(Duration::from_millis(5), Duration::from_secs(1))
            })
    }
}

/// A pool's monitor: the watched runs and the thread that inspects them.
#[derive(Default)]
pub(crate) struct Monitor {
    shared: Arc<MonitorShared>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

#[derive(Default)]
struct MonitorShared {
    runs: Mutex<MonitorState>,
    wake: Condvar,
}

#[derive(Default)]
struct MonitorState {
    runs: Vec<Weak<Liveness>>,
    closing: bool,
    /// How long the thread waits between patrols now; `None` while it waits for a run.
    period: Option<Duration>,
}

impl Monitor {
    /// Watches `run` until it is dropped (starting the thread on first use). If the thread
    /// cannot start, the run goes unwatched: the watchdog is a safety net, never a reason to
    /// fail a healthy run.
    pub(crate) fn watch(&self, run: &Arc<Liveness>) {
        {
            let mut thread = self.thread.lock().unwrap_or_else(PoisonError::into_inner);
            if thread.is_none() {
                let shared = Arc::clone(&self.shared);
                *thread = std::thread::Builder::new()
                    .name("lockstep-watchdog".to_owned())
                    .spawn(move || shared.patrol())
                    .ok();
            }
        }
        let mut state = self
            .shared
            .runs
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        state.runs.retain(|r| r.strong_count() > 0);
        state.runs.push(Arc::downgrade(run));
        // A thread already patrolling often enough for this run looks again within its period
        // anyway: waking it for every run would cost short runs more than their work.
        if state.period.is_none_or(|period| run.period() < period) {
            self.shared.wake.notify_all();
        }
    }
}

impl MonitorShared {
    fn patrol(&self) {
        let mut state = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if state.closing {
                return;
            }
            state.runs.retain(|r| r.strong_count() > 0);
            let next = state
                .runs
                .iter()
                .filter_map(Weak::upgrade)
                .map(|run| run.inspect())
                .min();
            state.period = next;
            state = match next {
                None => self
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(wait) => {
                    self.wake
                        .wait_timeout(state, wait)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.shared
            .runs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .closing = true;
        self.shared.wake.notify_all();
        if let Some(thread) = self
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_silent_running_task_is_named_and_a_finished_one_is_not() {
        let run = Liveness::new(
            Watchdog::After(Duration::from_millis(20)),
            [0, 10, 20].into_iter(),
        );
        run.begin(0);
        run.begin(1);
        run.end(0);
        run.begin(2);
        run.inspect();
        for _ in 0..6 {
            std::thread::sleep(Duration::from_millis(10));
            run.alive(1);
            run.inspect();
        }
        assert!(run.stopped());
        let stall = run.stall().unwrap();
        assert_eq!((stall.task, stall.position), (2, 20));
        assert!(stall.silent > Duration::from_millis(20));
    }

    #[test]
    fn the_longest_silent_task_is_named() {
        // Task 1 falls silent first; task 0, lower in order, is silent for less than the
        // timeout: the stall is task 1's, not masked by task 0.
        let run = Liveness::new(
            Watchdog::After(Duration::from_millis(30)),
            [0, 10].into_iter(),
        );
        run.begin(1);
        run.inspect();
        std::thread::sleep(Duration::from_millis(20));
        run.begin(0);
        run.inspect();
        std::thread::sleep(Duration::from_millis(20));
        run.inspect();
        assert_eq!(run.stall().map(|s| (s.task, s.position)), Some((1, 10)));
    }

    #[test]
    fn the_adaptive_timeout_grows_with_the_longest_gap() {
        let run = Liveness::new(
            Watchdog::Adaptive {
                floor: Duration::from_millis(1),
                factor: 10,
            },
            [0].into_iter(),
        );
        run.begin(0);
        run.gap(0, Duration::from_millis(20));
        run.gap(0, Duration::from_millis(5));
        assert_eq!(run.longest_gap(), Duration::from_millis(20));
        assert_eq!(
            run.timeout(run.longest_gap()),
            Some(Duration::from_millis(200))
        );
        assert_eq!(run.period(), Duration::from_millis(50));
        let off = Liveness::new(Watchdog::Off, [0].into_iter());
        assert_eq!(off.timeout(Duration::from_secs(1)), None);
    }
}
