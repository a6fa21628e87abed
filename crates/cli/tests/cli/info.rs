use crate::lockstep;

#[test]
fn info_reports_version_parallelism_and_workers() {
    let (ok, stdout, _) = lockstep(&["info"], &[]);
    assert!(ok);
    let detected = std::thread::available_parallelism().unwrap().get();
    assert!(stdout.starts_with(&format!("lockstep {}\n", env!("CARGO_PKG_VERSION"))));
    assert!(
        stdout.contains(&format!("parallelism: {detected}\n")),
        "{stdout}"
    );
    assert!(stdout.contains(&format!(
        "workers: {detected} (from detected parallelism; cap 256)"
    )));
}

#[test]
fn the_flag_beats_the_environment() {
    let (_, stdout, _) = lockstep(&["info"], &[("LOCKSTEP_WORKERS", "3")]);
    assert!(
        stdout.contains("workers: 3 (from LOCKSTEP_WORKERS;"),
        "{stdout}"
    );
    let (_, stdout, _) = lockstep(&["--workers", "5", "info"], &[("LOCKSTEP_WORKERS", "3")]);
    assert!(stdout.contains("workers: 5 (from --workers;"), "{stdout}");
    let (_, stdout, _) = lockstep(&["info", "--workers", "7", "-q"], &[]);
    assert!(stdout.contains("workers: 7 (from --workers;"), "{stdout}");
}

#[test]
fn bad_worker_counts_are_clear_errors() {
    let (ok, _, stderr) = lockstep(&["info"], &[("LOCKSTEP_WORKERS", "lots")]);
    assert!(!ok);
    assert!(
        stderr
            .contains("LOCKSTEP_WORKERS must be a positive whole number of workers, got \"lots\""),
        "{stderr}"
    );
    let (ok, _, stderr) = lockstep(&["--workers", "0", "info"], &[]);
    assert!(!ok);
    assert!(
        stderr.contains("--workers must be a positive whole number"),
        "{stderr}"
    );
    let (ok, _, stderr) = lockstep(&["--workers", "100000", "info"], &[]);
    assert!(!ok);
    assert!(stderr.contains("above the cap of 256"), "{stderr}");
    let (ok, _, stderr) = lockstep(&["--workers", "1,2", "info"], &[]);
    assert!(!ok);
    assert!(
        stderr.contains("a list of counts is for `lockstep-bench`"),
        "{stderr}"
    );
}
