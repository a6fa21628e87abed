//! `lockstep psi ...`: the two parties' commands over files.
//!
//! Messages on disk are the raw protobuf bytes, so they interoperate with OpenMined's packages.
//! Record files, linkage files and every step of a round are `lockstep_psi::linkage`'s; files
//! are opened and written under the rules of `lockstep_files`. This module opens paths, calls
//! the engine and prints.

mod demo;
mod joiner;
mod keys;
mod relay;
mod starter;

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use lockstep_files::{
    SecretFile, WorkDir, open_input, open_input_at_most, physical_memory, read_secret,
};
use lockstep_psi::linkage::{FileError, KeyReader, KeySpec};
use lockstep_psi::streaming::{Budget, KeyIndex, StreamingError};
use lockstep_psi::{Backend, Key, Limits};

use crate::args::{InputArgs, PsiArgs, PsiCommand};
use crate::session::{Session, thousands};

/// What every PSI command runs with.
pub(crate) struct Context {
    pub(crate) session: Session,
    pub(crate) backend: Backend,
    pub(crate) allow_open_key: bool,
    /// `--memory`: what a streamed step's sorts and blocks may hold.
    pub(crate) memory: usize,
    /// `--tmp`: where a streamed step's temporary files go (`None`: the output's folder).
    pub(crate) tmp: Option<PathBuf>,
}

/// `--memory`'s default: a quarter of the machine's memory (1 GiB where it cannot be told),
/// leaving the rest to the system, the pool's threads and the other party's process on a
/// shared machine.
pub(crate) fn default_memory() -> u64 {
    physical_memory().map_or(1 << 30, |bytes| bytes / 4)
}

impl Context {
    /// Reads a key file (see [`read_secret`]): 32 raw bytes, private to its owner unless
    /// `--allow-open-key`.
    pub(crate) fn read_key(&self, path: &Path) -> anyhow::Result<Key> {
        let bytes = read_secret(
            path,
            &SecretFile {
                what: "key",
                len: Key::LEN as u64,
                made_by: "`lockstep psi key new` writes one",
                allow_open: self.allow_open_key,
            },
        )?;
        Key::from_bytes(&bytes).with_context(|| format!("key {}", path.display()))
    }

    /// A folder for the temporary files of a step writing `out`: in `--tmp`, else in the
    /// output's folder (where the result must fit anyway), else, for standard output or a
    /// device, the system's temporary folder.
    pub(crate) fn work_dir(&self, out: &Path) -> anyhow::Result<WorkDir> {
        let note = |line: &str| self.session.note(line);
        if let Some(dir) = &self.tmp {
            return Ok(WorkDir::new("--tmp", dir, &note)?);
        }
        let regular = std::fs::metadata(out).map_or(true, |m| m.is_file());
        let dir = match out.parent() {
            _ if out.as_os_str() == "-" || !regular => std::env::temp_dir(),
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
            _ => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        };
        Ok(WorkDir::new("the output's folder", &dir, &note)?)
    }

    /// The budget of a streamed step spilling into `work`.
    pub(crate) fn budget<'a>(&self, work: &'a WorkDir) -> Budget<'a> {
        Budget::new(work.path(), self.memory)
    }

    /// Indexes a party's distinct keys on disk (`--input`, with `--column` and `--normalize`),
    /// read from `path` (the input, or its copy when it was a pipe; errors and notes name the
    /// input as given), noting the rows left out for an empty key.
    pub(crate) fn index(
        &self,
        input: &InputArgs,
        path: &Path,
        budget: &Budget<'_>,
    ) -> anyhow::Result<KeyIndex> {
        let shown = input.input.display().to_string();
        let reader = KeyReader::new(open_input("--input", path)?, &spec(input))
            .map_err(|e| e.in_file(&shown))?;
        let pool = self.session.sort_pool()?;
        let step = self.session.step("index", None, "rows");
        let index = KeyIndex::build(reader, budget, &pool, step.control())
            .map_err(|e| streaming_error(e, &input.input, None))?;
        step.finish();
        if let Some(first) = index.first_empty_row() {
            self.session.note(&format!(
                "{shown}: left out {} rows with an empty key (first: row {})",
                thousands(index.empty_rows()),
                first + 1
            ));
        }
        if index.is_empty() {
            return Err(FileError::NoKeys.in_file(&shown).into());
        }
        Ok(index)
    }
}

