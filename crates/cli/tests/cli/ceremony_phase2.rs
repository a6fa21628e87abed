//! `lockstep ceremony phase2` and `groth16 verify` through the binary: a chain from a sealed
//! phase 1 and a gnark circuit to keys, a proof gnark makes with them verified by ours, and the
//! refusals. The circuit is the ceremony crate's fixture (999 constraints, a BSB22 commitment;
//! its regeneration command is in `crates/ceremony/tests/ceremony/phase2.rs`).

use crate::gnark::harness;
use crate::{fails, ok};
use std::path::{Path, PathBuf};
use std::process::Command;

fn circuit() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ceremony/tests/fixtures/chain-1000-commit.r1cs")
}

fn gnark(d: &Path, args: &[&str]) -> bool {
    Command::new(harness())
        .args(args)
        .current_dir(d)
        .output()
        .expect("the harness runs")
        .status
        .success()
}

/// A sealed phase 1 for 2^`power` in `d`, named `srs`.
fn sealed_phase1(d: &Path, power: &str) {
    ok(
        d,
        &[
            "-q", "ceremony", "phase1", "new", "--power", power, "--out", "p0",
        ],
    );
    ok(
        d,
        &[
            "-q",
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            "p0",
            "--out",
            "p1",
        ],
    );
    ok(
        d,
        &[
            "-q", "ceremony", "phase1", "seal", "--in", "p1", "--beacon", "ab", "--out", "srs",
        ],
    );
}

#[test]
fn a_phase2_chain_is_made_verified_sealed_and_its_keys_prove() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r1cs = circuit();
    let r1cs = r1cs.to_str().unwrap();
    // A phase 1 for 2^11, cut to the circuit's 2^10.
    sealed_phase1(d, "11");
    let two = |args: &[&str]| {
        let run = ok(d, &[&["--workers", "2"][..], args].concat());
        assert!(
            run.stderr.contains(" on 2 workers"),
            "{args:?}: {}",
            run.stderr
        );
        run
    };
    let new = two(&[
        "ceremony", "phase2", "new", "--r1cs", r1cs, "--phase1", "srs", "--out", "q0",
    ]);
    assert!(
        new.stderr.contains(
            "srs: a phase 1 for 2^11; cut to 2^10, the domain of the circuit's 999 constraints"
        ),
        "{}",
        new.stderr
    );
    assert!(
        new.stdout.starts_with(
            "initial phase 2 object for 999 constraints, 1010 wires, 1 commitment(s): "
        ),
        "{}",
        new.stdout
    );
    two(&[
        "ceremony",
        "phase2",
        "contribute",
        "--in",
        "q0",
        "--out",
        "q1",
        "--entropy",
        "x",
    ]);
    two(&[
        "ceremony",
        "phase2",
        "contribute",
        "--in",
        "q1",
        "--out",
        "q2",
    ]);
    let verdict = two(&[
        "ceremony", "phase2", "verify", "q0", "q1", "q2", "--r1cs", r1cs, "--phase1", "srs",
    ]);
    assert!(
        verdict.stdout.contains("q0: ok, the initial object of"),
        "{}",
        verdict.stdout
    );
    assert!(
        verdict
            .stdout
            .ends_with("verified: 2 contribution(s), all valid\n"),
        "{}",
        verdict.stdout
    );
    ok(
        d,
        &["ceremony", "phase2", "verify", "--previous", "q1", "q2"],
    );
    two(&[
        "ceremony",
        "phase2",
        "seal",
        "q0",
        "q1",
        "q2",
        "--r1cs",
        r1cs,
        "--phase1",
        "srs",
        "--beacon",
        "0badc0de",
        "--iterations",
        "10",
        "--pk",
        "pk",
        "--vk",
        "vk",
    ]);
    // gnark proves with our proving key; our verifier accepts it, and refuses another input.
    assert!(gnark(
        d,
        &[
            "prove",
            "-r1cs",
            r1cs,
            "-constraints",
            "1000",
            "-pk",
            "pk",
            "-x",
            "3",
            "-out",
            "proof",
            "-public",
            "public",
        ]
    ));
    assert!(gnark(
        d,
        &[
            "prove",
            "-r1cs",
            r1cs,
            "-constraints",
            "1000",
            "-pk",
            "pk",
            "-x",
            "4",
            "-out",
            "proof4",
            "-public",
            "public4",
        ]
    ));
    let accepted = ok(
        d,
        &[
            "ceremony", "groth16", "verify", "--vk", "vk", "--proof", "proof", "--public", "public",
        ],
    );
    assert_eq!(
        accepted.stdout,
        "proof: ok, a valid proof for 2 public input(s)\n"
    );
    fails(
        d,
        &[
            "ceremony", "groth16", "verify", "--vk", "vk", "--proof", "proof", "--public",
            "public4",
        ],
        "proof: REJECTED: proof refused: the pairing check fails for these public inputs",
    );
    // We prove with our proving key on gnark's witness; gnark and we accept the proof.
    assert!(gnark(
        d,
        &[
            "witness",
            "-constraints",
            "1000",
            "-x",
            "3",
            "-out",
            "witness",
            "-public",
            "public3",
        ]
    ));
    let proved = two(&[
        "groth16",
        "prove",
        "--pk",
        "pk",
        "--r1cs",
        r1cs,
        "--witness",
        "witness",
        "--proof",
        "ours",
        "--public",
        "ours.public",
        "--vk",
        "vk",
    ]);
    assert!(
        proved.stdout.starts_with(
            "proved: 2 public input(s), 1 commitment(s), the proof verified under the verifying key"
        ),
        "{}",
        proved.stdout
    );
    assert_eq!(
        std::fs::read(d.join("ours.public")).unwrap(),
        std::fs::read(d.join("public3")).unwrap()
    );
    assert!(gnark(
        d,
        &[
            "gverify",
            "-vk",
            "vk",
            "-proof",
            "ours",
            "-public",
            "ours.public"
        ]
    ));
    ok(
        d,
        &[
            "groth16",
            "verify",
            "--vk",
            "vk",
            "--proof",
            "ours",
            "--public",
            "ours.public",
        ],
    );
    assert!(!gnark(
        d,
        &[
            "gverify", "-vk", "vk", "-proof", "ours", "-public", "public4"
        ]
    ));
    every_input_names_a_file_of_another_kind(d, r1cs);
}

