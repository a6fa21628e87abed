//! The deterministic parallel runtime under every lockstep engine.
//!
//! # Brief overview
//!
//! lockstep promises output that is byte-identical to the single-threaded reference at every
//! worker count. This crate holds the pieces that make that promise cheap to keep:
//!
//! - [`ShardPolicy`] decides how many workers a run gets (detected parallelism, the
//!   `LOCKSTEP_WORKERS` override, an explicit request, a cap), for a run of so much work in an
//!   engine's [`Grain`] (the least work a worker must get, in the engine's unit).
//! - [`split`] cuts `N` items into contiguous ranges: balanced, fixed-size, or weighted by
//!   per-segment cost.
//! - [`Pool`] owns exactly `W` threads (on Linux each pinned to a CPU of its own when there
//!   are CPUs enough, [`PIN_ENV`]), or none ([`Pool::current_thread`]: everything inline,
//!   identical results), and runs ordered maps on them ([`Pool::map_items`],
//!   [`Pool::map_blocks`], [`Pool::map_ranges`], [`Pool::update_items`], [`Pool::map_tasks`]):
//!   results come back in input order, and a failure anywhere fails the call with the error at
//!   the lowest input position, panics included (at the position the task last reported with
//!   [`Check::at`]).
//! - [`Pool::for_each_block`] runs a kernel in place over several slices cut by the same blocks
//!   or ranges ([`Parts`], [`Cut`]), with no per-item cost.
//! - [`Pool::branches`] and [`Pool::join`] fork with a worker budget per branch.
//! - [`Pool::pipeline`] and [`Pool::pipeline_blocks`] stream items in chunks with memory bounded
//!   by two chunks, reading the next chunk while the workers process the current one.
//! - [`Owned`] partitions targets among owners (`id % W`) so that many updates to shared targets
//!   run in parallel without locks, in input order per target, reading the next batch while
//!   applying one; hot targets can be spread.
//! - [`merge_sorted_by_bytes`] k-way merges sorted shard outputs, carrying each shard's offset
//!   into a permutation; `spill::ExternalSort` (native builds) sorts more records than memory
//!   holds.
//! - [`Control`] carries a [`CancelToken`], a [`Progress`] sink (reports summed per task) and a
//!   [`Watchdog`] (a run whose task falls silent fails with [`Error::Stalled`]) into every run.
//!
//! ```
//! use lockstep_shard::{Control, Pool};
//!
//! let pool = Pool::new(3)?;
//! let squares = pool.map_items(&Control::new(), &[1u64, 2, 3, 4, 5], |_, x| {
//!     Ok::<_, std::convert::Infallible>(x * x)
//! })?;
//! assert_eq!(squares, [1, 4, 9, 16, 25]); // input order, at any worker count
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
// Unsafe code only where the runtime asks the kernel where its threads run (`placement`).
#![deny(unsafe_code)]

mod blocks;
mod branches;
mod cancel;
mod control;
mod error;
mod maps;
pub mod memory;
mod merge;
mod owners;
mod pipeline;
mod placement;
mod policy;
mod pool;
mod pools;
mod progress;
mod run;
#[cfg(not(target_arch = "wasm32"))]
pub mod spill;
pub mod split;
mod watchdog;

pub use blocks::{Cut, Parts};
pub use cancel::CancelToken;
pub use control::Control;
pub use error::{Error, PoolError};
pub use merge::{MergeError, Merged, SortedShard, merge_sorted_by_bytes};
pub use owners::{Owned, OwnedError};
pub use pipeline::PipelineStats;
pub use placement::PIN_ENV;
pub use policy::{
    DEFAULT_CAP, Decision, Grain, Lowered, LoweredBy, PolicyError, ShardPolicy, WORKERS_ENV,
    WorkerSource, parse_workers,
};
pub use pool::Pool;
pub use pools::Pools;
pub use progress::{Progress, Report};
pub use run::Check;
pub use watchdog::Watchdog;
