//! The errors a parallel run can end with.

use std::any::Any;

/// Why a parallel run failed. A run fails as a whole: there is never partial output.
///
/// # Determinism
/// When several tasks fail, the error returned is the one at the lowest input position, whatever
/// the order in which the workers reached their failures: the same input gives the same error at
/// every worker count. (Cancellation and stalls are the exceptions: they come from outside the
/// input. Cancellation wins over everything; an input failure wins over a stall.)
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
        /// The position the task last reported (its item in item-wise primitives; its block's or
        /// range's first position, or what it reported with [`Check::at`](crate::Check::at)).
        position: usize,
        /// The panic message, if it was a string.
        message: String,
    },
    /// The run was cancelled through its [`CancelToken`](crate::CancelToken).
    #[error("cancelled")]
    Cancelled,
    /// A task reported no progress for longer than the run's [`Watchdog`](crate::Watchdog)
    /// allows; every task was told to stop.
    #[error(
        "a worker stalled: the task starting at input position {position} reported no progress for {silent:.1?} (the watchdog allows {timeout:.1?})"
    )]
    Stalled {
        /// The silent task's first input position.
        position: usize,
        /// The task's index in the run.
        task: usize,
        /// How long it had been silent.
        silent: std::time::Duration,
        /// The timeout it passed.
        timeout: std::time::Duration,
    },
    /// The run's output (or a task's part of it) could not be allocated: an error, never an
    /// abort of the process ([`crate::memory`]).
    #[error("the run's output: {0}")]
    Memory(#[from] crate::memory::AllocError),
}

impl<E> Error<E> {
    /// The input position the failure belongs to, if it has one (cancellation and stalls
    /// come from outside the input and have none).
    pub fn position(&self) -> Option<usize> {
        match self {
            Self::Task { position, .. } | Self::Panic { position, .. } => Some(*position),
            Self::Cancelled | Self::Stalled { .. } | Self::Memory(_) => None,
        }
    }

    /// The same failure with its position moved `offset` later: the position of a run over a
    /// part of a larger input, in the larger input (budgeted branches report their failures
    /// this way).
    #[must_use]
    pub fn shifted(self, offset: usize) -> Self {
        match self {
            Self::Task { position, source } => Self::Task {
                position: position.saturating_add(offset),
                source,
            },
            Self::Panic { position, message } => Self::Panic {
                position: position.saturating_add(offset),
                message,
            },
            Self::Stalled {
                position,
                task,
                silent,
                timeout,
            } => Self::Stalled {
                position: position.saturating_add(offset),
                task,
                silent,
                timeout,
            },
            Self::Cancelled => Self::Cancelled,
            Self::Memory(error) => Self::Memory(error),
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
            Self::Stalled {
                position,
                task,
                silent,
                timeout,
            } => Error::Stalled {
                position,
                task,
                silent,
                timeout,
            },
            Self::Memory(error) => Error::Memory(error),
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
    #[error("could not start {workers} worker threads: {cause}")]
    Spawn {
        /// The number of threads asked for.
        workers: usize,
        /// Rayon's error, said in this one's message and not as its source: rayon's message
        /// already says its own source, the operating system's error, which a chain of
        /// sources would say twice more.
        cause: rayon::ThreadPoolBuildError,
    },
}
