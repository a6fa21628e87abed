//! The `.ptau` reader (and the powers check on what it accepts) never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::{Limits, ptau};
use lockstep_shard::{Control, Pool};

fuzz_target!(|data: &[u8]| {
    let limits = Limits { max_power: 8, ..Limits::default() };
    let pool = Pool::new(2).expect("pool");
    if let Ok(read) = ptau::read(&pool, &Control::new(), std::io::Cursor::new(data), &limits) {
        let _ = ptau::check(&pool, &Control::new(), &read.srs);
    }
});
