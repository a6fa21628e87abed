//! snarkjs's phase 2 on BLS12-381 against snarkjs 0.7.6 and circom2 0.2.23 themselves (in
//! `peers/`, `scripts/install-peers`): `ptau prepare` and `zkey new` are snarkjs's bytes at every
//! worker count, for powers from snarkjs and from lockstep, for circuits of three shapes; a chain
//! mixing snarkjs's contributions and ours verifies in both, our beacon is snarkjs's, our
//! verification key is snarkjs's, snarkjs proves with the final key; bad keys are refused with
//! their check named and nothing written.

use std::fs;
use std::path::Path;

use crate::ceremony_snarkjs::{node, peers, snarkjs};
use crate::{fails, ok};

/// A circuit of `n` products with its `a` inputs public: 2n public signals, n constraints.
pub(crate) const MANY_PUBLIC: &str = "pragma circom 2.0.0;
template ManyPublic(n) {
  signal input a[n];
  signal input b[n];
  signal output out[n];
  for (var i = 0; i < n; i++) { out[i] <== a[i] * b[i]; }
}
component main {public [a]} = ManyPublic(24);
";

/// A chain of linear steps (kept by `--O0`): one product, 300 linear constraints whose
/// coefficients are small and r - 1.
pub(crate) const LINEAR: &str = "pragma circom 2.0.0;
template Linear(n) {
  signal input x;
  signal input y;
  signal output out;
  signal acc[n];
  acc[0] <== x * y;
  for (var i = 1; i < n; i++) { acc[i] <== acc[i-1] * 3 + x + i; }
  out <== acc[n-1] + y;
}
component main = Linear(300);
";

/// Two constraints.
pub(crate) const CUBE: &str = "pragma circom 2.0.0;
template Cube() {
  signal input x;
  signal input k;
  signal output y;
  signal sq;
  sq <== x * x;
  y <== sq * x + k;
}
component main {public [k]} = Cube();
";

/// Compiles `source` as `name.circom` for BLS12-381 (with `extra` flags), with its witness
/// generator.
pub(crate) fn compile(d: &Path, name: &str, source: &str, extra: &[&str]) {
    fs::write(d.join(format!("{name}.circom")), source).unwrap();
    let file = format!("{name}.circom");
    let mut args = vec![
        file.as_str(),
        "--r1cs",
        "--wasm",
        "--prime",
        "bls12381",
        "-o",
        ".",
    ];
    args.extend(extra);
    node(d, &peers().join("circom2/cli.js"), &args);
}

/// snarkjs's log lines without their colours and prefix.
fn plain(log: &str) -> Vec<String> {
    log.lines()
        .map(|l| {
            let mut out = String::new();
            let mut chars = l.chars();
            while let Some(c) = chars.next() {
                if c == '\u{1b}' {
                    for c in chars.by_ref() {
                        if c == 'm' {
                            break;
                        }
                    }
                } else {
                    out.push(c);
                }
            }
            out.trim_start_matches("[INFO]  snarkJS: ").to_owned()
        })
        .collect()
}

fn same(d: &Path, ours: &str, theirs: &str) {
    assert!(
        fs::read(d.join(ours)).unwrap() == fs::read(d.join(theirs)).unwrap(),
        "{ours} differs from snarkjs's {theirs}"
    );
}

