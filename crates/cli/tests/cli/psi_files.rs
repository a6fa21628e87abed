//! Files: no output over an input, one file per output, all outputs or none, interruptions
//! leave nothing, special files.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::{
    CLINIC, REGISTRY, command, fails, fails_with, leftovers, ok, organisations, raw_round,
    resolve_args, with,
};

/// Every file of the directory with its bytes, to see that a refused run changed nothing.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

fn setup_args<'a>(more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["psi", "setup", "--key", "clinic.key", "--joiner-count", "3"];
    args.extend_from_slice(&CLINIC);
    args.extend_from_slice(more);
    args
}

fn intersect_args<'a>(more: &[&'a str]) -> Vec<&'a str> {
    crate::intersect(
        "setup.bin",
        "response.bin",
        &with(&["--request", "request.bin"], more),
    )
}

#[test]
fn an_output_never_replaces_an_input() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    raw_round(dir);
    std::fs::create_dir(dir.join("sub")).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("clinic.key", dir.join("key-link")).unwrap();
        std::fs::hard_link(dir.join("clinic.csv"), dir.join("clinic-hard.csv")).unwrap();
    }
    let before = snapshot(dir);
    let mut cases: Vec<(Vec<&str>, &str, &str)> = vec![
        // The reproduction: a setup written over its own key.
        (
            setup_args(&["--out", "clinic.key"]),
            "--out clinic.key",
            "--key clinic.key",
        ),
        (
            setup_args(&["--out", "clinic.csv"]),
            "--out clinic.csv",
            "--input clinic.csv",
        ),
        (
            setup_args(&["--out", "sub/../clinic.key"]),
            "--out sub/../clinic.key",
            "--key clinic.key",
        ),
        (
            setup_args(&["--out", "s.bin", "--permutation-out", "clinic.key"]),
            "--permutation-out clinic.key",
            "--key clinic.key",
        ),
        (
            with(
                &[
                    "psi",
                    "request",
                    "--key",
                    "registry.key",
                    "--out",
                    "registry.csv",
                ],
                &REGISTRY,
            ),
            "--out registry.csv",
            "--input registry.csv",
        ),
        (
            vec![
                "psi",
                "respond",
                "--key",
                "clinic.key",
                "--request",
                "request.bin",
                "--joiner-count",
                "3",
                "--out",
                "./request.bin",
            ],
            "--out ./request.bin",
            "--request request.bin",
        ),
        (
            intersect_args(&["--out", "setup.bin"]),
            "--out setup.bin",
            "--setup setup.bin",
        ),
        (
            intersect_args(&["--out", "response.bin"]),
            "--out response.bin",
            "--response response.bin",
        ),
        (
            intersect_args(&["--out", "m.csv", "--pairs-out", "request.bin"]),
            "--pairs-out request.bin",
            "--request request.bin",
        ),
        (
            intersect_args(&["--out", "m.csv", "--pairs-out", "registry.key"]),
            "--pairs-out registry.key",
            "--key registry.key",
        ),
        (
            resolve_args("perm.csv", &[]),
            "--out perm.csv",
            "--permutation perm.csv",
        ),
        (
            resolve_args("pairs.csv", &[]),
            "--out pairs.csv",
            "--matches pairs.csv",
        ),
        (
            resolve_args("clinic.csv", &[]),
            "--out clinic.csv",
            "--input clinic.csv",
        ),
    ];
    if cfg!(unix) {
        cases.push((
            setup_args(&["--out", "key-link"]),
            "--out key-link",
            "--key clinic.key",
        ));
        cases.push((
            setup_args(&["--out", "clinic-hard.csv"]),
            "--out clinic-hard.csv",
            "--input clinic.csv",
        ));
    }
    for (args, output, input) in cases {
        let run = fails_with(dir, &args, 2, "an output never replaces an input");
        assert!(
            run.stderr
                .contains(&format!("{output} is the same file as {input}")),
            "{args:?}: {}",
            run.stderr
        );
        assert_eq!(snapshot(dir), before, "{args:?} changed a file");
        assert!(leftovers(dir).is_empty(), "{args:?}: {:?}", leftovers(dir));
    }
}

#[test]
fn two_outputs_never_share_a_file() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    raw_round(dir);
    let before = snapshot(dir);
    for (args, first, second) in [
        (
            setup_args(&["--out", "x.bin", "--permutation-out", "x.bin"]),
            "--out x.bin",
            "--permutation-out x.bin",
        ),
        (
            setup_args(&["--out", "x.bin", "--permutation-out", "./sub/../x.bin"]),
            "--out x.bin",
            "--permutation-out ./sub/../x.bin",
        ),
        (
            intersect_args(&["--out", "matches.csv", "--pairs-out", "matches.csv"]),
            "--out matches.csv",
            "--pairs-out matches.csv",
        ),
    ] {
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let run = fails_with(dir, &args, 2, "are the same file");
        assert!(
            run.stderr
                .contains(&format!("{first} and {second} are the same file")),
            "{}",
            run.stderr
        );
        assert!(!dir.join("x.bin").exists());
        assert_eq!(snapshot(dir), before);
    }
}

