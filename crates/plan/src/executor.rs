//! Runs of a plan on the fused executor: [`Executor`] (a plan compiled for runs, borrowing it)
//! and its options; the plan's own `run`, `run_to_arrays` and `output_arrays` go through it.

use lockstep_shard::{Control, Pool};

use crate::{Array, ArrayMut, ArrayRef, Plan, RunError, bind, exec, quoted};

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

impl Executor<'_> {
    /// Runs the plan over `inputs`, writing `outputs` (each in declaration order) through their
    /// views; the bytes written equal [`crate::reference::run`]'s on every pool. Progress: one step per
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

pub(crate) fn run_program(
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
