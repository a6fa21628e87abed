//! gnark's side of the prover: circuits compiled by gnark v0.15 (the harness in
//! `interop/gnark/`), keys from gnark's `groth16.Setup`, witnesses in gnark's binary format;
//! our proofs accepted by gnark's `groth16.Verify` and ours, a wrong public input refused by
//! both.

use std::path::Path;

use lockstep_ceremony::KeyChecks;
use lockstep_ceremony::Limits;
use lockstep_ceremony::groth16::{self, Proof};
use lockstep_ceremony::phase2::{KeyFile, ProvingKey, VerifyingKey};
use lockstep_ceremony::prove::{Blinding, gnark as prover};
use lockstep_ceremony::r1cs::R1cs;
use lockstep_shard::{Control, Pool};

use crate::gnark::{gnark, gnark_fails, s};

/// A circuit's files from the harness: R1CS, keys, the witness of X = 5 and the public
/// witness of X = 6.
struct Circuit {
    r1cs: std::path::PathBuf,
    pk: std::path::PathBuf,
    vk: std::path::PathBuf,
    witness: std::path::PathBuf,
    public: std::path::PathBuf,
    wrong_public: std::path::PathBuf,
}

fn circuit(dir: &Path, name: &str, flags: &[&str]) -> Circuit {
    let path = |ext: &str| dir.join(format!("{name}.{ext}"));
    let c = Circuit {
        r1cs: path("r1cs"),
        pk: path("pk"),
        vk: path("vk"),
        witness: path("wit"),
        public: path("pub"),
        wrong_public: path("pub6"),
    };
    let with = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend_from_slice(flags);
        gnark(&all);
    };
    with(&["r1cs", "-out", s(&c.r1cs)]);
    gnark(&[
        "setup",
        "-r1cs",
        s(&c.r1cs),
        "-pk",
        s(&c.pk),
        "-vk",
        s(&c.vk),
    ]);
    with(&[
        "witness",
        "-x",
        "5",
        "-out",
        s(&c.witness),
        "-public",
        s(&c.public),
    ]);
    let unused = path("wit6");
    with(&[
        "witness",
        "-x",
        "6",
        "-out",
        s(&unused),
        "-public",
        s(&c.wrong_public),
    ]);
    c
}

fn open(path: &Path) -> std::io::BufReader<std::fs::File> {
    std::io::BufReader::new(std::fs::File::open(path).unwrap())
}

fn read_key(pool: &Pool, path: &Path) -> ProvingKey {
    let limits = Limits {
        file_len: Some(std::fs::metadata(path).unwrap().len()),
        ..Limits::default()
    };
    ProvingKey::read(pool, &Control::new(), open(path), &limits).unwrap()
}

