//! A party's steps against the CLI's, in parts and whole, and its refusals.

use super::*;
use crate::SetupFormat;

const STARTER_ROWS: &[u8] =
    "\u{feff}id,email\r\ns1,ada@x\r\ns2,Grace@x\r\ns3, ADA@x\r\ns4,\r\ns5,alan@x\r\ns6,zoë@x\r\n"
        .as_bytes();
const JOINER_ROWS: &[u8] = b"email,city\nalan@x,a\nada@x,b\nbob@x,c\nalan@x,d\nZO\xc3\x8b@x,e\n";

fn spec() -> KeySpec {
    KeySpec {
        columns: vec!["email".to_owned()],
        normalize: true,
    }
}

fn pair() -> (Party, Party) {
    pair_on(Backend::Portable)
}

/// A starter and a joiner of fixed keys computing on `backend`.
fn pair_on(backend: Backend) -> (Party, Party) {
    let mut key = [0u8; 32];
    key[31] = 0x2a;
    key[0] = 0x11;
    let starter = Party::import(Role::Starter, &mut key.clone(), backend).unwrap();
    key[1] = 0x77;
    let joiner = Party::import(Role::Joiner, &mut key, backend).unwrap();
    assert_eq!(key, [0; 32], "the import wiped its argument");
    (starter, joiner)
}

/// What the CLI computes for the same key and rows: linkage's steps on the native backend
/// and a pool of 3 workers.
fn native_setup(party: &Party, rows: &[u8], format: SetupFormat) -> Vec<u8> {
    let keyed = linkage::Party::read(rows, &spec()).unwrap();
    let key = Key::from_bytes(&party.export_key()[..]).unwrap();
    let starter = Starter::new(&key, Mode::Reveal, Backend::fastest()).unwrap();
    linkage::setup(
        &starter,
        &Pool::new(3).unwrap(),
        &Control::new(),
        keyed.keys(),
        &params(format),
    )
    .unwrap()
    .bytes
}

fn params(format: SetupFormat) -> SetupParams {
    SetupParams {
        format,
        fpr: SetupParams::DEFAULT_FPR,
        joiner_count: 4,
    }
}

#[test]
fn a_round_in_each_format_on_each_backend_gives_the_cli_bytes_and_the_plain_join() {
    let control = Control::new();
    let formats = [SetupFormat::Raw, SetupFormat::Gcs, SetupFormat::Bloom];
    for (format, &backend) in formats
        .into_iter()
        .flat_map(|f| Backend::available().iter().map(move |b| (f, b)))
    {
        let (mut starter, mut joiner) = pair_on(backend);
        let setup = starter
            .setup(Rows::File(STARTER_ROWS), &spec(), &params(format), &control)
            .unwrap();
        assert_eq!(setup, native_setup(&starter, STARTER_ROWS, format));
        let request = joiner
            .request(Rows::File(JOINER_ROWS), &spec(), false, &control)
            .unwrap();
        let response = starter.respond(&request, 4, false, &control).unwrap();
        let found = joiner
            .intersect(&setup, &response, u64::MAX, &control)
            .unwrap();
        // alan (rows 0 and 3), ada (row 1), zoë (row 4) are found.
        assert_eq!(found.size, 3, "{format:?} on {backend}");
        let rows: Vec<usize> = found.rows.iter().map(|m| m.row).collect();
        assert_eq!(rows, [0, 1, 3, 4]);
        let file = String::from_utf8(found.rows_file.unwrap()).unwrap();
        if format == SetupFormat::Raw {
            assert!(file.starts_with("joiner_row,setup_position,email,city\n1,"));
            let resolved = starter.resolve(&found.pairs_file.unwrap()).unwrap();
            let expected = linkage::plain_join(
                linkage::Party::read(STARTER_ROWS, &spec()).unwrap().keys(),
                linkage::Party::read(JOINER_ROWS, &spec()).unwrap().keys(),
            );
            assert_eq!(resolved.pairs, expected);
            assert!(
                String::from_utf8(resolved.file)
                    .unwrap()
                    .starts_with("joiner_row,starter_row,id,email\n1,5,s5,alan@x\n")
            );
            let (permutation, made_with) =
                linkage::read_permutation(&starter.permutation_file().unwrap()[..]).unwrap();
            assert_eq!((made_with, permutation.starter_rows()), (spec(), 6));
        } else {
            assert_eq!(file.lines().next(), Some("joiner_row,email,city"));
            assert!(found.pairs_file.is_none());
            let error = starter.resolve(b"").unwrap_err();
            assert_eq!(error.code(), "PSI_ORDER");
        }
    }
}

