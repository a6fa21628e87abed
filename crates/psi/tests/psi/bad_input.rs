use lockstep_psi::{
    Backend, Element, Key, MessageKind, Mode, PointError, PsiError, Request, Response, ServerSetup,
    SetupFormat, SetupParams,
};
use lockstep_shard::{Control, Pool};
use proptest::prelude::*;

use crate::{joiner, pools, starter, values};

const SK: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const JK: &str = "2222222222222222222222222222222222222222222222222222222222222222";

fn ctx() -> (Pool, Control) {
    (Pool::new(2).unwrap(), Control::new())
}

fn params(format: SetupFormat, fpr: f64, joiner_count: u64) -> SetupParams {
    SetupParams {
        format,
        fpr,
        joiner_count,
    }
}

#[test]
fn keys_out_of_range() {
    let n =
        hex::decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551").unwrap();
    for bad in [vec![], vec![0; 32], n] {
        let err = Key::from_bytes(&bad).unwrap_err();
        assert!(matches!(err, PsiError::KeyOutOfRange), "{err}");
        assert!(err.to_string().contains("[1, n)"));
    }
    assert!(matches!(
        Key::from_bytes(&[9; 40]),
        Err(PsiError::KeyTooLong(40))
    ));
}

#[test]
fn setup_parameters() {
    let (pool, control) = ctx();
    let s = starter(SK, Mode::Reveal, Backend::fastest());
    let inputs = values("a", 0, 5);
    for fpr in [0.0, 1.0, -0.5, 2.0, f64::NAN] {
        let err = s
            .setup(&pool, &control, &inputs, &params(SetupFormat::Gcs, fpr, 5))
            .unwrap_err();
        assert!(matches!(err, PsiError::FalsePositiveRate(_)), "{err}");
        assert!(
            err.to_string()
                .starts_with("the false-positive rate must be in (0, 1)")
        );
    }
    let err = s
        .setup(&pool, &control, &inputs, &params(SetupFormat::Raw, 0.1, 0))
        .unwrap_err();
    assert_eq!(err.to_string(), "the joiner count must be at least 1");
    let empty: [&str; 0] = [];
    let err = s
        .setup(&pool, &control, &empty, &params(SetupFormat::Bloom, 0.1, 3))
        .unwrap_err();
    assert_eq!(err.to_string(), "the starter's set is empty");
    let err = s
        .setup(
            &pool,
            &control,
            &inputs,
            &params(SetupFormat::Gcs, 1e-300, 1 << 40),
        )
        .unwrap_err();
    assert!(
        matches!(err, PsiError::SetupTooLarge { format: "gcs", .. }),
        "{err}"
    );
    let j = joiner(JK, Mode::Reveal, Backend::fastest());
    assert_eq!(
        j.request(&pool, &control, &empty).unwrap_err().to_string(),
        "the joiner's set is empty"
    );
}

