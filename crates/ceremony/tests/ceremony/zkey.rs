//! snarkjs's phase 2 in the engine: `ptau::prepare`, `zkey::new`, `beacon` and the key's codec
//! give the same bytes at every worker count and as their serial references, on random
//! circuits (repeated wires, zero and `r - 1` coefficients, empty combinations, unused wires);
//! `verify` accepts a chain and names what it refuses.

use std::io::Cursor;

use blstrs::Scalar;
use ff::Field;
use lockstep_ceremony::circom::CircomR1cs;
use lockstep_ceremony::zkey::{self, NEW_ORDER, ORDER, Zkey, ZkeyFile, ZkeyVerifyError};
use lockstep_ceremony::{Limits, ptau};
use lockstep_shard::{Control, Pool};
use proptest::prelude::*;

use crate::phase2::srs;
use crate::pools;

/// The `.ptau` of our SRS at `power`, prepared.
fn powers(power: u32) -> (Vec<u8>, Vec<u8>) {
    let srs = srs(power);
    let mut plain = Vec::new();
    ptau::write(&Pool::new(2).unwrap(), &Control::new(), &srs, &mut plain).unwrap();
    let mut prepared = Vec::new();
    ptau::prepare(
        &Pool::new(2).unwrap(),
        &Control::new(),
        Cursor::new(&plain),
        &mut prepared,
        &Limits::default(),
    )
    .unwrap();
    (plain, prepared)
}

/// A circom `.r1cs` (sections in file order 2, 1, 3) of `constraints`.
fn r1cs_file(
    wires: u32,
    (outputs, inputs): (u32, u32),
    constraints: &[[Vec<(u32, Scalar)>; 3]],
) -> Vec<u8> {
    let mut header = 32u32.to_le_bytes().to_vec();
    // r: r - 1 ends in a zero byte.
    let mut r = (-Scalar::ONE).to_bytes_le();
    r[0] += 1;
    header.extend(r);
    for v in [wires, outputs, inputs, 0] {
        header.extend(v.to_le_bytes());
    }
    header.extend(u64::from(wires).to_le_bytes());
    header.extend((constraints.len() as u32).to_le_bytes());
    let mut body = Vec::new();
    for c in constraints {
        for lc in c {
            body.extend((lc.len() as u32).to_le_bytes());
            for (wire, coeff) in lc {
                body.extend(wire.to_le_bytes());
                body.extend(coeff.to_bytes_le());
            }
        }
    }
    let labels = vec![0u8; 8 * wires as usize];
    let mut out = b"r1cs".to_vec();
    out.extend(1u32.to_le_bytes());
    out.extend(3u32.to_le_bytes());
    for (id, s) in [(2u32, &body), (1, &header), (3, &labels)] {
        out.extend(id.to_le_bytes());
        out.extend((s.len() as u64).to_le_bytes());
        out.extend(s);
    }
    out
}

fn key_bytes(key: &Zkey, order: &[u32; 10]) -> Vec<u8> {
    let mut out = Vec::new();
    key.write(&Pool::new(2).unwrap(), &Control::new(), order, &mut out)
        .unwrap();
    out
}

/// Coefficients as circuits have them: 1, -1, small, zero, large.
fn coefficient() -> impl Strategy<Value = Scalar> + Clone {
    prop_oneof![
        Just(Scalar::ONE),
        Just(-Scalar::ONE),
        (2u64..1000).prop_map(Scalar::from),
        (2u64..1000).prop_map(|v| -Scalar::from(v)),
        Just(Scalar::ZERO),
        any::<u64>().prop_map(|v| Scalar::from(v).pow_vartime([5])),
    ]
}

/// A circuit: wires, (outputs, public inputs), constraints.
type Circuit = (u32, (u32, u32), Vec<[Vec<(u32, Scalar)>; 3]>);

