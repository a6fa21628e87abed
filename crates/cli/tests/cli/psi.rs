use std::path::Path;

use crate::{Run, lockstep_in};

fn run(dir: &Path, args: &[&str]) -> Run {
    lockstep_in(Some(dir), args, &[])
}

fn ok(dir: &Path, args: &[&str]) -> Run {
    let r = run(dir, args);
    assert!(r.ok, "lockstep {args:?} failed: {}", r.stderr);
    r
}

fn fails(dir: &Path, args: &[&str], message: &str) {
    let r = run(dir, args);
    assert!(!r.ok, "lockstep {args:?} succeeded");
    assert!(
        r.stderr.contains(message),
        "lockstep {args:?}: expected {message:?} in {:?}",
        r.stderr
    );
}

/// Two small organisations: a clinic (starter) and a registry (joiner), keyed on name + birth
/// date, with case and spacing differences and a duplicate row.
fn files(dir: &Path) {
    std::fs::write(
        dir.join("clinic.csv"),
        "id,name,dob,note\n\
         c1,Ada Lovelace,1815-12-10,x\n\
         c2,Alan Turing,1912-06-23,y\n\
         c3,Grace Hopper,1906-12-09,z\n\
         c4,Ada Lovelace,1815-12-10,dup\n\
         c5,,,\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("registry.csv"),
        "name,dob,city\n\
         grace  hopper,1906-12-09,Arlington\n\
         Edsger Dijkstra,1930-05-11,Nuenen\n\
         ADA LOVELACE ,1815-12-10,London\n",
    )
    .unwrap();
    ok(dir, &["psi", "key", "new", "--out", "clinic.key"]);
    ok(dir, &["psi", "key", "new", "--out", "registry.key"]);
}

const CLINIC: [&str; 8] = [
    "--input",
    "clinic.csv",
    "--column",
    "name",
    "--column",
    "dob",
    "--normalize",
    "--quiet",
];
const REGISTRY: [&str; 8] = [
    "--input",
    "registry.csv",
    "--column",
    "name",
    "--column",
    "dob",
    "--normalize",
    "--quiet",
];

fn with<'a>(base: &[&'a str], input: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(input).copied().collect()
}

#[test]
fn a_whole_round_between_two_organisations() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    files(dir);
    ok(
        dir,
        &with(
            &[
                "psi",
                "request",
                "--key",
                "registry.key",
                "--out",
                "request.bin",
            ],
            &REGISTRY,
        ),
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
                "3",
                "--permutation-out",
                "perm.csv",
                "--out",
                "setup.bin",
            ],
            &CLINIC,
        ),
    );
    ok(
        dir,
        &[
            "psi",
            "respond",
            "--key",
            "clinic.key",
            "--request",
            "request.bin",
            "--out",
            "response.bin",
            "-q",
        ],
    );
    ok(
        dir,
        &with(
            &[
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
                "--out",
                "matches.csv",
                "--pairs-out",
                "pairs.csv",
            ],
            &REGISTRY,
        ),
    );
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

    ok(
        dir,
        &with(
            &[
                "psi",
                "resolve",
                "--permutation",
                "perm.csv",
                "--matches",
                "pairs.csv",
                "--out",
                "rows.csv",
            ],
            &CLINIC,
        ),
    );
    let rows = std::fs::read_to_string(dir.join("rows.csv")).unwrap();
    assert_eq!(
        rows,
        "joiner_row,starter_row,id,name,dob,note\n\
         1,3,c3,Grace Hopper,1906-12-09,z\n\
         3,1,c1,Ada Lovelace,1815-12-10,x\n\
         3,4,c4,Ada Lovelace,1815-12-10,dup\n"
    );

    // The size alone, and a GCS setup read by the same joiner.
    let size = ok(
        dir,
        &with(
            &[
                "psi",
                "intersect",
                "--key",
                "registry.key",
                "--setup",
                "setup.bin",
                "--response",
                "response.bin",
                "--size",
            ],
            &REGISTRY,
        ),
    );
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
        &with(
            &[
                "psi",
                "intersect",
                "--key",
                "registry.key",
                "--setup",
                "gcs.bin",
                "--response",
                "response.bin",
                "--request",
                "request.bin",
                "--out",
                "gcs.csv",
            ],
            &REGISTRY,
        ),
    );
    let gcs = std::fs::read_to_string(dir.join("gcs.csv")).unwrap();
    assert_eq!(gcs.lines().next(), Some("joiner_row,name,dob,city"));
    assert_eq!(gcs.lines().count(), 3);

    // Without the request, three keys are too few to tell a size-only response by its order;
    // and a GCS setup has no positions to send back. Neither run writes anything.
    fails(
        dir,
        &with(
            &[
                "psi",
                "intersect",
                "--key",
                "registry.key",
                "--setup",
                "setup.bin",
                "--response",
                "response.bin",
                "--out",
                "new.csv",
            ],
            &REGISTRY,
        ),
        "pass --request",
    );
    fails(
        dir,
        &with(
            &[
                "psi",
                "intersect",
                "--key",
                "registry.key",
                "--setup",
                "gcs.bin",
                "--response",
                "response.bin",
                "--request",
                "request.bin",
                "--out",
                "new.csv",
                "--pairs-out",
                "new-pairs.csv",
            ],
            &REGISTRY,
        ),
        "--pairs-out needs a raw setup",
    );
    assert!(!dir.join("new.csv").exists() && !dir.join("new-pairs.csv").exists());
}

