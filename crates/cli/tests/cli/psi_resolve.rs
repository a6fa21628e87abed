//! `psi resolve` checks what it joins: the starter's input against the permutation, the pairs
//! against the setup and against what an honest joiner can send.

use std::path::Path;

use crate::{fails, fails_with, ok, organisations, raw_round, resolve_args};

/// An edit of a pairs file's data rows.
type Edit = dyn Fn(&mut Vec<Vec<String>>);

/// Rewrites the data rows of the pairs file with `edit` (header lines kept).
fn edit_pairs(dir: &Path, edit: impl Fn(&mut Vec<Vec<String>>)) {
    let text = std::fs::read_to_string(dir.join("pairs.csv")).unwrap();
    let (preamble, rows): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.starts_with('#'));
    let mut data: Vec<Vec<String>> = rows[1..]
        .iter()
        .map(|r| r.split(',').map(str::to_owned).collect())
        .collect();
    edit(&mut data);
    let mut out: Vec<String> = preamble.iter().map(|l| (*l).to_owned()).collect();
    out.push(rows[0].to_owned());
    out.extend(data.iter().map(|r| r.join(",")));
    std::fs::write(dir.join("forged.csv"), out.join("\n") + "\n").unwrap();
}

fn resolve_forged<'a>() -> Vec<&'a str> {
    let mut args = resolve_args("rows.csv", &[]);
    args[5] = "forged.csv";
    args
}

#[test]
fn a_reordered_or_edited_input_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    raw_round(dir);
    let original = std::fs::read_to_string(dir.join("clinic.csv")).unwrap();
    let mut lines: Vec<&str> = original.lines().collect();
    // Rows reordered: same keys, other rows. Today's bug joined the wrong rows silently.
    lines[1..].reverse();
    std::fs::write(dir.join("clinic.csv"), lines.join("\n") + "\n").unwrap();
    fails(
        dir,
        &resolve_args("rows.csv", &[]),
        "clinic.csv: the input's keys are not those the setup was made from",
    );
    // A key edited.
    std::fs::write(
        dir.join("clinic.csv"),
        original.replace("Alan Turing", "Alan Turning"),
    )
    .unwrap();
    fails(
        dir,
        &resolve_args("rows.csv", &[]),
        "the input's keys are not those the setup was made from",
    );
    // A row added.
    std::fs::write(
        dir.join("clinic.csv"),
        original.clone() + "c6,Hedy Lamarr,1914-11-09,w\n",
    )
    .unwrap();
    fails(
        dir,
        &resolve_args("rows.csv", &[]),
        "clinic.csv: the input has 6 rows, but the setup was made from 5",
    );
    assert!(!dir.join("rows.csv").exists());
    // Other key flags than the setup's: a usage error naming both.
    std::fs::write(dir.join("clinic.csv"), &original).unwrap();
    let mut args = resolve_args("rows.csv", &[]);
    args.retain(|a| *a != "--normalize");
    fails_with(
        dir,
        &args,
        2,
        "perm.csv was made with --column \"name\" --column \"dob\" --normalize; this run asks for --column \"name\" --column \"dob\"",
    );
    ok(dir, &resolve_args("rows.csv", &[]));
}

