use lockstep_shard::{Control, Error, Owned, Pool};
use proptest::prelude::*;

use crate::WORKER_COUNTS;

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
        for workers in WORKER_COUNTS {
            let pool = Pool::new(workers).unwrap();
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
        for workers in WORKER_COUNTS {
            let pool = Pool::new(workers).unwrap();
            let mut owned = Owned::new(vec![Vec::<u32>::new(); 13], workers);
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
                matches!(err, Error::Task { position, source } if position == lowest && source as usize == lowest),
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
            Error::Task {
                position: 7,
                source: "unreadable"
            }
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
        matches!(&err, Error::Panic { position: 12, message } if message == "boom: no target for 7"),
        "{err:?}"
    );
    assert_eq!(owned.into_vec(), vec![1, 1, 0, 0]);
}