/// Every ceremony input given a file of another kind names that kind (the sniff saw three kinds
/// and read a phase 2 object as "domain size N = 162751491627962 at byte 0", an SRS given to
/// `phase2 contribute` as "[delta]_1 at byte 2: uncompressed encoding"), and writes nothing.
fn every_input_names_a_file_of_another_kind(d: &Path, r1cs: &str) {
    std::fs::copy(r1cs, d.join("circuit.r1cs")).unwrap();
    ok(
        d,
        &["-q", "ceremony", "ptau", "export", "srs", "--out", "s.ptau"],
    );
    let files = [
        ("p1", "a phase 1 object"),
        ("srs", "a sealed SRS"),
        ("s.ptau", "a snarkjs .ptau file"),
        ("q1", "a phase 2 object"),
        ("circuit.r1cs", "a gnark R1CS"),
        ("pk", "a Groth16 proving key"),
        ("vk", "a Groth16 verifying key"),
        ("proof", "a Groth16 proof"),
        ("public", "a public witness"),
    ];
    // Each input, the kinds it takes, and the command around it (`{}` is the file).
    let inputs: [(&[&str], &[&str]); 14] = [
        (
            &["p1", "srs"],
            &["ceremony", "ptau", "export", "{}", "--out", "x"],
        ),
        (
            &["s.ptau"],
            &["ceremony", "ptau", "import", "{}", "--out", "x"],
        ),
        (
            &["p1"],
            &[
                "ceremony",
                "phase1",
                "contribute",
                "--in",
                "{}",
                "--out",
                "x",
            ],
        ),
        (&["p1"], &["ceremony", "phase1", "verify", "{}"]),
        (
            &["p1"],
            &[
                "ceremony", "phase1", "seal", "--in", "{}", "--beacon", "ab", "--out", "x",
            ],
        ),
        (
            &["srs"],
            &[
                "ceremony",
                "phase2",
                "new",
                "--r1cs",
                "circuit.r1cs",
                "--phase1",
                "{}",
                "--out",
                "x",
            ],
        ),
        (
            &["circuit.r1cs"],
            &[
                "ceremony", "phase2", "new", "--r1cs", "{}", "--phase1", "srs", "--out", "x",
            ],
        ),
        (
            &["q1"],
            &[
                "ceremony",
                "phase2",
                "contribute",
                "--in",
                "{}",
                "--out",
                "x",
            ],
        ),
        (&["q1"], &["ceremony", "phase2", "verify", "{}"]),
        (
            &["q1"],
            &["ceremony", "phase2", "verify", "--previous", "{}", "q1"],
        ),
        (
            &["q1"],
            &[
                "ceremony",
                "phase2",
                "seal",
                "{}",
                "--r1cs",
                "circuit.r1cs",
                "--phase1",
                "srs",
                "--beacon",
                "00",
                "--pk",
                "x",
                "--vk",
                "y",
            ],
        ),
        (
            &["vk"],
            &[
                "ceremony", "groth16", "verify", "--vk", "{}", "--proof", "proof", "--public",
                "public",
            ],
        ),
        (
            &["proof"],
            &[
                "ceremony", "groth16", "verify", "--vk", "vk", "--proof", "{}", "--public",
                "public",
            ],
        ),
        (
            &["public"],
            &[
                "ceremony", "groth16", "verify", "--vk", "vk", "--proof", "proof", "--public", "{}",
            ],
        ),
    ];
    for (takes, command) in inputs {
        for (file, kind) in files.iter().filter(|(f, _)| !takes.contains(f)) {
            let args: Vec<&str> = command
                .iter()
                .map(|a| if *a == "{}" { *file } else { *a })
                .collect();
            let run = fails(d, &args, &format!("{file} is {kind}"));
            assert!(!run.stderr.contains("at byte"), "{args:?}: {}", run.stderr);
            assert!(!d.join("x").exists() && !d.join("y").exists(), "{args:?}");
        }
    }
    // `ceremony info` takes every kind the engine reads, and says which it is.
    for (file, _) in files {
        let info = ok(d, &["ceremony", "info", file]);
        assert!(info.stdout.contains("\nkind: "), "{file}: {}", info.stdout);
    }
}

