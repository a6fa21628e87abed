//! Batch-affine additions in Fp (G1) and Fp2 (G2) eight at a time, on AVX-512 IFMA (52-bit
//! multiply-accumulate).
//!
//! A lane holds one field element as eight 52-bit limbs, one limb a vector, so a vector
//! instruction works on eight elements. The Montgomery multiplication here reduces by exactly
//! 2^384 (seven 52-bit steps and one of 20 bits), so its results are blst's: `a R * b R -> ab R`
//! with blst's `R = 2^384`, and elements move between blst's limbs and these by a change of radix
//! only. On this machine kind it costs about 19 ns a multiplication, against 42 ns for blst's
//! `mulx` code called one at a time. An Fp2 product is three of them (Karatsuba, `u^2 = -1`),
//! each component reduced after the combination.
//!
//! Intermediate values are kept below small multiples of p (the bounds are stated where they
//! matter) and brought below p before they are stored, so stored coordinates are blst's
//! canonical limbs: equal elements, equal limbs.
//!
//! Everything here is safe code inside `#[target_feature]` functions; the calls into them,
//! after the CPU is checked, are in `ffi.rs` ([`crate::ffi::ifma_add_batch`],
//! [`crate::ffi::ifma_add_batch2`]).

use std::arch::x86_64::{
    __m512i, _mm512_add_epi64, _mm512_and_si512, _mm512_cmplt_epi64_mask, _mm512_madd52hi_epu64,
    _mm512_madd52lo_epu64, _mm512_mask_blend_epi64, _mm512_or_si512, _mm512_set1_epi64,
    _mm512_setzero_si512, _mm512_sllv_epi64, _mm512_srai_epi64, _mm512_srli_epi64,
    _mm512_srlv_epi64, _mm512_sub_epi64,
};

use blst::{blst_fp, blst_fp2};

use crate::buckets::{Addition, Lanes};
use crate::ffi;
use crate::field::{Coordinate, MONTGOMERY_ONE, P};

type V = __m512i;

/// Eight field elements, one a lane: limb `j` (bits `52 j ..`) of every lane in vector `j`.
type Lanes52 = [V; 8];

/// Eight field elements in blst's form, one a lane: 64-bit limb `i` of every lane in row `i`.
pub(crate) type Lanes64 = [[u64; 8]; 6];

const MASK52: u64 = (1 << 52) - 1;

/// `-p^-1 mod 2^52`.
const PINV52: u64 = 0x3_fffc_fffc_fffd;

/// `value` (six 64-bit limbs, below 2^384) as eight 52-bit limbs.
const fn radix52(value: [u64; 6]) -> [u64; 8] {
    let mut out = [0u64; 8];
    let mut j = 0;
    while j < 8 {
        let bit = 52 * j;
        let (word, shift) = (bit / 64, bit % 64);
        let mut limb = value[word] >> shift;
        if shift > 12 && word + 1 < 6 {
            limb |= value[word + 1] << (64 - shift);
        }
        out[j] = limb & MASK52;
        j += 1;
    }
    out
}

/// `k p` in six 64-bit limbs, for `k` up to 8 (below 2^384).
#[allow(
    clippy::cast_possible_truncation,
    reason = "limb splits: keeping the low 64 bits is the intent"
)]
const fn times_p(k: u64) -> [u64; 6] {
    let mut out = [0u64; 6];
    let mut carry: u128 = 0;
    let mut i = 0;
    while i < 6 {
        let v = (P[i] as u128) * (k as u128) + carry;
        out[i] = v as u64;
        carry = v >> 64;
        i += 1;
    }
    out
}

/// `k p` as limbs that borrow from the limb above: every limb but the top one at least 2^52,
/// so `a + this - b` has no negative limb below the top for any `b` whose lower limbs are below
/// 2^52, and a non-negative top limb once normalised whenever `b <= a + k p`.
const fn borrowed(k: u64) -> [u64; 8] {
    let mut limbs = radix52(times_p(k));
    let mut j = 0;
    while j < 7 {
        limbs[j] += 1 << 52;
        limbs[j + 1] -= 1;
        j += 1;
    }
    limbs
}

const P52: [u64; 8] = radix52(P);
const P2_BORROWED: [u64; 8] = borrowed(2);
const P52_TIMES: [[u64; 8]; 3] = [
    radix52(times_p(1)),
    radix52(times_p(2)),
    radix52(times_p(4)),
];

