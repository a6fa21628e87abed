//! The `.ptau` reader (and the powers check on what it accepts) never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::{Limits, ptau};
use lockstep_shard::{Control, Pool};

// One pool for the whole run: a pool per input would start and stop threads thousands of times,
// and a thread still exiting when the fuzzer ends is reported as a leak.
fn pool() -> &'static Pool {
    static POOL: std::sync::OnceLock<Pool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| Pool::new(2).expect("pool"))
}

fuzz_target!(|data: &[u8]| {
    let limits = Limits { max_power: 8, ..Limits::default() };
    let pool = pool();
    if let Ok(read) = ptau::read(&pool, &Control::new(), std::io::Cursor::new(data), &limits) {
        let _ = ptau::check(&pool, &Control::new(), &read.srs);
    }
});
