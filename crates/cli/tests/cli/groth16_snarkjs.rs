//! `lockstep groth16 prove` against snarkjs 0.7.6 and circom2 0.2.23 (in `peers/`): circom
//! circuits of four shapes compiled for BLS12-381, keys from `zkey new` on a lockstep chain,
//! witnesses from `snarkjs wtns calculate`; our proofs are accepted by `snarkjs groth16 verify`
//! at 1 and 2 workers, a wrong public signal is refused by it, and a witness that does not
//! satisfy the circuit, one of another circuit, or a file of another kind is refused by name
//! with nothing written.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::ceremony_snarkjs::{peers, snarkjs};
use crate::ceremony_zkey::{CUBE, LINEAR, MANY_PUBLIC, compile};
use crate::{fails, ok};

/// A chain of 400 products (a domain of 2^9, 2^12 points of MSM: two workers run them).
const LONG: &str = "pragma circom 2.0.0;
template Long(n) {
  signal input x;
  signal input k;
  signal output out;
  signal acc[n];
  acc[0] <== x * x;
  for (var i = 1; i < n; i++) { acc[i] <== acc[i-1] * x + k; }
  out <== acc[n-1];
}
component main {public [k]} = Long(400);
";

/// `snarkjs groth16 verify`'s verdict: whether it printed `OK!`.
fn snarkjs_accepts(d: &Path, vk: &str, public: &str, proof: &str) -> bool {
    let out = Command::new("node")
        .arg(peers().join("snarkjs/cli.js"))
        .args(["groth16", "verify", vk, public, proof])
        .current_dir(d)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).contains("OK!")
}

