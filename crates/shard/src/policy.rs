//! The shard policy: how many workers a run gets.

use std::num::NonZeroUsize;

/// Environment variable holding a worker-count override (a positive integer).
pub const WORKERS_ENV: &str = "LOCKSTEP_WORKERS";

/// Default [`ShardPolicy::cap`]: generous enough for 16+ core hosts, small enough that a typo
/// such as `--workers 10000` is refused instead of spawning ten thousand threads.
pub const DEFAULT_CAP: usize = 256;

const DEFAULT_CAP_NONZERO: NonZeroUsize = match NonZeroUsize::new(DEFAULT_CAP) {
    Some(cap) => cap,
    None => panic!("invariant: DEFAULT_CAP is positive"),
};

/// Where the worker count a policy starts from comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkerSource {
    /// `std::thread::available_parallelism` (1 if the platform cannot tell).
    Detected,
    /// The `LOCKSTEP_WORKERS` environment variable.
    Environment,
    /// An explicit request from the caller, named as the caller named it (a flag such as
    /// `--workers`, an option such as `workers`).
    Requested(&'static str),
}

impl WorkerSource {
    /// How a message names this source: `detected parallelism`, `LOCKSTEP_WORKERS`, or the
    /// caller's name for its request.
    pub fn name(self) -> &'static str {
        match self {
            Self::Detected => "detected parallelism",
            Self::Environment => WORKERS_ENV,
            Self::Requested(origin) => origin,
        }
    }
}

/// A worker count asked for (by a request or the environment) and lowered: a run must say so,
/// never lower a request silently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lowered {
    /// The count asked for.
    pub requested: usize,
    /// Where it was asked for.
    pub source: WorkerSource,
    /// The count used.
    pub workers: usize,
    /// Why.
    pub by: LoweredBy,
}

/// How much work a worker must get to be worth a thread, in the unit an engine counts its work
/// in: each engine exports its own (PSI keys, plan elements, ceremony points), and a run asks
/// the policy in that unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grain {
    /// The fewest units a worker gets (at least 1).
    pub min_per_worker: usize,
    /// The unit, plural, for messages: `keys`, `elements`, `points`.
    pub unit: &'static str,
}

impl Grain {
    /// At least `min_per_worker` (0 counts as 1) `unit` per worker.
    pub const fn new(min_per_worker: usize, unit: &'static str) -> Self {
        Self {
            min_per_worker: if min_per_worker == 0 {
                1
            } else {
                min_per_worker
            },
            unit,
        }
    }

    /// One item per worker: no minimum beyond one.
    pub const ITEMS: Self = Self::new(1, "items");
}

/// Why a requested worker count was lowered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoweredBy {
    /// The input is small: `items` units, at least `grain.min_per_worker` per worker.
    SmallInput {
        /// The run's work, in the grain's unit.
        items: usize,
        /// The engine's grain.
        grain: Grain,
    },
    /// The policy's cap, set after the request.
    Cap,
}

impl std::fmt::Display for Lowered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (name, asked, used) = (self.source.name(), self.requested, self.workers);
        match self.by {
            LoweredBy::SmallInput { items, grain } => write!(
                f,
                "{name} {asked} lowered to {used} for {items} {}: a worker gets at least {}",
                grain.unit, grain.min_per_worker
            ),
            LoweredBy::Cap => write!(f, "{name} {asked} lowered to {used}, the cap"),
        }
    }
}

/// The worker count of a run, and whether a request was lowered to reach it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The workers to use.
    pub workers: usize,
    /// Set when a requested count (flag, option or environment) was lowered for a small input.
    pub lowered: Option<Lowered>,
}

/// Errors in a worker-count setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The setting is not a positive integer.
    #[error("{origin} must be a positive whole number of workers, got {value:?}")]
    NotAPositiveInteger {
        /// Where the setting came from (`--workers`, `LOCKSTEP_WORKERS`).
        origin: &'static str,
        /// The text given.
        value: String,
    },
    /// The setting exceeds the cap.
    #[error("{origin} asks for {requested} workers, above the cap of {cap}")]
    OverCap {
        /// Where the setting came from.
        origin: &'static str,
        /// The number asked for.
        requested: usize,
        /// The policy's cap.
        cap: usize,
    },
}

/// Decides the worker count of a run. One function, [`decide`](Self::decide), holds the whole
/// rule, for a run of `work` units of an engine's [`Grain`]:
///
/// `workers = min(base, cap, max(1, work / grain.min_per_worker))`
///
/// where `base` is the explicit request if any, else the `LOCKSTEP_WORKERS` override if any, else
/// the detected parallelism. An explicit request above the cap is an error, not silently lowered;
/// the detected parallelism is capped silently; a request lowered for a small input is reported
/// by [`decide`](Self::decide) for the run to say so.
///
/// # Determinism
/// The worker count never changes output bytes (every parallel path in lockstep is byte-identical
/// to its serial reference); it only changes speed and memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardPolicy {
    requested: Option<NonZeroUsize>,
    source: WorkerSource,
    detected: NonZeroUsize,
    cap: NonZeroUsize,
}

