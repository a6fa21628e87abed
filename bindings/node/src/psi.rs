//! The PSI exports: a party of a round (`PsiParty`) and its helpers (`PsiHelper`) on the
//! engine's native backend (OpenSSL's P-256), the joiner's one-call request (`psiRequest`), the
//! parts' split (`psiRanges`) and the sample data (`psiSample`): the names, arguments and
//! results of the wasm module's exports of ABI 5 (`bindings/wasm/src/js_party.rs`), so the
//! package's PSI worker drives either the same way and gets the same bytes.
//!
//! The rules are [`lockstep_psi::party`]'s; this file only moves arguments and results across.
//! A party's steps come in the parts form the worker drives (`*Begin`, `*Part`, `*Finish`); a
//! whole step is its begin, its one part and its finish.
//!
//! Every call runs on the calling thread (a worker's), on the engine's current-thread pool: the
//! package's pool spreads a step over its workers in parts, as it does with wasm.
//!
//! # Where key material travels
//! A key passed in (`PsiParty.import`, `PsiHelper.fromKey`, `psiRequest`) is copied out of
//! the caller's `Uint8Array` into self-wiping memory and that array is wiped (set to zeros)
//! before anything else happens (`js_memory::take_key`), on success and on error (a role or an
//! argument napi-rs cannot convert fails the call before it starts, leaving the array as it
//! was); the scalar lives in a [`lockstep_psi::Key`] (zeroized on
//! drop) inside the party or helper, which `free` drops. `exportKey` is the only way out: a
//! new `Uint8Array` of the 32 bytes (napi-rs builds it from a copy of the bytes that it frees
//! without wiping; the engine's own copy is wiped).
//!
//! # Progress and errors
//! `progress(done, total)` is called on the calling thread as blocks complete (the beat the
//! pool's hang detection listens to). An exception it throws cancels the step, which then
//! fails with that exception. Other failures are JS `Error`s whose `code` is
//! [`PartyError::code`].

use std::cell::{Cell, RefCell};

use lockstep_psi::Backend;
use lockstep_psi::linkage::KeySpec;
use lockstep_psi::party::{
    self, Found, Items, Keyed, Party, PartyError, RequestError, Role, Rows, whole_count,
};
use lockstep_shard::{CancelToken, Control, Progress};
use napi::Env;
use napi::bindgen_prelude::{FnArgs, Function, FunctionRef, Uint8Array, Uint32Array};
use napi_derive::napi;

use crate::js_memory::take_key;
use crate::{CodedError, coded};

/// The backend every party of this addon computes on.
const BACKEND: Backend = Backend::Native;

/// A progress callback as JS passes it.
type Beat<'env> = Function<'env, FnArgs<(f64, f64)>, ()>;

/// The status napi-rs leaves a pending JS exception under (it does not replace it).
const PENDING: &str = "PendingException";

/// A progress callback kept for the length of a step, with its environment.
type Held = (Env, FunctionRef<FnArgs<(f64, f64)>, ()>);

thread_local! {
    /// Whether a step with progress is running on this thread (a callback may not start another).
    static RUNNING: Cell<bool> = const { Cell::new(false) };
    /// The progress callback of the step running on this thread.
    static CALLBACK: RefCell<Option<Held>> = const { RefCell::new(None) };
    /// What the callback threw, if it did.
    static THROWN: RefCell<Option<napi::Error>> = const { RefCell::new(None) };
}

/// One party of a PSI round, its key inside the addon. Made by `generate` or `import`;
/// `free` drops it (and wipes its key) before the garbage collector would.
#[napi(js_name = "PsiParty")]
pub struct JsParty(Option<Party>);

#[napi]
impl JsParty {
    /// A party of `role` (`"starter"` or `"joiner"`) with a fresh random key (the operating
    /// system's generator).
    ///
    /// # Errors
    /// `PSI_USAGE` for another role, `PSI_INTERNAL` if randomness fails.
    #[napi(factory)]
    pub fn generate(role: String) -> Result<JsParty, CodedError> {
        let role = role.parse::<Role>().map_err(coded_party)?;
        Party::generate(role, BACKEND)
            .map(|p| Self(Some(p)))
            .map_err(coded_party)
    }

