//! A step's parts on a cluster ([`lockstep_face::cluster`]): what `lockstep.spark` runs on
//! executors (`column_keys`, the class `Helper` over [`PsiHelper`]) and on the driver
//! (`read_key`, `unpack_request`, the classes `MessageOut` and `PermutationOut`).
//!
//! Columns cross as Arrow lays them out, `(data, offsets)` as `bytes` (offsets little-endian
//! `u32`s); elements as `bytes`, 33 each; positions and rows as `bytes` of little-endian `u64`s.
//! No value becomes a Python object here.
//!
//! # Where key material travels
//! `read_key` returns the key file's 32 bytes as a new `bytes` object, which Python cannot wipe:
//! `lockstep.spark` broadcasts it to the executors and documents who can read it there. A
//! `Helper` copies the key out of the caller's `bytes` into a buffer wiped after the face read
//! it; the face keeps it wiped on drop.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use lockstep_face::cluster::{self, Column, MessageKind};
use lockstep_face::progress::Domain;
use lockstep_face::{Coded, PartMaps, PsiHelper};
use lockstep_psi::Backend;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeroize::Zeroizing;

use crate::{errors, relay};

/// `(data, offsets)` as the face's column.
fn column<'a>(pair: &'a (Vec<u8>, Vec<u8>)) -> Column<'a> {
    Column {
        data: &pair.0,
        offsets: &pair.1,
    }
}

/// Little-endian `u32`s as bytes.
fn le_bytes(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Little-endian `u64`s from bytes.
fn le_numbers(py: Python<'_>, bytes: &[u8], name: &str) -> PyResult<Vec<u64>> {
    if !bytes.len().is_multiple_of(8) {
        return Err(errors::coded(
            py,
            &Coded::new(
                "PSI_USAGE",
                format!("{name}: little-endian u64s, not {} bytes", bytes.len()),
            ),
        ));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("invariant: chunks of 8")))
        .collect())
}

/// The key file's 32 bytes, read by the CLI's rule.
#[pyfunction]
#[pyo3(signature = (path, allow_open = false))]
pub(crate) fn read_key<'py>(
    py: Python<'py>,
    path: PathBuf,
    allow_open: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let key = py
        .detach(|| cluster::read_key(&path, allow_open))
        .map_err(|e| errors::coded(py, &e))?;
    Ok(PyBytes::new(py, &key))
}

/// The keys of rows whose columns `header` hold `columns` (`(data, offsets)` each), keyed on
/// the columns `key` names, by the engine's record rules: `(data, offsets)` of the keys,
/// offsets from 0.
#[pyfunction]
#[pyo3(signature = (header, columns, key, normalize, first_row))]
pub(crate) fn column_keys<'py>(
    py: Python<'py>,
    header: Vec<String>,
    columns: Vec<(Vec<u8>, Vec<u8>)>,
    key: Vec<String>,
    normalize: bool,
    first_row: u64,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let keys = py
        .detach(|| {
            let columns: Vec<Column<'_>> = columns.iter().map(column).collect();
            cluster::column_keys(&header, &columns, &key, normalize, first_row)
        })
        .map_err(|e| errors::coded(py, &e))?;
    Ok((
        PyBytes::new(py, &keys.data),
        PyBytes::new(py, &le_bytes(&keys.offsets)),
    ))
}

/// Copies a request's elements, checked, to a new file, packed; returns their count.
#[pyfunction]
pub(crate) fn unpack_request(
    py: Python<'_>,
    request: PathBuf,
    packed: PathBuf,
    joiner_count: u64,
    size_only: bool,
) -> PyResult<u64> {
    py.detach(|| cluster::unpack_request(&request, &packed, joiner_count, size_only))
        .map_err(|e| errors::coded(py, &e))
}

/// A helper of a party on another process (an executor), with the key the party delivered:
/// masks and re-masks parts, on the calling thread.
#[pyclass(module = "lockstep._native", name = "Helper", frozen)]
pub(crate) struct Helper(PsiHelper);

#[pymethods]
impl Helper {
    /// A helper of `role` (`"starter"` or `"joiner"`) with the key's 32 bytes.
    #[new]
    fn new(py: Python<'_>, role: &str, key: &[u8]) -> PyResult<Self> {
        let mut key = Zeroizing::new(key.to_vec());
        PsiHelper::from_key(role, &mut key, Backend::Native)
            .map(Self)
            .map_err(|e| errors::coded(py, &e))
    }

    /// The values `(data, offsets)` masked, packed 33 bytes each, in order.
    fn mask<'py>(
        &self,
        py: Python<'py>,
        data: Vec<u8>,
        offsets: Vec<u8>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let masked = relay::run(py, Domain::Psi, None, |control| {
            let (values, ends) = cluster::packed(&column(&(data, offsets)))?;
            Ok(self.0.keyed()?.mask(&values, &ends, control)?)
        })?;
        Ok(PyBytes::new(py, &masked))
    }

    /// The packed `elements` re-masked, the first at request index `first`.
    fn remask<'py>(
        &self,
        py: Python<'py>,
        elements: Vec<u8>,
        first: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let masked = relay::run(py, Domain::Psi, None, |control| {
            Ok(self.0.keyed()?.remask(&elements, first, control)?)
        })?;
        Ok(PyBytes::new(py, &masked))
    }
}

/// Held by one call at a time.
fn held<'a, T>(py: Python<'_>, lock: &'a Mutex<T>) -> PyResult<MutexGuard<'a, T>> {
    lock.lock().map_err(|_| {
        errors::coded(
            py,
            &Coded::new(
                "PSI_INTERNAL",
                "this writer's last call failed inside the engine",
            ),
        )
    })
}

