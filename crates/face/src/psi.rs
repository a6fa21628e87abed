//! PSI as every front end drives it: a party of a round ([`PsiParty`]) with its key inside, its
//! helpers ([`PsiHelper`]) holding a delivered key, the joiner's one-call [`request`], the
//! parts' split ([`ranges`]) and the built-in sample data ([`sample`]).
//!
//! The rules are [`lockstep_psi::party`]'s; what is here is how a front end's arguments (role
//! names, JS numbers, rows as packed bytes or a record file) become the engine's, and how its
//! results become plain ones (0-based rows as `u32`, files as bytes). A party's steps come in
//! the parts form a front end's pool drives: `*_begin` gives the items to map, the parts are
//! mapped (`*_part`, here or on helpers), `*_finish` merges them.
//!
//! # Where key material travels
//! A key passed in ([`PsiParty::import`], [`PsiHelper::from_key`], [`request`]) is read from the
//! caller's bytes and those bytes are wiped on every path, a bad role or length included; the
//! scalar lives in the engine's zeroized [`lockstep_psi::Key`] inside the party or helper, which
//! `free` (or dropping it) drops. [`PsiParty::export_key`] is the only way out, in a
//! [`Zeroizing`] array the binding copies from. What a binding's own memory keeps of the bytes
//! it converted is that binding's to state.
//!
//! # Memory a callback can change
//! Every call that runs a progress callback takes its inputs owned (`Vec`): the caller's code
//! runs between blocks, and a JS callback may resize, detach or rewrite the buffers it passed.

use lockstep_psi::Backend;
use lockstep_psi::linkage::KeySpec;
use lockstep_psi::party::{
    self, DEFAULT_MAX_SETUP_BYTES, Found, Items, Keyed, Party, PartyError, RequestError, Role, Rows,
};
use lockstep_psi::{SetupParams, sample as samples};
use lockstep_shard::{Control, Pool};
use zeroize::{Zeroize, Zeroizing};

use crate::fields::{Fields, Reader};
use crate::number::whole;
use crate::progress::{Callback, Domain, with_progress};
use crate::{Coded, Failure};

/// A party's rows as a front end passes them: `values` with `ends` when `packed` (one value a
/// row, `values[ends[i-1]..ends[i]]`), else `values` is a record file's bytes, read as
/// `lockstep psi --input` reads one; keyed on `columns` (none: the whole line), normalized when
/// `normalize`. A front end passes the three in the step's options object.
#[derive(Clone, Debug)]
struct RowsIn<'a> {
    /// The values packed, or a record file's bytes.
    values: &'a [u8],
    /// The values' end offsets (unused for a record file).
    ends: &'a [u32],
    /// Whether `values` is packed.
    packed: bool,
    /// The columns the key is made of (a record file with a header).
    columns: Vec<String>,
    /// Whether keys are normalized (trimmed, lowercased, whitespace collapsed).
    normalize: bool,
}

impl<'a> RowsIn<'a> {
    /// The rows of `values` and `ends` as the options of `call` describe them: `packed`,
    /// `normalize` (booleans, false when absent) and `columns` (strings, none when absent).
    ///
    /// # Errors
    /// `PSI_USAGE` for a field of another kind, naming the call and the field.
    fn read<F: Fields + ?Sized>(
        values: &'a [u8],
        ends: &'a [u32],
        options: &Reader<'_, F>,
    ) -> Result<Self, Coded> {
        Ok(Self {
            values,
            ends,
            packed: options.flag("packed")?,
            columns: options.optional("columns")?.unwrap_or_default(),
            normalize: options.flag("normalize")?,
        })
    }

    fn rows(&self) -> Rows<'_> {
        if self.packed {
            Rows::Packed {
                values: self.values,
                ends: self.ends,
            }
        } else {
            Rows::File(self.values)
        }
    }

    fn spec(&self) -> KeySpec {
        KeySpec {
            columns: self.columns.clone(),
            normalize: self.normalize,
        }
    }
}

/// The parameters of `psi setup --format FORMAT [--fpr FPR] --joiner-count N` as a front end
/// passes them: `format` `raw`, `gcs` or `bloom`; `fpr` (none: the CLI's default); the
/// joiner's count, a whole number.
#[derive(Clone, Debug)]
struct SetupIn {
    /// The setup's format.
    format: String,
    /// Its false-positive rate.
    fpr: Option<f64>,
    /// How many values the joiner will request.
    joiner_count: f64,
}