/// The reproduction at size: 500 rows reversed gave 500 wrong rows and exit 0.
#[test]
fn five_hundred_reordered_rows_are_refused() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let rows: Vec<String> = (0..500).map(|i| format!("p{i}@example.org")).collect();
    std::fs::write(dir.join("s.txt"), rows.join("\n") + "\n").unwrap();
    std::fs::write(dir.join("j.txt"), rows.join("\n") + "\n").unwrap();
    ok(dir, &["psi", "key", "new", "--out", "s.key"]);
    ok(dir, &["psi", "key", "new", "--out", "j.key"]);
    let q = "-q";
    ok(
        dir,
        &[
            "psi", "request", "--key", "j.key", "--input", "j.txt", "--out", "req.bin", q,
        ],
    );
    ok(
        dir,
        &[
            "psi",
            "setup",
            "--key",
            "s.key",
            "--input",
            "s.txt",
            "--joiner-count",
            "500",
            "--permutation-out",
            "perm.csv",
            "--out",
            "setup.bin",
            q,
        ],
    );
    ok(
        dir,
        &[
            "psi",
            "respond",
            "--key",
            "s.key",
            "--request",
            "req.bin",
            "--joiner-count",
            "500",
            "--out",
            "resp.bin",
            q,
        ],
    );
    ok(
        dir,
        &[
            "psi",
            "intersect",
            "--key",
            "j.key",
            "--setup",
            "setup.bin",
            "--response",
            "resp.bin",
            "--input",
            "j.txt",
            "--out",
            "m.csv",
            "--pairs-out",
            "pairs.csv",
            q,
        ],
    );
    let resolve = [
        "psi",
        "resolve",
        "--permutation",
        "perm.csv",
        "--matches",
        "pairs.csv",
        "--input",
        "s.txt",
        "--out",
        "rows.csv",
        q,
    ];
    ok(dir, &resolve);
    let good = std::fs::read_to_string(dir.join("rows.csv")).unwrap();
    assert_eq!(good.lines().count(), 501);
    assert!(good.lines().skip(1).all(|l| {
        let f: Vec<&str> = l.split(',').collect();
        f[0] == f[1]
    }));
    let mut reversed = rows.clone();
    reversed.reverse();
    std::fs::write(dir.join("s.txt"), reversed.join("\n") + "\n").unwrap();
    fails(
        dir,
        &resolve,
        "s.txt: the input's keys are not those the setup was made from",
    );
    assert_eq!(std::fs::read_to_string(dir.join("rows.csv")).unwrap(), good);
}

#[test]
fn pairs_no_honest_joiner_sends_are_refused() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    raw_round(dir);
    // The honest pairs: registry row 1 (key 0) and row 3 (key 1), each at its position of the
    // clinic's three distinct keys.
    let cases: [(&Edit, &str); 5] = [
        (
            &|d| d[0][2] = "3".into(),
            "forged.csv: pair 1: setup position 3 is outside the setup's 3 positions",
        ),
        (
            &|d| d[1][0] = "4".into(),
            "forged.csv: pair 2: joiner row 4 is beyond the joiner's 3 rows",
        ),
        (
            &|d| {
                d[1][2] = d[0][2].clone();
            },
            "forged.csv: pair 2: setup position",
        ),
        (
            &|d| d[1][1] = "9".into(),
            "forged.csv: pair 2: joiner key 9 is beyond the joiner's 3 keys",
        ),
        (
            &|d| {
                let first = d[0].clone();
                d.push(first);
            },
            "forged.csv: pair 3: joiner row 1 is listed twice",
        ),
    ];
    for (edit, message) in cases {
        edit_pairs(dir, edit);
        fails(dir, &resolve_forged(), message);
        assert!(!dir.join("rows.csv").exists());
    }
    // Two joiner keys at one position.
    edit_pairs(dir, |d| d[1][2] = d[0][2].clone());
    let run = fails(dir, &resolve_forged(), "is claimed by joiner keys 0 and 1");
    assert!(
        run.stderr.contains("no honest joiner matches it twice"),
        "{}",
        run.stderr
    );
    // The joiner's own matches file is not a pairs file.
    let mut args = resolve_args("rows.csv", &[]);
    args[5] = "matches.csv";
    fails(
        dir,
        &args,
        "matches.csv is not a file `lockstep psi intersect --pairs-out` writes",
    );
}

#[test]
fn pairs_of_another_setup_are_refused() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    raw_round(dir);
    let first_pairs = std::fs::read(dir.join("pairs.csv")).unwrap();
    // A second round with a new starter key: its setup differs, and so does its SHA-256.
    ok(
        dir,
        &["psi", "key", "new", "--out", "clinic.key", "--force"],
    );
    raw_round(dir);
    std::fs::write(dir.join("forged.csv"), first_pairs).unwrap();
    fails(
        dir,
        &resolve_forged(),
        "forged.csv: the pairs answer the setup with SHA-256",
    );
    ok(dir, &resolve_args("rows.csv", &[]));
}
