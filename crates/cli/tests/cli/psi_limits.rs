//! Memory stays bounded on hostile messages and inputs.

use std::path::Path;

use crate::{REGISTRY, fails, intersect, organisations, raw_round, with};

/// Runs `lockstep args` in `dir` under GNU time, returning (success, stderr, peak RSS in KiB).
pub(crate) fn peak_rss(dir: &Path, args: &[&str]) -> (bool, String, u64) {
    let report = dir.join("time.txt");
    let out = std::process::Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&report)
        .arg(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .current_dir(dir)
        .env_remove("LOCKSTEP_WORKERS")
        .output()
        .expect("GNU time (/usr/bin/time, Debian's `time`; scripts/setup installs it)");
    let kib = std::fs::read_to_string(&report)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        kib,
    )
}

#[test]
fn a_request_of_thirty_million_tiny_elements_fails_in_little_memory() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    // 30,000,000 one-byte elements (90 MB): prost held 1.73 GB of them before element 0 failed.
    let request = [0x12u8, 0x01, 0x02].repeat(30_000_000);
    std::fs::write(dir.join("huge.bin"), &request).unwrap();
    drop(request);
    let (ok, stderr, kib) = peak_rss(
        dir,
        &[
            "psi",
            "respond",
            "--key",
            "clinic.key",
            "--request",
            "huge.bin",
            "--joiner-count",
            "30000000",
            "--out",
            "resp.bin",
        ],
    );
    assert!(!ok);
    assert!(
        stderr.contains(
            "huge.bin: element 0 of the request message is 1 bytes long, not 33 (a compressed P-256 point)"
        ),
        "{stderr}"
    );
    assert!(kib < 100 * 1024, "peak RSS {kib} KiB");
    assert!(!dir.join("resp.bin").exists());
}

#[test]
fn messages_larger_than_their_counts_are_refused_before_reading() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    raw_round(dir);
    // The starter bounds a request by the joiner count its setup was sized for.
    fails(
        dir,
        &[
            "psi",
            "respond",
            "--key",
            "clinic.key",
            "--request",
            "request.bin",
            "--joiner-count",
            "1",
            "--out",
            "r.bin",
        ],
        "request.bin: 107 bytes is more than a request of at most 1 elements takes (99 bytes)",
    );
    // One element more than the joiner count, in a small file: refused while decoding.
    fails(
        dir,
        &[
            "psi",
            "respond",
            "--key",
            "clinic.key",
            "--request",
            "request.bin",
            "--joiner-count",
            "2",
            "--out",
            "r.bin",
        ],
        "request.bin: the request message holds more than 2 elements, the most allowed here",
    );
    // The joiner bounds a response by its own key count.
    let mut big = std::fs::read(dir.join("response.bin")).unwrap();
    let one = big[..35].to_vec();
    for _ in 0..10 {
        big.extend_from_slice(&one);
    }
    std::fs::write(dir.join("big.bin"), &big).unwrap();
    fails(
        dir,
        &intersect(
            "setup.bin",
            "big.bin",
            &["--request", "request.bin", "--out", "m.csv"],
        ),
        "big.bin: 455 bytes is more than a response of at most 3 elements takes (169 bytes)",
    );
}

#[test]
fn devices_are_neither_keys_nor_records() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    fails(
        dir,
        &with(
            &["psi", "request", "--key", "/dev/zero", "--out", "r.bin"],
            &REGISTRY,
        ),
        "/dev/zero is a character device, not a key file",
    );
    fails(
        dir,
        &[
            "psi",
            "request",
            "--key",
            "registry.key",
            "--input",
            "/dev/zero",
            "--out",
            "r.bin",
        ],
        "/dev/zero is a character device: --input takes a regular file or a pipe",
    );
    fails(
        dir,
        &[
            "psi",
            "respond",
            "--key",
            "clinic.key",
            "--request",
            "/dev/urandom",
            "--joiner-count",
            "3",
            "--out",
            "r.bin",
        ],
        "/dev/urandom is a character device: --request takes a regular file or a pipe",
    );
    assert!(!dir.join("r.bin").exists());
}

#[test]
fn an_endless_line_fails_at_once() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    // Two megabytes without a line break, plain text or CSV.
    std::fs::write(dir.join("blob.txt"), vec![b'x'; 2 << 20]).unwrap();
    fails(
        dir,
        &[
            "psi",
            "request",
            "--key",
            "registry.key",
            "--input",
            "blob.txt",
            "--out",
            "r.bin",
        ],
        "line 1 is longer than 1048576 bytes: this is not a record file",
    );
    let mut csv = b"name\n".to_vec();
    csv.extend(vec![b'y'; 2 << 20]);
    std::fs::write(dir.join("blob.csv"), csv).unwrap();
    let args = with(
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
        &["--input", "blob.csv", "--column", "name"],
    );
    fails(dir, &args, "line 2 is longer than 1048576 bytes");
}
