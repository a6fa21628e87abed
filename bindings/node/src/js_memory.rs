//! The addon's one `unsafe`: writing into JS typed arrays (a plan's outputs, a PSI key to wipe).
//! Everything else in the addon is safe code.
//!
//! # Why the writes are sound
//! napi-rs hands a typed array's memory out mutably only through an `unsafe` method, because JS
//! may touch the buffer at any time. A run writes through such slices while no JS runs on them:
//! - `run` (sync) blocks the only JS thread that holds the arrays for the whole call, and the
//!   package passes no array backed by a `SharedArrayBuffer` there (another thread could write
//!   it): `js/src/plan/backends.js` runs such arrays through copies (`needsCopies`, `copyOf` in
//!   `js/src/plan/arrays.js`, which read the arrays' internal slots, not properties a caller's
//!   object could shadow);
//! - `runAsync` is given only arrays the worker owns (its snapshot of the inputs and the outputs
//!   sent to it, referenced by nothing else; `js/src/plan/worker-ops.js` copies any other task's
//!   shared or overlapping arrays first) and holds references to them until it settles; the
//!   worker's teardown waits for the run (`flights.rs`) before the arrays are freed.
//!
//! and no two slices of a run overlap ([`check_disjoint`] refuses a run whose arrays share
//! memory, before any slice is made mutable), so the engine's `&[T]` inputs and `&mut [T]`
//! outputs never alias.
//!
//! A PSI key ([`take_key`]) is copied out and wiped on the JS thread that holds it, before any
//! JS runs again, with no other slice of it alive. The package passes keys in arrays of their
//! own there: `ownCopy` (js/src/psi.js) copies the caller's key into a fresh `ArrayBuffer`,
//! which moves to the worker (`owned`). A key backed by a `SharedArrayBuffer` must not be
//! passed to the addon directly: another thread could write it while it is copied and wiped.

use lockstep_plan::ArrayMut;
use napi::bindgen_prelude::{Either8, Uint8Array};
use zeroize::{Zeroize, Zeroizing};

use crate::JsArray;

/// The byte range an array's elements occupy.
fn bytes_of(array: &JsArray) -> std::ops::Range<usize> {
    fn range<T>(slice: &[T]) -> std::ops::Range<usize> {
        let start = slice.as_ptr() as usize;
        start..start + size_of_val(slice)
    }
    match array {
        Either8::A(v) => range(v),
        Either8::B(v) => range(v),
        Either8::C(v) => range(v),
        Either8::D(v) => range(v),
        Either8::E(v) => range(v),
        Either8::F(v) => range(v),
        Either8::G(v) => range(v),
        Either8::H(v) => range(v),
    }
}

/// `Err((i, j))` names an output `i` that shares memory with input or output `j` (as
/// `"inputs[j]"` / `"outputs[j]"`); inputs may share memory with each other.
pub(crate) fn check_disjoint(
    inputs: &[JsArray],
    outputs: &[JsArray],
) -> Result<(), (usize, String)> {
    let overlap = |a: &std::ops::Range<usize>, b: &std::ops::Range<usize>| {
        !a.is_empty() && !b.is_empty() && a.start < b.end && b.start < a.end
    };
    for (i, output) in outputs.iter().enumerate() {
        let mine = bytes_of(output);
        if let Some(j) = inputs
            .iter()
            .position(|input| overlap(&mine, &bytes_of(input)))
        {
            return Err((i, format!("inputs[{j}]")));
        }
        if let Some(j) = outputs[..i]
            .iter()
            .position(|other| overlap(&mine, &bytes_of(other)))
        {
            return Err((i, format!("outputs[{j}]")));
        }
    }
    Ok(())
}

/// The engine's mutable view of an output array.
///
/// Callers hold the module's invariant: no JS touches `array` while the view lives, and
/// [`check_disjoint`] passed for the run's arrays.
pub(crate) fn output_mut(array: &mut JsArray) -> ArrayMut<'_> {
    // SAFETY: see the module documentation: no JS runs on these arrays during the run, none is
    // shared with another thread, and no two of the run's arrays overlap.
    unsafe {
        match array {
            Either8::A(v) => ArrayMut::I8(v.as_mut()),
            Either8::B(v) => ArrayMut::U8(v.as_mut()),
            Either8::C(v) => ArrayMut::I16(v.as_mut()),
            Either8::D(v) => ArrayMut::U16(v.as_mut()),
            Either8::E(v) => ArrayMut::I32(v.as_mut()),
            Either8::F(v) => ArrayMut::U32(v.as_mut()),
            Either8::G(v) => ArrayMut::F32(v.as_mut()),
            Either8::H(v) => ArrayMut::F64(v.as_mut()),
        }
    }
}

/// A key taken out of the caller's array: its bytes copied into memory that wipes itself on
/// drop, and the array wiped, before any JS can run again (the mutable slice lives only inside
/// this function).
pub(crate) fn take_key(key: &mut Uint8Array) -> Zeroizing<Vec<u8>> {
    // SAFETY: the calling thread is the JS thread that holds `key`, and no JS runs while the
    // slice lives (the copy and the wipe below); see the notes above on shared memory.
    let bytes = unsafe { key.as_mut() };
    let taken = Zeroizing::new(bytes.to_vec());
    bytes.zeroize();
    taken
}
