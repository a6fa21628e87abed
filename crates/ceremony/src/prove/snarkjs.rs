//! snarkjs's Groth16 prover (`groth16_prove.js`) over a `.zkey` and a circom `.wtns`: the proof
//! `snarkjs groth16 verify` accepts, as `proof.json` and `public.json`.
//!
//! With `w` the witness (`w_0 = 1`, then the `n_public` public signals, then the rest):
//! - `A_T[i] = sum c w_s` over section 4's entries of matrix 0 and constraint `i` (each stored
//!   as `c R^2`, `R = 2^256`), `B_T` the same over matrix 1, and `C_T[i] = A_T[i] B_T[i]`:
//!   the three polynomials' values on the domain;
//! - their values on the odd coset (`prove/coset.rs`), and `P = A B - C` there, whose MSM with
//!   section 9's points is `[h(tau) t(tau) / delta]_1`;
//! - `pi_a = sum w_i A_i + alpha_1 + r delta_1`, `pi_b = sum w_i B2_i + beta_2 + s delta_2`,
//!   `b1 = sum w_i B1_i + beta_1 + s delta_1`, `pi_c = sum_(i > n_public) w_i C_i + H + s pi_a
//!   + r b1 - r s delta_1`, in snarkjs's order of additions.
//!
//! # Secrets
//! The witness's private part and the blinding `r`, `s` ([`Blinding`], wiped when dropped) are
//! secret. The witness ([`Witness`], its file's bytes too), its canonical copies for the MSMs
//! and the vectors derived from it (A, B, C on the domain, H) are wiped when dropped, on every
//! path. `r` and `s` are multiplied by blst's constant-time multiplication only. The MSMs run
//! over the witness in variable time (`lockstep-bls12`'s MSM skips zero digits and takes
//! buckets by value), as every Groth16 prover's do (snarkjs's, gnark's, rapidsnark's): a
//! prover's timing can say something about its witness to whoever times it; run it where its
//! timing is not observed by a party the witness is secret from.

use std::convert::Infallible;
use std::io::{Read, Seek};
use std::ops::Range;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use lockstep_bls12::Canonical;
use lockstep_shard::{Control, Pool, memory};
use serde::Serialize;

use super::coset::Coset;
use super::{Blinding, ProveError, Secret};
use crate::circom::Witness;
use crate::curve;
use crate::zkey::vkey::{g1_json, g2_json, to_snarkjs_json};
use crate::zkey::{Header, Zkey, ZkeyError, ZkeyFile, ZkeyVector};

/// `R^-2 mod r` for `R = 2^256`: section 4 stores each coefficient times `R^2`.
fn r_squared_inverse() -> Scalar {
    // R mod r is 2^256 reduced: ONE's Montgomery form read as an integer is R mod r.
    let r = Scalar::from(2u64).pow_vartime([256]);
    (r * r)
        .invert()
        .expect("invariant: R^2 mod r is not zero (r is prime)")
}

/// A snarkjs Groth16 proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    /// `pi_a`.
    pub a: G1Affine,
    /// `pi_b`.
    pub b: G2Affine,
    /// `pi_c`.
    pub c: G1Affine,
}

#[derive(Serialize)]
struct ProofJson {
    pi_a: [String; 3],
    pi_b: [[String; 2]; 3],
    pi_c: [String; 3],
    protocol: &'static str,
    curve: &'static str,
}

impl Proof {
    /// `proof.json` as `snarkjs groth16 prove` writes it: `pi_a`, `pi_b`, `pi_c` (decimal
    /// strings of affine coordinates, `"1"` the third), `protocol`, `curve`, one-space
    /// indentation, no final newline.
    pub fn to_json(&self) -> String {
        to_snarkjs_json(&ProofJson {
            pi_a: g1_json(&self.a),
            pi_b: g2_json(&self.b),
            pi_c: g1_json(&self.c),
            protocol: "groth16",
            curve: "bls12381",
        })
    }
}

/// `public.json` as snarkjs writes it: the public signals as decimal strings.
pub fn public_json(public: &[Scalar]) -> String {
    let values: Vec<String> = public.iter().map(decimal).collect();
    to_snarkjs_json(&values)
}

/// A scalar's canonical value in decimal.
fn decimal(value: &Scalar) -> String {
    num_bigint::BigUint::from_bytes_le(&value.to_bytes_le()).to_str_radix(10)
}

/// A proof and the public signals it is for (`w_1 .. w_n_public`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proven {
    /// The proof.
    pub proof: Proof,
    /// The public signals.
    pub public: Vec<Scalar>,
}

mod json;

pub use json::{
    JSON_LIMIT, is_json, proof_from_json, public_from_json, verification_key_from_json,
};