#[test]
fn phase2_refusals_name_the_file_and_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r1cs = circuit();
    let r1cs = r1cs.to_str().unwrap();
    sealed_phase1(d, "9");
    fails(
        d,
        &[
            "ceremony", "phase2", "new", "--r1cs", r1cs, "--phase1", "srs", "--out", "q0",
        ],
        "srs: a phase 1 for 2^9 = 512 constraints, but the circuit has 999 (it needs 2^10)",
    );
    assert!(!d.join("q0").exists());
    sealed_phase1(d, "10");
    ok(
        d,
        &[
            "-q", "ceremony", "phase2", "new", "--r1cs", r1cs, "--phase1", "srs", "--out", "q0",
        ],
    );
    ok(
        d,
        &[
            "-q",
            "ceremony",
            "phase2",
            "contribute",
            "--in",
            "q0",
            "--out",
            "q1",
        ],
    );
    // A contribution made on q0 again does not follow q1.
    ok(
        d,
        &[
            "-q",
            "ceremony",
            "phase2",
            "contribute",
            "--in",
            "q0",
            "--out",
            "side",
        ],
    );
    fails(
        d,
        &["ceremony", "phase2", "verify", "q0", "q1", "side"],
        "side: REJECTED: challenge: the contribution was made on",
    );
    // A point of Z replaced by another valid point: named by position.
    let mut bytes = std::fs::read(d.join("q1")).unwrap();
    let pkk = u32::from_be_bytes(bytes[50..54].try_into().unwrap()) as usize;
    let z = 54 + 48 * pkk + 4;
    let (a, b) = (z + 48 * 7, z + 48 * 8);
    let eighth: Vec<u8> = bytes[b..b + 48].to_vec();
    bytes[a..a + 48].copy_from_slice(&eighth);
    std::fs::write(d.join("tampered"), &bytes).unwrap();
    fails(
        d,
        &["ceremony", "phase2", "verify", "q0", "tampered"],
        "tampered: REJECTED: delta update: Z[7] is not its predecessor's moved by the committed value",
    );
    let mut trailing = std::fs::read(d.join("q1")).unwrap();
    trailing.push(7);
    std::fs::write(d.join("trailing"), &trailing).unwrap();
    fails(
        d,
        &[
            "ceremony",
            "phase2",
            "contribute",
            "--in",
            "trailing",
            "--out",
            "q2",
        ],
        "trailing: trailing bytes after the end of the content",
    );
    assert!(!d.join("q2").exists());
    // Sealing against a circuit the chain is not of.
    let small =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../ceremony/tests/fixtures/chain-60.r1cs");
    fails(
        d,
        &[
            "ceremony",
            "phase2",
            "seal",
            "q0",
            "q1",
            "--r1cs",
            small.to_str().unwrap(),
            "--phase1",
            "srs",
            "--beacon",
            "00",
            "--pk",
            "pk",
            "--vk",
            "vk",
        ],
        "q0: REJECTED: not the initial object of",
    );
    assert!(!d.join("pk").exists() && !d.join("vk").exists());
    // A phase 1 object where an R1CS is expected.
    fails(
        d,
        &[
            "ceremony", "phase2", "new", "--r1cs", "p1", "--phase1", "srs", "--out", "x",
        ],
        "p1 is a phase 1 object, not a gnark R1CS",
    );
}

