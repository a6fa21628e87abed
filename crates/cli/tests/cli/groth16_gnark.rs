//! `lockstep groth16 prove --pk` through the binary: gnark's circuits (the harness in
//! `interop/gnark/`: the chain circuit, the same with a BSB22 commitment, the gadgets circuit of
//! hints and divisions), keys from gnark's `groth16.Setup`, gnark's witnesses; our proofs
//! accepted by gnark's `groth16.Verify` and ours; the refusals named, nothing written.

use std::path::Path;
use std::process::Command;

use crate::gnark::harness;
use crate::{fails, ok};

fn gnark(d: &Path, args: &[&str]) -> bool {
    Command::new(harness())
        .args(args)
        .current_dir(d)
        .output()
        .expect("the harness runs")
        .status
        .success()
}

/// `NAME.r1cs`, `NAME.pk`, `NAME.vk`, and the witness of X = `x` as `NAME-X.wit` and
/// `NAME-X.pub`, for the harness's circuit of `flags`.
fn circuit(d: &Path, name: &str, flags: &[&str], xs: &[&str]) {
    let r1cs = format!("{name}.r1cs");
    let with = |args: &[&str]| assert!(gnark(d, &[args, flags].concat()), "{args:?}");
    with(&["r1cs", "-out", &r1cs]);
    assert!(gnark(
        d,
        &[
            "setup",
            "-r1cs",
            &r1cs,
            "-pk",
            &format!("{name}.pk"),
            "-vk",
            &format!("{name}.vk")
        ]
    ));
    for x in xs {
        with(&[
            "witness",
            "-x",
            x,
            "-out",
            &format!("{name}-{x}.wit"),
            "-public",
            &format!("{name}-{x}.pub"),
        ]);
    }
}

fn prove_args(files: &[String; 4]) -> Vec<&str> {
    vec![
        "groth16",
        "prove",
        "--pk",
        &files[0],
        "--r1cs",
        &files[1],
        "--witness",
        &files[2],
        "--proof",
        "proof",
        "--public",
        "public",
        "--vk",
        &files[3],
    ]
}

#[test]
fn gnark_circuits_prove_and_verify_on_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let shapes: [(&str, &[&str]); 3] = [
        ("chain", &["-constraints", "500"]),
        ("commit", &["-constraints", "500", "-commit"]),
        ("gadgets", &["-constraints", "700", "-gadgets"]),
    ];
    for (name, flags) in shapes {
        circuit(d, name, flags, &["5", "6"]);
        let files = [
            format!("{name}.pk"),
            format!("{name}.r1cs"),
            format!("{name}-5.wit"),
            format!("{name}.vk"),
        ];
        for workers in ["1", "2"] {
            let run = ok(
                d,
                &[&["--workers", workers][..], &prove_args(&files)].concat(),
            );
            assert!(
                run.stdout
                    .contains("the proof verified under the verifying key"),
                "{name}: {}",
                run.stdout
            );
            assert_eq!(
                std::fs::read(d.join("public")).unwrap(),
                std::fs::read(d.join(format!("{name}-5.pub"))).unwrap(),
                "{name}: our public witness is gnark's"
            );
            let vk = format!("{name}.vk");
            assert!(
                gnark(
                    d,
                    &[
                        "gverify", "-vk", &vk, "-proof", "proof", "-public", "public"
                    ]
                ),
                "{name}: gnark refuses our proof"
            );
            ok(
                d,
                &[
                    "groth16", "verify", "--vk", &vk, "--proof", "proof", "--public", "public",
                ],
            );
            let wrong = format!("{name}-6.pub");
            assert!(
                !gnark(
                    d,
                    &["gverify", "-vk", &vk, "-proof", "proof", "-public", &wrong]
                ),
                "{name}: gnark accepts a wrong public input"
            );
            fails(
                d,
                &[
                    "groth16", "verify", "--vk", &vk, "--proof", "proof", "--public", &wrong,
                ],
                "REJECTED",
            );
        }
    }
}

