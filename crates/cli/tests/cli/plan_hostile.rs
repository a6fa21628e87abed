//! `lockstep plan` against a careless user and a hostile file (issue 17): outputs larger than
//! memory streamed out and allocated fallibly, reads bounded by what the plan can use, echoed
//! ids escaped and cut, constants that do not fit refused.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::psi_limits::peak_rss;
use crate::{Run, fails, leftovers, ok};

/// `y = x + x` over f32, written through a view at `offset`: the output holds `offset + n`
/// elements for an `n`-element input.
fn offset_plan(offset: u64) -> String {
    format!(
        r#"{{ "version": 1, "inputs": [{{ "id": "x", "dtype": "f32" }}],
  "nodes": [{{ "id": "y", "op": "add", "args": ["x", "x"] }}],
  "outputs": [{{ "id": "y", "from": "y", "view": {{ "offset": {offset} }} }}] }}"#
    )
}

/// `lockstep args` in `dir`, its standard input fed from `feed` (which may stop when lockstep
/// stops reading).
fn fed(
    dir: &Path,
    args: &[&str],
    feed: impl FnOnce(std::process::ChildStdin) + Send + 'static,
) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .current_dir(dir)
        .env_remove("LOCKSTEP_WORKERS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || feed(stdin));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    Run {
        ok: out.status.success(),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Writes zeros until the reader is gone.
fn endless(mut stdin: std::process::ChildStdin) {
    let block = vec![0u8; 1 << 16];
    while stdin.write_all(&block).is_ok() {}
}

/// Peak memory of `plan run` is its inputs, its outputs and its working memory: a 256 MiB output
/// is streamed into its file, never copied (it was copied whole: 532 MB of RSS raw, 794 MB as
/// .npy, for 256 MiB).
#[test]
fn a_large_output_is_streamed_out_not_copied() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("x.raw"), 1.5f32.to_le_bytes()).unwrap();
    fs::write(d.join("small.json"), offset_plan(0)).unwrap();
    let big_elements: u64 = 1 << 26; // 256 MiB of f32
    fs::write(d.join("big.json"), offset_plan(big_elements)).unwrap();
    let args = |plan: &'static str, out: &'static str| {
        [
            "-q",
            "--workers",
            "2",
            "plan",
            "run",
            plan,
            "--input",
            "x=x.raw",
            "--output",
            out,
        ]
    };
    let (ok_small, _, base) = peak_rss(d, &args("small.json", "y=small.npy"));
    assert!(ok_small);
    for out in ["y=big.raw", "y=big.npy"] {
        let (ok_big, stderr, big) = peak_rss(d, &args("big.json", out));
        assert!(ok_big, "{stderr}");
        let output_kib = big_elements * 4 / 1024;
        assert!(
            big <= base + output_kib * 11 / 10,
            "{out}: peak {big} KiB above {base} + 1.1 x {output_kib} KiB"
        );
    }
    let raw = fs::metadata(d.join("big.raw")).unwrap().len();
    assert_eq!(raw, (big_elements + 1) * 4);
    let mut tail = vec![0u8; 4];
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = fs::File::open(d.join("big.raw")).unwrap();
        f.seek(SeekFrom::End(-4)).unwrap();
        f.read_exact(&mut tail).unwrap();
    }
    assert_eq!(tail, 3.0f32.to_le_bytes());
    fs::remove_file(d.join("big.raw")).unwrap();
    fs::remove_file(d.join("big.npy")).unwrap();
}

/// An output that cannot be allocated is an error naming it, never an abort, and leaves no
/// staged file (it aborted with SIGABRT and left a 0-byte `.lockstep-tmp-*`).
#[cfg(target_os = "linux")]
#[test]
fn an_output_that_does_not_fit_is_an_error_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("x.raw"), 1.5f32.to_le_bytes()).unwrap();
    // 1 GiB of f32 under an address-space limit of 700 MB.
    fs::write(d.join("plan.json"), offset_plan(1 << 28)).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 700000; exec {} plan run plan.json --input x=x.raw --output y=y.raw",
            env!("CARGO_BIN_EXE_lockstep")
        ))
        .current_dir(d)
        .env_remove("LOCKSTEP_WORKERS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("outputs[0] \"y\": 268435457 elements of f32 cannot be allocated"),
        "{stderr}"
    );
    assert!(!stderr.contains("backtrace"), "{stderr}");
    assert_eq!(leftovers(d), Vec::<String>::new());
    assert!(!d.join("y.raw").exists());
}