impl SetupIn {
    /// The parameters in the options of `call`: `format` (a string), `fpr` (a number, may be
    /// absent), `joinerCount` (a number).
    ///
    /// # Errors
    /// `PSI_USAGE` for a field missing or of another kind, naming the call and the field.
    fn read<F: Fields + ?Sized>(options: &Reader<'_, F>) -> Result<Self, Coded> {
        Ok(Self {
            format: options.required("format")?,
            fpr: options.optional("fpr")?,
            joiner_count: options.required("joinerCount")?,
        })
    }

    /// The engine's parameters, checked in this order: the format, then the count.
    fn params(&self) -> Result<SetupParams, PartyError> {
        let format = self.format.parse().map_err(PartyError::Usage)?;
        Ok(SetupParams {
            format,
            fpr: self.fpr.unwrap_or(SetupParams::DEFAULT_FPR),
            joiner_count: count(self.joiner_count, "joinerCount")?,
        })
    }
}

/// A joiner's intersection as a front end gets it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundRows {
    /// Distinct keys found.
    pub size: u64,
    /// The matched rows, 0-based, ascending (empty for a size-only round).
    pub rows: Vec<u32>,
    /// The setup position each matched, after a raw setup with a match (else `None`).
    pub setup_positions: Option<Vec<u32>>,
    /// The matched rows' file, as `psi intersect --out` writes it (`None`: size-only).
    pub rows_file: Option<Vec<u8>>,
    /// The pairs file for the starter, as `psi intersect --pairs-out` writes it (raw setups).
    pub pairs_file: Option<Vec<u8>>,
}

impl FoundRows {
    fn of(found: Found) -> Result<Self, Coded> {
        let rows = rows_of(found.rows.iter().map(|m| m.row))?;
        let positions: Option<Vec<usize>> = found.rows.iter().map(|m| m.setup_position).collect();
        let setup_positions = match positions {
            Some(positions) if !found.rows.is_empty() => Some(rows_of(positions.into_iter())?),
            _ => None,
        };
        Ok(Self {
            size: found.size as u64,
            rows,
            setup_positions,
            rows_file: found.rows_file,
            pairs_file: found.pairs_file,
        })
    }
}

/// A starter's resolved pairs as a front end gets them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedRows {
    /// The joiner's rows, 0-based, pair by pair.
    pub joiner_rows: Vec<u32>,
    /// The starter's rows, 0-based, pair by pair.
    pub starter_rows: Vec<u32>,
    /// The pairs with the starter's rows, as `psi resolve --out` writes them.
    pub file: Vec<u8>,
}

/// The built-in sample data as a front end gets it: the files `lockstep psi demo --rows N`
/// writes (CSV; match on `key_column`, normalized).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampleFiles {
    /// The starter's file.
    pub starter: Vec<u8>,
    /// The joiner's file.
    pub joiner: Vec<u8>,
    /// The starter's data rows.
    pub starter_rows: u64,
    /// The joiner's data rows.
    pub joiner_rows: u64,
    /// The column to match on.
    pub key_column: &'static str,
    /// The files' columns, in order.
    pub columns: &'static [&'static str],
}

/// One party of a PSI round, its key inside. Made by [`generate`](Self::generate) or
/// [`import`](Self::import); [`free`](Self::free) drops it (and wipes its key) before the
/// binding's owner would, and every later call is refused with `PSI_USAGE`.
pub struct PsiParty(Option<Party>);

impl PsiParty {
    /// A party of `role` (`"starter"` or `"joiner"`) with a fresh random key from the
    /// platform's generator, computing on `backend`.
    ///
    /// # Errors
    /// `PSI_USAGE` for another role, `PSI_INTERNAL` if randomness fails.
    pub fn generate(role: &str, backend: Backend) -> Result<Self, Coded> {
        let role = role.parse::<Role>()?;
        Ok(Self(Some(Party::generate(role, backend)?)))
    }

    /// A party of `role` with the key whose 32 big-endian bytes are `key` (as
    /// [`export_key`](Self::export_key) gives them), which is wiped on every path.
    ///
    /// # Errors
    /// `PSI_USAGE` for another role, `PSI_KEY` for a key that cannot be used.
    pub fn import(role: &str, key: &mut [u8], backend: Backend) -> Result<Self, Coded> {
        let role = parse_role(role, key)?;
        Ok(Self(Some(Party::import(role, key, backend)?)))
    }

