//! Reading and writing `.zkey` files (the layout is in the module above).
//!
//! # Checks on reading
//! The container's table; Groth16; BLS12-381's q and r; `nPublic < nVars`; a power-of-two
//! domain within [`Limits::max_power`]; every section's size against the header's counts;
//! every point canonical, on its curve and in its subgroup (the first bad one named,
//! `A[17]`); the contributions' records within section 10, their parameters as snarkjs
//! reads them (sorted ids 1, 2, 3).
//!
//! # Memory
//! The key in memory: `96 (3 nVars + domainSize + nPublic) + 192 nVars` bytes of points,
//! plus the coefficient section as stored (44 bytes an entry).

use std::io::{Read, Seek, Write};

use blstrs::{G1Affine, G2Affine};
use lockstep_shard::{Control, Pool, memory};

use super::{Contribution, Header, Zkey, ZkeyError};
use crate::binfile::{SectionReader, Table, read_points, write_head, write_section_header};
use crate::circom::BLS12_381_R_LE;
use crate::codec::{CodecError, HashingWriter, Limits, Location, write_vector};
use crate::codec::{Compressed, KeyChecks, PointProblem};
use crate::ptau::{
    g1_from_ptau, g1_from_ptau_on_curve, g1_to_ptau, g2_from_ptau, g2_from_ptau_on_curve,
    g2_to_ptau, q_bytes,
};

/// Which points a read checks in their subgroups (every point is checked on its curve).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Checks {
    /// Every point.
    Subgroups,
    /// All but sections 3 and 5-7, which a verifier settles by comparing them with a checked
    /// key's.
    VerifierSettles,
    /// The header's and section 3's only: a prover checks its proof instead.
    Prover,
}

type G1Decode = fn(&Compressed<96>) -> Result<G1Affine, PointProblem>;
type G2Decode = fn(&Compressed<192>) -> Result<G2Affine, PointProblem>;

/// The section order `zkey new` writes.
pub const NEW_ORDER: [u32; 10] = [1, 2, 4, 3, 9, 8, 5, 6, 7, 10];

/// The section order `zkey contribute` and `zkey beacon` write.
pub const ORDER: [u32; 10] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

/// Section 2's size.
const HEADER_LEN: u64 = 4 + 48 + 4 + 32 + 4 + 4 + 4 + 3 * 96 + 3 * 192;

/// A contribution record's fixed part: three G1 points, one G2, the transcript, type and
/// parameter length.
const CONTRIBUTION_FIXED: u64 = 3 * 96 + 192 + 64 + 4 + 4;

/// Names of the point sections, for errors.
pub(crate) fn name(id: u32) -> &'static str {
    match id {
        3 => "IC",
        5 => "A",
        6 => "B1",
        7 => "B2",
        8 => "C",
        9 => "H",
        _ => "point",
    }
}

impl Contribution {
    /// The parameters as snarkjs's `writeContribution` encodes them: the name (its first 64
    /// UTF-16 units, as JavaScript's `substring(0, 64)`, in UTF-8) if any; for a beacon the
    /// iteration exponent and the hash.
    ///
    /// # Errors
    /// A beacon without its hash or with one of more than 255 bytes (snarkjs's length byte; it
    /// throws on a missing one): [`CodecError::TooMany`].
    pub(crate) fn params(&self) -> Result<Vec<u8>, CodecError> {
        let mut out = Vec::new();
        if let Some(name) = &self.name
            && !name.is_empty()
        {
            let bytes = js_substring_64(name);
            out.push(1);
            out.push(
                u8::try_from(bytes.len())
                    .expect("invariant: 64 UTF-16 units are at most 192 bytes"),
            );
            out.extend(bytes);
        }
        if self.kind == 1 {
            let hash = match self.beacon_hash.as_deref() {
                Some(hash) if !hash.is_empty() && hash.len() <= 255 => hash,
                other => {
                    return Err(CodecError::TooMany {
                        what: "a beacon's hash bytes (1 to 255)",
                        count: other.map_or(0, |h| h.len() as u64),
                        max: 255,
                        offset: 0,
                    });
                }
            };
            out.push(2);
            // snarkjs writes a missing exponent as 0 (a Uint8Array's undefined).
            out.push(self.iterations_exp.unwrap_or(0));
            out.push(3);
            out.push(u8::try_from(hash.len()).expect("invariant: checked above"));
            out.extend(hash);
        }
        Ok(out)
    }
}

