//! Whole rounds over files, worker counts, keys, the demo.

use crate::{
    CLINIC, fails, intersect, lockstep_in, ok, organisations, ran_on, raw_round, resolve_args, with,
};

#[test]
fn a_whole_round_between_two_organisations() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    raw_round(dir);
    let matches = std::fs::read_to_string(dir.join("matches.csv")).unwrap();
    let lines: Vec<&str> = matches.lines().collect();
    assert_eq!(lines[0], "joiner_row,setup_position,name,dob,city");
    assert_eq!(lines.len(), 3, "{matches}");
    assert!(
        lines[1].starts_with("1,") && lines[1].ends_with(",grace  hopper,1906-12-09,Arlington"),
        "{matches}"
    );
    assert!(
        lines[2].starts_with("3,") && lines[2].ends_with(",ADA LOVELACE ,1815-12-10,London"),
        "{matches}"
    );
    // The pairs file names the setup it answers by the setup file's SHA-256.
    let pairs = std::fs::read_to_string(dir.join("pairs.csv")).unwrap();
    assert!(pairs.starts_with("# lockstep psi pairs v1\n"), "{pairs}");
    assert!(
        pairs.contains("# joiner_rows: 3\n# joiner_keys: 3\n"),
        "{pairs}"
    );
    let sha = sha256sum(&dir.join("setup.bin"));
    assert!(
        pairs.contains(&format!("# setup_sha256: {sha}\n")),
        "{pairs}"
    );
    let permutation = std::fs::read_to_string(dir.join("perm.csv")).unwrap();
    assert!(
        permutation.contains(&format!("# setup_sha256: {sha}\n")),
        "{permutation}"
    );
    assert!(
        permutation.contains("# key_columns: name,dob\n# normalize: true\n"),
        "{permutation}"
    );

    ok(dir, &resolve_args("rows.csv", &[]));
    let rows = std::fs::read_to_string(dir.join("rows.csv")).unwrap();
    assert_eq!(
        rows,
        "joiner_row,starter_row,id,name,dob,note\n\
         1,3,c3,Grace Hopper,1906-12-09,z\n\
         3,1,c1,Ada Lovelace,1815-12-10,x\n\
         3,4,c4,Ada Lovelace,1815-12-10,dup\n"
    );

    // The size alone, and a GCS setup read by the same joiner.
    let size = ok(dir, &intersect("setup.bin", "response.bin", &["--size"]));
    assert_eq!(size.stdout, "2\n");
    ok(
        dir,
        &with(
            &[
                "psi",
                "setup",
                "--key",
                "clinic.key",
                "--joiner-count",
                "3",
                "--format",
                "gcs",
                "--out",
                "gcs.bin",
            ],
            &CLINIC,
        ),
    );
    ok(
        dir,
        &intersect(
            "gcs.bin",
            "response.bin",
            &["--request", "request.bin", "--out", "gcs.csv"],
        ),
    );
    let gcs = std::fs::read_to_string(dir.join("gcs.csv")).unwrap();
    assert_eq!(gcs.lines().next(), Some("joiner_row,name,dob,city"));
    assert_eq!(gcs.lines().count(), 3);

    // Without the request, three keys are too few to tell a size-only response by its order;
    // and a GCS setup has no positions to send back. Neither run writes anything.
    fails(
        dir,
        &intersect("setup.bin", "response.bin", &["--out", "new.csv"]),
        "response.bin: a response of 3 elements cannot be told from a size-only response by its order (8 are needed): the request is needed to read it: pass --request (or --size)",
    );
    crate::fails_with(
        dir,
        &intersect(
            "gcs.bin",
            "response.bin",
            &[
                "--request",
                "request.bin",
                "--out",
                "new.csv",
                "--pairs-out",
                "new-pairs.csv",
            ],
        ),
        2,
        "--pairs-out needs a raw setup: gcs.bin is a gcs setup",
    );
    assert!(!dir.join("new.csv").exists() && !dir.join("new-pairs.csv").exists());
}

