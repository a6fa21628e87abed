//! gnark's Groth16 prover (`backend/groth16/bls12-381/prove.go`, v0.15) over gnark's proving
//! key, R1CS and witness: the proof gnark's `groth16.Verify` accepts, in gnark's bytes.
//!
//! With `w` the wires [`solve`] finds (the BSB22 commitments' values computed on the way):
//! - each commitment `C_i = sum w_j Basis_ij` over its private wires, its wire the hash of
//!   `C_i` (uncompressed) and its public and earlier commitments' values (`fr.Hash`, DST
//!   `bsb22-commitment`), and their proof of knowledge `pok = sum c^i sum w_j SigmaBasis_ij`,
//!   `c = fr.Hash(the commitments' values, "G16-BSB22")`;
//! - `a_i = <L_i, w>`, `b_i = <R_i, w>`, `c_i = <O_i, w>` for each constraint (0 past them, to
//!   the domain's `N`), moved to the coset `7 H` (`prove/coset.rs`), `(a b - c) / (7^N - 1)`
//!   there, and back to coefficients in bit-reversed order: `h`, whose first `|Z|` values go
//!   with the key's `Z`;
//! - `Ar = alpha + sum w_j A_j + r delta`, `Bs = beta_2 + sum w_j B2_j + s delta_2`, `Bs1 =
//!   beta_1 + sum w_j B_j + s delta_1` (the sums over the wires whose `A`, `B` are finite), and
//!   `Krs = sum w_j K_j + sum h_i Z_i + s Ar + r Bs1 - r s delta_1`, `K` over the private wires
//!   that are neither committed nor commitments.
//!
//! # Secrets
//! As snarkjs's prover (`prove/snarkjs.rs`): the witness, the solved wires, their canonical
//! copies for the MSMs and the vectors derived from them (the constraint vectors, the quotient)
//! are wiped when dropped; `r`, `s` multiply by blst's constant-time multiplication only; the MSMs and the
//! solver run in variable time over the witness, as gnark's do. The commitments' masks
//! (gnark's `Randomize` hint) come from the OS.

use std::convert::Infallible;
use std::io::{Read, Seek};

