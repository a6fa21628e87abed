//! `lockstep ceremony`: a phase 1 chain through the binary, and its refusals.

use std::fs;

use crate::{fails_with, ok};

fn hash_of(stdout: &str, label: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no `{label}` in {stdout}"))
        .trim()
        .to_owned()
}

#[test]
fn a_chain_is_made_verified_sealed_and_described() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(
        d,
        &["ceremony", "phase1", "new", "--power", "6", "--out", "c0"],
    );
    let c1 = ok(
        d,
        &[
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            "c0",
            "--out",
            "c1",
            "--entropy",
            "dice 3 5 1",
        ],
    );
    let h1 = hash_of(&c1.stdout, "contribution hash:");
    let c2 = ok(
        d,
        &[
            "--workers",
            "3",
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            "c1",
            "--out",
            "c2",
        ],
    );
    let h2 = hash_of(&c2.stdout, "contribution hash:");
    assert_ne!(h1, h2);

    let verdict = ok(d, &["ceremony", "phase1", "verify", "c0", "c1", "c2"]);
    assert!(
        verdict
            .stdout
            .contains(&format!("c2: ok, contribution hash {h2}")),
        "{}",
        verdict.stdout
    );
    assert!(
        verdict
            .stdout
            .ends_with("verified: 2 contribution(s), all valid\n"),
        "{}",
        verdict.stdout
    );
    // Without the initial object, and one file against its predecessor.
    ok(d, &["ceremony", "phase1", "verify", "c1", "c2"]);
    ok(
        d,
        &["ceremony", "phase1", "verify", "--previous", "c1", "c2"],
    );

    let sealed = ok(
        d,
        &[
            "ceremony",
            "phase1",
            "seal",
            "--in",
            "c2",
            "--beacon",
            "deadbeef",
            "--iterations",
            "5",
            "--out",
            "srs",
        ],
    );
    let hs = hash_of(&sealed.stdout, "sealed SRS hash:");
    let check = [
        "ceremony",
        "phase1",
        "verify",
        "c1",
        "c2",
        "--sealed",
        "srs",
        "--beacon",
        "deadbeef",
        "--iterations",
        "5",
    ];
    assert!(
        ok(d, &check)
            .stdout
            .contains(&format!("srs: ok, the seal of the chain, hash {hs}"))
    );
    // Another iteration count is another beacon.
    let mut wrong = check.to_vec();
    wrong[10] = "4";
    fails_with(d, &wrong, 1, "srs: REJECTED: not the seal of the chain");

    let info = ok(d, &["ceremony", "info", "c2"]);
    assert!(info.stdout.contains("power: 6 (N = 64)"), "{}", info.stdout);
    assert!(
        info.stdout
            .contains(&format!("contribution: made on the object with hash {h1}"))
    );
    assert!(info.stdout.contains(&format!("hash: {h2}")));
    assert!(
        ok(d, &["ceremony", "info", "c0"])
            .stdout
            .contains("the initial object")
    );
    assert!(
        ok(d, &["ceremony", "info", "srs"])
            .stdout
            .contains("sealed phase 1 SRS")
    );
}

#[test]
fn contributions_never_replace_their_input_and_bad_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    chain(d, 4, 1);
    let before = fs::read(d.join("c1")).unwrap();
    // Ceremony files are published: readable by all, unlike PSI's records and keys.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(d.join("c1")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
    }
    fails_with(
        d,
        &[
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            "c1",
            "--out",
            "c1",
        ],
        2,
        "an output never replaces an input",
    );
    assert_eq!(fs::read(d.join("c1")).unwrap(), before);

    // Truncated: named with the file, nothing written.
    fs::write(d.join("short"), &before[..before.len() - 100]).unwrap();
    fails_with(
        d,
        &[
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            "short",
            "--out",
            "c2",
        ],
        1,
        "short: truncated: the file ends at byte",
    );
    assert!(!d.join("c2").exists());
    // A point off the curve in the tau proof commitment.
    let mut bad = before.clone();
    bad[47] ^= 1;
    fs::write(d.join("bad"), &bad).unwrap();
    let run = fails_with(
        d,
        &["ceremony", "phase1", "verify", "c0", "bad"],
        1,
        "bad: tau proof commitment at byte 0:",
    );
    assert!(
        run.stderr.contains("not on the curve")
            || run.stderr.contains("not in the prime-order subgroup"),
        "{}",
        run.stderr
    );
    // A contribution presented after itself repeats a step.
    fails_with(
        d,
        &["ceremony", "phase1", "verify", "c0", "c1", "c1"],
        1,
        "c1: REJECTED: challenge:",
    );
    // Usage errors.
    fails_with(
        d,
        &["ceremony", "phase1", "new", "--power", "40", "--out", "x"],
        2,
        "--power: 40 is outside 1 to 28",
    );
    fails_with(
        d,
        &[
            "ceremony", "phase1", "seal", "--in", "c1", "--beacon", "xyz", "--out", "s",
        ],
        2,
        "--beacon: 'x' (character 1) is not a hex digit",
    );
    assert!(!d.join("s").exists());
}

