//! `lockstep ceremony ...`: phase 1 of a Groth16 trusted setup over files.
//!
//! Files are gnark v0.15's bytes. They are read strictly (every point checked; the first bad
//! one named with its byte offset) and written under the rules of [`crate::files`]: never over
//! an input, atomically, nothing left behind by an interruption.

mod info;
mod phase1;
mod ptau;

use std::io::{BufReader, BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use anyhow::Context as _;
use lockstep_ceremony::Limits;
use lockstep_ceremony::phase1::{Phase1, Srs};
use lockstep_shard::{Control, Pool, ShardPolicy};

use crate::args::{CeremonyCommand, Phase1Command, PtauCommand};
use crate::files::{Files, OutputId, Staged, open_input};
use crate::progress::StepBar;

/// What every ceremony command runs with.
pub(crate) struct Context {
    policy: ShardPolicy,
    quiet: bool,
}

/// A step with a progress bar counting points.
pub(crate) struct Step {
    bar: StepBar,
    control: Control,
    started: Instant,
}

impl Step {
    pub(crate) fn control(&self) -> &Control {
        &self.control
    }

    /// Ends the step and returns its duration in seconds.
    pub(crate) fn finish(self) -> f64 {
        self.bar.finish();
        self.started.elapsed().as_secs_f64()
    }
}

impl Context {
    /// A pool sized by the policy for `points` points (a lowered request is said so).
    pub(crate) fn pool(&self, points: u64) -> anyhow::Result<Pool> {
        let decision = self
            .policy
            .decide(usize::try_from(points).unwrap_or(usize::MAX));
        if let Some(lowered) = decision.lowered {
            self.note(&lowered.to_string());
        }
        Ok(Pool::new(decision.workers)?)
    }

    pub(crate) fn prepare(&self, files: &Files) -> anyhow::Result<Staged> {
        files.prepare(&|line| self.note(line))
    }

    pub(crate) fn step(&self, label: &str, points: Option<u64>) -> Step {
        let bar = StepBar::counting(label, points, "points", self.quiet);
        let control = Control::new().with_progress(bar.progress().clone());
        Step {
            bar,
            control,
            started: Instant::now(),
        }
    }

    /// A status line on stderr unless `--quiet`.
    pub(crate) fn note(&self, line: &str) {
        if !self.quiet {
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
    }

    /// Reads a phase 1 object, naming the file in any error.
    pub(crate) fn read_phase1(
        &self,
        pool: &Pool,
        flag: &str,
        path: &Path,
        limits: &Limits,
    ) -> anyhow::Result<(Phase1, [u8; 32])> {
        let file = open_input(flag, path)?;
        let points = estimated_points(&file, 345);
        let limits = with_file_len(limits, &file);
        let step = self.step("reading", points);
        let read = Phase1::read(
            pool,
            step.control(),
            BufReader::with_capacity(1 << 20, file),
            &limits,
        )
        .with_context(|| format!("{}", path.display()))?;
        step.finish();
        Ok(read)
    }

    /// Reads a sealed SRS, naming the file in any error.
    pub(crate) fn read_srs(
        &self,
        pool: &Pool,
        flag: &str,
        path: &Path,
        limits: &Limits,
    ) -> anyhow::Result<(Srs, [u8; 32])> {
        let file = open_input(flag, path)?;
        let limits = with_file_len(limits, &file);
        let step = self.step("reading", estimated_points(&file, 0));
        let read = Srs::read(
            pool,
            step.control(),
            BufReader::with_capacity(1 << 20, file),
            &limits,
        )
        .with_context(|| format!("{}", path.display()))?;
        step.finish();
        Ok(read)
    }

    /// A pool for a file of this size (about 48 bytes a point).
    pub(crate) fn pool_for_file(&self, path: &Path) -> anyhow::Result<Pool> {
        let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        self.pool(len / 48)
    }

    /// Writes through a staged output, with a progress bar, and returns the SHA-256.
    pub(crate) fn write_staged(
        &self,
        staged: &mut Staged,
        id: OutputId,
        points: u64,
        write: impl FnOnce(
            &Control,
            &mut BufWriter<&mut std::fs::File>,
        ) -> Result<[u8; 32], lockstep_ceremony::CodecError>,
    ) -> anyhow::Result<[u8; 32]> {
        let shown = staged.shown(id).to_owned();
        let step = self.step("writing", Some(points));
        let mut out = BufWriter::with_capacity(1 << 20, staged.file(id));
        let hash = write(step.control(), &mut out)
            .with_context(|| format!("writing {}", shown.display()))?;
        drop(out);
        step.finish();
        Ok(hash)
    }
}

/// `limits` with the length of `file` if it is a regular file (vectors are then allocated once).
fn with_file_len(limits: &Limits, file: &std::fs::File) -> Limits {
    let len = file
        .metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len());
    Limits {
        file_len: len,
        ..*limits
    }
}

/// Stored points of a file of this length (phase 1: `288N + 345 + L`; SRS: `288N - 88`), for
/// a progress bar.
fn estimated_points(file: &std::fs::File, overhead: u64) -> Option<u64> {
    let len = file.metadata().ok()?.len();
    let n = len.saturating_sub(overhead) / 288;
    (n > 0).then(|| 5 * n - 2)
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses a hex string given by `flag`.
pub(crate) fn parse_hex(flag: &str, text: &str) -> anyhow::Result<Vec<u8>> {
    let text = text.trim();
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(crate::usage::UsageError(format!(
            "{flag}: expected an even number of hex digits"
        ))
        .into());
    }
    Ok((0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("invariant: checked hex digits"))
        .collect())
}

/// Runs a `lockstep ceremony` subcommand.
pub(crate) fn run(
    command: &CeremonyCommand,
    policy: ShardPolicy,
    quiet: bool,
) -> anyhow::Result<()> {
    let ctx = Context { policy, quiet };
    match command {
        CeremonyCommand::Phase1(command) => match command {
            Phase1Command::New { power, out } => phase1::new(&ctx, *power, out),
            Phase1Command::Contribute {
                input,
                out,
                entropy,
            } => phase1::contribute(&ctx, input, out, entropy.as_deref()),
            Phase1Command::Verify {
                files,
                previous,
                sealed,
                beacon,
                iterations,
            } => phase1::verify(
                &ctx,
                files,
                previous.as_deref(),
                sealed.as_deref().zip(beacon.as_deref()),
                *iterations,
            ),
            Phase1Command::Seal {
                input,
                beacon,
                iterations,
                out,
            } => phase1::seal(&ctx, input, beacon, *iterations, out),
        },
        CeremonyCommand::Ptau(PtauCommand::Import { input, out, srs }) => {
            ptau::import(&ctx, input, out, *srs)
        }
        CeremonyCommand::Ptau(PtauCommand::Export { input, out }) => ptau::export(&ctx, input, out),
        CeremonyCommand::Info { file } => info::print(&ctx, file),
    }
}