/// Whether `r1cs` is the circuit of `key`: the same wires, public signals and domain (what
/// `zkey new` takes from it), so that a witness it accepts is one for the key.
///
/// # Errors
/// [`ProveError::Key`] naming the first count that differs.
pub fn circuit_fits(header: &Header, r1cs: &crate::circom::CircomR1cs) -> Result<(), ProveError> {
    let (h, c) = (header, r1cs.header());
    for (what, theirs, ours) in [
        ("wires", h.n_vars, c.wires),
        ("public signals", h.n_public, c.public()),
        ("the domain's power", h.power, c.domain_power()),
    ] {
        if theirs != ours {
            return Err(ProveError::Key(format!(
                "{what}: {theirs}, the circuit's {ours}: a key of another circuit"
            )));
        }
    }
    Ok(())
}

/// The witness's fit to the key: as many values as wires, a domain the coset has.
fn check(key: &Head<'_>, witness: &Witness) -> Result<(), ProveError> {
    let wires = key.header.n_vars as usize;
    if witness.values().len() != wires {
        return Err(ProveError::WitnessLength {
            witness: witness.values().len(),
            wires,
        });
    }
    if key.header.power >= 32 {
        return Err(ProveError::Domain(key.header.power));
    }
    if witness.values()[0] != Scalar::ONE {
        return Err(ProveError::ConstantWire);
    }
    let private = wires
        .checked_sub(key.header.n_public as usize + 1)
        .ok_or_else(|| ProveError::Key("more public signals than wires".into()))?;
    let n = 1usize << key.header.power;
    let [a, b1, b2, c, h] = key.counts;
    if a != wires || b1 != wires || b2 != wires {
        return Err(ProveError::Key(format!(
            "sections 5-7 hold {a}, {b1} and {b2} points for {wires} wires"
        )));
    }
    // Section 4 as the reader checks it (a key built in memory has not been read; a key file's
    // is checked as it is read).
    if let Coefficients::Bytes(coefficients) = key.coefficients {
        let entries = coefficients.len().checked_sub(4).map(|len| len / 44);
        let counted = coefficients
            .get(..4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("invariant: 4 bytes")) as usize);
        if entries.is_none() || counted != entries || !(coefficients.len() - 4).is_multiple_of(44) {
            return Err(ProveError::Key(
                "section 4 is not a count and 44 bytes an entry".into(),
            ));
        }
        crate::zkey::check_coefficients(coefficients, key.header)?;
    }
    if key.ic.len() != key.header.n_public as usize + 1 {
        return Err(ProveError::Key(format!(
            "section 3 holds {} points for {} public signals",
            key.ic.len(),
            key.header.n_public
        )));
    }
    if c != private || h != n {
        return Err(ProveError::Key(format!(
            "sections 8 and 9 hold {c} and {h} points for {private} private wires and a domain of {n}"
        )));
    }
    Ok(())
}

/// Section 4's entries (44 bytes each, no count): (matrix, constraint, signal, stored value).
fn entries(entries: &[u8]) -> impl Iterator<Item = (usize, usize, usize, Scalar)> + '_ {
    entries.chunks_exact(44).map(|e| {
        let word = |k: usize| {
            u32::from_le_bytes(e[4 * k..4 * k + 4].try_into().expect("invariant: 4 bytes")) as usize
        };
        let value = Option::from(Scalar::from_bytes_le(
            e[12..].try_into().expect("invariant: 32 bytes"),
        ))
        .expect("invariant: every coefficient was checked below r (`check`, or a key file's blocks as they are read)");
        (word(0), word(1), word(2), value)
    })
}

/// `A_T`, `B_T` and `C_T`: the polynomials' values on the domain.
fn values_on_domain(key: &Head<'_>, w: &[Scalar]) -> Result<[Secret; 3], ProveError> {
    let n = 1usize << key.header.power;
    let zeros = || {
        memory::try_filled(n, Scalar::ZERO)
            .map(Secret)
            .map_err(ProveError::memory("A, B and C"))
    };
    let mut ab = [zeros()?, zeros()?];
    // Sums of stored values (c R^2) times w, scaled by R^-2 once per constraint.
    let mut add = |block: &[u8]| {
        for (matrix, constraint, signal, value) in entries(block) {
            let x = w[signal];
            if bool::from(x.is_zero()) {
                continue;
            }
            let term = if x == Scalar::ONE { value } else { value * x };
            ab[matrix][constraint] += term;
        }
    };
    match key.coefficients {
        Coefficients::Bytes(coefficients) => add(&coefficients[4..]),
        Coefficients::File(file) => file.coefficient_blocks(&mut add)?,
    }
    let unscale = r_squared_inverse();
    for v in ab.iter_mut().flat_map(|v| v.iter_mut()) {
        *v *= unscale;
    }
    let [a, b] = ab;
    let mut c = Secret(memory::try_with_capacity(n).map_err(ProveError::memory("A, B and C"))?);
    c.extend(a.iter().zip(b.iter()).map(|(x, y)| *x * y));
    Ok([a, b, c])
}