    /// A party of `role` with the key `key` (32 big-endian bytes, as `exportKey` gives),
    /// which is wiped.
    ///
    /// # Errors
    /// `PSI_USAGE` for another role, `PSI_KEY` for a key that cannot be used.
    #[napi(factory, js_name = "import")]
    pub fn import(role: String, mut key: Uint8Array) -> Result<JsParty, CodedError> {
        let mut key = take_key(&mut key);
        let key = &mut key[..];
        Party::import_as(&role, key, BACKEND)
            .map(|p| Self(Some(p)))
            .map_err(coded_party)
    }

    /// `"starter"` or `"joiner"`.
    ///
    /// # Errors
    /// `PSI_USAGE` after `free`.
    #[napi]
    pub fn role(&self) -> Result<String, CodedError> {
        Ok(self.party()?.role().to_string())
    }

    /// The key's 32 big-endian bytes: the only way the key leaves the addon.
    ///
    /// # Errors
    /// `PSI_USAGE` after `free`.
    #[napi(js_name = "exportKey")]
    pub fn export_key(&self) -> Result<Uint8Array, CodedError> {
        let key = self.party()?.export_key();
        Ok(Uint8Array::from(&key[..]))
    }

    /// Drops the party and wipes its key; every later call fails with `PSI_USAGE`.
    #[napi]
    pub fn free(&mut self) {
        self.0 = None;
    }

