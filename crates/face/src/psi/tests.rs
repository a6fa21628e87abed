use super::*;
use crate::fields::tests::{Map, V};

/// A callback that never throws.
struct Quiet;

impl Callback for Quiet {
    type Thrown = ();

    fn call(&self, _: f64, _: f64) -> Result<(), ()> {
        Ok(())
    }
}

const NONE: Option<Quiet> = None;

fn coded<T: std::fmt::Debug>(result: Result<T, Coded>) -> (&'static str, String) {
    let error = result.unwrap_err();
    (error.code, error.message)
}

fn packed(values: &[&str]) -> (Vec<u8>, Vec<u32>) {
    let mut bytes = Vec::new();
    let mut ends = Vec::new();
    for value in values {
        bytes.extend_from_slice(value.as_bytes());
        ends.push(u32::try_from(bytes.len()).unwrap());
    }
    (bytes, ends)
}

/// A packed setup's options, as a front end passes them.
fn setup(joiner_count: f64) -> Map {
    Map::default()
        .with("packed", V::B(true))
        .with("format", V::T("raw"))
        .with("joinerCount", V::N(joiner_count))
}

/// A packed request's options.
fn request_options() -> Map {
    Map::default().with("packed", V::B(true))
}

fn joiner_of() -> PsiParty {
    PsiParty::generate("joiner", Backend::Portable).unwrap()
}

#[test]
fn a_round_through_the_face_matches_the_engine_and_finds_the_overlap() {
    let (sv, se) = packed(&["a", "b", "c", "d"]);
    let (jv, je) = packed(&["c", "x", "a"]);
    let mut starter = PsiParty::generate("starter", Backend::Portable).unwrap();
    let mut joiner = PsiParty::generate("joiner", Backend::Portable).unwrap();
    let items = starter.setup_begin(&sv, &se, &setup(3.0)).unwrap();
    let masked = starter
        .mask_part(items.values, items.ends, NONE)
        .map_err(|_| ())
        .unwrap();
    let setup_message = starter.setup_finish(masked, NONE).map_err(|_| ()).unwrap();
    let items = joiner.request_begin(&jv, &je, &request_options()).unwrap();
    let masked = joiner
        .mask_part(items.values, items.ends, NONE)
        .map_err(|_| ())
        .unwrap();
    let request = joiner.request_finish(&masked).unwrap();
    let elements = starter.respond_begin(&request, 3.0, false).unwrap();
    let remasked = starter
        .remask_part(elements, 0, NONE)
        .map_err(|_| ())
        .unwrap();
    let response = starter.respond_finish(&remasked).unwrap();
    let elements = joiner
        .intersect_begin(&setup_message, &response, None)
        .unwrap();
    let unmasked = joiner
        .unmask_part(elements, 0, NONE)
        .map_err(|_| ())
        .unwrap();
    let found = joiner.intersect_finish(&unmasked).unwrap();
    assert_eq!(found.size, 2);
    assert_eq!(found.rows, [0, 2]);
    assert_eq!(found.setup_positions.as_ref().map(Vec::len), Some(2));
    let resolved = starter.resolve(&found.pairs_file.unwrap()).unwrap();
    assert_eq!(resolved.joiner_rows, [0, 2]);
    assert_eq!(resolved.starter_rows, [2, 0]);
}

