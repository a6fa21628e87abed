//! In-place block maps, budgeted branches and the block-wise pipeline: each against its serial
//! loop on every pool (1, 2, 3, 5 workers and current-thread), failures at the lowest position
//! with later positions failing first, cancellation within a block, progress that adds up.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lockstep_shard::{CancelToken, Control, Cut, Error, Pool, Progress, split};
use proptest::prelude::*;

use crate::{pools, quiet_intentional_panics};

fn mix(i: usize, x: u64) -> u64 {
    x.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64).rotate_left(17)
}

/// The serial loop the block maps must equal: `a[i] = mix(i, b[i]); c[i] = a[i] >> 40`.
fn serial(b: &[u64]) -> (Vec<u64>, Vec<u32>) {
    let a: Vec<u64> = b.iter().enumerate().map(|(i, &x)| mix(i, x)).collect();
    let c = a.iter().map(|&x| (x >> 40) as u32).collect();
    (a, c)
}

/// The block kernel: reads `b`, writes `a` and `c`.
fn kernel(range: std::ops::Range<usize>, (a, b, c): (&mut [u64], &[u64], &mut [u32])) {
    for (((i, a), &b), c) in range.zip(a.iter_mut()).zip(b).zip(c.iter_mut()) {
        *a = mix(i, b);
        *c = (*a >> 40) as u32;
    }
}

