//! The PSI exports as napi-rs types: a party of a round (`PsiParty`) and its helpers
//! (`PsiHelper`) on the engine's native backend (OpenSSL's P-256), the joiner's one-call
//! request (`psiRequest`), the parts' split (`psiRanges`) and the sample data (`psiSample`).
//!
//! Every rule, argument check and message is [`lockstep_face::psi`]'s, shared with the wasm
//! module; this file converts napi-rs's types to the face's and back, and nothing else. Every
//! call runs on the calling thread (a worker's), on the engine's current-thread pool: the
//! package's pool spreads a step over its workers in parts.
//!
//! # Where key material travels
//! As the face says ([`lockstep_face::psi`], "Where key material travels"), and: a key passed
//! in is copied out of the caller's `Uint8Array` into self-wiping memory and that array is
//! wiped before anything else happens (`js_memory::take_key`), on success and on error (an
//! argument napi-rs cannot convert fails the call before it starts, leaving the array as it
//! was). `exportKey` gives a new `Uint8Array` of the 32 bytes, which napi-rs builds from a copy
//! it frees without wiping; the face's copy is wiped.
//!
//! # Progress and errors
//! `progress(done, total)` is called on the calling thread as blocks complete
//! ([`lockstep_face::progress`]); what it throws is rethrown as it was. Other failures are JS
//! `Error`s whose `code` is the face's [`Coded::code`].

use lockstep_face::psi::{self, PartMaps};
use lockstep_face::{Callback, Coded, Failure};
use lockstep_psi::Backend;
use lockstep_psi::party::Items;
use napi::Env;
use napi::bindgen_prelude::{FnArgs, Function, FunctionRef, Object, Uint8Array, Uint32Array};
use napi_derive::napi;

use crate::CodedError;
use crate::fields::JsFields;
use crate::js_memory::take_key;

/// The backend every party of this addon computes on.
const BACKEND: Backend = Backend::Native;

/// A progress callback as JS passes it (written out where it is used: napi-rs declares an
/// alias by its name, which the generated `index.d.ts` does not define).
type JsBeat<'env> = Function<'env, FnArgs<(f64, f64)>, ()>;

/// The status napi-rs leaves a pending JS exception under (it does not replace it).
const PENDING: &str = "PendingException";

/// A progress callback held for the length of a step, with its environment.
struct Beat {
    env: Env,
    callback: FunctionRef<FnArgs<(f64, f64)>, ()>,
}

impl Callback for Beat {
    type Thrown = napi::Error;

    fn call(&self, done: f64, total: f64) -> Result<(), napi::Error> {
        self.callback
            .borrow_back(&self.env)?
            .call((done, total).into())
    }
}

/// The face's callback for `progress`.
fn beat(env: Env, progress: Option<JsBeat<'_>>) -> Result<Option<Beat>, CodedError> {
    progress
        .map(|callback| {
            let callback = callback
                .create_ref()
                .map_err(|e| crate::coded(e.reason.clone(), "PSI_INTERNAL"))?;
            Ok(Beat { env, callback })
        })
        .transpose()
}

/// A face failure for JS: a refusal as a coded error, a throw rethrown as it was.
fn thrown(env: Env, failure: Failure<napi::Error>) -> CodedError {
    match failure {
        Failure::Coded(coded) => crate::from_face(coded),
        Failure::Thrown(thrown) => match env.throw(thrown) {
            Ok(()) => crate::coded("the progress callback threw".to_owned(), PENDING),
            Err(error) => crate::coded(
                format!("the progress callback threw, and rethrowing failed: {error}"),
                "PSI_INTERNAL",
            ),
        },
    }
}

fn refused(coded: Coded) -> CodedError {
    crate::from_face(coded)
}

/// Owned copies of JS memory: a progress callback may resize or detach the caller's buffer.
fn owned(bytes: &[u8]) -> Vec<u8> {
    bytes.to_vec()
}

/// One party of a PSI round, its key inside the addon ([`psi::PsiParty`]).
#[napi(js_name = "PsiParty")]
pub struct JsParty(psi::PsiParty);

