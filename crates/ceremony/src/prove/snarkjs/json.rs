//! snarkjs's JSON files read back: `verification_key.json`, `proof.json`, `public.json`.
//!
//! Numbers are decimal strings: a coordinate below p, a public signal below r. A G1 point is
//! `[x, y, z]` with `z` `"1"` (or `["0", "1", "0"]`, infinity); a G2 point `[[x.c0, x.c1],
//! [y.c0, y.c1], [z.c0, z.c1]]` with `z` `["1", "0"]` (infinity `[["0", "0"], ["1", "0"],
//! ["0", "0"]]`). Every point is checked on its curve and in its subgroup; an error names the
//! field (`verification key: vk_beta_2[1][0]: not below p`).

use blstrs::{G1Affine, G2Affine, Scalar};
use group::prime::PrimeCurveAffine;
use num_bigint::BigUint;
use serde_json::Value;

use super::super::ProveError;
use super::{Proof, VerificationKey};

/// The most bytes a snarkjs JSON file may hold (a verification key of a million public signals
/// is about 250 MB).
pub const JSON_LIMIT: u64 = 1 << 30;

/// Whether a file starting with `head` holds JSON, snarkjs's files: its first non-blank byte
/// `{` or `[` (gnark's binary files start otherwise).
pub fn is_json(head: &[u8]) -> bool {
    matches!(
        head.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    )
}

/// BLS12-381's base field modulus p, big-endian.
const P_BE: [u8; 48] = {
    let mut out = [0u8; 48];
    let mut i = 0;
    while i < 6 {
        let limb = lockstep_bls12::P[5 - i].to_be_bytes();
        let mut k = 0;
        while k < 8 {
            out[8 * i + k] = limb[k];
            k += 1;
        }
        i += 1;
    }
    out
};

fn refused(file: &str, path: &str, problem: &str) -> ProveError {
    ProveError::Json(format!("{file}: {path}: {problem}"))
}

fn field<'a>(file: &str, value: &'a Value, name: &str) -> Result<&'a Value, ProveError> {
    value
        .get(name)
        .ok_or_else(|| refused(file, name, "missing"))
}

fn decimal<'a>(file: &str, value: &'a Value, path: &str) -> Result<&'a str, ProveError> {
    value
        .as_str()
        .filter(|s| !s.is_empty() && s.len() <= 120 && s.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| refused(file, path, "not a decimal number in a string"))
}

/// A base-field element, 48 bytes big-endian.
fn fp(file: &str, value: &Value, path: &str) -> Result<[u8; 48], ProveError> {
    let digits = decimal(file, value, path)?;
    let n = BigUint::parse_bytes(digits.as_bytes(), 10)
        .ok_or_else(|| refused(file, path, "not a decimal number"))?;
    let bytes = n.to_bytes_be();
    if bytes.len() > 48 || n >= BigUint::from_bytes_be(&P_BE) {
        return Err(refused(file, path, "not below p"));
    }
    let mut out = [0u8; 48];
    out[48 - bytes.len()..].copy_from_slice(&bytes);
    Ok(out)
}

fn array<'a>(
    file: &str,
    value: &'a Value,
    path: &str,
    len: usize,
) -> Result<&'a [Value], ProveError> {
    value
        .as_array()
        .map(Vec::as_slice)
        .filter(|a| a.len() == len)
        .ok_or_else(|| refused(file, path, &format!("not an array of {len}")))
}

fn g1(file: &str, value: &Value, path: &str) -> Result<G1Affine, ProveError> {
    let xyz = array(file, value, path, 3)?;
    let [x, y, z] = [0, 1, 2].map(|i| fp(file, &xyz[i], &format!("{path}[{i}]")));
    let (x, y, z) = (x?, y?, z?);
    let one = |b: &[u8; 48]| b[..47].iter().all(|&v| v == 0) && b[47] == 1;
    let zero = |b: &[u8; 48]| b.iter().all(|&v| v == 0);
    if zero(&z) && zero(&x) && one(&y) {
        return Ok(G1Affine::identity());
    }
    if !one(&z) {
        return Err(refused(file, path, "not an affine point (z is not 1)"));
    }
    let mut bytes = [0u8; 96];
    bytes[..48].copy_from_slice(&x);
    bytes[48..].copy_from_slice(&y);
    Option::from(G1Affine::from_uncompressed(&bytes)).ok_or_else(|| {
        refused(
            file,
            path,
            "not a point of G1 (off the curve or outside the subgroup)",
        )
    })
}

