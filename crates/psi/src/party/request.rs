//! The joiner's request, over packed values, with progress per block.

use super::packed::{PackError, unpack};
use crate::linkage::{KeySpec, Party, Records};
use crate::{Backend, Element, Joiner, Key, Mode, PsiError, Request};
use lockstep_shard::{Control, Pool};
use zeroize::Zeroize;

/// Values masked between two progress reports: about 50 ms of portable curve work in wasm, so
/// the pool's hang detector sees a steady beat without the reports costing anything measurable.
const PROGRESS_BLOCK: usize = 1024;

/// Why [`request`] failed.
#[derive(Debug, thiserror::Error)]
pub enum RequestError<E> {
    /// The key or the engine refused (the message names the reason).
    #[error(transparent)]
    Psi(#[from] PsiError),
    /// The packed values are inconsistent.
    #[error(transparent)]
    Pack(#[from] PackError),
    /// The values give no key (all empty), or one is not UTF-8 text under normalization; the
    /// message is the CLI's for the same values, with `values` as the input's name.
    #[error("{0}")]
    Records(String),
    /// The progress callback failed; its error is returned as it came.
    #[error("the progress callback failed")]
    Callback(E),
}

impl<E> RequestError<E> {
    /// A stable code: the engine's ([`PsiError::code`]) or `PSI_INPUT` for the values;
    /// `PSI_CALLBACK` for a callback's failure (a front end passes that failure on as it came).
    pub fn code(&self) -> &'static str {
        match self {
            Self::Psi(error) => error.code(),
            Self::Pack(_) | Self::Records(_) => "PSI_INPUT",
            Self::Callback(_) => "PSI_CALLBACK",
        }
    }
}

/// The `psi_proto.Request` bytes for the joiner's rows whose values are
/// `values[ends[i-1]..ends[i]]`, masked with `key`: the rows grouped into distinct keys (each
/// masked once, in order of first appearance; empty values left out), exactly as
/// `lockstep psi request --input FILE` does for a plain-text FILE of those values, one per line
/// (so byte-identical to it whenever no value holds a line break), `--normalize` when
/// `normalize`. Byte-identical to [`crate::linkage::request`] on any pool over the same key and keys
/// (the request masks each key on its own, so blocks concatenate).
///
/// `progress(done, total)` is called after every block of keys; its first error ends the call.
/// `key` is zeroed before this returns, whatever the outcome.
///
/// # Errors
/// [`RequestError::Psi`] for a bad key, [`RequestError::Pack`] for inconsistent offsets
/// (checked before any masking), [`RequestError::Records`] for values without a key,
/// [`RequestError::Callback`] as described.
pub fn request<E>(
    key: &mut [u8],
    values: &[u8],
    ends: &[u32],
    reveal: bool,
    normalize: bool,
    backend: Backend,
    progress: &mut dyn FnMut(usize, usize) -> Result<(), E>,
) -> Result<Vec<u8>, RequestError<E>> {
    let parsed = Key::from_bytes(key);
    key.zeroize();
    let key = parsed?;
    let values = unpack(values, ends)?;
    let spec = KeySpec {
        columns: Vec::new(),
        normalize,
    };
    let party = Party::from_records(Records::from_values(values), &spec)
        .map_err(|e| RequestError::Records(e.in_file("values").to_string()))?;
    let keys = party.keys().values();
    let mode = if reveal { Mode::Reveal } else { Mode::SizeOnly };
    let joiner = Joiner::new(&key, mode, backend)?;
    let (pool, control) = (Pool::current_thread(), Control::new());
    let mut elements: Vec<Element> = Vec::with_capacity(keys.len());
    for block in keys.chunks(PROGRESS_BLOCK) {
        elements.extend(joiner.request(&pool, &control, block)?.elements);
        progress(elements.len(), keys.len()).map_err(RequestError::Callback)?;
    }
    Ok(Request { mode, elements }.to_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    const KEY: [u8; 32] = {
        let mut key = [0u8; 32];
        key[31] = 7;
        key[0] = 0x3c;
        key
    };

    fn pack(values: &[Vec<u8>]) -> (Vec<u8>, Vec<u32>) {
        let mut bytes = Vec::new();
        let mut ends = Vec::new();
        for value in values {
            bytes.extend_from_slice(value);
            ends.push(u32::try_from(bytes.len()).unwrap());
        }
        (bytes, ends)
    }

    /// What the CLI's request does with a plain-text file of these values, one per line.
    fn native(values: &[Vec<u8>], mode: Mode, normalize: bool, workers: usize) -> Vec<u8> {
        let key = Key::from_bytes(&KEY).unwrap();
        let joiner = Joiner::new(&key, mode, Backend::fastest()).unwrap();
        let pool = Pool::new(workers).unwrap();
        let file: Vec<u8> = values
            .iter()
            .flat_map(|v| [&v[..], b"\n"].concat())
            .collect();
        let spec = KeySpec {
            columns: Vec::new(),
            normalize,
        };
        let party = Party::read(&file[..], &spec).unwrap();
        crate::linkage::request(&joiner, &pool, &Control::new(), party.keys())
            .unwrap()
            .to_bytes()
    }

    #[test]
    fn distinct_keys_in_blocks_give_the_cli_bytes_on_any_pool() {
        // Crosses two block boundaries of distinct keys, with an empty value, repeated values
        // and values equal only once normalized.
        let mut values: Vec<Vec<u8>> = (0..2 * PROGRESS_BLOCK + 9)
            .map(|i| format!("person-{i}@example.org").into_bytes())
            .collect();
        values[3] = Vec::new();
        values[PROGRESS_BLOCK] = values[1].clone();
        values[7] = values[5].clone();
        values[9] = b" PERSON-8@example.org ".to_vec();
        let (bytes, ends) = pack(&values);
        for normalize in [false, true] {
            // Empty, and repeated: 3 rows (4 once normalized) share another row's key.
            let distinct = values.len() - 3 - usize::from(normalize);
            let cases = [(true, Mode::Reveal), (false, Mode::SizeOnly)];
            for ((reveal, mode), &backend) in cases
                .into_iter()
                .flat_map(|case| Backend::available().iter().map(move |b| (case, b)))
            {
                let mut reports = Vec::new();
                let mut key = KEY;
                let got = request::<Infallible>(
                    &mut key,
                    &bytes,
                    &ends,
                    reveal,
                    normalize,
                    backend,
                    &mut |d, t| {
                        reports.push((d, t));
                        Ok(())
                    },
                )
                .unwrap();
                assert_eq!(key, [0u8; 32], "the key copy is wiped");
                let expected = vec![
                    (PROGRESS_BLOCK, distinct),
                    (2 * PROGRESS_BLOCK, distinct),
                    (distinct, distinct),
                ];
                assert_eq!(reports, expected);
                assert_eq!(Request::from_bytes(&got).unwrap().elements.len(), distinct);
                for workers in [1, 2, 3, 5] {
                    assert_eq!(
                        got,
                        native(&values, mode, normalize, workers),
                        "{workers} workers, the {backend} backend"
                    );
                }
            }
        }
    }

    #[test]
    fn bad_packing_is_named_before_any_work() {
        let mut calls = 0;
        let mut count = |_: usize, _: usize| -> Result<(), Infallible> {
            calls += 1;
            Ok(())
        };
        let error = request(
            &mut KEY.clone(),
            b"abcdef",
            &[2, 1, 6],
            true,
            false,
            Backend::Portable,
            &mut count,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(error, "packed values: ends[1] = 1 is below ends[0] = 2");
        for (ends, last) in [(&[2u32, 5][..], 5), (&[2, 9][..], 9), (&[][..], 0)] {
            let error = request(
                &mut KEY.clone(),
                b"abcdef",
                ends,
                true,
                false,
                Backend::Portable,
                &mut count,
            )
            .unwrap_err()
            .to_string();
            assert_eq!(
                error,
                format!("packed values: the last end offset is {last} but the values hold 6 bytes")
            );
        }
        assert_eq!(calls, 0);
    }

    #[test]
    fn bad_keys_and_empty_sets_are_refused_and_the_key_is_still_wiped() {
        let mut ok = |_: usize, _: usize| -> Result<(), Infallible> { Ok(()) };
        let mut zero = [0u8; 32];
        let error = request(
            &mut zero,
            b"a",
            &[1],
            true,
            false,
            Backend::Portable,
            &mut ok,
        )
        .unwrap_err();
        assert!(
            matches!(error, RequestError::Psi(PsiError::KeyOutOfRange)),
            "{error}"
        );
        for (values, ends) in [(&b""[..], &[][..]), (&b""[..], &[0u32, 0][..])] {
            let mut key = KEY;
            let error = request(
                &mut key,
                values,
                ends,
                true,
                false,
                Backend::Portable,
                &mut ok,
            )
            .unwrap_err();
            assert_eq!(
                error.to_string(),
                "values: no row has a non-empty key; nothing to intersect"
            );
            assert_eq!(key, [0u8; 32]);
        }
        let error = request(
            &mut KEY.clone(),
            b"\xff",
            &[1],
            true,
            true,
            Backend::Portable,
            &mut ok,
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "values: row 1, column \"value\" is not UTF-8 text, which normalization needs"
        );
    }

    #[test]
    fn a_failing_progress_callback_ends_the_call_with_its_error() {
        let values: Vec<Vec<u8>> = (0..PROGRESS_BLOCK + 1)
            .map(|i| i.to_le_bytes().to_vec())
            .collect();
        let (bytes, ends) = pack(&values);
        let error = request(
            &mut KEY.clone(),
            &bytes,
            &ends,
            true,
            false,
            Backend::Portable,
            &mut |done, _| {
                if done > PROGRESS_BLOCK {
                    Err("stop")
                } else {
                    Ok(())
                }
            },
        )
        .unwrap_err();
        assert!(matches!(error, RequestError::Callback("stop")));
    }
}
