//! A party of a PSI round as a front end holds it (through `lockstep-face`: the npm package's
//! wasm module and its Node addon): its key is made (or imported) inside the party and leaves only through
//! [`Party::export_key`]; what it keeps between steps (its records, a raw setup's permutation,
//! its request) stays there too. Every front end drives these types, so each gives the same
//! bytes; the backend a party computes on ([`Backend`]) is its front end's choice and changes
//! no byte.
//!
//! Every step is `crate::linkage`'s, over the records the CLI would read for the same
//! bytes, so every message and every output file is byte-identical to the CLI's:
//!
//! | step | CLI | here |
//! |---|---|---|
//! | starter setup | `psi setup [--permutation-out]` | [`Party::setup`], [`Party::permutation_file`] |
//! | starter respond | `psi respond --joiner-count N [--size-only]` | [`Party::respond`] |
//! | starter resolve | `psi resolve` | [`Party::resolve`] |
//! | joiner request | `psi request [--size-only]` | [`Party::request`] |
//! | joiner intersect | `psi intersect --request [--out] [--pairs-out] [--size]` | [`Party::intersect`] |
//!
//! Work runs on the current-thread pool under the caller's [`Control`] (its progress sink and
//! cancel token); the step starts the control's progress with its item count. Parallelism is
//! the front end's: it maps a step's items in parts ([`crate::parts`]) on other instances
//! holding the same key ([`Keyed`]).
//!
//! Values and keys cross as packed byte strings ([`unpack`], [`Items`]): one byte array back to back and a
//! `u32` end offset each, so a million values are two buffers, not a million strings. How a
//! front end's numbers and names become these arguments is `lockstep-face`'s.

mod error;
mod keyed;
mod packed;
mod request;
#[cfg(test)]
mod tests;

pub use error::PartyError;
pub use keyed::Keyed;
pub use packed::{Items, PackError, unpack};
pub use request::{RequestError, request};

use crate::linkage::{
    self, Digest, FileError, KeySpec, Learn, LinkageError, MatchedRow, Permutation, Records,
    RowPair, read_pairs, write_pairs, write_permutation,
};
use crate::{
    Backend, Joiner, Key, Limits, Mode, PsiError, Request, Response, ServerSetup, SetupParams,
    Starter, parts,
};
use lockstep_shard::{Control, Pool};
use zeroize::Zeroizing;

use packed::pack_keys;

/// The largest setup a party accepts unless told otherwise: 1 GiB, a raw setup of 32 million
/// keys, a quarter of a wasm32 instance's memory.
pub const DEFAULT_MAX_SETUP_BYTES: u64 = 1 << 30;

/// Which side of the round a party plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sets up its masked set, answers requests, resolves the joiner's pairs (OpenMined's server).
    Starter,
    /// Requests, and intersects the answer with the setup (OpenMined's client).
    Joiner,
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Starter => "starter",
            Self::Joiner => "joiner",
        })
    }
}

impl std::str::FromStr for Role {
    type Err = PartyError;

    /// `"starter"` or `"joiner"`.
    fn from_str(role: &str) -> Result<Self, PartyError> {
        match role {
            "starter" => Ok(Self::Starter),
            "joiner" => Ok(Self::Joiner),
            other => Err(PartyError::Usage(format!(
                "role must be \"starter\" or \"joiner\", not {other:?}"
            ))),
        }
    }
}

/// A party's rows as a front end passes them.
#[derive(Clone, Copy, Debug)]
pub enum Rows<'a> {
    /// One value per row, packed: `values[ends[i-1]..ends[i]]` (see [`unpack`]);
    /// the key spec must name no column.
    Packed {
        /// The values back to back.
        values: &'a [u8],
        /// Their end offsets.
        ends: &'a [u32],
    },
    /// A record file's bytes, read exactly as the CLI reads `--input` (CSV with a header when
    /// the spec names columns, else one value per line; BOM, CR/LF and quoting rules included).
    File(&'a [u8]),
}

/// The most parts a step is cut into ([`part_ranges`]): far more helpers than a machine runs,
/// so the list of bounds a caller can ask for stays small.
pub const MAX_PARTS: u64 = 4096;

/// The most items a step split into parts holds: a part's bounds are `u32`s, as JS and the
/// packed formats ([`unpack`]) index them.
pub const MAX_PART_ITEMS: u64 = u32::MAX as u64;

