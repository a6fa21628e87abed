//! The errors a parallel run can end with.

use std::any::Any;

/// Why a parallel run failed. A run fails as a whole: there is never partial output.
///
/// # Determinism
/// When several tasks fail, the error returned is the one at the lowest input position, whatever
/// the order in which the workers reached their failures: the same input gives the same error at
/// every worker count. (Cancellation is the exception: it comes from outside the input.)
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error<E> {
    /// A task returned an error.
    #[error("at input position {position}: {source}")]
    Task {
        /// The input position the error belongs to: the item for item-wise operations, the
        /// first item of the range for range-wise ones.
        position: usize,
        /// The task's own error.
        #[source]
        source: E,
    },
    /// A task panicked. The panic was caught on the worker; the process keeps running.
    #[error("a worker panicked at input position {position}: {message}")]
    Panic {
        /// The first input position of the task that panicked.
        position: usize,
        /// The panic message, if it was a string.
        message: String,
    },
    /// The run was cancelled through its [`CancelToken`](crate::CancelToken).
    #[error("cancelled")]
    Cancelled,
    /// An owner-partitioned update named a target outside the target set.
    #[error(
        "update at input position {position} names target {target}, but there are only {targets} targets"
    )]
    TargetOutOfRange {
        /// The update's position in its input.
        position: usize,
        /// The target it names.
        target: usize,
        /// The number of targets.
        targets: usize,
    },
}

impl<E> Error<E> {
    /// The input position the failure belongs to, if it has one.
    pub fn position(&self) -> Option<usize> {
        match self {
            Self::Task { position, .. }
            | Self::Panic { position, .. }
            | Self::TargetOutOfRange { position, .. } => Some(*position),
            Self::Cancelled => None,
        }
    }

    /// Whether this is [`Error::Cancelled`].
    pub fn is_cancelled(&self) -> bool {
        matches!(self, Self::Cancelled)
    }

    /// Converts the task error type, keeping everything else.
    pub fn map_task<F>(self, convert: impl FnOnce(E) -> F) -> Error<F> {
        match self {
            Self::Task { position, source } => Error::Task {
                position,
                source: convert(source),
            },
            Self::Panic { position, message } => Error::Panic { position, message },
            Self::Cancelled => Error::Cancelled,
            Self::TargetOutOfRange {
                position,
                target,
                targets,
            } => Error::TargetOutOfRange {
                position,
                target,
                targets,
            },
        }
    }
}

/// The text of a caught panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with a non-text payload".to_owned()
    }
}

/// Errors building a [`Pool`](crate::Pool).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PoolError {
    /// The operating system refused to start the worker threads.
    #[error("could not start {workers} worker threads: {source}")]
    Spawn {
        /// The number of threads asked for.
        workers: usize,
        /// Rayon's error.
        #[source]
        source: rayon::ThreadPoolBuildError,
    },
}