use blstrs::{G1Affine, G1Projective, G2Projective, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use lockstep_bls12::Canonical;
use lockstep_shard::{Control, Cut, Pool, memory};
use zeroize::Zeroizing;

use super::coset::Coset;
use super::{Blinding, ProveError, Secret};
use crate::curve;
use crate::groth16::{COMMITMENT_DST, FOLD_DST, Proof, Witness};
use crate::phase2::{KeyFile, KeyVector, ProvingKey, RawParts, RawSource};
use crate::r1cs::{Hints, R1cs, SolveError, solve};

/// Proves for `witness` (gnark's full witness) of `r1cs` under `key` on `pool`, blinded by
/// `blinding`, the commitments' masks from the OS; the same proof at every worker count for
/// the same blinding and masks.
///
/// The witness is solved and every constraint checked on the way: a witness that does not
/// satisfy the circuit is [`SolveError::Unsatisfied`], naming the first constraint. The
/// proof's points are checked in their subgroups before it is returned, so a key read with its
/// points on their curves only (`KeyChecks::Curve`) is safe to prove with
/// ([`ProveError::KeyPoints`] otherwise). A key whose points do not belong with the circuit
/// makes a proof that does not verify: check it with [`crate::groth16::verify`] under the
/// verifying key when the key's origin is not trusted.
///
/// # Errors
/// [`ProveError`]: a key of another circuit (named counts), a witness of another circuit, an
/// unsatisfied constraint, a hint the solver does not run, memory, cancellation.
pub fn prove(
    pool: &Pool,
    control: &Control,
    r1cs: &R1cs,
    key: &ProvingKey,
    witness: &Witness,
    blinding: &Blinding,
) -> Result<Proof, ProveError> {
    prove_with_masks(pool, control, r1cs, key, witness, blinding, &mut || {
        Scalar::random(rand_core::OsRng)
    })
}

/// [`prove`] with the commitments' masks from `mask` (tests fix them to compare proofs).
#[doc(hidden)]
pub fn prove_with_masks(
    pool: &Pool,
    control: &Control,
    r1cs: &R1cs,
    key: &ProvingKey,
    witness: &Witness,
    blinding: &Blinding,
    mask: &mut dyn FnMut() -> Scalar,
) -> Result<Proof, ProveError> {
    let head = Head::of(key);
    prove_from(
        pool,
        control,
        r1cs,
        &head,
        &Bases {
            key,
            chunk: curve::MSM_CHUNK_POINTS,
        },
        (witness, blinding, mask),
    )
}

/// [`prove`] over a key read a chunk of 2^20
/// points at a time from its file ([`KeyFile`]): the same proof, the key's vectors never whole
/// in memory. Each chunk's points are checked as the file was opened to check them.
///
/// # Errors
/// As [`prove`]; a bad point in a chunk (named), a read error.
pub fn prove_file<R: Read + Seek>(
    pool: &Pool,
    control: &Control,
    r1cs: &R1cs,
    key: &KeyFile<R>,
    witness: &Witness,
    blinding: &Blinding,
) -> Result<Proof, ProveError> {
    prove_file_with_masks(
        pool,
        control,
        r1cs,
        (key, curve::MSM_CHUNK_POINTS),
        witness,
        blinding,
        &mut || Scalar::random(rand_core::OsRng),
    )
}

/// [`prove_file`] with chunks of `chunk` points and the commitments' masks from `mask` (tests
/// force many chunks and compare proofs).
///
/// # Panics
/// If `chunk` is 0.
#[doc(hidden)]
pub fn prove_file_with_masks<R: Read + Seek>(
    pool: &Pool,
    control: &Control,
    r1cs: &R1cs,
    (key, chunk): (&KeyFile<R>, usize),
    witness: &Witness,
    blinding: &Blinding,
    mask: &mut dyn FnMut() -> Scalar,
) -> Result<Proof, ProveError> {
    assert!(chunk > 0, "invariant: chunks of at least one point");
    let head = Head::of(key);
    prove_from(
        pool,
        control,
        r1cs,
        &head,
        &Bases { key, chunk },
        (witness, blinding, mask),
    )
}

/// The key's large vectors in [`Head::counts`]'s order.
const VECTORS: [KeyVector; 5] = [
    KeyVector::A,
    KeyVector::B,
    KeyVector::Z,
    KeyVector::K,
    KeyVector::B2,
];

/// A proving key's parts the prover reads whole (its constants, flags and commitment keys:
/// [`RawParts`], which a raw write writes around the vectors too) and the lengths of its five
/// large vectors.
struct Head<'a> {
    parts: RawParts<'a>,
    /// A, B, Z, K and G2 B's lengths ([`VECTORS`]).
    counts: [usize; 5],
}

impl<'a> std::ops::Deref for Head<'a> {
    type Target = RawParts<'a>;
    fn deref(&self) -> &RawParts<'a> {
        &self.parts
    }
}

impl<'a> Head<'a> {
    fn of<K: RawSource>(key: &'a K) -> Self {
        Self {
            parts: key.parts(),
            counts: VECTORS.map(|v| key.count(v)),
        }
    }

    fn count(&self, vector: KeyVector) -> usize {
        self.counts[vector as usize]
    }
}

/// Where the MSMs' bases come from: a key in memory (its vectors lent) or its file (read), a
/// chunk of `chunk` points at a time.
struct Bases<'a> {
    key: &'a dyn RawSource,
    chunk: usize,
}

