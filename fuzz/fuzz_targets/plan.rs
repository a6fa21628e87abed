//! Plan decoding and validation never panic; a plan that validates runs on small arrays with the
//! executor and the reference giving the same bits or the same error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_fuzz::{pool, same_outcome};
use lockstep_plan::{Array, ArrayMut, Plan, RunOptions, reference};
use lockstep_shard::Control;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(plan) = Plan::from_json(text) else {
        return;
    };
    // Small arrays, whatever the views ask: binding errors are fine, panics are not.
    let n = plan.fixed_length().unwrap_or(37).min(4096);
    let inputs: Vec<Array> = plan
        .inputs()
        .iter()
        .map(|input| {
            let len = input.view.span(n).unwrap_or(0).min(1 << 16) as usize;
            Array::zeros(input.dtype, len)
        })
        .collect();
    let refs: Vec<_> = inputs.iter().map(Array::as_array_ref).collect();
    let Ok(mut expected) = plan.output_arrays(&refs) else {
        return;
    };
    let mut got = expected.clone();
    let want = {
        let mut outs: Vec<ArrayMut<'_>> = expected.iter_mut().map(Array::as_array_mut).collect();
        reference::run(&plan, &refs, &mut outs)
    };
    let have = {
        let mut outs: Vec<ArrayMut<'_>> = got.iter_mut().map(Array::as_array_mut).collect();
        plan.run(
            pool(),
            &Control::new(),
            &refs,
            &mut outs,
            &RunOptions::default(),
        )
    };
    same_outcome(
        "the executor and the reference",
        have.map(|()| Bits(got)),
        want.map(|()| Bits(expected)),
    );
});

/// Arrays compared bit for bit (NaN payloads and signed zeros included).
#[derive(Debug)]
struct Bits(Vec<Array>);

impl PartialEq for Bits {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a.bits_eq(b))
    }
}
