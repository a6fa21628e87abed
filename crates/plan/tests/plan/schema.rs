//! The committed JSON Schema (`plan-v1.schema.json`) says what the reader accepts: its enums are
//! the crate's dtypes and ops, every object's required fields are exactly what the reader needs,
//! every optional field is one it reads, and nothing else is accepted.

use lockstep_plan::{DType, Op, Plan, PlanError};
use serde_json::{Value, json};

fn schema() -> Value {
    let text = include_str!("../../plan-v1.schema.json");
    serde_json::from_str(text).unwrap()
}

fn names(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_schema_lists_the_crates_dtypes_and_ops() {
    let s = schema();
    assert_eq!(
        names(&s["$defs"]["dtype"]["enum"]),
        DType::ALL.map(|d| d.name().to_owned())
    );
    assert_eq!(
        names(&s["$defs"]["op"]["enum"]),
        Op::ALL.map(|o| o.name().to_owned())
    );
}

// A valid plan using every object kind, each field given where the schema allows one.
fn full() -> Value {
    json!({
        "version": 1,
        "inputs": [{ "id": "x", "dtype": "f32", "view": { "offset": 0, "stride": 1, "length": 3 } }],
        "constants": [{ "id": "k", "dtype": "f32", "value": 2 }],
        "nodes": [{ "id": "y", "op": "mul", "args": ["x", "k"] }, { "id": "z", "op": "cast", "args": ["y"], "to": "i32" }],
        "outputs": [{ "id": "o", "from": "z", "view": { "offset": 0, "stride": 1, "length": 3 } }]
    })
}

fn parse(plan: &Value) -> Result<Plan, PlanError> {
    Plan::from_json(&plan.to_string())
}

// The object at `path` of the full plan, for the schema's definition `def`.
fn objects() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("", vec![]),
        ("input", vec!["inputs", "0"]),
        ("constant", vec!["constants", "0"]),
        ("node", vec!["nodes", "1"]),
        ("output", vec!["outputs", "0"]),
        ("view", vec!["inputs", "0", "view"]),
    ]
}

fn at<'a>(plan: &'a mut Value, path: &[&str]) -> &'a mut serde_json::Map<String, Value> {
    let mut v = plan;
    for step in path {
        v = match step.parse::<usize>() {
            Ok(i) => &mut v[i],
            Err(_) => &mut v[*step],
        };
    }
    v.as_object_mut().unwrap()
}

#[test]
fn required_optional_and_unknown_fields_agree_with_the_reader() {
    let s = schema();
    assert!(parse(&full()).is_ok());
    for (def, path) in objects() {
        let definition = if def.is_empty() { &s } else { &s["$defs"][def] };
        assert_eq!(
            definition["additionalProperties"],
            json!(false),
            "{def}: closed"
        );
        let required: Vec<String> = definition.get("required").map(names).unwrap_or_default();
        let properties: Vec<String> = definition["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        let mut plan = full();
        let object = at(&mut plan, &path).clone();
        for key in object.keys() {
            assert!(
                properties.contains(key),
                "{def}: the reader takes {key:?}, the schema lacks it"
            );
        }
        for key in &properties {
            let mut without = full();
            at(&mut without, &path).remove(key);
            let result = parse(&without);
            if required.contains(key) {
                assert!(
                    matches!(result, Err(PlanError::Json(_))),
                    "{def}.{key} is required: {result:?}"
                );
            } else {
                // Optional fields may be left out (a few make the plan invalid otherwise, never
                // unreadable).
                assert!(
                    !matches!(result, Err(PlanError::Json(_))),
                    "{def}.{key} is optional: {result:?}"
                );
            }
        }
        let mut extra = full();
        at(&mut extra, &path).insert("extra".to_owned(), json!(1));
        assert!(
            matches!(parse(&extra), Err(PlanError::Json(_))),
            "{def}: unknown fields refused"
        );
    }
}