/// The parts of `items` for `count` instances (0 counts as 1), as the engine splits them
/// ([`crate::parts::ranges`]): `(start, end)` of each, in order, covering `0..items`.
///
/// # Errors
/// [`PartyError::Limit`] for more than [`MAX_PART_ITEMS`] items or [`MAX_PARTS`] parts.
///
/// # Panics
/// Never: every bound is at most `items`, a `u32`.
pub fn part_ranges(items: u64, count: u64) -> Result<Vec<(u32, u32)>, PartyError> {
    if items > MAX_PART_ITEMS {
        return Err(PartyError::Limit(format!(
            "items must be at most {MAX_PART_ITEMS}, not {items}"
        )));
    }
    if count > MAX_PARTS {
        return Err(PartyError::Limit(format!(
            "count must be at most {MAX_PARTS}, not {count}"
        )));
    }
    #[allow(
        clippy::cast_possible_truncation,
        reason = "both checked against u32 bounds above"
    )]
    let (items, count) = (items as usize, count as usize);
    let bound = |i: usize| u32::try_from(i).expect("invariant: the bounds of u32 items fit u32");
    Ok(parts::ranges(items, count.max(1))
        .into_iter()
        .map(|r| (bound(r.start), bound(r.end)))
        .collect())
}

/// What a starter keeps after its setup.
struct SetUp {
    records: Records,
    keys: linkage::KeyTable,
    spec: KeySpec,
    permutation: Option<Permutation>,
}

/// What a joiner keeps after its request.
struct Requested {
    records: Records,
    keys: linkage::KeyTable,
    request: Request,
}

/// A step begun and not yet finished: what its finish needs besides the parts' outputs.
enum Pending {
    Setup {
        records: Records,
        keys: linkage::KeyTable,
        spec: KeySpec,
        params: SetupParams,
    },
    Request {
        records: Records,
        keys: linkage::KeyTable,
        mode: Mode,
    },
    Respond {
        mode: Mode,
        count: usize,
    },
    Intersect {
        setup: ServerSetup,
        digest: Digest,
        learn: Learn,
    },
}

/// One party: its role, its key, and what it keeps between steps.
///
/// Each step comes whole (`setup`, `request`, `respond`, `intersect`) or in three calls for a
/// front end that maps its items in parts on other instances ([`crate::parts`]):
/// `*_begin` checks the inputs and gives the items to map, the parts are mapped
/// ([`Keyed::mask`], [`Keyed::remask`], [`Keyed::unmask`], here or on a [`Keyed`] helper
/// holding the same key), and `*_finish` merges their outputs, concatenated in part order. The
/// whole step is exactly that with one part.
pub struct Party {
    keyed: Keyed,
    set_up: Option<SetUp>,
    requested: Option<Requested>,
    pending: Option<Pending>,
}

/// What [`Party::intersect`] gives the joiner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Distinct keys found in the setup.
    pub size: usize,
    /// The matched rows (0-based, ascending; empty for a size-only round).
    pub rows: Vec<MatchedRow>,
    /// The matched rows as `psi intersect --out` writes them (`None` for a size-only round).
    pub rows_file: Option<Vec<u8>>,
    /// After a raw setup, the pairs file for the starter, as `psi intersect --pairs-out`
    /// writes it.
    pub pairs_file: Option<Vec<u8>>,
}

/// What [`Party::resolve`] gives the starter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// Every matched `(joiner row, starter row)`, 0-based, sorted.
    pub pairs: Vec<RowPair>,
    /// The pairs with the starter's rows, as `psi resolve --out` writes them.
    pub file: Vec<u8>,
}

impl Party {
    /// A party of `role` with a fresh random key.
    ///
    /// # Errors
    /// [`PsiError::Randomness`] if the platform's generator fails.
    pub fn generate(role: Role, backend: Backend) -> Result<Self, PartyError> {
        Ok(Self::with_key(Keyed {
            role,
            key: Key::generate()?,
            backend,
        }))
    }

