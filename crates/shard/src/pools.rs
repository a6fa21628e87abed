//! Pools kept for a long-lived process (a Node addon, a server): one per worker count asked,
//! made on first use and reused, with the threads they keep bounded.
//!
//! A pool per distinct count kept for the life of the process grows without bound: 24 runs
//! asking 1 to 24 workers kept 300 threads, and 1 to 256 would pass a machine's thread limit.
//! Here the pools kept hold at most [`Pools::keep`] threads in all: a new pool evicts the
//! least recently used ones until it fits (their threads end once the runs holding them end),
//! and a pool larger than the whole allowance is used for its run and not kept. A run always
//! gets a pool of exactly the workers it asked for: the count decides how its work is split
//! (and so which threads run), never its bytes.

use std::sync::{Arc, Mutex, PoisonError};

use crate::{Pool, PoolError};

/// The pools a process keeps, by worker count, at most `keep` threads in all.
#[derive(Debug)]
pub struct Pools {
    keep: usize,
    /// Most recently used last.
    kept: Mutex<Vec<Arc<Pool>>>,
}

impl Pools {
    /// An empty cache that keeps pools of at most `keep` threads in all (0 keeps none).
    pub fn new(keep: usize) -> Self {
        Self {
            keep,
            kept: Mutex::new(Vec::new()),
        }
    }

    /// A cache keeping twice the machine's parallelism, at least 16 threads: room for the
    /// policy's count and a few others, far below any thread limit.
    pub fn for_process() -> Self {
        let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        Self::new((2 * cpus).max(16))
    }

    /// The most threads the kept pools hold.
    pub fn keep(&self) -> usize {
        self.keep
    }

    /// The threads the kept pools hold now.
    pub fn kept_threads(&self) -> usize {
        self.lock().iter().map(|p| p.workers()).sum()
    }

    /// A pool of exactly `workers` threads (0 counts as 1): a kept one, or a new one, kept if
    /// it fits the allowance (evicting the least recently used pools).
    ///
    /// # Errors
    /// [`PoolError::Spawn`] if the operating system refuses the threads.
    pub fn get(&self, workers: usize) -> Result<Arc<Pool>, PoolError> {
        let workers = workers.max(1);
        {
            let mut kept = self.lock();
            if let Some(at) = kept.iter().position(|p| p.workers() == workers) {
                let pool = kept.remove(at);
                kept.push(Arc::clone(&pool));
                return Ok(pool);
            }
        }
        // Started outside the lock: a thread start takes long, and another count's run need
        // not wait for it.
        let pool = Arc::new(Pool::new(workers)?);
        if workers <= self.keep {
            let mut kept = self.lock();
            if !kept.iter().any(|p| p.workers() == workers) {
                while kept.iter().map(|p| p.workers()).sum::<usize>() + workers > self.keep {
                    kept.remove(0);
                }
                kept.push(Arc::clone(&pool));
            }
        }
        Ok(pool)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Pool>>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_are_reused_and_the_kept_threads_stay_within_the_allowance() {
        let pools = Pools::new(6);
        let two = pools.get(2).unwrap();
        assert!(Arc::ptr_eq(&two, &pools.get(2).unwrap()), "reused");
        assert_eq!(pools.get(0).unwrap().workers(), 1);
        for workers in 1..=8 {
            let pool = pools.get(workers).unwrap();
            assert_eq!(pool.workers(), workers);
            assert!(
                pools.kept_threads() <= 6,
                "{workers}: {}",
                pools.kept_threads()
            );
        }
        // 8 is more than the allowance: used, not kept; the most recent that fit are.
        assert_eq!(pools.kept_threads(), 6);
        let none = Pools::new(0);
        assert_eq!(none.get(3).unwrap().workers(), 3);
        assert_eq!(none.kept_threads(), 0);
    }
}
