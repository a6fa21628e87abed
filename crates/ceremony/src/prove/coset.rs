//! The move from a polynomial's evaluations on the domain to its evaluations on snarkjs's odd
//! coset, which a Groth16 prover's quotient needs (`groth16_prove.js`: `ifft`, then
//! `batchApplyKey(.., 1, inc)`, then `fft`).
//!
//! For the domain `omega^i` (`i < N`, `omega` ffjavascript's `Fr.w[power]`) and the shift
//! `g = Fr.w[power + 1]` (a square root of `omega`, so `g omega^i` are the odd powers of a
//! root of order `2N`), the values `v_i = p(omega^i)` of a polynomial of degree below `N`
//! become `p(g omega^k)`, in natural order: an inverse transform by decimation in frequency
//! (natural order in, bit-reversed out), one scaling by `N^-1 g^j` at the bit-reversed places,
//! and a forward transform by decimation in time (bit-reversed in, natural out). No permutation
//! pass: the two transforms meet in bit-reversed order.
//!
//! # Parallelism
//! As the group FFT ([`crate::fft`]): each recursion node's butterfly pass runs on its share of
//! the worker budget in blocks of butterflies, its halves as two branches of half the budget,
//! serially below [`SERIAL_BELOW`] values. A butterfly owns its two values. Field arithmetic is
//! exact, so the values are the same at every worker count and equal [`Coset::extend_serial`]'s.
//!
//! # Memory
//! In place over the caller's values; the twiddle tables hold `N` scalars and the scaling
//! table `N` (32 bytes each).

use std::convert::Infallible;

use blstrs::Scalar;
use ff::Field;
use lockstep_shard::{Control, Cut, Error, Pool, memory};

use crate::fft::{bit_reverse, gnark_omega, snarkjs_omega};

/// Transforms of this many values or fewer run serially (a few hundred microseconds).
const SERIAL_BELOW: usize = 1 << 12;

/// Butterflies per task of a pass.
const BUTTERFLY_BLOCK: usize = 1 << 10;

/// Values per task of the scaling.
const SCALE_BLOCK: usize = 1 << 12;

/// A coset `g H` of a domain `H` of size `2^power`: snarkjs's odd coset, or gnark's coset by
/// the field's multiplicative generator.
#[derive(Clone, Debug)]
pub(crate) struct Coset {
    /// `omega^i` for `i < N / 2`.
    forward: Vec<Scalar>,
    /// `omega^-i` for `i < N / 2`.
    inverse: Vec<Scalar>,
    /// `N^-1 g^j` at the bit-reversal of `j`.
    scale: Vec<Scalar>,
    /// `N^-1 g^-j` at the bit-reversal of `j` (gnark's coset only: its quotient comes back
    /// to coefficients; empty otherwise).
    unscale: Vec<Scalar>,
    /// `g^N - 1`.
    vanishing: Scalar,
}

impl Coset {
    /// The tables for the domain of size `2^power` (`power < 32`: the shift is a root of order
    /// `2^(power + 1)`, and BLS12-381's scalar field has them up to `2^32`).
    ///
    /// # Errors
    /// Memory for the tables.
    pub(crate) fn snarkjs(power: u32) -> Result<Self, memory::AllocError> {
        assert!(
            power < 32,
            "invariant: a domain of 2^0 to 2^31 (checked by the caller)"
        );
        let shift = snarkjs_omega(power + 1);
        debug_assert_eq!(shift.square(), snarkjs_omega(power));
        Self::new(power, snarkjs_omega(power), shift, false)
    }

    /// gnark-crypto's coset for the domain of size `2^power` (`power <= 32`): gnark's root of
    /// unity (`fr.Generator(N)`) and the shift `7`, its `FrMultiplicativeGen`, with the table
    /// [`contract`](Self::contract) needs.
    ///
    /// # Errors
    /// Memory for the tables.
    pub(crate) fn gnark(power: u32) -> Result<Self, memory::AllocError> {
        assert!(
            power <= 32,
            "invariant: a domain of 2^0 to 2^32 (checked by the caller)"
        );
        Self::new(power, gnark_omega(power), Scalar::from(7u64), true)
    }

