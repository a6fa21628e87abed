//! A run of the executor: the elements cut into tasks on the pool, each task's block work
//! ([`block`](super::block)) on the instruction set [`dispatch`](super::dispatch) chose.

use lockstep_shard::{Control, Cut, Error, Pool};

use super::block::TaskFailure;
use super::parts::{InPart, OutPart, Outs, reborrow, sub_array};
use super::program::Program;
use super::{MIN_PER_WORKER, TASKS_PER_WORKER};
use crate::{ArrayMut, ArrayRef, Plan, RunError};

/// Runs `program` for `plan` over `n` bound elements on `pool`.
#[allow(
    clippy::too_many_arguments,
    reason = "one internal call site, each argument distinct"
)]
pub(crate) fn run(
    plan: &Plan,
    program: &Program,
    pool: &Pool,
    control: &Control,
    inputs: &[ArrayRef<'_>],
    outputs: &mut [ArrayMut<'_>],
    n: usize,
    tasks: usize,
) -> Result<(), RunError> {
    let isa = super::dispatch::selected()?;
    if n == 0 {
        return Ok(());
    }
    let ins: Vec<InPart<'_>> = plan
        .inputs
        .iter()
        .zip(inputs)
        .map(|(input, &data)| InPart {
            data,
            offset: bound(input.view.offset),
            stride: stride_of(input.view.stride, n),
        })
        .collect();
    let span = |stride: usize| (n - 1) * stride + 1;
    let outs = Outs(
        plan.outputs
            .iter()
            .zip(outputs.iter_mut())
            .map(|(output, data)| {
                let (offset, stride) =
                    (bound(output.view.offset), stride_of(output.view.stride, n));
                let reborrowed = reborrow(data);
                OutPart {
                    data: sub_array(reborrowed, offset..offset + span(stride)),
                    stride,
                    len: n,
                }
            })
            .collect(),
    );
    let ranges = lockstep_shard::split::balanced(n, tasks);
    let result = pool.for_each_block(
        control,
        outs,
        Cut::Ranges(&ranges),
        |check, range, mut outs| {
            super::dispatch::run_task(isa, program, &ins, &mut outs, range, check)
        },
    );
    result.map_err(|error| match error {
        Error::Task {
            source: TaskFailure::DivisionByZero { node, element },
            ..
        } => RunError::DivisionByZero {
            node: plan.nodes[node].id.clone(),
            element,
        },
        Error::Cancelled => RunError::Cancelled,
        other => RunError::Runtime(other.to_string()),
    })
}

/// A bound view's offset or stride, with at least one element: binding checked that the view's
/// span lies in its array, so both fit `usize`.
fn bound(number: u64) -> usize {
    usize::try_from(number).expect("invariant: a bound view with elements lies in its array")
}

/// A bound view's stride over `n` elements: of one element, the stride is never stepped (and
/// may be past what this target addresses), so 1 stands for it.
fn stride_of(stride: u64, n: usize) -> usize {
    if n == 1 { 1 } else { bound(stride) }
}

pub(crate) fn tasks_at_once(n: usize, workers: usize) -> usize {
    workers.min(task_count(n, workers))
}

// Enough tasks for every worker and some slack, never more than the blocks (a task of one
// block is already cheap next to its slots).
pub(crate) fn task_count(n: usize, workers: usize) -> usize {
    if n < MIN_PER_WORKER {
        1
    } else {
        (workers * TASKS_PER_WORKER).min(n.div_ceil(1024))
    }
}
