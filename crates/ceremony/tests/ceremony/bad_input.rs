//! Every kind of bad file and bad contribution: a clear error naming the value, the same on
//! every pool as in the serial reference.

use blstrs::{G1Affine, Scalar};
use group::Curve;
use lockstep_ceremony::codec::CHUNK_POINTS;
use lockstep_ceremony::phase1::{self, Phase1, Value, VerifyError};
use lockstep_ceremony::{CodecError, Limits, Location, PointProblem, reference};
use lockstep_shard::{Control, Pool};
use sha2::{Digest, Sha256};

use crate::{fixture, pools, read, secrets, write};

/// Offset of the first stored `G1 Tau` point (`[tau^1]_1`) in a phase 1 file.
const G1_TAU_START: usize = 3 * (48 + 96) + 8 + 96;

/// Decodes `bytes` on every pool and with the serial reference; all must give one error.
fn error_everywhere(bytes: &[u8], limits: &Limits) -> String {
    let expected = reference::phase1_from_bytes(bytes, limits)
        .unwrap_err()
        .to_string();
    for (name, pool) in pools() {
        let got = Phase1::read(&pool, &Control::new(), bytes, limits)
            .unwrap_err()
            .to_string();
        assert_eq!(got, expected, "on {name}");
    }
    expected
}

/// 48-byte compressed encodings, from x = 1 up, of a point off the curve and of a point on the
/// curve outside the subgroup.
fn bad_g1_encodings() -> ([u8; 48], [u8; 48]) {
    let (mut off, mut outside) = (None, None);
    for x in 1u8..=200 {
        let mut bytes = [0u8; 48];
        bytes[0] = 0x80;
        bytes[47] = x;
        match G1Affine::from_compressed_unchecked(&bytes).into_option() {
            None => off = off.or(Some(bytes)),
            Some(p) if !bool::from(p.is_torsion_free()) => outside = outside.or(Some(bytes)),
            Some(_) => {}
        }
    }
    (off.unwrap(), outside.unwrap())
}

/// A change to one encoded point.
type Corruption = Box<dyn Fn(&mut [u8])>;

#[test]
fn a_bad_point_is_named_with_its_offset_whatever_the_worker_count() {
    let (_, good) = fixture();
    let (off_curve, outside) = bad_g1_encodings();
    // Second chunk of G1 Tau, so the error has to come from a later chunk's block.
    let index = CHUNK_POINTS + 77;
    let at = G1_TAU_START + (index - 1) * 48;
    let cases: [(&str, Corruption, PointProblem); 4] = [
        (
            "off curve",
            Box::new(move |b: &mut [u8]| b.copy_from_slice(&off_curve)),
            PointProblem::NotOnCurve,
        ),
        (
            "outside the subgroup",
            Box::new(move |b: &mut [u8]| b.copy_from_slice(&outside)),
            PointProblem::NotInSubgroup,
        ),
        (
            "uncompressed flag",
            Box::new(|b: &mut [u8]| b[0] &= 0x7f),
            PointProblem::Uncompressed,
        ),
        (
            "x >= p",
            Box::new(|b: &mut [u8]| {
                b.fill(0xff);
                b[0] = 0x9f;
            }),
            PointProblem::NonCanonical,
        ),
    ];
    for (what, corrupt, problem) in cases {
        let mut bytes = good.clone();
        corrupt(&mut bytes[at..at + 48]);
        // A second bad point later must not win, whichever worker reaches it first.
        let later = at + 48 * 1000;
        bytes[later] &= 0x7f;
        let message = error_everywhere(&bytes, &Limits::default());
        let expected = CodecError::Point {
            location: Location::element("G1 Tau", index as u64),
            offset: at as u64,
            problem,
        }
        .to_string();
        assert_eq!(message, expected, "{what}");
    }
}

#[test]
fn an_infinity_with_stray_bits_is_non_canonical() {
    let (_, good) = fixture();
    let mut bytes = good.clone();
    bytes[0] = 0xc0;
    bytes[1..48].fill(0);
    bytes[20] = 1;
    let message = error_everywhere(&bytes, &Limits::default());
    assert_eq!(
        message,
        "tau proof commitment at byte 0: non-canonical encoding"
    );
}