/// Proves for `witness` under `key` on `pool`, blinded by `blinding`; the same proof at every
/// worker count (and [`prove_reference`]'s). The proof is checked before it is returned: its
/// points in their subgroups (a key read by [`Zkey::read_for_proving`] with
/// [`KeyChecks::Curve`](crate::KeyChecks::Curve) has A, B1, B2, C and H checked on their
/// curves only), then verified under the key's header and IC: a witness that
/// does not satisfy the key's circuit is [`ProveError::Unsatisfied`].
///
/// Progress: the points of the five MSMs (`3 wires + private wires + N`, about), as they end.
///
/// # Errors
/// [`ProveError`]: a witness of another length, a key whose sections disagree, an unsatisfied
/// witness, memory, cancellation.
pub fn prove(
    pool: &Pool,
    control: &Control,
    key: &Zkey,
    witness: &Witness,
    blinding: &Blinding,
) -> Result<Proven, ProveError> {
    checked(
        &Head::of_key(key),
        prove_unchecked(pool, control, key, witness, blinding)?,
    )
}

/// [`prove`] over a `.zkey` read a chunk of at most 2^20 points at a time from its file
/// ([`ZkeyFile`]): the same proof, sections 5-9 never whole in memory, each chunk's points
/// checked as the file was opened to check them.
///
/// # Errors
/// As [`prove`]; a bad point in a chunk (named), a read error.
pub fn prove_file<R: Read + Seek>(
    pool: &Pool,
    control: &Control,
    key: &ZkeyFile<R>,
    witness: &Witness,
    blinding: &Blinding,
) -> Result<Proven, ProveError> {
    prove_file_unchecked(
        pool,
        control,
        (key, curve::MSM_CHUNK_POINTS),
        witness,
        blinding,
    )
    .and_then(|proven| checked(&Head::of_file(key), proven))
}

/// [`prove_file`] with chunks of `chunk` points, without the check of the proof (tests force
/// many chunks and compare proofs).
///
/// # Panics
/// If `chunk` is 0.
#[doc(hidden)]
pub fn prove_file_unchecked<R: Read + Seek>(
    pool: &Pool,
    control: &Control,
    (key, chunk): (&ZkeyFile<R>, usize),
    witness: &Witness,
    blinding: &Blinding,
) -> Result<Proven, ProveError> {
    assert!(chunk > 0, "invariant: chunks of at least one point");
    prove_from(
        pool,
        control,
        &Head::of_file(key),
        &Bases::File { file: key, chunk },
        witness,
        blinding,
    )
}

/// The proof's points in their subgroups, then the proof verified under the key's header and
/// IC (see [`prove`]).
fn checked(key: &Head<'_>, proven: Proven) -> Result<Proven, ProveError> {
    let p = &proven.proof;
    if !bool::from(p.a.is_torsion_free() & p.b.is_torsion_free() & p.c.is_torsion_free()) {
        return Err(ProveError::KeyPoints);
    }
    if verify_with(&key.verification_key(), &proven.proof, &proven.public).is_err() {
        return Err(ProveError::Unsatisfied);
    }
    Ok(proven)
}

/// A `.zkey`'s parts the prover reads whole (the header, IC; section 4 in memory, or by blocks
/// from the file) and the lengths of sections 5-9.
struct Head<'a> {
    header: &'a Header,
    ic: &'a [G1Affine],
    coefficients: Coefficients<'a>,
    /// A, B1, B2, C and H's lengths.
    counts: [usize; 5],
}

impl<'a> Head<'a> {
    fn of_key(key: &'a Zkey) -> Self {
        Self {
            header: &key.header,
            ic: &key.ic,
            coefficients: Coefficients::Bytes(&key.coefficients),
            counts: [
                key.a.len(),
                key.b1.len(),
                key.b2.len(),
                key.c.len(),
                key.h.len(),
            ],
        }
    }

    fn of_file<R: Read + Seek>(key: &'a ZkeyFile<R>) -> Self {
        Self {
            header: &key.header,
            ic: &key.ic,
            coefficients: Coefficients::File(key),
            counts: [
                key.len(ZkeyVector::A),
                key.len(ZkeyVector::B1),
                key.b2_len(),
                key.len(ZkeyVector::C),
                key.len(ZkeyVector::H),
            ],
        }
    }