    /// A party of `role` with the key whose big-endian bytes are `key`: exactly
    /// [`Key::LEN`] bytes, as [`export_key`](Self::export_key) gives them and `lockstep psi key
    /// new` writes them (the CLI's key files are held to the same length). `key` is wiped
    /// before this returns, on success and on error.
    ///
    /// # Errors
    /// [`PartyError::KeyLength`]; [`PsiError::KeyOutOfRange`], [`PsiError::WeakKey`].
    pub fn import(role: Role, key: &mut [u8], backend: Backend) -> Result<Self, PartyError> {
        Ok(Self::with_key(Keyed::from_key(role, key, backend)?))
    }

    fn with_key(keyed: Keyed) -> Self {
        Self {
            keyed,
            set_up: None,
            requested: None,
            pending: None,
        }
    }

    /// This party's role.
    pub fn role(&self) -> Role {
        self.keyed.role
    }

    /// The key's 32 big-endian bytes: the only way the key leaves the party (to be kept, or
    /// delivered to a helper of the same role).
    pub fn export_key(&self) -> Zeroizing<[u8; 32]> {
        self.keyed.key.to_bytes()
    }

    /// This party's key, for mapping its own part of a step.
    pub fn keyed(&self) -> &Keyed {
        &self.keyed
    }

    /// The starter's setup message over its rows' distinct keys (`psi setup`), in one part.
    /// The party keeps the rows and, for a raw setup, the permutation
    /// [`resolve`](Self::resolve) needs; a new setup replaces them.
    ///
    /// # Errors
    /// As [`setup_begin`](Self::setup_begin) and [`setup_finish`](Self::setup_finish).
    pub fn setup(
        &mut self,
        rows: Rows<'_>,
        spec: &KeySpec,
        params: &SetupParams,
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        let items = self.setup_begin(rows, spec, params)?;
        let masked = self.keyed.mask(&items.values, &items.ends, control)?;
        self.setup_finish(&masked, control)
    }

    /// Begins a setup: checks the parameters (before the rows are read, then against the rows'
    /// key count) and gives the distinct keys to mask.
    ///
    /// # Errors
    /// [`PartyError::WrongRole`] for a joiner; [`PartyError::Psi`] for bad parameters or a
    /// setup too large; [`PartyError::Input`] for unusable rows.
    pub fn setup_begin(
        &mut self,
        rows: Rows<'_>,
        spec: &KeySpec,
        params: &SetupParams,
    ) -> Result<Items, PartyError> {
        self.expect_role(Role::Starter, "set up")?;
        params.validate()?;
        let (records, keys) = read_rows(rows, spec)?;
        params.check(keys.len())?;
        let items = pack_keys(&keys)?;
        self.pending = Some(Pending::Setup {
            records,
            keys,
            spec: spec.clone(),
            params: *params,
        });
        Ok(items)
    }

    /// Finishes a setup from the keys' masked elements, packed, in key order.
    ///
    /// # Errors
    /// [`PartyError::OutOfOrder`] without [`setup_begin`](Self::setup_begin);
    /// [`PartyError::Psi`] for parts that do not add up (a bug) or a cancelled run.
    pub fn setup_finish(
        &mut self,
        masked: &[u8],
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        let Some(Pending::Setup {
            records,
            keys,
            spec,
            params,
        }) = self.take_pending(|p| matches!(p, Pending::Setup { .. }))
        else {
            return Err(out_of_order("finish a setup", "its beginning"));
        };
        let masked = parts::unpack(masked)?;
        let setup =
            linkage::setup_from_masked(&Pool::current_thread(), control, &keys, masked, &params)?;
        self.set_up = Some(SetUp {
            records,
            keys,
            spec,
            permutation: setup.permutation,
        });
        Ok(setup.bytes)
    }

    /// The permutation file of the last raw setup, as `psi setup --permutation-out` writes it
    /// (to keep beside the exported key, so a later session can resolve).
    ///
    /// # Errors
    /// [`PartyError::WrongRole`] for a joiner, [`PartyError::OutOfOrder`] without a raw setup.
    pub fn permutation_file(&self) -> Result<Vec<u8>, PartyError> {
        self.expect_role(Role::Starter, "keep a permutation")?;
        let (set_up, permutation) = self.raw_setup("the permutation file")?;
        let mut out = Vec::new();
        write_permutation(&mut out, permutation, &set_up.spec)
            .map_err(|e| PartyError::Input(e.in_file("the permutation file").to_string()))?;
        Ok(out)
    }

