//! Record linkage as every front end runs it ([`lockstep_face::PsiParty`]): the class
//! `lockstep._native.Party`, a starter or a joiner over rows (one value a row, or a CSV file's
//! bytes keyed on its columns) with the engine's record rules, the association table and
//! resolve. `lockstep.link` wraps it for data frames.
//!
//! A step's options come as a dict of the face's field names (`format`, `joinerCount`,
//! `columns`, `normalize`, `packed`, `sizeOnly`, `fpr`), read into plain values while the lock is
//! held ([`Options`]) and checked by the face, in its words.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, TryLockError};

use lockstep_face::progress::Domain;
use lockstep_face::psi::FoundRows;
use lockstep_face::{Coded, Fields, Found, Kind, PsiParty, Value};
use lockstep_psi::Backend;
use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};
use zeroize::Zeroizing;

use crate::psi::Packed;
use crate::{errors, relay};

/// A field's value as read from the dict, of whatever kind it held.
enum Held {
    Boolean(bool),
    Number(f64),
    Text(String),
    Texts(Vec<String>),
    Numbers(Vec<f64>),
    Other(&'static str),
}

/// A step's options, read from a dict while the lock is held.
struct Options(HashMap<String, Held>);

impl Options {
    fn of(dict: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut held = HashMap::new();
        if let Some(dict) = dict {
            for (name, value) in dict.iter() {
                let name: String = name.extract()?;
                let value = if value.is_none() {
                    continue;
                } else if value.is_instance_of::<PyBool>() {
                    Held::Boolean(value.extract()?)
                } else if value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>() {
                    Held::Number(value.extract()?)
                } else if value.is_instance_of::<PyString>() {
                    Held::Text(value.extract()?)
                } else if let Ok(list) = value.cast::<PyList>() {
                    if let Ok(texts) = list.extract::<Vec<String>>() {
                        Held::Texts(texts)
                    } else if let Ok(numbers) = list.extract::<Vec<f64>>() {
                        Held::Numbers(numbers)
                    } else {
                        Held::Other("a list holding a value of another kind")
                    }
                } else {
                    Held::Other("a value of another kind")
                };
                held.insert(name, value);
            }
        }
        Ok(Self(held))
    }
}

impl Fields for Options {
    fn field(&self, name: &str, kind: Kind) -> Result<Option<Value>, Found> {
        let Some(held) = self.0.get(name) else {
            return Ok(None);
        };
        Ok(Some(match (kind, held) {
            (Kind::Boolean, Held::Boolean(b)) => Value::Boolean(*b),
            (Kind::Number, Held::Number(n)) => Value::Number(*n),
            (Kind::Text, Held::Text(t)) => Value::Text(t.clone()),
            (Kind::Texts, Held::Texts(t)) => Value::Texts(t.clone()),
            (Kind::Numbers, Held::Numbers(n)) => Value::Numbers(n.clone()),
            (_, Held::Boolean(_)) => return Err(Found("a boolean")),
            (_, Held::Number(_)) => return Err(Found("a number")),
            (_, Held::Text(_)) => return Err(Found("a string")),
            (_, Held::Texts(_)) => return Err(Found("a list of strings")),
            (_, Held::Numbers(_)) => return Err(Found("a list of numbers")),
            (_, Held::Other(what)) => return Err(Found(what)),
        }))
    }
}

/// A step's rows: a CSV file's bytes (`data` is `bytes`) or values packed one a row.
struct RowsIn {
    values: Vec<u8>,
    ends: Vec<u32>,
}

impl RowsIn {
    fn of(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(bytes) = data.cast::<PyBytes>() {
            return Ok(Self {
                values: bytes.as_bytes().to_vec(),
                ends: Vec::new(),
            });
        }
        let packed = Packed::of(data)?;
        let ends = packed
            .ends
            .iter()
            .map(|&end| u32::try_from(end))
            .collect::<Result<Vec<u32>, _>>()
            .map_err(|_| {
                PyOverflowError::new_err("values: more than 4 GiB of values in one step")
            })?;
        Ok(Self {
            values: packed.bytes,
            ends,
        })
    }
}

/// A record-linkage party: a starter or a joiner, its key inside, and the state of its round
/// between steps. One call at a time: a call while another runs (from another thread, or from
/// the running step's own `progress`) is refused with `PSI_USAGE`, never queued behind it.
#[pyclass(module = "lockstep._native", name = "Party", frozen)]
pub(crate) struct Party(Mutex<PsiParty>);

impl Party {
    /// The party, if no other call holds it.
    fn held(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, PsiParty>> {
        match self.0.try_lock() {
            Ok(party) => Ok(party),
            Err(TryLockError::WouldBlock) => Err(errors::coded(
                py,
                &Coded::new(
                    "PSI_USAGE",
                    "this party is in a step already (another thread's, or the step's own \
                     progress callback): one call at a time",
                ),
            )),
            // A step panicked holding it (an engine bug): its state is not to be trusted.
            Err(TryLockError::Poisoned(_)) => Err(errors::coded(
                py,
                &Coded::new(
                    "PSI_INTERNAL",
                    "this party's last step failed inside the engine",
                ),
            )),
        }
    }
}

#[pymethods]
impl Party {
    /// A party of `role` (`"starter"` or `"joiner"`) with a fresh key.
    #[staticmethod]
    fn generate(py: Python<'_>, role: &str) -> PyResult<Self> {
        PsiParty::generate(role, Backend::Native)
            .map(|party| Self(Mutex::new(party)))
            .map_err(|e| errors::coded(py, &e))
    }

