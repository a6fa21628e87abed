//! Jacobian coordinates of OpenSSL points: the two functions of libcrypto 3 that the `openssl`
//! crate does not bind, behind safe wrappers.
//!
//! They let a block of products share one field inversion (the compressed encoding needs affine
//! coordinates, and OpenSSL would otherwise invert once per point), and let a point known to be
//! on the curve enter without OpenSSL's second on-curve check. Both are exported by every
//! libcrypto 3 built with deprecated APIs (Debian's included); a build without them fails to
//! link rather than misbehaving.
#![allow(unsafe_code)]

use std::ffi::c_int;

use foreign_types::ForeignTypeRef;
use openssl::bn::{BigNum, BigNumContextRef, BigNumRef};
use openssl::ec::{EcGroupRef, EcPointRef};
use openssl::error::ErrorStack;
use openssl_sys::{BIGNUM, BN_CTX, EC_GROUP, EC_POINT};

use crate::curve::Affine;

unsafe extern "C" {
    fn EC_POINT_set_Jprojective_coordinates_GFp(
        group: *const EC_GROUP,
        point: *mut EC_POINT,
        x: *const BIGNUM,
        y: *const BIGNUM,
        z: *const BIGNUM,
        ctx: *mut BN_CTX,
    ) -> c_int;

    fn EC_POINT_get_Jprojective_coordinates_GFp(
        group: *const EC_GROUP,
        point: *const EC_POINT,
        x: *mut BIGNUM,
        y: *mut BIGNUM,
        z: *mut BIGNUM,
        ctx: *mut BN_CTX,
    ) -> c_int;
}

fn check(status: c_int) -> Result<(), ErrorStack> {
    if status == 1 {
        Ok(())
    } else {
        Err(ErrorStack::get())
    }
}

/// Sets `point` to `affine` (Jacobian `z = 1`, `one` holding 1) without OpenSSL's on-curve
/// check: an [`Affine`] is on the curve by its invariant.
pub(super) fn set_affine(
    group: &EcGroupRef,
    point: &mut EcPointRef,
    affine: &Affine,
    one: &BigNumRef,
    ctx: &mut BigNumContextRef,
) -> Result<(), ErrorStack> {
    let x = BigNum::from_slice(affine.x())?;
    let y = BigNum::from_slice(affine.y())?;
    // SAFETY: every pointer comes from a live reference of the matching OpenSSL type, the
    // mutable ones from exclusive references; OpenSSL keeps none of them after returning. The
    // group is only read, which OpenSSL allows from several threads at once.
    check(unsafe {
        EC_POINT_set_Jprojective_coordinates_GFp(
            group.as_ptr(),
            point.as_ptr(),
            x.as_ptr(),
            y.as_ptr(),
            one.as_ptr(),
            ctx.as_ptr(),
        )
    })
}

/// Reads the Jacobian coordinates `(X, Y, Z)` of `point` (the affine point is `(X/Z^2, Y/Z^3)`),
/// as plain integers mod p.
pub(super) fn coordinates(
    group: &EcGroupRef,
    point: &EcPointRef,
    x: &mut BigNumRef,
    y: &mut BigNumRef,
    z: &mut BigNumRef,
    ctx: &mut BigNumContextRef,
) -> Result<(), ErrorStack> {
    // SAFETY: as in `set_affine`; the three outputs are distinct exclusive borrows.
    check(unsafe {
        EC_POINT_get_Jprojective_coordinates_GFp(
            group.as_ptr(),
            point.as_ptr(),
            x.as_ptr(),
            y.as_ptr(),
            z.as_ptr(),
            ctx.as_ptr(),
        )
    })
}
