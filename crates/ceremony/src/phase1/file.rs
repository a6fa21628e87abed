//! gnark v0.15's phase 1 serialization (`Phase1.WriteTo`, `SrsCommons.WriteTo`), byte for byte,
//! read strictly.
//!
//! `Phase1`: the tau, alpha and beta update proofs (`[x]_1` 48 bytes, `pok` 96 bytes each); the
//! SRS commons: `N` (u64 big-endian), `[beta]_2`, `[tau^i]_1` for `1 <= i <= 2N-2`, `[tau^i]_2`
//! for `1 <= i <= N-1`, `[beta tau^i]_1` then `[alpha tau^i]_1` for `0 <= i <= N-1`; then the
//! challenge (a length byte, 0 or 32, and the bytes). Size `288N + 345 + len(challenge)`.
//! A sealed SRS is the SRS commons alone: `288N - 88` bytes.

use std::io::{Read, Write};

use blstrs::{G1Affine, G2Affine};
use lockstep_shard::{Control, Pool};

use super::{Phase1, Proofs, Srs, UpdateProof};
use crate::codec::{
    CodecError, HashingReader, HashingWriter, Limits, Location, read_challenge, read_point,
    read_points, read_points_after, write_challenge, write_points,
};
use crate::curve;

/// Names of the stored values, as in gnark's source.
pub(crate) mod names {
    pub(crate) const G1_TAU: &str = "G1 Tau";
    pub(crate) const G2_TAU: &str = "G2 Tau";
    pub(crate) const ALPHA_TAU: &str = "G1 AlphaTau";
    pub(crate) const BETA_TAU: &str = "G1 BetaTau";
    pub(crate) const BETA_G2: &str = "G2 Beta";
}

const PROOF_NAMES: [(&str, &str); 3] = [
    ("tau proof commitment", "tau proof of knowledge"),
    ("alpha proof commitment", "alpha proof of knowledge"),
    ("beta proof commitment", "beta proof of knowledge"),
];

/// Bytes of a phase 1 file for domain size `n` and a challenge of `challenge_len` bytes.
pub fn phase1_len(n: u64, challenge_len: u64) -> u64 {
    288 * n + 345 + challenge_len
}

/// Bytes of a sealed SRS file for domain size `n`.
pub fn srs_len(n: u64) -> u64 {
    288 * n - 88
}

pub(crate) fn write_srs_body<W: Write>(
    pool: &Pool,
    control: &Control,
    writer: &mut HashingWriter<W>,
    srs: &Srs,
) -> Result<(), CodecError> {
    writer.put(&(srs.n() as u64).to_be_bytes())?;
    writer.put(&srs.beta_g2.to_compressed())?;
    write_points(pool, control, writer, &srs.g1_tau[1..])?;
    write_points(pool, control, writer, &srs.g2_tau[1..])?;
    write_points(pool, control, writer, &srs.beta_tau)?;
    write_points(pool, control, writer, &srs.alpha_tau)
}

pub(crate) fn read_srs_body<R: Read>(
    pool: &Pool,
    control: &Control,
    reader: &mut HashingReader<R>,
    limits: &Limits,
) -> Result<Srs, CodecError> {
    let offset = reader.offset();
    let mut raw = [0u8; 8];
    reader.fill(&mut raw, Location::value("domain size N"))?;
    let n = u64::from_be_bytes(raw);
    limits.check_n(n, offset)?;
    let n = usize::try_from(n).map_err(|_| CodecError::DomainSize {
        n,
        offset,
        least: 2,
        max_power: limits.max_power,
    })?;
    let beta_g2 = read_point::<G2Affine, _>(reader, Location::value(names::BETA_G2))?;
    let g1_tau = read_points_after(pool, control, reader, names::G1_TAU, curve::g1(), 2 * n - 2)?;
    let g2_tau = read_points_after(pool, control, reader, names::G2_TAU, curve::g2(), n - 1)?;
    let beta_tau = read_points::<G1Affine, _>(pool, control, reader, names::BETA_TAU, 0, n)?;
    let alpha_tau = read_points::<G1Affine, _>(pool, control, reader, names::ALPHA_TAU, 0, n)?;
    Ok(Srs {
        g1_tau,
        g2_tau,
        alpha_tau,
        beta_tau,
        beta_g2,
    })
}