    /// `"starter"` or `"joiner"`.
    ///
    /// # Errors
    /// `PSI_USAGE` after [`free`](Self::free).
    pub fn role(&self) -> Result<&'static str, Coded> {
        Ok(role_name(self.party()?.role()))
    }

    /// The key's 32 big-endian bytes: the only way the key leaves the party.
    ///
    /// # Errors
    /// `PSI_USAGE` after [`free`](Self::free).
    pub fn export_key(&self) -> Result<Zeroizing<[u8; 32]>, Coded> {
        Ok(self.party()?.export_key())
    }

    /// Drops the party and wipes its key.
    pub fn free(&mut self) {
        self.0 = None;
    }

    /// Begins a setup ([`Party::setup_begin`]) of the rows in `values` and `ends`, as `options`
    /// describe them and the setup: the distinct keys to mask, packed. `options` is one object:
    /// `packed` and `normalize` (booleans, false when absent), `columns` (strings, none when
    /// absent), `format` (`"raw"`, `"gcs"` or `"bloom"`), `fpr` (a number; absent: the CLI's
    /// default) and `joinerCount` (a whole number).
    ///
    /// # Errors
    /// `PSI_USAGE` for an option missing or of another kind (`setupBegin: ...`), a bad format or
    /// count; as [`Party::setup_begin`].
    pub fn setup_begin<F: Fields + ?Sized>(
        &mut self,
        values: &[u8],
        ends: &[u32],
        options: &F,
    ) -> Result<Items, Coded> {
        let options = Reader::new(options, "setupBegin", "PSI_USAGE");
        let rows = RowsIn::read(values, ends, &options)?;
        let params = SetupIn::read(&options)?.params()?;
        let party = self.party_mut()?;
        Ok(party.setup_begin(rows.rows(), &rows.spec(), &params)?)
    }

    /// Finishes a setup from the masked keys, packed, in key order: the setup message.
    ///
    /// # Errors
    /// As [`Party::setup_finish`]; what `progress` threw.
    pub fn setup_finish<C: Callback>(
        &mut self,
        masked: Vec<u8>,
        progress: Option<C>,
    ) -> Result<Vec<u8>, Failure<C::Thrown>> {
        let party = self.party_mut()?;
        with_progress(Domain::Psi, progress, |control| {
            party.setup_finish(&masked, control)
        })
    }

    /// The last raw setup's permutation file, as `psi setup --permutation-out` writes it.
    ///
    /// # Errors
    /// As [`Party::permutation_file`].
    pub fn permutation_file(&self) -> Result<Vec<u8>, Coded> {
        Ok(self.party()?.permutation_file()?)
    }

    /// Begins a response: the request's elements to re-mask, packed.
    ///
    /// # Errors
    /// `PSI_USAGE` for a count that is not whole; as [`Party::respond_begin`].
    pub fn respond_begin(
        &mut self,
        request: &[u8],
        joiner_count: f64,
        size_only: bool,
    ) -> Result<Vec<u8>, Coded> {
        let joiner_count = count(joiner_count, "joinerCount")?;
        let party = self.party_mut()?;
        Ok(party.respond_begin(request, joiner_count, size_only)?)
    }

    /// Finishes a response from the re-masked elements, packed, in request order.
    ///
    /// # Errors
    /// As [`Party::respond_finish`].
    pub fn respond_finish(&mut self, remasked: &[u8]) -> Result<Vec<u8>, Coded> {
        Ok(self.party_mut()?.respond_finish(remasked)?)
    }

    /// The joiner's pairs resolved to this starter's rows.
    ///
    /// # Errors
    /// As [`Party::resolve`]; `PSI_LIMIT` for a row at or past 2^32.
    pub fn resolve(&self, pairs: &[u8]) -> Result<ResolvedRows, Coded> {
        let resolved = self.party()?.resolve(pairs)?;
        Ok(ResolvedRows {
            joiner_rows: rows_of(resolved.pairs.iter().map(|p| p.joiner_row))?,
            starter_rows: rows_of(resolved.pairs.iter().map(|p| p.starter_row))?,
            file: resolved.file,
        })
    }

    /// Begins a request of the rows in `values` and `ends`, as `options` describe them: the
    /// distinct keys to mask, packed. `options` is one object: `packed`, `normalize` and
    /// `sizeOnly` (booleans, false when absent) and `columns` (strings, none when absent).
    ///
    /// # Errors
    /// `PSI_USAGE` for an option of another kind (`requestBegin: ...`); as
    /// [`Party::request_begin`].
    pub fn request_begin<F: Fields + ?Sized>(
        &mut self,
        values: &[u8],
        ends: &[u32],
        options: &F,
    ) -> Result<Items, Coded> {
        let options = Reader::new(options, "requestBegin", "PSI_USAGE");
        let rows = RowsIn::read(values, ends, &options)?;
        let size_only = options.flag("sizeOnly")?;
        let party = self.party_mut()?;
        Ok(party.request_begin(rows.rows(), &rows.spec(), size_only)?)
    }

    /// Finishes a request from the masked keys, packed, in key order: the request message.
    ///
    /// # Errors
    /// As [`Party::request_finish`].
    pub fn request_finish(&mut self, masked: &[u8]) -> Result<Vec<u8>, Coded> {
        Ok(self.party_mut()?.request_finish(masked)?)
    }

    /// Begins an intersection (`max_setup_bytes`: a whole number, none for
    /// [`DEFAULT_MAX_SETUP_BYTES`]): the response's elements to unmask, packed.
    ///
    /// # Errors
    /// `PSI_USAGE` for a limit that is not whole; as [`Party::intersect_begin`].
    pub fn intersect_begin(
        &mut self,
        setup: &[u8],
        response: &[u8],
        max_setup_bytes: Option<f64>,
    ) -> Result<Vec<u8>, Coded> {
        let limit = max_setup_bytes.map_or(Ok(DEFAULT_MAX_SETUP_BYTES), |bytes| {
            count(bytes, "maxSetupBytes")
        })?;
        let party = self.party_mut()?;
        Ok(party.intersect_begin(setup, response, limit)?)
    }

    /// Finishes an intersection from the unmasked elements, packed, in response order.
    ///
    /// # Errors
    /// As [`Party::intersect_finish`]; `PSI_LIMIT` for a row at or past 2^32.
    pub fn intersect_finish(&mut self, unmasked: &[u8]) -> Result<FoundRows, Coded> {
        FoundRows::of(self.party_mut()?.intersect_finish(unmasked)?)
    }

    /// A whole setup with its keys masked on `pool` under `control`: [`setup_begin`]'s rows
    /// and options, then [`setup_finish`]'s message, the same bytes as the parts' form at every
    /// worker count. For a front end that computes in its own process (Python), under its own
    /// progress bridge.
    ///
    /// [`setup_begin`]: Self::setup_begin
    /// [`setup_finish`]: Self::setup_finish
    ///
    /// # Errors
    /// As [`setup_begin`](Self::setup_begin) and [`setup_finish`](Self::setup_finish).
    pub fn setup_on<F: Fields + ?Sized>(
        &mut self,
        pool: &Pool,
        control: &Control,
        values: &[u8],
        ends: &[u32],
        options: &F,
    ) -> Result<Vec<u8>, Coded> {
        let items = self.setup_begin(values, ends, options)?;
        let party = self.party_mut()?;
        let masked = party
            .keyed()
            .mask_on(pool, &items.values, &items.ends, control)?;
        Ok(party.setup_finish(&masked, control)?)
    }

    /// A whole response on `pool` ([`respond_begin`](Self::respond_begin), the elements
    /// re-masked on `pool`, [`respond_finish`](Self::respond_finish)).
    ///
    /// # Errors
    /// As those two.
    pub fn respond_on(
        &mut self,
        pool: &Pool,
        control: &Control,
        request: &[u8],
        joiner_count: f64,
        size_only: bool,
    ) -> Result<Vec<u8>, Coded> {
        let elements = self.respond_begin(request, joiner_count, size_only)?;
        let party = self.party_mut()?;
        let remasked = party.keyed().remask_on(pool, &elements, 0, control)?;
        Ok(party.respond_finish(&remasked)?)
    }

    /// A whole request on `pool` ([`request_begin`](Self::request_begin), the keys masked on
    /// `pool`, [`request_finish`](Self::request_finish)).
    ///
    /// # Errors
    /// As those two.
    pub fn request_on<F: Fields + ?Sized>(
        &mut self,
        pool: &Pool,
        control: &Control,
        values: &[u8],
        ends: &[u32],
        options: &F,
    ) -> Result<Vec<u8>, Coded> {
        let items = self.request_begin(values, ends, options)?;
        let party = self.party_mut()?;
        let masked = party
            .keyed()
            .mask_on(pool, &items.values, &items.ends, control)?;
        Ok(party.request_finish(&masked)?)
    }

    /// A whole intersection on `pool` ([`intersect_begin`](Self::intersect_begin), the
    /// elements unmasked on `pool`, [`intersect_finish`](Self::intersect_finish)).
    ///
    /// # Errors
    /// As those two.
    pub fn intersect_on(
        &mut self,
        pool: &Pool,
        control: &Control,
        setup: &[u8],
        response: &[u8],
        max_setup_bytes: Option<f64>,
    ) -> Result<FoundRows, Coded> {
        let elements = self.intersect_begin(setup, response, max_setup_bytes)?;
        let party = self.party_mut()?;
        let unmasked = party.keyed().unmask_on(pool, &elements, 0, control)?;
        FoundRows::of(party.intersect_finish(&unmasked)?)
    }

    fn party(&self) -> Result<&Party, Coded> {
        self.0.as_ref().ok_or_else(freed)
    }

    fn party_mut(&mut self) -> Result<&mut Party, Coded> {
        self.0.as_mut().ok_or_else(freed)
    }
}

