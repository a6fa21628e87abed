//! Typed-array compute plans: a validated DAG of element-wise ops over eight dtypes, run fused
//! block by block on the shard runtime, bit-identical to a node-by-node scalar reference at
//! every worker count.
//!
//! # Brief overview
//!
//! - [`Plan::from_json`] reads plan format v1 ([`mod@format`]) and validates it: every error names
//!   the item and the field.
//! - [`DType`]: `i8 u8 i16 u16 i32 u32 f32 f64`; [`Op`]: add, sub, mul, div, min, max, neg,
//!   abs, sqrt, fma, cast, eq, ne, lt, le, gt, ge, select. Integer arithmetic wraps; integer
//!   division by zero is an error naming the node and the element; casts are explicit; floats
//!   are IEEE ([`elem`](crate#semantics) below).
//! - [`View`]: inputs and outputs read and write through offset, stride and length, bounds
//!   checked before the run.
//! - [`Executor`] (from [`Plan::executor`]): the plan compiled once into a register program
//!   over block-sized slots, run block by block, blocks split across a [`Pool`](lockstep_shard::Pool)'s workers,
//!   kernels vectorized (AVX2 + FMA when the CPU has them, see [`instruction_set`]; [`ISA_ENV`]
//!   forces the baseline).
//! - [`Plan::working_bytes`]: the run's extra memory, known before the run; a budget refuses a
//!   run over it before anything is allocated.
//! - [`mod@reference`]: the node-by-node scalar reference the executor must equal bit for bit.
//! - [`npy`]: numpy's `.npy` files in and out (one-dimensional, little-endian);
//!   [`ArrayFormat`]: which of `.npy` and raw a file is, by its name, as every front end reads
//!   and writes arrays; [`Plan::bind_by_name`]: inputs and outputs bound by name.
//! - [`GRAIN`]: how many elements a worker must get.
//!
//! ```
//! use lockstep_plan::{Array, Plan, RunOptions};
//! use lockstep_shard::{Control, Pool};
//!
//! let plan = Plan::from_json(r#"{
//!     "version": 1,
//!     "inputs": [{ "id": "x", "dtype": "f32" }],
//!     "constants": [{ "id": "two", "dtype": "f32", "value": 2 }],
//!     "nodes": [{ "id": "y", "op": "fma", "args": ["x", "two", "x"] }],
//!     "outputs": [{ "id": "out", "from": "y" }]
//! }"#)?;
//! let x = Array::from(vec![1.0f32, 2.5, -4.0]);
//! let out = plan.run_to_arrays(&Pool::new(2)?, &Control::new(), &[x.as_array_ref()], &RunOptions::default())?;
//! assert_eq!(out, [Array::from(vec![3.0f32, 7.5, -12.0])]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Semantics
//! Integers wrap (two's complement), `abs(MIN)` is `MIN`, `MIN / -1` is `MIN`; `min(a, b)` is
//! `a < b ? a : b` and `max(a, b)` is `a > b ? a : b` (so for floats a NaN in `a` gives `b`, a NaN
//! in `b` gives NaN); comparisons give `u8` 1 or 0; `select(mask, a, b)` takes `a` where the `u8`
//! mask is not 0; `fma` rounds once, every other float op rounds each step; casts are Rust's
//! `as` (integers wrap or extend, floats to integers truncate and saturate with NaN to 0).
//! Every NaN an output holds is the quiet NaN with sign 0 and no payload (`0x7fc0_0000`,
//! `0x7ff8_0000_0000_0000`), a NaN input passed through included: processors disagree on a NaN
//! result's sign, so outputs are byte-identical across worker counts, machines and front ends.
//!
//! # Memory
//! A run allocates [`Plan::working_bytes`] beyond its inputs and outputs: per task at once,
//! one block of each slot. Nothing grows with the number of elements.
#![deny(unsafe_code)]

mod array_file;
mod bind;
mod compiled;
mod constant;
mod dtype;
mod elem;
mod error;
mod exec;
mod executor;
pub mod format;
mod kernels;
mod layout;
pub mod npy;
mod op;
mod plan;
mod quote;
pub mod reference;
mod run_memory;
mod stream;

pub use array_file::{ArrayFileError, ArrayFormat, BindingError, Side};
pub use compiled::CompiledPlan;
pub use dtype::{Array, ArrayMut, ArrayRef, DType, LengthError};
pub use error::{PlanError, RunError};
pub use exec::{ISA_ENV, instruction_set};
pub use executor::{Executor, RunOptions};
pub use layout::Layout;
pub use op::Op;
pub use plan::{Constant, Input, MAX_NODES, MAX_VIEW_NUMBER, Node, Output, Plan, Value, View};
pub use run_memory::RunMemory;

pub use quote::{MAX_ECHO, Quoted, escaped, parser_message, quoted};
pub use stream::StreamError;

use lockstep_shard::Grain;

/// The plan engine's shard grain: a worker gets at least 32,768 elements (two blocks of f32 at
/// the least, tens of microseconds of fused work), below which a thread costs more than it
/// saves. Ask the shard policy for a run's workers in it: `policy.decide(elements, GRAIN)`.
pub const GRAIN: Grain = Grain::new(exec::MIN_PER_WORKER, "elements");

/// The most bytes a plan's JSON may hold when read from a file or pipe: 16 MiB (a plan of
/// 10,000 nodes is under 1 MiB); a longer input is refused before it fills memory.
pub const MAX_PLAN_BYTES: u64 = 16 << 20;