    /// A party of `role` with the key's 32 bytes.
    #[staticmethod]
    fn from_key(py: Python<'_>, role: &str, key: &[u8]) -> PyResult<Self> {
        let mut key = Zeroizing::new(key.to_vec());
        PsiParty::import(role, &mut key, Backend::Native)
            .map(|party| Self(Mutex::new(party)))
            .map_err(|e| errors::coded(py, &e))
    }

    /// `"starter"` or `"joiner"`.
    fn role(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.held(py)?.role().map_err(|e| errors::coded(py, &e))
    }

    /// The key's 32 big-endian bytes.
    fn export_key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let key = self
            .held(py)?
            .export_key()
            .map_err(|e| errors::coded(py, &e))?;
        Ok(PyBytes::new(py, key.as_ref()))
    }

    /// Drops the key (wiped); later calls raise `PsiError` (`PSI_USAGE`), as does a close
    /// while a step runs.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.held(py)?.free();
        Ok(())
    }

    /// The starter's setup over `data` (CSV bytes, or values one a row with `packed`).
    #[pyo3(signature = (data, options, workers = 0, progress = None))]
    fn setup<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        options: &Bound<'py, PyDict>,
        workers: u32,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (rows, options) = (RowsIn::of(data)?, Options::of(Some(options))?);
        let mut held = self.held(py)?;
        let party: &mut PsiParty = &mut held;
        let bytes = relay::run(py, Domain::Psi, progress, |control| {
            let pool = relay::psi_pool(workers, rows.ends.len().max(rows.values.len() / 32))?;
            party.setup_on(&pool, control, &rows.values, &rows.ends, &options)
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The last raw setup's permutation file, as `psi setup --permutation-out` writes it.
    fn permutation_file<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self
            .held(py)?
            .permutation_file()
            .map_err(|e| errors::coded(py, &e))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The starter's response to `request`.
    #[pyo3(signature = (request, joiner_count, size_only = false, workers = 0, progress = None))]
    fn respond<'py>(
        &self,
        py: Python<'py>,
        request: &[u8],
        joiner_count: f64,
        size_only: bool,
        workers: u32,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut held = self.held(py)?;
        let party: &mut PsiParty = &mut held;
        let bytes = relay::run(py, Domain::Psi, progress, |control| {
            let pool = relay::psi_pool(workers, request.len() / lockstep_psi::ELEMENT_LEN)?;
            party.respond_on(&pool, control, request, joiner_count, size_only)
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The starter's rows of a joiner's pairs file: `(joiner_rows, starter_rows, file)`.
    fn resolve<'py>(
        &self,
        py: Python<'py>,
        pairs: &[u8],
    ) -> PyResult<(Vec<u32>, Vec<u32>, Bound<'py, PyBytes>)> {
        let resolved = self
            .held(py)?
            .resolve(pairs)
            .map_err(|e| errors::coded(py, &e))?;
        Ok((
            resolved.joiner_rows,
            resolved.starter_rows,
            PyBytes::new(py, &resolved.file),
        ))
    }

    /// The joiner's request over `data`.
    #[pyo3(signature = (data, options = None, workers = 0, progress = None))]
    fn request<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        options: Option<&Bound<'py, PyDict>>,
        workers: u32,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (rows, options) = (RowsIn::of(data)?, Options::of(options)?);
        let mut held = self.held(py)?;
        let party: &mut PsiParty = &mut held;
        let bytes = relay::run(py, Domain::Psi, progress, |control| {
            let pool = relay::psi_pool(workers, rows.ends.len().max(rows.values.len() / 32))?;
            party.request_on(&pool, control, &rows.values, &rows.ends, &options)
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The joiner's intersection: a dict of `size`, `rows`, `setup_positions`, `rows_file`,
    /// `pairs_file`.
    #[pyo3(signature = (setup, response, max_setup_bytes = None, workers = 0, progress = None))]
    fn intersect<'py>(
        &self,
        py: Python<'py>,
        setup: &[u8],
        response: &[u8],
        max_setup_bytes: Option<f64>,
        workers: u32,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut held = self.held(py)?;
        let party: &mut PsiParty = &mut held;
        let found: FoundRows = relay::run(py, Domain::Psi, progress, |control| {
            let pool = relay::psi_pool(workers, response.len() / lockstep_psi::ELEMENT_LEN)?;
            party.intersect_on(&pool, control, setup, response, max_setup_bytes)
        })?;
        let dict = PyDict::new(py);
        dict.set_item("size", found.size)?;
        dict.set_item("rows", found.rows)?;
        dict.set_item("setup_positions", found.setup_positions)?;
        dict.set_item("rows_file", found.rows_file.map(|f| PyBytes::new(py, &f)))?;
        dict.set_item("pairs_file", found.pairs_file.map(|f| PyBytes::new(py, &f)))?;
        Ok(dict)
    }
}
