//! A round's rules: its spec, who posts and reads what, and in which order.

use std::fmt;
use std::str::FromStr;

use lockstep_psi::{Mode, SetupFormat};

use rand_core::{OsRng, RngCore};

use crate::{Digest, RoundError};

/// A round's id: 128 random bits as 32 lowercase hex digits, read only from that spelling (so an
/// id from a request path names nothing else). Not a secret: the tokens are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RoundId(pub [u8; 16]);

/// Why a text is not a [`RoundId`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a round id is 32 lowercase hex digits; this is not one")]
pub struct RoundIdError;

impl RoundId {
    /// A new id from the operating system's generator.
    ///
    /// # Errors
    /// The generator's failure, in its words.
    pub fn generate() -> Result<Self, String> {
        let mut bytes = [0u8; 16];
        OsRng
            .try_fill_bytes(&mut bytes)
            .map_err(|e| e.to_string())?;
        Ok(Self(bytes))
    }
}

impl fmt::Display for RoundId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl FromStr for RoundId {
    type Err = RoundIdError;

    fn from_str(text: &str) -> Result<Self, RoundIdError> {
        crate::spelling::lower_hex(text)
            .map(Self)
            .ok_or(RoundIdError)
    }
}

/// A party of a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Posts the setup and the response (OpenMined's server).
    Starter,
    /// Posts the request; learns the intersection (OpenMined's client).
    Joiner,
}

/// A message of a round, in protocol order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// The starter's masked set.
    Setup,
    /// The joiner's masked values.
    Request,
    /// The starter's re-masked request.
    Response,
}

impl Kind {
    /// Every kind, in protocol order.
    pub const ALL: [Kind; 3] = [Kind::Setup, Kind::Request, Kind::Response];

    /// The role that posts it.
    pub fn poster(self) -> Role {
        match self {
            Kind::Setup | Kind::Response => Role::Starter,
            Kind::Request => Role::Joiner,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Starter => "starter",
            Role::Joiner => "joiner",
        })
    }
}

/// Why a text names no [`Kind`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a message is `setup`, `request` or `response`; this is none")]
pub struct KindError;

impl FromStr for Kind {
    type Err = KindError;

    /// Reads a kind as `Display` writes it, and nothing else.
    fn from_str(text: &str) -> Result<Self, KindError> {
        Kind::ALL
            .into_iter()
            .find(|kind| kind.to_string() == text)
            .ok_or(KindError)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Setup => "setup",
            Kind::Request => "request",
            Kind::Response => "response",
        })
    }
}

/// A setup format's name as the engine's `SetupFormat::from_str` reads it and
/// `ServerSetup::format_name` writes it: `raw`, `gcs` or `bloom`.
pub(crate) fn format_name(format: SetupFormat) -> &'static str {
    match format {
        SetupFormat::Raw => "raw",
        SetupFormat::Gcs => "gcs",
        SetupFormat::Bloom => "bloom",
    }
}

/// What an operator fixed when creating a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundSpec {
    /// The setup's form.
    pub format: SetupFormat,
    /// Whether the joiner learns the intersection or only its size.
    pub mode: Mode,
    /// The most rows (elements) a setup, request or response may hold.
    pub max_rows: u64,
    /// The most bytes one message body may hold.
    pub max_bytes: u64,
    /// When the round ends, in seconds since the Unix epoch: nothing is posted or read after.
    pub expires_at: u64,
}

impl RoundSpec {
    /// Refuses anything once the round has expired.
    ///
    /// # Errors
    /// [`RoundError::Expired`] when `now` (Unix seconds) is at or past the expiry.
    pub fn check_live(&self, now: u64) -> Result<(), RoundError> {
        if now >= self.expires_at {
            return Err(RoundError::Expired);
        }
        Ok(())
    }
}

/// A message the round holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posted {
    /// Its body's digest.
    pub digest: Digest,
    /// Its body's length in bytes.
    pub len: u64,
    /// Its elements (a raw setup's, a request's, a response's); `None` for a GCS or Bloom setup.
    pub elements: Option<u64>,
}

/// The messages a round holds so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundState {
    /// The starter's setup, once posted.
    pub setup: Option<Posted>,
    /// The joiner's request, once posted.
    pub request: Option<Posted>,
    /// The starter's response, once posted.
    pub response: Option<Posted>,
}

impl RoundState {
    /// The message of `kind`, if posted.
    pub fn get(&self, kind: Kind) -> Option<&Posted> {
        match kind {
            Kind::Setup => self.setup.as_ref(),
            Kind::Request => self.request.as_ref(),
            Kind::Response => self.response.as_ref(),
        }
    }