/// Increasing, disjoint ranges within `0..len`, with gaps: every third of a balanced split.
fn gapped(len: usize, parts: usize) -> Vec<std::ops::Range<usize>> {
    split::balanced(len, parts)
        .into_iter()
        .enumerate()
        .filter(|(k, _)| k % 3 != 1)
        .map(|(_, r)| r)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn for_each_block_equals_the_serial_loop(
        b in proptest::collection::vec(any::<u64>(), 0..3000),
        block_len in 0usize..100,
        parts in 1usize..12,
    ) {
        let (want_a, want_c) = serial(&b);
        for (name, pool) in pools() {
            let (mut a, mut c) = (vec![0u64; b.len()], vec![0u32; b.len()]);
            pool.for_each_block(
                &Control::new(),
                (&mut a[..], &b[..], &mut c[..]),
                Cut::Blocks(block_len),
                |_, range, block| {
                    assert!(!range.is_empty() && range.len() <= block_len.max(1));
                    kernel(range, block);
                    Ok::<_, ()>(())
                },
            )
            .unwrap();
            prop_assert_eq!(&a, &want_a, "blocks on {}", name);
            prop_assert_eq!(&c, &want_c, "blocks on {}", name);

            // Ranges with gaps: the ranges are done, the gaps untouched.
            let ranges = gapped(b.len(), parts);
            let (mut a, mut c) = (vec![0u64; b.len()], vec![0u32; b.len()]);
            pool.for_each_block(
                &Control::new(),
                (&mut a[..], &b[..], &mut c[..]),
                Cut::Ranges(&ranges),
                |_, range, block| {
                    kernel(range, block);
                    Ok::<_, ()>(())
                },
            )
            .unwrap();
            for i in 0..b.len() {
                let inside = ranges.iter().any(|r| r.contains(&i));
                prop_assert_eq!(a[i], if inside { want_a[i] } else { 0 }, "ranges on {} at {}", name, i);
            }
        }
    }

    /// Items fail (errors or panics) at a few positions, the later ones first: the reported
    /// failure is the lowest, at its exact item (the kernel says where it is with `at`).
    #[test]
    fn the_lowest_position_failure_wins_in_blocks(
        len in 1usize..400,
        failing in proptest::collection::btree_map(0usize..400, any::<bool>(), 1..5),
        block_len in 1usize..20,
    ) {
        quiet_intentional_panics();
        let failing: Vec<(usize, bool)> =
            failing.into_iter().map(|(p, panics)| (p % len, panics)).collect();
        let (lowest, lowest_panics) = *failing.iter().min_by_key(|(p, _)| *p).unwrap();
        let mut data = vec![0u64; len];
        for (name, pool) in pools() {
            let err = pool
                .for_each_block(&Control::new(), &mut data[..], Cut::Blocks(block_len), |check, range, block| {
                    for (i, x) in range.zip(block.iter_mut()) {
                        check.at(i);
                        if let Some(&(_, panics)) = failing.iter().find(|(p, _)| *p == i) {
                            std::thread::sleep(Duration::from_micros(30 * (len - i) as u64));
                            if panics {
                                panic!("boom at {i}");
                            }
                            return Err(format!("bad item {i}"));
                        }
                        *x = i as u64;
                    }
                    Ok(())
                })
                .unwrap_err();
            prop_assert_eq!(err.position(), Some(lowest), "on {}: {}", name, err);
            prop_assert_eq!(matches!(err, Error::Panic { .. }), lowest_panics, "on {}: {}", name, err);
        }
    }

    #[test]
    fn branches_equal_the_serial_loop_and_the_lowest_branch_fails_first(
        len in 0usize..2000,
        count in 1usize..9,
        failing in proptest::collection::btree_set(0usize..9, 0..3),
    ) {
        quiet_intentional_panics();
        let values: Vec<u64> = (0..len as u64).collect();
        let ranges = split::balanced(len, count);
        let starts: Vec<usize> = ranges.iter().map(|r| r.start).collect();
        let failing: Vec<usize> = failing.into_iter().filter(|&b| b < ranges.len()).collect();
        let serial: Vec<u64> = values.iter().enumerate().map(|(i, &x)| mix(i, x)).collect();
        for (name, pool) in pools() {
            let result = pool.branches(&Control::new(), &starts, |branch, view| {
                let range = ranges[branch].clone();
                if failing.contains(&branch) {
                    // Later branches fail sooner.
                    std::thread::sleep(Duration::from_millis((10 - branch) as u64));
                    return Err(Error::Task { position: 1, source: branch });
                }
                // Each branch runs its own parallel map on its view, in its own positions.
                view.map_items(&Control::new(), &values[range.clone()], |i, &x| {
                    Ok::<_, usize>(mix(range.start + i, x))
                })
            });
            match failing.first() {
                None => prop_assert_eq!(result.unwrap().concat(), serial.clone(), "on {}", name),
                Some(&first) => {
                    let err = result.unwrap_err();
                    // Branch-local position 1, moved to the branch's start.
                    prop_assert_eq!(err.position(), Some(starts[first] + 1), "on {}: {}", name, err);
                    let matched = matches!(err, Error::Task { source, .. } if source == first);
                    prop_assert!(matched, "on {}", name);
                }
            }
        }
    }

    #[test]
    fn pipeline_blocks_writes_what_the_serial_loop_writes(
        values in proptest::collection::vec(any::<u64>(), 0..2500),
        chunk in 1usize..300,
        block_len in 0usize..50,
    ) {
        let expected: Vec<(usize, Vec<u64>)> = values
            .chunks(chunk)
            .enumerate()
            .map(|(k, c)| {
                let start = k * chunk;
                (start, c.iter().enumerate().map(|(j, &v)| mix(start + j, v)).collect())
            })
            .collect();
        for (name, pool) in pools() {
            let mut written = Vec::new();
            let mut cursor = 0;
            let stats = pool
                .pipeline_blocks(
                    &Control::new(),
                    chunk,
                    block_len,
                    |buf: &mut Vec<u64>, n| {
                        let end = (cursor + n).min(values.len());
                        buf.extend_from_slice(&values[cursor..end]);
                        cursor = end;
                        Ok::<_, ()>(())
                    },
                    |_, first, inputs, outputs: &mut [u64]| {
                        assert!(!inputs.is_empty() && inputs.len() <= block_len.max(1));
                        for (j, (x, out)) in inputs.iter().zip(outputs).enumerate() {
                            *out = mix(first + j, *x);
                        }
                        Ok(())
                    },
                    |position, outputs| {
                        written.push((position, outputs.to_vec()));
                        Ok(())
                    },
                )
                .unwrap();
            prop_assert_eq!(stats.items, values.len() as u64);
            prop_assert_eq!(&written, &expected, "on {}", name);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// join equals its serial pair of halves at any split, and of two failing halves the
    /// left's wins, wherever the split.
    #[test]
    fn join_equals_the_serial_halves(
        values in proptest::collection::vec(any::<u64>(), 0..1500),
        split_at in 0usize..1500,
        fail_left in any::<bool>(),
        fail_right in any::<bool>(),
    ) {
        let split_at = split_at.min(values.len());
        let serial: Vec<u64> = values.iter().enumerate().map(|(i, &x)| mix(i, x)).collect();
        let (left, right) = values.split_at(split_at);
        for (name, pool) in pools() {
            let result = pool.join(
                &Control::new(),
                split_at,
                |view| {
                    if fail_left {
                        std::thread::sleep(Duration::from_millis(2));
                        return Err(Error::Task { position: 0, source: "left" });
                    }
                    view.map_items(&Control::new(), left, |i, &x| Ok(mix(i, x)))
                },
                |view| {
                    if fail_right {
                        return Err(Error::Task { position: 0, source: "right" });
                    }
                    view.map_items(&Control::new(), right, |i, &x| Ok(mix(split_at + i, x)))
                },
            );
            match (fail_left, fail_right) {
                (false, false) => {
                    let (l, r) = result.unwrap();
                    prop_assert_eq!([l, r].concat(), serial.clone(), "on {}", name);
                }
                (true, _) => prop_assert!(
                    matches!(result, Err(Error::Task { position: 0, source: "left" })),
                    "on {}", name
                ),
                (false, true) => prop_assert_eq!(result.unwrap_err().position(), Some(split_at)),
            }
        }
    }
}

#[test]
fn branch_and_block_pipeline_progress_reach_their_totals() {
    for (name, pool) in pools() {
        let progress = Progress::new(|_| {});
        let control = Control::new().with_progress(progress.clone());
        progress.start(Some(4000));
        let starts = [0, 1000, 2000, 3000];
        pool.branches(&control, &starts, |_, view| {
            let data = vec![0u8; 1000];
            view.map_items(&control, &data, |_, &x| Ok::<_, ()>(x))
        })
        .unwrap();
        assert_eq!(
            progress.snapshot().unwrap().done,
            4000,
            "branches on {name}"
        );
        progress.start(Some(1000));
        let mut cursor = 0;
        pool.pipeline_blocks(
            &control,
            128,
            10,
            |buf: &mut Vec<u32>, n| {
                let end = (cursor + n).min(1000);
                buf.extend(cursor as u32..end as u32);
                cursor = end;
                Ok::<_, ()>(())
            },
            |_, _, inputs, outputs: &mut [u32]| {
                outputs.copy_from_slice(inputs);
                Ok(())
            },
            |_, _| Ok(()),
        )
        .unwrap();
        assert_eq!(
            progress.snapshot().unwrap().done,
            1000,
            "pipeline_blocks on {name}"
        );
    }
}

#[test]
fn a_block_failure_in_a_pipeline_is_at_its_stream_position() {
    let values: Vec<u64> = (0..1000).collect();
    for (name, pool) in pools() {
        let mut cursor = 0;
        let err = pool
            .pipeline_blocks(
                &Control::new(),
                128,
                16,
                |buf: &mut Vec<u64>, n| {
                    let end = (cursor + n).min(values.len());
                    buf.extend_from_slice(&values[cursor..end]);
                    cursor = end;
                    Ok::<_, String>(())
                },
                |check, first, inputs, outputs: &mut [u64]| {
                    for (j, (x, out)) in inputs.iter().zip(outputs).enumerate() {
                        check.at(first + j);
                        if *x == 700 || *x == 900 {
                            return Err(format!("bad {x}"));
                        }
                        *out = *x;
                    }
                    Ok(())
                },
                |_, _| Ok(()),
            )
            .unwrap_err();
        assert!(
            matches!(&err, Error::Task { position: 700, source } if source == "bad 700"),
            "on {name}: {err:?}"
        );
    }
}

#[test]
fn join_runs_both_halves_with_half_the_budget_each() {
    let values: Vec<u64> = (0..4096).collect();
    let serial: Vec<u64> = values.iter().enumerate().map(|(i, &x)| mix(i, x)).collect();
    for (name, pool) in pools() {
        let (left, right) = values.split_at(1000);
        let (l, r) = pool
            .join(
                &Control::new(),
                1000,
                |view| {
                    assert!(view.workers() >= 1 && view.workers() <= pool.workers().div_ceil(2));
                    view.map_items(&Control::new(), left, |i, &x| Ok::<_, ()>(mix(i, x)))
                },
                |view| {
                    view.map_items(&Control::new(), right, |i, &x| {
                        Ok::<_, ()>(mix(1000 + i, x))
                    })
                },
            )
            .unwrap();
        assert_eq!([l, r].concat(), serial, "on {name}");
        // A failure in the right half is moved by the split; the left half's wins.
        let err = pool
            .join(
                &Control::new(),
                1000,
                |_| {
                    std::thread::sleep(Duration::from_millis(20));
                    Err::<(), _>(Error::Task {
                        position: 5,
                        source: "left",
                    })
                },
                |_| {
                    Err::<(), _>(Error::Task {
                        position: 5,
                        source: "right",
                    })
                },
            )
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::Task {
                    position: 5,
                    source: "left"
                }
            ),
            "on {name}: {err:?}"
        );
        let err = pool
            .join(
                &Control::new(),
                1000,
                |_| Ok::<_, Error<&str>>(()),
                |_| {
                    Err::<(), _>(Error::Task {
                        position: 5,
                        source: "right",
                    })
                },
            )
            .unwrap_err();
        assert_eq!(err.position(), Some(1005), "on {name}");
    }
}

