//! The joiner: the party that asks which of its records the starter holds (OpenMined's client).

use lockstep_shard::{Control, Pool};

use crate::backend::{BLOCK, Cipher};
use crate::curve::Element;
use crate::error::MessageKind;
use crate::error::element_error;
use crate::{Backend, Key, Mode, PsiError, Request, Response, ServerSetup, bloom, gcs};

/// One matching pair of the association table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Match {
    /// The position in the starter's raw setup (the starter maps it to its input row through its
    /// permutation).
    pub setup_position: usize,
    /// The index of the joiner's input (its request position).
    pub joiner_index: usize,
}

/// The party that masks its set into a request and reads the starter's answer.
///
/// # Determinism
/// Every output is byte-identical at every worker count to [`reference`](crate::reference).
/// Intersections are reported in ascending joiner index; every joiner index whose value the
/// setup holds is reported, duplicates included (OpenMined's raw intersection reports a
/// repeated joiner value once per starter copy; set semantics are used here).
pub struct Joiner {
    pub(crate) cipher: Cipher,
    pub(crate) mode: Mode,
}

/// The positions of a raw setup (sorted) holding `element`.
fn positions(elements: &[Element], element: &Element) -> std::ops::Range<usize> {
    let start = elements.partition_point(|e| e < element);
    let end = elements.partition_point(|e| e <= element);
    start..end
}

impl Joiner {
    /// A joiner with `key` that makes requests of `mode`, computing on `backend`.
    ///
    /// # Errors
    /// [`PsiError::Backend`] if the backend is not compiled in or fails to start.
    pub fn new(key: &Key, mode: Mode, backend: Backend) -> Result<Self, PsiError> {
        Ok(Self {
            cipher: Cipher::new(key, backend)?,
            mode,
        })
    }

    /// The mode of this joiner's requests.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Masks `inputs` into a request, in input order: [`mask`](Self::mask) then
    /// [`request_from_masked`](Self::request_from_masked).
    ///
    /// Progress: one step per input.
    ///
    /// # Errors
    /// [`PsiError::EmptySet`] for no inputs; [`PsiError::Cancelled`] and runtime failures.
    pub fn request<T: AsRef<[u8]> + Sync>(
        &self,
        pool: &Pool,
        control: &Control,
        inputs: &[T],
    ) -> Result<Request, PsiError> {
        if inputs.is_empty() {
            return Err(PsiError::EmptySet("joiner's"));
        }
        let elements = self.mask(pool, control, inputs)?;
        self.request_from_masked(elements)
    }

    /// `k * H(input)` for each input, in order: a request's inputs, whole or a part of them.
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

    /// The request of the masked inputs (from [`mask`](Self::mask), whole or concatenated from
    /// parts in order), in this joiner's mode.
    ///
    /// # Errors
    /// [`PsiError::EmptySet`] for no elements.
    pub fn request_from_masked(&self, elements: Vec<Element>) -> Result<Request, PsiError> {
        if elements.is_empty() {
            return Err(PsiError::EmptySet("joiner's"));
        }
        Ok(Request {
            mode: self.mode,
            elements,
        })
    }

    /// `k^-1 * element` for each of `elements`, in order: a response's elements, whole or a part
    /// of them starting at response index `first` (errors name response indexes).
    ///
    /// Progress: one step per element.
    ///
    /// # Errors
    /// [`PsiError::Element`] for the first element off the curve; [`PsiError::Cancelled`] and
    /// runtime failures.
    pub fn unmask(
        &self,
        pool: &Pool,
        control: &Control,
        elements: &[Element],
        first: usize,
    ) -> Result<Vec<Element>, PsiError> {
        Ok(pool.map_blocks(control, elements, BLOCK, |start, block| {
            (first + start..)
                .zip(self.cipher.decrypt_batch(block))
                .map(|(index, plain)| {
                    plain.map_err(|e| element_error(MessageKind::Response, index, e))
                })
                .collect()
        })?)
    }

