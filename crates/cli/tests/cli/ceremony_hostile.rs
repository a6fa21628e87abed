//! The ceremony commands against a careless user and a hostile file (issue 17): inputs through
//! pipes read once, results that cannot be printed replace nothing, bounded delays, clear
//! beacons and entropy, errors said once and files of the wrong kind named as such.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::ceremony::chain;
use crate::{Run, fails_with, leftovers, ok};

/// `lockstep args` in `dir` with `input` written to its standard input through a pipe (the
/// writer stops quietly if lockstep stops reading).
fn piped(dir: &Path, args: &[&str], input: &[u8]) -> Run {
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
    let input = input.to_vec();
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

/// `lockstep args` in `dir` with standard output `stdout`.
fn printing_to(dir: &Path, args: &[&str], stdout: Stdio) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .current_dir(dir)
        .env_remove("LOCKSTEP_WORKERS")
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    Run {
        ok: out.status.success(),
        code: out.status.code(),
        stdout: String::new(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn every_command_reads_a_pipe_once_or_refuses_it_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    chain(d, 4, 1);
    let c1 = fs::read(d.join("c1")).unwrap();
    let stdin = "/dev/stdin";
    // info and ptau export sniffed the kind from one open and read from another: a pipe lost
    // its first byte.
    let info = piped(d, &["ceremony", "info", stdin], &c1);
    assert!(info.ok, "{}", info.stderr);
    assert!(
        info.stdout.contains("kind: gnark v0.15 phase 1 object"),
        "{}",
        info.stdout
    );
    let from_file = ok(d, &["ceremony", "info", "c1"]).stdout;
    let hash = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("hash: "))
            .map(str::to_owned)
    };
    assert_eq!(hash(&info.stdout), hash(&from_file));
    let export = piped(
        d,
        &["ceremony", "ptau", "export", stdin, "--out", "p.ptau"],
        &c1,
    );
    assert!(export.ok, "{}", export.stderr);
    ok(d, &["ceremony", "ptau", "export", "c1", "--out", "q.ptau"]);
    assert_eq!(
        fs::read(d.join("p.ptau")).unwrap(),
        fs::read(d.join("q.ptau")).unwrap()
    );
    // The other readers, through a pipe too.
    let contribute = piped(
        d,
        &[
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            stdin,
            "--out",
            "c2",
        ],
        &c1,
    );
    assert!(contribute.ok, "{}", contribute.stderr);
    let verify = piped(d, &["ceremony", "phase1", "verify", "c0", stdin], &c1);
    assert!(verify.ok, "{}", verify.stderr);
    let seal = piped(
        d,
        &[
            "ceremony", "phase1", "seal", "--in", stdin, "--beacon", "ab", "--out", "srs",
        ],
        &c1,
    );
    assert!(seal.ok, "{}", seal.stderr);
    let srs = fs::read(d.join("srs")).unwrap();
    let info = piped(d, &["ceremony", "info", stdin], &srs);
    assert!(
        info.stdout.contains("sealed phase 1 SRS"),
        "{}",
        info.stderr
    );
    // A .ptau is read through its section table: a pipe is refused, saying why.
    let ptau = fs::read(d.join("q.ptau")).unwrap();
    let import = piped(
        d,
        &["ceremony", "ptau", "import", stdin, "--out", "back"],
        &ptau,
    );
    assert_eq!(import.code, Some(1));
    assert!(
        import
            .stderr
            .contains("is a pipe: a .ptau is read through its section table"),
        "{}",
        import.stderr
    );
    assert_eq!(import.stderr.matches("lockstep: error").count(), 1);
    assert!(!d.join("back").exists());
}

