//! A command's outputs: planned and checked before the work, staged, committed all together.

use std::fs::File;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::error::{Error, OrIo};
use crate::kind::FileId;
use crate::paths::{Destination, input_id, resolve_output};
use crate::signals;

/// The files a command reads and writes, declared before any work so that every rule of
/// [the crate](crate) can be checked at once by [`prepare`](Self::prepare).
#[derive(Default)]
pub struct Files {
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
pub struct OutputId(usize);

impl Files {
    /// No files declared yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares an input given by `flag`.
    pub fn input(&mut self, flag: &'static str, path: &Path) -> &mut Self {
        self.inputs.push((flag, path.to_owned()));
        self
    }

    /// Declares an output given by `flag`; `-` means standard output when `stdout_allowed`.
    pub fn output(&mut self, flag: &'static str, path: &Path, stdout_allowed: bool) -> OutputId {
        self.outputs.push(Planned {
            flag,
            path: path.to_owned(),
            stdout_allowed,
            no_clobber: false,
            public: false,
        });
        OutputId(self.outputs.len() - 1)
    }

    /// Declares what the command prints on standard output as its result (a hash to publish, a
    /// count): written at [`commit`](Staged::commit) before any file is renamed, so a failure to
    /// print it (a full disk, a closed pipe) fails the command with no output replaced, and the
    /// error names standard output.
    pub fn printed(&mut self) -> OutputId {
        self.output("standard output", Path::new("-"), true)
    }

    /// Declares a regular-file output given by `flag` that others are meant to read (a
    /// ceremony's files, which participants publish): it is created 0644 instead of 0600.
    pub fn public_output(&mut self, flag: &'static str, path: &Path) -> OutputId {
        let id = self.output(flag, path, false);
        self.outputs[id.0].public = true;
        id
    }

