//! Progress bars on stderr, fed by the runtime's progress reports.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lockstep_shard::{Progress, Report};

/// One step's progress bar. Hidden when `--quiet` is given or stderr is not a terminal.
pub(crate) struct StepBar {
    bar: ProgressBar,
    progress: Progress,
    /// Redraws a shown bar between reports (a spinner, the rate), until the bar is done.
    ticker: Option<Ticker>,
}

/// A thread that ticks a bar every 200 ms until it is dropped. indicatif's own steady tick
/// spawns its thread with `std::thread::spawn`, which panics when no thread can start (under
/// `ulimit -v` or a thread limit): this one is started fallibly, and a bar without it only
/// redraws on reports.
struct Ticker {
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Ticker {
    fn start(bar: &ProgressBar) -> Option<Self> {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let bar = bar.clone();
        let thread = std::thread::Builder::new()
            .name("lockstep-progress".to_owned())
            .spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(Duration::from_millis(200))
                {
                    bar.tick();
                }
            })
            .ok()?;
        Some(Self { stop, thread })
    }

    fn stop(self) {
        drop(self.stop);
        let _ = self.thread.join();
    }
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
        // No thread for a hidden bar (--quiet, or stderr not a terminal).
        let ticker = if bar.is_hidden() {
            None
        } else {
            Ticker::start(&bar)
        };
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
        Self {
            bar,
            progress,
            ticker,
        }
    }

    /// The sink to hand to the runtime (in a `Control`).
    pub(crate) fn progress(&self) -> &Progress {
        &self.progress
    }

    /// Removes the bar.
    pub(crate) fn finish(mut self) {
        if let Some(ticker) = self.ticker.take() {
            ticker.stop();
        }
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
