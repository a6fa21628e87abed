//! The `.ptau` reader (and the powers check on what it accepts) never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::{Limits, ptau};
use lockstep_fuzz::pool;
use lockstep_shard::Control;

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_power: 8,
        ..Limits::default()
    };
    if let Ok(read) = ptau::read(pool(), &Control::new(), std::io::Cursor::new(data), &limits) {
        let _ = ptau::check(pool(), &Control::new(), &read.srs);
    }
});