#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn splat(x: u64) -> V {
    _mm512_set1_epi64(x as i64)
}

/// Carries every limb's bits above 52 into the limb above (the top limb keeps its own).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn normalise(t: &mut Lanes52) {
    let mask = splat(MASK52);
    for j in 0..7 {
        t[j + 1] = _mm512_add_epi64(t[j + 1], _mm512_srli_epi64::<52>(t[j]));
        t[j] = _mm512_and_si512(t[j], mask);
    }
}

/// blst's limbs of eight elements to 52-bit limbs.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn load(rows: &Lanes64) -> Lanes52 {
    let r: [V; 7] = std::array::from_fn(|i| {
        if i < 6 {
            ffi::lanes_to_vector(&rows[i])
        } else {
            splat(0)
        }
    });
    let mask = splat(MASK52);
    std::array::from_fn(|j| {
        let bit = 52 * j as u64;
        let (word, shift) = ((bit / 64) as usize, bit % 64);
        let low = _mm512_srlv_epi64(r[word], splat(shift));
        // A shift count of 64 or more gives zero: the upper word only adds its low bits.
        let high = _mm512_sllv_epi64(r[word + 1], splat(64 - shift));
        _mm512_and_si512(_mm512_or_si512(low, high), mask)
    })
}

/// Normalised 52-bit limbs of eight elements below 2^384 to blst's limbs.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn store(v: &Lanes52) -> Lanes64 {
    std::array::from_fn(|i| {
        let base = 64 * i as i64;
        let mut row = splat(0);
        for (j, limb) in v.iter().enumerate() {
            let offset = 52 * j as i64 - base;
            if offset <= -52 || offset >= 64 {
                continue;
            }
            let part = if offset >= 0 {
                _mm512_sllv_epi64(*limb, splat(offset as u64))
            } else {
                _mm512_srlv_epi64(*limb, splat((-offset) as u64))
            };
            row = _mm512_or_si512(row, part);
        }
        ffi::vector_to_lanes(row)
    })
}

/// `a + 2p - b`, normalised, for normalised `a` and `b` with `b <= a + 2p` (any `b` below 2p,
/// canonical or a product of [`mul`]): below `a + 2p`.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn sub(a: &Lanes52, b: &Lanes52) -> Lanes52 {
    let mut d: Lanes52 = std::array::from_fn(|j| {
        _mm512_sub_epi64(_mm512_add_epi64(a[j], splat(P2_BORROWED[j])), b[j])
    });
    normalise(&mut d);
    d
}

/// `v - c` where `v >= c`, else `v`, for normalised `v` and constant `c`.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn subtract_if_above(v: &Lanes52, c: &[u64; 8]) -> Lanes52 {
    let mask = splat(MASK52);
    let mut d: Lanes52 = std::array::from_fn(|j| _mm512_sub_epi64(v[j], splat(c[j])));
    for j in 0..7 {
        // Signed carries: an arithmetic shift moves a borrow up as -1.
        d[j + 1] = _mm512_add_epi64(d[j + 1], _mm512_srai_epi64::<52>(d[j]));
        d[j] = _mm512_and_si512(d[j], mask);
    }
    let below = _mm512_cmplt_epi64_mask(d[7], splat(0));
    std::array::from_fn(|j| _mm512_mask_blend_epi64(below, d[j], v[j]))
}

/// `v mod p` for normalised `v` below 8p.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn canonical(v: &Lanes52) -> Lanes52 {
    let v = subtract_if_above(v, &P52_TIMES[2]);
    let v = subtract_if_above(&v, &P52_TIMES[1]);
    subtract_if_above(&v, &P52_TIMES[0])
}

