//! A decoded setup (GCS and Bloom included) looked up by a joiner: never panics, whatever the
//! Golomb code or filter holds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_fuzz::pool;
use lockstep_psi::{Backend, Joiner, Key, Mode, Response, ServerSetup};
use lockstep_shard::Control;

fuzz_target!(|data: &[u8]| {
    if let Ok(setup) = ServerSetup::from_bytes(data) {
        let key = Key::from_bytes(&[9; 32]).expect("key");
        let joiner = Joiner::new(&key, Mode::Reveal, Backend::Portable).expect("joiner");
        let control = Control::new();
        // One well-formed response element: the generator's compressed encoding.
        let mut element = [0u8; 33];
        element[0] = 0x03;
        element[1..].copy_from_slice(&[
            0x6b, 0x17, 0xd1, 0xf2, 0xe1, 0x2c, 0x42, 0x47, 0xf8, 0xbc, 0xe6, 0xe5, 0x63, 0xa4,
            0x40, 0xf2, 0x77, 0x03, 0x7d, 0x81, 0x2d, 0xeb, 0x33, 0xa0, 0xf4, 0xa1, 0x39, 0x45,
            0xd8, 0x98, 0xc2, 0x96,
        ]);
        let mut bytes = vec![0x0a, 33];
        bytes.extend(element);
        let response = Response::from_bytes(&bytes).expect("response");
        let _ = joiner.intersect(pool(), &control, &setup, &response, 1);
    }
});
