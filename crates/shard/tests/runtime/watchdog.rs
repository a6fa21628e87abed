//! The watchdog: a task that falls silent fails the run, naming it; a task that reports lives.

use std::time::{Duration, Instant};

use lockstep_shard::{Control, Error, Pool, Watchdog, split};

#[test]
fn a_silent_task_fails_the_run_within_the_timeout_and_is_named() {
    let pool = Pool::new(2).unwrap();
    let timeout = Duration::from_millis(150);
    let control = Control::new().with_watchdog(Watchdog::After(timeout));
    let ranges = split::balanced(200, 2);
    let started = Instant::now();
    let err = pool
        .map_ranges(&control, &ranges, |check, range| {
            if range.start == 100 {
                // Silent: checks whether to stop, never reports progress.
                while !check.should_stop() {
                    std::thread::sleep(Duration::from_millis(2));
                }
                return Ok(());
            }
            // Busy and reporting, for longer than the timeout.
            for _ in 0..100 {
                check.advance(1);
                std::thread::sleep(Duration::from_millis(5));
                if check.should_stop() {
                    break;
                }
            }
            Ok::<_, ()>(())
        })
        .unwrap_err();
    let elapsed = started.elapsed();
    match err {
        Error::Stalled {
            position,
            task,
            silent,
            timeout: limit,
        } => {
            assert_eq!((position, task), (100, 1));
            assert!(silent > timeout && limit == timeout);
        }
        other => panic!("expected a stall, got {other:?}"),
    }
    // Detected within the timeout and a patrol period (a quarter of it), with slack for a
    // loaded machine.
    assert!(elapsed < Duration::from_millis(600), "{elapsed:?}");
    let text = Error::<String>::Stalled {
        position: 100,
        task: 1,
        silent: Duration::from_millis(180),
        timeout,
    }
    .to_string();
    assert_eq!(
        text,
        "a worker stalled: the task starting at input position 100 reported no progress for 180.0ms (the watchdog allows 150.0ms)"
    );
}

#[test]
fn tasks_that_report_keep_running_past_the_timeout() {
    let pool = Pool::new(2).unwrap();
    let control = Control::new().with_watchdog(Watchdog::After(Duration::from_millis(100)));
    let ranges = split::balanced(2, 2);
    let done = pool
        .map_ranges(&control, &ranges, |check, range| {
            for _ in 0..40 {
                std::thread::sleep(Duration::from_millis(10));
                check.advance(1);
            }
            Ok::<_, ()>(range.start)
        })
        .unwrap();
    assert_eq!(done, vec![0, 1]);
}

#[test]
fn the_default_watchdog_and_off_let_a_quiet_run_finish() {
    let pool = Pool::new(2).unwrap();
    for control in [Control::new(), Control::new().with_watchdog(Watchdog::Off)] {
        let out = pool
            .map_ranges(&control, &split::balanced(2, 2), |_, r| {
                std::thread::sleep(Duration::from_millis(50));
                Ok::<_, ()>(r.start)
            })
            .unwrap();
        assert_eq!(out, vec![0, 1]);
    }
}

/// A task that waits for a run of its own is alive while that run reports: no false stall.
#[test]
fn a_task_running_a_nested_run_is_not_silent() {
    let pool = Pool::new(2).unwrap();
    let control = Control::new().with_watchdog(Watchdog::After(Duration::from_millis(100)));
    let out = pool
        .map_ranges(&control, &split::balanced(2, 2), |_, range| {
            // 300 ms of nested work that reports every 10 ms; the outer task reports nothing.
            let nested =
                pool.map_ranges(&control.nested(), &split::balanced(30, 30), |check, _| {
                    std::thread::sleep(Duration::from_millis(10));
                    check.advance(1);
                    Ok::<_, ()>(())
                })?;
            Ok::<_, Error<()>>(range.start + nested.len())
        })
        .unwrap();
    assert_eq!(out, vec![30, 31]);
}
