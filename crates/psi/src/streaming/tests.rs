//! The streamed steps against the steps in memory: the same bytes at every block length, memory
//! bound and worker count, and the same refusals.

use lockstep_shard::{Control, Pool};

use super::*;
use crate::linkage::{KeyReader, KeySpec, Records};
use crate::{Backend, Joiner, Key, Limits, Mode, Request, Starter};

/// 1,500 rows over 300 keys, with blank rows (left out).
fn rows() -> String {
    (0..1500u32)
        .map(|i| match i.wrapping_mul(2_654_435_761) % 301 {
            300 => "\n".to_owned(),
            k => format!("person-{k}@example.org\n"),
        })
        .collect()
}

fn keys_in_memory(text: &str) -> Vec<Vec<u8>> {
    let spec = KeySpec::default();
    let table = Records::read(text.as_bytes(), &spec)
        .unwrap()
        .keys(&spec)
        .unwrap();
    table.values().to_vec()
}

fn streamed_request(
    joiner: &Joiner,
    text: &str,
    memory: usize,
    block: usize,
    workers: usize,
) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let budget = Budget {
        block,
        ..Budget::new(dir.path(), memory)
    };
    let (pool, control) = (Pool::new(workers).unwrap(), Control::new());
    let reader = KeyReader::new(text.as_bytes(), &KeySpec::default()).unwrap();
    let index = KeyIndex::build(reader, &budget, &pool, &control).unwrap();
    request(joiner, &pool, &control, &index, &budget, Vec::new()).unwrap()
}

#[test]
fn a_streamed_request_is_the_request_in_memory() {
    let text = rows();
    let key = Key::generate().unwrap();
    for mode in [Mode::Reveal, Mode::SizeOnly] {
        let joiner = Joiner::new(&key, mode, Backend::fastest()).unwrap();
        let (pool, control) = (Pool::new(2).unwrap(), Control::new());
        let expected = joiner
            .request(&pool, &control, &keys_in_memory(&text))
            .unwrap()
            .to_bytes();
        for (memory, block) in [(400, 7), (4096, 300), (1 << 20, 4096)] {
            for workers in [1, 2, 3] {
                assert_eq!(
                    streamed_request(&joiner, &text, memory, block, workers),
                    expected,
                    "{mode} memory {memory} block {block} workers {workers}"
                );
            }
        }
    }
}

#[test]
fn a_request_of_no_keys_is_refused() {
    let joiner = Joiner::new(&Key::generate().unwrap(), Mode::Reveal, Backend::Portable).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let budget = Budget::new(dir.path(), 1 << 16);
    let (pool, control) = (Pool::new(1).unwrap(), Control::new());
    let reader = KeyReader::new(&b"\n\n"[..], &KeySpec::default()).unwrap();
    let index = KeyIndex::build(reader, &budget, &pool, &control).unwrap();
    assert_eq!((index.empty_rows(), index.first_empty_row()), (2, Some(0)));
    let err = request(&joiner, &pool, &control, &index, &budget, Vec::new()).unwrap_err();
    assert!(
        matches!(err, StreamingError::Psi(PsiError::EmptySet(_))),
        "{err}"
    );
}

fn streamed_response(
    starter: &Starter,
    request: &[u8],
    memory: usize,
    block: usize,
    workers: usize,
) -> Result<Vec<u8>, StreamingError> {
    let dir = tempfile::tempdir().unwrap();
    let budget = Budget {
        block,
        ..Budget::new(dir.path(), memory)
    };
    let (pool, control) = (Pool::new(workers).unwrap(), Control::new());
    let scan = scan_request(request, Limits::NONE)?;
    let reader = crate::ElementReader::request(request, Limits::NONE)?;
    let out = respond(starter, &pool, &control, scan, reader, &budget, Vec::new());
    // Nothing is left in the folder, whatever the outcome.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    out
}

