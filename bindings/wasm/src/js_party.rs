//! The PSI classes as wasm-bindgen types: a party of a round (`PsiParty`) and its helpers
//! (`PsiHelper`) on the portable backend, the parts' split (`psiRanges`) and the sample data
//! (`psiSample`).
//!
//! Every rule, argument check and message is [`lockstep_face::psi`]'s, shared with the Node
//! addon; this file converts wasm-bindgen's types to the face's and back (results as plain JS
//! objects and typed arrays, which a worker posts to the page as they are), and wipes the stack
//! after every call that touches a key ([`StackWipe`]).

use crate::fields::JsFields;
use crate::stack::StackWipe;

use js_sys::{Function, Object, Reflect, Uint8Array, Uint32Array};
use lockstep_face::psi::{self, FoundRows, PartMaps};
use lockstep_face::{Callback, Coded, Failure};
use lockstep_psi::Backend;
use lockstep_psi::party::Items;
use wasm_bindgen::prelude::*;

/// The backend every party of this module computes on.
const BACKEND: Backend = Backend::Portable;

/// A progress callback as JS passes it: `progress(done, total)`.
pub(crate) struct Beat(pub(crate) Function);

impl Callback for Beat {
    type Thrown = JsValue;

    fn call(&self, done: f64, total: f64) -> Result<(), JsValue> {
        self.0
            .call2(&JsValue::NULL, &done.into(), &total.into())
            .map(|_| ())
    }
}

/// A JS `Error` with the face's message and `code`.
pub(crate) fn coded(refused: &Coded) -> JsValue {
    let out = js_sys::Error::new(&refused.message);
    // Setting a property on a fresh Error cannot fail.
    let _ = Reflect::set(&out, &"code".into(), &refused.code.into());
    out.into()
}

fn refused(refused: Coded) -> JsValue {
    coded(&refused)
}

/// A face failure for JS: a refusal as a coded error, a throw as it was thrown.
pub(crate) fn thrown(failure: Failure<JsValue>) -> JsValue {
    match failure {
        Failure::Coded(refused) => coded(&refused),
        Failure::Thrown(thrown) => thrown,
    }
}

/// One party of a PSI round, its key inside this module ([`psi::PsiParty`]). Made by
/// [`generate`](Self::generate) or [`import`](Self::import).
#[wasm_bindgen(js_name = PsiParty)]
pub struct JsParty(psi::PsiParty);

#[wasm_bindgen(js_class = PsiParty)]
impl JsParty {
    /// A party of `role` (`"starter"` or `"joiner"`) with a fresh random key
    /// (`crypto.getRandomValues`).
    ///
    /// # Errors
    /// As [`psi::PsiParty::generate`].
    pub fn generate(role: &str) -> Result<JsParty, JsValue> {
        let _wipe = StackWipe;
        psi::PsiParty::generate(role, BACKEND)
            .map(Self)
            .map_err(refused)
    }

    /// A party of `role` with the key `key` (32 big-endian bytes). The module's copy of `key`
    /// is wiped, and wasm-bindgen copies the zeros back.
    ///
    /// # Errors
    /// As [`psi::PsiParty::import`].
    pub fn import(role: &str, key: &mut [u8]) -> Result<JsParty, JsValue> {
        let _wipe = StackWipe;
        psi::PsiParty::import(role, key, BACKEND)
            .map(Self)
            .map_err(refused)
    }

    /// `"starter"` or `"joiner"`.
    ///
    /// # Errors
    /// Never: wasm-bindgen refuses a call on a freed object before it gets here.
    pub fn role(&self) -> Result<String, JsValue> {
        self.0.role().map(str::to_owned).map_err(refused)
    }

    /// The key's 32 big-endian bytes: the only way the key leaves the module. The module's
    /// copy is wiped once JS has its own.
    ///
    /// # Errors
    /// Never: as [`role`](Self::role).
    #[wasm_bindgen(js_name = exportKey)]
    pub fn export_key(&self) -> Result<Uint8Array, JsValue> {
        let _wipe = StackWipe;
        let key = self.0.export_key().map_err(refused)?;
        Ok(Uint8Array::from(&key[..]))
    }

