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
/// `max(2 minutes, 50 x the longest gap between two reports of any task so far)` stalls it.
/// Measured gaps (`cargo bench -p lockstep-shard --bench runtime`, see the README): the
/// primitives report about every 20 ms of work in each task, PSI's blocks of 64 points take
/// about 5 ms, the ceremony's 4,096-point chunks up to a second; two minutes of silence is far
/// outside all of them, and a run whose own reports are slow gets proportionally more.
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

/// A slot per task: when it last showed life, in nanoseconds since the run started.
struct Slot {
    position: usize,
    /// `NOT_RUNNING` before the task starts and after it ends.
    last: AtomicU64,
}

const NOT_RUNNING: u64 = u64::MAX;

/// One watched run: its tasks' last signs of life, and whether the monitor stopped it.
pub(crate) struct Liveness {
    start: Instant,
    watchdog: Watchdog,
    slots: Vec<Slot>,
    /// The longest gap between two signs of life of one task, in nanoseconds.
    longest_gap: AtomicU64,
    stop: AtomicBool,
    stall: Mutex<Option<Stall>>,
}

impl Liveness {
    pub(crate) fn new(watchdog: Watchdog, positions: impl Iterator<Item = usize>) -> Self {
        Self {
            start: Instant::now(),
            watchdog,
            slots: positions
                .map(|position| Slot {
                    position,
                    last: AtomicU64::new(NOT_RUNNING),
                })
                .collect(),
            longest_gap: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            stall: Mutex::new(None),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(NOT_RUNNING - 1)
    }

    /// Task `task` starts.
    pub(crate) fn begin(&self, task: usize) {
        self.slots[task].last.store(self.now(), Ordering::Relaxed);
    }

    /// Task `task` shows life (a progress report).
    pub(crate) fn alive(&self, task: usize) {
        let now = self.now();
        let previous = self.slots[task].last.swap(now, Ordering::Relaxed);
        if previous != NOT_RUNNING {
            self.longest_gap
                .fetch_max(now.saturating_sub(previous), Ordering::Relaxed);
        }
    }

    /// Task `task` ends.
    pub(crate) fn end(&self, task: usize) {
        self.slots[task].last.store(NOT_RUNNING, Ordering::Relaxed);
    }

    /// Whether the monitor has stopped the run.
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The stall that stopped the run, if one did.
    pub(crate) fn stall(&self) -> Option<Stall> {
        *self.stall.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The run's timeout now.
    fn timeout(&self) -> Option<Duration> {
        match self.watchdog {
            Watchdog::Off => None,
            Watchdog::After(timeout) => Some(timeout),
            Watchdog::Adaptive { floor, factor } => {
                let gap = Duration::from_nanos(self.longest_gap.load(Ordering::Relaxed));
                Some(floor.max(gap.saturating_mul(factor)))
            }
        }
    }

    /// Checks every running task; stops the run at the first one silent too long. Returns how
    /// soon to look again.
    fn inspect(&self) -> Duration {
        let Some(timeout) = self.timeout() else {
            return Duration::from_secs(3600);
        };
        let now = self.now();
        for (task, slot) in self.slots.iter().enumerate() {
            let last = slot.last.load(Ordering::Relaxed);
            if last == NOT_RUNNING {
                continue;
            }
            let silent = Duration::from_nanos(now.saturating_sub(last));
            if silent > timeout {
                let mut stall = self.stall.lock().unwrap_or_else(PoisonError::into_inner);
                if stall.is_none() {
                    *stall = Some(Stall {
                        task,
                        position: slot.position,
                        silent,
                        timeout,
                    });
                }
                self.stop.store(true, Ordering::Relaxed);
                break;
            }
        }
        (timeout / 4).clamp(Duration::from_millis(5), Duration::from_secs(1))
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
        self.shared.wake.notify_all();
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
        std::thread::sleep(Duration::from_millis(40));
        run.alive(1);
        run.begin(2);
        assert!(!run.stopped());
        std::thread::sleep(Duration::from_millis(40));
        run.alive(1);
        run.inspect();
        assert!(run.stopped());
        let stall = run.stall().unwrap();
        assert_eq!((stall.task, stall.position), (2, 20));
        assert!(stall.silent >= Duration::from_millis(40));
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
        std::thread::sleep(Duration::from_millis(20));
        run.alive(0);
        let timeout = run.timeout().unwrap();
        assert!(timeout >= Duration::from_millis(200), "{timeout:?}");
        assert_eq!(
            Liveness::new(Watchdog::Off, [0].into_iter()).timeout(),
            None
        );
    }
}