#[test]
fn prepare_and_zkey_new_are_snarkjs_s_bytes_at_every_worker_count() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Powers of 2^9 from snarkjs, and from a lockstep chain exported as a .ptau.
    snarkjs(d, &["powersoftau", "new", "bls12381", "9", "s0.ptau"]);
    snarkjs(
        d,
        &[
            "powersoftau",
            "contribute",
            "s0.ptau",
            "s.ptau",
            "--name=one",
            "-e=entropy",
        ],
    );
    crate::ceremony::chain(d, 9, 1);
    ok(d, &["ceremony", "ptau", "export", "c1", "--out", "l.ptau"]);
    compile(d, "many", MANY_PUBLIC, &[]);
    compile(d, "linear", LINEAR, &["--O0"]);
    compile(d, "cube", CUBE, &[]);
    // `r1cs info`: our reading of the header is snarkjs's.
    for circuit in ["many", "linear", "cube"] {
        let theirs = plain(&snarkjs(d, &["r1cs", "info", &format!("{circuit}.r1cs")]));
        let ours = ok(d, &["ceremony", "info", &format!("{circuit}.r1cs")]).stdout;
        for line in theirs
            .iter()
            .filter(|l| l.starts_with("Curve") || l.starts_with('#'))
        {
            assert!(
                ours.lines().any(|l| l == line),
                "{circuit}: {line:?} not in {ours}"
            );
        }
    }
    for powers in ["s", "l"] {
        snarkjs(
            d,
            &[
                "powersoftau",
                "prepare",
                "phase2",
                &format!("{powers}.ptau"),
                &format!("{powers}-theirs.ptau"),
            ],
        );
        for workers in ["1", "2", "3", "5"] {
            let prepared = format!("{powers}-{workers}.ptau");
            let run = ok(
                d,
                &[
                    "--workers",
                    workers,
                    "ceremony",
                    "ptau",
                    "prepare",
                    &format!("{powers}.ptau"),
                    "--out",
                    &prepared,
                ],
            );
            assert!(
                run.stderr.contains(&crate::ran_on(workers)),
                "{}",
                run.stderr
            );
            same(d, &prepared, &format!("{powers}-theirs.ptau"));
            fs::remove_file(d.join(&prepared)).unwrap();
        }
        for circuit in ["many", "linear", "cube"] {
            let theirs = format!("{circuit}-{powers}-theirs.zkey");
            let log = snarkjs(
                d,
                &[
                    "groth16",
                    "setup",
                    &format!("{circuit}.r1cs"),
                    &format!("{powers}-theirs.ptau"),
                    &theirs,
                ],
            );
            for (workers, ptau) in [
                ("1", format!("{powers}-theirs.ptau")),
                ("2", format!("{powers}-theirs.ptau")),
                ("3", format!("{powers}.ptau")),
                ("5", format!("{powers}-theirs.ptau")),
            ] {
                let ours = format!("{circuit}-{powers}-{workers}.zkey");
                let run = ok(
                    d,
                    &[
                        "--workers",
                        workers,
                        "ceremony",
                        "zkey",
                        "new",
                        &format!("{circuit}.r1cs"),
                        &ptau,
                        "--out",
                        &ours,
                    ],
                );
                same(d, &ours, &theirs);
                // The circuit hash printed as snarkjs prints it.
                let hash: Vec<&str> = run.stdout.lines().skip(1).take(4).collect();
                let logged = plain(&log);
                assert!(
                    hash.iter().all(|l| logged.iter().any(|m| m == l)),
                    "{:?} not in {logged:?}",
                    hash
                );
            }
        }
    }
}

/// Moves contribution records around in a `.zkey`'s section 10 (`keep` lists the records
/// kept, in order), fixing the counts: a chain with a contribution skipped or reordered.
fn rewrite_contributions(bytes: &[u8], keep: &[usize]) -> Vec<u8> {
    let (at, size) = section(bytes, 10);
    let body = &bytes[at..at + size];
    let count = u32::from_le_bytes(body[64..68].try_into().unwrap()) as usize;
    let mut records = Vec::new();
    let mut p = 68;
    for _ in 0..count {
        // Points and transcript (544 bytes), type, parameter length, parameters.
        let params = u32::from_le_bytes(body[p + 548..p + 552].try_into().unwrap()) as usize;
        records.push(&body[p..p + 552 + params]);
        p += 552 + params;
    }
    let mut new_body = body[..64].to_vec();
    new_body.extend(u32::try_from(keep.len()).unwrap().to_le_bytes());
    for &k in keep {
        new_body.extend(records[k]);
    }
    let mut out = bytes[..at - 8].to_vec();
    out.extend((new_body.len() as u64).to_le_bytes());
    out.extend(&new_body);
    out.extend(&bytes[at + size..]);
    out
}