#[napi]
impl JsParty {
    /// A party of `role` (`"starter"` or `"joiner"`) with a fresh random key.
    ///
    /// # Errors
    /// As [`psi::PsiParty::generate`].
    #[napi(factory)]
    pub fn generate(role: String) -> Result<JsParty, CodedError> {
        psi::PsiParty::generate(&role, BACKEND)
            .map(Self)
            .map_err(refused)
    }

    /// A party of `role` with the key `key` (32 big-endian bytes), which is wiped.
    ///
    /// # Errors
    /// As [`psi::PsiParty::import`].
    #[napi(factory, js_name = "import")]
    pub fn import(role: String, mut key: Uint8Array) -> Result<JsParty, CodedError> {
        let mut key = take_key(&mut key);
        psi::PsiParty::import(&role, &mut key[..], BACKEND)
            .map(Self)
            .map_err(refused)
    }

    /// `"starter"` or `"joiner"`.
    ///
    /// # Errors
    /// `PSI_USAGE` after `free`.
    #[napi]
    pub fn role(&self) -> Result<String, CodedError> {
        self.0.role().map(str::to_owned).map_err(refused)
    }

    /// The key's 32 big-endian bytes: the only way the key leaves the addon.
    ///
    /// # Errors
    /// `PSI_USAGE` after `free`.
    #[napi(js_name = "exportKey")]
    pub fn export_key(&self) -> Result<Uint8Array, CodedError> {
        let key = self.0.export_key().map_err(refused)?;
        Ok(Uint8Array::from(&key[..]))
    }

    /// Drops the party and wipes its key; every later call fails with `PSI_USAGE`.
    #[napi]
    pub fn free(&mut self) {
        self.0.free();
    }