#[test]
fn whole_steps_on_a_pool_give_the_parts_bytes_at_every_worker_count() {
    let values: Vec<String> = (0..700).map(|i| format!("v{i}@example.org")).collect();
    let names: Vec<&str> = values.iter().map(String::as_str).collect();
    let (sv, se) = packed(&names[..500]);
    let (jv, je) = packed(&names[300..]);
    let mut starter = PsiParty::generate("starter", Backend::Portable).unwrap();
    let mut joiner = PsiParty::generate("joiner", Backend::Portable).unwrap();
    let control = Control::new();
    let mut first = None;
    for workers in [1, 2, 3] {
        let pool = Pool::new(workers).unwrap();
        let setup_message = starter
            .setup_on(&pool, &control, &sv, &se, &setup(400.0))
            .unwrap();
        let request = joiner
            .request_on(&pool, &control, &jv, &je, &request_options())
            .unwrap();
        let response = starter
            .respond_on(&pool, &control, &request, 400.0, false)
            .unwrap();
        let found = joiner
            .intersect_on(&pool, &control, &setup_message, &response, None)
            .unwrap();
        assert_eq!(found.rows, (0..200).collect::<Vec<u32>>());
        let resolved = starter.resolve(&found.pairs_file.clone().unwrap()).unwrap();
        assert_eq!(resolved.starter_rows, (300..500).collect::<Vec<u32>>());
        let got = (setup_message, request, response, found.rows_file);
        first.get_or_insert_with(|| got.clone());
        assert_eq!(Some(&got), first.as_ref(), "{workers} workers");
    }
    // The parts' form on the same party gives the same setup.
    let items = starter.setup_begin(&sv, &se, &setup(400.0)).unwrap();
    let masked = starter
        .mask_part(items.values, items.ends, NONE)
        .map_err(|_| ())
        .unwrap();
    let parts = starter.setup_finish(masked, NONE).map_err(|_| ()).unwrap();
    assert_eq!(Some(&parts), first.as_ref().map(|f| &f.0));
}

#[test]
fn numbers_and_names_are_read_with_the_engines_words() {
    let (v, e) = packed(&["a"]);
    let mut starter = PsiParty::generate("starter", Backend::Portable).unwrap();
    assert_eq!(
        coded(starter.setup_begin(&v, &e, &setup(1.5))),
        (
            "PSI_USAGE",
            "joinerCount must be a whole number, not 1.5".to_owned()
        )
    );
    let bad = setup(1.5).with("format", V::T("xml"));
    assert_eq!(coded(starter.setup_begin(&v, &e, &bad)).0, "PSI_USAGE");
    // The options object: each field missing or of another kind, named with the call.
    for (options, message) in [
        (
            setup(1.0).with("format", V::N(1.0)),
            "setupBegin: format must be a string, not a number",
        ),
        (
            {
                let mut o = setup(1.0);
                o.0.remove("joinerCount");
                o
            },
            "setupBegin: joinerCount is missing: it must be a number",
        ),
        (
            setup(1.0).with("columns", V::Ns(vec![1.0])),
            "setupBegin: columns must be an array of strings, not an array holding a number",
        ),
        (
            setup(1.0).with("packed", V::T("yes")),
            "setupBegin: packed must be a boolean, not a string",
        ),
    ] {
        assert_eq!(
            coded(starter.setup_begin(&v, &e, &options)),
            ("PSI_USAGE", message.to_owned())
        );
    }
    assert_eq!(
        coded(joiner_of().request_begin(&v, &e, &request_options().with("sizeOnly", V::N(0.0)))),
        (
            "PSI_USAGE",
            "requestBegin: sizeOnly must be a boolean, not a number".to_owned()
        )
    );
    assert_eq!(
        coded(starter.respond_begin(&[], f64::NAN, false)).1,
        "joinerCount must be a whole number, not NaN"
    );
    let mut joiner = PsiParty::generate("joiner", Backend::Portable).unwrap();
    assert_eq!(
        coded(joiner.intersect_begin(&[], &[], Some(-1.0))).1,
        "maxSetupBytes must be a whole number, not -1"
    );
    assert_eq!(
        coded(PsiParty::generate("nobody", Backend::Portable)).0,
        "PSI_USAGE"
    );
}

#[test]
fn a_key_is_wiped_on_every_path_and_a_freed_party_refuses() {
    let party = PsiParty::generate("joiner", Backend::Portable).unwrap();
    let exported = party.export_key().unwrap();
    for role in ["joiner", "nobody"] {
        let mut key = *exported;
        let _ = PsiHelper::from_key(role, &mut key, Backend::Portable);
        assert_eq!(key, [0; 32], "{role}");
        let mut key = *exported;
        let _ = PsiParty::import(role, &mut key, Backend::Portable);
        assert_eq!(key, [0; 32], "{role}");
    }
    let mut short = [7u8; 31];
    assert_eq!(
        coded(PsiHelper::from_key("joiner", &mut short, Backend::Portable)).0,
        "PSI_KEY"
    );
    assert_eq!(short, [0; 31]);
    let mut key = *exported;
    let mut again = PsiParty::import("joiner", &mut key, Backend::Portable).unwrap();
    assert_eq!(*again.export_key().unwrap(), *exported);
    assert_eq!(again.role().unwrap(), "joiner");
    again.free();
    assert_eq!(
        coded(again.role()),
        (
            "PSI_USAGE",
            "this party or helper has been freed".to_owned()
        )
    );
    let mut key = *exported;
    let mut helper = PsiHelper::from_key("joiner", &mut key, Backend::Portable).unwrap();
    helper.free();
    let outcome = helper.unmask_part(Vec::new(), 0, NONE);
    assert!(matches!(outcome, Err(Failure::Coded(c)) if c.code == "PSI_USAGE"));
}

