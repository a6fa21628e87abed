//! Parallel steps against their serial references, at every worker count.

use blstrs::{G1Affine, G2Affine};
use group::{Curve, Group};
use lockstep_ceremony::Limits;
use lockstep_ceremony::phase1::{self, Phase1};
use lockstep_ceremony::reference;
use lockstep_shard::Control;
use sha2::{Digest, Sha256};

use crate::{fixture, pools, read, secrets, write};

#[test]
fn the_fixture_has_a_different_point_at_every_position() {
    let (object, _) = fixture();
    let mut seen = std::collections::HashSet::new();
    let srs = &object.srs;
    for p in srs.g1_tau.iter().chain(&srs.alpha_tau).chain(&srs.beta_tau) {
        assert!(
            seen.insert(p.to_compressed().to_vec()),
            "a repeated G1 point"
        );
    }
    for p in &srs.g2_tau {
        assert!(
            seen.insert(p.to_compressed().to_vec()),
            "a repeated G2 point"
        );
    }
    assert!(srs.g1_tau.len() - 1 > lockstep_ceremony::codec::CHUNK_POINTS);
}

#[test]
fn update_equals_the_serial_reference() {
    // Power 11 keeps the serial reference (one inversion per point) quick; the input's points
    // are all distinct, so reading a wrong index would show.
    let pool = lockstep_shard::Pool::new(2).unwrap();
    let mut start = phase1::Srs::one(11).unwrap();
    phase1::update(&pool, &Control::new(), &mut start, &secrets(7)).unwrap();
    let mut expected = start.clone();
    phase1::update_serial(&mut expected, &secrets(8));
    for (name, pool) in pools() {
        let mut got = start.clone();
        phase1::update(&pool, &Control::new(), &mut got, &secrets(8)).unwrap();
        assert!(
            got == expected,
            "update differs from the serial reference on {name}"
        );
    }
}

#[test]
fn contribute_and_seal_equal_their_serial_references() {
    let pool = lockstep_shard::Pool::new(2).unwrap();
    let initial = Phase1::initial(9).unwrap();
    let hash = Sha256::digest(reference::phase1_bytes(&initial)).into();
    let expected = phase1::contribute_serial(initial.clone(), &hash, &secrets(3));
    let expected_bytes = reference::phase1_bytes(&expected);
    let next_hash: [u8; 32] = Sha256::digest(&expected_bytes).into();
    let beacon = b"beacon";
    let mut sealed_expected = expected.srs.clone();
    phase1::update_serial(
        &mut sealed_expected,
        &phase1::Secrets::beacon(&next_hash, beacon),
    );
    for (name, pool) in pools() {
        let got = phase1::contribute(&pool, &Control::new(), initial.clone(), &hash, &secrets(3))
            .unwrap();
        let (bytes, got_hash) = write(&pool, &got);
        assert!(
            bytes == expected_bytes,
            "contribution bytes differ on {name}"
        );
        assert_eq!(got_hash, next_hash);
        let sealed = phase1::seal(&pool, &Control::new(), got, &got_hash, beacon).unwrap();
        assert!(sealed == sealed_expected, "seal differs on {name}");
    }
    drop(pool);
}

#[test]
fn encode_and_decode_equal_their_serial_references() {
    let (object, expected) = fixture();
    let expected_hash: [u8; 32] = Sha256::digest(expected).into();
    for (name, pool) in pools() {
        let (bytes, hash) = write(&pool, object);
        assert!(&bytes == expected, "encoded bytes differ on {name}");
        assert_eq!(hash, expected_hash, "{name}");
        let (decoded, hash) = read(&pool, expected).unwrap();
        assert!(&decoded == object, "decoded object differs on {name}");
        assert_eq!(hash, expected_hash, "{name}");
    }
    let decoded = reference::phase1_from_bytes(expected, &Limits::default()).unwrap();
    assert!(&decoded == object);
}

#[test]
fn sealed_srs_round_trips_on_every_pool() {
    let (object, _) = fixture();
    let expected = reference::srs_bytes(&object.srs);
    assert_eq!(
        expected.len() as u64,
        phase1::srs_len(object.srs.n() as u64)
    );
    for (name, pool) in pools() {
        let mut bytes = Vec::new();
        object
            .srs
            .write(&pool, &Control::new(), &mut bytes)
            .unwrap();
        assert!(bytes == expected, "SRS bytes differ on {name}");
        let (srs, _) =
            phase1::Srs::read(&pool, &Control::new(), &bytes[..], &Limits::default()).unwrap();
        assert!(srs == object.srs, "{name}");
    }
}

#[test]
fn a_g2_vector_crossing_chunks_round_trips() {
    // 5,000 distinct G2 points (`G2 Tau` of a power-13 file would cost a slow fixture).
    let mut points = Vec::with_capacity(5000);
    let mut p = blstrs::G2Projective::generator();
    for _ in 0..5000 {
        points.push(p.to_affine());
        p += blstrs::G2Projective::generator();
    }
    let mut srs = phase1::Srs::one(1).unwrap();
    srs.g2_tau = std::iter::once(G2Affine::generator_point())
        .chain(points)
        .collect();
    // Keep the lengths consistent with N = 2^13 for the other vectors.
    let n = 1usize << 13;
    srs.g2_tau.resize(n, G2Affine::generator_point());
    srs.g1_tau = vec![G1Affine::generator_point(); 2 * n - 1];
    srs.alpha_tau = vec![G1Affine::generator_point(); n];
    srs.beta_tau = vec![G1Affine::generator_point(); n];
    let expected = reference::srs_bytes(&srs);
    for (name, pool) in pools() {
        let mut bytes = Vec::new();
        srs.write(&pool, &Control::new(), &mut bytes).unwrap();
        assert!(bytes == expected, "{name}");
        let (back, _) =
            phase1::Srs::read(&pool, &Control::new(), &bytes[..], &Limits::default()).unwrap();
        assert!(back == srs, "{name}");
    }
}

trait Generator {
    fn generator_point() -> Self;
}

impl Generator for G1Affine {
    fn generator_point() -> Self {
        <G1Affine as group::prime::PrimeCurveAffine>::generator()
    }
}

impl Generator for G2Affine {
    fn generator_point() -> Self {
        <G2Affine as group::prime::PrimeCurveAffine>::generator()
    }
}

#[test]
fn ptau_bytes_and_points_are_the_same_on_every_pool() {
    let (object, _) = fixture();
    // The serial loop: a current-thread pool runs every block inline, in order.
    let mut expected = Vec::new();
    lockstep_ceremony::ptau::write(
        &lockstep_shard::Pool::current_thread(),
        &Control::new(),
        &object.srs,
        &mut expected,
    )
    .unwrap();
    for (name, pool) in pools() {
        let mut bytes = Vec::new();
        lockstep_ceremony::ptau::write(&pool, &Control::new(), &object.srs, &mut bytes).unwrap();
        assert!(bytes == expected, "ptau bytes differ on {name}");
        let read = lockstep_ceremony::ptau::read(
            &pool,
            &Control::new(),
            std::io::Cursor::new(&bytes),
            &Limits::default(),
        )
        .unwrap();
        assert!(read.srs == object.srs, "ptau points differ on {name}");
    }
}