/// Montgomery multiplication by 2^384: `a b / 2^384 mod p`, below `p (1 + (a/p)(b/p) p/2^384)`
/// (`p / 2^384 < 1/9.8`) for normalised inputs whose product is below `2^384 p`.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn mul(a: &Lanes52, b: &Lanes52) -> Lanes52 {
    let zero = _mm512_setzero_si512();
    let pinv = splat(PINV52);
    let mut t = [zero; 9];
    for (i, &bi) in b.iter().enumerate() {
        for j in 0..8 {
            t[j] = _mm512_madd52lo_epu64(t[j], a[j], bi);
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], a[j], bi);
        }
        let mut m = _mm512_madd52lo_epu64(zero, t[0], pinv);
        if i == 7 {
            // The last step clears 20 bits, not 52: 7 x 52 + 20 = 384.
            m = _mm512_and_si512(m, splat((1 << 20) - 1));
        }
        for j in 0..8 {
            let pj = splat(P52[j]);
            t[j] = _mm512_madd52lo_epu64(t[j], m, pj);
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], m, pj);
        }
        if i < 7 {
            t[1] = _mm512_add_epi64(t[1], _mm512_srli_epi64::<52>(t[0]));
            for j in 0..8 {
                t[j] = t[j + 1];
            }
            t[8] = zero;
        }
    }
    // t holds the result times 2^20: normalise, then shift right by 20 bits across limbs.
    let mask = splat(MASK52);
    for j in 0..8 {
        t[j + 1] = _mm512_add_epi64(t[j + 1], _mm512_srli_epi64::<52>(t[j]));
        t[j] = _mm512_and_si512(t[j], mask);
    }
    std::array::from_fn(|j| {
        _mm512_and_si512(
            _mm512_or_si512(
                _mm512_srli_epi64::<20>(t[j]),
                _mm512_sllv_epi64(t[j + 1], splat(32)),
            ),
            mask,
        )
    })
}

/// For every lane of every group `g`: `(bx, by) += (px, py)`, the points' x distinct, all
/// coordinates canonical; the sums, canonical, written over `bx`, `by`. `prefix` is scratch.
///
/// # Panics
/// If the lengths differ, or two x coordinates of an addition are equal (the callers' invariant).
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn add_batch(
    bx: &mut [Lanes64],
    by: &mut [Lanes64],
    px: &[Lanes64],
    py: &[Lanes64],
    prefix: &mut Vec<Lanes52>,
) {
    let groups = bx.len();
    assert!(
        by.len() == groups && px.len() == groups && py.len() == groups,
        "invariant: four coordinates a group"
    );
    if groups == 0 {
        return;
    }
    // prefix[g] = d_0 ... d_g per lane, d = px - bx + 2p (below 3p; products of two such below
    // 9p^2 < 2^384 p, so below 1.92p, and every later product below that too).
    prefix.clear();
    for g in 0..groups {
        let d = sub(&load(&px[g]), &load(&bx[g]));
        let product = if g == 0 { d } else { mul(&prefix[g - 1], &d) };
        prefix.push(product);
    }
    // The eight lanes' totals, inverted together in blst's form.
    let totals = store(&canonical(&prefix[groups - 1]));
    let mut lanes: [blst_fp; 8] = std::array::from_fn(|lane| blst_fp {
        l: std::array::from_fn(|i| totals[i][lane]),
    });
    invert_eight(&mut lanes);
    let inverted: Lanes64 = std::array::from_fn(|i| std::array::from_fn(|lane| lanes[lane].l[i]));
    let mut inverse = load(&inverted);
    for g in (0..groups).rev() {
        let (x1, y1) = (load(&bx[g]), load(&by[g]));
        let (x2, y2) = (load(&px[g]), load(&py[g]));
        let inv_d = if g == 0 {
            inverse
        } else {
            let inv_d = mul(&inverse, &prefix[g - 1]);
            inverse = mul(&inverse, &sub(&x2, &x1));
            inv_d
        };
        // lambda < 1.75p; x3 = lambda^2 - x1 - x2 < 6p before reduction.
        let lambda = mul(&sub(&y2, &y1), &inv_d);
        let x3 = canonical(&sub(&sub(&mul(&lambda, &lambda), &x1), &x2));
        // lambda (x1 - x3) < 1.7p, minus y1: below 3.7p.
        let y3 = canonical(&sub(&mul(&lambda, &sub(&x1, &x3)), &y1));
        bx[g] = store(&x3);
        by[g] = store(&y3);
    }
}

/// The kernel's buffers: the four coordinates of a batch, eight additions a group.
#[derive(Default)]
pub(crate) struct Scratch {
    bx: Vec<Lanes64>,
    by: Vec<Lanes64>,
    px: Vec<Lanes64>,
    py: Vec<Lanes64>,
    prefix: Vec<Lanes52>,
}

impl Lanes for blst_fp {
    type Scratch = Scratch;

    fn has_kernel() -> bool {
        ffi::ifma_available()
    }

