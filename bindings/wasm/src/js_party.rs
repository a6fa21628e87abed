//! The JS class of a [`Party`] (`PsiParty`), and how its steps' results and errors cross to JS.
//!
//! Results are plain JS objects and typed arrays (a worker posts them to the page as they are);
//! errors are JS `Error`s whose `code` is [`PartyError::code`]. Progress goes to the callback
//! given for the call, as `progress(done, total)`; an exception it throws cancels the step,
//! which then fails with that exception.

use crate::stack::StackWipe;
use std::cell::{Cell, RefCell};

use js_sys::{Function, Object, Reflect, Uint8Array, Uint32Array};
use lockstep_psi::linkage::KeySpec;
use lockstep_shard::{CancelToken, Control, Progress};
use wasm_bindgen::prelude::*;

use lockstep_psi::Backend;
use lockstep_psi::party::{
    self, Found, Items, Keyed, Party, PartyError, Role, Rows, whole_count as count,
};

thread_local! {
    /// Whether a step with progress is running (a callback may not start another).
    static RUNNING: Cell<bool> = const { Cell::new(false) };
    /// The progress callback of the step running on this thread (wasm runs one at a time).
    static CALLBACK: RefCell<Option<Function>> = const { RefCell::new(None) };
    /// What the callback threw, if it did.
    static THROWN: RefCell<Option<JsValue>> = const { RefCell::new(None) };
}

/// One party of a PSI round, its key inside this module (see the crate's notes on key
/// material). Made by [`generate`](Self::generate) or [`import`](Self::import).
#[wasm_bindgen(js_name = PsiParty)]
pub struct JsParty(Party);

#[wasm_bindgen(js_class = PsiParty)]
impl JsParty {
    /// A party of `role` (`"starter"` or `"joiner"`) with a fresh random key
    /// (`crypto.getRandomValues`).
    ///
    /// # Errors
    /// `PSI_USAGE` for another role, `PSI_INTERNAL` if randomness fails.
    pub fn generate(role: &str) -> Result<JsParty, JsValue> {
        let _wipe = StackWipe;
        let role = role.parse::<Role>().map_err(to_js)?;
        Party::generate(role, Backend::Portable)
            .map(Self)
            .map_err(to_js)
    }

    /// A party of `role` with the key `key` (32 big-endian bytes, as `exportKey` gives).
    /// The module's copy of `key` is wiped, and wasm-bindgen copies the zeros back.
    ///
    /// # Errors
    /// `PSI_USAGE` for another role, `PSI_KEY` for a key that cannot be used.
    pub fn import(role: &str, key: &mut [u8]) -> Result<JsParty, JsValue> {
        let _wipe = StackWipe;
        Party::import_as(role, key, Backend::Portable)
            .map(Self)
            .map_err(to_js)
    }

    /// `"starter"` or `"joiner"`.
    pub fn role(&self) -> String {
        self.0.role().to_string()
    }

    /// The key's 32 big-endian bytes: the only way the key leaves the module. The module's
    /// copy is wiped once JS has its own.
    #[wasm_bindgen(js_name = exportKey)]
    pub fn export_key(&self) -> Uint8Array {
        let _wipe = StackWipe;
        let key = self.0.export_key();
        Uint8Array::from(&key[..])
    }