    /// Declares a regular-file output given by `flag` that must not exist: if a file appears at
    /// `path` before the commit, the commit fails rather than replace it.
    pub fn new_output(&mut self, flag: &'static str, path: &Path) -> OutputId {
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
    pub fn prepare(&self, note: &dyn Fn(&str)) -> Result<Staged, Error> {
        let mut destinations = Vec::with_capacity(self.outputs.len());
        for planned in &self.outputs {
            if planned.path.as_os_str() == "-" && !planned.stdout_allowed {
                return Err(Error::usage(format!(
                    "{} cannot be `-`: this output is never written to standard output (name a file; ./- is a file named -)",
                    planned.flag
                )));
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
                return Err(Error::usage(format!(
                    "{} {} is the same file as {flag} {}: an output never replaces an input (nothing was written)",
                    planned.flag,
                    planned.path.display(),
                    path.display()
                )));
            }
        }
        // What the command prints on standard output (its result, or `-`) and a file output
        // that is standard output's own file would end up in one file: the printed hash in the
        // file the rename then replaces.
        if destinations.contains(&Destination::Stdout)
            && let Some((planned, _)) = self
                .outputs
                .iter()
                .zip(&destinations)
                .find(|(_, d)| d.is_stdout_file())
        {
            return Err(Error::usage(format!(
                "{} {} is standard output's file, where this command prints its result: name another file (nothing was written)",
                planned.flag,
                planned.path.display()
            )));
        }
        for (i, (a, da)) in self.outputs.iter().zip(&destinations).enumerate() {
            for (b, db) in self.outputs.iter().zip(&destinations).skip(i + 1) {
                if da.same_file(db) || (*da == Destination::Stdout && *db == Destination::Stdout) {
                    return Err(Error::usage(format!(
                        "{} {} and {} {} are the same file: each output needs its own (nothing was written)",
                        a.flag,
                        a.path.display(),
                        b.flag,
                        b.path.display()
                    )));
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
pub struct Staged {
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
    fn new(planned: &Planned, destination: Destination) -> Result<Self, Error> {
        // Standard output is named as such in errors ("writing standard output: ...").
        let shown = match destination {
            Destination::Stdout => PathBuf::from("standard output"),
            _ => planned.path.clone(),
        };
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
                // Created and registered with signal handling held off: a signal between the
                // two (a test interrupts as soon as the file appears) would otherwise end the
                // process before the file is known to the handler, and leave it.
                let mut held = signals::hold();
                let temp = builder.tempfile_in(dir).or_io(|| {
                    format!(
                        "{}: cannot create a file in {}",
                        shown.display(),
                        dir.display()
                    )
                })?;
                held.register(temp.path());
                drop(held);
                // Held while this process lives, so that no other run takes it for stale. A
                // file system without locks leaves it unlocked, and another run's cleanup then
                // cannot lock it either.
                let _ = temp.as_file().try_lock();
                Staging::Beside(Registered(Some(temp)))
            }
            Destination::Stdout | Destination::Stream { .. } => {
                Staging::Unnamed(tempfile::tempfile().or_io(|| {
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
    pub fn file(&mut self, id: OutputId) -> &mut File {
        self.outputs[id.0].file()
    }

    /// Writes `bytes` as output `id`.
    ///
    /// # Errors
    /// A write failure, naming the output.
    pub fn write(&mut self, id: OutputId, bytes: &[u8]) -> Result<(), Error> {
        let shown = self.outputs[id.0].shown.clone();
        self.file(id)
            .write_all(bytes)
            .or_io(|| format!("writing {}", shown.display()))
    }

    /// Where output `id` goes, as the command line gave it.
    pub fn shown(&self, id: OutputId) -> &Path {
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
    ///
    /// # Panics
    /// Never: `commit` takes `self`, so each staged file is renamed once (an invariant).
    pub fn commit(mut self) -> Result<(), Error> {
        for stage in &mut self.outputs {
            let shown = stage.shown.display().to_string();
            // Some file systems report a full disk only here: never rename a short file. (An
            // unnamed staging file is only copied from: it needs no sync.)
            if let Staging::Beside(_) = stage.file {
                stage
                    .file()
                    .sync_all()
                    .or_io(|| format!("writing {shown}"))?;
            }
        }
        for stage in &mut self.outputs {
            let shown = stage.shown.clone();
            let context = || format!("writing {}", shown.display());
            match &stage.destination {
                Destination::Stdout => {
                    let file = stage.file();
                    file.rewind().or_io(context)?;
                    let mut out = std::io::stdout().lock();
                    std::io::copy(file, &mut out).or_io(context)?;
                    out.flush().or_io(context)?;
                }
                Destination::Stream { target, .. } => {
                    let mut stream = std::fs::OpenOptions::new()
                        .write(true)
                        .open(target)
                        .or_io(context)?;
                    let file = stage.file();
                    file.rewind().or_io(context)?;
                    std::io::copy(file, &mut stream).or_io(context)?;
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
                return Err(Error::io(
                    format!(
                        "{} {}: replacing it failed{done}",
                        stage.flag,
                        stage.shown.display()
                    ),
                    e.error,
                ));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn outputs_appear_only_at_the_commit_all_together() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        std::fs::write(dir.join("b.txt"), b"old b").unwrap();
        let mut files = Files::new();
        let a = files.output("--a", &dir.join("a.txt"), false);
        let b = files.public_output("--b", &dir.join("b.txt"));
        let mut staged = files.prepare(&|_| {}).unwrap();
        staged.write(a, b"new a").unwrap();
        staged.file(b).write_all(b"new b").unwrap();
        // Staged, not in place: the old file is whole, the new one absent, two temporaries.
        assert_eq!(std::fs::read(dir.join("b.txt")).unwrap(), b"old b");
        assert!(!dir.join("a.txt").exists());
        let temporaries = names(dir)
            .into_iter()
            .filter(|n| n.starts_with(signals::PREFIX))
            .count();
        assert_eq!(temporaries, 2);
        staged.commit().unwrap();
        assert_eq!(names(dir), ["a.txt", "b.txt"]);
        assert_eq!(std::fs::read(dir.join("a.txt")).unwrap(), b"new a");
        assert_eq!(std::fs::read(dir.join("b.txt")).unwrap(), b"new b");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode =
                |n: &str| std::fs::metadata(dir.join(n)).unwrap().permissions().mode() & 0o777;
            assert_eq!((mode("a.txt"), mode("b.txt")), (0o600, 0o644));
        }
    }

    #[test]
    fn a_run_that_never_commits_changes_nothing_and_leaves_nothing() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        std::fs::write(dir.join("out.bin"), b"keep").unwrap();
        let mut files = Files::new();
        let id = files.output("--out", &dir.join("out.bin"), true);
        let mut staged = files.prepare(&|_| {}).unwrap();
        staged.write(id, b"half a resu").unwrap();
        drop(staged); // the work failed
        assert_eq!(names(dir), ["out.bin"]);
        assert_eq!(std::fs::read(dir.join("out.bin")).unwrap(), b"keep");
    }

    #[test]
    fn a_file_appearing_at_a_new_output_fails_the_commit_before_any_rename() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        std::fs::write(dir.join("other.txt"), b"old").unwrap();
        let mut files = Files::new();
        let key = files.new_output("--out", &dir.join("new.key"));
        let other = files.output("--other", &dir.join("other.txt"), false);
        let mut staged = files.prepare(&|_| {}).unwrap();
        staged.write(key, b"secret").unwrap();
        staged.write(other, b"new").unwrap();
        std::fs::write(dir.join("new.key"), b"someone else's").unwrap();
        let err = staged.commit().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Io);
        assert!(err.to_string().starts_with("--out "), "{err}");
        assert!(err.to_string().ends_with("replacing it failed"), "{err}");
        assert_eq!(
            std::fs::read(dir.join("new.key")).unwrap(),
            b"someone else's"
        );
        assert_eq!(std::fs::read(dir.join("other.txt")).unwrap(), b"old");
        assert_eq!(names(dir), ["new.key", "other.txt"]);
    }

    #[test]
    fn outputs_over_inputs_or_each_other_are_usage_errors_before_any_file() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        std::fs::write(dir.join("in.csv"), b"rows").unwrap();
        let mut files = Files::new();
        files.input("--input", &dir.join("in.csv"));
        files.output("--out", &dir.join("sub/../in.csv"), false);
        std::fs::create_dir(dir.join("sub")).unwrap();
        let err = files.prepare(&|_| {}).err().unwrap();
        assert_eq!(err.kind(), ErrorKind::Usage);
        assert!(
            err.to_string().contains("is the same file as --input"),
            "{err}"
        );
        let mut files = Files::new();
        files.output("--a", &dir.join("x"), true);
        files.output("--b", &dir.join("./x"), false);
        let err = files.prepare(&|_| {}).err().unwrap();
        assert_eq!(err.kind(), ErrorKind::Usage);
        assert!(err.to_string().contains("are the same file"), "{err}");
        let mut files = Files::new();
        files.output("--permutation-out", Path::new("-"), false);
        let err = files.prepare(&|_| {}).err().unwrap();
        assert_eq!(err.kind(), ErrorKind::Usage);
        assert_eq!(names(dir), ["in.csv", "sub"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_followed_and_kept_and_a_device_is_written_in_place() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        std::fs::write(dir.join("target.txt"), b"old").unwrap();
        std::os::unix::fs::symlink("target.txt", dir.join("link")).unwrap();
        let mut files = Files::new();
        let link = files.output("--out", &dir.join("link"), false);
        let null = files.output("--log", Path::new("/dev/null"), false);
        let mut staged = files.prepare(&|_| {}).unwrap();
        staged.write(link, b"new").unwrap();
        staged.write(null, b"discarded").unwrap();
        staged.commit().unwrap();
        assert!(
            std::fs::symlink_metadata(dir.join("link"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(dir.join("target.txt")).unwrap(), b"new");
        assert!(Path::new("/dev/null").exists());
    }

    #[test]
    fn stale_temporaries_of_a_killed_run_are_removed_and_noted() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        let stale = dir.join(format!("{}1-left", signals::PREFIX));
        std::fs::write(&stale, b"x").unwrap();
        File::options()
            .write(true)
            .open(&stale)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - 2 * signals::STALE_AFTER)
            .unwrap();
        let mut files = Files::new();
        files.output("--out", &dir.join("out"), false);
        let notes = std::cell::RefCell::new(Vec::new());
        let staged = files
            .prepare(&|line| notes.borrow_mut().push(line.to_owned()))
            .unwrap();
        assert!(!stale.exists());
        assert_eq!(notes.borrow().len(), 1);
        assert!(notes.borrow()[0].starts_with("removed 1 temporary file(s)"));
        drop(staged);
    }
}