    fn add_batch(scratch: &mut Scratch, slots: &mut [(Self, Self)], batch: &[Addition<Self>]) {
        let groups = batch.len().div_ceil(8);
        let zero = [[0u64; 8]; 6];
        for buffer in [
            &mut scratch.bx,
            &mut scratch.by,
            &mut scratch.px,
            &mut scratch.py,
        ] {
            buffer.clear();
            buffer.resize(groups, zero);
        }
        for (k, addition) in batch.iter().enumerate() {
            let (g, lane) = (k / 8, k % 8);
            let (x, y) = &slots[addition.bucket as usize];
            for i in 0..6 {
                scratch.bx[g][i][lane] = x.l[i];
                scratch.by[g][i][lane] = y.l[i];
                scratch.px[g][i][lane] = addition.x.l[i];
                scratch.py[g][i][lane] = addition.y.l[i];
            }
        }
        // Lanes past the batch add (1, 0) to (0, 0) (1 in Montgomery form): distinct x, results
        // dropped.
        for k in batch.len()..8 * groups {
            let (g, lane) = (k / 8, k % 8);
            for (i, limb) in MONTGOMERY_ONE.iter().enumerate() {
                scratch.px[g][i][lane] = *limb;
            }
        }
        ffi::ifma_add_batch(
            &mut scratch.bx,
            &mut scratch.by,
            &scratch.px,
            &scratch.py,
            &mut scratch.prefix,
        );
        for (k, addition) in batch.iter().enumerate() {
            let (g, lane) = (k / 8, k % 8);
            let slot = &mut slots[addition.bucket as usize];
            for i in 0..6 {
                slot.0.l[i] = scratch.bx[g][i][lane];
                slot.1.l[i] = scratch.by[g][i][lane];
            }
        }
    }
}

/// Eight Fp2 elements `c0 + c1 u` (`u^2 = -1`), one a lane: `[c0, c1]`.
type Fp2Lanes = [Lanes52; 2];

/// `a + b`, normalised, for normalised `a`, `b`.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn add(a: &Lanes52, b: &Lanes52) -> Lanes52 {
    let mut d: Lanes52 = std::array::from_fn(|j| _mm512_add_epi64(a[j], b[j]));
    normalise(&mut d);
    d
}

/// `a - b` in Fp2, canonical, for canonical `a`, `b`.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn sub2(a: &Fp2Lanes, b: &Fp2Lanes) -> Fp2Lanes {
    [canonical(&sub(&a[0], &b[0])), canonical(&sub(&a[1], &b[1]))]
}

/// `a b` in Fp2 by Karatsuba (three products), canonical, for canonical `a`, `b`: `v0 = a0 b0`,
/// `v1 = a1 b1` (below 1.11p), `s = (a0 + a1)(b0 + b1)` (factors below 2p: below 1.41p);
/// `c0 = v0 - v1` below 3.11p, `c1 = s - v0 - v1` below 5.41p, both reduced (`sub` takes a
/// subtrahend below 2p).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn mul2(a: &Fp2Lanes, b: &Fp2Lanes) -> Fp2Lanes {
    let v0 = mul(&a[0], &b[0]);
    let v1 = mul(&a[1], &b[1]);
    let s = mul(&add(&a[0], &a[1]), &add(&b[0], &b[1]));
    [
        canonical(&sub(&v0, &v1)),
        canonical(&sub(&sub(&s, &v0), &v1)),
    ]
}

/// The four coordinates' components of a G2 batch, eight additions a group:
/// `x.c0, x.c1, y.c0, y.c1`.
pub(crate) type G2Rows = [Vec<Lanes64>; 4];