impl std::fmt::Debug for PsiParty {
    /// The role alone: the key is never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PsiParty")
            .field("role", &self.role().ok())
            .finish_non_exhaustive()
    }
}

/// A helper of a party: maps parts of that party's steps on another instance with the key the
/// party delivered to it. It is made only from a delivered key: a helper can neither make a key
/// of its own nor export one.
pub struct PsiHelper(Option<Keyed>);

impl PsiHelper {
    /// A helper of `role` with the delivered `key` (32 bytes, as [`PsiParty::export_key`] gives
    /// them), which is wiped on every path.
    ///
    /// # Errors
    /// `PSI_USAGE` for another role, `PSI_KEY` for a key that cannot be used.
    pub fn from_key(role: &str, key: &mut [u8], backend: Backend) -> Result<Self, Coded> {
        let role = parse_role(role, key)?;
        Ok(Self(Some(Keyed::from_key(role, key, backend)?)))
    }

    /// `"starter"` or `"joiner"`.
    ///
    /// # Errors
    /// `PSI_USAGE` after [`free`](Self::free).
    pub fn role(&self) -> Result<&'static str, Coded> {
        Ok(role_name(self.keyed()?.role()))
    }

    /// Drops the helper and wipes its key.
    pub fn free(&mut self) {
        self.0 = None;
    }
}

