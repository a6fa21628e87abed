//! The bridges from the runtime's progress ([`Progress`]) to a front end's callback: the JS
//! function a caller passes as `progress(done, total)`, a Python callable. [`with_progress`]
//! runs the step on the calling thread (the JS bindings); [`relayed`] runs it on a thread of its
//! own and calls the callback on the calling thread (the Python binding, which lets go of the
//! GIL meanwhile).
//!
//! The runtime's progress sink must be `Send`; a JS function is not, and a step of a JS binding
//! runs on the calling thread (the runtime's current-thread pool). So the callback of the step in
//! flight is kept in this thread's cell, and the sink calls it from there. Three rules hold for
//! every binding:
//!
//! - **No re-entry.** A step started from a callback (while another step of this thread runs)
//!   is refused with its engine's code and words ([`Domain`]): it would replace the callback of
//!   the step around it.
//! - **Nothing borrowed while the caller's code runs.** The callback is cloned out of the cell
//!   before it is called, so a callback that calls into the binding finds no cell borrowed.
//! - **A throw is the step's outcome.** What the callback throws cancels the step, is kept (the
//!   first throw; the callback is not called again), and comes back as [`Failure::Thrown`], to be
//!   rethrown as it was: the step's own `Cancelled` is not reported in its place.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::mpsc::RecvTimeoutError;

use lockstep_shard::{CancelToken, Control, Progress};

use crate::{Coded, Failure};

/// A front end's progress callback.
pub trait Callback: 'static {
    /// What the callback throws (a JS exception, a Python exception), handed back as it was.
    type Thrown: 'static;

    /// Reports `done` of `total` items of the step (JS numbers). An `Err` cancels the step.
    ///
    /// # Errors
    /// What the callback threw.
    fn call(&self, done: f64, total: f64) -> Result<(), Self::Thrown>;

    /// Called on the caller's thread about every [`IDLE`] while a [`relayed`] step runs,
    /// whether or not it reports: a Python binding checks for a pending signal (Ctrl-C) here,
    /// which its interpreter cannot while the step runs without its lock. An `Err` cancels the
    /// step.
    ///
    /// # Errors
    /// What the check raised.
    fn idle(&self) -> Result<(), Self::Thrown> {
        Ok(())
    }
}

/// How often a [`relayed`] step's caller runs [`Callback::idle`].
pub const IDLE: std::time::Duration = std::time::Duration::from_millis(100);

/// The engine a step belongs to, which names a refused re-entry in its own words and code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// A PSI step (`PSI_USAGE`).
    Psi,
    /// A plan run (`PLAN_BINDING`).
    Plan,
    /// A ceremony file's reading or verification (`CEREMONY_USAGE`).
    Ceremony,
}

impl Domain {
    fn panicked(self) -> Coded {
        match self {
            Self::Psi => Coded::new(
                "PSI_INTERNAL",
                "the step panicked (a bug: please report it)",
            ),
            Self::Plan => Coded::new("PLAN_RUNTIME", "the run panicked (a bug: please report it)"),
            Self::Ceremony => Coded::new(
                "CEREMONY_RUN",
                "the check panicked (a bug: please report it)",
            ),
        }
    }

    fn reentered(self) -> Coded {
        match self {
            Self::Psi => Coded::new(
                "PSI_USAGE",
                "a step cannot start from another step's progress callback",
            ),
            Self::Plan => Coded::new(
                "PLAN_BINDING",
                "a run cannot start from another run's progress callback",
            ),
            Self::Ceremony => Coded::new(
                "CEREMONY_USAGE",
                "a check cannot start from another step's progress callback",
            ),
        }
    }
}

/// The callback of a step, as the cell holds it: `(done, total)`.
type Beat = Rc<dyn Fn(u64, u64)>;

thread_local! {
    /// Whether a step is running on this thread.
    static RUNNING: Cell<bool> = const { Cell::new(false) };
    /// The callback of the step running on this thread.
    static BEAT: RefCell<Option<Beat>> = const { RefCell::new(None) };
}

/// Marks a step running for as long as it lives, however the step ends.
struct Running;

impl Running {
    fn enter(domain: Domain) -> Result<Self, Coded> {
        if RUNNING.replace(true) {
            return Err(domain.reentered());
        }
        Ok(Self)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        BEAT.with(|beat| beat.borrow_mut().take());
        RUNNING.set(false);
    }
}

