//! A pool's threads, seen from the kernel (Linux's `/proc/self/task`): an idle pool costs no CPU
//! time, and a two-worker pool's threads are pinned to distinct CPUs.
//!
//! Its own test binary: the pool's threads are told apart from the others by the task list
//! before and after the pool starts, so no other test may start threads meanwhile (the tests
//! here take turns through `TURN`).

#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use lockstep_shard::{Control, Cut, PIN_ENV, Pool};

static TURN: Mutex<()> = Mutex::new(());

fn tasks() -> BTreeSet<u32> {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// The threads that appear while `start` runs (given time to start: rayon's threads start
/// after the pool is returned).
fn new_threads<T>(start: impl FnOnce() -> T) -> (T, Vec<u32>) {
    let before = tasks();
    let value = start();
    std::thread::sleep(Duration::from_millis(100));
    let after = tasks();
    (value, after.difference(&before).copied().collect())
}

/// Those of `threads` named as a pool names its workers (`lockstep-worker-N`, cut by the kernel
/// to 15 bytes): the test harness starts the next test's thread when it likes, and a pool's
/// watchdog has a thread of its own (a third thread beside a two-worker pool's two was seen once
/// in CI on 2026-12-01).
fn workers_of(threads: &[u32]) -> Vec<u32> {
    threads
        .iter()
        .copied()
        .filter(|tid| {
            std::fs::read_to_string(format!("/proc/self/task/{tid}/comm"))
                .is_ok_and(|name| name.starts_with("lockstep-worke"))
        })
        .collect()
}

fn status_field(tid: u32, field: &str) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .map(|v| v.trim().to_owned())
}

/// Time the thread has spent on a CPU: the scheduler's nanoseconds where the kernel keeps them,
/// else user and system clock ticks (10 ms each).
fn cpu_time(tid: u32) -> Duration {
    if let Ok(schedstat) = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat"))
        && let Some(ns) = schedstat
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
    {
        return Duration::from_nanos(ns);
    }
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap_or_default();
    let fields: Vec<u64> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    Duration::from_millis(10 * fields.iter().sum::<u64>())
}

fn use_once(pool: &Pool) {
    let mut data = vec![1u32; 1 << 16];
    pool.for_each_block(
        &Control::new(),
        &mut data[..],
        Cut::Blocks(1024),
        |_, _, block| {
            block.iter_mut().for_each(|x| *x += 1);
            Ok::<_, ()>(())
        },
    )
    .expect("infallible");
}

#[test]
fn an_idle_pool_uses_no_cpu_time() {
    let _turn = TURN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // A one-worker pool (its runs are inline; its thread and its watchdog's only wait) and a
    // two-worker pool, each used once, then left idle.
    for workers in [1, 2] {
        let (pool, threads) = new_threads(|| {
            let pool = Pool::new(workers).expect("pool");
            use_once(&pool);
            pool
        });
        assert!(
            threads.len() >= workers,
            "{workers} workers: threads {threads:?}"
        );
        let start: Vec<Duration> = threads.iter().map(|&t| cpu_time(t)).collect();
        let started = Instant::now();
        std::thread::sleep(Duration::from_secs(1));
        let elapsed = started.elapsed();
        for (&tid, before) in threads.iter().zip(start) {
            let used = cpu_time(tid).saturating_sub(before);
            let name = status_field(tid, "Name").unwrap_or_default();
            // A spinning thread would use the whole second; a thread that wakes to look around
            // (the watchdog, once) microseconds. 20 ms allows one clock tick charged.
            assert!(
                used < Duration::from_millis(20),
                "{workers} workers: idle thread {tid} ({name}) used {used:?} of CPU in {elapsed:?}"
            );
        }
        drop(pool);
    }
}

fn allowed_cpus(tid: u32) -> Option<String> {
    status_field(tid, "Cpus_allowed_list")
}

/// The CPUs in a `Cpus_allowed_list` such as `0-3,6`.
fn cpu_count(list: &str) -> usize {
    list.split(',')
        .filter(|part| !part.is_empty())
        .map(|part| match part.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap_or(0) + 1 - a.parse::<usize>().unwrap_or(0),
            None => 1,
        })
        .sum()
}

#[test]
fn a_pool_pins_its_threads_to_cpus_of_their_own_when_there_are_cpus_enough() {
    let _turn = TURN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let me: u32 = std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|p| p.file_name()?.to_str()?.parse().ok())
        .expect("/proc/thread-self");
    let process_cpus = allowed_cpus(me).expect("Cpus_allowed_list");
    let cpus = cpu_count(&process_cpus);
    if cpus < 2 || std::env::var(PIN_ENV).is_ok_and(|v| v.trim() == "0") {
        eprintln!("skipped: {cpus} CPU(s) allowed, or {PIN_ENV}=0");
        return;
    }
    // Two workers: each thread on one CPU, not the same one. One worker, or more workers than
    // CPUs: left to the kernel.
    for (workers, pinned) in [(2, true), (1, false), (cpus + 1, false)] {
        let (pool, threads) = new_threads(|| Pool::new(workers).expect("pool"));
        let threads = workers_of(&threads);
        let deadline = Instant::now() + Duration::from_secs(5);
        let lists = loop {
            let lists: Vec<String> = threads.iter().filter_map(|&t| allowed_cpus(t)).collect();
            let settled = lists.iter().all(|l| (cpu_count(l) == 1) == pinned);
            if settled || Instant::now() > deadline {
                break lists;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(
            lists.len(),
            workers,
            "{workers} workers: threads {threads:?}"
        );
        if pinned {
            assert!(
                lists.iter().all(|l| cpu_count(l) == 1),
                "{workers} workers pinned to {lists:?}"
            );
            let distinct: BTreeSet<&String> = lists.iter().collect();
            assert_eq!(
                distinct.len(),
                workers,
                "{workers} workers share a CPU: {lists:?}"
            );
        } else {
            assert!(
                lists.iter().all(|l| *l == process_cpus),
                "{workers} workers: {lists:?}, the process may run on {process_cpus}"
            );
        }
        assert_eq!(allowed_cpus(me).as_deref(), Some(process_cpus.as_str()));
        drop(pool);
    }
}

/// A long-lived process asking for every count from 1 to 24 keeps at most `Pools::keep` worker
/// threads (a pool per count kept forever took the addon's process from 11 to 335 threads).
#[test]
fn pools_kept_for_a_process_keep_their_threads_bounded() {
    let _turn = TURN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let before = tasks();
    let pools = lockstep_shard::Pools::for_process();
    for workers in 1..=24 {
        let pool = pools.get(workers).unwrap();
        assert_eq!(pool.workers(), workers);
        use_once(&pool);
    }
    // Threads of evicted pools end once their pools are dropped (rayon joins them lazily).
    let deadline = Instant::now() + Duration::from_secs(10);
    let workers = loop {
        let now: Vec<u32> = tasks().difference(&before).copied().collect();
        let workers = workers_of(&now).len();
        if workers <= pools.keep() || Instant::now() > deadline {
            break workers;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        workers <= pools.keep(),
        "{workers} worker threads kept, the allowance is {}",
        pools.keep()
    );
    assert!(pools.kept_threads() <= pools.keep());
}
