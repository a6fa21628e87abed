//! `ServerSetup::from_bytes` on arbitrary bytes: never panics; what decodes re-encodes to a
//! message that decodes to the same setup.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_psi::ServerSetup;

fuzz_target!(|data: &[u8]| {
    if let Ok(setup) = ServerSetup::from_bytes(data) {
        let bytes = setup.to_bytes().expect("a decoded setup is valid");
        let again = ServerSetup::from_bytes(&bytes).expect("re-encoded setup decodes");
        assert_eq!(again, setup);
    }
});
