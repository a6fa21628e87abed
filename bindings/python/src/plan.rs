//! A plan run over numpy arrays without a copy: `lockstep._native.Plan`, which `lockstep.plan`
//! wraps.
//!
//! Each input is borrowed read-only and each output read-write through numpy's own borrow
//! tracking (the `numpy` crate): an output that is also an input, or two outputs that are one
//! array, is refused before any work, and no other caller of this module writes an array a run
//! holds. An array must be C-contiguous (any shape; its elements in memory order): a strided
//! view is refused by name (a plan's views take strides and offsets over a contiguous array). The
//! dtype of each array must be one of the plan format's eight, and the plan's own checks (which
//! dtype and length each input and output must have) are the engine's, before any work.
//!
//! Outputs not given are allocated by numpy as one-dimensional arrays of the lengths the run's
//! layout states (`numpy.empty` where the run writes every element). An array must also be
//! aligned to its element size (a view at an odd byte offset is refused).
//!
//! The lock is let go for the run ([`relay::run`]): another Python thread that writes an input,
//! reads or writes an output, or resizes an array (`ndarray.resize(refcheck=False)`) while the
//! run holds it races with the run, as it would under any of numpy's functions that let the lock
//! go; numpy's borrow tracking keeps out only this module's other callers.

use std::sync::Arc;

use lockstep_face::Coded;
use lockstep_face::progress::Domain;
use lockstep_plan::{ArrayMut, ArrayRef, CompiledPlan, DType, RunError, RunOptions};
use numpy::{
    PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyReadwriteArrayDyn,
    PyUntypedArray, PyUntypedArrayMethods, dtype,
};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::{errors, relay};

/// A refusal at `at` (`inputs[0]`, `outputs[1]`) in the engine's binding words.
fn binding(at: String, message: impl Into<String>) -> Coded {
    RunError::Binding {
        at,
        message: message.into(),
    }
    .into()
}

/// Runs `$body` with `$t` the Rust type of `$dtype`.
macro_rules! by_dtype {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            DType::I8 => {
                type $t = i8;
                $body
            }
            DType::U8 => {
                type $t = u8;
                $body
            }
            DType::I16 => {
                type $t = i16;
                $body
            }
            DType::U16 => {
                type $t = u16;
                $body
            }
            DType::I32 => {
                type $t = i32;
                $body
            }
            DType::U32 => {
                type $t = u32;
                $body
            }
            DType::F32 => {
                type $t = f32;
                $body
            }
            DType::F64 => {
                type $t = f64;
                $body
            }
        }
    };
}

