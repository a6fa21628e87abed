//! Serial references of the parallel codec: plain loops over the same layout and the same
//! checks, one point at a time. Tests compare the parallel codec with these byte for byte, and
//! error for error.

use blstrs::{G1Affine, G2Affine};

use crate::codec::{CodecError, Limits, Location, Point};
use crate::phase1::{Phase1, Proofs, Srs, UpdateProof};

const NAMES: [&str; 4] = ["G1 Tau", "G2 Tau", "G1 BetaTau", "G1 AlphaTau"];

/// The bytes [`Phase1::write`] produces, encoded one point at a time.
pub fn phase1_bytes(object: &Phase1) -> Vec<u8> {
    let mut out = Vec::new();
    for proof in [
        &object.proofs.tau,
        &object.proofs.alpha,
        &object.proofs.beta,
    ] {
        out.extend_from_slice(proof.commitment.encode().as_ref());
        out.extend_from_slice(proof.pok.encode().as_ref());
    }
    out.extend_from_slice(&srs_bytes(&object.srs));
    match &object.challenge {
        Some(challenge) => {
            out.push(32);
            out.extend_from_slice(challenge);
        }
        None => out.push(0),
    }
    out
}

/// The bytes [`Srs::write`] produces, encoded one point at a time.
pub fn srs_bytes(srs: &Srs) -> Vec<u8> {
    let mut out = (srs.n() as u64).to_be_bytes().to_vec();
    out.extend_from_slice(srs.beta_g2.encode().as_ref());
    let g1 = |out: &mut Vec<u8>, points: &[G1Affine]| {
        points
            .iter()
            .for_each(|p| out.extend_from_slice(p.encode().as_ref()));
    };
    g1(&mut out, &srs.g1_tau[1..]);
    srs.g2_tau[1..]
        .iter()
        .for_each(|p| out.extend_from_slice(p.encode().as_ref()));
    g1(&mut out, &srs.beta_tau);
    g1(&mut out, &srs.alpha_tau);
    out
}

/// A cursor over bytes that decodes points one at a time.
struct Cursor<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl Cursor<'_> {
    fn take(&mut self, len: usize, location: Location) -> Result<&[u8], CodecError> {
        if self.bytes.len() - self.offset < len {
            return Err(CodecError::Truncated {
                location,
                offset: self.bytes.len() as u64,
            });
        }
        let out = &self.bytes[self.offset..self.offset + len];
        self.offset += len;
        Ok(out)
    }

    fn point<P: Point>(&mut self, location: Location) -> Result<P, CodecError> {
        let offset = self.offset as u64;
        let mut raw = P::Bytes::default();
        raw.as_mut().copy_from_slice(self.take(P::SIZE, location)?);
        P::decode(&raw).map_err(|problem| CodecError::Point {
            location,
            offset,
            problem,
        })
    }

    fn vector<P: Point>(
        &mut self,
        name: &'static str,
        first: u64,
        count: usize,
    ) -> Result<Vec<P>, CodecError> {
        (0..count)
            .map(|k| self.point(Location::element(name, first + k as u64)))
            .collect()
    }

    fn srs(&mut self, limits: &Limits) -> Result<Srs, CodecError> {
        let offset = self.offset as u64;
        let raw = self.take(8, Location::value("domain size N"))?;
        let n = u64::from_be_bytes(raw.try_into().expect("invariant: took 8 bytes"));
        limits.check_n(n, offset)?;
        let n = usize::try_from(n).expect("invariant: n <= 2^max_power fits usize");
        let beta_g2 = self.point::<G2Affine>(Location::value("G2 Beta"))?;
        let mut g1_tau = vec![crate::curve::g1()];
        g1_tau.extend(self.vector::<G1Affine>(NAMES[0], 1, 2 * n - 2)?);
        let mut g2_tau = vec![crate::curve::g2()];
        g2_tau.extend(self.vector::<G2Affine>(NAMES[1], 1, n - 1)?);
        let beta_tau = self.vector(NAMES[2], 0, n)?;
        let alpha_tau = self.vector(NAMES[3], 0, n)?;
        Ok(Srs {
            g1_tau,
            g2_tau,
            alpha_tau,
            beta_tau,
            beta_g2,
        })
    }

    fn end(&self) -> Result<(), CodecError> {
        if self.offset == self.bytes.len() {
            Ok(())
        } else {
            Err(CodecError::TrailingBytes {
                offset: self.offset as u64,
            })
        }
    }
}

/// [`Phase1::read`], one point at a time.
///
/// # Panics
/// Never: the `expect`s follow from lengths just taken.
///
/// # Errors
/// As [`Phase1::read`], the same error for the same bytes.
pub fn phase1_from_bytes(bytes: &[u8], limits: &Limits) -> Result<Phase1, CodecError> {
    let mut cursor = Cursor { bytes, offset: 0 };
    let names = [
        ("tau proof commitment", "tau proof of knowledge"),
        ("alpha proof commitment", "alpha proof of knowledge"),
        ("beta proof commitment", "beta proof of knowledge"),
    ];
    let mut proofs = [UpdateProof::default(); 3];
    for (proof, (commitment, pok)) in proofs.iter_mut().zip(names) {
        proof.commitment = cursor.point(Location::value(commitment))?;
        proof.pok = cursor.point(Location::value(pok))?;
    }
    let srs = cursor.srs(limits)?;
    let offset = cursor.offset as u64;
    let len = cursor.take(1, Location::value("challenge"))?[0];
    let challenge = match len {
        0 => None,
        32 => Some(
            cursor
                .take(32, Location::value("challenge"))?
                .try_into()
                .expect("invariant: took 32 bytes"),
        ),
        other => return Err(CodecError::ChallengeLength { len: other, offset }),
    };
    cursor.end()?;
    let [tau, alpha, beta] = proofs;
    Ok(Phase1 {
        proofs: Proofs { tau, alpha, beta },
        srs,
        challenge,
    })
}

/// [`Srs::read`], one point at a time.
///
/// # Panics
/// Never, as [`phase1_from_bytes`].
///
/// # Errors
/// As [`Srs::read`].
pub fn srs_from_bytes(bytes: &[u8], limits: &Limits) -> Result<Srs, CodecError> {
    let mut cursor = Cursor { bytes, offset: 0 };
    let srs = cursor.srs(limits)?;
    cursor.end()?;
    Ok(srs)
}
