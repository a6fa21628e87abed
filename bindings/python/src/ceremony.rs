//! The ceremony's files from Python ([`lockstep_face::ceremony`]): a file's facts as a dict,
//! the verifications' verdicts as dicts, each call on the relay (the interpreter's lock let go,
//! `progress` on the calling thread, Ctrl-C within about 100 ms). Only conversion: the facts,
//! verdicts, refusals and argument rules are the engine's and the face's.

use std::path::PathBuf;

use lockstep_ceremony::describe::{self, Fact, Value};
use lockstep_face::Coded;
use lockstep_face::ceremony::{self, Sealed, Verified};
use lockstep_face::progress::Domain;
use lockstep_shard::Control;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::relay;

/// A fact's value as Python's: an int, a str, bytes, None, a bool or a list of dicts.
fn value<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Count(n) => n.into_pyobject(py)?.into_any(),
        Value::Power(p) => p.into_pyobject(py)?.into_any(),
        Value::Text(text) => text.into_pyobject(py)?.into_any(),
        Value::Bytes(bytes) | Value::SnarkjsHash(bytes) => PyBytes::new(py, bytes).into_any(),
        Value::Flag(yes) => yes.into_pyobject(py)?.to_owned().into_any(),
        Value::List(entries) => {
            let list = PyList::empty(py);
            for entry in entries {
                list.append(facts(py, entry)?)?;
            }
            list.into_any()
        }
        // Absent, and any later kind of value: None.
        _ => py.None().into_bound(py),
    })
}

/// Facts as a dict by key, in their order.
fn facts<'py>(py: Python<'py>, facts: &[Fact]) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for fact in facts {
        dict.set_item(fact.key, value(py, &fact.value)?)?;
    }
    Ok(dict)
}

/// Runs a ceremony call on the relay: the lock let go, `progress` on this thread, Ctrl-C.
fn run<T: Send>(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    call: impl FnOnce(&Control) -> Result<T, Coded> + Send,
) -> PyResult<T> {
    relay::run(py, Domain::Ceremony, progress, call)
}

/// `info(path, workers)`: `(facts, text)`, the facts a dict by key (with `size`) and the text
/// `lockstep ceremony info` prints for the path as given.
#[pyfunction]
#[pyo3(signature = (path, workers = 0, progress = None))]
pub(crate) fn ceremony_info<'py>(
    py: Python<'py>,
    path: PathBuf,
    workers: u32,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyDict>, String)> {
    let info = run(py, progress, |control| {
        ceremony::info(&path, workers, control)
    })?;
    let dict = facts(py, &info.description.facts)?;
    dict.set_item("size", info.size)?;
    let text = describe::file_text(
        &path.display().to_string(),
        Some(info.size),
        &info.description,
    );
    Ok((dict, text))
}

/// A chain's verdicts: `{"contributions": n, "steps": [{"path", "verdict", "hash", "line"}]}`.
fn verified<'py>(py: Python<'py>, verified: &Verified) -> PyResult<Bound<'py, PyDict>> {
    let steps = PyList::empty(py);
    for step in &verified.steps {
        let item = PyDict::new(py);
        item.set_item("path", step.path.display().to_string())?;
        item.set_item("verdict", step.verdict.kind())?;
        item.set_item("hash", step.verdict.hash().map(|h| PyBytes::new(py, h)))?;
        item.set_item("line", step.line())?;
        steps.append(item)?;
    }
    let dict = PyDict::new(py);
    dict.set_item("contributions", verified.contributions)?;
    dict.set_item("steps", steps)?;
    Ok(dict)
}

