use std::path::Path;

use lockstep_psi::{
    Backend, Mode, Request, Response, ServerSetup, SetupFormat, SetupParams, reference,
};
use lockstep_shard::{Control, Pool};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::{joiner, starter};

const FILES: [&str; 2] = ["psi-js.json", "openmined-py.json"];
const FORMATS: [(&str, SetupFormat); 3] = [
    ("raw", SetupFormat::Raw),
    ("gcs", SetupFormat::Gcs),
    ("bloom", SetupFormat::Bloom),
];

fn load(file: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; regenerate with peers/.venv/bin/python peers/make-vectors.py",
            path.display()
        )
    });
    serde_json::from_str(&text).unwrap()
}

/// A vector's message: the hex bytes, or `{sha256, len}` for large ones.
fn assert_bytes(actual: &[u8], expected: &Value, what: &str) {
    match expected {
        Value::String(hex_bytes) => assert_eq!(hex::encode(actual), *hex_bytes, "{what}"),
        Value::Object(digest) => {
            assert_eq!(
                actual.len() as u64,
                digest["len"].as_u64().unwrap(),
                "{what}: length"
            );
            assert_eq!(
                hex::encode(Sha256::digest(actual)),
                digest["sha256"].as_str().unwrap(),
                "{what}: SHA-256"
            );
        }
        other => panic!("{what}: unexpected vector value {other}"),
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

fn indices(value: &Value) -> Vec<usize> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect()
}

#[test]
fn the_peers_agree_with_each_other() {
    let (a, b) = (load(FILES[0]), load(FILES[1]));
    assert_eq!(
        a["cases"], b["cases"],
        "psi.js and openmined.psi vectors differ"
    );
}

#[test]
fn our_bytes_equal_the_peers_bytes_on_every_backend() {
    let pool = Pool::new(2).unwrap();
    let control = Control::new();
    for file in FILES {
        let vectors = load(file);
        for case in vectors["cases"].as_array().unwrap() {
            let name = format!("{file} / {}", case["name"].as_str().unwrap());
            let starter_inputs = strings(&case["starter_inputs"]);
            let joiner_inputs = strings(&case["joiner_inputs"]);
            let (sk, jk) = (
                case["starter_key"].as_str().unwrap(),
                case["joiner_key"].as_str().unwrap(),
            );
            for &backend in Backend::available() {
                let what = |step: &str| format!("{name} / {backend} / {step}");
                let s = starter(sk, Mode::Reveal, backend);
                let j = joiner(jk, Mode::Reveal, backend);
                assert_eq!(
                    hex::encode(*crate::key(sk).to_bytes()),
                    case["starter_key_bytes"].as_str().unwrap(),
                    "{}",
                    what("key bytes")
                );
                for (format_name, format) in FORMATS {
                    let params = SetupParams {
                        format,
                        fpr: case["fpr"].as_f64().unwrap(),
                        joiner_count: case["joiner_count"].as_u64().unwrap(),
                    };
                    let setup = s.setup(&pool, &control, &starter_inputs, &params).unwrap();
                    assert_bytes(
                        &setup.message.to_bytes().unwrap(),
                        &case["setup"][format_name],
                        &what(format_name),
                    );
                    let serial = reference::setup(&s, &starter_inputs, &params).unwrap();
                    assert_eq!(serial, setup, "{}", what("reference setup"));
                }
                let request = j.request(&pool, &control, &joiner_inputs).unwrap();
                assert_bytes(&request.to_bytes(), &case["request"], &what("request"));
                let response = s.respond(&pool, &control, &request).unwrap();
                assert_bytes(&response.to_bytes(), &case["response"], &what("response"));
                assert_eq!(reference::respond(&s, &request).unwrap(), response);

                // Reading the peers' own messages back: setups, then the intersection.
                for (format_name, format) in FORMATS {
                    let setup = match &case["setup"][format_name] {
                        Value::String(h) => {
                            ServerSetup::from_bytes(&hex::decode(h).unwrap()).unwrap()
                        }
                        _ => {
                            s.setup(
                                &pool,
                                &control,
                                &starter_inputs,
                                &SetupParams {
                                    format,
                                    fpr: case["fpr"].as_f64().unwrap(),
                                    joiner_count: case["joiner_count"].as_u64().unwrap(),
                                },
                            )
                            .unwrap()
                            .message
                        }
                    };
                    let response = match &case["response"] {
                        Value::String(h) => Response::from_bytes(&hex::decode(h).unwrap()).unwrap(),
                        _ => response.clone(),
                    };
                    let found = j
                        .intersect(&pool, &control, &setup, &response, joiner_inputs.len())
                        .unwrap();
                    assert_eq!(
                        found,
                        indices(&case["intersection"][format_name]),
                        "{}",
                        what(format_name)
                    );
                    assert_eq!(
                        reference::intersect(&j, &setup, &response, joiner_inputs.len()).unwrap(),
                        found
                    );
                }

                // Size-only: sorted responses and sizes.
                let s = starter(sk, Mode::SizeOnly, backend);
                let j = joiner(jk, Mode::SizeOnly, backend);
                let request = j.request(&pool, &control, &joiner_inputs).unwrap();
                assert_bytes(
                    &request.to_bytes(),
                    &case["request_size_only"],
                    &what("size-only request"),
                );
                let response = s.respond(&pool, &control, &request).unwrap();
                assert_bytes(
                    &response.to_bytes(),
                    &case["response_size_only"],
                    &what("size-only response"),
                );
                if let Value::String(h) = &case["request_size_only"] {
                    assert_eq!(
                        Request::from_bytes(&hex::decode(h).unwrap()).unwrap(),
                        request
                    );
                }
                for (format_name, format) in FORMATS {
                    let params = SetupParams {
                        format,
                        fpr: case["fpr"].as_f64().unwrap(),
                        joiner_count: case["joiner_count"].as_u64().unwrap(),
                    };
                    let setup = s.setup(&pool, &control, &starter_inputs, &params).unwrap();
                    let size = j
                        .intersection_size(
                            &pool,
                            &control,
                            &setup.message,
                            &response,
                            joiner_inputs.len(),
                        )
                        .unwrap();
                    assert_eq!(
                        size as u64,
                        case["intersection_size"][format_name].as_u64().unwrap(),
                        "{}",
                        what(format_name)
                    );
                }
            }
        }
    }
}