    /// The starter's response to a joiner's request (`psi respond`), in one part.
    ///
    /// # Errors
    /// As [`respond_begin`](Self::respond_begin) and [`respond_finish`](Self::respond_finish).
    pub fn respond(
        &mut self,
        request: &[u8],
        joiner_count: u64,
        size_only: bool,
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        let elements = self.respond_begin(request, joiner_count, size_only)?;
        let remasked = self.keyed.remask(&elements, 0, control)?;
        self.respond_finish(&remasked)
    }

    /// Begins a response: `joiner_count` bounds the request's elements (the count the joiner
    /// stated), `size_only` is the mode this starter answers. Gives the request's elements to
    /// re-mask, packed. Needs no setup.
    ///
    /// # Errors
    /// [`PartyError::WrongRole`] for a joiner, [`PartyError::Usage`] for a joiner count of 0,
    /// [`PartyError::Psi`] for a malformed request, one above the count, or one of the other
    /// mode.
    pub fn respond_begin(
        &mut self,
        request: &[u8],
        joiner_count: u64,
        size_only: bool,
    ) -> Result<Vec<u8>, PartyError> {
        self.expect_role(Role::Starter, "respond")?;
        if joiner_count == 0 {
            return Err(PartyError::Usage(
                "the joiner count must be at least 1".to_owned(),
            ));
        }
        let request = Request::read(request, Limits::max_elements(joiner_count))?;
        let mode = mode_of(size_only);
        Starter::new(&self.keyed.key, mode, self.keyed.backend)?.check_request(&request)?;
        self.pending = Some(Pending::Respond {
            mode,
            count: request.elements.len(),
        });
        Ok(parts::pack(&request.elements))
    }

    /// Finishes a response from the request's re-masked elements, packed, in request order.
    ///
    /// # Errors
    /// [`PartyError::OutOfOrder`] without [`respond_begin`](Self::respond_begin);
    /// [`PartyError::Psi`] for parts that do not add up (a bug).
    pub fn respond_finish(&mut self, remasked: &[u8]) -> Result<Vec<u8>, PartyError> {
        let Some(Pending::Respond { mode, count }) =
            self.take_pending(|p| matches!(p, Pending::Respond { .. }))
        else {
            return Err(out_of_order("finish a response", "its beginning"));
        };
        let remasked = parts::unpack(remasked)?;
        check_count(remasked.len(), count)?;
        let starter = Starter::new(&self.keyed.key, mode, self.keyed.backend)?;
        Ok(starter.response_from_remasked(remasked).to_bytes())
    }

    /// The joiner's pairs file (from [`intersect`](Self::intersect) or `psi intersect
    /// --pairs-out`) resolved to this starter's rows through its raw setup's permutation
    /// (`psi resolve`).
    ///
    /// # Errors
    /// [`PartyError::WrongRole`] for a joiner, [`PartyError::OutOfOrder`] without a raw setup,
    /// [`PartyError::Message`] for a malformed pairs file or pairs no honest joiner could send,
    /// [`PartyError::Round`] for pairs answering another setup.
    pub fn resolve(&self, pairs: &[u8]) -> Result<Resolved, PartyError> {
        self.expect_role(Role::Starter, "resolve")?;
        let (set_up, permutation) = self.raw_setup("resolve")?;
        let pairs = read_pairs(pairs)
            .map_err(|e| PartyError::Message(e.in_file("the pairs file").to_string()))?;
        let resolved =
            linkage::resolve(permutation, &set_up.keys, &pairs).map_err(|e| match e {
                LinkageError::OtherSetup { .. } => PartyError::Round(e.to_string()),
                _ => PartyError::Message(format!("the pairs file: {e}")),
            })?;
        let mut file = Vec::new();
        linkage::write_resolved(&set_up.records, &resolved, &mut file)
            .map_err(|e| PartyError::Input(e.in_file("the resolved pairs").to_string()))?;
        Ok(Resolved {
            pairs: resolved,
            file,
        })
    }

    /// The joiner's request over its rows' distinct keys (`psi request`), in one part. The
    /// party keeps the rows and the request for [`intersect`](Self::intersect); a new request
    /// replaces them.
    ///
    /// # Errors
    /// As [`request_begin`](Self::request_begin) and [`request_finish`](Self::request_finish).
    pub fn request(
        &mut self,
        rows: Rows<'_>,
        spec: &KeySpec,
        size_only: bool,
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        let items = self.request_begin(rows, spec, size_only)?;
        let masked = self.keyed.mask(&items.values, &items.ends, control)?;
        self.request_finish(&masked)
    }