    /// The starter's setup message (see [`Party::setup`]). Rows: `values` with `ends` when
    /// `packed` (one value per row), else `values` is a record file's bytes. `format`: `raw`,
    /// `gcs` or `bloom`; `fpr` defaults to the CLI's.
    ///
    /// # Errors
    /// As [`Party::setup`], with their codes.
    #[allow(
        clippy::too_many_arguments,
        reason = "the flags of `psi setup`, each needed"
    )]
    pub fn setup(
        &mut self,
        values: &[u8],
        ends: &[u32],
        packed: bool,
        columns: Vec<String>,
        normalize: bool,
        format: &str,
        fpr: Option<f64>,
        joiner_count: f64,
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        let params = party::setup_params(format, fpr, joiner_count).map_err(to_js)?;
        let spec = KeySpec { columns, normalize };
        let rows = Rows::new(values, ends, packed);
        with_progress(progress, |control| {
            self.0.setup(rows, &spec, &params, control)
        })
    }

    /// The last raw setup's permutation file, as `psi setup --permutation-out` writes it.
    ///
    /// # Errors
    /// As [`Party::permutation_file`].
    #[wasm_bindgen(js_name = permutationFile)]
    pub fn permutation_file(&self) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        self.0.permutation_file().map_err(to_js)
    }

    /// The starter's response to `request` (see [`Party::respond`]).
    ///
    /// # Errors
    /// As [`Party::respond`].
    pub fn respond(
        &mut self,
        request: &[u8],
        joiner_count: f64,
        size_only: bool,
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        let joiner_count = count(joiner_count, "joinerCount").map_err(to_js)?;
        with_progress(progress, |control| {
            self.0.respond(request, joiner_count, size_only, control)
        })
    }

    /// The joiner's pairs resolved to this starter's rows: `{ joinerRows: Uint32Array,
    /// starterRows: Uint32Array, file: Uint8Array }` (0-based rows; `file` as `psi resolve`
    /// writes it).
    ///
    /// # Errors
    /// As [`Party::resolve`].
    pub fn resolve(&self, pairs: &[u8]) -> Result<Object, JsValue> {
        let _wipe = StackWipe;
        let resolved = self.0.resolve(pairs).map_err(to_js)?;
        let joiner: Vec<u32> = resolved.pairs.iter().map(|p| row(p.joiner_row)).collect();
        let starter: Vec<u32> = resolved.pairs.iter().map(|p| row(p.starter_row)).collect();
        object(&[
            ("joinerRows", Uint32Array::from(&joiner[..]).into()),
            ("starterRows", Uint32Array::from(&starter[..]).into()),
            ("file", Uint8Array::from(&resolved.file[..]).into()),
        ])
    }

    /// The joiner's request (see [`Party::request`]); rows as for [`setup`](Self::setup).
    ///
    /// # Errors
    /// As [`Party::request`].
    #[allow(
        clippy::too_many_arguments,
        reason = "the flags of `psi request`, each needed"
    )]
    pub fn request(
        &mut self,
        values: &[u8],
        ends: &[u32],
        packed: bool,
        columns: Vec<String>,
        normalize: bool,
        size_only: bool,
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        let spec = KeySpec { columns, normalize };
        let rows = Rows::new(values, ends, packed);
        with_progress(progress, |control| {
            self.0.request(rows, &spec, size_only, control)
        })
    }

    /// The joiner's intersection (see [`Party::intersect`]; `max_setup_bytes` defaults to
    /// [`DEFAULT_MAX_SETUP_BYTES`](party::DEFAULT_MAX_SETUP_BYTES)): `{ size, rows: Uint32Array,
    /// setupPositions: Uint32Array | undefined, rowsFile: Uint8Array | undefined, pairsFile:
    /// Uint8Array | undefined }` (0-based rows; positions after a raw setup; the files as
    /// `psi intersect --out` and `--pairs-out` write them).
    ///
    /// # Errors
    /// As [`Party::intersect`].
    pub fn intersect(
        &mut self,
        setup: &[u8],
        response: &[u8],
        max_setup_bytes: Option<f64>,
        progress: Option<Function>,
    ) -> Result<Object, JsValue> {
        let _wipe = StackWipe;
        let limit = party::setup_limit(max_setup_bytes).map_err(to_js)?;
        let found = with_progress(progress, |control| {
            self.0.intersect(setup, response, limit, control)
        })?;
        found_object(found)
    }

    /// Begins a setup in parts (see [`Party::setup_begin`]): `{ values: Uint8Array, ends:
    /// Uint32Array }`, the distinct keys to mask (by [`mask_part`](Self::mask_part) here or on
    /// helpers), then [`setup_finish`](Self::setup_finish). Arguments as for
    /// [`setup`](Self::setup).
    ///
    /// # Errors
    /// As [`Party::setup_begin`].
    #[wasm_bindgen(js_name = setupBegin)]
    #[allow(
        clippy::too_many_arguments,
        reason = "the flags of `psi setup`, each needed"
    )]
    pub fn setup_begin(
        &mut self,
        values: &[u8],
        ends: &[u32],
        packed: bool,
        columns: Vec<String>,
        normalize: bool,
        format: &str,
        fpr: Option<f64>,
        joiner_count: f64,
    ) -> Result<Object, JsValue> {
        let _wipe = StackWipe;
        let params = party::setup_params(format, fpr, joiner_count).map_err(to_js)?;
        let spec = KeySpec { columns, normalize };
        let items = self
            .0
            .setup_begin(Rows::new(values, ends, packed), &spec, &params)
            .map_err(to_js)?;
        items_object(&items)
    }

    /// Finishes a setup from the masked keys, packed, in key order: the setup message.
    ///
    /// # Errors
    /// As [`Party::setup_finish`].
    #[wasm_bindgen(js_name = setupFinish)]
    pub fn setup_finish(
        &mut self,
        masked: &[u8],
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        with_progress(progress, |control| self.0.setup_finish(masked, control))
    }

    /// Begins a request in parts: the distinct keys to mask, as
    /// [`setup_begin`](Self::setup_begin) gives them.
    ///
    /// # Errors
    /// As [`Party::request_begin`].
    #[wasm_bindgen(js_name = requestBegin)]
    pub fn request_begin(
        &mut self,
        values: &[u8],
        ends: &[u32],
        packed: bool,
        columns: Vec<String>,
        normalize: bool,
        size_only: bool,
    ) -> Result<Object, JsValue> {
        let _wipe = StackWipe;
        let spec = KeySpec { columns, normalize };
        let items = self
            .0
            .request_begin(Rows::new(values, ends, packed), &spec, size_only)
            .map_err(to_js)?;
        items_object(&items)
    }

    /// Finishes a request from the masked keys, packed, in key order: the request message.
    ///
    /// # Errors
    /// As [`Party::request_finish`].
    #[wasm_bindgen(js_name = requestFinish)]
    pub fn request_finish(&mut self, masked: &[u8]) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        self.0.request_finish(masked).map_err(to_js)
    }

    /// Begins a response in parts: the request's elements to re-mask, packed (33 bytes each).
    ///
    /// # Errors
    /// As [`Party::respond_begin`].
    #[wasm_bindgen(js_name = respondBegin)]
    pub fn respond_begin(
        &mut self,
        request: &[u8],
        joiner_count: f64,
        size_only: bool,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        let joiner_count = count(joiner_count, "joinerCount").map_err(to_js)?;
        self.0
            .respond_begin(request, joiner_count, size_only)
            .map_err(to_js)
    }

    /// Finishes a response from the re-masked elements, packed, in request order.
    ///
    /// # Errors
    /// As [`Party::respond_finish`].
    #[wasm_bindgen(js_name = respondFinish)]
    pub fn respond_finish(&mut self, remasked: &[u8]) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        self.0.respond_finish(remasked).map_err(to_js)
    }

    /// Begins an intersection in parts: the response's elements to unmask, packed.
    ///
    /// # Errors
    /// As [`Party::intersect_begin`].
    #[wasm_bindgen(js_name = intersectBegin)]
    pub fn intersect_begin(
        &mut self,
        setup: &[u8],
        response: &[u8],
        max_setup_bytes: Option<f64>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        let limit = party::setup_limit(max_setup_bytes).map_err(to_js)?;
        self.0
            .intersect_begin(setup, response, limit)
            .map_err(to_js)
    }

    /// Finishes an intersection from the unmasked elements, packed, in response order: the
    /// object [`intersect`](Self::intersect) gives.
    ///
    /// # Errors
    /// As [`Party::intersect_finish`].
    #[wasm_bindgen(js_name = intersectFinish)]
    pub fn intersect_finish(&mut self, unmasked: &[u8]) -> Result<Object, JsValue> {
        let _wipe = StackWipe;
        found_object(self.0.intersect_finish(unmasked).map_err(to_js)?)
    }

    /// This party's own part of a setup's or a request's map (see [`Keyed::mask`]).
    ///
    /// # Errors
    /// As [`Keyed::mask`].
    #[wasm_bindgen(js_name = maskPart)]
    pub fn mask_part(
        &self,
        values: &[u8],
        ends: &[u32],
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        with_progress(progress, |control| {
            self.0.keyed().mask(values, ends, control)
        })
    }

    /// This party's own part of a response's map (see [`Keyed::remask`]).
    ///
    /// # Errors
    /// As [`Keyed::remask`].
    #[wasm_bindgen(js_name = remaskPart)]
    pub fn remask_part(
        &self,
        elements: &[u8],
        first: u32,
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        with_progress(progress, |control| {
            self.0.keyed().remask(elements, first as usize, control)
        })
    }

    /// This party's own part of an intersection's map (see [`Keyed::unmask`]).
    ///
    /// # Errors
    /// As [`Keyed::unmask`].
    #[wasm_bindgen(js_name = unmaskPart)]
    pub fn unmask_part(
        &self,
        elements: &[u8],
        first: u32,
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        with_progress(progress, |control| {
            self.0.keyed().unmask(elements, first as usize, control)
        })
    }
}

