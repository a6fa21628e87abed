//! `lockstep ceremony ...`: a Groth16 trusted setup over files, phase 1 and phase 2, and the
//! verification of proofs made with its keys.
//!
//! Files are gnark v0.15's bytes, read strictly by the engine (every point checked; the first
//! bad one named with its byte offset) and written under the rules of `lockstep_files`: never
//! over an input, atomically, nothing left behind by an interruption.

mod info;
mod phase1;
mod phase2;
mod ptau;

use std::fs::File;
use std::io::{BufReader, BufWriter, Chain, Cursor, Read};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use lockstep_ceremony::phase1::{Phase1, Srs};
use lockstep_ceremony::{CodecError, FileKind, GRAIN, Limits, SNIFF_LEN, points_at_most};
use lockstep_files::{OutputId, Staged, open_input};
use lockstep_shard::{Control, Pool};

use crate::args::{CeremonyCommand, Groth16Command, Phase1Command, Phase2Command, PtauCommand};
use crate::session::{Session, Timing, thousands, workers};
use crate::usage::usage;

/// What every ceremony command runs with.
pub(crate) struct Context {
    session: Session,
}

/// A ceremony input opened once, its first bytes read and kept in front of the rest: a pipe is
/// read once, and the file's kind is known before a reader runs.
pub(crate) struct Opened {
    path: PathBuf,
    reader: BufReader<Chain<Cursor<Vec<u8>>, File>>,
    kind: Option<FileKind>,
    /// The length of a regular file (a pipe's is unknown).
    len: Option<u64>,
}

impl Opened {
    /// The kind its first bytes tell (`None`: no ceremony file's).
    pub(crate) fn kind(&self) -> Option<FileKind> {
        self.kind
    }

    /// Refuses a file whose first bytes tell another kind than `expected`, naming both and what
    /// reads the file (a file of no known kind is left to the reader, which names its fault).
    pub(crate) fn expect(&self, expected: FileKind) -> anyhow::Result<()> {
        match self.kind {
            Some(found) if found != expected => anyhow::bail!(
                "{} is {}, not {}: {}",
                self.path.display(),
                found.described(),
                expected.described(),
                found.read_by()
            ),
            _ => Ok(()),
        }
    }
}

impl Context {
    /// Opens a ceremony input given by `flag` and reads its first bytes (see [`Opened`]).
    pub(crate) fn open(&self, flag: &str, path: &Path) -> anyhow::Result<Opened> {
        let mut file = open_input(flag, path)?;
        let len = file_len(&file);
        let mut prefix = Vec::with_capacity(SNIFF_LEN);
        (&mut file)
            .take(SNIFF_LEN as u64)
            .read_to_end(&mut prefix)
            .with_context(|| format!("reading {}", path.display()))?;
        if prefix.is_empty() {
            anyhow::bail!("{}: empty file", path.display());
        }
        Ok(Opened {
            path: path.to_owned(),
            kind: FileKind::sniff(&prefix),
            reader: BufReader::with_capacity(1 << 20, Cursor::new(prefix).chain(file)),
            len,
        })
    }

    /// A pool for a command over `opened` (sized by the most points it can hold; a pipe's
    /// length is unknown, so the policy's count).
    pub(crate) fn pool_for(&self, opened: &Opened) -> anyhow::Result<Pool> {
        self.pool(opened.len.map_or(u64::MAX, points_at_most))
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
        opened: Opened,
        limits: &Limits,
    ) -> anyhow::Result<(Phase1, [u8; 32])> {
        self.read_file(
            opened,
            FileKind::Phase1,
            limits,
            |control, reader, limits| Phase1::read(pool, control, reader, limits),
        )
    }

    /// Reads a sealed SRS, naming the file in any error.
    pub(crate) fn read_srs(
        &self,
        pool: &Pool,
        opened: Opened,
        limits: &Limits,
    ) -> anyhow::Result<(Srs, [u8; 32])> {
        self.read_file(opened, FileKind::Srs, limits, |control, reader, limits| {
            Srs::read(pool, control, reader, limits)
        })
    }

    /// Reads `opened` as a file of `kind` with `read`, with a progress bar counting its points
    /// and its length in `limits` (so the engine allocates its vectors once), naming the file in
    /// any error. A file whose first bytes tell another kind is refused before reading.
    fn read_file<T>(
        &self,
        opened: Opened,
        kind: FileKind,
        limits: &Limits,
        read: impl FnOnce(&Control, &mut dyn Read, &Limits) -> Result<T, CodecError>,
    ) -> anyhow::Result<T> {
        opened.expect(kind)?;
        let Opened {
            path,
            mut reader,
            len,
            ..
        } = opened;
        let shown = path.display();
        let step = self
            .session
            .step("reading", len.and_then(|l| kind.points_in(l)), "points");
        let limits = Limits {
            file_len: len,
            ..*limits
        };
        let read = read(step.control(), &mut reader, &limits)
            .map_err(|error| anyhow::Error::new(error).context(shown.to_string()));
        step.finish();
        read
    }

    /// Writes through a staged output, with a progress bar, and returns the SHA-256.
    pub(crate) fn write_staged(
        &self,
        staged: &mut Staged,
        id: OutputId,
        points: u64,
        write: impl FnOnce(&Control, &mut BufWriter<&mut File>) -> Result<[u8; 32], CodecError>,
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
fn file_len(file: &File) -> Option<u64> {
    file.metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len())
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The beacon given by `--beacon`: hex digits (a `0x` prefix allowed), never empty, for a
/// beacon is a public value no contributor could know in advance.
pub(crate) fn parse_beacon(text: &str) -> anyhow::Result<Vec<u8>> {
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
        CeremonyCommand::Phase2(command) => match command {
            Phase2Command::New { r1cs, phase1, out } => phase2::new(&ctx, r1cs, phase1, out),
            Phase2Command::Contribute {
                input,
                out,
                entropy,
            } => phase2::contribute(&ctx, input, out, entropy.as_deref()),
            Phase2Command::Verify {
                files,
                previous,
                r1cs,
                phase1,
            } => phase2::verify(
                &ctx,
                files,
                previous.as_deref(),
                r1cs.as_deref().zip(phase1.as_deref()),
            ),
            Phase2Command::Seal {
                chain,
                r1cs,
                phase1,
                beacon,
                iterations,
                pk,
                vk,
            } => phase2::seal(
                &ctx,
                &phase2::SealArgs {
                    chain,
                    r1cs,
                    phase1,
                    beacon,
                    iterations: *iterations,
                    pk,
                    vk,
                },
            ),
        },
        CeremonyCommand::Groth16(Groth16Command::Verify { vk, proof, public }) => {
            phase2::groth16_verify(&ctx, vk, proof, public)
        }
        CeremonyCommand::Ptau(PtauCommand::Import { input, out, srs }) => {
            ptau::import(&ctx, input, out, *srs)
        }
        CeremonyCommand::Ptau(PtauCommand::Export { input, out }) => ptau::export(&ctx, input, out),
        CeremonyCommand::Info { file } => info::print(&ctx, file),
    }
}