#[test]
fn outputs_do_not_depend_on_the_worker_count() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let values: String = (0..700)
        .map(|i| format!("person{i}@example.org\n"))
        .collect();
    std::fs::write(dir.join("values.txt"), values).unwrap();
    ok(dir, &["psi", "key", "new", "--out", "k"]);
    for workers in ["1", "2", "3", "5"] {
        ok(
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
                "700",
                "--permutation-out",
                &format!("perm{workers}.csv"),
                "--out",
                &format!("setup{workers}.bin"),
                "-q",
            ],
        );
        ok(
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
                "-q",
            ],
        );
    }
    for name in ["setup", "perm", "request"] {
        let ext = if name == "perm" { "csv" } else { "bin" };
        let one = std::fs::read(dir.join(format!("{name}1.{ext}"))).unwrap();
        for workers in ["2", "3", "5"] {
            assert_eq!(
                one,
                std::fs::read(dir.join(format!("{name}{workers}.{ext}"))).unwrap(),
                "{name} at {workers}"
            );
        }
    }
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
}

#[test]
fn bad_input_gets_a_clear_error_and_loses_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    files(dir);
    std::fs::write(dir.join("setup.bin"), b"precious").unwrap();
    fn setup<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec![
            "psi",
            "setup",
            "--key",
            "clinic.key",
            "--joiner-count",
            "3",
            "--out",
            "setup.bin",
        ];
        args.extend_from_slice(extra);
        args
    }
    fails(
        dir,
        &setup(&["--input", "clinic.csv", "--column", "email"]),
        "clinic.csv: no column named \"email\"; the header has \"id\", \"name\", \"dob\", \"note\"",
    );
    fails(
        dir,
        &setup(&["--input", "clinic.csv", "--column", "name", "--fpr", "1.5"]),
        "the false-positive rate must be in (0, 1), got 1.5",
    );
    fails(
        dir,
        &setup(&["--input", "missing.csv", "--column", "name"]),
        "missing.csv",
    );
    // The failed runs left the existing output alone.
    assert_eq!(std::fs::read(dir.join("setup.bin")).unwrap(), b"precious");

    std::fs::write(dir.join("short.key"), [7u8; 31]).unwrap();
    fails(
        dir,
        &[
            "psi",
            "request",
            "--key",
            "short.key",
            "--input",
            "registry.csv",
            "--column",
            "name",
            "--out",
            "r.bin",
        ],
        "a key file holds exactly 32 raw bytes",
    );
    std::fs::write(dir.join("zero.key"), [0u8; 32]).unwrap();
    fails(
        dir,
        &[
            "psi",
            "request",
            "--key",
            "zero.key",
            "--input",
            "registry.csv",
            "--column",
            "name",
            "--out",
            "r.bin",
        ],
        "the key is out of range",
    );

    // Truncated and garbage messages.
    ok(
        dir,
        &with(
            &[
                "psi",
                "request",
                "--key",
                "registry.key",
                "--out",
                "request.bin",
            ],
            &REGISTRY,
        ),
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
            "--out",
            "resp.bin",
        ],
        "the request message is not valid protobuf",
    );
    fails(
        dir,
        &[
            "psi",
            "respond",
            "--key",
            "clinic.key",
            "--request",
            "request.bin",
            "--size-only",
            "--out",
            "resp.bin",
        ],
        "the request is reveal-intersection, but this starter answers size-only requests only",
    );
    assert!(!dir.join("resp.bin").exists());

    // A size-only round: the joiner must ask for the size.
    ok(
        dir,
        &with(
            &[
                "psi",
                "request",
                "--key",
                "registry.key",
                "--size-only",
                "--out",
                "size.bin",
            ],
            &REGISTRY,
        ),
    );
    ok(
        dir,
        &[
            "psi",
            "respond",
            "--key",
            "clinic.key",
            "--request",
            "size.bin",
            "--size-only",
            "--out",
            "sresp.bin",
            "-q",
        ],
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
                "3",
                "--out",
                "s.bin",
            ],
            &CLINIC,
        ),
    );
    fails(
        dir,
        &with(
            &[
                "psi",
                "intersect",
                "--key",
                "registry.key",
                "--setup",
                "s.bin",
                "--response",
                "sresp.bin",
                "--request",
                "size.bin",
                "--out",
                "m.csv",
            ],
            &REGISTRY,
        ),
        "the request was size-only",
    );
    // A response for another input is refused, not misread.
    fails(
        dir,
        &[
            "psi",
            "intersect",
            "--key",
            "registry.key",
            "--setup",
            "s.bin",
            "--response",
            "sresp.bin",
            "--input",
            "clinic.csv",
            "--column",
            "id",
            "--out",
            "m.csv",
        ],
        "the response holds 3 elements but clinic.csv has 5 distinct keys",
    );
    fails(
        dir,
        &[
            "psi",
            "setup",
            "--key",
            "clinic.key",
            "--input",
            "clinic.csv",
            "--column",
            "id",
            "--joiner-count",
            "3",
            "--format",
            "gcs",
            "--permutation-out",
            "p.csv",
            "--out",
            "x.bin",
        ],
        "--permutation-out needs --format raw",
    );
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
