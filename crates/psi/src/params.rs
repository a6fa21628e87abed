//! What a starter's setup is built with.

use std::str::FromStr;

use crate::{PsiError, bloom, gcs};

/// The form of a setup message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SetupFormat {
    /// The masked elements, sorted: exact, 33 bytes per element, supports the association table.
    Raw,
    /// A Golomb-compressed set of element hashes: a few bytes per element, false positives at
    /// the chosen rate.
    Gcs,
    /// A Bloom filter: fastest to query, false positives at the chosen rate.
    Bloom,
}

impl FromStr for SetupFormat {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "raw" => Ok(Self::Raw),
            "gcs" => Ok(Self::Gcs),
            "bloom" => Ok(Self::Bloom),
            other => Err(format!(
                "unknown setup format {other:?}: expected raw, gcs or bloom"
            )),
        }
    }
}

/// Parameters of a setup, as OpenMined's `CreateSetupMessage` takes them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SetupParams {
    /// The form of the message.
    pub format: SetupFormat,
    /// The false-positive rate for the joiner's whole query, in (0, 1). Each of the joiner's
    /// elements is tested at `fpr / joiner_count`. Checked for every format, used by GCS and Bloom.
    pub fpr: f64,
    /// How many elements the joiner will query with (at least 1).
    pub joiner_count: u64,
}

/// The validated sizing of a setup: every check a setup needs before any work, shared by the
/// engine and the serial reference so that both refuse exactly the same parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Sizing {
    Raw,
    Gcs {
        hash_range: u64,
        max_elements: u64,
        fpr: f64,
    },
    Bloom {
        hash_functions: u32,
        /// The filter's length, allocatable on this target.
        bytes: usize,
    },
}

impl SetupParams {
    /// The false-positive rate every front end uses when none is given: one in a billion for
    /// the joiner's whole query.
    pub const DEFAULT_FPR: f64 = 1e-9;

    /// Checks what can be checked before the starter's set is known: the rate is in (0, 1) and
    /// the joiner count at least 1. [`Starter::setup`](crate::Starter::setup) checks it too; a
    /// front end may call it first to refuse bad flags before any work.
    ///
    /// # Errors
    /// [`PsiError::FalsePositiveRate`], [`PsiError::JoinerCount`].
    pub fn validate(&self) -> Result<(), PsiError> {
        if !(self.fpr > 0.0 && self.fpr < 1.0) {
            return Err(PsiError::FalsePositiveRate(self.fpr));
        }
        if self.joiner_count == 0 {
            return Err(PsiError::JoinerCount);
        }
        Ok(())
    }

    /// Checks the parameters against a starter set of `starter_count` elements: what
    /// [`Starter::setup`](crate::Starter::setup) refuses before any masking, for a front end that
    /// masks in parts elsewhere.
    ///
    /// # Errors
    /// [`PsiError::FalsePositiveRate`], [`PsiError::JoinerCount`], [`PsiError::EmptySet`],
    /// [`PsiError::GcsTooLarge`], [`PsiError::SetupTooLarge`].
    pub fn check(&self, starter_count: usize) -> Result<(), PsiError> {
        self.sizing(starter_count).map(|_| ())
    }

    /// Checks the parameters against a starter set of `starter_count` elements and derives the
    /// sizes OpenMined would: `fpr_c = fpr / joiner_count`, `n = max(joiner_count, starter_count)`.
    ///
    /// # Errors
    /// [`PsiError::FalsePositiveRate`], [`PsiError::JoinerCount`], [`PsiError::EmptySet`],
    /// [`PsiError::GcsTooLarge`], [`PsiError::SetupTooLarge`].
    pub(crate) fn sizing(&self, starter_count: usize) -> Result<Sizing, PsiError> {
        self.validate()?;
        if starter_count == 0 {
            return Err(PsiError::EmptySet("starter's"));
        }
        self.sized(starter_count)
    }

    /// [`sizing`](Self::sizing) for a starter set that may be empty, as OpenMined's API sizes
    /// one ([`compat`](crate::compat)): the rate and joiner count checked, then the sizes.
    ///
    /// # Errors
    /// [`PsiError::FalsePositiveRate`], [`PsiError::JoinerCount`], [`PsiError::GcsTooLarge`],
    /// [`PsiError::SetupTooLarge`].
    pub(crate) fn sized(&self, starter_count: usize) -> Result<Sizing, PsiError> {
        self.validate()?;
        self.sizes(starter_count)
    }

    /// The sizes as OpenMined's API checks them ([`compat`](crate::compat)): the joiner count at
    /// least 1 and the corrected rate `fpr / joiner_count` in (0, 1) (a rate of 1.5 for 10
    /// joiner values is taken), then the same sizes as [`sized`](Self::sized).
    ///
    /// # Errors
    /// [`PsiError::JoinerCount`], [`PsiError::FalsePositiveRate`] (naming the rate given),
    /// [`PsiError::GcsTooLarge`], [`PsiError::SetupTooLarge`].
    pub(crate) fn sized_as_openmined(&self, starter_count: usize) -> Result<Sizing, PsiError> {
        if self.joiner_count == 0 {
            return Err(PsiError::JoinerCount);
        }
        #[allow(
            clippy::cast_precision_loss,
            reason = "as OpenMined computes it, in doubles"
        )]
        let corrected = self.fpr / self.joiner_count as f64;
        if !(corrected > 0.0 && corrected < 1.0) {
            return Err(PsiError::FalsePositiveRate(self.fpr));
        }
        self.sizes(starter_count)
    }

    /// The sizes of a setup of `starter_count` elements, the parameters checked by the caller.
    fn sizes(&self, starter_count: usize) -> Result<Sizing, PsiError> {
        #[allow(
            clippy::cast_precision_loss,
            reason = "as OpenMined computes it, in doubles"
        )]
        let corrected = self.fpr / self.joiner_count as f64;
        let max_elements = self.joiner_count.max(starter_count as u64);
        Ok(match self.format {
            SetupFormat::Raw => Sizing::Raw,
            SetupFormat::Gcs => Sizing::Gcs {
                hash_range: gcs::hash_range(max_elements, self.joiner_count, self.fpr)?,
                max_elements,
                fpr: corrected,
            },
            SetupFormat::Bloom => {
                let (hash_functions, bytes) = bloom::parameters(max_elements, corrected)?;
                Sizing::Bloom {
                    hash_functions,
                    bytes: usize::try_from(bytes).map_err(|_| PsiError::SetupTooLarge {
                        format: "bloom",
                        elements: max_elements,
                        fpr: corrected,
                    })?,
                }
            }
        })
    }
}
