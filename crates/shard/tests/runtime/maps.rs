use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lockstep_shard::{CancelToken, Control, Error, Pool, Progress, split};
use proptest::prelude::*;

use crate::quiet_intentional_panics;

fn mix(i: usize, x: u64) -> u64 {
    x.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64).rotate_left(17)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn map_items_equals_the_serial_map(values in proptest::collection::vec(any::<u64>(), 0..3000)) {
        let serial: Vec<u64> = values.iter().enumerate().map(|(i, &x)| mix(i, x)).collect();
        for (workers, pool) in crate::pools() {
            let parallel = pool
                .map_items(&Control::new(), &values, |i, &x| Ok::<_, ()>(mix(i, x)))
                .unwrap();
            prop_assert_eq!(&parallel, &serial, "at {} workers", workers);
        }
    }

    #[test]
    fn map_blocks_equals_the_serial_map(
        values in proptest::collection::vec(any::<u64>(), 0..3000),
        block_len in 0usize..100,
    ) {
        let serial: Vec<u64> = values.iter().enumerate().map(|(i, &x)| mix(i, x)).collect();
        for (workers, pool) in crate::pools() {
            let parallel = pool
                .map_blocks(&Control::new(), &values, block_len, |first, block| {
                    assert!(!block.is_empty() && block.len() <= block_len.max(1));
                    (first..).zip(block).map(|(i, &x)| Ok::<_, ()>(mix(i, x))).collect()
                })
                .unwrap();
            prop_assert_eq!(&parallel, &serial, "at {} workers", workers);
        }
    }

    #[test]
    fn map_ranges_and_update_items_equal_the_serial_loop(
        values in proptest::collection::vec(any::<u64>(), 0..3000),
        parts in 1usize..12,
    ) {
        let serial: Vec<u64> = values.iter().enumerate().map(|(i, &x)| mix(i, x)).collect();
        for (workers, pool) in crate::pools() {
            let ranges = split::balanced(values.len(), parts);
            let chunks = pool
                .map_ranges(&Control::new(), &ranges, |_, r| {
                    Ok::<_, ()>(r.clone().map(|i| mix(i, values[i])).collect::<Vec<_>>())
                })
                .unwrap();
            prop_assert_eq!(chunks.concat(), serial.clone(), "map_ranges at {} workers", workers);

            let mut data = values.clone();
            pool.update_items(&Control::new(), &mut data, |i, x| {
                *x = mix(i, *x);
                Ok::<_, ()>(())
            })
            .unwrap();
            prop_assert_eq!(&data, &serial, "update_items at {} workers", workers);
        }
    }

    /// Later positions fail at once, earlier ones only after a delay: the error returned must
    /// still be the lowest-position one, and of the right kind (error or panic).
    #[test]
    fn the_lowest_position_failure_wins(
        len in 1usize..400,
        failing in proptest::collection::btree_map(0usize..400, any::<bool>(), 1..6),
    ) {
        quiet_intentional_panics();
        let failing: Vec<(usize, bool)> =
            failing.into_iter().map(|(p, panics)| (p % len, panics)).collect();
        let (lowest, lowest_panics) = *failing.iter().min_by_key(|(p, _)| *p).unwrap();
        let values: Vec<usize> = (0..len).collect();
        let fail_at = |i: usize| -> Result<usize, String> {
            if let Some(&(_, panics)) = failing.iter().find(|(p, _)| *p == i) {
                // The lower the position, the later it fails.
                std::thread::sleep(Duration::from_micros(50 * (len - i) as u64));
                if panics {
                    panic!("boom at {i}");
                }
                return Err(format!("bad item {i}"));
            }
            Ok(i)
        };
        for (workers, pool) in crate::pools() {
            let err = pool
                .map_items(&Control::new(), &values, |i, _| fail_at(i))
                .unwrap_err();
            prop_assert_eq!(err.position(), Some(lowest), "map_items at {} workers: {}", workers, err);
            match (&err, lowest_panics) {
                (Error::Panic { message, .. }, true) => {
                    prop_assert_eq!(message, &format!("boom at {lowest}"))
                }
                (Error::Task { source, .. }, false) => {
                    prop_assert_eq!(source, &format!("bad item {lowest}"))
                }
                (other, _) => prop_assert!(false, "unexpected {:?}", other),
            }

            let mut data = values.clone();
            let err = pool
                .update_items(&Control::new(), &mut data, |i, _| fail_at(i).map(drop))
                .unwrap_err();
            prop_assert_eq!(err.position(), Some(lowest), "update_items at {} workers", workers);

            // Blocks of 7: an error is reported at its item; a panic (which ends its whole
            // block, even after an earlier error in it) at its block's first position.
            let err = pool
                .map_blocks(&Control::new(), &values, 7, |first, block| {
                    (first..first + block.len()).map(fail_at).collect()
                })
                .unwrap_err();
            match &err {
                Error::Task { position, .. } => prop_assert_eq!(*position, lowest),
                Error::Panic { position, .. } => prop_assert!(
                    *position <= lowest && lowest < position + 7,
                    "map_blocks at {} workers: {:?}, lowest {}", workers, err, lowest
                ),
                other => prop_assert!(false, "unexpected {:?}", other),
            }
        }
    }
}

