//! snarkjs `.ptau` files (BLS12-381, sections 1-7) in and out.
//!
//! Layout (iden3 binfile): `"ptau"`, u32 LE version 1, u32 LE section count; each section a u32
//! LE id, a u64 LE byte size and its body. Section 1, the header: u32 n8 (48), the base field
//! modulus q (n8 bytes LE), u32 power, u32 ceremony power. Sections 2-6: `tauG1` (2N-1 points),
//! `tauG2` (N), `alphaTauG1` (N), `betaTauG1` (N), `betaG2` (1); section 7: the contributions
//! (a u32 count, then their records). Points are affine, every coordinate 48 bytes little-endian
//! in Montgomery form (`x * 2^384 mod q`), G2 coordinates `c0` then `c1`; infinity is all
//! zeros. Sections 12-15 (Lagrange bases, added by `prepare phase2`) are ignored on import.
//!
//! Export writes sections 1-7 with an empty contribution list: the contributions of a lockstep
//! or gnark chain are proved in gnark's form, which snarkjs cannot check; the powers are what
//! `snarkjs powersoftau prepare phase2` and `groth16 setup` use.

use std::io::{Read, Seek, Write};

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;
use lockstep_shard::{Control, Pool};

use crate::binfile::{SectionReader, Table, read_points};
use crate::codec::{
    CodecError, Compressed, HashingWriter, Limits, Location, PointProblem, write_vector,
};
use crate::curve;
use crate::phase1::{Srs, VerifyError, check_powers};

mod prepare;

pub use prepare::{Prepared, prepare};

/// Why a `.ptau` file cannot be imported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PtauError {
    /// The container: magic, version, section table.
    #[error(transparent)]
    Binfile(#[from] crate::binfile::BinfileError),
    /// The header names another curve.
    #[error("the file is for another curve ({0}), not BLS12-381")]
    Curve(String),
    /// A section that must be present is not.
    #[error("section {0} is missing")]
    MissingSection(u32),
    /// The header section is not 60 bytes (n8, q, power, ceremony power for BLS12-381).
    #[error("section 1 (the header) holds {0} bytes, expected 60")]
    HeaderSize(u64),
    /// A section's size disagrees with the power.
    #[error("section {id} holds {found} bytes, expected {expected} for power {power}")]
    SectionSize {
        /// The section.
        id: u32,
        /// Its size.
        found: u64,
        /// The size the power implies.
        expected: u64,
        /// The header's power.
        power: u32,
    },
    /// The first powers are not the generators.
    #[error("{0} is not the generator")]
    NotGenerator(&'static str),
    /// The powers do not verify.
    #[error(transparent)]
    Verify(#[from] VerifyError),
    /// A point or field failed to decode.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// The powers are fewer than a circuit needs.
    #[error(
        "the .ptau holds powers for 2^{power}; the circuit needs 2^{needed} (a .ptau of power {needed} or more)"
    )]
    TooSmall {
        /// The file's power.
        power: u32,
        /// The power needed.
        needed: u32,
    },
}

impl From<lockstep_shard::Error<std::convert::Infallible>> for PtauError {
    fn from(error: lockstep_shard::Error<std::convert::Infallible>) -> Self {
        Self::Codec(match error {
            lockstep_shard::Error::Cancelled => CodecError::Cancelled,
            lockstep_shard::Error::Memory(refused) => CodecError::Memory {
                what: "a transform's points",
                refused,
            },
            other => CodecError::Worker(other.to_string()),
        })
    }
}

/// What a `.ptau` file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ptau {
    /// The powers.
    pub srs: Srs,
    /// The header's ceremony power (the largest power the ceremony was run for).
    pub ceremony_power: u32,
    /// Contributions recorded in section 7 (not checked: snarkjs proves them in its own form).
    pub contributions: u32,
}

/// The base field modulus q of BLS12-381, little-endian 64-bit limbs.
const Q: [u64; 6] = lockstep_bls12::P;

/// q as 48 little-endian bytes (the `.ptau` header's q).
pub(crate) fn q_bytes() -> [u8; 48] {
    let mut out = [0u8; 48];
    for (chunk, limb) in out.chunks_exact_mut(8).zip(Q) {
        chunk.copy_from_slice(&limb.to_le_bytes());
    }
    out
}

