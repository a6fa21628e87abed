//! Where an output path really leads, and whether two paths are one file.

use std::path::{Path, PathBuf};

use crate::error::{Error, OrIo};
use crate::kind::{FileId, Kind};

/// Symbolic links followed before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Where an output goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Destination {
    /// Standard output.
    Stdout,
    /// A regular file, existing or not, replaced by a rename: `target` is absolute, with every
    /// symbolic link resolved (a link given as the path is followed, and stays a link).
    File { target: PathBuf, id: Option<FileId> },
    /// An existing character device (`device`) or FIFO, written in place.
    Stream {
        target: PathBuf,
        id: Option<FileId>,
        device: bool,
    },
}

impl Destination {
    /// Whether `self` and `other` are the same file. Two outputs into one character device
    /// (`/dev/null`) are not counted: each is written to it in turn.
    pub(crate) fn same_file(&self, other: &Self) -> bool {
        if let (Self::Stream { device: true, .. }, Self::Stream { device: true, .. }) =
            (self, other)
        {
            return false;
        }
        match (self.identity(), other.identity()) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        }
    }

    /// Whether `self` is the file an input identified by `id` is.
    pub(crate) fn is(&self, id: FileId) -> bool {
        matches!(self.identity(), Some(Identity::File(own)) if own == id)
    }

    /// Whether `self` is the regular file or FIFO standard output is (`/dev/stdout`,
    /// `/proc/self/fd/1` or its own path, with standard output redirected to it): a file the
    /// command's printed result would be written into (and, for a file, lost to the rename).
    /// A character device (a terminal, `/dev/null`) takes both in turn.
    pub(crate) fn is_stdout_file(&self) -> bool {
        let device = matches!(self, Self::Stream { device: true, .. });
        !device && stdout_file().is_some_and(|id| self.is(id))
    }

    fn identity(&self) -> Option<Identity<'_>> {
        match self {
            Self::Stdout => None,
            Self::File { id: Some(id), .. } | Self::Stream { id: Some(id), .. } => {
                Some(Identity::File(*id))
            }
            Self::File { target, id: None }
            | Self::Stream {
                target, id: None, ..
            } => Some(Identity::Path(target)),
        }
    }
}

/// The identity of the regular file or FIFO standard output is redirected to, if it is one.
fn stdout_file() -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
        let metadata = std::fs::File::from(fd).metadata().ok()?;
        matches!(Kind::of(&metadata), Kind::Regular | Kind::Fifo)
            .then(|| FileId::of(&metadata))
            .flatten()
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// A file that exists is known by its device and inode (which sees hard links); one that does
/// not yet, by its resolved path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Identity<'a> {
    File(FileId),
    Path(&'a Path),
}

/// Where writing `path` leads: standard output for `-` (when `stdout_allowed`), else the file
/// at the end of its symbolic links.
///
/// # Errors
/// A missing or non-directory parent; a path naming no file (`dir/`, `..`); a directory, block
/// device, socket or other special file; a regular file that cannot be opened for writing; too
/// many symbolic links. Each names `path`.
pub(crate) fn resolve_output(path: &Path, stdout_allowed: bool) -> Result<Destination, Error> {
    if path.as_os_str() == "-" && stdout_allowed {
        return Ok(Destination::Stdout);
    }
    let shown = path.display();
    // `x/` names a directory, even when `x` does not exist (Path would drop the slash).
    if path.as_os_str().to_string_lossy().ends_with('/') {
        return Err(Error::refused(format!(
            "{shown} names a directory, not a file"
        )));
    }
    let mut current = path.to_owned();
    for _ in 0..MAX_LINKS {
        let metadata = match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&current)
                    .or_io(|| format!("{shown}: reading the link {}", current.display()))?;
                current = parent_of(&current).join(link);
                continue;
            }
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(format!("{shown}: cannot inspect it"), e)),
        };
        let target = resolved(path, &current)?;
        let Some(metadata) = metadata else {
            return Ok(Destination::File { target, id: None });
        };
        let id = FileId::of(&metadata);
        return match Kind::of(&metadata) {
            Kind::Regular => {
                // Opening for writing without truncating changes nothing, and proves the
                // rename at the end will replace a file this user may write.
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .or_io(|| format!("{shown}: cannot write it"))?;
                Ok(Destination::File { target, id })
            }
            Kind::CharDevice => {
                // Opening a device for writing is harmless; a FIFO's open would wait for a
                // reader, so it is first opened at commit.
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .or_io(|| format!("{shown}: cannot write it"))?;
                Ok(Destination::Stream {
                    target,
                    id,
                    device: true,
                })
            }
            Kind::Fifo => Ok(Destination::Stream {
                target,
                id,
                device: false,
            }),
            other => Err(Error::refused(format!(
                "{shown} is {}: outputs are regular files, character devices (such as /dev/null) or FIFOs",
                other.described()
            ))),
        };
    }
    Err(Error::refused(format!(
        "{shown}: more than {MAX_LINKS} symbolic links to follow"
    )))
}

