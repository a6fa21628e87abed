//! The parallel phase 1 decoder never panics, and agrees with the serial reference on every
//! input: the same object, or the same error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::phase1::Phase1;
use lockstep_ceremony::{Limits, reference};
use lockstep_fuzz::{pool, same_outcome};
use lockstep_shard::Control;

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_power: 8,
        ..Limits::default()
    };
    same_outcome(
        "the phase 1 decoders",
        Phase1::read(pool(), &Control::new(), data, &limits).map(|(object, _)| object),
        reference::phase1_from_bytes(data, &limits),
    );
});