    /// Begins a setup in parts ([`Party::setup_begin`]): `{ values, ends }`, the distinct keys
    /// to mask. Rows: `values` with `ends` when `packed` (one value per row), else `values` is
    /// a record file's bytes. `format`: `raw`, `gcs` or `bloom`; `fpr` defaults to the CLI's.
    ///
    /// # Errors
    /// As [`Party::setup_begin`], with their codes.
    #[napi(js_name = "setupBegin")]
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
        format: String,
        fpr: Option<f64>,
        joiner_count: f64,
    ) -> Result<PackedItems, CodedError> {
        let params = party::setup_params(&format, fpr, joiner_count).map_err(coded_party)?;
        let spec = KeySpec { columns, normalize };
        let items = self
            .party_mut()?
            .setup_begin(Rows::new(values, ends, packed), &spec, &params)
            .map_err(coded_party)?;
        Ok(PackedItems::of(&items))
    }

    /// Finishes a setup from the masked keys, packed, in key order: the setup message.
    ///
    /// # Errors
    /// As [`Party::setup_finish`].
    #[napi(js_name = "setupFinish")]
    pub fn setup_finish(
        &mut self,
        env: Env,
        masked: &[u8],
        progress: Option<Beat<'_>>,
    ) -> Result<Uint8Array, CodedError> {
        let masked = masked.to_vec(); // owned: JS may resize or detach its buffer from the callback
        let party = self.party_mut()?;
        with_progress(env, progress, |control| {
            party.setup_finish(&masked, control)
        })
        .map(Uint8Array::from)
    }

    /// The last raw setup's permutation file, as `psi setup --permutation-out` writes it.
    ///
    /// # Errors
    /// As [`Party::permutation_file`].
    #[napi(js_name = "permutationFile")]
    pub fn permutation_file(&self) -> Result<Uint8Array, CodedError> {
        self.party()?
            .permutation_file()
            .map(Uint8Array::from)
            .map_err(coded_party)
    }

    /// Begins a response in parts: the request's elements to re-mask, packed.
    ///
    /// # Errors
    /// As [`Party::respond_begin`].
    #[napi(js_name = "respondBegin")]
    pub fn respond_begin(
        &mut self,
        request: &[u8],
        joiner_count: f64,
        size_only: bool,
    ) -> Result<Uint8Array, CodedError> {
        let joiner_count = whole_count(joiner_count, "joinerCount").map_err(coded_party)?;
        self.party_mut()?
            .respond_begin(request, joiner_count, size_only)
            .map(Uint8Array::from)
            .map_err(coded_party)
    }

    /// Finishes a response from the re-masked elements, packed, in request order.
    ///
    /// # Errors
    /// As [`Party::respond_finish`].
    #[napi(js_name = "respondFinish")]
    pub fn respond_finish(&mut self, remasked: &[u8]) -> Result<Uint8Array, CodedError> {
        self.party_mut()?
            .respond_finish(remasked)
            .map(Uint8Array::from)
            .map_err(coded_party)
    }

    /// The joiner's pairs resolved to this starter's rows: `{ joinerRows, starterRows, file }`
    /// (0-based rows; `file` as `psi resolve` writes it).
    ///
    /// # Errors
    /// As [`Party::resolve`].
    #[napi]
    pub fn resolve(&self, pairs: &[u8]) -> Result<ResolvedPairs, CodedError> {
        let resolved = self.party()?.resolve(pairs).map_err(coded_party)?;
        let joiner = rows_of(resolved.pairs.iter().map(|p| p.joiner_row))?;
        let starter = rows_of(resolved.pairs.iter().map(|p| p.starter_row))?;
        Ok(ResolvedPairs {
            joiner_rows: joiner,
            starter_rows: starter,
            file: Uint8Array::from(resolved.file),
        })
    }

    /// Begins a request in parts: the distinct keys to mask; rows as for `setupBegin`.
    ///
    /// # Errors
    /// As [`Party::request_begin`].
    #[napi(js_name = "requestBegin")]
    pub fn request_begin(
        &mut self,
        values: &[u8],
        ends: &[u32],
        packed: bool,
        columns: Vec<String>,
        normalize: bool,
        size_only: bool,
    ) -> Result<PackedItems, CodedError> {
        let spec = KeySpec { columns, normalize };
        let items = self
            .party_mut()?
            .request_begin(Rows::new(values, ends, packed), &spec, size_only)
            .map_err(coded_party)?;
        Ok(PackedItems::of(&items))
    }

    /// Finishes a request from the masked keys, packed, in key order: the request message.
    ///
    /// # Errors
    /// As [`Party::request_finish`].
    #[napi(js_name = "requestFinish")]
    pub fn request_finish(&mut self, masked: &[u8]) -> Result<Uint8Array, CodedError> {
        self.party_mut()?
            .request_finish(masked)
            .map(Uint8Array::from)
            .map_err(coded_party)
    }

    /// Begins an intersection in parts (`max_setup_bytes` defaults to
    /// [`party::DEFAULT_MAX_SETUP_BYTES`]): the response's elements to unmask, packed.
    ///
    /// # Errors
    /// As [`Party::intersect_begin`].
    #[napi(js_name = "intersectBegin")]
    pub fn intersect_begin(
        &mut self,
        setup: &[u8],
        response: &[u8],
        max_setup_bytes: Option<f64>,
    ) -> Result<Uint8Array, CodedError> {
        let limit = party::setup_limit(max_setup_bytes).map_err(coded_party)?;
        self.party_mut()?
            .intersect_begin(setup, response, limit)
            .map(Uint8Array::from)
            .map_err(coded_party)
    }

    /// Finishes an intersection from the unmasked elements, packed, in response order:
    /// `{ size, rows, setupPositions, rowsFile, pairsFile }` (0-based rows; positions after a
    /// raw setup; the files as `psi intersect --out` and `--pairs-out` write them).
    ///
    /// # Errors
    /// As [`Party::intersect_finish`].
    #[napi(js_name = "intersectFinish")]
    pub fn intersect_finish(&mut self, unmasked: &[u8]) -> Result<FoundRows, CodedError> {
        let found = self
            .party_mut()?
            .intersect_finish(unmasked)
            .map_err(coded_party)?;
        FoundRows::of(found)
    }

    /// This party's own part of a setup's or a request's map ([`Keyed::mask`]).
    ///
    /// # Errors
    /// As [`Keyed::mask`].
    #[napi(js_name = "maskPart")]
    pub fn mask_part(
        &self,
        env: Env,
        values: &[u8],
        ends: &[u32],
        progress: Option<Beat<'_>>,
    ) -> Result<Uint8Array, CodedError> {
        let keyed = self.party()?.keyed();
        let (values, ends) = (values.to_vec(), ends.to_vec()); // owned, as in `setupFinish`
        with_progress(env, progress, |control| keyed.mask(&values, &ends, control))
            .map(Uint8Array::from)
    }

    /// This party's own part of a response's map ([`Keyed::remask`]).
    ///
    /// # Errors
    /// As [`Keyed::remask`].
    #[napi(js_name = "remaskPart")]
    pub fn remask_part(
        &self,
        env: Env,
        elements: &[u8],
        first: u32,
        progress: Option<Beat<'_>>,
    ) -> Result<Uint8Array, CodedError> {
        let keyed = self.party()?.keyed();
        let elements = elements.to_vec(); // owned, as in `setupFinish`
        with_progress(env, progress, |control| {
            keyed.remask(&elements, first as usize, control)
        })
        .map(Uint8Array::from)
    }

    /// This party's own part of an intersection's map ([`Keyed::unmask`]).
    ///
    /// # Errors
    /// As [`Keyed::unmask`].
    #[napi(js_name = "unmaskPart")]
    pub fn unmask_part(
        &self,
        env: Env,
        elements: &[u8],
        first: u32,
        progress: Option<Beat<'_>>,
    ) -> Result<Uint8Array, CodedError> {
        let keyed = self.party()?.keyed();
        let elements = elements.to_vec(); // owned, as in `setupFinish`
        with_progress(env, progress, |control| {
            keyed.unmask(&elements, first as usize, control)
        })
        .map(Uint8Array::from)
    }
}

