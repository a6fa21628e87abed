//! `lockstep psi ...`: the two parties' commands over files.
//!
//! Messages on disk are the raw protobuf bytes, so they interoperate with OpenMined's packages.
//! Files are read and written under the rules of [`crate::files`]: no output over an input, all
//! outputs or none, nothing left behind by an interruption.

mod demo;
mod joiner;
mod keys;
mod link_files;
mod records;
mod sample;
mod starter;

use std::io::Write;
use std::time::{Duration, Instant};

use lockstep_psi::Backend;
use lockstep_shard::{Control, Pool, ShardPolicy};

use crate::args::{PsiArgs, PsiCommand};
use crate::files::{Files, Staged};
use crate::progress::StepBar;

/// What every PSI command runs with.
pub(crate) struct Context {
    pub(crate) policy: ShardPolicy,
    pub(crate) backend: Backend,
    pub(crate) quiet: bool,
    pub(crate) allow_open_key: bool,
}

/// A timed step with a progress bar.
pub(crate) struct Step {
    bar: StepBar,
    control: Control,
    started: Instant,
    rows: usize,
}

/// What a finished step measured.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timing {
    pub(crate) rows: usize,
    pub(crate) elapsed: Duration,
}

impl Timing {
    pub(crate) fn rows_per_second(&self) -> f64 {
        #[allow(clippy::cast_precision_loss, reason = "a rate for display")]
        let rows = self.rows as f64;
        rows / self.elapsed.as_secs_f64().max(1e-9)
    }
}

impl Context {
    /// A pool sized by the policy for `items` items; a worker count asked for (flag or
    /// environment) and lowered because the input is small is said so, never silently.
    pub(crate) fn pool(&self, items: usize) -> anyhow::Result<Pool> {
        let decision = self.policy.decide(items);
        if let Some(lowered) = decision.lowered {
            self.note(&lowered.to_string());
        }
        Ok(Pool::new(decision.workers)?)
    }

    /// Checks and stages a command's files (see [`Files::prepare`]), noting stale temporary
    /// files removed.
    pub(crate) fn prepare(&self, files: &Files) -> anyhow::Result<Staged> {
        files.prepare(&|line| self.note(line))
    }

    /// Starts a step over `rows` rows with a progress bar labelled `label`.
    pub(crate) fn step(&self, label: &str, rows: usize) -> Step {
        let bar = StepBar::start(label, Some(rows as u64), self.quiet);
        let control = Control::new().with_progress(bar.progress().clone());
        Step {
            bar,
            control,
            started: Instant::now(),
            rows,
        }
    }

    /// Prints a status line on stderr unless `--quiet`.
    pub(crate) fn note(&self, line: &str) {
        if !self.quiet {
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
    }
}

impl Step {
    pub(crate) fn control(&self) -> &Control {
        &self.control
    }

    pub(crate) fn finish(self) -> Timing {
        let elapsed = self.started.elapsed();
        self.bar.finish();
        Timing {
            rows: self.rows,
            elapsed,
        }
    }
}

/// Formats a count with thousands separators.
pub(crate) fn thousands(n: usize) -> String {
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

/// Runs a `lockstep psi` subcommand.
pub(crate) fn run(args: &PsiArgs, policy: ShardPolicy, quiet: bool) -> anyhow::Result<()> {
    let ctx = Context {
        policy,
        backend: args.backend,
        quiet,
        allow_open_key: args.allow_open_key,
    };
    match &args.command {
        PsiCommand::Key(command) => keys::key_command(&ctx, command),
        PsiCommand::Setup(a) => starter::setup(&ctx, a).map(drop),
        PsiCommand::Request(a) => joiner::request(&ctx, a).map(drop),
        PsiCommand::Respond(a) => starter::respond(&ctx, a).map(drop),
        PsiCommand::Intersect(a) => joiner::intersect(&ctx, a).map(drop),
        PsiCommand::Resolve(a) => starter::resolve(&ctx, a).map(drop),
        PsiCommand::Demo(a) => demo::run(&ctx, a),
    }
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