    fn verification_key(&self) -> VerificationKey {
        let h = self.header;
        VerificationKey {
            alpha1: h.alpha1,
            beta2: h.beta2,
            gamma2: h.gamma2,
            delta2: h.delta2,
            ic: self.ic.to_vec(),
        }
    }
}

/// Section 4 as the prover reads it: a key's bytes in memory (the count, then the entries), or
/// its file a block of entries at a time.
#[derive(Clone, Copy)]
enum Coefficients<'a> {
    Bytes(&'a [u8]),
    File(&'a dyn Chunks),
}

/// A `.zkey`'s chunks as the prover reads them (a [`ZkeyFile`] of any input).
trait Chunks {
    fn coefficient_blocks(&self, visit: &mut dyn FnMut(&[u8])) -> Result<(), ZkeyError>;
    fn g1(
        &self,
        pool: &Pool,
        control: &Control,
        vector: ZkeyVector,
        range: Range<usize>,
    ) -> Result<Vec<G1Affine>, ZkeyError>;
    fn b2(
        &self,
        pool: &Pool,
        control: &Control,
        range: Range<usize>,
    ) -> Result<Vec<G2Affine>, ZkeyError>;
}

impl<R: Read + Seek> Chunks for ZkeyFile<R> {
    fn coefficient_blocks(&self, visit: &mut dyn FnMut(&[u8])) -> Result<(), ZkeyError> {
        ZkeyFile::coefficient_blocks(self, visit)
    }
    fn g1(
        &self,
        pool: &Pool,
        control: &Control,
        vector: ZkeyVector,
        range: Range<usize>,
    ) -> Result<Vec<G1Affine>, ZkeyError> {
        ZkeyFile::g1(self, pool, control, vector, range)
    }
    fn b2(
        &self,
        pool: &Pool,
        control: &Control,
        range: Range<usize>,
    ) -> Result<Vec<G2Affine>, ZkeyError> {
        ZkeyFile::b2(self, pool, control, range)
    }
}

/// Where the MSMs' bases come from: a key in memory, or its file a chunk at a time.
enum Bases<'a> {
    Memory(&'a Zkey),
    File { file: &'a dyn Chunks, chunk: usize },
}

impl Bases<'_> {
    /// `sum scalars_i vector_i` (as long as `scalars`: [`check`]).
    fn g1(
        &self,
        pool: &Pool,
        control: &Control,
        vector: ZkeyVector,
        scalars: &[Canonical],
    ) -> Result<G1Projective, ProveError> {
        match self {
            Self::Memory(key) => {
                let points = match vector {
                    ZkeyVector::A => &key.a,
                    ZkeyVector::B1 => &key.b1,
                    ZkeyVector::C => &key.c,
                    ZkeyVector::H => &key.h,
                };
                Ok(curve::msm_chunked(pool, control, points, scalars)?)
            }
            Self::File { file, chunk } => {
                super::msm_by_chunks(pool, control, *chunk, scalars, |range| {
                    file.g1(pool, control, vector, range)
                })
            }
        }
    }

    /// `sum scalars_i B2_i`.
    fn b2(
        &self,
        pool: &Pool,
        control: &Control,
        scalars: &[Canonical],
    ) -> Result<G2Projective, ProveError> {
        match self {
            Self::Memory(key) => Ok(curve::msm_chunked(pool, control, &key.b2, scalars)?),
            Self::File { file, chunk } => {
                super::msm_by_chunks(pool, control, *chunk, scalars, |range| {
                    file.b2(pool, control, range)
                })
            }
        }
    }
}

/// [`prove`] without the check of the proof.
fn prove_unchecked(
    pool: &Pool,
    control: &Control,
    key: &Zkey,
    witness: &Witness,
    blinding: &Blinding,
) -> Result<Proven, ProveError> {
    prove_from(
        pool,
        control,
        &Head::of_key(key),
        &Bases::Memory(key),
        witness,
        blinding,
    )
}

/// The proof over either kind of key, unchecked.
fn prove_from(
    pool: &Pool,
    control: &Control,
    key: &Head<'_>,
    bases: &Bases<'_>,
    witness: &Witness,
    blinding: &Blinding,
) -> Result<Proven, ProveError> {
    check(key, witness)?;
    let w = witness.values();
    let first_private = key.header.n_public as usize + 1;
    let coset =
        Coset::snarkjs(key.header.power).map_err(ProveError::memory("the coset's tables"))?;
    // Progress counts the MSMs' points only: the steps before them report to no sink.
    let quiet = control.nested();
    let [mut a, mut b, mut c] = values_on_domain(key, w)?;
    for values in [&mut a, &mut b, &mut c] {
        coset.extend(pool, &quiet, values)?;
    }
    // P = A B - C on the coset, into A's storage.
    pool.for_each_block(
        &quiet,
        (&mut a[..], &b[..], &c[..]),
        lockstep_shard::Cut::Blocks(1 << 12),
        |_, _, (xs, ys, zs): (&mut [Scalar], &[Scalar], &[Scalar])| {
            for ((x, y), z) in xs.iter_mut().zip(ys).zip(zs) {
                *x = *x * y - z;
            }
            Ok::<_, Infallible>(())
        },
    )?;
    // A, B, C and H come from the witness: wiped as they go (`Secret`).
    drop((b, c));
    let h_scalars = super::canonical_secret(pool, &quiet, &a)?;
    drop(a);
    let scalars = super::canonical_secret(pool, &quiet, w)?;
    let sums = Sums {
        a: bases.g1(pool, control, ZkeyVector::A, &scalars)?,
        b1: bases.g1(pool, control, ZkeyVector::B1, &scalars)?,
        b2: bases.b2(pool, control, &scalars)?,
        c: bases.g1(pool, control, ZkeyVector::C, &scalars[first_private..])?,
        h: bases.g1(pool, control, ZkeyVector::H, &h_scalars)?,
    };
    Ok(Proven {
        proof: assemble(key.header, &sums, blinding),
        public: w[1..first_private].to_vec(),
    })
}

/// The five MSMs' sums.
struct Sums {
    a: G1Projective,
    b1: G1Projective,
    b2: G2Projective,
    c: G1Projective,
    h: G1Projective,
}

/// The proof from the sums and the blinding, in snarkjs's order of additions; `r` and `s` by
/// blst's constant-time multiplication.
fn assemble(h: &Header, sums: &Sums, blinding: &Blinding) -> Proof {
    let (r, s) = (blinding.r(), blinding.s());
    let pi_a = sums.a + h.alpha1 + G1Projective::from(h.delta1) * r;
    let pi_b = sums.b2 + h.beta2 + G2Projective::from(h.delta2) * s;
    let b1 = sums.b1 + h.beta1 + G1Projective::from(h.delta1) * s;
    let mut minus_rs = -(*r * s);
    let pi_c = sums.c + sums.h + pi_a * s + b1 * r + G1Projective::from(h.delta1) * minus_rs;
    curve::wipe_scalar(&mut minus_rs);
    Proof {
        a: pi_a.to_affine(),
        b: pi_b.to_affine(),
        c: pi_c.to_affine(),
    }
}

/// A snarkjs Groth16 verification key: what `verification_key.json` holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerificationKey {
    /// `[alpha]_1`.
    pub alpha1: G1Affine,
    /// `[beta]_2`.
    pub beta2: G2Affine,
    /// `[gamma]_2`.
    pub gamma2: G2Affine,
    /// `[delta]_2`.
    pub delta2: G2Affine,
    /// The public signals' points, the constant one's first.
    pub ic: Vec<G1Affine>,
}