#[test]
fn our_proofs_of_gnark_circuits_verify_in_gnark_and_ours() {
    let dir = tempfile::tempdir().unwrap();
    let shapes: [(&str, &[&str]); 3] = [
        ("chain", &["-constraints", "300"]),
        ("commit", &["-constraints", "300", "-commit"]),
        ("gadgets", &["-constraints", "600", "-gadgets"]),
    ];
    for (name, flags) in shapes {
        let c = circuit(dir.path(), name, flags);
        let r1cs = R1cs::read(open(&c.r1cs)).unwrap();
        let witness = groth16::read_witness(open(&c.witness)).unwrap();
        let vk = VerifyingKey::read(open(&c.vk)).unwrap();
        let public = groth16::read_public_witness(open(&c.public)).unwrap();
        let wrong = groth16::read_public_witness(open(&c.wrong_public)).unwrap();
        for workers in [1, 2] {
            let pool = Pool::new(workers).unwrap();
            let pk = read_key(&pool, &c.pk);
            let proof = prover::prove(
                &pool,
                &Control::new(),
                &r1cs,
                &pk,
                &witness,
                &Blinding::random(),
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            let proof_path = dir.path().join(format!("{name}-{workers}.proof"));
            proof
                .write(std::io::BufWriter::new(
                    std::fs::File::create(&proof_path).unwrap(),
                ))
                .unwrap();
            assert_eq!(Proof::read(open(&proof_path)).unwrap(), proof);
            groth16::verify(&vk, &proof, &public)
                .unwrap_or_else(|e| panic!("{name}: we refuse our proof: {e}"));
            gnark(&[
                "gverify",
                "-vk",
                s(&c.vk),
                "-proof",
                s(&proof_path),
                "-public",
                s(&c.public),
            ]);
            assert!(
                groth16::verify(&vk, &proof, &wrong).is_err(),
                "{name}: we accept a wrong public input"
            );
            gnark_fails(&[
                "gverify",
                "-vk",
                s(&c.vk),
                "-proof",
                s(&proof_path),
                "-public",
                s(&c.wrong_public),
            ]);
        }
    }
}

/// A fixed sequence of masks for the commitments' `Randomize` hint.
fn masks() -> impl FnMut() -> blstrs::Scalar {
    let mut next = 1000u64;
    move || {
        next += 7;
        blstrs::Scalar::from(next)
    }
}

#[test]
fn the_proof_equals_the_definition_s_on_every_pool() {
    use blstrs::Scalar;
    let dir = tempfile::tempdir().unwrap();
    let shapes: [(&str, &[&str]); 3] = [
        ("chain", &["-constraints", "40"]),
        ("commit", &["-constraints", "60", "-commit"]),
        ("gadgets", &["-constraints", "300", "-gadgets"]),
    ];
    for (name, flags) in shapes {
        let c = circuit(dir.path(), name, flags);
        let r1cs = R1cs::read(open(&c.r1cs)).unwrap();
        let witness = groth16::read_witness(open(&c.witness)).unwrap();
        let pk = read_key(&Pool::current_thread(), &c.pk);
        let blinding = || Blinding::fixed(Scalar::from(11u64), Scalar::from(13u64));
        let want =
            prover::prove_reference(&r1cs, &pk, &witness, &blinding(), &mut masks()).unwrap();
        let vk = VerifyingKey::read(open(&c.vk)).unwrap();
        let public = groth16::read_public_witness(open(&c.public)).unwrap();
        groth16::verify(&vk, &want, &public)
            .unwrap_or_else(|e| panic!("{name}: the reference's proof is refused: {e}"));
        let compressed = std::fs::read(&c.pk).unwrap();
        let mut raw = Vec::new();
        pk.write_raw(&Pool::new(2).unwrap(), &Control::new(), &mut raw)
            .unwrap();
        for (label, pool) in crate::pools() {
            let got = prover::prove_with_masks(
                &pool,
                &Control::new(),
                &r1cs,
                &pk,
                &witness,
                &blinding(),
                &mut masks(),
            )
            .unwrap();
            assert_eq!(got, want, "{name} on {label}");
            // Read a chunk at a time from its file (compressed as gnark wrote it, and raw):
            // the same proof at any chunk size.
            for (encoding, bytes) in [("compressed", &compressed), ("raw", &raw)] {
                let file = KeyFile::open(
                    &pool,
                    &Control::new(),
                    std::io::Cursor::new(bytes),
                    &Limits::default(),
                    KeyChecks::Subgroups,
                )
                .unwrap();
                for chunk in [7, 1 << 20] {
                    let got = prover::prove_file_with_masks(
                        &pool,
                        &Control::new(),
                        &r1cs,
                        (&file, chunk),
                        &witness,
                        &blinding(),
                        &mut masks(),
                    )
                    .unwrap();
                    assert_eq!(
                        got, want,
                        "{name} on {label}, {encoding}, chunks of {chunk}"
                    );
                }
            }
        }
        // One point a chunk, on one pool.
        let file = KeyFile::open(
            &Pool::new(2).unwrap(),
            &Control::new(),
            std::io::Cursor::new(&raw),
            &Limits::default(),
            KeyChecks::Curve,
        )
        .unwrap();
        let got = prover::prove_file_with_masks(
            &Pool::new(2).unwrap(),
            &Control::new(),
            &r1cs,
            (&file, 1),
            &witness,
            &blinding(),
            &mut masks(),
        )
        .unwrap();
        assert_eq!(got, want, "{name}, chunks of 1");
    }
}

#[test]
fn a_key_point_outside_its_subgroup_is_named_or_refuses_the_proof() {
    use blstrs::G1Affine;
    use lockstep_ceremony::phase2::KeyEncoding;
    use lockstep_ceremony::prove::ProveError;
    let dir = tempfile::tempdir().unwrap();
    let c = circuit(dir.path(), "chain", &["-constraints", "40"]);
    let pool = Pool::new(2).unwrap();
    let r1cs = R1cs::read(open(&c.r1cs)).unwrap();
    let witness = groth16::read_witness(open(&c.witness)).unwrap();
    let mut key = read_key(&pool, &c.pk);
    // Written raw, gnark's key reads back the same, told raw.
    let mut raw = Vec::new();
    key.write_raw(&pool, &Control::new(), &mut raw).unwrap();
    let (again, encoding) = ProvingKey::read_with(
        &pool,
        &Control::new(),
        &raw[..],
        &Limits::default(),
        KeyChecks::Subgroups,
    )
    .unwrap();
    assert_eq!((again, encoding), (key.clone(), KeyEncoding::Raw));
    // Written raw from gnark's file read a chunk at a time (`groth16 prepare` past memory): the
    // same bytes.
    let file = KeyFile::open(
        &pool,
        &Control::new(),
        std::fs::File::open(&c.pk).unwrap(),
        &Limits::default(),
        KeyChecks::Subgroups,
    )
    .unwrap();
    let mut by_sections = Vec::new();
    file.write_raw(&pool, &Control::new(), &mut by_sections)
        .unwrap();
    assert!(by_sections == raw, "a key written raw by sections differs");
    // A point on the curve outside the subgroup, in place of every K point.
    let outside = (1u8..=200)
        .find_map(|x| {
            let mut bytes = [0u8; 48];
            bytes[0] = 0x80;
            bytes[47] = x;
            G1Affine::from_compressed_unchecked(&bytes)
                .into_option()
                .filter(|p| !bool::from(p.is_torsion_free()))
        })
        .unwrap();
    // Read a chunk at a time: K[4], in the second chunk of 3, named by its place in K; or,
    // trusted, the proof refused.
    let mut one = key.clone();
    one.k[4] = outside;
    let mut raw = Vec::new();
    one.write_raw(&pool, &Control::new(), &mut raw).unwrap();
    for checks in [KeyChecks::Subgroups, KeyChecks::Curve] {
        let file = KeyFile::open(
            &pool,
            &Control::new(),
            std::io::Cursor::new(&raw),
            &Limits::default(),
            checks,
        )
        .unwrap();
        let refused = prover::prove_file_with_masks(
            &pool,
            &Control::new(),
            &r1cs,
            (&file, 3),
            &witness,
            &Blinding::random(),
            &mut masks(),
        )
        .unwrap_err();
        match checks {
            KeyChecks::Subgroups => assert!(
                refused.to_string().contains("G1 K[4]")
                    && refused
                        .to_string()
                        .contains("not in the prime-order subgroup"),
                "{refused}"
            ),
            KeyChecks::Curve => assert!(matches!(refused, ProveError::KeyPoints), "{refused}"),
        }
    }
    // A file cut inside K, or before its last byte, is refused when opened.
    // After K: [beta]_2, [delta]_2, G2 B (a count and its points), three counts of 8 bytes,
    // two flag bytes a wire, the commitment count (none here).
    let after_k = 2 * 192 + 4 + 192 * key.b2.len() + 24 + 2 * key.infinity_a.len() + 4;
    let k_ends = raw.len() - after_k;
    for (cut, named) in [(k_ends - 50, "G1 K"), (raw.len() - 1, "commitment count")] {
        let refused = KeyFile::open(
            &pool,
            &Control::new(),
            std::io::Cursor::new(&raw[..cut]),
            &Limits::default(),
            KeyChecks::Subgroups,
        )
        .err()
        .unwrap_or_else(|| panic!("a key cut at {cut} of {} opens", raw.len()))
        .to_string();
        assert!(refused.contains(named), "cut at {cut}: {refused}");
    }
    for point in &mut key.k {
        *point = outside;
    }
    let mut raw = Vec::new();
    key.write_raw(&pool, &Control::new(), &mut raw).unwrap();
    let read = |checks| {
        ProvingKey::read_with(&pool, &Control::new(), &raw[..], &Limits::default(), checks)
    };
    let error = read(KeyChecks::Subgroups).unwrap_err().to_string();
    assert!(
        error.contains("G1 K[0]") && error.contains("not in the prime-order subgroup"),
        "{error}"
    );
    let (bad, _) = read(KeyChecks::Curve).unwrap();
    let refused = prover::prove(
        &pool,
        &Control::new(),
        &r1cs,
        &bad,
        &witness,
        &Blinding::random(),
    );
    assert!(matches!(refused, Err(ProveError::KeyPoints)), "{refused:?}");
}
