//! What every fuzz target of lockstep shares: one pool for the whole run, and the differential
//! check of a parallel path against its serial reference.
//!
//! Targets live in `fuzz_targets/` (one per decoder; `scripts/fuzz` runs each for a time with
//! the seeds in `seeds/<target>/` first).

use std::fmt::{Debug, Display};
use std::sync::OnceLock;

use lockstep_shard::Pool;

/// The workers of [`pool`]: two, so the parallel paths split work (and find boundary bugs) on
/// every input.
pub const WORKERS: usize = 2;

/// One pool for the whole run: a pool per input would start and stop threads thousands of
/// times, and a thread still exiting when the fuzzer ends is reported as a leak.
///
/// # Panics
/// If the operating system refuses the pool's threads (the run cannot start).
pub fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool::new(WORKERS).expect("the fuzz pool's threads"))
}

/// The differential rule of a parallel path against its serial reference: both succeed with
/// equal values, or both fail with the same message (errors are deterministic: the first in
/// input order). `what` names the two for the panic.
///
/// # Panics
/// When the two disagree: that is the bug the fuzzer reports.
pub fn same_outcome<T, U, E, F>(what: &str, parallel: Result<T, E>, serial: Result<U, F>)
where
    T: PartialEq<U> + Debug,
    U: Debug,
    E: Display,
    F: Display,
{
    match (parallel, serial) {
        (Ok(a), Ok(b)) => assert!(a == b, "{what}: the values differ:\n{a:?}\n{b:?}"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}: the errors differ"),
        (Ok(_), Err(b)) => panic!("{what}: the parallel path succeeded, the reference failed: {b}"),
        (Err(a), Ok(_)) => panic!("{what}: the parallel path failed, the reference succeeded: {a}"),
    }
}
