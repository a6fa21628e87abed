//! ECDH private set intersection over P-256, wire-compatible with OpenMined PSI 2.x, sharded
//! across cores with output byte-identical to one core.
//!
//! # Brief overview
//!
//! Two parties learn which records they share without revealing the rest. The **starter**
//! (OpenMined's server) masks its values with its key `a` and publishes a [`ServerSetup`]; the
//! **joiner** (the client) masks its values with its key `b` into a [`Request`]; the starter
//! re-masks the request into a [`Response`]; the joiner removes its own mask and looks the
//! results up in the setup. `a * H(v)` equals `b^-1 * a * b * H(v)` exactly when both hold `v`.
//!
//! - [`Key`]: a secret scalar (zeroized, never printed).
//! - [`Starter::setup`] (raw, GCS or Bloom, with the raw form's sorting permutation),
//!   [`Starter::respond`].
//! - [`Joiner::request`], [`Joiner::intersect`], [`Joiner::intersection_size`],
//!   [`Joiner::association_table`].
//! - [`ServerSetup`], [`Request`], [`Response`]: the `psi_proto` messages, byte for byte, with
//!   validating, streaming decoders bounded by [`Limits`].
//! - [`Joiner::check_response`]: whether a response can be read as the joiner means to.
//! - [`Backend`]: OpenSSL's P-256 ([`Backend::Native`]) or ours in pure Rust, the wasm build's
//!   ([`Backend::Portable`]); identical bytes.
//! - [`reference`](mod@reference): the single-threaded algorithms the sharded engine must equal.
//! - [`linkage`]: record linkage (record files, distinct keys, a round step by step, the raw
//!   setup's permutation, the joiner's pairs, their file formats, resolving them to rows), over
//!   `Read` and `Write`: every front end's rules in one place.
//! - [`parts`]: a round's work in parts for instances that each hold the key (wasm workers):
//!   the split, the per-part maps and the merges, byte-identical to one instance.
//! - [`party`]: a party as a front end holds it (the wasm module, the Node addon): its key kept
//!   inside, both roles' steps whole or in parts, values packed, stable error codes.
//! - [`compat`]: OpenMined's own API rules (empty sets, its intersection's order and count),
//!   for a front end that stands in for `openmined.psi`.
//! - [`streaming`] (native builds): the steps past memory, a party's keys indexed by external
//!   sorts on disk and messages read and written an element at a time, byte-identical to the
//!   steps in memory.
//! - [`sample`]: built-in sample data (two organisations' record files).
//! - [`GRAIN`]: how many keys a worker must get.
//!
//! ```
//! use lockstep_psi::{Backend, Joiner, Key, Mode, SetupFormat, SetupParams, Starter};
//! use lockstep_shard::{Control, Pool};
//!
//! let (pool, control) = (Pool::new(2)?, Control::new());
//! let starter = Starter::new(&Key::generate()?, Mode::Reveal, Backend::fastest())?;
//! let joiner = Joiner::new(&Key::generate()?, Mode::Reveal, Backend::fastest())?;
//!
//! let params = SetupParams { format: SetupFormat::Gcs, fpr: 1e-9, joiner_count: 3 };
//! let setup = starter.setup(&pool, &control, &["ada", "grace", "alan"], &params)?;
//! let request = joiner.request(&pool, &control, &["alan", "barbara", "ada"])?;
//! let response = starter.respond(&pool, &control, &request)?;
//! let shared = joiner.intersect(&pool, &control, &setup.message, &response, 3)?;
//! assert_eq!(shared, [0, 2]); // "alan" and "ada", by the joiner's indexes
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Security
//! Not audited. Scalar multiplications are constant-time in the key on both backends; hashing
//! to the curve tries a value-dependent number of candidates, as OpenMined's algorithm does.
//! Keys are zeroized on drop; where key material travels is documented on [`Key`].
//!
//! # Invariants are loud
//! An impossible state (a key that is not a scalar, a value past a bound just checked) is an
//! `expect("invariant: ...")` or a typed internal error, never a silent default (a one or a zero
//! put where a value is missing): a default would corrupt a message without a sound.
#![deny(unsafe_code)]

mod backend;
mod bloom;
pub mod compat;
mod curve;
mod error;
mod field;
mod gcs;
mod hashing;
mod joiner;
mod key;
pub mod linkage;
mod message;
mod params;
pub mod parts;
pub mod party;
mod point;
pub mod reference;
pub mod sample;
mod starter;
#[cfg(not(target_arch = "wasm32"))]
pub mod streaming;

/// PSI's shard grain: a worker gets at least 256 keys (or elements), about 15 ms of curve work
/// on one core, below which a thread costs more than it saves. Ask the shard policy for a run's
/// workers in it: `policy.decide(keys, GRAIN)`.
pub const GRAIN: lockstep_shard::Grain = lockstep_shard::Grain::new(256, "keys");

pub use backend::{Backend, UnknownBackend};
pub use curve::{ELEMENT_LEN, Element};
pub use error::{MessageKind, PointError, PsiError};
pub use joiner::{Joiner, Match};
pub use key::Key;
pub use message::{
    Bloom, ElementReader, ElementWriter, Gcs, Limits, Mode, RawSetupReader, Request, Response,
    ServerSetup, StreamError, StreamedSetup,
};
pub use params::{SetupFormat, SetupParams};
pub use starter::{Setup, Starter};
