//! The fused executor: a plan compiled once into a register program over block-sized slots,
//! evaluated block by block, blocks split across workers.
//!
//! # How it runs
//! - Every intermediate lives in a *slot* of one block (8 KiB of the plan's widest dtype: 2,048
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
//! min(block, n) x slot dtype size` bytes, `block` being 8 KiB of the plan's widest dtype ([`Plan::working_bytes`]), where `tasks_at_once` is
//! the pool's worker count (1 below [`MIN_PER_WORKER`] elements); nothing else grows with `n`.

use std::ops::Range;

use lockstep_shard::{Check, Control, Cut, Error, Parts, Pool};

use crate::dtype::with_type;
use crate::elem::Typed;
use crate::{Array, ArrayMut, ArrayRef, DType, Op, Plan, RunError, Value, kernels};

/// Bytes per slot: 8 KiB (2,048 `f32`), so a long chain's few live slots and the inputs' blocks
/// stay in the first-level cache (measured here: 16 KiB slots ran the 64-node chain 1.8x
/// slower). A program's block is this many elements of its widest dtype.
pub(crate) const BLOCK_BYTES: usize = 8 * 1024;

/// The fewest elements worth a worker of their own (below it a run uses one task): about 20 µs
/// of a short plan.
pub const MIN_PER_WORKER: usize = 32 * 1024;

/// Tasks per worker: a little slack for uneven workers, few enough that slot setup is nothing.
const TASKS_PER_WORKER: usize = 4;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Operand {
    /// A dense input, read in place.
    Dense(usize),
    /// A slot of the task's scratch.
    Slot(usize),
}

#[derive(Debug)]
struct Instr {
    op: Op,
    /// The dtype the op computes in (the values' for a select, the source's for a cast).
    arg_type: DType,
    out_type: DType,
    args: [Operand; 3],
    dest: usize,
    /// The node's index in evaluation order.
    node: usize,
}

/// A plan compiled for one block length.
#[derive(Debug)]
pub(crate) struct Program {
    slots: Vec<DType>,
    /// Slots filled once per task with a constant (of one element).
    constants: Vec<(usize, Array)>,
    loads: Vec<(usize, usize)>,
    instrs: Vec<Instr>,
    stores: Vec<(usize, Operand)>,
    block: usize,
}

impl Program {
    pub(crate) fn compile(plan: &Plan) -> Program {
        let mut slots: Vec<DType> = Vec::new();
        let mut free: Vec<Vec<usize>> = vec![Vec::new(); DType::ALL.len()];
        let type_index = |d: DType| {
            DType::ALL
                .iter()
                .position(|x| *x == d)
                .expect("invariant: a dtype")
        };
        let take = |d: DType, slots: &mut Vec<DType>, free: &mut [Vec<usize>]| {
            free[type_index(d)].pop().unwrap_or_else(|| {
                slots.push(d);
                slots.len() - 1
            })
        };

        let mut loads = Vec::new();
        let inputs: Vec<Operand> = plan
            .inputs
            .iter()
            .enumerate()
            .map(|(i, input)| {
                if input.view.stride == 1 {
                    Operand::Dense(i)
                } else {
                    let slot = take(input.dtype, &mut slots, &mut free);
                    loads.push((i, slot));
                    Operand::Slot(slot)
                }
            })
            .collect();
        let mut constants = Vec::new();
        let constant_slots: Vec<Operand> = plan
            .constants
            .iter()
            .map(|constant| {
                let slot = take(constant.dtype(), &mut slots, &mut free);
                constants.push((slot, constant.value.clone()));
                Operand::Slot(slot)
            })
            .collect();

        // The last instruction reading each node (outputs read at the end: never freed).
        let mut last_use: Vec<usize> = vec![usize::MAX; plan.nodes.len()];
        for (index, node) in plan.nodes.iter().enumerate() {
            for arg in &node.args {
                if let Value::Node(j) = *arg {
                    last_use[j] = index;
                }
            }
        }
        for output in &plan.outputs {
            if let Value::Node(j) = output.value {
                last_use[j] = usize::MAX;
            }
        }

        let mut node_slots: Vec<usize> = Vec::with_capacity(plan.nodes.len());
        let mut instrs = Vec::with_capacity(plan.nodes.len());
        let operand = |value: Value, node_slots: &[usize]| match value {
            Value::Input(i) => inputs[i],
            Value::Constant(i) => constant_slots[i],
            Value::Node(i) => Operand::Slot(node_slots[i]),
        };
        for (index, node) in plan.nodes.iter().enumerate() {
            let dest = take(node.dtype, &mut slots, &mut free);
            let mut args = [Operand::Slot(dest); 3];
            for (k, &arg) in node.args.iter().enumerate() {
                args[k] = operand(arg, &node_slots);
            }
            let arg_type = plan.dtype(if node.op == Op::Select {
                node.args[1]
            } else {
                node.args[0]
            });
            instrs.push(Instr {
                op: node.op,
                arg_type,
                out_type: node.dtype,
                args,
                dest,
                node: index,
            });
            node_slots.push(dest);
            let mut freed: Vec<usize> = Vec::new();
            for &arg in &node.args {
                if let Value::Node(j) = arg
                    && last_use[j] == index
                    && !freed.contains(&j)
                {
                    freed.push(j);
                    free[type_index(plan.nodes[j].dtype)].push(node_slots[j]);
                }
            }
        }
        let stores = plan
            .outputs
            .iter()
            .enumerate()
            .map(|(i, output)| (i, operand(output.value, &node_slots)))
            .collect();
        let widest = plan
            .inputs
            .iter()
            .map(|input| input.dtype.size())
            .chain(slots.iter().map(|d| d.size()))
            .chain(plan.outputs.iter().map(|o| o.dtype.size()))
            .max()
            .unwrap_or(1);
        Program {
            slots,
            constants,
            loads,
            instrs,
            stores,
            block: BLOCK_BYTES / widest,
        }
    }

