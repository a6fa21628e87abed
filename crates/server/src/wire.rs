//! What travels between a relay and its clients besides message bodies: the JSON of a round's
//! creation and state, a refusal, and the invitation a party keeps in its token file.
//!
//! The HTTP face, one path per act (every party request carries `Authorization: Bearer TOKEN`):
//!
//! | act | request | answer |
//! |---|---|---|
//! | create a round (operator) | `POST /v1/rounds`, [`NewRound`] | `201`, [`RoundCreated`] |
//! | a round's state | `GET /v1/rounds/{id}` | `200`, [`RoundView`] |
//! | post a message | `PUT /v1/rounds/{id}/{setup,request,response}`, the body | `201` new, `200` a retry, [`PostedView`] |
//! | read a message | `GET /v1/rounds/{id}/{kind}`, optional `Range: bytes=N-` | `200`/`206`, the body, `ETag` its digest |
//! | close a round | `DELETE /v1/rounds/{id}` | `204`; its messages are removed |
//! | liveness | `GET /healthz` | `200 ok`, or `503` without the database |
//! | counters | `GET /metrics` | Prometheus text |
//!
//! Every refusal is a [`Refusal`] with a stable `code` and the rule's words.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{Kind, Posted, Role, RoundId, RoundSpec, RoundState, Token};

/// An operator's request for a round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewRound {
    /// The setup's form: `raw`, `gcs` or `bloom`.
    pub format: String,
    /// Whether the joiner learns only the intersection's size.
    #[serde(default)]
    pub size_only: bool,
    /// The most rows a message may hold (at most the server's cap).
    pub max_rows: u64,
    /// The most bytes a message may hold (at most the server's cap).
    pub max_bytes: u64,
    /// Seconds until the round expires (at most the server's cap).
    pub expires_in: u64,
}

/// A round just made: its id and the two invitations, each `ROUND.TOKEN`, shown this once.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RoundCreated {
    /// The round's id.
    pub round: String,
    /// The starter's invitation.
    pub starter: String,
    /// The joiner's invitation.
    pub joiner: String,
    /// When the round expires, in Unix seconds.
    pub expires_at: u64,
}

/// A round as one of its parties sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundView {
    /// The round's id.
    pub round: String,
    /// The asking party's role: `starter` or `joiner`.
    pub role: String,
    /// The setup's form.
    pub format: String,
    /// Whether the joiner learns only the size.
    pub size_only: bool,
    /// The round's row bound.
    pub max_rows: u64,
    /// The round's byte bound per message.
    pub max_bytes: u64,
    /// When the round expires, in Unix seconds.
    pub expires_at: u64,
    /// The messages in so far, by kind (`setup`, `request`, `response`).
    pub messages: BTreeMap<String, PostedView>,
}

/// A message the round holds: enough for a party to know whether its copy is the same.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PostedView {
    /// SHA-256 of the body, 64 lowercase hex digits.
    pub digest: String,
    /// The body's length in bytes.
    pub len: u64,
    /// Its elements, where the message counts them (not a GCS or Bloom setup).
    pub elements: Option<u64>,
}

/// Why the server refused: a stable code for programs and the rule's words for people.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// One of `unauthorized`, `forbidden`, `out-of-order`, `already-posted`, `too-large`,
    /// `invalid`, `mismatch`, `expired`, `not-found`, `not-yet`, `bad-request`, `timeout`,
    /// `unavailable`, `storage`, `internal`.
    pub code: String,
    /// What was wrong, never a token or a value.
    pub error: String,
}

impl From<&Posted> for PostedView {
    fn from(posted: &Posted) -> Self {
        Self {
            digest: posted.digest.to_string(),
            len: posted.len,
            elements: posted.elements,
        }
    }
}

impl RoundView {
    /// The view of round `id` for `role`.
    pub fn new(id: &RoundId, role: Role, spec: &RoundSpec, state: &RoundState) -> Self {
        Self {
            round: id.to_string(),
            role: role.to_string(),
            format: crate::round::format_name(spec.format).to_owned(),
            size_only: spec.mode == lockstep_psi::Mode::SizeOnly,
            max_rows: spec.max_rows,
            max_bytes: spec.max_bytes,
            expires_at: spec.expires_at,
            messages: Kind::ALL
                .into_iter()
                .filter_map(|kind| Some((kind.to_string(), state.get(kind)?.into())))
                .collect(),
        }
    }

    /// The message of `kind`, if the round holds it.
    pub fn posted(&self, kind: Kind) -> Option<&PostedView> {
        self.messages.get(&kind.to_string())
    }
}

/// What a party's token file holds: the round and the party's token, written `ROUND.TOKEN`
/// (32 and 64 lowercase hex digits). A secret: whoever holds it acts as the party.
#[derive(Clone, Debug)]
pub struct PartyInvitation {
    /// The round.
    pub round: RoundId,
    /// The party's token.
    pub token: Token,
}

/// Why a text is not a [`PartyInvitation`]. Never repeats the text, which may hold a token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "an invitation is ROUND.TOKEN (32 and 64 lowercase hex digits, as `lockstep serve` made it); this is not one"
)]
pub struct InvitationError;

impl FromStr for PartyInvitation {
    type Err = InvitationError;

    /// Reads `ROUND.TOKEN`, surrounding whitespace (a file's newline) ignored.
    fn from_str(text: &str) -> Result<Self, InvitationError> {
        let (round, token) = text.trim().split_once('.').ok_or(InvitationError)?;
        Ok(Self {
            round: round.parse().map_err(|_| InvitationError)?,
            token: token.parse().map_err(|_| InvitationError)?,
        })
    }
}

impl PartyInvitation {
    /// The invitation's text, `ROUND.TOKEN`: a secret, for the party's file only.
    pub fn reveal(&self) -> String {
        format!("{}.{}", self.round, self.token.reveal())
    }
}

impl NewRound {
    /// A byte bound that fits any message of `rows` rows: a raw setup, a request or a response
    /// spends 35 bytes an element (a 33-byte compressed point, its tag and length) and a little
    /// framing; GCS and Bloom setups are smaller. 40 bytes a row and 64 KiB besides.
    pub fn bytes_for(rows: u64) -> u64 {
        rows.saturating_mul(40).saturating_add(64 << 10)
    }
}

impl fmt::Display for NewRound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a {} round{} of at most {} rows and {} bytes a message, for {} s",
            self.format,
            if self.size_only { " (size only)" } else { "" },
            self.max_rows,
            self.max_bytes,
            self.expires_in
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invitation_reads_back_and_refuses_other_spellings() {
        let invitation = PartyInvitation {
            round: RoundId([7; 16]),
            token: Token::generate().unwrap(),
        };
        let text = invitation.reveal();
        let back: PartyInvitation = format!("{text}\n").parse().unwrap();
        assert_eq!(back.round, invitation.round);
        assert!(back.token.hash() == invitation.token.hash());
        for bad in [
            String::new(),
            text.replace('.', ":"),
            text.to_uppercase(),
            format!("../{text}"),
            text[..text.len() - 1].to_owned(),
        ] {
            let error = bad.parse::<PartyInvitation>().unwrap_err();
            assert!(!error.to_string().contains(&invitation.token.reveal()));
        }
    }
}
