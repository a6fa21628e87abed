//! Clear errors and safe defaults: key files, error text, usage errors.

use crate::{
    CLINIC, REGISTRY, fails, fails_with, intersect, lockstep_in, ok, organisations, raw_round, with,
};

fn request_with_key(key: &str) -> Vec<&str> {
    with(
        &["psi", "request", "--key", key, "--out", "r.bin"],
        &REGISTRY,
    )
}

#[cfg(unix)]
fn chmod(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn key_files_must_be_private_strong_and_32_bytes() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    #[cfg(unix)]
    {
        chmod(&dir.join("registry.key"), 0o644);
        fails(
            dir,
            &request_with_key("registry.key"),
            "registry.key: the key file is open to others (mode 644); restrict it with `chmod 600 registry.key`, or pass --allow-open-key",
        );
        let mut args = request_with_key("registry.key");
        args.push("--allow-open-key");
        ok(dir, &args);
        std::fs::remove_file(dir.join("r.bin")).unwrap();
        chmod(&dir.join("registry.key"), 0o600);
    }
    let write_key = |name: &str, bytes: &[u8]| {
        std::fs::write(dir.join(name), bytes).unwrap();
        #[cfg(unix)]
        chmod(&dir.join(name), 0o600);
    };
    write_key("short.key", &[7u8; 31]);
    fails(
        dir,
        &request_with_key("short.key"),
        "short.key: a key file holds exactly 32 raw bytes (`lockstep psi key new` writes one); this one has 31",
    );
    write_key("zero.key", &[0u8; 32]);
    fails(
        dir,
        &request_with_key("zero.key"),
        "the key is out of range",
    );
    // Key 1 publishes H(m) itself; n - 1 publishes -H(m).
    let mut one = [0u8; 32];
    one[31] = 1;
    write_key("one.key", &one);
    fails(
        dir,
        &request_with_key("one.key"),
        "key one.key: the key is 1, a weak key: masking with it would publish the hashed values themselves",
    );
    let mut n_minus_1 = [0u8; 32];
    let n = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632550";
    for (i, b) in n_minus_1.iter_mut().enumerate() {
        *b = u8::from_str_radix(&n[2 * i..2 * i + 2], 16).unwrap();
    }
    write_key("minus.key", &n_minus_1);
    fails(
        dir,
        &request_with_key("minus.key"),
        "the key is n - 1, a weak key",
    );
    assert!(!dir.join("r.bin").exists());
}

#[test]
fn errors_name_their_file_and_never_echo_a_whole_row() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    raw_round(dir);
    // A header of 500 KB without the asked column: the error shows 200 bytes of it.
    let header: Vec<String> = (0..50_000).map(|i| format!("col{i:05}")).collect();
    std::fs::write(dir.join("wide.csv"), header.join(",") + "\n").unwrap();
    let run = fails(
        dir,
        &with(
            &["psi", "request", "--key", "registry.key", "--out", "r.bin"],
            &["--input", "wide.csv", "--column", "email"],
        ),
        "wide.csv: no column named \"email\"; the header has \"col00000\", \"col00001\"",
    );
    assert!(
        run.stderr.len() < 400,
        "{} bytes of error",
        run.stderr.len()
    );
    // A headerless file: its first record is shown as the header, shortened the same way.
    let record = format!("{}@example.org\n", "x".repeat(10_000));
    std::fs::write(dir.join("headerless.csv"), record.repeat(3)).unwrap();
    let run = fails(
        dir,
        &with(
            &["psi", "request", "--key", "registry.key", "--out", "r.bin"],
            &["--input", "headerless.csv", "--column", "email"],
        ),
        "headerless.csv: no column named \"email\"",
    );
    assert!(
        run.stderr.len() < 400,
        "{} bytes of error",
        run.stderr.len()
    );
    // A missing file: the system's error once, no Rust debug text.
    let run = fails(
        dir,
        &with(
            &["psi", "request", "--key", "registry.key", "--out", "r.bin"],
            &["--input", "missing.csv", "--column", "email"],
        ),
        "reading missing.csv: No such file or directory (os error 2)",
    );
    assert_eq!(
        run.stderr.matches("No such file").count(),
        1,
        "{}",
        run.stderr
    );
    for run in [&run] {
        for debug in ["Os {", "kind:", "StringRecord", "ByteRecord", "Error {"] {
            assert!(!run.stderr.contains(debug), "{}", run.stderr);
        }
    }
    // A header naming the key column twice.
    std::fs::write(dir.join("twice.csv"), "email,id,email\na,1,b\n").unwrap();
    fails(
        dir,
        &with(
            &["psi", "request", "--key", "registry.key", "--out", "r.bin"],
            &["--input", "twice.csv", "--column", "email"],
        ),
        "twice.csv: the header names column \"email\" twice (columns 1 and 3): the key would be ambiguous",
    );
    // A message of the wrong type says which it is, and names its file.
    fails(
        dir,
        &[
            "psi",
            "respond",
            "--key",
            "clinic.key",
            "--request",
            "setup.bin",
            "--joiner-count",
            "3",
            "--out",
            "x.bin",
        ],
        "setup.bin: this is a setup message, not a request",
    );
    fails(
        dir,
        &intersect(
            "setup.bin",
            "request.bin",
            &["--request", "request.bin", "--out", "m.csv"],
        ),
        "request.bin: this is a request message, not a response",
    );
    let request = std::fs::read(dir.join("request.bin")).unwrap();
    std::fs::write(dir.join("cut.bin"), &request[..request.len() - 5]).unwrap();
    fails(
        dir,
        &[
            "psi",
            "respond",
            "--key",
            "clinic.key",
            "--request",
            "cut.bin",
            "--joiner-count",
            "3",
            "--out",
            "x.bin",
        ],
        "cut.bin: the request message is not valid protobuf: the input ends inside a field at byte",
    );
    assert!(!dir.join("x.bin").exists() && !dir.join("r.bin").exists());
}

