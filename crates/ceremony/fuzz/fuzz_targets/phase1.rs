//! The parallel phase 1 decoder never panics, and agrees with the serial reference on every
//! input: the same object, or the same error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::phase1::Phase1;
use lockstep_ceremony::{Limits, reference};
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
    let parallel = Phase1::read(&pool, &Control::new(), data, &limits);
    let serial = reference::phase1_from_bytes(data, &limits);
    match (parallel, serial) {
        (Ok((a, _)), Ok(b)) => assert!(a == b, "decoders disagree on the object"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!("decoders disagree: {:?} vs {:?}", a.err(), b.err()),
    }
});
