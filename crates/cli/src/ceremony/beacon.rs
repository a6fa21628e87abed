//! The public beacon a seal applies (`phase1 seal`, `phase2 seal`, `phase1 verify --sealed`):
//! its hex, its iterations and their delay.

use anyhow::Context as _;
use lockstep_ceremony::phase1::{self, MAX_BEACON_ITERATIONS};

use super::Context;
use crate::args::BeaconArgs;
use crate::usage::usage;

/// A beacon given by `--beacon` and `--iterations`, checked.
pub(crate) struct Beacon {
    bytes: Vec<u8>,
    iterations: u64,
}

impl Beacon {
    /// The beacon of a seal's arguments: usage errors for bad hex or too many iterations,
    /// before any file is read.
    pub(crate) fn from_args(args: &BeaconArgs) -> anyhow::Result<Self> {
        Self::new(&args.beacon, args.iterations)
    }

    /// The beacon `text` (hex) after `iterations` SHA-256 hashes.
    pub(crate) fn new(text: &str, iterations: u64) -> anyhow::Result<Self> {
        let bytes = parse_beacon(text)?;
        if iterations > MAX_BEACON_ITERATIONS {
            usage!(
                "--iterations {iterations}: at most {MAX_BEACON_ITERATIONS} (2^32, about seven minutes of SHA-256)"
            );
        }
        Ok(Self { bytes, iterations })
    }

    /// The iterations it is delayed by.
    pub(crate) fn iterations(&self) -> u64 {
        self.iterations
    }

    /// The beacon after its delay of SHA-256 hashes, with a progress bar.
    pub(crate) fn delayed(&self, ctx: &Context) -> anyhow::Result<Vec<u8>> {
        if self.iterations == 0 {
            return Ok(self.bytes.clone());
        }
        let step = ctx
            .session
            .step("beacon delay", Some(self.iterations), "hashes");
        let challenge = phase1::beacon_challenge_with(step.control(), &self.bytes, self.iterations)
            .context("the beacon's delay")?;
        step.finish();
        Ok(challenge)
    }
}

/// The beacon given by `--beacon`: hex digits (a `0x` prefix allowed), never empty, for a
/// beacon is a public value no contributor could know in advance.
pub(super) fn parse_beacon(text: &str) -> anyhow::Result<Vec<u8>> {
    let trimmed = text.trim();
    let digits = trimmed
        .strip_prefix("0x")
        .or_else(|| trimmed.strip_prefix("0X"))
        .unwrap_or(trimmed);
    if digits.is_empty() {
        usage!(
            "--beacon is empty: a beacon is a public value no contributor could know in advance (a block hash, a drand round), in hex"
        );
    }
    if let Some((at, c)) = digits
        .chars()
        .enumerate()
        .find(|(_, c)| !c.is_ascii_hexdigit())
    {
        usage!(
            "--beacon: {c:?} (character {}) is not a hex digit: give the beacon as hex, 0-9 and a-f",
            at + 1
        );
    }
    if !digits.len().is_multiple_of(2) {
        usage!(
            "--beacon: {} hex digits, an odd number (each byte is two)",
            digits.len()
        );
    }
    Ok((0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).expect("invariant: checked hex digits"))
        .collect())
}
