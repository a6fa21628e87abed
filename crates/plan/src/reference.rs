//! The node-by-node scalar reference: each node computed over all elements into a full array,
//! one element at a time, in evaluation order. The fused executor must give its bytes exactly.
//! It is also the "node-by-node" baseline of the bench.

use crate::dtype::with_type;
use crate::elem::{CastFrom, Elem, Typed};
use crate::{Array, ArrayMut, ArrayRef, Op, Plan, RunError, Value};

/// Runs `plan` node by node over `inputs`, writing `outputs` (declaration order each).
///
/// # Errors
/// As [`Plan::run`](crate::Plan::run), minus budget and cancellation: the same binding errors and
/// the same division by zero (lowest element, then first node in evaluation order). On error
/// nothing is written.
pub fn run(
    plan: &Plan,
    inputs: &[ArrayRef<'_>],
    outputs: &mut [ArrayMut<'_>],
) -> Result<(), RunError> {
    let n = crate::bind::bind(plan, inputs, outputs)?;
    let gathered: Vec<Array> = plan
        .inputs
        .iter()
        .zip(inputs)
        .map(|(input, &array)| {
            with_type!(input.dtype, T => {
                let data = <T as Typed>::of_ref(array);
                Array::from((0..n).map(|i| data[input.view.index(i)]).collect::<Vec<T>>())
            })
        })
        .collect();
    let broadcast: Vec<Array> = plan
        .constants
        .iter()
        .map(|constant| {
            with_type!(constant.dtype(), T => Array::from(vec![<T as Typed>::of(&constant.value)[0]; n]))
        })
        .collect();
    let mut values: Vec<Array> = Vec::with_capacity(plan.nodes.len());
    let mut zero: Option<(usize, usize)> = None; // (element, node)
    for (index, node) in plan.nodes.iter().enumerate() {
        let args: Vec<&Array> = node
            .args
            .iter()
            .map(|&value| match value {
                Value::Input(i) => &gathered[i],
                Value::Constant(i) => &broadcast[i],
                Value::Node(i) => &values[i],
            })
            .collect();
        let (array, first_zero) = evaluate(node.op, node.dtype, &args, n);
        if let Some(element) = first_zero
            && zero.is_none_or(|(lowest, _)| element < lowest)
        {
            zero = Some((element, index));
        }
        values.push(array);
    }
    if let Some((element, node)) = zero {
        return Err(RunError::DivisionByZero {
            node: plan.nodes[node].id.clone(),
            element,
        });
    }
    for (output, array) in plan.outputs.iter().zip(outputs.iter_mut()) {
        let value = match output.value {
            Value::Input(i) => &gathered[i],
            Value::Node(i) => &values[i],
            Value::Constant(_) => unreachable!("invariant: validation refuses constant outputs"),
        };
        with_type!(output.dtype, T => {
            let from = <T as Typed>::of(value);
            let to = <T as Typed>::of_out(array);
            for (i, &x) in from.iter().enumerate() {
                to[output.view.index(i)] = x.canonical();
            }
        });
    }
    Ok(())
}

// One node over whole arrays; for an integer division, also the first element whose divisor is
// zero (its result is 0, and the run fails).
fn evaluate(op: Op, dtype: crate::DType, args: &[&Array], n: usize) -> (Array, Option<usize>) {
    let arg_type = if op == Op::Select {
        args[1].dtype()
    } else {
        args[0].dtype()
    };
    if op == Op::Cast {
        return (cast(args[0], dtype), None);
    }
    with_type!(arg_type, T => {
        if op.is_compare() {
            let a = <T as Typed>::of(args[0]);
            let b = <T as Typed>::of(args[1]);
            let out: Vec<u8> = (0..n).map(|i| u8::from(compare(op, a[i], b[i]))).collect();
            return (Array::from(out), None);
        }
        if op == Op::Select {
            let mask = <u8 as Typed>::of(args[0]);
            let (x, y) = (<T as Typed>::of(args[1]), <T as Typed>::of(args[2]));
            let out: Vec<T> = (0..n).map(|i| if mask[i] != 0 { x[i] } else { y[i] }).collect();
            return (Array::from(out), None);
        }
        let a = <T as Typed>::of(args[0]);
        let mut first_zero = None;
        let out: Vec<T> = (0..n)
            .map(|i| match op {
                Op::Add => <T as Elem>::add(a[i], <T as Typed>::of(args[1])[i]),
                Op::Sub => <T as Elem>::sub(a[i], <T as Typed>::of(args[1])[i]),
                Op::Mul => <T as Elem>::mul(a[i], <T as Typed>::of(args[1])[i]),
                Op::Div => {
                    let b = <T as Typed>::of(args[1])[i];
                    if <T as Elem>::is_zero(b) {
                        first_zero.get_or_insert(i);
                        T::default()
                    } else {
                        <T as Elem>::div(a[i], b)
                    }
                }
                Op::Min => <T as Elem>::min(a[i], <T as Typed>::of(args[1])[i]),
                Op::Max => <T as Elem>::max(a[i], <T as Typed>::of(args[1])[i]),
                Op::Neg => <T as Elem>::neg(a[i]),
                Op::Abs => <T as Elem>::abs(a[i]),
                Op::Sqrt => <T as Elem>::sqrt(a[i]),
                Op::Fma => <T as Elem>::fma(a[i], <T as Typed>::of(args[1])[i], <T as Typed>::of(args[2])[i]),
                _ => unreachable!("invariant: casts, compares and selects are handled above"),
            })
            .collect();
        (Array::from(out), first_zero)
    })
}

fn compare<T: Elem>(op: Op, a: T, b: T) -> bool {
    match op {
        Op::Eq => a == b,
        Op::Ne => a != b,
        Op::Lt => a < b,
        Op::Le => a <= b,
        Op::Gt => a > b,
        Op::Ge => a >= b,
        _ => unreachable!("invariant: a compare op"),
    }
}

fn cast(from: &Array, to: crate::DType) -> Array {
    with_type!(from.dtype(), F => {
        let a = <F as Typed>::of(from);
        with_type!(to, T => Array::from(a.iter().map(|&x| <T as CastFrom<F>>::cast_from(x)).collect::<Vec<T>>()))
    })
}