    fn new(
        power: u32,
        omega: Scalar,
        shift: Scalar,
        contracts: bool,
    ) -> Result<Self, memory::AllocError> {
        let n = 1usize << power;
        let omega_inv = omega
            .invert()
            .expect("invariant: a root of unity is invertible");
        let n_inv = Scalar::from(n as u64)
            .invert()
            .expect("invariant: N < r is invertible");
        let powers = |base: Scalar, count: usize, first: Scalar| {
            let mut t = first;
            memory::try_collect((0..count).map(|_| {
                let v = t;
                t *= base;
                v
            }))
        };
        let forward = powers(omega, n / 2, Scalar::ONE)?;
        let inverse = powers(omega_inv, n / 2, Scalar::ONE)?;
        let mut scale = powers(shift, n, n_inv)?;
        bit_reverse(&mut scale);
        let unscale = if contracts {
            let shift_inv = shift.invert().expect("invariant: the shift is not zero");
            let mut unscale = powers(shift_inv, n, n_inv)?;
            bit_reverse(&mut unscale);
            unscale
        } else {
            Vec::new()
        };
        Ok(Self {
            forward,
            inverse,
            scale,
            unscale,
            vanishing: shift.pow_vartime([n as u64]) - Scalar::ONE,
        })
    }

    /// Replaces `values` (`p(g omega^k)`, `k < N`, natural order) by the coefficients of `p`
    /// in bit-reversed order (position `i` holds the coefficient of `X^rev(i)`), as gnark's
    /// `FFTInverse(.., DIF, OnCoset())` leaves them, on `pool`.
    ///
    /// # Errors
    /// Cancellation, or a stall of the run.
    ///
    /// # Panics
    /// If `values` does not hold exactly `N` values, or the coset was not built by
    /// [`gnark`](Self::gnark).
    pub(crate) fn contract(
        &self,
        pool: &Pool,
        control: &Control,
        values: &mut [Scalar],
    ) -> Result<(), Error<Infallible>> {
        assert_eq!(values.len(), self.size(), "invariant: N values");
        assert_eq!(self.unscale.len(), self.size(), "invariant: gnark's coset");
        dif(pool, control, values, &self.inverse, 1)?;
        scale(pool, control, values, &self.unscale)
    }

    /// [`contract`](Self::contract) on the current thread.
    ///
    /// # Panics
    /// As [`contract`](Self::contract).
    #[cfg(test)]
    pub(crate) fn contract_serial(&self, values: &mut [Scalar]) {
        assert_eq!(values.len(), self.size(), "invariant: N values");
        dif_serial(values, &self.inverse, 1);
        for (x, t) in values.iter_mut().zip(&self.unscale) {
            *x *= t;
        }
    }

    /// `g^N - 1`: the domain's vanishing polynomial `X^N - 1`, the same at every point of the
    /// coset.
    pub(crate) fn vanishing(&self) -> Scalar {
        self.vanishing
    }

    /// The domain's size `N`.
    pub(crate) fn size(&self) -> usize {
        self.scale.len()
    }

    /// Replaces `values` (`p(omega^i)`, `i < N`) by `p(g omega^k)`, `k < N`, on `pool`.
    ///
    /// # Errors
    /// Cancellation, or a stall of the run.
    ///
    /// # Panics
    /// If `values` does not hold exactly `N` values.
    pub(crate) fn extend(
        &self,
        pool: &Pool,
        control: &Control,
        values: &mut [Scalar],
    ) -> Result<(), Error<Infallible>> {
        assert_eq!(values.len(), self.size(), "invariant: N values");
        dif(pool, control, values, &self.inverse, 1)?;
        scale(pool, control, values, &self.scale)?;
        dit(pool, control, values, &self.forward, 1)
    }

    /// [`extend`](Self::extend) on the current thread.
    ///
    /// # Panics
    /// If `values` does not hold exactly `N` values.
    #[cfg(test)]
    pub(crate) fn extend_serial(&self, values: &mut [Scalar]) {
        assert_eq!(values.len(), self.size(), "invariant: N values");
        dif_serial(values, &self.inverse, 1);
        for (x, t) in values.iter_mut().zip(&self.scale) {
            *x *= t;
        }
        dit_serial(values, &self.forward, 1);
    }
}

/// `values[i] *= table[i]` on the pool.
fn scale(
    pool: &Pool,
    control: &Control,
    values: &mut [Scalar],
    table: &[Scalar],
) -> Result<(), Error<Infallible>> {
    pool.for_each_block(
        control,
        (values, table),
        Cut::Blocks(SCALE_BLOCK),
        |_, _, (xs, ts): (&mut [Scalar], &[Scalar])| {
            for (x, t) in xs.iter_mut().zip(ts) {
                *x *= t;
            }
            Ok::<_, Infallible>(())
        },
    )
}

/// Decimation in frequency: natural order in, the transform (twiddles `tw[i * stride]`) out in
/// bit-reversed order.
fn dif_serial(a: &mut [Scalar], tw: &[Scalar], stride: usize) {
    let n = a.len();
    if n < 2 {
        return;
    }
    let (lo, hi) = a.split_at_mut(n / 2);
    for (i, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
        let d = *x - *y;
        *x += *y;
        *y = if i == 0 { d } else { d * tw[i * stride] };
    }
    dif_serial(lo, tw, 2 * stride);
    dif_serial(hi, tw, 2 * stride);
}

