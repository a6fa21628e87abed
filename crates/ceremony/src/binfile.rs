//! iden3's binary container ("binfile"), as circom and snarkjs write `.r1cs`, `.wtns`, `.ptau`
//! and `.zkey` files: a 4-byte magic, a u32 LE version, a u32 LE section count, then the
//! sections, each a u32 LE id, a u64 LE byte size and its body. Sections may come in any order
//! (snarkjs's `zkey new` writes them out of order); an id may appear once.
//!
//! # Guarantees
//! The table is read through the file's section headers only (seeking over the bodies), so no
//! body is read or allocated for before its size is known to fit the file; a section past the
//! end, a duplicate, and bytes after the last section are errors naming the section.

use std::io::{Read, Seek, SeekFrom, Write};

use crate::codec::{CodecError, HashingReader, HashingWriter, Location};

/// Why a container's table was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BinfileError {
    /// The file does not start with the kind's magic.
    #[error("not a {kind} (no \"{magic}\" magic)")]
    Magic {
        /// The kind expected (`circom .r1cs file`).
        kind: &'static str,
        /// Its magic.
        magic: &'static str,
    },
    /// Another format version.
    #[error("{kind} version {found}: version {expected} is read")]
    Version {
        /// The kind.
        kind: &'static str,
        /// The version read.
        found: u32,
        /// The version this reader takes.
        expected: u32,
    },
    /// A section runs past the end of the file.
    #[error("section {id} at byte {offset} runs past the end of the file ({size} bytes declared)")]
    SectionBounds {
        /// The section.
        id: u32,
        /// Where its body starts.
        offset: u64,
        /// The size its header declares.
        size: u64,
    },
    /// A section appears twice.
    #[error("section {0} appears twice")]
    DuplicateSection(u32),
    /// A section that must be present is not.
    #[error("section {id} ({name}) is missing")]
    MissingSection {
        /// The section.
        id: u32,
        /// What it holds.
        name: &'static str,
    },
    /// A section's size disagrees with the header's counts.
    #[error("section {id} ({name}) holds {found} bytes, expected {expected}")]
    SectionSize {
        /// The section.
        id: u32,
        /// What it holds.
        name: &'static str,
        /// Its size.
        found: u64,
        /// The size the header's counts imply.
        expected: u64,
    },
    /// Reading failed, or the file ends inside the table.
    #[error(transparent)]
    Codec(#[from] CodecError),
}

/// A section's body: where it starts and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    /// The body's first byte in the file.
    pub offset: u64,
    /// The body's size.
    pub size: u64,
}

/// A container's section table.
#[derive(Clone, Debug)]
pub struct Table {
    /// `(id, body)` in file order.
    sections: Vec<(u32, Section)>,
    /// The file's length.
    len: u64,
}

/// Sections a table may list: every real file has at most 15 (`.ptau` after `prepare phase2`);
/// a count above this in a short file is refused before any is read.
const MAX_SECTIONS: u32 = 64;

impl Table {
    /// Reads the table of a file of `kind` (for messages) starting with `magic` at `version`,
    /// leaving `input` anywhere.
    ///
    /// # Errors
    /// [`BinfileError`]: another magic or version, a section past the end or twice, trailing
    /// bytes, a read error.
    pub fn read<R: Read + Seek>(
        input: &mut R,
        kind: &'static str,
        magic: &'static str,
        version: u32,
    ) -> Result<Self, BinfileError> {
        let len = input.seek(SeekFrom::End(0)).map_err(CodecError::Io)?;
        input.seek(SeekFrom::Start(0)).map_err(CodecError::Io)?;
        let mut head = [0u8; 4];
        if len < 4 || {
            read_exact(input, &mut head, "magic", 0)?;
            head != magic.as_bytes()
        } {
            return Err(BinfileError::Magic { kind, magic });
        }
        let (mut found, mut count) = ([0u8; 4], [0u8; 4]);
        read_exact(input, &mut found, "version", 4)?;
        read_exact(input, &mut count, "section count", 8)?;
        let (found, count) = (u32::from_le_bytes(found), u32::from_le_bytes(count));
        if found != version {
            return Err(BinfileError::Version {
                kind,
                found,
                expected: version,
            });
        }
        if count > MAX_SECTIONS {
            return Err(CodecError::TooMany {
                what: "sections",
                count: u64::from(count),
                max: u64::from(MAX_SECTIONS),
                offset: 8,
            }
            .into());
        }
        let mut sections: Vec<(u32, Section)> = Vec::with_capacity(count as usize);
        let mut offset = 12u64;
        for _ in 0..count {
            let (mut id, mut size) = ([0u8; 4], [0u8; 8]);
            input
                .seek(SeekFrom::Start(offset))
                .map_err(CodecError::Io)?;
            read_exact(input, &mut id, "section id", offset)?;
            read_exact(input, &mut size, "section size", offset + 4)?;
            let (id, size) = (u32::from_le_bytes(id), u64::from_le_bytes(size));
            let body = offset + 12;
            if size > len.saturating_sub(body) {
                return Err(BinfileError::SectionBounds {
                    id,
                    offset: body,
                    size,
                });
            }
            if sections.iter().any(|&(seen, _)| seen == id) {
                return Err(BinfileError::DuplicateSection(id));
            }
            sections.push((id, Section { offset: body, size }));
            offset = body + size;
        }
        if offset < len {
            return Err(CodecError::TrailingBytes { offset }.into());
        }
        Ok(Self { sections, len })
    }

