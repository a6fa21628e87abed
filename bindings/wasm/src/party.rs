//! A party of a PSI round that lives in one wasm instance: its key is made (or imported) here
//! and leaves only through [`Party::export_key`]; what it keeps between steps (its records, a
//! raw setup's permutation, its request) stays here too.
//!
//! Every step is `lockstep_psi::linkage`'s, over the records the CLI would read for the same
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
//! cancel token); the step starts the control's progress with its item count.

use lockstep_psi::linkage::{
    self, Digest, FileError, KeySpec, Learn, LinkageError, MatchedRow, Permutation, Records,
    RowPair, read_pairs, write_pairs, write_permutation,
};
use lockstep_psi::{
    Backend, Joiner, Key, Limits, Mode, PsiError, Request, Response, ServerSetup, SetupParams,
    Starter, parts,
};
use lockstep_shard::{Control, Pool};
use zeroize::{Zeroize, Zeroizing};

use crate::request::{PackError, unpack};

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

/// A party's rows as they arrive from JS.
#[derive(Clone, Copy, Debug)]
pub enum Rows<'a> {
    /// One value per row, packed: `values[ends[i-1]..ends[i]]` (see [`crate::psi_request`]);
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

/// Why a party's step failed. Every error has a stable [`code`](Self::code).
#[derive(Debug, thiserror::Error)]
pub enum PartyError {
    /// The engine refused (its own code: [`PsiError::code`]).
    #[error(transparent)]
    Psi(#[from] PsiError),
    /// The party's own rows are unusable (packing, a record file's format, no key at all).
    #[error("{0}")]
    Input(String),
    /// A linkage file from the other party (the joiner's pairs) is malformed or does not fit.
    #[error("{0}")]
    Message(String),
    /// The pairs answer a different setup, or rows the setup did not have.
    #[error("{0}")]
    Round(String),
    /// The step belongs to the other role.
    #[error("a {role} cannot {step}: that is the {other}'s step")]
    WrongRole {
        /// This party's role.
        role: Role,
        /// The step asked for.
        step: &'static str,
        /// The role that has it.
        other: Role,
    },
    /// The step needs an earlier one first.
    #[error("{step} needs {first} first")]
    OutOfOrder {
        /// The step asked for.
        step: &'static str,
        /// What must come before it.
        first: &'static str,
    },
    /// A key to import that is not [`Key::LEN`] bytes long.
    #[error("a key is {len} bytes, not {0}", len = Key::LEN)]
    KeyLength(usize),
    /// A setup larger than the party accepts.
    #[error("the setup is {bytes} bytes, more than the {limit} bytes this party accepts")]
    SetupBytes {
        /// Its length.
        bytes: u64,
        /// The limit stated.
        limit: u64,
    },
    /// The arguments are inconsistent (not about the data).
    #[error("{0}")]
    Usage(String),
}

impl PartyError {
    /// A stable code: the engine's ([`PsiError::code`]) or `PSI_INPUT`, `PSI_MESSAGE`,
    /// `PSI_ROUND`, `PSI_WRONG_ROLE`, `PSI_ORDER`, `PSI_LIMIT`, `PSI_USAGE`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Psi(error) => error.code(),
            Self::Input(_) => "PSI_INPUT",
            Self::Message(_) => "PSI_MESSAGE",
            Self::Round(_) => "PSI_ROUND",
            Self::WrongRole { .. } => "PSI_WRONG_ROLE",
            Self::OutOfOrder { .. } => "PSI_ORDER",
            Self::SetupBytes { .. } => "PSI_LIMIT",
            Self::KeyLength(_) => "PSI_KEY",
            Self::Usage(_) => "PSI_USAGE",
        }
    }
}