    /// Begins a setup in parts: `{ values, ends }`, the distinct keys to mask.
    ///
    /// # Errors
    /// As [`psi::PsiParty::setup_begin`].
    #[napi(js_name = "setupBegin")]
    pub fn setup_begin(
        &mut self,
        values: &[u8],
        ends: &[u32],
        #[napi(
            ts_arg_type = "{ packed?: boolean; columns?: string[]; normalize?: boolean; format: string; fpr?: number; joinerCount: number }"
        )]
        options: Object<'_>,
    ) -> Result<PackedItems, CodedError> {
        self.0
            .setup_begin(values, ends, &JsFields(options))
            .map(PackedItems::from)
            .map_err(refused)
    }

    /// Finishes a setup from the masked keys: the setup message.
    ///
    /// # Errors
    /// As [`psi::PsiParty::setup_finish`].
    #[napi(js_name = "setupFinish")]
    pub fn setup_finish(
        &mut self,
        env: Env,
        masked: &[u8],
        #[napi(ts_arg_type = "(done: number, total: number) => void")] progress: Option<JsBeat<'_>>,
    ) -> Result<Uint8Array, CodedError> {
        self.0
            .setup_finish(owned(masked), beat(env, progress)?)
            .map(Uint8Array::from)
            .map_err(|f| thrown(env, f))
    }

    /// The last raw setup's permutation file.
    ///
    /// # Errors
    /// As [`psi::PsiParty::permutation_file`].
    #[napi(js_name = "permutationFile")]
    pub fn permutation_file(&self) -> Result<Uint8Array, CodedError> {
        self.0
            .permutation_file()
            .map(Uint8Array::from)
            .map_err(refused)
    }

    /// Begins a response in parts: the request's elements to re-mask.
    ///
    /// # Errors
    /// As [`psi::PsiParty::respond_begin`].
    #[napi(js_name = "respondBegin")]
    pub fn respond_begin(
        &mut self,
        request: &[u8],
        joiner_count: f64,
        size_only: bool,
    ) -> Result<Uint8Array, CodedError> {
        self.0
            .respond_begin(request, joiner_count, size_only)
            .map(Uint8Array::from)
            .map_err(refused)
    }

    /// Finishes a response from the re-masked elements.
    ///
    /// # Errors
    /// As [`psi::PsiParty::respond_finish`].
    #[napi(js_name = "respondFinish")]
    pub fn respond_finish(&mut self, remasked: &[u8]) -> Result<Uint8Array, CodedError> {
        self.0
            .respond_finish(remasked)
            .map(Uint8Array::from)
            .map_err(refused)
    }

    /// The joiner's pairs resolved to this starter's rows: `{ joinerRows, starterRows, file }`.
    ///
    /// # Errors
    /// As [`psi::PsiParty::resolve`].
    #[napi]
    pub fn resolve(&self, pairs: &[u8]) -> Result<ResolvedPairs, CodedError> {
        self.0
            .resolve(pairs)
            .map(ResolvedPairs::from)
            .map_err(refused)
    }

    /// Begins a request in parts: the distinct keys to mask.
    ///
    /// # Errors
    /// As [`psi::PsiParty::request_begin`].
    #[napi(js_name = "requestBegin")]
    pub fn request_begin(
        &mut self,
        values: &[u8],
        ends: &[u32],
        #[napi(
            ts_arg_type = "{ packed?: boolean; columns?: string[]; normalize?: boolean; sizeOnly?: boolean }"
        )]
        options: Object<'_>,
    ) -> Result<PackedItems, CodedError> {
        self.0
            .request_begin(values, ends, &JsFields(options))
            .map(PackedItems::from)
            .map_err(refused)
    }

    /// Finishes a request from the masked keys: the request message.
    ///
    /// # Errors
    /// As [`psi::PsiParty::request_finish`].
    #[napi(js_name = "requestFinish")]
    pub fn request_finish(&mut self, masked: &[u8]) -> Result<Uint8Array, CodedError> {
        self.0
            .request_finish(masked)
            .map(Uint8Array::from)
            .map_err(refused)
    }

    /// Begins an intersection in parts: the response's elements to unmask.
    ///
    /// # Errors
    /// As [`psi::PsiParty::intersect_begin`].
    #[napi(js_name = "intersectBegin")]
    pub fn intersect_begin(
        &mut self,
        setup: &[u8],
        response: &[u8],
        max_setup_bytes: Option<f64>,
    ) -> Result<Uint8Array, CodedError> {
        self.0
            .intersect_begin(setup, response, max_setup_bytes)
            .map(Uint8Array::from)
            .map_err(refused)
    }

    /// Finishes an intersection: `{ size, rows, setupPositions, rowsFile, pairsFile }`.
    ///
    /// # Errors
    /// As [`psi::PsiParty::intersect_finish`].
    #[napi(js_name = "intersectFinish")]
    pub fn intersect_finish(&mut self, unmasked: &[u8]) -> Result<FoundRows, CodedError> {
        self.0
            .intersect_finish(unmasked)
            .map(FoundRows::from)
            .map_err(refused)
    }

    /// This party's own part of a setup's or a request's map.
    ///
    /// # Errors
    /// As [`PartMaps::mask_part`].
    #[napi(js_name = "maskPart")]
    pub fn mask_part(
        &self,
        env: Env,
        values: &[u8],
        ends: &[u32],
        #[napi(ts_arg_type = "(done: number, total: number) => void")] progress: Option<JsBeat<'_>>,
    ) -> Result<Uint8Array, CodedError> {
        self.0
            .mask_part(owned(values), ends.to_vec(), beat(env, progress)?)
            .map(Uint8Array::from)
            .map_err(|f| thrown(env, f))
    }

    /// This party's own part of a response's map.
    ///
    /// # Errors
    /// As [`PartMaps::remask_part`].
    #[napi(js_name = "remaskPart")]
    pub fn remask_part(
        &self,
        env: Env,
        elements: &[u8],
        first: u32,
        #[napi(ts_arg_type = "(done: number, total: number) => void")] progress: Option<JsBeat<'_>>,
    ) -> Result<Uint8Array, CodedError> {
        self.0
            .remask_part(owned(elements), first, beat(env, progress)?)
            .map(Uint8Array::from)
            .map_err(|f| thrown(env, f))
    }

    /// This party's own part of an intersection's map.
    ///
    /// # Errors
    /// As [`PartMaps::unmask_part`].
    #[napi(js_name = "unmaskPart")]
    pub fn unmask_part(
        &self,
        env: Env,
        elements: &[u8],
        first: u32,
        #[napi(ts_arg_type = "(done: number, total: number) => void")] progress: Option<JsBeat<'_>>,
    ) -> Result<Uint8Array, CodedError> {
        self.0
            .unmask_part(owned(elements), first, beat(env, progress)?)
            .map(Uint8Array::from)
            .map_err(|f| thrown(env, f))
    }
}