fn g2(file: &str, value: &Value, path: &str) -> Result<G2Affine, ProveError> {
    let xyz = array(file, value, path, 3)?;
    let mut coords = [[[0u8; 48]; 2]; 3];
    for (i, c) in coords.iter_mut().enumerate() {
        let pair = array(file, &xyz[i], &format!("{path}[{i}]"), 2)?;
        for (k, slot) in c.iter_mut().enumerate() {
            *slot = fp(file, &pair[k], &format!("{path}[{i}][{k}]"))?;
        }
    }
    let zero = |b: &[u8; 48]| b.iter().all(|&v| v == 0);
    let one = |b: &[u8; 48]| b[..47].iter().all(|&v| v == 0) && b[47] == 1;
    let [x, y, z] = coords;
    if zero(&z[0]) && zero(&z[1]) && zero(&x[0]) && zero(&x[1]) && one(&y[0]) && zero(&y[1]) {
        return Ok(G2Affine::identity());
    }
    if !(one(&z[0]) && zero(&z[1])) {
        return Err(refused(file, path, "not an affine point (z is not 1)"));
    }
    // blst's uncompressed form: x.c1, x.c0, y.c1, y.c0, each big-endian.
    let mut bytes = [0u8; 192];
    bytes[..48].copy_from_slice(&x[1]);
    bytes[48..96].copy_from_slice(&x[0]);
    bytes[96..144].copy_from_slice(&y[1]);
    bytes[144..].copy_from_slice(&y[0]);
    Option::from(G2Affine::from_uncompressed(&bytes)).ok_or_else(|| {
        refused(
            file,
            path,
            "not a point of G2 (off the curve or outside the subgroup)",
        )
    })
}

fn parse(file: &str, text: &str) -> Result<Value, ProveError> {
    serde_json::from_str(text).map_err(|e| ProveError::Json(format!("{file}: not JSON: {e}")))
}

/// The groth16 protocol on BLS12-381, as the file says.
fn groth16_bls12(file: &str, value: &Value) -> Result<(), ProveError> {
    let protocol = field(file, value, "protocol")?.as_str().unwrap_or_default();
    if protocol != "groth16" {
        return Err(refused(
            file,
            "protocol",
            &format!("{protocol:?}, not \"groth16\""),
        ));
    }
    let curve = field(file, value, "curve")?.as_str().unwrap_or_default();
    if curve != "bls12381" {
        return Err(refused(
            file,
            "curve",
            &format!("{curve:?}, not \"bls12381\" (a key or proof of another curve)"),
        ));
    }
    Ok(())
}

