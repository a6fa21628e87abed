use lockstep_shard::{Control, Error, Owned, OwnedError, Pool};
use proptest::prelude::*;

/// An update: append `tag` to target `target`'s log.
#[derive(Clone, Copy, Debug)]
struct Update {
    target: usize,
    tag: u32,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Each target's log is its own updates' tags, once each, in input order: exactly the
    /// serial loop's result.
    #[test]
    fn every_update_applies_once_in_order_per_owner(
        targets in 1usize..60,
        raw in proptest::collection::vec((0usize..1000, any::<u32>()), 0..2000),
        batch in 1usize..500,
    ) {
        let updates: Vec<Update> =
            raw.iter().map(|&(t, tag)| Update { target: t % targets, tag }).collect();
        let mut serial = vec![Vec::new(); targets];
        for u in &updates {
            serial[u.target].push(u.tag);
        }
        for (workers, pool) in crate::pools() {
            let mut owned = Owned::new(vec![Vec::<u32>::new(); targets], pool.workers());
            let applied = owned
                .apply_stream(
                    &pool,
                    &Control::new(),
                    updates.iter().map(|&u| Ok::<_, ()>(u)),
                    batch,
                    |u| u.target,
                    |log, u| {
                        log.push(u.tag);
                        Ok(())
                    },
                )
                .unwrap();
            prop_assert_eq!(applied, updates.len() as u64);
            prop_assert_eq!(owned.get(targets - 1), serial.last());
            prop_assert_eq!(owned.into_vec(), serial.clone(), "at {} workers", workers);
        }
    }

    #[test]
    fn the_first_failing_update_in_input_order_is_reported(
        len in 1usize..300,
        fail in proptest::collection::btree_set(0usize..300, 1..5),
    ) {
        let fail: Vec<usize> = fail.into_iter().map(|p| p % len).collect();
        let lowest = *fail.iter().min().unwrap();
        let updates: Vec<Update> =
            (0..len).map(|i| Update { target: (i * 7) % 13, tag: i as u32 }).collect();
        for (workers, pool) in crate::pools() {
            let mut owned = Owned::new(vec![Vec::<u32>::new(); 13], pool.workers());
            let err = owned
                .apply(&pool, &Control::new(), 0, &updates, |u| u.target, |log, u| {
                    if fail.contains(&(u.tag as usize)) {
                        return Err(u.tag);
                    }
                    log.push(u.tag);
                    Ok(())
                })
                .unwrap_err();
            prop_assert!(
                matches!(err, OwnedError::Run(Error::Task { position, source }) if position == lowest && source as usize == lowest),
                "at {} workers: {:?}", workers, err
            );
            // Everything before the failure was applied.
            let logs = owned.into_vec();
            for u in &updates[..lowest] {
                prop_assert!(logs[u.target].contains(&u.tag));
            }
        }
    }
}

#[test]
fn an_update_to_a_missing_target_is_a_clear_error_after_the_updates_before_it() {
    let pool = Pool::new(3).unwrap();
    let mut owned = Owned::new(vec![0u64; 10], 3);
    let updates = [(1usize, 5u64), (9, 1), (12, 7), (2, 2)];
    let err = owned
        .apply(
            &pool,
            &Control::new(),
            100,
            &updates,
            |u| u.0,
            |t, u| {
                *t += u.1;
                Ok::<_, String>(())
            },
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "update at input position 102 names target 12, but there are only 10 targets"
    );
    let totals = owned.into_vec();
    assert_eq!((totals[1], totals[9], totals[2]), (5, 1, 0));
}

#[test]
fn stream_errors_keep_their_position() {
    let pool = Pool::new(2).unwrap();
    let mut owned = Owned::new(vec![0u32; 4], 2);
    let stream = (0..10u32).map(|i| if i == 7 { Err("unreadable") } else { Ok(i) });
    let err = owned
        .apply_stream(
            &pool,
            &Control::new(),
            stream,
            3,
            |&i| (i % 4) as usize,
            |t, _| {
                *t += 1;
                Ok(())
            },
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            OwnedError::Run(Error::Task {
                position: 7,
                source: "unreadable"
            })
        ),
        "{err:?}"
    );
    assert_eq!(owned.into_vec().iter().sum::<u32>(), 7);
}

