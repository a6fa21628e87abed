//! Every step runs with the interpreter's lock let go ([`Python::detach`]) on a thread of the
//! face's relay ([`relayed`]); the calling thread takes the lock back only to call the caller's
//! `progress(done, total)` and, when nothing is reported for a while, to check for a pending
//! signal, so Ctrl-C cancels a step (raising `KeyboardInterrupt`) within about 100 ms.
//!
//! The pools are kept for the process ([`Pools`]): a step asking for a count gets a pool of
//! exactly that many threads, reused while kept (the least recently used pools are let go when
//! the threads kept would pass twice the machine's parallelism, at least 16).

use std::sync::{Arc, OnceLock};

use lockstep_face::progress::{Callback, Domain, relayed};
use lockstep_face::{Coded, Failure};
use lockstep_shard::{Control, Pool, Pools};
use pyo3::prelude::*;

use crate::errors;

/// A caller's `progress` callable (or none) and the signal check.
pub(crate) struct Beat(Option<Py<PyAny>>);

impl Callback for Beat {
    type Thrown = PyErr;

    fn call(&self, done: f64, total: f64) -> Result<(), PyErr> {
        match &self.0 {
            Some(callable) => Python::attach(|py| callable.call1(py, (done, total)).map(drop)),
            None => Ok(()),
        }
    }

    fn idle(&self) -> Result<(), PyErr> {
        Python::attach(|py| py.check_signals())
    }
}

/// The pool of `workers` threads, kept for the process.
///
/// # Errors
/// `code` (`PSI_INTERNAL`, `PLAN_RUNTIME`) if the threads cannot start.
pub(crate) fn pool(workers: usize, code: &'static str) -> Result<Arc<Pool>, Coded> {
    static POOLS: OnceLock<Pools> = OnceLock::new();
    POOLS
        .get_or_init(Pools::for_process)
        .get(workers)
        .map_err(|e| Coded::new(code, format!("a pool of {workers} workers: {e}")))
}

/// The pool for a PSI step over `items` values on `asked` workers (0: the policy's count).
///
/// # Errors
/// `PSI_USAGE` past the cap or for a bad `LOCKSTEP_WORKERS`; `PSI_INTERNAL` if the threads
/// cannot start.
pub(crate) fn psi_pool(asked: u32, items: usize) -> Result<Arc<Pool>, Coded> {
    pool(
        lockstep_face::openmined::workers(asked, items)?,
        "PSI_INTERNAL",
    )
}

/// Runs `step` with the lock let go, `progress` called on this thread.
///
/// # Errors
/// The step's refusal as the package's exception; what `progress` raised; `KeyboardInterrupt`.
pub(crate) fn run<T: Send>(
    py: Python<'_>,
    domain: Domain,
    progress: Option<Py<PyAny>>,
    step: impl FnOnce(&Control) -> Result<T, Coded> + Send,
) -> PyResult<T> {
    let beat = Beat(progress);
    let outcome: Result<T, Failure<PyErr>> = py.detach(|| relayed(domain, &beat, step));
    outcome.map_err(|failure| errors::failure(py, failure))
}