/// Runs `step` under a control whose progress calls `callback` on this thread and whose cancel
/// token a throw from it sets. The step must report from this thread (the runtime's
/// current-thread pool): a report from another thread finds no callback there and is dropped.
///
/// # Errors
/// [`Failure::Coded`]: a step already running on this thread (the re-entry refusal of
/// `domain`), or the step's own error; [`Failure::Thrown`]: what the callback threw, in place of
/// the step's error.
pub fn with_progress<C: Callback, T, E: Into<Coded>>(
    domain: Domain,
    callback: Option<C>,
    step: impl FnOnce(&Control) -> Result<T, E>,
) -> Result<T, Failure<C::Thrown>> {
    let _running = Running::enter(domain)?;
    let cancel = CancelToken::new();
    let mut control = Control::new().with_cancel(cancel.clone());
    let thrown: Rc<RefCell<Option<C::Thrown>>> = Rc::default();
    if let Some(callback) = callback {
        let sink = Rc::clone(&thrown);
        let beat: Beat = Rc::new(move |done, total| {
            if sink.borrow().is_some() {
                return; // it threw: the step is ending, the caller's code is not run again
            }
            #[allow(
                clippy::cast_precision_loss,
                reason = "counts of items a caller's arrays hold, below 2^53"
            )]
            let outcome = callback.call(done as f64, total as f64);
            if let Err(error) = outcome {
                *sink.borrow_mut() = Some(error);
                cancel.cancel();
            }
        });
        BEAT.with(|cell| *cell.borrow_mut() = Some(beat));
        control = control.with_progress(Progress::new(|report| {
            // Cloned out of the cell before it is called: nothing is borrowed while it runs.
            let beat = BEAT.with(|cell| cell.borrow().clone());
            if let Some(beat) = beat {
                beat(report.done, report.total.unwrap_or(report.done));
            }
        }));
    }
    let result = step(&control);
    if let Some(error) = thrown.borrow_mut().take() {
        return Err(Failure::Thrown(error));
    }
    result.map_err(|error| Failure::Coded(error.into()))
}

/// What a [`relayed`] step's thread sends its caller.
enum Relay {
    /// A report: done, total.
    Report(u64, u64),
    /// The step has ended.
    Ended,
}

