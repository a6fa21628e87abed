//! Progress bars on stderr, fed by the runtime's progress reports.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lockstep_shard::{Progress, Report};

/// One step's progress bar. Hidden when `--quiet` is given or stderr is not a terminal.
pub(crate) struct StepBar {
    bar: ProgressBar,
    progress: Progress,
}

impl StepBar {
    /// A bar labelled `label`, for a step of `total` items (`None`: unknown, shows a spinner)
    /// counted in `unit` (`rows`, `points`, ...).
    pub(crate) fn counting(label: &str, total: Option<u64>, unit: &str, quiet: bool) -> Self {
        let target = if quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = ProgressBar::with_draw_target(total, target);
        let template = if total.is_some() {
            format!(
                "{{msg:>12}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit} {{per_sec}} eta {{eta}}"
            )
        } else {
            format!("{{msg:>12}} {{spinner}} {{human_pos}} {unit} {{per_sec}}")
        };
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(label.to_owned());
        bar.enable_steady_tick(Duration::from_millis(200));
        let progress = {
            let bar = bar.clone();
            Progress::new(move |report: Report| {
                if let Some(total) = report.total {
                    bar.set_length(total);
                }
                bar.set_position(report.done);
            })
        };
        progress.start(total);
        Self { bar, progress }
    }

    /// The sink to hand to the runtime (in a `Control`).
    pub(crate) fn progress(&self) -> &Progress {
        &self.progress
    }

    /// Removes the bar.
    pub(crate) fn finish(self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_shard::{Control, Pool};

    #[test]
    fn the_bar_follows_the_runtime() {
        let step = StepBar::counting("masking", Some(5000), "rows", true);
        let pool = Pool::new(2).unwrap();
        let control = Control::new().with_progress(step.progress().clone());
        let items: Vec<u32> = (0..5000).collect();
        pool.map_items(&control, &items, |_, &x| Ok::<_, ()>(x))
            .unwrap();
        assert_eq!(step.bar.position(), 5000);
        assert_eq!(step.bar.length(), Some(5000));
        step.finish();
    }
}
