//! Fused runs: chains of one-dtype arithmetic, each instruction taking the previous result as
//! its first argument and nothing else reading it, evaluated [`TILE`] elements at a time with the
//! chain value in registers (one load per operand and one store per tile, not per instruction).

use super::ir::{Instr, Operand, Run, RunOp, Step, TILE};
use super::parts::{InPart, read};
use crate::elem::{Elem, Typed};
use crate::{Array, Op};

/// Runs a fused run over one block, compiled for an instruction set (see `dispatch`): the task
/// loop is generic over it, so it never names the dispatch that chose it.
pub(crate) trait FusedRunner {
    /// `run` over the block of `len` elements from `start`.
    fn run<T: Typed>(
        &self,
        run: &Run,
        ins: &[InPart<'_>],
        slots: &mut [Array],
        start: usize,
        len: usize,
    );
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
//
// Linear in the instructions: whether a slot is read by the pending run is one stamp per slot
// (the run's number), not a scan of the run, so a chain of 200,000 nodes groups in one pass.
pub(crate) fn fuse(
    instrs: Vec<Instr>,
    slots: usize,
    last_use: &[usize],
    outputs: &[usize],
    constants: &[usize],
) -> Vec<Step> {
    let mut is_output = vec![false; last_use.len()];
    for &node in outputs {
        is_output[node] = true;
    }
    let mut is_constant = vec![false; slots];
    for &slot in constants {
        is_constant[slot] = true;
    }
    // What a run reads of an instruction: all its arguments if it starts the run, else all but
    // the chain value (which stays in registers).
    fn reads(instr: &Instr, starts: bool) -> &[Operand] {
        &instr.args[usize::from(!starts)..instr.op.arity()]
    }
    let private = |prev: &Instr, next: &Instr| {
        let value = Operand::Slot(prev.dest);
        last_use[prev.node] == next.node
            && !is_output[prev.node]
            && next.args[0] == value
            && !next.args[1..next.op.arity()].contains(&value)
    };
    // `read_by[slot] == run`: the pending run (numbered `run`) reads `slot`.
    let mut read_by = vec![0usize; slots];
    let mut run = 1usize;
    let mut steps = Vec::with_capacity(instrs.len());
    let mut pending: Vec<Instr> = Vec::new();
    let flush = |pending: &mut Vec<Instr>, steps: &mut Vec<Step>, run: &mut usize| {
        *run += 1;
        match pending.len() {
            0 => {}
            1 => steps.push(Step::One(pending.remove(0))),
            _ => {
                let first = &pending[0];
                let last = &pending[pending.len() - 1];
                let scalar =
                    |operand: Operand| matches!(operand, Operand::Slot(s) if is_constant[s]);
                let fused = Run {
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
                steps.push(Step::Fused(fused));
                pending.clear();
            }
        }
    };
    for instr in instrs {
        if !fusable(&instr) {
            flush(&mut pending, &mut steps, &mut run);
            steps.push(Step::One(instr));
            continue;
        }
        let extends = pending.last().is_some_and(|prev| {
            prev.arg_type == instr.arg_type
                && private(prev, &instr)
                && read_by[instr.dest] != run
                && !reads(&instr, false).contains(&Operand::Slot(instr.dest))
        });
        if !extends {
            flush(&mut pending, &mut steps, &mut run);
        }
        for operand in reads(&instr, pending.is_empty()) {
            if let Operand::Slot(slot) = *operand {
                read_by[slot] = run;
            }
        }
        pending.push(instr);
    }
    flush(&mut pending, &mut steps, &mut run);
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

#[cfg(test)]
mod tests {
    use super::super::program::Program;
    use super::*;
    use crate::Plan;

    fn steps(nodes: &str, outputs: &str) -> Vec<Step> {
        let text = format!(
            r#"{{"version":1,"inputs":[{{"id":"x","dtype":"i32"}},{{"id":"k","dtype":"i32"}}],
              "nodes":[{nodes}],"outputs":[{outputs}]}}"#
        );
        Program::compile(&Plan::from_json(&text).unwrap()).steps
    }

    fn shape(steps: &[Step]) -> Vec<usize> {
        steps
            .iter()
            .map(|s| match s {
                Step::One(_) => 1,
                Step::Fused(run) => run.ops.len(),
            })
            .collect()
    }

    #[test]
    fn runs_stop_at_integer_division_outputs_and_shared_values() {
        // a = x + k, b = a * k, c = b / k (integer: checked, never fused), d = c - x, e = d + d.
        let nodes = r#"{"id":"a","op":"add","args":["x","k"]},
            {"id":"b","op":"mul","args":["a","k"]},
            {"id":"c","op":"div","args":["b","k"]},
            {"id":"d","op":"sub","args":["c","x"]},
            {"id":"e","op":"add","args":["d","d"]}"#;
        // `e` reads `d` twice, so `d` would be both the chain value and an operand: `d` and `e`
        // are not one run, and the only run is a, b.
        assert_eq!(
            shape(&steps(nodes, r#"{"id":"y","from":"e"}"#)),
            [2, 1, 1, 1]
        );
        // An output in the middle of a chain cuts it: `a` must be stored.
        assert_eq!(
            shape(&steps(
                nodes,
                r#"{"id":"y","from":"e"},{"id":"z","from":"a"}"#
            )),
            [1, 1, 1, 1, 1]
        );
    }

    #[test]
    fn a_value_read_by_two_nodes_ends_the_run_before_it() {
        // a = x + k; b = a + k; c = a * b: `a` is read again by `c`, so it must live in its slot.
        let nodes = r#"{"id":"a","op":"add","args":["x","k"]},
            {"id":"b","op":"add","args":["a","k"]},
            {"id":"c","op":"mul","args":["a","b"]}"#;
        assert_eq!(shape(&steps(nodes, r#"{"id":"y","from":"c"}"#)), [1, 1, 1]);
    }
}