    /// Sets the block length (elements), for the node-by-node baseline.
    pub(crate) fn set_block(&mut self, block: usize) {
        self.block = block;
    }

    /// Scratch bytes one task allocates for `n` elements.
    pub(crate) fn task_bytes(&self, n: usize) -> u64 {
        let len = self.block.min(n) as u64;
        self.slots.iter().map(|d| d.size() as u64 * len).sum()
    }
}

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
    data: ArrayRef<'a>,
    offset: usize,
    stride: usize,
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
    if n == 0 {
        return Ok(());
    }
    let ins: Vec<InPart<'_>> = plan
        .inputs
        .iter()
        .zip(inputs)
        .map(|(input, &data)| InPart {
            data,
            offset: input.view.offset,
            stride: input.view.stride,
        })
        .collect();
    let span = |stride: usize| (n - 1) * stride + 1;
    let outs = Outs(
        plan.outputs
            .iter()
            .zip(outputs.iter_mut())
            .map(|(output, data)| {
                let view = output.view;
                let reborrowed = reborrow(data);
                OutPart {
                    data: sub_array(reborrowed, view.offset..view.offset + span(view.stride)),
                    stride: view.stride,
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
        |check, range, mut outs| crate::dispatch::run_task(program, &ins, &mut outs, range, check),
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

/// One task: its range of elements, block by block. Compiled once per instruction set.
#[inline(always)]
pub(crate) fn run_task_inline(
    program: &Program,
    ins: &[InPart<'_>],
    outs: &mut Outs<'_>,
    range: Range<usize>,
    check: &Check<'_>,
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
        for instr in &program.instrs {
            if let Some(k) = execute(instr, ins, &mut slots, start, len)
                && zero.is_none_or(|(element, _)| start + k < element)
            {
                zero = Some((start + k, instr.node));
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
fn read<'s, T: Typed>(
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

impl Plan {
    /// Bytes of working memory a run over `n` elements allocates on `pool` beyond its inputs
    /// and outputs (see the module documentation of the executor for the formula).
    pub fn working_bytes(&self, n: usize, pool: &Pool) -> u64 {
        let program = Program::compile(self);
        program.task_bytes(n) * tasks_at_once(n, pool) as u64
    }
}

pub(crate) fn tasks_at_once(n: usize, pool: &Pool) -> usize {
    pool.workers().min(task_count(n, pool))
}

// Enough tasks for every worker and some slack, never more than the blocks (a task of one
// block is already cheap next to its slots).
pub(crate) fn task_count(n: usize, pool: &Pool) -> usize {
    if n < MIN_PER_WORKER {
        1
    } else {
        (pool.workers() * TASKS_PER_WORKER).min(n.div_ceil(1024))
    }
}
