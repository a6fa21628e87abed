//! The public beacon a seal applies (`phase1 seal`, `phase2 seal`, `phase1 verify --sealed`):
//! the engine's checks (`lockstep_ceremony::beacon`) as usage errors, and its delay with a
//! progress bar.

use anyhow::Context as _;
use lockstep_ceremony::beacon::{self, BeaconError};
use lockstep_ceremony::phase1;

use super::Context;
use crate::args::BeaconArgs;
use crate::usage::usage;

/// A beacon given by `--beacon` and `--iterations`, checked.
pub(crate) struct Beacon(beacon::Beacon);

impl Beacon {
    /// The beacon of a seal's arguments: usage errors for bad hex or too many iterations,
    /// before any file is read.
    pub(crate) fn from_args(args: &BeaconArgs) -> anyhow::Result<Self> {
        Self::new(&args.beacon, args.iterations)
    }

    /// The beacon `text` (hex) after `iterations` SHA-256 hashes.
    pub(crate) fn new(text: &str, iterations: u64) -> anyhow::Result<Self> {
        match beacon::Beacon::new(text, iterations) {
            Ok(beacon) => Ok(Self(beacon)),
            Err(error) => refused(&error),
        }
    }

    /// The iterations it is delayed by.
    pub(crate) fn iterations(&self) -> u64 {
        self.0.iterations()
    }

    /// The beacon after its delay of SHA-256 hashes, with a progress bar.
    pub(crate) fn delayed(&self, ctx: &Context) -> anyhow::Result<Vec<u8>> {
        if self.iterations() == 0 {
            return Ok(self.0.bytes().to_vec());
        }
        let step = ctx
            .session
            .step("beacon delay", Some(self.iterations()), "hashes");
        let challenge =
            phase1::beacon_challenge_with(step.control(), self.0.bytes(), self.iterations())
                .context("the beacon's delay")?;
        step.finish();
        Ok(challenge)
    }
}

/// The beacon given by `--beacon`, as [`beacon::parse_hex`] reads it.
pub(super) fn parse_beacon(text: &str) -> anyhow::Result<Vec<u8>> {
    beacon::parse_hex(text).or_else(|error| refused(&error))
}

/// A beacon's refusal as a usage error naming its flag (`--beacon`, `--iterations`).
fn refused<T>(error: &BeaconError) -> anyhow::Result<T> {
    usage!("--{error}")
}
