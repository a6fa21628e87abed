//! Checking the arrays of a run against the plan, before anything is computed or allocated.

use crate::quote::quoted;
use crate::{ArrayMut, ArrayRef, DType, Plan, RunError};

/// The inputs checked against the plan: the number of elements they fix (the plan's fixed
/// length, else what the first input's view takes from its array), `None` if the plan has no
/// inputs and no fixed length.
///
/// # Errors
/// [`RunError::Binding`] for a wrong number of inputs, a dtype that is not the plan's, a view
/// that reaches past its array, or inputs whose views take different numbers of elements.
pub(crate) fn bind_inputs(plan: &Plan, inputs: &[ArrayRef<'_>]) -> Result<Option<u64>, RunError> {
    let shapes: Vec<(DType, usize)> = inputs.iter().map(|a| (a.dtype(), a.len())).collect();
    bind_shapes(plan, &shapes)
}

/// [`bind_inputs`] over the inputs' dtypes and lengths alone (a front end checks a run before
/// its arrays reach the engine's memory). The count is a `u64`: with inputs it is at most an
/// input's length, but a plan without inputs may fix more than this target addresses.
pub(crate) fn bind_shapes(plan: &Plan, inputs: &[(DType, usize)]) -> Result<Option<u64>, RunError> {
    let binding = |at: String, message: String| RunError::Binding { at, message };
    if inputs.len() != plan.inputs.len() {
        return Err(binding(
            "inputs".to_owned(),
            format!(
                "the plan has {} inputs, the run passed {}",
                plan.inputs.len(),
                inputs.len()
            ),
        ));
    }
    let mut length: Option<(u64, String)> = plan.length.map(|n| (n, "the plan".to_owned()));
    for (i, (input, &(dtype, len))) in plan.inputs.iter().zip(inputs).enumerate() {
        let at = format!("inputs[{i}] {}", quoted(&input.id));
        if dtype != input.dtype {
            return Err(binding(
                at,
                format!("the plan reads {}, the array holds {dtype}", input.dtype),
            ));
        }
        let n = input.view.fitting(len);
        match &length {
            Some((fixed, by)) if *fixed != n && input.view.length.is_none() => {
                return Err(binding(
                    at,
                    format!("its view takes {n} elements of its {len} but {by} has {fixed}"),
                ));
            }
            Some(_) => {}
            None => length = Some((n, at.clone())),
        }
    }
    let Some((n, _)) = length else {
        return Ok(None);
    };
    for (i, (input, &(_, len))) in plan.inputs.iter().zip(inputs).enumerate() {
        let span = input.view.span(n);
        if span.is_none_or(|span| span > len as u64) {
            return Err(binding(
                format!("inputs[{i}] {}", quoted(&input.id)),
                format!(
                    "{n} elements at offset {} stride {} reach past its {len} elements",
                    input.view.offset, input.view.stride,
                ),
            ));
        }
    }
    Ok(Some(n))
}

/// The number of elements a run computes ([`bind_inputs`], else what the first output's view
/// fits in its array), with the outputs checked too.
///
/// # Errors
/// As [`bind_inputs`], and for a wrong number of outputs, a dtype that is not the plan's, or a
/// view that reaches past its array.
pub(crate) fn bind(
    plan: &Plan,
    inputs: &[ArrayRef<'_>],
    outputs: &[ArrayMut<'_>],
) -> Result<usize, RunError> {
    let fixed = bind_inputs(plan, inputs)?;
    let shapes: Vec<(DType, usize)> = outputs.iter().map(|a| (a.dtype(), a.len())).collect();
    bind_output_shapes(plan, fixed, &shapes)
}

/// The outputs' checks of [`bind`] over their dtypes and lengths alone, given what the inputs
/// fixed.
///
/// # Panics
/// Never: every output's span holds the count, and the span fits its array.
pub(crate) fn bind_output_shapes(
    plan: &Plan,
    fixed: Option<u64>,
    outputs: &[(DType, usize)],
) -> Result<usize, RunError> {
    let binding = |at: String, message: String| RunError::Binding { at, message };
    if outputs.len() != plan.outputs.len() {
        return Err(binding(
            "outputs".to_owned(),
            format!(
                "the plan has {} outputs, the run passed {}",
                plan.outputs.len(),
                outputs.len()
            ),
        ));
    }
    let n = match fixed {
        Some(n) => n,
        None => plan.outputs[0].view.fitting(outputs[0].1),
    };
    for (i, (output, &(dtype, len))) in plan.outputs.iter().zip(outputs).enumerate() {
        let at = format!("outputs[{i}] {}", quoted(&output.id));
        if dtype != output.dtype {
            return Err(binding(
                at,
                format!("the plan writes {}, the array holds {dtype}", output.dtype),
            ));
        }
        let span = output.view.span(n);
        if span.is_none_or(|span| span > len as u64) {
            return Err(binding(
                at,
                format!(
                    "{n} elements at offset {} stride {} reach past its {len} elements",
                    output.view.offset, output.view.stride,
                ),
            ));
        }
    }
    // A plan has an output (validation), whose span (at least `n`) fits its array.
    Ok(usize::try_from(n).expect("invariant: an output's array holds the run's elements"))
}