impl VerificationKey {
    /// The verification key of a `.zkey`.
    pub fn of(key: &Zkey) -> Self {
        let h = &key.header;
        Self {
            alpha1: h.alpha1,
            beta2: h.beta2,
            gamma2: h.gamma2,
            delta2: h.delta2,
            ic: key.ic.clone(),
        }
    }
}

/// Verifies `proof` for `public` under `key`'s verification key, as `snarkjs groth16 verify`
/// does: `e(pi_a, pi_b) = e(alpha_1, beta_2) e(IC(public), gamma_2) e(pi_c, delta_2)`.
///
/// # Errors
/// [`ProveError::PublicCount`] for another number of public signals; [`ProveError::Refused`]
/// when the pairing check fails.
pub fn verify(key: &Zkey, proof: &Proof, public: &[Scalar]) -> Result<(), ProveError> {
    verify_with(&VerificationKey::of(key), proof, public)
}

/// [`verify`] under a verification key (its points in their subgroups, as [`VerificationKey::of`]
/// a read key and [`verification_key_from_json`] give them); the proof's points are checked in
/// theirs here.
///
/// # Errors
/// As [`verify`].
pub fn verify_with(
    vk: &VerificationKey,
    proof: &Proof,
    public: &[Scalar],
) -> Result<(), ProveError> {
    if vk.ic.len() != public.len() + 1 {
        return Err(ProveError::PublicCount {
            given: public.len(),
            key: vk.ic.len().saturating_sub(1),
        });
    }
    if !bool::from(
        proof.a.is_torsion_free() & proof.b.is_torsion_free() & proof.c.is_torsion_free(),
    ) {
        return Err(ProveError::Refused);
    }
    let mut x = G1Projective::from(vk.ic[0]);
    for (value, point) in public.iter().zip(&vk.ic[1..]) {
        x += curve::g1_mul_public(&G1Projective::from(point), value);
    }
    let holds = curve::pairing_product_is_one(&[
        (proof.a, proof.b),
        (-vk.alpha1, vk.beta2),
        (-x.to_affine(), vk.gamma2),
        (-proof.c, vk.delta2),
    ]);
    if holds && !bool::from(proof.a.is_identity() | proof.c.is_identity()) {
        Ok(())
    } else {
        Err(ProveError::Refused)
    }
}

