//! A run's arguments as a JS front end passes them (the wasm module, the Node addon), read the
//! same way by each: shapes as dtype names and JS numbers, a budget as a JS number, and the
//! layout packed into the numbers JS reads back. The checks and their messages are these
//! functions', so every front end refuses the same arguments with the same words.

use crate::{CompiledPlan, DType, Layout, RunError};

/// The largest whole number a JS number holds exactly: 2^53.
const MAX_SAFE: f64 = 9_007_199_254_740_992.0;

/// A JS number that is a whole count (in `[0, 2^53]`), else `None`.
pub fn whole(value: f64) -> Option<u64> {
    if value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= MAX_SAFE {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a whole number in [0, 2^53]"
        )]
        Some(value as u64)
    } else {
        None
    }
}

/// `(dtype, length)` shapes from JS dtype names (`"f32"`, ...) and lengths, in order; `side`
/// (`"inputs"` or `"outputs"`) names them in errors.
///
/// # Errors
/// [`RunError::Binding`] for lists of different lengths, an unknown dtype name or a length that
/// is not a whole number (the first such index).
pub fn shapes(
    dtypes: &[String],
    lengths: &[f64],
    side: &str,
) -> Result<Vec<(DType, usize)>, RunError> {
    let binding = |at: String, message: String| RunError::Binding { at, message };
    if dtypes.len() != lengths.len() {
        return Err(binding(
            side.to_owned(),
            format!("{} dtypes for {} lengths", dtypes.len(), lengths.len()),
        ));
    }
    dtypes
        .iter()
        .zip(lengths)
        .enumerate()
        .map(|(i, (name, &len))| {
            let dtype = DType::from_name(name)
                .ok_or_else(|| binding(format!("{side}[{i}]"), format!("no dtype {name:?}")))?;
            let len = whole(len)
                .and_then(|len| usize::try_from(len).ok())
                .ok_or_else(|| binding(format!("{side}[{i}]"), format!("{len} is not a length")))?;
            Ok((dtype, len))
        })
        .collect()
}

/// A byte budget as JS passes it (`None`: no budget).
///
/// # Errors
/// [`RunError::Binding`] for a budget that is not a whole number.
pub fn budget(value: Option<f64>) -> Result<Option<u64>, RunError> {
    value
        .map(|b| {
            whole(b).ok_or_else(|| RunError::Binding {
                at: "budget".to_owned(),
                message: format!("must be a whole number of bytes, not {b}"),
            })
        })
        .transpose()
}

/// The layout of a run of `plan` over inputs of these dtype names and lengths, into outputs of
/// these (`None`: outputs the front end allocates), on `workers(elements)` workers (the front
/// end's count for the run's element count), held to `budget` bytes of inputs, outputs and
/// working memory, packed for JS ([`Layout::packed`]).
///
/// # Errors
/// As [`shapes`] and [`budget`]; as [`CompiledPlan::layout`] for shapes that do not fit the
/// plan; [`RunError::OverMemoryBudget`] over the budget.
pub fn packed_layout(
    plan: &CompiledPlan,
    (dtypes, lengths): (&[String], &[f64]),
    outputs: Option<(&[String], &[f64])>,
    workers: impl FnOnce(usize) -> usize,
    budget_bytes: Option<f64>,
) -> Result<Vec<f64>, RunError> {
    let inputs = shapes(dtypes, lengths, "inputs")?;
    let outputs = outputs
        .map(|(dtypes, lengths)| shapes(dtypes, lengths, "outputs"))
        .transpose()?;
    let budget_bytes = budget(budget_bytes)?;
    // The worker count depends on the element count, which the layout finds: two steps when it
    // is not one.
    let first = plan.layout(&inputs, outputs.as_deref(), 1)?;
    let count = workers(first.elements);
    let layout = if count == 1 {
        first
    } else {
        plan.layout(&inputs, outputs.as_deref(), count)?
    };
    layout.memory.check(budget_bytes)?;
    Ok(layout.packed())
}