impl Bases<'_> {
    /// `sum scalars_i vector_i` over a G1 vector (as long as `scalars`: [`key_fits`]).
    fn g1(
        &self,
        pool: &Pool,
        control: &Control,
        vector: KeyVector,
        scalars: &[Canonical],
    ) -> Result<G1Projective, ProveError> {
        super::msm_by_chunks(pool, control, self.chunk, scalars, |range| {
            self.key.g1(pool, control, vector, range)
        })
    }

    /// `sum scalars_i B2_i`.
    fn g2(
        &self,
        pool: &Pool,
        control: &Control,
        scalars: &[Canonical],
    ) -> Result<G2Projective, ProveError> {
        super::msm_by_chunks(pool, control, self.chunk, scalars, |range| {
            self.key.g2(pool, control, range)
        })
    }
}

/// The prover over either kind of key (see [`prove`]).
fn prove_from(
    pool: &Pool,
    control: &Control,
    r1cs: &R1cs,
    key: &Head<'_>,
    bases: &Bases<'_>,
    (witness, blinding, mask): (&Witness, &Blinding, &mut dyn FnMut() -> Scalar),
) -> Result<Proof, ProveError> {
    key_fits(r1cs, key)?;
    let quiet = control.nested();
    let mut commit = Commit {
        pool,
        control: &quiet,
        commitment_keys: key.commitment_keys,
        mask,
        commitments: Vec::new(),
        committed: Vec::new(),
    };
    let (public, secret) = witness.values.split_at(witness.public);
    let solved = solve(r1cs, public, secret, &mut commit)?;
    let w = solved.wires();
    let pok = commit.proof_of_knowledge(r1cs, w)?;
    let commitments = std::mem::take(&mut commit.commitments);
    drop(commit);

    let h = quotient(pool, &quiet, r1cs, key.power, w)?;
    let filtered = |skip: &dyn Fn(usize) -> bool| -> Result<Zeroizing<Vec<Canonical>>, ProveError> {
        let mut out = Zeroizing::new(
            memory::try_with_capacity(w.len()).map_err(ProveError::memory("scalars"))?,
        );
        out.extend(
            w.iter()
                .enumerate()
                .filter(|&(j, _)| !skip(j))
                .map(|(_, v)| Canonical::from_scalar(v)),
        );
        Ok(out)
    };
    let a_scalars = filtered(&|j| key.infinity_a[j])?;
    let sum_a = bases.g1(pool, control, KeyVector::A, &a_scalars)?;
    drop(a_scalars);
    let b_scalars = filtered(&|j| key.infinity_b[j])?;
    let sum_b1 = bases.g1(pool, control, KeyVector::B, &b_scalars)?;
    let sum_b2 = bases.g2(pool, control, &b_scalars)?;
    drop(b_scalars);
    let excluded = excluded_from_k(r1cs);
    let k_scalars = filtered(&|j| j < r1cs.public() || excluded.binary_search(&j).is_ok())?;
    let sum_k = bases.g1(pool, control, KeyVector::K, &k_scalars)?;
    drop(k_scalars);
    let sum_z = bases.g1(pool, control, KeyVector::Z, &h[..key.count(KeyVector::Z)])?;

    let (r, s) = (blinding.r(), blinding.s());
    let delta1 = G1Projective::from(key.delta_g1);
    let ar = sum_a + key.alpha_g1 + delta1 * r;
    let bs1 = sum_b1 + key.beta_g1 + delta1 * s;
    let bs = sum_b2 + key.beta_g2 + G2Projective::from(key.delta_g2) * s;
    let mut minus_rs = -(*r * s);
    let krs = sum_k + sum_z + ar * s + bs1 * r + delta1 * minus_rs;
    curve::wipe_scalar(&mut minus_rs);
    let proof = Proof {
        ar: ar.to_affine(),
        bs: bs.to_affine(),
        krs: krs.to_affine(),
        commitments,
        commitment_pok: pok,
    };
    // A key read with its points on their curves only (`KeyChecks::Curve`) is settled here:
    // a point outside its subgroup shows in the proof's, or leaves nothing of itself in them.
    let g1_points = [proof.ar, proof.krs, proof.commitment_pok];
    if !g1_points
        .iter()
        .chain(&proof.commitments)
        .all(|p| bool::from(p.is_torsion_free()))
        || !bool::from(proof.bs.is_torsion_free())
    {
        return Err(ProveError::KeyPoints);
    }
    Ok(proof)
}