/// The proof from the definition, on the current thread: the polynomials interpolated by the
/// inverse DFT and evaluated on the coset term by term (`O(N^2)`), each MSM one constant-time
/// multiplication a point. Not checked: the test of [`prove`]'s transforms and MSMs.
///
/// # Errors
/// As [`prove`], without the check of the proof.
#[doc(hidden)]
pub fn prove_reference(
    key: &Zkey,
    witness: &Witness,
    blinding: &Blinding,
) -> Result<Proven, ProveError> {
    check(&Head::of_key(key), witness)?;
    let w = witness.values();
    let power = key.header.power;
    let n = key.domain_size();
    // The definition of A_T: sum over entries of c w, c = stored R^-2.
    let unscale = r_squared_inverse();
    let mut ab = [vec![Scalar::ZERO; n], vec![Scalar::ZERO; n]];
    for (matrix, constraint, signal, value) in entries(&key.coefficients[4..]) {
        ab[matrix][constraint] += value * unscale * w[signal];
    }
    let c_t: Vec<Scalar> = ab[0].iter().zip(&ab[1]).map(|(x, y)| *x * y).collect();
    let on_coset = |values: &[Scalar]| super::coset::extend_by_definition(power, values);
    let (a, b, c) = (on_coset(&ab[0]), on_coset(&ab[1]), on_coset(&c_t));
    let p: Vec<Scalar> = (0..n).map(|i| a[i] * b[i] - c[i]).collect();
    let first_private = key.header.n_public as usize + 1;
    let sums = Sums {
        a: naive_msm(&key.a, w),
        b1: naive_msm(&key.b1, w),
        b2: naive_msm(&key.b2, w),
        c: naive_msm(&key.c, &w[first_private..]),
        h: naive_msm(&key.h, &p),
    };
    Ok(Proven {
        proof: assemble(&key.header, &sums, blinding),
        public: w[1..first_private].to_vec(),
    })
}