/// The length of a `.zkey` made by one contribution (not a beacon) named `name` on a key of
/// `previous_len` bytes: the record (its points, transcript, type, parameter length: 552
/// bytes) and its parameters (the name as snarkjs encodes it). Every other section keeps its
/// size, whichever order the previous key's sections were in. A coordinator bounds an upload
/// by it before reading it.
///
/// # Panics
/// Never: a contribution's parameters (a name at most) always encode.
pub fn contribution_len(previous_len: u64, name: Option<&str>) -> u64 {
    let record = Contribution {
        delta_after: G1Affine::default(),
        g1_s: G1Affine::default(),
        g1_sx: G1Affine::default(),
        g2_spx: G2Affine::default(),
        transcript: [0; 64],
        kind: 0,
        name: name.map(str::to_owned),
        iterations_exp: None,
        beacon_hash: None,
    };
    let params = record
        .params()
        .expect("invariant: a contribution (not a beacon) always encodes");
    previous_len + CONTRIBUTION_FIXED + params.len() as u64
}

/// `s.substring(0, 64)` encoded by `TextEncoder`: a surrogate pair cut in half leaves a lone
/// surrogate, which the encoder writes as U+FFFD.
fn js_substring_64(s: &str) -> Vec<u8> {
    let mut units = 0usize;
    let mut out = String::new();
    for c in s.chars() {
        let width = c.len_utf16();
        if units + width > 64 {
            if units < 64 {
                out.push('\u{fffd}');
            }
            break;
        }
        units += width;
        out.push(c);
    }
    out.into_bytes()
}

/// How a read decodes each section's points.
#[derive(Clone, Copy)]
pub(crate) struct Decoders {
    ic: G1Decode,
    ab: G1Decode,
    pub(crate) g2: G2Decode,
    ch: G1Decode,
}

impl Decoders {
    fn of(checks: Checks) -> Self {
        let (ab, g2): (G1Decode, G2Decode) = if checks == Checks::Subgroups {
            (g1_from_ptau, g2_from_ptau)
        } else {
            (g1_from_ptau_on_curve, g2_from_ptau_on_curve)
        };
        let (ic, ch): (G1Decode, G1Decode) = match checks {
            Checks::Subgroups => (g1_from_ptau, g1_from_ptau),
            Checks::VerifierSettles => (g1_from_ptau_on_curve, g1_from_ptau),
            Checks::Prover => (g1_from_ptau, g1_from_ptau_on_curve),
        };
        Self { ic, ab, g2, ch }
    }

    /// The decoder of G1 section `id` (5, 6, 8 or 9).
    pub(crate) fn g1(self, id: u32) -> G1Decode {
        match id {
            5 | 6 => self.ab,
            8 | 9 => self.ch,
            _ => unreachable!("invariant: sections 5, 6, 8 and 9 hold the G1 vectors"),
        }
    }
}

/// Section 4's entries checked or read at a time by a streamed read.
pub(crate) const COEFFICIENT_BLOCK: usize = 4096;

/// Sections 5-9's place in [`Head::vectors`].
pub(crate) fn vector_index(id: u32) -> usize {
    assert!(
        (5..=9).contains(&id),
        "invariant: sections 5-9 hold the vectors"
    );
    (id - 5) as usize
}

/// A `.zkey` read up to its vectors: sections 1-3 read and checked, section 4 checked (and
/// read, if asked), sections 5-9 located and their sizes checked against the header.
pub(crate) struct Head {
    pub(crate) table: Table,
    pub(crate) header: Header,
    pub(crate) ic: Vec<G1Affine>,
    /// Section 4 as stored, if read (`load_coefficients`); else checked and located only.
    pub(crate) coefficients: Option<Vec<u8>>,
    /// Section 4's body and its entry count.
    pub(crate) coefficients_at: (crate::binfile::Section, u32),
    /// Sections 5-9 ([`vector_index`]) and their point counts.
    pub(crate) vectors: [(crate::binfile::Section, usize); 5],
    pub(crate) decoders: Decoders,
}

