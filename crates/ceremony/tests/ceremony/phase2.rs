//! Phase 2 initialization: the group FFT, the accumulation and the whole object against their
//! serial references at every worker count, on gnark-written circuits.
//!
//! Fixtures (`tests/fixtures/`), written by gnark v0.15 through the harness:
//! ```sh
//! cd interop/gnark
//! go run . r1cs -constraints 60 -out ../../crates/ceremony/tests/fixtures/chain-60.r1cs
//! go run . r1cs -constraints 60 -commit -out ../../crates/ceremony/tests/fixtures/chain-60-commit.r1cs
//! go run . r1cs -constraints 60 -commit -variant -out ../../crates/ceremony/tests/fixtures/chain-60-commit-variant.r1cs
//! ```
//! The circuit (see `interop/gnark/phase2.go`): 56 steps `acc = acc * S[i % 8] + c X` (minus
//! `S[(i + 1) % 8]` on odd steps, `c` cycling through 3, 2, -1, -2, 5, 1, 7), so the public `X`
//! is in every constraint (a hot wire) with every kind of coefficient, and internal wires land
//! at every owner; the second commits to `S[0]`, `S[1]`, `X`. The 1000-constraint one:
//! `go run . r1cs -constraints 1000 -commit [-variant] -out ../../crates/ceremony/tests/fixtures/chain-1000-commit[-variant].r1cs`
//! (the variant: twice the subtraction on odd steps, a circuit of the same shape).

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
    let mut srs = Srs::one(power).unwrap();
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
    // Every kind of coefficient gnark writes is in the fixture: the reserved ids phase 2 adds
    // (1, 2, -1) and ones it multiplies (-2 and larger).
    use lockstep_ceremony::r1cs::Coefficient;
    let mut kinds = std::collections::BTreeSet::new();
    for index in 0..plain.constraints() {
        let c = plain.constraint(index);
        for terms in [c.l, c.r, c.o] {
            for term in terms.iter() {
                kinds.insert(match plain.coefficient(term.coeff) {
                    Coefficient::Zero => "0",
                    Coefficient::One => "1",
                    Coefficient::Two => "2",
                    Coefficient::MinusOne => "-1",
                    Coefficient::Other(s) if *s == -blstrs::Scalar::from(2u64) => "-2",
                    Coefficient::Other(_) => "other",
                });
            }
        }
    }
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        vec!["-1", "-2", "1", "2", "other"]
    );
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
            let object = phase2::initialize_object(&pool, &Control::new(), &r1cs, &srs).unwrap();
            assert!(
                bytes(&object) == want_bytes,
                "{name}: the object alone differs on {pool_name}"
            );
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

fn secrets2(seed: u64, commitments: usize) -> phase2::Secrets {
    use blstrs::Scalar;
    phase2::Secrets::from_scalars(
        Scalar::from(0xde17a_u64 + seed) * Scalar::from(0x1234_5678_9abc_u64),
        (0..commitments as u64)
            .map(|i| Scalar::from(0x5167_u64 * (seed + i + 2)))
            .collect(),
    )
}

fn hash(bytes: &[u8]) -> [u8; 32] {
    <sha2::Sha256 as sha2::Digest>::digest(bytes).into()
}

/// The initial object of the committed circuit over a 2^6 phase 1, and one contribution.
fn chain() -> (Phase2, [u8; 32], Phase2, [u8; 32]) {
    let (initial, _) =
        phase2::initialize_serial(&circuit("chain-60-commit.r1cs"), &srs(6)).unwrap();
    let h0 = hash(&bytes(&initial));
    let next = phase2::contribute_serial(initial.clone(), &h0, &secrets2(1, 1));
    let h1 = hash(&bytes(&next));
    (initial, h0, next, h1)
}

#[test]
fn contribute_equals_its_serial_reference() {
    let (_, _, first, h1) = chain();
    let want = bytes(&phase2::contribute_serial(
        first.clone(),
        &h1,
        &secrets2(2, 1),
    ));
    for (name, pool) in pools() {
        let got = phase2::contribute(&pool, &Control::new(), first.clone(), &h1, &secrets2(2, 1))
            .unwrap();
        assert!(
            bytes(&got) == want,
            "contribute differs from the serial reference on {name}"
        );
    }
}

