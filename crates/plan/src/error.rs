//! Why a plan is refused or a run fails.

/// A plan that cannot be read or does not validate.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    /// Not JSON, or not the shape of plan format v1.
    #[error("not a plan in format v1: {0}")]
    Json(String),
    /// A version this build does not read.
    #[error("plan format version {found} is not supported (this build reads version 1)")]
    Version {
        /// The version the plan states.
        found: u64,
    },
    /// An item of the plan is wrong: `at` names it and its field.
    #[error("{at}: {message}")]
    Invalid {
        /// The item and field, e.g. `nodes[3] "y".args[1]`.
        at: String,
        /// What is wrong.
        message: String,
    },
}

/// Why a run failed. A run that fails may leave its outputs partly written.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RunError {
    /// The arrays passed do not match the plan (count, dtype, length, view bounds).
    #[error("{at}: {message}")]
    Binding {
        /// The input or output, e.g. `inputs[0] "x"`.
        at: String,
        /// What is wrong.
        message: String,
    },
    /// An integer division by zero: the lowest element where one happens, and the first node
    /// (in evaluation order) dividing by zero there.
    #[error("node {}: integer division by zero at element {element}", crate::quote::quoted(.node))]
    DivisionByZero {
        /// The dividing node's id.
        node: String,
        /// The element's index (0-based, in the plan's elements).
        element: usize,
    },
    /// The run would need more memory than its budget allows; nothing was allocated.
    #[error("the run needs {needed} bytes of working memory, over its budget of {budget} bytes")]
    OverBudget {
        /// Bytes the run would allocate beyond its inputs and outputs.
        needed: u64,
        /// The budget.
        budget: u64,
    },
    /// A whole run (inputs, outputs and working memory) would pass its memory budget; checked
    /// before the outputs are allocated.
    #[error(
        "the run needs {} bytes (inputs {inputs}, outputs {outputs}, working memory {working}), over its budget of {budget} bytes",
        .inputs + .outputs + .working
    )]
    OverMemoryBudget {
        /// Bytes of the inputs.
        inputs: u64,
        /// Bytes of the outputs.
        outputs: u64,
        /// Bytes of working memory.
        working: u64,
        /// The budget.
        budget: u64,
    },
    /// Cancelled through the control's token.
    #[error("cancelled")]
    Cancelled,
    /// A worker failed in a way the plan did not cause (a bug: reported, never hidden).
    #[error("the runtime failed: {0}")]
    Runtime(String),
    /// The instruction set asked for (`LOCKSTEP_PLAN_ISA`) cannot be used.
    #[error("{0}")]
    InstructionSet(String),
}

impl PlanError {
    /// The stable code every front end gives this error (the npm package's `error.code`):
    /// `PLAN_INVALID`.
    pub fn code(&self) -> &'static str {
        "PLAN_INVALID"
    }
}

impl RunError {
    /// The stable code every front end gives this error (the npm package's `error.code`):
    /// `PLAN_BINDING`, `PLAN_DIVISION_BY_ZERO`, `PLAN_BUDGET` (either budget), `PLAN_CANCELLED`,
    /// `PLAN_RUNTIME`, `PLAN_ISA`.
    pub fn code(&self) -> &'static str {
        match self {
            RunError::Binding { .. } => "PLAN_BINDING",
            RunError::DivisionByZero { .. } => "PLAN_DIVISION_BY_ZERO",
            RunError::OverBudget { .. } | RunError::OverMemoryBudget { .. } => "PLAN_BUDGET",
            RunError::Cancelled => "PLAN_CANCELLED",
            RunError::Runtime(_) => "PLAN_RUNTIME",
            RunError::InstructionSet(_) => "PLAN_ISA",
        }
    }
}
