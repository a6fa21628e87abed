//! What every command runs with: the worker policy (asked in each engine's grain), status lines,
//! progress bars and timed steps. One session per invocation, whatever the engine.

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use lockstep_files::{Files, Staged};
use lockstep_shard::{Control, Grain, Pool, ShardPolicy};

use crate::progress::StepBar;

/// The policy and the `--quiet` flag of one invocation.
#[derive(Clone, Debug)]
pub(crate) struct Session {
    policy: ShardPolicy,
    quiet: bool,
}

/// A timed step with a progress bar.
pub(crate) struct Step {
    bar: StepBar,
    control: Control,
    started: Instant,
    items: u64,
}

/// What a finished step measured.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timing {
    /// The items the step counted (0 when it did not know).
    pub(crate) items: u64,
    pub(crate) elapsed: Duration,
}

impl Timing {
    /// Items per second, for display.
    pub(crate) fn per_second(&self) -> f64 {
        #[allow(clippy::cast_precision_loss, reason = "a rate for display")]
        let items = self.items as f64;
        items / self.elapsed.as_secs_f64().max(1e-9)
    }
}

impl Session {
    pub(crate) fn new(policy: ShardPolicy, quiet: bool) -> Self {
        Self { policy, quiet }
    }

    /// This session, printing nothing (the demo runs the commands quietly).
    pub(crate) fn quietly(&self) -> Self {
        Self {
            policy: self.policy.clone(),
            quiet: true,
        }
    }

    /// The worker count for `work` units of an engine's `grain`, as [`pool`](Self::pool) would
    /// start it, without a note.
    pub(crate) fn workers_for(&self, work: usize, grain: Grain) -> usize {
        self.policy.workers_for(work, grain)
    }

    /// A pool sized by the policy for `work` units of the engine's `grain`; a worker count asked
    /// for (flag or environment) and lowered because the input is small is said so, never
    /// silently.
    /// The workers the policy gives `work` in `grain` (for a pool made elsewhere).
    pub(crate) fn workers(&self, work: usize, grain: Grain) -> usize {
        self.policy.decide(work, grain).workers
    }

    pub(crate) fn pool(&self, work: usize, grain: Grain) -> anyhow::Result<Pool> {
        let decision = self.policy.decide(work, grain);
        if let Some(lowered) = decision.lowered {
            self.note(&lowered.to_string());
        }
        Ok(Pool::new(decision.workers)?)
    }

    /// A pool for a step whose work is not known before it ends (an external sort of a file's
    /// rows): the policy's workers for unbounded work. A lowered request is noted by the pool
    /// of the step's counted work.
    pub(crate) fn sort_pool(&self) -> anyhow::Result<Pool> {
        Ok(Pool::new(
            self.policy.decide(usize::MAX, Grain::ITEMS).workers,
        )?)
    }

    /// Checks and stages a command's files (see [`Files::prepare`]), noting stale temporary
    /// files removed.
    pub(crate) fn prepare(&self, files: &Files) -> anyhow::Result<Staged> {
        Ok(files.prepare(&|line| self.note(line))?)
    }

    /// Starts a step over `total` items (`None`: unknown) counted in `unit`, with a progress bar
    /// labelled `label`.
    pub(crate) fn step(&self, label: &str, total: Option<u64>, unit: &str) -> Step {
        let bar = StepBar::counting(label, total, unit, self.quiet);
        let control = Control::new().with_progress(bar.progress().clone());
        Step {
            bar,
            control,
            started: Instant::now(),
            items: total.unwrap_or(0),
        }
    }

    /// Prints `text` on standard output, the command's result (whatever `--quiet` says),
    /// flushed; a failure (a full disk, a closed pipe) is an error naming standard output.
    pub(crate) fn print(&self, text: &str) -> anyhow::Result<()> {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .context("writing standard output")
    }

    /// Prints a status line on stderr unless `--quiet`.
    pub(crate) fn note(&self, line: &str) {
        if !self.quiet {
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
    }
}

impl Step {
    /// The control to hand to the engine: its progress feeds the bar.
    pub(crate) fn control(&self) -> &Control {
        &self.control
    }

    /// Ends the step: removes the bar and returns what it measured.
    pub(crate) fn finish(self) -> Timing {
        let elapsed = self.started.elapsed();
        self.bar.finish();
        Timing {
            items: self.items,
            elapsed,
        }
    }
}

/// A count with thousands separators: `1,234,567`.
pub(crate) fn thousands(n: impl std::fmt::Display) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1 worker`, `2 workers`.
pub(crate) fn workers(n: usize) -> String {
    if n == 1 {
        "1 worker".to_owned()
    } else {
        format!("{n} workers")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_as_words() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567u64), "1,234,567");
        assert_eq!(workers(1), "1 worker");
        assert_eq!(workers(3), "3 workers");
    }

    #[test]
    fn each_engine_is_asked_in_its_own_grain() {
        let policy = ShardPolicy::detected()
            .with_request(std::num::NonZeroUsize::new(2).unwrap(), "--workers")
            .unwrap();
        let session = Session::new(policy, true);
        // A 1M-element plan gets both workers; 123 keys stay on one.
        assert_eq!(session.workers_for(1 << 20, lockstep_plan::GRAIN), 2);
        assert_eq!(session.workers_for(123, lockstep_psi::GRAIN), 1);
        assert_eq!(session.workers_for(5118, lockstep_ceremony::GRAIN), 2);
    }
}
