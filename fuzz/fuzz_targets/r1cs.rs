//! The R1CS reader never panics, and what it accepts can be walked whole: every constraint's
//! terms and coefficients are in range (what phase 2 indexes without checking again); the
//! prover's solver runs on it (a witness of ones) without panicking: solved, or an error.
#![no_main]

use blstrs::Scalar;
use libfuzzer_sys::fuzz_target;
use lockstep_ceremony::r1cs::{Hints, R1cs, solve};

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
        struct Fixed;
        impl Hints for Fixed {
            fn commitment(
                &mut self,
                _: usize,
                _: &[Scalar],
                _: &[Scalar],
            ) -> Result<Scalar, String> {
                Ok(Scalar::from(5u64))
            }
            fn random(&mut self) -> Scalar {
                Scalar::from(3u64)
            }
        }
        let public = vec![Scalar::from(1u64); r1cs.public() - 1];
        let secret = vec![Scalar::from(1u64); r1cs.secret()];
        if let Ok(solved) = solve(&r1cs, &public, &secret, &mut Fixed) {
            assert_eq!(solved.wires().len(), r1cs.wires());
        }
    }
});