impl ShardPolicy {
    /// The policy from the environment: `LOCKSTEP_WORKERS` if set, else the detected parallelism,
    /// with the default cap.
    ///
    /// # Errors
    /// [`PolicyError`] if `LOCKSTEP_WORKERS` is set to something other than a positive integer no
    /// larger than [`DEFAULT_CAP`].
    pub fn from_env() -> Result<Self, PolicyError> {
        let env = std::env::var(WORKERS_ENV).ok();
        Self::detected().with_env_value(env.as_deref())
    }

    /// The policy from the detected parallelism alone, ignoring the environment.
    pub fn detected() -> Self {
        let detected = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
        Self {
            requested: None,
            source: WorkerSource::Detected,
            detected,
            cap: DEFAULT_CAP_NONZERO,
        }
    }

    /// Applies a `LOCKSTEP_WORKERS` value (`None` or empty: unset).
    ///
    /// # Errors
    /// As [`from_env`](Self::from_env).
    pub fn with_env_value(self, value: Option<&str>) -> Result<Self, PolicyError> {
        match value.map(str::trim) {
            None | Some("") => Ok(self),
            Some(text) => {
                let n = parse_workers(WORKERS_ENV, text)?;
                self.request(n, WorkerSource::Environment, WORKERS_ENV)
            }
        }
    }

    /// Applies an explicit request, which overrides the environment; `origin` is how the caller
    /// names it in messages (a flag such as `--workers`, an option such as `workers`).
    ///
    /// # Errors
    /// [`PolicyError::OverCap`] (naming `origin`) if `workers` exceeds the cap.
    pub fn with_request(
        self,
        workers: NonZeroUsize,
        origin: &'static str,
    ) -> Result<Self, PolicyError> {
        self.request(workers, WorkerSource::Requested(origin), origin)
    }

    /// Sets the cap. Set it before applying requests, so that they are checked against it; a
    /// request made earlier is held to the new cap by [`base`](Self::base).
    pub fn with_cap(mut self, cap: NonZeroUsize) -> Self {
        self.cap = cap;
        self
    }

    /// Overrides the detected parallelism (for tests and for hosts that report it wrongly).
    pub fn with_detected(mut self, detected: NonZeroUsize) -> Self {
        self.detected = detected;
        self
    }

    /// The worker count for a run of `work` units of `grain`: see the type's documentation for
    /// the rule. Always at least 1, at most the cap.
    pub fn workers_for(&self, work: usize, grain: Grain) -> usize {
        self.decide(work, grain).workers
    }

    /// The worker count for a run of `work` units of `grain` (an engine's: so that small inputs
    /// stay on one worker), and, when a count that was asked for (not merely detected) is
    /// lowered by the grain, what to tell the user.
    pub fn decide(&self, work: usize, grain: Grain) -> Decision {
        let items = work;
        let by_work = (items / grain.min_per_worker.max(1)).max(1);
        let asked = self.requested.unwrap_or(self.detected).get();
        let base = self.base();
        let workers = base.min(by_work);
        let by = if workers < base {
            LoweredBy::SmallInput { items, grain }
        } else {
            LoweredBy::Cap
        };
        let lowered =
            (workers < asked && self.source != WorkerSource::Detected).then_some(Lowered {
                requested: asked,
                source: self.source,
                workers,
                by,
            });
        Decision { workers, lowered }
    }

    /// The worker count before the per-worker minimum is applied (the count for a large input).
    pub fn base(&self) -> usize {
        self.requested.unwrap_or(self.detected).min(self.cap).get()
    }

    /// Where [`base`](Self::base) comes from.
    pub fn source(&self) -> WorkerSource {
        self.source
    }

    /// The detected parallelism of this host.
    pub fn detected_parallelism(&self) -> usize {
        self.detected.get()
    }

    /// The cap.
    pub fn cap(&self) -> usize {
        self.cap.get()
    }

    fn request(
        mut self,
        n: NonZeroUsize,
        source: WorkerSource,
        origin: &'static str,
    ) -> Result<Self, PolicyError> {
        if n > self.cap {
            return Err(PolicyError::OverCap {
                origin,
                requested: n.get(),
                cap: self.cap.get(),
            });
        }
        self.requested = Some(n);
        self.source = source;
        Ok(self)
    }
}

