//! The crate's only `unsafe` (the crate root denies it everywhere else): calls into blst that
//! blstrs does not expose safely.
//!
//! - Batch affine conversion (`blst_p1s_to_affine`, `blst_p2s_to_affine`): one field inversion
//!   for a whole block of points (blstrs' `Curve::batch_normalize` inverts once per point).
//! - Decompression with blst's own error codes, so a bad point names what is wrong with it.
//! - Single-threaded Pippenger multi-scalar multiplication over affine points that are already
//!   in memory (blstrs' `multi_exp` converts projective inputs first and may use blst's own
//!   thread pool; our parallelism goes through `lockstep-shard`).
//! - `expand_message_xmd` (RFC 9380) and wide reduction into the scalar field, as gnark's
//!   `fr.Hash` does.
//! - Wiping a secret scalar with a volatile write.
//! - Multiplication by a public scalar over its bit length ([`crate::public_mul`] takes scalars
//!   of up to 128 bits here, one at a time).
//! - A cache prefetch hint (the MSM reads its buckets ahead of their additions).
//!
//! Soundness rests on one fact checked at compile time below: blstrs' point and scalar types
//! are `#[repr(transparent)]` wrappers of blst's (`G1Affine(blst_p1_affine)`,
//! `G1Projective(blst_p1)`, likewise G2, and `Scalar(blst_fr)`), so slices of one may be viewed
//! as slices of the other.
#![allow(unsafe_code)]

use blst::{
    BLST_ERROR, blst_fr, blst_fr_from_scalar, blst_p1, blst_p1_affine, blst_p1_affine_in_g1,
    blst_p1_uncompress, blst_p1s_to_affine, blst_p2, blst_p2_affine, blst_p2_affine_in_g2,
    blst_p2_uncompress, blst_p2s_to_affine, blst_scalar, blst_scalar_from_be_bytes,
};
use blst::{MultiPoint, blst_expand_message_xmd, blst_p1_mult, blst_p2_mult};
use blst::{blst_p1_deserialize, blst_p2_deserialize};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

const _: () = {
    assert!(size_of::<G1Affine>() == size_of::<blst_p1_affine>());
    assert!(align_of::<G1Affine>() == align_of::<blst_p1_affine>());
    assert!(size_of::<G1Projective>() == size_of::<blst_p1>());
    assert!(size_of::<G2Affine>() == size_of::<blst_p2_affine>());
    assert!(align_of::<G2Affine>() == align_of::<blst_p2_affine>());
    assert!(size_of::<G2Projective>() == size_of::<blst_p2>());
    assert!(size_of::<Scalar>() == size_of::<blst_fr>());
};

/// Why blst refused a compressed encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Flags inconsistent, x >= p, or an infinity with bits set (blst's `BAD_ENCODING`).
    Encoding,
    /// x^3 + b has no square root.
    NotOnCurve,
    /// On the curve, outside the prime-order subgroup.
    NotInSubgroup,
}

fn refusal(code: BLST_ERROR) -> Result<(), Refusal> {
    match code {
        BLST_ERROR::BLST_SUCCESS => Ok(()),
        BLST_ERROR::BLST_POINT_NOT_ON_CURVE => Err(Refusal::NotOnCurve),
        BLST_ERROR::BLST_POINT_NOT_IN_GROUP => Err(Refusal::NotInSubgroup),
        _ => Err(Refusal::Encoding),
    }
}

/// The bit length of a scalar's canonical value (0 for zero), from its little-endian bytes.
fn bit_length(bytes: &[u8; 32]) -> usize {
    bytes
        .iter()
        .rposition(|&b| b != 0)
        .map_or(0, |top| 8 * top + 8 - bytes[top].leading_zeros() as usize)
}

