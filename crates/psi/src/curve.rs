//! P-256 encodings and OpenMined's hash to the curve, written once above the backends.
//!
//! Field arithmetic is [`Fe`] (fiat-crypto's verified Montgomery arithmetic, 32-bit limbs on
//! wasm32); this module only composes it. Both backends receive affine coordinates from here,
//! so the bytes they produce cannot differ in how a point was found.

use std::sync::LazyLock;

use p256::elliptic_curve::subtle::Choice;
use sha2::{Digest, Sha256};

use crate::PointError;
use crate::field::Fe;

#[cfg(feature = "native")]
mod batch_compress;
#[cfg(feature = "native")]
pub(crate) use batch_compress::compress_jacobian;

/// Length of a masked element: a compressed SEC1 P-256 point.
pub const ELEMENT_LEN: usize = 33;

/// 2^256 mod p, to fold the high half of a 512-bit value: 2^224 - 2^192 - 2^96 + 1.
const TWO_256_HEX: &str = "00000000fffffffeffffffffffffffffffffffff000000000000000000000001";

/// The curve constant b of y^2 = x^3 - 3x + b (NIST SP 800-186, § 3.2.1.3).
const B_HEX: &str = "5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b";

/// A masked element: a compressed P-256 point, `0x02 | 0x03` followed by the big-endian x.
///
/// # Invariant
/// 33 bytes with a first byte of 0x02 or 0x03. Whether x is on the curve is checked when the
/// element is decoded for a multiplication; elements that are only compared (a raw setup's) are
/// never decoded. Ordering is by bytes, the order of OpenMined's sorted messages.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Element([u8; ELEMENT_LEN]);

impl Element {
    /// Checks the length and prefix of an encoded element.
    ///
    /// # Errors
    /// [`PointError::Length`], [`PointError::Infinity`] or [`PointError::Prefix`].
    pub fn from_slice(bytes: &[u8]) -> Result<Self, PointError> {
        let array: [u8; ELEMENT_LEN] = bytes
            .try_into()
            .map_err(|_| PointError::Length(bytes.len() as u64))?;
        match array[0] {
            0x02 | 0x03 => Ok(Self(array)),
            0x00 => Err(PointError::Infinity),
            other => Err(PointError::Prefix(other)),
        }
    }

    /// The 33 encoded bytes.
    pub fn as_bytes(&self) -> &[u8; ELEMENT_LEN] {
        &self.0
    }
}

impl AsRef<[u8]> for Element {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Element {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Element(")?;
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))?;
        write!(f, ")")
    }
}

/// A curve point in affine coordinates, big-endian, as the backends take it.
///
/// # Invariant
/// On the curve: only [`hash_to_curve`] and [`decompress`] make one, and both confirm
/// `y^2 = x^3 - 3x + b`. The native backend relies on it to skip OpenSSL's second check (a
/// point off the curve multiplied by a secret key could leak the key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Affine {
    x: [u8; 32],
    y: [u8; 32],
}

impl Affine {
    /// The big-endian x coordinate.
    #[cfg(any(test, feature = "native"))]
    pub(crate) fn x(&self) -> &[u8; 32] {
        &self.x
    }

    /// The big-endian y coordinate.
    #[cfg(any(test, feature = "native"))]
    pub(crate) fn y(&self) -> &[u8; 32] {
        &self.y
    }

    /// Whether `y^2 = x^3 - 3x + b` with both coordinates below p: true for every `Affine`, by
    /// the invariant; for a backend that wants to confirm it cheaply before multiplying.
    #[cfg(feature = "native")]
    pub(crate) fn is_on_curve(&self) -> bool {
        match (Fe::from_be_bytes(&self.x), Fe::from_be_bytes(&self.y)) {
            (Some(x), Some(y)) => curve_rhs(&x) == y.square(),
            _ => false,
        }
    }

    /// The coordinates as field elements (they are canonical, by the invariant).
    pub(crate) fn coordinates(&self) -> (Fe, Fe) {
        let field = |bytes: &[u8; 32]| {
            Fe::from_be_bytes(bytes).expect("invariant: an Affine's coordinates are below p")
        };
        (field(&self.x), field(&self.y))
    }
}

/// 2^256 mod p and b as field elements, converted once.
static TWO_256: LazyLock<Fe> = LazyLock::new(|| field_from_hex(TWO_256_HEX));
static B: LazyLock<Fe> = LazyLock::new(|| field_from_hex(B_HEX));

fn field_from_hex(hex: &str) -> Fe {
    let mut bytes = [0u8; 32];
    for (i, byte) in bytes.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)
            .expect("invariant: the curve constants are hex");
    }
    Fe::from_be_bytes(&bytes).expect("invariant: the curve constants are below p")
}

