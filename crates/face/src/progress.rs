//! One bridge from the runtime's progress ([`Progress`]) to a front end's callback: the JS
//! function a caller passes as `progress(done, total)`, a Python callable.
//!
//! The runtime's progress sink must be `Send`; a JS function is not, and a step of a binding
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
}

/// The engine a step belongs to, which names a refused re-entry in its own words and code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// A PSI step (`PSI_USAGE`).
    Psi,
    /// A plan run (`PLAN_BINDING`).
    Plan,
}

impl Domain {
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
}