    /// Checks that `response` can be read as this joiner means to read it, before any
    /// decryption: its length is `request_len`; with the `request` it answers, that the request
    /// has `request_len` elements and, for a revealing joiner, was not size-only; without it, for
    /// a revealing joiner, that the response is not sorted by bytes (a size-only response is, and
    /// reading it in request order would pair the wrong rows). Eight or more sorted elements are
    /// no accident (a chance of 1 in 40,320); below eight, only the request can tell.
    ///
    /// # Errors
    /// [`PsiError::ResponseLength`], [`PsiError::RequestLength`], [`PsiError::SizeOnlyRequest`],
    /// [`PsiError::ResponseOrderUnknown`], [`PsiError::ResponseSorted`].
    pub fn check_response(
        &self,
        response: &Response,
        request_len: usize,
        request: Option<&Request>,
    ) -> Result<(), PsiError> {
        self.check_response_facts(
            response.elements.len(),
            || response.elements.windows(2).all(|w| w[0] <= w[1]),
            request_len,
            request.map(|r| (r.elements.len(), r.mode)),
        )
    }

    /// [`check_response`](Self::check_response) on what reading the messages found, for
    /// messages too large to hold: the response's length and whether its elements are sorted
    /// by bytes (asked only when it matters), the request's length and mode.
    ///
    /// # Errors
    /// As [`check_response`](Self::check_response).
    pub fn check_response_facts(
        &self,
        response_len: usize,
        response_sorted: impl FnOnce() -> bool,
        request_len: usize,
        request: Option<(usize, Mode)>,
    ) -> Result<(), PsiError> {
        if response_len != request_len {
            return Err(PsiError::ResponseLength {
                response: response_len,
                request: request_len,
            });
        }
        match request {
            Some((len, mode)) => {
                if len != request_len {
                    return Err(PsiError::RequestLength {
                        request: len,
                        expected: request_len,
                    });
                }
                if mode == Mode::SizeOnly && self.mode == Mode::Reveal {
                    return Err(PsiError::SizeOnlyRequest);
                }
            }
            None if self.mode == Mode::Reveal => {
                if request_len < SORTED_BY_CHANCE {
                    return Err(PsiError::ResponseOrderUnknown(request_len));
                }
                if response_sorted() {
                    return Err(PsiError::ResponseSorted);
                }
            }
            None => {}
        }
        Ok(())
    }

    /// The joiner indexes (ascending) whose values the starter's setup holds: the response
    /// [`unmask`](Self::unmask)ed, then [`intersect_unmasked`](Self::intersect_unmasked).
    ///
    /// `request_len` is the number of elements of the request `response` answers: a response of
    /// another length is refused rather than misread.
    ///
    /// Progress: one step per response element.
    ///
    /// # Errors
    /// [`PsiError::SizeOnly`] for a size-only joiner; [`PsiError::ResponseLength`];
    /// [`PsiError::InvalidSetup`] for a GCS that does not decode; [`PsiError::Element`] for a
    /// response element off the curve; [`PsiError::Cancelled`] and runtime failures.
    pub fn intersect(
        &self,
        pool: &Pool,
        control: &Control,
        setup: &ServerSetup,
        response: &Response,
        request_len: usize,
    ) -> Result<Vec<usize>, PsiError> {
        if self.mode == Mode::SizeOnly {
            return Err(PsiError::SizeOnly);
        }
        check_length(response, request_len)?;
        setup.validate()?;
        let unmasked = self.unmask(pool, control, &response.elements, 0)?;
        self.intersect_unmasked(setup, &unmasked)
    }

    /// [`intersect`](Self::intersect) over the response's elements already unmasked (whole, or
    /// concatenated from parts in order), the response's length checked by the caller.
    ///
    /// # Errors
    /// [`PsiError::SizeOnly`]; [`PsiError::InvalidSetup`].
    pub fn intersect_unmasked(
        &self,
        setup: &ServerSetup,
        unmasked: &[Element],
    ) -> Result<Vec<usize>, PsiError> {
        if self.mode == Mode::SizeOnly {
            return Err(PsiError::SizeOnly);
        }
        let found = membership(setup, unmasked)?;
        Ok(found
            .iter()
            .enumerate()
            .filter_map(|(i, &hit)| hit.then_some(i))
            .collect())
    }

