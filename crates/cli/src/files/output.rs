//! A command's outputs: planned and checked before the work, staged, committed all together.

use std::fs::File;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use tempfile::NamedTempFile;

use super::kind::FileId;
use super::paths::{Destination, input_id, resolve_output};
use super::signals;
use crate::usage::usage;

/// The files a command reads and writes, declared before any work so that every rule of
/// [`files`](super) can be checked at once by [`prepare`](Self::prepare).
#[derive(Default)]
pub(crate) struct Files {
    inputs: Vec<(&'static str, PathBuf)>,
    outputs: Vec<Planned>,
}

struct Planned {
    flag: &'static str,
    path: PathBuf,
    stdout_allowed: bool,
    /// Fail at commit if the destination exists by then, instead of replacing it.
    no_clobber: bool,
    /// Readable by all (0644) once in place, for artifacts meant to be published; otherwise
    /// private to the owner (0600), as records and keys are.
    public: bool,
}

/// Which declared output to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OutputId(usize);

impl Files {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Declares an input given by `flag`.
    pub(crate) fn input(&mut self, flag: &'static str, path: &Path) -> &mut Self {
        self.inputs.push((flag, path.to_owned()));
        self
    }

    /// Declares an output given by `flag`; `-` means standard output when `stdout_allowed`.
    pub(crate) fn output(
        &mut self,
        flag: &'static str,
        path: &Path,
        stdout_allowed: bool,
    ) -> OutputId {
        self.outputs.push(Planned {
            flag,
            path: path.to_owned(),
            stdout_allowed,
            no_clobber: false,
            public: false,
        });
        OutputId(self.outputs.len() - 1)
    }

    /// Declares a regular-file output given by `flag` that others are meant to read (a
    /// ceremony's files, which participants publish): it is created 0644 instead of 0600.
    pub(crate) fn public_output(&mut self, flag: &'static str, path: &Path) -> OutputId {
        let id = self.output(flag, path, false);
        self.outputs[id.0].public = true;
        id
    }

    /// Declares a regular-file output given by `flag` that must not exist: if a file appears at
    /// `path` before the commit, the commit fails rather than replace it.
    pub(crate) fn new_output(&mut self, flag: &'static str, path: &Path) -> OutputId {
        let id = self.output(flag, path, false);
        self.outputs[id.0].no_clobber = true;
        id
    }

    /// Checks every rule and stages every output: the command may then do its work, write the
    /// staged files and [`commit`](Staged::commit) them. `note` hears of stale temporary files
    /// removed from an output's directory.
    ///
    /// # Errors
    /// A usage error if an output names an input or another output; otherwise the first output
    /// that cannot be written (missing directory, a directory or block device, no permission).
    pub(crate) fn prepare(&self, note: &dyn Fn(&str)) -> anyhow::Result<Staged> {
        let mut destinations = Vec::with_capacity(self.outputs.len());
        for planned in &self.outputs {
            if planned.path.as_os_str() == "-" && !planned.stdout_allowed {
                usage!(
                    "{} cannot be `-`: this output is never written to standard output (name a file; ./- is a file named -)",
                    planned.flag
                );
            }
            destinations.push(resolve_output(&planned.path, planned.stdout_allowed)?);
        }
        let inputs: Vec<(&'static str, &Path, FileId)> = self
            .inputs
            .iter()
            .filter_map(|(flag, path)| input_id(path).map(|id| (*flag, path.as_path(), id)))
            .collect();
        for (planned, destination) in self.outputs.iter().zip(&destinations) {
            if let Some((flag, path, _)) = inputs.iter().find(|(_, _, id)| destination.is(*id)) {
                usage!(
                    "{} {} is the same file as {flag} {}: an output never replaces an input (nothing was written)",
                    planned.flag,
                    planned.path.display(),
                    path.display()
                );
            }
        }
        for (i, (a, da)) in self.outputs.iter().zip(&destinations).enumerate() {
            for (b, db) in self.outputs.iter().zip(&destinations).skip(i + 1) {
                if da.same_file(db) || (*da == Destination::Stdout && *db == Destination::Stdout) {
                    usage!(
                        "{} {} and {} {} are the same file: each output needs its own (nothing was written)",
                        a.flag,
                        a.path.display(),
                        b.flag,
                        b.path.display()
                    );
                }
            }
        }
        let mut staged = Vec::with_capacity(destinations.len());
        let mut cleaned: Vec<PathBuf> = Vec::new();
        for (planned, destination) in self.outputs.iter().zip(destinations) {
            if let Destination::File { target, .. } = &destination {
                let dir = dir_of(target);
                if !cleaned.iter().any(|d| d == dir) {
                    let removed = signals::remove_stale(dir);
                    if !removed.is_empty() {
                        note(&format!(
                            "removed {} temporary file(s) an interrupted run left in {}",
                            removed.len(),
                            dir.display()
                        ));
                    }
                    cleaned.push(dir.to_owned());
                }
            }
            staged.push(Stage::new(planned, destination)?);
        }
        Ok(Staged { outputs: staged })
    }
}

/// Every output of a command, staged: written to temporary files, none in place yet.
pub(crate) struct Staged {
    outputs: Vec<Stage>,
}

/// One staged output.
struct Stage {
    flag: &'static str,
    shown: PathBuf,
    destination: Destination,
    no_clobber: bool,
    file: Staging,
}

/// The directory a resolved (absolute) target is in.
fn dir_of(target: &Path) -> &Path {
    target.parent().unwrap_or(Path::new("/"))
}

enum Staging {
    /// A named temporary file beside the destination, renamed over it.
    Beside(Registered),
    /// An unnamed temporary file (never visible), copied into a stream.
    Unnamed(File),
}

/// A named temporary file, registered for removal on a signal while it exists.
struct Registered(Option<NamedTempFile>);

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(temp) = &self.0 {
            signals::unregister(temp.path());
        }
    }
}

