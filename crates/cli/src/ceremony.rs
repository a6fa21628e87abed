//! `lockstep ceremony ...`: phase 1 of a Groth16 trusted setup over files.
//!
//! Files are gnark v0.15's bytes, read strictly by the engine (every point checked; the first
//! bad one named with its byte offset) and written under the rules of `lockstep_files`: never
//! over an input, atomically, nothing left behind by an interruption.

mod info;
mod phase1;
mod ptau;

use std::io::{BufReader, BufWriter};
use std::path::Path;

use anyhow::Context as _;
use lockstep_ceremony::phase1::{Phase1, Srs};
use lockstep_ceremony::{FileKind, GRAIN, Limits, points_at_most};
use lockstep_files::{OutputId, Staged, open_input};
use lockstep_shard::{Control, Pool};

use crate::args::{CeremonyCommand, Phase1Command, PtauCommand};
use crate::session::{Session, Timing, thousands, workers};

/// What every ceremony command runs with.
pub(crate) struct Context {
    session: Session,
}

impl Context {
    /// A pool for a command over the file at `path` (sized by the most points it can hold).
    pub(crate) fn pool_for_file(&self, path: &Path) -> anyhow::Result<Pool> {
        let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        self.pool(points_at_most(len))
    }

    /// A pool for `points` points of work.
    pub(crate) fn pool(&self, points: u64) -> anyhow::Result<Pool> {
        self.session
            .pool(usize::try_from(points).unwrap_or(usize::MAX), GRAIN)
    }

    /// Says what a command did, with its worker count: `contribute: 5,118 points in 1.20 s on
    /// 2 workers`.
    pub(crate) fn done(&self, what: &str, timing: Timing, pool: &Pool) {
        self.session.note(&format!(
            "{what}: {} points in {:.2} s on {}",
            thousands(timing.items),
            timing.elapsed.as_secs_f64(),
            workers(pool.workers())
        ));
    }

    /// Reads a phase 1 object, naming the file in any error.
    pub(crate) fn read_phase1(
        &self,
        pool: &Pool,
        flag: &str,
        path: &Path,
        limits: &Limits,
    ) -> anyhow::Result<(Phase1, [u8; 32])> {
        self.read_file(
            flag,
            path,
            FileKind::Phase1,
            limits,
            |control, reader, limits| Phase1::read(pool, control, reader, limits),
        )
    }

    /// Reads a sealed SRS, naming the file in any error.
    pub(crate) fn read_srs(
        &self,
        pool: &Pool,
        flag: &str,
        path: &Path,
        limits: &Limits,
    ) -> anyhow::Result<(Srs, [u8; 32])> {
        self.read_file(
            flag,
            path,
            FileKind::Srs,
            limits,
            |control, reader, limits| Srs::read(pool, control, reader, limits),
        )
    }

    /// Reads a ceremony file of `kind` with `read`, with a progress bar counting its points and
    /// its length in `limits` (so the engine allocates its vectors once), naming the file in any
    /// error.
    fn read_file<T>(
        &self,
        flag: &str,
        path: &Path,
        kind: FileKind,
        limits: &Limits,
        read: impl FnOnce(
            &Control,
            BufReader<std::fs::File>,
            &Limits,
        ) -> Result<T, lockstep_ceremony::CodecError>,
    ) -> anyhow::Result<T> {
        let file = open_input(flag, path)?;
        let len = file_len(&file);
        let step = self
            .session
            .step("reading", len.and_then(|l| kind.points_in(l)), "points");
        let limits = Limits {
            file_len: len,
            ..*limits
        };
        let read = read(
            step.control(),
            BufReader::with_capacity(1 << 20, file),
            &limits,
        )
        .with_context(|| format!("{}", path.display()))?;
        step.finish();
        Ok(read)
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
        let step = self.session.step("writing", Some(points), "points");
        let mut out = BufWriter::with_capacity(1 << 20, staged.file(id));
        let hash = write(step.control(), &mut out)
            .with_context(|| format!("writing {}", shown.display()))?;
        drop(out);
        step.finish();
        Ok(hash)
    }
}

/// The length of `file` if it is a regular file (vectors are then allocated once).
fn file_len(file: &std::fs::File) -> Option<u64> {
    file.metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len())
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
pub(crate) fn run(command: &CeremonyCommand, session: Session) -> anyhow::Result<()> {
    let ctx = Context { session };
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