/// The SHA-256 of a file, as `sha256sum` prints it.
fn sha256sum(path: &std::path::Path) -> String {
    let out = std::process::Command::new("sha256sum")
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

#[test]
fn outputs_do_not_depend_on_the_worker_count() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    // Enough keys that 5 workers each get the 256 a PSI worker needs.
    let keys = 5 * 256 + 20;
    let values: String = (0..keys)
        .map(|i| format!("person{i}@example.org\n"))
        .collect();
    std::fs::write(dir.join("values.txt"), values).unwrap();
    ok(dir, &["psi", "key", "new", "--out", "k"]);
    for workers in ["1", "2", "3", "5"] {
        let setup = ok(
            dir,
            &[
                "--workers",
                workers,
                "psi",
                "setup",
                "--key",
                "k",
                "--input",
                "values.txt",
                "--joiner-count",
                "1300",
                "--permutation-out",
                &format!("perm{workers}.csv"),
                "--out",
                &format!("setup{workers}.bin"),
            ],
        );
        assert!(
            setup.stderr.contains(&format!(" {}, ", ran_on(workers))),
            "{}",
            setup.stderr
        );
        assert!(!setup.stderr.contains("lowered"), "{}", setup.stderr);
        let request = ok(
            dir,
            &[
                "--workers",
                workers,
                "psi",
                "request",
                "--key",
                "k",
                "--input",
                "values.txt",
                "--out",
                &format!("request{workers}.bin"),
            ],
        );
        assert!(
            request.stderr.contains(&format!(" {})", ran_on(workers))),
            "{}",
            request.stderr
        );
        let respond = ok(
            dir,
            &[
                "--workers",
                workers,
                "psi",
                "respond",
                "--key",
                "k",
                "--request",
                &format!("request{workers}.bin"),
                "--joiner-count",
                "1300",
                "--out",
                &format!("response{workers}.bin"),
            ],
        );
        assert!(
            respond.stderr.contains(&format!(" {})", ran_on(workers))),
            "{}",
            respond.stderr
        );
        let intersect = ok(
            dir,
            &[
                "--workers",
                workers,
                "psi",
                "intersect",
                "--key",
                "k",
                "--setup",
                &format!("setup{workers}.bin"),
                "--response",
                &format!("response{workers}.bin"),
                "--input",
                "values.txt",
                "--request",
                &format!("request{workers}.bin"),
                "--out",
                &format!("matches{workers}.csv"),
            ],
        );
        assert!(
            intersect
                .stderr
                .contains(&format!(" {}, raw setup)", ran_on(workers))),
            "{}",
            intersect.stderr
        );
    }
    for name in ["setup", "perm", "request", "response", "matches"] {
        let ext = if matches!(name, "perm" | "matches") {
            "csv"
        } else {
            "bin"
        };
        let one = std::fs::read(dir.join(format!("{name}1.{ext}"))).unwrap();
        for workers in ["2", "3", "5"] {
            assert_eq!(
                one,
                std::fs::read(dir.join(format!("{name}{workers}.{ext}"))).unwrap(),
                "{name} at {workers}"
            );
        }
    }
    // A count lowered for a small input is said so.
    std::fs::write(dir.join("few.txt"), "a\nb\nc\n").unwrap();
    let run = ok(
        dir,
        &[
            "--workers",
            "5",
            "psi",
            "request",
            "--key",
            "k",
            "--input",
            "few.txt",
            "--out",
            "few.bin",
        ],
    );
    assert!(
        run.stderr
            .contains("--workers 5 lowered to 1 for 3 keys: a worker gets at least 256"),
        "{}",
        run.stderr
    );
}

#[test]
fn keys_are_private_and_never_overwritten_by_accident() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    ok(dir, &["psi", "key", "new", "--out", "a.key"]);
    let first = std::fs::read(dir.join("a.key")).unwrap();
    assert_eq!(first.len(), 32);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("a.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    fails(
        dir,
        &["psi", "key", "new", "--out", "a.key"],
        "already exists",
    );
    assert_eq!(std::fs::read(dir.join("a.key")).unwrap(), first);
    ok(dir, &["psi", "key", "new", "--out", "a.key", "--force"]);
    assert_ne!(std::fs::read(dir.join("a.key")).unwrap(), first);
    // A key never goes to a device or standard output.
    fails(
        dir,
        &["psi", "key", "new", "--out", "/dev/null", "--force"],
        "a key is written to a regular file only",
    );
    let r = lockstep_in(Some(dir), &["psi", "key", "new", "--out", "-"], &[]);
    assert!(!r.ok && r.stdout.is_empty(), "{}", r.stderr);
}

#[test]
fn the_demo_runs_and_checks_itself() {
    let temp = tempfile::tempdir().unwrap();
    let r = ok(
        temp.path(),
        &["psi", "demo", "--rows", "600", "--dir", "demo"],
    );
    assert!(
        r.stdout
            .contains("equal to the plain join of the two files"),
        "{}",
        r.stdout
    );
    assert!(temp.path().join("demo/matched-rows.csv").exists());
}

#[test]
fn a_demo_past_the_most_sample_rows_is_refused_before_it_writes() {
    let temp = tempfile::tempdir().unwrap();
    let r = lockstep_in(
        Some(temp.path()),
        &["psi", "demo", "--rows", "2000001", "--dir", "demo"],
        &[],
    );
    assert!(!r.ok, "{}", r.stdout);
    assert!(
        r.stderr
            .contains("--rows: a sample holds at most 2000000 people, not 2000001"),
        "{}",
        r.stderr
    );
    assert!(!temp.path().join("demo/starter.csv").exists());
}
