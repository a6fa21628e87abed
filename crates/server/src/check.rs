//! An upload checked before it is accepted: the engine's decoders, the round's limits and rules.

use std::io::{self, Read};

use lockstep_psi::{Limits, MessageKind, Request, Response, ServerSetup};
use sha2::Digest as _;

use crate::{Digest, Kind, Posted, RoundError, RoundSpec, RoundState};

/// A message that passed [`check_message`]: what the round records of it.
pub type Checked = Posted;

/// Reads a message of `kind` from `body` and checks it as the round must before accepting it:
/// at most the spec's bytes (refused as soon as one more arrives) and rows, decoded and
/// validated by the PSI engine's streaming decoders, and fitting the round: a setup of the
/// spec's format, a request of its mode, a response answering the request element for element.
/// Returns its digest, length and element count; reads `body` to its end, so the digest is of
/// every byte sent.
///
/// # Errors
/// [`RoundError::TooLarge`], [`RoundError::Invalid`] with the decoder's words (an I/O failure
/// of `body` among them), [`RoundError::Mismatch`], or [`RoundError::OutOfOrder`] for a
/// response with no request in `state`.
pub fn check_message(
    spec: &RoundSpec,
    state: &RoundState,
    kind: Kind,
    body: impl Read,
) -> Result<Checked, RoundError> {
    let mut reader = Hashing {
        inner: body.take(spec.max_bytes.saturating_add(1)),
        hash: sha2::Sha256::new(),
        len: 0,
    };
    let limits = Limits::max_elements(spec.max_rows);
    let decoded = match kind {
        Kind::Setup => ServerSetup::read(&mut reader, limits).map(Decoded::Setup),
        Kind::Request => Request::read(&mut reader, limits).map(Decoded::Request),
        Kind::Response => Response::read(&mut reader, limits).map(Decoded::Response),
    };
    // What the decoder left unread (none for a protobuf message, which runs to its end) still
    // counts toward the bound and the digest.
    let drained = io::copy(&mut reader, &mut io::sink());
    if reader.len > spec.max_bytes {
        return Err(RoundError::TooLarge {
            kind,
            limit: spec.max_bytes,
        });
    }
    let decoded = decoded.map_err(|source| RoundError::Invalid { kind, source })?;
    drained.map_err(|e| RoundError::Invalid {
        kind,
        source: lockstep_psi::PsiError::Read {
            kind: match kind {
                Kind::Setup => MessageKind::Setup,
                Kind::Request => MessageKind::Request,
                Kind::Response => MessageKind::Response,
            },
            source: e,
        },
    })?;
    let mismatch = |reason: String| Err(RoundError::Mismatch { kind, reason });
    let elements = match decoded {
        Decoded::Setup(setup) => {
            let wanted = crate::round::format_name(spec.format);
            if setup.format_name() != wanted {
                return mismatch(format!(
                    "a {} setup where the round takes {wanted}",
                    setup.format_name()
                ));
            }
            match setup {
                ServerSetup::Raw(elements) => Some(elements.len() as u64),
                ServerSetup::Gcs(_) | ServerSetup::Bloom(_) => None,
            }
        }
        Decoded::Request(request) => {
            if request.mode != spec.mode {
                return mismatch(format!(
                    "a {} request where the round is {}",
                    request.mode, spec.mode
                ));
            }
            Some(request.elements.len() as u64)
        }
        Decoded::Response(response) => {
            let Some(asked) = state.request.and_then(|r| r.elements) else {
                return Err(RoundError::OutOfOrder {
                    kind,
                    missing: Kind::Request,
                });
            };
            let answered = response.elements.len() as u64;
            if answered != asked {
                return mismatch(format!("{answered} elements answer a request of {asked}"));
            }
            Some(answered)
        }
    };
    Ok(Posted {
        digest: Digest(reader.hash.finalize().into()),
        len: reader.len,
        elements,
    })
}

enum Decoded {
    Setup(ServerSetup),
    Request(Request),
    Response(Response),
}

/// Hashes and counts what passes through.
struct Hashing<R> {
    inner: R,
    hash: sha2::Sha256,
    len: u64,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.hash.update(&buf[..read]);
        self.len += read as u64;
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use lockstep_psi::{Backend, Joiner, Key, Mode, SetupFormat, SetupParams, Starter};
    use lockstep_shard::{Control, Pool};

    use super::*;

    struct Round {
        setup: Vec<u8>,
        request: Vec<u8>,
        response: Vec<u8>,
    }