/// Decimation in time: bit-reversed order in, the transform (twiddles `tw[i * stride]`) out in
/// natural order.
fn dit_serial(a: &mut [Scalar], tw: &[Scalar], stride: usize) {
    let n = a.len();
    if n < 2 {
        return;
    }
    let (lo, hi) = a.split_at_mut(n / 2);
    dit_serial(lo, tw, 2 * stride);
    dit_serial(hi, tw, 2 * stride);
    for (i, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
        let t = if i == 0 { *y } else { *y * tw[i * stride] };
        *y = *x - t;
        *x += t;
    }
}

/// [`dif_serial`] with the pass on the pool and the halves as two branches.
fn dif(
    pool: &Pool,
    control: &Control,
    a: &mut [Scalar],
    tw: &[Scalar],
    stride: usize,
) -> Result<(), Error<Infallible>> {
    let n = a.len();
    if n <= SERIAL_BELOW {
        dif_serial(a, tw, stride);
        return Ok(());
    }
    let (lo, hi) = a.split_at_mut(n / 2);
    pool.for_each_block(
        control,
        (&mut *lo, &mut *hi),
        Cut::Blocks(BUTTERFLY_BLOCK),
        |_, range, (xs, ys): (&mut [Scalar], &mut [Scalar])| {
            for (i, (x, y)) in range.zip(xs.iter_mut().zip(ys.iter_mut())) {
                let d = *x - *y;
                *x += *y;
                *y = if i == 0 { d } else { d * tw[i * stride] };
            }
            Ok::<_, Infallible>(())
        },
    )?;
    halves(pool, control, lo, hi, |p, c, h| {
        dif(p, c, h, tw, 2 * stride)
    })
}

/// [`dit_serial`] with the halves as two branches and the pass on the pool.
fn dit(
    pool: &Pool,
    control: &Control,
    a: &mut [Scalar],
    tw: &[Scalar],
    stride: usize,
) -> Result<(), Error<Infallible>> {
    let n = a.len();
    if n <= SERIAL_BELOW {
        dit_serial(a, tw, stride);
        return Ok(());
    }
    let (lo, hi) = a.split_at_mut(n / 2);
    halves(pool, control, lo, hi, |p, c, h| {
        dit(p, c, h, tw, 2 * stride)
    })?;
    pool.for_each_block(
        control,
        (&mut *lo, &mut *hi),
        Cut::Blocks(BUTTERFLY_BLOCK),
        |_, range, (xs, ys): (&mut [Scalar], &mut [Scalar])| {
            for (i, (x, y)) in range.zip(xs.iter_mut().zip(ys.iter_mut())) {
                let t = if i == 0 { *y } else { *y * tw[i * stride] };
                *y = *x - t;
                *x += t;
            }
            Ok::<_, Infallible>(())
        },
    )
}

/// The two halves' sub-transforms: two branches of half the budget, or one after the other on
/// one worker.
fn halves(
    pool: &Pool,
    control: &Control,
    lo: &mut [Scalar],
    hi: &mut [Scalar],
    half: impl Fn(&Pool, &Control, &mut [Scalar]) -> Result<(), Error<Infallible>> + Sync,
) -> Result<(), Error<Infallible>> {
    if pool.workers() <= 1 {
        half(pool, control, lo)?;
        return half(pool, control, hi);
    }
    let split = lo.len();
    pool.join(
        control,
        split,
        |left| half(left, control, lo),
        |right| half(right, control, hi),
    )?;
    Ok(())
}