/// Reading holds the arrays (96 bytes per G1 point, 192 per G2 point: `576N` bytes) and a few
/// chunks, measured against the same binary's footprint on a power-1 file.
#[test]
fn reading_holds_the_arrays_and_a_few_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(
        d,
        &["ceremony", "phase1", "new", "--power", "1", "--out", "tiny"],
    );
    ok(
        d,
        &["ceremony", "phase1", "new", "--power", "15", "--out", "big"],
    );
    let (ok_tiny, _, base) =
        crate::psi_limits::peak_rss(d, &["-q", "--workers", "2", "ceremony", "info", "tiny"]);
    let (ok_big, stderr, big) =
        crate::psi_limits::peak_rss(d, &["-q", "--workers", "2", "ceremony", "info", "big"]);
    assert!(ok_tiny && ok_big, "{stderr}");
    let arrays_kib = 576 * (1 << 15) / 1024;
    // Chunks: two input and one output chunk of G2 points (1.5 MiB), the 1 MiB read buffer.
    let chunks_kib = 4 * 1024;
    assert!(
        big <= base + arrays_kib + chunks_kib,
        "peak {big} KiB > {base} + {arrays_kib} + {chunks_kib}"
    );
    assert!(
        big >= base + arrays_kib / 2,
        "peak {big} KiB: the arrays were not all held?"
    );

    // A header announcing 2^27 points over a short file allocates nothing for them.
    let mut bytes = fs::read(d.join("big")).unwrap()[..432 + 8 + 96 + 48 * 100].to_vec();
    bytes[432..440].copy_from_slice(&(1u64 << 27).to_be_bytes());
    fs::write(d.join("liar"), &bytes).unwrap();
    let (ok_liar, stderr, liar) =
        crate::psi_limits::peak_rss(d, &["-q", "ceremony", "info", "liar"]);
    assert!(!ok_liar && stderr.contains("truncated"), "{stderr}");
    assert!(
        liar <= base + chunks_kib,
        "peak {liar} KiB for a lying header"
    );
}

/// In `d`: `c0`, the initial object for `2^power`, and `c1`..`cK`, `contributions` contributions.
pub(crate) fn chain(d: &std::path::Path, power: u32, contributions: usize) {
    let power = power.to_string();
    ok(
        d,
        &[
            "ceremony", "phase1", "new", "--power", &power, "--out", "c0",
        ],
    );
    for k in 1..=contributions {
        let (input, out) = (format!("c{}", k - 1), format!("c{k}"));
        ok(
            d,
            &[
                "ceremony",
                "phase1",
                "contribute",
                "--in",
                &input,
                "--out",
                &out,
            ],
        );
    }
}

/// Every ceremony command says the worker count it ran on, asked in the ceremony's grain
/// (points): 2 workers asked for a power-6 chain (318 points) get 2; the same request on a
/// power-1 object (8 points) is lowered to 1, and says so.
#[test]
fn every_command_runs_on_the_workers_asked_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let two = |args: &[&str]| {
        let run = ok(d, &[&["--workers", "2"][..], args].concat());
        assert!(
            run.stderr.contains(" on 2 workers"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("lowered"), "{args:?}: {}", run.stderr);
        run
    };
    two(&["ceremony", "phase1", "new", "--power", "6", "--out", "c0"]);
    two(&[
        "ceremony",
        "phase1",
        "contribute",
        "--in",
        "c0",
        "--out",
        "c1",
    ]);
    two(&["ceremony", "phase1", "verify", "c0", "c1"]);
    two(&[
        "ceremony", "phase1", "seal", "--in", "c1", "--beacon", "00", "--out", "srs",
    ]);
    two(&["ceremony", "info", "c1"]);
    two(&["ceremony", "ptau", "export", "c1", "--out", "c1.ptau"]);
    two(&["ceremony", "ptau", "import", "c1.ptau", "--out", "back"]);
    let small = ok(
        d,
        &[
            "--workers",
            "2",
            "ceremony",
            "phase1",
            "new",
            "--power",
            "1",
            "--out",
            "tiny",
        ],
    );
    assert!(
        small
            .stderr
            .contains("--workers 2 lowered to 1 for 8 points: a worker gets at least 128"),
        "{}",
        small.stderr
    );
    assert!(small.stderr.contains(" on 1 worker\n"), "{}", small.stderr);
}
