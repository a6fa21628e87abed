//! `snarkjs zkey export verificationkey` (`zkey_export_verificationkey.js`): the verification
//! key as snarkjs's JSON, byte for byte.
//!
//! Keys in snarkjs's order: `protocol`, `curve` (`bls12381`), `nPublic` (a number), then
//! `vk_alpha_1`, `vk_beta_2`, `vk_gamma_2`, `vk_delta_2`, `vk_alphabeta_12` (`e(alpha_1,
//! beta_2)`, twelve coefficients nested `[[[c0.c0.c0, c0.c0.c1], ...], [...]]`) and `IC`.
//! Numbers are decimal strings of standard-form coordinates; a G1 point is `[x, y, "1"]`, a G2
//! point `[[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]`, infinity `["0", "1", "0"]` (G2: `[["0",
//! "0"], ["1", "0"], ["0", "0"]]`). Written as bfj writes it with one space of indentation
//! (`serde_json`'s pretty form with a one-space indent is the same), no final newline.

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;
use serde::Serialize;

use super::Zkey;
use crate::curve;

/// A standard-form base-field element from Montgomery limbs, in decimal.
fn decimal(montgomery: [u64; 6]) -> String {
    let limbs = curve::fp_standard(montgomery);
    let bytes: Vec<u8> = limbs.iter().flat_map(|l| l.to_le_bytes()).collect();
    num_bigint::BigUint::from_bytes_le(&bytes).to_str_radix(10)
}

/// A G1 point as snarkjs's JSON array.
pub(crate) fn g1_json(p: &G1Affine) -> [String; 3] {
    if bool::from(p.is_identity()) {
        return ["0".into(), "1".into(), "0".into()];
    }
    let raw: &blst::blst_p1_affine = p.as_ref();
    [decimal(raw.x.l), decimal(raw.y.l), "1".into()]
}

/// A G2 point as snarkjs's JSON array.
pub(crate) fn g2_json(p: &G2Affine) -> [[String; 2]; 3] {
    if bool::from(p.is_identity()) {
        return [
            ["0".into(), "0".into()],
            ["1".into(), "0".into()],
            ["0".into(), "0".into()],
        ];
    }
    let raw: &blst::blst_p2_affine = p.as_ref();
    [
        [decimal(raw.x.fp[0].l), decimal(raw.x.fp[1].l)],
        [decimal(raw.y.fp[0].l), decimal(raw.y.fp[1].l)],
        ["1".into(), "0".into()],
    ]
}

#[derive(Serialize)]
struct VerificationKey {
    protocol: &'static str,
    curve: &'static str,
    #[serde(rename = "nPublic")]
    n_public: u32,
    vk_alpha_1: [String; 3],
    vk_beta_2: [[String; 2]; 3],
    vk_gamma_2: [[String; 2]; 3],
    vk_delta_2: [[String; 2]; 3],
    vk_alphabeta_12: [[[String; 2]; 3]; 2],
    #[serde(rename = "IC")]
    ic: Vec<[String; 3]>,
}

/// Writes `value` as bfj does with `{space: 1}`: serde_json's pretty form indented by one space.
pub(crate) fn to_snarkjs_json<T: Serialize>(value: &T) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    value
        .serialize(&mut serializer)
        .expect("invariant: strings and numbers always serialize");
    String::from_utf8(out).expect("invariant: serde_json writes UTF-8")
}

/// The verification key of `key` as snarkjs writes it.
///
/// # Panics
/// Never: its values are strings and a number.
pub fn verification_key_json(key: &Zkey) -> String {
    let h = &key.header;
    let f = curve::pairing_coefficients(&h.alpha1, &h.beta2);
    let d = |i: usize| decimal_standard(f[i]);
    let fp2 = |i: usize| [d(i), d(i + 1)];
    let vk = VerificationKey {
        protocol: "groth16",
        curve: "bls12381",
        n_public: h.n_public,
        vk_alpha_1: g1_json(&h.alpha1),
        vk_beta_2: g2_json(&h.beta2),
        vk_gamma_2: g2_json(&h.gamma2),
        vk_delta_2: g2_json(&h.delta2),
        vk_alphabeta_12: [[fp2(0), fp2(2), fp2(4)], [fp2(6), fp2(8), fp2(10)]],
        ic: key.ic.iter().map(g1_json).collect(),
    };
    to_snarkjs_json(&vk)
}

/// A standard-form element's limbs in decimal.
fn decimal_standard(limbs: [u64; 6]) -> String {
    let bytes: Vec<u8> = limbs.iter().flat_map(|l| l.to_le_bytes()).collect();
    num_bigint::BigUint::from_bytes_le(&bytes).to_str_radix(10)
}