/// One 48-byte little-endian coordinate as limbs, refused unless below q (canonical).
fn limbs(bytes: &[u8]) -> Result<[u64; 6], PointProblem> {
    let mut out = [0u64; 6];
    for (limb, chunk) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        *limb = u64::from_le_bytes(chunk.try_into().expect("invariant: 8-byte chunks"));
    }
    // Compare from the most significant limb.
    for (a, q) in out.iter().rev().zip(Q.iter().rev()) {
        if a != q {
            return if a < q {
                Ok(out)
            } else {
                Err(PointProblem::NonCanonical)
            };
        }
    }
    Err(PointProblem::NonCanonical)
}

fn put_limbs(limbs: &[u64; 6], out: &mut [u8]) {
    for (chunk, limb) in out.chunks_exact_mut(8).zip(limbs) {
        chunk.copy_from_slice(&limb.to_le_bytes());
    }
}

pub(crate) fn g1_from_ptau(bytes: &Compressed<96>) -> Result<G1Affine, PointProblem> {
    let x = limbs(&bytes.0[..48])?;
    let y = limbs(&bytes.0[48..])?;
    Ok(curve::g1_from_montgomery(x, y)?)
}

/// [`g1_from_ptau`] on the curve only: for points whose subgroup another check settles (equal
/// to checked ones, or only hashed).
pub(crate) fn g1_from_ptau_on_curve(bytes: &Compressed<96>) -> Result<G1Affine, PointProblem> {
    let x = limbs(&bytes.0[..48])?;
    let y = limbs(&bytes.0[48..])?;
    Ok(curve::g1_from_montgomery_checked(x, y, false)?)
}

pub(crate) fn g1_to_ptau(point: &G1Affine) -> Compressed<96> {
    // blst holds coordinates in Montgomery form, as .ptau does; infinity is (0, 0) in both.
    let raw: &blst::blst_p1_affine = point.as_ref();
    let mut out = Compressed([0; 96]);
    put_limbs(&raw.x.l, &mut out.0[..48]);
    put_limbs(&raw.y.l, &mut out.0[48..]);
    out
}

pub(crate) fn g2_from_ptau(bytes: &Compressed<192>) -> Result<G2Affine, PointProblem> {
    let c = |i: usize| limbs(&bytes.0[i * 48..(i + 1) * 48]);
    Ok(curve::g2_from_montgomery([c(0)?, c(1)?, c(2)?, c(3)?])?)
}

/// [`g2_from_ptau`] on the curve only (as [`g1_from_ptau_on_curve`]).
pub(crate) fn g2_from_ptau_on_curve(bytes: &Compressed<192>) -> Result<G2Affine, PointProblem> {
    let c = |i: usize| limbs(&bytes.0[i * 48..(i + 1) * 48]);
    Ok(curve::g2_from_montgomery_checked(
        [c(0)?, c(1)?, c(2)?, c(3)?],
        false,
    )?)
}

pub(crate) fn g2_to_ptau(point: &G2Affine) -> Compressed<192> {
    let raw: &blst::blst_p2_affine = point.as_ref();
    let mut out = Compressed([0; 192]);
    for (i, fp) in [&raw.x.fp[0], &raw.x.fp[1], &raw.y.fp[0], &raw.y.fp[1]]
        .iter()
        .enumerate()
    {
        put_limbs(&fp.l, &mut out.0[i * 48..(i + 1) * 48]);
    }
    out
}

/// Section names for errors, as snarkjs names them (sections 2-6, then 12-15).
fn name(id: u32) -> &'static str {
    match id {
        2 => "tauG1",
        3 => "tauG2",
        4 => "alphaTauG1",
        5 => "betaTauG1",
        6 => "betaG2",
        12 => "lagrangeTauG1",
        13 => "lagrangeTauG2",
        14 => "lagrangeAlphaTauG1",
        15 => "lagrangeBetaTauG1",
        _ => "section",
    }
}

/// An open `.ptau`: its section table, checked against its header's power, from which any
/// run of any section's points is read (and checked) on demand.
pub(crate) struct PtauFile {
    table: Table,
    power: u32,
    ceremony_power: u32,
}

