//! A Groth16 verifier for gnark v0.15's BLS12-381 proofs, so a user can check a proof made
//! with the ceremony's keys without Go: gnark's `groth16.Verify`, BSB22 commitments included.
//!
//! Files (gnark's `WriteTo` layouts, compressed points, every point subgroup-checked):
//! - proof: `Ar` (G1), `Bs` (G2), `Krs` (G1), the commitments (u32 BE count, then G1 points),
//!   the commitments' proof of knowledge (G1);
//! - public witness (`witness.Public().WriteTo`): public count u32 BE, secret count u32 BE (0),
//!   the vector (u32 BE length, then 32-byte big-endian canonical elements), the constant-one
//!   wire excluded;
//! - verifying key: [`crate::phase2::VerifyingKey`].
//!
//! The check: each commitment `C_i` extends the public inputs by `fr.Hash(uncompressed C_i ||
//! its committed public inputs, "bsb22-commitment")`; the commitments' Pedersen proof holds,
//! `e(C_0, -[sigma_0]_2) * prod_{i>0} e(r^i C_i, -[sigma_i]_2) * e(pi, g2) = 1` with `r =
//! fr.Hash(the hashes, "G16-BSB22")`; then, with `K = K_0 + sum x_i K_(i+1) + sum C_i`,
//! `e(Ar, Bs) e(Krs, -[delta]_2) e(K, -[gamma]_2) = e([alpha]_1, [beta]_2)`: one multi-pairing.

use std::io::Read;

use blstrs::{G1Affine, G1Projective, G2Affine, Scalar};
use group::Curve;

use crate::codec::stream::{HashingReader, read_counted, read_point};
use crate::codec::{CodecError, Location};
use crate::curve;
use crate::phase2::VerifyingKey;

/// gnark's DST for hashing a commitment into a public input (`constraint.CommitmentDst`).
pub const COMMITMENT_DST: &[u8] = b"bsb22-commitment";

/// gnark's DST for the commitments' folding challenge.
pub(crate) const FOLD_DST: &[u8] = b"G16-BSB22";

/// Values a witness (public, or full) may hold at most: a length above is refused before any
/// is read (a file of 2^26 values is 2 GiB).
const MAX_PUBLIC: u32 = 1 << 26;

/// A Groth16 proof (gnark's `Proof`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    /// `[A]_1`.
    pub ar: G1Affine,
    /// `[B]_2`.
    pub bs: G2Affine,
    /// `[C]_1`.
    pub krs: G1Affine,
    /// The BSB22 commitments.
    pub commitments: Vec<G1Affine>,
    /// Their proof of knowledge.
    pub commitment_pok: G1Affine,
}

/// Why a proof does not verify, or its inputs do not fit.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Groth16Error {
    /// A file could not be read.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// A witness value (public, or in a full witness secret) is not a canonical field element.
    #[error("witness value {index}: not a canonical element of the scalar field (>= r)")]
    PublicInput {
        /// Its position (from 0, the constant one excluded).
        index: usize,
    },
    /// The public witness holds secret values or its counts disagree.
    #[error("public witness: {0}")]
    Witness(String),
    /// The key, the proof and the witness do not fit together.
    #[error("{0}")]
    Shape(String),
    /// The commitments' proof of knowledge does not verify.
    #[error("proof refused: the commitments' proof of knowledge does not verify")]
    Commitments,
    /// The pairing check fails: the proof is not for these public inputs under this key.
    #[error("proof refused: the pairing check fails for these public inputs")]
    Pairing,
}

impl Proof {
    /// Reads a proof as gnark's `Proof.WriteTo` writes it.
    ///
    /// # Errors
    /// A bad point (named), a truncated file, trailing bytes.
    pub fn read<R: Read>(input: R) -> Result<Self, CodecError> {
        let pool = lockstep_shard::Pool::current_thread();
        let control = lockstep_shard::Control::new();
        let mut r = HashingReader::new(input);
        let ar = read_point::<G1Affine, _>(&mut r, Location::value("Ar"))?;
        let bs = read_point::<G2Affine, _>(&mut r, Location::value("Bs"))?;
        let krs = read_point::<G1Affine, _>(&mut r, Location::value("Krs"))?;
        let commitments = read_counted(&pool, &control, &mut r, "commitment")?;
        let commitment_pok = read_point::<G1Affine, _>(&mut r, Location::value("commitment pok"))?;
        r.finish()?;
        Ok(Self {
            ar,
            bs,
            krs,
            commitments,
            commitment_pok,
        })
    }
}