/// A helper of a party: maps parts of that party's steps on another instance with the key the
/// party delivered to it. It is made only from a delivered key ([`from_key`](Self::from_key)):
/// a helper has no way to make a key of its own, and none to export one.
#[wasm_bindgen(js_name = PsiHelper)]
pub struct JsHelper(Keyed);

#[wasm_bindgen(js_class = PsiHelper)]
impl JsHelper {
    /// A helper of `role` with the delivered `key` (32 bytes, as `exportKey` gives). The
    /// module's copy of `key` is wiped, and wasm-bindgen copies the zeros back.
    ///
    /// # Errors
    /// `PSI_USAGE` for another role, `PSI_KEY` for a key that cannot be used.
    #[wasm_bindgen(js_name = fromKey)]
    pub fn from_key(role: &str, key: &mut [u8]) -> Result<JsHelper, JsValue> {
        let _wipe = StackWipe;
        Keyed::from_key_as(role, key, Backend::Portable)
            .map(Self)
            .map_err(to_js)
    }

    /// `"starter"` or `"joiner"`.
    pub fn role(&self) -> String {
        self.0.role().to_string()
    }

    /// A part of a setup's or a request's map (see [`Keyed::mask`]).
    ///
    /// # Errors
    /// As [`Keyed::mask`].
    #[wasm_bindgen(js_name = maskPart)]
    pub fn mask_part(
        &self,
        values: &[u8],
        ends: &[u32],
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        with_progress(progress, |control| self.0.mask(values, ends, control))
    }

