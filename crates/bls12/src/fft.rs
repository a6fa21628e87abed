//! Group FFTs over BLS12-381 points: the Lagrange basis of a vector of powers, as gnark v0.15's
//! `lagrangeCoeffsG1/G2` computes it (`mpcsetup/lagrange.go`).
//!
//! For `N` points `P_j = [tau^j]`, the basis is `L_k = N^-1 * sum_j omega^(-jk) P_j = [L_k(tau)]`,
//! the Lagrange polynomial at `omega^k`, for `omega` gnark's `fr.Generator(N)` (its 2^32-th root
//! of unity raised to `2^32 / N`). gnark computes it by a decimation-in-frequency FFT with the
//! inverse twiddles, a bit reversal, and a multiplication by `N^-1`; so do we, in projective
//! coordinates (additions are exact group operations, so the points are the same elements
//! gnark's affine arithmetic reaches, and their encodings the same bytes).
//!
//! # Parallelism
//! Each recursion node's butterfly pass runs on its share of the worker budget, cut into blocks
//! of butterflies; its two halves then recurse as two branches of half the budget each (stage
//! `s`: `2^s` branches of `budget / 2^s` workers), serially once a branch has one worker. A
//! butterfly owns its two points, so no two tasks write the same point. The twiddles are public
//! constants: a block's points are multiplied together by the variable-time multiplication of
//! [`crate::public_mul`] ([`FftGroup::mul_public_batch`]: GLV or the four-way split, NAF digits, the
//! block's tables sharing one inversion; never used on a secret). The serial reference
//! multiplies by blstrs' constant-time multiplication instead, so each checks the other.
//!
//! # Memory
//! The transform runs in place over one projective copy of the `N` input points (144 bytes a
//! G1 point, 288 a G2 one); the affine result is written alongside (96 / 192 bytes a point),
//! and the twiddle table holds `N / 2` scalars.

use std::convert::Infallible;
use std::ops::{Add, AddAssign, Range, Sub, SubAssign};

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{Field, PrimeField};
use group::Group;
use lockstep_shard::{Control, Cut, Error, Pool, memory};

use crate::ffi;

/// gnark-crypto's `fr.Generator` root of unity of order 2^32 (decimal, from `generator.go`).
const ROOT_OF_UNITY_2_32: &str =
    "10238227357739495823651030575849232062558860180284477541189508159991286009131";

/// ffjavascript's root of unity of order 2^32 for BLS12-381's r, which snarkjs's transforms
/// use: `5^t` for `r - 1 = 2^32 t`, 5 being the smallest quadratic non-residue
/// (`wasm_field1.js`: `w[s] = nqr^t`). Not gnark's: keys built on one root do not verify with
/// the other (the test below derives it).
const SNARKJS_ROOT_OF_UNITY_2_32: &str =
    "937917089079007706106976984802249742464848817460758522850752807661925904159";

/// ffjavascript's `Fr.w[power]`, the generator of snarkjs's domain of `2^power`, without a
/// domain's tables.
///
/// # Panics
/// If `power` is above 32.
pub fn snarkjs_omega(power: u32) -> Scalar {
    assert!(power <= 32, "invariant: a domain of 2^0 to 2^32");
    Scalar::from_str_vartime(SNARKJS_ROOT_OF_UNITY_2_32)
        .expect("invariant: a constant")
        .pow_vartime([1u64 << (32 - power)])
}

/// gnark-crypto's `fr.Generator(N)` for `N = 2^power`, without a domain's tables.
///
/// # Panics
/// If `power` is above 32.
pub fn gnark_omega(power: u32) -> Scalar {
    assert!(power <= 32, "invariant: a domain of 2^0 to 2^32");
    Scalar::from_str_vartime(ROOT_OF_UNITY_2_32)
        .expect("invariant: a constant")
        .pow_vartime([1u64 << (32 - power)])
}

/// Butterflies per task of a pass: milliseconds of scalar multiplications.
const BUTTERFLY_BLOCK: usize = 32;

/// Sub-transforms this small run serially, without stop checks (tens of milliseconds).
const SERIAL_BELOW: usize = 64;

/// Points per block of the affine conversion (one inversion a block).
const CONVERT_BLOCK: usize = 256;

/// The evaluation domain of size `N`: its inverse twiddles and `N^-1`.
#[derive(Clone, Debug)]
pub struct Domain {
    n: usize,
    omega: Scalar,
    omega_inv: Scalar,
    /// `omega^-i` for `i < N / 2`.
    twiddles_inv: Vec<Scalar>,
    n_inv: Scalar,
}

