//! Phase 2 initialization: the group FFT, the accumulation and the whole object against their
//! serial references at every worker count, on gnark-written circuits.
//!
//! Fixtures (`tests/fixtures/`), written by gnark v0.15 through the harness:
//! ```sh
//! cd interop/gnark
//! go run . r1cs -constraints 60 -out ../../crates/ceremony/tests/fixtures/chain-60.r1cs
//! go run . r1cs -constraints 60 -commit -out ../../crates/ceremony/tests/fixtures/chain-60-commit.r1cs
//! ```
//! The circuit (see `interop/gnark/phase2.go`): 56 steps `acc = acc * S[i % 8] + (3 + i % 5) X`,
//! so the public `X` is in every constraint (a hot wire) with coefficients beyond 0, 1, -1, 2,
//! and internal wires land at every owner; the second commits to `S[0]`, `S[1]`, `X`.

use std::path::Path;

use blstrs::{G1Projective, G2Projective};
use group::prime::PrimeCurveAffine;
use lockstep_ceremony::fft::{self, Domain};
use lockstep_ceremony::phase1::{self, Srs};
use lockstep_ceremony::phase2::{self, Phase2};
use lockstep_ceremony::r1cs::R1cs;
use lockstep_shard::{Control, Pool};

use crate::{pools, secrets};

pub(crate) fn fixture_path(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub(crate) fn circuit(name: &str) -> R1cs {
    let bytes = std::fs::read(fixture_path(name)).unwrap();
    R1cs::read(&bytes[..]).unwrap()
}

/// An SRS of `2^power` with fixed secrets: every point distinct, so a wrong index shows.
pub(crate) fn srs(power: u32) -> Srs {
    let mut srs = Srs::one(power);
    phase1::update(
        &Pool::new(2).unwrap(),
        &Control::new(),
        &mut srs,
        &secrets(11),
    )
    .unwrap();
    srs
}

pub(crate) fn bytes(object: &Phase2) -> Vec<u8> {
    let mut out = Vec::new();
    object
        .write(&Pool::new(2).unwrap(), &Control::new(), &mut out)
        .unwrap();
    out
}

#[test]
fn gnark_s_circuits_read_with_their_counts() {
    let plain = circuit("chain-60.r1cs");
    assert_eq!(
        (
            plain.constraints(),
            plain.public(),
            plain.secret(),
            plain.internal()
        ),
        (57, 3, 8, 56)
    );
    assert!(plain.commitments().is_empty());
    assert_eq!(plain.domain_power(), 6);
    assert_eq!(plain.gnark_version(), [0, 15, 0]);
    let committed = circuit("chain-60-commit.r1cs");
    assert_eq!(committed.constraints(), 59);
    assert_eq!(committed.commitments().len(), 1);
    let c = &committed.commitments()[0];
    // S[0], S[1] are secret wires 3 and 4, then an internal wire gnark's builder commits to;
    // X (wire 1) is public.
    assert_eq!(c.private_committed, vec![3, 4, 67]);
    assert_eq!(c.public_and_commitment_committed, vec![1]);
    assert_eq!(c.nb_public_committed, 1);
}

#[test]
fn the_group_fft_equals_its_serial_reference_and_is_dense() {
    // 2^8: passes of 128 butterflies cross the 32-butterfly blocks, the first two levels run
    // as parallel passes.
    let srs = srs(8);
    let domain = Domain::new(8);
    let g1 = fft::lagrange_serial::<G1Projective>(&domain, &srs.g1_tau);
    let g2 = fft::lagrange_serial::<G2Projective>(&domain, &srs.g2_tau);
    let mut seen = std::collections::HashSet::new();
    for p in &g1 {
        assert!(!bool::from(p.is_identity()), "a zero Lagrange point");
        assert!(seen.insert(p.to_compressed()), "a repeated Lagrange point");
    }
    for (name, pool) in pools() {
        let control = Control::new();
        let got1 = fft::lagrange::<G1Projective>(&pool, &control, &domain, &srs.g1_tau).unwrap();
        assert!(
            got1 == g1,
            "G1 FFT differs from the serial reference on {name}"
        );
        let got2 = fft::lagrange::<G2Projective>(&pool, &control, &domain, &srs.g2_tau).unwrap();
        assert!(
            got2 == g2,
            "G2 FFT differs from the serial reference on {name}"
        );
    }
}

#[test]
fn initialize_equals_the_serial_reference_at_every_worker_count() {
    for name in ["chain-60.r1cs", "chain-60-commit.r1cs"] {
        let r1cs = circuit(name);
        let srs = srs(6);
        let (want, want_evals) = phase2::initialize_serial(&r1cs, &srs).unwrap();
        let want_bytes = bytes(&want);
        // Every wire's point differs from the others' (a wrong owner's sum would show).
        let mut seen = std::collections::HashSet::new();
        for p in want_evals.a.iter().filter(|p| !bool::from(p.is_identity())) {
            assert!(seen.insert(p.to_compressed()), "{name}: a repeated A point");
        }
        for (pool_name, pool) in pools() {
            for batch in [phase2::BATCH_CONSTRAINTS, 7] {
                let (got, evals) =
                    phase2::initialize_batched(&pool, &Control::new(), &r1cs, &srs, batch).unwrap();
                assert!(
                    bytes(&got) == want_bytes,
                    "{name}: the phase 2 object differs on {pool_name}, batches of {batch}"
                );
                assert!(
                    evals == want_evals,
                    "{name}: the evaluations differ on {pool_name}, batches of {batch}"
                );
            }
        }
    }
}

#[test]
fn the_object_reads_back_as_written() {
    let r1cs = circuit("chain-60-commit.r1cs");
    let (object, _) = phase2::initialize_serial(&r1cs, &srs(6)).unwrap();
    let written = bytes(&object);
    for (name, pool) in pools() {
        let (read, hash) = Phase2::read(
            &pool,
            &Control::new(),
            &written[..],
            &lockstep_ceremony::Limits::default(),
        )
        .unwrap();
        assert!(read == object, "read back differs on {name}");
        let digest: [u8; 32] = <sha2::Sha256 as sha2::Digest>::digest(&written).into();
        assert_eq!(hash, digest);
    }
}
