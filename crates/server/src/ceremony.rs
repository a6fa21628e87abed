//! The ceremony coordinator: a Groth16 trusted-setup ceremony people join over the network.
//!
//! An operator creates a ceremony ([`wire::NewCeremony`]: gnark's phase 1 at a power, or gnark's
//! phase 2 for a circuit whose R1CS and sealed phase 1 it uploads) with invited participants
//! (tokens stored hashed, as a round's) or open registration up to a cap. Then:
//!
//! - **the queue** ([`Turn`], [`Status`]): participants join; one holds the turn at a time, with a
//!   deadline for download, contribution and upload; a lapsed turn passes on and its late upload
//!   is refused; a participant may leave. Every transition is one transaction on the
//!   ceremony's row ([`Db`](crate::Db), SQLite or PostgreSQL), so a restart resumes where it was.
//! - **the accept path**: the holder's upload collects (resumable, bounded by the exact length a
//!   contribution on the head has), is verified against the head by the engine
//!   (`verify_contribution`, on the server's worker pool), stored, and only then made the new
//!   head with its transcript row, in one change. A refusal says the engine's words to its
//!   participant, keeps the head and passes the turn. A server killed mid-verification verifies
//!   again at start; killed between storing and the head's move, it leaves an unnamed body its
//!   next start collects and the head where it was.
//! - **the transcript**: public, as JSON and as an HTML page without scripts; every file it
//!   names is downloadable, so anyone can verify the chain (`lockstep ceremony
//!   verify-transcript`). The operator's seal with a public beacon closes the ceremony and
//!   publishes the result (a phase 1's SRS, a phase 2's keys).
//!
//! Trust: the server verifies, but need not be trusted: a participant checks that the
//! transcript lists its contribution hash, and anyone re-verifies the whole chain from the
//! published files. The server never sees a secret: contributions are made on the
//! participants' machines.

pub mod client;
mod page;
mod records;
pub(crate) mod routes;
mod rules;
mod steps;
pub mod wire;

pub(crate) use records::NAMED_DIGESTS;
pub use rules::{CeremonyError, CeremonyKind, MAX_NAME_CHARS, Phase, Status, Turn, check_name};
pub use steps::Workers;