impl PtauFile {
    /// Reads the table and the header, and checks every section's size against the power
    /// (sections 12-15, if present, as `prepare phase2` sizes them).
    pub(crate) fn open<R: Read + Seek>(input: &mut R, limits: &Limits) -> Result<Self, PtauError> {
        let table = Table::read(input, "snarkjs .ptau file", "ptau", 1)?;
        let header = table.require(1, "header")?;
        let mut reader = SectionReader::new(input, header)?;
        let n8 = reader.u32(Location::value("header n8"))?;
        if n8 != 48 {
            let guess = if n8 == 32 {
                "a 32-byte base field, as bn128's"
            } else {
                "another base field size"
            };
            return Err(PtauError::Curve(format!("n8 = {n8}: {guess}")));
        }
        let mut q = [0u8; 48];
        reader.fill(&mut q, Location::value("header q"))?;
        if q != q_bytes() {
            return Err(PtauError::Curve(
                "a 48-byte base field other than BLS12-381's".to_owned(),
            ));
        }
        if header.size != 60 {
            return Err(PtauError::HeaderSize(header.size));
        }
        let power = reader.u32(Location::value("header power"))?;
        let ceremony_power = reader.u32(Location::value("header ceremony power"))?;
        let power = limits.check_n(1u64.checked_shl(power).unwrap_or(0), header.offset + 4 + 48)?;
        let n = 1u64 << power;
        let blocks = 2 * n - 1;
        let mut sizes = vec![
            (2, 2 * n - 1, 96),
            (3, n, 192),
            (4, n, 96),
            (5, n, 96),
            (6, 1, 192),
        ];
        if table.get(12).is_some() {
            sizes.extend([
                (12, 2 * blocks + 1, 96),
                (13, blocks, 192),
                (14, blocks, 96),
                (15, blocks, 96),
            ]);
        }
        for (id, points, width) in sizes {
            let found = table.get(id).ok_or(PtauError::MissingSection(id))?.size;
            let expected = points * width;
            if found != expected {
                return Err(PtauError::SectionSize {
                    id,
                    found,
                    expected,
                    power,
                });
            }
        }
        Ok(Self {
            table,
            power,
            ceremony_power,
        })
    }

    /// The powers' `P` (`N = 2^P`).
    pub(crate) fn power(&self) -> u32 {
        self.power
    }

    /// Whether `prepare phase2` wrote the Lagrange sections 12-15.
    pub(crate) fn prepared(&self) -> bool {
        self.table.get(12).is_some()
    }

    /// The table.
    pub(crate) fn table(&self) -> &Table {
        &self.table
    }

    /// Points `first..first + count` of section `id` (whose points are `B`-byte encodings),
    /// each checked; errors name them `tauG1[i]`...
    pub(crate) fn points<P, B, R>(
        &self,
        (pool, control): (&Pool, &Control),
        input: &mut R,
        id: u32,
        (first, count): (u64, usize),
        decode: fn(&B) -> Result<P, PointProblem>,
    ) -> Result<Vec<P>, PtauError>
    where
        P: Copy + Default + Send + Sync,
        B: Copy + Default + Send + Sync + AsMut<[u8]>,
        R: Read + Seek,
    {
        let section = self.table.get(id).ok_or(PtauError::MissingSection(id))?;
        Ok(read_points(
            (pool, control),
            input,
            section,
            name(id),
            (first, count),
            decode,
        )?)
    }
}

