//! `Response::from_bytes` on arbitrary bytes: never panics; round trips.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_psi::Response;

fuzz_target!(|data: &[u8]| {
    if let Ok(response) = Response::from_bytes(data) {
        assert_eq!(
            Response::from_bytes(&response.to_bytes()).expect("round trip"),
            response
        );
    }
});
