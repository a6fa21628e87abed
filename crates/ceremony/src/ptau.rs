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

use std::io::{Read, Seek, SeekFrom, Write};

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;
use lockstep_shard::{Control, Pool};

use crate::codec::{
    CodecError, Compressed, HashingReader, HashingWriter, Limits, Location, PointProblem,
    read_vector, write_vector,
};
use crate::curve;
use crate::phase1::{Srs, VerifyError, check_powers};

/// Why a `.ptau` file cannot be imported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PtauError {
    /// The file does not start with `ptau`.
    #[error("not a snarkjs .ptau file (no \"ptau\" magic)")]
    NotPtau,
    /// Another format version than 1.
    #[error("unsupported .ptau version {0} (expected 1)")]
    Version(u32),
    /// The header names another curve.
    #[error("the file is for another curve ({0}), not BLS12-381")]
    Curve(String),
    /// A section that must be present is not.
    #[error("section {0} is missing")]
    MissingSection(u32),
    /// A section appears twice.
    #[error("section {0} appears twice")]
    DuplicateSection(u32),
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
    /// A section runs past the end of the file.
    #[error("section {id} at byte {offset} runs past the end of the file")]
    SectionBounds {
        /// The section.
        id: u32,
        /// Where its body starts.
        offset: u64,
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
const Q: [u64; 6] = [
    0xb9fe_ffff_ffff_aaab,
    0x1eab_fffe_b153_ffff,
    0x6730_d2a0_f6b0_f624,
    0x6477_4b84_f385_12bf,
    0x4b1b_a7b6_434b_acd7,
    0x1a01_11ea_397f_e69a,
];

/// q as 48 little-endian bytes (the `.ptau` header's q).
fn q_bytes() -> [u8; 48] {
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

fn g1_from_ptau(bytes: &Compressed<96>) -> Result<G1Affine, PointProblem> {
    let x = limbs(&bytes.0[..48])?;
    let y = limbs(&bytes.0[48..])?;
    Ok(curve::g1_from_montgomery(x, y)?)
}

fn g1_to_ptau(point: &G1Affine) -> Compressed<96> {
    // blst holds coordinates in Montgomery form, as .ptau does; infinity is (0, 0) in both.
    let raw: &blst::blst_p1_affine = point.as_ref();
    let mut out = Compressed([0; 96]);
    put_limbs(&raw.x.l, &mut out.0[..48]);
    put_limbs(&raw.y.l, &mut out.0[48..]);
    out
}

fn g2_from_ptau(bytes: &Compressed<192>) -> Result<G2Affine, PointProblem> {
    let c = |i: usize| limbs(&bytes.0[i * 48..(i + 1) * 48]);
    Ok(curve::g2_from_montgomery([c(0)?, c(1)?, c(2)?, c(3)?])?)
}

fn g2_to_ptau(point: &G2Affine) -> Compressed<192> {
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

/// A section's body: where it starts and its size.
#[derive(Clone, Copy)]
struct Section {
    offset: u64,
    size: u64,
}

fn read_u32(
    reader: &mut impl Read,
    location: &'static str,
    offset: u64,
) -> Result<u32, CodecError> {
    let mut b = [0u8; 4];
    HashingReader::at(reader, offset).fill(&mut b, Location::value(location))?;
    Ok(u32::from_le_bytes(b))
}

fn read_u64(
    reader: &mut impl Read,
    location: &'static str,
    offset: u64,
) -> Result<u64, CodecError> {
    let mut b = [0u8; 8];
    HashingReader::at(reader, offset).fill(&mut b, Location::value(location))?;
    Ok(u64::from_le_bytes(b))
}

/// Reads section `id`'s `count` points with `decode` (the input is `len` bytes long).
fn read_section<P, B, R>(
    (pool, control): (&Pool, &Control),
    input: &mut R,
    len: u64,
    (id, section): (u32, Section),
    count: usize,
    decode: fn(&B) -> Result<P, PointProblem>,
) -> Result<Vec<P>, PtauError>
where
    P: Copy + Default + Send + Sync,
    B: Copy + Default + Send + Sync + AsMut<[u8]>,
    R: Read + Seek,
{
    input
        .seek(SeekFrom::Start(section.offset))
        .map_err(CodecError::Io)?;
    let mut reader = HashingReader::at(input, section.offset).with_end(Some(len));
    let name = NAMES[id as usize - 2];
    Ok(read_vector(
        pool,
        control,
        &mut reader,
        name,
        0,
        count,
        decode,
        None,
    )?)
}

/// Section names for errors, as snarkjs names them.
const NAMES: [&str; 6] = [
    "tauG1",
    "tauG2",
    "alphaTauG1",
    "betaTauG1",
    "betaG2",
    "contributions",
];

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
    let len = input.seek(SeekFrom::End(0)).map_err(CodecError::Io)?;
    input.seek(SeekFrom::Start(0)).map_err(CodecError::Io)?;
    let mut magic = [0u8; 4];
    if len < 4 || {
        HashingReader::new(&mut input).fill(&mut magic, Location::value("magic"))?;
        magic != *b"ptau"
    } {
        return Err(PtauError::NotPtau);
    }
    let version = read_u32(&mut input, "version", 4)?;
    if version != 1 {
        return Err(PtauError::Version(version));
    }
    let count = read_u32(&mut input, "section count", 8)?;
    let mut sections: [Option<Section>; 8] = [None; 8];
    let mut offset = 12u64;
    for _ in 0..count {
        let id = read_u32(&mut input, "section id", offset)?;
        let size = read_u64(&mut input, "section size", offset + 4)?;
        let body = offset + 12;
        if size > len.saturating_sub(body) {
            return Err(PtauError::SectionBounds { id, offset: body });
        }
        if let Some(slot) = sections.get_mut(id as usize) {
            if slot.is_some() {
                return Err(PtauError::DuplicateSection(id));
            }
            *slot = Some(Section { offset: body, size });
        }
        offset = body + size;
        input
            .seek(SeekFrom::Start(offset))
            .map_err(CodecError::Io)?;
    }
    // One rule with the phase 1 reader: a file is its content and nothing after it (the
    // sections the table lists, here; snarkjs's extra sections are sections, not trailing).
    if offset < len {
        return Err(CodecError::TrailingBytes { offset }.into());
    }
    let section = |id: u32| sections[id as usize].ok_or(PtauError::MissingSection(id));

    let header = section(1)?;
    input
        .seek(SeekFrom::Start(header.offset))
        .map_err(CodecError::Io)?;
    let n8 = read_u32(&mut input, "header n8", header.offset)?;
    if n8 != 48 {
        let guess = if n8 == 32 {
            "a 32-byte base field, as bn128's"
        } else {
            "another base field size"
        };
        return Err(PtauError::Curve(format!("n8 = {n8}: {guess}")));
    }
    let mut q = [0u8; 48];
    HashingReader::at(&mut input, header.offset + 4).fill(&mut q, Location::value("header q"))?;
    if q != q_bytes() {
        return Err(PtauError::Curve(
            "a 48-byte base field other than BLS12-381's".to_owned(),
        ));
    }
    if header.size != 60 {
        return Err(PtauError::HeaderSize(header.size));
    }
    let power = read_u32(&mut input, "header power", header.offset + 52)?;
    let ceremony_power = read_u32(&mut input, "header ceremony power", header.offset + 56)?;
    let n = limits.check_n(1u64.checked_shl(power).unwrap_or(0), header.offset + 52)?;
    let n = 1usize << n;

    let sizes = [
        (2, 2 * n - 1, 96),
        (3, n, 192),
        (4, n, 96),
        (5, n, 96),
        (6, 1, 192),
    ];
    for (id, points, width) in sizes {
        let found = section(id)?.size;
        let expected = (points * width) as u64;
        if found != expected {
            return Err(PtauError::SectionSize {
                id,
                found,
                expected,
                power,
            });
        }
    }
    let runtime = (pool, control);
    // Both sections' first points, the generators, are checked before any section is decoded
    // in full (a file of zeros, or one whose tauG2 is wrong, fails at once, not after all of
    // tauG1: 2^29 points at power 28); then the sections in order, as snarkjs writes them, so
    // the first bad point in the file is the error.
    let first_g1 = read_section(runtime, &mut input, len, (2, section(2)?), 1, g1_from_ptau)?;
    if first_g1[0] != curve::g1() {
        return Err(PtauError::NotGenerator("tauG1[0]"));
    }
    let first_g2 = read_section(runtime, &mut input, len, (3, section(3)?), 1, g2_from_ptau)?;
    if first_g2[0] != curve::g2() {
        return Err(PtauError::NotGenerator("tauG2[0]"));
    }
    let g1_tau = read_section(
        runtime,
        &mut input,
        len,
        (2, section(2)?),
        2 * n - 1,
        g1_from_ptau,
    )?;
    let g2_tau = read_section(runtime, &mut input, len, (3, section(3)?), n, g2_from_ptau)?;
    let alpha_tau = read_section(runtime, &mut input, len, (4, section(4)?), n, g1_from_ptau)?;
    let beta_tau = read_section(runtime, &mut input, len, (5, section(5)?), n, g1_from_ptau)?;
    let beta_g2 = read_section(runtime, &mut input, len, (6, section(6)?), 1, g2_from_ptau)?[0];
    let contributions = match sections[7] {
        Some(s) if s.size >= 4 => {
            input
                .seek(SeekFrom::Start(s.offset))
                .map_err(CodecError::Io)?;
            read_u32(&mut input, "contribution count", s.offset)?
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
        ceremony_power,
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