#[test]
fn truncated_files_and_trailing_bytes() {
    let (_, good) = fixture();
    let message = error_everywhere(&good[..good.len() - 20], &Limits::default());
    assert!(
        message.starts_with("truncated:") && message.contains("challenge"),
        "{message}"
    );
    let message = error_everywhere(&good[..G1_TAU_START + 48 * 5000 + 7], &Limits::default());
    assert_eq!(
        message,
        format!(
            "truncated: the file ends at byte {}, inside G1 Tau[5001]",
            G1_TAU_START + 48 * 5000 + 7
        )
    );
    let mut longer = good.clone();
    longer.extend_from_slice(b"x");
    let message = error_everywhere(&longer, &Limits::default());
    assert_eq!(
        message,
        format!(
            "trailing bytes after the end of the content at byte {}",
            good.len()
        )
    );
    assert!(error_everywhere(&[], &Limits::default()).starts_with("truncated"));
}

#[test]
fn domain_sizes_out_of_range_and_wrong_powers() {
    let (_, good) = fixture();
    let n_at = 3 * (48 + 96);
    for bad in [0u64, 1, 3, 4097, 1 << 40] {
        let mut bytes = good.clone();
        bytes[n_at..n_at + 8].copy_from_slice(&bad.to_be_bytes());
        let message = error_everywhere(&bytes, &Limits::default());
        assert!(
            message.starts_with(&format!("domain size N = {bad} at byte {n_at}")),
            "{message}"
        );
    }
    let limits = Limits {
        power: Some(10),
        ..Limits::default()
    };
    let message = error_everywhere(good, &limits);
    assert_eq!(
        message,
        "wrong power: the file is for 2^12 (N = 4096), expected 2^10"
    );
    // A huge announced size allocates only what the file holds: this must fail fast.
    let mut bytes = good[..G1_TAU_START + 96].to_vec();
    bytes[n_at..n_at + 8].copy_from_slice(&(1u64 << 28).to_be_bytes());
    assert!(error_everywhere(&bytes, &Limits::default()).starts_with("truncated"));
}

#[test]
fn a_challenge_of_another_length_is_refused() {
    let (_, good) = fixture();
    let mut bytes = good[..good.len() - 32].to_vec();
    let at = bytes.len() - 1;
    bytes[at] = 31;
    bytes.extend_from_slice(&[7; 31]);
    let message = error_everywhere(&bytes, &Limits::default());
    assert_eq!(
        message,
        format!("challenge at byte {at}: length 31, expected 0 or 32")
    );
}

/// A small chain for verification tests: the initial object and one contribution.
fn chain() -> (Pool, Phase1, [u8; 32], Phase1) {
    let pool = Pool::new(2).unwrap();
    let initial = Phase1::initial(6).unwrap();
    let (_, hash) = write(&pool, &initial);
    let next =
        phase1::contribute(&pool, &Control::new(), initial.clone(), &hash, &secrets(5)).unwrap();
    (pool, initial, hash, next)
}

fn verify(
    pool: &Pool,
    previous: &Phase1,
    hash: &[u8; 32],
    next: &Phase1,
) -> Result<(), VerifyError> {
    phase1::verify_contribution(pool, &Control::new(), previous, hash, next)
}

