//! The wasm-bindgen front of lockstep's engines, as the npm package's workers load it.
//!
//! # Brief overview
//!
//! One instance of this module lives in each worker of the JS pool (`js/`); parallelism comes from
//! the pool, so every call here runs on the runtime's current-thread pool and gives the bytes a
//! native run gives at any worker count.
//!
//! - [`abi_version`] (`abiVersion` in JS): the version of the exports below, the face's
//!   [`ABI_VERSION`]; a worker reports it in its handshake and the pool refuses a module of
//!   another version.
//! - [`simd`]: whether this is the simd128 build (the package ships a scalar and a simd128 build;
//!   both give the same bytes).
//! - [`psi_request`] (`psiRequest`): a joiner's OpenMined `psi_proto.Request` over its rows'
//!   values, grouped into distinct keys as `lockstep psi request` groups a file's rows (through
//!   `lockstep_psi::linkage`, the CLI's own code), on the portable P-256 backend.
//! - [`JsParty`] (`PsiParty`) and [`JsHelper`] (`PsiHelper`): a party of a round and its
//!   helpers, [`lockstep_face::psi`] on the portable backend (the Node addon, `bindings/node`,
//!   is the same face on the native one).
//!
//! Every argument check, limit and message is the face's (`lockstep_face`); this crate converts
//! wasm-bindgen's types to the face's and back.
//!
//! - [`JsPlan`] (`PlanProgram`): a plan of format v1, validated, and its runs on the engine's
//!   fused executor (`lockstep_plan`), bytes equal to `lockstep plan run`'s.
//!
//! Values cross the boundary packed: one byte array of all values back to back and one `u32`
//! array of their end offsets, so a request of a million values is two transferable buffers,
//! not a million JS strings.
//!
//! # Where key material travels
//! The key arrives as a `Uint8Array` that wasm-bindgen copies into this module's memory for the
//! call. [`psi_request`] wipes that copy before returning, and wasm-bindgen copies the wiped bytes
//! back, so the caller's array (the pool's snapshot of the key, in the worker) is zero afterwards.
//! The scalar inside the engine is a [`lockstep_psi::Key`], zeroized on drop.
//!
//! A [`Party`](lockstep_psi::party::Party) (`PsiParty`) makes its key inside the module (or imports one); it leaves only by
//! `exportKey`. A step sharded over several instances ([`lockstep_psi::parts`]) gives each other
//! instance the exported key, over a channel between workers, and that instance holds it in a
//! [`Keyed`](lockstep_psi::party::Keyed) (`PsiHelper`) made by `PsiHelper.fromKey`, which wipes the bytes it was given: a
//! helper can neither make a key nor export one.

#![deny(unsafe_code)]

mod fields;
mod js_party;
mod plan;
mod stack;

use lockstep_face::ABI_VERSION;
use wasm_bindgen::prelude::*;

pub use js_party::{JsHelper, JsParty, psi_ranges, psi_sample};
pub use plan::JsPlan;

/// The version of this module's exports: the face's [`ABI_VERSION`], the Node addon's too.
#[wasm_bindgen(js_name = abiVersion)]
pub fn abi_version() -> u32 {
    ABI_VERSION
}

/// Whether this build uses wasm's simd128 instructions.
#[wasm_bindgen]
pub fn simd() -> bool {
    cfg!(target_feature = "simd128")
}

/// A joiner's request message (`psi_proto.Request` bytes, as `lockstep psi request` writes them)
/// over packed values, on the portable backend ([`lockstep_face::psi::request`]: the rows
/// grouped into distinct keys, empty values left out, normalized when `normalize`; `reveal`
/// false makes a size-only request). The bytes equal `lockstep psi request --input FILE
/// [--normalize]` for a plain-text FILE of the values, one per line.
///
/// `progress`, if given, is called as `progress(done, total)` after each block of values; an
/// exception it throws ends the call with that exception.
///
/// `key` is wiped (set to zeros) before this returns, on success and on error.
///
/// # Errors
/// As [`lockstep_face::psi::request`], the code on the JS `Error`'s `code`.
#[wasm_bindgen(js_name = psiRequest)]
pub fn psi_request(
    key: &mut [u8],
    values: Vec<u8>,
    ends: Vec<u32>,
    reveal: bool,
    normalize: bool,
    progress: Option<js_sys::Function>,
) -> Result<Vec<u8>, JsValue> {
    let _wipe = stack::StackWipe;
    lockstep_face::psi::request(
        key,
        values,
        ends,
        reveal,
        normalize,
        lockstep_psi::Backend::Portable,
        progress.map(js_party::Beat),
    )
    .map_err(js_party::thrown)
}
