//! snarkjs's `.zkey` reader never panics, reads the same key (or fails with the same error) on
//! two workers as on the current thread, and a key it accepts (and can write) reads back and
//! writes again to the same bytes. The prover's reading (sections 5-9 on their curves only)
//! accepts every key the full reading does, as the same key; the prover on a key it accepts
//! never panics (a proof, or a refusal). A key read by sections (`ZkeyFile`) is the key read
//! whole, or refused where the whole read refuses.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::circom::Witness;
use lockstep_ceremony::prove::{Blinding, snarkjs};
use lockstep_ceremony::zkey::{ORDER, Zkey, ZkeyFile, ZkeyVector};
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
    by_sections(parallel.as_ref().ok(), data, &limits);
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

/// A key read by sections: opened and its vectors read whole, it is `whole` (the full
/// reading's key), or refused where the full reading refuses.
fn by_sections(whole: Option<&Zkey>, data: &[u8], limits: &Limits) {
    let control = Control::new();
    let opened = ZkeyFile::open(
        pool(),
        &control,
        Cursor::new(data),
        limits,
        KeyChecks::Subgroups,
    );
    let file = match (whole, opened) {
        (_, Ok(file)) => file,
        (Some(_), Err(e)) => panic!("a key read whole does not open by sections: {e}"),
        (None, Err(_)) => return,
    };
    let g1 = |v: ZkeyVector| file.g1(pool(), &control, v, 0..file.len(v));
    let read = (|| {
        Ok::<_, lockstep_ceremony::zkey::ZkeyError>((
            file.coefficients()?,
            g1(ZkeyVector::A)?,
            g1(ZkeyVector::B1)?,
            file.b2(pool(), &control, 0..file.b2_len())?,
            g1(ZkeyVector::C)?,
            g1(ZkeyVector::H)?,
        ))
    })();
    match (whole, read) {
        (Some(key), Ok((coefficients, a, b1, b2, c, h))) => assert!(
            file.header == key.header
                && file.ic == key.ic
                && coefficients == key.coefficients
                && (a, b1, b2, c, h)
                    == (
                        key.a.clone(),
                        key.b1.clone(),
                        key.b2.clone(),
                        key.c.clone(),
                        key.h.clone()
                    ),
            "a key read by sections differs"
        ),
        (Some(_), Err(e)) => panic!("a key read whole fails by sections: {e}"),
        (None, Ok(_)) => panic!("a key refused whole reads by sections"),
        (None, Err(_)) => {}
    }
}
