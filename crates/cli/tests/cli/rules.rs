//! The general rules of issue 17, on every engine's commands: any input may be a pipe (read
//! once), a full disk or an unprintable result replaces no output and leaves no staged file,
//! and nothing aborts.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::{CLINIC, REGISTRY, Run, leftovers, ok, organisations, raw_round, with};

/// `lockstep args` in `dir` with `input` on standard input through a pipe.
pub(crate) fn piped(dir: &Path, args: &[&str], input: Vec<u8>) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .current_dir(dir)
        .env_remove("LOCKSTEP_WORKERS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    Run {
        ok: out.status.success(),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `lockstep args` in `dir` through `sh -c`, after `setup` (a ulimit), with SIGXFSZ ignored so
/// that a file past the limit is a write error, as a full disk is.
pub(crate) fn limited(dir: &Path, setup: &str, args: &[&str]) -> std::process::Output {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; {setup}; exec {} {}",
            env!("CARGO_BIN_EXE_lockstep"),
            quoted.join(" ")
        ))
        .current_dir(dir)
        .env_remove("LOCKSTEP_WORKERS")
        .output()
        .unwrap()
}

#[test]
fn psi_and_plan_inputs_may_be_pipes_and_keys_may_not() {
    let temp = tempfile::tempdir().unwrap();
    let d = temp.path();
    organisations(d);
    raw_round(d);
    let pipe = "/dev/stdin";
    let read = |name: &str| fs::read(d.join(name)).unwrap();
    // The records of a request, a request to respond to, a response to intersect, pairs to
    // resolve: each through a pipe, each equal to the run over the file.
    let mut registry = REGISTRY.to_vec();
    registry[1] = pipe;
    let run = piped(
        d,
        &with(
            &[
                "psi",
                "request",
                "--key",
                "registry.key",
                "--out",
                "req2.bin",
            ],
            &registry,
        ),
        read("registry.csv"),
    );
    assert!(run.ok, "{}", run.stderr);
    assert_eq!(read("req2.bin").len(), read("request.bin").len());
    let run = piped(
        d,
        &[
            "psi",
            "respond",
            "--key",
            "clinic.key",
            "--request",
            pipe,
            "--joiner-count",
            "3",
            "--out",
            "resp2.bin",
            "-q",
        ],
        read("request.bin"),
    );
    assert!(run.ok, "{}", run.stderr);
    assert_eq!(read("resp2.bin"), read("response.bin"));
    let mut intersect = vec![
        "psi",
        "intersect",
        "--key",
        "registry.key",
        "--setup",
        "setup.bin",
        "--response",
        pipe,
        "--request",
        "request.bin",
        "--out",
        "m2.csv",
    ];
    intersect.extend_from_slice(&REGISTRY);
    let run = piped(d, &intersect, read("response.bin"));
    assert!(run.ok, "{}", run.stderr);
    assert_eq!(read("m2.csv"), read("matches.csv"));
    let mut resolve = vec![
        "psi",
        "resolve",
        "--permutation",
        "perm.csv",
        "--matches",
        pipe,
        "--out",
        "r2.csv",
    ];
    resolve.extend_from_slice(&CLINIC);
    let run = piped(d, &resolve, read("pairs.csv"));
    assert!(run.ok, "{}", run.stderr);
    // A key is a private regular file: a pipe is refused (it would be a secret in transit).
    let run = piped(
        d,
        &with(
            &["psi", "request", "--key", pipe, "--out", "x.bin"],
            &REGISTRY,
        ),
        vec![7; 32],
    );
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("is a FIFO, not a key file"),
        "{}",
        run.stderr
    );
    // A plan through a pipe.
    let plan = r#"{ "version": 1, "inputs": [{ "id": "x", "dtype": "u8" }],
      "nodes": [{ "id": "y", "op": "neg", "args": ["x"] }], "outputs": [{ "id": "y", "from": "y" }] }"#;
    let run = piped(d, &["plan", "validate", pipe], plan.as_bytes().to_vec());
    assert!(run.ok, "{}", run.stderr);
    assert!(run.stdout.contains("valid plan"), "{}", run.stdout);
}