/// Reads a `.ptau` file, checking every point (canonical coordinates, on the curve, in the
/// subgroup; the first bad one in file order is the error, named `tauG1[i]`...).
///
/// # Errors
/// [`PtauError`]: not a `.ptau`, another curve or version, missing or mis-sized sections, a bad
/// point, an I/O error.
pub fn read<R: Read + Seek>(
    pool: &Pool,
    control: &Control,
    mut input: R,
    limits: &Limits,
) -> Result<Ptau, PtauError> {
    let file = PtauFile::open(&mut input, limits)?;
    let n = 1usize << file.power;
    let runtime = (pool, control);
    // Both sections' first points, the generators, are checked before any section is decoded
    // in full (a file of zeros, or one whose tauG2 is wrong, fails at once, not after all of
    // tauG1: 2^29 points at power 28); then the sections in order, as snarkjs writes them, so
    // the first bad point in the file is the error.
    let first_g1 = file.points(runtime, &mut input, 2, (0, 1), g1_from_ptau)?;
    if first_g1[0] != curve::g1() {
        return Err(PtauError::NotGenerator("tauG1[0]"));
    }
    let first_g2 = file.points(runtime, &mut input, 3, (0, 1), g2_from_ptau)?;
    if first_g2[0] != curve::g2() {
        return Err(PtauError::NotGenerator("tauG2[0]"));
    }
    let g1_tau = file.points(runtime, &mut input, 2, (0, 2 * n - 1), g1_from_ptau)?;
    let g2_tau = file.points(runtime, &mut input, 3, (0, n), g2_from_ptau)?;
    let alpha_tau = file.points(runtime, &mut input, 4, (0, n), g1_from_ptau)?;
    let beta_tau = file.points(runtime, &mut input, 5, (0, n), g1_from_ptau)?;
    let beta_g2 = file.points(runtime, &mut input, 6, (0, 1), g2_from_ptau)?[0];
    let contributions = match file.table.get(7) {
        Some(s) if s.size >= 4 => {
            SectionReader::new(&mut input, s)?.u32(Location::value("contribution count"))?
        }
        _ => return Err(PtauError::MissingSection(7)),
    };
    Ok(Ptau {
        srs: Srs {
            g1_tau,
            g2_tau,
            alpha_tau,
            beta_tau,
            beta_g2,
        },
        ceremony_power: file.ceremony_power,
        contributions,
    })
}

/// Checks imported powers: the powers of one tau in every vector ([`check_powers`]), alpha and
/// beta non-zero, and `[beta]_2` matching `[beta]_1`.
///
/// # Errors
/// The first check that fails.
pub fn check(pool: &Pool, control: &Control, srs: &Srs) -> Result<(), VerifyError> {
    for (name, point) in [
        ("G1 AlphaTau", &srs.alpha_tau[0]),
        ("G1 BetaTau", &srs.beta_tau[0]),
    ] {
        if bool::from(point.is_identity()) {
            return Err(VerifyError::Ratio {
                location: Some(Location::element(name, 0)),
            });
        }
    }
    if !curve::same_ratio(&srs.beta_tau[0], &curve::g2(), &curve::g1(), &srs.beta_g2) {
        return Err(VerifyError::Ratio {
            location: Some(Location::value("G2 Beta")),
        });
    }
    check_powers(pool, control, srs)
}

/// Writes `srs` as a `.ptau` file (sections 1-7, no recorded contributions) and returns the
/// SHA-256 of the bytes.
///
/// # Errors
/// Writing fails, or the run is cancelled.
pub fn write<W: Write>(
    pool: &Pool,
    control: &Control,
    srs: &Srs,
    out: W,
) -> Result<[u8; 32], CodecError> {
    let n = srs.n() as u64;
    let power = srs.power();
    let mut w = HashingWriter::new(out);
    w.put(b"ptau")?;
    w.put(&1u32.to_le_bytes())?;
    w.put(&7u32.to_le_bytes())?;
    let section = |w: &mut HashingWriter<W>, id: u32, size: u64| -> Result<(), CodecError> {
        w.put(&id.to_le_bytes())?;
        w.put(&size.to_le_bytes())
    };
    section(&mut w, 1, 60)?;
    w.put(&48u32.to_le_bytes())?;
    w.put(&q_bytes())?;
    w.put(&power.to_le_bytes())?;
    w.put(&power.to_le_bytes())?;
    section(&mut w, 2, (2 * n - 1) * 96)?;
    write_vector(pool, control, &mut w, &srs.g1_tau, g1_to_ptau)?;
    section(&mut w, 3, n * 192)?;
    write_vector(pool, control, &mut w, &srs.g2_tau, g2_to_ptau)?;
    section(&mut w, 4, n * 96)?;
    write_vector(pool, control, &mut w, &srs.alpha_tau, g1_to_ptau)?;
    section(&mut w, 5, n * 96)?;
    write_vector(pool, control, &mut w, &srs.beta_tau, g1_to_ptau)?;
    section(&mut w, 6, 192)?;
    w.put(g2_to_ptau(&srs.beta_g2).as_ref())?;
    section(&mut w, 7, 4)?;
    w.put(&0u32.to_le_bytes())?;
    Ok(w.finish()?.0)
}