#[test]
fn our_proofs_of_circom_circuits_are_accepted_by_snarkjs_and_bad_witnesses_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    crate::ceremony::chain(d, 10, 1);
    ok(
        d,
        &["ceremony", "ptau", "export", "c1", "--out", "raw.ptau"],
    );
    ok(
        d,
        &[
            "ceremony",
            "ptau",
            "prepare",
            "raw.ptau",
            "--out",
            "final.ptau",
        ],
    );
    let circuits = [
        ("cube", CUBE, r#"{"x": "3", "k": "5"}"#, &[][..]),
        (
            "many",
            MANY_PUBLIC,
            r#"{"a": ["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17","18","19","20","21","22","23","24"],
                "b": ["0","1","0","1","7","8","9","10","11","12","13","14","15","16","17","18","19","20","21","22","23","24","25","26"]}"#,
            &[][..],
        ),
        ("linear", LINEAR, r#"{"x": "2", "y": "11"}"#, &["--O0"][..]),
        ("long", LONG, r#"{"x": "7", "k": "3"}"#, &[][..]),
    ];
    for (name, source, input, flags) in circuits {
        compile(d, name, source, flags);
        let zkey = format!("{name}.zkey");
        let vk = format!("{name}-vk.json");
        ok(
            d,
            &[
                "ceremony",
                "zkey",
                "new",
                &format!("{name}.r1cs"),
                "final.ptau",
                "--out",
                &zkey,
            ],
        );
        ok(d, &["ceremony", "zkey", "export-vkey", &zkey, "--out", &vk]);
        fs::write(d.join(format!("{name}.json")), input).unwrap();
        let wtns = format!("{name}.wtns");
        snarkjs(
            d,
            &[
                "wtns",
                "calculate",
                &format!("{name}_js/{name}.wasm"),
                &format!("{name}.json"),
                &wtns,
            ],
        );
        for workers in ["1", "2"] {
            let (proof, public) = (
                format!("{name}-{workers}-proof.json"),
                format!("{name}-{workers}-public.json"),
            );
            // The key read in full (the default) at one worker, trusted (sections 5-9 on their
            // curves only) at two: the same proof's checks either way.
            let trust: &[&str] = if workers == "2" {
                &["--trust-key"]
            } else {
                &[]
            };
            let run = ok(
                d,
                &[
                    &[
                        "--workers",
                        workers,
                        "groth16",
                        "prove",
                        "--zkey",
                        &zkey,
                        "--witness",
                        &wtns,
                        "--proof",
                        &proof,
                        "--public",
                        &public,
                    ][..],
                    trust,
                ]
                .concat(),
            );
            assert!(run.stdout.starts_with("proved: "), "{}", run.stdout);
            if name == "long" {
                assert!(
                    run.stderr.contains(&crate::ran_on(workers)),
                    "{}",
                    run.stderr
                );
            }
            assert!(
                snarkjs_accepts(d, &vk, &public, &proof),
                "{name} at {workers} workers: snarkjs refused our proof"
            );
        }
        // snarkjs's own public.json for the same witness is ours.
        snarkjs(
            d,
            &[
                "groth16",
                "prove",
                &zkey,
                &wtns,
                "theirs-proof.json",
                "theirs-public.json",
            ],
        );
        assert_eq!(
            fs::read_to_string(d.join(format!("{name}-1-public.json"))).unwrap(),
            fs::read_to_string(d.join("theirs-public.json")).unwrap(),
            "{name}: public.json"
        );
        // Our verifier accepts snarkjs's proof and ours.
        for (proof, public) in [
            (
                "theirs-proof.json".to_owned(),
                "theirs-public.json".to_owned(),
            ),
            (
                format!("{name}-2-proof.json"),
                format!("{name}-2-public.json"),
            ),
        ] {
            let run = ok(
                d,
                &[
                    "groth16", "verify", "--vk", &vk, "--proof", &proof, "--public", &public,
                ],
            );
            assert!(run.stdout.contains(": ok, a valid proof"), "{}", run.stdout);
        }
    }
    // A wrong public signal: snarkjs refuses our proof for it.
    let public = fs::read_to_string(d.join("cube-1-public.json")).unwrap();
    fs::write(d.join("wrong.json"), public.replace("\"32\"", "\"33\"")).unwrap();
    assert!(public.contains("\"32\""), "{public}");
    assert!(!snarkjs_accepts(
        d,
        "cube-vk.json",
        "wrong.json",
        "cube-1-proof.json"
    ));

    // A witness that does not satisfy the circuit (sq changed): refused, nothing written.
    let mut wtns = fs::read(d.join("cube.wtns")).unwrap();
    let last = wtns.len() - 32;
    wtns[last] ^= 1;
    fs::write(d.join("bad.wtns"), &wtns).unwrap();
    let prove = |zkey: &str, witness: &str| {
        vec![
            "groth16".to_owned(),
            "prove".to_owned(),
            "--zkey".to_owned(),
            zkey.to_owned(),
            "--witness".to_owned(),
            witness.to_owned(),
            "--proof".to_owned(),
            "out-proof.json".to_owned(),
            "--public".to_owned(),
            "out-public.json".to_owned(),
        ]
    };
    let args = prove("cube.zkey", "bad.wtns");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fails(
        d,
        &args,
        "the proof made from this witness does not verify under the key: the witness does not satisfy the key's circuit",
    );
    assert!(!d.join("out-proof.json").exists() && !d.join("out-public.json").exists());
    // With the circuit given, the first constraint it breaks is named (sq = x * x).
    let mut args = prove("cube.zkey", "bad.wtns");
    args.extend(["--r1cs".to_owned(), "cube.r1cs".to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fails(
        d,
        &args,
        "bad.wtns against cube.r1cs: constraint 0 of 2 does not hold for this witness",
    );
    assert!(!d.join("out-proof.json").exists() && !d.join("out-public.json").exists());
    // A witness of another circuit.
    let args = prove("cube.zkey", "linear.wtns");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fails(
        d,
        &args,
        "the key's circuit has 5 wires: a witness of another circuit",
    );
    // Files of another kind, named before anything is read.
    let args = prove("cube.zkey", "cube.r1cs");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fails(
        d,
        &args,
        "cube.r1cs is a circom .r1cs file, not a circom .wtns witness",
    );
    let args = prove("cube.wtns", "cube.wtns");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fails(
        d,
        &args,
        "cube.wtns is a circom .wtns witness, not a snarkjs .zkey",
    );
    assert!(!d.join("out-proof.json").exists() && !d.join("out-public.json").exists());
}
