//! A call's worker count by the CLI's rule, one for every engine the face serves.

use lockstep_shard::{DEFAULT_CAP, Grain, ShardPolicy, WORKERS_ENV};

use crate::Coded;

/// The most workers a call may ask for: the shard policy's cap.
pub const MAX_WORKERS: usize = DEFAULT_CAP;

/// The workers a call over `items` (in `grain`'s unit) takes: `asked` (at most
/// [`MAX_WORKERS`]), or for 0 the shard policy's count by the CLI's rule (`LOCKSTEP_WORKERS`
/// where set, else the detected parallelism, lowered for a small call).
///
/// # Errors
/// `code` (the engine's usage code) past [`MAX_WORKERS`] or for a `LOCKSTEP_WORKERS` that is
/// not a count.
pub fn by_policy(
    asked: u32,
    items: usize,
    grain: Grain,
    code: &'static str,
) -> Result<usize, Coded> {
    match asked as usize {
        0 => Ok(ShardPolicy::detected()
            .with_env_value(std::env::var(WORKERS_ENV).ok().as_deref())
            .map_err(|e| Coded::new(code, format!("workers: {e}")))?
            .workers_for(items, grain)),
        n if n > MAX_WORKERS => Err(Coded::new(
            code,
            format!("workers: at most {MAX_WORKERS}, not {n}"),
        )),
        n => Ok(n),
    }
}