impl Proof {
    /// Writes the proof as gnark's `Proof.WriteTo` does (compressed points).
    ///
    /// # Errors
    /// Writing fails.
    pub fn write<W: std::io::Write>(&self, mut out: W) -> std::io::Result<()> {
        out.write_all(&self.ar.to_compressed())?;
        out.write_all(&self.bs.to_compressed())?;
        out.write_all(&self.krs.to_compressed())?;
        let count = u32::try_from(self.commitments.len()).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "2^32 commitments or more")
        })?;
        out.write_all(&count.to_be_bytes())?;
        for c in &self.commitments {
            out.write_all(&c.to_compressed())?;
        }
        out.write_all(&self.commitment_pok.to_compressed())?;
        out.flush()
    }
}

/// Reads a public witness as gnark's `witness.Public().WriteTo` writes it: the public inputs,
/// the constant one excluded, in circuit order.
///
/// # Errors
/// A truncated file, trailing bytes, secret values present, counts that disagree, a value not
/// below r.
pub fn read_public_witness<R: Read>(input: R) -> Result<Vec<Scalar>, Groth16Error> {
    let mut witness = read_witness(input)?;
    if witness.secret != 0 {
        return Err(Groth16Error::Witness(format!(
            "it holds {} secret values: give the public part alone (witness.Public())",
            witness.secret
        )));
    }
    // Public values only: nothing to wipe.
    Ok(std::mem::take(&mut witness.values))
}

/// Writes `public` (the constant one excluded) as gnark's `witness.Public().WriteTo` does:
/// what [`read_public_witness`] reads and gnark's `groth16.Verify` takes.
///
/// # Errors
/// Writing fails; 2^32 values or more.
pub fn write_public_witness<W: std::io::Write>(
    public: &[Scalar],
    mut out: W,
) -> std::io::Result<()> {
    let count = u32::try_from(public.len()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "2^32 public inputs or more",
        )
    })?;
    for word in [count, 0, count] {
        out.write_all(&word.to_be_bytes())?;
    }
    for value in public {
        out.write_all(&value.to_bytes_be())?;
    }
    out.flush()
}

/// A witness in gnark's binary format: the public inputs (the constant one excluded), then the
/// secret ones, in circuit order.
#[derive(Clone, PartialEq, Eq)]
pub struct Witness {
    /// How many of `values` are public.
    pub public: usize,
    /// How many of `values` are secret.
    pub secret: usize,
    /// The public values, then the secret ones.
    pub values: Vec<Scalar>,
}

impl std::fmt::Debug for Witness {
    // A witness's secret part is never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Witness")
            .field("public", &self.public)
            .field("secret", &self.secret)
            .finish_non_exhaustive()
    }
}

impl Drop for Witness {
    fn drop(&mut self) {
        curve::wipe_scalars(&mut self.values);
    }
}

/// Reads a witness as gnark's `witness.WriteTo` (`MarshalBinary`) writes it, full or public:
/// the public count, the secret count and the vector's length (u32 BE each), then 32-byte
/// big-endian canonical elements.
///
/// # Errors
/// A truncated file, trailing bytes, counts that disagree, a value not below r.
pub fn read_witness<R: Read>(input: R) -> Result<Witness, Groth16Error> {
    let mut r = HashingReader::new(input);
    let mut word = |what: &'static str| -> Result<u32, CodecError> {
        let mut bytes = [0u8; 4];
        r.fill(&mut bytes, Location::value(what))?;
        Ok(u32::from_be_bytes(bytes))
    };
    let (public, secret, len) = (
        word("public count")?,
        word("secret count")?,
        word("length")?,
    );
    if u64::from(len) != u64::from(public) + u64::from(secret) || len > MAX_PUBLIC {
        return Err(Groth16Error::Witness(format!(
            "{public} public and {secret} secret values announced, a vector of {len}"
        )));
    }
    let mut witness = Witness {
        public: public as usize,
        secret: secret as usize,
        values: Vec::new(),
    };
    for index in 0..len as usize {
        let mut bytes = [0u8; 32];
        r.fill(&mut bytes, Location::element("witness value", index as u64))?;
        let mut le = bytes;
        le.reverse();
        let value = Option::<Scalar>::from(Scalar::from_bytes_le(&le))
            .ok_or(Groth16Error::PublicInput { index })?;
        // Grown by hand, the old storage wiped: a reallocation would free secret copies.
        if witness.values.len() == witness.values.capacity() {
            let room = (2 * witness.values.len()).max(64).min(len as usize);
            let mut grown = Vec::with_capacity(room);
            grown.extend_from_slice(&witness.values);
            curve::wipe_scalars(&mut witness.values);
            witness.values = grown;
        }
        witness.values.push(value);
    }
    r.finish()?;
    Ok(witness)
}

