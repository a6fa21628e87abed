//! circom's `.r1cs` reader never panics, and a circuit it accepts gets the same `.zkey` (or the
//! same error) from `zkey new` on two workers as from its serial reference, over a prepared
//! `.ptau` of power 4 (snarkjs's).
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::Limits;
use lockstep_ceremony::circom::CircomR1cs;
use lockstep_ceremony::zkey;
use lockstep_fuzz::{pool, same_outcome};
use lockstep_shard::Control;

/// snarkjs's `powersoftau prepare phase2` of a power-4 ceremony (also in the seeds directory,
/// where the reader takes it for a bad circuit).
const PTAU: &[u8] = include_bytes!("../seeds/circom_r1cs/power4-prepared.ptau.bin");

fuzz_target!(|data: &[u8]| {
    let Ok(r1cs) = CircomR1cs::read(Cursor::new(data)) else {
        return;
    };
    // Circuits of up to 2^4 rows and a few hundred wires: milliseconds each.
    if r1cs.header().domain_power() > 4 || r1cs.header().wires > 512 {
        return;
    }
    let limits = Limits::default();
    same_outcome(
        "zkey new",
        zkey::new(pool(), &Control::new(), &r1cs, Cursor::new(PTAU), &limits),
        zkey::new_serial(&r1cs, Cursor::new(PTAU), &limits),
    );
});
