//! snarkjs's `.zkey` reader never panics, reads the same key (or fails with the same error) on
//! two workers as on the current thread, and a key it accepts (and can write) reads back and
//! writes again to the same bytes. The prover's reading (sections 5-9 on their curves only)
//! accepts every key the full reading does, as the same key; the prover on a key it accepts
//! never panics (a proof, or a refusal).
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::circom::Witness;
use lockstep_ceremony::prove::{Blinding, snarkjs};
use lockstep_ceremony::zkey::{ORDER, Zkey};
use lockstep_ceremony::{CodecError, KeyChecks, Limits};
use lockstep_fuzz::{pool, same_outcome};
use lockstep_shard::{Control, Pool};

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_power: 8,
        ..Limits::default()
    };
    let parallel = Zkey::read(pool(), &Control::new(), Cursor::new(data), &limits);
    let serial = Zkey::read(
        &Pool::current_thread(),
        &Control::new(),
        Cursor::new(data),
        &limits,
    );
    same_outcome(
        "zkey read",
        parallel.as_ref().map_err(ToString::to_string),
        serial.as_ref().map_err(ToString::to_string),
    );
    let proving = Zkey::read_for_proving(
        pool(),
        &Control::new(),
        Cursor::new(data),
        &limits,
        KeyChecks::Curve,
    );
    if let Ok(full) = &parallel {
        assert!(
            proving.as_ref().ok() == Some(full),
            "the prover's reading differs from the full one"
        );
    }
    if let Ok(key) = &proving {
        let witness = Witness::from_values(
            (0..u64::from(key.header.n_vars))
                .map(|i| blstrs::Scalar::from(i + 1))
                .collect(),
        );
        let blinding = Blinding::fixed(blstrs::Scalar::from(3u64), blstrs::Scalar::from(4u64));
        let _ = snarkjs::prove(pool(), &Control::new(), key, &witness, &blinding);
    }
    if let Ok(key) = parallel {
        let mut out = Vec::new();
        // A key read with a beacon record that lacks its hash cannot be written (snarkjs throws
        // too): that refusal is the only one writing to memory may give.
        match key.write(pool(), &Control::new(), &ORDER, &mut out) {
            Ok(_) => {
                // Names are re-encoded as snarkjs re-encodes them (their first 64 UTF-16 units),
                // so the second write, not the first read, is the fixed point.
                let again = Zkey::read(pool(), &Control::new(), Cursor::new(&out), &limits)
                    .expect("a written key reads back");
                let mut second = Vec::new();
                again
                    .write(pool(), &Control::new(), &ORDER, &mut second)
                    .expect("a key read back writes");
                assert!(second == out, "a key changed through writing and reading");
            }
            Err(error) => assert!(
                matches!(error, CodecError::TooMany { .. }),
                "writing to memory failed: {error}"
            ),
        }
    }
});
