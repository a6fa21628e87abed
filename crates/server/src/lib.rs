//! The relay two organisations run a PSI round through: what a round allows, who may do it, and
//! where its messages are kept. The HTTP front end (`lockstep serve`) stands on these rules and
//! holds none of its own.
//!
//! # Brief overview
//!
//! An operator creates a [`RoundSpec`] (setup format, mode, row and byte limits, expiry) and
//! hands each party a [`Token`]; the server keeps only their [`TokenHash`]es. Each party then
//! posts its messages and reads the other's:
//!
//! - the **starter** posts the `setup`, then the `response` (once the joiner's request is in);
//! - the **joiner** posts the `request`, and reads the setup and the response;
//! - [`RoundState::may_post`] and [`may_read`] say who may do what, in protocol order;
//! - [`check_message`] decodes an upload with the PSI engine's own validating decoders, bounded
//!   by the round's limits, and checks it against the spec (format, mode) and the round (a
//!   response answers the request element for element); [`RoundState::accept`] makes a retry
//!   of the same bytes a no-op and a different second message an error;
//! - a [`Store`] keeps message bodies by content ([`Digest`], SHA-256): [`DiskStore`] stages an
//!   upload, syncs it and renames it into place, so a killed server leaves no partial message
//!   visible, only a staging file its next start removes.
//!
//! - a [`Db`] keeps rounds and what each holds: SQLite embedded (`sqlite:PATH`, WAL) or
//!   PostgreSQL (`postgres://...`), one schema and one set of queries, migrations at connect.
//!
//! The same server coordinates trusted-setup ceremonies ([`ceremony`]): a queue of
//! participants, every contribution verified by the ceremony engine before it becomes the head,
//! and a public transcript.
//!
//! The server learns the masked points and their counts, never a value or a key.
#![deny(unsafe_code)]

mod app;
pub mod ceremony;
mod check;
pub mod client;
mod db;
mod digest;
mod error;
mod metrics;
mod round;
mod serve;
mod spelling;
mod store;
mod token;
mod trace;
pub mod wire;

pub use app::{Caps, Relay, router};
pub use check::{Checked, check_message};
pub use db::{Db, DbError, Invitation};
pub use digest::{Digest, DigestError};
pub use error::RoundError;
pub use metrics::Metrics;
pub use round::{
    Kind, KindError, Posted, Role, RoundId, RoundIdError, RoundSpec, RoundState, may_read,
};
pub use serve::{Listen, ServeConfig, ServeError, serve};
pub use store::{DiskStaging, DiskStore, Staging, Store, StoreError};
pub use token::{Token, TokenError, TokenHash};