#[cfg(target_os = "linux")]
#[test]
fn a_result_that_cannot_be_printed_replaces_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    chain(d, 3, 1);
    ok(
        d,
        &[
            "ceremony", "phase1", "seal", "--in", "c1", "--beacon", "ab", "--out", "srs",
        ],
    );
    ok(d, &["ceremony", "ptau", "export", "c1", "--out", "c1.ptau"]);
    let commands: [&[&str]; 5] = [
        &["ceremony", "phase1", "new", "--power", "3", "--out", "old"],
        &[
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            "c1",
            "--out",
            "old",
        ],
        &[
            "ceremony", "phase1", "seal", "--in", "c1", "--beacon", "cd", "--out", "old",
        ],
        &["ceremony", "ptau", "import", "c1.ptau", "--out", "old"],
        &["ceremony", "ptau", "export", "c1", "--out", "old"],
    ];
    for args in commands {
        for closed in [false, true] {
            fs::write(d.join("old"), b"the previous file").unwrap();
            let stdout = if closed {
                // A pipe whose reader is gone: writing fails with EPIPE.
                let (reader, writer) = std::io::pipe().unwrap();
                drop(reader);
                Stdio::from(writer)
            } else {
                Stdio::from(fs::File::options().write(true).open("/dev/full").unwrap())
            };
            let run = printing_to(d, args, stdout);
            assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
            assert!(
                run.stderr.contains("writing standard output"),
                "{args:?}: {}",
                run.stderr
            );
            assert_eq!(
                fs::read(d.join("old")).unwrap(),
                b"the previous file",
                "{args:?} replaced its output"
            );
            assert_eq!(leftovers(d), Vec::<String>::new(), "{args:?}");
        }
    }
    // Commands that only print name standard output too.
    for args in [
        &["ceremony", "info", "c1"][..],
        &["ceremony", "phase1", "verify", "c0", "c1"],
        &["info"],
    ] {
        let full = Stdio::from(fs::File::options().write(true).open("/dev/full").unwrap());
        let run = printing_to(d, args, full);
        assert_eq!(run.code, Some(1), "{args:?}");
        assert!(
            run.stderr
                .contains("writing standard output: No space left on device"),
            "{args:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn beacons_and_their_delays_are_bounded_and_clear() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    chain(d, 2, 1);
    let seal = |beacon: &str, iterations: &str| {
        vec![
            "ceremony".to_owned(),
            "phase1".to_owned(),
            "seal".to_owned(),
            "--in".to_owned(),
            "c1".to_owned(),
            "--beacon".to_owned(),
            beacon.to_owned(),
            "--iterations".to_owned(),
            iterations.to_owned(),
            "--out".to_owned(),
            "srs".to_owned(),
        ]
    };
    let run = |args: Vec<String>, code: i32, message: &str| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fails_with(d, &args, code, message);
    };
    // It ran silently forever.
    run(
        seal("ab", "18446744073709551615"),
        2,
        "--iterations 18446744073709551615: at most 4294967296",
    );
    let mut verify: Vec<String> = ["ceremony", "phase1", "verify", "c1", "--sealed", "c1"]
        .map(str::to_owned)
        .to_vec();
    verify.extend(["--beacon", "ab", "--iterations", "4294967297"].map(str::to_owned));
    run(verify, 2, "--iterations 4294967297: at most 4294967296");
    // An empty beacon sealed with exit 0; 0xff and zz were "not an even number of digits".
    run(seal("", "0"), 2, "--beacon is empty");
    run(
        seal("zz", "0"),
        2,
        "--beacon: 'z' (character 1) is not a hex digit",
    );
    run(seal("abc", "0"), 2, "--beacon: 3 hex digits, an odd number");
    assert!(!d.join("srs").exists());
    let args = seal("0xff", "3");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let prefixed = ok(d, &args).stdout;
    let args = seal("ff", "3");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(ok(d, &args).stdout, prefixed, "0x is a prefix, not a digit");
}

#[test]
fn errors_are_said_once_and_files_of_another_kind_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    chain(d, 3, 1);
    ok(
        d,
        &[
            "ceremony", "phase1", "seal", "--in", "c1", "--beacon", "ab", "--out", "srs",
        ],
    );
    ok(d, &["ceremony", "ptau", "export", "c1", "--out", "c1.ptau"]);
    // ptau export of a .ptau was a point-level error ("domain size N = 1044341586... at byte 0").
    fails_with(
        d,
        &["ceremony", "ptau", "export", "c1.ptau", "--out", "x"],
        1,
        "c1.ptau is a snarkjs .ptau file already",
    );
    // `ceremony info` describes a .ptau too (every kind the engine reads).
    let info = ok(d, &["ceremony", "info", "c1.ptau"]).stdout;
    assert!(
        info.contains("kind: snarkjs .ptau powers of tau") && info.contains("power: "),
        "{info}"
    );
    fails_with(
        d,
        &[
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            "c1.ptau",
            "--out",
            "x",
        ],
        1,
        "c1.ptau is a snarkjs .ptau file, not a phase 1 object",
    );
    fails_with(
        d,
        &[
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            "srs",
            "--out",
            "x",
        ],
        1,
        "srs is a sealed SRS, not a phase 1 object: `lockstep ceremony phase2 new --phase1`",
    );
    fails_with(
        d,
        &["ceremony", "ptau", "import", "c1", "--out", "x"],
        1,
        "c1 is a phase 1 object, not a snarkjs .ptau file",
    );
    fs::write(d.join("notes.txt"), "{\"not\": \"a ceremony\"}").unwrap();
    fails_with(
        d,
        &["ceremony", "info", "notes.txt"],
        1,
        "notes.txt is not a ceremony file",
    );
    // A bad point in a .ptau was printed twice ("tauG2[1] at byte ...: not on the curve: tauG2[1]
    // at byte ...: not on the curve").
    let mut ptau = fs::read(d.join("c1.ptau")).unwrap();
    let tau_g2 = section(&ptau, 3);
    ptau[tau_g2 + 192 + 10] ^= 0x55;
    fs::write(d.join("bad.ptau"), &ptau).unwrap();
    let run = fails_with(
        d,
        &["ceremony", "ptau", "import", "bad.ptau", "--out", "x"],
        1,
        "tauG2[1] at byte",
    );
    assert_eq!(run.stderr.matches("tauG2[1]").count(), 1, "{}", run.stderr);
    assert!(!d.join("x").exists());
}

