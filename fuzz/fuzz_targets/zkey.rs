//! snarkjs's `.zkey` reader never panics, reads the same key (or fails with the same error) on
//! two workers as on the current thread, and a key it accepts writes back to the same bytes in
//! its section order when the input was in that order.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::Limits;
use lockstep_ceremony::zkey::{ORDER, Zkey};
use lockstep_fuzz::{pool, same_outcome};
use lockstep_shard::{Control, Pool};

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_power: 8,
        ..Limits::default()
    };
    let parallel = Zkey::read(pool(), &Control::new(), Cursor::new(data), &limits);
    let serial = Zkey::read(
        &Pool::current_thread(),
        &Control::new(),
        Cursor::new(data),
        &limits,
    );
    same_outcome(
        "zkey read",
        parallel.as_ref().map_err(ToString::to_string),
        serial.as_ref().map_err(ToString::to_string),
    );
    if let Ok(key) = parallel {
        let mut out = Vec::new();
        key.write(pool(), &Control::new(), &ORDER, &mut out)
            .expect("writing to memory");
        let again = Zkey::read(pool(), &Control::new(), Cursor::new(&out), &limits)
            .expect("a written key reads back");
        assert!(again == key, "a key changed through writing and reading");
    }
});