impl Domain {
    /// The domain of size `2^power` (`0 <= power <= 32`; `N = 1`, `omega = 1`, is a circuit of
    /// one constraint's, as in gnark).
    ///
    /// # Panics
    /// If `power` is above 32 (phase 1 sizes are checked long before).
    pub fn new(power: u32) -> Self {
        Self::with_root(power, ROOT_OF_UNITY_2_32)
    }

    /// The domain of size `2^power` on snarkjs's root of unity (ffjavascript's `Fr.w[power]`):
    /// the domain of its `.ptau` Lagrange sections and `.zkey` files.
    ///
    /// # Panics
    /// If `power` is above 32.
    pub fn snarkjs(power: u32) -> Self {
        Self::with_root(power, SNARKJS_ROOT_OF_UNITY_2_32)
    }

    fn with_root(power: u32, root_2_32: &str) -> Self {
        assert!(power <= 32, "invariant: a domain of 2^0 to 2^32");
        let n = 1usize << power;
        let root = Scalar::from_str_vartime(root_2_32).expect("invariant: a constant");
        let omega = root.pow_vartime([1u64 << (32 - power)]);
        let omega_inv = omega
            .invert()
            .expect("invariant: a root of unity is invertible");
        let mut twiddles_inv = Vec::with_capacity(n / 2);
        let mut t = Scalar::ONE;
        for _ in 0..n / 2 {
            twiddles_inv.push(t);
            t *= omega_inv;
        }
        let n_inv = Scalar::from(n as u64)
            .invert()
            .expect("invariant: N < r is invertible");
        Self {
            n,
            omega,
            omega_inv,
            twiddles_inv,
            n_inv,
        }
    }

    /// The domain's size `N`.
    pub fn size(&self) -> usize {
        self.n
    }

    /// `omega`, gnark's generator of the domain.
    pub fn omega(&self) -> Scalar {
        self.omega
    }

    /// `omega^-1`, the generator the inverse transform uses.
    pub fn omega_inv(&self) -> Scalar {
        self.omega_inv
    }

    /// `N^-1`.
    pub fn n_inv(&self) -> Scalar {
        self.n_inv
    }
}

/// A group in projective form, and its affine points.
pub trait FftGroup:
    Copy
    + Send
    + Sync
    + Group
    + Add<Output = Self>
    + Sub<Output = Self>
    + for<'a> AddAssign<&'a Self::Affine>
    + for<'a> SubAssign<&'a Self::Affine>
{
    /// The group's affine points.
    type Affine: Copy + Default + Send + Sync;
    /// The projective form of an affine point.
    fn from_affine(point: &Self::Affine) -> Self;
    /// The affine forms of a block of points, with one inversion for the block.
    fn to_affine_block(points: &[Self], out: &mut [Self::Affine]);
    /// `self * scalar` for a public scalar (coefficients): the fast path, variable time in the
    /// scalar.
    fn mul_public(&self, scalar: &Scalar) -> Self;
    /// `points[i] * scalars[i]` in place for public scalars (twiddles): the fast path, a batch
    /// sharing its tables' inversion.
    fn mul_public_batch(points: &mut [Self], scalars: &[Scalar]);
    /// `self * scalar` by blstrs' multiplication (blst's constant-time one over 255 bits): what
    /// the serial references use, so that they check the fast path rather than share it.
    fn mul_reference(&self, scalar: &Scalar) -> Self;
}

impl FftGroup for G1Projective {
    type Affine = G1Affine;
    fn from_affine(point: &G1Affine) -> Self {
        G1Projective::from(point)
    }
    fn to_affine_block(points: &[Self], out: &mut [G1Affine]) {
        ffi::g1_to_affine(points, out);
    }
    fn mul_public(&self, scalar: &Scalar) -> Self {
        crate::g1_mul_public(self, scalar)
    }
    fn mul_public_batch(points: &mut [Self], scalars: &[Scalar]) {
        crate::g1_mul_public_batch(points, scalars);
    }
    fn mul_reference(&self, scalar: &Scalar) -> Self {
        self * scalar
    }
}

impl FftGroup for G2Projective {
    type Affine = G2Affine;
    fn from_affine(point: &G2Affine) -> Self {
        G2Projective::from(point)
    }
    fn to_affine_block(points: &[Self], out: &mut [G2Affine]) {
        ffi::g2_to_affine(points, out);
    }
    fn mul_public(&self, scalar: &Scalar) -> Self {
        crate::g2_mul_public(self, scalar)
    }
    fn mul_public_batch(points: &mut [Self], scalars: &[Scalar]) {
        crate::g2_mul_public_batch(points, scalars);
    }
    fn mul_reference(&self, scalar: &Scalar) -> Self {
        self * scalar
    }
}