impl JsParty {
    fn party(&self) -> Result<&Party, CodedError> {
        self.0.as_ref().ok_or_else(freed)
    }

    fn party_mut(&mut self) -> Result<&mut Party, CodedError> {
        self.0.as_mut().ok_or_else(freed)
    }
}

/// A helper of a party: maps parts of that party's steps in another worker with the key the
/// party delivered to it; made only from a delivered key, with no way to make or export one.
#[napi(js_name = "PsiHelper")]
pub struct JsHelper(Option<Keyed>);

#[napi]
impl JsHelper {
    /// A helper of `role` with the delivered `key` (32 bytes, as `exportKey` gives), which is
    /// wiped.
    ///
    /// # Errors
    /// `PSI_USAGE` for another role, `PSI_KEY` for a key that cannot be used.
    #[napi(factory, js_name = "fromKey")]
    pub fn from_key(role: String, mut key: Uint8Array) -> Result<JsHelper, CodedError> {
        let mut key = take_key(&mut key);
        let key = &mut key[..];
        Keyed::from_key_as(&role, key, BACKEND)
            .map(|k| Self(Some(k)))
            .map_err(coded_party)
    }

    /// `"starter"` or `"joiner"`.
    ///
    /// # Errors
    /// `PSI_USAGE` after `free`.
    #[napi]
    pub fn role(&self) -> Result<String, CodedError> {
        Ok(self.keyed()?.role().to_string())
    }

    /// Drops the helper and wipes its key.
    #[napi]
    pub fn free(&mut self) {
        self.0 = None;
    }

    /// A part of a setup's or a request's map ([`Keyed::mask`]).
    ///
    /// # Errors
    /// As [`Keyed::mask`].
    #[napi(js_name = "maskPart")]
    pub fn mask_part(
        &self,
        env: Env,
        values: &[u8],
        ends: &[u32],
        progress: Option<Beat<'_>>,
    ) -> Result<Uint8Array, CodedError> {
        let keyed = self.keyed()?;
        let (values, ends) = (values.to_vec(), ends.to_vec()); // owned, as in `setupFinish`
        with_progress(env, progress, |control| keyed.mask(&values, &ends, control))
            .map(Uint8Array::from)
    }

    /// A part of a response's map ([`Keyed::remask`]).
    ///
    /// # Errors
    /// As [`Keyed::remask`].
    #[napi(js_name = "remaskPart")]
    pub fn remask_part(
        &self,
        env: Env,
        elements: &[u8],
        first: u32,
        progress: Option<Beat<'_>>,
    ) -> Result<Uint8Array, CodedError> {
        let keyed = self.keyed()?;
        let elements = elements.to_vec(); // owned, as in `setupFinish`
        with_progress(env, progress, |control| {
            keyed.remask(&elements, first as usize, control)
        })
        .map(Uint8Array::from)
    }

    /// A part of an intersection's map ([`Keyed::unmask`]).
    ///
    /// # Errors
    /// As [`Keyed::unmask`].
    #[napi(js_name = "unmaskPart")]
    pub fn unmask_part(
        &self,
        env: Env,
        elements: &[u8],
        first: u32,
        progress: Option<Beat<'_>>,
    ) -> Result<Uint8Array, CodedError> {
        let keyed = self.keyed()?;
        let elements = elements.to_vec(); // owned, as in `setupFinish`
        with_progress(env, progress, |control| {
            keyed.unmask(&elements, first as usize, control)
        })
        .map(Uint8Array::from)
    }
}

