//! Typed-array compute plans: a validated DAG of element-wise ops over eight dtypes, run fused
//! block by block on the shard runtime, bit-identical to a node-by-node scalar reference at
//! every worker count.
//!
//! # Brief overview
//!
//! - [`Plan::from_json`] reads plan format v1 ([`mod@format`]) and validates it: every error names
//!   the item and the field.
//! - [`DType`]: `i8 u8 i16 u16 i32 u32 f32 f64`; [`Op`]: add, sub, mul, div, min, max, neg,
//!   abs, sqrt, fma, cast, eq, ne, lt, le, gt, ge, select. Integer arithmetic wraps; integer
//!   division by zero is an error naming the node and the element; casts are explicit; floats
//!   are IEEE ([`elem`](crate#semantics) below).
//! - [`View`]: inputs and outputs read and write through offset, stride and length, bounds
//!   checked before the run.
//! - [`Executor`] (from [`Plan::executor`]): the plan compiled once into a register program
//!   over block-sized slots, run block by block, blocks split across a [`Pool`]'s workers,
//!   kernels vectorized (AVX2 + FMA when the CPU has them, see [`instruction_set`]; [`ISA_ENV`]
//!   forces the baseline).
//! - [`Plan::working_bytes`]: the run's extra memory, known before the run; a budget refuses a
//!   run over it before anything is allocated.
//! - [`mod@reference`]: the node-by-node scalar reference the executor must equal bit for bit.
//! - [`npy`]: numpy's `.npy` files in and out (one-dimensional, little-endian);
//!   [`ArrayFormat`]: which of `.npy` and raw a file is, by its name, as every front end reads
//!   and writes arrays; [`Plan::bind_by_name`]: inputs and outputs bound by name.
//! - [`GRAIN`]: how many elements a worker must get.
//!
//! ```
//! use lockstep_plan::{Array, Plan, RunOptions};
//! use lockstep_shard::{Control, Pool};
//!
//! let plan = Plan::from_json(r#"{
//!     "version": 1,
//!     "inputs": [{ "id": "x", "dtype": "f32" }],
//!     "constants": [{ "id": "two", "dtype": "f32", "value": 2 }],
//!     "nodes": [{ "id": "y", "op": "fma", "args": ["x", "two", "x"] }],
//!     "outputs": [{ "id": "out", "from": "y" }]
//! }"#)?;
//! let x = Array::from(vec![1.0f32, 2.5, -4.0]);
//! let out = plan.run_to_arrays(&Pool::new(2)?, &Control::new(), &[x.as_array_ref()], &RunOptions::default())?;
//! assert_eq!(out, [Array::from(vec![3.0f32, 7.5, -12.0])]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Semantics
//! Integers wrap (two's complement), `abs(MIN)` is `MIN`, `MIN / -1` is `MIN`; `min(a, b)` is
//! `a < b ? a : b` and `max(a, b)` is `a > b ? a : b` (so for floats a NaN in `a` gives `b`, a NaN
//! in `b` gives NaN); comparisons give `u8` 1 or 0; `select(mask, a, b)` takes `a` where the `u8`
//! mask is not 0; `fma` rounds once, every other float op rounds each step; casts are Rust's
//! `as` (integers wrap or extend, floats to integers truncate and saturate with NaN to 0).
//! Every NaN an output holds is the quiet NaN with sign 0 and no payload (`0x7fc0_0000`,
//! `0x7ff8_0000_0000_0000`), a NaN input passed through included: processors disagree on a NaN
//! result's sign, so outputs are byte-identical across worker counts, machines and front ends.
//!
//! # Memory
//! A run allocates [`Plan::working_bytes`] beyond its inputs and outputs: per task at once,
//! one block of each slot. Nothing grows with the number of elements.
#![deny(unsafe_code)]

mod array_file;
mod bind;
mod constant;
mod dtype;
mod elem;
mod error;
mod exec;
pub mod format;
mod kernels;
pub mod npy;
mod op;
mod plan;
mod quote;
pub mod reference;
mod stream;