/// The key spec of a party's `--column` and `--normalize` flags.
pub(crate) fn spec(input: &InputArgs) -> KeySpec {
    KeySpec {
        columns: input.column.clone(),
        normalize: input.normalize,
    }
}

/// Opens a message of `what` (`request`, ...) given by `flag`, refusing a regular file larger
/// than a message within `limits` can be before a byte of it is read.
pub(crate) fn open_message(
    flag: &str,
    path: &Path,
    what: &str,
    limits: Limits,
) -> anyhow::Result<File> {
    Ok(match (limits.max_encoded_len(), limits.element_limit()) {
        (Some(max), Some(count)) => open_input_at_most(
            flag,
            path,
            max,
            &format!("a {what} of at most {count} elements"),
        )?,
        _ => open_input(flag, path)?,
    })
}

/// A file given as a pipe (`flag`), copied into the work folder as `name` so that it can be read
/// twice (`None`: a regular file, read where it is). No more is copied than a message within
/// `limits` can take.
pub(crate) fn spool(
    flag: &str,
    path: &Path,
    work: &WorkDir,
    name: &str,
    limits: Limits,
) -> anyhow::Result<Option<PathBuf>> {
    use std::io::Read as _;
    if std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    let copy = work.path().join(name);
    let from = open_input(flag, path)?;
    let mut to = File::create_new(&copy)
        .with_context(|| format!("{flag}'s copy in {}", work.path().display()))?;
    let max = limits.max_encoded_len().unwrap_or(u64::MAX);
    let copied = std::io::copy(&mut from.take(max.saturating_add(1)), &mut to)
        .with_context(|| format!("copying {} to {}", path.display(), copy.display()))?;
    if copied > max {
        anyhow::bail!(
            "{}: more than {max} bytes, the most a {name} of at most {} elements takes",
            path.display(),
            limits.element_limit().unwrap_or(0)
        );
    }
    Ok(Some(copy))
}

/// A streamed step's error, naming the file it is about: the record file `input`'s, or the
/// output `out` (as shown) that could not be written.
pub(crate) fn streaming_error(
    error: StreamingError,
    input: &Path,
    out: Option<&Path>,
) -> anyhow::Error {
    match (error, out) {
        (StreamingError::Input(e), _) => in_file(e, input),
        (StreamingError::Write(e), Some(out)) => {
            anyhow::Error::new(e).context(format!("writing {}", out.display()))
        }
        (e, _) => e.into(),
    }
}

/// A linkage file error, naming the file as given.
pub(crate) fn in_file(error: FileError, path: &Path) -> anyhow::Error {
    error.in_file(path.display().to_string()).into()
}

/// Runs a `lockstep psi` subcommand.
pub(crate) fn run(args: &PsiArgs, session: Session) -> anyhow::Result<()> {
    let ctx = Context {
        session,
        backend: args.backend,
        allow_open_key: args.allow_open_key,
        memory: usize::try_from(args.memory.unwrap_or_else(default_memory)).unwrap_or(usize::MAX),
        tmp: args.tmp.clone(),
    };
    match &args.command {
        PsiCommand::Key(command) => keys::key_command(&ctx, command),
        PsiCommand::Setup(a) => starter::setup(&ctx, a).map(drop),
        PsiCommand::Request(a) => joiner::request(&ctx, a).map(drop),
        PsiCommand::Respond(a) => starter::respond(&ctx, a).map(drop),
        PsiCommand::Intersect(a) => joiner::intersect(&ctx, a).map(drop),
        PsiCommand::Resolve(a) => starter::resolve(&ctx, a).map(drop),
        PsiCommand::Demo(a) => demo::run(&ctx, a),
        PsiCommand::Invite(a) => relay::invite(&ctx, a),
        PsiCommand::Round(a) => relay::round(&ctx, a),
    }
}
