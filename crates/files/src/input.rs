//! Inputs: record files, messages and secret files, refused early when they cannot be what they
//! claim.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use zeroize::Zeroizing;

use crate::error::{Error, OrIo};
use crate::kind::{Kind, mode};

/// The kind of the file `path` leads to (links followed).
fn kind_of(path: &Path) -> Result<Kind, Error> {
    let metadata = std::fs::metadata(path).or_io(|| format!("reading {}", path.display()))?;
    Ok(Kind::of(&metadata))
}

/// Checks that `path` (given by `flag`) is a regular file or a FIFO, as every record file and
/// message must be, and returns which.
///
/// # Errors
/// [`ErrorKind::Io`](crate::ErrorKind::Io) for a missing file; [`ErrorKind::Refused`](crate::ErrorKind::Refused)
/// for a directory, a device or a socket; each naming `path` (and `flag`).
pub fn check_readable(flag: &str, path: &Path) -> Result<Kind, Error> {
    match kind_of(path)? {
        kind @ (Kind::Regular | Kind::Fifo) => Ok(kind),
        other => Err(Error::refused(format!(
            "{} is {}: {flag} takes a regular file or a pipe",
            path.display(),
            other.described()
        ))),
    }
}

/// Opens a record file or message given by `flag` (see [`check_readable`]).
///
/// # Errors
/// As [`check_readable`], or the file cannot be opened.
pub fn open_input(flag: &str, path: &Path) -> Result<File, Error> {
    check_readable(flag, path)?;
    File::open(path).or_io(|| format!("reading {}", path.display()))
}

/// Opens an input given by `flag` that can hold at most `max` bytes (a message of a bounded
/// number of elements), refusing a regular file larger than that before a byte of it is read.
/// `what` describes the bound for the message: `a request of at most 3 elements`. (A pipe's
/// length is unknown: its reader must bound what it reads.)
///
/// # Errors
/// As [`open_input`]; [`ErrorKind::Refused`](crate::ErrorKind::Refused) if the file is too large.
pub fn open_input_at_most(flag: &str, path: &Path, max: u64, what: &str) -> Result<File, Error> {
    let file = open_input(flag, path)?;
    let metadata = file
        .metadata()
        .or_io(|| format!("reading {}", path.display()))?;
    let len = metadata.len();
    if Kind::of(&metadata) == Kind::Regular && len > max {
        return Err(Error::refused(format!(
            "{}: {len} bytes is more than {what} takes ({max} bytes)",
            path.display()
        )));
    }
    Ok(file)
}

/// What a secret file must be: its exact length, and how to make one (for the error).
#[derive(Clone, Copy, Debug)]
pub struct SecretFile<'a> {
    /// What the file holds, for messages: `key`.
    pub what: &'a str,
    /// Its exact length in bytes.
    pub len: u64,
    /// How a user makes one, for the length error: ``lockstep psi key new` writes one``.
    pub made_by: &'a str,
    /// Accept a file that group or others may read or write.
    pub allow_open: bool,
}

/// Reads a secret file: a regular file of exactly `spec.len` bytes, readable and writable by
/// its owner alone unless `spec.allow_open` (as ssh treats private keys), into a buffer wiped
/// when dropped.
///
/// # Errors
/// [`ErrorKind::Refused`](crate::ErrorKind::Refused) for a file that is not regular, open to group
/// or others, of another length, or that changed length while read;
/// [`ErrorKind::Io`](crate::ErrorKind::Io) if it cannot be read. Each names `path`.
pub fn read_secret(path: &Path, spec: &SecretFile<'_>) -> Result<Zeroizing<Vec<u8>>, Error> {
    let (shown, what) = (path.display(), spec.what);
    let metadata = std::fs::metadata(path).or_io(|| format!("reading {what} {shown}"))?;
    let kind = Kind::of(&metadata);
    if kind != Kind::Regular {
        return Err(Error::refused(format!(
            "{shown} is {}, not a {what} file",
            kind.described()
        )));
    }
    let permissions = mode(&metadata) & 0o777;
    if permissions & 0o077 != 0 && !spec.allow_open {
        return Err(Error::refused(format!(
            "{shown}: the {what} file is open to others (mode {permissions:03o}); restrict it with \
             `chmod 600 {shown}`, or pass --allow-open-{what}"
        )));
    }
    if metadata.len() != spec.len {
        return Err(Error::refused(format!(
            "{shown}: a {what} file holds exactly {} raw bytes ({}); this one has {}",
            spec.len,
            spec.made_by,
            metadata.len()
        )));
    }
    let capacity = usize::try_from(spec.len)
        .unwrap_or(usize::MAX)
        .saturating_add(1);
    let mut bytes = Zeroizing::new(Vec::with_capacity(capacity));
    File::open(path)
        .and_then(|f| f.take(spec.len + 1).read_to_end(&mut bytes))
        .or_io(|| format!("reading {what} {shown}"))?;
    if bytes.len() as u64 != spec.len {
        return Err(Error::refused(format!(
            "{shown}: the {what} file changed while it was read"
        )));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    const KEY: SecretFile<'static> = SecretFile {
        what: "key",
        len: 32,
        made_by: "`lockstep psi key new` writes one",
        allow_open: false,
    };

    #[test]
    fn secrets_are_regular_private_files_of_their_length() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("k");
        std::fs::write(&path, [7u8; 32]).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            let err = read_secret(&path, &KEY).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Refused);
            assert!(
                err.to_string().contains("open to others (mode 644)"),
                "{err}"
            );
            let open = SecretFile {
                allow_open: true,
                ..KEY
            };
            assert_eq!(*read_secret(&path, &open).unwrap(), [7u8; 32]);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            let err = read_secret(Path::new("/dev/zero"), &open).unwrap_err();
            assert_eq!(
                err.to_string(),
                "/dev/zero is a character device, not a key file"
            );
        }
        assert!(read_secret(&path, &KEY).is_ok());
        std::fs::write(&path, [7u8; 40]).unwrap();
        let err = read_secret(&path, &KEY).unwrap_err().to_string();
        assert!(
            err.ends_with(
                "a key file holds exactly 32 raw bytes (`lockstep psi key new` writes one); this one has 40"
            ),
            "{err}"
        );
        let missing = read_secret(&temp.path().join("none"), &KEY).unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::Io);
        assert!(missing.to_string().starts_with("reading key "), "{missing}");
    }

    #[test]
    fn inputs_are_files_or_pipes_and_no_larger_than_they_can_be() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("m.bin");
        std::fs::write(&path, [0u8; 100]).unwrap();
        assert!(open_input_at_most("--request", &path, 100, "a request").is_ok());
        let err = open_input_at_most("--request", &path, 99, "a request of at most 1 elements")
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Refused);
        assert!(
            err.to_string().ends_with(
                "m.bin: 100 bytes is more than a request of at most 1 elements takes (99 bytes)"
            ),
            "{err}"
        );
        let err = open_input("--input", temp.path()).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("is a directory: --input takes a regular file or a pipe"),
            "{err}"
        );
        #[cfg(unix)]
        assert_eq!(
            check_readable("--input", Path::new("/dev/zero"))
                .unwrap_err()
                .to_string(),
            "/dev/zero is a character device: --input takes a regular file or a pipe"
        );
    }
}