    /// Begins a request: gives the rows' distinct keys to mask.
    ///
    /// # Errors
    /// [`PartyError::WrongRole`] for a starter, [`PartyError::Input`] for unusable rows.
    pub fn request_begin(
        &mut self,
        rows: Rows<'_>,
        spec: &KeySpec,
        size_only: bool,
    ) -> Result<Items, PartyError> {
        self.expect_role(Role::Joiner, "request")?;
        let (records, keys) = read_rows(rows, spec)?;
        let items = pack_keys(&keys)?;
        self.pending = Some(Pending::Request {
            records,
            keys,
            mode: mode_of(size_only),
        });
        Ok(items)
    }

    /// Finishes a request from the keys' masked elements, packed, in key order.
    ///
    /// # Errors
    /// [`PartyError::OutOfOrder`] without [`request_begin`](Self::request_begin);
    /// [`PartyError::Psi`] for parts that do not add up (a bug).
    pub fn request_finish(&mut self, masked: &[u8]) -> Result<Vec<u8>, PartyError> {
        let Some(Pending::Request {
            records,
            keys,
            mode,
        }) = self.take_pending(|p| matches!(p, Pending::Request { .. }))
        else {
            return Err(out_of_order("finish a request", "its beginning"));
        };
        let masked = parts::unpack(masked)?;
        check_count(masked.len(), keys.len())?;
        let joiner = Joiner::new(&self.keyed.key, mode, self.keyed.backend)?;
        let request = joiner.request_from_masked(masked)?;
        let bytes = request.to_bytes();
        self.requested = Some(Requested {
            records,
            keys,
            request,
        });
        Ok(bytes)
    }

    /// The joiner's intersection (`psi intersect --request`), in one part.
    ///
    /// # Errors
    /// As [`intersect_begin`](Self::intersect_begin) and
    /// [`intersect_finish`](Self::intersect_finish).
    pub fn intersect(
        &mut self,
        setup: &[u8],
        response: &[u8],
        max_setup_bytes: u64,
        control: &Control,
    ) -> Result<Found, PartyError> {
        let elements = self.intersect_begin(setup, response, max_setup_bytes)?;
        let unmasked = self.keyed.unmask(&elements, 0, control)?;
        self.intersect_finish(&unmasked)
    }

    /// Begins the joiner's intersection of the starter's `setup` and its `response` to this
    /// party's last request: checks both (the setup's size against `max_setup_bytes`, its
    /// structure, the response against the request) and gives the response's elements to
    /// unmask, packed.
    ///
    /// # Errors
    /// [`PartyError::WrongRole`] for a starter, [`PartyError::OutOfOrder`] before a request,
    /// [`PartyError::SetupBytes`] for a setup above `max_setup_bytes`, [`PartyError::Psi`] for
    /// a malformed setup or response, or a response that does not answer the request.
    pub fn intersect_begin(
        &mut self,
        setup: &[u8],
        response: &[u8],
        max_setup_bytes: u64,
    ) -> Result<Vec<u8>, PartyError> {
        self.expect_role(Role::Joiner, "intersect")?;
        let requested = self
            .requested
            .as_ref()
            .ok_or(out_of_order("intersect", "a request"))?;
        if setup.len() as u64 > max_setup_bytes {
            return Err(PartyError::SetupBytes {
                bytes: setup.len() as u64,
                limit: max_setup_bytes,
            });
        }
        let n = requested.keys.len();
        let setup_message = ServerSetup::read(setup, Limits::NONE)?;
        let response = Response::read(response, Limits::max_elements(n as u64))?;
        let mode = requested.request.mode;
        let joiner = Joiner::new(&self.keyed.key, mode, self.keyed.backend)?;
        joiner.check_response(&response, n, Some(&requested.request))?;
        setup_message.validate()?;
        self.pending = Some(Pending::Intersect {
            setup: setup_message,
            digest: Digest::of(setup),
            learn: match mode {
                Mode::Reveal => Learn::Rows,
                Mode::SizeOnly => Learn::Size,
            },
        });
        Ok(parts::pack(&response.elements))
    }

