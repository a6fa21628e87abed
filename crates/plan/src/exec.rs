//! The fused executor: a plan compiled once into a register program over block-sized slots,
//! evaluated block by block, blocks split across workers.
//!
//! # How it runs
//! - Every intermediate lives in a *slot* of one block (16 KiB of the plan's widest dtype: 4,096
//!   `f32`), never in a full-size array.
//!   Slots are assigned by liveness in evaluation order: a node's slot is taken before its
//!   arguments' slots are given back (an op never writes a slot it reads), and a slot is reused
//!   only by a node of the same dtype.
//! - A dense input (stride 1) is read where it lies; a strided one is gathered into a slot per
//!   block. A constant is one slot filled once per task.
//! - For each block, the instructions run in evaluation order, each a plain vectorizing loop over
//!   the block; then each output's block is written through its view.
//! - The elements are cut into ranges, a few per worker ([`Pool::for_each_block`]); a task owns
//!   its slots and its ranges of the outputs. An element's value depends on that element alone,
//!   so the bytes are the same however the elements are cut.
//!
//! # Memory
//! Beyond inputs and outputs, a run allocates `tasks_at_once x sum over slots of
//! min(block, n) x slot dtype size` bytes, `block` being 16 KiB of the plan's widest dtype ([`Plan::working_bytes`]), where `tasks_at_once` is
//! the pool's worker count (1 below [`MIN_PER_WORKER`] elements); nothing else grows with `n`.

//!
//! # Modules
//! - `ir`: the program as data (operands, instructions, fused runs, steps);
//! - `program`: compiling a plan (slots by liveness, loads, constants, stores);
//! - `fusion`: grouping chains into fused runs, and evaluating a run tile by tile;
//! - `parts`: the arrays' parts a task touches (inputs as views, outputs cut into blocks), the
//!   leaf every other module reads through;
//! - `block`: a task's work block by block (instructions, fused runs, a division by zero);
//! - `task`: the run that cuts elements into tasks on the pool;
//! - `dispatch`: the instruction set a task runs with (AVX2 + FMA or the baseline, overridable
//!   with `LOCKSTEP_PLAN_ISA`; the only `unsafe` of the crate).

mod block;
mod dispatch;
mod fusion;
mod ir;
mod parts;
mod program;
mod task;

use lockstep_shard::Pool;

use crate::Plan;

pub use dispatch::{ISA_ENV, instruction_set};
pub(crate) use program::Program;
pub(crate) use task::{run, task_count, tasks_at_once};

/// Bytes per slot: 16 KiB (4,096 `f32`). Measured on the 64-node 1M f32 chain (2026-11-30):
/// 8 KiB blocks 1.55 ms, 16 KiB 1.45 ms (a fused run resolves its arguments once per block),
/// while unfused chains ran 1.8x slower at 16 KiB than at 8 KiB before fused runs existed. A
/// program's block is this many bytes of its widest dtype.
pub(crate) const BLOCK_BYTES: usize = 16 * 1024;

/// The fewest elements worth a worker of their own (below it a run uses one task): about 20 µs
/// of a short plan.
pub(crate) const MIN_PER_WORKER: usize = 32 * 1024;

/// Tasks per worker: a little slack for uneven workers, few enough that slot setup is nothing.
const TASKS_PER_WORKER: usize = 4;

impl Plan {
    /// Bytes of working memory a run over `n` elements allocates on `pool` beyond its inputs
    /// and outputs (see the module documentation of the executor for the formula).
    pub fn working_bytes(&self, n: usize, pool: &Pool) -> u64 {
        self.working_bytes_on(n, pool.workers())
    }

    /// [`working_bytes`](Self::working_bytes) on a pool of `workers` workers (the current-thread
    /// pool counts as 1), for a front end that states a run's memory before it has the pool.
    pub fn working_bytes_on(&self, n: usize, workers: usize) -> u64 {
        let program = Program::compile(self);
        program.task_bytes(n) * tasks_at_once(n, workers.max(1)) as u64
    }
}
