//! A protobuf wire-format reader over any `BufRead`, for the decoders above it.
//!
//! It reads one key, varint or length-delimited payload at a time and never allocates more than
//! the bytes actually read: a declared length is a promise the input must keep, not a size to
//! reserve. Semantics follow prost's decoder (what OpenMined's peers write): varints of at most
//! ten bytes, field numbers 1 to 2^29 - 1, wire types 0, 1, 2, 5 and groups (skipped, nested at
//! most [`MAX_GROUP_DEPTH`] deep).

use std::io::{BufRead, Read};

/// How deep skipped groups may nest (prost allows 100 nested messages).
const MAX_GROUP_DEPTH: u32 = 100;

/// The wire type of a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WireType {
    Varint,
    Fixed64,
    Len,
    StartGroup,
    EndGroup,
    Fixed32,
}

impl std::fmt::Display for WireType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Varint => "varint",
            Self::Fixed64 => "64-bit",
            Self::Len => "length-delimited",
            Self::StartGroup => "start-group",
            Self::EndGroup => "end-group",
            Self::Fixed32 => "32-bit",
        })
    }
}

/// Why scanning stopped.
#[derive(Debug)]
pub(crate) enum ScanError {
    /// The reader failed.
    Io(std::io::Error),
    /// The bytes are not protobuf: what is wrong, and the byte offset where it was seen.
    Malformed(String),
}

impl From<std::io::Error> for ScanError {
    fn from(error: std::io::Error) -> Self {
        Self::Io(error)
    }
}

/// A protobuf reader that counts the bytes it has consumed.
pub(crate) struct Scanner<R> {
    reader: R,
    offset: u64,
}

impl<R: BufRead> Scanner<R> {
    /// The reader scanned.
    pub(crate) fn get_ref(&self) -> &R {
        &self.reader
    }

    pub(crate) fn new(reader: R) -> Self {
        Self { reader, offset: 0 }
    }

    /// Bytes consumed so far.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// The next buffered bytes, without consuming them (empty at the end of input). For telling
    /// a message's type by its first fields.
    pub(crate) fn peek(&mut self) -> Result<&[u8], ScanError> {
        Ok(self.reader.fill_buf()?)
    }

    fn malformed<T>(&self, what: &str) -> Result<T, ScanError> {
        Err(ScanError::Malformed(format!(
            "{what} at byte {}",
            self.offset
        )))
    }

    /// The next byte, or `None` at the end of input.
    fn byte(&mut self) -> Result<Option<u8>, ScanError> {
        let byte = match self.reader.fill_buf()?.first() {
            Some(&b) => b,
            None => return Ok(None),
        };
        self.reader.consume(1);
        self.offset += 1;
        Ok(Some(byte))
    }

    /// A base-128 varint of at most ten bytes.
    pub(crate) fn varint(&mut self) -> Result<u64, ScanError> {
        let mut value = 0u64;
        for i in 0..10 {
            let Some(byte) = self.byte()? else {
                return self.malformed("the input ends inside a varint");
            };
            if i == 9 && byte > 1 {
                return self.malformed("a varint overflows 64 bits");
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                return Ok(value);
            }
        }
        self.malformed("a varint overflows 64 bits")
    }

    /// The next field's number and wire type, or `None` at `end` (a submessage's last byte) or,
    /// with no `end`, at the end of input.
    pub(crate) fn key(&mut self, end: Option<u64>) -> Result<Option<(u32, WireType)>, ScanError> {
        match end {
            Some(end) if self.offset == end => return Ok(None),
            Some(end) if self.offset > end => {
                return self.malformed("a field runs past the end of its message");
            }
            Some(_) => {}
            None => {
                if self.peek()?.is_empty() {
                    return Ok(None);
                }
            }
        }
        let key = self.varint()?;
        let Ok(key) = u32::try_from(key) else {
            return self.malformed("a field key is out of range");
        };
        let wire_type = match key & 7 {
            0 => WireType::Varint,
            1 => WireType::Fixed64,
            2 => WireType::Len,
            3 => WireType::StartGroup,
            4 => WireType::EndGroup,
            5 => WireType::Fixed32,
            other => return self.malformed(&format!("invalid wire type {other}")),
        };
        let field = key >> 3;
        if field == 0 {
            return self.malformed("a field numbered 0");
        }
        Ok(Some((field, wire_type)))
    }

    /// A length prefix, checked to fit inside `end` when there is one.
    pub(crate) fn length(&mut self, end: Option<u64>) -> Result<u64, ScanError> {
        let len = self.varint()?;
        if let Some(end) = end
            && self.offset.checked_add(len).is_none_or(|stop| stop > end)
        {
            return self.malformed("a length-delimited field runs past the end of its message");
        }
        Ok(len)
    }