/// The functions blst has once per group, written once: decompression with the subgroup check,
/// batch affine conversion, single-threaded Pippenger MSM and multiplication by a public
/// scalar, for G1 and for G2.
macro_rules! per_group {
    (
        $group:literal, $bytes:literal,
        $Affine:ty, $Projective:ty, $raw_affine:ty, $raw:ty,
        $uncompress_checked:ident, $to_affine:ident, $msm:ident, $mult_public:ident,
        $deserialize:ident,
        $blst_uncompress:ident, $blst_in_group:ident, $blst_to_affine:ident, $blst_mult:ident,
        $blst_deserialize:ident
    ) => {
        #[doc = concat!("Decodes a ", $group, " point, compressed (", stringify!($bytes), " bytes, the flag bit 0x80 set) or uncompressed (twice that, the flag clear), checked canonical and on the curve, and in the subgroup when `subgroup` (the caller settles membership otherwise).")]
        ///
        /// # Errors
        /// What blst refused: the encoding (a length that disagrees with the flag included), a
        /// point off the curve, or, when checked, one outside the subgroup.
        pub fn $deserialize(bytes: &[u8], subgroup: bool) -> Result<$Affine, Refusal> {
            let compressed = bytes.first().is_some_and(|b| b & 0x80 != 0);
            if bytes.len() != if compressed { $bytes } else { 2 * $bytes } {
                return Err(Refusal::Encoding);
            }
            let mut out = <$Affine>::default();
            let raw = std::ptr::from_mut(&mut out).cast::<$raw_affine>();
            // SAFETY: `raw` points to a live, writable point of blst's layout (repr(transparent),
            // checked at compile time above); `bytes` holds the bytes blst reads for its flag
            // (checked just above).
            refusal(unsafe { $blst_deserialize(raw, bytes.as_ptr()) })?;
            // SAFETY: `raw` points to the initialised point written just above.
            if !subgroup || unsafe { $blst_in_group(raw) } {
                Ok(out)
            } else {
                Err(Refusal::NotInSubgroup)
            }
        }

        #[doc = concat!("`point * scalar` in ", $group, " for a **public** scalar, over its bit length only: blst's windowed multiplication runs in time that depends on that length (its GLV/GLS path above 175 bits), so a coefficient 5 costs three bits of work, not 255. Never for secrets.")]
        pub fn $mult_public(point: &$Projective, scalar: &Scalar) -> $Projective {
            let bytes = scalar.to_bytes_le();
            let nbits = bit_length(&bytes);
            let mut out = <$raw>::default();
            // SAFETY: blst reads one point and `ceil(nbits / 8)` <= 32 scalar bytes and writes
            // one point; the projective type is a repr(transparent) wrapper of blst's (checked
            // above).
            unsafe {
                $blst_mult(&mut out, std::ptr::from_ref(point).cast::<$raw>(), bytes.as_ptr(), nbits);
                std::mem::transmute::<$raw, $Projective>(out)
            }
        }

        #[doc = concat!("Decompresses a ", $group, " point and checks it is in the subgroup.")]
        ///
        /// # Errors
        /// What blst refused: the encoding, a point off the curve, or one outside the subgroup.
        pub fn $uncompress_checked(bytes: &[u8; $bytes]) -> Result<$Affine, Refusal> {
            let mut out = <$Affine>::default();
            let raw = std::ptr::from_mut(&mut out).cast::<$raw_affine>();
            // SAFETY: `raw` points to a live, writable point of blst's layout (repr(transparent),
            // checked at compile time above); `bytes` holds the bytes blst reads.
            refusal(unsafe { $blst_uncompress(raw, bytes.as_ptr()) })?;
            // SAFETY: `raw` points to the initialised point written just above.
            if unsafe { $blst_in_group(raw) } {
                Ok(out)
            } else {
                Err(Refusal::NotInSubgroup)
            }
        }

        #[doc = concat!("Writes the affine form of ", $group, " `points` into `out` with one field inversion for the block.")]
        ///
        /// # Panics
        /// If the lengths differ.
        pub fn $to_affine(points: &[$Projective], out: &mut [$Affine]) {
            assert_eq!(points.len(), out.len(), "invariant: one output per point");
            if points.is_empty() {
                return;
            }
            let list: [*const $raw; 2] = [points.as_ptr().cast::<$raw>(), std::ptr::null()];
            // SAFETY: a list whose second entry is null tells blst the points are contiguous from
            // the first; `out` has room for `points.len()` affine points of the same layout.
            unsafe {
                $blst_to_affine(
                    out.as_mut_ptr().cast::<$raw_affine>(),
                    list.as_ptr(),
                    points.len(),
                )
            };
        }

        #[doc = concat!("`sum(scalars[i] * points[i])` in ", $group, ", single-threaded Pippenger over `nbits`-bit scalars, each `ceil(nbits / 8)` little-endian bytes.")]
        ///
        /// # Panics
        /// If `scalars` is not that many bytes per point.
        pub fn $msm(points: &[$Affine], scalars: &[u8], nbits: usize) -> $Projective {
            assert_eq!(
                scalars.len(),
                points.len() * nbits.div_ceil(8),
                "invariant: whole scalars"
            );
            if points.is_empty() {
                return <$Projective as group::Group>::identity();
            }
            // SAFETY: the affine type is a repr(transparent) wrapper of blst's (checked above).
            let raw = unsafe {
                std::slice::from_raw_parts(points.as_ptr().cast::<$raw_affine>(), points.len())
            };
            let sum: $raw = raw.mult(scalars, nbits);
            // SAFETY: the projective type is a repr(transparent) wrapper of blst's.
            unsafe { std::mem::transmute::<$raw, $Projective>(sum) }
        }
    };
}

