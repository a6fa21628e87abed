//! A circuit's initial `.zkey` from known secrets, for tests and benchmarks only: the key
//! `zkey new` makes from a `.ptau` whose one update had these `tau`, `alpha`, `beta`, computed
//! from the scalars (each point one multiplication of a generator) rather than from a
//! `.ptau`'s Lagrange sections. Anyone who knows the secrets can forge proofs for the key: it
//! is a fixture for measuring and testing a prover on large circuits, whose `.ptau` would take
//! minutes to prepare, never a ceremony's output.
//!
//! With `L_c` the Lagrange polynomials of snarkjs's domain of `n` at tau and `L'_j` those of
//! the domain of `2n`: `A[s] = [u_s]_1`, `B1[s] = [v_s]_1`, `B2[s] = [v_s]_2` for `u_s = sum a
//! L_c` over the A terms (and `L_(m+s)` for `s <= nPublic`), `v_s` the same over B, `w_s` over
//! C; `K[s] = [beta u_s + alpha v_s + w_s]_1` (`IC`, then `C`); `H[i] = [L'_(2i+1)]_1`;
//! `delta` and `gamma` one; section 4 as `zkey new` writes it. The circuit hash is left zero.

use std::convert::Infallible;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use lockstep_shard::{Control, Pool, memory};

use super::new::coefficient_section;
use super::{Header, Zkey, ZkeyError};
use crate::circom::CircomR1cs;
use crate::fft::Domain;
use crate::phase1::Secrets;

/// Points per task of the multiplications.
const BLOCK: usize = 256;

/// `L_j(tau)` for the snarkjs domain of `2^power`: `(tau^n - 1) omega^j / (n (tau - omega^j))`.
fn lagrange_at(power: u32, tau: &Scalar) -> Result<Vec<Scalar>, ZkeyError> {
    let domain = Domain::snarkjs(power);
    let n = domain.size();
    let mut roots = memory::try_with_capacity(n).map_err(ZkeyError::memory("Lagrange values"))?;
    let mut w = Scalar::ONE;
    for _ in 0..n {
        roots.push(w);
        w *= domain.omega();
    }
    let numerator = (tau.pow_vartime([n as u64]) - Scalar::ONE) * domain.n_inv();
    let mut out: Vec<Scalar> = roots.iter().map(|w| *tau - w).collect();
    // One inversion for all (tau is not a root of unity: the caller's secrets are random).
    let mut prefix = Vec::with_capacity(n);
    let mut acc = Scalar::ONE;
    for x in &out {
        prefix.push(acc);
        acc *= x;
    }
    let mut inv = acc
        .invert()
        .into_option()
        .ok_or_else(|| ZkeyError::Format("tau is a root of unity of the domain".into()))?;
    for i in (0..n).rev() {
        let x = out[i];
        out[i] = inv * prefix[i] * roots[i] * numerator;
        inv *= x;
    }
    Ok(out)
}

/// `[s]G` for each scalar, on the pool, in affine form.
fn times_generator<P>(
    pool: &Pool,
    control: &Control,
    scalars: &[Scalar],
) -> Result<Vec<P::AffineRepr>, ZkeyError>
where
    P: Group + Curve + Send + Sync + std::ops::Mul<Scalar, Output = P>,
    P::AffineRepr: Send + Default + Copy,
{
    let g = P::generator();
    let points: Vec<P> = pool.map_blocks(control, scalars, BLOCK, |_, block| {
        block.iter().map(|s| Ok::<_, Infallible>(g * *s)).collect()
    })?;
    let mut affine = vec![P::AffineRepr::default(); points.len()];
    P::batch_normalize(&points, &mut affine);
    Ok(affine)
}