/// Reads a `.zkey`'s [`Head`].
pub(crate) fn read_head<R: Read + Seek>(
    pool: &Pool,
    control: &Control,
    input: &mut R,
    limits: &Limits,
    (checks, load_coefficients): (Checks, bool),
) -> Result<Head, ZkeyError> {
    let decoders = Decoders::of(checks);
    let table = Table::read(&mut *input, "snarkjs .zkey file", "zkey", 1)?;
    let protocol = {
        let s = table.sized(1, "protocol", 4)?;
        SectionReader::new(&mut *input, s)?.u32(Location::value("protocol"))?
    };
    if protocol != 1 {
        return Err(ZkeyError::Protocol(protocol));
    }
    let header = read_header(pool, control, &mut *input, &table, limits)?;
    let (n_vars, n_public) = (header.n_vars, header.n_public);
    let n = 1u32 << header.power;
    let ic = {
        let count = n_public + 1;
        let section = table.sized(3, name(3), u64::from(count) * 96)?;
        read_points(
            (pool, control),
            &mut *input,
            section,
            name(3),
            (0, count as usize),
            decoders.ic,
        )?
    };
    let (coefficients, coefficients_at) = {
        let s = table.require(4, "coefficients")?;
        let mut reader = SectionReader::new(&mut *input, s)?;
        let count = reader.u32(Location::value("coefficient count"))?;
        let expected = 4 + 44 * u64::from(count);
        if s.size != expected {
            return Err(crate::binfile::BinfileError::SectionSize {
                id: 4,
                name: "coefficients",
                found: s.size,
                expected,
            }
            .into());
        }
        if load_coefficients {
            let mut bytes = memory::try_filled(4 + 44 * count as usize, 0u8)
                .map_err(ZkeyError::memory("the coefficients"))?;
            bytes[..4].copy_from_slice(&count.to_le_bytes());
            reader.fill(&mut bytes[4..], Location::value("coefficients"))?;
            check_coefficients(&bytes, &header)?;
            (Some(bytes), (s, count))
        } else {
            // Checked a block at a time, not kept: the prover reads it again as it sums.
            let mut block = vec![0u8; 44 * COEFFICIENT_BLOCK];
            let mut done = 0usize;
            while done < count as usize {
                let take = (count as usize - done).min(COEFFICIENT_BLOCK);
                reader.fill(&mut block[..44 * take], Location::value("coefficients"))?;
                check_entries(done, &block[..44 * take], &header)?;
                done += take;
            }
            (None, (s, count))
        }
    };
    let mut vectors = [(crate::binfile::Section { offset: 0, size: 0 }, 0); 5];
    for (id, count, width) in [
        (5, n_vars, 96),
        (6, n_vars, 96),
        (7, n_vars, 192),
        (8, n_vars - n_public - 1, 96),
        (9, n, 96),
    ] {
        let section = table.sized(id, name(id), u64::from(count) * width)?;
        vectors[vector_index(id)] = (section, count as usize);
    }
    Ok(Head {
        table,
        header,
        ic,
        coefficients,
        coefficients_at,
        vectors,
        decoders,
    })
}

impl Zkey {
    /// Reads and checks a `.zkey` (see the module's checks).
    ///
    /// # Errors
    /// [`ZkeyError`]: not a `.zkey`, another protocol or curve, a malformed header or section,
    /// a bad point (named), memory, a read error, cancellation.
    pub fn read<R: Read + Seek>(
        pool: &Pool,
        control: &Control,
        input: R,
        limits: &Limits,
    ) -> Result<Self, ZkeyError> {
        Self::read_with(pool, control, input, limits, Checks::Subgroups)
    }