/// Maps `items` (packed keys) in `count` parts, the first on `own`, the others on helpers
/// made from `own`'s exported key, and concatenates their outputs in part order.
fn mask_in_parts(own: &Party, items: &Items, count: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, range) in parts::ranges(items.ends.len(), count)
        .into_iter()
        .enumerate()
    {
        let from = if range.start == 0 {
            0
        } else {
            items.ends[range.start - 1]
        };
        let values = &items.values[from as usize..items.ends[range.end - 1] as usize];
        let ends: Vec<u32> = items.ends[range].iter().map(|e| e - from).collect();
        let part = if i == 0 {
            own.keyed().mask(values, &ends, &Control::new()).unwrap()
        } else {
            let mut key = *own.export_key();
            Keyed::from_key(own.role(), &mut key, own.keyed().backend())
                .unwrap()
                .mask(values, &ends, &Control::new())
                .unwrap()
        };
        out.extend(part);
    }
    out
}

/// Maps packed `elements` in `count` parts with `map(keyed, part, first)`, as
/// [`mask_in_parts`] does.
fn elements_in_parts(
    own: &Party,
    elements: &[u8],
    count: usize,
    map: impl Fn(&Keyed, &[u8], usize) -> Result<Vec<u8>, PartyError>,
) -> Vec<u8> {
    let n = elements.len() / crate::ELEMENT_LEN;
    let mut out = Vec::new();
    for (i, range) in parts::ranges(n, count).into_iter().enumerate() {
        let part = &elements[range.start * crate::ELEMENT_LEN..range.end * crate::ELEMENT_LEN];
        let mapped = if i == 0 {
            map(own.keyed(), part, range.start).unwrap()
        } else {
            let mut key = *own.export_key();
            map(
                &Keyed::from_key(own.role(), &mut key, own.keyed().backend()).unwrap(),
                part,
                range.start,
            )
            .unwrap()
        };
        out.extend(mapped);
    }
    out
}

#[test]
fn every_step_in_parts_gives_the_one_part_bytes_at_every_part_count() {
    let control = Control::new();
    for format in [SetupFormat::Raw, SetupFormat::Gcs, SetupFormat::Bloom] {
        let (mut starter, mut joiner) = pair();
        let setup = starter
            .setup(Rows::File(STARTER_ROWS), &spec(), &params(format), &control)
            .unwrap();
        let permutation = (format == SetupFormat::Raw).then(|| starter.permutation_file().unwrap());
        let request = joiner
            .request(Rows::File(JOINER_ROWS), &spec(), false, &control)
            .unwrap();
        let response = starter.respond(&request, 4, false, &control).unwrap();
        let found = joiner
            .intersect(&setup, &response, u64::MAX, &control)
            .unwrap();
        // 1 part, parts around the key counts (6 starter keys, 4 joiner keys), more parts
        // than items.
        for count in 1..=7 {
            let items = starter
                .setup_begin(Rows::File(STARTER_ROWS), &spec(), &params(format))
                .unwrap();
            let masked = mask_in_parts(&starter, &items, count);
            assert_eq!(starter.setup_finish(&masked, &control).unwrap(), setup);
            if let Some(permutation) = &permutation {
                assert_eq!(&starter.permutation_file().unwrap(), permutation);
            }
            let items = joiner
                .request_begin(Rows::File(JOINER_ROWS), &spec(), false)
                .unwrap();
            let masked = mask_in_parts(&joiner, &items, count);
            assert_eq!(joiner.request_finish(&masked).unwrap(), request);
            let elements = starter.respond_begin(&request, 4, false).unwrap();
            let remasked = elements_in_parts(&starter, &elements, count, |k, part, first| {
                k.remask(part, first, &Control::new())
            });
            assert_eq!(starter.respond_finish(&remasked).unwrap(), response);
            let elements = joiner.intersect_begin(&setup, &response, u64::MAX).unwrap();
            let unmasked = elements_in_parts(&joiner, &elements, count, |k, part, first| {
                k.unmask(part, first, &Control::new())
            });
            assert_eq!(
                joiner.intersect_finish(&unmasked).unwrap(),
                found,
                "{count} parts"
            );
        }
    }
}

