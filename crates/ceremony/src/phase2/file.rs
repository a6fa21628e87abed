//! The phase 2 file: gnark v0.15's `Phase2.WriteTo` / `ReadFrom`, compressed points.
//!
//! | field | bytes |
//! |---|---|
//! | commitments `k` | u16 BE |
//! | `[delta]_1` | 48 |
//! | `PKK` | u32 BE count, then 48 a point |
//! | `Z` | u32 BE count (`N - 1`), then 48 a point |
//! | `[delta]_2` | 96 |
//! | `SigmaCKK[i]`, each `i < k` | u32 BE count, then 48 a point |
//! | `[sigma_i]_2`, each `i < k` | 96 |
//! | the delta update proof, then each sigma's | 48 + 96 each |
//! | the challenge | u8 length (0 or 32), then its bytes |
//!
//! As in phase 1, uncompressed points, trailing bytes and a challenge of another length are
//! refused (gnark's reader takes them), and a `Z` whose length is not `N - 1` for a domain the
//! limits allow, and more commitments than gnark can seal ([`MAX_COMMITMENTS`]).

use std::io::{Read, Write};

use blstrs::{G1Affine, G2Affine};
use lockstep_shard::{Control, Pool};

use super::Phase2;
use crate::codec::stream::{
    HashingReader, HashingWriter, read_challenge, read_counted, read_point, write_challenge,
    write_counted,
};
use crate::codec::{CodecError, Limits, Location};
use crate::phase1::UpdateProof;
use crate::r1cs::MAX_COMMITMENTS;

impl Phase2 {
    /// Writes the object in gnark's layout and returns the SHA-256 of the bytes: the next
    /// contribution's challenge.
    ///
    /// # Errors
    /// Writing fails, or the run is cancelled.
    ///
    /// # Panics
    /// If the object has more than 65,535 commitments or a vector of 2^32 points (impossible
    /// from a checked R1CS and phase 1).
    pub fn write<W: Write>(
        &self,
        pool: &Pool,
        control: &Control,
        out: W,
    ) -> Result<[u8; 32], CodecError> {
        let mut w = HashingWriter::new(out);
        let k = u16::try_from(self.sigma_g2.len()).expect("invariant: at most 255 commitments");
        w.put(&k.to_be_bytes())?;
        w.put(&self.delta_g1.to_compressed())?;
        write_counted(pool, control, &mut w, &self.pkk)?;
        write_counted(pool, control, &mut w, &self.z)?;
        w.put(&self.delta_g2.to_compressed())?;
        for ckk in &self.sigma_ckk {
            write_counted(pool, control, &mut w, ckk)?;
        }
        for sigma in &self.sigma_g2 {
            w.put(&sigma.to_compressed())?;
        }
        for proof in std::iter::once(&self.delta_proof).chain(&self.sigma_proofs) {
            w.put(&proof.commitment.to_compressed())?;
            w.put(&proof.pok.to_compressed())?;
        }
        write_challenge(&mut w, self.challenge.as_ref())?;
        Ok(w.finish()?.0)
    }

    /// Reads an object written by [`write`](Self::write) or gnark's `Phase2.WriteTo`, checking
    /// every point, and returns it with the SHA-256 of its bytes.
    ///
    /// # Errors
    /// The first problem in file order: a bad point (named, with its offset), a `Z` length that
    /// is no domain's, a truncated file, a challenge of another length than 0 or 32, trailing
    /// bytes; reading fails; cancellation.
    pub fn read<R: Read>(
        pool: &Pool,
        control: &Control,
        input: R,
        limits: &Limits,
    ) -> Result<(Self, [u8; 32]), CodecError> {
        let mut r = HashingReader::new(input).with_end(limits.file_len);
        let mut k = [0u8; 2];
        r.fill(&mut k, Location::value("commitment count"))?;
        let k = usize::from(u16::from_be_bytes(k));
        if k > MAX_COMMITMENTS {
            return Err(CodecError::TooMany {
                what: "commitments",
                count: k as u64,
                max: MAX_COMMITMENTS as u64,
                offset: 0,
            });
        }
        let delta_g1 = read_point::<G1Affine, _>(&mut r, Location::value("[delta]_1"))?;
        let pkk = read_counted(pool, control, &mut r, "PKK")?;
        let z_at = r.offset();
        let z = read_counted(pool, control, &mut r, "Z")?;
        limits.check_n_from(z.len() as u64 + 1, z_at, 1)?;
        let delta_g2 = read_point::<G2Affine, _>(&mut r, Location::value("[delta]_2"))?;
        let mut sigma_ckk = Vec::new();
        for _ in 0..k {
            sigma_ckk.push(read_counted(pool, control, &mut r, "SigmaCKK")?);
        }
        let mut sigma_g2 = Vec::new();
        for i in 0..k {
            let location = Location::element("[sigma]_2", i as u64);
            sigma_g2.push(read_point::<G2Affine, _>(&mut r, location)?);
        }
        let mut proofs = Vec::new();
        for i in 0..=k {
            let (commitment, pok) = if i == 0 {
                (
                    Location::value("delta proof [x]_1"),
                    Location::value("delta proof"),
                )
            } else {
                let i = i as u64 - 1;
                (
                    Location::element("sigma proof [x]_1", i),
                    Location::element("sigma proof", i),
                )
            };
            proofs.push(UpdateProof {
                commitment: read_point::<G1Affine, _>(&mut r, commitment)?,
                pok: read_point::<G2Affine, _>(&mut r, pok)?,
            });
        }
        let challenge = read_challenge(&mut r)?;
        let hash = r.finish()?;
        let delta_proof = proofs.remove(0);
        Ok((
            Self {
                delta_g1,
                delta_g2,
                pkk,
                z,
                sigma_ckk,
                sigma_g2,
                delta_proof,
                sigma_proofs: proofs,
                challenge,
            },
            hash,
        ))
    }
}
