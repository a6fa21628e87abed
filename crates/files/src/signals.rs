//! Temporary files that an interruption must not leave behind.
//!
//! Every temporary output file is registered here while it exists. The first registration
//! starts a thread that waits for SIGINT, SIGTERM or SIGHUP (those the process did not start
//! with ignored: `nohup` and a shell's `cmd &` keep their meaning); on one, it removes every
//! registered file and ends the process as the signal's default action would (so a parent sees
//! "killed by SIGINT"). The commit of a command's outputs holds the registry while it renames
//! them, so a signal lands before the renames or after them all, never between.
//!
//! What no handler sees (SIGKILL, a power cut) can still leave files behind: they are named
//! [`PREFIX`]`<pid>-...` and locked (`flock`) by their writer while it lives, and
//! [`remove_stale`] deletes those it can lock that are older than [`STALE_AFTER`]: a live run's
//! file stays locked, whatever process namespace or host it runs in.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, Once, PoisonError};
use std::time::Duration;

/// The name every temporary output file starts with, followed by the writing process's id.
pub const PREFIX: &str = ".lockstep-tmp-";

/// How old an unlocked temporary file must be to be taken for stale: a writer locks its file
/// microseconds after creating it, so a young unlocked file may be one being born.
pub const STALE_AFTER: Duration = Duration::from_secs(10);

static REGISTERED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static HANDLER: Once = Once::new();
static HANDED_OVER: AtomicBool = AtomicBool::new(false);

/// Leaves what SIGINT, SIGTERM and SIGHUP do to the process's own handlers (a server that
/// drains its requests on them): from now on a signal still removes every registered file, but
/// no longer ends the process. For long-running front ends only; a command that writes files
/// and stops keeps the default.
pub fn hand_signals_over() {
    HANDED_OVER.store(true, Ordering::SeqCst);
}

fn registry() -> MutexGuard<'static, Vec<PathBuf>> {
    REGISTERED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Forgets a temporary file (it was renamed into place or removed).
pub(crate) fn unregister(path: &Path) {
    registry().retain(|p| p != path);
}

/// Holds off signal handling (the handler waits) while the guard lives; with the guard, the
/// caller may register and forget files ([`Held::register`], [`Held::unregister`]). The
/// handler is started first, so a signal that comes while the guard lives is handled once it
/// drops, with what it registered: a file created and registered under one guard is never left
/// behind by a signal between the two.
pub(crate) fn hold() -> Held {
    HANDLER.call_once(start_handler);
    Held(registry())
}

/// The registry, held.
pub(crate) struct Held(MutexGuard<'static, Vec<PathBuf>>);

impl Held {
    pub(crate) fn register(&mut self, path: &Path) {
        self.0.push(path.to_owned());
    }

    pub(crate) fn unregister(&mut self, path: &Path) {
        self.0.retain(|p| p != path);
    }
}

/// The signals the process has ignored since it started, as a bit set (bit `s - 1` for signal
/// `s`), from Linux's `/proc/self/status`; none where that cannot be read.
fn ignored_at_start() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("SigIgn:"))
                .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        })
        .unwrap_or(0)
}

#[cfg(unix)]
fn start_handler() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;
    let ignored = ignored_at_start();
    let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
        .into_iter()
        .filter(|&s| ignored & (1u64 << (s - 1)) == 0)
        .collect();
    // If the handler cannot start, signals keep their default action: the process dies and the
    // next run removes what it left (remove_stale).
    let Ok(mut signals) = Signals::new(wanted) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("lockstep-signals".to_owned())
        .spawn(move || {
            for signal in signals.forever() {
                let registered = registry();
                for path in registered.iter() {
                    // A work folder goes with what it holds.
                    let _ = std::fs::remove_file(path).or_else(|_| std::fs::remove_dir_all(path));
                }
                if HANDED_OVER.load(Ordering::SeqCst) {
                    // The process's own handler (registered beside this one) acts on it.
                    continue;
                }
                // Ends the process as the signal would have, registry still held.
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        });
}

#[cfg(not(unix))]
fn start_handler() {}

/// Removes the temporary files and work folders in `dir` that no running lockstep holds
/// (unlocked, and older than [`STALE_AFTER`]), and returns them. A file that cannot be locked for any reason (held,
/// or a file system without locks) is left alone.
pub(crate) fn remove_stale(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let ours = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(PREFIX));
        let old = entry.metadata().is_ok_and(|m| {
            (m.is_file() || m.is_dir())
                && m.modified()
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > STALE_AFTER)
        });
        if !(ours && old) {
            continue;
        }
        let path = entry.path();
        let unlocked = std::fs::File::open(&path).is_ok_and(|f| f.try_lock().is_ok());
        let gone = || {
            if entry.metadata().is_ok_and(|m| m.is_dir()) {
                std::fs::remove_dir_all(&path).is_ok()
            } else {
                std::fs::remove_file(&path).is_ok()
            }
        };
        if unlocked && gone() {
            removed.push(path);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_old_unlocked_files_are_stale() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        let long_ago = std::time::SystemTime::now() - 2 * STALE_AFTER;
        let stale = dir.join(format!("{PREFIX}1-abc"));
        let held = dir.join(format!("{PREFIX}2-abc"));
        let young = dir.join(format!("{PREFIX}3-abc"));
        let other = dir.join("keep-me");
        for p in [&stale, &held, &young, &other] {
            std::fs::write(p, b"x").unwrap();
        }
        for p in [&stale, &held, &other] {
            let f = std::fs::File::options().write(true).open(p).unwrap();
            f.set_modified(long_ago).unwrap();
        }
        // A live writer holds its lock (here, this test, through another open file).
        let lock = std::fs::File::open(&held).unwrap();
        lock.lock().unwrap();
        assert_eq!(remove_stale(dir), vec![stale.clone()]);
        assert!(!stale.exists());
        assert!(held.exists() && young.exists() && other.exists());
    }
}
