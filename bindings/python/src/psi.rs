//! OpenMined's `server` and `client` ([`lockstep_face::openmined`]) as the classes
//! `lockstep._native.Server` and `Client`; `lockstep.psi` wraps them in `openmined.psi`'s shape
//! and its message classes.
//!
//! Values come as any iterable of `str` (UTF-8 encoded, as `openmined.psi` encodes them) or
//! `bytes`, copied into one buffer while the lock is held; messages as `bytes`, read in place.
//!
//! # Where key material travels
//! A key passed to `from_key` is copied out of the caller's `bytes` (an immutable Python object
//! this module cannot wipe) into a buffer wiped after the face has read it; the face keeps it
//! as its README says. `export_key` returns a new `bytes` object: the caller's to keep or drop.

use std::sync::{RwLock, RwLockReadGuard, TryLockError};

use lockstep_face::Coded;
use lockstep_face::openmined::{self, Message};
use lockstep_face::progress::Domain;
use lockstep_psi::{Backend, Mode, ServerSetup};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use zeroize::Zeroizing;

use crate::{errors, relay};

/// Both parties mask on OpenSSL's P-256, the fastest backend (the same bytes as the portable).
const BACKEND: Backend = Backend::Native;

/// Values packed into one buffer: `bytes[ends[i - 1]..ends[i]]` is value `i`.
pub(crate) struct Packed {
    pub(crate) bytes: Vec<u8>,
    pub(crate) ends: Vec<usize>,
}

impl Packed {
    /// The values of `iterable`, each a `str` or `bytes`.
    ///
    /// # Errors
    /// `TypeError` naming the first value of another type, or a non-iterable.
    pub(crate) fn of(iterable: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut packed = Self {
            bytes: Vec::new(),
            ends: Vec::new(),
        };
        if iterable.is_instance_of::<PyString>() || iterable.is_instance_of::<PyBytes>() {
            return Err(PyTypeError::new_err(
                "values: a list of str or bytes, not a single str or bytes",
            ));
        }
        for (i, item) in iterable.try_iter()?.enumerate() {
            let item = item?;
            if let Ok(text) = item.cast::<PyString>() {
                packed.bytes.extend_from_slice(text.to_cow()?.as_bytes());
            } else if let Ok(bytes) = item.cast::<PyBytes>() {
                packed.bytes.extend_from_slice(bytes.as_bytes());
            } else {
                return Err(PyTypeError::new_err(format!(
                    "values[{i}]: a str or bytes, not {}",
                    item.get_type().name()?
                )));
            }
            packed.ends.push(packed.bytes.len());
        }
        Ok(packed)
    }

    fn values(&self) -> Vec<&[u8]> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let value = &self.bytes[start..end];
                start = end;
                value
            })
            .collect()
    }
}

/// A step panicked holding the party (an engine bug): its state is not to be trusted.
fn poisoned() -> Coded {
    Coded::new(
        "PSI_INTERNAL",
        "this party's last step failed inside the engine",
    )
}

/// The key in `key`, copied into a buffer the face wipes.
fn key_bytes(key: &[u8]) -> Zeroizing<Vec<u8>> {
    Zeroizing::new(key.to_vec())
}

/// A pyclass over one of the face's two parties: the methods both share (`generate`,
/// `from_key`, `reveal`, `export_key`, `close`), then the party's own.
macro_rules! party_class {
    ($class:ident, $name:literal, $face:ty, $what:literal, { $($own:tt)* }) => {
        #[doc = concat!("OpenMined's `", $what, "`, its key inside. Its steps run side by side ")]
        #[doc = "(each holds it shared); `close` takes it whole, refused while a step runs."]
        #[pyclass(module = "lockstep._native", name = $name, frozen)]
        pub(crate) struct $class(RwLock<$face>);

        impl $class {
            /// The party, shared with the other steps running.
            fn shared(&self, py: Python<'_>) -> PyResult<RwLockReadGuard<'_, $face>> {
                // Only `close` writes, and it never waits: a reader never queues behind it.
                self.0.read().map_err(|_| errors::coded(py, &poisoned()))
            }
        }

        #[pymethods]
        impl $class {
            /// A party with a fresh key (`CreateWithNewKey`) of `reveal`'s mode.
            #[staticmethod]
            fn generate(py: Python<'_>, reveal: bool) -> PyResult<Self> {
                <$face>::generate(reveal, BACKEND)
                    .map(|party| Self(RwLock::new(party)))
                    .map_err(|e| errors::coded(py, &e))
            }

            /// A party with the key's big-endian bytes (`CreateFromKey`).
            #[staticmethod]
            fn from_key(py: Python<'_>, key: &[u8], reveal: bool) -> PyResult<Self> {
                <$face>::import(&mut key_bytes(key), reveal, BACKEND)
                    .map(|party| Self(RwLock::new(party)))
                    .map_err(|e| errors::coded(py, &e))
            }

            /// Whether it reveals the intersection.
            fn reveal(&self, py: Python<'_>) -> PyResult<bool> {
                self.shared(py)?.reveal().map_err(|e| errors::coded(py, &e))
            }

            /// The key's 32 big-endian bytes (`GetPrivateKeyBytes`).
            fn export_key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
                let key = self.shared(py)?.export_key().map_err(|e| errors::coded(py, &e))?;
                Ok(PyBytes::new(py, key.as_ref()))
            }

            /// Drops the key (wiped); later calls raise `PsiError` (`PSI_USAGE`), as does a
            /// close while a step runs.
            fn close(&self, py: Python<'_>) -> PyResult<()> {
                match self.0.try_write() {
                    Ok(mut party) => {
                        party.free();
                        Ok(())
                    }
                    Err(TryLockError::WouldBlock) => Err(errors::coded(py, &Coded::new(
                        "PSI_USAGE",
                        "this party is in a step: close it once the step has ended",
                    ))),
                    Err(TryLockError::Poisoned(_)) => Err(errors::coded(py, &poisoned())),
                }
            }

            $($own)*
        }
    };
}

