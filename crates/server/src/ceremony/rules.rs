//! What a ceremony is and what its queue allows, apart from where it is kept: its kind, its
//! spec within the server's caps, a participant's name and status, the turn and its deadline.

use std::fmt;
use std::str::FromStr;

/// What a ceremony's files are, and so which engine rules its contributions are verified by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CeremonyKind {
    /// gnark's phase 1 (powers of tau) at `2^power`; its initial object is made by the server.
    Phase1 {
        /// The domain's power of two.
        power: u32,
    },
    /// gnark's phase 2 for one circuit: its initial object is derived by the server from the
    /// circuit's R1CS and a sealed phase 1 the operator uploads.
    Phase2,
    /// snarkjs's phase 2 (`.zkey`) for one circom circuit: its initial key is made by the server
    /// (`zkey new`) from the circuit's `.r1cs` and a `.ptau` the operator uploads.
    Zkey,
}

impl CeremonyKind {
    /// The name the wire and the database use: `phase1`, `phase2`, `zkey`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Phase1 { .. } => "phase1",
            Self::Phase2 => "phase2",
            Self::Zkey => "zkey",
        }
    }
}

/// Where a ceremony is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Made, waiting for its inputs (a phase 2's circuit and phase 1); nobody may contribute.
    Pending,
    /// Taking contributions, one participant at a time.
    Open,
    /// The operator's seal is being computed; no more contributions.
    Sealing,
    /// Closed with a beacon; its result published.
    Sealed,
}

impl Phase {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Open => "open",
            Self::Sealing => "sealing",
            Self::Sealed => "sealed",
        }
    }
}

impl FromStr for Phase {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Ok(match text {
            "pending" => Self::Pending,
            "open" => Self::Open,
            "sealing" => Self::Sealing,
            "sealed" => Self::Sealed,
            other => return Err(format!("ceremony phase {other:?}")),
        })
    }
}

/// A participant's place in the ceremony.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Has a token, not (or no longer) in the queue.
    Invited,
    /// In the queue, waiting for the turn.
    Queued,
    /// Holds the turn: downloads, contributes and uploads before the deadline.
    Holding,
    /// Its contribution was accepted; a participant contributes once.
    Contributed,
    /// Its turn's deadline passed; it may join the queue again.
    Lapsed,
    /// Its upload was refused (the reason kept); it may join the queue again.
    Refused,
    /// Left the queue; it may join again.
    Left,
}

impl Status {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Invited => "invited",
            Self::Queued => "queued",
            Self::Holding => "holding",
            Self::Contributed => "contributed",
            Self::Lapsed => "lapsed",
            Self::Refused => "refused",
            Self::Left => "left",
        }
    }

    /// Whether a participant in this status may join the queue.
    pub fn may_join(self) -> bool {
        matches!(
            self,
            Self::Invited | Self::Lapsed | Self::Refused | Self::Left
        )
    }
}

impl FromStr for Status {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Ok(match text {
            "invited" => Self::Invited,
            "queued" => Self::Queued,
            "holding" => Self::Holding,
            "contributed" => Self::Contributed,
            "lapsed" => Self::Lapsed,
            "refused" => Self::Refused,
            "left" => Self::Left,
            other => return Err(format!("participant status {other:?}")),
        })
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The turn: who holds it, until when, and whether its upload is being verified (a turn under
/// verification does not lapse: its upload arrived before the deadline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Turn {
    /// The holder's sequence number in the ceremony.
    pub holder: u64,
    /// Unix seconds after which an unverified turn lapses.
    pub deadline: u64,
    /// Whether the holder's complete upload is being verified.
    pub verifying: bool,
}

impl Turn {
    /// Whether the turn has lapsed at `now`: past its deadline with no upload complete.
    pub fn lapsed(&self, now: u64) -> bool {
        !self.verifying && now > self.deadline
    }
}

/// The longest a participant's public name may be, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// A participant's public name, as the transcript shows it: 1 to [`MAX_NAME_CHARS`]
/// characters, no control characters, no surrounding spaces.
///
/// # Errors
/// Words saying which rule the name breaks.
pub fn check_name(name: &str) -> Result<(), String> {
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NAME_CHARS {
        return Err(format!(
            "a participant's name is 1 to {MAX_NAME_CHARS} characters; this one has {chars}"
        ));
    }
    if name.chars().any(char::is_control) {
        return Err("a participant's name holds no control characters".into());
    }
    if name.trim() != name {
        return Err("a participant's name has no leading or trailing spaces".into());
    }
    Ok(())
}

/// Why a ceremony refused an act.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CeremonyError {
    /// Not open: pending its inputs, being sealed or sealed.
    #[error("the ceremony is {0}; it takes no contribution now")]
    NotOpen(&'static str),
    /// The act needs the turn, which this participant does not hold.
    #[error("it is not your turn")]
    NotYourTurn,
    /// The turn's deadline passed before the upload was complete.
    #[error("your turn's deadline passed at {deadline} (Unix seconds); the turn has moved on")]
    Late {
        /// The deadline.
        deadline: u64,
    },
    /// The participant contributed already.
    #[error("you contributed already; a participant contributes once")]
    AlreadyContributed,
    /// The participant's upload is being verified.
    #[error("your contribution is being verified; wait for the verdict")]
    Verifying,
    /// The upload is not a valid contribution on the head (the engine's words).
    #[error("contribution refused: {0}")]
    Invalid(String),
    /// An upload larger than a contribution on the head can be.
    #[error("a contribution on this head is exactly {expected} bytes; the upload is larger")]
    Oversized {
        /// The head's length.
        expected: u64,
    },
    /// An upload resumed at another offset than the server holds.
    #[error(
        "the upload resumes at byte {held} (the server holds {held} bytes); it was sent at {sent}"
    )]
    Offset {
        /// What the server holds.
        held: u64,
        /// What the client said.
        sent: u64,
    },
    /// Open registration is closed or full, or a name is taken or malformed.
    #[error("{0}")]
    Registration(String),
    /// The operator's act does not fit the ceremony (a seal with no contribution, an input
    /// given twice, a spec out of the server's caps).
    #[error("{0}")]
    Operator(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_short_printable_and_trimmed() {
        for good in ["alice", "Zoë Ceremony", "李雷", "x"] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in ["", " alice", "alice ", "a\nb", "a\u{7}", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_turn_lapses_after_its_deadline_unless_its_upload_is_in() {
        let turn = Turn {
            holder: 3,
            deadline: 100,
            verifying: false,
        };
        assert!(!turn.lapsed(100));
        assert!(turn.lapsed(101));
        assert!(
            !Turn {
                verifying: true,
                ..turn
            }
            .lapsed(10_000)
        );
    }

    #[test]
    fn statuses_and_phases_read_back_from_their_names() {
        for status in [
            Status::Invited,
            Status::Queued,
            Status::Holding,
            Status::Contributed,
            Status::Lapsed,
            Status::Refused,
            Status::Left,
        ] {
            assert_eq!(status.name().parse::<Status>(), Ok(status));
        }
        for phase in [Phase::Pending, Phase::Open, Phase::Sealing, Phase::Sealed] {
            assert_eq!(phase.name().parse::<Phase>(), Ok(phase));
        }
        assert!("holding ".parse::<Status>().is_err());
        assert!(Status::Lapsed.may_join() && !Status::Contributed.may_join());
        assert!(!Status::Queued.may_join() && !Status::Holding.may_join());
    }
}