    /// Whether `role` may post a message of `kind` now: its own kind, and for the response,
    /// the setup and the request already in (the starter answers only once it has published
    /// its set). Checked before a body is read. A kind already posted passes here: whether a
    /// second post is a retry is [`accept`](Self::accept)'s call, once its digest is known.
    ///
    /// # Errors
    /// [`RoundError::NotYours`] or [`RoundError::OutOfOrder`].
    pub fn may_post(&self, role: Role, kind: Kind) -> Result<(), RoundError> {
        if kind.poster() != role {
            return Err(RoundError::NotYours { role, kind });
        }
        if kind == Kind::Response {
            for missing in [Kind::Setup, Kind::Request] {
                if self.get(missing).is_none() {
                    return Err(RoundError::OutOfOrder { kind, missing });
                }
            }
        }
        Ok(())
    }

    /// Whether a checked message of `kind` is new (`Ok(true)`: store it), the same bytes again
    /// (`Ok(false)`: a retry, accepted once and not stored twice), or a second, different one.
    ///
    /// # Errors
    /// [`RoundError::AlreadyPosted`] for other bytes than those posted.
    pub fn accept(&self, kind: Kind, digest: Digest) -> Result<bool, RoundError> {
        match self.get(kind) {
            None => Ok(true),
            Some(posted) if posted.digest == digest => Ok(false),
            Some(_) => Err(RoundError::AlreadyPosted(kind)),
        }
    }

    /// Records a message accepted as new.
    pub fn record(&mut self, kind: Kind, posted: Posted) {
        let slot = match kind {
            Kind::Setup => &mut self.setup,
            Kind::Request => &mut self.request,
            Kind::Response => &mut self.response,
        };
        *slot = Some(posted);
    }
}

/// Whether `role` may read a message of `kind`: only the other party's.
///
/// # Errors
/// [`RoundError::NotReadable`] for its own messages.
pub fn may_read(role: Role, kind: Kind) -> Result<(), RoundError> {
    if kind.poster() == role {
        return Err(RoundError::NotReadable { role, kind });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn posted(byte: u8) -> Posted {
        Posted {
            digest: Digest([byte; 32]),
            len: 1,
            elements: Some(1),
        }
    }

    #[test]
    fn each_role_posts_its_own_kinds_and_reads_the_others() {
        let mut state = RoundState::default();
        state.record(Kind::Setup, posted(1));
        state.record(Kind::Request, posted(2));
        for kind in Kind::ALL {
            for role in [Role::Starter, Role::Joiner] {
                let own = kind.poster() == role;
                assert_eq!(
                    state.may_post(role, kind).is_ok(),
                    own,
                    "{role} posts {kind}"
                );
                assert_eq!(may_read(role, kind).is_ok(), !own, "{role} reads {kind}");
            }
        }
    }

    #[test]
    fn the_response_waits_for_the_setup_and_the_request() {
        let mut state = RoundState::default();
        let order = |state: &RoundState| state.may_post(Role::Starter, Kind::Response);
        assert!(matches!(
            order(&state),
            Err(RoundError::OutOfOrder {
                missing: Kind::Setup,
                ..
            })
        ));
        state.record(Kind::Setup, posted(1));
        assert!(matches!(
            order(&state),
            Err(RoundError::OutOfOrder {
                missing: Kind::Request,
                ..
            })
        ));
        state.record(Kind::Request, posted(2));
        assert!(order(&state).is_ok());
        // The joiner's request needs nothing first: neither side waits for the other to post.
        assert!(
            RoundState::default()
                .may_post(Role::Joiner, Kind::Request)
                .is_ok()
        );
    }

    #[test]
    fn a_retry_is_accepted_once_and_other_bytes_refused() {
        let mut state = RoundState::default();
        assert_eq!(state.accept(Kind::Setup, Digest([1; 32])).ok(), Some(true));
        state.record(Kind::Setup, posted(1));
        assert_eq!(state.accept(Kind::Setup, Digest([1; 32])).ok(), Some(false));
        assert!(matches!(
            state.accept(Kind::Setup, Digest([9; 32])),
            Err(RoundError::AlreadyPosted(Kind::Setup))
        ));
    }

    #[test]
    fn a_round_id_reads_back_and_nothing_path_like_does() {
        let id = RoundId::generate().unwrap();
        assert_eq!(id.to_string().parse::<RoundId>(), Ok(id));
        assert_ne!(RoundId::generate().unwrap(), id);
        for text in [
            "..",
            "%2e%2e",
            &format!("../{}", &id.to_string()[3..]),
            &id.to_string().to_uppercase(),
        ] {
            assert_eq!(text.parse::<RoundId>(), Err(RoundIdError), "{text:?}");
        }
    }

    #[test]
    fn nothing_is_live_from_the_expiry_on() {
        let spec = RoundSpec {
            format: SetupFormat::Raw,
            mode: Mode::Reveal,
            max_rows: 10,
            max_bytes: 1000,
            expires_at: 100,
        };
        assert!(spec.check_live(99).is_ok());
        assert!(matches!(spec.check_live(100), Err(RoundError::Expired)));
    }
}