#[test]
fn a_panicking_branch_is_an_error_at_its_start() {
    quiet_intentional_panics();
    for (name, pool) in pools() {
        let err = pool
            .branches(&Control::new(), &[0, 10, 20], |branch, _| {
                if branch == 1 {
                    panic!("boom in branch {branch}");
                }
                Ok::<_, Error<()>>(branch)
            })
            .unwrap_err();
        assert!(
            matches!(&err, Error::Panic { position: 10, message } if message == "boom in branch 1"),
            "on {name}: {err:?}"
        );
    }
}

#[test]
fn cancellation_stops_block_maps_within_one_block() {
    for (name, pool) in pools() {
        let token = CancelToken::new();
        let control = Control::new().with_cancel(token.clone());
        let started_after_cancel = AtomicUsize::new(0);
        let mut data = vec![0u8; 100_000];
        let result =
            pool.for_each_block(&control, &mut data[..], Cut::Blocks(100), |_, range, _| {
                if token.is_cancelled() {
                    started_after_cancel.fetch_add(1, Ordering::SeqCst);
                }
                if range.start == 5_000 {
                    token.cancel();
                }
                Ok::<_, ()>(())
            });
        assert!(matches!(result, Err(Error::Cancelled)), "on {name}");
        // Only blocks of tasks already past their stop check when the cancel landed may start:
        // at most one per worker.
        assert!(
            started_after_cancel.load(Ordering::SeqCst) <= pool.workers(),
            "on {name}: {} blocks started after the cancel",
            started_after_cancel.load(Ordering::SeqCst)
        );
    }
}