    /// Section `id`, if the file has it.
    pub fn get(&self, id: u32) -> Option<Section> {
        self.sections
            .iter()
            .find(|&&(seen, _)| seen == id)
            .map(|&(_, s)| s)
    }

    /// Section `id` (holding `name`, for the error).
    ///
    /// # Errors
    /// [`BinfileError::MissingSection`].
    pub fn require(&self, id: u32, name: &'static str) -> Result<Section, BinfileError> {
        self.get(id)
            .ok_or(BinfileError::MissingSection { id, name })
    }

    /// Section `id`, which must hold exactly `expected` bytes.
    ///
    /// # Errors
    /// [`BinfileError::MissingSection`], [`BinfileError::SectionSize`].
    pub fn sized(
        &self,
        id: u32,
        name: &'static str,
        expected: u64,
    ) -> Result<Section, BinfileError> {
        let section = self.require(id, name)?;
        if section.size != expected {
            return Err(BinfileError::SectionSize {
                id,
                name,
                found: section.size,
                expected,
            });
        }
        Ok(section)
    }

    /// The ids in file order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.sections.iter().map(|&(id, _)| id)
    }

    /// The file's length.
    pub fn file_len(&self) -> u64 {
        self.len
    }
}

fn read_exact<R: Read>(
    input: &mut R,
    buf: &mut [u8],
    what: &'static str,
    offset: u64,
) -> Result<(), CodecError> {
    HashingReader::at(input, offset).fill(buf, Location::value(what))
}

/// A reader over one section's body that names the section's values in errors and refuses to
/// read past the body's end (no hashing: sections are large and checked by their contents).
pub(crate) struct SectionReader<'a, R> {
    inner: std::io::Take<&'a mut R>,
    offset: u64,
    end: u64,
}

impl<'a, R: Read + Seek> SectionReader<'a, R> {
    /// A reader at `section`'s first byte.
    pub(crate) fn new(input: &'a mut R, section: Section) -> Result<Self, CodecError> {
        input.seek(SeekFrom::Start(section.offset))?;
        Ok(Self {
            inner: input.take(section.size),
            offset: section.offset,
            end: section.offset + section.size,
        })
    }
}

impl<R: Read> SectionReader<'_, R> {
    /// Fills `buf`; the end of the section is [`CodecError::Truncated`] naming `location`.
    pub(crate) fn fill(&mut self, buf: &mut [u8], location: Location) -> Result<(), CodecError> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.inner.read(&mut buf[filled..]) {
                Ok(0) => {
                    return Err(CodecError::Truncated {
                        location,
                        offset: self.offset + filled as u64,
                    });
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(CodecError::Io(e)),
            }
        }
        self.offset += buf.len() as u64;
        Ok(())
    }

    /// A u32 LE.
    pub(crate) fn u32(&mut self, location: Location) -> Result<u32, CodecError> {
        let mut b = [0u8; 4];
        self.fill(&mut b, location)?;
        Ok(u32::from_le_bytes(b))
    }

    /// A u64 LE.
    pub(crate) fn u64(&mut self, location: Location) -> Result<u64, CodecError> {
        let mut b = [0u8; 8];
        self.fill(&mut b, location)?;
        Ok(u64::from_le_bytes(b))
    }

    /// The next byte's offset in the file.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes left in the section.
    pub(crate) fn left(&self) -> u64 {
        self.end - self.offset
    }
}