/// A circuit of one constraint has gnark's domain N = 1 (the phase 1 cut below its smallest
/// file, 2): the initial object is gnark's bytes (it was cut to N = 2: 395 bytes against 347),
/// a chain mixed with gnark verifies on both sides, seals to gnark's keys, and proves.
#[test]
fn a_circuit_of_one_constraint_runs_on_gnark_s_domain_of_one() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert!(gnark(d, &["r1cs", "-constraints", "1", "-out", "one.r1cs"]));
    sealed_phase1(d, "1");
    let new = ok(
        d,
        &[
            "ceremony", "phase2", "new", "--r1cs", "one.r1cs", "--phase1", "srs", "--out", "q0",
        ],
    );
    assert!(new.stderr.contains("cut to 2^0"), "{}", new.stderr);
    assert!(gnark(
        d,
        &["p2init", "-r1cs", "one.r1cs", "-srs", "srs", "-out", "g0"]
    ));
    let read = |name: &str| std::fs::read(d.join(name)).unwrap();
    assert_eq!(read("q0"), read("g0"), "the initial object is gnark's");
    assert_eq!(read("q0").len(), 347);
    assert!(gnark(d, &["p2contribute", "-in", "q0", "-out", "q1"]));
    ok(
        d,
        &[
            "-q",
            "ceremony",
            "phase2",
            "contribute",
            "--in",
            "q1",
            "--out",
            "q2",
        ],
    );
    ok(
        d,
        &[
            "ceremony", "phase2", "verify", "q0", "q1", "q2", "--r1cs", "one.r1cs", "--phase1",
            "srs",
        ],
    );
    assert!(gnark(
        d,
        &[
            "p2verify", "-r1cs", "one.r1cs", "-srs", "srs", "-beacon", "00", "-pk", "gpk", "-vk",
            "gvk", "q1", "q2",
        ]
    ));
    ok(
        d,
        &[
            "-q",
            "ceremony",
            "phase2",
            "seal",
            "q1",
            "q2",
            "--r1cs",
            "one.r1cs",
            "--phase1",
            "srs",
            "--beacon",
            "00",
            "--iterations",
            "0",
            "--pk",
            "pk",
            "--vk",
            "vk",
        ],
    );
    assert_eq!(read("pk"), read("gpk"), "gnark's proving key");
    assert_eq!(read("vk"), read("gvk"), "gnark's verifying key");
    assert!(gnark(
        d,
        &[
            "prove",
            "-r1cs",
            "one.r1cs",
            "-constraints",
            "1",
            "-pk",
            "pk",
            "-x",
            "3",
            "-out",
            "proof",
            "-public",
            "public",
        ]
    ));
    let verdict = ok(
        d,
        &[
            "ceremony", "groth16", "verify", "--vk", "vk", "--proof", "proof", "--public", "public",
        ],
    );
    assert!(
        verdict.stdout.contains("ok, a valid proof"),
        "{}",
        verdict.stdout
    );
    assert!(gnark(
        d,
        &[
            "gverify", "-vk", "vk", "-proof", "proof", "-public", "public"
        ]
    ));
}