/// Every primitive's progress reaches its total, in monotonic reports, and a trivial kernel
/// over a million items calls the sink a few times, not once per block.
#[test]
fn progress_is_monotonic_reaches_the_total_and_is_aggregated() {
    let len = 1 << 20;
    for (name, pool) in pools() {
        let reports = Arc::new(Mutex::new(Vec::new()));
        let progress = {
            let reports = Arc::clone(&reports);
            Progress::new(move |r| reports.lock().unwrap().push(r.done))
        };
        let control = Control::new().with_progress(progress.clone());
        let check = |what: &str, total: u64| {
            let seen = std::mem::take(&mut *reports.lock().unwrap());
            assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{what} on {name}");
            assert_eq!(seen.last().copied(), Some(total), "{what} on {name}");
            seen.len()
        };
        let mut data = vec![1u32; len];
        progress.start(Some(len as u64));
        pool.for_each_block(&control, &mut data[..], Cut::Blocks(256), |_, _, block| {
            block.iter_mut().for_each(|x| *x = x.wrapping_mul(3));
            Ok::<_, ()>(())
        })
        .unwrap();
        let calls = check("for_each_block", len as u64);
        if !pool.is_current_thread() {
            // 4,096 blocks; reports are summed per task over 20 ms.
            assert!(calls < 200, "for_each_block on {name}: {calls} sink calls");
        }
        progress.start(Some(1000));
        pool.map_ranges(&control, &split::balanced(1000, 7), |check, range| {
            // A task may report part of its range itself: the rest is topped up.
            check.advance(range.len() as u64 / 2);
            Ok::<_, ()>(())
        })
        .unwrap();
        check("map_ranges", 1000);
        progress.start(Some(30));
        pool.map_tasks(
            &control,
            (0..3).map(|k| (k * 10, k)).collect(),
            |check, _| {
                check.advance(10);
                Ok::<_, ()>(())
            },
        )
        .unwrap();
        check("map_tasks", 30);
        progress.start(Some(len as u64));
        pool.update_items(&control, &mut data, |_, x| {
            *x += 1;
            Ok::<_, ()>(())
        })
        .unwrap();
        check("update_items", len as u64);
    }
}

#[test]
fn a_current_thread_pool_runs_on_the_caller() {
    let pool = Pool::current_thread();
    assert!(pool.is_current_thread());
    assert_eq!(pool.workers(), 1);
    let caller = std::thread::current().id();
    let mut data = vec![0u8; 10_000];
    pool.for_each_block(&Control::new(), &mut data[..], Cut::Blocks(7), |_, _, _| {
        assert_eq!(std::thread::current().id(), caller);
        Ok::<_, ()>(())
    })
    .unwrap();
}

#[test]
#[should_panic(expected = "different lengths")]
fn parts_of_different_lengths_are_a_bug() {
    let (mut a, b) = (vec![0u8; 10], vec![0u8; 9]);
    let _ = Pool::current_thread().for_each_block(
        &Control::new(),
        (&mut a[..], &b[..]),
        Cut::Blocks(4),
        |_, _, _| Ok::<_, ()>(()),
    );
}