#[test]
fn a_gcs_setup_too_large_names_the_rate_that_works() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    // At the default rate 1e-9, 100,000 joiner keys pass OpenMined's 64-bit hash range.
    let run = fails(
        dir,
        &with(
            &[
                "psi",
                "setup",
                "--key",
                "clinic.key",
                "--joiner-count",
                "100000",
                "--format",
                "gcs",
                "--out",
                "s.bin",
            ],
            &CLINIC,
        ),
        "a GCS setup of 100000 elements for 100000 joiner elements at false-positive rate 1e-9 needs a hash range beyond 2^63",
    );
    assert!(
        run.stderr.contains(
            "the smallest rate that works at this size is 1.1e-9, and a raw or Bloom setup has no such limit"
        ),
        "{}",
        run.stderr
    );
    ok(
        dir,
        &with(
            &[
                "psi",
                "setup",
                "--key",
                "clinic.key",
                "--joiner-count",
                "100000",
                "--format",
                "gcs",
                "--fpr",
                "1.1e-9",
                "--out",
                "s.bin",
            ],
            &CLINIC,
        ),
    );
}

#[test]
fn usage_errors_exit_2_before_any_work() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    let setup = |more: &[&'static str]| {
        let mut args = vec!["psi", "setup", "--key", "clinic.key", "--out", "s.bin"];
        args.extend_from_slice(&CLINIC);
        args.extend_from_slice(more);
        args
    };
    fails_with(
        dir,
        &setup(&[
            "--joiner-count",
            "3",
            "--format",
            "gcs",
            "--permutation-out",
            "p.csv",
        ]),
        2,
        "--permutation-out needs --format raw",
    );
    fails_with(
        dir,
        &setup(&["--joiner-count", "3", "--fpr", "1.5"]),
        2,
        "the false-positive rate must be in (0, 1), got 1.5 (--fpr, --joiner-count)",
    );
    fails_with(
        dir,
        &setup(&["--joiner-count", "3", "--fpr=-1e-9"]),
        2,
        "the false-positive rate must be in (0, 1), got -1e-9",
    );
    fails_with(
        dir,
        &setup(&["--joiner-count", "0"]),
        2,
        "the joiner count must be at least 1 (--fpr, --joiner-count)",
    );
    fails_with(
        dir,
        &[
            "psi",
            "respond",
            "--key",
            "clinic.key",
            "--request",
            "r.bin",
            "--joiner-count",
            "0",
            "--out",
            "x.bin",
        ],
        2,
        "--joiner-count must be at least 1",
    );
    fails_with(
        dir,
        &with(&["--workers", "1,2"], &setup(&["--joiner-count", "3"])),
        2,
        "a list of counts is for `lockstep-bench`",
    );
    fails_with(
        dir,
        &with(&["--workers", "0"], &setup(&["--joiner-count", "3"])),
        2,
        "--workers must be a positive whole number",
    );
    // clap's own usage errors exit 2 too.
    fails_with(
        dir,
        &intersect("s.bin", "r.bin", &["--size", "--out", "m.csv"]),
        2,
        "cannot be used with",
    );
    assert!(!dir.join("s.bin").exists());
}

#[test]
fn the_environment_is_read_only_without_the_flag() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    let args = with(
        &["psi", "request", "--key", "registry.key", "--out", "r.bin"],
        &REGISTRY,
    );
    let bad = [("LOCKSTEP_WORKERS", "lots")];
    let run = lockstep_in(Some(dir), &with(&["--workers", "2"], &args), &bad);
    assert!(run.ok, "{}", run.stderr);
    let run = lockstep_in(Some(dir), &args, &bad);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("LOCKSTEP_WORKERS must be a positive whole number of workers, got \"lots\""),
        "{}",
        run.stderr
    );
}