#[test]
fn a_prepared_key_proves_here_and_in_gnark() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    circuit(d, "commit", &["-constraints", "200", "-commit"], &["5"]);
    let run = ok(
        d,
        &[
            "groth16",
            "prepare",
            "--pk",
            "commit.pk",
            "--out",
            "commit.raw",
        ],
    );
    assert!(
        run.stdout
            .starts_with("prepared: 210 wires, every point checked in its subgroup, written uncompressed; sha256 "),
        "{}",
        run.stdout
    );
    // Uncompressed: about twice gnark's bytes.
    let (raw, pk) = (
        std::fs::metadata(d.join("commit.raw")).unwrap().len(),
        std::fs::metadata(d.join("commit.pk")).unwrap().len(),
    );
    assert!(raw > 3 * pk / 2, "{raw} against {pk}");
    // gnark proves with it (its ReadFrom reads the raw layout)...
    assert!(gnark(
        d,
        &[
            "prove",
            "-r1cs",
            "commit.r1cs",
            "-constraints",
            "200",
            "-pk",
            "commit.raw",
            "-x",
            "5",
            "-out",
            "theirs",
            "-public",
            "theirs.public",
        ]
    ));
    assert!(gnark(
        d,
        &[
            "gverify",
            "-vk",
            "commit.vk",
            "-proof",
            "theirs",
            "-public",
            "theirs.public"
        ]
    ));
    // ... and so do we.
    let files = [
        "commit.raw".to_owned(),
        "commit.r1cs".to_owned(),
        "commit-5.wit".to_owned(),
        "commit.vk".to_owned(),
    ];
    ok(d, &prove_args(&files));
    assert!(gnark(
        d,
        &[
            "gverify",
            "-vk",
            "commit.vk",
            "-proof",
            "proof",
            "-public",
            "public"
        ]
    ));
    // Trusted (its points on their curves only, the proof's in their subgroups): the same.
    ok(d, &[&prove_args(&files)[..], &["--trust-key"]].concat());
    assert!(gnark(
        d,
        &[
            "gverify",
            "-vk",
            "commit.vk",
            "-proof",
            "proof",
            "-public",
            "public"
        ]
    ));
    // A prepared key is not prepared again over itself.
    crate::fails_with(
        d,
        &[
            "groth16",
            "prepare",
            "--pk",
            "commit.raw",
            "--out",
            "commit.raw",
        ],
        2,
        "--out commit.raw is the same file as --pk commit.raw: an output never replaces an input (nothing was written)",
    );
}

#[test]
fn bad_witnesses_and_keys_are_named_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    circuit(d, "chain", &["-constraints", "300"], &["5"]);
    circuit(d, "gadgets", &["-constraints", "400", "-gadgets"], &["5"]);
    // The gadgets with a hint of the circuit's own (gnark's solver runs it once registered).
    circuit(
        d,
        "custom",
        &["-constraints", "400", "-gadgets", "-customhint"],
        &["5"],
    );
    // The same shape, other coefficients: its witness solves the chain's wires, and breaks
    // the last constraint, Y == acc.
    assert!(gnark(
        d,
        &[
            "witness",
            "-constraints",
            "300",
            "-variant",
            "-x",
            "5",
            "-out",
            "variant.wit",
            "-public",
            "variant.pub",
        ]
    ));
    let run = |pk: &str, r1cs: &str, witness: &str, message: &str| {
        fails(
            d,
            &[
                "groth16",
                "prove",
                "--pk",
                pk,
                "--r1cs",
                r1cs,
                "--witness",
                witness,
                "--proof",
                "proof",
                "--public",
                "public",
            ],
            message,
        );
        assert!(!d.join("proof").exists() && !d.join("public").exists());
    };
    run(
        "chain.pk",
        "chain.r1cs",
        "variant.wit",
        "constraint 296 of 297 does not hold",
    );
    run(
        "custom.pk",
        "custom.r1cs",
        "custom-5.wit",
        "calls main.doubleHint (id 0x4be6b36e): not a hint lockstep's solver runs",
    );
    run(
        "chain.pk",
        "chain.r1cs",
        "gadgets-5.wit",
        "the witness holds 2 public and 2 secret values; the circuit takes 2 and 8: a witness of another circuit?",
    );
    run(
        "gadgets.pk",
        "chain.r1cs",
        "chain-5.wit",
        "a key of another circuit",
    );
    run(
        "chain.pk",
        "chain.r1cs",
        "chain-5.pub",
        "is a public witness, not a gnark witness",
    );
    run(
        "chain.vk",
        "chain.r1cs",
        "chain-5.wit",
        "is a Groth16 verifying key",
    );
    // A verifying key of another setup of the same circuit.
    assert!(gnark(
        d,
        &[
            "setup",
            "-r1cs",
            "chain.r1cs",
            "-pk",
            "other.pk",
            "-vk",
            "other.vk"
        ]
    ));
    fails(
        d,
        &[
            "groth16",
            "prove",
            "--pk",
            "chain.pk",
            "--r1cs",
            "chain.r1cs",
            "--witness",
            "chain-5.wit",
            "--proof",
            "proof",
            "--public",
            "public",
            "--vk",
            "other.vk",
        ],
        "the proof does not verify under other.vk",
    );
    assert!(!d.join("proof").exists());
    crate::fails_with(
        d,
        &[
            "groth16",
            "prove",
            "--pk",
            "chain.pk",
            "--witness",
            "chain-5.wit",
            "--proof",
            "p",
            "--public",
            "q",
        ],
        2,
        "the following required arguments were not provided:\n  --r1cs <FILE>",
    );
}
