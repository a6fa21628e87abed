//! Progress reporting.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

/// One progress report: how many items are done and, when known, how many there are in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Report {
    /// Items finished so far in the current step. Never decreases between two reports of a step.
    pub done: u64,
    /// Items in the current step, when known before the end (a stream may not know it).
    pub total: Option<u64>,
}

type Callback = dyn FnMut(Report) + Send;

struct State {
    done: u64,
    total: Option<u64>,
    callback: Box<Callback>,
}

/// A progress sink shared by every worker of a run.
///
/// The runtime calls [`advance`](Self::advance) as work completes, never per item: each task of
/// a run sums what it did (per block, range, chunk, batch of 64 updates, or what the task
/// reports through [`Check::advance`](crate::Check::advance)) and hands the sum over at most
/// every 20 ms and at its end, so a trivial kernel over millions of items calls the callback a
/// few dozen times a second (a current-thread pool, which reads no clock, hands over every 32
/// reports). Reports are serialized: the callback is never called concurrently and sees `done` increase monotonically.
///
/// A [`Progress::none`] sink costs one branch per report.
#[derive(Clone, Default)]
pub struct Progress(Option<Arc<Mutex<State>>>);

impl Progress {
    /// A sink that discards reports.
    pub fn none() -> Self {
        Self(None)
    }

    /// A sink that calls `callback` with every report. The callback must be quick (it runs while
    /// a worker waits) and must not call back into this sink.
    pub fn new(callback: impl FnMut(Report) + Send + 'static) -> Self {
        Self(Some(Arc::new(Mutex::new(State {
            done: 0,
            total: None,
            callback: Box::new(callback),
        }))))
    }

    /// Starts a step of `total` items (`None` when unknown), resetting `done` to zero, and reports it.
    pub fn start(&self, total: Option<u64>) {
        self.with(|state| {
            state.done = 0;
            state.total = total;
        });
    }

    /// Records `items` more items as done and reports the new count.
    pub fn advance(&self, items: u64) {
        self.with(|state| state.done = state.done.saturating_add(items));
    }

    /// The latest report, or `None` for a discarding sink.
    pub fn snapshot(&self) -> Option<Report> {
        let shared = self.0.as_ref()?;
        let state = shared.lock().unwrap_or_else(PoisonError::into_inner);
        Some(Report {
            done: state.done,
            total: state.total,
        })
    }

    fn with(&self, update: impl FnOnce(&mut State)) {
        let Some(shared) = &self.0 else { return };
        // A callback that panicked poisons the lock; progress is advisory, so keep going.
        let mut state = shared.lock().unwrap_or_else(PoisonError::into_inner);
        update(&mut state);
        let report = Report {
            done: state.done,
            total: state.total,
        };
        (state.callback)(report);
    }
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Progress").field(&self.snapshot()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_monotonic_and_reset_by_start() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let seen = Arc::clone(&seen);
            Progress::new(move |r| seen.lock().unwrap().push(r))
        };
        sink.start(Some(10));
        sink.advance(4);
        sink.advance(6);
        sink.start(None);
        sink.advance(1);
        let seen = seen.lock().unwrap().clone();
        let done: Vec<u64> = seen.iter().map(|r| r.done).collect();
        assert_eq!(done, vec![0, 4, 10, 0, 1]);
        assert_eq!(seen[2].total, Some(10));
        assert_eq!(seen[4].total, None);
    }

    #[test]
    fn concurrent_advances_add_up() {
        let sink = Progress::new(|_| {});
        sink.start(Some(8000));
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| (0..1000).for_each(|_| sink.advance(1)));
            }
        });
        assert_eq!(sink.snapshot().unwrap().done, 8000);
        assert_eq!(Progress::none().snapshot(), None);
    }
}
