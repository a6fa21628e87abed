//! What a run holds in memory ([`RunMemory`]), known from its inputs before any output is
//! allocated, and the element count a run's inputs give.

use lockstep_shard::Pool;

use crate::{ArrayRef, DType, Plan, RunError, bind};

/// What a run over given inputs holds in memory.
///
/// # Memory
/// A run (as `lockstep plan run` does it) holds `inputs + outputs + working` bytes, plus a
/// 64 KiB chunk while a file is read or written: inputs and outputs are read and written a chunk
/// at a time, never copied whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunMemory {
    /// Bytes of the input arrays.
    pub inputs: u64,
    /// Bytes of the output arrays (each as long as its view needs).
    pub outputs: u64,
    /// Bytes of working memory ([`Plan::working_bytes`]).
    pub working: u64,
}

impl RunMemory {
    /// All of it.
    pub fn total(&self) -> u64 {
        self.inputs
            .saturating_add(self.outputs)
            .saturating_add(self.working)
    }

    /// `Ok` if the whole run fits `budget` bytes.
    ///
    /// # Errors
    /// [`RunError::OverMemoryBudget`] otherwise.
    pub fn check(&self, budget: Option<u64>) -> Result<(), RunError> {
        match budget {
            Some(budget) if self.total() > budget => Err(RunError::OverMemoryBudget {
                inputs: self.inputs,
                outputs: self.outputs,
                working: self.working,
                budget,
            }),
            _ => Ok(()),
        }
    }
}

impl Plan {
    /// What a run over `inputs` on `pool` holds: the inputs, the outputs (each as long as its
    /// view needs) and the working memory, known before the outputs are allocated.
    ///
    /// # Errors
    /// As [`output_arrays`](Self::output_arrays) for inputs that do not match the plan.
    pub fn memory(&self, inputs: &[ArrayRef<'_>], pool: &Pool) -> Result<RunMemory, RunError> {
        let n = bind::bind_inputs(self, inputs)?.ok_or_else(|| RunError::Binding {
            at: "inputs".to_owned(),
            message: "nothing fixes the number of elements (no input, no view length)".to_owned(),
        })?;
        let bytes = |len: usize, dtype: DType| (len as u64).saturating_mul(dtype.size() as u64);
        let outputs = self
            .outputs
            .iter()
            .map(|o| {
                let span = o.view.span(n).unwrap_or(u64::MAX);
                span.saturating_mul(o.dtype.size() as u64)
            })
            .fold(0u64, u64::saturating_add);
        Ok(RunMemory {
            inputs: inputs
                .iter()
                .map(|a| bytes(a.len(), a.dtype()))
                .fold(0, u64::saturating_add),
            outputs,
            // A count past this target's addresses is held as the most it addresses: the
            // working memory is per block, and grows with the count only up to a block a task.
            working: self.working_bytes(usize::try_from(n).unwrap_or(usize::MAX), pool),
        })
    }

    /// The most bytes of elements input `index` can usefully hold: its view's span over the
    /// plan's fixed length, `None` when the inputs fix the length (a file or pipe is then read
    /// as far as memory allows).
    pub fn input_capacity(&self, index: usize) -> Option<u64> {
        let input = self.inputs.get(index)?;
        let n = self.length?;
        let span = input.view.span(n)?;
        Some(span.saturating_mul(input.dtype.size() as u64))
    }

    /// The number of elements a run over `inputs` computes: the plan's fixed length, else what
    /// the first input's view takes from its array.
    ///
    /// # Errors
    /// [`RunError::Binding`] if the plan has neither inputs nor a fixed length.
    pub fn element_count(&self, inputs: &[ArrayRef<'_>]) -> Result<usize, RunError> {
        let n = match (self.length, self.inputs.first(), inputs.first()) {
            (Some(n), _, _) => n,
            (None, Some(input), Some(array)) => input.view.fitting(array.len()),
            _ => {
                return Err(RunError::Binding {
                    at: "inputs".to_owned(),
                    message: "nothing fixes the number of elements (no input, no view length)"
                        .to_owned(),
                });
            }
        };
        usize::try_from(n).map_err(|_| RunError::Binding {
            at: "inputs".to_owned(),
            message: format!("{n} elements are more than this machine addresses"),
        })
    }
}
