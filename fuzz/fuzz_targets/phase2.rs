//! The phase 2 decoder never panics, and its parallel run (chunks of points decoded on two
//! workers) agrees with its run on the current thread: the same object, or the same error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::Limits;
use lockstep_ceremony::phase2::Phase2;
use lockstep_fuzz::{pool, same_outcome};
use lockstep_shard::{Control, Pool};

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_power: 8,
        file_len: Some(data.len() as u64),
        ..Limits::default()
    };
    same_outcome(
        "the phase 2 decoders (2 workers, current thread)",
        Phase2::read(pool(), &Control::new(), data, &limits).map(|(object, _)| object),
        Phase2::read(&Pool::current_thread(), &Control::new(), data, &limits).map(|(o, _)| o),
    );
});
