//! Compression of points held in Jacobian coordinates, a block at a time (the native backend's
//! products).

use p256::FieldElement;
use p256::elliptic_curve::ff::BatchInvert;
use zeroize::Zeroizing;

use super::{ELEMENT_LEN, Element};
use crate::PsiError;

/// Compresses points given in Jacobian coordinates `(X, Y, Z)` (the affine point is
/// `(X/Z^2, Y/Z^3)`), sharing one field inversion among them (Montgomery's trick): three
/// multiplications per point instead of an inversion each. The output is in input order and
/// does not depend on how points are grouped.
///
/// # Errors
/// [`PsiError::Backend`] if a point is at infinity (`Z = 0`), which no product of a point and a
/// nonzero scalar is in a group of prime order.
pub(crate) fn compress_jacobian(points: &[[FieldElement; 3]]) -> Result<Vec<Element>, PsiError> {
    if points.is_empty() {
        return Ok(Vec::new());
    }
    // Z depends on the key (only the affine point is public): cleared after use.
    let mut inverses: Zeroizing<Vec<FieldElement>> =
        Zeroizing::new(points.iter().map(|p| p[2]).collect());
    // No product is at infinity; the test only guards that invariant (a zero would be skipped
    // by the batch inversion and yield a wrong encoding), so its timing reveals nothing.
    if inverses.iter().any(|z| bool::from(z.is_zero())) {
        return Err(PsiError::Backend {
            backend: "compression",
            message: "a product is the point at infinity".to_owned(),
        });
    }
    inverses.iter_mut().batch_invert();
    Ok(points
        .iter()
        .zip(inverses.iter())
        .map(|([x, y, _], z_inverse)| {
            let z2 = z_inverse.square();
            compressed(&(*x * z2), &(*y * z2 * z_inverse))
        })
        .collect())
}

/// The compressed encoding of the affine point `(x, y)`.
fn compressed(x: &FieldElement, y: &FieldElement) -> Element {
    let mut bytes = [0u8; ELEMENT_LEN];
    bytes[0] = 0x02 | y.is_odd().unwrap_u8();
    bytes[1..].copy_from_slice(&x.to_bytes());
    Element(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::{Affine, hash_to_curve};

    #[test]
    fn jacobian_points_compress_as_their_affine_form() {
        let points: Vec<Affine> = (0..5u32).map(|i| hash_to_curve(&i.to_be_bytes())).collect();
        let field = |b: &[u8; 32]| FieldElement::from_bytes(&(*b).into()).unwrap();
        // (x, y) is the Jacobian (x z^2, y z^3, z) for every nonzero z.
        let jacobian: Vec<[FieldElement; 3]> = points
            .iter()
            .zip(1u64..)
            .map(|(p, k)| {
                let z = FieldElement::from_u64(k * 7919);
                [field(p.x()) * z.square(), field(p.y()) * z.square() * z, z]
            })
            .collect();
        let compressed = compress_jacobian(&jacobian).unwrap();
        for (point, element) in points.iter().zip(&compressed) {
            assert_eq!(element.as_bytes()[0], 0x02 | (point.y()[31] & 1));
            assert_eq!(&element.as_bytes()[1..], point.x());
        }
        // One at a time gives the same bytes.
        for (one, element) in jacobian.iter().zip(&compressed) {
            assert_eq!(
                &compress_jacobian(std::slice::from_ref(one)).unwrap()[0],
                element
            );
        }
        let mut infinity = jacobian.clone();
        infinity[3][2] = FieldElement::ZERO;
        assert!(compress_jacobian(&infinity).is_err());
        assert!(compress_jacobian(&[]).unwrap().is_empty());
    }
}