/// `phase2 seal` verifies the chain as gnark's `VerifyPhase2` does and refuses what it refuses,
/// writing nothing: a chain over another phase 1 of the same power, a chain of another circuit
/// of the same shape, and swapped Z points (it sealed all three from the last file alone, to
/// keys whose proofs both verifiers reject). gnark's form (the chain from its first
/// contribution) is taken by `seal` and `verify` alike.
#[test]
fn a_seal_refuses_what_gnark_s_verification_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fixture = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../ceremony/tests/fixtures")
            .join(name)
    };
    std::fs::copy(fixture("chain-60-commit.r1cs"), d.join("c.r1cs")).unwrap();
    std::fs::copy(fixture("chain-60-commit-variant.r1cs"), d.join("v.r1cs")).unwrap();
    let other = tempfile::tempdir().unwrap();
    sealed_phase1(other.path(), "6");
    std::fs::copy(other.path().join("srs"), d.join("other-srs")).unwrap();
    sealed_phase1(d, "6");
    // Each chain: its initial object, then two contributions.
    let chain = |prefix: &str, r1cs: &str, phase1: &str| {
        let name = |i: usize| format!("{prefix}{i}");
        ok(
            d,
            &[
                "-q",
                "ceremony",
                "phase2",
                "new",
                "--r1cs",
                r1cs,
                "--phase1",
                phase1,
                "--out",
                &name(0),
            ],
        );
        for i in 1..=2 {
            ok(
                d,
                &[
                    "-q",
                    "ceremony",
                    "phase2",
                    "contribute",
                    "--in",
                    &name(i - 1),
                    "--out",
                    &name(i),
                ],
            );
        }
    };
    chain("q", "c.r1cs", "srs");
    chain("f", "c.r1cs", "other-srs");
    chain("v", "v.r1cs", "srs");
    let mut swapped = std::fs::read(d.join("q2")).unwrap();
    let pkk = u32::from_be_bytes(swapped[50..54].try_into().unwrap()) as usize;
    let z = 54 + 48 * pkk + 4;
    let (a, b) = (z + 48 * 7, z + 48 * 8);
    let seventh: Vec<u8> = swapped[a..a + 48].to_vec();
    swapped.copy_within(b..b + 48, a);
    swapped[b..b + 48].copy_from_slice(&seventh);
    std::fs::write(d.join("swapped"), &swapped).unwrap();

    let seal = |files: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = ["ceremony", "phase2", "seal"]
            .iter()
            .map(|a| (*a).to_owned())
            .collect();
        args.extend(files.iter().map(|f| (*f).to_owned()));
        for a in [
            "--r1cs", "c.r1cs", "--phase1", "srs", "--beacon", "00", "--pk", "pk", "--vk", "vk",
        ] {
            args.push(a.to_owned());
        }
        args
    };
    let gnark_refuses = |files: &[&str], said: &str| {
        let mut args = vec![
            "p2verify", "-r1cs", "c.r1cs", "-srs", "srs", "-beacon", "00",
        ];
        args.extend(files);
        let out = Command::new(harness())
            .args(&args)
            .current_dir(d)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "gnark accepted {files:?}");
        assert!(stderr.contains(said), "gnark on {files:?}: {stderr}");
    };
    for (files, ours, theirs) in [
        (
            &["f1", "f2"][..],
            "f1: REJECTED: not made on the initial object of c.r1cs over srs",
            "the challenge does not match",
        ),
        (
            &["v1", "v2"][..],
            "v1: REJECTED: not made on the initial object of c.r1cs over srs",
            "the challenge does not match",
        ),
        (
            &["q1", "swapped"][..],
            "swapped: REJECTED: delta update: Z[7] is not its predecessor's moved",
            "failed to verify contribution to",
        ),
    ] {
        gnark_refuses(files, theirs);
        let args = seal(files);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fails(d, &args, ours);
        assert!(
            !d.join("pk").exists() && !d.join("vk").exists(),
            "{files:?}"
        );
    }
    // From the initial object: the foreign one is not this circuit's over this phase 1.
    let args = seal(&["f0", "f1", "f2"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fails(
        d,
        &args,
        "f0: REJECTED: not the initial object of c.r1cs over srs",
    );
    // The initial object alone has no contribution to seal.
    let args = seal(&["q0"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fails(d, &args, "q0: the initial object, with no contribution");
    assert!(!d.join("pk").exists() && !d.join("vk").exists());
    // The good chain in gnark's form seals, and verifies in that form too.
    ok(
        d,
        &[
            "ceremony", "phase2", "verify", "q1", "q2", "--r1cs", "c.r1cs", "--phase1", "srs",
        ],
    );
    let args = seal(&["q1", "q2"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let sealed = ok(d, &args);
    assert!(
        sealed
            .stderr
            .contains("sealed after 2 verified contribution(s)"),
        "{}",
        sealed.stderr
    );
}
