//! A plan compiled once and kept with it ([`CompiledPlan`]).

use lockstep_shard::{Control, Pool};

use crate::executor::run_program;
use crate::{ArrayMut, ArrayRef, DType, Layout, Plan, RunError, RunOptions, exec};

/// A plan compiled once and kept with it, for a front end that runs it many times (the wasm
/// module's and the Node addon's `PlanProgram`): [`Executor`](crate::Executor) without the borrow. Runs and
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

    /// [`Executor::run`](crate::Executor::run).
    ///
    /// # Errors
    /// As [`Executor::run`](crate::Executor::run).
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