/// OpenMined's random oracle onto the field: `(SHA256(0x01 || m) || SHA256(0x02 || m))` read as
/// a 512-bit big-endian integer, reduced mod p.
fn random_oracle(message: &[u8]) -> Fe {
    let high: [u8; 32] = Sha256::new()
        .chain_update([1u8])
        .chain_update(message)
        .finalize()
        .into();
    let low: [u8; 32] = Sha256::new()
        .chain_update([2u8])
        .chain_update(message)
        .finalize()
        .into();
    Fe::reduce_be_bytes(&high)
        .mul(&TWO_256)
        .add(&Fe::reduce_be_bytes(&low))
}

/// y^2 = x^3 - 3x + b.
fn curve_rhs(x: &Fe) -> Fe {
    x.square().mul(x).sub(&x.double().add(x)).add(&B)
}

/// The minimal big-endian bytes of a field element (leading zeros stripped; zero is empty).
fn minimal_bytes(x: &Fe) -> Vec<u8> {
    let bytes = x.to_be_bytes();
    let start = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    bytes[start..].to_vec()
}

/// OpenMined's hash to the curve (private-join-and-compute
/// `ECGroup::GetPointByHashingToCurveSha256`): `x = RO(m)`; while `x^3 - 3x + b` is not a
/// square, `x = RO(minimal big-endian bytes of x)`; the point is `(x, even root)`.
///
/// Each attempt is one exponentiation (the square root `a^((p+1)/4)`, confirmed by squaring)
/// instead of a Legendre test followed by a square root.
///
/// # Constant time
/// Each attempt runs in constant time; the number of attempts (1 on average 2) depends on the
/// message, as it does in OpenMined's algorithm, which this must reproduce.
pub(crate) fn hash_to_curve(message: &[u8]) -> Affine {
    let mut x = random_oracle(message);
    loop {
        if let Some(y) = curve_rhs(&x).sqrt() {
            let even = y.select(&y.neg(), y.is_odd());
            return Affine {
                x: x.to_be_bytes(),
                y: even.to_be_bytes(),
            };
        }
        x = random_oracle(&minimal_bytes(&x));
    }
}

/// Decodes an element to affine coordinates, checking that x is canonical and on the curve.
///
/// # Errors
/// [`PointError::NonCanonical`] or [`PointError::NotOnCurve`] (length and prefix were checked
/// when the [`Element`] was made).
pub(crate) fn decompress(element: &Element) -> Result<Affine, PointError> {
    let bytes = element.as_bytes();
    let mut x_bytes = [0u8; 32];
    x_bytes.copy_from_slice(&bytes[1..]);
    let x = Fe::from_be_bytes(&x_bytes).ok_or(PointError::NonCanonical)?;
    let y = curve_rhs(&x).sqrt().ok_or(PointError::NotOnCurve)?;
    let want_odd = Choice::from(bytes[0] & 1);
    let y = y.select(&y.neg(), y.is_odd() ^ want_odd);
    Ok(Affine {
        x: x.to_be_bytes(),
        y: y.to_be_bytes(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_what_they_claim() {
        // 2^256 mod p equals (2^128)^2 computed in the field.
        let two_128 = Fe::reduce_be_bytes(&{
            let mut b = [0u8; 32];
            b[15] = 1;
            b
        });
        assert_eq!(two_128.square(), field_from_hex(TWO_256_HEX));
        // The generator is on the curve: rhs(Gx) = Gy^2.
        let gx = field_from_hex("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296");
        let gy = field_from_hex("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5");
        assert_eq!(curve_rhs(&gx), gy.square());
    }

    #[test]
    fn hashed_points_are_on_the_curve_with_even_y() {
        for i in 0..200u32 {
            let point = hash_to_curve(&i.to_be_bytes());
            assert_eq!(point.y()[31] & 1, 0);
            let mut compressed = [0u8; 33];
            compressed[0] = 2;
            compressed[1..].copy_from_slice(point.x());
            let decoded = decompress(&Element::from_slice(&compressed).unwrap()).unwrap();
            assert_eq!(decoded, point);
            #[cfg(feature = "native")]
            {
                assert!(point.is_on_curve());
                let mut moved = point;
                moved.y[31] ^= 1;
                assert!(!moved.is_on_curve());
                moved.y = [0xff; 32];
                assert!(!moved.is_on_curve());
            }
        }
    }

    #[test]
    fn decoding_refuses_what_is_not_a_point() {
        assert_eq!(Element::from_slice(&[2; 32]), Err(PointError::Length(32)));
        assert_eq!(Element::from_slice(&[0; 33]), Err(PointError::Infinity));
        assert_eq!(Element::from_slice(&[4; 33]), Err(PointError::Prefix(4)));
        let mut big_x = [0xffu8; 33];
        big_x[0] = 3;
        assert_eq!(
            decompress(&Element::from_slice(&big_x).unwrap()),
            Err(PointError::NonCanonical)
        );
        // About half of all x have no point; find one.
        let off_curve = (1u8..=255)
            .map(|v| {
                let mut e = [0u8; 33];
                e[0] = 2;
                e[32] = v;
                Element::from_slice(&e).unwrap()
            })
            .find(|e| decompress(e).is_err())
            .unwrap();
        assert_eq!(decompress(&off_curve), Err(PointError::NotOnCurve));
    }
}
