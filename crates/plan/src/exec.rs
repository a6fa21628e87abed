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

use std::ops::Range;

use lockstep_shard::{Check, Control, Cut, Error, Parts, Pool};

use crate::dtype::with_type;
use crate::elem::{Elem, Typed};
use crate::{Array, ArrayMut, ArrayRef, DType, Op, Plan, RunError, Value, kernels};

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// What a block runs, in order: single instructions, and runs of instructions fused into one
/// pass over register-sized tiles.
#[derive(Debug)]
enum Step {
    One(Instr),
    Fused(Run),
}

/// A chain of arithmetic instructions of one dtype, each taking the previous one's result as its
/// first argument and nothing else using it: evaluated [`TILE`] elements at a time with the chain
/// value held in registers, one load per operand and one store per tile (not per instruction).
#[derive(Debug)]
pub(crate) struct Run {
    dtype: DType,
    /// The first instruction's first argument.
    first: Operand,
    ops: Vec<RunOp>,
    /// The last instruction's slot.
    dest: usize,
}

#[derive(Clone, Copy, Debug)]
struct RunOp {
    op: Op,
    /// The other arguments (those past the op's arity are not read); `scalar`: a constant's
    /// slot, read once as one value.
    args: [(Operand, bool); 2],
}

/// Elements per fused tile: 64 (eight 256-bit registers of `f32`).
const TILE: usize = 64;

/// A plan compiled for one block length.
#[derive(Debug)]
pub(crate) struct Program {
    slots: Vec<DType>,
    /// Slots filled once per task with a constant (of one element).
    constants: Vec<(usize, Array)>,
    loads: Vec<(usize, usize)>,
    steps: Vec<Step>,
    stores: Vec<(usize, Operand)>,
    block: usize,
}

impl Program {
    pub(crate) fn compile(plan: &Plan) -> Program {
        Self::compile_with(plan, true)
    }