#[test]
fn a_block_map_with_the_wrong_number_of_results_fails_clearly() {
    let items: Vec<u32> = (0..100).collect();
    for (_, pool) in crate::pools() {
        let err = pool
            .map_blocks(&Control::new(), &items, 16, |first, block| {
                let keep = if first <= 40 && 40 < first + block.len() {
                    block.len() - 1
                } else {
                    block.len()
                };
                block[..keep].iter().map(|&x| Ok::<_, ()>(x)).collect()
            })
            .unwrap_err();
        match err {
            Error::Panic { position, message } => {
                assert!(position <= 40 && position + 16 > 40, "{position}");
                assert!(message.contains("results for"), "{message}");
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn range_failures_are_reported_at_the_lowest_failing_range() {
    // Ten ranges; ranges 3, 6 and 9 fail, the later ones first.
    let ranges = split::balanced(1000, 10);
    for (_, pool) in crate::pools() {
        let err = pool
            .map_ranges(&Control::new(), &ranges, |_, r| {
                let k = r.start / 100;
                if k % 3 == 0 && k > 0 {
                    std::thread::sleep(Duration::from_millis(30 * (10 - k) as u64));
                    return Err(k);
                }
                Ok(k)
            })
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::Task {
                    position: 300,
                    source: 3
                }
            ),
            "{err:?}"
        );
    }
}

#[test]
fn tasks_after_a_failure_are_told_to_stop_and_earlier_ones_finish() {
    let pool = Pool::new(2).unwrap();
    let finished_before = AtomicUsize::new(0);
    let ranges = split::balanced(2, 2);
    let err = pool
        .map_ranges(&Control::new(), &ranges, |check, r| {
            if r.start == 1 {
                return Err("late range fails at once");
            }
            // The earlier range must not be stopped by the later failure.
            for _ in 0..50 {
                assert!(!check.should_stop());
                std::thread::sleep(Duration::from_millis(1));
            }
            finished_before.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .unwrap_err();
    assert_eq!(err.position(), Some(1));
    assert_eq!(finished_before.load(Ordering::SeqCst), 1);

    // A later range, already running, sees the earlier failure and stops.
    let stopped = AtomicUsize::new(0);
    let started = AtomicUsize::new(0);
    let err = pool
        .map_ranges(&Control::new(), &ranges, |check, r| {
            if r.start == 0 {
                for _ in 0..5000 {
                    if started.load(Ordering::SeqCst) == 1 {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                return Err("early range fails");
            }
            started.store(1, Ordering::SeqCst);
            for _ in 0..5000 {
                if check.should_stop() {
                    stopped.fetch_add(1, Ordering::SeqCst);
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        })
        .unwrap_err();
    assert_eq!(err.position(), Some(0));
    assert_eq!(stopped.load(Ordering::SeqCst), 1);
}

#[test]
fn a_panic_becomes_an_error_and_the_pool_stays_usable() {
    quiet_intentional_panics();
    let pool = Pool::new(3).unwrap();
    let items: Vec<u32> = (0..100).collect();
    let err = pool
        .map_items(&Control::new(), &items, |i, &x| {
            if i == 42 {
                panic!("worker bug");
            }
            Ok::<_, String>(x)
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "a worker panicked at input position 42: worker bug"
    );
    let again = pool
        .map_items(&Control::new(), &items, |_, &x| Ok::<_, ()>(x + 1))
        .unwrap();
    assert_eq!(again[99], 100);
}

#[test]
fn cancellation_is_a_distinct_error_not_partial_output() {
    let pool = Pool::new(2).unwrap();
    let token = CancelToken::new();
    let control = Control::new().with_cancel(token.clone());
    let items: Vec<u32> = (0..10_000).collect();
    let processed = AtomicUsize::new(0);
    let result = pool.map_items(&control, &items, |i, &x| {
        if i == 10 {
            token.cancel();
        }
        processed.fetch_add(1, Ordering::SeqCst);
        Ok::<_, ()>(x)
    });
    assert!(matches!(result, Err(Error::Cancelled)));
    // Every task checks before each item: far fewer than all items ran.
    assert!(processed.load(Ordering::SeqCst) < items.len());
    // A cancelled control refuses to start.
    assert!(
        pool.map_items(&control, &items, |_, &x| Ok::<_, ()>(x))
            .unwrap_err()
            .is_cancelled()
    );
}

#[test]
fn progress_counts_every_item_once() {
    let pool = Pool::new(3).unwrap();
    let progress = Progress::new(|_| {});
    let control = Control::new().with_progress(progress.clone());
    let items: Vec<u32> = (0..12_345).collect();
    progress.start(Some(items.len() as u64));
    pool.map_items(&control, &items, |_, &x| Ok::<_, ()>(x))
        .unwrap();
    assert_eq!(progress.snapshot().unwrap().done, 12_345);
}

/// An output that cannot be allocated is an error before any item is mapped, never an abort:
/// 2^60 items of nothing map to 2^60 words (8 EiB), at every worker count.
#[test]
fn an_output_that_cannot_be_allocated_is_an_error() {
    let items = vec![(); 1 << 60];
    for workers in [1, 2, 3] {
        let pool = Pool::new(workers).unwrap();
        let mapped = AtomicUsize::new(0);
        let map = |_, _: &()| {
            mapped.fetch_add(1, Ordering::Relaxed);
            Ok::<u64, String>(0)
        };
        let error = pool.map_items(&Control::new(), &items, map).unwrap_err();
        assert!(matches!(error, Error::Memory(_)), "{workers}: {error}");
        assert_eq!(
            error.to_string(),
            format!(
                "the run's output: {} bytes cannot be allocated",
                8usize << 60
            )
        );
        assert_eq!(mapped.load(Ordering::Relaxed), 0, "{workers}");
        let error = pool
            .map_blocks(&Control::new(), &items, 64, |_, block| {
                vec![Ok::<u64, String>(0); block.len()]
            })
            .unwrap_err();
        assert!(matches!(error, Error::Memory(_)), "{workers}: {error}");
    }
}