per_group!(
    "G1",
    48,
    G1Affine,
    G1Projective,
    blst_p1_affine,
    blst_p1,
    g1_uncompress_checked,
    g1_to_affine,
    g1_msm,
    g1_mult_public,
    g1_deserialize,
    blst_p1_uncompress,
    blst_p1_affine_in_g1,
    blst_p1s_to_affine,
    blst_p1_mult,
    blst_p1_deserialize
);
per_group!(
    "G2",
    96,
    G2Affine,
    G2Projective,
    blst_p2_affine,
    blst_p2,
    g2_uncompress_checked,
    g2_to_affine,
    g2_msm,
    g2_mult_public,
    g2_deserialize,
    blst_p2_uncompress,
    blst_p2_affine_in_g2,
    blst_p2s_to_affine,
    blst_p2_mult,
    blst_p2_deserialize
);

/// RFC 9380 `expand_message_xmd` with SHA-256: `out.len()` pseudo-random bytes (at most 8160).
///
/// # Panics
/// If more than 255 SHA-256 blocks are asked for (a fixed size in every caller).
pub fn expand_message_xmd(out: &mut [u8], msg: &[u8], dst: &[u8]) {
    assert!(
        out.len() <= 255 * 32,
        "invariant: expand_message_xmd output fits 255 blocks"
    );
    // SAFETY: every pointer comes with its slice's length; blst writes `out.len()` bytes.
    unsafe {
        blst_expand_message_xmd(
            out.as_mut_ptr(),
            out.len(),
            msg.as_ptr(),
            msg.len(),
            dst.as_ptr(),
            dst.len(),
        );
    }
}

/// The big-endian integer `bytes` reduced modulo r.
pub fn scalar_from_be_wide(bytes: &[u8]) -> Scalar {
    let mut reduced = blst_scalar::default();
    let mut fr = blst_fr::default();
    // SAFETY: blst reads `bytes.len()` bytes and writes one blst_scalar, then one blst_fr.
    unsafe {
        blst_scalar_from_be_bytes(&mut reduced, bytes.as_ptr(), bytes.len());
        blst_fr_from_scalar(&mut fr, &reduced);
    }
    let out = Scalar::from(fr);
    // blst_scalar derives Zeroize on drop; blst_fr is wiped here as the scalar may be secret.
    wipe_fr(&mut fr);
    out
}

fn wipe_fr(fr: &mut blst_fr) {
    // SAFETY: `fr` is a valid, aligned, exclusive reference; a volatile write is not elided.
    unsafe { std::ptr::write_volatile(fr, blst_fr::default()) };
}