#[test]
fn a_streamed_response_is_the_response_in_memory() {
    let text = rows();
    let values = keys_in_memory(&text);
    let starter_key = Key::generate().unwrap();
    let (pool, control) = (Pool::new(2).unwrap(), Control::new());
    for mode in [Mode::Reveal, Mode::SizeOnly] {
        let joiner = Joiner::new(&Key::generate().unwrap(), mode, Backend::fastest()).unwrap();
        let starter = Starter::new(&starter_key, mode, Backend::fastest()).unwrap();
        let request = joiner.request(&pool, &control, &values).unwrap();
        let expected = starter
            .respond(&pool, &control, &request)
            .unwrap()
            .to_bytes();
        let bytes = request.to_bytes();
        // 33 * 5 bytes of memory: runs of 5 elements, 60 of them, merged in passes.
        for (memory, block) in [(165, 4), (4096, 100), (1 << 20, 4096)] {
            for workers in [1, 2, 3] {
                assert_eq!(
                    streamed_response(&starter, &bytes, memory, block, workers).unwrap(),
                    expected,
                    "{mode} memory {memory} block {block} workers {workers}"
                );
            }
        }
    }
}

#[test]
fn a_streamed_response_refuses_what_the_response_in_memory_refuses() {
    let (pool, control) = (Pool::new(2).unwrap(), Control::new());
    let joiner = Joiner::new(&Key::generate().unwrap(), Mode::SizeOnly, Backend::Portable).unwrap();
    let starter_key = Key::generate().unwrap();
    let reveal = Starter::new(&starter_key, Mode::Reveal, Backend::Portable).unwrap();
    let values: Vec<String> = (0..40).map(|i| format!("v{i}")).collect();
    let request = joiner.request(&pool, &control, &values).unwrap();
    // Another mode, before any work.
    let err = streamed_response(&reveal, &request.to_bytes(), 1 << 16, 8, 2).unwrap_err();
    let expected = reveal.respond(&pool, &control, &request).unwrap_err();
    assert_eq!(err.to_string(), expected.to_string());

    // An element off the curve is named by its index in the request, across blocks.
    let size_only = Starter::new(&starter_key, Mode::SizeOnly, Backend::Portable).unwrap();
    let mut elements = request.elements.clone();
    let mut x = [0u8; 33];
    x[0] = 2;
    let off = (1u8..)
        .find_map(|v| {
            x[32] = v;
            let e = crate::Element::from_slice(&x).unwrap();
            size_only
                .remask(&pool, &control, &[e], 0)
                .is_err()
                .then_some(e)
        })
        .unwrap();
    elements[29] = off;
    let bad = Request {
        mode: Mode::SizeOnly,
        elements,
    };
    let expected = size_only.respond(&pool, &control, &bad).unwrap_err();
    let err = streamed_response(&size_only, &bad.to_bytes(), 165, 8, 3).unwrap_err();
    assert_eq!(err.to_string(), expected.to_string());
    assert!(err.to_string().contains("29"), "{err}");

    // A request changed between the scan and the reading.
    let dir = tempfile::tempdir().unwrap();
    let budget = Budget::new(dir.path(), 1 << 16);
    let scan = scan_request(&request.to_bytes()[..], Limits::NONE).unwrap();
    let shorter = Request {
        mode: Mode::SizeOnly,
        elements: request.elements[..39].to_vec(),
    }
    .to_bytes();
    let reader = crate::ElementReader::request(&shorter[..], Limits::NONE).unwrap();
    let err = respond(
        &size_only,
        &pool,
        &control,
        scan,
        reader,
        &budget,
        Vec::new(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the request changed while it was read: 40 elements the first time, 39 the second"
    );
    // An empty request.
    let empty = Request {
        mode: Mode::Reveal,
        elements: Vec::new(),
    };
    assert!(matches!(
        scan_request(&empty.to_bytes()[..], Limits::NONE),
        Err(PsiError::EmptySet(_))
    ));
}