#[test]
fn garbage_and_truncated_messages() {
    let (pool, control) = ctx();
    let j = joiner(JK, Mode::Reveal, Backend::fastest());
    let request = j
        .request(&pool, &control, &values("t", 0, 3))
        .unwrap()
        .to_bytes();
    for cut in [1, 10, request.len() - 1] {
        let err = Request::from_bytes(&request[..cut]).unwrap_err();
        assert!(
            matches!(
                err,
                PsiError::Protobuf {
                    kind: MessageKind::Request,
                    ..
                }
            ),
            "cut at {cut}: {err}"
        );
        assert!(
            err.to_string()
                .starts_with("the request message is not valid protobuf")
        );
    }
    assert!(matches!(
        Response::from_bytes(&[0xff, 0xff, 0xff]),
        Err(PsiError::Protobuf {
            kind: MessageKind::Response,
            ..
        })
    ));
    assert!(matches!(
        ServerSetup::from_bytes(b"\x0a\x05garbage"),
        Err(PsiError::Protobuf {
            kind: MessageKind::Setup,
            ..
        })
    ));
    let err = ServerSetup::from_bytes(&[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the setup message is invalid: it holds no data structure (raw, gcs or bloom_filter)"
    );
}

/// A request with one element replaced by `bytes` (protobuf written by hand).
fn request_with(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![0x08, 0x01]; // reveal_intersection = true
    for element in [&[2u8; 33][..], bytes] {
        out.push(0x12);
        out.push(element.len() as u8);
        out.extend_from_slice(element);
    }
    out
}

#[test]
fn elements_of_the_wrong_length_or_prefix() {
    let cases: [(&[u8], PointError); 4] = [
        (&[2; 32], PointError::Length(32)),
        (&[2; 65], PointError::Length(65)),
        (&[0; 33], PointError::Infinity),
        (&[4; 33], PointError::Prefix(4)),
    ];
    for (bytes, reason) in cases {
        let err = Request::from_bytes(&request_with(bytes)).unwrap_err();
        assert!(
            matches!(err, PsiError::Element { kind: MessageKind::Request, index: 1, reason: r } if r == reason),
            "{err}"
        );
    }
    let err = Request::from_bytes(&request_with(&[0; 33])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "element 1 of the request message is the point at infinity"
    );
}

/// An x coordinate with no point on the curve.
fn off_curve_element() -> Element {
    let mut off = [0u8; 33];
    off[0] = 2;
    (1u8..)
        .find_map(|v| {
            off[32] = v;
            let request = Request::from_bytes(&request_with(&off)).unwrap();
            let s = starter(SK, Mode::Reveal, Backend::Portable);
            let (pool, control) = ctx();
            s.respond(&pool, &control, &request)
                .is_err()
                .then_some(request.elements[1])
        })
        .unwrap()
}

/// Elements are multiplied a block at a time: a bad one deep in a long message (past the first
/// block, inside a later worker's range) is still named by its own index, and the earlier of
/// two bad elements wins, at every worker count.
#[test]
fn a_bad_element_deep_in_a_message_is_named_by_its_index() {
    let off = off_curve_element();
    let inputs = values("deep", 0, 300);
    for backend in Backend::available() {
        let s = starter(SK, Mode::Reveal, *backend);
        let j = joiner(JK, Mode::Reveal, *backend);
        for (workers, pool) in pools() {
            let control = Control::new();
            let mut request = j.request(&pool, &control, &inputs).unwrap();
            let response = s.respond(&pool, &control, &request).unwrap();
            request.elements[130] = off;
            request.elements[250] = off;
            let err = s.respond(&pool, &control, &request).unwrap_err();
            assert!(
                matches!(
                    err,
                    PsiError::Element {
                        kind: MessageKind::Request,
                        index: 130,
                        reason: PointError::NotOnCurve
                    }
                ),
                "{backend} at {workers} workers: {err}"
            );
            let setup = s
                .setup(
                    &pool,
                    &control,
                    &inputs,
                    &params(SetupFormat::Raw, 0.1, 300),
                )
                .unwrap();
            let mut bad_response = response.clone();
            bad_response.elements[199] = off;
            bad_response.elements[200] = off;
            let err = j
                .intersect(&pool, &control, &setup.message, &bad_response, 300)
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    PsiError::Element {
                        kind: MessageKind::Response,
                        index: 199,
                        reason: PointError::NotOnCurve
                    }
                ),
                "{backend} at {workers} workers: {err}"
            );
        }
    }
}

#[test]
fn points_off_the_curve_are_refused_with_their_index() {
    let (pool, control) = ctx();
    for backend in Backend::available() {
        let s = starter(SK, Mode::Reveal, *backend);
        // Find an x with no point on the curve, and one that is not canonical.
        let mut off = [0u8; 33];
        off[0] = 2;
        let off = (1u8..).find_map(|v| {
            off[32] = v;
            let req = Request::from_bytes(&request_with(&off)).unwrap();
            s.respond(&pool, &control, &req).err()
        });
        let err = off.unwrap();
        assert!(
            matches!(
                err,
                PsiError::Element {
                    kind: MessageKind::Request,
                    index: 1,
                    reason: PointError::NotOnCurve
                }
            ),
            "{backend}: {err}"
        );
        assert_eq!(
            err.to_string(),
            "element 1 of the request message is not on the P-256 curve"
        );
        let mut big = [0xff; 33];
        big[0] = 3;
        let req = Request::from_bytes(&request_with(&big)).unwrap();
        assert!(matches!(
            s.respond(&pool, &control, &req),
            Err(PsiError::Element {
                reason: PointError::NonCanonical,
                ..
            })
        ));
    }
}

#[test]
fn mode_mismatches() {
    let (pool, control) = ctx();
    let size_only = starter(SK, Mode::SizeOnly, Backend::fastest());
    let reveal_joiner = joiner(JK, Mode::Reveal, Backend::fastest());
    let request = reveal_joiner
        .request(&pool, &control, &values("m", 0, 2))
        .unwrap();
    let err = size_only.respond(&pool, &control, &request).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the request is reveal-intersection, but this starter answers size-only requests only; both parties must agree on the mode"
    );
    let size_joiner = joiner(JK, Mode::SizeOnly, Backend::fastest());
    let request = size_joiner
        .request(&pool, &control, &values("m", 0, 2))
        .unwrap();
    let response = size_only.respond(&pool, &control, &request).unwrap();
    let setup = size_only
        .setup(
            &pool,
            &control,
            &values("m", 0, 2),
            &params(SetupFormat::Raw, 0.1, 2),
        )
        .unwrap();
    assert!(matches!(
        size_joiner.intersect(&pool, &control, &setup.message, &response, 2),
        Err(PsiError::SizeOnly)
    ));
    assert_eq!(
        size_joiner
            .intersection_size(&pool, &control, &setup.message, &response, 2)
            .unwrap(),
        2
    );
    // A response that lost an element is refused, not misread.
    let short = Response {
        elements: response.elements[..1].to_vec(),
    };
    let err = size_joiner
        .intersection_size(&pool, &control, &setup.message, &short, 2)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the response holds 1 elements but the request had 2"
    );
}