#[test]
fn all_outputs_or_none() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    std::fs::write(dir.join("setup.bin"), b"old setup").unwrap();
    std::fs::create_dir(dir.join("a-directory")).unwrap();
    // The second output cannot be written: the first is left as it was, and no work ran.
    let started = Instant::now();
    fails(
        dir,
        &setup_args(&["--out", "setup.bin", "--permutation-out", "a-directory"]),
        "a-directory is a directory: outputs are regular files, character devices (such as /dev/null) or FIFOs",
    );
    fails(
        dir,
        &setup_args(&[
            "--out",
            "setup.bin",
            "--permutation-out",
            "missing/perm.csv",
        ]),
        "missing/perm.csv: the directory missing does not exist",
    );
    assert_eq!(std::fs::read(dir.join("setup.bin")).unwrap(), b"old setup");
    assert!(leftovers(dir).is_empty(), "{:?}", leftovers(dir));
    // Checked before the work: a request into a missing directory fails at once.
    fails(
        dir,
        &with(
            &[
                "psi",
                "request",
                "--key",
                "registry.key",
                "--out",
                "nowhere/r.bin",
            ],
            &REGISTRY,
        ),
        "nowhere/r.bin: the directory nowhere does not exist",
    );
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn special_outputs_are_written_in_place_or_refused() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    raw_round(dir);
    let setup = std::fs::read(dir.join("setup.bin")).unwrap();
    // Standard output.
    let run = command(Some(dir), &setup_args(&["--out", "-"]))
        .output()
        .unwrap();
    assert!(run.status.success());
    assert_eq!(run.stdout, setup);
    // A character device is written, never replaced.
    ok(dir, &setup_args(&["--out", "/dev/null"]));
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
        // A link is followed: its target is replaced, the link stays.
        std::fs::create_dir(dir.join("store")).unwrap();
        std::fs::write(dir.join("store/setup.bin"), b"old").unwrap();
        std::os::unix::fs::symlink("store/setup.bin", dir.join("link.bin")).unwrap();
        ok(dir, &setup_args(&["--out", "link.bin"]));
        assert!(
            std::fs::symlink_metadata(dir.join("link.bin"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(dir.join("store/setup.bin")).unwrap(), setup);
        // A FIFO is written in place, to whoever reads it.
        mkfifo(&dir.join("fifo"));
        let reader = {
            let path = dir.join("fifo");
            std::thread::spawn(move || std::fs::read(path).unwrap())
        };
        ok(dir, &setup_args(&["--out", "fifo"]));
        assert_eq!(reader.join().unwrap(), setup);
        assert!(
            std::fs::metadata(dir.join("fifo"))
                .unwrap()
                .file_type()
                .is_fifo()
        );
    }
    // `-` where standard output is not allowed is a usage error, not a file named `-`.
    fails_with(
        dir,
        &setup_args(&["--out", "s.bin", "--permutation-out", "-"]),
        2,
        "--permutation-out cannot be `-`",
    );
    assert!(!dir.join("-").exists());
    assert!(leftovers(dir).is_empty(), "{:?}", leftovers(dir));
}

