//! The crate's only `unsafe`: calls into blst that blstrs does not expose safely.
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
//!
//! Soundness rests on one fact checked at compile time below: blstrs' point and scalar types
//! are `#[repr(transparent)]` wrappers of blst's (`G1Affine(blst_p1_affine)`,
//! `G1Projective(blst_p1)`, likewise G2, and `Scalar(blst_fr)`), so slices of one may be viewed
//! as slices of the other.

use blst::{
    BLST_ERROR, blst_fr, blst_fr_from_scalar, blst_p1, blst_p1_affine, blst_p1_affine_in_g1,
    blst_p1_uncompress, blst_p1s_to_affine, blst_p2, blst_p2_affine, blst_p2_affine_in_g2,
    blst_p2_uncompress, blst_p2s_to_affine, blst_scalar, blst_scalar_from_be_bytes,
};
use blst::{MultiPoint, blst_expand_message_xmd};
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
pub(crate) enum Refusal {
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

/// Decompresses a G1 point and checks it is in the subgroup.
pub(crate) fn g1_uncompress_checked(bytes: &[u8; 48]) -> Result<G1Affine, Refusal> {
    let mut out = G1Affine::default();
    let raw = std::ptr::from_mut(&mut out).cast::<blst_p1_affine>();
    // SAFETY: `raw` points to a live, writable blst_p1_affine (repr(transparent), checked above);
    // `bytes` holds the 48 bytes blst reads.
    refusal(unsafe { blst_p1_uncompress(raw, bytes.as_ptr()) })?;
    // SAFETY: `raw` points to the initialised point written just above.
    if unsafe { blst_p1_affine_in_g1(raw) } {
        Ok(out)
    } else {
        Err(Refusal::NotInSubgroup)
    }
}

/// Decompresses a G2 point and checks it is in the subgroup.
pub(crate) fn g2_uncompress_checked(bytes: &[u8; 96]) -> Result<G2Affine, Refusal> {
    let mut out = G2Affine::default();
    let raw = std::ptr::from_mut(&mut out).cast::<blst_p2_affine>();
    // SAFETY: as in `g1_uncompress_checked`, for blst_p2_affine and 96 bytes.
    refusal(unsafe { blst_p2_uncompress(raw, bytes.as_ptr()) })?;
    // SAFETY: `raw` points to the initialised point written just above.
    if unsafe { blst_p2_affine_in_g2(raw) } {
        Ok(out)
    } else {
        Err(Refusal::NotInSubgroup)
    }
}

/// Writes the affine form of `points` into `out` with one field inversion for the block.
///
/// # Panics
/// If the lengths differ.
pub(crate) fn g1_to_affine(points: &[G1Projective], out: &mut [G1Affine]) {
    assert_eq!(points.len(), out.len(), "invariant: one output per point");
    if points.is_empty() {
        return;
    }
    let list: [*const blst_p1; 2] = [points.as_ptr().cast::<blst_p1>(), std::ptr::null()];
    // SAFETY: a list whose second entry is null tells blst the points are contiguous from the
    // first; `out` has room for `points.len()` affine points of the same layout.
    unsafe {
        blst_p1s_to_affine(
            out.as_mut_ptr().cast::<blst_p1_affine>(),
            list.as_ptr(),
            points.len(),
        )
    };
}

/// [`g1_to_affine`] for G2.
///
/// # Panics
/// If the lengths differ.
pub(crate) fn g2_to_affine(points: &[G2Projective], out: &mut [G2Affine]) {
    assert_eq!(points.len(), out.len(), "invariant: one output per point");
    if points.is_empty() {
        return;
    }
    let list: [*const blst_p2; 2] = [points.as_ptr().cast::<blst_p2>(), std::ptr::null()];
    // SAFETY: as in `g1_to_affine`.
    unsafe {
        blst_p2s_to_affine(
            out.as_mut_ptr().cast::<blst_p2_affine>(),
            list.as_ptr(),
            points.len(),
        )
    };
}

/// `sum(scalars[i] * points[i])`, single-threaded Pippenger over `nbits`-bit scalars, each
/// `ceil(nbits / 8)` little-endian bytes.
///
/// # Panics
/// If `scalars` is not that many bytes per point.
pub(crate) fn g1_msm(points: &[G1Affine], scalars: &[u8], nbits: usize) -> G1Projective {
    assert_eq!(
        scalars.len(),
        points.len() * nbits.div_ceil(8),
        "invariant: whole scalars"
    );
    if points.is_empty() {
        return <G1Projective as group::Group>::identity();
    }
    // SAFETY: G1Affine is a repr(transparent) blst_p1_affine (checked above).
    let raw = unsafe {
        std::slice::from_raw_parts(points.as_ptr().cast::<blst_p1_affine>(), points.len())
    };
    let sum: blst_p1 = raw.mult(scalars, nbits);
    // SAFETY: G1Projective is a repr(transparent) blst_p1.
    unsafe { std::mem::transmute::<blst_p1, G1Projective>(sum) }
}

/// [`g1_msm`] for G2.
///
/// # Panics
/// If `scalars` is not `ceil(nbits / 8)` bytes per point.
pub(crate) fn g2_msm(points: &[G2Affine], scalars: &[u8], nbits: usize) -> G2Projective {
    assert_eq!(
        scalars.len(),
        points.len() * nbits.div_ceil(8),
        "invariant: whole scalars"
    );
    if points.is_empty() {
        return <G2Projective as group::Group>::identity();
    }
    // SAFETY: G2Affine is a repr(transparent) blst_p2_affine.
    let raw = unsafe {
        std::slice::from_raw_parts(points.as_ptr().cast::<blst_p2_affine>(), points.len())
    };
    let sum: blst_p2 = raw.mult(scalars, nbits);
    // SAFETY: G2Projective is a repr(transparent) blst_p2.
    unsafe { std::mem::transmute::<blst_p2, G2Projective>(sum) }
}

/// RFC 9380 `expand_message_xmd` with SHA-256: `out.len()` pseudo-random bytes (at most 8160).
///
/// # Panics
/// If more than 255 SHA-256 blocks are asked for (a fixed size in every caller).
pub(crate) fn expand_message_xmd(out: &mut [u8], msg: &[u8], dst: &[u8]) {
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
pub(crate) fn scalar_from_be_wide(bytes: &[u8]) -> Scalar {
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
pub(crate) fn wipe_scalar(scalar: &mut Scalar) {
    // SAFETY: `scalar` is a valid, aligned, exclusive reference; a volatile write is not elided.
    unsafe { std::ptr::write_volatile(scalar, Scalar::from(0u64)) };
}

/// A G1 point from affine coordinates given as Montgomery-form limbs (blst's own
/// representation; all zeros is infinity), checked on the curve and in the subgroup.
pub(crate) fn g1_from_montgomery(x: [u64; 6], y: [u64; 6]) -> Result<G1Affine, Refusal> {
    let mut out = G1Affine::default();
    let raw: &mut blst_p1_affine = out.as_mut();
    raw.x.l = x;
    raw.y.l = y;
    // SAFETY: `out` is a fully initialised blst_p1_affine.
    if !unsafe { blst::blst_p1_affine_on_curve(out.as_ref()) } {
        return Err(Refusal::NotOnCurve);
    }
    // SAFETY: as above.
    if !unsafe { blst_p1_affine_in_g1(out.as_ref()) } {
        return Err(Refusal::NotInSubgroup);
    }
    Ok(out)
}

/// [`g1_from_montgomery`] for G2: coordinates `(x.c0, x.c1, y.c0, y.c1)`.
pub(crate) fn g2_from_montgomery(limbs: [[u64; 6]; 4]) -> Result<G2Affine, Refusal> {
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
    if !unsafe { blst_p2_affine_in_g2(out.as_ref()) } {
        return Err(Refusal::NotInSubgroup);
    }
    Ok(out)
}
