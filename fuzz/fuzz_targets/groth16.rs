//! The Groth16 readers (proof, public witness, verifying key; the first byte picks one) never
//! panic, and what they accept writes back to the same bytes where the format is canonical.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::groth16::{Proof, read_public_witness};
use lockstep_ceremony::phase2::VerifyingKey;
use lockstep_fuzz::pool;
use lockstep_shard::Control;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    match which % 3 {
        0 => {
            let _ = Proof::read(rest);
        }
        1 => {
            let _ = read_public_witness(rest);
        }
        _ => {
            if let Ok(vk) = VerifyingKey::read(rest) {
                let mut out = Vec::new();
                vk.write(pool(), &Control::new(), &mut out)
                    .expect("writing to memory");
                assert_eq!(
                    out, rest,
                    "a verifying key reads and writes back differently"
                );
            }
        }
    }
});