/// Overwrites a secret scalar with zero in a way the compiler keeps.
pub fn wipe_scalar(scalar: &mut Scalar) {
    // SAFETY: `scalar` is a valid, aligned, exclusive reference; a volatile write is not elided.
    unsafe { std::ptr::write_volatile(scalar, Scalar::from(0u64)) };
}

/// A G1 point from affine coordinates given as Montgomery-form limbs (blst's own
/// representation; all zeros is infinity), checked on the curve and in the subgroup.
///
/// # Errors
/// A point off the curve or outside the subgroup.
pub fn g1_from_montgomery(x: [u64; 6], y: [u64; 6]) -> Result<G1Affine, Refusal> {
    g1_from_montgomery_checked(x, y, true)
}

/// [`g1_from_montgomery`] with the subgroup check only when `subgroup`: a point whose
/// membership another check settles (it is compared with, or only hashed beside, checked ones).
///
/// # Errors
/// A point off the curve, or outside the subgroup when `subgroup`.
pub fn g1_from_montgomery_checked(
    x: [u64; 6],
    y: [u64; 6],
    subgroup: bool,
) -> Result<G1Affine, Refusal> {
    let mut out = G1Affine::default();
    let raw: &mut blst_p1_affine = out.as_mut();
    raw.x.l = x;
    raw.y.l = y;
    // SAFETY: `out` is a fully initialised blst_p1_affine.
    if !unsafe { blst::blst_p1_affine_on_curve(out.as_ref()) } {
        return Err(Refusal::NotOnCurve);
    }
    // SAFETY: as above.
    if subgroup && !unsafe { blst_p1_affine_in_g1(out.as_ref()) } {
        return Err(Refusal::NotInSubgroup);
    }
    Ok(out)
}

/// [`g1_from_montgomery`] for G2: coordinates `(x.c0, x.c1, y.c0, y.c1)`.
///
/// # Errors
/// As [`g1_from_montgomery`].
pub fn g2_from_montgomery(limbs: [[u64; 6]; 4]) -> Result<G2Affine, Refusal> {
    g2_from_montgomery_checked(limbs, true)
}

/// [`g2_from_montgomery`] with the subgroup check only when `subgroup` (as
/// [`g1_from_montgomery_checked`]).
///
/// # Errors
/// As [`g1_from_montgomery_checked`].
pub fn g2_from_montgomery_checked(
    limbs: [[u64; 6]; 4],
    subgroup: bool,
) -> Result<G2Affine, Refusal> {
    let mut out = G2Affine::default();
    let raw: &mut blst_p2_affine = out.as_mut();
    raw.x.fp[0].l = limbs[0];
    raw.x.fp[1].l = limbs[1];
    raw.y.fp[0].l = limbs[2];
    raw.y.fp[1].l = limbs[3];
    // SAFETY: `out` is a fully initialised blst_p2_affine.
    if !unsafe { blst::blst_p2_affine_on_curve(out.as_ref()) } {
        return Err(Refusal::NotOnCurve);
    }
    // SAFETY: as above.
    if subgroup && !unsafe { blst_p2_affine_in_g2(out.as_ref()) } {
        return Err(Refusal::NotInSubgroup);
    }
    Ok(out)
}

/// `(q - 1) / 2`: an element is "negative" in snarkjs's sense when its standard value is above.
const HALF_Q: [u64; 6] = [
    0xdcff_7fff_ffff_d555,
    0x0f55_ffff_58a9_ffff,
    0xb398_6950_7b58_7b12,
    0xb23b_a5c2_79c2_895f,
    0x258d_d3db_21a5_d66b,
    0x0d00_88f5_1cbf_f34d,
];