/// Reads stop at what the plan can use: a plan from a pipe at 16 MiB, an input at its fixed
/// length's span or at what --budget leaves (`plan validate <(yes)` and `--input x=<(cat
/// /dev/zero)` read until memory ran out).
#[test]
fn endless_inputs_are_refused_at_what_the_plan_can_use() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = fed(d, &["plan", "validate", "/dev/stdin"], endless);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("more than 16777216 bytes: not a plan"),
        "{}",
        run.stderr
    );
    fs::write(
        d.join("fixed.json"),
        r#"{ "version": 1, "inputs": [{ "id": "x", "dtype": "f32", "view": { "length": 100 } }],
  "nodes": [{ "id": "y", "op": "neg", "args": ["x"] }], "outputs": [{ "id": "y", "from": "y" }] }"#,
    )
    .unwrap();
    let run = fed(
        d,
        &[
            "plan",
            "run",
            "fixed.json",
            "--input",
            "x=/dev/stdin",
            "--output",
            "y=y.raw",
        ],
        endless,
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "--input x=/dev/stdin: it holds more than 400 bytes, more than the run can use"
        ),
        "{}",
        run.stderr
    );
    fs::write(d.join("open.json"), offset_plan(0)).unwrap();
    let run = fed(
        d,
        &[
            "plan",
            "run",
            "open.json",
            "--input",
            "x=/dev/stdin",
            "--output",
            "y=y.raw",
            "--budget",
            "1000000",
        ],
        endless,
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("the run needs more than its budget of 1000000 bytes"),
        "{}",
        run.stderr
    );
    assert!(!d.join("y.raw").exists());
    // A finite pipe is read whole.
    let run = fed(
        d,
        &[
            "plan",
            "run",
            "open.json",
            "--input",
            "x=/dev/stdin",
            "--output",
            "y=y.raw",
        ],
        |mut stdin| {
            let _ = stdin.write_all(&[2.0f32, -1.0].map(f32::to_le_bytes).concat());
        },
    );
    assert!(run.ok, "{}", run.stderr);
    assert_eq!(
        fs::read(d.join("y.raw")).unwrap(),
        [4.0f32, -2.0].map(f32::to_le_bytes).concat()
    );
    // --budget counts inputs and outputs too: 8 bytes of input and 8 of output pass 15.
    let run = fed(
        d,
        &[
            "plan",
            "run",
            "open.json",
            "--input",
            "x=/dev/stdin",
            "--output",
            "y=z.raw",
            "--budget",
            "15",
        ],
        |mut stdin| {
            let _ = stdin.write_all(&[0u8; 8]);
        },
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("the run needs ")
            && run.stderr.contains("(inputs 8, outputs 8, working memory"),
        "{}",
        run.stderr
    );
}

#[test]
fn files_that_are_not_what_their_names_say_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("plan.json"), offset_plan(0)).unwrap();
    // A .npy under another name: its header was read as elements.
    fs::write(
        d.join("x.raw"),
        lockstep_plan::npy::write(&lockstep_plan::Array::from(vec![1.0f32; 4])),
    )
    .unwrap();
    fails(
        d,
        &[
            "plan",
            "run",
            "plan.json",
            "--input",
            "x=x.raw",
            "--output",
            "y=y.raw",
        ],
        "the file starts with numpy's .npy magic but its name does not end in .npy",
    );
}

/// Ids are echoed escaped and cut (an id could clear the terminal or set its title, and a 1 MB
/// id was printed whole); a constant that does not fit is refused (an f32 1e39 became +inf).
#[test]
fn echoed_ids_are_escaped_and_constants_must_fit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let hostile = format!("\u{1b}]0;pwned\u{7}{}", "z".repeat(1_000_000));
    let plan = format!(
        r#"{{ "version": 1, "inputs": [{{ "id": "x", "dtype": "f32" }}],
  "nodes": [{{ "id": {id}, "op": "frobnicate", "args": ["x"] }}],
  "outputs": [{{ "id": "y", "from": {id} }}] }}"#,
        id = serde_json::to_string(&hostile).unwrap()
    );
    fs::write(d.join("hostile.json"), plan).unwrap();
    let run = fails(
        d,
        &["plan", "validate", "hostile.json"],
        "unknown op \"frobnicate\"",
    );
    assert!(
        !run.stderr.contains('\u{1b}') && !run.stderr.contains('\u{7}'),
        "{:?}",
        run.stderr
    );
    assert!(
        run.stderr.contains("\\u{1b}]0;pwned\\u{7}"),
        "{:?}",
        run.stderr
    );
    assert!(
        run.stderr.len() < 1000,
        "{} bytes of error",
        run.stderr.len()
    );
    fs::write(
        d.join("big.json"),
        r#"{ "version": 1, "inputs": [{ "id": "x", "dtype": "f32" }],
  "constants": [{ "id": "c", "dtype": "f32", "value": 1e39 }],
  "nodes": [{ "id": "y", "op": "add", "args": ["x", "c"] }], "outputs": [{ "id": "y", "from": "y" }] }"#,
    )
    .unwrap();
    fails(
        d,
        &["plan", "validate", "big.json"],
        "1e39 does not fit f32",
    );
    let ok_plan = fs::read_to_string(d.join("big.json"))
        .unwrap()
        .replace("1e39", "1e3");
    fs::write(d.join("fine.json"), ok_plan).unwrap();
    ok(d, &["plan", "validate", "fine.json"]);
}
