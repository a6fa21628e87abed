//! The Groth16 readers (proof, public witness, verifying key, full witness, proving key; the
//! first byte picks one) never panic, and what they accept writes back to the same bytes where
//! the format is canonical (a proving key: to the same key, through gnark's raw layout); a
//! proving key read by sections (`KeyFile`) is the key read whole, or refused as it is.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::Limits;
use lockstep_ceremony::groth16::{Proof, read_public_witness, read_witness};
use lockstep_ceremony::phase2::{
    KeyChecks, KeyEncoding, KeyFile, KeyVector, ProvingKey, VerifyingKey,
};
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
            let whole = ProvingKey::read_with(pool(), &control, rest, &limits, KeyChecks::Curve);
            by_sections(whole.as_ref().ok().map(|(key, _)| key), rest, &limits);
            if let Ok((key, encoding)) = whole {
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

/// A key read by sections: opened and its vectors read whole, it is `whole` (the key read
/// whole), or refused where the whole read refuses.
fn by_sections(whole: Option<&ProvingKey>, bytes: &[u8], limits: &Limits) {
    let control = Control::new();
    let opened = KeyFile::open(
        pool(),
        &control,
        std::io::Cursor::new(bytes),
        limits,
        KeyChecks::Curve,
    );
    let file = match (whole, opened) {
        (_, Ok(file)) => file,
        (Some(_), Err(e)) => panic!("a key read whole does not open by sections: {e}"),
        (None, Err(_)) => return,
    };
    let g1 = |v: KeyVector| file.g1(pool(), &control, v, 0..file.count(v));
    let read = (|| {
        Ok::<_, lockstep_ceremony::CodecError>((
            g1(KeyVector::A)?,
            g1(KeyVector::B)?,
            g1(KeyVector::Z)?,
            g1(KeyVector::K)?,
            file.g2(pool(), &control, 0..file.count(KeyVector::B2))?,
        ))
    })();
    match (whole, read) {
        (Some(key), Ok((a, b, z, k, b2))) => {
            let sectioned = ProvingKey {
                power: file.power,
                alpha_g1: file.alpha_g1,
                beta_g1: file.beta_g1,
                delta_g1: file.delta_g1,
                a,
                b,
                z,
                k,
                beta_g2: file.beta_g2,
                delta_g2: file.delta_g2,
                b2,
                infinity_a: file.infinity_a.clone(),
                infinity_b: file.infinity_b.clone(),
                commitment_keys: file.commitment_keys.clone(),
            };
            assert!(&sectioned == key, "a key read by sections differs");
            let (mut whole_raw, mut sectioned_raw) = (Vec::new(), Vec::new());
            key.write_raw(pool(), &control, &mut whole_raw)
                .expect("writing to memory");
            file.write_raw(pool(), &control, &mut sectioned_raw)
                .expect("a key read by sections writes");
            assert!(
                whole_raw == sectioned_raw,
                "a key written raw by sections differs"
            );
        }
        (Some(_), Err(e)) => panic!("a key read whole fails by sections: {e}"),
        (None, Ok(_)) => panic!("a key refused whole reads by sections"),
        (None, Err(_)) => {}
    }
}
