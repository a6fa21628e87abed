//! Every validation error, with the item and field it names; big plans validate and run.

use lockstep_plan::{Array, MAX_NODES, Plan, PlanError, RunError, RunOptions};
use lockstep_shard::{Control, Pool};

fn error(text: &str) -> String {
    Plan::from_json(text).unwrap_err().to_string()
}

const INPUT: &str = r#"{ "id": "x", "dtype": "f32" }"#;

fn with_nodes(nodes: &str) -> String {
    format!(
        r#"{{ "version": 1, "inputs": [{INPUT}], "nodes": [{nodes}], "outputs": [{{ "id": "o", "from": "y" }}] }}"#
    )
}

#[test]
fn each_mistake_is_named_by_item_and_field() {
    let cases: Vec<(String, &str)> = vec![
        ("not json".to_owned(), "not a plan in format v1: expected ident at line 1 column 2"),
        (
            r#"{ "version": 1, "inputs": [], "nodes": [], "outputs": [], "extra": 1 }"#.to_owned(),
            "not a plan in format v1: unknown field `extra`, expected one of `version`, `inputs`, `constants`, `nodes`, `outputs` at line 1 column 65",
        ),
        (
            r#"{ "version": 2, "inputs": [], "nodes": [], "outputs": [] }"#.to_owned(),
            "plan format version 2 is not supported (this build reads version 1)",
        ),
        (
            with_nodes(r#"{ "id": "y", "op": "pow", "args": ["x", "x"] }"#),
            "nodes[0] \"y\".op: unknown op \"pow\" (ops: add, sub, mul, div, min, max, neg, abs, sqrt, fma, cast, eq, ne, lt, le, gt, ge, select)",
        ),
        (
            with_nodes(r#"{ "id": "y", "op": "add", "args": ["x"] }"#),
            "nodes[0] \"y\".args: add takes 2 arguments, not 1",
        ),
        (
            with_nodes(r#"{ "id": "y", "op": "add", "args": ["x", "z"] }"#),
            "nodes[0] \"y\".args[1]: \"z\" is not the id of an input, constant or node",
        ),
        (
            with_nodes(r#"{ "id": "y", "op": "cast", "args": ["x"], "to": "f16" }"#),
            "nodes[0] \"y\".to: unknown dtype \"f16\" (dtypes: i8, u8, i16, u16, i32, u32, f32, f64)",
        ),
        (with_nodes(r#"{ "id": "y", "op": "cast", "args": ["x"] }"#), "nodes[0] \"y\".to: a cast needs the dtype to cast to"),
        (
            with_nodes(r#"{ "id": "y", "op": "neg", "args": ["x"], "to": "i8" }"#),
            "nodes[0] \"y\".to: only a cast takes \"to\", not neg",
        ),
        (
            with_nodes(r#"{ "id": "i", "op": "cast", "args": ["x"], "to": "i32" }, { "id": "y", "op": "add", "args": ["x", "i"] }"#),
            "nodes[1] \"y\".args: arguments must have one dtype (explicit casts only): argument 0 is f32, argument 1 is i32",
        ),
        (
            with_nodes(r#"{ "id": "i", "op": "cast", "args": ["x"], "to": "i32" }, { "id": "y", "op": "sqrt", "args": ["i"] }"#),
            "nodes[1] \"y\".args: sqrt needs a float argument, not i32",
        ),
        (
            with_nodes(r#"{ "id": "y", "op": "select", "args": ["x", "x", "x"] }"#),
            "nodes[0] \"y\".args: the mask (argument 0) must be u8, not f32",
        ),
        (
            with_nodes(r#"{ "id": "y", "op": "add", "args": ["z", "x"] }, { "id": "z", "op": "add", "args": ["w", "x"] }, { "id": "w", "op": "neg", "args": ["z"] }"#),
            "nodes[1] \"z\".args: a cycle: z <- w <- z",
        ),
        (
            with_nodes(r#"{ "id": "y", "op": "neg", "args": ["x"] }, { "id": "y", "op": "abs", "args": ["x"] }"#),
            "nodes[1] \"y\".id: \"y\" is already the id of nodes[0] \"y\"",
        ),
        (
            with_nodes(r#"{ "id": "x", "op": "neg", "args": ["x"] }"#),
            "nodes[0] \"x\".id: \"x\" is already the id of inputs[0] \"x\"",
        ),
        (
            with_nodes(r#"{ "id": "y", "op": "neg", "args": ["x"] }, { "id": "spare", "op": "abs", "args": ["x"] }"#),
            "nodes[1] \"spare\": unused: no output depends on it",
        ),
        (
            format!(r#"{{ "version": 1, "inputs": [{INPUT}, {{ "id": "u", "dtype": "u8" }}], "nodes": [{{ "id": "y", "op": "neg", "args": ["x"] }}], "outputs": [{{ "id": "o", "from": "y" }}] }}"#),
            "inputs[1] \"u\": unused: no output depends on it",
        ),
        (
            format!(r#"{{ "version": 1, "inputs": [{INPUT}], "constants": [{{ "id": "k", "dtype": "u8", "value": 256 }}], "nodes": [{{ "id": "y", "op": "neg", "args": ["x"] }}], "outputs": [{{ "id": "o", "from": "y" }}] }}"#),
            "constants[0] \"k\".value: 256 does not fit u8 (0 to 255)",
        ),
        (
            format!(r#"{{ "version": 1, "inputs": [{INPUT}], "constants": [{{ "id": "k", "dtype": "i8", "value": 1.5 }}], "nodes": [{{ "id": "y", "op": "neg", "args": ["x"] }}], "outputs": [{{ "id": "o", "from": "y" }}] }}"#),
            "constants[0] \"k\".value: 1.5 is not an integer",
        ),
        (
            format!(r#"{{ "version": 1, "inputs": [{INPUT}], "constants": [{{ "id": "k", "dtype": "f64", "value": "NaN" }}], "nodes": [{{ "id": "y", "op": "neg", "args": ["x"] }}], "outputs": [{{ "id": "o", "from": "y" }}] }}"#),
            "constants[0] \"k\".value: \"NaN\" is not a number (a float constant is a JSON number, \"nan\", \"inf\" or \"-inf\")",
        ),
        (
            r#"{ "version": 1, "inputs": [{ "id": "x", "dtype": "f32", "view": { "stride": 0 } }], "nodes": [], "outputs": [{ "id": "o", "from": "x" }] }"#.to_owned(),
            "inputs[0] \"x\".view.stride: a stride must be at least 1",
        ),
        (
            r#"{ "version": 1, "inputs": [{ "id": "x", "dtype": "f32", "view": { "length": 4 } }, { "id": "z", "dtype": "f32", "view": { "length": 5 } }],
                 "nodes": [{ "id": "y", "op": "add", "args": ["x", "z"] }], "outputs": [{ "id": "o", "from": "y" }] }"#.to_owned(),
            "inputs[1] \"z\".view.length: 5 elements, but inputs[0] \"x\" fixes 4 (every view has one length)",
        ),
        (
            format!(r#"{{ "version": 1, "inputs": [{INPUT}], "nodes": [], "outputs": [] }}"#),
            "outputs: a plan needs at least one output",
        ),
        (
            format!(r#"{{ "version": 1, "inputs": [{INPUT}], "constants": [{{ "id": "k", "dtype": "f32", "value": 1 }}], "nodes": [{{ "id": "y", "op": "neg", "args": ["x"] }}], "outputs": [{{ "id": "o", "from": "y" }}, {{ "id": "c", "from": "k" }}] }}"#),
            "outputs[1] \"c\".from: an output cannot be a constant (it has no length)",
        ),
        (
            format!(r#"{{ "version": 1, "inputs": [{INPUT}], "nodes": [{{ "id": "y", "op": "neg", "args": ["x"] }}], "outputs": [{{ "id": "o", "from": "y" }}, {{ "id": "o", "from": "x" }}] }}"#),
            "outputs[1] \"o\".id: \"o\" is already the id of outputs[0]",
        ),
        (
            format!(r#"{{ "version": 1, "inputs": [{INPUT}], "nodes": [{{ "id": "y", "op": "neg", "args": ["x"] }}], "outputs": [{{ "id": "o", "from": "q" }}] }}"#),
            "outputs[0] \"o\".from: \"q\" is not the id of an input, constant or node",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(error(&text), expected, "for {text}");
    }
}

#[test]
fn runs_refuse_arrays_that_do_not_fit_the_plan() {
    let plan = Plan::from_json(
        r#"{ "version": 1, "inputs": [{ "id": "x", "dtype": "f32" }, { "id": "z", "dtype": "f32", "view": { "offset": 2, "stride": 2 } }],
             "nodes": [{ "id": "y", "op": "add", "args": ["x", "z"] }], "outputs": [{ "id": "o", "from": "y" }] }"#,
    )
    .unwrap();
    let pool = Pool::new(2).unwrap();
    let run = |inputs: &[Array]| {
        let refs: Vec<_> = inputs.iter().map(Array::as_array_ref).collect();
        plan.run_to_arrays(&pool, &Control::new(), &refs, &RunOptions::default())
            .unwrap_err()
            .to_string()
    };
    let f = |n: usize| Array::from(vec![1.0f32; n]);
    assert_eq!(
        run(&[f(4)]),
        "inputs: the plan has 2 inputs, the run passed 1"
    );
    assert_eq!(
        run(&[f(4), Array::from(vec![1u8; 10])]),
        "inputs[1] \"z\": the plan reads f32, the array holds u8"
    );
    assert_eq!(
        run(&[f(4), f(7)]),
        "inputs[1] \"z\": its view takes 3 elements of its 7 but inputs[0] \"x\" has 4"
    );
    let fixed = Plan::from_json(
        r#"{ "version": 1, "inputs": [{ "id": "x", "dtype": "f32", "view": { "offset": 1, "length": 4 } }],
             "nodes": [{ "id": "y", "op": "neg", "args": ["x"] }], "outputs": [{ "id": "o", "from": "y" }] }"#,
    )
    .unwrap();
    let refs = [f(4)];
    let refs: Vec<_> = refs.iter().map(Array::as_array_ref).collect();
    assert_eq!(
        fixed
            .run_to_arrays(&pool, &Control::new(), &refs, &RunOptions::default())
            .unwrap_err()
            .to_string(),
        "inputs[0] \"x\": 4 elements at offset 1 stride 1 reach past its 4 elements"
    );
}

#[test]
fn a_budget_refuses_a_run_before_it_allocates() {
    let plan =
        Plan::from_json(&with_nodes(r#"{ "id": "y", "op": "neg", "args": ["x"] }"#)).unwrap();
    let pool = Pool::new(2).unwrap();
    let x = Array::from(vec![1.0f32; 1_000_000]);
    let needed = plan.working_bytes(x.len(), &pool);
    assert_eq!(
        needed,
        2 * 16 * 1024,
        "one f32 slot of a block (16 KiB) per worker"
    );
    let refs = [x.as_array_ref()];
    let error = plan
        .run_to_arrays(
            &pool,
            &Control::new(),
            &refs,
            &RunOptions {
                budget: Some(needed - 1),
            },
        )
        .unwrap_err();
    assert_eq!(
        error,
        RunError::OverBudget {
            needed,
            budget: needed - 1
        }
    );
    assert!(
        plan.run_to_arrays(
            &pool,
            &Control::new(),
            &refs,
            &RunOptions {
                budget: Some(needed)
            }
        )
        .is_ok()
    );
}

#[test]
fn a_plan_of_ten_thousand_nodes_validates_and_runs_without_deep_recursion() {
    let mut nodes = vec![r#"{ "id": "n0", "op": "neg", "args": ["x"] }"#.to_owned()];
    for i in 1..10_000 {
        nodes.push(format!(
            r#"{{ "id": "n{i}", "op": "neg", "args": ["n{}"] }}"#,
            i - 1
        ));
    }
    nodes.reverse(); // listed last-first: the evaluation order must be found
    let text = format!(
        r#"{{ "version": 1, "inputs": [{INPUT}], "nodes": [{}], "outputs": [{{ "id": "o", "from": "n9999" }}] }}"#,
        nodes.join(", ")
    );
    // On a small stack: validation and the run must not recurse per node.
    let out = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let plan = Plan::from_json(&text).unwrap();
            let x = Array::from(vec![1.5f32, -0.0]);
            plan.run_to_arrays(
                &Pool::current_thread(),
                &Control::new(),
                &[x.as_array_ref()],
                &RunOptions::default(),
            )
        })
        .unwrap()
        .join()
        .unwrap()
        .unwrap();
    assert!(
        out[0].bits_eq(&Array::from(vec![1.5f32, -0.0])),
        "an even number of negations"
    );
}

/// A chain of `nodes` additions of 1 to `x` (f64), listed in order.
fn chain_of_additions(nodes: usize) -> String {
    let mut text = String::from(
        r#"{"version":1,"inputs":[{"id":"x","dtype":"f64"}],"constants":[{"id":"one","dtype":"f64","value":1}],"nodes":["#,
    );
    for i in 0..nodes {
        let arg = if i == 0 {
            "x".to_owned()
        } else {
            format!("n{}", i - 1)
        };
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"id":"n{i}","op":"add","args":["{arg}","one"]}}"#
        ));
    }
    text.push_str(&format!(
        r#"],"outputs":[{{"id":"y","from":"n{}"}}]}}"#,
        nodes - 1
    ));
    text
}

/// Compilation is linear (it was quadratic: 40,000 nodes took 46 s, 200,000 over ten minutes):
/// a chain of the most nodes a plan holds validates, compiles and runs; one more is refused by
/// name before anything is built.
#[test]
fn a_chain_of_the_most_nodes_a_plan_holds_compiles_and_runs_and_one_more_is_refused() {
    let plan = Plan::from_json(&chain_of_additions(MAX_NODES)).unwrap();
    let x = Array::from(vec![0.5f64, -7.0]);
    let out = plan
        .run_to_arrays(
            &Pool::current_thread(),
            &Control::new(),
            &[x.as_array_ref()],
            &RunOptions::default(),
        )
        .unwrap();
    let n = MAX_NODES as f64;
    assert!(out[0].bits_eq(&Array::from(vec![0.5 + n, -7.0 + n])));
    assert_eq!(
        Plan::from_json(&chain_of_additions(MAX_NODES + 1)),
        Err(PlanError::Invalid {
            at: "nodes".to_owned(),
            message: format!(
                "{} items, but a plan holds at most {MAX_NODES} of each",
                MAX_NODES + 1
            ),
        })
    );
}

/// What a plan's JSON says is echoed escaped and cut, whatever part of it the parser quotes;
/// a text past the byte cap is refused unread.
#[test]
fn a_parser_s_error_echoes_no_raw_bytes_and_a_text_past_the_cap_is_refused() {
    let field = format!("\\u001b]0;pwned\\u0007{}", "z".repeat(200_000));
    let text = format!(r#"{{"version":1,"{field}":1}}"#);
    let error = Plan::from_json(&text).unwrap_err().to_string();
    assert!(
        error.len() < 400,
        "{} bytes: {}",
        error.len(),
        &error[..400.min(error.len())]
    );
    assert!(
        !error.contains('\u{1b}') && !error.contains('\u{7}'),
        "{error}"
    );
    assert!(
        error.contains("unknown field `\\u{1b}]0;pwned\\u{7}zz"),
        "{error}"
    );
    let long = " ".repeat(usize::try_from(lockstep_plan::MAX_PLAN_BYTES).unwrap() + 1);
    assert!(
        matches!(Plan::from_json(&long), Err(PlanError::Json(m)) if m.contains("more than the")),
    );
}

#[test]
fn version_and_json_errors_are_typed() {
    assert_eq!(
        Plan::from_json(r#"{ "version": 7, "inputs": [], "nodes": [], "outputs": [] }"#),
        Err(PlanError::Version { found: 7 })
    );
}

#[test]
fn huge_lengths_and_strides_from_a_plan_are_errors_not_allocations() {
    let pool = Pool::current_thread();
    // A fixed length far past the input: refused before any output is allocated.
    let long = Plan::from_json(
        r#"{ "version": 1, "inputs": [{ "id": "x", "dtype": "f64", "view": { "length": 1000000000000 } }],
             "nodes": [{ "id": "y", "op": "neg", "args": ["x"] }], "outputs": [{ "id": "o", "from": "y" }] }"#,
    )
    .unwrap();
    let x = Array::from(vec![1.0f64; 4]);
    assert_eq!(
        long.run_to_arrays(
            &pool,
            &Control::new(),
            &[x.as_array_ref()],
            &RunOptions::default()
        )
        .unwrap_err()
        .to_string(),
        "inputs[0] \"x\": 1000000000000 elements at offset 0 stride 1 reach past its 4 elements"
    );
    // An output stride whose span cannot be allocated.
    let wide = Plan::from_json(
        r#"{ "version": 1, "inputs": [{ "id": "x", "dtype": "f64" }],
             "nodes": [{ "id": "y", "op": "neg", "args": ["x"] }], "outputs": [{ "id": "o", "from": "y", "view": { "stride": 1000000000000000 } }] }"#,
    )
    .unwrap();
    assert_eq!(
        wide.run_to_arrays(
            &pool,
            &Control::new(),
            &[x.as_array_ref()],
            &RunOptions::default()
        )
        .unwrap_err()
        .to_string(),
        "outputs[0] \"o\": 3000000000000001 elements of f64 cannot be allocated"
    );
}

#[test]
fn view_numbers_up_to_2_pow_53_minus_1_are_read_alike_on_every_target_and_bound_by_the_arrays() {
    let plan_with = |view: &str| {
        Plan::from_json(&format!(
            r#"{{ "version": 1, "inputs": [{{ "id": "x", "dtype": "f32", "view": {view} }}],
                 "nodes": [{{ "id": "y", "op": "neg", "args": ["x"] }}], "outputs": [{{ "id": "o", "from": "y" }}] }}"#
        ))
    };
    // Past the largest number a view holds: refused when read, naming the field (the same on
    // a 32-bit target, which once said "does not fit this machine's memory" from 2^32 on).
    for field in ["offset", "stride", "length"] {
        let error = plan_with(&format!(r#"{{ "{field}": 9007199254740992 }}"#)).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "inputs[0] \"x\".view.{field}: 9007199254740992 is past 9007199254740991, the largest a view holds"
            )
        );
        assert_eq!(error.code(), "PLAN_INVALID");
    }
    let run = |plan: &Plan, x: &Array| {
        plan.run_to_arrays(
            &Pool::current_thread(),
            &Control::new(),
            &[x.as_array_ref()],
            &RunOptions::default(),
        )
    };
    let x = Array::from(vec![1.0f32, 2.0, 3.0]);
    // At the largest: an offset past the array takes no elements, on every target.
    let far = plan_with(r#"{ "offset": 9007199254740991 }"#).unwrap();
    assert_eq!(run(&far, &x).unwrap(), [Array::from(Vec::<f32>::new())]);
    // A stride past every address, over one element, is never stepped.
    let one = plan_with(r#"{ "stride": 9007199254740991, "length": 1 }"#).unwrap();
    assert_eq!(run(&one, &x).unwrap(), [Array::from(vec![-1.0f32])]);
    // Over two, the array is too short, and the error names the plan's numbers.
    let two = plan_with(r#"{ "stride": 1099511627776, "length": 2 }"#).unwrap();
    assert_eq!(
        run(&two, &x).unwrap_err().to_string(),
        "inputs[0] \"x\": 2 elements at offset 0 stride 1099511627776 reach past its 3 elements"
    );
}

#[test]
fn a_layout_from_shapes_agrees_with_a_run_over_the_arrays() {
    use lockstep_plan::DType;
    let plan = Plan::from_json(
        r#"{ "version": 1,
             "inputs": [{ "id": "x", "dtype": "f32", "view": { "offset": 1, "stride": 2 } },
                        { "id": "k", "dtype": "i16" }],
             "nodes": [{ "id": "c", "op": "cast", "args": ["k"], "to": "f32" },
                       { "id": "y", "op": "add", "args": ["x", "c"] }],
             "outputs": [{ "id": "o", "from": "y", "view": { "stride": 3 } },
                         { "id": "p", "from": "c", "view": { "offset": 2 } }] }"#,
    )
    .unwrap();
    let pool = Pool::new(2).unwrap();
    let compiled = lockstep_plan::CompiledPlan::new(plan.clone());
    for n in [1usize, 7, 40_000, 100_001] {
        let x = Array::from(vec![0.5f32; 2 * n]);
        let k = Array::from(vec![3i16; n]);
        let refs = [x.as_array_ref(), k.as_array_ref()];
        let layout = plan
            .layout(
                &[(DType::F32, 2 * n), (DType::I16, n)],
                None,
                pool.workers(),
            )
            .unwrap();
        assert_eq!(layout.elements, n);
        assert_eq!(layout.memory, plan.memory(&refs, &pool).unwrap());
        assert_eq!(
            compiled
                .layout(
                    &[(DType::F32, 2 * n), (DType::I16, n)],
                    None,
                    pool.workers()
                )
                .unwrap(),
            layout
        );
        let outputs = plan.output_arrays(&refs).unwrap();
        // The compiled plan runs as the plan does.
        let mut again = outputs.clone();
        let mut views: Vec<_> = again.iter_mut().map(Array::as_array_mut).collect();
        compiled
            .run(
                &pool,
                &Control::new(),
                &refs,
                &mut views,
                &RunOptions::default(),
            )
            .unwrap();
        assert_eq!(
            again,
            plan.run_to_arrays(&pool, &Control::new(), &refs, &RunOptions::default())
                .unwrap()
        );
        assert_eq!(
            layout.outputs,
            outputs.iter().map(Array::len).collect::<Vec<_>>()
        );
    }
    // The shape checks are the run's, word for word.
    let x = Array::from(vec![0.5f32; 9]);
    let k = Array::from(vec![3u16; 4]);
    let run_error = plan
        .run_to_arrays(
            &pool,
            &Control::new(),
            &[x.as_array_ref(), k.as_array_ref()],
            &RunOptions::default(),
        )
        .unwrap_err();
    assert_eq!(
        plan.layout(&[(DType::F32, 9), (DType::U16, 4)], None, 2)
            .unwrap_err(),
        run_error
    );
    assert_eq!(
        run_error.to_string(),
        "inputs[1] \"k\": the plan reads i16, the array holds u16"
    );
    assert_eq!(
        plan.layout(&[(DType::F32, 9), (DType::I16, 3)], None, 2)
            .unwrap_err()
            .to_string(),
        "inputs[1] \"k\": its view takes 3 elements of its 3 but inputs[0] \"x\" has 4"
    );
    assert_eq!(
        plan.layout(&[(DType::F32, 9)], None, 2)
            .unwrap_err()
            .to_string(),
        "inputs: the plan has 2 inputs, the run passed 1"
    );
    // Outputs passed in: checked as the run checks them.
    let layout = plan
        .layout(&[(DType::F32, 9), (DType::I16, 4)], None, 2)
        .unwrap();
    assert_eq!(layout.outputs, [10, 6]);
    let fits = [(DType::F32, 10), (DType::F32, 6)];
    assert_eq!(
        plan.layout(&[(DType::F32, 9), (DType::I16, 4)], Some(&fits), 2)
            .unwrap(),
        layout
    );
    let x = Array::from(vec![0.5f32; 9]);
    let k = Array::from(vec![3i16; 4]);
    let mut o = Array::from(vec![0f32; 9]);
    let mut p = Array::from(vec![0f32; 6]);
    let run_error = plan
        .run(
            &pool,
            &Control::new(),
            &[x.as_array_ref(), k.as_array_ref()],
            &mut [o.as_array_mut(), p.as_array_mut()],
            &RunOptions::default(),
        )
        .unwrap_err();
    assert_eq!(
        plan.layout(
            &[(DType::F32, 9), (DType::I16, 4)],
            Some(&[(DType::F32, 9), (DType::F32, 6)]),
            2
        )
        .unwrap_err(),
        run_error
    );
    assert_eq!(
        run_error.to_string(),
        "outputs[0] \"o\": 4 elements at offset 0 stride 3 reach past its 9 elements"
    );
}

#[test]
fn a_dense_output_of_its_exact_length_is_covered() {
    use lockstep_plan::DType;
    let plan =
        Plan::from_json(&with_nodes(r#"{ "id": "y", "op": "neg", "args": ["x"] }"#)).unwrap();
    let shapes = [(DType::F32, 5)];
    assert_eq!(plan.layout(&shapes, None, 1).unwrap().covered, [true]);
    assert_eq!(
        plan.layout(&shapes, Some(&[(DType::F32, 5)]), 1)
            .unwrap()
            .covered,
        [true]
    );
    assert_eq!(
        plan.layout(&shapes, Some(&[(DType::F32, 6)]), 1)
            .unwrap()
            .covered,
        [false],
        "a longer array keeps its last element"
    );
}

#[test]
fn only_an_integer_division_can_fail_a_run_midway() {
    let div = |dtype: &str| {
        Plan::from_json(&format!(
            r#"{{ "version": 1, "inputs": [{{ "id": "x", "dtype": "{dtype}" }}],
                 "nodes": [{{ "id": "y", "op": "div", "args": ["x", "x"] }}],
                 "outputs": [{{ "id": "o", "from": "y" }}] }}"#
        ))
        .unwrap()
    };
    assert!(div("i32").can_fail_midway());
    assert!(div("u8").can_fail_midway());
    assert!(!div("f32").can_fail_midway());
    assert!(!div("f64").can_fail_midway());
}
