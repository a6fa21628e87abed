//! lockstep's engines for Python: the extension module `lockstep._native` under the package
//! `lockstep` (python/lockstep/), built into a wheel by maturin (`scripts/build-python`).
//!
//! A binding of [`lockstep_face`], as the Node addon and the wasm module are: each class and
//! function here converts Python's types to the face's plain ones and back, and holds no rule of
//! its own; the Python package around it shapes the calls (`lockstep.psi` as `openmined.psi`'s
//! module, `lockstep.plan` over numpy arrays) and raises the engines' stable codes as
//! `lockstep.PsiError` and `lockstep.PlanError`.
//!
//! - `psi`: OpenMined's `server` and `client` ([`lockstep_face::openmined`]).
//! - `linkage`: record linkage, a starter or joiner over rows ([`lockstep_face::PsiParty`]).
//! - `cluster`: a step's parts on a cluster's executors and its driver, for `lockstep.spark`
//!   ([`lockstep_face::cluster`]).
//! - `plan`: a plan run over numpy arrays without a copy.
//! - `ceremony`: a ceremony file's facts and the verifications ([`lockstep_face::ceremony`]).
//! - `relay`: the interpreter's lock let go for every step, the step's progress and Ctrl-C
//!   taken back on the calling thread ([`lockstep_face::progress::relayed`]).
//! - `errors`: a refusal as the package's exception, carrying its code.

use pyo3::prelude::*;

mod ceremony;
mod cluster;
mod errors;
mod linkage;
mod plan;
mod psi;
mod relay;

/// The module: the face's ABI version, the PSI classes, the plan class and the ceremony's
/// functions.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ABI_VERSION", lockstep_face::ABI_VERSION)?;
    // Ctrl-C is the interpreter's (KeyboardInterrupt): staged files are removed on a signal,
    // the process is not ended for it.
    lockstep_face::cluster::keep_process_signals();
    m.add("MAX_WORKERS", lockstep_face::openmined::MAX_WORKERS)?;
    m.add_class::<psi::Server>()?;
    m.add_class::<psi::Client>()?;
    m.add_function(wrap_pyfunction!(psi::check_message, m)?)?;
    m.add_function(wrap_pyfunction!(psi::message_fields, m)?)?;
    m.add_class::<linkage::Party>()?;
    m.add_class::<cluster::Helper>()?;
    m.add_class::<cluster::MessageOut>()?;
    m.add_class::<cluster::PermutationOut>()?;
    m.add_function(wrap_pyfunction!(cluster::read_key, m)?)?;
    m.add_function(wrap_pyfunction!(cluster::column_keys, m)?)?;
    m.add_function(wrap_pyfunction!(cluster::unpack_request, m)?)?;
    m.add_class::<plan::Plan>()?;
    m.add_function(wrap_pyfunction!(ceremony::ceremony_info, m)?)?;
    m.add_function(wrap_pyfunction!(ceremony::ceremony_verify_phase1, m)?)?;
    m.add_function(wrap_pyfunction!(ceremony::ceremony_verify_phase2, m)?)?;
    m.add_function(wrap_pyfunction!(ceremony::ceremony_verify_zkey, m)?)?;
    m.add_function(wrap_pyfunction!(ceremony::ceremony_verify_proof, m)?)?;
    m.add_function(wrap_pyfunction!(ceremony::ceremony_verify_ptau, m)?)?;
    Ok(())
}