/// The key's counts against the circuit's.
fn key_fits(r1cs: &R1cs, key: &Head<'_>) -> Result<(), ProveError> {
    let wires = r1cs.wires();
    let commitments = r1cs.commitments();
    // K's wires exactly as the prover filters them (a file may list a wire twice or a public
    // one among the committed: the count must be the filter's, or the MSM's lengths differ).
    let excluded = excluded_from_k(r1cs);
    let private = (r1cs.public()..wires)
        .filter(|j| excluded.binary_search(j).is_err())
        .count();
    let finite = |flags: &[bool]| flags.iter().filter(|&&f| !f).count();
    let counts = [
        (
            "the domain's power",
            key.power as usize,
            r1cs.domain_power() as usize,
        ),
        ("wires", key.infinity_a.len(), wires),
        ("wires (B's flags)", key.infinity_b.len(), wires),
        (
            "A's points",
            key.count(KeyVector::A),
            finite(key.infinity_a),
        ),
        (
            "B's points",
            key.count(KeyVector::B),
            finite(key.infinity_b),
        ),
        (
            "B's G2 points",
            key.count(KeyVector::B2),
            finite(key.infinity_b),
        ),
        ("commitments", key.commitment_keys.len(), commitments.len()),
        (
            "K's points (private wires)",
            key.count(KeyVector::K),
            private,
        ),
    ];
    if let Some((what, theirs, ours)) = counts.iter().find(|(_, a, b)| a != b) {
        return Err(ProveError::Key(format!(
            "{what}: {theirs}, the circuit's {ours}: a key of another circuit"
        )));
    }
    for (i, ((basis, sigma), c)) in key.commitment_keys.iter().zip(commitments).enumerate() {
        if basis.len() != c.private_committed.len() || sigma.len() != basis.len() {
            return Err(ProveError::Key(format!(
                "commitment {i}'s basis holds {} points ({} times sigma), the circuit commits \
                 to {} private wires",
                basis.len(),
                sigma.len(),
                c.private_committed.len()
            )));
        }
    }
    if key.power > 32 {
        return Err(ProveError::Domain(key.power));
    }
    let n = 1usize << key.power;
    let z = key.count(KeyVector::Z);
    if z + 1 != n && z != n {
        return Err(ProveError::Key(format!(
            "Z holds {z} points for a domain of {n}"
        )));
    }
    Ok(())
}

/// The wires `K` leaves out besides the public ones: the private committed wires and the
/// commitments' wires, sorted.
fn excluded_from_k(r1cs: &R1cs) -> Vec<usize> {
    let mut out: Vec<usize> = r1cs
        .commitments()
        .iter()
        .flat_map(|c| {
            c.private_committed
                .iter()
                .copied()
                .chain([c.commitment_index])
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// A commitment wire's value: `fr.Hash(C uncompressed || the hashed values, 32 bytes BE each,
/// "bsb22-commitment")`, as gnark's prover overrides the BSB22 placeholder (and its verifier
/// recomputes).
fn commitment_value(point: &G1Affine, hashed: &[Scalar]) -> Scalar {
    let mut prehash = curve::g1_uncompressed(point).to_vec();
    for v in hashed {
        prehash.extend_from_slice(&v.to_bytes_be());
    }
    let [value] = curve::hash_to_scalars::<1>(&prehash, COMMITMENT_DST);
    value
}

/// The solver's commitment hint: the Pedersen commitments under the key, kept for the proof.
struct Commit<'a> {
    pool: &'a Pool,
    control: &'a Control,
    commitment_keys: &'a [(Vec<G1Affine>, Vec<G1Affine>)],
    mask: &'a mut dyn FnMut() -> Scalar,
    commitments: Vec<G1Affine>,
    /// Each commitment's private values, for the proof of knowledge (wiped when dropped).
    committed: Vec<Vec<Scalar>>,
}

impl Drop for Commit<'_> {
    fn drop(&mut self) {
        for values in &mut self.committed {
            curve::wipe_scalars(values);
        }
    }
}

impl Hints for Commit<'_> {
    fn commitment(
        &mut self,
        index: usize,
        hashed: &[Scalar],
        committed: &[Scalar],
    ) -> Result<Scalar, String> {
        if index != self.commitments.len() {
            return Err(format!(
                "commitment {index} is computed after {} others: gnark computes them in order",
                self.commitments.len()
            ));
        }
        let (basis, _) = &self.commitment_keys[index];
        let scalars: Zeroizing<Vec<Canonical>> =
            Zeroizing::new(committed.iter().map(Canonical::from_scalar).collect());
        let point = curve::msm_chunked(self.pool, self.control, basis, &scalars)
            .map_err(|e| e.to_string())?
            .to_affine();
        self.commitments.push(point);
        self.committed.push(committed.to_vec());
        Ok(commitment_value(&point, hashed))
    }

    fn random(&mut self) -> Scalar {
        (self.mask)()
    }
}

