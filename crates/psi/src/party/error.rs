//! Why a party's step failed, with a stable code per kind.

use crate::{Key, PsiError};

use super::Role;
use super::packed::PackError;

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
    /// A count past its stated limit ([`crate::party::MAX_PARTS`]).
    #[error("{0}")]
    Limit(String),
    /// The sample data asked for ([`crate::sample`]) is past its limit or does not fit.
    #[error(transparent)]
    Sample(#[from] crate::sample::SampleError),
}

impl PartyError {
    /// A stable code: the engine's ([`PsiError::code`]) or `PSI_INPUT`, `PSI_MESSAGE`,
    /// `PSI_ROUND`, `PSI_WRONG_ROLE`, `PSI_ORDER`, `PSI_LIMIT` (a size past its stated limit),
    /// `PSI_MEMORY` (a size within its limit that did not fit), `PSI_KEY`, `PSI_USAGE`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Psi(error) => error.code(),
            Self::Input(_) => "PSI_INPUT",
            Self::Message(_) => "PSI_MESSAGE",
            Self::Round(_) => "PSI_ROUND",
            Self::WrongRole { .. } => "PSI_WRONG_ROLE",
            Self::OutOfOrder { .. } => "PSI_ORDER",
            Self::SetupBytes { .. } | Self::Limit(_) => "PSI_LIMIT",
            Self::Sample(crate::sample::SampleError::TooMany(_)) => "PSI_LIMIT",
            Self::Sample(crate::sample::SampleError::Memory(_)) => "PSI_MEMORY",
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