/// `[L_k(tau)]` for `k < N` from `powers[..N]` (`powers[j] = [tau^j]`): the serial reference,
/// gnark's algorithm on one thread.
///
/// # Panics
/// If `powers` holds fewer than `N` points.
pub fn lagrange_serial<G: FftGroup>(domain: &Domain, powers: &[G::Affine]) -> Vec<G::Affine> {
    let n = domain.n;
    if n == 1 {
        // L_0 = 1 on a domain of one point: the transform of size 1 is the identity.
        return powers[..1].to_vec();
    }
    let mut a: Vec<G> = powers[..n].iter().map(G::from_affine).collect();
    dif_serial(&mut a, &domain.twiddles_inv, 1, reference_batch::<G>);
    bit_reverse(&mut a);
    for p in &mut a {
        *p = p.mul_reference(&domain.n_inv);
    }
    let mut out = vec![G::Affine::default(); n];
    G::to_affine_block(&a, &mut out);
    out
}

/// [`lagrange_serial`] on `pool`: the same points at every worker count.
///
/// Progress: each butterfly and each point scaled.
///
/// # Errors
/// Cancellation, or a stall of the run.
///
/// # Panics
/// If `powers` holds fewer than `N` points.
pub fn lagrange<G: FftGroup>(
    pool: &Pool,
    control: &Control,
    domain: &Domain,
    powers: &[G::Affine],
) -> Result<Vec<G::Affine>, Error<Infallible>> {
    let n = domain.n;
    if n == 1 {
        // L_0 = 1 on a domain of one point (the first pass below pairs two halves).
        return Ok(powers[..1].to_vec());
    }
    let mut a: Vec<G> = pool.map_blocks(control, &powers[..n], CONVERT_BLOCK, |_, block| {
        block
            .iter()
            .map(|p| Ok::<_, Infallible>(G::from_affine(p)))
            .collect()
    })?;
    // The first pass folds in N^-1: (a + b) N^-1 and (a - b) omega^-i N^-1, saving the N
    // multiplications of a separate scaling for N / 2 more in this pass.
    let n_inv = domain.n_inv;
    let scaled: Vec<Scalar> = memory::try_collect(domain.twiddles_inv.iter().map(|t| *t * n_inv))?;
    let (lo, hi) = a.split_at_mut(n / 2);
    pool.for_each_block(
        control,
        (&mut *lo, &mut *hi),
        Cut::Blocks(BUTTERFLY_BLOCK),
        |_, range, (xs, ys): (&mut [G], &mut [G])| {
            for (x, y) in xs.iter_mut().zip(ys.iter_mut()) {
                (*x, *y) = (*x + *y, *x - *y);
            }
            let n_invs = [n_inv; BUTTERFLY_BLOCK];
            G::mul_public_batch(xs, &n_invs[..xs.len()]);
            G::mul_public_batch(ys, &scaled[range]);
            Ok::<_, Infallible>(())
        },
    )?;
    halves(pool, control, lo, hi, &domain.twiddles_inv, 2)?;
    bit_reverse(&mut a);
    let mut out = memory::try_filled(n, G::Affine::default())?;
    pool.for_each_block(
        control,
        (&a[..], &mut out[..]),
        Cut::Blocks(CONVERT_BLOCK),
        |_, _, (points, affine): (&[G], &mut [G::Affine])| {
            G::to_affine_block(points, affine);
            Ok::<_, Infallible>(())
        },
    )?;
    Ok(out)
}

/// The two halves' sub-transforms: two branches of half the budget, or one after the other on
/// one worker.
fn halves<G: FftGroup>(
    pool: &Pool,
    control: &Control,
    lo: &mut [G],
    hi: &mut [G],
    twiddles: &[Scalar],
    stride: usize,
) -> Result<(), Error<Infallible>> {
    if pool.workers() <= 1 {
        dif(pool, control, lo, twiddles, stride)?;
        return dif(pool, control, hi, twiddles, stride);
    }
    let split = lo.len();
    pool.join(
        control,
        split,
        |left| dif(left, control, lo, twiddles, stride),
        |right| dif(right, control, hi, twiddles, stride),
    )?;
    Ok(())
}

