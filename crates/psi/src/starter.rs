//! The starter: the party that sets up its masked set and answers requests (OpenMined's server).

use lockstep_shard::{Control, Pool, SortedShard, merge_sorted_by_bytes, split};

use crate::backend::{BLOCK, Cipher};
use crate::curve::Element;
use crate::error::MessageKind;
use crate::error::element_error;
use crate::params::Sizing;
use crate::{
    Backend, Bloom, Gcs, Key, Mode, PsiError, Request, Response, ServerSetup, SetupParams, bloom,
    gcs,
};

/// A setup message with, for a raw setup, its sorting permutation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// The message to send to the joiner.
    pub message: ServerSetup,
    /// For a raw setup: `permutation[position]` is the index of the input whose masked value sits
    /// at `position` of the sorted message. The starter keeps it to map the joiner's association
    /// table back to its own rows. `None` for GCS and Bloom setups.
    pub permutation: Option<Vec<usize>>,
}

/// The party that publishes its masked set and re-masks requests.
///
/// # Determinism
/// Every output is byte-identical at every worker count to [`reference`](crate::reference)'s
/// single-threaded loops. The raw setup sorts by `(element bytes, input index)`, so even with
/// repeated values its permutation is identical too (repeated values still reveal their
/// multiplicity to the joiner: mask distinct values).
///
/// # Constant time
/// Masking runs in constant time in the key; hashing to the curve takes a number of attempts
/// that depends on the value (as OpenMined's does).
pub struct Starter {
    pub(crate) cipher: Cipher,
    pub(crate) mode: Mode,
}

impl Starter {
    /// A starter with `key` that answers requests of `mode` only, computing on `backend`.
    ///
    /// # Errors
    /// [`PsiError::Backend`] if the backend is not compiled in or fails to start.
    pub fn new(key: &Key, mode: Mode, backend: Backend) -> Result<Self, PsiError> {
        Ok(Self {
            cipher: Cipher::new(key, backend)?,
            mode,
        })
    }

    /// The mode this starter answers.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Masks `inputs` and builds the setup message, on `pool`: [`mask`](Self::mask) then
    /// [`setup_from_masked`](Self::setup_from_masked).
    ///
    /// Progress: one step per masked input (the caller starts the step).
    ///
    /// # Errors
    /// [`PsiError::FalsePositiveRate`], [`PsiError::JoinerCount`], [`PsiError::EmptySet`],
    /// [`PsiError::GcsTooLarge`] (naming the smallest rate that works),
    /// [`PsiError::SetupTooLarge`] for bad parameters, all before any masking;
    /// [`PsiError::Cancelled`] and runtime failures.
    pub fn setup<T: AsRef<[u8]> + Sync>(
        &self,
        pool: &Pool,
        control: &Control,
        inputs: &[T],
        params: &SetupParams,
    ) -> Result<Setup, PsiError> {
        params.check(inputs.len())?;
        let elements = self.mask(pool, control, inputs)?;
        Self::setup_from_masked(pool, control, elements, params)
    }

    /// The setup message over `masked`, the masked inputs in input order (from
    /// [`mask`](Self::mask), whole or concatenated from parts in order: the result is the same
    /// bytes either way). A raw setup sorts them by `(bytes, input index)` and keeps the
    /// permutation; a GCS hashes and compresses them; a Bloom filter takes each.
    ///
    /// # Errors
    /// As [`setup`](Self::setup)'s parameter errors; [`PsiError::Cancelled`] and runtime
    /// failures.
    pub fn setup_from_masked(
        pool: &Pool,
        control: &Control,
        masked: Vec<Element>,
        params: &SetupParams,
    ) -> Result<Setup, PsiError> {
        let sizing = params.sizing(masked.len())?;
        Self::setup_sized(pool, control, masked, sizing)
    }

