//! The fused executor against the node-by-node reference, bit for bit, at 1, 2, 3 and 5 workers
//! and on the current-thread pool: every op x dtype, subviews and strides, lengths that do not
//! fill a block, special values.

use lockstep_plan::{Array, ArrayMut, DType, Op, Plan, RunError, RunOptions, reference};
use lockstep_shard::{Control, Pool};

use crate::fixtures::{nonzero, values};

fn pools() -> Vec<Pool> {
    let mut pools: Vec<Pool> = [1, 2, 3, 5]
        .iter()
        .map(|&w| Pool::new(w).unwrap())
        .collect();
    pools.push(Pool::current_thread());
    pools
}

/// Runs `plan` on `inputs` with the reference and with the executor on every pool; asserts
/// equal bits (or equal errors) and returns the reference's outcome.
pub(crate) fn check(plan: &Plan, inputs: &[Array]) -> Result<Vec<Array>, RunError> {
    let refs: Vec<_> = inputs.iter().map(Array::as_array_ref).collect();
    let mut expected = plan.output_arrays(&refs).unwrap();
    let outcome = {
        let mut outs: Vec<ArrayMut<'_>> = expected.iter_mut().map(Array::as_array_mut).collect();
        reference::run(plan, &refs, &mut outs)
    };
    for pool in pools() {
        let got = plan.run_to_arrays(&pool, &Control::new(), &refs, &RunOptions::default());
        match (&outcome, got) {
            (Ok(()), Ok(got)) => {
                for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                    assert!(
                        g.bits_eq(e),
                        "output {i} differs on {} workers:\n got {g:?}\n expected {e:?}",
                        pool.workers()
                    );
                }
            }
            (Err(e), Err(g)) => assert_eq!(&g, e, "{} workers", pool.workers()),
            (e, g) => panic!(
                "reference {e:?}, executor {g:?} on {} workers",
                pool.workers()
            ),
        }
    }
    outcome.map(|()| expected)
}

