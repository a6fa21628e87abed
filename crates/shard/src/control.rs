//! What a caller hands to every run: cancellation and progress.

use crate::{CancelToken, Progress};

/// The caller's handles on a run: a cancellation token and a progress sink.
///
/// `Control::default()` never cancels and reports nowhere. Clones share both handles.
#[derive(Clone, Debug, Default)]
pub struct Control {
    cancel: CancelToken,
    progress: Progress,
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