impl Commit<'_> {
    /// `sum c^i sum w_j SigmaBasis_ij`, `c` the hash of the commitments' values.
    fn proof_of_knowledge(&self, r1cs: &R1cs, w: &[Scalar]) -> Result<G1Affine, ProveError> {
        let commitments = r1cs.commitments();
        if self.commitments.len() != commitments.len() {
            return Err(SolveError::Malformed {
                constraint: r1cs.constraints(),
                problem: format!(
                    "{} of the circuit's {} commitments were computed: a commitment's hint \
                     call is missing",
                    self.commitments.len(),
                    commitments.len()
                ),
            }
            .into());
        }
        if commitments.is_empty() {
            return Ok(G1Affine::identity());
        }
        let mut values = Vec::with_capacity(32 * commitments.len());
        for c in commitments {
            values.extend_from_slice(&w[c.commitment_index].to_bytes_be());
        }
        let [challenge] = curve::hash_to_scalars::<1>(&values, FOLD_DST);
        let mut pok = G1Projective::identity();
        let mut power = Scalar::ONE;
        for ((_, sigma), committed) in self.commitment_keys.iter().zip(&self.committed) {
            let scalars: Zeroizing<Vec<Canonical>> =
                Zeroizing::new(committed.iter().map(Canonical::from_scalar).collect());
            let sum = curve::msm_chunked(self.pool, self.control, sigma, &scalars)?;
            pok += curve::g1_mul_public(&sum, &power);
            power *= challenge;
        }
        Ok(pok.to_affine())
    }
}