impl JsHelper {
    fn keyed(&self) -> Result<&Keyed, CodedError> {
        self.0.as_ref().ok_or_else(freed)
    }
}

/// A joiner's request message over packed values ([`party::request`] on the native backend),
/// as the wasm module's `psiRequest` gives it; `key` is wiped.
///
/// # Errors
/// `PSI_INPUT` for packing or values without a key, the engine's codes for a bad key, or what
/// `progress` threw.
#[napi(js_name = "psiRequest")]
pub fn psi_request(
    env: Env,
    mut key: Uint8Array,
    values: &[u8],
    ends: &[u32],
    reveal: bool,
    normalize: bool,
    progress: Option<Beat<'_>>,
) -> Result<Uint8Array, CodedError> {
    let mut key = take_key(&mut key);
    let key = &mut key[..];
    let mut report = |done: usize, total: usize| -> napi::Result<()> {
        match &progress {
            Some(callback) => callback.call((done as f64, total as f64).into()),
            None => Ok(()),
        }
    };
    let (values, ends) = (values.to_vec(), ends.to_vec()); // owned, as in `setupFinish`
    match party::request(key, &values, &ends, reveal, normalize, BACKEND, &mut report) {
        Ok(bytes) => Ok(Uint8Array::from(bytes)),
        Err(RequestError::Callback(thrown)) => Err(rethrow(env, thrown)),
        Err(error) => Err(coded(error.to_string(), error.code())),
    }
}

/// The parts of `items` for `count` instances ([`party::part_bounds`]):
/// `[start0, end0, start1, end1, ...]`.
///
/// # Errors
/// As [`party::part_bounds`] (`PSI_USAGE`, `PSI_LIMIT`).
#[napi(js_name = "psiRanges")]
pub fn psi_ranges(items: f64, count: f64) -> Result<Uint32Array, CodedError> {
    party::part_bounds(items, count)
        .map(Uint32Array::from)
        .map_err(coded_party)
}

/// The built-in sample data ([`lockstep_psi::sample`]) for a starter of `rows` people, the
/// files `lockstep psi demo --rows N --dir D` writes.
///
/// # Errors
/// As [`party::sample`]: `PSI_USAGE`, `PSI_LIMIT` past [`sample::MAX_PEOPLE`](lockstep_psi::sample::MAX_PEOPLE),
/// `PSI_MEMORY` for files that do not fit.
#[napi(js_name = "psiSample")]
pub fn psi_sample(rows: f64) -> Result<Sample, CodedError> {
    use lockstep_psi::sample;
    let orgs = party::sample(rows).map_err(coded_party)?;
    Ok(Sample {
        starter: Uint8Array::from(orgs.starter),
        joiner: Uint8Array::from(orgs.joiner),
        starter_rows: orgs.starter_rows as f64,
        joiner_rows: orgs.joiner_rows as f64,
        key_column: sample::KEY_COLUMN.to_owned(),
        columns: sample::HEADER.iter().map(|&c| c.to_owned()).collect(),
    })
}

/// `{ values, ends }` of packed items.
#[napi(object)]
pub struct PackedItems {
    /// The items' bytes, back to back.
    pub values: Uint8Array,
    /// The end offset of each.
    pub ends: Uint32Array,
}

impl PackedItems {
    fn of(items: &Items) -> Self {
        Self {
            values: Uint8Array::from(&items.values[..]),
            ends: Uint32Array::from(&items.ends[..]),
        }
    }
}

/// A joiner's intersection as JS gets it.
#[napi(object)]
pub struct FoundRows {
    /// Distinct keys found.
    pub size: f64,
    /// The matched rows, 0-based, ascending.
    pub rows: Uint32Array,
    /// The setup position each matched (raw setups).
    pub setup_positions: Option<Uint32Array>,
    /// The matched rows' file (`psi intersect --out`).
    pub rows_file: Option<Uint8Array>,
    /// The pairs file for the starter (`psi intersect --pairs-out`, raw setups).
    pub pairs_file: Option<Uint8Array>,
}

