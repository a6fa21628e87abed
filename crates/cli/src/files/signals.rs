//! Temporary files that an interruption must not leave behind.
//!
//! Every temporary output file is registered here while it exists. The first registration
//! starts a thread that waits for SIGINT, SIGTERM or SIGHUP; on one, it removes every
//! registered file and ends the process as the signal's default action would (so a parent sees
//! "killed by SIGINT"). The commit of a command's outputs holds the registry while it renames
//! them, so a signal lands before the renames or after them all, never between.
//!
//! What no handler sees (SIGKILL, a power cut) can still leave files behind: they are named
//! [`PREFIX`]`<pid>-...`, and [`remove_stale`] deletes those whose process is gone.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, Once, PoisonError};

/// The name every temporary output file starts with, followed by the writing process's id.
pub(crate) const PREFIX: &str = ".lockstep-tmp-";

static REGISTERED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static HANDLER: Once = Once::new();

fn registry() -> MutexGuard<'static, Vec<PathBuf>> {
    REGISTERED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Registers a temporary file to remove on a signal (and starts the handler, once).
pub(crate) fn register(path: &Path) {
    HANDLER.call_once(start_handler);
    registry().push(path.to_owned());
}

/// Forgets a temporary file (it was renamed into place or removed).
pub(crate) fn unregister(path: &Path) {
    registry().retain(|p| p != path);
}

/// Holds off signal handling (the handler waits) while the guard lives; with the guard, the
/// caller may forget files with [`Held::unregister`].
pub(crate) fn hold() -> Held {
    Held(registry())
}

/// The registry, held.
pub(crate) struct Held(MutexGuard<'static, Vec<PathBuf>>);

impl Held {
    pub(crate) fn unregister(&mut self, path: &Path) {
        self.0.retain(|p| p != path);
    }
}

#[cfg(unix)]
fn start_handler() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;
    // If the handler cannot start, signals keep their default action: the process dies and the
    // next run removes what it left (remove_stale).
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("lockstep-signals".to_owned())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let registered = registry();
                for path in registered.iter() {
                    let _ = std::fs::remove_file(path);
                }
                // Ends the process as the signal would have, registry still held.
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        });
}

#[cfg(not(unix))]
fn start_handler() {}

/// Removes the temporary files in `dir` left by lockstep processes that no longer run, and
/// returns them. Does nothing where running processes cannot be told (no `/proc`).
pub(crate) fn remove_stale(dir: &Path) -> Vec<PathBuf> {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && !proc.join(pid.to_string()).exists() {
            let path = entry.path();
            if std::fs::remove_file(&path).is_ok() {
                removed.push(path);
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_of_finished_processes_are_stale() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        // A process that has ended: a child we waited for.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let stale = dir.join(format!("{PREFIX}{gone}-abc"));
        let alive = dir.join(format!("{PREFIX}{}-abc", std::process::id()));
        let other = dir.join("keep-me");
        for p in [&stale, &alive, &other] {
            std::fs::write(p, b"x").unwrap();
        }
        let removed = remove_stale(dir);
        if Path::new("/proc/self").exists() {
            assert_eq!(removed, vec![stale.clone()]);
            assert!(!stale.exists());
        }
        assert!(alive.exists() && other.exists());
    }
}