impl Layout {
    /// The layout as JS numbers: `[elements, input bytes, output bytes, working bytes, output
    /// lengths..., output covered (1) or not (0)...]`.
    #[allow(
        clippy::cast_precision_loss,
        reason = "counts of bytes and elements a JS array holds, below 2^53"
    )]
    pub fn packed(&self) -> Vec<f64> {
        let mut out = vec![
            self.elements as f64,
            self.memory.inputs as f64,
            self.memory.outputs as f64,
            self.memory.working as f64,
        ];
        out.extend(self.outputs.iter().map(|&len| len as f64));
        out.extend(self.covered.iter().map(|&c| f64::from(u8::from(c))));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Plan;

    fn plan() -> CompiledPlan {
        CompiledPlan::new(
            Plan::from_json(
                r#"{"version":1,"inputs":[{"id":"x","dtype":"f32"}],
                    "nodes":[{"id":"y","op":"sqrt","args":["x"]}],
                    "outputs":[{"id":"out","from":"y"}]}"#,
            )
            .unwrap(),
        )
    }

    #[test]
    fn shapes_and_budgets_are_read_or_refused_by_index() {
        let names = |n: &[&str]| n.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            shapes(&names(&["f32", "u8"]), &[3.0, 0.0], "inputs").unwrap(),
            [(DType::F32, 3), (DType::U8, 0)]
        );
        for (dtypes, lengths, message) in [
            (names(&["f32"]), vec![], "inputs: 1 dtypes for 0 lengths"),
            (
                names(&["f32", "f16"]),
                vec![1.0, 1.0],
                "inputs[1]: no dtype \"f16\"",
            ),
            (names(&["f32"]), vec![1.5], "inputs[0]: 1.5 is not a length"),
            (names(&["f32"]), vec![-1.0], "inputs[0]: -1 is not a length"),
            (
                names(&["f32"]),
                vec![f64::NAN],
                "inputs[0]: NaN is not a length",
            ),
        ] {
            let error = shapes(&dtypes, &lengths, "inputs").unwrap_err();
            assert_eq!(
                (error.to_string().as_str(), error.code()),
                (message, "PLAN_BINDING")
            );
        }
        assert_eq!(budget(None).unwrap(), None);
        assert_eq!(budget(Some(4096.0)).unwrap(), Some(4096));
        assert_eq!(
            budget(Some(0.5)).unwrap_err().to_string(),
            "budget: must be a whole number of bytes, not 0.5"
        );
        assert_eq!(whole(MAX_SAFE), Some(1 << 53));
        assert_eq!(whole(MAX_SAFE * 2.0), None);
    }

    #[test]
    fn the_packed_layout_is_the_engine_layout_at_the_front_ends_worker_count() {
        let plan = plan();
        let dtypes = ["f32".to_owned()];
        for workers in [1, 2, 5] {
            let packed =
                packed_layout(&plan, (&dtypes, &[1000.0]), None, |_| workers, None).unwrap();
            let layout = plan.layout(&[(DType::F32, 1000)], None, workers).unwrap();
            assert_eq!(packed, layout.packed());
            assert_eq!(packed[..2], [1000.0, 4000.0]);
            assert_eq!(packed[4..], [1000.0, 1.0]);
        }
        let mut asked = None;
        packed_layout(&plan, (&dtypes, &[77.0]), None, |n| *asked.insert(n), None).unwrap();
        assert_eq!(
            asked,
            Some(77),
            "the worker count is asked for the run's elements"
        );
        let within = packed_layout(&plan, (&dtypes, &[10.0]), None, |_| 1, None).unwrap();
        let total = within[1] + within[2] + within[3];
        packed_layout(&plan, (&dtypes, &[10.0]), None, |_| 1, Some(total)).unwrap();
        let error =
            packed_layout(&plan, (&dtypes, &[10.0]), None, |_| 1, Some(total - 1.0)).unwrap_err();
        assert_eq!(error.code(), "PLAN_BUDGET");
        let outs = ["f32".to_owned()];
        let error = packed_layout(
            &plan,
            (&dtypes, &[10.0]),
            Some((&outs, &[9.0])),
            |_| 1,
            None,
        )
        .unwrap_err();
        assert_eq!(error.code(), "PLAN_BINDING");
    }
}