    /// [`read`](Self::read) for a prover, by `checks`:
    /// - [`KeyChecks::Subgroups`]: every point in its subgroup, as [`read`](Self::read). The
    ///   default for a key from someone else: a key point outside its subgroup puts a small
    ///   order component in the proof, and whether the proof is refused for it (see
    ///   [`prove`](crate::prove::snarkjs::prove)) can tell the key's maker, over many proofs,
    ///   the witness's residues modulo the cofactor's small primes.
    /// - [`KeyChecks::Curve`]: the header's and IC's points in their subgroups, sections 5-9
    ///   (A, B1, B2, C, H) on their curves only. For a key you made, or that
    ///   [`verify_file`](crate::zkey::verify_file) checked: a subgroup check costs tens of
    ///   microseconds a point, most of a proof's time. The prover still checks the proof's
    ///   points in their subgroups, so a bad point can only make the proof refused.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn read_for_proving<R: Read + Seek>(
        pool: &Pool,
        control: &Control,
        input: R,
        limits: &Limits,
        checks: KeyChecks,
    ) -> Result<Self, ZkeyError> {
        let checks = match checks {
            KeyChecks::Subgroups => Checks::Subgroups,
            KeyChecks::Curve => Checks::Prover,
        };
        Self::read_with(pool, control, input, limits, checks)
    }

    /// [`read`](Self::read), with sections 3 and 5-7 (IC, A, B1, B2) checked on their curves
    /// only unless `subgroups`: for a verifier that then requires each of their points to
    /// equal a checked point of the initial key, which settles its subgroup.
    pub(crate) fn read_with<R: Read + Seek>(
        pool: &Pool,
        control: &Control,
        mut input: R,
        limits: &Limits,
        checks: Checks,
    ) -> Result<Self, ZkeyError> {
        let head = read_head(pool, control, &mut input, limits, (checks, true))?;
        let runtime = (pool, control);
        let g1 = |input: &mut R, id: u32| {
            let (section, count) = head.vectors[vector_index(id)];
            read_points(
                runtime,
                input,
                section,
                name(id),
                (0, count),
                head.decoders.g1(id),
            )
        };
        let a = g1(&mut input, 5)?;
        let b1 = g1(&mut input, 6)?;
        let b2 = {
            let (section, count) = head.vectors[vector_index(7)];
            read_points(
                runtime,
                &mut input,
                section,
                "B2",
                (0, count),
                head.decoders.g2,
            )?
        };
        let c = g1(&mut input, 8)?;
        let h = g1(&mut input, 9)?;
        let (circuit_hash, contributions) = read_contributions(&mut input, &head.table)?;
        Ok(Self {
            header: head.header,
            ic: head.ic,
            coefficients: head
                .coefficients
                .expect("invariant: read_head loads section 4 when asked"),
            a,
            b1,
            b2,
            c,
            h,
            circuit_hash,
            contributions,
        })
    }

    /// Writes the key with its sections in `order` ([`NEW_ORDER`] or [`ORDER`]), returning the
    /// SHA-256 of the bytes.
    ///
    /// # Errors
    /// A write error, cancellation.
    ///
    /// # Panics
    /// If `order` is not a permutation of 1..=10 (a programming error).
    pub fn write<W: Write>(
        &self,
        pool: &Pool,
        control: &Control,
        order: &[u32; 10],
        out: W,
    ) -> Result<[u8; 32], CodecError> {
        let mut sorted = *order;
        sorted.sort_unstable();
        assert_eq!(
            sorted, ORDER,
            "invariant: the order is a permutation of 1..=10"
        );
        let mut w = HashingWriter::new(out);
        write_head(&mut w, b"zkey", 1, 10)?;
        let h = &self.header;
        for &id in order {
            match id {
                1 => {
                    write_section_header(&mut w, 1, 4)?;
                    w.put(&1u32.to_le_bytes())?;
                }
                2 => {
                    write_section_header(&mut w, 2, HEADER_LEN)?;
                    w.put(&48u32.to_le_bytes())?;
                    w.put(&q_bytes())?;
                    w.put(&32u32.to_le_bytes())?;
                    w.put(&BLS12_381_R_LE)?;
                    w.put(&h.n_vars.to_le_bytes())?;
                    w.put(&h.n_public.to_le_bytes())?;
                    w.put(&(1u32 << h.power).to_le_bytes())?;
                    w.put(g1_to_ptau(&h.alpha1).as_ref())?;
                    w.put(g1_to_ptau(&h.beta1).as_ref())?;
                    w.put(g2_to_ptau(&h.beta2).as_ref())?;
                    w.put(g2_to_ptau(&h.gamma2).as_ref())?;
                    w.put(g1_to_ptau(&h.delta1).as_ref())?;
                    w.put(g2_to_ptau(&h.delta2).as_ref())?;
                }
                4 => {
                    write_section_header(&mut w, 4, self.coefficients.len() as u64)?;
                    w.put(&self.coefficients)?;
                }
                7 => {
                    write_section_header(&mut w, 7, self.b2.len() as u64 * 192)?;
                    write_vector(pool, control, &mut w, &self.b2, g2_to_ptau)?;
                }
                10 => {
                    let records = self
                        .contributions
                        .iter()
                        .map(|c| Ok((c.params()?, c)))
                        .collect::<Result<Vec<(Vec<u8>, &Contribution)>, CodecError>>()?;
                    let size = 64
                        + 4
                        + records
                            .iter()
                            .map(|(p, _)| CONTRIBUTION_FIXED + p.len() as u64)
                            .sum::<u64>();
                    write_section_header(&mut w, 10, size)?;
                    w.put(&self.circuit_hash)?;
                    w.put(&count_u32("contributions", records.len())?.to_le_bytes())?;
                    for (params, c) in records {
                        w.put(g1_to_ptau(&c.delta_after).as_ref())?;
                        w.put(g1_to_ptau(&c.g1_s).as_ref())?;
                        w.put(g1_to_ptau(&c.g1_sx).as_ref())?;
                        w.put(g2_to_ptau(&c.g2_spx).as_ref())?;
                        w.put(&c.transcript)?;
                        w.put(&c.kind.to_le_bytes())?;
                        w.put(&count_u32("parameter bytes", params.len())?.to_le_bytes())?;
                        w.put(&params)?;
                    }
                }
                _ => {
                    let points = match id {
                        3 => &self.ic,
                        5 => &self.a,
                        6 => &self.b1,
                        8 => &self.c,
                        _ => &self.h,
                    };
                    write_section_header(&mut w, id, points.len() as u64 * 96)?;
                    write_vector(pool, control, &mut w, points, g1_to_ptau)?;
                }
            }
        }
        Ok(w.finish()?.0)
    }
}

