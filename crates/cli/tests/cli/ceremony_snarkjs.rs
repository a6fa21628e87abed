//! `.ptau` files both ways with snarkjs 0.7.6 and circom2 0.2.23 (installed into `peers/` by
//! `scripts/install-peers`): snarkjs's powers import and verify; our exported powers carry a
//! circom circuit through `prepare phase2`, `groth16 setup`, a proof and its verification.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{fails_with, ok};

pub(crate) fn peers() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../peers/node_modules");
    assert!(
        dir.join("snarkjs/cli.js").exists() && dir.join("circom2").exists(),
        "snarkjs and circom2 are not installed in {}: run scripts/install-peers",
        dir.display()
    );
    dir
}

/// Runs `node <script> args` in `dir`; it must succeed. Returns stdout.
pub(crate) fn node(dir: &Path, script: &Path, args: &[&str]) -> String {
    let out = Command::new("node")
        .arg(script)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "node {} {args:?} failed:\n{}\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn snarkjs(dir: &Path, args: &[&str]) -> String {
    node(dir, &peers().join("snarkjs/cli.js"), args)
}

#[test]
fn snarkjs_powers_import_and_verify_and_bad_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    snarkjs(d, &["powersoftau", "new", "bls12381", "5", "p0.ptau"]);
    snarkjs(
        d,
        &[
            "powersoftau",
            "contribute",
            "p0.ptau",
            "p1.ptau",
            "--name=one",
            "-e=first",
        ],
    );
    snarkjs(
        d,
        &[
            "powersoftau",
            "contribute",
            "p1.ptau",
            "p2.ptau",
            "--name=two",
            "-e=second",
        ],
    );
    let run = ok(
        d,
        &["ceremony", "ptau", "import", "p2.ptau", "--out", "imported"],
    );
    assert!(
        run.stderr.contains("2 snarkjs contribution(s) recorded"),
        "{}",
        run.stderr
    );
    // We contribute on the imported powers, and our verifier accepts the contribution.
    ok(
        d,
        &[
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            "imported",
            "--out",
            "next",
        ],
    );
    ok(
        d,
        &[
            "ceremony",
            "phase1",
            "verify",
            "--previous",
            "imported",
            "next",
        ],
    );
    // Export and import again: the same powers.
    ok(
        d,
        &[
            "ceremony",
            "ptau",
            "export",
            "imported",
            "--out",
            "again.ptau",
        ],
    );
    ok(
        d,
        &["ceremony", "ptau", "import", "again.ptau", "--out", "again"],
    );
    assert_eq!(
        fs::read(d.join("again")).unwrap(),
        fs::read(d.join("imported")).unwrap()
    );

    // Another curve.
    snarkjs(d, &["powersoftau", "new", "bn128", "5", "bn.ptau"]);
    fails_with(
        d,
        &["ceremony", "ptau", "import", "bn.ptau", "--out", "x"],
        1,
        "bn.ptau: the file is for another curve (n8 = 32",
    );
    // A tampered coordinate: tauG1[3]'s x, one bit (header 12 + section 1 (12 + 60) + section 2 header 12).
    let mut bytes = fs::read(d.join("p2.ptau")).unwrap();
    let at = 12 + 72 + 12 + 3 * 96 + 5;
    bytes[at] ^= 1;
    fs::write(d.join("bad.ptau"), &bytes).unwrap();
    let run = fails_with(
        d,
        &["ceremony", "ptau", "import", "bad.ptau", "--out", "x"],
        1,
        "bad.ptau: tauG1[3] at byte",
    );
    assert!(
        run.stderr.contains("not on the curve") || run.stderr.contains("subgroup"),
        "{}",
        run.stderr
    );
    // Consistent points that are not powers of one tau: tauG1[4] swapped with tauG1[5].
    let mut bytes = fs::read(d.join("p2.ptau")).unwrap();
    let (a, b) = (12 + 72 + 12 + 4 * 96, 12 + 72 + 12 + 5 * 96);
    let four = bytes[a..a + 96].to_vec();
    bytes.copy_within(b..b + 96, a);
    bytes[b..b + 96].copy_from_slice(&four);
    fs::write(d.join("swapped.ptau"), &bytes).unwrap();
    fails_with(
        d,
        &["ceremony", "ptau", "import", "swapped.ptau", "--out", "x"],
        1,
        "swapped.ptau: REJECTED: powers of tau: G1 Tau[4] breaks the ratio",
    );
    // Truncated.
    fs::write(
        d.join("short.ptau"),
        &fs::read(d.join("p2.ptau")).unwrap()[..5000],
    )
    .unwrap();
    fails_with(
        d,
        &["ceremony", "ptau", "import", "short.ptau", "--out", "x"],
        1,
        "short.ptau: section 2 at byte",
    );
    assert!(!d.join("x").exists());
}

