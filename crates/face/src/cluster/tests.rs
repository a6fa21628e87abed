//! The cluster's parts against the engine's own steps: keys by the record rules, messages and
//! permutations byte for byte, and refusals that leave nothing in place.

use std::os::unix::fs::PermissionsExt;

use lockstep_psi::linkage::{KeySpec, Party, write_permutation};
use lockstep_psi::party::Keyed;
use lockstep_psi::{
    Backend, Joiner, Key, Mode, Request, Response, SetupFormat, SetupParams, Starter,
};
use lockstep_shard::{Control, Pool};

use super::*;

/// `values` as an Arrow column, its offsets starting at `skew` (a slice of a longer array).
fn arrow(values: &[&[u8]], skew: usize) -> (Vec<u8>, Vec<u8>) {
    let mut data = vec![b'#'; skew];
    let mut offsets = u32::try_from(skew).unwrap().to_le_bytes().to_vec();
    for value in values {
        data.extend_from_slice(value);
        offsets.extend_from_slice(&u32::try_from(data.len()).unwrap().to_le_bytes());
    }
    (data, offsets)
}

fn col(pair: &(Vec<u8>, Vec<u8>)) -> Column<'_> {
    Column {
        data: &pair.0,
        offsets: &pair.1,
    }
}

/// A starter's CSV: composite keys with case and spacing, empty keys, a repeated key.
fn records() -> String {
    let mut text = String::from("id,first,email\n");
    for i in 0..300u32 {
        let k = i.wrapping_mul(2_654_435_761) % 97;
        match k {
            0 => text.push_str(&format!("{i},,\n")),
            k if k % 3 == 0 => text.push_str(&format!("{i},Zoë ,  Person.{k}@Example.org\n")),
            k => text.push_str(&format!("{i},zoë,person.{k}@example.org\n")),
        }
    }
    text
}

/// The rows' fields of `columns`, in row order.
fn fields(text: &str, columns: &[usize]) -> Vec<Vec<Vec<u8>>> {
    columns
        .iter()
        .map(|&c| {
            text.lines()
                .skip(1)
                .map(|line| line.split(',').nth(c).unwrap().as_bytes().to_vec())
                .collect()
        })
        .collect()
}

#[test]
fn column_keys_are_the_record_files_keys() {
    let text = records();
    let header = vec!["first".to_owned(), "email".to_owned()];
    for names in [
        vec!["email"],
        vec!["first", "email"],
        vec!["email", "email"],
    ] {
        for normalize in [false, true] {
            let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
            let spec = KeySpec {
                columns: names.clone(),
                normalize,
            };
            let mut reader = lockstep_psi::linkage::KeyReader::new(text.as_bytes(), &spec).unwrap();
            let mut expected = Vec::new();
            while let Some(key) = reader.next_key().unwrap() {
                expected.push(key);
            }
            let columns: Vec<(Vec<u8>, Vec<u8>)> = fields(&text, &[1, 2])
                .iter()
                .enumerate()
                .map(|(i, f)| arrow(&f.iter().map(Vec::as_slice).collect::<Vec<_>>(), i * 3))
                .collect();
            let columns: Vec<Column<'_>> = columns.iter().map(col).collect();
            let keys = column_keys(&header, &columns, &names, normalize, 0).unwrap();
            let got: Vec<Vec<u8>> = keys
                .offsets
                .windows(2)
                .map(|w| keys.data[w[0] as usize..w[1] as usize].to_vec())
                .collect();
            assert_eq!(got, expected, "{names:?} normalize {normalize}");
        }
    }
}

#[test]
fn column_keys_refuse_what_a_record_file_refuses_and_bad_layouts() {
    let names = vec!["email".to_owned()];
    let bad_utf8 = arrow(&[b"ok", b"\xff"], 0);
    let error = column_keys(&names, &[col(&bad_utf8)], &names, true, 41).unwrap_err();
    assert_eq!(error.code, "PSI_INPUT");
    assert!(error.message.contains("43"), "{}", error.message);
    let two = arrow(&[b"a", b"b"], 0);
    let one = arrow(&[b"a"], 0);
    let both = vec!["a".to_owned(), "b".to_owned()];
    let error = column_keys(&both, &[col(&two), col(&one)], &both, false, 0).unwrap_err();
    assert_eq!(error.code, "PSI_USAGE");
    let twice = vec!["a".to_owned(), "a".to_owned()];
    assert_eq!(
        column_keys(&twice, &[col(&two), col(&two)], &names, false, 0)
            .unwrap_err()
            .code,
        "PSI_INPUT"
    );
    for offsets in [vec![], vec![1, 0, 0], 9u32.to_le_bytes().to_vec()] {
        let column = Column {
            data: b"abc",
            offsets: &offsets,
        };
        assert_eq!(
            column_keys(&names, &[column], &names, false, 0)
                .unwrap_err()
                .code,
            "PSI_USAGE",
            "{offsets:?}"
        );
    }
    let descending = [2u32, 1]
        .iter()
        .flat_map(|o| o.to_le_bytes())
        .collect::<Vec<_>>();
    let column = Column {
        data: b"abc",
        offsets: &descending,
    };
    assert_eq!(packed(&column).unwrap_err().code, "PSI_USAGE");
}