/// The directory `path` is in (`.` for a bare name).
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `current` (the end of `path`'s links) as an absolute path with its directory canonical.
fn resolved(path: &Path, current: &Path) -> Result<PathBuf, Error> {
    let shown = path.display();
    let Some(name) = current.file_name() else {
        return Err(Error::refused(format!("{shown} does not name a file")));
    };
    let dir = parent_of(current);
    let canonical = std::fs::canonicalize(dir).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::refused(format!(
                "{shown}: the directory {} does not exist",
                dir.display()
            ))
        } else {
            Error::io(
                format!("{shown}: cannot open the directory {}", dir.display()),
                e,
            )
        }
    })?;
    if !canonical.is_dir() {
        return Err(Error::refused(format!(
            "{shown}: {} is not a directory",
            dir.display()
        )));
    }
    Ok(canonical.join(name))
}

/// The identity of an input file, if it exists (links followed).
pub(crate) fn input_id(path: &Path) -> Option<FileId> {
    std::fs::metadata(path).ok().as_ref().and_then(FileId::of)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_dots_and_hard_links_lead_to_one_file() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        std::fs::create_dir(dir.join("sub")).unwrap();
        std::fs::write(dir.join("a"), b"a").unwrap();
        let a = resolve_output(&dir.join("a"), false).unwrap();
        let dotted = resolve_output(&dir.join("sub/../a"), false).unwrap();
        assert!(a.same_file(&dotted));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.join("a"), dir.join("link")).unwrap();
            std::fs::hard_link(dir.join("a"), dir.join("hard")).unwrap();
            // A dangling link leads to the file it would create.
            std::os::unix::fs::symlink("sub/new", dir.join("dangling")).unwrap();
        }
        #[cfg(unix)]
        {
            let link = resolve_output(&dir.join("link"), false).unwrap();
            assert!(a.same_file(&link));
            let hard = resolve_output(&dir.join("hard"), false).unwrap();
            assert!(a.same_file(&hard));
            assert!(a.is(input_id(&dir.join("hard")).unwrap()));
            let dangling = resolve_output(&dir.join("dangling"), false).unwrap();
            let new = resolve_output(&dir.join("sub/new"), false).unwrap();
            assert!(dangling.same_file(&new));
            assert!(!dangling.same_file(&a));
        }
        assert_eq!(
            resolve_output(Path::new("-"), true).unwrap(),
            Destination::Stdout
        );
        assert!(!Destination::Stdout.same_file(&Destination::Stdout));
    }

    #[test]
    fn impossible_outputs_are_clear_errors() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        let message = |p: &Path| format!("{:#}", resolve_output(p, false).unwrap_err());
        assert!(message(&dir.join("missing/x")).contains("does not exist"));
        assert!(message(dir).contains("is a directory"));
        assert!(message(&dir.join("new/")).contains("names a directory"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("loop", dir.join("loop")).unwrap();
            assert!(message(&dir.join("loop")).contains("symbolic links"));
            let null = resolve_output(Path::new("/dev/null"), false).unwrap();
            assert!(matches!(null, Destination::Stream { device: true, .. }));
            assert!(!null.same_file(&null.clone()));
        }
    }
}
