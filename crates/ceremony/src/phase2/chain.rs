//! A phase 2 chain verified file by file (gnark's `VerifyPhase2` made incremental): where it
//! may start, what each next file must be, and the words a file is refused with. A front end
//! reads each file and hands it over in order; the rules are here.

use std::borrow::Cow;

use lockstep_shard::{Control, Pool};

use super::{Phase2, VerifyError, verify_contribution};
use crate::chain::{ChainError, Verdict};

/// Where a chain of one circuit must start: the circuit's initial object over a phase 1,
/// re-derived from the two files ([`super::initialize_object`], as gnark's `VerifyPhase2`
/// re-runs `Initialize`), the SHA-256 of its bytes, and the words that name its origin in
/// verdicts and refusals (`c.r1cs over srs`: the front end's names for the two files).
#[derive(Debug)]
pub struct Start<'a> {
    object: Cow<'a, Phase2>,
    hash: [u8; 32],
    origin: String,
}

impl<'a> Start<'a> {
    /// The start `object` (hashed here), named `origin`.
    ///
    /// # Errors
    /// [`ChainError::Run`] if the object cannot be encoded (cancelled).
    pub fn new(
        pool: &Pool,
        object: Cow<'a, Phase2>,
        origin: impl Into<String>,
    ) -> Result<Self, ChainError> {
        let hash = object
            .write(pool, &Control::new(), std::io::sink())
            .map_err(ChainError::run)?;
        Ok(Self {
            object,
            hash,
            origin: origin.into(),
        })
    }
}

/// A phase 2 chain verified up to its last file, which it holds (one object's memory however
/// long the chain; a re-derived start is borrowed where the caller keeps it).
#[derive(Debug)]
pub struct Chain<'a> {
    last: Cow<'a, Phase2>,
    last_hash: [u8; 32],
    contributions: usize,
    /// The re-derived start's name while the chain stands on it: a first contribution made on
    /// another object is refused with it.
    made_on: Option<String>,
}

impl<'a> Chain<'a> {
    /// A chain from its first file (whose bytes hash to `hash`):
    /// - an initial object: with `start`, it must equal the re-derived one byte for byte
    ///   ([`Verdict::InitialOf`]); without, it is taken as it is ([`Verdict::InitialUnchecked`]);
    /// - a contribution (gnark's `VerifyPhase2` form: the chain's first file is its first
    ///   contribution): verified against `start`, which is then needed.
    ///
    /// # Errors
    /// [`ChainError::Rejected`]: an initial object of another circuit or phase 1, a
    /// contribution without `start` or made on another object, or one that does not verify;
    /// [`ChainError::Run`] if cancelled.
    pub fn from_first(
        pool: &Pool,
        control: &Control,
        first: Phase2,
        hash: [u8; 32],
        start: Option<Start<'a>>,
    ) -> Result<(Self, Verdict), ChainError> {
        if !first.is_initial() {
            let Some(start) = start else {
                return Err(ChainError::rejected(
                    "not an initial object (it carries a contribution): give the object it was made on, or the circuit and phase 1 it was initialized from",
                ));
            };
            let mut chain = Self {
                last: start.object,
                last_hash: start.hash,
                contributions: 0,
                made_on: Some(start.origin),
            };
            let verdict = chain.push(pool, control, first, hash)?;
            return Ok((chain, verdict));
        }
        let verdict = match start {
            Some(start) if start.hash != hash => {
                return Err(ChainError::rejected(format_args!(
                    "not the initial object of {}",
                    start.origin
                )));
            }
            Some(start) => Verdict::InitialOf {
                origin: start.origin,
                hash,
            },
            None => Verdict::InitialUnchecked,
        };
        Ok((Self::after(Cow::Owned(first), hash), verdict))
    }

    /// A chain continuing `previous` (whose bytes hash to `hash`), taken as it is: a chain
    /// verified in parts. It is not counted.
    pub fn after(previous: Cow<'a, Phase2>, hash: [u8; 32]) -> Self {
        Self {
            last: previous,
            last_hash: hash,
            contributions: 0,
            made_on: None,
        }
    }

    /// Verifies `next` (whose bytes hash to `hash`) as the contribution after the chain's last
    /// file, and makes it the last.
    ///
    /// # Errors
    /// [`ChainError::Rejected`] naming the first check that fails ([`verify_contribution`]'s
    /// order; a first contribution made on another object than the re-derived start says so);
    /// [`ChainError::Run`] if cancelled. The chain is unchanged on an error.
    pub fn push(
        &mut self,
        pool: &Pool,
        control: &Control,
        next: Phase2,
        hash: [u8; 32],
    ) -> Result<Verdict, ChainError> {
        verify_contribution(pool, control, &self.last, &self.last_hash, &next).map_err(
            |error| match (error, &self.made_on) {
                (VerifyError::Run(reason), _) => ChainError::Run(reason),
                (VerifyError::ChallengeMismatch { found, expected }, Some(origin)) => {
                    ChainError::rejected(format_args!(
                        "not made on the initial object of {origin}: its challenge is {found}, that object's hash is {expected} (a chain of another circuit, or over another phase 1)"
                    ))
                }
                (refused, _) => ChainError::rejected(refused),
            },
        )?;
        self.last = Cow::Owned(next);
        self.last_hash = hash;
        self.contributions += 1;
        self.made_on = None;
        Ok(Verdict::Contribution { hash })
    }

    /// The contributions verified.
    pub fn contributions(&self) -> usize {
        self.contributions
    }

    /// The last file's object.
    pub fn last(&self) -> &Phase2 {
        &self.last
    }

    /// The last file's object and the SHA-256 of its bytes (what a seal takes).
    pub fn into_last(self) -> (Cow<'a, Phase2>, [u8; 32]) {
        (self.last, self.last_hash)
    }
}
