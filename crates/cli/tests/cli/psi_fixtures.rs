//! Every output of the demo's five PSI steps (and GCS, Bloom and size-only rounds) against the
//! files the binary of commit 68c3563 made from the same sample and fixed keys
//! (`tests/fixtures/demo/make.sh` regenerates them). Record rules, file formats and message
//! bytes moved from the CLI into the engine after that commit: these bytes must not have moved
//! with them, at any worker count.

use std::path::{Path, PathBuf};

use crate::ok;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/demo")
}

/// A directory holding the fixture inputs (samples and keys, the keys made private again: git
/// does not keep a file's mode).
fn inputs() -> tempfile::TempDir {
    let temp = tempfile::tempdir().unwrap();
    for name in ["starter.csv", "joiner.csv", "starter.key", "joiner.key"] {
        std::fs::copy(fixtures().join(name), temp.path().join(name)).unwrap();
    }
    #[cfg(unix)]
    for name in ["starter.key", "joiner.key"] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            temp.path().join(name),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
    }
    temp
}

const KEY: [&str; 4] = ["--column", "email", "--normalize", "-q"];

fn run(dir: &Path, workers: &str, args: &[&str]) {
    let mut all = vec!["--workers", workers];
    all.extend_from_slice(args);
    all.extend_from_slice(&KEY);
    ok(dir, &all);
}

fn same(dir: &Path, name: &str, workers: &str) {
    let made = std::fs::read(dir.join(name)).unwrap();
    let fixture = std::fs::read(fixtures().join(name)).unwrap();
    assert!(
        made == fixture,
        "{name} at {workers} workers differs from tests/fixtures/demo/{name} ({} bytes against {})",
        made.len(),
        fixture.len()
    );
}

#[test]
fn the_five_steps_write_the_fixture_bytes_at_every_worker_count() {
    for workers in ["1", "3"] {
        let temp = inputs();
        let d = temp.path();
        run(
            d,
            workers,
            &[
                "psi",
                "request",
                "--key",
                "joiner.key",
                "--input",
                "joiner.csv",
                "--out",
                "request.bin",
            ],
        );
        same(d, "request.bin", workers);
        run(
            d,
            workers,
            &[
                "psi",
                "setup",
                "--key",
                "starter.key",
                "--input",
                "starter.csv",
                "--joiner-count",
                "250",
                "--permutation-out",
                "permutation.csv",
                "--out",
                "setup.bin",
            ],
        );
        same(d, "setup.bin", workers);
        same(d, "permutation.csv", workers);
        let respond = [
            "psi",
            "respond",
            "--key",
            "starter.key",
            "--request",
            "request.bin",
            "--joiner-count",
            "250",
            "--out",
            "response.bin",
            "-q",
        ];
        ok(d, &[&["--workers", workers][..], &respond].concat());
        same(d, "response.bin", workers);
        run(
            d,
            workers,
            &[
                "psi",
                "intersect",
                "--key",
                "joiner.key",
                "--setup",
                "setup.bin",
                "--response",
                "response.bin",
                "--input",
                "joiner.csv",
                "--request",
                "request.bin",
                "--out",
                "matches.csv",
                "--pairs-out",
                "pairs.csv",
            ],
        );
        same(d, "matches.csv", workers);
        same(d, "pairs.csv", workers);
        run(
            d,
            workers,
            &[
                "psi",
                "resolve",
                "--permutation",
                "permutation.csv",
                "--matches",
                "pairs.csv",
                "--input",
                "starter.csv",
                "--out",
                "matched-rows.csv",
            ],
        );
        same(d, "matched-rows.csv", workers);
    }
}

#[test]
fn gcs_bloom_and_size_only_rounds_write_the_fixture_bytes() {
    let temp = inputs();
    let d = temp.path();
    for name in ["request.bin", "response.bin"] {
        std::fs::copy(fixtures().join(name), d.join(name)).unwrap();
    }
    for format in ["gcs", "bloom"] {
        let (setup, matches) = (
            format!("setup-{format}.bin"),
            format!("matches-{format}.csv"),
        );
        run(
            d,
            "2",
            &[
                "psi",
                "setup",
                "--key",
                "starter.key",
                "--input",
                "starter.csv",
                "--joiner-count",
                "250",
                "--format",
                format,
                "--out",
                &setup,
            ],
        );
        same(d, &setup, "2");
        run(
            d,
            "2",
            &[
                "psi",
                "intersect",
                "--key",
                "joiner.key",
                "--setup",
                &setup,
                "--response",
                "response.bin",
                "--input",
                "joiner.csv",
                "--request",
                "request.bin",
                "--out",
                &matches,
            ],
        );
        same(d, &matches, "2");
    }
    run(
        d,
        "2",
        &[
            "psi",
            "request",
            "--key",
            "joiner.key",
            "--input",
            "joiner.csv",
            "--size-only",
            "--out",
            "request-size.bin",
        ],
    );
    same(d, "request-size.bin", "2");
    ok(
        d,
        &[
            "--workers",
            "2",
            "psi",
            "respond",
            "--key",
            "starter.key",
            "--request",
            "request-size.bin",
            "--joiner-count",
            "250",
            "--size-only",
            "--out",
            "response-size.bin",
            "-q",
        ],
    );
    same(d, "response-size.bin", "2");
    std::fs::copy(fixtures().join("setup.bin"), d.join("setup.bin")).unwrap();
    let mut args = vec![
        "--workers",
        "2",
        "psi",
        "intersect",
        "--key",
        "joiner.key",
        "--setup",
        "setup.bin",
        "--response",
        "response-size.bin",
        "--input",
        "joiner.csv",
        "--size",
    ];
    args.extend_from_slice(&KEY);
    let size = ok(d, &args).stdout;
    let fixture = std::fs::read_to_string(fixtures().join("size.txt")).unwrap();
    assert_eq!(size, fixture);
}