impl PartMaps for PsiHelper {
    fn keyed(&self) -> Result<&Keyed, Coded> {
        self.0.as_ref().ok_or_else(freed)
    }
}

impl PartMaps for PsiParty {
    fn keyed(&self) -> Result<&Keyed, Coded> {
        Ok(self.party()?.keyed())
    }
}

/// The maps of a step's parts, on a party (its own part) or a helper (another part), with the
/// key each holds: the same three calls on both.
pub trait PartMaps {
    /// The key the maps use.
    ///
    /// # Errors
    /// `PSI_USAGE` after `free`.
    fn keyed(&self) -> Result<&Keyed, Coded>;

    /// A part of a setup's or a request's map ([`Keyed::mask`]).
    ///
    /// # Errors
    /// As [`Keyed::mask`]; `PSI_USAGE` after `free`; what `progress` threw.
    fn mask_part<C: Callback>(
        &self,
        values: Vec<u8>,
        ends: Vec<u32>,
        progress: Option<C>,
    ) -> Result<Vec<u8>, Failure<C::Thrown>> {
        let keyed = self.keyed()?;
        with_progress(Domain::Psi, progress, |control| {
            keyed.mask(&values, &ends, control)
        })
    }

    /// A part of a response's map ([`Keyed::remask`]), the first element at request index
    /// `first`.
    ///
    /// # Errors
    /// As [`Keyed::remask`]; `PSI_USAGE` after `free`; what `progress` threw.
    fn remask_part<C: Callback>(
        &self,
        elements: Vec<u8>,
        first: u32,
        progress: Option<C>,
    ) -> Result<Vec<u8>, Failure<C::Thrown>> {
        let keyed = self.keyed()?;
        with_progress(Domain::Psi, progress, |control| {
            keyed.remask(&elements, first as usize, control)
        })
    }

    /// A part of an intersection's map ([`Keyed::unmask`]), the first element at response
    /// index `first`.
    ///
    /// # Errors
    /// As [`Keyed::unmask`]; `PSI_USAGE` after `free`; what `progress` threw.
    fn unmask_part<C: Callback>(
        &self,
        elements: Vec<u8>,
        first: u32,
        progress: Option<C>,
    ) -> Result<Vec<u8>, Failure<C::Thrown>> {
        let keyed = self.keyed()?;
        with_progress(Domain::Psi, progress, |control| {
            keyed.unmask(&elements, first as usize, control)
        })
    }
}