    /// Begins a setup in parts: `{ values: Uint8Array, ends: Uint32Array }`, the distinct keys
    /// to mask. Rows: `values` with `ends` when `options.packed`, else a record file's bytes.
    ///
    /// # Errors
    /// As [`psi::PsiParty::setup_begin`].
    #[wasm_bindgen(js_name = setupBegin, unchecked_return_type = "{ values: Uint8Array, ends: Uint32Array }")]
    pub fn setup_begin(
        &mut self,
        values: &[u8],
        ends: &[u32],
        #[wasm_bindgen(
            unchecked_param_type = "{ packed?: boolean; columns?: string[]; normalize?: boolean; format: string; fpr?: number; joinerCount: number }"
        )]
        options: &JsValue,
    ) -> Result<Object, JsValue> {
        let _wipe = StackWipe;
        let items = self.0.setup_begin(values, ends, &JsFields(options));
        items_object(&items.map_err(refused)?)
    }

    /// Finishes a setup from the masked keys: the setup message.
    ///
    /// # Errors
    /// As [`psi::PsiParty::setup_finish`]; what `progress` threw.
    #[wasm_bindgen(js_name = setupFinish)]
    pub fn setup_finish(
        &mut self,
        masked: Vec<u8>,
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        self.0
            .setup_finish(masked, progress.map(Beat))
            .map_err(thrown)
    }

    /// The last raw setup's permutation file.
    ///
    /// # Errors
    /// As [`psi::PsiParty::permutation_file`].
    #[wasm_bindgen(js_name = permutationFile)]
    pub fn permutation_file(&self) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        self.0.permutation_file().map_err(refused)
    }

    /// Begins a response in parts: the request's elements to re-mask, packed (33 bytes each).
    ///
    /// # Errors
    /// As [`psi::PsiParty::respond_begin`].
    #[wasm_bindgen(js_name = respondBegin)]
    pub fn respond_begin(
        &mut self,
        request: &[u8],
        joiner_count: f64,
        size_only: bool,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        self.0
            .respond_begin(request, joiner_count, size_only)
            .map_err(refused)
    }

    /// Finishes a response from the re-masked elements.
    ///
    /// # Errors
    /// As [`psi::PsiParty::respond_finish`].
    #[wasm_bindgen(js_name = respondFinish)]
    pub fn respond_finish(&mut self, remasked: &[u8]) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        self.0.respond_finish(remasked).map_err(refused)
    }

    /// The joiner's pairs resolved to this starter's rows: `{ joinerRows: Uint32Array,
    /// starterRows: Uint32Array, file: Uint8Array }`.
    ///
    /// # Errors
    /// As [`psi::PsiParty::resolve`].
    #[wasm_bindgen(
        unchecked_return_type = "{ joinerRows: Uint32Array, starterRows: Uint32Array, file: Uint8Array }"
    )]
    pub fn resolve(&self, pairs: &[u8]) -> Result<Object, JsValue> {
        let _wipe = StackWipe;
        let resolved = self.0.resolve(pairs).map_err(refused)?;
        object(&[
            ("joinerRows", u32s(&resolved.joiner_rows)),
            ("starterRows", u32s(&resolved.starter_rows)),
            ("file", bytes(&resolved.file)),
        ])
    }

    /// Begins a request in parts: the distinct keys to mask; rows as for `setupBegin`.
    ///
    /// # Errors
    /// As [`psi::PsiParty::request_begin`].
    #[wasm_bindgen(js_name = requestBegin, unchecked_return_type = "{ values: Uint8Array, ends: Uint32Array }")]
    pub fn request_begin(
        &mut self,
        values: &[u8],
        ends: &[u32],
        #[wasm_bindgen(
            unchecked_param_type = "{ packed?: boolean; columns?: string[]; normalize?: boolean; sizeOnly?: boolean }"
        )]
        options: &JsValue,
    ) -> Result<Object, JsValue> {
        let _wipe = StackWipe;
        let items = self.0.request_begin(values, ends, &JsFields(options));
        items_object(&items.map_err(refused)?)
    }

    /// Finishes a request from the masked keys: the request message.
    ///
    /// # Errors
    /// As [`psi::PsiParty::request_finish`].
    #[wasm_bindgen(js_name = requestFinish)]
    pub fn request_finish(&mut self, masked: &[u8]) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        self.0.request_finish(masked).map_err(refused)
    }

    /// Begins an intersection in parts: the response's elements to unmask.
    ///
    /// # Errors
    /// As [`psi::PsiParty::intersect_begin`].
    #[wasm_bindgen(js_name = intersectBegin)]
    pub fn intersect_begin(
        &mut self,
        setup: &[u8],
        response: &[u8],
        max_setup_bytes: Option<f64>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        self.0
            .intersect_begin(setup, response, max_setup_bytes)
            .map_err(refused)
    }

    /// Finishes an intersection: `{ size, rows: Uint32Array, setupPositions: Uint32Array |
    /// undefined, rowsFile: Uint8Array | undefined, pairsFile: Uint8Array | undefined }`.
    ///
    /// # Errors
    /// As [`psi::PsiParty::intersect_finish`].
    #[wasm_bindgen(
        js_name = intersectFinish,
        unchecked_return_type = "{ size: number, rows: Uint32Array, setupPositions?: Uint32Array, rowsFile?: Uint8Array, pairsFile?: Uint8Array }"
    )]
    pub fn intersect_finish(&mut self, unmasked: &[u8]) -> Result<Object, JsValue> {
        let _wipe = StackWipe;
        found_object(self.0.intersect_finish(unmasked).map_err(refused)?)
    }

    /// This party's own part of a setup's or a request's map.
    ///
    /// # Errors
    /// As [`PartMaps::mask_part`].
    #[wasm_bindgen(js_name = maskPart)]
    pub fn mask_part(
        &self,
        values: Vec<u8>,
        ends: Vec<u32>,
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        self.0
            .mask_part(values, ends, progress.map(Beat))
            .map_err(thrown)
    }

    /// This party's own part of a response's map.
    ///
    /// # Errors
    /// As [`PartMaps::remask_part`].
    #[wasm_bindgen(js_name = remaskPart)]
    pub fn remask_part(
        &self,
        elements: Vec<u8>,
        first: u32,
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        self.0
            .remask_part(elements, first, progress.map(Beat))
            .map_err(thrown)
    }

    /// This party's own part of an intersection's map.
    ///
    /// # Errors
    /// As [`PartMaps::unmask_part`].
    #[wasm_bindgen(js_name = unmaskPart)]
    pub fn unmask_part(
        &self,
        elements: Vec<u8>,
        first: u32,
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        self.0
            .unmask_part(elements, first, progress.map(Beat))
            .map_err(thrown)
    }
}