#[test]
fn ranges_and_samples_hold_their_limits() {
    assert_eq!(ranges(10.0, 3.0).unwrap(), [0, 4, 4, 7, 7, 10]);
    assert_eq!(ranges(5.0, 0.0).unwrap(), [0, 5]);
    let max_items = f64::from(u32::MAX);
    assert_eq!(ranges(max_items, 1.0).unwrap(), [0, u32::MAX]);
    assert_eq!(coded(ranges(max_items + 1.0, 1.0)).0, "PSI_LIMIT");
    assert_eq!(ranges(4096.0, 4096.0).unwrap().len(), 8192);
    assert_eq!(
        coded(ranges(1.0, 4097.0)),
        (
            "PSI_LIMIT",
            "count must be at most 4096, not 4097".to_owned()
        )
    );
    assert_eq!(
        coded(ranges(0.5, 1.0)).1,
        "items must be a whole number, not 0.5"
    );
    assert_eq!(coded(sample(-1.0)).0, "PSI_USAGE");
    #[allow(clippy::cast_precision_loss, reason = "a test's small counts")]
    let past = (samples::MAX_PEOPLE + 1) as f64;
    assert_eq!(coded(sample(past)).0, "PSI_LIMIT");
    assert_eq!(coded(sample(9_007_199_254_740_992.0)).0, "PSI_LIMIT");
    let files = sample(100.0).unwrap();
    let lines = |file: &[u8]| {
        file.split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count()
    };
    assert_eq!(
        files.starter_rows,
        u64::try_from(lines(&files.starter) - 1).unwrap()
    );
    assert_eq!(
        files.joiner_rows,
        u64::try_from(lines(&files.joiner) - 1).unwrap()
    );
    assert_eq!(files.key_column, "email");
    assert!(
        files
            .starter
            .starts_with(samples::HEADER.join(",").as_bytes())
    );
}

#[test]
fn a_request_in_one_call_gives_the_parts_bytes_and_hands_back_a_throw() {
    struct Throws;
    impl Callback for Throws {
        type Thrown = &'static str;
        fn call(&self, _: f64, _: f64) -> Result<(), &'static str> {
            Err("stop")
        }
    }
    let party = PsiParty::generate("joiner", Backend::Portable).unwrap();
    let (v, e) = packed(&["a", "b", "a"]);
    let mut key = *party.export_key().unwrap();
    let one = request(
        &mut key,
        v.clone(),
        e.clone(),
        true,
        false,
        Backend::Portable,
        NONE,
    )
    .map_err(|_| ())
    .unwrap();
    assert_eq!(key, [0; 32]);
    let mut key = *party.export_key().unwrap();
    let mut again = PsiParty::import("joiner", &mut key, Backend::Portable).unwrap();
    let items = again.request_begin(&v, &e, &request_options()).unwrap();
    let masked = again
        .mask_part(items.values, items.ends, NONE)
        .map_err(|_| ())
        .unwrap();
    assert_eq!(again.request_finish(&masked).unwrap(), one);
    let mut key = *party.export_key().unwrap();
    let thrown = request(&mut key, v, e, true, false, Backend::Portable, Some(Throws));
    assert!(matches!(thrown, Err(Failure::Thrown("stop"))));
    let mut key = *party.export_key().unwrap();
    let refused = request(
        &mut key,
        b"ab".to_vec(),
        vec![3],
        true,
        false,
        Backend::Portable,
        NONE,
    );
    assert!(matches!(refused, Err(Failure::Coded(c)) if c.code == "PSI_INPUT"));
}