/// Points `first..first + count` of `section` (each a `B`-byte encoding), decoded and checked
/// on the pool; errors name them `name[i]`, and a run past the section is
/// [`CodecError::Truncated`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn read_points<P, B, R>(
    (pool, control): (&lockstep_shard::Pool, &lockstep_shard::Control),
    input: &mut R,
    section: Section,
    name: &'static str,
    (first, count): (u64, usize),
    decode: fn(&B) -> Result<P, crate::codec::PointProblem>,
) -> Result<Vec<P>, CodecError>
where
    P: Copy + Default + Send + Sync,
    B: Copy + Default + Send + Sync + AsMut<[u8]>,
    R: Read + Seek,
{
    let width = size_of::<B>() as u64;
    let end = section.offset + section.size;
    let offset = (section.offset + first * width).min(end);
    input.seek(SeekFrom::Start(offset))?;
    let mut reader = HashingReader::at(input.take(end - offset), offset).with_end(Some(end));
    crate::codec::read_vector(pool, control, &mut reader, name, first, count, decode, None)
}

/// Writes a container's head: `magic`, `version`, `sections`.
pub(crate) fn write_head<W: Write>(
    w: &mut HashingWriter<W>,
    magic: &[u8; 4],
    version: u32,
    sections: u32,
) -> Result<(), CodecError> {
    w.put(magic)?;
    w.put(&version.to_le_bytes())?;
    w.put(&sections.to_le_bytes())
}

/// Writes a section's header: its id and the size of the body that follows.
pub(crate) fn write_section_header<W: Write>(
    w: &mut HashingWriter<W>,
    id: u32,
    size: u64,
) -> Result<(), CodecError> {
    w.put(&id.to_le_bytes())?;
    w.put(&size.to_le_bytes())
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    fn file(magic: &[u8], version: u32, sections: &[(u32, &[u8])]) -> Vec<u8> {
        let mut out = magic.to_vec();
        out.extend(version.to_le_bytes());
        out.extend(u32::try_from(sections.len()).unwrap().to_le_bytes());
        for (id, body) in sections {
            out.extend(id.to_le_bytes());
            out.extend((body.len() as u64).to_le_bytes());
            out.extend(*body);
        }
        out
    }

    fn table(bytes: Vec<u8>) -> Result<Table, BinfileError> {
        Table::read(&mut Cursor::new(bytes), "test file", "test", 2)
    }

    #[test]
    fn sections_in_any_order() {
        let t = table(file(b"test", 2, &[(2, b"bb"), (1, b"a")])).unwrap();
        assert_eq!(t.ids().collect::<Vec<_>>(), [2, 1]);
        assert_eq!(
            t.get(1),
            Some(Section {
                offset: 12 + 12 + 2 + 12,
                size: 1
            })
        );
        assert!(t.sized(2, "b", 2).is_ok());
        assert!(matches!(
            t.sized(2, "b", 3),
            Err(BinfileError::SectionSize { id: 2, .. })
        ));
        assert!(matches!(
            t.require(3, "c"),
            Err(BinfileError::MissingSection { id: 3, .. })
        ));
    }

    #[test]
    fn bad_tables_are_named() {
        assert!(matches!(
            table(b"tes".to_vec()),
            Err(BinfileError::Magic { .. })
        ));
        assert!(matches!(
            table(file(b"test", 1, &[])),
            Err(BinfileError::Version { found: 1, .. })
        ));
        assert!(matches!(
            table(file(b"test", 2, &[(1, b"a"), (1, b"b")])),
            Err(BinfileError::DuplicateSection(1))
        ));
        let mut long = file(b"test", 2, &[(1, b"abc")]);
        long.truncate(long.len() - 1);
        assert!(matches!(
            table(long),
            Err(BinfileError::SectionBounds { id: 1, .. })
        ));
        let mut trailing = file(b"test", 2, &[(1, b"abc")]);
        trailing.push(0);
        assert!(matches!(
            table(trailing),
            Err(BinfileError::Codec(CodecError::TrailingBytes {
                offset: 27
            }))
        ));
        let mut many = file(b"test", 2, &[]);
        many[8..12].copy_from_slice(&1000u32.to_le_bytes());
        assert!(matches!(
            table(many),
            Err(BinfileError::Codec(CodecError::TooMany { .. }))
        ));
        let mut cut = file(b"test", 2, &[]);
        cut[8..12].copy_from_slice(&1u32.to_le_bytes());
        assert!(matches!(
            table(cut),
            Err(BinfileError::Codec(CodecError::Truncated { .. }))
        ));
    }
}
