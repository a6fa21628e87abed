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
            for workers in [1, 2, 3, 5] {
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
    let out = respond(
        starter,
        &pool,
        &control,
        scan,
        request,
        Limits::NONE,
        &budget,
        Vec::new(),
    );
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
            for workers in [1, 2, 3, 5] {
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
            let e = Element::from_slice(&x).unwrap();
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
    let err = respond(
        &size_only,
        &pool,
        &control,
        scan,
        &shorter[..],
        Limits::NONE,
        &budget,
        Vec::new(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the request changed while it was read: its second reading differs from its first"
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

/// The starter's rows as CSV keyed by `email`, normalized.
fn starter_csv() -> (String, KeySpec) {
    let mut text = String::from("id,email\n");
    for i in 0..1200u32 {
        match i.wrapping_mul(2_654_435_761) % 251 {
            250 => text.push_str(&format!("s{i},\n")),
            k if k % 5 == 0 => text.push_str(&format!("s{i}, Person-{k}@Example.org \n")),
            k => text.push_str(&format!("s{i},person-{k}@example.org\n")),
        }
    }
    let spec = KeySpec {
        columns: vec!["email".to_owned()],
        normalize: true,
    };
    (text, spec)
}

#[test]
fn a_streamed_setup_and_permutation_are_those_in_memory() {
    use crate::linkage::{Party, write_permutation};
    use crate::{SetupFormat, SetupParams};
    let (text, spec) = starter_csv();
    let party = Party::read(text.as_bytes(), &spec).unwrap();
    let starter =
        Starter::new(&Key::generate().unwrap(), Mode::Reveal, Backend::fastest()).unwrap();
    let (pool, control) = (Pool::new(2).unwrap(), Control::new());
    for format in [SetupFormat::Raw, SetupFormat::Gcs, SetupFormat::Bloom] {
        let params = SetupParams {
            format,
            fpr: 1e-6,
            joiner_count: 300,
        };
        let linked =
            crate::linkage::setup(&starter, &pool, &control, party.keys(), &params).unwrap();
        let expected_permutation = linked.permutation.as_ref().map(|p| {
            let mut file = Vec::new();
            write_permutation(&mut file, p, &spec).unwrap();
            file
        });
        for (memory, block) in [(400, 7), (4096, 100), (1 << 20, 4096)] {
            for workers in [1, 2, 3, 5] {
                let dir = tempfile::tempdir().unwrap();
                let budget = Budget {
                    block,
                    ..Budget::new(dir.path(), memory)
                };
                let pool = Pool::new(workers).unwrap();
                let reader = KeyReader::new(text.as_bytes(), &spec).unwrap();
                let index = KeyIndex::build(reader, &budget, &pool, &control).unwrap();
                let permutation = (format == SetupFormat::Raw).then(Vec::new);
                let (written, bytes, permutation) = setup(
                    &starter,
                    &pool,
                    &control,
                    &index,
                    &params,
                    &spec,
                    &budget,
                    Vec::new(),
                    permutation,
                )
                .unwrap();
                let context = format!("{format:?} memory {memory} block {block} workers {workers}");
                assert!(bytes == linked.bytes, "{context}");
                assert_eq!(written.bytes, bytes.len() as u64, "{context}");
                assert_eq!(
                    written.digest,
                    crate::linkage::Digest::of(&bytes),
                    "{context}"
                );
                assert_eq!(written.format, linked.message.format_name(), "{context}");
                assert!(permutation == expected_permutation, "{context}");
                drop(index);
                assert_eq!(
                    std::fs::read_dir(dir.path()).unwrap().count(),
                    0,
                    "{context}"
                );
            }
        }
    }
}

#[test]
fn a_streamed_setup_refuses_what_the_setup_in_memory_refuses() {
    use crate::{SetupFormat, SetupParams};
    let (text, spec) = starter_csv();
    let starter = Starter::new(&Key::generate().unwrap(), Mode::Reveal, Backend::Portable).unwrap();
    let (pool, control) = (Pool::new(1).unwrap(), Control::new());
    let dir = tempfile::tempdir().unwrap();
    let budget = Budget::new(dir.path(), 1 << 16);
    let reader = KeyReader::new(text.as_bytes(), &spec).unwrap();
    let index = KeyIndex::build(reader, &budget, &pool, &control).unwrap();
    let run = |params: &SetupParams, permutation: Option<Vec<u8>>| {
        setup(
            &starter,
            &pool,
            &control,
            &index,
            params,
            &spec,
            &budget,
            Vec::new(),
            permutation,
        )
        .map(drop)
        .unwrap_err()
        .to_string()
    };
    let bad_rate = SetupParams {
        format: SetupFormat::Gcs,
        fpr: 1.5,
        joiner_count: 10,
    };
    assert_eq!(
        run(&bad_rate, None),
        bad_rate.validate().unwrap_err().to_string()
    );
    let gcs = SetupParams {
        format: SetupFormat::Gcs,
        fpr: 1e-9,
        joiner_count: 10,
    };
    assert!(run(&gcs, Some(Vec::new())).contains("gcs"));
}

/// The joiner's rows as CSV keyed by `email`, normalized: some keys the starter has.
fn joiner_csv() -> String {
    let mut text = String::from("email,city\n");
    for i in 0..900u32 {
        match i.wrapping_mul(2_246_822_519) % 401 {
            400 => text.push_str(",nowhere\n"),
            k => text.push_str(&format!("PERSON-{}@example.org,c{i}\n", k + 100)),
        }
    }
    text
}

#[test]
fn a_streamed_intersection_is_the_intersection_in_memory() {
    use crate::linkage::{DigestingReader, Learn, Party, write_pairs};
    use crate::{SetupFormat, SetupParams, StreamedSetup};
    let (starter_text, spec) = starter_csv();
    let joiner_text = joiner_csv();
    let starter_party = Party::read(starter_text.as_bytes(), &spec).unwrap();
    let joiner_party = Party::read(joiner_text.as_bytes(), &spec).unwrap();
    let (pool, control) = (Pool::new(2).unwrap(), Control::new());
    let starter_key = Key::generate().unwrap();
    let joiner_key = Key::generate().unwrap();
    for (mode, learn) in [(Mode::Reveal, Learn::Rows), (Mode::SizeOnly, Learn::Size)] {
        let starter = Starter::new(&starter_key, mode, Backend::fastest()).unwrap();
        let joiner = Joiner::new(&joiner_key, mode, Backend::fastest()).unwrap();
        let request =
            crate::linkage::request(&joiner, &pool, &control, joiner_party.keys()).unwrap();
        let response = starter.respond(&pool, &control, &request).unwrap();
        let response_bytes = response.to_bytes();
        for format in [SetupFormat::Raw, SetupFormat::Gcs, SetupFormat::Bloom] {
            let params = SetupParams {
                format,
                fpr: 1e-6,
                joiner_count: 500,
            };
            let linked =
                crate::linkage::setup(&starter, &pool, &control, starter_party.keys(), &params)
                    .unwrap();
            let expected = crate::linkage::intersect(
                &joiner,
                &pool,
                &control,
                &linked.message,
                crate::linkage::Digest::of(&linked.bytes),
                &response,
                joiner_party.keys(),
                learn,
            )
            .unwrap();
            assert!(learn == Learn::Size || !expected.rows.is_empty());
            let mut expected_rows = Vec::new();
            expected
                .write_rows(joiner_party.records(), &mut expected_rows)
                .unwrap();
            let expected_pairs = expected.pairs.as_ref().map(|p| {
                let mut file = Vec::new();
                write_pairs(&mut file, p).unwrap();
                file
            });
            for (memory, block) in [(400, 7), (4096, 100), (1 << 20, 4096)] {
                for workers in [1, 2, 3, 5] {
                    let context = format!(
                        "{mode} {format:?} memory {memory} block {block} workers {workers}"
                    );
                    let dir = tempfile::tempdir().unwrap();
                    let budget = Budget {
                        block,
                        ..Budget::new(dir.path(), memory)
                    };
                    let pool = Pool::new(workers).unwrap();
                    let reader = KeyReader::new(joiner_text.as_bytes(), &spec).unwrap();
                    let index = KeyIndex::build(reader, &budget, &pool, &control).unwrap();
                    let setup =
                        StreamedSetup::read(DigestingReader::new(&linked.bytes[..]), Limits::NONE)
                            .unwrap();
                    let scan = scan_response(&response_bytes[..], Limits::NONE).unwrap();
                    let rows_out = (learn == Learn::Rows).then(|| RowsOut {
                        records: KeyReader::new(joiner_text.as_bytes(), &spec).unwrap(),
                        out: Vec::new(),
                    });
                    let mut rows = Vec::new();
                    let mut pairs = Vec::new();
                    let found = intersect(
                        &joiner,
                        &pool,
                        &control,
                        &index,
                        setup,
                        scan,
                        &response_bytes[..],
                        Limits::NONE,
                        learn,
                        &budget,
                        rows_out.map(|r| RowsOut {
                            records: r.records,
                            out: &mut rows,
                        }),
                        expected_pairs.as_ref().map(|_| &mut pairs),
                    )
                    .unwrap();
                    assert_eq!(found.size, expected.size, "{context}");
                    assert_eq!(found.raw, expected.raw, "{context}");
                    if learn == Learn::Rows {
                        assert_eq!(found.rows, expected.rows.len() as u64, "{context}");
                        assert!(rows == expected_rows, "{context}");
                    }
                    if let Some(expected_pairs) = &expected_pairs {
                        assert!(&pairs == expected_pairs, "{context}");
                    }
                    drop(index);
                    assert_eq!(
                        std::fs::read_dir(dir.path()).unwrap().count(),
                        0,
                        "{context}"
                    );
                }
            }
        }
    }
}

/// A record file or a response that changes between its two readings is refused, never read
/// as it now is.
#[test]
fn files_changed_between_their_readings_are_refused() {
    use crate::linkage::{DigestingReader, Learn, Party};
    use crate::{SetupFormat, SetupParams, StreamedSetup};
    let (starter_text, spec) = starter_csv();
    let joiner_text = joiner_csv();
    let starter_party = Party::read(starter_text.as_bytes(), &spec).unwrap();
    let joiner_party = Party::read(joiner_text.as_bytes(), &spec).unwrap();
    let (pool, control) = (Pool::new(2).unwrap(), Control::new());
    let starter =
        Starter::new(&Key::generate().unwrap(), Mode::Reveal, Backend::fastest()).unwrap();
    let joiner = Joiner::new(&Key::generate().unwrap(), Mode::Reveal, Backend::fastest()).unwrap();
    let params = SetupParams {
        format: SetupFormat::Raw,
        fpr: 1e-6,
        joiner_count: 500,
    };
    let linked =
        crate::linkage::setup(&starter, &pool, &control, starter_party.keys(), &params).unwrap();
    let request = crate::linkage::request(&joiner, &pool, &control, joiner_party.keys()).unwrap();
    let response = starter
        .respond(&pool, &control, &request)
        .unwrap()
        .to_bytes();
    let dir = tempfile::tempdir().unwrap();
    let budget = Budget::new(dir.path(), 4096);
    let index = KeyIndex::build(
        KeyReader::new(joiner_text.as_bytes(), &spec).unwrap(),
        &budget,
        &pool,
        &control,
    )
    .unwrap();
    let run = |records: &str, second_response: &[u8]| {
        intersect(
            &joiner,
            &pool,
            &control,
            &index,
            StreamedSetup::read(DigestingReader::new(&linked.bytes[..]), Limits::NONE).unwrap(),
            scan_response(&response[..], Limits::NONE).unwrap(),
            second_response,
            Limits::NONE,
            Learn::Rows,
            &budget,
            Some(RowsOut {
                records: KeyReader::new(records.as_bytes(), &spec).unwrap(),
                out: Vec::new(),
            }),
            None::<Vec<u8>>,
        )
    };
    assert!(run(&joiner_text, &response).is_ok());
    // The last row's key edited (past every matched row written): refused at the end.
    let cut = joiner_text.trim_end().rfind('\n').unwrap() + 1;
    let edited = format!("{}x{}", &joiner_text[..cut], &joiner_text[cut..]);
    let err = run(&edited, &response).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the record file changed while it was read: its second reading differs from its first"
    );
    let mut other = response.clone();
    let last = other.len() - 1;
    other[last] ^= 1;
    let err = run(&joiner_text, &other).unwrap_err();
    assert!(
        err.to_string()
            .contains("response changed while it was read")
            || err.to_string().contains("response message"),
        "{err}"
    );
}

/// A starter that repeats elements (in its setup, in its response) gets from the streamed
/// intersection what it gets from the one in memory: every pair, counted the same way.
#[test]
fn repeated_elements_are_joined_as_in_memory() {
    use crate::linkage::{DigestingReader, Learn, Party, write_pairs};
    use crate::{Response, ServerSetup, SetupFormat, SetupParams, StreamedSetup};
    let (starter_text, spec) = starter_csv();
    let joiner_text = joiner_csv();
    let starter_party = Party::read(starter_text.as_bytes(), &spec).unwrap();
    let joiner_party = Party::read(joiner_text.as_bytes(), &spec).unwrap();
    let (pool, control) = (Pool::new(2).unwrap(), Control::new());
    let starter =
        Starter::new(&Key::generate().unwrap(), Mode::Reveal, Backend::fastest()).unwrap();
    let joiner = Joiner::new(&Key::generate().unwrap(), Mode::Reveal, Backend::fastest()).unwrap();
    let request = crate::linkage::request(&joiner, &pool, &control, joiner_party.keys()).unwrap();
    let mut response = starter.respond(&pool, &control, &request).unwrap();
    // Three joiner keys answered with one element, and another with a second's.
    let (a, b) = (response.elements[2], response.elements[40]);
    response.elements[17] = a;
    response.elements[30] = a;
    response.elements[41] = b;
    let response = Response {
        elements: response.elements,
    };
    let params = SetupParams {
        format: SetupFormat::Raw,
        fpr: 1e-6,
        joiner_count: 500,
    };
    let linked =
        crate::linkage::setup(&starter, &pool, &control, starter_party.keys(), &params).unwrap();
    let ServerSetup::Raw(mut elements) = linked.message else {
        panic!("a raw setup");
    };
    // Every element the setup holds twice.
    elements = elements.iter().flat_map(|&e| [e, e]).collect();
    let setup = ServerSetup::Raw(elements);
    let setup_bytes = setup.to_bytes().unwrap();
    for learn in [Learn::Rows, Learn::Size] {
        let expected = crate::linkage::intersect(
            &joiner,
            &pool,
            &control,
            &setup,
            crate::linkage::Digest::of(&setup_bytes),
            &response,
            joiner_party.keys(),
            learn,
        )
        .unwrap();
        let mut expected_rows = Vec::new();
        expected
            .write_rows(joiner_party.records(), &mut expected_rows)
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let budget = Budget {
            block: 9,
            ..Budget::new(dir.path(), 500)
        };
        let reader = KeyReader::new(joiner_text.as_bytes(), &spec).unwrap();
        let index = KeyIndex::build(reader, &budget, &pool, &control).unwrap();
        let (mut rows, mut pairs) = (Vec::new(), Vec::new());
        let found = intersect(
            &joiner,
            &pool,
            &control,
            &index,
            StreamedSetup::read(DigestingReader::new(&setup_bytes[..]), Limits::NONE).unwrap(),
            scan_response(&response.to_bytes()[..], Limits::NONE).unwrap(),
            &response.to_bytes()[..],
            Limits::NONE,
            learn,
            &budget,
            Some(RowsOut {
                records: KeyReader::new(joiner_text.as_bytes(), &spec).unwrap(),
                out: &mut rows,
            }),
            Some(&mut pairs),
        );
        let found = found.unwrap();
        assert_eq!(found.size, expected.size, "{learn:?}");
        if learn == Learn::Rows {
            assert!(rows == expected_rows);
            let mut expected_pairs = Vec::new();
            write_pairs(&mut expected_pairs, expected.pairs.as_ref().unwrap()).unwrap();
            assert!(pairs == expected_pairs);
            assert!(found.rows > expected.size as u64);
        }
    }
}

#[test]
fn a_streamed_resolve_is_the_resolve_in_memory() {
    use crate::linkage::link_files::{PairsFile, PermutationFile};
    use crate::linkage::{
        Digest, Learn, Party, read_pairs, read_permutation, write_pairs, write_permutation,
        write_resolved,
    };
    use crate::{SetupFormat, SetupParams};
    let (starter_text, spec) = starter_csv();
    let joiner_text = joiner_csv();
    let starter_party = Party::read(starter_text.as_bytes(), &spec).unwrap();
    let joiner_party = Party::read(joiner_text.as_bytes(), &spec).unwrap();
    let (pool, control) = (Pool::new(2).unwrap(), Control::new());
    let starter =
        Starter::new(&Key::generate().unwrap(), Mode::Reveal, Backend::fastest()).unwrap();
    let joiner = Joiner::new(&Key::generate().unwrap(), Mode::Reveal, Backend::fastest()).unwrap();
    let params = SetupParams {
        format: SetupFormat::Raw,
        fpr: 1e-6,
        joiner_count: 500,
    };
    let linked =
        crate::linkage::setup(&starter, &pool, &control, starter_party.keys(), &params).unwrap();
    let request = crate::linkage::request(&joiner, &pool, &control, joiner_party.keys()).unwrap();
    let response = starter.respond(&pool, &control, &request).unwrap();
    let found = crate::linkage::intersect(
        &joiner,
        &pool,
        &control,
        &linked.message,
        Digest::of(&linked.bytes),
        &response,
        joiner_party.keys(),
        Learn::Rows,
    )
    .unwrap();
    let mut pairs_file = Vec::new();
    write_pairs(&mut pairs_file, found.pairs.as_ref().unwrap()).unwrap();
    let mut permutation_file = Vec::new();
    write_permutation(
        &mut permutation_file,
        linked.permutation.as_ref().unwrap(),
        &spec,
    )
    .unwrap();
    let pairs = read_pairs(&pairs_file[..]).unwrap();
    let (permutation, _) = read_permutation(&permutation_file[..]).unwrap();
    let resolved = crate::linkage::resolve(&permutation, starter_party.keys(), &pairs).unwrap();
    assert!(resolved.len() > 100);
    let mut expected = Vec::new();
    write_resolved(starter_party.records(), &resolved, &mut expected).unwrap();

    let streamed_with =
        |text: &str, permutation: &[u8], pairs: &[u8], memory: usize, workers: usize| {
            let dir = tempfile::tempdir().unwrap();
            let budget = Budget::new(dir.path(), memory);
            let pool = Pool::new(workers).unwrap();
            let index = KeyIndex::build(
                KeyReader::new(text.as_bytes(), &spec).unwrap(),
                &budget,
                &pool,
                &control,
            )
            .unwrap();
            let mut out = Vec::new();
            let written = resolve(
                &pool,
                &control,
                PermutationFile::open(permutation).unwrap(),
                &index,
                PairsFile::open(pairs).unwrap(),
                KeyReader::new(text.as_bytes(), &spec).unwrap(),
                &budget,
                &mut out,
            );
            drop(index);
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
            written.map(|n| (n, out))
        };
    let streamed = |text: &str, permutation: &[u8], memory: usize, workers: usize| {
        streamed_with(text, permutation, &pairs_file, memory, workers)
    };
    for memory in [400, 4096, 1 << 20] {
        for workers in [1, 2, 3, 5] {
            let (n, out) = streamed(&starter_text, &permutation_file, memory, workers).unwrap();
            assert_eq!(n, resolved.len() as u64);
            assert!(out == expected, "memory {memory} workers {workers}");
        }
    }
    // Another input: the in-memory refusal, word for word.
    let fewer: String = starter_text
        .lines()
        .take(1000)
        .map(|l| format!("{l}\n"))
        .collect();
    let fewer_party = Party::read(fewer.as_bytes(), &spec).unwrap();
    let expected = crate::linkage::resolve(&permutation, fewer_party.keys(), &pairs).unwrap_err();
    let err = streamed(&fewer, &permutation_file, 4096, 2).unwrap_err();
    assert_eq!(err.to_string(), expected.to_string());
    let reordered = starter_text.replacen("s0,", "s0x,", 1);
    let edited: String = {
        let mut lines: Vec<&str> = reordered.lines().collect();
        lines.swap(1, 2);
        lines.iter().map(|l| format!("{l}\n")).collect()
    };
    let err = streamed(&edited, &permutation_file, 4096, 2).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the input's keys are not those the setup was made from: rows reordered, keys edited, \
         another file, or other key columns or normalization"
    );
    // Entries moved: taken, as memory takes them (in any order). Edited: refused as memory
    // refuses them, word for word.
    let text = String::from_utf8(permutation_file.clone()).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let first = lines
        .iter()
        .position(|l| l.starts_with("setup_position"))
        .unwrap()
        + 1;
    lines[first..].reverse();
    let moved: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let (n, out) = streamed(&starter_text, moved.as_bytes(), 4096, 2).unwrap();
    assert_eq!(n, resolved.len() as u64);
    let mut in_memory = Vec::new();
    write_resolved(starter_party.records(), &resolved, &mut in_memory).unwrap();
    assert!(out == in_memory);
    let permutation_lines: Vec<String> = text.lines().map(str::to_owned).collect();
    type Edit<'a> = &'a dyn Fn(&mut Vec<String>);
    let edits: [Edit; 5] = [
        // A row at another position.
        &|l| l[first] = l[first].replacen("0,", "1,", 1),
        // A row listed twice.
        &|l| {
            let again = l[first + 3].clone();
            l.push(again);
        },
        // A position out of range.
        &|l| l[first + 2] = format!("99999,{}", l[first + 2].split_once(',').unwrap().1),
        // A row out of range.
        &|l| l[first + 1] = format!("{},99999", l[first + 1].split_once(',').unwrap().0),
        // A position's only row gone.
        &|l| {
            let at = l.iter().position(|x| x.starts_with("7,")).unwrap();
            l.remove(at);
        },
    ];
    for edit in edits {
        let mut lines = permutation_lines.clone();
        edit(&mut lines);
        let edited: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let theirs = read_permutation(edited.as_bytes())
            .map_err(|e| e.to_string())
            .and_then(|(p, _)| {
                crate::linkage::resolve(&p, starter_party.keys(), &pairs).map_err(|e| e.to_string())
            })
            .unwrap_err();
        let ours = streamed(&starter_text, edited.as_bytes(), 4096, 2).unwrap_err();
        assert_eq!(ours.to_string(), theirs);
    }

    // Forged pairs: fields changed at random in a few lines. The first refusal in file order
    // is memory's, word for word, or both accept.
    let text = String::from_utf8(pairs_file.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let first = lines
        .iter()
        .position(|l| l.starts_with("joiner_row"))
        .unwrap()
        + 1;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |below: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        usize::try_from(seed % below as u64).expect("below a usize")
    };
    let mut refused = 0;
    for _ in 0..60 {
        let mut forged: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
        for _ in 0..1 + next(3) {
            let line = first + next(lines.len() - first);
            let mut fields: Vec<String> = forged[line].split(',').map(str::to_owned).collect();
            let field = next(3);
            let value: usize = fields[field].parse().unwrap();
            fields[field] = match next(3) {
                0 => (value + 1).to_string(),
                1 => value
                    .saturating_sub(1)
                    .max(usize::from(field == 0))
                    .to_string(),
                _ => (next(1300) + usize::from(field == 0)).to_string(),
            };
            forged[line] = fields.join(",");
        }
        let forged: String = forged.iter().map(|l| format!("{l}\n")).collect();
        let in_memory = read_pairs(forged.as_bytes())
            .map_err(|e| e.to_string())
            .and_then(|p| {
                crate::linkage::resolve(&permutation, starter_party.keys(), &p)
                    .map_err(|e| e.to_string())
            });
        let ours = streamed_with(&starter_text, &permutation_file, forged.as_bytes(), 4096, 2);
        match (in_memory, ours) {
            (Ok(_), Ok(_)) => {}
            (Err(theirs), Err(ours)) => {
                refused += 1;
                assert_eq!(ours.to_string(), theirs);
            }
            (theirs, ours) => panic!("in memory {theirs:?}, streamed {:?}", ours.map(|o| o.0)),
        }
    }
    assert!(refused > 30, "{refused} forgeries refused");
}

#[test]
fn a_permutation_written_an_entry_at_a_time_is_write_permutation_s() {
    use crate::linkage::{Party, write_permutation};
    use crate::{SetupFormat, SetupParams};
    let (text, spec) = starter_csv();
    let party = Party::read(text.as_bytes(), &spec).unwrap();
    let starter =
        Starter::new(&Key::generate().unwrap(), Mode::Reveal, Backend::fastest()).unwrap();
    let (pool, control) = (Pool::new(2).unwrap(), Control::new());
    let params = SetupParams {
        format: SetupFormat::Raw,
        fpr: 1e-6,
        joiner_count: 300,
    };
    let linked = crate::linkage::setup(&starter, &pool, &control, party.keys(), &params).unwrap();
    let permutation = linked.permutation.unwrap();
    let mut expected = Vec::new();
    write_permutation(&mut expected, &permutation, &spec).unwrap();

    // The key column's digest from every row's key, as a cluster's driver feeds it.
    let mut keys = KeyColumnDigest::new();
    let mut reader = KeyReader::new(text.as_bytes(), &spec).unwrap();
    while let Some(key) = reader.next_key().unwrap() {
        keys.push(&key);
    }
    assert_eq!(keys.rows(), permutation.starter_rows());
    let facts = PermutationFacts {
        starter_rows: keys.rows(),
        positions: permutation.positions(),
        key_digest: keys.finish(),
        setup_digest: permutation.setup_digest(),
    };
    let dir = tempfile::tempdir().unwrap();
    let mut writer = PermutationWriter::new(dir.path()).unwrap();
    for (position, row) in permutation.entries() {
        writer.push(position, row).unwrap();
    }
    assert_eq!(writer.finish(&facts, &spec, Vec::new()).unwrap(), expected);

    // Entries out of order, a position skipped or not first, counts that disagree.
    let refused = |entries: &[(usize, usize)], facts: &PermutationFacts| -> String {
        let mut writer = PermutationWriter::new(dir.path()).unwrap();
        for &(position, row) in entries {
            if let Err(e) = writer.push(position, row) {
                return e.to_string();
            }
        }
        writer
            .finish(facts, &spec, Vec::new())
            .unwrap_err()
            .to_string()
    };
    let small = PermutationFacts {
        starter_rows: 3,
        positions: 2,
        ..facts
    };
    for (entries, words) in [
        (
            &[(1, 0)][..],
            "entry (position 1, row 0) does not follow the start",
        ),
        (
            &[(0, 1), (0, 1)][..],
            "entry (position 0, row 1) does not follow (position 0, row 1)",
        ),
        (
            &[(0, 2), (0, 1)][..],
            "entry (position 0, row 1) does not follow (position 0, row 2)",
        ),
        (
            &[(0, 0), (2, 1)][..],
            "entry (position 2, row 1) does not follow (position 0, row 0)",
        ),
        (
            &[(0, 0)][..],
            "its entries cover 1 positions, the setup has 2",
        ),
        (&[(0, 0), (1, 3)][..], "row 4 is past the starter's 3 rows"),
    ] {
        let error = refused(entries, &small);
        assert!(error.contains(words), "{entries:?}: {error}");
    }
    // Nothing is left in the folder: the entries wait in an unnamed file.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn an_unpacked_request_is_its_elements_packed_and_its_mode_checked() {
    let joiner = Joiner::new(&Key::generate().unwrap(), Mode::Reveal, Backend::fastest()).unwrap();
    let (pool, control) = (Pool::new(2).unwrap(), Control::new());
    let keys = keys_in_memory(&rows());
    let request = joiner.request(&pool, &control, &keys).unwrap();
    let bytes = request.to_bytes();
    let mut packed = Vec::new();
    let count = unpack_request(&bytes[..], Limits::NONE, Mode::Reveal, &mut packed).unwrap();
    assert_eq!(count, request.elements.len() as u64);
    let expected: Vec<u8> = request
        .elements
        .iter()
        .flat_map(|e| e.as_bytes().to_vec())
        .collect();
    assert_eq!(packed, expected);
    let error = unpack_request(&bytes[..], Limits::NONE, Mode::SizeOnly, Vec::new()).unwrap_err();
    assert!(
        matches!(error, StreamingError::Psi(PsiError::ModeMismatch { .. })),
        "{error}"
    );
    let error = unpack_request(
        &bytes[..],
        Limits::max_elements(3),
        Mode::Reveal,
        Vec::new(),
    )
    .unwrap_err();
    assert!(matches!(error, StreamingError::Psi(_)), "{error}");
    let empty = Request {
        mode: Mode::Reveal,
        elements: Vec::new(),
    };
    let error = unpack_request(
        &empty.to_bytes()[..],
        Limits::NONE,
        Mode::Reveal,
        Vec::new(),
    )
    .unwrap_err();
    assert!(
        matches!(error, StreamingError::Psi(PsiError::EmptySet(_))),
        "{error}"
    );
}
