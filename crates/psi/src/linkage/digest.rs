//! SHA-256 digests that tie a round's files together.

use std::io::{Read, Write};
use std::str::FromStr;

use sha2::{Digest as _, Sha256};

use super::LinkageError;

/// A SHA-256 digest, printed as 64 lowercase hexadecimal digits.
///
/// A setup message's digest is the plain SHA-256 of its bytes (what `sha256sum` prints), so
/// either party can check it by hand.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }

    /// The 32 digest bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    pub(crate) fn from_hasher(hasher: Sha256) -> Self {
        Self(hasher.finalize().into())
    }
}

impl std::fmt::Display for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl std::fmt::Debug for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Digest({self})")
    }
}

impl FromStr for Digest {
    type Err = LinkageError;

    /// 64 hexadecimal digits, either case.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || LinkageError::NotADigest(super::quoted(text.as_bytes()));
        if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let nibble = |c: u8| match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => c - b'A' + 10,
        };
        let mut bytes = [0u8; 32];
        for (byte, pair) in bytes.iter_mut().zip(text.as_bytes().chunks_exact(2)) {
            *byte = nibble(pair[0]) << 4 | nibble(pair[1]);
        }
        Ok(Self(bytes))
    }
}

/// A reader that hashes what passes through it: a message's digest while it is decoded, without
/// holding the message's bytes.
pub struct DigestingReader<R> {
    inner: R,
    hasher: Sha256,
}

impl<R: Read> DigestingReader<R> {
    /// Wraps `inner`.
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
        }
    }

    /// The digest of every byte read so far.
    pub fn digest(&self) -> Digest {
        Digest::from_hasher(self.hasher.clone())
    }
}

impl<R: Read> Read for DigestingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// A writer that hashes and counts what passes through it: a message's digest while it is
/// written, without holding its bytes.
pub struct DigestingWriter<W> {
    inner: W,
    hasher: Sha256,
    written: u64,
}

impl<W: Write> DigestingWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
            written: 0,
        }
    }

    /// The digest of every byte written so far.
    pub fn digest(&self) -> Digest {
        Digest::from_hasher(self.hasher.clone())
    }

    /// The bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The inner writer.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for DigestingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_print_parse_and_stream() {
        // sha256("abc"), FIPS 180-2 appendix B.1.
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(Digest::of(b"abc").to_string(), abc);
        assert_eq!(abc.parse::<Digest>().unwrap(), Digest::of(b"abc"));
        assert_eq!(
            abc.to_uppercase().parse::<Digest>().unwrap(),
            Digest::of(b"abc")
        );
        assert!(abc[1..].parse::<Digest>().is_err());
        assert!(format!("{}g", &abc[1..]).parse::<Digest>().is_err());
        assert!(format!("+{}", &abc[1..]).parse::<Digest>().is_err());
        let mut reader = DigestingReader::new(&b"abc"[..]);
        std::io::copy(&mut reader, &mut std::io::sink()).unwrap();
        assert_eq!(reader.digest(), Digest::of(b"abc"));
        let mut writer = DigestingWriter::new(Vec::new());
        writer.write_all(b"ab").unwrap();
        writer.write_all(b"c").unwrap();
        assert_eq!((writer.digest(), writer.written()), (Digest::of(b"abc"), 3));
        assert_eq!(writer.into_inner(), b"abc");
    }
}