    /// A part of a response's map (see [`Keyed::remask`]).
    ///
    /// # Errors
    /// As [`Keyed::remask`].
    #[wasm_bindgen(js_name = remaskPart)]
    pub fn remask_part(
        &self,
        elements: &[u8],
        first: u32,
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        with_progress(progress, |control| {
            self.0.remask(elements, first as usize, control)
        })
    }

    /// A part of an intersection's map (see [`Keyed::unmask`]).
    ///
    /// # Errors
    /// As [`Keyed::unmask`].
    #[wasm_bindgen(js_name = unmaskPart)]
    pub fn unmask_part(
        &self,
        elements: &[u8],
        first: u32,
        progress: Option<Function>,
    ) -> Result<Vec<u8>, JsValue> {
        let _wipe = StackWipe;
        with_progress(progress, |control| {
            self.0.unmask(elements, first as usize, control)
        })
    }
}

/// The parts of `items` for `count` instances, as the engine splits them
/// ([`party::part_bounds`]): `[start0, end0, start1, end1, ...]`, in order.
///
/// # Errors
/// As [`party::part_bounds`] (`PSI_USAGE`, `PSI_LIMIT`).
#[wasm_bindgen(js_name = psiRanges)]
pub fn psi_ranges(items: f64, count: f64) -> Result<Vec<u32>, JsValue> {
    party::part_bounds(items, count).map_err(to_js)
}

/// The built-in sample data ([`lockstep_psi::sample`]) for a starter of `rows` people, the
/// files `lockstep psi demo --rows N --dir D` writes: `{ starter: Uint8Array, joiner:
/// Uint8Array, starterRows, joinerRows, keyColumn, columns }` (CSV; match on `keyColumn`,
/// normalized).
///
/// # Errors
/// As [`party::sample`]: `PSI_USAGE`, `PSI_LIMIT` past [`sample::MAX_PEOPLE`](lockstep_psi::sample::MAX_PEOPLE),
/// `PSI_MEMORY` for files that do not fit.
#[wasm_bindgen(js_name = psiSample)]
pub fn psi_sample(rows: f64) -> Result<Object, JsValue> {
    use lockstep_psi::sample;
    let orgs = party::sample(rows).map_err(to_js)?;
    let columns = js_sys::Array::new();
    for column in sample::HEADER {
        columns.push(&JsValue::from_str(column));
    }
    object(&[
        ("starter", Uint8Array::from(&orgs.starter[..]).into()),
        ("joiner", Uint8Array::from(&orgs.joiner[..]).into()),
        ("starterRows", JsValue::from(orgs.starter_rows as f64)),
        ("joinerRows", JsValue::from(orgs.joiner_rows as f64)),
        ("keyColumn", JsValue::from_str(sample::KEY_COLUMN)),
        ("columns", columns.into()),
    ])
}