/// A count as the u32 the format stores.
fn count_u32(what: &'static str, n: usize) -> Result<u32, CodecError> {
    u32::try_from(n).map_err(|_| CodecError::TooMany {
        what,
        count: n as u64,
        max: u64::from(u32::MAX),
        offset: 0,
    })
}

fn read_header<R: Read + Seek>(
    pool: &Pool,
    control: &Control,
    input: &mut R,
    table: &Table,
    limits: &Limits,
) -> Result<Header, ZkeyError> {
    let section = table.require(2, "header")?;
    let mut reader = SectionReader::new(input, section)?;
    let n8q = reader.u32(Location::value("header n8q"))?;
    if n8q != 48 {
        return Err(ZkeyError::Curve(if n8q == 32 {
            "a 32-byte base field, as BN254's".to_owned()
        } else {
            format!("a {n8q}-byte base field")
        }));
    }
    let mut q = [0u8; 48];
    reader.fill(&mut q, Location::value("header q"))?;
    if q != q_bytes() {
        return Err(ZkeyError::Curve(
            "a 48-byte base field other than BLS12-381's".to_owned(),
        ));
    }
    let n8r = reader.u32(Location::value("header n8r"))?;
    let mut r = [0u8; 32];
    if n8r != 32 || {
        reader.fill(&mut r, Location::value("header r"))?;
        r != BLS12_381_R_LE
    } {
        return Err(ZkeyError::Curve(
            "a scalar field other than BLS12-381's".to_owned(),
        ));
    }
    if section.size != HEADER_LEN {
        return Err(crate::binfile::BinfileError::SectionSize {
            id: 2,
            name: "header",
            found: section.size,
            expected: HEADER_LEN,
        }
        .into());
    }
    let n_vars = reader.u32(Location::value("header nVars"))?;
    let n_public = reader.u32(Location::value("header nPublic"))?;
    let domain_at = reader.offset();
    let domain = reader.u32(Location::value("header domainSize"))?;
    let power = limits.check_n(u64::from(domain), domain_at)?;
    if n_public >= n_vars {
        return Err(ZkeyError::Format(format!(
            "header: {n_public} public signals need more than {n_vars} wires"
        )));
    }
    let points = |input: &mut R,
                  at: u64,
                  name,
                  g2: bool|
     -> Result<(Option<G1Affine>, Option<G2Affine>), ZkeyError> {
        let s = crate::binfile::Section {
            offset: at,
            size: if g2 { 192 } else { 96 },
        };
        if g2 {
            Ok((
                None,
                Some(read_points((pool, control), input, s, name, (0, 1), g2_from_ptau)?[0]),
            ))
        } else {
            Ok((
                Some(read_points((pool, control), input, s, name, (0, 1), g1_from_ptau)?[0]),
                None,
            ))
        }
    };
    let at = section.offset + 4 + 48 + 4 + 32 + 12;
    let g1 = |input: &mut R, at, name| -> Result<G1Affine, ZkeyError> {
        Ok(points(input, at, name, false)?
            .0
            .expect("invariant: a G1 point asked"))
    };
    let g2 = |input: &mut R, at, name| -> Result<G2Affine, ZkeyError> {
        Ok(points(input, at, name, true)?
            .1
            .expect("invariant: a G2 point asked"))
    };
    Ok(Header {
        n_vars,
        n_public,
        power,
        alpha1: g1(input, at, "alpha_1")?,
        beta1: g1(input, at + 96, "beta_1")?,
        beta2: g2(input, at + 192, "beta_2")?,
        gamma2: g2(input, at + 384, "gamma_2")?,
        delta1: g1(input, at + 576, "delta_1")?,
        delta2: g2(input, at + 672, "delta_2")?,
    })
}