party_class!(Server, "Server", openmined::Server, "server", {
    /// `CreateSetupMessage`'s bytes: `values` in a setup of `format`.
    #[pyo3(signature = (values, format, fpr, joiner_count, workers = 0, progress = None))]
    #[allow(clippy::too_many_arguments, reason = "the Python call's keywords")]
    fn setup<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
        format: &str,
        fpr: f64,
        joiner_count: i64,
        workers: u32,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let packed = Packed::of(values)?;
        let held = self.shared(py)?;
        let server: &openmined::Server = &held;
        let bytes = relay::run(py, Domain::Psi, progress, |control| {
            let values = packed.values();
            let pool = relay::psi_pool(workers, values.len())?;
            server.setup(&pool, control, &values, format, fpr, joiner_count)
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// `ProcessRequest`'s bytes: the request masked again.
    #[pyo3(signature = (request, workers = 0, progress = None))]
    fn respond<'py>(
        &self,
        py: Python<'py>,
        request: &[u8],
        workers: u32,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let held = self.shared(py)?;
        let server: &openmined::Server = &held;
        let bytes = relay::run(py, Domain::Psi, progress, |control| {
            let pool = relay::psi_pool(workers, request.len() / lockstep_psi::ELEMENT_LEN)?;
            server.respond(&pool, control, request)
        })?;
        Ok(PyBytes::new(py, &bytes))
    }
});

party_class!(Client, "Client", openmined::Client, "client", {
    /// `CreateRequest`'s bytes: `values` masked, in order.
    #[pyo3(signature = (values, workers = 0, progress = None))]
    fn request<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
        workers: u32,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let packed = Packed::of(values)?;
        let held = self.shared(py)?;
        let client: &openmined::Client = &held;
        let bytes = relay::run(py, Domain::Psi, progress, |control| {
            let values = packed.values();
            let pool = relay::psi_pool(workers, values.len())?;
            client.request(&pool, control, &values)
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// `GetIntersection`: the indexes found, in OpenMined's order.
    #[pyo3(signature = (setup, response, workers = 0, progress = None))]
    fn intersect(
        &self,
        py: Python<'_>,
        setup: &[u8],
        response: &[u8],
        workers: u32,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Vec<u64>> {
        let held = self.shared(py)?;
        let client: &openmined::Client = &held;
        relay::run(py, Domain::Psi, progress, |control| {
            let pool = relay::psi_pool(workers, response.len() / lockstep_psi::ELEMENT_LEN)?;
            client.intersect(&pool, control, setup, response)
        })
    }

    /// `GetIntersectionSize`: how many were found.
    #[pyo3(signature = (setup, response, workers = 0, progress = None))]
    fn intersection_size(
        &self,
        py: Python<'_>,
        setup: &[u8],
        response: &[u8],
        workers: u32,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<u64> {
        let held = self.shared(py)?;
        let client: &openmined::Client = &held;
        relay::run(py, Domain::Psi, progress, |control| {
            let pool = relay::psi_pool(workers, response.len() / lockstep_psi::ELEMENT_LEN)?;
            client.intersection_size(&pool, control, setup, response)
        })
    }
});

/// Raises `PsiError` (`PSI_MESSAGE`) unless `data` is a `kind` message (`"setup"`,
/// `"request"`, `"response"`).
#[pyfunction]
pub(crate) fn check_message(py: Python<'_>, kind: &str, data: &[u8]) -> PyResult<()> {
    openmined::check_message(kind, data).map_err(|e| errors::coded(py, &e))
}

/// The fields of the `kind` message in `data`, as a dict of protobuf's field names:
/// `reveal_intersection` and `encrypted_elements` (a request), `encrypted_elements` (a
/// response), `data_structure` (`"raw"`, `"gcs"` or `"bloom_filter"`) with `encrypted_elements`,
/// `div`, `hash_range`, `bits` or `num_hash_functions` (a setup).
#[pyfunction]
pub(crate) fn message_fields<'py>(
    py: Python<'py>,
    kind: &str,
    data: &[u8],
) -> PyResult<Bound<'py, PyDict>> {
    let message = openmined::read_message(kind, data).map_err(|e| errors::coded(py, &e))?;
    let fields = PyDict::new(py);
    let elements = |elements: &[lockstep_psi::Element]| -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, elements.iter().map(|e| PyBytes::new(py, e.as_ref())))
    };
    match message {
        Message::Request(request) => {
            fields.set_item("reveal_intersection", request.mode == Mode::Reveal)?;
            fields.set_item("encrypted_elements", elements(&request.elements)?)?;
        }
        Message::Response(response) => {
            fields.set_item("encrypted_elements", elements(&response.elements)?)?;
        }
        Message::Setup(ServerSetup::Raw(raw)) => {
            fields.set_item("data_structure", "raw")?;
            fields.set_item("encrypted_elements", elements(&raw)?)?;
        }
        Message::Setup(ServerSetup::Gcs(gcs)) => {
            fields.set_item("data_structure", "gcs")?;
            fields.set_item("div", gcs.div)?;
            fields.set_item("hash_range", gcs.hash_range)?;
            fields.set_item("bits", PyBytes::new(py, &gcs.bits))?;
        }
        Message::Setup(ServerSetup::Bloom(bloom)) => {
            fields.set_item("data_structure", "bloom_filter")?;
            fields.set_item("num_hash_functions", bloom.num_hash_functions)?;
            fields.set_item("bits", PyBytes::new(py, &bloom.bits))?;
        }
    }
    Ok(fields)
}
