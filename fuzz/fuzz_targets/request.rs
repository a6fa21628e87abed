//! `Request::from_bytes` on arbitrary bytes: never panics; round trips; a starter answering it
//! either succeeds or names the bad element.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_fuzz::pool;
use lockstep_psi::{Backend, Key, Mode, PsiError, Request, Starter};
use lockstep_shard::Control;

fuzz_target!(|data: &[u8]| {
    if let Ok(request) = Request::from_bytes(data) {
        assert_eq!(
            Request::from_bytes(&request.to_bytes()).expect("round trip"),
            request
        );
        let key = Key::from_bytes(&[7; 32]).expect("key");
        let starter = Starter::new(&key, request.mode, Backend::Portable).expect("starter");
        match starter.respond(pool(), &Control::new(), &request) {
            Ok(response) => assert_eq!(response.elements.len(), request.elements.len()),
            Err(PsiError::Element { index, .. }) => assert!(index < request.elements.len()),
            Err(other) => panic!("unexpected error {other}"),
        }
        let _ = Mode::Reveal;
    }
});