/// Whether `a`'s standard value is above `(q - 1) / 2` (ffjavascript's `isNegative`).
fn fp_is_negative(a: &blst::blst_fp) -> bool {
    let mut limbs = [0u64; 6];
    // SAFETY: blst writes six limbs from one initialised field element.
    unsafe { blst::blst_uint64_from_fp(limbs.as_mut_ptr(), a) };
    for (l, h) in limbs.iter().rev().zip(HALF_Q.iter().rev()) {
        if l != h {
            return l > h;
        }
    }
    false
}

/// snarkjs's G1 `fromRng` after its draws (`wasm_curve.js`): for `x` (Montgomery limbs, below
/// q), `y` a square root of `x^3 + 4` made negative exactly when `greatest`, and the point
/// multiplied by G1's full cofactor (`cofactor`, little-endian). `None` if `x^3 + 4` is not a
/// square. Variable time: the draws are public (a proof of knowledge's base point).
pub fn g1_from_draw(x: [u64; 6], greatest: bool, cofactor: &[u8]) -> Option<G1Projective> {
    let x = blst::blst_fp { l: x };
    let mut rhs = blst::blst_fp::default();
    let mut four = blst::blst_fp::default();
    let mut y = blst::blst_fp::default();
    // SAFETY: every pointer is to an initialised, live blst_fp (or a u64 array of six limbs).
    let square = unsafe {
        blst::blst_fp_from_uint64(&mut four, [4u64, 0, 0, 0, 0, 0].as_ptr());
        blst::blst_fp_sqr(&mut rhs, &x);
        blst::blst_fp_mul(&mut rhs, &rhs, &x);
        blst::blst_fp_add(&mut rhs, &rhs, &four);
        blst::blst_fp_sqrt(&mut y, &rhs)
    };
    if !square {
        return None;
    }
    let flip = greatest != fp_is_negative(&y);
    let mut point = blst_p1_affine { x, y };
    let mut out = blst_p1::default();
    // SAFETY: initialised points and field elements; blst reads `cofactor.len()` bytes.
    unsafe {
        blst::blst_fp_cneg(&mut point.y, &point.y, flip);
        blst::blst_p1_from_affine(&mut out, &point);
        blst_p1_mult(&mut out, &out, cofactor.as_ptr(), 8 * cofactor.len());
        Some(std::mem::transmute::<blst_p1, G1Projective>(out))
    }
}

/// snarkjs's G2 `fromRng` after its draws: `x = c0 + c1 u`, `y` a square root of
/// `x^3 + 4(1 + u)` made negative (snarkjs's `Fq2.isNegative`: `c1`'s sign, or `c0`'s when
/// `c1 = 0`) exactly when `greatest`, multiplied by G2's full cofactor. `None` if not a
/// square. Variable time: the draws are public (a transcript's hash to G2).
pub fn g2_from_draw(x: [[u64; 6]; 2], greatest: bool, cofactor: &[u8]) -> Option<G2Projective> {
    let x = blst::blst_fp2 {
        fp: [blst::blst_fp { l: x[0] }, blst::blst_fp { l: x[1] }],
    };
    let mut rhs = blst::blst_fp2::default();
    let mut b = blst::blst_fp2::default();
    let mut y = blst::blst_fp2::default();
    // SAFETY: every pointer is to an initialised, live blst_fp2 (or six limbs).
    let square = unsafe {
        blst::blst_fp_from_uint64(&mut b.fp[0], [4u64, 0, 0, 0, 0, 0].as_ptr());
        b.fp[1] = b.fp[0];
        blst::blst_fp2_sqr(&mut rhs, &x);
        blst::blst_fp2_mul(&mut rhs, &rhs, &x);
        blst::blst_fp2_add(&mut rhs, &rhs, &b);
        blst::blst_fp2_sqrt(&mut y, &rhs)
    };
    if !square {
        return None;
    }
    let c1_zero = y.fp[1].l == [0; 6];
    let negative = if c1_zero {
        fp_is_negative(&y.fp[0])
    } else {
        fp_is_negative(&y.fp[1])
    };
    let mut point = blst_p2_affine { x, y };
    let mut out = blst_p2::default();
    // SAFETY: initialised points and field elements; blst reads `cofactor.len()` bytes.
    unsafe {
        blst::blst_fp2_cneg(&mut point.y, &point.y, greatest != negative);
        blst::blst_p2_from_affine(&mut out, &point);
        blst_p2_mult(&mut out, &out, cofactor.as_ptr(), 8 * cofactor.len());
        Some(std::mem::transmute::<blst_p2, G2Projective>(out))
    }
}

