//! Where message bodies are kept: by content, staged until whole and checked.

use std::fs::{self, File};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use sha2::Digest as _;

use crate::Digest;

/// Why the store failed. The words name the store's own paths, never a body's content.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No body has this digest.
    #[error("no message {0} in the store")]
    Missing(Digest),
    /// The file system failed (full, read-only, gone); nothing was made visible.
    #[error("the store at {path} failed to {action}: {source}")]
    Io {
        /// What the store was doing.
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// A body being received: written, then read back for its check, then committed or dropped.
/// Dropping it uncommitted removes it.
pub trait Staging: Read + Write + Seek + Send {
    /// The SHA-256 of every byte written so far.
    fn digest(&self) -> Digest;
    /// How many bytes were written.
    fn written(&self) -> u64;
}

/// Message bodies by content. A body is visible under its digest only once whole and durable;
/// committing the same bytes twice keeps one copy. Behind a trait so an object store can stand
/// in for the disk.
pub trait Store: Send + Sync {
    /// The store's staging area.
    type Staging: Staging;

    /// Starts receiving a body.
    ///
    /// # Errors
    /// [`StoreError::Io`] if no staging file can be made.
    fn stage(&self) -> Result<Self::Staging, StoreError>;

    /// Makes a staged body durable and visible under its digest, which it returns.
    ///
    /// # Errors
    /// [`StoreError::Io`]; the body is then not visible.
    fn commit(&self, staging: Self::Staging) -> Result<Digest, StoreError>;

    /// Opens a body for reading.
    ///
    /// # Errors
    /// [`StoreError::Missing`], or [`StoreError::Io`].
    fn open(&self, digest: &Digest) -> Result<Box<dyn Read + Send>, StoreError>;

    /// Removes a body (after its round); removing a missing one is not an error.
    ///
    /// # Errors
    /// [`StoreError::Io`].
    fn remove(&self, digest: &Digest) -> Result<(), StoreError>;

    /// Every digest the store holds, in order (for the collection of bodies no round names).
    ///
    /// # Errors
    /// [`StoreError::Io`].
    fn digests(&self) -> Result<Vec<Digest>, StoreError>;
}

/// A [`Store`] in a directory: bodies at `objects/<first two hex digits>/<digest>`, staged in
/// `staging/` (same file system, so a commit is a rename), synced before the rename and the
/// directory synced after, so a body is visible whole or not at all, a crash included.
#[derive(Debug)]
pub struct DiskStore {
    root: PathBuf,
}

/// A body staged by a [`DiskStore`].
#[derive(Debug)]
pub struct DiskStaging {
    file: tempfile::NamedTempFile,
    hash: sha2::Sha256,
    written: u64,
}

impl DiskStore {
    /// Opens (creating if needed) a store at `root`, removing what a killed server left staged.
    ///
    /// # Errors
    /// [`StoreError::Io`] if the directories cannot be made or read.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, StoreError> {
        let store = Self { root: root.into() };
        for dir in [store.staging_dir(), store.root.join("objects")] {
            fs::create_dir_all(&dir).map_err(io_error("create", &dir))?;
        }
        let staging = store.staging_dir();
        let entries = fs::read_dir(&staging).map_err(io_error("list", &staging))?;
        for entry in entries {
            let path = entry.map_err(io_error("list", &staging))?.path();
            fs::remove_file(&path).map_err(io_error("remove a stale staged file", &path))?;
        }
        Ok(store)
    }

    fn staging_dir(&self) -> PathBuf {
        self.root.join("staging")
    }

    /// The stored body of `digest` as a file, which can seek (circom's and snarkjs's files are
    /// read through their section tables).
    ///
    /// # Errors
    /// [`StoreError::Missing`], [`StoreError::Io`].
    pub fn open_file(&self, digest: &Digest) -> Result<File, StoreError> {
        let path = self.object(digest);
        match File::open(&path) {
            Ok(file) => Ok(file),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(StoreError::Missing(*digest)),
            Err(e) => Err(io_error("open", &path)(e)),
        }
    }

    fn object(&self, digest: &Digest) -> PathBuf {
        let name = digest.to_string();
        self.root.join("objects").join(&name[..2]).join(name)
    }
}

fn io_error<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> StoreError + 'a {
    move |source| StoreError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

impl Store for DiskStore {
    type Staging = DiskStaging;

    fn stage(&self) -> Result<DiskStaging, StoreError> {
        let dir = self.staging_dir();
        let file = tempfile::Builder::new()
            .prefix("upload-")
            .tempfile_in(&dir)
            .map_err(io_error("create a staging file in", &dir))?;
        Ok(DiskStaging {
            file,
            hash: sha2::Sha256::new(),
            written: 0,
        })
    }