#[test]
fn verify_accepts_a_contribution_and_names_what_is_wrong() {
    use lockstep_ceremony::phase2::{Secret, VerifyError};
    let (initial, h0, next, h1) = chain();
    let pool = Pool::new(3).unwrap();
    let verify = |prev: &Phase2, h: &[u8; 32], next: &Phase2| {
        phase2::verify_contribution(&pool, &Control::new(), prev, h, next)
    };
    verify(&initial, &h0, &next).unwrap();
    // A second contribution made on the initial object, not on `next`.
    let sideways = phase2::contribute_serial(initial.clone(), &h0, &secrets2(5, 1));
    assert!(matches!(
        verify(&next, &h1, &sideways),
        Err(VerifyError::ChallengeMismatch { .. })
    ));
    let mut missing = next.clone();
    missing.challenge = None;
    assert!(matches!(
        verify(&initial, &h0, &missing),
        Err(VerifyError::MissingChallenge)
    ));
    let located = |result: Result<(), VerifyError>| match result {
        Err(VerifyError::Update {
            secret,
            location: Some(location),
        }) => (secret, location.to_string()),
        other => panic!("expected a located update error, got {other:?}"),
    };
    let mut bad = next.clone();
    bad.z[17] = bad.z[16];
    assert_eq!(
        located(verify(&initial, &h0, &bad)),
        (Secret::Delta, "Z[17]".to_owned())
    );
    let mut bad = next.clone();
    bad.pkk[3] = bad.pkk[4];
    assert_eq!(
        located(verify(&initial, &h0, &bad)),
        (Secret::Delta, "PKK[3]".to_owned())
    );
    let mut bad = next.clone();
    bad.sigma_ckk[0][1] = bad.sigma_ckk[0][0];
    assert_eq!(
        located(verify(&initial, &h0, &bad)),
        (Secret::Sigma(0), "SigmaCKK[1]".to_owned())
    );
    let mut bad = next.clone();
    bad.delta_g2 = initial.delta_g2;
    assert_eq!(
        located(verify(&initial, &h0, &bad)),
        (Secret::Delta, "[delta]_2".to_owned())
    );
    // A delta proof of another secret: its proof of knowledge holds, its moves do not.
    let mut bad = next.clone();
    bad.delta_proof = sideways.delta_proof;
    assert!(matches!(
        verify(&initial, &h0, &bad),
        Err(VerifyError::Update {
            secret: Secret::Delta,
            ..
        })
    ));
    // A proof whose proof of knowledge is another's.
    let mut bad = next.clone();
    bad.delta_proof.pok = sideways.delta_proof.pok;
    assert!(matches!(
        verify(&initial, &h0, &bad),
        Err(VerifyError::ProofOfKnowledge {
            secret: Secret::Delta
        })
    ));
    let mut bad = next.clone();
    bad.delta_proof.commitment = blstrs::G1Affine::identity();
    assert!(matches!(
        verify(&initial, &h0, &bad),
        Err(VerifyError::ZeroContribution {
            secret: Secret::Delta
        })
    ));
    let mut bad = next.clone();
    bad.pkk.pop();
    assert!(matches!(
        verify(&initial, &h0, &bad),
        Err(VerifyError::Shape(_))
    ));
}

#[test]
fn bad_phase2_files_are_clear_errors() {
    use lockstep_ceremony::CodecError;
    let (_, _, next, _) = chain();
    let good = bytes(&next);
    let pool = Pool::new(2).unwrap();
    let read = |b: &[u8]| {
        Phase2::read(
            &pool,
            &Control::new(),
            b,
            &lockstep_ceremony::Limits::default(),
        )
    };
    read(&good).unwrap();
    let mut trailing = good.clone();
    trailing.push(0);
    assert!(matches!(
        read(&trailing),
        Err(CodecError::TrailingBytes { .. })
    ));
    for cut in [0, 1, 2, 30, 51, 55, good.len() / 2, good.len() - 1] {
        assert!(
            matches!(read(&good[..cut]), Err(CodecError::Truncated { .. })),
            "cut at {cut}"
        );
    }
    // Z's count (after k, [delta]_1, PKK) is not N - 1 for a power of two N.
    let z_at = 2 + 48 + 4 + 48 * next.pkk.len();
    let mut bad_z = good.clone();
    bad_z[z_at..z_at + 4].copy_from_slice(&4u32.to_be_bytes());
    assert!(matches!(
        read(&bad_z),
        Err(CodecError::DomainSize { n: 5, .. })
    ));
    // A point off the curve: the first byte of PKK[2]'s x flipped in its low bits.
    let mut off = good.clone();
    off[2 + 48 + 4 + 48 * 2 + 47] ^= 1;
    let message = read(&off).unwrap_err().to_string();
    assert!(message.starts_with("PKK[2] at byte"), "{message}");
}

