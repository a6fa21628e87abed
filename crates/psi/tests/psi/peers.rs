//! Whole rounds against the installed peers, in both roles: our starter with their joiner, their
//! starter with our joiner, for raw, GCS and Bloom setups, revealing and size-only. The peers run
//! as subprocesses (`peers/psi-js.mjs`, `peers/openmined.py`) reading JSON jobs; messages travel
//! as files of raw protobuf bytes, exactly as between two organisations.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use lockstep_psi::{Backend, Mode, Request, Response, ServerSetup, SetupFormat, SetupParams};
use lockstep_shard::{Control, Pool};
use serde_json::{Value, json};

use crate::{joiner, starter, values};

const SK: &str = "3c1f00d5a2b1e7f6c9d8e3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4";
const JK: &str = "6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b";
const FORMATS: [(&str, SetupFormat); 3] = [
    ("raw", SetupFormat::Raw),
    ("gcs", SetupFormat::Gcs),
    ("bloom", SetupFormat::Bloom),
];

struct Peer {
    name: &'static str,
    program: PathBuf,
    script: PathBuf,
}

fn peers() -> Vec<Peer> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../peers");
    let python = dir.join(".venv/bin/python");
    assert!(
        python.exists() && dir.join("node_modules/@openmined/psi.js").exists(),
        "the peers are not installed in {}: run scripts/install-peers",
        dir.display()
    );
    vec![
        Peer {
            name: "psi.js",
            program: PathBuf::from("node"),
            script: dir.join("psi-js.mjs"),
        },
        Peer {
            name: "openmined.psi",
            program: python,
            script: dir.join("openmined.py"),
        },
    ]
}

impl Peer {
    fn run(&self, job: &Value) -> Value {
        let mut child = Command::new(&self.program)
            .arg(&self.script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "{}: cannot start {}: {e}",
                    self.name,
                    self.program.display()
                )
            });
        child
            .stdin
            .take()
            .unwrap()
            .write_all(job.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let value: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{}: unreadable result ({e}) for {job}", self.name));
        assert!(out.status.success(), "{}: {value} for {job}", self.name);
        value
    }
}

struct Round {
    dir: tempfile::TempDir,
    starter_values: Vec<String>,
    joiner_values: Vec<String>,
    expected: Vec<usize>,
}

impl Round {
    fn new() -> Self {
        let mut starter_values = values("s", 0, 150);
        starter_values.push("Zoë Ångström".to_owned());
        let mut joiner_values = values("s", 110, 70);
        joiner_values.insert(3, "Zoë Ångström".to_owned());
        let set: BTreeSet<&String> = starter_values.iter().collect();
        let expected = (0..joiner_values.len())
            .filter(|&i| set.contains(&joiner_values[i]))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        for (name, list) in [
            ("starter.json", &starter_values),
            ("joiner.json", &joiner_values),
        ] {
            std::fs::write(dir.path().join(name), serde_json::to_vec(list).unwrap()).unwrap();
        }
        Self {
            dir,
            starter_values,
            joiner_values,
            expected,
        }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_string_lossy().into_owned()
    }

    fn params(&self, format: SetupFormat) -> SetupParams {
        SetupParams {
            format,
            fpr: 1e-9,
            joiner_count: self.joiner_values.len() as u64,
        }
    }
}

#[test]
fn our_starter_with_their_joiner() {
    let round = Round::new();
    let (pool, control) = (Pool::new(3).unwrap(), Control::new());
    for peer in peers() {
        for (reveal, mode) in [(true, Mode::Reveal), (false, Mode::SizeOnly)] {
            let s = starter(SK, mode, Backend::fastest());
            peer.run(&json!({"op": "request", "key": JK, "reveal": reveal,
                "inputs": round.path("joiner.json"), "out": round.path("request.bin")}));
            let request =
                Request::from_bytes(&std::fs::read(round.path("request.bin")).unwrap()).unwrap();
            let response = s.respond(&pool, &control, &request).unwrap();
            std::fs::write(round.path("response.bin"), response.to_bytes()).unwrap();
            for (name, format) in FORMATS {
                let setup = s
                    .setup(
                        &pool,
                        &control,
                        &round.starter_values,
                        &round.params(format),
                    )
                    .unwrap();
                std::fs::write(round.path("setup.bin"), setup.message.to_bytes().unwrap()).unwrap();
                let found = peer.run(&json!({"op": "intersect", "key": JK, "reveal": reveal,
                    "setup": round.path("setup.bin"), "response": round.path("response.bin")}));
                let what = format!("{} joiner, {name}, reveal {reveal}", peer.name);
                assert_eq!(
                    found["size"].as_u64().unwrap() as usize,
                    round.expected.len(),
                    "{what}"
                );
                if reveal {
                    let indices: Vec<usize> = found["indices"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_u64().unwrap() as usize)
                        .collect();
                    assert_eq!(indices, round.expected, "{what}");
                }
            }
        }
    }
}

#[test]
fn their_starter_with_our_joiner() {
    let round = Round::new();
    let (pool, control) = (Pool::new(3).unwrap(), Control::new());
    for peer in peers() {
        for (reveal, mode) in [(true, Mode::Reveal), (false, Mode::SizeOnly)] {
            let j = joiner(JK, mode, Backend::fastest());
            let request = j.request(&pool, &control, &round.joiner_values).unwrap();
            std::fs::write(round.path("request.bin"), request.to_bytes()).unwrap();
            peer.run(&json!({"op": "respond", "key": SK, "reveal": reveal,
                "request": round.path("request.bin"), "out": round.path("response.bin")}));
            let response =
                Response::from_bytes(&std::fs::read(round.path("response.bin")).unwrap()).unwrap();
            let n = round.joiner_values.len();
            for (name, format) in FORMATS {
                peer.run(
                    &json!({"op": "setup", "key": SK, "reveal": reveal, "fpr": 1e-9,
                    "joiner_count": n, "format": name,
                    "inputs": round.path("starter.json"), "out": round.path("setup.bin")}),
                );
                let setup =
                    ServerSetup::from_bytes(&std::fs::read(round.path("setup.bin")).unwrap())
                        .unwrap();
                let what = format!("{} starter, {name}, reveal {reveal}", peer.name);
                assert_eq!(
                    j.intersection_size(&pool, &control, &setup, &response, n)
                        .unwrap(),
                    round.expected.len(),
                    "{what}"
                );
                if reveal {
                    assert_eq!(
                        j.intersect(&pool, &control, &setup, &response, n).unwrap(),
                        round.expected,
                        "{what}"
                    );
                    // Our own setup of the same values, made with the peer's key, is the same bytes.
                    let ours = starter(SK, mode, Backend::fastest())
                        .setup(
                            &pool,
                            &control,
                            &round.starter_values,
                            &round.params(format),
                        )
                        .unwrap();
                    assert_eq!(ours.message, setup, "{what}: setup bytes");
                }
            }
        }
    }
}
