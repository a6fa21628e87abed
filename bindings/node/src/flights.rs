//! The runs in flight on the addon's threads, per JS environment (the main thread's, each
//! worker's), so that an environment's teardown (a worker terminated mid-run) cancels its runs
//! and waits for their threads before the arrays they hold are freed. One cleanup hook per
//! environment, registered when its first run starts, kept for its life: nothing grows per run.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;

use lockstep_shard::CancelToken;
use napi::Env;

/// One environment's runs: their cancel tokens and, once started, their threads.
#[derive(Default)]
pub(crate) struct Flight {
    runs: Mutex<Runs>,
}

#[derive(Default)]
struct Runs {
    next: u64,
    live: HashMap<u64, (CancelToken, Option<JoinHandle<()>>)>,
}

type Flights = Mutex<HashMap<usize, Arc<Flight>>>;

fn all() -> &'static Flights {
    static FLIGHTS: OnceLock<Flights> = OnceLock::new();
    FLIGHTS.get_or_init(Default::default)
}

/// The flight of `env`, made (with its teardown hook) on first use.
///
/// # Errors
/// If the cleanup hook cannot be registered.
pub(crate) fn of(env: &Env) -> napi::Result<Arc<Flight>> {
    let key = env.raw() as usize;
    let mut flights = all().lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(flight) = flights.get(&key) {
        return Ok(Arc::clone(flight));
    }
    let flight = Arc::new(Flight::default());
    env.add_env_cleanup_hook(key, land)?;
    flights.insert(key, Arc::clone(&flight));
    Ok(flight)
}

/// The teardown of environment `key`: cancel its runs, then wait for each (a block at most).
fn land(key: usize) {
    let flight = all()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&key);
    let Some(flight) = flight else { return };
    let live: Vec<_> = flight
        .runs
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .live
        .drain()
        .map(|(_, run)| run)
        .collect();
    for (cancel, _) in &live {
        cancel.cancel();
    }
    for (_, thread) in live {
        if let Some(thread) = thread {
            // A run's thread that panicked has nothing left to wait for.
            let _ = thread.join();
        }
    }
}

impl Flight {
    /// A run about to start: its id.
    pub(crate) fn enter(&self, cancel: CancelToken) -> u64 {
        let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        runs.next += 1;
        let id = runs.next;
        runs.live.insert(id, (cancel, None));
        id
    }

    /// Run `id`'s thread, unless the run has already left.
    pub(crate) fn started(&self, id: u64, thread: JoinHandle<()>) {
        let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(run) = runs.live.get_mut(&id) {
            run.1 = Some(thread);
        }
    }

    /// Run `id` is done (or never started).
    pub(crate) fn leave(&self, id: u64) {
        self.runs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .live
            .remove(&id);
    }
}
