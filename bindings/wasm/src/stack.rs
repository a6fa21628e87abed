//! Wiping the wasm stack after a call that handled a key.
//!
//! The engine keeps a party's key in a zeroized [`lockstep_psi::Key`], but the frames of a call
//! that used it (parsing the key, scalar multiplications) leave copies of the scalar and of
//! values derived from it in the module's stack, which lives in linear memory: the bytes stay
//! there, readable through `memory.buffer`, until later calls happen to overwrite them. Each
//! exported function that touches a key holds a [`StackWipe`], whose drop (after the call's own
//! frames are gone, before it returns to JS) zeroes [`WIPED_BYTES`] of stack below it: the
//! region those frames used.

use zeroize::Zeroize;

/// The stack zeroed below the exported function's frame: 256 KiB of the module's 1 MiB stack,
/// several times what a PSI step's deepest frames use (`js/test/node/key-copies.test.js` scans
/// linear memory for the key after each kind of call).
pub(crate) const WIPED_BYTES: usize = 256 << 10;

/// Zeroes the stack below the current frame when dropped.
pub(crate) struct StackWipe;

impl Drop for StackWipe {
    fn drop(&mut self) {
        wipe();
    }
}

/// A frame of [`WIPED_BYTES`] zeroed with volatile writes (which the optimizer keeps), just
/// below the caller's: where the frames of the call before it were.
#[inline(never)]
fn wipe() {
    let mut below = [0u8; WIPED_BYTES];
    below.zeroize();
    std::hint::black_box(&below);
}
