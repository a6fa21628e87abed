//! Where a pool's threads run: each on a CPU of its own, when there are CPUs enough.
//!
//! A pool of `W >= 2` threads whose process may run on at least `W` CPUs pins thread `i` to
//! one of them (the pools of a process take turns, so that two pools start on different CPUs).
//! Why: a woken thread is placed by the kernel, and on this project's 2-vCPU machines (the
//! guest kernel packs work onto busy vCPUs: wake-ups stay on the CPU a thread last ran on,
//! 160 of 166 wake-ups with that CPU busy and the other idle in one `perf sched` trace) the two
//! workers of a two-worker pool could end up sharing one CPU. It happens at the end of a run:
//! the worker that finishes last wakes the caller on its own CPU and is still spinning (rayon's
//! idle loop), the caller preempts it, and when the other worker goes to sleep its CPU pulls the
//! spinning one over. From then on each run woke the second worker behind the first (1.1 ms
//! runnable but not running in a 1.2 ms run, the other CPU idle), every run at one worker's
//! speed until the kernel's balancer happened to move it back: whole benches 1.9x slower
//! (issue 16's "beside an idle one-worker pool"; the idle pool only stood by). Pinned, the
//! workers cannot share a CPU; the caller, never pinned, goes where the kernel puts it.
//!
//! The cost of pinning is that the kernel cannot move a worker off a CPU that another process
//! keeps busy: `LOCKSTEP_PIN=0` leaves every thread to the kernel. A pool with more threads
//! than CPUs (or one thread) is never pinned: there the kernel's balancing is what spreads it.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The environment variable that turns pinning off (`0`).
pub const PIN_ENV: &str = "LOCKSTEP_PIN";

/// The CPU each of a pool's `workers` threads is pinned to, or `None` (not pinned): `allowed`
/// are the CPUs the process may run on, `turn` where this pool starts among them, `enabled`
/// whether pinning is on.
pub(crate) fn plan(
    workers: usize,
    allowed: &[usize],
    turn: usize,
    enabled: bool,
) -> Option<Vec<usize>> {
    if !enabled || workers < 2 || workers > allowed.len() {
        return None;
    }
    Some(
        (0..workers)
            .map(|i| allowed[(turn % allowed.len() + i) % allowed.len()])
            .collect(),
    )
}

/// The pools of a process take turns at the first CPU.
static TURN: AtomicUsize = AtomicUsize::new(0);

/// Where this process's next pool of `workers` threads pins them: [`plan`] with the CPUs the
/// calling thread may run on, the process's next turn, and the environment's [`PIN_ENV`].
pub(crate) fn for_pool(workers: usize) -> Option<Vec<usize>> {
    let enabled = std::env::var(PIN_ENV).map_or(true, |v| v.trim() != "0");
    if !enabled || workers < 2 {
        return None;
    }
    let allowed = os::allowed_cpus()?;
    if workers > allowed.len() {
        return None;
    }
    let turn = TURN.fetch_add(workers, Ordering::Relaxed);
    plan(workers, &allowed, turn, true)
}

/// Pins the calling thread to `cpu`. Best effort: a refusal leaves it to the kernel (placement
/// is never a reason to fail a pool).
pub(crate) fn pin_current_thread(cpu: usize) {
    os::pin_current_thread(cpu);
}

#[cfg(target_os = "linux")]
#[allow(
    unsafe_code,
    reason = "the CPU affinity calls of libc; each call's safety is stated"
)]
mod os {
    /// The CPUs the calling thread may run on, in increasing order; `None` if the kernel does
    /// not say.
    pub(super) fn allowed_cpus() -> Option<Vec<usize>> {
        // SAFETY: `cpu_set_t` is a plain bit array, valid when zeroed.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a live `cpu_set_t` of the size passed; pid 0 is the calling thread.
        let status =
            unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &raw mut set) };
        if status != 0 {
            return None;
        }
        let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `cpu` is below CPU_SETSIZE, within `set`.
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect();
        (!cpus.is_empty()).then_some(cpus)
    }

    pub(super) fn pin_current_thread(cpu: usize) {
        if cpu >= libc::CPU_SETSIZE as usize {
            return;
        }
        // SAFETY: as in `allowed_cpus`.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `cpu` is below CPU_SETSIZE (checked above), within `set`.
        unsafe { libc::CPU_SET(cpu, &mut set) };
        // SAFETY: `set` is a live `cpu_set_t` of the size passed; pid 0 is the calling thread.
        // A failure (a CPU taken away since) leaves the thread's affinity as it was.
        let _ = unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &raw const set) };
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    /// Elsewhere the kernel places every thread.
    pub(super) fn allowed_cpus() -> Option<Vec<usize>> {
        None
    }

    pub(super) fn pin_current_thread(_cpu: usize) {}
}

#[cfg(test)]
mod tests {
    use super::plan;

    #[test]
    fn a_pool_is_pinned_only_with_two_threads_or_more_and_cpus_enough() {
        assert_eq!(plan(2, &[0, 1], 0, true), Some(vec![0, 1]));
        assert_eq!(plan(2, &[0, 1, 2, 3], 3, true), Some(vec![3, 0]));
        assert_eq!(plan(3, &[4, 6, 9], 1, true), Some(vec![6, 9, 4]));
        assert_eq!(plan(1, &[0, 1], 0, true), None);
        assert_eq!(plan(3, &[0, 1], 0, true), None);
        assert_eq!(plan(2, &[0, 1], 0, false), None);
        assert_eq!(plan(2, &[], 0, true), None);
    }
}
