//! Runtime instruction-set dispatch for the executor's tasks: the block runner compiled for
//! AVX2 + FMA, used when the CPU has them, else the baseline build. Both compute the same bits
//! (the kernels follow `elem`'s definitions, and no floating-point contraction or reassociation
//! is enabled on either).
//!
//! The only `unsafe` of this crate is here: calling a `#[target_feature]` function, which is
//! sound only on a CPU that has the features; `is_x86_feature_detected!` checks it first.

use std::ops::Range;

use lockstep_shard::Check;

use crate::Array;
use crate::elem::Typed;
use crate::exec::{InPart, Outs, Program, Run, TaskFailure, execute_run, run_task_inline};

/// Runs one task with the best instruction set this CPU has.
pub(crate) fn run_task(
    program: &Program,
    ins: &[InPart<'_>],
    outs: &mut Outs<'_>,
    range: Range<usize>,
    check: &Check<'_>,
) -> Result<(), TaskFailure> {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        #[allow(unsafe_code)]
        // SAFETY: the CPU has AVX2 and FMA (checked by `avx2`), the features the function is
        // compiled for; it is otherwise an ordinary safe function.
        return unsafe { run_task_avx2(program, ins, outs, range, check) };
    }
    run_task_inline(program, ins, outs, range, check)
}

/// The instruction set the executor uses on this CPU: "avx2+fma" or "baseline".
pub fn instruction_set() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        return "avx2+fma";
    }
    "baseline"
}

#[cfg(target_arch = "x86_64")]
fn avx2() -> bool {
    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn run_task_avx2(
    program: &Program,
    ins: &[InPart<'_>],
    outs: &mut Outs<'_>,
    range: Range<usize>,
    check: &Check<'_>,
) -> Result<(), TaskFailure> {
    run_task_inline(program, ins, outs, range, check)
}

/// One fused run over one block, compiled on its own (not inlined into the task's runner, where
/// the whole executor is one function) so the tile loop keeps its chain in registers.
#[inline(never)]
pub(crate) fn run_fused<T: Typed>(
    run: &Run,
    ins: &[InPart<'_>],
    slots: &mut [Array],
    start: usize,
    len: usize,
) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        #[allow(unsafe_code)]
        // SAFETY: as in `run_task`: the CPU has AVX2 and FMA.
        return unsafe { run_fused_avx2::<T>(run, ins, slots, start, len) };
    }
    execute_run::<T>(run, ins, slots, start, len);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn run_fused_avx2<T: Typed>(
    run: &Run,
    ins: &[InPart<'_>],
    slots: &mut [Array],
    start: usize,
    len: usize,
) {
    execute_run::<T>(run, ins, slots, start, len);
}