/// `sum scalars[i] * points[i]`, one multiplication a point.
fn naive_msm<P>(points: &[P], scalars: &[Scalar]) -> P::Curve
where
    P: PrimeCurveAffine,
    P::Curve: std::ops::Mul<Scalar, Output = P::Curve>,
{
    points
        .iter()
        .zip(scalars)
        .fold(P::Curve::identity(), |acc, (p, s)| acc + p.to_curve() * *s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zkey::Header;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{RngCore, SeedableRng};

    /// A key of random points and coefficients (not one a setup made: the test compares
    /// computations, not validity), `2^power` rows, `wires` wires of which `public` public.
    fn random_key(power: u32, wires: u32, public: u32, seed: u64) -> Zkey {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut g1 = || (G1Projective::generator() * Scalar::random(&mut rng)).to_affine();
        let header = Header {
            n_vars: wires,
            n_public: public,
            power,
            alpha1: g1(),
            beta1: g1(),
            beta2: G2Affine::generator(),
            gamma2: G2Affine::generator(),
            delta1: g1(),
            delta2: (G2Projective::generator() * Scalar::from(7u64)).to_affine(),
        };
        let mut rng = ChaCha20Rng::seed_from_u64(seed + 1);
        let mut g1 = || (G1Projective::generator() * Scalar::random(&mut rng)).to_affine();
        let ic = (0..=public).map(|_| g1()).collect();
        let a = (0..wires).map(|_| g1()).collect();
        let b1 = (0..wires).map(|_| g1()).collect();
        let c = (0..wires - public - 1).map(|_| g1()).collect();
        let h = (0..1u32 << power).map(|_| g1()).collect();
        let mut rng = ChaCha20Rng::seed_from_u64(seed + 2);
        let b2 = (0..wires)
            .map(|_| (G2Projective::generator() * Scalar::random(&mut rng)).to_affine())
            .collect();
        let count = 5u32 << power;
        let mut coefficients = count.to_le_bytes().to_vec();
        for i in 0..count {
            let matrix = i % 2;
            let constraint = rng.next_u32() % (1 << power);
            let signal = rng.next_u32() % wires;
            coefficients.extend(matrix.to_le_bytes());
            coefficients.extend(constraint.to_le_bytes());
            coefficients.extend(signal.to_le_bytes());
            let value = match i % 7 {
                0 => Scalar::ONE,
                1 => -Scalar::ONE,
                _ => Scalar::random(&mut rng),
            };
            coefficients.extend(value.to_bytes_le());
        }
        Zkey {
            header,
            ic,
            coefficients,
            a,
            b1,
            b2,
            c,
            h,
            circuit_hash: [0; 64],
            contributions: Vec::new(),
        }
    }

    /// A witness of `wires` values, the constant one first, mostly 0 and 1 as circom's are.
    fn random_witness(wires: u32, seed: u64) -> Witness {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let values = (0..wires)
            .map(|i| match (i, rng.next_u32() % 4) {
                (0, _) => Scalar::ONE,
                (_, 0) => Scalar::ZERO,
                (_, 1) => Scalar::ONE,
                (_, 2) => Scalar::from(u64::from(rng.next_u32())),
                _ => Scalar::random(&mut rng),
            })
            .collect();
        Witness::from_values(values)
    }

    #[test]
    fn the_proof_is_the_definition_s_at_every_worker_count() {
        for (power, wires, public, seed) in
            [(0, 3, 1, 1), (3, 9, 2, 2), (6, 40, 3, 3), (10, 40, 3, 4)]
        {
            let key = random_key(power, wires, public, seed);
            let witness = random_witness(wires, seed + 10);
            let blinding = Blinding::fixed(Scalar::from(5u64), -Scalar::from(9u64));
            let want = prove_reference(&key, &witness, &blinding).unwrap();
            assert_eq!(want.public, witness.values()[1..=public as usize]);
            for workers in [1, 2, 3, 5] {
                let pool = Pool::new(workers).unwrap();
                let got =
                    prove_unchecked(&pool, &Control::new(), &key, &witness, &blinding).unwrap();
                assert_eq!(got, want, "power {power}, {workers} workers");
            }
            let got = prove_unchecked(
                &Pool::current_thread(),
                &Control::new(),
                &key,
                &witness,
                &blinding,
            )
            .unwrap();
            assert_eq!(got, want, "power {power}, the current thread");
            // Read by sections from the key's file, a chunk at a time: the same proof (a file
            // holds a domain of 2 at least; at 2^10, 5,120 coefficients span two blocks).
            if power == 0 {
                continue;
            }
            let pool = Pool::new(2).unwrap();
            let mut bytes = Vec::new();
            key.write(&pool, &Control::new(), &crate::zkey::ORDER, &mut bytes)
                .unwrap();
            for checks in [crate::KeyChecks::Subgroups, crate::KeyChecks::Curve] {
                let file = ZkeyFile::open(
                    &pool,
                    &Control::new(),
                    std::io::Cursor::new(&bytes),
                    &crate::Limits::default(),
                    checks,
                )
                .unwrap();
                for chunk in [1, 3, 1 << 20] {
                    let got = prove_file_unchecked(
                        &pool,
                        &Control::new(),
                        (&file, chunk),
                        &witness,
                        &blinding,
                    )
                    .unwrap();
                    assert_eq!(got, want, "power {power}, by sections of {chunk}");
                }
            }
        }
    }

    #[test]
    fn a_key_file_s_bad_coefficient_past_the_first_block_is_named_by_its_place() {
        // 5,120 entries at 2^10: entry 4,100 is in the second block of 4,096.
        let mut key = random_key(10, 40, 3, 4);
        let at = 4 + 44 * 4100;
        key.coefficients[at..at + 4].copy_from_slice(&2u32.to_le_bytes());
        let pool = Pool::new(2).unwrap();
        let mut bytes = Vec::new();
        key.write(&pool, &Control::new(), &crate::zkey::ORDER, &mut bytes)
            .unwrap();
        let refused = ZkeyFile::open(
            &pool,
            &Control::new(),
            std::io::Cursor::new(&bytes),
            &crate::Limits::default(),
            crate::KeyChecks::Curve,
        )
        .err()
        .expect("a bad coefficient refused when opened");
        assert_eq!(
            refused.to_string(),
            "section 4, coefficient 4100: matrix 2 (0 = A, 1 = B)"
        );
    }

    #[test]
    fn the_blinding_moves_the_proof() {
        let key = random_key(3, 9, 2, 5);
        let witness = random_witness(9, 6);
        let pool = Pool::current_thread();
        let one = Blinding::fixed(Scalar::from(5u64), Scalar::from(9u64));
        let other = Blinding::fixed(Scalar::from(6u64), Scalar::from(9u64));
        let p = prove_unchecked(&pool, &Control::new(), &key, &witness, &one).unwrap();
        let q = prove_unchecked(&pool, &Control::new(), &key, &witness, &other).unwrap();
        assert_ne!(p.proof.a, q.proof.a);
        assert_eq!(p.proof.b, q.proof.b, "pi_b takes s only");
    }

    #[test]
    fn a_witness_of_another_length_is_named() {
        let key = random_key(3, 9, 2, 7);
        let witness = random_witness(8, 8);
        let err = prove(
            &Pool::current_thread(),
            &Control::new(),
            &key,
            &witness,
            &Blinding::random(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the witness holds 8 values, the key's circuit has 9 wires: a witness of another circuit"
        );
    }

    #[test]
    fn a_key_built_in_memory_is_checked_as_a_read_one() {
        let witness = random_witness(9, 12);
        let pool = Pool::current_thread();
        let refused = |key: &Zkey| {
            prove(&pool, &Control::new(), key, &witness, &Blinding::random())
                .unwrap_err()
                .to_string()
        };
        let mut key = random_key(3, 9, 2, 11);
        key.coefficients.truncate(key.coefficients.len() - 1);
        assert_eq!(
            refused(&key),
            "the proving key: section 4 is not a count and 44 bytes an entry"
        );
        let mut key = random_key(3, 9, 2, 11);
        key.coefficients[4] = 2;
        assert_eq!(
            refused(&key),
            "section 4, coefficient 0: matrix 2 (0 = A, 1 = B)"
        );
        let mut key = random_key(3, 9, 2, 11);
        key.ic.pop();
        assert_eq!(
            refused(&key),
            "the proving key: section 3 holds 2 points for 2 public signals"
        );
        let mut key = random_key(3, 9, 2, 11);
        key.h.pop();
        assert!(refused(&key).starts_with("the proving key: sections 8 and 9 hold"));
    }

    #[test]
    fn a_circuit_fits_its_key_and_another_is_named() {
        use crate::circom::CircomR1cs;
        use crate::circom::r1cs::tests::file;
        let key = random_key(3, 9, 2, 13);
        let r1cs = |wires: u32, public: (u32, u32), rows: usize| {
            let constraints = vec![[vec![(1u32, 1u64)], vec![(1, 1)], vec![(2, 1)]]; rows];
            CircomR1cs::read(std::io::Cursor::new(file(wires, public, &constraints))).unwrap()
        };
        // 3 constraints, 2 public, the constant: 6 rows, a domain of 2^3.
        assert!(circuit_fits(&key.header, &r1cs(9, (1, 1), 3)).is_ok());
        assert_eq!(
            circuit_fits(&key.header, &r1cs(10, (1, 1), 3))
                .unwrap_err()
                .to_string(),
            "the proving key: wires: 9, the circuit's 10: a key of another circuit"
        );
        assert!(circuit_fits(&key.header, &r1cs(9, (0, 1), 3)).is_err());
        assert!(circuit_fits(&key.header, &r1cs(9, (1, 1), 6)).is_err());
        // A witness whose constant wire is not one.
        let mut values = random_witness(9, 14).values().to_vec();
        values[0] = Scalar::from(2u64);
        let err = prove(
            &Pool::current_thread(),
            &Control::new(),
            &key,
            &Witness::from_values(values),
            &Blinding::random(),
        )
        .unwrap_err();
        assert!(matches!(err, ProveError::ConstantWire), "{err}");
    }

    #[test]
    fn a_random_key_s_proof_is_refused_as_unsatisfied() {
        // The random key is no setup's: its proof cannot verify, as an unsatisfying witness's.
        let key = random_key(3, 9, 2, 9);
        let witness = random_witness(9, 10);
        let err = prove(
            &Pool::current_thread(),
            &Control::new(),
            &key,
            &witness,
            &Blinding::random(),
        )
        .unwrap_err();
        assert!(matches!(err, ProveError::Unsatisfied), "{err}");
    }

    #[test]
    fn proof_json_is_snarkjs_s_shape() {
        let proof = Proof {
            a: G1Affine::generator(),
            b: G2Affine::generator(),
            c: G1Affine::generator(),
        };
        let json = proof.to_json();
        assert!(json.starts_with("{\n \"pi_a\": [\n  \"3685416753713387016781088315183077757961620795782546409894578378688607592378376318836054947676345821548104185464507\","), "{json}");
        assert!(
            json.ends_with("\"protocol\": \"groth16\",\n \"curve\": \"bls12381\"\n}"),
            "{json}"
        );
        assert_eq!(
            public_json(&[Scalar::from(32u64), Scalar::from(5u64)]),
            "[\n \"32\",\n \"5\"\n]"
        );
    }
}
