//! A task of the executor: its range of elements, block by block, into its own slots and its
//! ranges of the outputs; and the run that cuts the elements into tasks on the pool.

use std::ops::Range;

use lockstep_shard::{Check, Control, Cut, Error, Parts, Pool};

use super::fusion::FusedRunner;
use super::ir::{Instr, Operand, Step};
use super::program::Program;
use super::{MIN_PER_WORKER, TASKS_PER_WORKER};
use crate::dtype::with_type;
use crate::elem::Typed;
use crate::{Array, ArrayMut, ArrayRef, Op, Plan, RunError, kernels};

/// Why a task stopped: the lowest element of its failing block with a zero integer divisor,
/// and the first node (evaluation order) dividing by zero there.
#[derive(Debug)]
pub(crate) enum TaskFailure {
    DivisionByZero { node: usize, element: usize },
}

impl std::fmt::Display for TaskFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let TaskFailure::DivisionByZero { node, element } = self;
        write!(
            f,
            "node {node}: integer division by zero at element {element}"
        )
    }
}

/// An input as tasks read it: element `i` at `offset + i * stride`.
#[derive(Clone, Copy)]
pub(crate) struct InPart<'a> {
    pub(crate) data: ArrayRef<'a>,
    pub(crate) offset: usize,
    pub(crate) stride: usize,
}

/// The outputs a task writes: each a view's elements from the task's first one.
pub(crate) struct Outs<'a>(Vec<OutPart<'a>>);

struct OutPart<'a> {
    data: ArrayMut<'a>,
    stride: usize,
    len: usize,
}

impl Parts for Outs<'_> {
    fn len(&self) -> usize {
        self.0.first().map_or(0, |part| part.len)
    }

    fn lengths_agree(&self) -> bool {
        self.0.iter().all(|part| part.len == self.len())
    }

    fn split_at(self, mid: usize) -> (Self, Self) {
        let (mut left, mut right) = (
            Vec::with_capacity(self.0.len()),
            Vec::with_capacity(self.0.len()),
        );
        for part in self.0 {
            let at = mid.saturating_mul(part.stride).min(part.data.len());
            let (l, r) = split_array(part.data, at);
            left.push(OutPart {
                data: l,
                stride: part.stride,
                len: mid,
            });
            right.push(OutPart {
                data: r,
                stride: part.stride,
                len: part.len - mid,
            });
        }
        (Outs(left), Outs(right))
    }
}

fn split_array(data: ArrayMut<'_>, at: usize) -> (ArrayMut<'_>, ArrayMut<'_>) {
    macro_rules! split {
        ($($V:ident),*) => {
            match data {
                $(ArrayMut::$V(v) => {
                    let (l, r) = v.split_at_mut(at);
                    (ArrayMut::$V(l), ArrayMut::$V(r))
                })*
            }
        };
    }
    split!(I8, U8, I16, U16, I32, U32, F32, F64)
}

fn sub_array<'a>(data: ArrayMut<'a>, range: Range<usize>) -> ArrayMut<'a> {
    macro_rules! sub {
        ($($V:ident),*) => {
            match data {
                $(ArrayMut::$V(v) => ArrayMut::$V(&mut v[range]),)*
            }
        };
    }
    sub!(I8, U8, I16, U16, I32, U32, F32, F64)
}

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

fn reborrow<'b>(data: &'b mut ArrayMut<'_>) -> ArrayMut<'b> {
    macro_rules! re {
        ($($V:ident),*) => {
            match data {
                $(ArrayMut::$V(v) => ArrayMut::$V(&mut v[..]),)*
            }
        };
    }
    re!(I8, U8, I16, U16, I32, U32, F32, F64)
}

