//! Runtime instruction-set dispatch for the executor's tasks: the block runner compiled for
//! AVX2 + FMA, used when the CPU has them, else the baseline build. Both compute the same bits
//! (the kernels follow `elem`'s definitions, and no floating-point contraction or reassociation
//! is enabled on either). [`ISA_ENV`] forces the baseline (so an AVX2 machine tests it too).
//!
//! The only `unsafe` of this crate is here: calling a `#[target_feature]` function, which is
//! sound only on a CPU that has the features; [`Isa::Avx2`] is chosen only after
//! `is_x86_feature_detected!` says so.

use std::ops::Range;
use std::sync::OnceLock;

use lockstep_shard::Check;

use super::block::{TaskFailure, run_task_inline};
use super::fusion::{FusedRunner, execute_run};
use super::ir::Run;
use super::parts::{InPart, Outs};
use super::program::Program;
use crate::elem::Typed;
use crate::{Array, RunError};

/// The environment variable that chooses the executor's instruction set: `baseline` (the
/// portable build, on any CPU), `avx2+fma` (refused on a CPU without them), or `auto` / unset
/// (the best this CPU has). Read once per process; any other value fails every run, naming it.
pub const ISA_ENV: &str = "LOCKSTEP_PLAN_ISA";

/// An instruction set the executor's tasks are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    /// The target's baseline (SSE2 on x86-64).
    Baseline,
    /// AVX2 and FMA (x86-64 only; chosen only on a CPU that has them).
    Avx2,
}

impl Isa {
    /// Its name, as [`instruction_set`] reports it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Baseline => "baseline",
            Self::Avx2 => "avx2+fma",
        }
    }

    /// The instruction set for `setting` (the value of [`ISA_ENV`], `None` when unset) on a CPU
    /// that has AVX2 and FMA or not.
    ///
    /// # Errors
    /// A message naming the setting: an unknown value, or `avx2+fma` without the features.
    pub(crate) fn choose(setting: Option<&str>, has_avx2: bool) -> Result<Self, String> {
        let best = if has_avx2 { Self::Avx2 } else { Self::Baseline };
        match setting.map(str::trim) {
            None | Some("" | "auto") => Ok(best),
            Some("baseline") => Ok(Self::Baseline),
            Some("avx2+fma" | "avx2") if has_avx2 => Ok(Self::Avx2),
            Some("avx2+fma" | "avx2") => Err(format!(
                "{ISA_ENV}=avx2+fma, but this CPU has no AVX2 and FMA (use baseline or auto)"
            )),
            Some(other) => Err(format!(
                "{ISA_ENV}={other:?} is not an instruction set (baseline, avx2+fma or auto)"
            )),
        }
    }
}

/// Whether this CPU has AVX2 and FMA.
fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The instruction set of this process's runs ([`ISA_ENV`] read once).
///
/// # Errors
/// [`RunError::InstructionSet`] for a setting that cannot be honoured.
pub(crate) fn selected() -> Result<Isa, RunError> {
    static SELECTED: OnceLock<Result<Isa, String>> = OnceLock::new();
    SELECTED
        .get_or_init(|| Isa::choose(std::env::var(ISA_ENV).ok().as_deref(), has_avx2()))
        .clone()
        .map_err(RunError::InstructionSet)
}

/// The instruction set the executor uses in this process: `avx2+fma` or `baseline` (or, when
/// [`ISA_ENV`] holds a value that cannot be honoured, `invalid LOCKSTEP_PLAN_ISA`; every run then
/// fails naming it).
pub fn instruction_set() -> &'static str {
    selected().map_or("invalid LOCKSTEP_PLAN_ISA", Isa::name)
}

/// Runs one task with `isa` (from [`selected`]).
pub(crate) fn run_task(
    isa: Isa,
    program: &Program,
    ins: &[InPart<'_>],
    outs: &mut Outs<'_>,
    range: Range<usize>,
    check: &Check<'_>,
) -> Result<(), TaskFailure> {
    match isa {
        #[cfg(target_arch = "x86_64")]
        #[allow(unsafe_code)]
        // SAFETY: `Isa::Avx2` is chosen only when the CPU has AVX2 and FMA (`Isa::choose` with
        // `has_avx2`), the features the function is compiled for; it is otherwise an ordinary
        // safe function.
        Isa::Avx2 => unsafe { run_task_avx2(program, ins, outs, range, check) },
        _ => run_task_inline(program, ins, outs, range, check, &Baseline),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn run_task_avx2(
    program: &Program,
    ins: &[InPart<'_>],
    outs: &mut Outs<'_>,
    range: Range<usize>,
    check: &Check<'_>,
) -> Result<(), TaskFailure> {
    run_task_inline(program, ins, outs, range, check, &Avx2Fused)
}

/// Fused runs compiled for the baseline.
struct Baseline;

impl FusedRunner for Baseline {
    // One fused run over one block, compiled on its own (not inlined into the task's runner,
    // where the whole executor is one function) so the tile loop keeps its chain in registers.
    #[inline(never)]
    fn run<T: Typed>(
        &self,
        run: &Run,
        ins: &[InPart<'_>],
        slots: &mut [Array],
        start: usize,
        len: usize,
    ) {
        execute_run::<T>(run, ins, slots, start, len);
    }
}

/// Fused runs compiled for AVX2 and FMA: made only inside `run_task_avx2`, which runs only on a
/// CPU that has them.
#[cfg(target_arch = "x86_64")]
struct Avx2Fused;

#[cfg(target_arch = "x86_64")]
impl FusedRunner for Avx2Fused {
    #[inline(never)]
    fn run<T: Typed>(
        &self,
        run: &Run,
        ins: &[InPart<'_>],
        slots: &mut [Array],
        start: usize,
        len: usize,
    ) {
        #[allow(unsafe_code)]
        // SAFETY: an `Avx2Fused` exists only inside `run_task_avx2`, which runs only on a CPU
        // with AVX2 and FMA (see `run_task`).
        unsafe {
            run_fused_avx2::<T>(run, ins, slots, start, len);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn run_fused_avx2<T: Typed>(
    run: &Run,
    ins: &[InPart<'_>],
    slots: &mut [Array],
    start: usize,
    len: usize,
) {
    execute_run::<T>(run, ins, slots, start, len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_chooses_and_an_impossible_one_is_refused() {
        assert_eq!(Isa::choose(None, true), Ok(Isa::Avx2));
        assert_eq!(Isa::choose(Some("auto"), false), Ok(Isa::Baseline));
        assert_eq!(Isa::choose(Some("baseline"), true), Ok(Isa::Baseline));
        assert_eq!(Isa::choose(Some(" avx2+fma "), true), Ok(Isa::Avx2));
        assert!(
            Isa::choose(Some("avx2+fma"), false)
                .unwrap_err()
                .contains("this CPU has no AVX2")
        );
        assert_eq!(
            Isa::choose(Some("sse9"), true).unwrap_err(),
            "LOCKSTEP_PLAN_ISA=\"sse9\" is not an instruction set (baseline, avx2+fma or auto)"
        );
    }

    #[test]
    fn the_process_reports_what_it_runs() {
        // CI runs the plan tests once with LOCKSTEP_PLAN_ISA=baseline: both paths are tested.
        let expected = match std::env::var(ISA_ENV).ok().as_deref() {
            Some("baseline") => "baseline",
            _ if has_avx2() => "avx2+fma",
            _ => "baseline",
        };
        assert_eq!(instruction_set(), expected);
    }
}