fn key_in(dir: &Path, mode: u32) -> (std::path::PathBuf, Key) {
    let key = Key::generate().unwrap();
    let path = dir.join(format!("key-{mode:o}"));
    std::fs::write(&path, key.to_bytes().as_ref()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    (path, key)
}

#[test]
fn a_key_file_is_read_by_the_cli_s_rule() {
    let dir = tempfile::tempdir().unwrap();
    let (private, key) = key_in(dir.path(), 0o600);
    assert_eq!(&read_key(&private, false).unwrap()[..], &key.to_bytes()[..]);
    let (open, _) = key_in(dir.path(), 0o644);
    assert_eq!(read_key(&open, false).unwrap_err().code, "PSI_FILE");
    assert!(read_key(&open, true).is_ok());
    let zero = dir.path().join("zero");
    std::fs::write(&zero, [0u8; 32]).unwrap();
    std::fs::set_permissions(&zero, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(read_key(&zero, false).unwrap_err().code, "PSI_KEY");
    assert_eq!(
        read_key(&dir.path().join("missing"), false)
            .unwrap_err()
            .code,
        "PSI_FILE"
    );
}

#[test]
fn messages_and_permutations_from_parts_are_the_engine_s_bytes() {
    let text = records();
    let spec = KeySpec {
        columns: vec!["first".to_owned(), "email".to_owned()],
        normalize: true,
    };
    let party = Party::read(text.as_bytes(), &spec).unwrap();
    let key = Key::generate().unwrap();
    let starter = Starter::new(&key, Mode::Reveal, Backend::fastest()).unwrap();
    let (pool, control) = (Pool::new(2).unwrap(), Control::new());
    let params = SetupParams {
        format: SetupFormat::Raw,
        fpr: 1e-6,
        joiner_count: 100,
    };
    let linked =
        lockstep_psi::linkage::setup(&starter, &pool, &control, party.keys(), &params).unwrap();
    let permutation = linked.permutation.clone().unwrap();
    let mut expected_permutation = Vec::new();
    write_permutation(&mut expected_permutation, &permutation, &spec).unwrap();

    // The setup from its elements in parts, the permutation from keys and entries in parts.
    let dir = tempfile::tempdir().unwrap();
    let lockstep_psi::ServerSetup::Raw(elements) = &linked.message else {
        panic!("a raw setup")
    };
    let (setup_path, permutation_path) = (dir.path().join("setup"), dir.path().join("perm"));
    let mut out = MessageOut::create(
        &setup_path,
        MessageKind::RawSetup {
            count: elements.len() as u64,
        },
        &[],
    )
    .unwrap();
    for part in elements.chunks(37) {
        let packed: Vec<u8> = part.iter().flat_map(|e| e.as_bytes().to_vec()).collect();
        out.push(&packed).unwrap();
    }
    let digest = out.finish().unwrap();
    let mut perm = PermutationOut::create(
        &permutation_path,
        dir.path(),
        &spec.columns,
        true,
        &[],
        &setup_path,
    )
    .unwrap();
    let mut reader = lockstep_psi::linkage::KeyReader::new(text.as_bytes(), &spec).unwrap();
    let mut keys = Vec::new();
    while let Some(key) = reader.next_key().unwrap() {
        keys.push(key);
    }
    for part in keys.chunks(50) {
        let pair = arrow(&part.iter().map(Vec::as_slice).collect::<Vec<_>>(), 0);
        perm.keys(&col(&pair)).unwrap();
    }
    let entries: Vec<(usize, usize)> = permutation.entries().collect();
    for part in entries.chunks(64) {
        let positions: Vec<u64> = part.iter().map(|&(p, _)| p as u64).collect();
        let rows: Vec<u64> = part.iter().map(|&(_, r)| r as u64).collect();
        perm.entries(&positions, &rows).unwrap();
    }
    perm.finish(elements.len() as u64, digest).unwrap();
    // Nothing is in place before the commits.
    assert!(!setup_path.exists() && !permutation_path.exists());
    perm.commit().unwrap();
    out.commit().unwrap();
    assert_eq!(std::fs::read(&setup_path).unwrap(), linked.bytes);
    assert_eq!(
        std::fs::read(&permutation_path).unwrap(),
        expected_permutation
    );
    assert_eq!(out.commit().unwrap_err().code, "PSI_USAGE");

    // A request and a response from parts.
    let joiner = Joiner::new(&key, Mode::SizeOnly, Backend::fastest()).unwrap();
    let request = lockstep_psi::linkage::request(&joiner, &pool, &control, party.keys()).unwrap();
    let response = Response {
        elements: request.elements.clone(),
    };
    for (kind, bytes, elements) in [
        (
            MessageKind::Request { size_only: true },
            request.to_bytes(),
            &request.elements,
        ),
        (
            MessageKind::Response,
            response.to_bytes(),
            &response.elements,
        ),
    ] {
        let path = dir.path().join("message");
        let mut out = MessageOut::create(&path, kind, &[]).unwrap();
        let packed: Vec<u8> = elements
            .iter()
            .flat_map(|e| e.as_bytes().to_vec())
            .collect();
        out.push(&packed).unwrap();
        out.finish().unwrap();
        out.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
    }
    let _: &Request = &request;
}

#[test]
fn writers_refuse_bad_parts_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("setup");
    let mut out = MessageOut::create(&path, MessageKind::RawSetup { count: 2 }, &[]).unwrap();
    assert_eq!(out.push(&[2u8; 34]).unwrap_err().code, "PSI_USAGE");
    assert_eq!(out.push(&[7u8; 33]).unwrap_err().code, "PSI_MESSAGE");
    assert_eq!(out.commit().unwrap_err().code, "PSI_USAGE");
    let keyed = Keyed::from_key(
        lockstep_psi::party::Role::Starter,
        &mut Key::generate().unwrap().to_bytes()[..].to_vec(),
        Backend::fastest(),
    )
    .unwrap();
    let masked = keyed.mask(b"ab", &[1, 2], &Control::new()).unwrap();
    let (low, high) = if masked[..33] < masked[33..] {
        (&masked[..33], &masked[33..])
    } else {
        (&masked[33..], &masked[..33])
    };
    out.push(high).unwrap();
    assert_eq!(out.push(low).unwrap_err().code, "PSI_MESSAGE");
    // One of two: the count is short, and what was written is never put in place.
    assert_eq!(out.finish().unwrap_err().code, "PSI_MESSAGE");
    assert_eq!(out.commit().unwrap_err().code, "PSI_USAGE");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    drop(out);
    let perm_path = dir.path().join("perm");
    let mut perm = PermutationOut::create(&perm_path, dir.path(), &[], false, &[], &path).unwrap();
    assert_eq!(perm.entries(&[0], &[]).unwrap_err().code, "PSI_USAGE");
    assert_eq!(perm.entries(&[1], &[0]).unwrap_err().code, "PSI_INPUT");
    // Entries that do not cover the setup: nothing to commit.
    assert_eq!(
        perm.finish(2, Digest::of(b"")).unwrap_err().code,
        "PSI_INPUT"
    );
    assert_eq!(perm.commit().unwrap_err().code, "PSI_USAGE");
    drop(perm);
    // An aborted writer leaves nothing.
    let mut aborted = MessageOut::create(&path, MessageKind::Response, &[]).unwrap();
    aborted.push(&masked).unwrap();
    aborted.abort();
    assert_eq!(aborted.commit().unwrap_err().code, "PSI_USAGE");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    // An output never replaces an input, and a permutation is never its setup's file.
    let (key, _) = key_in(dir.path(), 0o600);
    let error = MessageOut::create(&key, MessageKind::Response, &[&key]).unwrap_err();
    assert_eq!(error.code, "PSI_USAGE", "{error}");
    let error = PermutationOut::create(&key, dir.path(), &[], false, &[&key], &path).unwrap_err();
    assert_eq!(error.code, "PSI_USAGE", "{error}");
    let error = PermutationOut::create(&path, dir.path(), &[], false, &[], &path).unwrap_err();
    assert_eq!(error.code, "PSI_USAGE", "{error}");
    assert_eq!(std::fs::read(&key).unwrap().len(), 32);
}

#[test]
fn an_unpacked_request_is_checked_and_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let key = Key::generate().unwrap();
    let joiner = Joiner::new(&key, Mode::Reveal, Backend::fastest()).unwrap();
    let (pool, control) = (Pool::new(1).unwrap(), Control::new());
    let values: Vec<Vec<u8>> = (0..20).map(|i| format!("v{i}").into_bytes()).collect();
    let request = joiner.request(&pool, &control, &values).unwrap();
    let (path, packed) = (dir.path().join("request"), dir.path().join("packed"));
    std::fs::write(&path, request.to_bytes()).unwrap();
    assert_eq!(unpack_request(&path, &packed, 20, false).unwrap(), 20);
    let expected: Vec<u8> = request
        .elements
        .iter()
        .flat_map(|e| e.as_bytes().to_vec())
        .collect();
    assert_eq!(std::fs::read(&packed).unwrap(), expected);
    std::fs::remove_file(&packed).unwrap();
    for (count, size_only, code) in [
        (19, false, "PSI_LIMIT"),
        (20, true, "PSI_ROUND"),
        (0, false, "PSI_USAGE"),
    ] {
        let error = unpack_request(&path, &packed, count, size_only).unwrap_err();
        assert_eq!(error.code, code, "{error}");
        assert!(!packed.exists());
    }
    std::fs::write(&path, b"\x12\x05junk").unwrap();
    assert_eq!(
        unpack_request(&path, &packed, 20, false).unwrap_err().code,
        "PSI_MESSAGE"
    );
    assert!(!packed.exists());
}
