//! `lockstep plan validate | run` over raw and `.npy` files.

use std::fs;

use lockstep_plan::{Array, Plan, RunOptions, npy};
use lockstep_shard::{Control, Pool};

use crate::{fails, fails_with, lockstep_in, ok, with};

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
        let run = ok(
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
        // 100,003 elements: at least 32,768 a worker, so up to 3 workers each.
        assert!(
            run.stderr
                .contains(&format!(" on {} (", crate::ran_on(workers))),
            "{}",
            run.stderr
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
        "--input: the plan has no input named \"q\" (it has: x, k)",
    );
    // An unbound name of 100 KB with control bytes (an argument holds at most 128 KiB): said once, escaped and cut.
    let hostile = format!("q\u{1b}[2J\u{7}{}", "z".repeat(100_000));
    let r = lockstep_in(
        Some(d),
        &with(
            &base,
            &[
                "--input",
                "x=x.npy",
                "--input",
                "k=k.raw",
                "--input",
                &format!("{hostile}=x.npy"),
            ],
        ),
        &[],
    );
    assert!(!r.ok);
    assert!(
        !r.stderr.contains('\u{1b}') && !r.stderr.contains('\u{7}'),
        "{}",
        r.stderr
    );
    assert!(r.stderr.len() < 4_000, "{} bytes", r.stderr.len());
    assert_eq!(r.stderr.matches("q\\u{1b}").count(), 1, "{}", r.stderr);
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

/// A random plan of the ops whose results IEEE fixes (add, sub, mul, div, sqrt, min and max
/// without NaN, neg, abs), run by `lockstep plan run` and by numpy (`peers/plan.py eval`, in
/// `peers/.venv` from scripts/install-peers): the bits must be equal.
#[test]
fn results_equal_numpy_where_ieee_fixes_them() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = root.join("peers/.venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/install-peers",
        python.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |m: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        usize::try_from(state % m as u64).unwrap()
    };
    // A plan whose numpy outputs hold a NaN saw one somewhere (every op here propagates NaN and
    // every value feeds the outputs): there min and max legitimately differ, so such a plan is
    // drawn again. Each dtype must get a NaN-free plan within 20 draws.
    for dtype in ["f32", "f64", "f32", "f64"] {
        let mut compared = false;
        for _draw in 0..20 {
            // 60 nodes, each over one or two earlier values; sqrt over abs.
            let mut ids: Vec<String> = vec!["a".into(), "b".into(), "c".into()];
            let mut nodes = Vec::new();
            for i in 0..60 {
                let (x, y) = (ids[next(ids.len())].clone(), ids[next(ids.len())].clone());
                let id = format!("n{i}");
                match next(9) {
                    0 => nodes.push(format!(
                        r#"{{ "id": "{id}", "op": "add", "args": ["{x}", "{y}"] }}"#
                    )),
                    1 => nodes.push(format!(
                        r#"{{ "id": "{id}", "op": "sub", "args": ["{x}", "{y}"] }}"#
                    )),
                    2 => nodes.push(format!(
                        r#"{{ "id": "{id}", "op": "mul", "args": ["{x}", "{y}"] }}"#
                    )),
                    3 => nodes.push(format!(
                        r#"{{ "id": "{id}", "op": "div", "args": ["{x}", "{y}"] }}"#
                    )),
                    4 => nodes.push(format!(
                        r#"{{ "id": "{id}", "op": "min", "args": ["{x}", "{y}"] }}"#
                    )),
                    5 => nodes.push(format!(
                        r#"{{ "id": "{id}", "op": "max", "args": ["{x}", "{y}"] }}"#
                    )),
                    6 => nodes.push(format!(
                        r#"{{ "id": "{id}", "op": "neg", "args": ["{x}"] }}"#
                    )),
                    7 => {
                        nodes.push(format!(
                            r#"{{ "id": "{id}_abs", "op": "abs", "args": ["{x}"] }}"#
                        ));
                        nodes.push(format!(
                            r#"{{ "id": "{id}", "op": "sqrt", "args": ["{id}_abs"] }}"#
                        ));
                    }
                    _ => nodes.push(format!(
                        r#"{{ "id": "{id}", "op": "abs", "args": ["{x}"] }}"#
                    )),
                }
                ids.push(id);
            }
            // Every value feeds an output (the plan refuses unused ones): sum everything at the end.
            let mut sum = "a".to_owned();
            for (i, id) in ids.iter().enumerate().skip(1) {
                nodes.push(format!(
                    r#"{{ "id": "s{i}", "op": "max", "args": ["{sum}", "{id}"] }}"#
                ));
                sum = format!("s{i}");
            }
            let plan = format!(
                r#"{{ "version": 1, "inputs": [{{ "id": "a", "dtype": "{dtype}" }}, {{ "id": "b", "dtype": "{dtype}" }}, {{ "id": "c", "dtype": "{dtype}" }}],
                 "nodes": [{}], "outputs": [{{ "id": "last", "from": "n59" }}, {{ "id": "all", "from": "{sum}" }}] }}"#,
                nodes.join(", ")
            );
            fs::write(d.join("plan.json"), &plan).unwrap();
            let n = 10_007;
            for name in ["a", "b", "c"] {
                let values: Vec<f64> = (0..n)
                    .map(|_| (next(2_000_001) as f64 - 1_000_000.0) / 997.0 + 0.5)
                    .collect();
                let array = if dtype == "f32" {
                    Array::from(values.iter().map(|&v| v as f32).collect::<Vec<f32>>())
                } else {
                    Array::from(values)
                };
                fs::write(d.join(format!("{name}.npy")), npy::write(&array)).unwrap();
            }
            ok(
                d,
                &[
                    "plan",
                    "run",
                    "plan.json",
                    "--input",
                    "a=a.npy",
                    "--input",
                    "b=b.npy",
                    "--input",
                    "c=c.npy",
                    "--output",
                    "last=last.npy",
                    "--output",
                    "all=all.npy",
                ],
            );
            fs::create_dir_all(d.join("numpy")).unwrap();
            let out = std::process::Command::new(&python)
                .arg(root.join("peers/plan.py"))
                .args([
                    "eval",
                    "plan.json",
                    "numpy",
                    "a=a.npy",
                    "b=b.npy",
                    "c=c.npy",
                ])
                .current_dir(d)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "plan.py: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let read = |path: &str| npy::read(&fs::read(d.join(path)).unwrap()).unwrap();
            let has_nan = |a: &Array| match a {
                Array::F32(v) => v.iter().any(|x| x.is_nan()),
                Array::F64(v) => v.iter().any(|x| x.is_nan()),
                _ => false,
            };
            if has_nan(&read("numpy/all.npy")) {
                continue;
            }
            for name in ["last", "all"] {
                let (ours, theirs) = (
                    read(&format!("{name}.npy")),
                    read(&format!("numpy/{name}.npy")),
                );
                assert!(
                    ours.bits_eq(&theirs),
                    "{dtype} {name}: ours and numpy's differ"
                );
            }
            compared = true;
            break;
        }
        assert!(compared, "{dtype}: 20 plans in a row produced a NaN");
    }
}

/// A plan over a million elements asked to run on 2 workers runs on 2 (the plan engine's grain is
/// elements, not PSI's keys), and one over a thousand is lowered to 1 and says so.
#[test]
fn a_million_elements_run_on_the_workers_asked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("plan.json"), PLAN).unwrap();
    for (n, said) in [(1 << 20, "on 2 workers ("), (1000, "on 1 worker (")] {
        let (x, k) = inputs(n);
        fs::write(d.join("x.npy"), npy::write(&x)).unwrap();
        fs::write(d.join("k.raw"), k.to_le_bytes()).unwrap();
        let run = ok(
            d,
            &[
                "--workers",
                "2",
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
        assert!(run.stderr.contains(said), "{n}: {}", run.stderr);
        assert_eq!(
            npy::read(&fs::read(d.join("z.npy")).unwrap()).unwrap(),
            expected(&x, &k)[0]
        );
    }
}
