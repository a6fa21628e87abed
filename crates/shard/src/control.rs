//! What a caller hands to every run: cancellation, progress and the watchdog.

use crate::{CancelToken, Progress, Watchdog};

/// The caller's handles on a run: a cancellation token, a progress sink, and the watchdog that
/// fails a run whose tasks fall silent.
///
/// `Control::default()` never cancels, reports nowhere and watches with
/// [`Watchdog::DEFAULT`]. Clones share the token and the sink.
#[derive(Clone, Debug, Default)]
pub struct Control {
    cancel: CancelToken,
    progress: Progress,
    watchdog: Watchdog,
}

impl Control {
    /// A control that never cancels and reports nowhere.
    pub fn new() -> Self {
        Self::default()
    }

    /// Uses `cancel` as this control's cancellation token.
    pub fn with_cancel(mut self, cancel: CancelToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Uses `progress` as this control's progress sink.
    pub fn with_progress(mut self, progress: Progress) -> Self {
        self.progress = progress;
        self
    }

    /// Uses `watchdog` for the runs of this control.
    pub fn with_watchdog(mut self, watchdog: Watchdog) -> Self {
        self.watchdog = watchdog;
        self
    }

    /// The watchdog setting.
    pub fn watchdog(&self) -> Watchdog {
        self.watchdog
    }

    /// A control for runs started inside a task of a run of this one: the same cancellation
    /// token and watchdog, no progress sink (the task reports its own progress; a nested run
    /// reporting to the same sink would count items twice).
    pub fn nested(&self) -> Self {
        Self {
            cancel: self.cancel.clone(),
            progress: Progress::none(),
            watchdog: self.watchdog,
        }
    }

    /// The cancellation token.
    pub fn cancel_token(&self) -> &CancelToken {
        &self.cancel
    }

    /// The progress sink.
    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// Whether the run has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}