fn plan_of(dtype: DType, op: Op, to: Option<DType>) -> String {
    let (args, inputs) = match op.arity() {
        1 => (r#"["a"]"#, vec!["a"]),
        2 => (r#"["a", "b"]"#, vec!["a", "b"]),
        _ if op == Op::Select => (r#"["m", "a", "b"]"#, vec!["m", "a", "b"]),
        _ => (r#"["a", "b", "c"]"#, vec!["a", "b", "c"]),
    };
    let inputs: Vec<String> = inputs
        .iter()
        .map(|id| {
            let d = if *id == "m" { "u8" } else { dtype.name() };
            format!(r#"{{ "id": "{id}", "dtype": "{d}" }}"#)
        })
        .collect();
    let to = to.map_or(String::new(), |t| format!(r#", "to": "{t}""#));
    format!(
        r#"{{ "version": 1, "inputs": [{}], "nodes": [{{ "id": "y", "op": "{op}", "args": {args}{to} }}], "outputs": [{{ "id": "out", "from": "y" }}] }}"#,
        inputs.join(", ")
    )
}

#[test]
fn every_op_and_dtype_matches_the_reference_bit_for_bit() {
    // Whole blocks and a short one for every dtype (blocks are 8 KiB); one short block.
    for n in [3 * 8192 + 37, 5] {
        for dtype in DType::ALL {
            for op in Op::ALL {
                if op == Op::Sqrt && !dtype.is_float() {
                    continue;
                }
                let targets: Vec<Option<DType>> = if op == Op::Cast {
                    DType::ALL.map(Some).to_vec()
                } else {
                    vec![None]
                };
                for to in targets {
                    let plan = Plan::from_json(&plan_of(dtype, op, to)).unwrap();
                    let inputs: Vec<Array> = plan
                        .inputs()
                        .iter()
                        .enumerate()
                        .map(|(i, input)| {
                            let v = values(input.dtype, n, (i as u64 + 1) * 7919 + n as u64);
                            if op == Op::Div && i == 1 {
                                nonzero(v)
                            } else {
                                v
                            }
                        })
                        .collect();
                    check(&plan, &inputs).unwrap_or_else(|e| panic!("{op} {dtype} {to:?}: {e}"));
                }
            }
        }
    }
}

#[test]
fn float_semantics_are_the_documented_ones() {
    let plan = Plan::from_json(
        r#"{ "version": 1, "inputs": [{ "id": "a", "dtype": "f32" }, { "id": "b", "dtype": "f32" }],
             "nodes": [{ "id": "lo", "op": "min", "args": ["a", "b"] }, { "id": "hi", "op": "max", "args": ["a", "b"] },
                       { "id": "q", "op": "div", "args": ["a", "b"] }, { "id": "i", "op": "cast", "args": ["a"], "to": "i8" }],
             "outputs": [{ "id": "lo", "from": "lo" }, { "id": "hi", "from": "hi" }, { "id": "q", "from": "q" }, { "id": "i", "from": "i" }] }"#,
    )
    .unwrap();
    let a = Array::from(vec![f32::NAN, 1.0, -0.0, 0.0, 1.0, 300.0]);
    let b = Array::from(vec![1.0, f32::NAN, 0.0, -0.0, 0.0, 2.0]);
    let out = check(&plan, &[a, b]).unwrap();
    let bits = |a: &Array| match a {
        Array::F32(v) => v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        _ => unreachable!(),
    };
    let f = |x: f32| x.to_bits();
    // min(a, b) = a < b ? a : b
    assert_eq!(
        bits(&out[0]),
        [f(1.0), f32::NAN.to_bits(), f(0.0), f(-0.0), f(0.0), f(2.0)]
    );
    assert_eq!(
        bits(&out[1]),
        [
            f(1.0),
            f32::NAN.to_bits(),
            f(0.0),
            f(-0.0),
            f(1.0),
            f(300.0)
        ]
    );
    assert_eq!(bits(&out[2])[4], f(f32::INFINITY), "IEEE division by zero");
    assert_eq!(
        out[3],
        Array::from(vec![0i8, 1, 0, 0, 1, 127]),
        "NaN to 0, saturation"
    );
}

#[test]
fn every_nan_an_output_holds_is_the_quiet_nan_with_sign_0_and_no_payload() {
    // NaNs made by arithmetic (x86 makes them with sign 1, WebAssembly with sign 0), NaNs passed
    // through from an input with a sign and a payload, and NaNs chosen by min/max from either
    // operand: every one is written as 0x7fc0_0000 (f32) or 0x7ff8_0000_0000_0000 (f64).
    for (dtype, canonical) in [("f32", 0x7fc0_0000u64), ("f64", 0x7ff8_0000_0000_0000)] {
        let plan = Plan::from_json(&format!(
            r#"{{ "version": 1, "inputs": [{{ "id": "a", "dtype": "{dtype}" }}, {{ "id": "b", "dtype": "{dtype}" }}],
                 "nodes": [{{ "id": "d", "op": "sub", "args": ["a", "a"] }}, {{ "id": "q", "op": "div", "args": ["b", "b"] }},
                           {{ "id": "s", "op": "sqrt", "args": ["b"] }}, {{ "id": "m", "op": "fma", "args": ["a", "b", "a"] }},
                           {{ "id": "lo", "op": "min", "args": ["b", "a"] }}, {{ "id": "hi", "op": "max", "args": ["a", "b"] }}],
                 "outputs": [{{ "id": "a", "from": "a" }}, {{ "id": "d", "from": "d" }}, {{ "id": "q", "from": "q" }},
                             {{ "id": "s", "from": "s" }}, {{ "id": "m", "from": "m" }}, {{ "id": "lo", "from": "lo" }},
                             {{ "id": "hi", "from": "hi" }}] }}"#
        ))
        .unwrap();
        let (a, b) = if dtype == "f32" {
            let neg_payload = f32::from_bits(0xffc0_0001);
            (
                Array::from(vec![f32::INFINITY, neg_payload, -f32::INFINITY]),
                Array::from(vec![0.0f32, -1.0, neg_payload]),
            )
        } else {
            let neg_payload = f64::from_bits(0xfff8_0000_0000_0001);
            (
                Array::from(vec![f64::INFINITY, neg_payload, -f64::INFINITY]),
                Array::from(vec![0.0f64, -1.0, neg_payload]),
            )
        };
        let out = check(&plan, &[a, b]).unwrap();
        for (i, array) in out.iter().enumerate() {
            let bits: Vec<u64> = match array {
                Array::F32(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
                Array::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
                other => panic!("a {} output", other.dtype()),
            };
            let nans: Vec<u64> = bits
                .iter()
                .copied()
                .filter(|&x| {
                    if dtype == "f32" {
                        f32::from_bits(x as u32).is_nan()
                    } else {
                        f64::from_bits(x).is_nan()
                    }
                })
                .collect();
            assert!(
                !nans.is_empty(),
                "{dtype} output {i} holds a NaN: {bits:x?}"
            );
            assert!(
                nans.iter().all(|&x| x == canonical),
                "{dtype} output {i}: {bits:x?}"
            );
        }
    }
}

#[test]
fn integer_division_by_zero_names_the_lowest_element_then_the_first_node() {
    let plan = Plan::from_json(
        r#"{ "version": 1, "inputs": [{ "id": "a", "dtype": "i32" }, { "id": "b", "dtype": "i32" }, { "id": "c", "dtype": "i32" }],
             "nodes": [{ "id": "first", "op": "div", "args": ["a", "b"] }, { "id": "second", "op": "div", "args": ["a", "c"] },
                       { "id": "sum", "op": "add", "args": ["first", "second"] }],
             "outputs": [{ "id": "out", "from": "sum" }] }"#,
    )
    .unwrap();
    let n = 100_000;
    let a = Array::from(vec![7i32; n]);
    for (zero_b, zero_c, node, element) in [
        (Some(90_000), Some(70_001), "second", 70_001),
        (Some(70_001), Some(90_000), "first", 70_001),
        (Some(5), Some(5), "first", 5),
        (None, Some(n - 1), "second", n - 1),
    ] {
        let mut b = vec![1i32; n];
        let mut c = vec![1i32; n];
        if let Some(k) = zero_b {
            b[k] = 0;
            b[n - 1] = 0;
        }
        if let Some(k) = zero_c {
            c[k] = 0;
        }
        let error = check(&plan, &[a.clone(), Array::from(b), Array::from(c)]).unwrap_err();
        assert_eq!(
            error,
            RunError::DivisionByZero {
                node: node.to_owned(),
                element
            }
        );
        assert_eq!(
            error.to_string(),
            format!("node \"{node}\": integer division by zero at element {element}")
        );
    }
}

#[test]
fn views_with_offsets_and_strides_read_and_write_the_right_elements() {
    let plan = Plan::from_json(
        r#"{ "version": 1,
             "inputs": [{ "id": "x", "dtype": "f64", "view": { "offset": 3, "stride": 3 } },
                        { "id": "y", "dtype": "f64", "view": { "offset": 1 } }],
             "nodes": [{ "id": "s", "op": "sub", "args": ["x", "y"] }],
             "outputs": [{ "id": "dense", "from": "s" }, { "id": "strided", "from": "s", "view": { "offset": 2, "stride": 4 } },
                         { "id": "copy", "from": "x" }] }"#,
    )
    .unwrap();
    for n in [1, 2047, 2048, 2049, 3 * 2048 + 11, 40_000] {
        let x = values(DType::F64, 3 + 3 * n - 2, n as u64);
        let y = values(DType::F64, 1 + n, 17 + n as u64);
        let out = check(&plan, &[x.clone(), y.clone()]).unwrap();
        assert_eq!(out[0].len(), n);
        assert_eq!(out[1].len(), 2 + 4 * (n - 1) + 1);
        let (Array::F64(x), Array::F64(y), Array::F64(d), Array::F64(s)) =
            (&x, &y, &out[0], &out[1])
        else {
            unreachable!()
        };
        let last = n - 1;
        assert_eq!(d[last].to_bits(), (x[3 + 3 * last] - y[1 + last]).to_bits());
        assert_eq!(s[2 + 4 * last].to_bits(), d[last].to_bits());
        if n > 1 {
            assert_eq!(s[3], 0.0, "skipped elements stay as they were");
        }
    }
}

#[test]
fn a_long_chain_and_a_wide_fan_reuse_slots_and_match() {
    // 64 adds in a chain (the bench's plan) and a fan of 40 nodes read at the end.
    let mut nodes = vec![r#"{ "id": "n0", "op": "add", "args": ["x", "one"] }"#.to_owned()];
    for i in 1..64 {
        nodes.push(format!(
            r#"{{ "id": "n{i}", "op": "add", "args": ["n{}", "one"] }}"#,
            i - 1
        ));
    }
    let mut fan = Vec::new();
    for i in 0..40 {
        nodes.push(format!(
            r#"{{ "id": "f{i}", "op": "mul", "args": ["n{}", "x"] }}"#,
            i % 64
        ));
        fan.push(format!("f{i}"));
    }
    let mut sum = "f0".to_owned();
    for (i, f) in fan.iter().enumerate().skip(1) {
        nodes.push(format!(
            r#"{{ "id": "s{i}", "op": "add", "args": ["{sum}", "{f}"] }}"#
        ));
        sum = format!("s{i}");
    }
    let plan = Plan::from_json(&format!(
        r#"{{ "version": 1, "inputs": [{{ "id": "x", "dtype": "f32" }}], "constants": [{{ "id": "one", "dtype": "f32", "value": 1 }}],
             "nodes": [{}], "outputs": [{{ "id": "chain", "from": "n63" }}, {{ "id": "fan", "from": "{sum}" }}] }}"#,
        nodes.join(", ")
    ))
    .unwrap();
    let x = Array::from(vec![1.0f32; 70_001]);
    let out = check(&plan, &[x]).unwrap();
    assert!(matches!(&out[0], Array::F32(v) if v.iter().all(|&y| y == 65.0)));
}
