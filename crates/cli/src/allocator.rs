//! The C allocator's one setting this binary changes, and the only `unsafe` of the CLI.
//!
//! glibc's `malloc` raises its mmap threshold each time a large block is freed (up to 32 MiB),
//! so the large vectors that follow come from the heap, whose freed space it keeps. Under an
//! address-space limit (`ulimit -v`, a container's) the process then holds far more than it
//! uses and a later small buffer fails, aborting the process, where the engines' fallible
//! allocations and their headroom checks (`lockstep_shard::memory`) would have said "cannot be
//! allocated": measured on `ceremony phase1 verify` at 2^15, the dynamic threshold needed 82 MB
//! of address space and aborted below it; a fixed one needs 76 MB and refuses cleanly below.
//! A fixed threshold of [`MMAP_THRESHOLD`] keeps every vector of that size or more in a
//! mapping of its own, given back when it is freed.

/// Allocations of at least this size get a mapping of their own: those the engines allocate
/// fallibly with a headroom check (`lockstep_shard::memory::PROBED_FROM`).
const MMAP_THRESHOLD: usize = 1 << 20;

/// Fixes glibc's mmap threshold (see the module's documentation); elsewhere, nothing.
pub(crate) fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let threshold = libc::c_int::try_from(MMAP_THRESHOLD).expect("invariant: 1 MiB fits");
        // SAFETY: mallopt only sets the allocator's parameter; it is called once, at the start
        // of main, before any thread is started. A refusal (0) leaves the default, which is
        // only less economical.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, threshold);
        }
    }
}