#[test]
fn a_phase1_smaller_than_the_circuit_is_refused() {
    let error = phase2::initialize(
        &Pool::new(2).unwrap(),
        &Control::new(),
        &circuit("chain-60.r1cs"),
        &srs(5),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the circuit has 57 constraints, more than the phase 1 domain N = 32 holds"
    );
}

#[test]
fn bad_r1cs_files_are_clear_errors_and_never_panics() {
    use lockstep_ceremony::r1cs::R1csError;
    let good = std::fs::read(fixture_path("chain-60-commit.r1cs")).unwrap();
    // Every prefix is an error (truncated, or a section cut), never a panic.
    for cut in 0..good.len() {
        assert!(
            R1cs::read(&good[..cut]).is_err(),
            "a prefix of {cut} bytes was accepted"
        );
    }
    let mut trailing = good.clone();
    trailing.push(0);
    assert!(matches!(
        R1cs::read(&trailing[..]),
        Err(R1csError::TrailingBytes)
    ));
    // Every single-byte change is an error or a circuit: never a panic.
    for at in 0..good.len() {
        let mut bad = good.clone();
        bad[at] ^= 0x5a;
        let _ = R1cs::read(&bad[..]);
    }
    // The first constraint's first L wire (X, wire 1) set to 127: out of the 70 wires.
    let header = 32;
    let lens: Vec<u64> = (0..4)
        .map(|i| u64::from_le_bytes(good[header + 8 * i..header + 8 * i + 8].try_into().unwrap()))
        .collect();
    let calldata = header + 32 + (lens[0] + lens[1]) as usize + 8;
    // [size, |L|, |R|, |O|, coeff, wire]: one byte each for these small values.
    let mut bad = good.clone();
    assert_eq!(bad[calldata + 5], 1, "the fixture's first term is X");
    bad[calldata + 5] = 127;
    let message = R1cs::read(&bad[..]).unwrap_err().to_string();
    assert_eq!(
        message,
        "constraint 0: L[0] names wire 127, but the circuit has 70 wires"
    );
    // The R1C blueprint's tag (CBOR 0xda, 5,309,736) turned into a PLONK multiplication gate's.
    let tag = [0xda, 0x00, 0x51, 0x05, 0x28];
    let at = good
        .windows(5)
        .position(|w| w == tag)
        .expect("the R1C blueprint's tag");
    let mut bad = good.clone();
    bad[at + 4] = 0x2d;
    let message = R1cs::read(&bad[..]).unwrap_err().to_string();
    assert!(
        message.contains("unsupported blueprint BlueprintSparseR1CMul[U32]"),
        "{message}"
    );
}

#[test]
fn counts_no_bytes_back_are_refused_before_allocating() {
    use lockstep_ceremony::CodecError;
    use lockstep_ceremony::r1cs::R1csError;
    // 65,535 internal wires claimed by a 41 KB file (the CBOR u16 of 999 rewritten).
    let good = std::fs::read(fixture_path("chain-1000-commit.r1cs")).unwrap();
    let key = b"NbInternalVariables";
    let at = good.windows(key.len()).position(|w| w == key).unwrap() + key.len();
    assert_eq!(&good[at..at + 3], &[0x19, 0x03, 0xe7], "999 as a CBOR u16");
    let mut bad = good.clone();
    bad[at + 1..at + 3].copy_from_slice(&[0xff, 0xff]);
    let error = R1cs::read(&bad[..]).unwrap_err();
    assert!(matches!(error, R1csError::Body(_)), "{error}");
    assert!(
        error
            .to_string()
            .contains("65546 wires declared in a file of"),
        "{error}"
    );
    // A phase 2 object claiming 170 commitments, one more than gnark can seal.
    let (_, _, next, _) = chain();
    let mut many = bytes(&next);
    many[..2].copy_from_slice(&170u16.to_be_bytes());
    let pool = Pool::new(2).unwrap();
    let read = Phase2::read(
        &pool,
        &Control::new(),
        &many[..],
        &lockstep_ceremony::Limits::default(),
    );
    assert!(
        matches!(
            read,
            Err(CodecError::TooMany {
                count: 170,
                max: 169,
                ..
            })
        ),
        "{read:?}"
    );
    // Secrets for the most commitments are drawn without running out of hash output.
    let secrets = phase2::Secrets::random(b"", lockstep_ceremony::r1cs::MAX_COMMITMENTS);
    drop(secrets);
}