/// A helper of a party ([`psi::PsiHelper`]): made only from a delivered key.
#[napi(js_name = "PsiHelper")]
pub struct JsHelper(psi::PsiHelper);

#[napi]
impl JsHelper {
    /// A helper of `role` with the delivered `key`, which is wiped.
    ///
    /// # Errors
    /// As [`psi::PsiHelper::from_key`].
    #[napi(factory, js_name = "fromKey")]
    pub fn from_key(role: String, mut key: Uint8Array) -> Result<JsHelper, CodedError> {
        let mut key = take_key(&mut key);
        psi::PsiHelper::from_key(&role, &mut key[..], BACKEND)
            .map(Self)
            .map_err(refused)
    }

    /// `"starter"` or `"joiner"`.
    ///
    /// # Errors
    /// `PSI_USAGE` after `free`.
    #[napi]
    pub fn role(&self) -> Result<String, CodedError> {
        self.0.role().map(str::to_owned).map_err(refused)
    }

    /// Drops the helper and wipes its key.
    #[napi]
    pub fn free(&mut self) {
        self.0.free();
    }

    /// A part of a setup's or a request's map.
    ///
    /// # Errors
    /// As [`PartMaps::mask_part`].
    #[napi(js_name = "maskPart")]
    pub fn mask_part(
        &self,
        env: Env,
        values: &[u8],
        ends: &[u32],
        #[napi(ts_arg_type = "(done: number, total: number) => void")] progress: Option<JsBeat<'_>>,
    ) -> Result<Uint8Array, CodedError> {
        self.0
            .mask_part(owned(values), ends.to_vec(), beat(env, progress)?)
            .map(Uint8Array::from)
            .map_err(|f| thrown(env, f))
    }

    /// A part of a response's map.
    ///
    /// # Errors
    /// As [`PartMaps::remask_part`].
    #[napi(js_name = "remaskPart")]
    pub fn remask_part(
        &self,
        env: Env,
        elements: &[u8],
        first: u32,
        #[napi(ts_arg_type = "(done: number, total: number) => void")] progress: Option<JsBeat<'_>>,
    ) -> Result<Uint8Array, CodedError> {
        self.0
            .remask_part(owned(elements), first, beat(env, progress)?)
            .map(Uint8Array::from)
            .map_err(|f| thrown(env, f))
    }

    /// A part of an intersection's map.
    ///
    /// # Errors
    /// As [`PartMaps::unmask_part`].
    #[napi(js_name = "unmaskPart")]
    pub fn unmask_part(
        &self,
        env: Env,
        elements: &[u8],
        first: u32,
        #[napi(ts_arg_type = "(done: number, total: number) => void")] progress: Option<JsBeat<'_>>,
    ) -> Result<Uint8Array, CodedError> {
        self.0
            .unmask_part(owned(elements), first, beat(env, progress)?)
            .map(Uint8Array::from)
            .map_err(|f| thrown(env, f))
    }
}

/// A joiner's request message over packed values ([`psi::request`]); `key` is wiped.
///
/// # Errors
/// As [`psi::request`]; what `progress` threw.
#[napi(js_name = "psiRequest")]
pub fn psi_request(
    env: Env,
    mut key: Uint8Array,
    values: &[u8],
    ends: &[u32],
    reveal: bool,
    normalize: bool,
    #[napi(ts_arg_type = "(done: number, total: number) => void")] progress: Option<JsBeat<'_>>,
) -> Result<Uint8Array, CodedError> {
    let mut key = take_key(&mut key);
    let (values, ends) = (owned(values), ends.to_vec());
    psi::request(
        &mut key[..],
        values,
        ends,
        reveal,
        normalize,
        BACKEND,
        beat(env, progress)?,
    )
    .map(Uint8Array::from)
    .map_err(|f| thrown(env, f))
}

