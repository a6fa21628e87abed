//! Why a round refused a post or a read.

use lockstep_psi::PsiError;

use crate::{Kind, Role};

/// Why a round refused what a party asked. Each variant is one answer the HTTP front end gives
/// (forbidden, conflict, too large, unprocessable, gone); the words name the round's rule or
/// repeat the engine's decoder, never a token or a value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RoundError {
    /// The role does not post this message (a joiner's setup, a starter's request).
    #[error("the {role} does not post the {kind}")]
    NotYours {
        /// Who asked.
        role: Role,
        /// What it tried to post.
        kind: Kind,
    },
    /// The role reads only the other party's messages.
    #[error("the {role} does not read the {kind}")]
    NotReadable {
        /// Who asked.
        role: Role,
        /// What it tried to read.
        kind: Kind,
    },
    /// A message that protocol order puts later (a response before the request).
    #[error("the {kind} comes after the {missing}, which is not in yet")]
    OutOfOrder {
        /// What was posted.
        kind: Kind,
        /// What must be in first.
        missing: Kind,
    },
    /// A second, different message of a kind already posted.
    #[error("the {0} is already in, with other bytes")]
    AlreadyPosted(Kind),
    /// The body is larger than the round allows.
    #[error("the {kind} is over the round's {limit} bytes")]
    TooLarge {
        /// What was posted.
        kind: Kind,
        /// The round's bound.
        limit: u64,
    },
    /// The engine's decoder refused the body (its words).
    #[error("the {kind} is not a valid message: {source}")]
    Invalid {
        /// What was posted.
        kind: Kind,
        /// The decoder's error.
        source: PsiError,
    },
    /// A valid message that does not fit this round (another format or mode, a response that
    /// does not answer the request).
    #[error("the {kind} does not fit this round: {reason}")]
    Mismatch {
        /// What was posted.
        kind: Kind,
        /// The rule it broke.
        reason: String,
    },
    /// The round's expiry has passed.
    #[error("the round expired")]
    Expired,
}