/// Verifies `proof` for the public inputs `public` (the constant one excluded) under `vk`, as
/// gnark's `groth16.Verify` does.
///
/// # Errors
/// [`Groth16Error::Shape`] when the counts do not fit; [`Groth16Error::Commitments`] or
/// [`Groth16Error::Pairing`] when the proof is refused.
pub fn verify(vk: &VerifyingKey, proof: &Proof, public: &[Scalar]) -> Result<(), Groth16Error> {
    let commitments = vk.public_and_commitment_committed.len();
    let public_vars = vk.k.len().checked_sub(commitments).ok_or_else(|| {
        Groth16Error::Shape("verifying key: fewer K points than commitments".into())
    })?;
    if vk.commitment_keys.len() != commitments {
        return Err(Groth16Error::Shape(format!(
            "verifying key: {} commitment keys for {commitments} commitments",
            vk.commitment_keys.len()
        )));
    }
    if proof.commitments.len() != commitments {
        return Err(Groth16Error::Shape(format!(
            "the proof has {} commitments, the key expects {commitments}",
            proof.commitments.len()
        )));
    }
    if public.len() + 1 != public_vars {
        return Err(Groth16Error::Shape(format!(
            "{} public inputs given, the key expects {}",
            public.len(),
            public_vars.saturating_sub(1)
        )));
    }
    let mut inputs = public.to_vec();
    let mut hashes = Vec::with_capacity(32 * commitments);
    for (commitment, committed) in proof
        .commitments
        .iter()
        .zip(&vk.public_and_commitment_committed)
    {
        let mut prehash = curve::g1_uncompressed(commitment).to_vec();
        for &j in committed {
            let value = j
                .checked_sub(1)
                .and_then(|j| inputs.get(j))
                .ok_or_else(|| {
                    Groth16Error::Shape(format!("verifying key: committed input {j} out of range"))
                })?;
            prehash.extend_from_slice(&value.to_bytes_be());
        }
        let [value] = curve::hash_to_scalars::<1>(&prehash, COMMITMENT_DST);
        inputs.push(value);
        hashes.extend_from_slice(&value.to_bytes_be());
    }
    if commitments > 0 {
        let [r] = curve::hash_to_scalars::<1>(&hashes, FOLD_DST);
        let g = vk.commitment_keys[0].0;
        if vk.commitment_keys.iter().any(|(gi, _)| *gi != g) {
            return Err(Groth16Error::Shape(
                "verifying key: commitment keys differ in G".into(),
            ));
        }
        let mut terms = Vec::with_capacity(commitments + 1);
        let mut power = Scalar::from(1u64);
        for (c, (_, neg_sigma)) in proof.commitments.iter().zip(&vk.commitment_keys) {
            terms.push(((G1Projective::from(c) * power).to_affine(), *neg_sigma));
            power *= r;
        }
        terms.push((proof.commitment_pok, g));
        if !curve::pairing_product_is_one(&terms) {
            return Err(Groth16Error::Commitments);
        }
    }
    let mut k = G1Projective::from(vk.k[0]);
    for (x, point) in inputs.iter().zip(&vk.k[1..]) {
        k += curve::g1_mul_public(&G1Projective::from(point), x);
    }
    for c in &proof.commitments {
        k += c;
    }
    let holds = curve::pairing_product_is_one(&[
        (proof.ar, proof.bs),
        (proof.krs, -vk.delta_g2),
        (k.to_affine(), -vk.gamma_g2),
        (-vk.alpha_g1, vk.beta_g2),
    ]);
    if holds {
        Ok(())
    } else {
        Err(Groth16Error::Pairing)
    }
}