/// The parts of `items` for `count` instances: `[start0, end0, start1, end1, ...]`.
///
/// # Errors
/// As [`psi::ranges`].
#[napi(js_name = "psiRanges")]
pub fn psi_ranges(items: f64, count: f64) -> Result<Uint32Array, CodedError> {
    psi::ranges(items, count)
        .map(Uint32Array::from)
        .map_err(refused)
}

/// The built-in sample data for a starter of `rows` people.
///
/// # Errors
/// As [`psi::sample`].
#[napi(js_name = "psiSample")]
pub fn psi_sample(rows: f64) -> Result<Sample, CodedError> {
    psi::sample(rows).map(Sample::from).map_err(refused)
}

/// `{ values, ends }` of packed items.
#[napi(object)]
pub struct PackedItems {
    /// The items' bytes, back to back.
    pub values: Uint8Array,
    /// The end offset of each.
    pub ends: Uint32Array,
}

impl From<Items> for PackedItems {
    fn from(items: Items) -> Self {
        Self {
            values: Uint8Array::from(items.values),
            ends: Uint32Array::from(items.ends),
        }
    }
}

/// A joiner's intersection ([`psi::FoundRows`]).
#[napi(object)]
pub struct FoundRows {
    /// Distinct keys found.
    pub size: f64,
    /// The matched rows, 0-based, ascending.
    pub rows: Uint32Array,
    /// The setup position each matched (raw setups).
    pub setup_positions: Option<Uint32Array>,
    /// The matched rows' file.
    pub rows_file: Option<Uint8Array>,
    /// The pairs file for the starter (raw setups).
    pub pairs_file: Option<Uint8Array>,
}

impl From<psi::FoundRows> for FoundRows {
    #[allow(clippy::cast_precision_loss, reason = "a count of rows, below 2^32")]
    fn from(found: psi::FoundRows) -> Self {
        Self {
            size: found.size as f64,
            rows: Uint32Array::from(found.rows),
            setup_positions: found.setup_positions.map(Uint32Array::from),
            rows_file: found.rows_file.map(Uint8Array::from),
            pairs_file: found.pairs_file.map(Uint8Array::from),
        }
    }
}

/// A starter's resolved pairs ([`psi::ResolvedRows`]).
#[napi(object)]
pub struct ResolvedPairs {
    /// The joiner's rows, 0-based.
    pub joiner_rows: Uint32Array,
    /// The starter's rows, 0-based, pair by pair.
    pub starter_rows: Uint32Array,
    /// The pairs file with the starter's rows.
    pub file: Uint8Array,
}

impl From<psi::ResolvedRows> for ResolvedPairs {
    fn from(resolved: psi::ResolvedRows) -> Self {
        Self {
            joiner_rows: Uint32Array::from(resolved.joiner_rows),
            starter_rows: Uint32Array::from(resolved.starter_rows),
            file: Uint8Array::from(resolved.file),
        }
    }
}

/// The sample data ([`psi::SampleFiles`]).
#[napi(object)]
pub struct Sample {
    /// The starter's CSV file.
    pub starter: Uint8Array,
    /// The joiner's CSV file.
    pub joiner: Uint8Array,
    /// The starter's data rows.
    pub starter_rows: f64,
    /// The joiner's data rows.
    pub joiner_rows: f64,
    /// The column to match on (normalized).
    pub key_column: String,
    /// The files' columns.
    pub columns: Vec<String>,
}

impl From<psi::SampleFiles> for Sample {
    #[allow(clippy::cast_precision_loss, reason = "counts of rows, below 2^32")]
    fn from(files: psi::SampleFiles) -> Self {
        Self {
            starter: Uint8Array::from(files.starter),
            joiner: Uint8Array::from(files.joiner),
            starter_rows: files.starter_rows as f64,
            joiner_rows: files.joiner_rows as f64,
            key_column: files.key_column.to_owned(),
            columns: files.columns.iter().map(|&c| c.to_owned()).collect(),
        }
    }
}