/// Runs `step` on a thread of its own under a control whose progress reaches `callback` on
/// **this** thread, which waits for the step and calls nothing else: the form for a binding that
/// lets go of its interpreter's lock while a step runs (Python's GIL), so the step's workers never
/// wait for it, and takes it back only to run the callback. Reports are coalesced (the latest
/// wins while the callback runs); [`Callback::idle`] is called every [`IDLE`]. The rules are [`with_progress`]'s: no re-entry on this thread, a throw (from
/// `call` or `idle`) cancels the step and comes back in place of its error.
///
/// # Errors
/// As [`with_progress`]; a step that panicked is `PSI_INTERNAL`, `PLAN_RUNTIME` or `CEREMONY_RUN` by `domain`
/// (an engine bug, never a caller's input: the engines do not panic on input).
pub fn relayed<C: Callback, T: Send, E: Into<Coded> + Send>(
    domain: Domain,
    callback: &C,
    step: impl FnOnce(&Control) -> Result<T, E> + Send,
) -> Result<T, Failure<C::Thrown>> {
    let _running = Running::enter(domain)?;
    let cancel = CancelToken::new();
    let (send, receive) = std::sync::mpsc::channel::<Relay>();
    let reports = send.clone();
    let control = Control::new()
        .with_cancel(cancel.clone())
        .with_progress(Progress::new(move |report| {
            // The caller may have stopped listening (it threw): a report then goes nowhere.
            let _ = reports.send(Relay::Report(
                report.done,
                report.total.unwrap_or(report.done),
            ));
        }));
    let mut thrown: Option<C::Thrown> = None;
    let outcome = std::thread::scope(|scope| {
        let worker = scope.spawn(move || {
            let result = step(&control);
            drop(control);
            let _ = send.send(Relay::Ended);
            result
        });
        let mut checked = std::time::Instant::now();
        let mut ended = false;
        while !ended {
            // The latest report waiting (coalesced), or none by the time the next check is due.
            let mut last = None;
            // After a throw nothing is due: wait for the step to end, waking each IDLE.
            let wait = if thrown.is_some() {
                IDLE
            } else {
                IDLE.saturating_sub(checked.elapsed())
            };
            match receive.recv_timeout(wait) {
                Ok(Relay::Ended) | Err(RecvTimeoutError::Disconnected) => ended = true,
                Ok(Relay::Report(done, total)) => last = Some((done, total)),
                Err(RecvTimeoutError::Timeout) => {}
            }
            for beat in receive.try_iter() {
                match beat {
                    Relay::Report(done, total) => last = Some((done, total)),
                    Relay::Ended => ended = true,
                }
            }
            if thrown.is_some() {
                continue; // it threw: the step is ending, the caller's code is not run again
            }
            #[allow(
                clippy::cast_precision_loss,
                reason = "counts of items a caller's arrays hold, below 2^53"
            )]
            let mut outcome = match last {
                Some((done, total)) => callback.call(done as f64, total as f64),
                None => Ok(()),
            };
            // The idle check is due every IDLE whether or not reports arrive.
            if outcome.is_ok() && !ended && checked.elapsed() >= IDLE {
                checked = std::time::Instant::now();
                outcome = callback.idle();
            }
            if let Err(error) = outcome {
                thrown = Some(error);
                cancel.cancel();
            }
        }
        worker.join()
    });
    if let Some(error) = thrown {
        return Err(Failure::Thrown(error));
    }
    match outcome {
        Ok(result) => result.map_err(|error| Failure::Coded(error.into())),
        Err(_) => Err(Failure::Coded(domain.panicked())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A callback that records its calls, throws `"stop"` at `throw_at`, and runs `inner`
    /// (a nested step) on its first call.
    struct Probe {
        calls: Rc<RefCell<Vec<(f64, f64)>>>,
        throw_at: Option<f64>,
        nested: Rc<RefCell<Option<Failure<&'static str>>>>,
    }

    impl Callback for Probe {
        type Thrown = &'static str;

        fn call(&self, done: f64, total: f64) -> Result<(), &'static str> {
            self.calls.borrow_mut().push((done, total));
            if self.calls.borrow().len() == 1 {
                let inner = with_progress(Domain::Plan, None::<Probe>, |_| Ok::<_, Coded>(()));
                *self.nested.borrow_mut() = inner.err();
            }
            if Some(done) == self.throw_at {
                return Err("stop");
            }
            Ok(())
        }
    }

    fn probe(throw_at: Option<f64>) -> Probe {
        Probe {
            calls: Rc::default(),
            throw_at,
            nested: Rc::default(),
        }
    }

    /// A step of `n` items reporting one at a time, failing `Cancelled` once cancelled.
    fn step(control: &Control, n: u64) -> Result<u64, Coded> {
        control.progress().start(Some(n));
        for _ in 0..n {
            if control.is_cancelled() {
                return Err(Coded::new("PSI_CANCELLED", "cancelled"));
            }
            control.progress().advance(1);
        }
        Ok(n)
    }

    #[test]
    fn reports_reach_the_callback_and_a_nested_step_is_refused_in_its_domains_words() {
        let callback = probe(None);
        let (calls, nested) = (Rc::clone(&callback.calls), Rc::clone(&callback.nested));
        let done = with_progress(Domain::Psi, Some(callback), |c| step(c, 40)).unwrap();
        assert_eq!(done, 40);
        let calls = calls.borrow();
        assert!(!calls.is_empty());
        assert_eq!(calls.last(), Some(&(40.0, 40.0)));
        assert!(calls.windows(2).all(|w| w[0].0 <= w[1].0));
        match nested.borrow().as_ref() {
            Some(Failure::Coded(coded)) => assert_eq!(
                (coded.code, coded.message.as_str()),
                (
                    "PLAN_BINDING",
                    "a run cannot start from another run's progress callback"
                )
            ),
            other => panic!("the nested step was not refused: {other:?}"),
        }
        // The thread is free again: a step after it runs.
        assert_eq!(
            with_progress(Domain::Psi, None::<Probe>, |c| step(c, 3)).unwrap(),
            3
        );
    }

    #[test]
    fn a_throw_cancels_the_step_and_comes_back_as_thrown_once() {
        let callback = probe(Some(0.0));
        let calls = Rc::clone(&callback.calls);
        let outcome = with_progress(Domain::Psi, Some(callback), |c| step(c, 40));
        assert!(
            matches!(outcome, Err(Failure::Thrown("stop"))),
            "{outcome:?}"
        );
        assert_eq!(calls.borrow().len(), 1, "not called again after it threw");
        // A step's own error, with no throw, is the step's.
        let outcome = with_progress(Domain::Psi, None::<Probe>, |_| {
            Err::<(), _>(Coded::new("PSI_INPUT", "no key"))
        });
        match outcome {
            Err(Failure::Coded(coded)) => assert_eq!(coded, Coded::new("PSI_INPUT", "no key")),
            other => panic!("{other:?}"),
        }
    }

    /// A callback for relayed steps: records its calls and the threads it ran on.
    struct Caller {
        calls: RefCell<Vec<(f64, f64)>>,
        idles: Cell<u32>,
        threads: RefCell<Vec<std::thread::ThreadId>>,
        throw_at: Option<f64>,
        throw_idle: bool,
    }

    fn caller(throw_at: Option<f64>, throw_idle: bool) -> Caller {
        Caller {
            calls: RefCell::default(),
            idles: Cell::new(0),
            threads: RefCell::default(),
            throw_at,
            throw_idle,
        }
    }

    impl Callback for Caller {
        type Thrown = &'static str;

        fn call(&self, done: f64, total: f64) -> Result<(), &'static str> {
            self.calls.borrow_mut().push((done, total));
            self.threads.borrow_mut().push(std::thread::current().id());
            match self.throw_at {
                Some(at) if done >= at => Err("stop"),
                _ => Ok(()),
            }
        }

        fn idle(&self) -> Result<(), &'static str> {
            self.idles.set(self.idles.get() + 1);
            if self.throw_idle {
                Err("interrupted")
            } else {
                Ok(())
            }
        }
    }

    /// A step of `n` items on a pool of two, one item every `pause`.
    fn pooled(control: &Control, n: u64, pause: std::time::Duration) -> Result<u64, Coded> {
        let pool = lockstep_shard::Pool::new(2).unwrap();
        control.progress().start(Some(n));
        let items: Vec<u64> = (0..n).collect();
        let out = pool
            .map_blocks(control, &items, 1, |_, block| {
                std::thread::sleep(pause);
                block.iter().map(|&x| Ok::<u64, String>(x)).collect()
            })
            .map_err(|e| Coded::new("PSI_CANCELLED", e.to_string()))?;
        Ok(out.len() as u64)
    }

    #[test]
    fn a_relayed_step_reports_on_the_caller_s_thread_and_ends_with_its_result() {
        let callback = caller(None, false);
        let here = std::thread::current().id();
        let done = relayed(Domain::Psi, &callback, |c| {
            pooled(c, 20, std::time::Duration::from_millis(2))
        })
        .unwrap();
        assert_eq!(done, 20);
        let calls = callback.calls.borrow();
        assert!(!calls.is_empty());
        assert!(calls.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(callback.threads.borrow().iter().all(|&t| t == here));
    }

    #[test]
    fn the_idle_check_runs_while_reports_keep_arriving() {
        let callback = caller(None, false);
        let started = std::time::Instant::now();
        relayed(Domain::Psi, &callback, |c| {
            pooled(c, 200, std::time::Duration::from_millis(3))
        })
        .unwrap();
        let took = started.elapsed();
        assert!(took >= IDLE * 2, "{took:?}");
        assert!(
            callback.idles.get() >= 1,
            "{} idle checks in {took:?}",
            callback.idles.get()
        );
        assert!(callback.calls.borrow().len() > 1);
    }

    #[test]
    fn a_throw_or_an_idle_check_cancels_a_relayed_step_and_a_panic_is_coded() {
        let callback = caller(Some(1.0), false);
        let outcome = relayed(Domain::Psi, &callback, |c| {
            pooled(c, 400, std::time::Duration::from_millis(2))
        });
        assert!(
            matches!(outcome, Err(Failure::Thrown("stop"))),
            "{outcome:?}"
        );
        let calls = callback.calls.borrow();
        let throwing = calls.iter().filter(|&&(done, _)| done >= 1.0).count();
        assert_eq!(throwing, 1, "not called again after it threw: {calls:?}");
        assert!(calls.last().unwrap().0 < 400.0, "cancelled before the end");

        let quiet = caller(None, true);
        let outcome = relayed(Domain::Psi, &quiet, |c| {
            std::thread::sleep(IDLE * 3);
            pooled(c, 4, std::time::Duration::ZERO)
        });
        assert!(
            matches!(outcome, Err(Failure::Thrown("interrupted"))),
            "{outcome:?}"
        );
        assert_eq!(quiet.idles.get(), 1);

        let outcome = relayed(
            Domain::Plan,
            &caller(None, false),
            |_| -> Result<(), Coded> { panic!("a bug") },
        );
        match outcome {
            Err(Failure::Coded(coded)) => assert_eq!(coded.code, "PLAN_RUNTIME"),
            other => panic!("{other:?}"),
        }
    }
}
