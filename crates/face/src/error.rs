//! How a call through the face fails, in the two ways a front end must tell apart.

use lockstep_plan::{PlanError, RunError};
use lockstep_psi::party::PartyError;

/// A refusal as every front end reports it: the engine's stable code (`PSI_USAGE`,
/// `PLAN_BINDING`, ...) and its words, which a binding puts on its error unchanged (a JS
/// `Error`'s `code` and `message`, a Python exception's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coded {
    /// The stable code.
    pub code: &'static str,
    /// The engine's message.
    pub message: String,
}

impl Coded {
    /// A refusal with `code` and `message`.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Coded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Coded {}

impl From<PartyError> for Coded {
    fn from(error: PartyError) -> Self {
        Self::new(error.code(), error.to_string())
    }
}

impl From<RunError> for Coded {
    fn from(error: RunError) -> Self {
        Self::new(error.code(), error.to_string())
    }
}

impl From<PlanError> for Coded {
    fn from(error: PlanError) -> Self {
        Self::new(error.code(), error.to_string())
    }
}

/// Why a call that runs a caller's callback failed: refused ([`Coded`]), or the callback threw
/// (`X`, the binding's own exception value), which the binding rethrows as it was thrown.
#[derive(Debug)]
pub enum Failure<X> {
    /// The engine or the face refused.
    Coded(Coded),
    /// What the caller's callback threw; the step was cancelled for it.
    Thrown(X),
}

impl<X> From<Coded> for Failure<X> {
    fn from(coded: Coded) -> Self {
        Self::Coded(coded)
    }
}

impl<X> From<PartyError> for Failure<X> {
    fn from(error: PartyError) -> Self {
        Self::Coded(error.into())
    }
}

impl<X> From<RunError> for Failure<X> {
    fn from(error: RunError) -> Self {
        Self::Coded(error.into())
    }
}