/// `h`'s coefficients in bit-reversed order, as canonical scalars (see the module's
/// documentation).
fn quotient(
    pool: &Pool,
    control: &Control,
    r1cs: &R1cs,
    power: u32,
    w: &[Scalar],
) -> Result<Zeroizing<Vec<Canonical>>, ProveError> {
    let coset = Coset::gnark(power).map_err(ProveError::memory("the coset's tables"))?;
    let n = coset.size();
    // The constraint vectors and the quotient come from the witness: wiped as they go.
    let zeros = || {
        memory::try_filled(n, Scalar::ZERO)
            .map(Secret)
            .map_err(ProveError::memory("A, B and C"))
    };
    let (mut a, mut b, mut c) = (zeros()?, zeros()?, zeros()?);
    let m = r1cs.constraints();
    let eval = |terms: crate::r1cs::Terms<'_>| {
        terms.iter().fold(Scalar::ZERO, |sum, t| {
            sum + r1cs.coefficient_value(t.coeff) * w[t.wire as usize]
        })
    };
    pool.for_each_block(
        control,
        (&mut a[..m], &mut b[..m], &mut c[..m]),
        Cut::Blocks(1 << 12),
        |_, range, (xs, ys, zs): (&mut [Scalar], &mut [Scalar], &mut [Scalar])| {
            for (i, ((x, y), z)) in range.zip(xs.iter_mut().zip(ys.iter_mut()).zip(zs.iter_mut())) {
                let constraint = r1cs.constraint(i);
                *x = eval(constraint.l);
                *y = eval(constraint.r);
                *z = eval(constraint.o);
            }
            Ok::<_, Infallible>(())
        },
    )?;
    for values in [&mut a, &mut b, &mut c] {
        coset.extend(pool, control, values)?;
    }
    let den = Option::<Scalar>::from(coset.vanishing().invert())
        .expect("invariant: 7^N != 1 (7 generates the multiplicative group, N < r - 1)");
    pool.for_each_block(
        control,
        (&mut a[..], &b[..], &c[..]),
        Cut::Blocks(1 << 12),
        |_, _, (xs, ys, zs): (&mut [Scalar], &[Scalar], &[Scalar])| {
            for ((x, y), z) in xs.iter_mut().zip(ys).zip(zs) {
                *x = (*x * y - z) * den;
            }
            Ok::<_, Infallible>(())
        },
    )?;
    drop((b, c));
    coset.contract(pool, control, &mut a)?;
    super::canonical_secret(pool, control, &a)
}