    /// Exactly `buf.len()` bytes.
    pub(crate) fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), ScanError> {
        match self.reader.read_exact(buf) {
            Ok(()) => {
                self.offset += buf.len() as u64;
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                self.malformed("the input ends inside a field")
            }
            Err(e) => Err(e.into()),
        }
    }

    /// `len` bytes into a vector that grows as they arrive (a declared length reserves nothing).
    pub(crate) fn read_vec(&mut self, len: u64) -> Result<Vec<u8>, ScanError> {
        let mut bytes = Vec::new();
        let read = (&mut self.reader).take(len).read_to_end(&mut bytes)?;
        self.offset += read as u64;
        if (read as u64) < len {
            return self.malformed("the input ends inside a field");
        }
        Ok(bytes)
    }

    /// Skips the payload of a field of `wire_type` (its key already read).
    pub(crate) fn skip(
        &mut self,
        field: u32,
        wire_type: WireType,
        end: Option<u64>,
    ) -> Result<(), ScanError> {
        self.skip_nested(field, wire_type, end, 0)
    }

    fn skip_nested(
        &mut self,
        field: u32,
        wire_type: WireType,
        end: Option<u64>,
        depth: u32,
    ) -> Result<(), ScanError> {
        match wire_type {
            WireType::Varint => self.varint().map(drop),
            WireType::Fixed64 => self.discard(8),
            WireType::Fixed32 => self.discard(4),
            WireType::Len => {
                let len = self.length(end)?;
                self.discard(len)
            }
            WireType::StartGroup => {
                if depth >= MAX_GROUP_DEPTH {
                    return self.malformed("groups nest too deep");
                }
                loop {
                    match self.key(end)? {
                        None => return self.malformed("a group is not closed"),
                        Some((f, WireType::EndGroup)) if f == field => return Ok(()),
                        Some((_, WireType::EndGroup)) => {
                            return self.malformed("a group is closed by another field");
                        }
                        Some((f, w)) => self.skip_nested(f, w, end, depth + 1)?,
                    }
                }
            }
            WireType::EndGroup => self.malformed("a group ends that was never opened"),
        }
    }

    fn discard(&mut self, len: u64) -> Result<(), ScanError> {
        let skipped = std::io::copy(&mut (&mut self.reader).take(len), &mut std::io::sink())?;
        self.offset += skipped;
        if skipped < len {
            return self.malformed("the input ends inside a field");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanner(bytes: &[u8]) -> Scanner<&[u8]> {
        Scanner::new(bytes)
    }

    fn malformed<T: std::fmt::Debug>(result: Result<T, ScanError>) -> String {
        match result {
            Err(ScanError::Malformed(m)) => m,
            other => panic!("expected a malformed input, got {other:?}"),
        }
    }

    #[test]
    fn varints() {
        assert_eq!(scanner(&[0]).varint().unwrap(), 0);
        assert_eq!(scanner(&[0xac, 0x02]).varint().unwrap(), 300);
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(scanner(&max).varint().unwrap(), u64::MAX);
        let mut over = max;
        over[9] = 0x02;
        assert!(malformed(scanner(&over).varint()).contains("overflows"));
        assert!(malformed(scanner(&[0x80, 0x80]).varint()).contains("ends inside a varint"));
    }

    #[test]
    fn keys_and_their_faults() {
        let mut s = scanner(&[0x08, 0x12]);
        assert_eq!(s.key(None).unwrap(), Some((1, WireType::Varint)));
        assert_eq!(s.key(None).unwrap(), Some((2, WireType::Len)));
        assert_eq!(s.key(None).unwrap(), None);
        assert!(malformed(scanner(&[0x07]).key(None)).contains("invalid wire type 7"));
        assert!(malformed(scanner(&[0x02]).key(None)).contains("a field numbered 0"));
        // A key inside a submessage that already ended.
        let mut s = scanner(&[0x08, 0x01]);
        assert_eq!(s.key(Some(0)).unwrap(), None);
    }

    #[test]
    fn lengths_stay_inside_their_message() {
        assert!(malformed(scanner(&[0x05]).length(Some(3))).contains("runs past the end"));
        assert_eq!(scanner(&[0x02]).length(Some(3)).unwrap(), 2);
        let huge = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert!(malformed(scanner(&huge).length(Some(100))).contains("runs past the end"));
    }

    #[test]
    fn a_declared_length_reserves_nothing() {
        // 2^62 bytes declared, three present.
        let mut s = scanner(&[1, 2, 3]);
        assert!(malformed(s.read_vec(1 << 62)).contains("ends inside a field"));
        assert_eq!(scanner(&[1, 2, 3]).read_vec(2).unwrap(), vec![1, 2]);
    }

    #[test]
    fn skipping_every_wire_type() {
        // varint, fixed64, len(2), fixed32, group 5 holding a varint, then field 9.
        let bytes = [
            0x08, 0x96, 0x01, // 1: varint 150
            0x11, 1, 2, 3, 4, 5, 6, 7, 8, // 2: fixed64
            0x1a, 2, 0xaa, 0xbb, // 3: len 2
            0x25, 1, 2, 3, 4, // 4: fixed32
            0x2b, 0x08, 0x01, 0x2c, // 5: group { 1: 1 }
            0x48, 0x07, // 9: varint 7
        ];
        let mut s = scanner(&bytes);
        while let Some((field, wire_type)) = s.key(None).unwrap() {
            if field == 9 {
                assert_eq!(s.varint().unwrap(), 7);
            } else {
                s.skip(field, wire_type, None).unwrap();
            }
        }
        assert_eq!(s.offset(), bytes.len() as u64);
        // Group 5 closed as group 6.
        let mut s = scanner(&[0x2b, 0x34]);
        let (f, w) = s.key(None).unwrap().unwrap();
        assert!(malformed(s.skip(f, w, None)).contains("closed by another field"));
        let mut deep = vec![0x0b; 200];
        deep.push(0x0c);
        let mut s = scanner(&deep);
        let (f, w) = s.key(None).unwrap().unwrap();
        assert!(malformed(s.skip(f, w, None)).contains("nest too deep"));
        let mut s = scanner(&[0x0c]);
        let (f, w) = s.key(None).unwrap().unwrap();
        assert!(malformed(s.skip(f, w, None)).contains("never opened"));
    }
}
