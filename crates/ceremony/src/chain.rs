//! What verifying a ceremony's chain says about each file, and why it stops: one set of words
//! for every front end. The walks themselves are [`crate::phase1::Chain`] and
//! [`crate::phase2::Chain`]; a front end reads the files (with its own progress and names) and
//! hands them over in order, and prints `NAME: VERDICT` or `NAME: REJECTED: ...`.

use std::fmt;

/// The hex of a hash, as every verdict shows it.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What one file of a chain was found to be.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// A phase 1 chain's initial object (nothing to verify: it is fixed by its power).
    Initial {
        /// Its power.
        power: u32,
    },
    /// A phase 2 chain's initial object, equal byte for byte to the one re-derived from the
    /// circuit and phase 1 named `origin` (words the front end gave, such as `c.r1cs over srs`).
    InitialOf {
        /// The origin's name.
        origin: String,
        /// The SHA-256 of the file's bytes.
        hash: [u8; 32],
    },
    /// A phase 2 initial object taken as it is (no circuit given to re-derive it from).
    InitialUnchecked,
    /// A contribution verified against its predecessor.
    Contribution {
        /// The SHA-256 of the file's bytes (the next contribution's challenge).
        hash: [u8; 32],
    },
    /// A sealed SRS equal to the seal of the chain with the beacon.
    Sealed {
        /// The SHA-256 of the file's bytes.
        hash: [u8; 32],
    },
}

impl Verdict {
    /// A one-word name of the verdict: `initial`, `contribution` or `seal`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Initial { .. } | Self::InitialOf { .. } | Self::InitialUnchecked => "initial",
            Self::Contribution { .. } => "contribution",
            Self::Sealed { .. } => "seal",
        }
    }

    /// The SHA-256 of the file's bytes, where the verdict shows it.
    pub fn hash(&self) -> Option<&[u8; 32]> {
        match self {
            Self::InitialOf { hash, .. } | Self::Contribution { hash } | Self::Sealed { hash } => {
                Some(hash)
            }
            Self::Initial { .. } | Self::InitialUnchecked => None,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Initial { power } => write!(f, "the initial object for 2^{power}"),
            Self::InitialOf { origin, hash } => {
                write!(f, "ok, the initial object of {origin}, hash {}", hex(hash))
            }
            Self::InitialUnchecked => f.write_str(
                "an initial object, not checked against a circuit (give the circuit and the phase 1 it was initialized from)",
            ),
            Self::Contribution { hash } => write!(f, "ok, contribution hash {}", hex(hash)),
            Self::Sealed { hash } => write!(f, "ok, the seal of the chain, hash {}", hex(hash)),
        }
    }
}

/// Why a chain's walk stopped at a file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChainError {
    /// The file is not what the chain needs there: a contribution that does not verify, an
    /// object of another circuit, a seal of another beacon. The words follow `REJECTED: `.
    #[error("REJECTED: {0}")]
    Rejected(String),
    /// The work stopped for a reason that is not the file's: cancelled, out of memory, a
    /// worker's panic.
    #[error("{0}")]
    Run(String),
}

impl ChainError {
    /// The stable code every front end reports: `CEREMONY_REJECTED` for a file the chain
    /// refuses, `CEREMONY_RUN` for a run that stopped.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Rejected(_) => "CEREMONY_REJECTED",
            Self::Run(_) => "CEREMONY_RUN",
        }
    }

    pub(crate) fn rejected(reason: impl fmt::Display) -> Self {
        Self::Rejected(reason.to_string())
    }

    pub(crate) fn run(reason: impl fmt::Display) -> Self {
        Self::Run(reason.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_say_their_hash_in_hex() {
        let hash = [0xab; 32];
        let shown = Verdict::Contribution { hash }.to_string();
        assert_eq!(shown, format!("ok, contribution hash {}", "ab".repeat(32)));
        assert_eq!(Verdict::Sealed { hash }.hash(), Some(&hash));
        assert_eq!(Verdict::Initial { power: 4 }.hash(), None);
        assert_eq!(
            Verdict::Initial { power: 4 }.to_string(),
            "the initial object for 2^4"
        );
        assert_eq!(ChainError::rejected("x").code(), "CEREMONY_REJECTED");
        assert_eq!(ChainError::rejected("x").to_string(), "REJECTED: x");
    }
}
