//! `lockstep plan validate | run` over raw and `.npy` files.

use std::fs;

use lockstep_plan::{Array, Plan, RunOptions, npy};
use lockstep_shard::{Control, Pool};

use crate::{fails, fails_with, ok, with};

const PLAN: &str = r#"{ "version": 1,
  "inputs": [{ "id": "x", "dtype": "f32" }, { "id": "k", "dtype": "i32", "view": { "stride": 2 } }],
  "constants": [{ "id": "half", "dtype": "f32", "value": 0.5 }],
  "nodes": [{ "id": "y", "op": "fma", "args": ["x", "half", "x"] },
            { "id": "ky", "op": "cast", "args": ["k"], "to": "f32" },
            { "id": "z", "op": "max", "args": ["y", "ky"] },
            { "id": "zi", "op": "cast", "args": ["z"], "to": "i32" }],
  "outputs": [{ "id": "z", "from": "z" }, { "id": "zi", "from": "zi" }] }"#;

fn inputs(n: usize) -> (Array, Array) {
    let x: Vec<f32> = (0..n).map(|i| (i as f32 - 500.0) * 0.37).collect();
    let k: Vec<i32> = (0..2 * n)
        .map(|i| i32::try_from(i % 91).unwrap() - 45)
        .collect();
    (Array::from(x), Array::from(k))
}

fn expected(x: &Array, k: &Array) -> Vec<Array> {
    let plan = Plan::from_json(PLAN).unwrap();
    plan.run_to_arrays(
        &Pool::current_thread(),
        &Control::new(),
        &[x.as_array_ref(), k.as_array_ref()],
        &RunOptions::default(),
    )
    .unwrap()
}

#[test]
fn validate_prints_what_the_plan_computes() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("plan.json"), PLAN).unwrap();
    let run = ok(dir.path(), &["plan", "validate", "plan.json"]);
    assert_eq!(
        run.stdout,
        "plan.json: valid plan (format v1)\n  inputs:  x (f32), k (i32)\n  nodes:   4 (1 constants)\n  outputs: z (f32), zi (i32)\n"
    );
    fs::write(
        dir.path().join("bad.json"),
        PLAN.replace("\"max\"", "\"maximum\""),
    )
    .unwrap();
    fails(
        dir.path(),
        &["plan", "validate", "bad.json"],
        "bad.json: nodes[2] \"z\".op: unknown op \"maximum\"",
    );
}

#[test]
fn run_reads_raw_and_npy_and_writes_what_the_library_computes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("plan.json"), PLAN).unwrap();
    let (x, k) = inputs(100_003);
    fs::write(d.join("x.npy"), npy::write(&x)).unwrap();
    fs::write(d.join("k.raw"), k.to_le_bytes()).unwrap();
    let want = expected(&x, &k);
    for workers in ["1", "2", "3"] {
        ok(
            d,
            &[
                "--workers",
                workers,
                "plan",
                "run",
                "plan.json",
                "--input",
                "x=x.npy",
                "--input",
                "k=k.raw",
                "--output",
                "z=z.npy",
                "--output",
                "zi=zi.raw",
            ],
        );
        assert_eq!(
            npy::read(&fs::read(d.join("z.npy")).unwrap()).unwrap(),
            want[0]
        );
        assert_eq!(
            Array::from_le_bytes(
                lockstep_plan::DType::I32,
                &fs::read(d.join("zi.raw")).unwrap()
            )
            .unwrap(),
            want[1]
        );
    }
}

#[test]
fn wrong_files_and_bindings_are_clear_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("plan.json"), PLAN).unwrap();
    let (x, k) = inputs(10);
    fs::write(d.join("x.npy"), npy::write(&x)).unwrap();
    fs::write(d.join("k.raw"), k.to_le_bytes()).unwrap();
    let base = [
        "plan",
        "run",
        "plan.json",
        "--output",
        "z=z.npy",
        "--output",
        "zi=zi.raw",
    ];
    // A .npy of the wrong dtype, of the wrong shape; raw bytes that are not whole elements.
    fs::write(
        d.join("x64.npy"),
        npy::write(&Array::from(vec![1.0f64; 10])),
    )
    .unwrap();
    fails(
        d,
        &with(&base, &["--input", "x=x64.npy", "--input", "k=k.raw"]),
        "--input x=x64.npy: the file holds f64 ('<f8') but the plan's input \"x\" is f32 ('<f4')",
    );
    let mut two_d = npy::write(&x);
    let at = two_d.windows(5).position(|w| w == b"(10,)").unwrap();
    two_d.splice(at..at + 5, b"(5,2)".iter().copied());
    fs::write(d.join("x2d.npy"), two_d).unwrap();
    fails(
        d,
        &with(&base, &["--input", "x=x2d.npy", "--input", "k=k.raw"]),
        ".npy shape (5,2) is not one-dimensional",
    );
    fs::write(d.join("k.odd"), [0u8; 7]).unwrap();
    fails(
        d,
        &with(&base, &["--input", "x=x.npy", "--input", "k=k.odd"]),
        "--input k=k.odd: 7 bytes are not a whole number of i32 elements (4 bytes each)",
    );
    // The strided input holds too few elements for x's 10.
    fs::write(d.join("k.short"), Array::from(vec![1i32; 15]).to_le_bytes()).unwrap();
    fails(
        d,
        &with(&base, &["--input", "x=x.npy", "--input", "k=k.short"]),
        "inputs[1] \"k\": its view takes 8 elements of its 15 but inputs[0] \"x\" has 10",
    );
    // Bindings: usage errors, exit 2.
    fails_with(
        d,
        &with(&base, &["--input", "x=x.npy"]),
        2,
        "the plan's input \"k\" needs --input k=FILE",
    );
    fails_with(
        d,
        &with(
            &base,
            &[
                "--input", "x=x.npy", "--input", "k=k.raw", "--input", "q=x.npy",
            ],
        ),
        2,
        "--input q=...: the plan has no input named \"q\" (it has: x, k)",
    );
    fails_with(
        d,
        &["plan", "run", "plan.json", "--input", "x"],
        2,
        "expected NAME=FILE",
    );
    assert!(
        !d.join("z.npy").exists() && !d.join("zi.raw").exists(),
        "nothing written"
    );
    // A budget below the run's working memory.
    fails(
        d,
        &with(
            &base,
            &[
                "--input", "x=x.npy", "--input", "k=k.raw", "--budget", "100",
            ],
        ),
        "the run needs",
    );
}
