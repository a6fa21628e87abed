//! The streamed steps from the command line: the same files whether they fit in memory or
//! spill through many sort runs (`--memory 1KiB`), at 1, 2 and 3 workers; their temporary
//! folder in `--tmp`, emptied on every exit.

use std::path::Path;

use crate::{fails, fails_with, leftovers, ok, with};

/// 2,400 rows over 500 keys with duplicates, blank rows and case differences (normalized).
fn parties(dir: &Path) {
    let rows = |salt: u32| -> String {
        let mut text = String::from("id,email,city\n");
        for i in 0..2400u32 {
            let k = i.wrapping_mul(2_654_435_761).wrapping_add(salt) % 501;
            let email = match k {
                500 => String::new(),
                k if k % 7 == 0 => format!(" Person{k}@Example.org"),
                k => format!("person{k}@example.org"),
            };
            text.push_str(&format!("r{i},{email},c{}\n", i % 13));
        }
        text
    };
    std::fs::write(dir.join("starter.csv"), rows(0)).unwrap();
    std::fs::write(dir.join("joiner.csv"), rows(1_000_003)).unwrap();
    for key in ["starter.key", "joiner.key"] {
        ok(dir, &["psi", "key", "new", "--out", key]);
    }
    std::fs::create_dir(dir.join("tmp")).unwrap();
}

const JOINER: [&str; 6] = [
    "--input",
    "joiner.csv",
    "--column",
    "email",
    "--normalize",
    "-q",
];

/// Runs `lockstep` with the parts' arguments in order, which must succeed.
fn run_parts(dir: &Path, parts: &[&[&str]]) -> crate::Run {
    let args: Vec<&str> = parts.iter().flat_map(|p| p.iter().copied()).collect();
    ok(dir, &args)
}

/// The round's streamed files at `memory` (`None`: the default) on `workers`, named by `tag`.
fn round(dir: &Path, memory: Option<&str>, workers: &str, tag: &str) -> Vec<Vec<u8>> {
    let mut budget = vec!["--workers", workers, "--tmp", "tmp"];
    if let Some(memory) = memory {
        budget.extend(["--memory", memory]);
    }
    let name = |what: &str| format!("{tag}-{what}.bin");
    let (request, size_request, response, size_response) = (
        name("request"),
        name("size-request"),
        name("response"),
        name("size-response"),
    );
    let request_args = |out: &str, more: &[&str]| -> Vec<String> {
        ["psi", "request", "--key", "joiner.key", "--out", out]
            .iter()
            .chain(&JOINER)
            .chain(&budget)
            .chain(more)
            .map(|s| (*s).to_owned())
            .collect()
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(dir, &args);
    };
    run(request_args(&request, &[]));
    run(request_args(&size_request, &["--size-only"]));
    for (from, out, more) in [
        (&request, &response, &[][..]),
        (&size_request, &size_response, &["--size-only"][..]),
    ] {
        let args = with(
            &[
                "psi",
                "respond",
                "--key",
                "starter.key",
                "--request",
                from,
                "--joiner-count",
                "600",
                "--out",
                out,
                "-q",
            ],
            &budget,
        );
        ok(dir, &with(&args, more));
    }
    let starter_input = ["--input", "starter.csv", "--column", "email", "--normalize"];
    let (setup, permutation, gcs) = (name("setup"), format!("{tag}-perm.csv"), name("gcs"));
    let starter = [
        "psi",
        "setup",
        "--key",
        "starter.key",
        "--joiner-count",
        "600",
        "-q",
    ];
    run_parts(
        dir,
        &[
            &starter,
            &starter_input,
            &budget,
            &["--out", &setup, "--permutation-out", &permutation],
        ],
    );
    run_parts(
        dir,
        &[
            &starter,
            &starter_input,
            &budget,
            &["--out", &gcs, "--format", "gcs"],
        ],
    );
    let (matches, pairs, gcs_matches, resolved) = (
        format!("{tag}-matches.csv"),
        format!("{tag}-pairs.csv"),
        format!("{tag}-gcs-matches.csv"),
        format!("{tag}-resolved.csv"),
    );
    let joiner = [
        "psi",
        "intersect",
        "--key",
        "joiner.key",
        "--request",
        &request,
    ];
    run_parts(
        dir,
        &[
            &joiner,
            &JOINER,
            &budget,
            &[
                "--setup",
                &setup,
                "--response",
                &response,
                "--out",
                &matches,
                "--pairs-out",
                &pairs,
            ],
        ],
    );
    run_parts(
        dir,
        &[
            &joiner,
            &JOINER,
            &budget,
            &[
                "--setup",
                &gcs,
                "--response",
                &response,
                "--out",
                &gcs_matches,
            ],
        ],
    );
    let joiner = ["psi", "intersect", "--key", "joiner.key", "--size"];
    let size = run_parts(
        dir,
        &[
            &joiner,
            &JOINER,
            &budget,
            &["--setup", &gcs, "--response", &size_response],
        ],
    );
    run_parts(
        dir,
        &[
            &[
                "psi",
                "resolve",
                "--permutation",
                &permutation,
                "--matches",
                &pairs,
                "-q",
            ],
            &starter_input,
            &budget,
            &["--out", &resolved],
        ],
    );
    assert_eq!(
        std::fs::read_dir(dir.join("tmp")).unwrap().count(),
        0,
        "--tmp is left empty"
    );
    let mut files: Vec<Vec<u8>> = [
        request,
        size_request,
        response,
        size_response,
        setup,
        permutation,
        gcs,
        matches,
        pairs,
        gcs_matches,
        resolved,
    ]
    .iter()
    .map(|f| std::fs::read(dir.join(f)).unwrap())
    .collect();
    files.push(size.stdout.into_bytes());
    files
}