/// One task: its range of elements, block by block, fused runs through `fused`. Compiled once
/// per instruction set (inlined into each of `dispatch`'s runners).
#[inline(always)]
pub(crate) fn run_task_inline(
    program: &Program,
    ins: &[InPart<'_>],
    outs: &mut Outs<'_>,
    range: Range<usize>,
    check: &Check<'_>,
    fused: &impl FusedRunner,
) -> Result<(), TaskFailure> {
    let width = program.block.min(range.len());
    let mut slots: Vec<Array> = program
        .slots
        .iter()
        .map(|&d| Array::zeros(d, width))
        .collect();
    for (slot, value) in &program.constants {
        with_type!(value.dtype(), T => {
            let v = <T as Typed>::of(value)[0];
            <T as Typed>::of_mut(&mut slots[*slot]).fill(v);
        });
    }
    let mut start = range.start;
    while start < range.end {
        if check.should_stop() {
            return Ok(()); // the runtime reports the cancellation
        }
        let len = program.block.min(range.end - start);
        let local = start - range.start;
        for &(input, slot) in &program.loads {
            let part = ins[input];
            with_type!(part.data.dtype(), T => {
                let data = <T as Typed>::of_ref(part.data);
                let out = &mut <T as Typed>::of_mut(&mut slots[slot])[..len];
                kernels::gather(data, part.offset + start * part.stride, part.stride, out);
            });
        }
        let mut zero: Option<(usize, usize)> = None;
        for step in &program.steps {
            match step {
                Step::One(instr) => {
                    if let Some(k) = execute(instr, ins, &mut slots, start, len)
                        && zero.is_none_or(|(element, _)| start + k < element)
                    {
                        zero = Some((start + k, instr.node));
                    }
                }
                Step::Fused(run) => {
                    with_type!(run.dtype, T => fused.run::<T>(run, ins, &mut slots, start, len))
                }
            }
        }
        if let Some((element, node)) = zero {
            check.at(element);
            return Err(TaskFailure::DivisionByZero { node, element });
        }
        for &(output, operand) in &program.stores {
            let part = &mut outs.0[output];
            let stride = part.stride;
            with_type!(part.data.dtype(), T => {
                let block = read::<T>(operand, ins, &slots, start, len);
                let data = <T as Typed>::of_out(&mut part.data);
                kernels::scatter(block, stride, &mut data[local * stride..]);
            });
        }
        check.advance(len as u64);
        start += len;
    }
    Ok(())
}

// An operand's block: a dense input's elements in place, or a slot's first `len`.
#[inline(always)]
pub(crate) fn read<'s, T: Typed>(
    operand: Operand,
    ins: &[InPart<'s>],
    slots: &'s [Array],
    start: usize,
    len: usize,
) -> &'s [T] {
    match operand {
        Operand::Dense(i) => {
            let part = ins[i];
            &<T as Typed>::of_ref(part.data)[part.offset + start..part.offset + start + len]
        }
        Operand::Slot(s) => &<T as Typed>::of(&slots[s])[..len],
    }
}

// One instruction over one block; for an integer division, the first element (in the block)
// whose divisor is zero.
#[inline(always)]
fn execute(
    instr: &Instr,
    ins: &[InPart<'_>],
    slots: &mut [Array],
    start: usize,
    len: usize,
) -> Option<usize> {
    let mut dest = std::mem::replace(&mut slots[instr.dest], Array::U8(Vec::new()));
    let mut first_zero = None;
    let [a, b, c] = instr.args;
    match instr.op {
        Op::Cast => with_type!(instr.arg_type, F => {
            let x = read::<F>(a, ins, slots, start, len);
            with_type!(instr.out_type, U => {
                kernels::cast::<F, U>(x, &mut <U as Typed>::of_mut(&mut dest)[..len]);
            })
        }),
        op if op.is_compare() => with_type!(instr.arg_type, T => {
            let (x, y) = (read::<T>(a, ins, slots, start, len), read::<T>(b, ins, slots, start, len));
            kernels::compare(op, x, y, &mut <u8 as Typed>::of_mut(&mut dest)[..len]);
        }),
        Op::Select => with_type!(instr.arg_type, T => {
            let mask = read::<u8>(a, ins, slots, start, len);
            let (x, y) = (read::<T>(b, ins, slots, start, len), read::<T>(c, ins, slots, start, len));
            kernels::select(mask, x, y, &mut <T as Typed>::of_mut(&mut dest)[..len]);
        }),
        Op::Fma => with_type!(instr.arg_type, T => {
            let (x, y, z) = (
                read::<T>(a, ins, slots, start, len),
                read::<T>(b, ins, slots, start, len),
                read::<T>(c, ins, slots, start, len),
            );
            kernels::fma(x, y, z, &mut <T as Typed>::of_mut(&mut dest)[..len]);
        }),
        op @ (Op::Neg | Op::Abs | Op::Sqrt) => with_type!(instr.arg_type, T => {
            kernels::unary(op, read::<T>(a, ins, slots, start, len), &mut <T as Typed>::of_mut(&mut dest)[..len]);
        }),
        Op::Div if !instr.arg_type.is_float() => with_type!(instr.arg_type, T => {
            let (x, y) = (read::<T>(a, ins, slots, start, len), read::<T>(b, ins, slots, start, len));
            first_zero = kernels::divide_checked(x, y, &mut <T as Typed>::of_mut(&mut dest)[..len]);
        }),
        op => with_type!(instr.arg_type, T => {
            let (x, y) = (read::<T>(a, ins, slots, start, len), read::<T>(b, ins, slots, start, len));
            kernels::binary(op, x, y, &mut <T as Typed>::of_mut(&mut dest)[..len]);
        }),
    }
    slots[instr.dest] = dest;
    first_zero
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
