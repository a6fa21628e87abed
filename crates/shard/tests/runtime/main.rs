//! Integration tests of the runtime against serial references.
//!
//! - `maps`: ordered maps equal serial maps; failures, panics and cancellation.
//! - `blocks`: in-place block maps, budgeted branches, the block-wise pipeline, progress.
//! - `pipeline`: the chunk pipeline's output, memory bound, overlap, failures and cancellation.
//! - `owners`: owner partitioning against the serial update loop; overlap; hot targets.
//! - `watchdog`: silence fails a run, naming the task.

#![allow(clippy::cast_possible_truncation, reason = "test data sizes are small")]

mod blocks;
mod maps;
mod owners;
mod pipeline;
mod watchdog;

use lockstep_shard::Pool;

/// Worker counts every parallel path is compared at (odd counts find boundary bugs).
pub const WORKER_COUNTS: [usize; 4] = [1, 2, 3, 5];

/// A pool at each of [`WORKER_COUNTS`] and a current-thread pool, named for messages.
#[allow(
    clippy::missing_panics_doc,
    reason = "a test helper: a panic is a test failure"
)]
pub fn pools() -> Vec<(String, Pool)> {
    let mut pools: Vec<(String, Pool)> = WORKER_COUNTS
        .iter()
        .map(|&w| (format!("{w} workers"), Pool::new(w).expect("pool")))
        .collect();
    pools.push(("the current thread".to_owned(), Pool::current_thread()));
    pools
}

/// Keeps the panics tests cause on purpose (messages starting with `boom` or `worker bug`) off
/// stderr; any other panic is printed as usual.
pub fn quiet_intentional_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let text = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied())
                .unwrap_or("");
            if !(text.starts_with("boom") || text.starts_with("worker bug")) {
                default(info);
            }
        }));
    });
}