    /// The number of the joiner's elements the starter's setup holds. Works in both modes.
    ///
    /// # Errors
    /// As [`intersect`](Self::intersect), except [`PsiError::SizeOnly`].
    pub fn intersection_size(
        &self,
        pool: &Pool,
        control: &Control,
        setup: &ServerSetup,
        response: &Response,
        request_len: usize,
    ) -> Result<usize, PsiError> {
        check_length(response, request_len)?;
        setup.validate()?;
        let unmasked = self.unmask(pool, control, &response.elements, 0)?;
        Self::intersection_size_unmasked(setup, &unmasked)
    }

    /// [`intersection_size`](Self::intersection_size) over unmasked elements.
    ///
    /// # Errors
    /// [`PsiError::InvalidSetup`].
    pub fn intersection_size_unmasked(
        setup: &ServerSetup,
        unmasked: &[Element],
    ) -> Result<usize, PsiError> {
        Ok(membership(setup, unmasked)?
            .iter()
            .filter(|&&hit| hit)
            .count())
    }

    /// Every matching pair `(setup position, joiner index)` between a raw setup and the
    /// response, duplicates included, sorted by setup position, ties by joiner index.
    ///
    /// # Errors
    /// [`PsiError::NotRaw`] for a GCS or Bloom setup; otherwise as [`intersect`](Self::intersect).
    pub fn association_table(
        &self,
        pool: &Pool,
        control: &Control,
        setup: &ServerSetup,
        response: &Response,
        request_len: usize,
    ) -> Result<Vec<Match>, PsiError> {
        if self.mode == Mode::SizeOnly {
            return Err(PsiError::SizeOnly);
        }
        let ServerSetup::Raw(_) = setup else {
            return Err(PsiError::NotRaw(setup.format_name()));
        };
        check_length(response, request_len)?;
        setup.validate()?;
        let unmasked = self.unmask(pool, control, &response.elements, 0)?;
        self.association_table_unmasked(setup, &unmasked)
    }

    /// [`association_table`](Self::association_table) over unmasked elements.
    ///
    /// # Errors
    /// [`PsiError::SizeOnly`]; [`PsiError::NotRaw`]; [`PsiError::InvalidSetup`].
    pub fn association_table_unmasked(
        &self,
        setup: &ServerSetup,
        unmasked: &[Element],
    ) -> Result<Vec<Match>, PsiError> {
        if self.mode == Mode::SizeOnly {
            return Err(PsiError::SizeOnly);
        }
        let ServerSetup::Raw(elements) = setup else {
            return Err(PsiError::NotRaw(setup.format_name()));
        };
        setup.validate()?;
        let mut table: Vec<Match> = unmasked
            .iter()
            .enumerate()
            .flat_map(|(joiner_index, plain)| {
                positions(elements, plain).map(move |setup_position| Match {
                    setup_position,
                    joiner_index,
                })
            })
            .collect();
        table.sort_unstable();
        Ok(table)
    }
}

/// For each unmasked response element, whether the setup holds it.
fn membership(setup: &ServerSetup, unmasked: &[Element]) -> Result<Vec<bool>, PsiError> {
    setup.validate()?;
    match setup {
        ServerSetup::Raw(elements) => Ok(unmasked
            .iter()
            .map(|plain| elements.binary_search(plain).is_ok())
            .collect()),
        // A GCS is walked once beside the joiner's sorted hashes, never decoded whole.
        ServerSetup::Gcs(g) => {
            let hashes: Vec<u64> = unmasked
                .iter()
                .map(|plain| gcs::element_hash(plain.as_ref(), g.hash_range))
                .collect();
            gcs::members(&g.bits, g.div, &hashes)
        }
        ServerSetup::Bloom(b) => Ok(unmasked
            .iter()
            .map(|plain| bloom::contains(&b.bits, b.num_hash_functions, plain.as_ref()))
            .collect()),
    }
}

/// Elements from which a response sorted by bytes is taken for a size-only response: a
/// revealing response of 8 random elements is sorted with probability 1 / 8! = 1 / 40,320.
const SORTED_BY_CHANCE: usize = 8;

fn check_length(response: &Response, request_len: usize) -> Result<(), PsiError> {
    if response.elements.len() == request_len {
        Ok(())
    } else {
        Err(PsiError::ResponseLength {
            response: response.elements.len(),
            request: request_len,
        })
    }
}
