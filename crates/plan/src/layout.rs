//! What a front end asks of a plan before any array reaches the engine: a run's [`Layout`] over
//! given shapes, the plan's signature, and whether a run can fail midway.

use crate::{DType, Op, Plan, RunError, RunMemory, bind, exec, quoted};

/// What a run over inputs of given dtypes and lengths computes and holds, known before any
/// array reaches the engine ([`Plan::layout`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The number of elements the run computes.
    pub elements: usize,
    /// Each output's length in elements (as long as its view needs), in declaration order.
    pub outputs: Vec<usize>,
    /// For each output, whether the run writes every element of its array (a dense view over
    /// exactly its length: nothing of the array's earlier contents survives the run). Always
    /// true for outputs of the layout's own lengths with dense views.
    pub covered: Vec<bool>,
    /// The run's memory: inputs, outputs and working memory on the stated worker count.
    pub memory: RunMemory,
}

impl Plan {
    /// The layout of a run over inputs of these `(dtype, length)` shapes, in declaration order,
    /// into outputs of these shapes (`None`: outputs the front end allocates, as long as the
    /// layout says), on `workers` workers: what a front end checks and reserves before it copies
    /// or moves any array (the same checks, word for word, [`Executor::run`](crate::Executor::run) makes on the arrays
    /// themselves).
    ///
    /// # Errors
    /// [`RunError::Binding`] for shapes that do not match the plan (count, dtype, a view past
    /// its array, disagreeing lengths), nothing that fixes the length, or an output whose span
    /// overflows.
    pub fn layout(
        &self,
        inputs: &[(DType, usize)],
        outputs: Option<&[(DType, usize)]>,
        workers: usize,
    ) -> Result<Layout, RunError> {
        self.layout_with(&exec::Program::compile(self), inputs, outputs, workers)
    }

    pub(crate) fn layout_with(
        &self,
        program: &exec::Program,
        inputs: &[(DType, usize)],
        outputs: Option<&[(DType, usize)]>,
        workers: usize,
    ) -> Result<Layout, RunError> {
        let fixed = bind::bind_shapes(self, inputs)?;
        let outputs_given = outputs;
        let n = match outputs {
            Some(outputs) => Some(bind::bind_output_shapes(self, fixed, outputs)? as u64),
            None => fixed,
        }
        .ok_or_else(|| RunError::Binding {
            at: "inputs".to_owned(),
            message: "nothing fixes the number of elements (no input, no view length)".to_owned(),
        })?;
        let spans = self
            .outputs
            .iter()
            .enumerate()
            .map(|(i, output)| {
                let at = format!("outputs[{i}] {}", quoted(&output.id));
                let span = output.view.span(n).ok_or_else(|| RunError::Binding {
                    at: at.clone(),
                    message: "its view's span overflows".to_owned(),
                })?;
                usize::try_from(span).map_err(|_| RunError::Binding {
                    at,
                    message: format!("{span} elements of {} cannot be allocated", output.dtype),
                })
            })
            .collect::<Result<Vec<usize>, RunError>>()?;
        // Every output's span holds the count (a plan has outputs), and each fits `usize`.
        let n = usize::try_from(n).expect("invariant: an output's span holds the run's elements");
        let bytes = |len: usize, dtype: DType| (len as u64).saturating_mul(dtype.size() as u64);
        let memory = RunMemory {
            inputs: inputs
                .iter()
                .map(|&(dtype, len)| bytes(len, dtype))
                .fold(0, u64::saturating_add),
            outputs: self
                .outputs
                .iter()
                .zip(&spans)
                .map(|(output, &len)| bytes(len, output.dtype))
                .fold(0, u64::saturating_add),
            working: program.task_bytes(n) * exec::tasks_at_once(n, workers.max(1)) as u64,
        };
        let covered = self
            .outputs
            .iter()
            .enumerate()
            .map(|(i, output)| {
                let len = outputs_given.map_or(spans[i], |given| given[i].1);
                output.view.offset == 0 && output.view.stride == 1 && spans[i] == len
            })
            .collect();
        Ok(Layout {
            elements: n,
            outputs: spans,
            covered,
            memory,
        })
    }

    /// The plan's inputs and outputs (ids and dtypes, in declaration order) as JSON, what a
    /// front end binds arrays by: `{"inputs":[{"id":"x","dtype":"f32"}],"outputs":[...]}`.
    pub fn signature_json(&self) -> String {
        let items = |items: Vec<(&str, DType)>| {
            items
                .into_iter()
                .map(|(id, dtype)| serde_json::json!({ "id": id, "dtype": dtype.name() }))
                .collect::<Vec<_>>()
        };
        serde_json::json!({
            "inputs": items(self.inputs.iter().map(|i| (i.id.as_str(), i.dtype)).collect()),
            "outputs": items(self.outputs.iter().map(|o| (o.id.as_str(), o.dtype)).collect()),
        })
        .to_string()
    }

    /// Whether a run of this plan can fail after it has started writing its outputs: only an
    /// integer division (by zero) can. A front end that must leave a caller's outputs untouched
    /// on error runs such a plan into arrays of its own and copies them on success.
    pub fn can_fail_midway(&self) -> bool {
        self.nodes
            .iter()
            .any(|node| node.op == Op::Div && !node.dtype.is_float())
    }
}