#[test]
fn a_chain_sealed_with_another_circuit_s_evaluations_is_refused() {
    let pool = Pool::new(2).unwrap();
    let (_, _, next, h1) = chain();
    let (initial, plain) = phase2::initialize_serial(&circuit("chain-60.r1cs"), &srs(6)).unwrap();
    let origin = phase2::Origin {
        initial: &initial,
        srs: &srs(6),
        evaluations: &plain,
    };
    let error = phase2::seal(&pool, &Control::new(), origin, next, &h1, b"beacon").unwrap_err();
    assert_eq!(
        error.to_string(),
        "the object is not of this circuit: 1 commitments, the circuit has 0"
    );
}

/// The seal refuses what gnark's `VerifyPhase2` refuses, holding only the last object: a chain
/// over another phase 1 of the same power, one of another circuit of the same shape, and a
/// last object with two Z points swapped (check_sealable compared shapes only: the first two
/// sealed to keys whose proofs no verifier accepts).
#[test]
fn a_seal_refuses_an_object_not_descended_from_its_initial_object() {
    let pool = Pool::new(2).unwrap();
    let control = Control::new();
    let (initial, evaluations) =
        phase2::initialize(&pool, &control, &circuit("chain-60-commit.r1cs"), &srs(6)).unwrap();
    let walk = |from: &Phase2| {
        let h0 = hash(&bytes(from));
        let q1 = phase2::contribute(&pool, &control, from.clone(), &h0, &secrets2(1, 1)).unwrap();
        let h1 = hash(&bytes(&q1));
        let q2 = phase2::contribute(&pool, &control, q1, &h1, &secrets2(2, 1)).unwrap();
        let h2 = hash(&bytes(&q2));
        (q2, h2)
    };
    let origin = phase2::Origin {
        initial: &initial,
        srs: &srs(6),
        evaluations: &evaluations,
    };
    let (good, good_hash) = walk(&initial);
    phase2::check_sealable(&pool, &control, origin, &good).unwrap();
    phase2::seal(&pool, &control, origin, good.clone(), &good_hash, b"b").unwrap();

    // Another chain's phase 1 of the same power (other secrets).
    let mut other_srs = Srs::one(6).unwrap();
    phase1::update(&pool, &control, &mut other_srs, &secrets(12)).unwrap();
    let (foreign, _) = phase2::initialize(
        &pool,
        &control,
        &circuit("chain-60-commit.r1cs"),
        &other_srs,
    )
    .unwrap();
    // Another circuit of the same shape (twice the subtraction on odd steps: other
    // coefficients on private wires).
    let variant = circuit("chain-60-commit-variant.r1cs");
    let plain = circuit("chain-60-commit.r1cs");
    assert_eq!(
        (
            variant.constraints(),
            variant.wires(),
            variant.commitments().len()
        ),
        (
            plain.constraints(),
            plain.wires(),
            plain.commitments().len()
        )
    );
    let (other_circuit, _) = phase2::initialize(&pool, &control, &variant, &srs(6)).unwrap();
    assert_ne!(bytes(&other_circuit), bytes(&initial));
    for (what, from) in [
        ("another phase 1", &foreign),
        ("another circuit", &other_circuit),
    ] {
        let (last, last_hash) = walk(from);
        let error = phase2::check_sealable(&pool, &control, origin, &last).unwrap_err();
        assert!(
            matches!(error, phase2::Phase2Error::Descent(_)),
            "{what}: {error}"
        );
        assert!(
            error
                .to_string()
                .contains("does not descend from this circuit's initial object"),
            "{what}: {error}"
        );
        assert!(phase2::seal(&pool, &control, origin, last, &last_hash, b"b").is_err());
    }
    // Swapped Z points: named by the first position that does not follow.
    let mut swapped = good.clone();
    swapped.z.swap(7, 8);
    let error = phase2::check_sealable(&pool, &control, origin, &swapped).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the object does not descend from this circuit's initial object over this phase 1: \
         delta: Z[7] is not the initial object's moved by the chain's delta (another phase 1, \
         another circuit, or a changed point)"
    );
    let mut moved_ckk = good;
    moved_ckk.sigma_ckk[0].swap(0, 1);
    let error = phase2::check_sealable(&pool, &control, origin, &moved_ckk).unwrap_err();
    assert!(
        error.to_string().contains("sigma[0]: SigmaCKK[0] is not"),
        "{error}"
    );
}

