//! The joiner: the party that asks which of its records the starter holds (OpenMined's client).

use lockstep_shard::{Control, Pool};

use crate::backend::{BLOCK, Cipher};
use crate::curve::Element;
use crate::error::MessageKind;
use crate::starter::element_error;
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

    /// Masks `inputs` into a request, in input order.
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
        let elements = pool.map_blocks(control, inputs, BLOCK, |_, block| {
            self.cipher.encrypt_batch(block)
        })?;
        Ok(Request {
            mode: self.mode,
            elements,
        })
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
        check_length(response, request_len)?;
        match request {
            Some(request) => {
                if request.elements.len() != request_len {
                    return Err(PsiError::RequestLength {
                        request: request.elements.len(),
                        expected: request_len,
                    });
                }
                if request.mode == Mode::SizeOnly && self.mode == Mode::Reveal {
                    return Err(PsiError::SizeOnlyRequest);
                }
            }
            None if self.mode == Mode::Reveal => {
                if request_len < SORTED_BY_CHANCE {
                    return Err(PsiError::ResponseOrderUnknown(request_len));
                }
                if response.elements.windows(2).all(|w| w[0] <= w[1]) {
                    return Err(PsiError::ResponseSorted);
                }
            }
            None => {}
        }
        Ok(())
    }

    /// The joiner indexes (ascending) whose values the starter's setup holds.
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
        let found = self.membership(pool, control, setup, response, request_len)?;
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
        let found = self.membership(pool, control, setup, response, request_len)?;
        Ok(found.iter().filter(|&&hit| hit).count())
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
        let ServerSetup::Raw(elements) = setup else {
            return Err(PsiError::NotRaw(setup.format_name()));
        };
        setup.validate()?;
        let ranges = self.decrypted_map(pool, control, response, request_len, |plain| {
            positions(elements, plain)
        })?;
        let mut table: Vec<Match> = ranges
            .into_iter()
            .enumerate()
            .flat_map(|(joiner_index, positions)| {
                positions.map(move |setup_position| Match {
                    setup_position,
                    joiner_index,
                })
            })
            .collect();
        table.sort_unstable();
        Ok(table)
    }

    /// For each response element, whether the setup holds its decryption.
    fn membership(
        &self,
        pool: &Pool,
        control: &Control,
        setup: &ServerSetup,
        response: &Response,
        request_len: usize,
    ) -> Result<Vec<bool>, PsiError> {
        check_length(response, request_len)?;
        setup.validate()?;
        match setup {
            ServerSetup::Raw(elements) => {
                self.decrypted_map(pool, control, response, request_len, |plain| {
                    elements.binary_search(plain).is_ok()
                })
            }
            // A GCS is walked once beside the joiner's sorted hashes, never decoded whole.
            ServerSetup::Gcs(g) => {
                let hashes = self.decrypted_map(pool, control, response, request_len, |plain| {
                    gcs::element_hash(plain.as_ref(), g.hash_range)
                })?;
                gcs::members(&g.bits, g.div, &hashes)
            }
            ServerSetup::Bloom(b) => {
                self.decrypted_map(pool, control, response, request_len, |plain| {
                    bloom::contains(&b.bits, b.num_hash_functions, plain.as_ref())
                })
            }
        }
    }

    /// Decrypts each response element (checking the response's length first) and maps it with
    /// `look`, in response order.
    fn decrypted_map<T: Send>(
        &self,
        pool: &Pool,
        control: &Control,
        response: &Response,
        request_len: usize,
        look: impl Fn(&Element) -> T + Sync,
    ) -> Result<Vec<T>, PsiError> {
        check_length(response, request_len)?;
        Ok(
            pool.map_blocks(control, &response.elements, BLOCK, |first, block| {
                (first..)
                    .zip(self.cipher.decrypt_batch(block))
                    .map(|(index, plain)| {
                        plain
                            .map(|plain| look(&plain))
                            .map_err(|e| element_error(MessageKind::Response, index, e))
                    })
                    .collect()
            })?,
        )
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