    /// The setup message over `masked` at `sizing` (checked by the caller).
    pub(crate) fn setup_sized(
        pool: &Pool,
        control: &Control,
        masked: Vec<Element>,
        sizing: Sizing,
    ) -> Result<Setup, PsiError> {
        match sizing {
            Sizing::Raw => {
                // Each shard sorts its range by (bytes, index); the merge takes ties from the
                // lower shard, so the result is the global (bytes, index) order.
                let ranges = split::balanced(masked.len(), pool.workers());
                // Progress counts masked inputs: the sort reports none (nested: no sink).
                let shards = pool.map_ranges(&control.nested(), &ranges, |_, range| {
                    Ok::<_, PsiError>(sorted_shard(&masked[range.clone()], range.start))
                })?;
                let merged =
                    merge_sorted_by_bytes(shards).map_err(|e| PsiError::Runtime(e.to_string()))?;
                Ok(Setup {
                    message: ServerSetup::Raw(merged.items),
                    permutation: Some(merged.permutation),
                })
            }
            Sizing::Gcs {
                hash_range,
                max_elements,
                fpr,
            } => {
                let mut hashes: Vec<u64> = masked
                    .iter()
                    .map(|e| gcs::element_hash(e.as_ref(), hash_range))
                    .collect();
                hashes.sort_unstable();
                let (div, bits) = gcs::compress(&hashes, max_elements, fpr)?;
                Ok(Setup {
                    message: ServerSetup::Gcs(Gcs {
                        div,
                        hash_range,
                        bits,
                    }),
                    permutation: None,
                })
            }
            Sizing::Bloom {
                hash_functions,
                bytes,
            } => {
                let mut bits = vec![0u8; bytes];
                for element in &masked {
                    bloom::insert(&mut bits, hash_functions, element.as_ref());
                }
                Ok(Setup {
                    message: ServerSetup::Bloom(Bloom {
                        num_hash_functions: hash_functions,
                        bits,
                    }),
                    permutation: None,
                })
            }
        }
    }

    /// Re-masks a joiner's request: `k * element` for each, in request order, sorted by bytes
    /// when the request is size-only: [`check_request`](Self::check_request),
    /// [`remask`](Self::remask), then [`response_from_remasked`](Self::response_from_remasked).
    ///
    /// Progress: one step per element.
    ///
    /// # Errors
    /// [`PsiError::ModeMismatch`] if the request's mode is not this starter's;
    /// [`PsiError::Element`] for the first element (in request order) that is not on the curve;
    /// [`PsiError::Cancelled`] and runtime failures.
    pub fn respond(
        &self,
        pool: &Pool,
        control: &Control,
        request: &Request,
    ) -> Result<Response, PsiError> {
        self.check_request(request)?;
        let elements = self.remask(pool, control, &request.elements, 0)?;
        Ok(self.response_from_remasked(elements))
    }

    /// Whether this starter answers `request`: its mode is this starter's.
    ///
    /// # Errors
    /// [`PsiError::ModeMismatch`].
    pub fn check_request(&self, request: &Request) -> Result<(), PsiError> {
        if request.mode == self.mode {
            Ok(())
        } else {
            Err(PsiError::ModeMismatch {
                request: request.mode,
                starter: self.mode,
            })
        }
    }

    /// `k * element` for each of `elements`, in order: a request's elements, whole or a part
    /// of them starting at request index `first` (errors name request indexes).
    ///
    /// Progress: one step per element.
    ///
    /// # Errors
    /// [`PsiError::Element`] for the first element that is not on the curve;
    /// [`PsiError::Cancelled`] and runtime failures.
    pub fn remask(
        &self,
        pool: &Pool,
        control: &Control,
        elements: &[Element],
        first: usize,
    ) -> Result<Vec<Element>, PsiError> {
        Ok(pool.map_blocks(control, elements, BLOCK, |start, block| {
            (first + start..)
                .zip(self.cipher.reencrypt_batch(block))
                .map(|(index, e)| e.map_err(|e| element_error(MessageKind::Request, index, e)))
                .collect()
        })?)
    }

    /// The response of the re-masked request elements (from [`remask`](Self::remask), whole or
    /// concatenated from parts in order): in request order, or sorted by bytes for a size-only
    /// starter.
    pub fn response_from_remasked(&self, mut elements: Vec<Element>) -> Response {
        if self.mode == Mode::SizeOnly {
            elements.sort_unstable();
        }
        Response { elements }
    }

    /// `k * H(input)` for each input, in order: a setup's inputs, whole or a part of them.
    ///
    /// Progress: one step per input.
    ///
    /// # Errors
    /// [`PsiError::Cancelled`] and runtime failures.
    pub fn mask<T: AsRef<[u8]> + Sync>(
        &self,
        pool: &Pool,
        control: &Control,
        inputs: &[T],
    ) -> Result<Vec<Element>, PsiError> {
        Ok(pool.map_blocks(control, inputs, BLOCK, |_, block| {
            self.cipher.encrypt_batch(block)
        })?)
    }
}

/// One shard of a raw setup: its elements sorted by `(bytes, local index)`, with the local
/// permutation, offset to the whole input.
pub(crate) fn sorted_shard(elements: &[Element], offset: usize) -> SortedShard<Element> {
    let mut order: Vec<usize> = (0..elements.len()).collect();
    order.sort_unstable_by(|&a, &b| elements[a].cmp(&elements[b]).then(a.cmp(&b)));
    SortedShard {
        items: order.iter().map(|&i| elements[i]).collect(),
        permutation: order,
        offset,
    }
}