/// A helper of a party ([`psi::PsiHelper`]): made only from a delivered key.
#[wasm_bindgen(js_name = PsiHelper)]
pub struct JsHelper(psi::PsiHelper);

#[wasm_bindgen(js_class = PsiHelper)]
impl JsHelper {
    /// A helper of `role` with the delivered `key`. The module's copy of `key` is wiped, and
    /// wasm-bindgen copies the zeros back.
    ///
    /// # Errors
    /// As [`psi::PsiHelper::from_key`].
    #[wasm_bindgen(js_name = fromKey)]
    pub fn from_key(role: &str, key: &mut [u8]) -> Result<JsHelper, JsValue> {
        let _wipe = StackWipe;
        psi::PsiHelper::from_key(role, key, BACKEND)
            .map(Self)
            .map_err(refused)
    }

    /// `"starter"` or `"joiner"`.
    ///
    /// # Errors
    /// Never: wasm-bindgen refuses a call on a freed object before it gets here.
    pub fn role(&self) -> Result<String, JsValue> {
        self.0.role().map(str::to_owned).map_err(refused)
    }

    /// A part of a setup's or a request's map.
    ///
    /// # Errors
    /// As [`PartMaps::mask_part`].
    #[wasm_bindgen(js_name = maskPart)]
    pub fn mask_part(
        &self,
        values: Vec<u8>,
        ends: Vec<u32>,
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        self.0
            .mask_part(values, ends, progress.map(Beat))
            .map_err(thrown)
    }

