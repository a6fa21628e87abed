//! circom's witness, `.wtns` (`wtns_utils.js`): `"wtns"`, version 2; section 1 a u32 n8, the
//! prime and a u32 count; section 2 the values, n8 bytes each, little-endian in standard form.
//! Value 0 is the constant 1, then the outputs, the public inputs, the rest.
//!
//! # Memory
//! 32 bytes a value, allocated once the section is known to hold them.

use std::io::{Read, Seek};

use blstrs::Scalar;
use lockstep_shard::memory;

use super::{CircomError, header_section, scalar_le};
use crate::binfile::{SectionReader, Table};
use crate::codec::Location;

/// A circom witness over BLS12-381's scalar field (secret: its `Debug` shows its length only).
#[derive(Clone, PartialEq, Eq)]
pub struct Witness {
    values: Vec<Scalar>,
}

impl std::fmt::Debug for Witness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Witness({} values)", self.values.len())
    }
}

/// A witness is secret: its values are wiped when it is dropped.
impl Drop for Witness {
    fn drop(&mut self) {
        crate::curve::wipe_scalars(&mut self.values);
    }
}

/// Values read per block.
const BLOCK: usize = 4096;

impl Witness {
    /// Reads the header alone: the number of values.
    ///
    /// # Errors
    /// [`CircomError`]: not a `.wtns`, another field, a malformed header, a read error.
    pub fn read_count<R: Read + Seek>(mut input: R) -> Result<u32, CircomError> {
        let table = Table::read(&mut input, "circom .wtns witness", "wtns", 2)?;
        count(&mut input, &table)
    }

    /// Reads and checks the whole file: every value canonical, section 2 exactly the count's.
    ///
    /// # Errors
    /// [`CircomError`]: as [`read_count`](Self::read_count); a value `>= r` named by index.
    pub fn read<R: Read + Seek>(mut input: R) -> Result<Self, CircomError> {
        let table = Table::read(&mut input, "circom .wtns witness", "wtns", 2)?;
        let n = count(&mut input, &table)?;
        let section = table.sized(2, "witness values", u64::from(n) * 32)?;
        // Held by a witness from the start, so that a refusal midway wipes what was read.
        let mut witness = Self {
            values: memory::try_with_capacity(n as usize).map_err(|refused| {
                CircomError::Memory {
                    what: "the witness",
                    refused,
                }
            })?,
        };
        let mut reader = SectionReader::new(&mut input, section)?;
        // The witness's bytes, wiped when dropped on every path.
        let mut buf = zeroize::Zeroizing::new(vec![0u8; BLOCK * 32]);
        let mut index = 0u64;
        while index < u64::from(n) {
            let take = usize::try_from(u64::from(n) - index).map_or(BLOCK, |left| left.min(BLOCK));
            reader.fill(&mut buf[..take * 32], Location::element("witness", index))?;
            for chunk in buf[..take * 32].chunks_exact(32) {
                let value = scalar_le(chunk).ok_or(CircomError::Value { index })?;
                witness.values.push(value);
                index += 1;
            }
        }
        Ok(witness)
    }

    /// A witness of `values` (the constant 1 first), as a caller computed them.
    pub fn from_values(values: Vec<Scalar>) -> Self {
        Self { values }
    }

    /// The values, the constant 1 first.
    pub fn values(&self) -> &[Scalar] {
        &self.values
    }
}

fn count<R: Read + Seek>(input: &mut R, table: &Table) -> Result<u32, CircomError> {
    let mut reader = header_section(input, table, 8)?;
    Ok(reader.u32(Location::value("header count"))?)
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::circom::BLS12_381_R_LE;

    fn file(values: &[[u8; 32]]) -> Vec<u8> {
        let mut header = 32u32.to_le_bytes().to_vec();
        header.extend(BLS12_381_R_LE);
        header.extend(u32::try_from(values.len()).unwrap().to_le_bytes());
        let body: Vec<u8> = values.iter().flatten().copied().collect();
        let mut out = b"wtns".to_vec();
        out.extend(2u32.to_le_bytes());
        out.extend(2u32.to_le_bytes());
        for (id, s) in [(1u32, &header), (2, &body)] {
            out.extend(id.to_le_bytes());
            out.extend((s.len() as u64).to_le_bytes());
            out.extend(s);
        }
        out
    }

    #[test]
    fn reads_values_and_names_a_bad_one() {
        let one = Scalar::from(1).to_bytes_le();
        let big = Scalar::from(u64::MAX).to_bytes_le();
        let w = Witness::read(Cursor::new(file(&[one, big]))).unwrap();
        assert_eq!(w.values(), [Scalar::from(1), Scalar::from(u64::MAX)]);
        assert_eq!(Witness::read_count(Cursor::new(file(&[one]))).unwrap(), 1);
        let err = Witness::read(Cursor::new(file(&[one, BLS12_381_R_LE])))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "witness value 1: not a canonical element of the scalar field (>= r)"
        );
        let mut wrong = file(&[one]);
        wrong[24 + 36..24 + 40].copy_from_slice(&2u32.to_le_bytes());
        assert_eq!(
            Witness::read(Cursor::new(wrong)).unwrap_err().to_string(),
            "section 2 (witness values) holds 32 bytes, expected 64"
        );
    }
}