/// The offset of section `id`'s body in a .ptau.
fn section(ptau: &[u8], id: u32) -> usize {
    let u32_at = |at: usize| u32::from_le_bytes(ptau[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(ptau[at..at + 8].try_into().unwrap());
    let mut at = 12;
    for _ in 0..u32_at(8) {
        let (kind, size) = (u32_at(at), u64_at(at + 4) as usize);
        if kind == id {
            return at + 12;
        }
        at += 12 + size;
    }
    panic!("no section {id}");
}

#[test]
fn a_ptau_of_zeros_fails_at_its_first_point_and_trailing_bytes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    chain(d, 3, 0);
    ok(d, &["ceremony", "ptau", "export", "c0", "--out", "c0.ptau"]);
    let good = fs::read(d.join("c0.ptau")).unwrap();
    let mut zeros = good.clone();
    // Power 3: 2 * 8 - 1 points of 96 bytes in tauG1, all zeros.
    let tau_g1 = section(&good, 2);
    zeros[tau_g1..tau_g1 + 15 * 96].fill(0);
    fs::write(d.join("zeros.ptau"), &zeros).unwrap();
    fails_with(
        d,
        &["ceremony", "ptau", "import", "zeros.ptau", "--out", "x"],
        1,
        "tauG1[0] is not the generator",
    );
    // Both generators come first: a wrong tauG2[0] is named before tauG1 is decoded, even with
    // a bad point in tauG1 after its generator (the reader decoded all of tauG1 first).
    let mut wrong_g2 = good.clone();
    wrong_g2[tau_g1 + 96..tau_g1 + 2 * 96].fill(0);
    let tau_g2 = section(&good, 3);
    wrong_g2[tau_g2..tau_g2 + 192].fill(0);
    fs::write(d.join("g2.ptau"), &wrong_g2).unwrap();
    let run = fails_with(
        d,
        &["ceremony", "ptau", "import", "g2.ptau", "--out", "x"],
        1,
        "tauG2[0] is not the generator",
    );
    assert!(!run.stderr.contains("tauG1[1]"), "{}", run.stderr);
    // One rule with the phase 1 reader: nothing after the content.
    let mut trailing = good;
    trailing.push(0);
    fs::write(d.join("trailing.ptau"), &trailing).unwrap();
    fails_with(
        d,
        &["ceremony", "ptau", "import", "trailing.ptau", "--out", "x"],
        1,
        "trailing bytes after the end of the content",
    );
}

#[test]
fn entropy_from_standard_input_is_read_first_and_an_empty_one_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    chain(d, 2, 0);
    let contribute = [
        "ceremony",
        "phase1",
        "contribute",
        "--in",
        "c0",
        "--out",
        "c1",
        "--entropy",
        "-",
    ];
    let empty = piped(d, &contribute, b"");
    assert!(empty.ok, "{}", empty.stderr);
    assert!(
        empty.stderr.contains("standard input was empty"),
        "{}",
        empty.stderr
    );
    // Too much entropy is a usage error before the input is read: here the input is truncated,
    // and the entropy's error is the one named.
    let c0 = fs::read(d.join("c0")).unwrap();
    fs::write(d.join("short"), &c0[..c0.len() - 10]).unwrap();
    let run = piped(
        d,
        &[
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            "short",
            "--out",
            "c2",
            "--entropy",
            "-",
        ],
        &vec![b'x'; (1 << 20) + 1],
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("more than 1 MiB on standard input"),
        "{}",
        run.stderr
    );
}

/// An output that is standard output's own file, in a command that prints its result there,
/// is a usage error before any work: `phase2 contribute --out /dev/stdout > f` printed the hash
/// into f, which the rename then replaced (the hash to publish was lost).
#[cfg(target_os = "linux")]
#[test]
fn an_output_that_is_standard_output_s_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    chain(d, 2, 1);
    for args in [
        &[
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            "c1",
            "--out",
            "/dev/stdout",
        ][..],
        &[
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            "c1",
            "--out",
            "/proc/self/fd/1",
        ][..],
        &[
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            "c1",
            "--out",
            "f",
        ][..],
    ] {
        fs::write(d.join("f"), b"before").unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
            .args(args)
            .current_dir(d)
            .stdout(fs::File::create(d.join("f")).unwrap())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("is standard output's file, where this command prints its result"),
            "{args:?}: {stderr}"
        );
        assert_eq!(fs::read(d.join("f")).unwrap(), b"", "{args:?}");
        assert_eq!(leftovers(d), Vec::<String>::new());
    }
    // A terminal or /dev/null takes both in turn: still allowed.
    ok(
        d,
        &[
            "-q",
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            "c1",
            "--out",
            "/dev/null",
        ],
    );
}