    /// A part of a response's map.
    ///
    /// # Errors
    /// As [`PartMaps::remask_part`].
    #[wasm_bindgen(js_name = remaskPart)]
    pub fn remask_part(
        &self,
        elements: Vec<u8>,
        first: u32,
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        self.0
            .remask_part(elements, first, progress.map(Beat))
            .map_err(thrown)
    }

    /// A part of an intersection's map.
    ///
    /// # Errors
    /// As [`PartMaps::unmask_part`].
    #[wasm_bindgen(js_name = unmaskPart)]
    pub fn unmask_part(
        &self,
        elements: Vec<u8>,
        first: u32,
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        self.0
            .unmask_part(elements, first, progress.map(Beat))
            .map_err(thrown)
    }
}

/// The parts of `items` for `count` instances: `[start0, end0, start1, end1, ...]`.
///
/// # Errors
/// As [`psi::ranges`].
#[wasm_bindgen(js_name = psiRanges)]
pub fn psi_ranges(items: f64, count: f64) -> Result<Vec<u32>, JsValue> {
    psi::ranges(items, count).map_err(refused)
}

/// The built-in sample data for a starter of `rows` people: `{ starter: Uint8Array, joiner:
/// Uint8Array, starterRows, joinerRows, keyColumn, columns }`.
///
/// # Errors
/// As [`psi::sample`].
#[wasm_bindgen(
    js_name = psiSample,
    unchecked_return_type = "{ starter: Uint8Array, joiner: Uint8Array, starterRows: number, joinerRows: number, keyColumn: string, columns: string[] }"
)]
#[allow(clippy::cast_precision_loss, reason = "counts of rows, below 2^32")]
pub fn psi_sample(rows: f64) -> Result<Object, JsValue> {
    let files = psi::sample(rows).map_err(refused)?;
    let columns = js_sys::Array::new();
    for column in files.columns {
        columns.push(&JsValue::from_str(column));
    }
    object(&[
        ("starter", bytes(&files.starter)),
        ("joiner", bytes(&files.joiner)),
        ("starterRows", JsValue::from(files.starter_rows as f64)),
        ("joinerRows", JsValue::from(files.joiner_rows as f64)),
        ("keyColumn", JsValue::from_str(files.key_column)),
        ("columns", columns.into()),
    ])
}

fn bytes(bytes: &[u8]) -> JsValue {
    Uint8Array::from(bytes).into()
}

fn u32s(values: &[u32]) -> JsValue {
    Uint32Array::from(values).into()
}

/// `{ values, ends }` of packed items.
fn items_object(items: &Items) -> Result<Object, JsValue> {
    object(&[
        ("values", bytes(&items.values)),
        ("ends", u32s(&items.ends)),
    ])
}

/// The JS object of an intersection.
#[allow(clippy::cast_precision_loss, reason = "a count of rows, below 2^32")]
fn found_object(found: FoundRows) -> Result<Object, JsValue> {
    let optional = |b: Option<Vec<u8>>| b.map_or(JsValue::UNDEFINED, |b| bytes(&b));
    object(&[
        ("size", JsValue::from(found.size as f64)),
        ("rows", u32s(&found.rows)),
        (
            "setupPositions",
            found
                .setup_positions
                .map_or(JsValue::UNDEFINED, |p| u32s(&p)),
        ),
        ("rowsFile", optional(found.rows_file)),
        ("pairsFile", optional(found.pairs_file)),
    ])
}

fn object(fields: &[(&str, JsValue)]) -> Result<Object, JsValue> {
    let out = Object::new();
    for (name, value) in fields {
        Reflect::set(&out, &JsValue::from_str(name), value)?;
    }
    Ok(out)
}
