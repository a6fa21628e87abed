//! circom's `.wtns` reader never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::circom::Witness;

fuzz_target!(|data: &[u8]| {
    let _ = Witness::read(std::io::Cursor::new(data));
});