/// Section `id`'s body: its offset and size.
fn section(bytes: &[u8], id: u32) -> (usize, usize) {
    let mut p = 12;
    while p < bytes.len() {
        let sid = u32::from_le_bytes(bytes[p..p + 4].try_into().unwrap());
        let size = u64::from_le_bytes(bytes[p + 4..p + 12].try_into().unwrap()) as usize;
        if sid == id {
            return (p + 12, size);
        }
        p += 12 + size;
    }
    panic!("no section {id}");
}

/// Swaps the first two different points (of `width` bytes) of section `id`.
fn swap_points(bytes: &[u8], id: u32, width: usize) -> Vec<u8> {
    let (at, size) = section(bytes, id);
    let mut out = bytes.to_vec();
    let points = size / width;
    let first = &bytes[at..at + width];
    let other = (1..points)
        .find(|&i| &bytes[at + i * width..at + (i + 1) * width] != first)
        .expect("two different points");
    let (a, b) = (at, at + other * width);
    let saved = out[a..a + width].to_vec();
    out.copy_within(b..b + width, a);
    out[b..b + width].copy_from_slice(&saved);
    out
}

#[test]
fn a_chain_with_snarkjs_verifies_in_both_and_proves_and_bad_keys_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    snarkjs(d, &["powersoftau", "new", "bls12381", "8", "p0.ptau"]);
    snarkjs(
        d,
        &[
            "powersoftau",
            "contribute",
            "p0.ptau",
            "p.ptau",
            "--name=one",
            "-e=x",
        ],
    );
    ok(
        d,
        &["ceremony", "ptau", "prepare", "p.ptau", "--out", "pp.ptau"],
    );
    compile(d, "many", MANY_PUBLIC, &[]);
    compile(d, "cube", CUBE, &[]);
    ok(
        d,
        &[
            "ceremony",
            "zkey",
            "new",
            "many.r1cs",
            "pp.ptau",
            "--out",
            "k0.zkey",
        ],
    );
    // snarkjs, ours, snarkjs, ours, then the beacon: ours and snarkjs's on the same key.
    snarkjs(
        d,
        &[
            "zkey",
            "contribute",
            "k0.zkey",
            "k1.zkey",
            "--name=alice",
            "-e=a",
        ],
    );
    let run = ok(
        d,
        &[
            "ceremony",
            "zkey",
            "contribute",
            "--in",
            "k1.zkey",
            "--out",
            "k2.zkey",
            "--name",
            "bob",
            "--entropy",
            "b",
        ],
    );
    assert!(
        run.stdout.starts_with("Circuit Hash: \n\t\t"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Contribution Hash: \n\t\t"),
        "{}",
        run.stdout
    );
    snarkjs(
        d,
        &[
            "zkey",
            "contribute",
            "k2.zkey",
            "k3.zkey",
            "--name=carol",
            "-e=c",
        ],
    );
    ok(
        d,
        &[
            "ceremony",
            "zkey",
            "contribute",
            "--in",
            "k3.zkey",
            "--out",
            "k4.zkey",
        ],
    );
    let beacon = "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    ok(
        d,
        &[
            "ceremony",
            "zkey",
            "beacon",
            "--in",
            "k4.zkey",
            "--out",
            "final.zkey",
            "--beacon",
            beacon,
            "--exp",
            "10",
            "--name",
            "final",
        ],
    );
    snarkjs(
        d,
        &[
            "zkey",
            "beacon",
            "k4.zkey",
            "theirs.zkey",
            beacon,
            "10",
            "-n=final",
        ],
    );
    same(d, "final.zkey", "theirs.zkey");
    let theirs = snarkjs(d, &["zkey", "verify", "many.r1cs", "pp.ptau", "final.zkey"]);
    assert!(theirs.contains("ZKey Ok!"), "{theirs}");
    let ours = ok(
        d,
        &[
            "ceremony",
            "zkey",
            "verify",
            "many.r1cs",
            "p.ptau",
            "final.zkey",
        ],
    )
    .stdout;
    assert!(ours.ends_with("ZKey Ok!\n"), "{ours}");
    // The contribution hashes we print are snarkjs's.
    let logged = plain(&theirs);
    for line in ours.lines().filter(|l| l.starts_with("\t\t")) {
        assert!(
            logged.iter().any(|m| m == line),
            "{line:?} not in snarkjs's {logged:?}"
        );
    }
    for name in ["#1 alice:", "#2 bob:", "#3 carol:", "#4 :", "#5 final:"] {
        assert!(ours.contains(&format!("contribution {name}")), "{ours}");
    }
    // The verification key, byte for byte; snarkjs proves with the final key and accepts
    // with ours, and refuses a wrong public signal.
    ok(
        d,
        &[
            "ceremony",
            "zkey",
            "export-vkey",
            "final.zkey",
            "--out",
            "vk.json",
        ],
    );
    snarkjs(
        d,
        &[
            "zkey",
            "export",
            "verificationkey",
            "final.zkey",
            "vk-theirs.json",
        ],
    );
    same(d, "vk.json", "vk-theirs.json");
    let a: Vec<String> = (1..=24).map(|i| format!("\"{i}\"")).collect();
    let b: Vec<String> = (1..=24).map(|i| format!("\"{}\"", 100 + i)).collect();
    fs::write(
        d.join("input.json"),
        format!("{{\"a\": [{}], \"b\": [{}]}}", a.join(","), b.join(",")),
    )
    .unwrap();
    snarkjs(
        d,
        &[
            "wtns",
            "calculate",
            "many_js/many.wasm",
            "input.json",
            "w.wtns",
        ],
    );
    let info = ok(d, &["ceremony", "info", "w.wtns"]).stdout;
    assert!(info.contains("values: "), "{info}");
    snarkjs(
        d,
        &[
            "groth16",
            "prove",
            "final.zkey",
            "w.wtns",
            "proof.json",
            "public.json",
        ],
    );
    let verdict = snarkjs(
        d,
        &["groth16", "verify", "vk.json", "public.json", "proof.json"],
    );
    assert!(verdict.contains("OK!"), "{verdict}");
    let public = fs::read_to_string(d.join("public.json")).unwrap();
    fs::write(
        d.join("public.json"),
        public.replacen("\"101\"", "\"102\"", 1),
    )
    .unwrap();
    let out = std::process::Command::new("node")
        .arg(peers().join("snarkjs/cli.js"))
        .args(["groth16", "verify", "vk.json", "public.json", "proof.json"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("OK!"));

    // Refusals, each named, nothing written.
    let refused = |file: &str, bytes: &[u8], said: &str| {
        fs::write(d.join(file), bytes).unwrap();
        let run = fails(
            d,
            &["ceremony", "zkey", "verify", "many.r1cs", "p.ptau", file],
            said,
        );
        assert!(!run.stdout.contains("ZKey Ok!"));
    };
    let good = fs::read(d.join("k4.zkey")).unwrap();
    // Another circuit's key.
    ok(
        d,
        &[
            "ceremony",
            "zkey",
            "new",
            "cube.r1cs",
            "pp.ptau",
            "--out",
            "cube.zkey",
        ],
    );
    fails(
        d,
        &[
            "ceremony",
            "zkey",
            "verify",
            "many.r1cs",
            "p.ptau",
            "cube.zkey",
        ],
        "REJECTED: the key is for another circuit",
    );
    // A contribution skipped (bob's), and two reordered.
    refused(
        "skipped.zkey",
        &rewrite_contributions(&good, &[0, 2, 3]),
        "REJECTED: contribution #2 (carol): its transcript is not the hash",
    );
    refused(
        "reordered.zkey",
        &rewrite_contributions(&good, &[1, 0, 2, 3]),
        "REJECTED: contribution #1 (bob): its transcript",
    );
    // A transcript byte changed.
    let mut bad = good.clone();
    let (at, _) = section(&bad, 10);
    bad[at + 68 + 480] ^= 1;
    refused(
        "transcript.zkey",
        &bad,
        "REJECTED: contribution #1 (alice): its transcript",
    );
    // A point moved in each of sections 3 and 5 to 9, an entry changed in section 4.
    for (id, width, said) in [
        (3, 96, "section 3 (IC): point 0 is not the initial key's"),
        (5, 96, "section 5 (A): point "),
        (6, 96, "section 6 (B1): point "),
        (7, 192, "section 7 (B2): point "),
        (
            8,
            96,
            "section 8 (C): point 0 is not the initial key's divided by delta",
        ),
        (
            9,
            96,
            "section 9 (H): point 0 is not the initial key's divided by delta",
        ),
    ] {
        refused(&format!("s{id}.zkey"), &swap_points(&good, id, width), said);
    }
    let mut bad = good.clone();
    let (at, _) = section(&bad, 4);
    bad[at + 4 + 12] ^= 1;
    refused(
        "s4.zkey",
        &bad,
        "section 4 (coefficients): entry 0 is not the initial key's",
    );
    // Truncated, trailing bytes.
    refused(
        "short.zkey",
        &good[..good.len() - 10],
        "runs past the end of the file",
    );
    let mut long = good.clone();
    long.push(0);
    refused("long.zkey", &long, "trailing bytes");
    // Powers too small, a BN254 circuit and key, a point off the curve: nothing written.
    snarkjs(d, &["powersoftau", "new", "bls12381", "5", "small.ptau"]);
    fails(
        d,
        &[
            "ceremony",
            "zkey",
            "new",
            "many.r1cs",
            "small.ptau",
            "--out",
            "x.zkey",
        ],
        "the .ptau holds powers for 2^5; the circuit needs 2^7 (a .ptau of power 7 or more)",
    );
    fs::write(d.join("bn.circom"), CUBE).unwrap();
    node(
        d,
        &peers().join("circom2/cli.js"),
        &["bn.circom", "--r1cs", "-o", "."],
    );
    fails(
        d,
        &[
            "ceremony", "zkey", "new", "bn.r1cs", "pp.ptau", "--out", "x.zkey",
        ],
        "BN254 (bn128), not BLS12-381's scalar field (compile with `circom --prime bls12381`)",
    );
    snarkjs(d, &["powersoftau", "new", "bn128", "4", "bn.ptau"]);
    snarkjs(
        d,
        &["powersoftau", "prepare", "phase2", "bn.ptau", "bnp.ptau"],
    );
    snarkjs(d, &["groth16", "setup", "bn.r1cs", "bnp.ptau", "bn.zkey"]);
    fails(
        d,
        &[
            "ceremony",
            "zkey",
            "contribute",
            "--in",
            "bn.zkey",
            "--out",
            "x.zkey",
        ],
        "another curve",
    );
    let mut bad = good.clone();
    let (at, _) = section(&bad, 5);
    let off = (0..)
        .map(|i| at + i * 96)
        .find(|&p| bad[p..p + 96].iter().any(|&b| b != 0))
        .unwrap();
    bad[off + 5] ^= 1;
    fs::write(d.join("offcurve.zkey"), &bad).unwrap();
    fails(
        d,
        &[
            "ceremony",
            "zkey",
            "contribute",
            "--in",
            "offcurve.zkey",
            "--out",
            "x.zkey",
        ],
        "offcurve.zkey: A[",
    );
    assert!(!d.join("x.zkey").exists());
}