pub use array_file::{ArrayFileError, ArrayFormat, BindingError, Side};
pub use dtype::{Array, ArrayMut, ArrayRef, DType, LengthError};
pub use error::{PlanError, RunError};
pub use exec::{ISA_ENV, instruction_set};
pub use op::Op;
pub use plan::{Constant, Input, MAX_NODES, MAX_VIEW_NUMBER, Node, Output, Plan, Value, View};

pub use quote::{MAX_ECHO, Quoted, escaped, parser_message, quoted};
pub use stream::StreamError;

use lockstep_shard::{Control, Grain, Pool};

/// The plan engine's shard grain: a worker gets at least 32,768 elements (two blocks of f32 at
/// the least, tens of microseconds of fused work), below which a thread costs more than it
/// saves. Ask the shard policy for a run's workers in it: `policy.decide(elements, GRAIN)`.
pub const GRAIN: Grain = Grain::new(exec::MIN_PER_WORKER, "elements");

/// Options of a run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// The most working memory (bytes beyond inputs and outputs) the run may allocate; a run
    /// that would need more fails with [`RunError::OverBudget`] before allocating anything.
    pub budget: Option<u64>,
}

/// A plan compiled for runs: compile once, run many times (the per-run cost is then binding
/// the arrays and allocating the slots).
#[derive(Debug)]
pub struct Executor<'p> {
    plan: &'p Plan,
    program: exec::Program,
}