/// Makes a FIFO at `path`.
fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits until `dir` holds a temporary file of at least `min_len` bytes.
fn wait_for_temporary(dir: &Path, min_len: u64, child: &mut std::process::Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let found = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".lockstep-tmp-")
                    && e.metadata().is_ok_and(|m| m.len() >= min_len)
            });
        if found {
            return;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "lockstep ended before it was interrupted"
        );
        assert!(Instant::now() < deadline, "no temporary file appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends `signal` (`INT`, `TERM`, `HUP`) to `child`.
#[cfg(unix)]
fn send(child: &std::process::Child, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Sends SIGINT to `child` and checks it ended by it, within a minute. A shell without job
/// control starts background jobs with SIGINT ignored, and lockstep keeps an ignored signal
/// ignored (as `nohup` needs): such a run fails here with that said, instead of hanging.
#[cfg(unix)]
fn interrupt(child: &mut std::process::Child) {
    use std::os::unix::process::ExitStatusExt;
    send(child, "INT");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let ignored = std::fs::read_to_string("/proc/self/status")
                .unwrap_or_default()
                .lines()
                .find(|l| l.starts_with("SigIgn:"))
                .map(str::to_owned)
                .unwrap_or_default();
            panic!(
                "lockstep did not end on SIGINT within a minute; this test process has {ignored} \
                 (bit 1 set: SIGINT was ignored when the tests started, e.g. as a background job \
                 of a shell without job control, and lockstep keeps it ignored)"
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.signal(), Some(2), "{status:?}");
}

/// A setup whose message goes to a FIFO nobody reads yet: it stops in its writing phase with
/// the permutation (the starter's rows) complete in its temporary file. `wrapper` runs before
/// lockstep (`nohup`), if any.
#[cfg(unix)]
fn stalled_setup(dir: &Path, wrapper: Option<&str>) -> std::process::Child {
    organisations(dir);
    std::fs::write(dir.join("perm.csv"), b"old permutation").unwrap();
    mkfifo(&dir.join("fifo"));
    let args = setup_args(&["--out", "fifo", "--permutation-out", "perm.csv"]);
    let mut child = match wrapper {
        None => command(Some(dir), &args).spawn().unwrap(),
        Some(wrapper) => std::process::Command::new(wrapper)
            .arg(env!("CARGO_BIN_EXE_lockstep"))
            .args(&args)
            .current_dir(dir)
            .env_remove("LOCKSTEP_WORKERS")
            .spawn()
            .unwrap(),
    };
    wait_for_temporary(dir, 100, &mut child);
    child
}

#[cfg(unix)]
#[test]
fn an_interrupted_setup_leaves_no_temporary_file() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let mut child = stalled_setup(dir, None);
    interrupt(&mut child);
    assert!(leftovers(dir).is_empty(), "{:?}", leftovers(dir));
    assert_eq!(
        std::fs::read(dir.join("perm.csv")).unwrap(),
        b"old permutation"
    );
}

#[cfg(unix)]
#[test]
fn a_terminated_setup_leaves_no_temporary_file() {
    use std::os::unix::process::ExitStatusExt;
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let mut child = stalled_setup(dir, None);
    send(&child, "TERM");
    assert_eq!(child.wait().unwrap().signal(), Some(15));
    assert!(leftovers(dir).is_empty(), "{:?}", leftovers(dir));
    assert_eq!(
        std::fs::read(dir.join("perm.csv")).unwrap(),
        b"old permutation"
    );
}

/// `nohup` ignores SIGHUP so that a run survives its terminal: lockstep keeps it ignored.
#[cfg(unix)]
#[test]
fn a_setup_under_nohup_survives_a_hangup() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let mut child = stalled_setup(dir, Some("nohup"));
    send(&child, "HUP");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "SIGHUP ended a nohup run"
    );
    // Reading the FIFO lets the setup finish, and its outputs land.
    let message = std::fs::read(dir.join("fifo")).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(!message.is_empty());
    let permutation = std::fs::read_to_string(dir.join("perm.csv")).unwrap();
    assert!(
        permutation.starts_with("# lockstep psi permutation v1"),
        "{permutation}"
    );
    assert!(leftovers(dir).is_empty(), "{:?}", leftovers(dir));
}

#[cfg(unix)]
#[test]
fn an_interrupted_resolve_leaves_no_temporary_file() {
    use std::io::Write;
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    raw_round(dir);
    std::fs::write(dir.join("rows.csv"), b"old rows").unwrap();
    let pairs = std::fs::read(dir.join("pairs.csv")).unwrap();
    // The pairs arrive through a FIFO, half of them, then nothing: resolve waits with its
    // output staged.
    mkfifo(&dir.join("pairs.fifo"));
    let mut args = resolve_args("rows.csv", &[]);
    args[5] = "pairs.fifo";
    // Opened for reading and writing, the FIFO never blocks this side (Linux), and what is
    // written waits in the pipe for resolve.
    let mut writer = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(dir.join("pairs.fifo"))
        .unwrap();
    let mut child = command(Some(dir), &args).spawn().unwrap();
    writer.write_all(&pairs[..pairs.len() / 2]).unwrap();
    wait_for_temporary(dir, 0, &mut child);
    interrupt(&mut child);
    drop(writer);
    assert!(leftovers(dir).is_empty(), "{:?}", leftovers(dir));
    assert_eq!(std::fs::read(dir.join("rows.csv")).unwrap(), b"old rows");
}

#[test]
fn temporary_files_a_killed_run_left_are_removed_by_the_next() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    organisations(dir);
    // A killed run's file: unlocked and old. Another run's: locked (here, by this test).
    let stale = ".lockstep-tmp-4242-abcdef".to_owned();
    let live = format!(".lockstep-tmp-{}-abcdef", std::process::id());
    std::fs::write(dir.join(&stale), b"half a permutation").unwrap();
    std::fs::write(dir.join(&live), b"another run's file").unwrap();
    let long_ago = std::time::SystemTime::now() - Duration::from_secs(60);
    for name in [&stale, &live] {
        let file = std::fs::File::options()
            .write(true)
            .open(dir.join(name))
            .unwrap();
        file.set_modified(long_ago).unwrap();
    }
    let held = std::fs::File::open(dir.join(&live)).unwrap();
    held.lock().unwrap();
    let run = crate::lockstep_in(
        Some(dir),
        &with(
            &["psi", "request", "--key", "registry.key", "--out", "r.bin"],
            &REGISTRY[..6],
        ),
        &[],
    );
    assert!(run.ok, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("removed 1 temporary file(s) an interrupted run left in"),
        "{}",
        run.stderr
    );
    assert!(!dir.join(&stale).exists());
    assert!(dir.join(&live).exists());
}