/// `verify_phase1(files, previous, sealed, beacon, iterations, workers, progress)`.
#[pyfunction]
#[pyo3(signature = (files, previous = None, sealed = None, beacon = None, iterations = 0, workers = 0, progress = None))]
#[allow(
    clippy::too_many_arguments,
    reason = "the Python call's keyword arguments"
)]
pub(crate) fn ceremony_verify_phase1<'py>(
    py: Python<'py>,
    files: Vec<PathBuf>,
    previous: Option<PathBuf>,
    sealed: Option<PathBuf>,
    beacon: Option<String>,
    iterations: u64,
    workers: u32,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let seal = Sealed {
        path: sealed.as_deref(),
        beacon: beacon.as_deref(),
        iterations,
    };
    let result = run(py, progress, |control| {
        ceremony::verify_phase1(&files, previous.as_deref(), seal, workers, control)
    })?;
    verified(py, &result)
}

/// `verify_phase2(files, previous, r1cs, phase1, workers, progress)`.
#[pyfunction]
#[pyo3(signature = (files, previous = None, r1cs = None, phase1 = None, workers = 0, progress = None))]
pub(crate) fn ceremony_verify_phase2<'py>(
    py: Python<'py>,
    files: Vec<PathBuf>,
    previous: Option<PathBuf>,
    r1cs: Option<PathBuf>,
    phase1: Option<PathBuf>,
    workers: u32,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let result = run(py, progress, |control| {
        ceremony::verify_phase2(
            &files,
            previous.as_deref(),
            r1cs.as_deref(),
            phase1.as_deref(),
            workers,
            control,
        )
    })?;
    verified(py, &result)
}

/// `verify_zkey(r1cs, ptau, zkey, workers)`: `{"circuit_hash", "contributions": [{"name",
/// "hash", "beacon"}]}`, a beacon `{"hash", "exp"}` or None.
#[pyfunction]
#[pyo3(signature = (r1cs, ptau, zkey, workers = 0, progress = None))]
pub(crate) fn ceremony_verify_zkey<'py>(
    py: Python<'py>,
    r1cs: PathBuf,
    ptau: PathBuf,
    zkey: PathBuf,
    workers: u32,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let report = run(py, progress, |control| {
        ceremony::verify_zkey(&r1cs, &ptau, &zkey, workers, control)
    })?;
    let contributions = PyList::empty(py);
    for c in &report.contributions {
        let item = PyDict::new(py);
        item.set_item("name", c.name.as_deref())?;
        item.set_item("hash", PyBytes::new(py, &c.hash))?;
        let beacon = match &c.beacon {
            Some((hash, exp)) => {
                let beacon = PyDict::new(py);
                beacon.set_item("hash", PyBytes::new(py, hash))?;
                beacon.set_item("exp", exp)?;
                Some(beacon)
            }
            None => None,
        };
        item.set_item("beacon", beacon)?;
        contributions.append(item)?;
    }
    let dict = PyDict::new(py);
    dict.set_item("circuit_hash", PyBytes::new(py, &report.circuit_hash))?;
    dict.set_item("contributions", contributions)?;
    Ok(dict)
}

/// `verify_proof(vk, proof, public)`: `{"public": n, "format": "gnark" | "snarkjs"}`.
#[pyfunction]
pub(crate) fn ceremony_verify_proof<'py>(
    py: Python<'py>,
    vk: PathBuf,
    proof: PathBuf,
    public: PathBuf,
) -> PyResult<Bound<'py, PyDict>> {
    let verified = run(py, None, |_| ceremony::verify_proof(&vk, &proof, &public))?;
    let dict = PyDict::new(py);
    dict.set_item("public", verified.public)?;
    dict.set_item("format", if verified.snarkjs { "snarkjs" } else { "gnark" })?;
    Ok(dict)
}

/// `verify_ptau(path, workers)`: `{"power", "contributions"}`.
#[pyfunction]
#[pyo3(signature = (path, workers = 0, progress = None))]
pub(crate) fn ceremony_verify_ptau<'py>(
    py: Python<'py>,
    path: PathBuf,
    workers: u32,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let (power, contributions) = run(py, progress, |control| {
        ceremony::verify_ptau(&path, workers, control)
    })?;
    let dict = PyDict::new(py);
    dict.set_item("power", power)?;
    dict.set_item("contributions", contributions)?;
    Ok(dict)
}