#[test]
fn a_panicking_target_function_is_an_error_at_its_update() {
    crate::quiet_intentional_panics();
    let pool = Pool::new(2).unwrap();
    let mut owned = Owned::new(vec![0u32; 4], 2);
    let updates: Vec<usize> = vec![0, 1, 7, 2];
    let err = owned
        .apply(
            &pool,
            &Control::new(),
            10,
            &updates,
            |&u| {
                assert!(u < 4, "boom: no target for {u}");
                u
            },
            |t, _| {
                *t += 1;
                Ok::<_, String>(())
            },
        )
        .unwrap_err();
    assert!(
        matches!(&err, OwnedError::Run(Error::Panic { position: 12, message }) if message == "boom: no target for 7"),
        "{err:?}"
    );
    assert_eq!(owned.into_vec(), vec![1, 1, 0, 0]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Hot targets (most updates on one target) spread over every owner and folded back equal
    /// the serial loop when updates are exact and order-free (wrapping integer sums).
    #[test]
    fn hot_targets_equal_the_serial_loop(
        raw in proptest::collection::vec((0usize..100, any::<u64>()), 0..2000),
        batch in 1usize..300,
        hot_share in 0usize..100,
    ) {
        let targets = 17;
        let updates: Vec<(usize, u64)> = raw
            .iter()
            .map(|&(t, v)| (if t < hot_share { 0 } else { t % targets }, v))
            .collect();
        let mut serial = vec![0u64; targets];
        for &(t, v) in &updates {
            serial[t] = serial[t].wrapping_add(v);
        }
        for (name, pool) in crate::pools() {
            let mut owned = Owned::new(vec![0u64; targets], pool.workers())
                .with_hot(&[0, 99], || 0, |total, partial| *total = total.wrapping_add(partial));
            owned
                .apply_stream(
                    &pool,
                    &Control::new(),
                    updates.iter().map(|&u| Ok::<_, ()>(u)),
                    batch,
                    |u| u.0,
                    |total, u| {
                        *total = total.wrapping_add(u.1);
                        Ok(())
                    },
                )
                .unwrap();
            prop_assert_eq!(owned.into_vec(), serial.clone(), "on {}", name);
        }
    }
}

/// While the owners apply one batch, the calling thread reads the next.
#[test]
fn reading_overlaps_applying() {
    let pool = Pool::new(2).unwrap();
    let mut owned = Owned::new(vec![0u32; 4], 2);
    let applying = std::sync::atomic::AtomicBool::new(false);
    let overlapped = std::sync::atomic::AtomicBool::new(false);
    // Reading an update takes 1 ms, applying one 2 ms: reads of the next batch land while the
    // current one is being applied.
    let stream = (0..40u32).map(|i| {
        std::thread::sleep(std::time::Duration::from_millis(1));
        if applying.load(std::sync::atomic::Ordering::SeqCst) {
            overlapped.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        Ok::<_, ()>(i)
    });
    owned
        .apply_stream(
            &pool,
            &Control::new(),
            stream,
            10,
            |&i| (i % 4) as usize,
            |t, _| {
                applying.store(true, std::sync::atomic::Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(2));
                *t += 1;
                applying.store(false, std::sync::atomic::Ordering::SeqCst);
                Ok(())
            },
        )
        .unwrap();
    assert!(overlapped.load(std::sync::atomic::Ordering::SeqCst));
    assert_eq!(owned.into_vec(), vec![10; 4]);
}

#[test]
fn owner_progress_counts_every_update_and_cancellation_stops() {
    use lockstep_shard::{CancelToken, Progress};
    for (name, pool) in crate::pools() {
        let progress = Progress::new(|_| {});
        let control = Control::new().with_progress(progress.clone());
        progress.start(Some(5000));
        let mut owned = Owned::new(vec![0u32; 7], pool.workers());
        owned
            .apply_stream(
                &pool,
                &control,
                (0..5000u32).map(Ok::<_, ()>),
                333,
                |&i| (i % 7) as usize,
                |t, _| {
                    *t += 1;
                    Ok(())
                },
            )
            .unwrap();
        assert_eq!(progress.snapshot().unwrap().done, 5000, "on {name}");

        let token = CancelToken::new();
        let control = Control::new().with_cancel(token.clone());
        let mut owned = Owned::new(vec![0u32; 7], pool.workers());
        let err = owned
            .apply_stream(
                &pool,
                &control,
                (0..100_000u32).map(Ok::<_, ()>),
                100,
                |&i| (i % 7) as usize,
                |t, _| {
                    *t += 1;
                    if *t == 50 {
                        token.cancel();
                    }
                    Ok(())
                },
            )
            .unwrap_err();
        assert!(
            matches!(err, OwnedError::Run(Error::Cancelled)),
            "on {name}: {err:?}"
        );
        assert!(owned.into_vec().iter().sum::<u32>() < 100_000, "on {name}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any owner count on any pool (3 owners on 1 worker, on the current thread...), failures
    /// (errors and panics of `apply`) at a few positions, later ones first: the lowest is
    /// reported, everything before it applied; hot targets folded even then.
    #[test]
    fn the_lowest_failure_wins_at_any_owner_count(
        len in 1usize..400,
        owners in 1usize..6,
        failing in proptest::collection::btree_map(0usize..400, any::<bool>(), 1..4),
        hot in any::<bool>(),
    ) {
        crate::quiet_intentional_panics();
        let failing: Vec<(usize, bool)> =
            failing.into_iter().map(|(p, panics)| (p % len, panics)).collect();
        let (lowest, lowest_panics) = *failing.iter().min_by_key(|(p, _)| *p).unwrap();
        let updates: Vec<(usize, u64)> = (0..len).map(|i| ((i * 7) % 11, i as u64)).collect();
        for (name, pool) in crate::pools() {
            let mut owned = Owned::new(vec![0u64; 11], owners);
            if hot {
                owned = owned.with_hot(&[0], || 0, |t, p| *t += p);
            }
            let err = owned
                .apply(&pool, &Control::new(), 0, &updates, |u| u.0, |t, u| {
                    if let Some(&(_, panics)) = failing.iter().find(|(p, _)| *p as u64 == u.1) {
                        std::thread::sleep(std::time::Duration::from_micros(20 * (len - u.1 as usize) as u64));
                        if panics {
                            panic!("boom at {}", u.1);
                        }
                        return Err(u.1);
                    }
                    *t += 1 << 20 | u.1;
                    Ok(())
                })
                .unwrap_err();
            prop_assert_eq!(err.position(), Some(lowest), "on {} with {} owners: {:?}", name, owners, err);
            prop_assert_eq!(matches!(err, OwnedError::Run(Error::Panic { .. })), lowest_panics);
            // Every update before the failure is in its target (hot ones folded).
            let targets = owned.into_vec();
            for (t, &value) in targets.iter().enumerate() {
                let before: u64 = updates[..lowest]
                    .iter()
                    .filter(|u| u.0 == t)
                    .map(|u| 1 << 20 | u.1)
                    .sum();
                prop_assert!(value >= before, "on {}: target {} lost updates", name, t);
            }
        }
    }

    #[test]
    fn owner_progress_counts_every_update_whatever_the_queue_lengths(
        len in 0usize..1000,
        owners in 1usize..4,
    ) {
        use lockstep_shard::Progress;
        for (name, pool) in crate::pools() {
            let progress = Progress::new(|_| {});
            let control = Control::new().with_progress(progress.clone());
            progress.start(Some(len as u64));
            // Every update on target 0: one owner's queue holds them all (multiples of 64
            // included as len varies).
            let mut owned = Owned::new(vec![0u32; owners], owners);
            owned
                .apply(&pool, &control, 0, &vec![0usize; len], |&t| t, |x, _| {
                    *x += 1;
                    Ok::<_, ()>(())
                })
                .unwrap();
            prop_assert_eq!(progress.snapshot().unwrap().done, len as u64, "on {}", name);
        }
    }
}

#[test]
fn from_fn_makes_the_same_targets_as_new_at_every_owner_count() {
    for owners in [1, 2, 3, 5] {
        let made = Owned::from_fn(11, owners, |id| id * 7).unwrap();
        let moved = Owned::new((0..11).map(|id| id * 7).collect(), owners);
        assert_eq!(made.len(), 11);
        for id in 0..11 {
            assert_eq!(
                made.get(id),
                moved.get(id),
                "target {id} with {owners} owners"
            );
        }
        assert_eq!(made.get(11), None);
        assert_eq!(
            made.into_vec(),
            (0..11).map(|id| id * 7).collect::<Vec<_>>()
        );
    }
}
