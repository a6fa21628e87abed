use lockstep_psi::{
    Backend, Mode, Response, ServerSetup, SetupFormat, SetupParams, Starter, reference,
};
use lockstep_shard::Control;

use crate::{joiner, pools, starter, values};

const SK: &str = "5e1ec7ab1e5e1ec7ab1e5e1ec7ab1e5e1ec7ab1e5e1ec7ab1e5e1ec7ab1e0001";
const JK: &str = "0b1e55ed0b1e55ed0b1e55ed0b1e55ed0b1e55ed0b1e55ed0b1e55ed0b1e0002";

fn params(format: SetupFormat, joiner_count: u64) -> SetupParams {
    SetupParams {
        format,
        fpr: 1e-6,
        joiner_count,
    }
}

/// Every message and result of a round, sharded, equals the serial reference's.
fn check_round(starter_values: &[String], joiner_values: &[String]) {
    let backend = Backend::fastest();
    let s = starter(SK, Mode::Reveal, backend);
    let j = joiner(JK, Mode::Reveal, backend);
    let n = joiner_values.len();
    let setups: Vec<_> = [SetupFormat::Raw, SetupFormat::Gcs, SetupFormat::Bloom]
        .into_iter()
        .map(|f| reference::setup(&s, starter_values, &params(f, n as u64)).unwrap())
        .collect();
    let request = reference::request(&j, joiner_values).unwrap();
    let response = reference::respond(&s, &request).unwrap();
    let table = reference::association_table(&j, &setups[0].message, &response, n).unwrap();
    for (workers, pool) in pools() {
        let control = Control::new();
        for expected in &setups {
            let format = match expected.message {
                ServerSetup::Raw(_) => SetupFormat::Raw,
                ServerSetup::Gcs(_) => SetupFormat::Gcs,
                ServerSetup::Bloom(_) => SetupFormat::Bloom,
            };
            let sharded = s
                .setup(&pool, &control, starter_values, &params(format, n as u64))
                .unwrap();
            assert_eq!(&sharded, expected, "{format:?} setup at {workers} workers");
            assert_eq!(
                j.intersect(&pool, &control, &sharded.message, &response, n)
                    .unwrap(),
                reference::intersect(&j, &expected.message, &response, n).unwrap(),
                "{format:?} intersection at {workers} workers"
            );
        }
        let sharded_request = j.request(&pool, &control, joiner_values).unwrap();
        assert_eq!(sharded_request, request, "request at {workers} workers");
        let sharded_response = s.respond(&pool, &control, &request).unwrap();
        assert_eq!(sharded_response, response, "response at {workers} workers");
        assert_eq!(
            j.association_table(&pool, &control, &setups[0].message, &response, n)
                .unwrap(),
            table,
            "association table at {workers} workers"
        );
    }
}

#[test]
fn sharded_rounds_equal_the_reference_on_distinct_values() {
    // Sizes around the task boundaries of 1..5 workers (4 tasks per worker).
    for (m, n, shared) in [(1, 1, 1), (7, 5, 3), (41, 23, 11), (203, 157, 60)] {
        let starter_values = values("v", 0, m);
        let joiner_values = values("v", m - shared, n);
        check_round(&starter_values, &joiner_values);
    }
}

#[test]
fn repeated_values_keep_bytes_and_permutation_points_at_their_rows() {
    // Each value 0..13 repeated; the raw setup's permutation must be identical at every worker
    // count here (ties are broken by input index), and must in any case name a row holding the
    // value at that position.
    let starter_values: Vec<String> = (0..120).map(|i| format!("dup{}", i % 13)).collect();
    let joiner_values: Vec<String> = (0..40).map(|i| format!("dup{}", (i * 7) % 20)).collect();
    check_round(&starter_values, &joiner_values);

    let s: Starter = starter(SK, Mode::Reveal, Backend::fastest());
    let single = reference::setup(&s, &starter_values, &params(SetupFormat::Raw, 40)).unwrap();
    let ServerSetup::Raw(elements) = &single.message else {
        unreachable!()
    };
    let permutation = single.permutation.unwrap();
    for (position, &row) in permutation.iter().enumerate() {
        let again =
            reference::setup(&s, &starter_values[row..=row], &params(SetupFormat::Raw, 1)).unwrap();
        assert_eq!(again.message, ServerSetup::Raw(vec![elements[position]]));
    }

    // The association table lists every matching pair, duplicates on both sides included.
    let j = joiner(JK, Mode::Reveal, Backend::fastest());
    let request = reference::request(&j, &joiner_values).unwrap();
    let response: Response = reference::respond(&s, &request).unwrap();
    let table = reference::association_table(&j, &single.message, &response, 40).unwrap();
    let expected: usize = joiner_values
        .iter()
        .map(|v| starter_values.iter().filter(|s| *s == v).count())
        .sum();
    assert_eq!(table.len(), expected);
    for m in &table {
        assert_eq!(
            starter_values[permutation[m.setup_position]],
            joiner_values[m.joiner_index]
        );
    }
}

#[test]
fn size_only_rounds_are_sorted_and_equal_at_every_worker_count() {
    let backend = Backend::fastest();
    let s = starter(SK, Mode::SizeOnly, backend);
    let j = joiner(JK, Mode::SizeOnly, backend);
    let request = reference::request(&j, &values("w", 0, 77)).unwrap();
    let response = reference::respond(&s, &request).unwrap();
    assert!(response.elements.windows(2).all(|w| w[0] <= w[1]));
    for (workers, pool) in pools() {
        assert_eq!(
            s.respond(&pool, &Control::new(), &request).unwrap(),
            response,
            "on {workers}"
        );
    }
}

/// A setup's progress counts each masked input once, in every format and at every worker
/// count: it ends at the input count (the raw setup's sort reports nothing).
#[test]
fn setup_progress_counts_each_input_once() {
    use lockstep_shard::Progress;
    use std::sync::{Arc, Mutex};
    let s = starter(SK, Mode::Reveal, Backend::fastest());
    let inputs = values("p", 0, 700);
    for (name, pool) in pools() {
        for format in [SetupFormat::Raw, SetupFormat::Gcs, SetupFormat::Bloom] {
            let last = Arc::new(Mutex::new(None));
            let seen = Arc::clone(&last);
            let progress = Progress::new(move |report| *seen.lock().unwrap() = Some(report.done));
            progress.start(Some(700));
            let control = Control::new().with_progress(progress);
            s.setup(&pool, &control, &inputs, &params(format, 10))
                .unwrap();
            assert_eq!(*last.lock().unwrap(), Some(700), "{format:?}, {name}");
        }
    }
}