/// One pass of butterflies at positions `range` of a sub-transform: `(a, b) <- (a + b,
/// (a - b) * twiddle)`, twiddle `i * stride` at position `i`, the multiplication skipped at
/// position 0 (twiddle one). The block's multiplications go to `mul` together.
fn butterflies<G: FftGroup>(
    range: Range<usize>,
    xs: &mut [G],
    ys: &mut [G],
    twiddles: &[Scalar],
    stride: usize,
    mul: MulBatch<G>,
) {
    let first = usize::from(range.start == 0);
    let scalars: Vec<Scalar> = range.skip(first).map(|i| twiddles[i * stride]).collect();
    for (x, y) in xs.iter_mut().zip(ys.iter_mut()) {
        (*x, *y) = (*x + *y, *x - *y);
    }
    mul(&mut ys[first..], &scalars);
}

/// Multiplications by public scalars, a block at a time: [`FftGroup::mul_public_batch`] or the
/// reference's.
type MulBatch<G> = fn(&mut [G], &[Scalar]);

/// The serial reference's multiplications: blstrs' own, one at a time.
fn reference_batch<G: FftGroup>(points: &mut [G], scalars: &[Scalar]) {
    for (p, s) in points.iter_mut().zip(scalars) {
        *p = p.mul_reference(s);
    }
}

/// The decimation-in-frequency FFT over `a`, twiddles `omega^-(i * stride)`, output bit-reversed.
///
/// Level by level rather than depth first (the sub-transforms are independent, so the points
/// are the same): each level's multiplications, `n / 2` less one a sub-transform, go to `mul`
/// together, so a small sub-transform's last levels still share their tables' inversions.
fn dif_serial<G: FftGroup>(a: &mut [G], twiddles: &[Scalar], stride: usize, mul: MulBatch<G>) {
    let mut m = a.len() / 2;
    let mut stride = stride;
    let mut products: Vec<G> = Vec::with_capacity(m);
    let mut scalars: Vec<Scalar> = Vec::with_capacity(m);
    while m >= 1 {
        products.clear();
        scalars.clear();
        for chunk in a.chunks_exact_mut(2 * m) {
            let (lo, hi) = chunk.split_at_mut(m);
            for (i, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                (*x, *y) = (*x + *y, *x - *y);
                if i > 0 {
                    products.push(*y);
                    scalars.push(twiddles[i * stride]);
                }
            }
        }
        mul(&mut products, &scalars);
        let mut product = products.iter();
        for chunk in a.chunks_exact_mut(2 * m) {
            for y in &mut chunk[m + 1..] {
                *y = *product.next().expect("invariant: a product a twiddle");
            }
        }
        m /= 2;
        stride *= 2;
    }
}

/// [`dif_serial`] with each pass on the pool's budget and the halves as two branches.
fn dif<G: FftGroup>(
    pool: &Pool,
    control: &Control,
    a: &mut [G],
    twiddles: &[Scalar],
    stride: usize,
) -> Result<(), Error<Infallible>> {
    let n = a.len();
    if n <= SERIAL_BELOW {
        dif_serial(a, twiddles, stride, G::mul_public_batch);
        return Ok(());
    }
    let m = n / 2;
    let (lo, hi) = a.split_at_mut(m);
    pool.for_each_block(
        control,
        (&mut *lo, &mut *hi),
        Cut::Blocks(BUTTERFLY_BLOCK),
        |_, range, (xs, ys): (&mut [G], &mut [G])| {
            butterflies(range, xs, ys, twiddles, stride, G::mul_public_batch);
            Ok::<_, Infallible>(())
        },
    )?;
    halves(pool, control, lo, hi, twiddles, 2 * stride)
}