#[test]
fn spilled_steps_write_the_bytes_of_steps_in_memory_at_every_worker_count() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    parties(dir);
    let whole = round(dir, None, "2", "whole");
    assert!(whole.iter().all(|f| !f.is_empty()));
    // Rows matched, and resolved to the starter's.
    let resolved = String::from_utf8(whole[10].clone()).unwrap();
    assert!(resolved.lines().count() > 100, "{resolved}");
    for workers in ["1", "2", "3"] {
        let spilled = round(dir, Some("1KiB"), workers, &format!("spilled{workers}"));
        assert!(spilled == whole, "--memory 1KiB on {workers} workers");
    }
    assert!(leftovers(dir).is_empty(), "{:?}", leftovers(dir));
}

#[test]
fn a_piped_request_is_answered_as_a_file_is() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    parties(dir);
    let whole = round(dir, Some("1KiB"), "2", "file");
    let respond = |joiner_count: &str, out: &str| {
        crate::rules::piped(
            dir,
            &[
                "psi",
                "respond",
                "--key",
                "starter.key",
                "--request",
                "/dev/stdin",
                "--joiner-count",
                joiner_count,
                "--memory",
                "1KiB",
                "--tmp",
                "tmp",
                "--out",
                out,
                "-q",
            ],
            std::fs::read(dir.join("file-request.bin")).unwrap(),
        )
    };
    let piped = respond("600", "piped.bin");
    assert!(piped.ok, "{}", piped.stderr);
    assert_eq!(std::fs::read(dir.join("piped.bin")).unwrap(), whole[2]);
    // A pipe longer than a request of --joiner-count elements is refused, not kept.
    let long = respond("10", "long.bin");
    assert!(
        long.stderr
            .contains("the most a request of at most 10 elements takes"),
        "{}",
        long.stderr
    );
    assert!(!dir.join("long.bin").exists());
    assert_eq!(std::fs::read_dir(dir.join("tmp")).unwrap().count(), 0);
}

/// A sort whose merge pass cannot write its output (a file past `ulimit -f`, as on a full
/// disk) fails naming its folder, once, and leaves nothing: no output, no temporary file.
#[test]
fn a_disk_that_fills_mid_merge_is_a_clear_error_that_leaves_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    // 1,000 short keys: the keys file (about 12 KB) and every run (12 records, 480 bytes) fit
    // under 20 KiB; the first merge pass (64 runs, 30,720 bytes) does not.
    let keys: String = (0..1000).map(|i| format!("k{i}\n")).collect();
    std::fs::write(dir.join("keys.txt"), keys).unwrap();
    ok(dir, &["psi", "key", "new", "--out", "joiner.key"]);
    std::fs::create_dir(dir.join("tmp")).unwrap();
    std::fs::write(dir.join("request.bin"), b"the previous file").unwrap();
    let out = crate::rules::limited(
        dir,
        "ulimit -f 40",
        &[
            "psi",
            "request",
            "--key",
            "joiner.key",
            "--input",
            "keys.txt",
            "--memory",
            "1KiB",
            "--tmp",
            "tmp",
            "--out",
            "request.bin",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("temporary files in") && stderr.contains("/tmp/.lockstep-tmp-"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("File too large").count(), 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        std::fs::read(dir.join("request.bin")).unwrap(),
        b"the previous file"
    );
    assert_eq!(std::fs::read_dir(dir.join("tmp")).unwrap().count(), 0);
    assert!(leftovers(dir).is_empty(), "{:?}", leftovers(dir));
}

#[test]
fn budgets_are_checked() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    parties(dir);
    let request = ["psi", "request", "--key", "joiner.key", "--out", "r.bin"];
    let args = with(&with(&request, &JOINER), &["--memory", "2GB"]);
    fails_with(dir, &args, 2, "unknown unit \"GB\"");
    let args = with(&with(&request, &JOINER), &["--memory", "512"]);
    fails_with(dir, &args, 2, "less than the least, 1KiB");
    let args = with(&with(&request, &JOINER), &["--memory", "99999999999TiB"]);
    fails_with(dir, &args, 2, "is not a size");
    let args = with(&with(&request, &JOINER), &["--tmp", "joiner.csv"]);
    fails(dir, &args, "--tmp joiner.csv is not a folder");
    let args = with(&with(&request, &JOINER), &["--tmp", "none"]);
    fails(dir, &args, "--tmp none: cannot use it for temporary files");
    assert!(!dir.join("r.bin").exists());
}