#[test]
fn a_chain_starts_at_the_re_derived_object_and_names_a_wrong_start() {
    use std::borrow::Cow;

    use lockstep_ceremony::chain::Verdict;
    use lockstep_ceremony::phase2::{Chain, Start};

    let pool = Pool::new(2).unwrap();
    let control = Control::new();
    let hash = |object: &Phase2| {
        object
            .write(&pool, &Control::new(), std::io::sink())
            .unwrap()
    };
    let srs = srs(6);
    let c0 = phase2::initialize_object(&pool, &control, &circuit("chain-60.r1cs"), &srs).unwrap();
    let h0 = hash(&c0);
    let secrets = |seed: &[u8]| phase2::Secrets::random(seed, c0.sigma_g2.len());
    let c1 = phase2::contribute(&pool, &control, c0.clone(), &h0, &secrets(b"a")).unwrap();
    let h1 = hash(&c1);
    let c2 = phase2::contribute(&pool, &control, c1.clone(), &h1, &secrets(b"b")).unwrap();
    let h2 = hash(&c2);
    let start = || Some(Start::new(&pool, Cow::Borrowed(&c0), "c.r1cs over srs").unwrap());
    assert!(c0.is_initial() && !c1.is_initial());

    // From the initial object, checked against the re-derived one.
    let (mut chain, verdict) = Chain::from_first(&pool, &control, c0.clone(), h0, start()).unwrap();
    assert_eq!(
        verdict,
        Verdict::InitialOf {
            origin: "c.r1cs over srs".into(),
            hash: h0
        }
    );
    chain.push(&pool, &control, c1.clone(), h1).unwrap();
    chain.push(&pool, &control, c2.clone(), h2).unwrap();
    assert_eq!(chain.contributions(), 2);
    assert_eq!(chain.into_last().1, h2);
    // Unchecked without a circuit.
    let (_, verdict) = Chain::from_first(&pool, &control, c0.clone(), h0, None).unwrap();
    assert_eq!(verdict, Verdict::InitialUnchecked);

    // gnark's form: the first file is the first contribution, counted.
    let (chain, verdict) = Chain::from_first(&pool, &control, c1.clone(), h1, start()).unwrap();
    assert_eq!(
        (verdict, chain.contributions()),
        (Verdict::Contribution { hash: h1 }, 1)
    );

    // Refusals, in the chain's words.
    let refused = |result: Result<(Chain<'_>, Verdict), lockstep_ceremony::chain::ChainError>| {
        let error = result.unwrap_err();
        assert_eq!(error.code(), "CEREMONY_REJECTED");
        error.to_string()
    };
    assert!(
        refused(Chain::from_first(&pool, &control, c1.clone(), h1, None))
            .starts_with("REJECTED: not an initial object (it carries a contribution)")
    );
    assert!(
        refused(Chain::from_first(&pool, &control, c2.clone(), h2, start()))
            .starts_with("REJECTED: not made on the initial object of c.r1cs over srs")
    );
    let other =
        phase2::initialize_object(&pool, &control, &circuit("chain-60-commit.r1cs"), &srs).unwrap();
    let other_hash = hash(&other);
    assert_eq!(
        refused(Chain::from_first(
            &pool,
            &control,
            other,
            other_hash,
            start()
        )),
        "REJECTED: not the initial object of c.r1cs over srs"
    );
    // Past the first contribution, a skipped step is the plain challenge refusal.
    let mut chain = Chain::after(Cow::Borrowed(&c0), h0);
    let error = chain.push(&pool, &control, c2, h2).unwrap_err();
    assert!(
        error.to_string().starts_with("REJECTED: challenge:"),
        "{error}"
    );
}
