//! snarkjs's circuit hash (`zkey_new.js`) and the way snarkjs prints hashes (`misc.js`
//! `formatHash`).
//!
//! The hash is blake2b-512 over points in snarkjs's uncompressed form (big-endian coordinates,
//! G2's `c1` before `c0`, infinity all zeros: blst's uncompressed encoding without its
//! infinity flag): `alpha_1`, `beta_1`, `beta_2`, `gamma_2`, `delta_1`, `delta_2`, then `IC`,
//! `H`, `C`, `A`, `B1`, `B2`, each as a big-endian u32 count and its points. `H` is hashed in
//! the monomial form `[tau^(i+n) - tau^i]_1`, not as stored; its count is written as `n - 1`
//! and its points are `i = 0..n-1` for `n <= 2^14`, but `i = 0..n` above (snarkjs hashes
//! chunks of 2^14 points and does not shorten the last one).

use blake2::{Blake2b512, Digest};
use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;

use super::Header;

/// snarkjs's chunk of H points in the hash.
const HASH_CHUNK: usize = 1 << 14;

/// A G1 point as snarkjs hashes it.
pub(crate) fn g1_u(point: &G1Affine) -> [u8; 96] {
    if bool::from(point.is_identity()) {
        [0; 96]
    } else {
        point.to_uncompressed()
    }
}

/// A G2 point as snarkjs hashes it.
pub(crate) fn g2_u(point: &G2Affine) -> [u8; 192] {
    if bool::from(point.is_identity()) {
        [0; 192]
    } else {
        point.to_uncompressed()
    }
}

/// How many `H` points (`[tau^(i+n) - tau^i]_1`, `i` from 0) the circuit hash takes for a
/// domain of `n`: `n - 1` up to 2^14, `n` above.
pub fn hashed_h_points(n: usize) -> usize {
    if n <= HASH_CHUNK { n - 1 } else { n }
}

/// The points a key is hashed over, besides its header.
pub struct HashedPoints<'a> {
    /// `IC`.
    pub ic: &'a [G1Affine],
    /// [`hashed_h_points`]`(n)` points `[tau^(i+n) - tau^i]_1`.
    pub h_monomial: &'a [G1Affine],
    /// `C`.
    pub c: &'a [G1Affine],
    /// `A`.
    pub a: &'a [G1Affine],
    /// `B1`.
    pub b1: &'a [G1Affine],
    /// `B2`.
    pub b2: &'a [G2Affine],
}

/// The circuit hash of a key's header and points.
///
/// # Panics
/// If a vector holds 2^32 points or more (the format counts them in a u32).
pub fn circuit_hash(header: &Header, points: &HashedPoints<'_>) -> [u8; 64] {
    let mut hasher = Blake2b512::new();
    hasher.update(g1_u(&header.alpha1));
    hasher.update(g1_u(&header.beta1));
    hasher.update(g2_u(&header.beta2));
    hasher.update(g2_u(&header.gamma2));
    hasher.update(g1_u(&header.delta1));
    hasher.update(g2_u(&header.delta2));
    let count = |hasher: &mut Blake2b512, n: usize| {
        hasher.update(
            u32::try_from(n)
                .expect("invariant: counts fit a u32")
                .to_be_bytes(),
        );
    };
    count(&mut hasher, points.ic.len());
    points.ic.iter().for_each(|p| hasher.update(g1_u(p)));
    count(&mut hasher, (1usize << header.power) - 1);
    points
        .h_monomial
        .iter()
        .for_each(|p| hasher.update(g1_u(p)));
    for list in [points.c, points.a, points.b1] {
        count(&mut hasher, list.len());
        list.iter().for_each(|p| hasher.update(g1_u(p)));
    }
    count(&mut hasher, points.b2.len());
    points.b2.iter().for_each(|p| hasher.update(g2_u(p)));
    hasher.finalize().into()
}

/// A 64-byte hash as snarkjs prints it: four lines, each two tabs and four groups of eight hex
/// digits, the bytes in order.
pub fn format_hash(hash: &[u8; 64]) -> String {
    hash.chunks(16)
        .map(|line| {
            let groups: Vec<String> = line
                .chunks(4)
                .map(|g| g.iter().map(|b| format!("{b:02x}")).collect())
                .collect();
            format!("\t\t{}", groups.join(" "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_formats() {
        assert_eq!(hashed_h_points(4), 3);
        assert_eq!(hashed_h_points(1 << 14), (1 << 14) - 1);
        assert_eq!(hashed_h_points(1 << 15), 1 << 15);
        let hash: [u8; 64] = std::array::from_fn(|i| u8::try_from(i).unwrap());
        let text = format_hash(&hash);
        assert_eq!(text.lines().count(), 4);
        assert!(text.starts_with("\t\t00010203 04050607 08090a0b 0c0d0e0f\n\t\t10111213"));
        assert_eq!(g1_u(&G1Affine::identity()), [0; 96]);
        assert_eq!(
            &g1_u(&G1Affine::generator())[..],
            &G1Affine::generator().to_uncompressed()[..]
        );
    }
}