/// [`add_batch`] in Fp2: for every lane of every group, `b += p` (the points' x distinct, all
/// coordinates canonical), the sums canonical, written over `b`. `prefix` is scratch.
///
/// # Panics
/// If the lengths differ, or two x coordinates of an addition are equal (the callers' invariant).
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn add_batch2(b: &mut G2Rows, p: &G2Rows, prefix: &mut Vec<Fp2Lanes>) {
    let groups = b[0].len();
    assert!(
        b.iter().chain(p.iter()).all(|rows| rows.len() == groups),
        "invariant: eight coordinate components a group"
    );
    if groups == 0 {
        return;
    }
    let x = |rows: &G2Rows, g: usize| [load(&rows[0][g]), load(&rows[1][g])];
    let y = |rows: &G2Rows, g: usize| [load(&rows[2][g]), load(&rows[3][g])];
    prefix.clear();
    for g in 0..groups {
        let d = sub2(&x(p, g), &x(b, g));
        let product = if g == 0 { d } else { mul2(&prefix[g - 1], &d) };
        prefix.push(product);
    }
    let last = &prefix[groups - 1];
    let (t0, t1) = (store(&last[0]), store(&last[1]));
    let mut lanes: [blst_fp2; 8] = std::array::from_fn(|lane| blst_fp2 {
        fp: [
            blst_fp {
                l: std::array::from_fn(|i| t0[i][lane]),
            },
            blst_fp {
                l: std::array::from_fn(|i| t1[i][lane]),
            },
        ],
    });
    invert_eight(&mut lanes);
    let component = |k: usize| -> Lanes64 {
        std::array::from_fn(|i| std::array::from_fn(|lane| lanes[lane].fp[k].l[i]))
    };
    let mut inverse = [load(&component(0)), load(&component(1))];
    for g in (0..groups).rev() {
        let (x1, y1) = (x(b, g), y(b, g));
        let (x2, y2) = (x(p, g), y(p, g));
        let inv_d = if g == 0 {
            inverse
        } else {
            let inv_d = mul2(&inverse, &prefix[g - 1]);
            inverse = mul2(&inverse, &sub2(&x2, &x1));
            inv_d
        };
        let lambda = mul2(&sub2(&y2, &y1), &inv_d);
        let square = mul2(&lambda, &lambda);
        // Each component: canonical - x1 - x2 below 5p before reduction.
        let x3: Fp2Lanes = [
            canonical(&sub(&sub(&square[0], &x1[0]), &x2[0])),
            canonical(&sub(&sub(&square[1], &x1[1]), &x2[1])),
        ];
        let t = mul2(&lambda, &sub2(&x1, &x3));
        let y3 = sub2(&t, &y1);
        b[0][g] = store(&x3[0]);
        b[1][g] = store(&x3[1]);
        b[2][g] = store(&y3[0]);
        b[3][g] = store(&y3[1]);
    }
}

/// The G2 kernel's buffers.
#[derive(Default)]
pub(crate) struct Scratch2 {
    b: G2Rows,
    p: G2Rows,
    prefix: Vec<Fp2Lanes>,
}

impl Lanes for blst_fp2 {
    type Scratch = Scratch2;

    fn has_kernel() -> bool {
        ffi::ifma_available()
    }

    fn add_batch(scratch: &mut Scratch2, slots: &mut [(Self, Self)], batch: &[Addition<Self>]) {
        let groups = batch.len().div_ceil(8);
        let zero = [[0u64; 8]; 6];
        for rows in scratch.b.iter_mut().chain(scratch.p.iter_mut()) {
            rows.clear();
            rows.resize(groups, zero);
        }
        for (k, addition) in batch.iter().enumerate() {
            let (g, lane) = (k / 8, k % 8);
            let (x, y) = &slots[addition.bucket as usize];
            let parts = [&x.fp[0], &x.fp[1], &y.fp[0], &y.fp[1]];
            let points = [
                &addition.x.fp[0],
                &addition.x.fp[1],
                &addition.y.fp[0],
                &addition.y.fp[1],
            ];
            for c in 0..4 {
                for i in 0..6 {
                    scratch.b[c][g][i][lane] = parts[c].l[i];
                    scratch.p[c][g][i][lane] = points[c].l[i];
                }
            }
        }
        // Lanes past the batch add (1, 0) to (0, 0): distinct x, results dropped.
        for k in batch.len()..8 * groups {
            let (g, lane) = (k / 8, k % 8);
            for (i, limb) in MONTGOMERY_ONE.iter().enumerate() {
                scratch.p[0][g][i][lane] = *limb;
            }
        }
        ffi::ifma_add_batch2(&mut scratch.b, &scratch.p, &mut scratch.prefix);
        for (k, addition) in batch.iter().enumerate() {
            let (g, lane) = (k / 8, k % 8);
            let slot = &mut slots[addition.bucket as usize];
            for i in 0..6 {
                slot.0.fp[0].l[i] = scratch.b[0][g][i][lane];
                slot.0.fp[1].l[i] = scratch.b[1][g][i][lane];
                slot.1.fp[0].l[i] = scratch.b[2][g][i][lane];
                slot.1.fp[1].l[i] = scratch.b[3][g][i][lane];
            }
        }
    }
}