/// The proof from the definition, on the current thread: the commitments and every MSM one
/// constant-time multiplication a point, the quotient by interpolation (`O(N^2)`), a
/// schoolbook product and a long division by `X^N - 1`. Not checked: the test of
/// [`prove_with_masks`]'s transforms and MSMs (the solver is shared).
///
/// # Errors
/// As [`prove`].
#[doc(hidden)]
pub fn prove_reference(
    r1cs: &R1cs,
    key: &ProvingKey,
    witness: &Witness,
    blinding: &Blinding,
    mask: &mut dyn FnMut() -> Scalar,
) -> Result<Proof, ProveError> {
    key_fits(r1cs, &Head::of(key))?;
    let sum = |points: &[G1Affine], scalars: &mut dyn Iterator<Item = Scalar>| {
        points
            .iter()
            .zip(scalars)
            .fold(G1Projective::identity(), |acc, (p, s)| acc + p * s)
    };
    struct Definition<'a> {
        key: &'a ProvingKey,
        mask: &'a mut dyn FnMut() -> Scalar,
        commitments: Vec<G1Affine>,
        committed: Vec<Vec<Scalar>>,
    }
    impl Hints for Definition<'_> {
        fn commitment(
            &mut self,
            index: usize,
            hashed: &[Scalar],
            committed: &[Scalar],
        ) -> Result<Scalar, String> {
            let (basis, _) = &self.key.commitment_keys[index];
            let point = basis
                .iter()
                .zip(committed)
                .fold(G1Projective::identity(), |acc, (p, s)| acc + p * s)
                .to_affine();
            self.commitments.push(point);
            self.committed.push(committed.to_vec());
            Ok(commitment_value(&point, hashed))
        }

        fn random(&mut self) -> Scalar {
            (self.mask)()
        }
    }
    let mut hints = Definition {
        key,
        mask,
        commitments: Vec::new(),
        committed: Vec::new(),
    };
    let (public, secret) = witness.values.split_at(witness.public);
    let solved = solve(r1cs, public, secret, &mut hints)?;
    let w = solved.wires();
    let mut pok = G1Projective::identity();
    if !hints.commitments.is_empty() {
        let mut values = Vec::new();
        for c in r1cs.commitments() {
            values.extend_from_slice(&w[c.commitment_index].to_bytes_be());
        }
        let [challenge] = curve::hash_to_scalars::<1>(&values, FOLD_DST);
        let mut power = Scalar::ONE;
        for ((_, sigma), committed) in key.commitment_keys.iter().zip(&hints.committed) {
            pok += sum(sigma, &mut committed.iter().copied()) * power;
            power *= challenge;
        }
    }
    // The quotient's coefficients, natural order.
    let n = 1usize << key.power;
    let omega = crate::fft::gnark_omega(key.power);
    let n_inv = Scalar::from(n as u64)
        .invert()
        .expect("invariant: N is invertible");
    let eval = |terms: crate::r1cs::Terms<'_>| {
        terms.iter().fold(Scalar::ZERO, |acc, t| {
            acc + r1cs.coefficient_value(t.coeff) * w[t.wire as usize]
        })
    };
    let interpolate = |side: &dyn Fn(usize) -> Scalar| -> Vec<Scalar> {
        let values: Vec<Scalar> = (0..n)
            .map(|i| {
                if i < r1cs.constraints() {
                    side(i)
                } else {
                    Scalar::ZERO
                }
            })
            .collect();
        (0..n)
            .map(|k| {
                let step = omega
                    .pow_vartime([k as u64])
                    .invert()
                    .expect("invariant: a root");
                let mut x = Scalar::ONE;
                let mut acc = Scalar::ZERO;
                for v in &values {
                    acc += *v * x;
                    x *= step;
                }
                acc * n_inv
            })
            .collect()
    };
    let a = interpolate(&|i| eval(r1cs.constraint(i).l));
    let b = interpolate(&|i| eval(r1cs.constraint(i).r));
    let c = interpolate(&|i| eval(r1cs.constraint(i).o));
    let mut p = vec![Scalar::ZERO; 2 * n];
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            p[i + j] += *x * y;
        }
    }
    for (i, z) in c.iter().enumerate() {
        p[i] -= z;
    }
    // P = h (X^N - 1): from the top, h_(d - N) = P_d, and P_(d - N) += P_d.
    let mut h = vec![Scalar::ZERO; n];
    for d in (n..2 * n).rev() {
        h[d - n] = p[d];
        let carry = p[d];
        p[d - n] += carry;
    }
    if p[..n].iter().any(|v| !bool::from(v.is_zero())) {
        return Err(SolveError::Malformed {
            constraint: r1cs.constraints(),
            problem: "the quotient leaves a remainder: a constraint does not hold".into(),
        }
        .into());
    }
    let bits = key.power;
    let reversed = |i: usize| {
        if bits == 0 {
            0
        } else {
            i.reverse_bits() >> (usize::BITS - bits)
        }
    };
    let wires = |skip: &dyn Fn(usize) -> bool| -> Vec<Scalar> {
        w.iter()
            .enumerate()
            .filter(|&(j, _)| !skip(j))
            .map(|(_, v)| *v)
            .collect()
    };
    let excluded = excluded_from_k(r1cs);
    let sum_a = sum(&key.a, &mut wires(&|j| key.infinity_a[j]).into_iter());
    let b_values = wires(&|j| key.infinity_b[j]);
    let sum_b1 = sum(&key.b, &mut b_values.iter().copied());
    let sum_b2 = key
        .b2
        .iter()
        .zip(&b_values)
        .fold(G2Projective::identity(), |acc, (p, s)| acc + p * s);
    let k_values = wires(&|j| j < r1cs.public() || excluded.binary_search(&j).is_ok());
    let sum_k = sum(&key.k, &mut k_values.into_iter());
    let sum_z = sum(&key.z, &mut (0..key.z.len()).map(|i| h[reversed(i)]));
    let (r, s) = (blinding.r(), blinding.s());
    let delta1 = G1Projective::from(key.delta_g1);
    let ar = sum_a + key.alpha_g1 + delta1 * r;
    let bs1 = sum_b1 + key.beta_g1 + delta1 * s;
    let bs = sum_b2 + key.beta_g2 + G2Projective::from(key.delta_g2) * s;
    let krs = sum_k + sum_z + ar * s + bs1 * r - delta1 * (*r * s);
    Ok(Proof {
        ar: ar.to_affine(),
        bs: bs.to_affine(),
        krs: krs.to_affine(),
        commitments: hints.commitments,
        commitment_pok: pok.to_affine(),
    })
}