    fn round(format: SetupFormat, mode: Mode) -> Round {
        let (pool, control) = (Pool::new(1).unwrap(), Control::new());
        let starter = Starter::new(&Key::generate().unwrap(), mode, Backend::Portable).unwrap();
        let joiner = Joiner::new(&Key::generate().unwrap(), mode, Backend::Portable).unwrap();
        let params = SetupParams {
            format,
            fpr: 1e-9,
            joiner_count: 3,
        };
        let setup = starter
            .setup(&pool, &control, &["ada", "grace", "alan"], &params)
            .unwrap();
        let request = joiner
            .request(&pool, &control, &["alan", "barbara", "ada"])
            .unwrap();
        let response = starter.respond(&pool, &control, &request).unwrap();
        Round {
            setup: setup.message.to_bytes().unwrap(),
            request: request.to_bytes(),
            response: response.to_bytes(),
        }
    }

    fn spec(format: SetupFormat, mode: Mode) -> RoundSpec {
        RoundSpec {
            format,
            mode,
            max_rows: 3,
            max_bytes: 1 << 20,
            expires_at: u64::MAX,
        }
    }

    #[test]
    fn a_real_rounds_messages_pass_with_their_digests() {
        for format in [SetupFormat::Raw, SetupFormat::Gcs, SetupFormat::Bloom] {
            let (round, spec) = (round(format, Mode::Reveal), spec(format, Mode::Reveal));
            let mut state = RoundState::default();
            for (kind, bytes) in [
                (Kind::Setup, &round.setup),
                (Kind::Request, &round.request),
                (Kind::Response, &round.response),
            ] {
                let checked = check_message(&spec, &state, kind, bytes.as_slice()).unwrap();
                assert_eq!(checked.digest, Digest::of(bytes), "{kind}");
                assert_eq!(checked.len, bytes.len() as u64);
                let elements = (kind != Kind::Setup || format == SetupFormat::Raw).then_some(3);
                assert_eq!(checked.elements, elements, "{format:?} {kind}");
                state.record(kind, checked);
            }
        }
    }

    #[test]
    fn a_message_that_does_not_fit_the_round_is_refused() {
        let round = round(SetupFormat::Raw, Mode::Reveal);
        let raw = spec(SetupFormat::Raw, Mode::Reveal);
        let empty = RoundState::default();
        let refuse = |spec: &RoundSpec, state: &RoundState, kind, bytes: &[u8]| {
            check_message(spec, state, kind, bytes).unwrap_err()
        };
        let gcs = spec(SetupFormat::Gcs, Mode::Reveal);
        let error = refuse(&gcs, &empty, Kind::Setup, &round.setup);
        assert!(matches!(error, RoundError::Mismatch { .. }), "{error}");
        assert!(
            error
                .to_string()
                .contains("a raw setup where the round takes gcs")
        );
        let size_only = spec(SetupFormat::Raw, Mode::SizeOnly);
        let error = refuse(&size_only, &empty, Kind::Request, &round.request);
        assert!(matches!(error, RoundError::Mismatch { .. }), "{error}");
        // A response before any request, and one answering another request's length.
        let error = refuse(&raw, &empty, Kind::Response, &round.response);
        assert!(matches!(error, RoundError::OutOfOrder { .. }), "{error}");
        let mut state = RoundState::default();
        let mut asked =
            check_message(&raw, &state, Kind::Request, round.request.as_slice()).unwrap();
        asked.elements = Some(4);
        state.record(Kind::Request, asked);
        let error = refuse(&raw, &state, Kind::Response, &round.response);
        assert!(
            error
                .to_string()
                .contains("3 elements answer a request of 4"),
            "{error}"
        );
    }

    #[test]
    fn limits_and_hostile_bodies_are_refused_with_the_decoders_words() {
        let round = round(SetupFormat::Raw, Mode::Reveal);
        let empty = RoundState::default();
        let mut small = spec(SetupFormat::Raw, Mode::Reveal);
        small.max_bytes = round.request.len() as u64 - 1;
        let error =
            check_message(&small, &empty, Kind::Request, round.request.as_slice()).unwrap_err();
        assert!(matches!(error, RoundError::TooLarge { .. }), "{error}");
        let mut few = spec(SetupFormat::Raw, Mode::Reveal);
        few.max_rows = 2;
        let error =
            check_message(&few, &empty, Kind::Request, round.request.as_slice()).unwrap_err();
        let RoundError::Invalid { source, .. } = &error else {
            panic!("{error}")
        };
        assert!(
            matches!(source, lockstep_psi::PsiError::TooManyElements { .. }),
            "{error}"
        );
        let any = spec(SetupFormat::Raw, Mode::Reveal);
        // A setup posted as a request, garbage, and a request with one byte of a point changed.
        let mut flipped = round.request.clone();
        let last = flipped.len() - 1;
        flipped[last - 32] ^= 0xff;
        for bytes in [&round.setup, &vec![0xff; 40], &flipped] {
            let error = check_message(&any, &empty, Kind::Request, bytes.as_slice()).unwrap_err();
            assert!(matches!(error, RoundError::Invalid { .. }), "{error}");
            assert!(
                error
                    .to_string()
                    .starts_with("the request is not a valid message: "),
                "{error}"
            );
        }
    }
}
