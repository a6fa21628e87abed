//! A refusal as the package's exception: `lockstep.PsiError` for a `PSI_*` code,
//! `lockstep.PlanError` for a `PLAN_*` code, `lockstep.CeremonyError` for a `CEREMONY_*` code (both `lockstep.LockstepError`, a `RuntimeError`, as
//! `openmined.psi` raises), made by the package's own classes (`lockstep/_errors.py`) so that
//! `code` is an attribute a caller reads.

use lockstep_face::{Coded, Failure};
use pyo3::prelude::*;

/// `coded` as the package's exception of its engine.
pub(crate) fn coded(py: Python<'_>, coded: &Coded) -> PyErr {
    let class = if coded.code.starts_with("PLAN_") {
        "PlanError"
    } else if coded.code.starts_with("PSI_") {
        "PsiError"
    } else if coded.code.starts_with("CEREMONY_") {
        "CeremonyError"
    } else {
        "LockstepError"
    };
    let made = py
        .import("lockstep._errors")
        .and_then(|module| module.getattr(class))
        .and_then(|class| class.call1((coded.code, coded.message.as_str())));
    match made {
        Ok(instance) => PyErr::from_value(instance),
        // The package's own module is missing (a broken install): that is the error to see.
        Err(error) => error,
    }
}

/// A face call's failure: its refusal, or what the caller's callback raised, as raised.
pub(crate) fn failure(py: Python<'_>, failure: Failure<PyErr>) -> PyErr {
    match failure {
        Failure::Coded(refusal) => coded(py, &refusal),
        Failure::Thrown(raised) => raised,
    }
}
