//! A command's folder of temporary files: what an external sort spills and an index keeps.
//!
//! It is made in the folder the user names (`--tmp`), named [`PREFIX`]`<pid>-work-...`, locked
//! while its process lives, and removed with all it holds: when dropped (success, error, a
//! panic unwinding), on SIGINT, SIGTERM and SIGHUP, and, when a killed run left it, by the next
//! run that makes one in the same folder (the sweep of stale temporary files).

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{Error, OrIo};
use crate::signals::{self, PREFIX};

/// A folder of temporary files, removed with its contents on every exit (see the module).
#[derive(Debug)]
pub struct WorkDir {
    path: PathBuf,
    /// Held open and locked: no other run takes the folder for stale while it lives.
    _lock: Option<File>,
}

impl WorkDir {
    /// Makes a work folder in `parent` (given as `flag`), first removing those interrupted runs
    /// left there; `note` is told what was removed.
    ///
    /// # Errors
    /// [`ErrorKind::Refused`](crate::ErrorKind::Refused) if `parent` is not a folder;
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) if the folder cannot be made.
    pub fn new(flag: &str, parent: &Path, note: &dyn Fn(&str)) -> Result<Self, Error> {
        let meta = std::fs::metadata(parent).or_io(|| {
            format!(
                "{flag} {}: cannot use it for temporary files",
                parent.display()
            )
        })?;
        if !meta.is_dir() {
            return Err(Error::refused(format!(
                "{flag} {} is not a folder: temporary files go in a folder",
                parent.display()
            )));
        }
        let removed = signals::remove_stale(parent);
        if !removed.is_empty() {
            note(&format!(
                "removed {} temporary file(s) an interrupted run left in {}",
                removed.len(),
                parent.display()
            ));
        }
        let prefix = format!("{PREFIX}{}-work-", std::process::id());
        // Made and registered with signal handling held off, as staged outputs are.
        let mut held = signals::hold();
        let folder = tempfile::Builder::new()
            .prefix(&prefix)
            .tempdir_in(parent)
            .or_io(|| format!("{flag} {}: cannot make a folder in it", parent.display()))?;
        let path = folder.keep();
        held.register(&path);
        drop(held);
        let lock = File::open(&path).ok().filter(|f| f.try_lock().is_ok());
        Ok(Self { path, _lock: lock })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
        signals::unregister(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_is_removed_with_what_it_holds() {
        let parent = tempfile::tempdir().unwrap();
        let work = WorkDir::new("--tmp", parent.path(), &|_| {}).unwrap();
        assert!(
            work.path()
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with(PREFIX)
        );
        std::fs::create_dir(work.path().join("sort")).unwrap();
        std::fs::write(work.path().join("sort/run"), b"records").unwrap();
        drop(work);
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_file_or_a_missing_folder_is_refused() {
        let parent = tempfile::tempdir().unwrap();
        let file = parent.path().join("f");
        std::fs::write(&file, b"").unwrap();
        let err = WorkDir::new("--tmp", &file, &|_| {}).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Refused);
        assert!(err.to_string().contains("is not a folder"), "{err}");
        let err = WorkDir::new("--tmp", &parent.path().join("none"), &|_| {}).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Io);
    }

    #[test]
    fn a_folder_a_killed_run_left_is_swept() {
        let parent = tempfile::tempdir().unwrap();
        let left = parent.path().join(format!("{PREFIX}1-work-left"));
        std::fs::create_dir(&left).unwrap();
        std::fs::write(left.join("run"), b"records").unwrap();
        let old = std::time::SystemTime::now() - 2 * signals::STALE_AFTER;
        File::open(&left).unwrap().set_modified(old).unwrap();
        let notes = std::cell::RefCell::new(Vec::new());
        let work = WorkDir::new("--tmp", parent.path(), &|n| {
            notes.borrow_mut().push(n.to_owned())
        })
        .unwrap();
        assert!(!left.exists());
        assert_eq!(notes.borrow().len(), 1);
        drop(work);
    }
}