/// `{ values, ends }` of packed items.
fn items_object(items: &Items) -> Result<Object, JsValue> {
    object(&[
        ("values", Uint8Array::from(&items.values[..]).into()),
        ("ends", Uint32Array::from(&items.ends[..]).into()),
    ])
}

/// The JS object of an intersection.
fn found_object(found: Found) -> Result<Object, JsValue> {
    let rows: Vec<u32> = found.rows.iter().map(|m| row(m.row)).collect();
    let positions: Option<Vec<u32>> = found
        .rows
        .iter()
        .map(|m| m.setup_position.map(row))
        .collect();
    let optional = |bytes: Option<Vec<u8>>| {
        bytes.map_or(JsValue::UNDEFINED, |b| Uint8Array::from(&b[..]).into())
    };
    let positions = match positions {
        Some(p) if !found.rows.is_empty() => Uint32Array::from(&p[..]).into(),
        _ => JsValue::UNDEFINED,
    };
    object(&[
        ("size", JsValue::from(found.size as f64)),
        ("rows", Uint32Array::from(&rows[..]).into()),
        ("setupPositions", positions),
        ("rowsFile", optional(found.rows_file)),
        ("pairsFile", optional(found.pairs_file)),
    ])
}

/// A 0-based row or position as JS gets it: wasm32 memory holds fewer than 2^32 rows.
fn row(index: usize) -> u32 {
    u32::try_from(index).expect("invariant: wasm32 holds fewer than 2^32 rows")
}

fn object(fields: &[(&str, JsValue)]) -> Result<Object, JsValue> {
    let out = Object::new();
    for (name, value) in fields {
        Reflect::set(&out, &JsValue::from_str(name), value)?;
    }
    Ok(out)
}

/// A JS `Error` with the party error's message and `code`.
fn to_js(error: PartyError) -> JsValue {
    let out = js_sys::Error::new(&error.to_string());
    // Setting a property on a fresh Error cannot fail.
    let _ = Reflect::set(&out, &"code".into(), &error.code().into());
    out.into()
}

/// Runs a step under a control whose progress calls `progress` and whose cancel token a throw
/// from it sets; returns what it threw in place of the step's `Cancelled`.
fn with_progress<T>(
    progress: Option<Function>,
    step: impl FnOnce(&Control) -> Result<T, PartyError>,
) -> Result<T, JsValue> {
    if RUNNING.replace(true) {
        return Err(to_js(PartyError::Usage(
            "a step cannot start from another step's progress callback".to_owned(),
        )));
    }
    let result = progressed(progress, step);
    RUNNING.set(false);
    result
}

/// [`with_progress`]'s body, with no other step running.
fn progressed<T>(
    progress: Option<Function>,
    step: impl FnOnce(&Control) -> Result<T, PartyError>,
) -> Result<T, JsValue> {
    let cancel = CancelToken::new();
    let mut control = Control::new().with_cancel(cancel.clone());
    if progress.is_some() {
        CALLBACK.with(|c| *c.borrow_mut() = progress);
        control = control.with_progress(Progress::new(move |report| {
            let total = report.total.unwrap_or(report.done);
            // Cloned out of the cell before it is called: nothing is borrowed while JS runs.
            let callback = CALLBACK.with(|c| c.borrow().clone());
            let outcome = callback.map_or(Ok(()), |callback| {
                callback
                    .call2(
                        &JsValue::NULL,
                        &JsValue::from(report.done as f64),
                        &JsValue::from(total as f64),
                    )
                    .map(|_| ())
            });
            if let Err(thrown) = outcome {
                THROWN.with(|t| {
                    t.borrow_mut().get_or_insert(thrown);
                });
                cancel.cancel();
            }
        }));
    }
    let result = step(&control);
    CALLBACK.with(|c| c.borrow_mut().take());
    match THROWN.with(|t| t.borrow_mut().take()) {
        Some(thrown) => Err(thrown),
        None => result.map_err(to_js),
    }
}
