//! The executor's program, as data: operands, instructions, fused runs and the steps a block
//! runs. Compiled by [`program`](super::program), grouped by [`fusion`](super::fusion), run by
//! [`task`](super::task).

use crate::{DType, Op};

/// Where an instruction reads a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operand {
    /// A dense input, read in place.
    Dense(usize),
    /// A slot of the task's scratch.
    Slot(usize),
}

/// One node's operation over one block: `dest = op(args)`.
#[derive(Debug)]
pub(crate) struct Instr {
    pub(crate) op: Op,
    /// The dtype the op computes in (the values' for a select, the source's for a cast).
    pub(crate) arg_type: DType,
    pub(crate) out_type: DType,
    pub(crate) args: [Operand; 3],
    pub(crate) dest: usize,
    /// The node's index in evaluation order.
    pub(crate) node: usize,
}

/// What a block runs, in order: single instructions, and runs of instructions fused into one
/// pass over register-sized tiles.
#[derive(Debug)]
pub(crate) enum Step {
    /// One instruction, a pass over the block.
    One(Instr),
    /// A fused run, one pass over the block tile by tile.
    Fused(Run),
}

/// A chain of arithmetic instructions of one dtype, each taking the previous one's result as its
/// first argument and nothing else using it: evaluated [`TILE`] elements at a time with the chain
/// value held in registers, one load per operand and one store per tile (not per instruction).
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) dtype: DType,
    /// The first instruction's first argument.
    pub(crate) first: Operand,
    pub(crate) ops: Vec<RunOp>,
    /// The last instruction's slot.
    pub(crate) dest: usize,
}

/// One op of a run, after the chain value.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunOp {
    pub(crate) op: Op,
    /// The other arguments (those past the op's arity are not read); `scalar`: a constant's
    /// slot, read once as one value.
    pub(crate) args: [(Operand, bool); 2],
}

/// Elements per fused tile: 64 (eight 256-bit registers of `f32`).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) const TILE: usize = 64;
/// Elements per fused tile in wasm: 128. V8 keeps no tile in registers (it has 16 of 128 bits),
/// so a longer tile only spreads each op's dispatch over more elements: the 64-node 1M f32 chain
/// ran in 6.84 ms at 32, 4.41 at 64, 3.33 at 128 and 3.58 at 256 (one-off probes of the
/// simd128 build, Node 20, 2026-12-01; the committed `js/bench/plan.js` gives 3.3-3.8 at 128).
#[cfg(target_arch = "wasm32")]
pub(crate) const TILE: usize = 128;