/// Replaces eight non-zero elements by their inverses: one inversion and 21 multiplications.
fn invert_eight<F: Coordinate + Copy + Default>(values: &mut [F; 8]) {
    let mut prefix = [F::default(); 8];
    let mut product = values[0];
    prefix[0] = product;
    for i in 1..8 {
        product = product.mul(&values[i]);
        prefix[i] = product;
    }
    assert!(
        !product.is_zero(),
        "invariant: distinct x in every addition"
    );
    let mut inverse = product.inverse();
    for i in (1..8).rev() {
        let inv_i = inverse.mul(&prefix[i - 1]);
        inverse = inverse.mul(&values[i]);
        values[i] = inv_i;
    }
    values[0] = inverse;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::{Curve, G1};
    use blstrs::{G1Affine, G1Projective};
    use group::{Curve as _, Group};
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    #[test]
    fn batches_of_every_length_add_as_blst_does() {
        if !ffi::ifma_available() {
            // The kernel never runs here; the MSM's tests cover the scalar path.
            return;
        }
        let mut rng = ChaCha20Rng::seed_from_u64(21);
        let mut scratch = Scratch::default();
        for len in [1usize, 7, 8, 9, 15, 16, 64, 257] {
            let buckets: Vec<G1Affine> = (0..len)
                .map(|_| G1Projective::random(&mut rng).to_affine())
                .collect();
            // Half the points negated: y = p - y, limbs near p's.
            let points: Vec<G1Affine> = (0..len)
                .map(|i| {
                    let p = G1Projective::random(&mut rng).to_affine();
                    if i % 2 == 0 { -p } else { p }
                })
                .collect();
            let mut slots: Vec<(blst_fp, blst_fp)> = buckets
                .iter()
                .map(|b| G1::coordinates(b).expect("not infinity"))
                .collect();
            let batch: Vec<Addition<blst_fp>> = points
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let (x, y) = G1::coordinates(p).expect("not infinity");
                    Addition {
                        bucket: u32::try_from(i).unwrap(),
                        x,
                        y,
                    }
                })
                .collect();
            <blst_fp as Lanes>::add_batch(&mut scratch, &mut slots, &batch);
            for i in 0..len {
                let want = (G1Projective::from(buckets[i]) + points[i]).to_affine();
                let got = G1::from_coordinates(slots[i].0, slots[i].1);
                assert_eq!(got, want, "addition {i} of {len}");
            }
        }
    }

    #[test]
    fn g2_batches_of_every_length_add_as_blst_does() {
        use crate::curve::G2;
        use blstrs::{G2Affine, G2Projective};
        if !ffi::ifma_available() {
            return;
        }
        let mut rng = ChaCha20Rng::seed_from_u64(22);
        let mut scratch = Scratch2::default();
        for len in [1usize, 7, 8, 9, 15, 16, 64, 257] {
            let buckets: Vec<G2Affine> = (0..len)
                .map(|_| G2Projective::random(&mut rng).to_affine())
                .collect();
            let points: Vec<G2Affine> = (0..len)
                .map(|i| {
                    let p = G2Projective::random(&mut rng).to_affine();
                    if i % 2 == 0 { -p } else { p }
                })
                .collect();
            let mut slots: Vec<(blst_fp2, blst_fp2)> = buckets
                .iter()
                .map(|b| G2::coordinates(b).expect("not infinity"))
                .collect();
            let batch: Vec<Addition<blst_fp2>> = points
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let (x, y) = G2::coordinates(p).expect("not infinity");
                    Addition {
                        bucket: u32::try_from(i).unwrap(),
                        x,
                        y,
                    }
                })
                .collect();
            <blst_fp2 as Lanes>::add_batch(&mut scratch, &mut slots, &batch);
            for i in 0..len {
                let want = (G2Projective::from(buckets[i]) + points[i]).to_affine();
                let got = G2::from_coordinates(slots[i].0, slots[i].1);
                assert_eq!(got, want, "addition {i} of {len}");
            }
        }
    }

    #[test]
    fn the_constants_are_p_s() {
        let p52: u128 = P52
            .iter()
            .rev()
            .fold(0u128, |acc, &l| (acc << 52) | u128::from(l & 0xfff));
        assert_ne!(p52, 0);
        assert_eq!(P52[0], 0xe_ffff_ffff_aaab);
        assert_eq!(P52[7], 0x1a011);
        assert_eq!(P2_BORROWED[7], 0x34022 - 1);
        assert_eq!(P52_TIMES[2][7], 0x68044);
        // PINV52 p = -1 mod 2^52.
        let p0 = u128::from(P52[0]);
        assert_eq!(
            (u128::from(PINV52) * p0) & u128::from(MASK52),
            u128::from(MASK52)
        );
    }
}