#[test]
fn an_honest_contribution_verifies_on_every_pool() {
    let (_, initial, hash, next) = chain();
    for (name, pool) in pools() {
        verify(&pool, &initial, &hash, &next).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn a_tampered_point_is_found_and_named() {
    let (pool, initial, hash, next) = chain();
    for (vector, index) in [
        ("G1 Tau", 100u64),
        ("G2 Tau", 33),
        ("G1 BetaTau", 17),
        ("G1 AlphaTau", 63),
        ("G1 Tau", 126),
    ] {
        let mut bad = next.clone();
        let i = index as usize;
        match vector {
            "G1 Tau" => bad.srs.g1_tau[i] = (bad.srs.g1_tau[i] * Scalar::from(2u64)).to_affine(),
            "G2 Tau" => bad.srs.g2_tau[i] = (bad.srs.g2_tau[i] * Scalar::from(2u64)).to_affine(),
            "G1 BetaTau" => {
                bad.srs.beta_tau[i] = (bad.srs.beta_tau[i] * Scalar::from(2u64)).to_affine()
            }
            _ => bad.srs.alpha_tau[i] = (bad.srs.alpha_tau[i] * Scalar::from(2u64)).to_affine(),
        }
        let error = verify(&pool, &initial, &hash, &bad).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("powers of tau: {vector}[{index}] breaks the ratio of consecutive powers"),
        );
    }
    // [tau]_2 itself: caught against [tau]_1 (the tau proof vouched for [tau]_1).
    let mut bad = next.clone();
    bad.srs.g2_tau[1] = bad.srs.g2_tau[2];
    let error = verify(&pool, &initial, &hash, &bad).unwrap_err();
    assert!(matches!(error, VerifyError::TauMismatch), "{error}");
}

#[test]
fn a_contribution_that_skips_or_repeats_a_step_is_refused() {
    let (pool, initial, hash, next) = chain();
    let (_, next_hash) = write(&pool, &next);
    // Repeats: a second contribution made on the initial object, presented after `next`.
    let repeat =
        phase1::contribute(&pool, &Control::new(), initial.clone(), &hash, &secrets(9)).unwrap();
    let error = verify(&pool, &next, &next_hash, &repeat).unwrap_err();
    assert!(
        matches!(error, VerifyError::ChallengeMismatch { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("skips or repeats"));
    // Skips: a contribution on `next`'s successor presented right after the initial object.
    let after = phase1::contribute(
        &pool,
        &Control::new(),
        next.clone(),
        &next_hash,
        &secrets(10),
    )
    .unwrap();
    assert!(matches!(
        verify(&pool, &initial, &hash, &after),
        Err(VerifyError::ChallengeMismatch { .. })
    ));
    // No challenge at all.
    let mut none = next.clone();
    none.challenge = None;
    assert!(matches!(
        verify(&pool, &initial, &hash, &none),
        Err(VerifyError::MissingChallenge)
    ));
    // The initial object of another power.
    let other = Phase1::initial(5).unwrap();
    assert!(matches!(
        verify(&pool, &other, &hash, &next),
        Err(VerifyError::PowerMismatch {
            found: 6,
            expected: 5
        })
    ));
}

#[test]
fn proofs_for_other_values_are_refused() {
    let (pool, initial, hash, next) = chain();
    // The tau proof presented as the alpha proof: its hash-to-G2 base uses another tag.
    let mut swapped = next.clone();
    swapped.proofs.alpha = next.proofs.tau;
    let error = verify(&pool, &initial, &hash, &swapped).unwrap_err();
    assert!(
        matches!(
            error,
            VerifyError::ProofOfKnowledge {
                value: Value::Alpha
            }
        ),
        "{error}"
    );
    // A valid proof of a value the SRS was not updated by.
    let other =
        phase1::contribute(&pool, &Control::new(), initial.clone(), &hash, &secrets(11)).unwrap();
    let mut foreign = next.clone();
    foreign.proofs.beta = other.proofs.beta;
    let error = verify(&pool, &initial, &hash, &foreign).unwrap_err();
    assert_eq!(
        error.to_string(),
        "beta update: G1 BetaTau[0] is not the previous G1 BetaTau[0] times the committed value"
    );
    // A zero contribution.
    let mut zero = next.clone();
    zero.proofs.tau.commitment = G1Affine::default();
    assert!(matches!(
        verify(&pool, &initial, &hash, &zero),
        Err(VerifyError::ZeroContribution { value: Value::Tau })
    ));
    // [beta]_2 not moved with [beta]_1.
    let mut beta2 = next.clone();
    beta2.srs.beta_g2 = initial.srs.beta_g2;
    assert_eq!(
        verify(&pool, &initial, &hash, &beta2)
            .unwrap_err()
            .to_string(),
        "beta update: G2 Beta is not the previous G2 Beta times the committed value"
    );
}

#[test]
fn a_file_hash_is_the_sha256_of_its_bytes() {
    let (_, good) = fixture();
    let pool = Pool::new(3).unwrap();
    let (_, hash) = read(&pool, good).unwrap();
    assert_eq!(hash, <[u8; 32]>::from(Sha256::digest(good)));
}

#[test]
fn g1_and_g2_tau_that_disagree_are_named_together() {
    let (pool, _, _, next) = chain();
    let mut bad = next.srs.clone();
    bad.g1_tau[1] = (bad.g1_tau[1] * Scalar::from(3u64)).to_affine();
    let error = phase1::check_powers(&pool, &Control::new(), &bad).unwrap_err();
    assert!(matches!(error, VerifyError::TauMismatch), "{error}");
}

#[test]
fn a_limit_above_what_a_usize_can_count_is_clamped() {
    // 2^63 announced with max_power 64: refused as a domain size, not an overflow.
    let (_, good) = fixture();
    let n_at = 3 * (48 + 96);
    let mut bytes = good.clone();
    bytes[n_at..n_at + 8].copy_from_slice(&(1u64 << 63).to_be_bytes());
    let limits = Limits {
        max_power: 64,
        ..Limits::default()
    };
    let message = error_everywhere(&bytes, &limits);
    assert!(
        message.starts_with("domain size N = 9223372036854775808"),
        "{message}"
    );
}