fn circuit() -> impl Strategy<Value = Circuit> {
    (6u32..40, 0u32..3, 0u32..3).prop_flat_map(|(wires, outputs, inputs)| {
        let term = (0..wires, coefficient());
        let lc = prop::collection::vec(term, 0..5);
        let constraint = [lc.clone(), lc.clone(), lc];
        (
            Just(wires),
            Just((outputs, inputs)),
            prop::collection::vec(constraint, 1..20),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn zkey_new_is_its_serial_reference_on_every_pool_from_either_ptau(
        (wires, public, constraints) in circuit()
    ) {
        let (plain, prepared) = powers(6);
        let r1cs = CircomR1cs::read(Cursor::new(r1cs_file(wires, public, &constraints))).unwrap();
        let reference = zkey::new_serial(&r1cs, Cursor::new(&plain), &Limits::default()).unwrap();
        let expected = key_bytes(&reference, &NEW_ORDER);
        for (name, pool) in pools() {
            for input in [&plain, &prepared] {
                let key = zkey::new(&pool, &Control::new(), &r1cs, Cursor::new(input), &Limits::default()).unwrap();
                prop_assert!(key_bytes(&key, &NEW_ORDER) == expected, "{}", name);
            }
        }
    }
}

#[test]
fn prepare_beacon_and_the_codec_are_the_same_bytes_on_every_pool() {
    let (plain, prepared) = powers(5);
    let constraints = vec![
        [
            vec![(1, Scalar::from(3)), (2, -Scalar::ONE)],
            vec![(2, Scalar::ONE)],
            vec![(3, Scalar::ONE)],
        ];
        9
    ];
    let r1cs = CircomR1cs::read(Cursor::new(r1cs_file(6, (1, 1), &constraints))).unwrap();
    let initial = zkey::new_serial(&r1cs, Cursor::new(&plain), &Limits::default()).unwrap();
    let mut beacons = Vec::new();
    for (name, pool) in pools() {
        let mut out = Vec::new();
        ptau::prepare(
            &pool,
            &Control::new(),
            Cursor::new(&plain),
            &mut out,
            &Limits::default(),
        )
        .unwrap();
        assert!(out == prepared, "prepare on {name}");
        let (key, hash) = zkey::beacon(
            &pool,
            &Control::new(),
            initial.clone(),
            Some("b"),
            b"beacon",
            10,
        )
        .unwrap();
        let bytes = key_bytes(&key, &ORDER);
        let read = Zkey::read(
            &pool,
            &Control::new(),
            Cursor::new(&bytes),
            &Limits::default(),
        )
        .unwrap();
        assert!(read == key, "read back on {name}");
        beacons.push((bytes, hash));
    }
    assert!(beacons.windows(2).all(|w| w[0] == w[1]));
    // The chain verifies; a key made on other powers does not.
    let (key, _) = zkey::contribute(
        &Pool::new(3).unwrap(),
        &Control::new(),
        initial.clone(),
        None,
        b"e",
    )
    .unwrap();
    let verified = zkey::verify(
        &Pool::new(2).unwrap(),
        &Control::new(),
        &r1cs,
        Cursor::new(&prepared),
        &key,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(verified.contributions.len(), 1);
    // One contribution checked against its predecessor, as a coordinator checks an upload.
    let pool = Pool::new(2).unwrap();
    let one = zkey::verify_contribution(&pool, &Control::new(), &initial, &key).unwrap();
    assert_eq!(one.hash, zkey::contribution_hash(&key.contributions[0]));
    let (next, _) = zkey::contribute(&pool, &Control::new(), key.clone(), Some("n"), b"f").unwrap();
    zkey::verify_contribution(&pool, &Control::new(), &key, &next).unwrap();
    // Made on another key (the initial one), or with a point of H swapped: refused, named.
    let (sibling, _) =
        zkey::contribute(&pool, &Control::new(), initial.clone(), None, b"g").unwrap();
    let refused = zkey::verify_contribution(&pool, &Control::new(), &key, &sibling).unwrap_err();
    assert!(
        refused.to_string().contains("records 1 contributions"),
        "{refused}"
    );
    let mut swapped = next.clone();
    swapped.h.swap(1, 2);
    let refused = zkey::verify_contribution(&pool, &Control::new(), &key, &swapped).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "section 9 (H): point 1 is not the previous key's divided by delta"
    );
    let (other, _) = powers_other(5);
    let refused = zkey::verify(
        &Pool::new(2).unwrap(),
        &Control::new(),
        &r1cs,
        Cursor::new(&other),
        &key,
        &Limits::default(),
    )
    .unwrap_err();
    assert!(matches!(refused, ZkeyVerifyError::Initial(_)), "{refused}");
}

/// A point of E(Fq) outside the prime-order subgroup.
fn off_subgroup_point() -> blstrs::G1Affine {
    (1u8..)
        .find_map(|x| {
            let mut bytes = [0u8; 48];
            bytes[0] = 0x80;
            bytes[47] = x;
            Option::<blstrs::G1Affine>::from(blstrs::G1Affine::from_compressed_unchecked(&bytes))
                .filter(|p| !bool::from(p.is_torsion_free()))
        })
        .unwrap()
}

#[test]
fn a_point_outside_the_subgroup_is_refused_by_reading_and_by_verify_file() {
    let (plain, prepared) = powers(5);
    let constraints = vec![
        [
            vec![(1, Scalar::from(3))],
            vec![(2, Scalar::ONE)],
            vec![(3, Scalar::ONE)]
        ];
        4
    ];
    let r1cs = CircomR1cs::read(Cursor::new(r1cs_file(6, (1, 1), &constraints))).unwrap();
    let mut key = zkey::new_serial(&r1cs, Cursor::new(&plain), &Limits::default()).unwrap();
    let pool = Pool::new(2).unwrap();
    // Sound as it is, through verify_file.
    let bytes = key_bytes(&key, &ORDER);
    zkey::verify_file(
        &pool,
        &Control::new(),
        &r1cs,
        Cursor::new(&prepared),
        Cursor::new(&bytes),
        &Limits::default(),
    )
    .unwrap();
    // A's wire 2, on the curve, outside the subgroup: a full read refuses it; verify_file reads
    // A on the curve only and refuses it as not the initial key's point.
    key.a[2] = off_subgroup_point();
    let bytes = key_bytes(&key, &ORDER);
    let read = Zkey::read(
        &pool,
        &Control::new(),
        Cursor::new(&bytes),
        &Limits::default(),
    )
    .unwrap_err();
    assert!(read.to_string().contains("A[2]"), "{read}");
    let refused = zkey::verify_file(
        &pool,
        &Control::new(),
        &r1cs,
        Cursor::new(&prepared),
        Cursor::new(&bytes),
        &Limits::default(),
    )
    .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "section 5 (A): point 2 is not the initial key's"
    );
    // In H, which verify_file reads in full: refused at reading.
    let mut key = zkey::new_serial(&r1cs, Cursor::new(&plain), &Limits::default()).unwrap();
    key.h[1] = off_subgroup_point();
    let bytes = key_bytes(&key, &ORDER);
    let refused = zkey::verify_file(
        &pool,
        &Control::new(),
        &r1cs,
        Cursor::new(&prepared),
        Cursor::new(&bytes),
        &Limits::default(),
    )
    .unwrap_err();
    assert!(
        matches!(refused, ZkeyVerifyError::Key(_)) && refused.to_string().contains("H[1]"),
        "{refused}"
    );
}

#[test]
fn a_prover_reads_a_key_in_full_by_default_and_a_trusted_key_s_bad_point_refuses_the_proof() {
    use lockstep_ceremony::KeyChecks;
    use lockstep_ceremony::circom::Witness;
    use lockstep_ceremony::prove::{Blinding, ProveError, snarkjs};
    let (plain, _) = powers(5);
    let constraints = vec![
        [
            vec![(1, Scalar::from(3))],
            vec![(2, Scalar::ONE)],
            vec![(3, Scalar::ONE)]
        ];
        4
    ];
    let r1cs = CircomR1cs::read(Cursor::new(r1cs_file(6, (1, 1), &constraints))).unwrap();
    let mut key = zkey::new_serial(&r1cs, Cursor::new(&plain), &Limits::default()).unwrap();
    // A on wire 2 (5 in the witness below: no multiple of 5 clears the cofactor's part).
    key.a[2] = off_subgroup_point();
    let bytes = key_bytes(&key, &ORDER);
    let pool = Pool::new(2).unwrap();
    let read = |checks| {
        Zkey::read_for_proving(
            &pool,
            &Control::new(),
            Cursor::new(&bytes),
            &Limits::default(),
            checks,
        )
    };
    let named = read(KeyChecks::Subgroups).unwrap_err();
    assert!(named.to_string().contains("A[2]"), "{named}");
    let trusted = read(KeyChecks::Curve).unwrap();
    // 3 w1 w2 = w3 with w1 = 2, w2 = 5: the witness satisfies the circuit.
    let witness = Witness::from_values(
        [1u64, 2, 5, 30, 0, 0]
            .into_iter()
            .map(Scalar::from)
            .collect(),
    );
    let refused = snarkjs::prove(
        &pool,
        &Control::new(),
        &trusted,
        &witness,
        &Blinding::random(),
    )
    .unwrap_err();
    assert!(matches!(refused, ProveError::KeyPoints), "{refused}");
    // Read by sections: the point named in its chunk (of one point, by its place in A), or,
    // trusted, the proof refused.
    let open = |checks| {
        ZkeyFile::open(
            &pool,
            &Control::new(),
            Cursor::new(&bytes),
            &Limits::default(),
            checks,
        )
        .unwrap()
    };
    let named = snarkjs::prove_file_unchecked(
        &pool,
        &Control::new(),
        (&open(KeyChecks::Subgroups), 1),
        &witness,
        &Blinding::random(),
    )
    .unwrap_err();
    assert!(named.to_string().contains("A[2]"), "{named}");
    let refused = snarkjs::prove_file(
        &pool,
        &Control::new(),
        &open(KeyChecks::Curve),
        &witness,
        &Blinding::random(),
    )
    .unwrap_err();
    assert!(matches!(refused, ProveError::KeyPoints), "{refused}");
}

/// Powers of another tau.
fn powers_other(power: u32) -> (Vec<u8>, ()) {
    let mut srs = lockstep_ceremony::phase1::Srs::one(power).unwrap();
    lockstep_ceremony::phase1::update(
        &Pool::new(2).unwrap(),
        &Control::new(),
        &mut srs,
        &crate::secrets(99),
    )
    .unwrap();
    let mut plain = Vec::new();
    ptau::write(&Pool::new(2).unwrap(), &Control::new(), &srs, &mut plain).unwrap();
    (plain, ())
}
