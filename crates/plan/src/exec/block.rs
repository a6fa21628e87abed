//! One task's work, block by block: its instructions and fused runs over its range of
//! elements, into its own slots and its parts of the outputs, and why it stops.

use std::ops::Range;

use lockstep_shard::Check;

use super::fusion::FusedRunner;
use super::ir::{Instr, Step};
use super::parts::{InPart, Outs, read};
use super::program::Program;
use crate::dtype::with_type;
use crate::elem::Typed;
use crate::{Array, Op, kernels};

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