impl From<PackError> for PartyError {
    fn from(error: PackError) -> Self {
        Self::Input(error.to_string())
    }
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
/// front end that maps its items in parts on other instances ([`lockstep_psi::parts`]):
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

/// A role's key, mapping parts of a step: a party's own, or a helper's, made only from a key
/// delivered to it (there is no other way to make one).
pub struct Keyed {
    role: Role,
    key: Key,
}

/// The distinct keys a step masks, packed as the JS side sends values: bytes back to back and
/// each one's end offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Items {
    /// The keys' bytes, back to back.
    pub values: Vec<u8>,
    /// The end offset of each.
    pub ends: Vec<u32>,
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
    pub fn generate(role: Role) -> Result<Self, PartyError> {
        Ok(Self::with_key(Keyed {
            role,
            key: Key::generate()?,
        }))
    }

    /// A party of `role` with the key whose big-endian bytes are `key`: exactly
    /// [`Key::LEN`] bytes, as [`export_key`](Self::export_key) gives them and `lockstep psi key
    /// new` writes them (the CLI's key files are held to the same length). `key` is wiped
    /// before this returns, on success and on error.
    ///
    /// # Errors
    /// [`PartyError::KeyLength`]; [`PsiError::KeyOutOfRange`], [`PsiError::WeakKey`].
    pub fn import(role: Role, key: &mut [u8]) -> Result<Self, PartyError> {
        Ok(Self::with_key(Keyed::from_key(role, key)?))
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
        let items = pack_keys(&keys);
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
        Starter::new(&self.keyed.key, mode, Backend::Portable)?.check_request(&request)?;
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
        let starter = Starter::new(&self.keyed.key, mode, Backend::Portable)?;
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
        let items = pack_keys(&keys);
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
        let joiner = Joiner::new(&self.keyed.key, mode, Backend::Portable)?;
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
        let joiner = Joiner::new(&self.keyed.key, mode, Backend::Portable)?;
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
        let joiner = Joiner::new(&self.keyed.key, requested.request.mode, Backend::Portable)?;
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

impl Keyed {
    /// A helper of `role` with the key delivered to it as `key` (exactly [`Key::LEN`] bytes,
    /// as [`Party::export_key`] gives them). `key` is wiped before this returns, on success and
    /// on error.
    ///
    /// # Errors
    /// [`PartyError::KeyLength`]; [`PsiError::KeyOutOfRange`], [`PsiError::WeakKey`].
    pub fn from_key(role: Role, key: &mut [u8]) -> Result<Self, PartyError> {
        let parsed = if key.len() == Key::LEN {
            Key::from_bytes(key).map_err(PartyError::from)
        } else {
            Err(PartyError::KeyLength(key.len()))
        };
        key.zeroize();
        Ok(Self { role, key: parsed? })
    }

    /// The role this key masks for.
    pub fn role(&self) -> Role {
        self.role
    }

    /// A part of a setup's or a request's map: `k * H(key)` for each packed key
    /// (`values[ends[i-1]..ends[i]]`), packed elements in order. The control's progress is
    /// started with the part's count.
    ///
    /// # Errors
    /// [`PartyError::Input`] for inconsistent packing; [`PartyError::Psi`] for a cancelled run.
    pub fn mask(
        &self,
        values: &[u8],
        ends: &[u32],
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        let keys = unpack(values, ends)?;
        control.progress().start(Some(keys.len() as u64));
        let pool = Pool::current_thread();
        let masked = match self.role {
            Role::Starter => Starter::new(&self.key, Mode::Reveal, Backend::Portable)?
                .mask(&pool, control, &keys)?,
            Role::Joiner => Joiner::new(&self.key, Mode::Reveal, Backend::Portable)?
                .mask(&pool, control, &keys)?,
        };
        Ok(parts::pack(&masked))
    }

    /// A part of a response's map (a starter's): `k * element` for each packed element, the
    /// first at request index `first` (errors name request indexes).
    ///
    /// # Errors
    /// [`PartyError::WrongRole`] for a joiner; [`PartyError::Psi`] for an element off the
    /// curve or a cancelled run.
    pub fn remask(
        &self,
        elements: &[u8],
        first: usize,
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        self.expect_role(Role::Starter, "re-mask")?;
        let elements = parts::unpack(elements)?;
        control.progress().start(Some(elements.len() as u64));
        let starter = Starter::new(&self.key, Mode::Reveal, Backend::Portable)?;
        let remasked = starter.remask(&Pool::current_thread(), control, &elements, first)?;
        Ok(parts::pack(&remasked))
    }

    /// A part of an intersection's map (a joiner's): `k^-1 * element` for each packed element,
    /// the first at response index `first`.
    ///
    /// # Errors
    /// [`PartyError::WrongRole`] for a starter; [`PartyError::Psi`] for an element off the
    /// curve or a cancelled run.
    pub fn unmask(
        &self,
        elements: &[u8],
        first: usize,
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        self.expect_role(Role::Joiner, "unmask")?;
        let elements = parts::unpack(elements)?;
        control.progress().start(Some(elements.len() as u64));
        let joiner = Joiner::new(&self.key, Mode::Reveal, Backend::Portable)?;
        let unmasked = joiner.unmask(&Pool::current_thread(), control, &elements, first)?;
        Ok(parts::pack(&unmasked))
    }

    fn expect_role(&self, role: Role, step: &'static str) -> Result<(), PartyError> {
        if self.role == role {
            return Ok(());
        }
        Err(PartyError::WrongRole {
            role: self.role,
            step,
            other: role,
        })
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

/// The distinct keys, packed.
fn pack_keys(keys: &linkage::KeyTable) -> Items {
    let mut values = Vec::new();
    let mut ends = Vec::with_capacity(keys.len());
    for key in keys.values() {
        values.extend_from_slice(key);
        ends.push(u32::try_from(values.len()).expect("invariant: wasm32 keys total below 4 GiB"));
    }
    Items { values, ends }
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

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_psi::SetupFormat;

    const STARTER_ROWS: &[u8] =
        "\u{feff}id,email\r\ns1,ada@x\r\ns2,Grace@x\r\ns3, ADA@x\r\ns4,\r\ns5,alan@x\r\ns6,zoë@x\r\n"
            .as_bytes();
    const JOINER_ROWS: &[u8] =
        b"email,city\nalan@x,a\nada@x,b\nbob@x,c\nalan@x,d\nZO\xc3\x8b@x,e\n";

    fn spec() -> KeySpec {
        KeySpec {
            columns: vec!["email".to_owned()],
            normalize: true,
        }
    }

    fn pair() -> (Party, Party) {
        let mut key = [0u8; 32];
        key[31] = 0x2a;
        key[0] = 0x11;
        let starter = Party::import(Role::Starter, &mut key.clone()).unwrap();
        key[1] = 0x77;
        let joiner = Party::import(Role::Joiner, &mut key).unwrap();
        assert_eq!(key, [0; 32], "the import wiped its argument");
        (starter, joiner)
    }

    /// What the CLI computes for the same key and rows: linkage's steps on the native backend
    /// and a pool of 3 workers.
    fn native_setup(party: &Party, rows: &[u8], format: SetupFormat) -> Vec<u8> {
        let keyed = linkage::Party::read(rows, &spec()).unwrap();
        let key = Key::from_bytes(&party.export_key()[..]).unwrap();
        let starter = Starter::new(&key, Mode::Reveal, Backend::fastest()).unwrap();
        linkage::setup(
            &starter,
            &Pool::new(3).unwrap(),
            &Control::new(),
            keyed.keys(),
            &params(format),
        )
        .unwrap()
        .bytes
    }

    fn params(format: SetupFormat) -> SetupParams {
        SetupParams {
            format,
            fpr: SetupParams::DEFAULT_FPR,
            joiner_count: 4,
        }
    }

    #[test]
    fn a_round_in_each_format_gives_the_native_bytes_and_the_plain_join() {
        let control = Control::new();
        for format in [SetupFormat::Raw, SetupFormat::Gcs, SetupFormat::Bloom] {
            let (mut starter, mut joiner) = pair();
            let setup = starter
                .setup(Rows::File(STARTER_ROWS), &spec(), &params(format), &control)
                .unwrap();
            assert_eq!(setup, native_setup(&starter, STARTER_ROWS, format));
            let request = joiner
                .request(Rows::File(JOINER_ROWS), &spec(), false, &control)
                .unwrap();
            let response = starter.respond(&request, 4, false, &control).unwrap();
            let found = joiner
                .intersect(&setup, &response, u64::MAX, &control)
                .unwrap();
            // alan (rows 0 and 3), ada (row 1), zoë (row 4) are found.
            assert_eq!(found.size, 3, "{format:?}");
            let rows: Vec<usize> = found.rows.iter().map(|m| m.row).collect();
            assert_eq!(rows, [0, 1, 3, 4]);
            let file = String::from_utf8(found.rows_file.unwrap()).unwrap();
            if format == SetupFormat::Raw {
                assert!(file.starts_with("joiner_row,setup_position,email,city\n1,"));
                let resolved = starter.resolve(&found.pairs_file.unwrap()).unwrap();
                let expected = linkage::plain_join(
                    linkage::Party::read(STARTER_ROWS, &spec()).unwrap().keys(),
                    linkage::Party::read(JOINER_ROWS, &spec()).unwrap().keys(),
                );
                assert_eq!(resolved.pairs, expected);
                assert!(
                    String::from_utf8(resolved.file)
                        .unwrap()
                        .starts_with("joiner_row,starter_row,id,email\n1,5,s5,alan@x\n")
                );
                let (permutation, made_with) =
                    linkage::read_permutation(&starter.permutation_file().unwrap()[..]).unwrap();
                assert_eq!((made_with, permutation.starter_rows()), (spec(), 6));
            } else {
                assert_eq!(file.lines().next(), Some("joiner_row,email,city"));
                assert!(found.pairs_file.is_none());
                let error = starter.resolve(b"").unwrap_err();
                assert_eq!(error.code(), "PSI_ORDER");
            }
        }
    }

    /// Maps `items` (packed keys) in `count` parts, the first on `own`, the others on helpers
    /// made from `own`'s exported key, and concatenates their outputs in part order.
    fn mask_in_parts(own: &Party, items: &Items, count: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, range) in parts::ranges(items.ends.len(), count)
            .into_iter()
            .enumerate()
        {
            let from = if range.start == 0 {
                0
            } else {
                items.ends[range.start - 1]
            };
            let values = &items.values[from as usize..items.ends[range.end - 1] as usize];
            let ends: Vec<u32> = items.ends[range].iter().map(|e| e - from).collect();
            let part = if i == 0 {
                own.keyed().mask(values, &ends, &Control::new()).unwrap()
            } else {
                let mut key = *own.export_key();
                Keyed::from_key(own.role(), &mut key)
                    .unwrap()
                    .mask(values, &ends, &Control::new())
                    .unwrap()
            };
            out.extend(part);
        }
        out
    }

    /// Maps packed `elements` in `count` parts with `map(keyed, part, first)`, as
    /// [`mask_in_parts`] does.
    fn elements_in_parts(
        own: &Party,
        elements: &[u8],
        count: usize,
        map: impl Fn(&Keyed, &[u8], usize) -> Result<Vec<u8>, PartyError>,
    ) -> Vec<u8> {
        let n = elements.len() / lockstep_psi::ELEMENT_LEN;
        let mut out = Vec::new();
        for (i, range) in parts::ranges(n, count).into_iter().enumerate() {
            let part = &elements
                [range.start * lockstep_psi::ELEMENT_LEN..range.end * lockstep_psi::ELEMENT_LEN];
            let mapped = if i == 0 {
                map(own.keyed(), part, range.start).unwrap()
            } else {
                let mut key = *own.export_key();
                map(
                    &Keyed::from_key(own.role(), &mut key).unwrap(),
                    part,
                    range.start,
                )
                .unwrap()
            };
            out.extend(mapped);
        }
        out
    }

    #[test]
    fn every_step_in_parts_gives_the_one_part_bytes_at_every_part_count() {
        let control = Control::new();
        for format in [SetupFormat::Raw, SetupFormat::Gcs, SetupFormat::Bloom] {
            let (mut starter, mut joiner) = pair();
            let setup = starter
                .setup(Rows::File(STARTER_ROWS), &spec(), &params(format), &control)
                .unwrap();
            let permutation =
                (format == SetupFormat::Raw).then(|| starter.permutation_file().unwrap());
            let request = joiner
                .request(Rows::File(JOINER_ROWS), &spec(), false, &control)
                .unwrap();
            let response = starter.respond(&request, 4, false, &control).unwrap();
            let found = joiner
                .intersect(&setup, &response, u64::MAX, &control)
                .unwrap();
            // 1 part, parts around the key counts (6 starter keys, 4 joiner keys), more parts
            // than items.
            for count in 1..=7 {
                let items = starter
                    .setup_begin(Rows::File(STARTER_ROWS), &spec(), &params(format))
                    .unwrap();
                let masked = mask_in_parts(&starter, &items, count);
                assert_eq!(starter.setup_finish(&masked, &control).unwrap(), setup);
                if let Some(permutation) = &permutation {
                    assert_eq!(&starter.permutation_file().unwrap(), permutation);
                }
                let items = joiner
                    .request_begin(Rows::File(JOINER_ROWS), &spec(), false)
                    .unwrap();
                let masked = mask_in_parts(&joiner, &items, count);
                assert_eq!(joiner.request_finish(&masked).unwrap(), request);
                let elements = starter.respond_begin(&request, 4, false).unwrap();
                let remasked = elements_in_parts(&starter, &elements, count, |k, part, first| {
                    k.remask(part, first, &Control::new())
                });
                assert_eq!(starter.respond_finish(&remasked).unwrap(), response);
                let elements = joiner.intersect_begin(&setup, &response, u64::MAX).unwrap();
                let unmasked = elements_in_parts(&joiner, &elements, count, |k, part, first| {
                    k.unmask(part, first, &Control::new())
                });
                assert_eq!(
                    joiner.intersect_finish(&unmasked).unwrap(),
                    found,
                    "{count} parts"
                );
            }
        }
    }

    #[test]
    fn parts_that_do_not_add_up_or_name_the_wrong_role_are_refused() {
        let control = Control::new();
        let (mut starter, mut joiner) = pair();
        let items = starter
            .setup_begin(Rows::File(STARTER_ROWS), &spec(), &params(SetupFormat::Raw))
            .unwrap();
        let masked = starter
            .keyed()
            .mask(&items.values, &items.ends, &control)
            .unwrap();
        // One element short: a front end's bug, named; the finish took the pending step, so
        // another finish needs a new beginning.
        let short = &masked[..masked.len() - lockstep_psi::ELEMENT_LEN];
        assert_eq!(
            starter.setup_finish(short, &control).unwrap_err().code(),
            "PSI_INTERNAL"
        );
        assert_eq!(
            starter.setup_finish(&masked, &control).unwrap_err().code(),
            "PSI_ORDER"
        );
        let request = joiner
            .request(Rows::File(JOINER_ROWS), &spec(), false, &control)
            .unwrap();
        let elements = starter.respond_begin(&request, 4, false).unwrap();
        // A helper of the other role refuses the starter's map.
        let mut key = *joiner.export_key();
        let helper = Keyed::from_key(Role::Joiner, &mut key).unwrap();
        assert_eq!(key, [0; 32], "the helper wiped the delivered key");
        assert_eq!(
            helper.remask(&elements, 0, &control).unwrap_err().code(),
            "PSI_WRONG_ROLE"
        );
        assert_eq!(
            Keyed::from_key(Role::Starter, &mut [1u8; 31])
                .err()
                .map(|e| e.code()),
            Some("PSI_KEY")
        );
        // Errors in a part name whole-message indexes.
        let mut bad = elements.clone();
        let second = lockstep_psi::ELEMENT_LEN;
        bad[second + 1..second + lockstep_psi::ELEMENT_LEN].fill(0xff);
        let error = starter
            .keyed()
            .remask(&bad[second..], 1, &control)
            .unwrap_err();
        assert!(error.to_string().contains("element 1"), "{error}");
    }

    #[test]
    fn size_only_rounds_tell_the_size_alone() {
        let control = Control::new();
        let (mut starter, mut joiner) = pair();
        let setup = starter
            .setup(
                Rows::File(STARTER_ROWS),
                &spec(),
                &params(SetupFormat::Gcs),
                &control,
            )
            .unwrap();
        let request = joiner
            .request(Rows::File(JOINER_ROWS), &spec(), true, &control)
            .unwrap();
        // A revealing starter refuses a size-only request.
        let error = starter.respond(&request, 4, false, &control).unwrap_err();
        assert_eq!(error.code(), "PSI_ROUND");
        let response = starter.respond(&request, 4, true, &control).unwrap();
        let found = joiner
            .intersect(&setup, &response, u64::MAX, &control)
            .unwrap();
        assert_eq!(
            (
                found.size,
                found.rows.len(),
                found.rows_file,
                found.pairs_file
            ),
            (3, 0, None, None)
        );
    }

    #[test]
    fn packed_values_are_a_plain_text_file_of_them() {
        let control = Control::new();
        let (_, mut joiner) = pair();
        let (values, ends) = (b"b\xc3\xa9\n".to_vec(), [0u32, 3, 3, 4]);
        let spec = KeySpec {
            columns: Vec::new(),
            normalize: false,
        };
        let packed = joiner
            .request(
                Rows::Packed {
                    values: &values,
                    ends: &ends,
                },
                &spec,
                false,
                &control,
            )
            .unwrap();
        let file = joiner
            .request(Rows::File(b"\nb\xc3\xa9\n\n\n\n"), &spec, false, &control)
            .unwrap();
        // "", "bé", "", "\n": the file cannot hold a line break in a value, so compare the
        // distinct keys the file gives ("bé") with the packed ones less "\n".
        assert_eq!(Request::from_bytes(&packed).unwrap().elements.len(), 2);
        assert_eq!(
            Request::from_bytes(&packed).unwrap().elements[0],
            Request::from_bytes(&file).unwrap().elements[0]
        );
        let error = joiner
            .request(
                Rows::Packed {
                    values: &values,
                    ends: &ends,
                },
                &self::spec(),
                false,
                &control,
            )
            .unwrap_err();
        assert_eq!(error.code(), "PSI_USAGE");
    }

    #[test]
    fn steps_of_the_other_role_or_out_of_order_are_refused_with_codes() {
        let control = Control::new();
        let (mut starter, mut joiner) = pair();
        let params = params(SetupFormat::Raw);
        let cases = [
            joiner
                .setup(Rows::File(STARTER_ROWS), &spec(), &params, &control)
                .unwrap_err(),
            joiner.respond(b"", 1, false, &control).unwrap_err(),
            joiner.resolve(b"").unwrap_err(),
            joiner.permutation_file().unwrap_err(),
            starter
                .request(Rows::File(JOINER_ROWS), &spec(), false, &control)
                .unwrap_err(),
            starter.intersect(b"", b"", 1, &control).unwrap_err(),
        ];
        for error in &cases {
            assert_eq!(error.code(), "PSI_WRONG_ROLE", "{error}");
        }
        assert_eq!(
            cases[0].to_string(),
            "a joiner cannot set up: that is the starter's step"
        );
        let error = joiner.intersect(b"", b"", 1, &control).unwrap_err();
        assert_eq!(
            (error.code(), error.to_string().as_str()),
            ("PSI_ORDER", "intersect needs a request first")
        );
        assert_eq!(starter.resolve(b"").unwrap_err().code(), "PSI_ORDER");
        assert_eq!(starter.permutation_file().unwrap_err().code(), "PSI_ORDER");
        // A wrong-role message: the starter's setup given as the response.
        let setup = starter
            .setup(Rows::File(STARTER_ROWS), &spec(), &params, &control)
            .unwrap();
        let request = joiner
            .request(Rows::File(JOINER_ROWS), &spec(), false, &control)
            .unwrap();
        let error = joiner
            .intersect(&setup, &setup, u64::MAX, &control)
            .unwrap_err();
        assert_eq!(error.code(), "PSI_MESSAGE", "{error}");
        let error = starter.respond(&setup, 4, false, &control).unwrap_err();
        assert_eq!(error.code(), "PSI_MESSAGE", "{error}");
        // Limits: more elements than the stated joiner count, a setup above the stated bytes.
        let error = starter.respond(&request, 3, false, &control).unwrap_err();
        assert_eq!(error.code(), "PSI_LIMIT", "{error}");
        let response = starter.respond(&request, 4, false, &control).unwrap();
        let error = joiner
            .intersect(&setup, &response, setup.len() as u64 - 1, &control)
            .unwrap_err();
        assert_eq!(error.code(), "PSI_LIMIT", "{error}");
        // A flipped byte in an element: off the curve (or another point, never a panic).
        let mut bad = response.clone();
        let at = bad.len() - 5;
        bad[at] ^= 0x40;
        if let Err(error) = joiner.intersect(&setup, &bad, u64::MAX, &control) {
            assert_eq!(error.code(), "PSI_MESSAGE", "{error}");
        }
        // Pairs for another setup.
        let found = joiner
            .intersect(&setup, &response, u64::MAX, &control)
            .unwrap();
        starter
            .setup(
                Rows::File(b"email\nsomeone@else\n"),
                &spec(),
                &params,
                &control,
            )
            .unwrap();
        let error = starter.resolve(&found.pairs_file.unwrap()).unwrap_err();
        assert_eq!(error.code(), "PSI_ROUND", "{error}");
        assert_eq!(
            starter.resolve(b"garbage").unwrap_err().code(),
            "PSI_MESSAGE"
        );
    }

    #[test]
    fn keys_are_checked_made_fresh_and_masks_survive_an_export() {
        let mut zero = [0u8; 32];
        let error = Party::import(Role::Joiner, &mut zero).err().unwrap();
        assert_eq!(error.code(), "PSI_KEY");
        let mut long = [1u8; 33];
        let error = Party::import(Role::Joiner, &mut long).err().unwrap();
        assert_eq!(
            (error.code(), error.to_string().as_str()),
            ("PSI_KEY", "a key is 32 bytes, not 33")
        );
        assert_eq!(long, [0; 33], "wiped on error too");
        let mut short = [1u8; 31];
        assert_eq!(
            Party::import(Role::Joiner, &mut short)
                .err()
                .unwrap()
                .code(),
            "PSI_KEY"
        );
        let control = Control::new();
        let mut fresh = Party::generate(Role::Joiner).unwrap();
        let other = Party::generate(Role::Joiner).unwrap();
        assert_ne!(fresh.export_key()[..], other.export_key()[..]);
        let mut again = Party::import(Role::Joiner, &mut fresh.export_key().to_vec()).unwrap();
        let request = |party: &mut Party| {
            party
                .request(Rows::File(JOINER_ROWS), &spec(), false, &control)
                .unwrap()
        };
        assert_eq!(request(&mut fresh), request(&mut again));
    }

    #[test]
    fn progress_counts_the_step_and_cancelling_stops_it() {
        use lockstep_shard::{CancelToken, Progress};
        use std::sync::{Arc, Mutex};
        let reports = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&reports);
        let control =
            Control::new().with_progress(Progress::new(move |r| seen.lock().unwrap().push(r)));
        let (_, mut joiner) = pair();
        let values: Vec<u8> = (0..3000u32).flat_map(|i| i.to_le_bytes()).collect();
        let ends: Vec<u32> = (1..=3000u32).map(|i| 4 * i).collect();
        let spec = KeySpec {
            columns: Vec::new(),
            normalize: false,
        };
        let rows = Rows::Packed {
            values: &values,
            ends: &ends,
        };
        joiner.request(rows, &spec, false, &control).unwrap();
        let last = *reports.lock().unwrap().last().unwrap();
        assert_eq!((last.done, last.total), (3000, Some(3000)));
        let cancel = CancelToken::new();
        cancel.cancel();
        let control = Control::new().with_cancel(cancel);
        let error = joiner.request(rows, &spec, false, &control).unwrap_err();
        assert_eq!(error.code(), "PSI_CANCELLED");
    }
}
