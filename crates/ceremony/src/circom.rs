//! circom's files over BLS12-381: the constraint system (`.r1cs`, [`CircomR1cs`]) and the
//! witness (`.wtns`, [`Witness`]), as circom 2 writes them with `--prime bls12381` and as
//! snarkjs 0.7.6 reads them (`r1csfile`, `wtns_utils.js`).
//!
//! Both are iden3 containers ([`crate::binfile`]) read through their section tables (sections in
//! any order), every count bounded by the bytes of its section before anything is allocated for
//! it, every field element canonical (below r), every wire below the header's wire count; an
//! error names the section, the constraint, the side and the term (`constraint 17, B term 2:
//! wire 90 is not below the 64 wires`).

pub(crate) mod r1cs;
mod wtns;

pub use r1cs::{CircomR1cs, LcTerm, R1csHeader};
pub use wtns::Witness;

use crate::binfile::BinfileError;
use crate::codec::CodecError;

/// The scalar field r of BLS12-381, little-endian (circom's and snarkjs's `prime` field).
pub(crate) const BLS12_381_R_LE: [u8; 32] =
    le_32("73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001");

/// The scalar field of BN254 (circom's default `bn128`), little-endian: a file compiled without
/// `--prime bls12381` is named as such.
const BN254_R_LE: [u8; 32] =
    le_32("30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001");

/// 32 little-endian bytes of a 64-digit big-endian hex constant.
const fn le_32(hex: &str) -> [u8; 32] {
    let digits = hex.as_bytes();
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        out[31 - i] = (nibble(digits[2 * i]) << 4) | nibble(digits[2 * i + 1]);
        i += 1;
    }
    out
}

const fn nibble(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => panic!("invariant: lower-case hex"),
    }
}

/// `n` with its thousands separated by commas, as the CLI prints counts (`4,096`).
pub(crate) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Why a circom file was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CircomError {
    /// The container (magic, version, section table).
    #[error(transparent)]
    Binfile(#[from] BinfileError),
    /// A read error, or the file ends inside a value.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// The file's field is not BLS12-381's scalar field.
    #[error("the file is over {0}, not BLS12-381's scalar field{hint}", hint = if .0.starts_with("BN254") { " (compile with `circom --prime bls12381`)" } else { "" })]
    Field(String),
    /// The header's counts contradict each other.
    #[error("header: {0}")]
    Header(String),
    /// A constraint's term is malformed.
    #[error("constraint {constraint}, {side} term {term}: {problem}")]
    Term {
        /// The constraint's index.
        constraint: u32,
        /// `A`, `B` or `C`.
        side: char,
        /// The term's index within its linear combination.
        term: u32,
        /// What is wrong.
        problem: String,
    },
    /// A witness value is not a canonical field element.
    #[error("witness value {index}: not a canonical element of the scalar field (>= r)")]
    Value {
        /// Its index.
        index: u64,
    },
    /// The circuit uses custom gates (PLONK only).
    #[error(
        "the circuit uses custom gates (sections 4 and 5): they are PLONK's, Groth16 cannot set it up"
    )]
    CustomGates,
    /// A witness of another length than the circuit's wires.
    #[error(
        "the witness holds {witness} values, the circuit has {wires} wires: a witness of another circuit"
    )]
    WitnessWires {
        /// The witness's values.
        witness: usize,
        /// The circuit's wires.
        wires: u32,
    },
    /// The first constraint the witness does not satisfy, in file order.
    #[error(
        "constraint {} of {} does not hold for this witness (A * B != C; counted from 0 in the .r1cs's order)",
        grouped(u64::from(*index)),
        grouped(u64::from(*count))
    )]
    Unsatisfied {
        /// Its index.
        index: u32,
        /// The circuit's constraints.
        count: u32,
    },
    /// Memory for the file's contents could not be allocated.
    #[error("{what}: {refused}")]
    Memory {
        /// What was being read.
        what: &'static str,
        /// The bytes refused.
        refused: lockstep_shard::memory::AllocError,
    },
}

/// A little-endian u32 from the first 4 bytes of `b` (at least 4).
pub(crate) fn le_u32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    u32::from_le_bytes(a)
}

/// A scalar from 32 little-endian bytes in standard form, if canonical (below r).
pub(crate) fn scalar_le(b: &[u8]) -> Option<blstrs::Scalar> {
    let mut a = [0u8; 32];
    a.copy_from_slice(&b[..32]);
    blstrs::Scalar::from_bytes_le(&a).into()
}

/// Checks a header's field: `n8` bytes of `prime` must be BLS12-381's r.
fn check_field(n8: u32, prime: &[u8]) -> Result<(), CircomError> {
    if n8 == 32 && prime == BLS12_381_R_LE {
        return Ok(());
    }
    Err(CircomError::Field(if n8 == 32 && prime == BN254_R_LE {
        "BN254 (bn128)".to_owned()
    } else {
        format!("a {n8}-byte prime field")
    }))
}

/// Section 1 of a circom file: its field checked, and its size `n8 + rest` (the counts after
/// the prime); the reader is left at the first count.
fn header_section<'a, R: std::io::Read + std::io::Seek>(
    input: &'a mut R,
    table: &crate::binfile::Table,
    rest: u64,
) -> Result<crate::binfile::SectionReader<'a, R>, CircomError> {
    let section = table.require(1, "header")?;
    let mut reader = crate::binfile::SectionReader::new(input, section)?;
    let n8 = read_field(&mut reader)?;
    let expected = u64::from(n8) + rest;
    if section.size != expected {
        return Err(BinfileError::SectionSize {
            id: 1,
            name: "header",
            found: section.size,
            expected,
        }
        .into());
    }
    Ok(reader)
}

/// Reads a field's `n8` and prime (at most 64 bytes: no curve circom knows has more).
fn read_field<R: std::io::Read>(
    section: &mut crate::binfile::SectionReader<'_, R>,
) -> Result<u32, CircomError> {
    use crate::codec::Location;
    let n8 = section.u32(Location::value("header n8"))?;
    if n8 == 0 || n8 > 64 || u64::from(n8) > section.left() {
        return Err(CircomError::Field(format!("a {n8}-byte prime field")));
    }
    let mut prime = vec![0u8; n8 as usize];
    section.fill(&mut prime, Location::value("header prime"))?;
    check_field(n8, &prime)?;
    Ok(n8)
}