/// Checks every coefficient entry: matrix 0 or 1, the constraint inside the domain, the signal
/// a wire, the value below r.
pub(crate) fn check_coefficients(bytes: &[u8], header: &Header) -> Result<(), ZkeyError> {
    check_entries(0, &bytes[4..], header)
}

/// [`check_coefficients`] over entries `first..` of section 4 (44 bytes each, no count).
pub(crate) fn check_entries(
    first: usize,
    entries: &[u8],
    header: &Header,
) -> Result<(), ZkeyError> {
    for (i, entry) in (first..).zip(entries.chunks_exact(44)) {
        let word = |k: usize| {
            u32::from_le_bytes(
                entry[4 * k..4 * k + 4]
                    .try_into()
                    .expect("invariant: 4 bytes"),
            )
        };
        let (matrix, constraint, signal) = (word(0), word(1), word(2));
        let problem = if matrix > 1 {
            Some(format!("matrix {matrix} (0 = A, 1 = B)"))
        } else if u64::from(constraint) >= 1u64 << header.power {
            Some(format!(
                "constraint {constraint} outside the domain of {}",
                1u64 << header.power
            ))
        } else if signal >= header.n_vars {
            Some(format!(
                "signal {signal} is not below the {} wires",
                header.n_vars
            ))
        } else if bool::from(
            blstrs::Scalar::from_bytes_le(entry[12..].try_into().expect("invariant: 32 bytes"))
                .is_none(),
        ) {
            Some("the value is not below r".to_owned())
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(ZkeyError::Format(format!(
                "section 4, coefficient {i}: {problem}"
            )));
        }
    }
    Ok(())
}

pub(crate) fn read_contributions<R: Read + Seek>(
    input: &mut R,
    table: &Table,
) -> Result<([u8; 64], Vec<Contribution>), ZkeyError> {
    let section = table.require(10, "contributions")?;
    let mut reader = SectionReader::new(input, section)?;
    let mut hash = [0u8; 64];
    reader.fill(&mut hash, Location::value("circuit hash"))?;
    let count = reader.u32(Location::value("contribution count"))?;
    if u64::from(count) * CONTRIBUTION_FIXED > reader.left() {
        return Err(ZkeyError::Format(format!(
            "section 10: {count} contributions cannot fit in its {} bytes",
            section.size
        )));
    }
    let mut out = Vec::with_capacity(count as usize);
    for index in 0..count {
        let at = |what| Location::element(what, u64::from(index));
        let g1 = |reader: &mut SectionReader<'_, R>, what| -> Result<G1Affine, ZkeyError> {
            let offset = reader.offset();
            let mut b = Compressed([0u8; 96]);
            reader.fill(&mut b.0, at(what))?;
            g1_from_ptau(&b).map_err(|problem| {
                CodecError::Point {
                    location: at(what),
                    offset,
                    problem,
                }
                .into()
            })
        };
        let delta_after = g1(&mut reader, "contribution deltaAfter")?;
        let g1_s = g1(&mut reader, "contribution g1_s")?;
        let g1_sx = g1(&mut reader, "contribution g1_sx")?;
        let offset = reader.offset();
        let mut b = Compressed([0u8; 192]);
        reader.fill(&mut b.0, at("contribution g2_spx"))?;
        let g2_spx = g2_from_ptau(&b).map_err(|problem| CodecError::Point {
            location: at("contribution g2_spx"),
            offset,
            problem,
        })?;
        let mut transcript = [0u8; 64];
        reader.fill(&mut transcript, at("contribution transcript"))?;
        let kind = reader.u32(at("contribution type"))?;
        let len = reader.u32(at("contribution parameters"))?;
        if u64::from(len) > reader.left() {
            return Err(ZkeyError::Format(format!(
                "section 10, contribution {index}: {len} bytes of parameters past the section's end"
            )));
        }
        let mut params = vec![0u8; len as usize];
        reader.fill(&mut params, at("contribution parameters"))?;
        let (name, iterations_exp, beacon_hash) = parse_params(&params).map_err(|problem| {
            ZkeyError::Format(format!("section 10, contribution {index}: {problem}"))
        })?;
        out.push(Contribution {
            delta_after,
            g1_s,
            g1_sx,
            g2_spx,
            transcript,
            kind,
            name,
            iterations_exp,
            beacon_hash,
        });
    }
    if reader.left() != 0 {
        return Err(ZkeyError::Format(format!(
            "section 10: {} bytes after the last contribution",
            reader.left()
        )));
    }
    Ok((hash, out))
}

