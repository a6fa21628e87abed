//! Inputs: keys, messages and record files, refused early when they cannot be what they claim.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use anyhow::Context as _;
use lockstep_psi::{Key, Limits};
use zeroize::Zeroizing;

use super::kind::{Kind, mode};

/// The longest line an input may have: a record file's rows are far shorter, and a binary or
/// endless input (`/dev/zero`) fails here instead of filling memory.
pub(crate) const MAX_LINE: usize = 1 << 20;

/// A key file's length: 32 raw bytes.
const KEY_LEN: u64 = 32;

/// The kind of the file `path` leads to (links followed).
fn kind_of(path: &Path) -> anyhow::Result<Kind> {
    let metadata =
        std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(Kind::of(&metadata))
}

/// Checks that `path` (given by `flag`) is a regular file or a FIFO, as every record file and
/// message must be.
///
/// # Errors
/// A missing file, a directory, a device or a socket, naming `path` and `flag`.
pub(crate) fn check_readable(flag: &str, path: &Path) -> anyhow::Result<Kind> {
    match kind_of(path)? {
        kind @ (Kind::Regular | Kind::Fifo) => Ok(kind),
        other => anyhow::bail!(
            "{} is {}: {flag} takes a regular file or a pipe",
            path.display(),
            other.described()
        ),
    }
}

/// Opens a record file or message given by `flag` (see [`check_readable`]).
///
/// # Errors
/// As [`check_readable`], or the file cannot be opened.
pub(crate) fn open_input(flag: &str, path: &Path) -> anyhow::Result<File> {
    check_readable(flag, path)?;
    File::open(path).with_context(|| format!("reading {}", path.display()))
}

/// Opens a message of `what` (`request`, ...) given by `flag`, refusing a regular file larger
/// than a message within `limits` can be before a byte of it is read.
///
/// # Errors
/// As [`open_input`], or the file is too large.
pub(crate) fn read_message(
    flag: &str,
    path: &Path,
    what: &str,
    limits: Limits,
) -> anyhow::Result<File> {
    let file = open_input(flag, path)?;
    if let (Some(max), Some(count)) = (limits.max_encoded_len(), limits.element_limit()) {
        let metadata = file
            .metadata()
            .with_context(|| format!("reading {}", path.display()))?;
        let len = metadata.len();
        if Kind::of(&metadata) == Kind::Regular && len > max {
            anyhow::bail!(
                "{}: {len} bytes is more than a {what} of at most {count} elements takes ({max} bytes)",
                path.display()
            );
        }
    }
    Ok(file)
}

/// Reads a key file: a regular file of exactly 32 bytes, readable and writable by its owner
/// alone unless `allow_open` (as ssh treats private keys).
///
/// # Errors
/// Not a regular file, open to group or others, not 32 bytes, or not a valid key; each naming
/// `path`.
pub(crate) fn read_key(path: &Path, allow_open: bool) -> anyhow::Result<Key> {
    let bytes = read_secret_file(path, allow_open)?;
    Key::from_bytes(&bytes).with_context(|| format!("key {}", path.display()))
}

/// The 32 bytes of a key file, checked as [`read_key`] says, in a zeroizing buffer.
///
/// # Errors
/// As [`read_key`], except the key's value.
pub(crate) fn read_secret_file(
    path: &Path,
    allow_open: bool,
) -> anyhow::Result<Zeroizing<Vec<u8>>> {
    let shown = path.display();
    let metadata = std::fs::metadata(path).with_context(|| format!("reading key {shown}"))?;
    let kind = Kind::of(&metadata);
    if kind != Kind::Regular {
        anyhow::bail!("{shown} is {}, not a key file", kind.described());
    }
    let permissions = mode(&metadata) & 0o777;
    if permissions & 0o077 != 0 && !allow_open {
        anyhow::bail!(
            "{shown}: the key file is open to others (mode {permissions:03o}); restrict it with \
             `chmod 600 {shown}`, or pass --allow-open-key"
        );
    }
    if metadata.len() != KEY_LEN {
        anyhow::bail!(
            "{shown}: a key file holds exactly 32 raw bytes (`lockstep psi key new` writes one); this one has {}",
            metadata.len()
        );
    }
    let mut bytes = Zeroizing::new(Vec::with_capacity(33));
    File::open(path)
        .and_then(|f| f.take(KEY_LEN + 1).read_to_end(&mut bytes))
        .with_context(|| format!("reading key {shown}"))?;
    if bytes.len() as u64 != KEY_LEN {
        anyhow::bail!("{shown}: the key file changed while it was read");
    }
    Ok(bytes)
}

/// A reader that fails once a line passes [`MAX_LINE`] bytes, naming the line.
pub(crate) struct LineLimit<R> {
    inner: R,
    line: usize,
    in_line: usize,
}

impl<R: Read> LineLimit<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self {
            inner,
            line: 1,
            in_line: 0,
        }
    }
}

impl<R: Read> Read for LineLimit<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &b in &buf[..n] {
            if b == b'\n' {
                self.line += 1;
                self.in_line = 0;
            } else {
                self.in_line += 1;
                if self.in_line > MAX_LINE {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "line {} is longer than {MAX_LINE} bytes: this is not a record file",
                            self.line
                        ),
                    ));
                }
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endless_lines_fail_early() {
        let mut reader = LineLimit::new(std::io::repeat(0));
        let err = std::io::copy(&mut reader, &mut std::io::sink()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 1 is longer than 1048576 bytes: this is not a record file"
        );
        let mut reader = LineLimit::new(&b"a\nbb\n"[..]);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        assert_eq!(out, b"a\nbb\n");
    }

    #[test]
    fn keys_are_regular_private_files_of_32_bytes() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("k");
        std::fs::write(&path, [7u8; 32]).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            let err = format!("{:#}", read_key(&path, false).unwrap_err());
            assert!(err.contains("open to others (mode 644)"), "{err}");
            assert!(read_key(&path, true).is_ok());
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            let err = format!("{:#}", read_key(Path::new("/dev/zero"), true).unwrap_err());
            assert_eq!(err, "/dev/zero is a character device, not a key file");
        }
        assert!(read_key(&path, false).is_ok());
        std::fs::write(&path, [7u8; 40]).unwrap();
        let err = format!("{:#}", read_key(&path, false).unwrap_err());
        assert!(err.contains("this one has 40"), "{err}");
    }
}
