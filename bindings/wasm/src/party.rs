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
    Starter,
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

/// One party: its role, its key, and what it keeps between steps.
pub struct Party {
    role: Role,
    key: Key,
    set_up: Option<SetUp>,
    requested: Option<Requested>,
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
        Ok(Self::with_key(role, Key::generate()?))
    }

    /// A party of `role` with the key whose big-endian bytes are `key`: exactly
    /// [`Key::LEN`] bytes, as [`export_key`](Self::export_key) gives them and `lockstep psi key
    /// new` writes them (the CLI's key files are held to the same length). `key` is wiped
    /// before this returns, on success and on error.
    ///
    /// # Errors
    /// [`PartyError::KeyLength`]; [`PsiError::KeyOutOfRange`], [`PsiError::WeakKey`].
    pub fn import(role: Role, key: &mut [u8]) -> Result<Self, PartyError> {
        let parsed = if key.len() == Key::LEN {
            Key::from_bytes(key).map_err(PartyError::from)
        } else {
            Err(PartyError::KeyLength(key.len()))
        };
        key.zeroize();
        Ok(Self::with_key(role, parsed?))
    }

    fn with_key(role: Role, key: Key) -> Self {
        Self {
            role,
            key,
            set_up: None,
            requested: None,
        }
    }

    /// This party's role.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The key's 32 big-endian bytes: the only way the key leaves the party.
    pub fn export_key(&self) -> Zeroizing<[u8; 32]> {
        self.key.to_bytes()
    }

    /// The starter's setup message over its rows' distinct keys (`psi setup`). The party keeps
    /// the rows and, for a raw setup, the permutation [`resolve`](Self::resolve) needs; a new
    /// setup replaces them.
    ///
    /// # Errors
    /// [`PartyError::WrongRole`] for a joiner; [`PartyError::Psi`] for bad parameters (checked
    /// before the rows are read) or a setup too large; [`PartyError::Input`] for unusable rows.
    pub fn setup(
        &mut self,
        rows: Rows<'_>,
        spec: &KeySpec,
        params: &SetupParams,
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        self.expect_role(Role::Starter, "set up")?;
        params.validate()?;
        let (records, keys) = read_rows(rows, spec)?;
        let starter = Starter::new(&self.key, Mode::Reveal, Backend::Portable)?;
        control.progress().start(Some(keys.len() as u64));
        let setup = linkage::setup(&starter, &Pool::current_thread(), control, &keys, params)?;
        self.set_up = Some(SetUp {
            records,
            keys,
            spec: spec.clone(),
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

    /// The starter's response to a joiner's request (`psi respond`): `joiner_count` bounds
    /// the request's elements (the count the joiner stated), `size_only` the mode this starter
    /// answers. Needs no setup.
    ///
    /// # Errors
    /// [`PartyError::WrongRole`] for a joiner, [`PartyError::Usage`] for a joiner count of 0,
    /// [`PartyError::Psi`] for a malformed request, one above the count, one of the other mode,
    /// or an element off the curve.
    pub fn respond(
        &self,
        request: &[u8],
        joiner_count: u64,
        size_only: bool,
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        self.expect_role(Role::Starter, "respond")?;
        if joiner_count == 0 {
            return Err(PartyError::Usage(
                "the joiner count must be at least 1".to_owned(),
            ));
        }
        let limits = Limits::max_elements(joiner_count);
        let request = Request::read(request, limits)?;
        let mode = if size_only {
            Mode::SizeOnly
        } else {
            Mode::Reveal
        };
        let starter = Starter::new(&self.key, mode, Backend::Portable)?;
        control
            .progress()
            .start(Some(request.elements.len() as u64));
        let response = starter.respond(&Pool::current_thread(), control, &request)?;
        Ok(response.to_bytes())
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

    /// The joiner's request over its rows' distinct keys (`psi request`). The party keeps the
    /// rows and the request for [`intersect`](Self::intersect); a new request replaces them.
    ///
    /// # Errors
    /// [`PartyError::WrongRole`] for a starter, [`PartyError::Input`] for unusable rows.
    pub fn request(
        &mut self,
        rows: Rows<'_>,
        spec: &KeySpec,
        size_only: bool,
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        self.expect_role(Role::Joiner, "request")?;
        let (records, keys) = read_rows(rows, spec)?;
        let mode = if size_only {
            Mode::SizeOnly
        } else {
            Mode::Reveal
        };
        let joiner = Joiner::new(&self.key, mode, Backend::Portable)?;
        control.progress().start(Some(keys.len() as u64));
        let request = linkage::request(&joiner, &Pool::current_thread(), control, &keys)?;
        let bytes = request.to_bytes();
        self.requested = Some(Requested {
            records,
            keys,
            request,
        });
        Ok(bytes)
    }

    /// The joiner's intersection of the starter's `setup` and its `response` to this party's
    /// last request (`psi intersect --request`): the matched rows and, after a raw setup, the
    /// pairs file for the starter; only the size after a size-only request. `max_setup_bytes`
    /// bounds the setup this party accepts.
    ///
    /// # Errors
    /// [`PartyError::WrongRole`] for a starter, [`PartyError::OutOfOrder`] before a request,
    /// [`PartyError::Psi`] for a setup above `max_setup_bytes` (`PSI_LIMIT`), a malformed setup
    /// or response, or a response that does not answer the request.
    pub fn intersect(
        &self,
        setup: &[u8],
        response: &[u8],
        max_setup_bytes: u64,
        control: &Control,
    ) -> Result<Found, PartyError> {
        self.expect_role(Role::Joiner, "intersect")?;
        let requested = self.requested.as_ref().ok_or(PartyError::OutOfOrder {
            step: "intersect",
            first: "a request",
        })?;
        if setup.len() as u64 > max_setup_bytes {
            return Err(PartyError::SetupBytes {
                bytes: setup.len() as u64,
                limit: max_setup_bytes,
            });
        }
        let n = requested.keys.len();
        let setup_message = ServerSetup::read(setup, Limits::NONE)?;
        let limits = Limits::max_elements(n as u64);
        let response = Response::read(response, limits)?;
        let mode = requested.request.mode;
        let learn = match mode {
            Mode::Reveal => Learn::Rows,
            Mode::SizeOnly => Learn::Size,
        };
        let joiner = Joiner::new(&self.key, mode, Backend::Portable)?;
        joiner.check_response(&response, n, Some(&requested.request))?;
        control.progress().start(Some(n as u64));
        let intersection = linkage::intersect(
            &joiner,
            &Pool::current_thread(),
            control,
            &setup_message,
            Digest::of(setup),
            &response,
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

    fn raw_setup(&self, step: &'static str) -> Result<(&SetUp, &Permutation), PartyError> {
        let out_of_order = PartyError::OutOfOrder {
            step,
            first: "a raw setup",
        };
        let set_up = self.set_up.as_ref().ok_or(out_of_order)?;
        match &set_up.permutation {
            Some(permutation) => Ok((set_up, permutation)),
            None => Err(PartyError::OutOfOrder {
                step,
                first: "a raw setup",
            }),
        }
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