/// [`Coset::extend`] by the definition, `O(N^2)`, for references: the polynomial interpolated
/// by the inverse DFT, then evaluated at each `g omega^k` by Horner's rule (`values` holds
/// `2^power` values, `power < 32`).
pub(crate) fn extend_by_definition(power: u32, values: &[Scalar]) -> Vec<Scalar> {
    let n = values.len();
    let omega = snarkjs_omega(power);
    let omega_inv = omega
        .invert()
        .expect("invariant: a root of unity is invertible");
    let n_inv = Scalar::from(n as u64)
        .invert()
        .expect("invariant: N < r is invertible");
    let g = snarkjs_omega(power + 1);
    let coefficients: Vec<Scalar> = (0..n)
        .map(|i| {
            let w = omega_inv.pow_vartime([i as u64]);
            let mut sum = Scalar::ZERO;
            let mut t = Scalar::ONE;
            for v in values {
                sum += *v * t;
                t *= w;
            }
            sum * n_inv
        })
        .collect();
    (0..n)
        .map(|k| {
            let x = g * omega.pow_vartime([k as u64]);
            coefficients
                .iter()
                .rev()
                .fold(Scalar::ZERO, |acc, c| acc * x + c)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    fn naive(power: u32, values: &[Scalar]) -> Vec<Scalar> {
        extend_by_definition(power, values)
    }

    fn random(n: usize, seed: u64) -> Vec<Scalar> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        (0..n).map(|_| Scalar::random(&mut rng)).collect()
    }

    #[test]
    fn the_shift_is_an_odd_root_of_twice_the_order() {
        for power in [0, 1, 5, 12] {
            let g = snarkjs_omega(power + 1);
            assert_eq!(g, crate::fft::Domain::snarkjs(power + 1).omega());
            // g^N = -1: g is a root of order 2N, outside the domain.
            assert_eq!(
                g.pow_vartime([1u64 << power]),
                -Scalar::ONE,
                "power {power}"
            );
        }
    }

    #[test]
    fn the_serial_extension_is_the_definition() {
        for power in 0..=7 {
            let values = random(1 << power, u64::from(power));
            let coset = Coset::snarkjs(power).unwrap();
            let mut got = values.clone();
            coset.extend_serial(&mut got);
            assert_eq!(got, naive(power, &values), "power {power}");
        }
    }

    #[test]
    fn the_parallel_extension_equals_the_serial_one_on_every_pool() {
        // Above SERIAL_BELOW so that the passes and branches run on the pool.
        let power = 14;
        let values = random(1 << power, 99);
        let coset = Coset::snarkjs(power).unwrap();
        let mut want = values.clone();
        coset.extend_serial(&mut want);
        for workers in [1, 2, 3, 5] {
            let pool = Pool::new(workers).unwrap();
            let mut got = values.clone();
            coset.extend(&pool, &Control::new(), &mut got).unwrap();
            assert_eq!(got, want, "{workers} workers");
        }
        let mut got = values;
        coset
            .extend(&Pool::current_thread(), &Control::new(), &mut got)
            .unwrap();
        assert_eq!(got, want, "the current thread");
        // A known value: a constant polynomial is constant on the coset.
        let mut constant = vec![Scalar::from(7u64); 1 << power];
        coset.extend_serial(&mut constant);
        assert!(constant.iter().all(|v| *v == Scalar::from(7u64)));
    }

    /// `p(7 omega^k)` for the coefficients `p`, by Horner's rule.
    fn on_gnark_coset(power: u32, coefficients: &[Scalar]) -> Vec<Scalar> {
        let omega = gnark_omega(power);
        let mut x = Scalar::from(7u64);
        (0..coefficients.len())
            .map(|_| {
                let v = coefficients
                    .iter()
                    .rev()
                    .fold(Scalar::ZERO, |acc, c| acc * x + c);
                x *= omega;
                v
            })
            .collect()
    }

    #[test]
    fn gnark_s_coset_extends_and_contracts_by_the_definition() {
        for power in 0..=7 {
            let n = 1usize << power;
            let coefficients = random(n, 7 + u64::from(power));
            let on_coset = on_gnark_coset(power, &coefficients);
            let coset = Coset::gnark(power).unwrap();
            // Back to the coefficients, in bit-reversed order.
            let mut got = on_coset.clone();
            coset.contract_serial(&mut got);
            let mut want = coefficients.clone();
            bit_reverse(&mut want);
            assert_eq!(got, want, "contract, power {power}");
            // From the domain's values to the coset's.
            let omega = gnark_omega(power);
            let mut x = Scalar::ONE;
            let mut on_domain: Vec<Scalar> = (0..n)
                .map(|_| {
                    let v = coefficients
                        .iter()
                        .rev()
                        .fold(Scalar::ZERO, |acc, c| acc * x + c);
                    x *= omega;
                    v
                })
                .collect();
            coset.extend_serial(&mut on_domain);
            assert_eq!(on_domain, on_coset, "extend, power {power}");
            assert_eq!(
                coset.vanishing(),
                Scalar::from(7u64).pow_vartime([n as u64]) - Scalar::ONE
            );
        }
        let power = 14;
        let values = random(1 << power, 5);
        let coset = Coset::gnark(power).unwrap();
        let mut want = values.clone();
        coset.contract_serial(&mut want);
        for workers in [1, 2, 3, 5] {
            let pool = Pool::new(workers).unwrap();
            let mut got = values.clone();
            coset.contract(&pool, &Control::new(), &mut got).unwrap();
            assert_eq!(got, want, "{workers} workers");
        }
    }
}
