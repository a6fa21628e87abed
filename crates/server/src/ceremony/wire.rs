//! The JSON of a ceremony's acts. The HTTP face (participants send `Authorization: Bearer
//! TOKEN`, the token of their invitation `CEREMONY.TOKEN`; the operator its own token):
//!
//! | act | request | answer |
//! |---|---|---|
//! | create (operator) | `POST /v1/ceremonies`, [`NewCeremony`] | `201`, [`CeremonyCreated`] |
//! | a phase 2's input (operator) | `PUT /v1/ceremonies/{id}/inputs/{r1cs,phase1}`, the file | `201`, [`TranscriptView`] |
//! | register (open registration) | `POST /v1/ceremonies/{id}/participants`, [`Register`] | `201`, [`Registered`] |
//! | join the queue | `POST /v1/ceremonies/{id}/queue` | `200`, [`TurnView`] |
//! | leave the queue | `DELETE /v1/ceremonies/{id}/queue` | `200`, [`TurnView`] |
//! | where am I | `GET /v1/ceremonies/{id}/turn` | `200`, [`TurnView`] |
//! | upload (the holder) | `PUT /v1/ceremonies/{id}/contribution`, `Upload-Offset: N`, bytes from N | `201` [`AcceptedView`], `202` [`UploadView`] (more to come) |
//! | how much arrived | `GET /v1/ceremonies/{id}/contribution` | `200`, [`UploadView`] |
//! | seal (operator) | `POST /v1/ceremonies/{id}/seal`, [`SealRequest`] | `200`, [`TranscriptView`] |
//! | transcript (public) | `GET /v1/ceremonies/{id}/transcript` | `200`, [`TranscriptView`] |
//! | a file (public) | `GET /v1/ceremonies/{id}/files/{digest}`, optional `Range: bytes=N-` | `200`/`206` |
//! | the page (public) | `GET /ceremonies/{id}` | `200`, HTML without scripts |
//!
//! Refusals are [`crate::wire::Refusal`]s, as the rounds'.

use serde::{Deserialize, Serialize};

/// An operator's request for a ceremony.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewCeremony {
    /// `phase1` or `phase2`.
    pub kind: String,
    /// A phase 1's power of two (its domain); none for a phase 2 (its circuit's).
    #[serde(default)]
    pub power: Option<u32>,
    /// What the transcript page calls the ceremony.
    pub title: String,
    /// Participants invited by name (each gets a token now).
    #[serde(default)]
    pub participants: Vec<String>,
    /// How many more may register themselves (open registration); 0: invitation only.
    #[serde(default)]
    pub open_slots: u64,
    /// Seconds a participant holds the turn (download, contribute, upload).
    pub turn_secs: u64,
}

/// One participant's invitation, `CEREMONY.TOKEN`: shown this once.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NamedInvitation {
    /// The participant's public name.
    pub name: String,
    /// The invitation (a secret).
    pub invitation: String,
}

/// A ceremony just made.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CeremonyCreated {
    /// Its id.
    pub ceremony: String,
    /// `pending` (a phase 2 waits for its inputs) or `open`.
    pub phase: String,
    /// The invited participants' invitations, in the order asked.
    pub invitations: Vec<NamedInvitation>,
}

/// A self-registration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Register {
    /// The public name asked for.
    pub name: String,
}

/// A registration accepted.
pub type Registered = NamedInvitation;

/// A file the ceremony holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileView {
    /// SHA-256 of the bytes, 64 lowercase hex digits (its name under `files/`).
    pub digest: String,
    /// Its length in bytes.
    pub len: u64,
}

/// The turn as one participant sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnView {
    /// The ceremony.
    pub ceremony: String,
    /// `phase1` or `phase2`.
    pub kind: String,
    /// `pending`, `open`, `sealing` or `sealed`.
    pub phase: String,
    /// This participant's public name.
    pub name: String,
    /// `invited`, `queued`, `holding`, `contributed`, `lapsed`, `refused` or `left`.
    pub status: String,
    /// Participants ahead in the queue (the holder included), when queued.
    pub ahead: Option<u64>,
    /// When the turn lapses (Unix seconds), when holding it.
    pub deadline: Option<u64>,
    /// The server's clock (Unix seconds), to read the deadline by.
    pub now: u64,
    /// The head: the file the next contribution is made on (its index: 0 the initial object).
    pub head_index: u64,
    /// The head's file, once the ceremony is open.
    pub head: Option<FileView>,
    /// Why the last upload was refused or the turn lapsed.
    pub reason: Option<String>,
}

/// An upload in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadView {
    /// Bytes the server holds.
    pub received: u64,
    /// Bytes a contribution on the head has.
    pub expected: u64,
}

/// A contribution accepted: the new head.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcceptedView {
    /// Its index in the chain (1 the first contribution).
    pub index: u64,
    /// SHA-256 of its bytes.
    pub digest: String,
    /// The hash the participant publishes (for gnark's files, the SHA-256 of the bytes: the
    /// next contribution's challenge).
    pub contribution_hash: String,
    /// How long the server's verification took, in milliseconds.
    pub verify_ms: u64,
}

/// The operator's seal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SealRequest {
    /// The public beacon, hex (a value no participant could know in advance).
    pub beacon: String,
    /// SHA-256 iterations applied to the beacon first (its delay).
    #[serde(default)]
    pub iterations: u64,
}

/// One accepted contribution in the transcript.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Its index (1 the first contribution).
    pub index: u64,
    /// The participant's public name.
    pub participant: String,
    /// The file.
    pub file: FileView,
    /// The contribution hash its participant publishes.
    pub contribution_hash: String,
    /// The server's verification time, in milliseconds.
    pub verify_ms: u64,
    /// When it was accepted (Unix seconds).
    pub accepted_at: u64,
}

/// The seal, once made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SealView {
    /// The beacon, hex.
    pub beacon: String,
    /// Its SHA-256 iterations.
    pub iterations: u64,
    /// The result: a phase 1's sealed SRS, a phase 2's proving key.
    pub result: Option<FileView>,
    /// A phase 2's verifying key.
    pub verifying_key: Option<FileView>,
}

/// The public transcript.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranscriptView {
    /// The ceremony.
    pub ceremony: String,
    /// Its title.
    pub title: String,
    /// `phase1` or `phase2`.
    pub kind: String,
    /// A phase 1's power; a phase 2's circuit domain once derived.
    pub power: u32,
    /// `pending`, `open`, `sealing` or `sealed`.
    pub phase: String,
    /// Seconds a turn lasts.
    pub turn_secs: u64,
    /// A phase 2's circuit (gnark's R1CS), once uploaded.
    pub r1cs: Option<FileView>,
    /// A phase 2's sealed phase 1, once uploaded.
    pub phase1: Option<FileView>,
    /// The initial object, once made.
    pub initial: Option<FileView>,
    /// Every accepted contribution, in chain order.
    pub contributions: Vec<Entry>,
    /// Participants (by name) waiting in the queue, in order.
    pub queue: Vec<String>,
    /// The seal, once asked.
    pub seal: Option<SealView>,
}