impl Phase1 {
    /// Writes the object in gnark's layout and returns the SHA-256 of the bytes written: the
    /// challenge of the next contribution, and the hash a contributor publishes.
    ///
    /// # Errors
    /// Writing fails, or the run is cancelled.
    pub fn write<W: Write>(
        &self,
        pool: &Pool,
        control: &Control,
        out: W,
    ) -> Result<[u8; 32], CodecError> {
        let mut writer = HashingWriter::new(out);
        for proof in [&self.proofs.tau, &self.proofs.alpha, &self.proofs.beta] {
            writer.put(&proof.commitment.to_compressed())?;
            writer.put(&proof.pok.to_compressed())?;
        }
        write_srs_body(pool, control, &mut writer, &self.srs)?;
        write_challenge(&mut writer, self.challenge.as_ref())?;
        Ok(writer.finish()?.0)
    }

    /// Reads an object written by [`write`](Self::write) or by gnark's `Phase1.WriteTo` (with
    /// compressed points), checking every point, and returns it with the SHA-256 of its bytes.
    ///
    /// # Errors
    /// The first problem in file order: a bad point (named, with its byte offset), a domain
    /// size out of `limits`, a challenge of another length than 0 or 32, a truncated file,
    /// trailing bytes; or an I/O error, or cancellation.
    pub fn read<R: Read>(
        pool: &Pool,
        control: &Control,
        input: R,
        limits: &Limits,
    ) -> Result<(Self, [u8; 32]), CodecError> {
        let mut reader = HashingReader::new(input).with_end(limits.file_len);
        let mut proofs = [UpdateProof::default(); 3];
        for (proof, (commitment, pok)) in proofs.iter_mut().zip(PROOF_NAMES) {
            proof.commitment = read_point::<G1Affine, _>(&mut reader, Location::value(commitment))?;
            proof.pok = read_point::<G2Affine, _>(&mut reader, Location::value(pok))?;
        }
        let srs = read_srs_body(pool, control, &mut reader, limits)?;
        let challenge = read_challenge(&mut reader)?;
        let hash = reader.finish()?;
        let [tau, alpha, beta] = proofs;
        Ok((
            Self {
                proofs: Proofs { tau, alpha, beta },
                srs,
                challenge,
            },
            hash,
        ))
    }
}

impl Srs {
    /// Writes the SRS commons alone (gnark's `SrsCommons.WriteTo`: what a sealed phase 1 is) and
    /// returns the SHA-256 of the bytes written.
    ///
    /// # Errors
    /// Writing fails, or the run is cancelled.
    pub fn write<W: Write>(
        &self,
        pool: &Pool,
        control: &Control,
        out: W,
    ) -> Result<[u8; 32], CodecError> {
        let mut writer = HashingWriter::new(out);
        write_srs_body(pool, control, &mut writer, self)?;
        Ok(writer.finish()?.0)
    }

    /// Reads SRS commons written by [`write`](Self::write) or gnark's `SrsCommons.WriteTo`.
    ///
    /// # Errors
    /// As [`Phase1::read`].
    pub fn read<R: Read>(
        pool: &Pool,
        control: &Control,
        input: R,
        limits: &Limits,
    ) -> Result<(Self, [u8; 32]), CodecError> {
        let mut reader = HashingReader::new(input).with_end(limits.file_len);
        let srs = read_srs_body(pool, control, &mut reader, limits)?;
        let hash = reader.finish()?;
        Ok((srs, hash))
    }
}