/// A message written from packed elements pushed in order, put in place by `finish`.
#[pyclass(module = "lockstep._native", name = "MessageOut", frozen)]
pub(crate) struct MessageOut(Mutex<cluster::MessageOut>);

#[pymethods]
impl MessageOut {
    /// A `kind` (`"request"`, `"response"`, `"raw_setup"`) message to be written to `path`,
    /// never over one of `inputs`; a request `size_only` or not, a raw setup of `count` elements.
    #[new]
    #[pyo3(signature = (path, kind, size_only = false, count = 0, inputs = Vec::new()))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        kind: &str,
        size_only: bool,
        count: u64,
        inputs: Vec<PathBuf>,
    ) -> PyResult<Self> {
        let kind = match kind {
            "request" => MessageKind::Request { size_only },
            "response" => MessageKind::Response,
            "raw_setup" => MessageKind::RawSetup { count },
            other => {
                return Err(errors::coded(
                    py,
                    &Coded::new(
                        "PSI_USAGE",
                        format!("kind: \"request\", \"response\" or \"raw_setup\", not {other:?}"),
                    ),
                ));
            }
        };
        let inputs: Vec<&std::path::Path> = inputs.iter().map(PathBuf::as_path).collect();
        cluster::MessageOut::create(&path, kind, &inputs)
            .map(|out| Self(Mutex::new(out)))
            .map_err(|e| errors::coded(py, &e))
    }

    /// Writes the next elements, packed.
    fn push(&self, py: Python<'_>, packed: &[u8]) -> PyResult<()> {
        let mut guard = held(py, &self.0)?;
        let out = &mut *guard;
        py.detach(|| out.push(packed))
            .map_err(|e| errors::coded(py, &e))
    }

    /// The elements written so far.
    #[getter]
    fn written(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(held(py, &self.0)?.written())
    }

    /// Ends the message; returns its SHA-256 (hex).
    fn finish(&self, py: Python<'_>) -> PyResult<String> {
        let mut guard = held(py, &self.0)?;
        let out = &mut *guard;
        py.detach(|| out.finish())
            .map(|digest| digest.to_string())
            .map_err(|e| errors::coded(py, &e))
    }

    /// Puts the finished message in place.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        let mut guard = held(py, &self.0)?;
        let out = &mut *guard;
        py.detach(|| out.commit())
            .map_err(|e| errors::coded(py, &e))
    }

    /// Drops the message unwritten (its staged file removed).
    fn abort(&self, py: Python<'_>) -> PyResult<()> {
        held(py, &self.0)?.abort();
        Ok(())
    }
}

/// A permutation file written from every row's key, then its entries, in order.
#[pyclass(module = "lockstep._native", name = "PermutationOut", frozen)]
pub(crate) struct PermutationOut(Mutex<cluster::PermutationOut>);

#[pymethods]
impl PermutationOut {
    /// A permutation to be written to `path`, of the setup at `setup` keyed on `columns`, its
    /// entries waiting in `dir`, never over one of `inputs` nor the setup.
    #[new]
    #[pyo3(signature = (path, dir, columns, normalize, setup, inputs = Vec::new()))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        dir: PathBuf,
        columns: Vec<String>,
        normalize: bool,
        setup: PathBuf,
        inputs: Vec<PathBuf>,
    ) -> PyResult<Self> {
        let inputs: Vec<&std::path::Path> = inputs.iter().map(PathBuf::as_path).collect();
        cluster::PermutationOut::create(&path, &dir, &columns, normalize, &inputs, &setup)
            .map(|out| Self(Mutex::new(out)))
            .map_err(|e| errors::coded(py, &e))
    }

    /// The next rows' keys `(data, offsets)`, in row order.
    fn keys(&self, py: Python<'_>, data: Vec<u8>, offsets: Vec<u8>) -> PyResult<()> {
        let mut guard = held(py, &self.0)?;
        let out = &mut *guard;
        let pair = (data, offsets);
        py.detach(|| out.keys(&column(&pair)))
            .map_err(|e| errors::coded(py, &e))
    }

    /// The next entries: positions and 0-based rows, little-endian `u64`s each.
    fn entries(&self, py: Python<'_>, positions: &[u8], rows: &[u8]) -> PyResult<()> {
        let positions = le_numbers(py, positions, "positions")?;
        let rows = le_numbers(py, rows, "rows")?;
        let mut guard = held(py, &self.0)?;
        let out = &mut *guard;
        py.detach(|| out.entries(&positions, &rows))
            .map_err(|e| errors::coded(py, &e))
    }

    /// Writes the file for a setup of `positions` elements whose SHA-256 is `setup_sha256`.
    fn finish(&self, py: Python<'_>, positions: u64, setup_sha256: &str) -> PyResult<()> {
        let digest = setup_sha256
            .parse()
            .map_err(|e: lockstep_psi::linkage::LinkageError| {
                errors::coded(py, &Coded::new("PSI_USAGE", e.to_string()))
            })?;
        let mut guard = held(py, &self.0)?;
        let out = &mut *guard;
        py.detach(|| out.finish(positions, digest))
            .map_err(|e| errors::coded(py, &e))
    }

    /// Puts the finished permutation in place.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        let mut guard = held(py, &self.0)?;
        let out = &mut *guard;
        py.detach(|| out.commit())
            .map_err(|e| errors::coded(py, &e))
    }

    /// Drops the permutation unwritten (its staged file removed).
    fn abort(&self, py: Python<'_>) -> PyResult<()> {
        held(py, &self.0)?.abort();
        Ok(())
    }
}
