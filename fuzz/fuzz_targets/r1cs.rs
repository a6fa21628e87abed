//! The R1CS reader never panics, and what it accepts can be walked whole: every constraint's
//! terms and coefficients are in range (what phase 2 indexes without checking again).
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::r1cs::R1cs;

fuzz_target!(|data: &[u8]| {
    if let Ok(r1cs) = R1cs::read(data) {
        for index in 0..r1cs.constraints() {
            let c = r1cs.constraint(index);
            for terms in [c.l, c.r, c.o] {
                for term in terms.iter() {
                    assert!((term.wire as usize) < r1cs.wires(), "a wire out of range");
                    let _ = r1cs.coefficient(term.coeff);
                }
            }
        }
        assert!(r1cs.commitments().len() <= lockstep_ceremony::r1cs::MAX_COMMITMENTS);
    }
});