/// The pairing `e(p, q)` (Miller loop and final exponentiation, blstrs' `pairing`) as its
/// twelve Fq coefficients in standard form, little-endian limbs, in snarkjs's order: `c0.c0.c0,
/// c0.c0.c1, c0.c1.c0, ..., c1.c2.c1`.
pub fn pairing_coefficients(p: &G1Affine, q: &G2Affine) -> [[u64; 6]; 12] {
    let mut f = blst::blst_fp12::default();
    // SAFETY: blstrs' affine points are blst's (checked above); blst writes one blst_fp12.
    unsafe {
        blst::blst_miller_loop(&mut f, q.as_ref(), p.as_ref());
        blst::blst_final_exp(&mut f, &f);
    }
    let mut out = [[0u64; 6]; 12];
    let coefficients = f
        .fp6
        .iter()
        .flat_map(|fp6| fp6.fp2.iter())
        .flat_map(|fp2| fp2.fp.iter());
    for (slot, fp) in out.iter_mut().zip(coefficients) {
        // SAFETY: blst writes six limbs from one initialised field element.
        unsafe { blst::blst_uint64_from_fp(slot.as_mut_ptr(), fp) };
    }
    out
}

/// A base-field element's standard value from its Montgomery limbs.
pub fn fp_standard(montgomery: [u64; 6]) -> [u64; 6] {
    let mut out = [0u64; 6];
    // SAFETY: blst writes six limbs from one initialised field element.
    unsafe { blst::blst_uint64_from_fp(out.as_mut_ptr(), &blst::blst_fp { l: montgomery }) };
    out
}

/// The base-field operations blst has once per field (Fp and Fp2), written once:
/// multiplication, squaring and the Euclidean (variable-time) inversion, which
/// [`crate::field::Coordinate`] calls. Addition and subtraction are ours (`field.rs`): a call
/// into blst for a 384-bit subtraction costs a quarter of a multiplication.
macro_rules! field_ops {
    ($raw:ty, $mul:ident, $sqr:ident, $inverse:ident, $blst_mul:ident, $blst_sqr:ident, $blst_inverse:ident) => {
        #[doc = concat!("`a * b` in blst's `", stringify!($raw), "`.")]
        #[inline]
        #[must_use]
        pub fn $mul(a: &$raw, b: &$raw) -> $raw {
            let mut out = <$raw>::default();
            // SAFETY: blst reads two initialised elements and writes one.
            unsafe { blst::$blst_mul(&mut out, a, b) };
            out
        }

        #[doc = concat!("`a^2` in blst's `", stringify!($raw), "`.")]
        #[inline]
        #[must_use]
        pub fn $sqr(a: &$raw) -> $raw {
            let mut out = <$raw>::default();
            // SAFETY: blst reads one initialised element and writes one.
            unsafe { blst::$blst_sqr(&mut out, a) };
            out
        }

        #[doc = concat!("`1 / a` in blst's `", stringify!($raw), "` (zero for zero), by blst's `eucl_inverse`, which despite its name runs in constant time (`ct_inverse_mod_384`).")]
        #[must_use]
        pub fn $inverse(a: &$raw) -> $raw {
            let mut out = <$raw>::default();
            // SAFETY: as the squaring.
            unsafe { blst::$blst_inverse(&mut out, a) };
            out
        }
    };
}

field_ops!(
    blst::blst_fp,
    fp_mul,
    fp_sqr,
    fp_inverse,
    blst_fp_mul,
    blst_fp_sqr,
    blst_fp_eucl_inverse
);
field_ops!(
    blst::blst_fp2,
    fp2_mul,
    fp2_sqr,
    fp2_inverse,
    blst_fp2_mul,
    blst_fp2_sqr,
    blst_fp2_eucl_inverse
);