type Params = (Option<String>, Option<u8>, Option<Vec<u8>>);

/// snarkjs's `readContribution` parameters: ids strictly ascending, 1 a name, 2 an iteration
/// exponent, 3 a beacon hash.
fn parse_params(bytes: &[u8]) -> Result<Params, String> {
    let (mut name, mut exp, mut hash) = (None, None, None);
    let mut last = 0u8;
    let mut at = 0usize;
    let byte = |at: usize| {
        bytes
            .get(at)
            .copied()
            .ok_or("parameters end inside a value".to_owned())
    };
    while at < bytes.len() {
        let id = bytes[at];
        if id <= last {
            return Err("parameters not sorted".to_owned());
        }
        last = id;
        match id {
            1 | 3 => {
                let len = usize::from(byte(at + 1)?);
                let value = bytes
                    .get(at + 2..at + 2 + len)
                    .ok_or("parameters end inside a value")?;
                if id == 1 {
                    name = Some(String::from_utf8_lossy(value).into_owned());
                } else {
                    hash = Some(value.to_vec());
                }
                at += 2 + len;
            }
            2 => {
                exp = Some(byte(at + 1)?);
                at += 2;
            }
            other => return Err(format!("parameter {other} not recognised")),
        }
    }
    Ok((name, exp, hash))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contribution_adds_its_record() {
        assert_eq!(contribution_len(1000, None), 1552);
        assert_eq!(contribution_len(1000, Some("")), 1552);
        assert_eq!(contribution_len(1000, Some("alice")), 1552 + 2 + 5);
        assert_eq!(contribution_len(0, Some(&"x".repeat(100))), 552 + 2 + 64);
    }

    #[test]
    fn names_are_cut_as_javascript_cuts_them() {
        assert_eq!(js_substring_64("abc"), b"abc");
        let long = "x".repeat(70);
        assert_eq!(js_substring_64(&long).len(), 64);
        // 63 ASCII units, then a character outside the BMP (two units): half of it fits.
        let cut = format!("{}{}", "y".repeat(63), '\u{1F600}');
        let bytes = js_substring_64(&cut);
        assert_eq!(&bytes[63..], "\u{fffd}".as_bytes());
    }

    #[test]
    fn params_round_trip_and_bad_ones_are_named() {
        let c = Contribution {
            delta_after: G1Affine::default(),
            g1_s: G1Affine::default(),
            g1_sx: G1Affine::default(),
            g2_spx: G2Affine::default(),
            transcript: [0; 64],
            kind: 1,
            name: Some("beacon".to_owned()),
            iterations_exp: Some(10),
            beacon_hash: Some(vec![7; 32]),
        };
        let bytes = c.params().unwrap();
        assert_eq!(
            parse_params(&bytes).unwrap(),
            (Some("beacon".to_owned()), Some(10), Some(vec![7; 32]))
        );
        assert_eq!(
            parse_params(&[2, 1, 1, 0]).unwrap_err(),
            "parameters not sorted"
        );
        assert_eq!(
            parse_params(&[1, 5, b'a']).unwrap_err(),
            "parameters end inside a value"
        );
        assert_eq!(
            parse_params(&[9]).unwrap_err(),
            "parameter 9 not recognised"
        );
    }
}