    /// `fuse`: whether chains become fused runs (the node-by-node baseline keeps every
    /// instruction a pass of its own).
    pub(crate) fn compile_with(plan: &Plan, fuse_runs: bool) -> Program {
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
        let output_nodes: Vec<usize> = plan
            .outputs
            .iter()
            .filter_map(|o| match o.value {
                Value::Node(j) => Some(j),
                _ => None,
            })
            .collect();
        let constant_slots: Vec<usize> = constants.iter().map(|(slot, _)| *slot).collect();
        let steps = if fuse_runs {
            fuse(instrs, &last_use, &output_nodes, &constant_slots)
        } else {
            instrs.into_iter().map(Step::One).collect()
        };
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
            steps,
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
                    with_type!(run.dtype, T => crate::dispatch::run_fused::<T>(run, ins, &mut slots, start, len))
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

fn fusable(instr: &Instr) -> bool {
    match instr.op {
        Op::Add | Op::Sub | Op::Mul | Op::Min | Op::Max | Op::Neg | Op::Abs | Op::Fma => true,
        // Integer division checks for zero divisors: it stays a single instruction.
        Op::Div | Op::Sqrt => instr.arg_type.is_float(),
        _ => false,
    }
}

// Groups the instructions into steps: each maximal chain of two or more fusable instructions of
// one dtype, where each takes the previous result as its first argument and nothing else reads
// that result, becomes one fused run, unless its destination slot is also one of its operands
// (the run would overwrite what it still reads: the chain is cut there).
fn fuse(
    instrs: Vec<Instr>,
    last_use: &[usize],
    outputs: &[usize],
    constants: &[usize],
) -> Vec<Step> {
    // What a run reads of an instruction: all its arguments if it starts the run, else all but
    // the chain value (which stays in registers).
    let reads = |instr: &Instr, starts: bool| -> Vec<Operand> {
        instr.args[usize::from(!starts)..instr.op.arity()].to_vec()
    };
    let private = |prev: &Instr, next: &Instr| {
        let value = Operand::Slot(prev.dest);
        last_use[prev.node] == next.node
            && !outputs.contains(&prev.node)
            && next.args[0] == value
            && !next.args[1..next.op.arity()].contains(&value)
    };
    let mut steps = Vec::with_capacity(instrs.len());
    let mut pending: Vec<Instr> = Vec::new();
    let flush = |pending: &mut Vec<Instr>, steps: &mut Vec<Step>| match pending.len() {
        0 => {}
        1 => steps.push(Step::One(pending.remove(0))),
        _ => {
            let first = &pending[0];
            let last = &pending[pending.len() - 1];
            let scalar =
                |operand: Operand| matches!(operand, Operand::Slot(s) if constants.contains(&s));
            let run = Run {
                dtype: first.arg_type,
                first: first.args[0],
                ops: pending
                    .iter()
                    .map(|i| RunOp {
                        op: i.op,
                        args: [
                            (i.args[1], scalar(i.args[1])),
                            (i.args[2], scalar(i.args[2])),
                        ],
                    })
                    .collect(),
                dest: last.dest,
            };
            steps.push(Step::Fused(run));
            pending.clear();
        }
    };
    for instr in instrs {
        if !fusable(&instr) {
            flush(&mut pending, &mut steps);
            steps.push(Step::One(instr));
            continue;
        }
        let extends = pending.last().is_some_and(|prev| {
            prev.arg_type == instr.arg_type
                && private(prev, &instr)
                && !pending
                    .iter()
                    .chain(std::iter::once(&instr))
                    .enumerate()
                    .any(|(k, i)| reads(i, k == 0).contains(&Operand::Slot(instr.dest)))
        });
        if !extends {
            flush(&mut pending, &mut steps);
        }
        pending.push(instr);
    }
    flush(&mut pending, &mut steps);
    steps
}

// A fused run over one block: tile by tile, the chain value in a fixed-size array the compiler
// keeps in registers, each op applied to the whole tile in turn.
#[inline(always)]
pub(crate) fn execute_run<T: Typed>(
    run: &Run,
    ins: &[InPart<'_>],
    slots: &mut [Array],
    start: usize,
    len: usize,
) {
    let mut dest = std::mem::replace(&mut slots[run.dest], Array::U8(Vec::new()));
    {
        let out = &mut <T as Typed>::of_mut(&mut dest)[..len];
        let slots: &[Array] = slots;
        let first = read::<T>(run.first, ins, slots, start, len);
        // Each op's other arguments: a constant's value, or the block's elements.
        let arg = |operand: Operand, scalar: bool| -> Arg<'_, T> {
            if scalar {
                Arg::Scalar(read::<T>(operand, ins, slots, start, 1)[0])
            } else {
                Arg::Block(read::<T>(operand, ins, slots, start, len))
            }
        };
        let args: Vec<[Arg<'_, T>; 2]> = run
            .ops
            .iter()
            .map(|op| {
                let used = op.op.arity() - 1; // the chain value is the first argument
                let get = |k: usize| {
                    if k < used {
                        arg(op.args[k].0, op.args[k].1)
                    } else {
                        Arg::Scalar(T::default())
                    }
                };
                [get(0), get(1)]
            })
            .collect();
        let whole = len - len % TILE;
        for at in (0..whole).step_by(TILE) {
            let mut v = [T::default(); TILE];
            v.copy_from_slice(&first[at..at + TILE]);
            for (op, [b, c]) in run.ops.iter().zip(&args) {
                apply_tile(op.op, &mut v, b, c, at);
            }
            out[at..at + TILE].copy_from_slice(&v);
        }
        // The block's last elements, one at a time (the same ops, the same order).
        for i in whole..len {
            let mut x = first[i];
            for (op, [b, c]) in run.ops.iter().zip(&args) {
                x = apply_one(op.op, x, b.at(i), c.at(i));
            }
            out[i] = x;
        }
    }
    slots[run.dest] = dest;
}

#[derive(Clone, Copy)]
enum Arg<'a, T> {
    Scalar(T),
    Block(&'a [T]),
}

impl<T: Typed> Arg<'_, T> {
    #[inline(always)]
    fn at(&self, i: usize) -> T {
        match self {
            Arg::Scalar(x) => *x,
            Arg::Block(block) => block[i],
        }
    }

    // A tile of this argument, copied into a local array: borrowing the block's elements in
    // place instead kept the chain value out of registers (measured: 3.6x slower).
    #[inline(always)]
    fn tile(&self, at: usize) -> [T; TILE] {
        match self {
            Arg::Scalar(x) => [*x; TILE],
            Arg::Block(block) => {
                let mut tile = [T::default(); TILE];
                tile.copy_from_slice(&block[at..at + TILE]);
                tile
            }
        }
    }
}

// One op over a whole tile held in `v` (registers): a constant stays one value, a block
// argument is read a tile at a time.
#[inline(always)]
fn apply_tile<T: Typed>(op: Op, v: &mut [T; TILE], b: &Arg<'_, T>, c: &Arg<'_, T>, at: usize) {
    macro_rules! binary {
        ($f:expr) => {
            match b {
                Arg::Scalar(y) => {
                    let y = *y;
                    for lane in v.iter_mut() {
                        *lane = $f(*lane, y);
                    }
                }
                Arg::Block(_) => {
                    for (lane, y) in v.iter_mut().zip(b.tile(at)) {
                        *lane = $f(*lane, y);
                    }
                }
            }
        };
    }
    macro_rules! unary {
        ($f:expr) => {
            for lane in v.iter_mut() {
                *lane = $f(*lane);
            }
        };
    }
    match op {
        Op::Add => binary!(<T as Elem>::add),
        Op::Sub => binary!(<T as Elem>::sub),
        Op::Mul => binary!(<T as Elem>::mul),
        Op::Div => binary!(<T as Elem>::div),
        Op::Min => binary!(<T as Elem>::min),
        Op::Max => binary!(<T as Elem>::max),
        Op::Neg => unary!(<T as Elem>::neg),
        Op::Abs => unary!(<T as Elem>::abs),
        Op::Sqrt => unary!(<T as Elem>::sqrt),
        Op::Fma => {
            let (y, z) = (b.tile(at), c.tile(at));
            for ((lane, y), z) in v.iter_mut().zip(y).zip(z) {
                *lane = <T as Elem>::fma(*lane, y, z);
            }
        }
        _ => unreachable!("invariant: only fusable ops are in a run"),
    }
}

#[inline(always)]
fn apply_one<T: Typed>(op: Op, x: T, y: T, z: T) -> T {
    match op {
        Op::Add => <T as Elem>::add(x, y),
        Op::Sub => <T as Elem>::sub(x, y),
        Op::Mul => <T as Elem>::mul(x, y),
        Op::Div => <T as Elem>::div(x, y),
        Op::Min => <T as Elem>::min(x, y),
        Op::Max => <T as Elem>::max(x, y),
        Op::Neg => <T as Elem>::neg(x),
        Op::Abs => <T as Elem>::abs(x),
        Op::Sqrt => <T as Elem>::sqrt(x),
        Op::Fma => <T as Elem>::fma(x, y, z),
        _ => unreachable!("invariant: only fusable ops are in a run"),
    }
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
