//! `snarkjs powersoftau prepare phase2`: a `.ptau` with its powers also in the Lagrange basis,
//! byte for byte as snarkjs 0.7.6 writes it (`powersoftau_preparephase2.js`).
//!
//! # Layout written
//! `"ptau"`, version 1, 11 sections: the header (power, and the ceremony power set to the
//! power, as snarkjs's `writePTauHeader` does), sections 2-7 copied byte for byte from the
//! input (the contributions too), then 12-15: `lagrangeTauG1`, `lagrangeTauG2`,
//! `lagrangeAlphaTauG1`, `lagrangeBetaTauG1`. Each holds one block per power `p = 0..=P` of the
//! `2^p` points `L_k(tau)` (`alpha L_k(tau)`...) for snarkjs's domain of size `2^p`
//! ([`Domain::snarkjs`]), in natural order, at offset `2^p - 1` points; section 12 has one
//! more block, for `2^(P+1)`, made from all `2^(P+1) - 1` tau powers in G1 and a zero point.
//! A block is the inverse transform of the first `2^p` powers (ffjavascript's `G.ifft`, which
//! `lagrangeEvaluations` calls below 2^32 points): the same group elements whatever the
//! algorithm, so the same bytes.
//!
//! # Memory
//! The input's powers (`576 N` bytes for `N = 2^P`: `2N` G1, `N` G2, `2N` G1 points), plus
//! the largest block's transform: `2N` G1 points projective and affine (`480 N` bytes).

use std::io::{Read, Seek, SeekFrom, Write};

use blstrs::{G1Affine, G1Projective, G2Projective};
use lockstep_shard::{Control, Pool};

use super::{PtauError, PtauFile, g1_to_ptau, g2_to_ptau, q_bytes, read};
use crate::binfile::{write_head, write_section_header};
use crate::codec::{CodecError, HashingWriter, Limits, write_vector};
use crate::fft::{self, Domain};

/// What [`prepare`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prepared {
    /// The powers' `P` (`N = 2^P`).
    pub power: u32,
    /// The SHA-256 of the bytes written.
    pub sha256: [u8; 32],
}

/// Points in one section of Lagrange blocks for powers `0..=top`: `2^(top+1) - 1`.
fn blocks_len(top: u32) -> u64 {
    (1u64 << (top + 1)) - 1
}

/// Reads a `.ptau` (every point checked, as [`read`]) and writes it prepared for phase 2.
///
/// # Errors
/// [`PtauError`]: the input's, a write error, cancellation.
pub fn prepare<R: Read + Seek, W: Write>(
    pool: &Pool,
    control: &Control,
    mut input: R,
    out: W,
    limits: &Limits,
) -> Result<Prepared, PtauError> {
    let ptau = read(pool, control, &mut input, limits)?;
    let table = PtauFile::open(&mut input, limits)?.table().clone();
    let srs = &ptau.srs;
    let power = srs.power();
    let mut w = HashingWriter::new(out);
    write_head(&mut w, b"ptau", 1, 11)?;
    write_section_header(&mut w, 1, 60)?;
    w.put(&48u32.to_le_bytes())?;
    w.put(&q_bytes())?;
    w.put(&power.to_le_bytes())?;
    w.put(&power.to_le_bytes())?;
    for id in 2..=7 {
        let section = table.get(id).ok_or(PtauError::MissingSection(id))?;
        write_section_header(&mut w, id, section.size)?;
        input
            .seek(SeekFrom::Start(section.offset))
            .map_err(CodecError::Io)?;
        let mut body = (&mut input).take(section.size);
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = body.read(&mut buf).map_err(CodecError::Io)?;
            if n == 0 {
                break;
            }
            w.put(&buf[..n])?;
        }
    }
    let g1 = |w: &mut HashingWriter<W>, points: &[G1Affine], p: u32| -> Result<(), PtauError> {
        let basis = fft::lagrange::<G1Projective>(pool, control, &Domain::snarkjs(p), points)?;
        Ok(write_vector(pool, control, w, &basis, g1_to_ptau)?)
    };
    write_section_header(&mut w, 12, blocks_len(power + 1) * 96)?;
    for p in 0..=power {
        g1(&mut w, &srs.g1_tau[..1 << p], p)?;
    }
    let mut all = srs.g1_tau.clone();
    all.push(G1Affine::default());
    g1(&mut w, &all, power + 1)?;
    drop(all);
    write_section_header(&mut w, 13, blocks_len(power) * 192)?;
    for p in 0..=power {
        let basis = fft::lagrange::<G2Projective>(
            pool,
            control,
            &Domain::snarkjs(p),
            &srs.g2_tau[..1 << p],
        )?;
        write_vector(pool, control, &mut w, &basis, g2_to_ptau)?;
    }
    for (id, points) in [(14, &srs.alpha_tau), (15, &srs.beta_tau)] {
        write_section_header(&mut w, id, blocks_len(power) * 96)?;
        for p in 0..=power {
            g1(&mut w, &points[..1 << p], p)?;
        }
    }
    let (sha256, _) = w.finish()?;
    Ok(Prepared { power, sha256 })
}