#[test]
fn our_powers_take_a_circom_circuit_through_snarkjs_groth16() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    crate::ceremony::chain(d, 6, 2);
    ok(
        d,
        &[
            "ceremony",
            "phase1",
            "seal",
            "--in",
            "c2",
            "--beacon",
            "0123456789abcdef",
            "--out",
            "srs",
        ],
    );
    ok(
        d,
        &["ceremony", "ptau", "export", "srs", "--out", "final.ptau"],
    );
    snarkjs(
        d,
        &[
            "powersoftau",
            "prepare",
            "phase2",
            "final.ptau",
            "final2.ptau",
        ],
    );

    fs::write(
        d.join("cube.circom"),
        "pragma circom 2.0.0;\n\
         template Cube() {\n  signal input x;\n  signal input k;\n  signal output y;\n  signal sq;\n  \
         sq <== x * x;\n  y <== sq * x + k;\n}\n\
         component main {public [k]} = Cube();\n",
    )
    .unwrap();
    let circom = peers().join("circom2/cli.js");
    node(
        d,
        &circom,
        &[
            "cube.circom",
            "--r1cs",
            "--wasm",
            "--prime",
            "bls12381",
            "-o",
            ".",
        ],
    );
    snarkjs(
        d,
        &["groth16", "setup", "cube.r1cs", "final2.ptau", "cube.zkey"],
    );
    snarkjs(
        d,
        &["zkey", "export", "verificationkey", "cube.zkey", "vk.json"],
    );
    fs::write(d.join("input.json"), r#"{"x": "3", "k": "5"}"#).unwrap();
    snarkjs(
        d,
        &[
            "wtns",
            "calculate",
            "cube_js/cube.wasm",
            "input.json",
            "w.wtns",
        ],
    );
    snarkjs(
        d,
        &[
            "groth16",
            "prove",
            "cube.zkey",
            "w.wtns",
            "proof.json",
            "public.json",
        ],
    );
    let public = fs::read_to_string(d.join("public.json")).unwrap();
    assert!(
        public.contains("\"32\"") && public.contains("\"5\""),
        "{public}"
    );
    let verdict = snarkjs(
        d,
        &["groth16", "verify", "vk.json", "public.json", "proof.json"],
    );
    assert!(verdict.contains("OK!"), "{verdict}");
    // A wrong public output does not verify.
    fs::write(d.join("public.json"), public.replace("\"32\"", "\"33\"")).unwrap();
    let out = Command::new("node")
        .arg(peers().join("snarkjs/cli.js"))
        .args(["groth16", "verify", "vk.json", "public.json", "proof.json"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("OK!"));
    // circom's and snarkjs's files given where gnark's are read are named, not misread.
    for (args, said) in [
        (
            &[
                "ceremony",
                "phase2",
                "new",
                "--r1cs",
                "cube.r1cs",
                "--phase1",
                "srs",
                "--out",
                "x",
            ][..],
            "cube.r1cs is a circom .r1cs file, not a gnark R1CS",
        ),
        (
            &[
                "ceremony",
                "phase2",
                "contribute",
                "--in",
                "cube.zkey",
                "--out",
                "x",
            ],
            "cube.zkey is a snarkjs .zkey file, not a phase 2 object",
        ),
        (
            &[
                "ceremony",
                "groth16",
                "verify",
                "--vk",
                "vk.json",
                "--proof",
                "proof.json",
                "--public",
                "w.wtns",
            ],
            "w.wtns is a circom .wtns witness, not snarkjs's JSON",
        ),
        (
            &["ceremony", "ptau", "export", "w.wtns", "--out", "x"],
            "w.wtns is a circom .wtns witness",
        ),
    ] {
        crate::fails(d, args, said);
        assert!(!d.join("x").exists());
    }
}