    fn commit(&self, staging: DiskStaging) -> Result<Digest, StoreError> {
        let digest = staging.digest();
        let target = self.object(&digest);
        let dir = target
            .parent()
            .expect("invariant: an object path has its fan-out directory")
            .to_path_buf();
        let staged = staging.file.path().to_path_buf();
        staging
            .file
            .as_file()
            .sync_all()
            .map_err(io_error("sync", &staged))?;
        fs::create_dir_all(&dir).map_err(io_error("create", &dir))?;
        staging.file.persist(&target).map_err(|e| StoreError::Io {
            action: "rename into place",
            path: target.clone(),
            source: e.error,
        })?;
        for synced in [&dir, &self.root.join("objects")] {
            File::open(synced)
                .and_then(|d| d.sync_all())
                .map_err(io_error("sync", synced))?;
        }
        Ok(digest)
    }

    fn open(&self, digest: &Digest) -> Result<Box<dyn Read + Send>, StoreError> {
        let path = self.object(digest);
        match File::open(&path) {
            Ok(file) => Ok(Box::new(file)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(StoreError::Missing(*digest)),
            Err(e) => Err(io_error("open", &path)(e)),
        }
    }

    fn remove(&self, digest: &Digest) -> Result<(), StoreError> {
        let path = self.object(digest);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error("remove", &path)(e)),
            _ => Ok(()),
        }
    }

    fn digests(&self) -> Result<Vec<Digest>, StoreError> {
        let objects = self.root.join("objects");
        let mut found = Vec::new();
        for fan in fs::read_dir(&objects).map_err(io_error("list", &objects))? {
            let fan = fan.map_err(io_error("list", &objects))?.path();
            for entry in fs::read_dir(&fan).map_err(io_error("list", &fan))? {
                let name = entry.map_err(io_error("list", &fan))?.file_name();
                // Only names this store writes; anything else is not ours to judge.
                if let Some(digest) = name.to_str().and_then(|n| n.parse().ok()) {
                    found.push(digest);
                }
            }
        }
        found.sort();
        Ok(found)
    }
}

impl Write for DiskStaging {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let wrote = self.file.write(buf)?;
        self.hash.update(&buf[..wrote]);
        self.written += wrote as u64;
        Ok(wrote)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Read for DiskStaging {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.file.read(buf)
    }
}

impl Seek for DiskStaging {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        self.file.seek(pos)
    }
}

impl Staging for DiskStaging {
    fn digest(&self) -> Digest {
        Digest(self.hash.clone().finalize().into())
    }

    fn written(&self) -> u64 {
        self.written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn staged(store: &DiskStore, bytes: &[u8]) -> DiskStaging {
        let mut staging = store.stage().unwrap();
        staging.write_all(bytes).unwrap();
        staging
    }

    fn staged_files(root: &Path) -> usize {
        fs::read_dir(root.join("staging")).unwrap().count()
    }

    #[test]
    fn a_committed_body_reads_back_under_its_digest_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = DiskStore::open(dir.path()).unwrap();
        let mut staging = staged(&store, b"masked points");
        assert_eq!(staging.written(), 13);
        staging.seek(io::SeekFrom::Start(0)).unwrap();
        let mut back = Vec::new();
        staging.read_to_end(&mut back).unwrap();
        assert_eq!(back, b"masked points");
        let digest = store.commit(staging).unwrap();
        assert_eq!(digest, Digest::of(b"masked points"));
        assert_eq!(
            store.commit(staged(&store, b"masked points")).unwrap(),
            digest
        );
        let mut read = Vec::new();
        store.open(&digest).unwrap().read_to_end(&mut read).unwrap();
        assert_eq!(read, b"masked points");
        assert_eq!(staged_files(dir.path()), 0);
        let other = store.commit(staged(&store, b"other points")).unwrap();
        let mut both = vec![digest, other];
        both.sort();
        assert_eq!(store.digests().unwrap(), both);
        store.remove(&digest).unwrap();
        assert_eq!(store.digests().unwrap(), vec![other]);
        store.remove(&digest).unwrap();
        assert!(matches!(store.open(&digest), Err(StoreError::Missing(d)) if d == digest));
    }

    #[test]
    fn an_uncommitted_body_is_never_visible() {
        let dir = tempfile::tempdir().unwrap();
        let store = DiskStore::open(dir.path()).unwrap();
        drop(staged(&store, b"refused"));
        assert_eq!(staged_files(dir.path()), 0);
        // A killed server's staged file: removed by the next start, never an object.
        let kept = staged(&store, b"half an upl");
        let (_file, path) = kept.file.keep().unwrap();
        assert!(path.exists());
        let store = DiskStore::open(dir.path()).unwrap();
        assert!(!path.exists());
        assert!(matches!(
            store.open(&Digest::of(b"half an upl")),
            Err(StoreError::Missing(_))
        ));
    }
}