/// An input borrowed read-only.
enum Input<'py> {
    I8(PyReadonlyArrayDyn<'py, i8>),
    U8(PyReadonlyArrayDyn<'py, u8>),
    I16(PyReadonlyArrayDyn<'py, i16>),
    U16(PyReadonlyArrayDyn<'py, u16>),
    I32(PyReadonlyArrayDyn<'py, i32>),
    U32(PyReadonlyArrayDyn<'py, u32>),
    F32(PyReadonlyArrayDyn<'py, f32>),
    F64(PyReadonlyArrayDyn<'py, f64>),
}

/// An output borrowed read-write.
enum Output<'py> {
    I8(PyReadwriteArrayDyn<'py, i8>),
    U8(PyReadwriteArrayDyn<'py, u8>),
    I16(PyReadwriteArrayDyn<'py, i16>),
    U16(PyReadwriteArrayDyn<'py, u16>),
    I32(PyReadwriteArrayDyn<'py, i32>),
    U32(PyReadwriteArrayDyn<'py, u32>),
    F32(PyReadwriteArrayDyn<'py, f32>),
    F64(PyReadwriteArrayDyn<'py, f64>),
}

/// The plan format's dtype of `array`, if it has one.
fn dtype_of(py: Python<'_>, array: &Bound<'_, PyUntypedArray>) -> Option<DType> {
    let descr = array.dtype();
    [
        (dtype::<i8>(py), DType::I8),
        (dtype::<u8>(py), DType::U8),
        (dtype::<i16>(py), DType::I16),
        (dtype::<u16>(py), DType::U16),
        (dtype::<i32>(py), DType::I32),
        (dtype::<u32>(py), DType::U32),
        (dtype::<f32>(py), DType::F32),
        (dtype::<f64>(py), DType::F64),
    ]
    .into_iter()
    .find(|(d, _)| descr.is_equiv_to(d))
    .map(|(_, t)| t)
}

/// `object` as a numpy array of one of the eight dtypes, C-contiguous.
fn array<'py>(
    py: Python<'py>,
    object: &Bound<'py, PyAny>,
    at: &str,
) -> Result<(Bound<'py, PyUntypedArray>, DType), Coded> {
    let Ok(array) = object.cast::<PyUntypedArray>() else {
        let kind = object
            .get_type()
            .name()
            .map_or_else(|_| "?".to_owned(), |n| n.to_string());
        return Err(binding(at.to_owned(), format!("a numpy array, not {kind}")));
    };
    let Some(dtype) = dtype_of(py, array) else {
        return Err(binding(
            at.to_owned(),
            format!(
                "dtype {} is not one of i8, u8, i16, u16, i32, u32, f32, f64",
                array.dtype()
            ),
        ));
    };
    if !array.is_c_contiguous() {
        return Err(binding(
            at.to_owned(),
            "a strided view: pass a contiguous array (numpy.ascontiguousarray) and put the \
             stride in the plan's view",
        ));
    }
    Ok((array.clone(), dtype))
}

fn borrowed(at: &str) -> impl Fn(numpy::BorrowError) -> Coded + '_ {
    move |e| {
        binding(
            at.to_owned(),
            format!(
                "cannot be borrowed for this run ({e}): an output that is an input or another \
                 output, a read-only output, or an array another run holds"
            ),
        )
    }
}

/// An array whose elements are not aligned to their size (a view at an odd byte offset).
fn misaligned(at: &str) -> Coded {
    binding(
        at.to_owned(),
        "its elements are not aligned to their size (numpy.ascontiguousarray makes an aligned copy)",
    )
}
impl<'py> Input<'py> {
    fn of(py: Python<'py>, object: &Bound<'py, PyAny>, at: &str) -> Result<(Self, DType), Coded> {
        let (array, dtype) = array(py, object, at)?;
        let input = by_dtype!(dtype, T => {
            let typed = array.cast::<PyArrayDyn<T>>().expect("invariant: the dtype was just matched");
            let read = typed.try_readonly().map_err(borrowed(at))?;
            if read.as_slice().is_err() {
                return Err(misaligned(at));
            }
            Input::from(read)
        });
        Ok((input, dtype))
    }

    fn view(&self) -> ArrayRef<'_> {
        fn slice<T>(s: Result<T, numpy::AsSliceError>) -> T {
            s.expect("invariant: checked contiguous and aligned when borrowed")
        }
        match self {
            Self::I8(a) => ArrayRef::I8(slice(a.as_slice())),
            Self::U8(a) => ArrayRef::U8(slice(a.as_slice())),
            Self::I16(a) => ArrayRef::I16(slice(a.as_slice())),
            Self::U16(a) => ArrayRef::U16(slice(a.as_slice())),
            Self::I32(a) => ArrayRef::I32(slice(a.as_slice())),
            Self::U32(a) => ArrayRef::U32(slice(a.as_slice())),
            Self::F32(a) => ArrayRef::F32(slice(a.as_slice())),
            Self::F64(a) => ArrayRef::F64(slice(a.as_slice())),
        }
    }
}

impl<'py> Output<'py> {
    fn of(py: Python<'py>, object: &Bound<'py, PyAny>, at: &str) -> Result<Self, Coded> {
        let (array, dtype) = array(py, object, at)?;
        Ok(by_dtype!(dtype, T => {
            let typed = array.cast::<PyArrayDyn<T>>().expect("invariant: the dtype was just matched");
            let mut write = typed.try_readwrite().map_err(borrowed(at))?;
            if write.as_slice_mut().is_err() {
                return Err(misaligned(at));
            }
            Output::from(write)
        }))
    }

    fn view(&mut self) -> ArrayMut<'_> {
        fn slice<T>(s: Result<T, numpy::AsSliceError>) -> T {
            s.expect("invariant: checked contiguous and aligned when borrowed")
        }
        match self {
            Self::I8(a) => ArrayMut::I8(slice(a.as_slice_mut())),
            Self::U8(a) => ArrayMut::U8(slice(a.as_slice_mut())),
            Self::I16(a) => ArrayMut::I16(slice(a.as_slice_mut())),
            Self::U16(a) => ArrayMut::U16(slice(a.as_slice_mut())),
            Self::I32(a) => ArrayMut::I32(slice(a.as_slice_mut())),
            Self::U32(a) => ArrayMut::U32(slice(a.as_slice_mut())),
            Self::F32(a) => ArrayMut::F32(slice(a.as_slice_mut())),
            Self::F64(a) => ArrayMut::F64(slice(a.as_slice_mut())),
        }
    }
}

macro_rules! from_borrows {
    ($($variant:ident: $t:ty),*) => {$(
        impl<'py> From<PyReadonlyArrayDyn<'py, $t>> for Input<'py> {
            fn from(a: PyReadonlyArrayDyn<'py, $t>) -> Self { Self::$variant(a) }
        }
        impl<'py> From<PyReadwriteArrayDyn<'py, $t>> for Output<'py> {
            fn from(a: PyReadwriteArrayDyn<'py, $t>) -> Self { Self::$variant(a) }
        }
    )*};
}
from_borrows!(I8: i8, U8: u8, I16: i16, U16: u16, I32: i32, U32: u32, F32: f32, F64: f64);

/// A validated plan of format v1.
#[pyclass(module = "lockstep._native", name = "Plan", frozen)]
pub struct Plan(Arc<CompiledPlan>);

#[pymethods]
impl Plan {
    /// The plan in `text` (JSON, format v1), validated.
    #[new]
    fn new(py: Python<'_>, text: &str) -> PyResult<Self> {
        lockstep_face::plan::compile(text)
            .map(|plan| Self(Arc::new(plan)))
            .map_err(|e| errors::coded(py, &e))
    }

    /// The plan's inputs and outputs (ids and dtypes, in order) as JSON.
    fn describe(&self) -> String {
        self.0.plan().signature_json()
    }

    /// Runs the plan over `inputs` into `outputs` (allocated when `None`), on `workers` (0: the
    /// policy's count), and returns the outputs.
    #[pyo3(signature = (inputs, outputs = None, workers = 0, progress = None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<Bound<'py, PyAny>>,
        outputs: Option<Vec<Bound<'py, PyAny>>>,
        workers: u32,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let fail = |e: Coded| errors::coded(py, &e);
        lockstep_face::plan::check_workers(workers).map_err(|e| fail(e.into()))?;
        let mut held = Vec::with_capacity(inputs.len());
        let mut dtypes = Vec::with_capacity(inputs.len());
        for (i, object) in inputs.iter().enumerate() {
            let (input, dtype) = Input::of(py, object, &format!("inputs[{i}]")).map_err(fail)?;
            dtypes.push(dtype);
            held.push(input);
        }
        let outputs = match outputs {
            Some(given) => given,
            None => self.allocate(py, &held, &dtypes)?,
        };
        let mut written = Vec::with_capacity(outputs.len());
        for (i, object) in outputs.iter().enumerate() {
            written.push(Output::of(py, object, &format!("outputs[{i}]")).map_err(fail)?);
        }
        let plan = &self.0;
        let refs: Vec<ArrayRef<'_>> = held.iter().map(Input::view).collect();
        let mut views: Vec<ArrayMut<'_>> = written.iter_mut().map(Output::view).collect();
        relay::run(py, Domain::Plan, progress, |control| {
            let elements = plan.plan().element_count(&refs).map_err(Coded::from)?;
            control.progress().start(Some(elements as u64));
            let count = lockstep_face::plan::workers(workers, elements).map_err(Coded::from)?;
            let pool = relay::pool(count, "PLAN_RUNTIME")?;
            plan.run(&pool, control, &refs, &mut views, &RunOptions::default())
                .map_err(Coded::from)
        })?;
        // The borrows end here, before the arrays go back to the caller.
        drop(views);
        drop(refs);
        drop(written);
        drop(held);
        PyList::new(py, outputs)
    }
}

impl Plan {
    /// Outputs of the dtypes the plan declares and the lengths its layout states, made by
    /// numpy (`numpy.empty` where the run writes every element, the layout's `covered`;
    /// `numpy.zeros` where a strided view leaves gaps), so an allocation numpy refuses is its
    /// `MemoryError`, never a crash.
    fn allocate<'py>(
        &self,
        py: Python<'py>,
        held: &[Input<'py>],
        dtypes: &[DType],
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let fail = |e: Coded| errors::coded(py, &e);
        // Each input's length is its elements', whatever its shape.
        let shapes: Vec<(DType, usize)> = dtypes
            .iter()
            .zip(held)
            .map(|(&dtype, input)| (dtype, input.view().len()))
            .collect();
        // Which outputs are covered and how long they are do not depend on the worker count.
        let layout = self
            .0
            .layout(&shapes, None, 1)
            .map_err(|e| fail(e.into()))?;
        let numpy = py.import("numpy")?;
        self.0
            .plan()
            .outputs()
            .iter()
            .zip(layout.outputs.iter().zip(&layout.covered))
            .map(|(output, (&len, &covered))| {
                let make = if covered { "empty" } else { "zeros" };
                let dtype = by_dtype!(output.dtype, T => dtype::<T>(py));
                numpy.call_method1(make, (len, dtype))
            })
            .collect()
    }
}