    /// Finishes the intersection from the response's unmasked elements, packed, in response
    /// order: the matched rows and, after a raw setup, the pairs file for the starter; only the
    /// size after a size-only request.
    ///
    /// # Errors
    /// [`PartyError::OutOfOrder`] without [`intersect_begin`](Self::intersect_begin);
    /// [`PartyError::Psi`] for parts that do not add up (a bug) or a GCS that does not decode.
    pub fn intersect_finish(&mut self, unmasked: &[u8]) -> Result<Found, PartyError> {
        let Some(Pending::Intersect {
            setup,
            digest,
            learn,
        }) = self.take_pending(|p| matches!(p, Pending::Intersect { .. }))
        else {
            return Err(out_of_order("finish an intersection", "its beginning"));
        };
        let requested = self
            .requested
            .as_ref()
            .ok_or(out_of_order("intersect", "a request"))?;
        let unmasked = parts::unpack(unmasked)?;
        let joiner = Joiner::new(&self.keyed.key, requested.request.mode, self.keyed.backend)?;
        let intersection = linkage::intersect_unmasked(
            &joiner,
            &setup,
            digest,
            &unmasked,
            &requested.keys,
            learn,
        )?;
        let rows_file = match learn {
            Learn::Size => None,
            Learn::Rows => {
                let mut out = Vec::new();
                intersection
                    .write_rows(&requested.records, &mut out)
                    .map_err(|e| PartyError::Input(e.in_file("the matched rows").to_string()))?;
                Some(out)
            }
        };
        let pairs_file = match &intersection.pairs {
            Some(pairs) => {
                let mut out = Vec::new();
                write_pairs(&mut out, pairs)
                    .map_err(|e| PartyError::Input(e.in_file("the pairs file").to_string()))?;
                Some(out)
            }
            None => None,
        };
        Ok(Found {
            size: intersection.size,
            rows: intersection.rows,
            rows_file,
            pairs_file,
        })
    }

    /// The pending step, taken, if `is` says it is the one asked for (else left in place).
    fn take_pending(&mut self, is: impl Fn(&Pending) -> bool) -> Option<Pending> {
        if self.pending.as_ref().is_some_and(is) {
            self.pending.take()
        } else {
            None
        }
    }

    fn expect_role(&self, role: Role, step: &'static str) -> Result<(), PartyError> {
        self.keyed.expect_role(role, step)
    }

    fn raw_setup(&self, step: &'static str) -> Result<(&SetUp, &Permutation), PartyError> {
        let set_up = self
            .set_up
            .as_ref()
            .ok_or(out_of_order(step, "a raw setup"))?;
        match &set_up.permutation {
            Some(permutation) => Ok((set_up, permutation)),
            None => Err(out_of_order(step, "a raw setup")),
        }
    }
}

fn mode_of(size_only: bool) -> Mode {
    if size_only {
        Mode::SizeOnly
    } else {
        Mode::Reveal
    }
}

fn out_of_order(step: &'static str, first: &'static str) -> PartyError {
    PartyError::OutOfOrder { step, first }
}

/// Parts' outputs that do not add up to the step's items: a bug in the front end, not input.
fn check_count(got: usize, expected: usize) -> Result<(), PartyError> {
    if got == expected {
        Ok(())
    } else {
        Err(PartyError::Psi(PsiError::Runtime(format!(
            "the parts gave {got} elements for {expected} items"
        ))))
    }
}

/// The records and distinct keys of `rows` under `spec`, as the CLI reads them.
fn read_rows(rows: Rows<'_>, spec: &KeySpec) -> Result<(Records, linkage::KeyTable), PartyError> {
    let (records, name) = match rows {
        Rows::Packed { values, ends } => {
            if !spec.columns.is_empty() {
                return Err(PartyError::Usage(
                    "packed values are one value per row: name no key column, or pass a record file"
                        .to_owned(),
                ));
            }
            (Records::from_values(unpack(values, ends)?), "values")
        }
        Rows::File(bytes) => (
            Records::read(bytes, spec).map_err(|e| input_error(e, "the records"))?,
            "the records",
        ),
    };
    let party = linkage::Party::from_records(records, spec).map_err(|e| input_error(e, name))?;
    Ok(party.into_parts())
}

fn input_error(error: FileError, name: &str) -> PartyError {
    PartyError::Input(error.in_file(name).to_string())
}