impl Stage {
    fn new(planned: &Planned, destination: Destination) -> anyhow::Result<Self> {
        let shown = planned.path.clone();
        let file = match &destination {
            Destination::File { target, .. } => {
                let dir = dir_of(target);
                let prefix = format!("{}{}-", signals::PREFIX, std::process::id());
                let mut builder = tempfile::Builder::new();
                builder.prefix(&prefix);
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    let mode = if planned.public { 0o644 } else { 0o600 };
                    builder.permissions(std::fs::Permissions::from_mode(mode));
                }
                let temp = builder.tempfile_in(dir).with_context(|| {
                    format!(
                        "{}: cannot create a file in {}",
                        shown.display(),
                        dir.display()
                    )
                })?;
                // Held while this process lives, so that no other run takes it for stale. A
                // file system without locks leaves it unlocked, and another run's cleanup then
                // cannot lock it either.
                let _ = temp.as_file().try_lock();
                signals::register(temp.path());
                Staging::Beside(Registered(Some(temp)))
            }
            Destination::Stdout | Destination::Stream { .. } => {
                Staging::Unnamed(tempfile::tempfile().with_context(|| {
                    format!(
                        "{}: cannot create its unnamed temporary file",
                        shown.display()
                    )
                })?)
            }
        };
        Ok(Self {
            flag: planned.flag,
            shown,
            destination,
            no_clobber: planned.no_clobber,
            file,
        })
    }

    fn file(&mut self) -> &mut File {
        match &mut self.file {
            Staging::Beside(Registered(Some(temp))) => temp.as_file_mut(),
            Staging::Unnamed(file) => file,
            Staging::Beside(Registered(None)) => {
                unreachable!("invariant: a staged file is taken only by commit")
            }
        }
    }
}

impl Staged {
    /// The staged file of output `id`, to write the output into.
    pub(crate) fn file(&mut self, id: OutputId) -> &mut File {
        self.outputs[id.0].file()
    }

    /// Writes `bytes` as output `id`.
    ///
    /// # Errors
    /// A write failure, naming the output.
    pub(crate) fn write(&mut self, id: OutputId, bytes: &[u8]) -> anyhow::Result<()> {
        let shown = self.outputs[id.0].shown.clone();
        self.file(id)
            .write_all(bytes)
            .with_context(|| format!("writing {}", shown.display()))
    }

    /// Where output `id` goes, as the command line gave it.
    pub(crate) fn shown(&self, id: OutputId) -> &Path {
        &self.outputs[id.0].shown
    }

    /// Puts every output in place: each staged file is synced; streams (standard output,
    /// devices, FIFOs) are written first, then files are renamed over their destinations with
    /// signals held off, then their directories synced. If anything fails before the renames,
    /// no file has changed (a stream written by then has gone out: a stream cannot be staged).
    /// A rename can then fail only if the disk does, every destination having been checked.
    ///
    /// # Errors
    /// The first failure, naming its output (and, in the unlikely case that a rename fails after
    /// another succeeded, which outputs were replaced).
    pub(crate) fn commit(mut self) -> anyhow::Result<()> {
        for stage in &mut self.outputs {
            let shown = stage.shown.display().to_string();
            // Some file systems report a full disk only here: never rename a short file. (An
            // unnamed staging file is only copied from: it needs no sync.)
            if let Staging::Beside(_) = stage.file {
                stage
                    .file()
                    .sync_all()
                    .with_context(|| format!("writing {shown}"))?;
            }
        }
        for stage in &mut self.outputs {
            let shown = stage.shown.clone();
            let context = || format!("writing {}", shown.display());
            match &stage.destination {
                Destination::Stdout => {
                    let file = stage.file();
                    file.rewind().with_context(context)?;
                    let mut out = std::io::stdout().lock();
                    std::io::copy(file, &mut out).with_context(context)?;
                    out.flush().with_context(context)?;
                }
                Destination::Stream { target, .. } => {
                    let mut stream = std::fs::OpenOptions::new()
                        .write(true)
                        .open(target)
                        .with_context(context)?;
                    let file = stage.file();
                    file.rewind().with_context(context)?;
                    std::io::copy(file, &mut stream).with_context(context)?;
                }
                Destination::File { .. } => {}
            }
        }
        let mut held = signals::hold();
        let mut replaced: Vec<String> = Vec::new();
        let mut dirs: Vec<PathBuf> = Vec::new();
        for stage in &mut self.outputs {
            let (Destination::File { target, .. }, Staging::Beside(registered)) =
                (&stage.destination, &mut stage.file)
            else {
                continue;
            };
            let temp = registered
                .0
                .take()
                .expect("invariant: each staged file is committed once");
            let temp_path = temp.path().to_owned();
            held.unregister(&temp_path);
            let persisted = if stage.no_clobber {
                temp.persist_noclobber(target)
            } else {
                temp.persist(target)
            };
            if let Err(e) = persisted {
                let _ = std::fs::remove_file(&temp_path);
                let done = if replaced.is_empty() {
                    String::new()
                } else {
                    format!(" ({} already replaced)", replaced.join(", "))
                };
                return Err(anyhow::Error::new(e.error).context(format!(
                    "{} {}: replacing it failed{done}",
                    stage.flag,
                    stage.shown.display()
                )));
            }
            replaced.push(format!("{} {}", stage.flag, stage.shown.display()));
            if let Some(dir) = target.parent()
                && !dirs.iter().any(|d| d == dir)
            {
                dirs.push(dir.to_owned());
            }
        }
        drop(held);
        // The renames themselves reach the disk when their directories are synced.
        for dir in dirs {
            if let Ok(d) = File::open(&dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}