impl FoundRows {
    fn of(found: Found) -> Result<Self, CodedError> {
        let rows = rows_of(found.rows.iter().map(|m| m.row))?;
        let positions: Option<Vec<usize>> = found.rows.iter().map(|m| m.setup_position).collect();
        let positions = match positions {
            Some(positions) if !found.rows.is_empty() => Some(rows_of(positions.into_iter())?),
            _ => None,
        };
        Ok(Self {
            size: found.size as f64,
            rows,
            setup_positions: positions,
            rows_file: found.rows_file.map(Uint8Array::from),
            pairs_file: found.pairs_file.map(Uint8Array::from),
        })
    }
}

/// A starter's resolved pairs as JS gets them.
#[napi(object)]
pub struct ResolvedPairs {
    /// The joiner's rows, 0-based.
    pub joiner_rows: Uint32Array,
    /// The starter's rows, 0-based, pair by pair.
    pub starter_rows: Uint32Array,
    /// The pairs file with the starter's rows (`psi resolve --out`).
    pub file: Uint8Array,
}

/// The sample data as JS gets it.
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

/// 0-based rows as a `Uint32Array`.
///
/// # Errors
/// `PSI_LIMIT` for a row at or past 2^32, which a `Uint32Array` cannot hold.
fn rows_of(rows: impl Iterator<Item = usize>) -> Result<Uint32Array, CodedError> {
    let rows: Result<Vec<u32>, _> = rows.map(u32::try_from).collect();
    let rows = rows.map_err(|_| coded("a row at or past 2^32".to_owned(), "PSI_LIMIT"))?;
    Ok(Uint32Array::from(rows))
}

fn coded_party(error: PartyError) -> CodedError {
    coded(error.to_string(), error.code())
}

fn freed() -> CodedError {
    coded(
        "this party or helper has been freed".to_owned(),
        "PSI_USAGE",
    )
}

/// Throws `thrown` (an exception a JS callback threw) again for the calling JS code, and the
/// error that tells napi-rs to leave it pending.
fn rethrow(env: Env, thrown: napi::Error) -> CodedError {
    match env.throw(thrown) {
        Ok(()) => coded("the progress callback threw".to_owned(), PENDING),
        Err(error) => coded(
            format!("the progress callback threw, and rethrowing failed: {error}"),
            "PSI_INTERNAL",
        ),
    }
}

/// Runs a step under a control whose progress calls `progress` on this thread and whose
/// cancel token a throw from it sets; fails with what it threw in place of the step's
/// `Cancelled`.
fn with_progress<T>(
    env: Env,
    progress: Option<Beat<'_>>,
    step: impl FnOnce(&Control) -> Result<T, PartyError>,
) -> Result<T, CodedError> {
    if RUNNING.replace(true) {
        return Err(coded(
            "a step cannot start from another step's progress callback".to_owned(),
            "PSI_USAGE",
        ));
    }
    let result = progressed(env, progress, step);
    RUNNING.set(false);
    result
}

/// [`with_progress`]'s body, with no other step of this thread running.
fn progressed<T>(
    env: Env,
    progress: Option<Beat<'_>>,
    step: impl FnOnce(&Control) -> Result<T, PartyError>,
) -> Result<T, CodedError> {
    let cancel = CancelToken::new();
    let mut control = Control::new().with_cancel(cancel.clone());
    if let Some(callback) = progress {
        let callback = callback
            .create_ref()
            .map_err(|e| coded(e.reason.clone(), "PSI_INTERNAL"))?;
        CALLBACK.with(|c| *c.borrow_mut() = Some((env, callback)));
        control = control.with_progress(Progress::new(move |report| {
            let total = report.total.unwrap_or(report.done);
            // The engine reports on the calling thread (a current-thread pool), where the
            // callback lives.
            let Some(env) = CALLBACK.with(|c| c.borrow().as_ref().map(|(env, _)| *env)) else {
                return;
            };
            // The function is taken out of the cell before it is called: nothing is borrowed
            // while JS runs.
            let outcome = CALLBACK
                .with(|c| {
                    c.borrow()
                        .as_ref()
                        .map(|(_, callback)| callback.borrow_back(&env))
                })
                .map_or(Ok(()), |f| {
                    f.and_then(|f| f.call((report.done as f64, total as f64).into()))
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
        Some(thrown) => Err(rethrow(env, thrown)),
        None => result.map_err(coded_party),
    }
}