impl Plan {
    /// The plan compiled for the fused executor.
    pub fn executor(&self) -> Executor<'_> {
        Executor {
            plan: self,
            program: exec::Program::compile(self),
        }
    }

    /// The node-by-node baseline of the bench: the same kernels, no fused runs, one block of
    /// `n` elements, so every node makes a full pass over memory into a full-size intermediate
    /// (slots still reused by liveness). Same bits as [`Plan::executor`].
    pub fn node_by_node_executor(&self, n: usize) -> Executor<'_> {
        let mut program = exec::Program::compile_with(self, false);
        program.set_block(n.max(1));
        Executor {
            plan: self,
            program,
        }
    }

    /// [`Executor::run`] with a fresh executor.
    ///
    /// # Errors
    /// As [`Executor::run`].
    pub fn run(
        &self,
        pool: &Pool,
        control: &Control,
        inputs: &[ArrayRef<'_>],
        outputs: &mut [ArrayMut<'_>],
        options: &RunOptions,
    ) -> Result<(), RunError> {
        self.executor().run(pool, control, inputs, outputs, options)
    }

    /// Runs the plan into new output arrays, each as long as its view needs (elements the view
    /// skips are 0).
    ///
    /// # Errors
    /// As [`Executor::run`]; [`RunError::Binding`] if the plan has neither inputs nor a fixed
    /// length (nothing says how many elements to compute).
    pub fn run_to_arrays(
        &self,
        pool: &Pool,
        control: &Control,
        inputs: &[ArrayRef<'_>],
        options: &RunOptions,
    ) -> Result<Vec<Array>, RunError> {
        let mut outputs = self.output_arrays(inputs)?;
        let mut views: Vec<ArrayMut<'_>> = outputs.iter_mut().map(Array::as_array_mut).collect();
        self.run(pool, control, inputs, &mut views, options)?;
        Ok(outputs)
    }

    /// Zeroed output arrays for a run over `inputs`, each as long as its view needs.
    ///
    /// # Errors
    /// [`RunError::Binding`] if the inputs do not match the plan (checked before anything is
    /// allocated), nothing fixes the length, or an output cannot be allocated.
    pub fn output_arrays(&self, inputs: &[ArrayRef<'_>]) -> Result<Vec<Array>, RunError> {
        // The inputs first: a plan's lengths and strides are the user's, and nothing is allocated
        // for a run they cannot feed.
        let n = bind::bind_inputs(self, inputs)?.ok_or_else(|| RunError::Binding {
            at: "inputs".to_owned(),
            message: "nothing fixes the number of elements (no input, no view length)".to_owned(),
        })?;
        self.outputs
            .iter()
            .enumerate()
            .map(|(i, output)| {
                let at = format!("outputs[{i}] {}", quoted(&output.id));
                let span = output.view.span(n).ok_or_else(|| RunError::Binding {
                    at: at.clone(),
                    message: "its view's span overflows".to_owned(),
                })?;
                let refused = || RunError::Binding {
                    at: at.clone(),
                    message: format!("{span} elements of {} cannot be allocated", output.dtype),
                };
                let len = usize::try_from(span).map_err(|_| refused())?;
                Array::try_zeros(output.dtype, len).ok_or_else(refused)
            })
            .collect()
    }
}

/// The most bytes a plan's JSON may hold when read from a file or pipe: 16 MiB (a plan of
/// 10,000 nodes is under 1 MiB); a longer input is refused before it fills memory.
pub const MAX_PLAN_BYTES: u64 = 16 << 20;

/// What a run over given inputs holds in memory.
///
/// # Memory
/// A run (as `lockstep plan run` does it) holds `inputs + outputs + working` bytes, plus a
/// 64 KiB chunk while a file is read or written: inputs and outputs are read and written a chunk
/// at a time, never copied whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunMemory {
    /// Bytes of the input arrays.
    pub inputs: u64,
    /// Bytes of the output arrays (each as long as its view needs).
    pub outputs: u64,
    /// Bytes of working memory ([`Plan::working_bytes`]).
    pub working: u64,
}

impl RunMemory {
    /// All of it.
    pub fn total(&self) -> u64 {
        self.inputs
            .saturating_add(self.outputs)
            .saturating_add(self.working)
    }

    /// `Ok` if the whole run fits `budget` bytes.
    ///
    /// # Errors
    /// [`RunError::OverMemoryBudget`] otherwise.
    pub fn check(&self, budget: Option<u64>) -> Result<(), RunError> {
        match budget {
            Some(budget) if self.total() > budget => Err(RunError::OverMemoryBudget {
                inputs: self.inputs,
                outputs: self.outputs,
                working: self.working,
                budget,
            }),
            _ => Ok(()),
        }
    }
}

impl Plan {
    /// What a run over `inputs` on `pool` holds: the inputs, the outputs (each as long as its
    /// view needs) and the working memory, known before the outputs are allocated.
    ///
    /// # Errors
    /// As [`output_arrays`](Self::output_arrays) for inputs that do not match the plan.
    pub fn memory(&self, inputs: &[ArrayRef<'_>], pool: &Pool) -> Result<RunMemory, RunError> {
        let n = bind::bind_inputs(self, inputs)?.ok_or_else(|| RunError::Binding {
            at: "inputs".to_owned(),
            message: "nothing fixes the number of elements (no input, no view length)".to_owned(),
        })?;
        let bytes = |len: usize, dtype: DType| (len as u64).saturating_mul(dtype.size() as u64);
        let outputs = self
            .outputs
            .iter()
            .map(|o| {
                let span = o.view.span(n).unwrap_or(u64::MAX);
                span.saturating_mul(o.dtype.size() as u64)
            })
            .fold(0u64, u64::saturating_add);
        Ok(RunMemory {
            inputs: inputs
                .iter()
                .map(|a| bytes(a.len(), a.dtype()))
                .fold(0, u64::saturating_add),
            outputs,
            // A count past this target's addresses is held as the most it addresses: the
            // working memory is per block, and grows with the count only up to a block a task.
            working: self.working_bytes(usize::try_from(n).unwrap_or(usize::MAX), pool),
        })
    }

    /// The most bytes of elements input `index` can usefully hold: its view's span over the
    /// plan's fixed length, `None` when the inputs fix the length (a file or pipe is then read
    /// as far as memory allows).
    pub fn input_capacity(&self, index: usize) -> Option<u64> {
        let input = self.inputs.get(index)?;
        let n = self.length?;
        let span = input.view.span(n)?;
        Some(span.saturating_mul(input.dtype.size() as u64))
    }

    /// The number of elements a run over `inputs` computes: the plan's fixed length, else what
    /// the first input's view takes from its array.
    ///
    /// # Errors
    /// [`RunError::Binding`] if the plan has neither inputs nor a fixed length.
    pub fn element_count(&self, inputs: &[ArrayRef<'_>]) -> Result<usize, RunError> {
        let n = match (self.length, self.inputs.first(), inputs.first()) {
            (Some(n), _, _) => n,
            (None, Some(input), Some(array)) => input.view.fitting(array.len()),
            _ => {
                return Err(RunError::Binding {
                    at: "inputs".to_owned(),
                    message: "nothing fixes the number of elements (no input, no view length)"
                        .to_owned(),
                });
            }
        };
        usize::try_from(n).map_err(|_| RunError::Binding {
            at: "inputs".to_owned(),
            message: format!("{n} elements are more than this machine addresses"),
        })
    }
}

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
    /// or moves any array (the same checks, word for word, [`Executor::run`] makes on the arrays
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

    fn layout_with(
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

impl Executor<'_> {
    /// Runs the plan over `inputs`, writing `outputs` (each in declaration order) through their
    /// views; the bytes written equal [`reference::run`]'s on every pool. Progress: one step per
    /// element; cancellation is checked between blocks.
    ///
    /// # Errors
    /// [`RunError::Binding`] (checked before any work) for arrays that do not match the plan;
    /// [`RunError::OverBudget`] (before any allocation); [`RunError::DivisionByZero`] at the
    /// lowest element dividing an integer by zero (the first such node there);
    /// [`RunError::Cancelled`]. After a division by zero or a cancellation the outputs are
    /// partly written.
    pub fn run(
        &self,
        pool: &Pool,
        control: &Control,
        inputs: &[ArrayRef<'_>],
        outputs: &mut [ArrayMut<'_>],
        options: &RunOptions,
    ) -> Result<(), RunError> {
        run_program(
            self.plan,
            &self.program,
            pool,
            control,
            inputs,
            outputs,
            options,
        )
    }
}

fn run_program(
    plan: &Plan,
    program: &exec::Program,
    pool: &Pool,
    control: &Control,
    inputs: &[ArrayRef<'_>],
    outputs: &mut [ArrayMut<'_>],
    options: &RunOptions,
) -> Result<(), RunError> {
    let n = bind::bind(plan, inputs, outputs)?;
    let needed = program.task_bytes(n) * exec::tasks_at_once(n, pool.workers()) as u64;
    if let Some(budget) = options.budget
        && needed > budget
    {
        return Err(RunError::OverBudget { needed, budget });
    }
    let tasks = exec::task_count(n, pool.workers());
    exec::run(plan, program, pool, control, inputs, outputs, n, tasks)
}

/// A plan compiled once and kept with it, for a front end that runs it many times (the wasm
/// module's and the Node addon's `PlanProgram`): [`Executor`] without the borrow. Runs and
/// layouts are those of [`Plan::executor`] and [`Plan::layout`], without compiling again.
#[derive(Debug)]
pub struct CompiledPlan {
    plan: Plan,
    program: exec::Program,
}

impl CompiledPlan {
    /// `plan`, compiled for the fused executor.
    pub fn new(plan: Plan) -> Self {
        let program = exec::Program::compile(&plan);
        CompiledPlan { plan, program }
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// [`Plan::layout`].
    ///
    /// # Errors
    /// As [`Plan::layout`].
    pub fn layout(
        &self,
        inputs: &[(DType, usize)],
        outputs: Option<&[(DType, usize)]>,
        workers: usize,
    ) -> Result<Layout, RunError> {
        self.plan
            .layout_with(&self.program, inputs, outputs, workers)
    }

    /// [`Executor::run`].
    ///
    /// # Errors
    /// As [`Executor::run`].
    pub fn run(
        &self,
        pool: &Pool,
        control: &Control,
        inputs: &[ArrayRef<'_>],
        outputs: &mut [ArrayMut<'_>],
        options: &RunOptions,
    ) -> Result<(), RunError> {
        run_program(
            &self.plan,
            &self.program,
            pool,
            control,
            inputs,
            outputs,
            options,
        )
    }
}