/// blst's own `a + b`, `a - b` and `-a` in Fp: the reference `field.rs`'s are tested against.
#[cfg(test)]
pub(crate) fn fp_reference_ops(
    a: &blst::blst_fp,
    b: &blst::blst_fp,
    sum: &mut blst::blst_fp,
    diff: &mut blst::blst_fp,
    neg: &mut blst::blst_fp,
) {
    // SAFETY: blst reads initialised elements and writes one element through each output.
    unsafe {
        blst::blst_fp_add(sum, a, b);
        blst::blst_fp_sub(diff, a, b);
        blst::blst_fp_cneg(neg, a, true);
    }
}

/// Whether this CPU runs the AVX-512 IFMA kernel ([`crate::ifma`]); checked once.
#[cfg(target_arch = "x86_64")]
pub(crate) fn ifma_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512ifma")
    })
}

/// [`crate::ifma::add_batch`], on a CPU that has its instructions.
///
/// # Panics
/// If the CPU lacks AVX-512F or AVX-512 IFMA (callers ask [`ifma_available`] first), and as the
/// kernel does.
#[cfg(target_arch = "x86_64")]
pub(crate) fn ifma_add_batch(
    bx: &mut [crate::ifma::Lanes64],
    by: &mut [crate::ifma::Lanes64],
    px: &[crate::ifma::Lanes64],
    py: &[crate::ifma::Lanes64],
    prefix: &mut Vec<[std::arch::x86_64::__m512i; 8]>,
) {
    assert!(ifma_available(), "invariant: the caller checked the CPU");
    // SAFETY: the kernel's target features (avx512f, avx512ifma) are present, checked just above.
    unsafe { crate::ifma::add_batch(bx, by, px, py, prefix) }
}

/// [`crate::ifma::add_batch2`] (G2's), on a CPU that has its instructions.
///
/// # Panics
/// As [`ifma_add_batch`].
#[cfg(target_arch = "x86_64")]
pub(crate) fn ifma_add_batch2(
    buckets: &mut crate::ifma::G2Rows,
    points: &crate::ifma::G2Rows,
    prefix: &mut Vec<[[std::arch::x86_64::__m512i; 8]; 2]>,
) {
    assert!(ifma_available(), "invariant: the caller checked the CPU");
    // SAFETY: the kernel's target features (avx512f, avx512ifma) are present, checked just above.
    unsafe { crate::ifma::add_batch2(buckets, points, prefix) }
}

/// Eight 64-bit lanes as one AVX-512 vector.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn lanes_to_vector(lanes: &[u64; 8]) -> std::arch::x86_64::__m512i {
    // SAFETY: both types are 64 bytes of plain integers; every bit pattern is valid in each.
    unsafe { std::mem::transmute::<[u64; 8], std::arch::x86_64::__m512i>(*lanes) }
}

/// An AVX-512 vector as its eight 64-bit lanes.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn vector_to_lanes(vector: std::arch::x86_64::__m512i) -> [u64; 8] {
    // SAFETY: as `lanes_to_vector`.
    unsafe { std::mem::transmute::<std::arch::x86_64::__m512i, [u64; 8]>(vector) }
}

/// Asks the CPU to bring every cache line of `value` into its nearest cache: a hint only, with no
/// effect on any result (a bucket about to be added to, read ahead of its addition).
#[inline]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        const LINE: usize = 64;
        let first = std::ptr::from_ref(value).cast::<i8>();
        let size = size_of::<T>().max(1);
        // The lines from the one holding the first byte to the one holding the last.
        let lines = (first.addr() % LINE + size).div_ceil(LINE);
        for line in 0..lines {
            // SAFETY: a prefetch never faults and changes nothing the program can observe; the
            // addresses are computed with wrapping arithmetic and never dereferenced.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(line * LINE)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