/// Parses a worker count as given on a command line or in the environment.
///
/// # Errors
/// [`PolicyError::NotAPositiveInteger`] for anything but a decimal integer >= 1.
pub fn parse_workers(origin: &'static str, text: &str) -> Result<NonZeroUsize, PolicyError> {
    text.trim()
        .parse::<NonZeroUsize>()
        .map_err(|_| PolicyError::NotAPositiveInteger {
            origin,
            value: text.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nz(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).unwrap()
    }

    fn host(cores: usize) -> ShardPolicy {
        ShardPolicy::detected().with_detected(nz(cores))
    }

    const KEYS: Grain = Grain::new(256, "keys");

    #[test]
    fn detected_parallelism_is_the_default_and_is_capped() {
        assert_eq!(host(8).workers_for(1_000_000, Grain::ITEMS), 8);
        assert_eq!(host(8).source(), WorkerSource::Detected);
        assert_eq!(host(512).workers_for(1_000_000, Grain::ITEMS), DEFAULT_CAP);
        assert_eq!(
            host(8).with_cap(nz(4)).workers_for(1_000_000, Grain::ITEMS),
            4
        );
    }

    #[test]
    fn explicit_beats_environment_beats_detection() {
        let env = host(8).with_env_value(Some("3")).unwrap();
        assert_eq!((env.base(), env.source()), (3, WorkerSource::Environment));
        let explicit = env.with_request(nz(5), "--workers").unwrap();
        assert_eq!(
            (explicit.base(), explicit.source()),
            (5, WorkerSource::Requested("--workers"))
        );
        // Explicit counts may exceed the detected parallelism (tests run 5 workers on 2 cores).
        assert_eq!(host(2).with_request(nz(5), "workers").unwrap().base(), 5);
        assert_eq!(host(2).with_env_value(Some(" ")).unwrap().base(), 2);
    }

    #[test]
    fn bad_settings_are_clear_errors() {
        let err = host(2).with_env_value(Some("two")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "LOCKSTEP_WORKERS must be a positive whole number of workers, got \"two\""
        );
        assert!(matches!(
            host(2).with_env_value(Some("0")),
            Err(PolicyError::NotAPositiveInteger { .. })
        ));
        assert!(matches!(
            host(2).with_env_value(Some("-3")),
            Err(PolicyError::NotAPositiveInteger { .. })
        ));
        let err = host(2).with_request(nz(10_000), "--workers").unwrap_err();
        assert_eq!(
            err.to_string(),
            "--workers asks for 10000 workers, above the cap of 256"
        );
        let err = host(2)
            .with_request(nz(300), "the workers option")
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("the workers option asks for 300")
        );
    }

    #[test]
    fn small_inputs_stay_on_one_worker() {
        let p = host(16);
        let grain = Grain::new(1000, "points");
        assert_eq!(p.workers_for(0, grain), 1);
        assert_eq!(p.workers_for(999, grain), 1);
        assert_eq!(p.workers_for(1999, grain), 1);
        assert_eq!(p.workers_for(2000, grain), 2);
        assert_eq!(p.workers_for(10_000_000, grain), 16);
        assert_eq!(host(4).workers_for(3, Grain::new(0, "items")), 3);
        // Each engine's grain, on one policy: the grain decides, not the policy.
        assert_eq!(
            p.workers_for(1 << 20, Grain::new(32 * 1024, "elements")),
            16
        );
        assert_eq!(p.workers_for(1 << 20, Grain::new(1 << 19, "elements")), 2);
    }

    #[test]
    fn a_lowered_request_is_said_never_a_detected_count() {
        let p = host(16);
        assert_eq!(p.decide(1000, KEYS).lowered, None);
        let asked = p.clone().with_request(nz(5), "--workers").unwrap();
        let decision = asked.decide(700, KEYS);
        assert_eq!(decision.workers, 2);
        assert_eq!(
            decision.lowered.unwrap().to_string(),
            "--workers 5 lowered to 2 for 700 keys: a worker gets at least 256"
        );
        assert_eq!(asked.decide(5 * 256, KEYS).lowered, None);
        // A cap set after the request lowers it too, and says so.
        let capped = host(16)
            .with_request(nz(8), "--workers")
            .unwrap()
            .with_cap(nz(4));
        assert_eq!(
            capped.decide(1 << 20, KEYS).lowered.unwrap().to_string(),
            "--workers 8 lowered to 4, the cap"
        );
        let env = host(16).with_env_value(Some("4")).unwrap();
        assert!(
            env.decide(10, KEYS)
                .lowered
                .unwrap()
                .to_string()
                .starts_with("LOCKSTEP_WORKERS 4 lowered to 1")
        );
    }
}