#[test]
fn responses_that_cannot_be_read_as_asked_are_refused() {
    let (pool, control) = ctx();
    let reveal = joiner(JK, Mode::Reveal, Backend::fastest());
    let size = joiner(JK, Mode::SizeOnly, Backend::fastest());
    let s = starter(SK, Mode::Reveal, Backend::fastest());
    let inputs = values("r", 0, 20);
    let request = reveal.request(&pool, &control, &inputs).unwrap();
    let response = s.respond(&pool, &control, &request).unwrap();
    // With the request: lengths and mode.
    assert!(reveal.check_response(&response, 20, Some(&request)).is_ok());
    assert_eq!(
        reveal
            .check_response(&response, 21, Some(&request))
            .unwrap_err()
            .to_string(),
        "the response holds 20 elements but the request had 21"
    );
    let short = Request {
        mode: Mode::Reveal,
        elements: request.elements[..19].to_vec(),
    };
    assert!(matches!(
        reveal.check_response(&response, 20, Some(&short)),
        Err(PsiError::RequestLength {
            request: 19,
            expected: 20
        })
    ));
    let size_request = Request {
        mode: Mode::SizeOnly,
        elements: request.elements.clone(),
    };
    assert!(matches!(
        reveal.check_response(&response, 20, Some(&size_request)),
        Err(PsiError::SizeOnlyRequest)
    ));
    assert!(
        size.check_response(&response, 20, Some(&size_request))
            .is_ok()
    );
    // Without it: a sorted response is a size-only one; fewer than 8 cannot be told.
    assert!(reveal.check_response(&response, 20, None).is_ok());
    let mut sorted = response.clone();
    sorted.elements.sort();
    assert!(matches!(
        reveal.check_response(&sorted, 20, None),
        Err(PsiError::ResponseSorted)
    ));
    assert!(size.check_response(&sorted, 20, None).is_ok());
    let seven = Response {
        elements: response.elements[..7].to_vec(),
    };
    assert!(matches!(
        reveal.check_response(&seven, 7, None),
        Err(PsiError::ResponseOrderUnknown(7))
    ));
}

#[test]
fn engine_and_reference_refuse_the_same_setups() {
    let s = starter(SK, Mode::Reveal, Backend::fastest());
    let (pool, control) = ctx();
    let inputs = values("p", 0, 4);
    for (format, fpr, joiner_count) in [
        (SetupFormat::Gcs, 1e-9, 100_000),
        (SetupFormat::Gcs, 1e-300, 1 << 40),
        (SetupFormat::Bloom, 1e-300, u64::MAX),
        (SetupFormat::Raw, 0.0, 3),
        (SetupFormat::Raw, 0.5, 0),
    ] {
        let p = params(format, fpr, joiner_count);
        let engine = s.setup(&pool, &control, &inputs, &p).unwrap_err();
        let serial = lockstep_psi::reference::setup(&s, &inputs, &p).unwrap_err();
        assert_eq!(engine.to_string(), serial.to_string(), "{p:?}");
    }
}

#[test]
fn invalid_setups() {
    // Unsorted raw elements.
    let mut high = [2u8; 33];
    high[32] = 9;
    let mut bytes = vec![0x0a, 70];
    for e in [high, [2u8; 33]] {
        bytes.extend([0x0a, 33]);
        bytes.extend(e);
    }
    let err = ServerSetup::from_bytes(&bytes).unwrap_err();
    assert!(
        err.to_string().contains("raw elements are not sorted"),
        "{err}"
    );
    // GCS: negative hash range, divisor out of range.
    let gcs = |div: u8, range: u8| vec![0x12, 4, 0x08, div, 0x10, range];
    assert!(
        ServerSetup::from_bytes(&gcs(63, 5))
            .unwrap_err()
            .to_string()
            .contains("divisor")
    );
    assert!(
        ServerSetup::from_bytes(&gcs(3, 0))
            .unwrap_err()
            .to_string()
            .contains("hash range")
    );
    // Bloom: no bits, no hash functions.
    let err = ServerSetup::from_bytes(&[0x1a, 2, 0x08, 3]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the setup message is invalid: the Bloom filter has no bits"
    );
    let err = ServerSetup::from_bytes(&[0x1a, 3, 0x12, 1, 0xff]).unwrap_err();
    assert!(err.to_string().contains("0 hash functions"), "{err}");
    // The association table needs a raw setup.
    let (pool, control) = ctx();
    let j = joiner(JK, Mode::Reveal, Backend::fastest());
    let gcs_setup = ServerSetup::from_bytes(&gcs(3, 5)).unwrap();
    let err = j
        .association_table(
            &pool,
            &control,
            &gcs_setup,
            &Response { elements: vec![] },
            0,
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the association table needs a raw setup; this setup is gcs"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Decoders never panic, whatever the bytes.
    #[test]
    fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = ServerSetup::from_bytes(&bytes);
        let _ = Request::from_bytes(&bytes);
        let _ = Response::from_bytes(&bytes);
    }
}