/// The key of `r1cs` for the `tau`, `alpha` and `beta` of `secrets` (see the module).
///
/// # Errors
/// A circuit whose domain is above 2^31 or whose terms snarkjs cannot count; memory;
/// cancellation.
#[doc(hidden)]
pub fn from_known_secrets(
    pool: &Pool,
    control: &Control,
    r1cs: &CircomR1cs,
    secrets: &Secrets,
) -> Result<Zkey, ZkeyError> {
    let header = r1cs.header();
    let power = header.domain_power();
    if power >= 32 {
        return Err(ZkeyError::Format(format!("a domain of 2^{power}")));
    }
    let (tau, alpha, beta) = (&secrets.tau, &secrets.alpha, &secrets.beta);
    let l = lagrange_at(power, tau)?;
    let wires = header.wires as usize;
    let zeros = || memory::try_filled(wires, Scalar::ZERO).map_err(ZkeyError::memory("sums"));
    let (mut u, mut v, mut w) = (zeros()?, zeros()?, zeros()?);
    let m = header.constraints as usize;
    for (c, lc) in l.iter().enumerate().take(m) {
        let [a, b, cc] = r1cs.constraint(c);
        for (sums, terms) in [(&mut u, a), (&mut v, b), (&mut w, cc)] {
            for t in terms {
                sums[t.wire as usize] += t.coeff * lc;
            }
        }
    }
    for s in 0..=header.public() as usize {
        u[s] += l[m + s];
    }
    let k: Vec<Scalar> = (0..wires)
        .map(|s| *beta * u[s] + *alpha * v[s] + w[s])
        .collect();
    let odd: Vec<Scalar> = lagrange_at(power + 1, tau)?
        .into_iter()
        .skip(1)
        .step_by(2)
        .collect();
    let a = times_generator::<G1Projective>(pool, control, &u)?;
    let b1 = times_generator::<G1Projective>(pool, control, &v)?;
    let b2 = times_generator::<G2Projective>(pool, control, &v)?;
    let mut ic = times_generator::<G1Projective>(pool, control, &k)?;
    let c = ic.split_off(header.public() as usize + 1);
    let h = times_generator::<G1Projective>(pool, control, &odd)?;
    let [alpha1, beta1] = [alpha, beta].map(|s| (G1Projective::generator() * s).to_affine());
    Ok(Zkey {
        header: Header {
            n_vars: header.wires,
            n_public: header.public(),
            power,
            alpha1,
            beta1,
            beta2: (G2Projective::generator() * beta).to_affine(),
            gamma2: G2Affine::generator(),
            delta1: G1Affine::generator(),
            delta2: G2Affine::generator(),
        },
        ic,
        coefficients: coefficient_section(r1cs)?,
        a,
        b1,
        b2,
        c,
        h,
        circuit_hash: [0; 64],
        contributions: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::circom::r1cs::tests::file as r1cs_file;
    use crate::codec::Limits;

    #[test]
    fn the_key_is_zkey_new_s_from_powers_with_these_secrets() {
        let secrets = || {
            Secrets::from_scalars(
                Scalar::from(123_456_789u64),
                Scalar::from(987u64),
                -Scalar::from(55u64),
            )
        };
        // A circuit of 6 constraints over 12 wires, 2 public: a domain of 2^4.
        let constraints: Vec<[Vec<(u32, u64)>; 3]> = (0..6u32)
            .map(|i| {
                [
                    vec![(1 + i, 3), (7, 1)],
                    vec![(2 + i, 1)],
                    vec![(5 + i, 2), (0, 9)],
                ]
            })
            .collect();
        let r1cs = CircomR1cs::read(Cursor::new(r1cs_file(12, (1, 1), &constraints))).unwrap();
        let pool = Pool::new(2).unwrap();
        let power = r1cs.header().domain_power() + 1;
        let mut srs = crate::phase1::Srs::one(power).unwrap();
        crate::phase1::update_serial(&mut srs, &secrets());
        let mut plain = Vec::new();
        crate::ptau::write(&pool, &Control::new(), &srs, &mut plain).unwrap();
        let mut prepared = Vec::new();
        crate::ptau::prepare(
            &pool,
            &Control::new(),
            Cursor::new(&plain),
            &mut prepared,
            &Limits::default(),
        )
        .unwrap();
        let want = super::super::new(
            &pool,
            &Control::new(),
            &r1cs,
            Cursor::new(&prepared),
            &Limits::default(),
        )
        .unwrap();
        let got = from_known_secrets(&pool, &Control::new(), &r1cs, &secrets()).unwrap();
        assert_eq!(
            Zkey {
                circuit_hash: want.circuit_hash,
                ..got
            },
            want
        );
    }
}
