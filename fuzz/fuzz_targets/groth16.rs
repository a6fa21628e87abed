//! The Groth16 readers (proof, public witness, verifying key, full witness, proving key; the
//! first byte picks one) never panic, and what they accept writes back to the same bytes where
//! the format is canonical (a proving key: to the same key, through gnark's raw layout).
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::Limits;
use lockstep_ceremony::groth16::{Proof, read_public_witness, read_witness};
use lockstep_ceremony::phase2::{KeyChecks, KeyEncoding, ProvingKey, VerifyingKey};
use lockstep_fuzz::pool;
use lockstep_shard::Control;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    match which % 5 {
        0 => {
            let _ = Proof::read(rest);
        }
        1 => {
            let _ = read_public_witness(rest);
        }
        3 => {
            if let Ok(witness) = read_witness(rest) {
                assert_eq!(witness.values.len(), witness.public + witness.secret);
            }
        }
        4 => {
            let limits = Limits {
                max_power: 12,
                ..Limits::default()
            };
            let control = Control::new();
            if let Ok((key, encoding)) =
                ProvingKey::read_with(pool(), &control, rest, &limits, KeyChecks::Curve)
            {
                let mut raw = Vec::new();
                key.write_raw(pool(), &control, &mut raw)
                    .expect("writing to memory");
                // Our writer sets the domain's precomputation flag (byte 168); gnark's reader
                // and ours take 0 too.
                if encoding == KeyEncoding::Raw && rest.get(168) == Some(&1) {
                    assert_eq!(raw, rest, "a raw key reads and writes back differently");
                }
                let (again, _) =
                    ProvingKey::read_with(pool(), &control, &raw[..], &limits, KeyChecks::Curve)
                        .expect("a key written raw reads back");
                assert_eq!(again, key);
            }
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
