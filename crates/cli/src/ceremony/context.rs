//! What every ceremony command runs with: the session, its inputs opened once and told apart by
//! kind, pools sized by the points a file can hold, reads and writes with progress bars, and the
//! staged outputs a command's result line goes out with.

use std::fs::File;
use std::io::{BufReader, BufWriter, Chain, Cursor, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use lockstep_ceremony::phase1::{Phase1, Srs};
use lockstep_ceremony::{CodecError, FileKind, GRAIN, Limits, SNIFF_LEN, points_at_most};
use lockstep_files::{Files, OutputId, Staged, open_input};
use lockstep_shard::{Control, Pool};

use crate::session::{Session, thousands, workers};

/// What every ceremony command runs with.
pub(crate) struct Context {
    pub(crate) session: Session,
}

/// A ceremony input opened once, its first bytes read and kept in front of the rest: a pipe is
/// read once, and the file's kind is known before a reader runs.
pub(crate) struct Opened {
    pub(crate) path: PathBuf,
    pub(crate) reader: BufReader<Chain<Cursor<Vec<u8>>, File>>,
    kind: Option<FileKind>,
    /// The length of a regular file (a pipe's is unknown).
    pub(crate) len: Option<u64>,
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

/// A command's outputs, staged under the rules of `lockstep_files` (never over an input, all or
/// none), and the standard output its result line (the hashes to publish) goes to.
pub(crate) struct Outputs {
    staged: Staged,
    ids: Vec<OutputId>,
    printed: OutputId,
}

impl Outputs {
    /// Prints `result`, then puts every output in place: a result that cannot be shown (a full
    /// disk, a closed pipe) fails the command with nothing replaced.
    pub(crate) fn commit(mut self, result: &str) -> anyhow::Result<()> {
        self.staged.write(self.printed, result.as_bytes())?;
        self.staged.commit()?;
        Ok(())
    }
}

impl Context {
    /// Stages the public `outputs` (flag, path) of a command that reads `inputs` (flag, path):
    /// refused before anything is read if an output would be written over an input.
    pub(crate) fn stage(
        &self,
        inputs: &[(&'static str, &Path)],
        outputs: &[(&'static str, &Path)],
    ) -> anyhow::Result<Outputs> {
        let mut files = Files::new();
        for &(flag, path) in inputs {
            files.input(flag, path);
        }
        let ids = outputs
            .iter()
            .map(|&(flag, path)| files.public_output(flag, path))
            .collect();
        let printed = files.printed();
        let staged = self.session.prepare(&files)?;
        Ok(Outputs {
            staged,
            ids,
            printed,
        })
    }

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

    /// Says what a command did since `started`, with its worker count: `contribute: 5,118
    /// points in 1.20 s on 2 workers`.
    pub(crate) fn done(&self, what: &str, points: u64, started: Instant, pool: &Pool) {
        self.session.note(&format!(
            "{what}: {} points in {:.2} s on {}",
            thousands(points),
            started.elapsed().as_secs_f64(),
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
    /// (where the kind tells them from the length) and its length in `limits` (so the engine
    /// allocates its vectors once), naming the file in any error. A file whose first bytes tell
    /// another kind is refused before reading.
    pub(crate) fn read_file<T>(
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

    /// Writes output `index` of `outputs` (in the order [`stage`](Self::stage) was given
    /// them) with a progress bar, and returns its SHA-256.
    pub(crate) fn write_output<E: std::error::Error + Send + Sync + 'static>(
        &self,
        outputs: &mut Outputs,
        index: usize,
        points: u64,
        write: impl FnOnce(&Control, &mut BufWriter<&mut File>) -> Result<[u8; 32], E>,
    ) -> anyhow::Result<[u8; 32]> {
        let id = outputs.ids[index];
        let shown = outputs.staged.shown(id).to_owned();
        let step = self.session.step("writing", Some(points), "points");
        let mut out = BufWriter::with_capacity(1 << 20, outputs.staged.file(id));
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
