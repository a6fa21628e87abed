//! The parallel sealed-SRS decoder never panics, and agrees with the serial reference.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::phase1::Srs;
use lockstep_ceremony::{Limits, reference};
use lockstep_fuzz::{pool, same_outcome};
use lockstep_shard::Control;

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_power: 8,
        ..Limits::default()
    };
    same_outcome(
        "the SRS decoders",
        Srs::read(pool(), &Control::new(), data, &limits).map(|(srs, _)| srs),
        reference::srs_from_bytes(data, &limits),
    );
});