/// Puts `a[i]` at the bit-reversal of `i` (gnark's `bitReverse`; `a.len()` a power of two).
pub fn bit_reverse<T>(a: &mut [T]) {
    let n = a.len();
    if n < 2 {
        return;
    }
    let shift = usize::BITS - n.trailing_zeros();
    for i in 0..n {
        let j = i.reverse_bits() >> shift;
        if j > i {
            a.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::Curve;

    #[test]
    fn the_root_of_unity_has_order_two_to_the_32() {
        let root = Scalar::from_str_vartime(ROOT_OF_UNITY_2_32).unwrap();
        assert_eq!(root.pow_vartime([1u64 << 32]), Scalar::ONE);
        assert_eq!(root.pow_vartime([1u64 << 31]), -Scalar::ONE);
    }

    #[test]
    fn snarkjs_root_is_five_to_the_odd_part_of_r_minus_one() {
        // r - 1 = 2^32 t: t's limbs are r's shifted right by 32.
        let t = [
            0xfffe_5bfe_ffff_ffff,
            0x09a1_d805_53bd_a402,
            0x299d_7d48_3339_d808,
            0x0000_0000_73ed_a753,
        ];
        let five = Scalar::from(5u64);
        // 5 is a non-residue: 5^((r-1)/2) = -1.
        let half = [
            0x7fff_ffff_8000_0000,
            0xa9de_d201_7fff_2dff,
            0x199c_ec04_04d0_ec02,
            0x39f6_d3a9_94ce_bea4,
        ];
        assert_eq!(five.pow_vartime(half), -Scalar::ONE);
        for small in 2u64..5 {
            assert_eq!(Scalar::from(small).pow_vartime(half), Scalar::ONE);
        }
        assert_eq!(
            Scalar::from_str_vartime(SNARKJS_ROOT_OF_UNITY_2_32).unwrap(),
            five.pow_vartime(t),
            "the constant is 5^t"
        );
        let d = Domain::snarkjs(10);
        assert_eq!(d.omega().pow_vartime([1024]), Scalar::ONE);
        assert_ne!(d.omega().pow_vartime([512]), Scalar::ONE);
        assert_ne!(d.omega(), Domain::new(10).omega());
    }

    #[test]
    fn domains_have_their_order() {
        for power in [1, 3, 10] {
            let d = Domain::new(power);
            let omega_inv = d.omega_inv();
            assert_eq!(omega_inv.pow_vartime([d.size() as u64]), Scalar::ONE);
            assert_eq!(omega_inv.pow_vartime([d.size() as u64 / 2]), -Scalar::ONE);
            assert_eq!(d.n_inv() * Scalar::from(d.size() as u64), Scalar::ONE);
        }
    }

    #[test]
    fn bit_reverse_is_gnark_s() {
        let mut a: Vec<usize> = (0..8).collect();
        bit_reverse(&mut a);
        assert_eq!(a, vec![0, 4, 2, 6, 1, 5, 3, 7]);
    }

    /// The naive transform in scalars: `L_k = N^-1 sum_j omega^-jk s_j`.
    fn naive(domain: &Domain, s: &[Scalar]) -> Vec<Scalar> {
        let n = domain.size();
        (0..n)
            .map(|k| {
                let w = domain.omega_inv().pow_vartime([k as u64]);
                let mut sum = Scalar::ZERO;
                let mut wj = Scalar::ONE;
                for sj in s {
                    sum += wj * sj;
                    wj *= w;
                }
                sum * domain.n_inv()
            })
            .collect()
    }

    #[test]
    fn the_serial_transform_is_the_lagrange_basis() {
        let domain = Domain::new(4);
        let tau = Scalar::from(0x1234_5678u64);
        let s: Vec<Scalar> = (0..16).map(|j| tau.pow_vartime([j])).collect();
        let powers: Vec<G1Affine> = s
            .iter()
            .map(|sj| (G1Projective::generator() * sj).to_affine())
            .collect();
        let got = lagrange_serial::<G1Projective>(&domain, &powers);
        let want = naive(&domain, &s);
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(*g, (G1Projective::generator() * w).to_affine(), "L_{k}");
            assert_ne!(*w, Scalar::ZERO, "the fixture is dense");
        }
    }

    fn pools() -> Vec<Pool> {
        let mut pools = vec![Pool::current_thread()];
        pools.extend([1, 2, 3, 5].map(|w| Pool::new(w).unwrap()));
        pools
    }

    #[test]
    fn the_parallel_transform_equals_the_serial_reference_at_every_worker_count() {
        use rand_chacha::ChaCha20Rng;
        use rand_core::SeedableRng;
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        // 2^8: the first pass crosses blocks of 32 butterflies, the second (halves of 128)
        // runs as parallel passes in blocks starting at 0 and 32, the sub-transforms of 64 run
        // level by level; 2^7 goes from the first pass straight to those; 2^1 and 2^0 are the
        // edge domains.
        for power in [0, 1, 7, 8] {
            let domain = Domain::snarkjs(power);
            let g1: Vec<G1Affine> = (0..domain.size())
                .map(|_| G1Projective::random(&mut rng).to_affine())
                .collect();
            let g2: Vec<G2Affine> = (0..domain.size())
                .map(|_| G2Projective::random(&mut rng).to_affine())
                .collect();
            let want1 = lagrange_serial::<G1Projective>(&domain, &g1);
            let want2 = lagrange_serial::<G2Projective>(&domain, &g2);
            for pool in pools() {
                let control = Control::new();
                let got1 = lagrange::<G1Projective>(&pool, &control, &domain, &g1).unwrap();
                assert!(
                    got1 == want1,
                    "G1 at 2^{power} on {} workers",
                    pool.workers()
                );
                let got2 = lagrange::<G2Projective>(&pool, &control, &domain, &g2).unwrap();
                assert!(
                    got2 == want2,
                    "G2 at 2^{power} on {} workers",
                    pool.workers()
                );
            }
        }
    }
}