impl std::fmt::Debug for PsiHelper {
    /// The role alone: the key is never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PsiHelper")
            .field("role", &self.role().ok())
            .finish_non_exhaustive()
    }
}

/// A joiner's request message over packed values ([`party::request`]) on `backend`; `key` is
/// wiped on every path. `progress` is called after each block of keys; unlike a party's
/// steps this keeps no state of the thread's, so it may run from another step's callback.
///
/// # Errors
/// `PSI_INPUT` for packing or values without a key, the engine's codes for a bad key; what
/// `progress` threw.
pub fn request<C: Callback>(
    key: &mut [u8],
    values: Vec<u8>,
    ends: Vec<u32>,
    reveal: bool,
    normalize: bool,
    backend: Backend,
    progress: Option<C>,
) -> Result<Vec<u8>, Failure<C::Thrown>> {
    #[allow(
        clippy::cast_precision_loss,
        reason = "counts of keys a caller's arrays hold, below 2^53"
    )]
    let mut report = |done: usize, total: usize| match &progress {
        Some(callback) => callback.call(done as f64, total as f64),
        None => Ok(()),
    };
    match party::request(key, &values, &ends, reveal, normalize, backend, &mut report) {
        Ok(bytes) => Ok(bytes),
        Err(RequestError::Callback(thrown)) => Err(Failure::Thrown(thrown)),
        Err(error) => Err(Failure::Coded(Coded::new(error.code(), error.to_string()))),
    }
}

/// The parts of `items` for `count` instances (0 counts as 1), as the engine splits them
/// ([`party::part_ranges`]), flat: `[start0, end0, start1, end1, ...]`, in order. Both are
/// whole numbers.
///
/// # Errors
/// `PSI_USAGE` for a number that is not whole; `PSI_LIMIT` past
/// [`party::MAX_PART_ITEMS`] items or [`party::MAX_PARTS`] parts.
pub fn ranges(items: f64, count_of: f64) -> Result<Vec<u32>, Coded> {
    let items = count(items, "items")?;
    let parts = count(count_of, "count")?;
    Ok(party::part_ranges(items, parts)?
        .into_iter()
        .flat_map(|(start, end)| [start, end])
        .collect())
}

/// The built-in sample data ([`lockstep_psi::sample`]) for a starter of `rows` people, a whole
/// number of at most [`samples::MAX_PEOPLE`].
///
/// # Errors
/// `PSI_USAGE` for a number that is not whole; `PSI_LIMIT` past the limit, `PSI_MEMORY` for
/// files that do not fit.
pub fn sample(rows: f64) -> Result<SampleFiles, Coded> {
    let rows = count(rows, "rows")?;
    let orgs = match usize::try_from(rows) {
        Ok(rows) => samples::organisations(rows).map_err(PartyError::from)?,
        Err(_) => return Err(PartyError::from(samples::SampleError::TooMany(rows)).into()),
    };
    Ok(SampleFiles {
        starter: orgs.starter,
        joiner: orgs.joiner,
        starter_rows: orgs.starter_rows as u64,
        joiner_rows: orgs.joiner_rows as u64,
        key_column: samples::KEY_COLUMN,
        columns: &samples::HEADER,
    })
}

/// A whole count named `name` for its message.
fn count(value: f64, name: &str) -> Result<u64, PartyError> {
    whole(value)
        .ok_or_else(|| PartyError::Usage(format!("{name} must be a whole number, not {value}")))
}

/// `role` parsed; `key` wiped when it is not a role (the engine wipes it on every other path).
fn parse_role(role: &str, key: &mut [u8]) -> Result<Role, Coded> {
    role.parse::<Role>().map_err(|error| {
        key.zeroize();
        Coded::from(error)
    })
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Starter => "starter",
        Role::Joiner => "joiner",
    }
}

/// 0-based rows as `u32`s, which every front end's arrays index.
///
/// # Errors
/// `PSI_LIMIT` for a row at or past 2^32.
fn rows_of(rows: impl Iterator<Item = usize>) -> Result<Vec<u32>, Coded> {
    rows.map(u32::try_from)
        .collect::<Result<_, _>>()
        .map_err(|_| Coded::new("PSI_LIMIT", "a row at or past 2^32"))
}

fn freed() -> Coded {
    Coded::new("PSI_USAGE", "this party or helper has been freed")
}

#[cfg(test)]
mod tests;