/// `verification_key.json` as `snarkjs zkey export verificationkey` writes it.
///
/// # Errors
/// [`ProveError::Json`] naming the field: not JSON, another protocol or curve, a number or
/// point that is not one, `nPublic` disagreeing with `IC`.
pub fn verification_key_from_json(text: &str) -> Result<VerificationKey, ProveError> {
    let file = "verification key";
    let v = parse(file, text)?;
    groth16_bls12(file, &v)?;
    let ic_values = field(file, &v, "IC")?
        .as_array()
        .ok_or_else(|| refused(file, "IC", "not an array"))?;
    let ic = ic_values
        .iter()
        .enumerate()
        .map(|(i, p)| g1(file, p, &format!("IC[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let n_public = field(file, &v, "nPublic")?
        .as_u64()
        .ok_or_else(|| refused(file, "nPublic", "not a whole number"))?;
    if n_public.checked_add(1) != Some(ic.len() as u64) {
        return Err(refused(
            file,
            "IC",
            &format!("{} points for nPublic {n_public}", ic.len()),
        ));
    }
    Ok(VerificationKey {
        alpha1: g1(file, field(file, &v, "vk_alpha_1")?, "vk_alpha_1")?,
        beta2: g2(file, field(file, &v, "vk_beta_2")?, "vk_beta_2")?,
        gamma2: g2(file, field(file, &v, "vk_gamma_2")?, "vk_gamma_2")?,
        delta2: g2(file, field(file, &v, "vk_delta_2")?, "vk_delta_2")?,
        ic,
    })
}

/// `proof.json` as `snarkjs groth16 prove` writes it.
///
/// # Errors
/// [`ProveError::Json`] naming the field.
pub fn proof_from_json(text: &str) -> Result<Proof, ProveError> {
    let file = "proof";
    let v = parse(file, text)?;
    groth16_bls12(file, &v)?;
    Ok(Proof {
        a: g1(file, field(file, &v, "pi_a")?, "pi_a")?,
        b: g2(file, field(file, &v, "pi_b")?, "pi_b")?,
        c: g1(file, field(file, &v, "pi_c")?, "pi_c")?,
    })
}

/// `public.json`: the public signals, decimal strings below r.
///
/// # Errors
/// [`ProveError::Json`] naming the entry.
pub fn public_from_json(text: &str) -> Result<Vec<Scalar>, ProveError> {
    let file = "public signals";
    let v = parse(file, text)?;
    let values = v
        .as_array()
        .ok_or_else(|| refused(file, "the file", "not an array"))?;
    values
        .iter()
        .enumerate()
        .map(|(i, value)| {
            let path = format!("[{i}]");
            let digits = decimal(file, value, &path)?;
            let bytes = BigUint::parse_bytes(digits.as_bytes(), 10)
                .ok_or_else(|| refused(file, &path, "not a decimal number"))?
                .to_bytes_le();
            if bytes.len() > 32 {
                return Err(refused(file, &path, "not below r"));
            }
            let mut le = [0u8; 32];
            le[..bytes.len()].copy_from_slice(&bytes);
            Option::from(Scalar::from_bytes_le(&le))
                .ok_or_else(|| refused(file, &path, "not below r"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prove::snarkjs::public_json;
    use group::{Curve, Group};

    #[test]
    fn our_json_reads_back() {
        let proof = Proof {
            a: (blstrs::G1Projective::generator() * Scalar::from(5u64)).to_affine(),
            b: (blstrs::G2Projective::generator() * Scalar::from(7u64)).to_affine(),
            c: G1Affine::identity(),
        };
        assert_eq!(proof_from_json(&proof.to_json()).unwrap(), proof);
        let public = vec![Scalar::from(32u64), -Scalar::from(1u64)];
        assert_eq!(public_from_json(&public_json(&public)).unwrap(), public);
    }

    #[test]
    fn bad_files_name_the_field() {
        let proof = Proof {
            a: G1Affine::generator(),
            b: G2Affine::generator(),
            c: G1Affine::generator(),
        };
        let json = proof.to_json();
        let cases = [
            ("not json", "proof: not JSON"),
            (
                &json.replace("bls12381", "bn128") as &str,
                "proof: curve: \"bn128\", not \"bls12381\"",
            ),
            (
                &json.replacen("\"1\"", "\"2\"", 1),
                "proof: pi_a: not an affine point",
            ),
            (
                &json.replacen("\"3685", "\"4685", 1),
                "proof: pi_a[0]: not below p",
            ),
            (
                &json.replacen("\"3685", "\"3686", 1),
                "proof: pi_a: not a point of G1",
            ),
            (
                &json.replacen("\"3685", "\"-3685", 1),
                "proof: pi_a[0]: not a decimal number in a string",
            ),
        ];
        for (text, want) in cases {
            let err = proof_from_json(text).unwrap_err().to_string();
            assert!(err.starts_with(want), "{err} for {want}");
        }
        let r = "52435875175126190479447740508185965837690552500527637822603658699938581184513";
        assert!(
            public_from_json(&format!("[\"{r}\"]"))
                .unwrap_err()
                .to_string()
                .ends_with("[0]: not below r")
        );
    }
}
