//! The single-threaded reference: OpenMined's algorithms as plain loops.
//!
//! The sharded engine ([`Starter`], [`Joiner`]) must equal these functions byte for byte at every
//! worker count; the tests compare them at 1, 2, 3 and 5 workers. The reference shares only the
//! per-element primitives (masking, hashing, the data-structure codecs) with the engine; its
//! iteration, sorting and matching are its own, and deliberately naive.

use crate::error::MessageKind;
use crate::error::element_error;
use crate::joiner::Match;
use crate::params::Sizing;
use crate::{
    Bloom, Gcs, Joiner, Mode, PsiError, Request, Response, ServerSetup, Setup, SetupParams,
    Starter, bloom, gcs,
};

/// [`Starter::setup`], serially.
///
/// # Errors
/// As [`Starter::setup`].
pub fn setup<T: AsRef<[u8]>>(
    starter: &Starter,
    inputs: &[T],
    params: &SetupParams,
) -> Result<Setup, PsiError> {
    let sizing = params.sizing(inputs.len())?;
    let elements = inputs
        .iter()
        .map(|v| starter.cipher.encrypt(v.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    let message = match sizing {
        Sizing::Raw => {
            let mut order: Vec<usize> = (0..elements.len()).collect();
            order.sort_by_key(|&i| (elements[i], i));
            return Ok(Setup {
                message: ServerSetup::Raw(order.iter().map(|&i| elements[i]).collect()),
                permutation: Some(order),
            });
        }
        Sizing::Gcs {
            hash_range,
            max_elements,
            fpr,
        } => {
            let mut hashes: Vec<u64> = elements
                .iter()
                .map(|e| gcs::element_hash(e.as_ref(), hash_range))
                .collect();
            hashes.sort_unstable();
            let (div, bits) = gcs::compress(&hashes, max_elements, fpr)?;
            ServerSetup::Gcs(Gcs {
                div,
                hash_range,
                bits,
            })
        }
        Sizing::Bloom {
            hash_functions,
            bytes,
        } => {
            let mut bits = vec![0u8; bytes];
            for e in &elements {
                bloom::insert(&mut bits, hash_functions, e.as_ref());
            }
            ServerSetup::Bloom(Bloom {
                num_hash_functions: hash_functions,
                bits,
            })
        }
    };
    Ok(Setup {
        message,
        permutation: None,
    })
}

/// [`Joiner::request`], serially.
///
/// # Errors
/// As [`Joiner::request`].
pub fn request<T: AsRef<[u8]>>(joiner: &Joiner, inputs: &[T]) -> Result<Request, PsiError> {
    if inputs.is_empty() {
        return Err(PsiError::EmptySet("joiner's"));
    }
    Ok(Request {
        mode: joiner.mode,
        elements: inputs
            .iter()
            .map(|v| joiner.cipher.encrypt(v.as_ref()))
            .collect::<Result<_, _>>()?,
    })
}

/// [`Starter::respond`], serially.
///
/// # Errors
/// As [`Starter::respond`].
pub fn respond(starter: &Starter, request: &Request) -> Result<Response, PsiError> {
    if request.mode != starter.mode {
        return Err(PsiError::ModeMismatch {
            request: request.mode,
            starter: starter.mode,
        });
    }
    let mut elements = Vec::with_capacity(request.elements.len());
    for (index, element) in request.elements.iter().enumerate() {
        elements.push(
            starter
                .cipher
                .reencrypt(element)
                .map_err(|e| element_error(MessageKind::Request, index, e))?,
        );
    }
    if starter.mode == Mode::SizeOnly {
        elements.sort();
    }
    Ok(Response { elements })
}

/// The decrypted response, checked against the request length.
fn decrypt_all(
    joiner: &Joiner,
    response: &Response,
    request_len: usize,
) -> Result<Vec<crate::Element>, PsiError> {
    if response.elements.len() != request_len {
        return Err(PsiError::ResponseLength {
            response: response.elements.len(),
            request: request_len,
        });
    }
    response
        .elements
        .iter()
        .enumerate()
        .map(|(index, e)| {
            joiner
                .cipher
                .decrypt(e)
                .map_err(|err| element_error(MessageKind::Response, index, err))
        })
        .collect()
}

fn holds(setup: &ServerSetup, element: &crate::Element) -> Result<bool, PsiError> {
    setup.validate()?;
    Ok(match setup {
        ServerSetup::Raw(elements) => elements.contains(element),
        ServerSetup::Gcs(g) => gcs::decompress(&g.bits, g.div)?
            .contains(&gcs::element_hash(element.as_ref(), g.hash_range)),
        ServerSetup::Bloom(b) => bloom::contains(&b.bits, b.num_hash_functions, element.as_ref()),
    })
}

/// [`Joiner::intersect`], serially.
///
/// # Errors
/// As [`Joiner::intersect`].
pub fn intersect(
    joiner: &Joiner,
    setup: &ServerSetup,
    response: &Response,
    request_len: usize,
) -> Result<Vec<usize>, PsiError> {
    if joiner.mode == Mode::SizeOnly {
        return Err(PsiError::SizeOnly);
    }
    let plain = decrypt_all(joiner, response, request_len)?;
    let mut found = Vec::new();
    for (index, element) in plain.iter().enumerate() {
        if holds(setup, element)? {
            found.push(index);
        }
    }
    Ok(found)
}

/// [`Joiner::intersection_size`], serially.
///
/// # Errors
/// As [`Joiner::intersection_size`].
pub fn intersection_size(
    joiner: &Joiner,
    setup: &ServerSetup,
    response: &Response,
    request_len: usize,
) -> Result<usize, PsiError> {
    let plain = decrypt_all(joiner, response, request_len)?;
    let mut count = 0;
    for element in &plain {
        count += usize::from(holds(setup, element)?);
    }
    Ok(count)
}

/// [`Joiner::association_table`], serially: every (position, index) pair compared.
///
/// # Errors
/// As [`Joiner::association_table`].
pub fn association_table(
    joiner: &Joiner,
    setup: &ServerSetup,
    response: &Response,
    request_len: usize,
) -> Result<Vec<Match>, PsiError> {
    if joiner.mode == Mode::SizeOnly {
        return Err(PsiError::SizeOnly);
    }
    let ServerSetup::Raw(elements) = setup else {
        return Err(PsiError::NotRaw(setup.format_name()));
    };
    let plain = decrypt_all(joiner, response, request_len)?;
    let mut table = Vec::new();
    for (setup_position, element) in elements.iter().enumerate() {
        for (joiner_index, candidate) in plain.iter().enumerate() {
            if element == candidate {
                table.push(Match {
                    setup_position,
                    joiner_index,
                });
            }
        }
    }
    Ok(table)
}