#[test]
fn parts_that_do_not_add_up_or_name_the_wrong_role_are_refused() {
    let control = Control::new();
    let (mut starter, mut joiner) = pair();
    let items = starter
        .setup_begin(Rows::File(STARTER_ROWS), &spec(), &params(SetupFormat::Raw))
        .unwrap();
    let masked = starter
        .keyed()
        .mask(&items.values, &items.ends, &control)
        .unwrap();
    // One element short: a front end's bug, named; the finish took the pending step, so
    // another finish needs a new beginning.
    let short = &masked[..masked.len() - crate::ELEMENT_LEN];
    assert_eq!(
        starter.setup_finish(short, &control).unwrap_err().code(),
        "PSI_INTERNAL"
    );
    assert_eq!(
        starter.setup_finish(&masked, &control).unwrap_err().code(),
        "PSI_ORDER"
    );
    let request = joiner
        .request(Rows::File(JOINER_ROWS), &spec(), false, &control)
        .unwrap();
    let elements = starter.respond_begin(&request, 4, false).unwrap();
    // A helper of the other role refuses the starter's map.
    let mut key = *joiner.export_key();
    let helper = Keyed::from_key(Role::Joiner, &mut key, Backend::Portable).unwrap();
    assert_eq!(key, [0; 32], "the helper wiped the delivered key");
    assert_eq!(
        helper.remask(&elements, 0, &control).unwrap_err().code(),
        "PSI_WRONG_ROLE"
    );
    assert_eq!(
        Keyed::from_key(Role::Starter, &mut [1u8; 31], Backend::Portable)
            .err()
            .map(|e| e.code()),
        Some("PSI_KEY")
    );
    // Errors in a part name whole-message indexes.
    let mut bad = elements.clone();
    let second = crate::ELEMENT_LEN;
    bad[second + 1..second + crate::ELEMENT_LEN].fill(0xff);
    let error = starter
        .keyed()
        .remask(&bad[second..], 1, &control)
        .unwrap_err();
    assert!(error.to_string().contains("element 1"), "{error}");
}

#[test]
fn size_only_rounds_tell_the_size_alone() {
    let control = Control::new();
    let (mut starter, mut joiner) = pair();
    let setup = starter
        .setup(
            Rows::File(STARTER_ROWS),
            &spec(),
            &params(SetupFormat::Gcs),
            &control,
        )
        .unwrap();
    let request = joiner
        .request(Rows::File(JOINER_ROWS), &spec(), true, &control)
        .unwrap();
    // A revealing starter refuses a size-only request.
    let error = starter.respond(&request, 4, false, &control).unwrap_err();
    assert_eq!(error.code(), "PSI_ROUND");
    let response = starter.respond(&request, 4, true, &control).unwrap();
    let found = joiner
        .intersect(&setup, &response, u64::MAX, &control)
        .unwrap();
    assert_eq!(
        (
            found.size,
            found.rows.len(),
            found.rows_file,
            found.pairs_file
        ),
        (3, 0, None, None)
    );
}

#[test]
fn packed_values_are_a_plain_text_file_of_them() {
    let control = Control::new();
    let (_, mut joiner) = pair();
    let (values, ends) = (b"b\xc3\xa9\n".to_vec(), [0u32, 3, 3, 4]);
    let spec = KeySpec {
        columns: Vec::new(),
        normalize: false,
    };
    let packed = joiner
        .request(
            Rows::Packed {
                values: &values,
                ends: &ends,
            },
            &spec,
            false,
            &control,
        )
        .unwrap();
    let file = joiner
        .request(Rows::File(b"\nb\xc3\xa9\n\n\n\n"), &spec, false, &control)
        .unwrap();
    // "", "bé", "", "\n": the file cannot hold a line break in a value, so compare the
    // distinct keys the file gives ("bé") with the packed ones less "\n".
    assert_eq!(Request::from_bytes(&packed).unwrap().elements.len(), 2);
    assert_eq!(
        Request::from_bytes(&packed).unwrap().elements[0],
        Request::from_bytes(&file).unwrap().elements[0]
    );
    let error = joiner
        .request(
            Rows::Packed {
                values: &values,
                ends: &ends,
            },
            &self::spec(),
            false,
            &control,
        )
        .unwrap_err();
    assert_eq!(error.code(), "PSI_USAGE");
}