/// A file that cannot be written in full (here past `ulimit -f`, as on a full disk) fails the
/// command naming the file, replaces no output and leaves no staged file, on every engine.
#[test]
fn a_full_disk_replaces_nothing_and_leaves_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let d = temp.path();
    organisations(d);
    fs::write(d.join("x.raw"), [1u8; 300_000]).unwrap();
    fs::write(
        d.join("plan.json"),
        r#"{ "version": 1, "inputs": [{ "id": "x", "dtype": "u8" }],
      "nodes": [{ "id": "y", "op": "neg", "args": ["x"] }], "outputs": [{ "id": "y", "from": "y" }] }"#,
    )
    .unwrap();
    // 2,000 six-byte keys: the messages (35 bytes a key) pass the limit below, the key index's
    // files (14 and 16 bytes a key) do not.
    let many: String = (0..2000).map(|i| format!("k{i:05}\n")).collect();
    fs::write(d.join("many.txt"), many).unwrap();
    let commands: [&[&str]; 4] = [
        &["ceremony", "phase1", "new", "--power", "10", "--out", "old"],
        // A message written an element at a time (ElementWriter), after its key index.
        &[
            "psi",
            "request",
            "--key",
            "registry.key",
            "--input",
            "many.txt",
            "--out",
            "old",
        ],
        &[
            "plan",
            "run",
            "plan.json",
            "--input",
            "x=x.raw",
            "--output",
            "y=old",
        ],
        &[
            "psi",
            "setup",
            "--key",
            "clinic.key",
            "--input",
            "many.txt",
            "--joiner-count",
            "10",
            "--out",
            "old",
        ],
    ];
    for args in commands {
        fs::write(d.join("old"), b"the previous file").unwrap();
        // 100 blocks of 512 bytes: each output is larger.
        let out = limited(d, "ulimit -f 100", args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("writing old"), "{args:?}: {stderr}");
        // Said once (it was "No space left on device (os error 28): No space left on device").
        assert_eq!(
            stderr.matches("File too large").count(),
            1,
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(
            fs::read(d.join("old")).unwrap(),
            b"the previous file",
            "{args:?}"
        );
        assert_eq!(leftovers(d), Vec::<String>::new(), "{args:?}");
    }
}

/// A result that cannot be printed fails the command naming standard output, on every engine
/// (the ceremony's commands in `ceremony_hostile.rs`).
#[cfg(target_os = "linux")]
#[test]
fn psi_and_plan_results_that_cannot_be_printed_name_standard_output() {
    let temp = tempfile::tempdir().unwrap();
    let d = temp.path();
    organisations(d);
    raw_round(d);
    fs::write(
        d.join("plan.json"),
        r#"{ "version": 1, "inputs": [{ "id": "x", "dtype": "u8" }],
      "nodes": [{ "id": "y", "op": "neg", "args": ["x"] }], "outputs": [{ "id": "y", "from": "y" }] }"#,
    )
    .unwrap();
    let mut size = vec![
        "psi",
        "intersect",
        "--key",
        "registry.key",
        "--setup",
        "setup.bin",
        "--response",
        "response.bin",
        "--request",
        "request.bin",
        "--size",
    ];
    size.extend_from_slice(&REGISTRY);
    let mut setup = vec![
        "psi",
        "setup",
        "--key",
        "clinic.key",
        "--joiner-count",
        "3",
        "--permutation-out",
        "perm2.csv",
        "--out",
        "-",
    ];
    setup.extend_from_slice(&CLINIC);
    for args in [
        &size[..],
        &setup[..],
        &["plan", "validate", "plan.json"][..],
    ] {
        for closed in [false, true] {
            let stdout = if closed {
                let (reader, writer) = std::io::pipe().unwrap();
                drop(reader);
                Stdio::from(writer)
            } else {
                Stdio::from(fs::File::options().write(true).open("/dev/full").unwrap())
            };
            let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
                .args(args)
                .current_dir(d)
                .env_remove("LOCKSTEP_WORKERS")
                .stdout(stdout)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
            assert!(
                stderr.contains("writing standard output"),
                "{args:?}: {stderr}"
            );
            // The permutation of a setup whose message could not be printed is not in place.
            assert!(!d.join("perm2.csv").exists(), "{args:?}");
            assert_eq!(leftovers(d), Vec::<String>::new(), "{args:?}");
        }
    }
    ok(d, &["info"]);
}