#[test]
fn steps_of_the_other_role_or_out_of_order_are_refused_with_codes() {
    let control = Control::new();
    let (mut starter, mut joiner) = pair();
    let params = params(SetupFormat::Raw);
    let cases = [
        joiner
            .setup(Rows::File(STARTER_ROWS), &spec(), &params, &control)
            .unwrap_err(),
        joiner.respond(b"", 1, false, &control).unwrap_err(),
        joiner.resolve(b"").unwrap_err(),
        joiner.permutation_file().unwrap_err(),
        starter
            .request(Rows::File(JOINER_ROWS), &spec(), false, &control)
            .unwrap_err(),
        starter.intersect(b"", b"", 1, &control).unwrap_err(),
    ];
    for error in &cases {
        assert_eq!(error.code(), "PSI_WRONG_ROLE", "{error}");
    }
    assert_eq!(
        cases[0].to_string(),
        "a joiner cannot set up: that is the starter's step"
    );
    let error = joiner.intersect(b"", b"", 1, &control).unwrap_err();
    assert_eq!(
        (error.code(), error.to_string().as_str()),
        ("PSI_ORDER", "intersect needs a request first")
    );
    assert_eq!(starter.resolve(b"").unwrap_err().code(), "PSI_ORDER");
    assert_eq!(starter.permutation_file().unwrap_err().code(), "PSI_ORDER");
    // A wrong-role message: the starter's setup given as the response.
    let setup = starter
        .setup(Rows::File(STARTER_ROWS), &spec(), &params, &control)
        .unwrap();
    let request = joiner
        .request(Rows::File(JOINER_ROWS), &spec(), false, &control)
        .unwrap();
    let error = joiner
        .intersect(&setup, &setup, u64::MAX, &control)
        .unwrap_err();
    assert_eq!(error.code(), "PSI_MESSAGE", "{error}");
    let error = starter.respond(&setup, 4, false, &control).unwrap_err();
    assert_eq!(error.code(), "PSI_MESSAGE", "{error}");
    // Limits: more elements than the stated joiner count, a setup above the stated bytes.
    let error = starter.respond(&request, 3, false, &control).unwrap_err();
    assert_eq!(error.code(), "PSI_LIMIT", "{error}");
    let response = starter.respond(&request, 4, false, &control).unwrap();
    let error = joiner
        .intersect(&setup, &response, setup.len() as u64 - 1, &control)
        .unwrap_err();
    assert_eq!(error.code(), "PSI_LIMIT", "{error}");
    // A flipped byte in an element: off the curve (or another point, never a panic).
    let mut bad = response.clone();
    let at = bad.len() - 5;
    bad[at] ^= 0x40;
    if let Err(error) = joiner.intersect(&setup, &bad, u64::MAX, &control) {
        assert_eq!(error.code(), "PSI_MESSAGE", "{error}");
    }
    // Pairs for another setup.
    let found = joiner
        .intersect(&setup, &response, u64::MAX, &control)
        .unwrap();
    starter
        .setup(
            Rows::File(b"email\nsomeone@else\n"),
            &spec(),
            &params,
            &control,
        )
        .unwrap();
    let error = starter.resolve(&found.pairs_file.unwrap()).unwrap_err();
    assert_eq!(error.code(), "PSI_ROUND", "{error}");
    assert_eq!(
        starter.resolve(b"garbage").unwrap_err().code(),
        "PSI_MESSAGE"
    );
}

#[test]
fn keys_are_checked_made_fresh_and_masks_survive_an_export() {
    let mut zero = [0u8; 32];
    let error = Party::import(Role::Joiner, &mut zero, Backend::Portable)
        .err()
        .unwrap();
    assert_eq!(error.code(), "PSI_KEY");
    let mut long = [1u8; 33];
    let error = Party::import(Role::Joiner, &mut long, Backend::Portable)
        .err()
        .unwrap();
    assert_eq!(
        (error.code(), error.to_string().as_str()),
        ("PSI_KEY", "a key is 32 bytes, not 33")
    );
    assert_eq!(long, [0; 33], "wiped on error too");
    let mut short = [1u8; 31];
    assert_eq!(
        Party::import(Role::Joiner, &mut short, Backend::Portable)
            .err()
            .unwrap()
            .code(),
        "PSI_KEY"
    );
    let control = Control::new();
    let mut fresh = Party::generate(Role::Joiner, Backend::Portable).unwrap();
    let other = Party::generate(Role::Joiner, Backend::Portable).unwrap();
    assert_ne!(fresh.export_key()[..], other.export_key()[..]);
    let mut again = Party::import(
        Role::Joiner,
        &mut fresh.export_key().to_vec(),
        Backend::Portable,
    )
    .unwrap();
    let request = |party: &mut Party| {
        party
            .request(Rows::File(JOINER_ROWS), &spec(), false, &control)
            .unwrap()
    };
    assert_eq!(request(&mut fresh), request(&mut again));
}

#[test]
fn progress_counts_the_step_and_cancelling_stops_it() {
    use lockstep_shard::{CancelToken, Progress};
    use std::sync::{Arc, Mutex};
    let reports = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&reports);
    let control =
        Control::new().with_progress(Progress::new(move |r| seen.lock().unwrap().push(r)));
    let (_, mut joiner) = pair();
    let values: Vec<u8> = (0..3000u32).flat_map(|i| i.to_le_bytes()).collect();
    let ends: Vec<u32> = (1..=3000u32).map(|i| 4 * i).collect();
    let spec = KeySpec {
        columns: Vec::new(),
        normalize: false,
    };
    let rows = Rows::Packed {
        values: &values,
        ends: &ends,
    };
    joiner.request(rows, &spec, false, &control).unwrap();
    let last = *reports.lock().unwrap().last().unwrap();
    assert_eq!((last.done, last.total), (3000, Some(3000)));
    let cancel = CancelToken::new();
    cancel.cancel();
    let control = Control::new().with_cancel(cancel);
    let error = joiner.request(rows, &spec, false, &control).unwrap_err();
    assert_eq!(error.code(), "PSI_CANCELLED");
}
