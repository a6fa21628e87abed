use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use lockstep_shard::{CancelToken, Control, Error, Pool, Progress};
use proptest::prelude::*;

use crate::WORKER_COUNTS;

/// Counts live instances: `live` now, `peak` the most ever alive at once.
#[derive(Default, Debug)]
struct Census {
    live: AtomicUsize,
    peak: AtomicUsize,
}

/// An item that registers itself in a census while alive.
#[derive(Debug)]
struct Tracked {
    value: u64,
    census: Arc<Census>,
}

impl Tracked {
    fn new(value: u64, census: &Arc<Census>) -> Self {
        let now = census.live.fetch_add(1, Ordering::SeqCst) + 1;
        census.peak.fetch_max(now, Ordering::SeqCst);
        Self {
            value,
            census: Arc::clone(census),
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.census.live.fetch_sub(1, Ordering::SeqCst);
    }
}

fn transform(position: usize, value: u64) -> u64 {
    value.wrapping_mul(6_364_136_223_846_793_005) ^ position as u64
}

/// The serial reference: chunk by chunk, item by item, as `write` would see it.
fn serial(values: &[u64], chunk: usize) -> Vec<(usize, Vec<u64>)> {
    values
        .chunks(chunk.max(1))
        .enumerate()
        .map(|(k, c)| {
            let start = k * chunk.max(1);
            (
                start,
                c.iter()
                    .enumerate()
                    .map(|(j, &v)| transform(start + j, v))
                    .collect(),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn pipeline_writes_what_the_serial_loop_writes(
        values in proptest::collection::vec(any::<u64>(), 0..2500),
        chunk in 1usize..300,
    ) {
        let expected = serial(&values, chunk);
        for (workers, pool) in crate::pools() {
            let mut written = Vec::new();
            let mut cursor = 0;
            let stats = pool
                .pipeline(
                    &Control::new(),
                    chunk,
                    |buf: &mut Vec<u64>, n| {
                        let end = (cursor + n).min(values.len());
                        buf.extend_from_slice(&values[cursor..end]);
                        cursor = end;
                        Ok::<_, ()>(())
                    },
                    |position, &v| Ok(transform(position, v)),
                    |position, out: &[u64]| {
                        written.push((position, out.to_vec()));
                        Ok(())
                    },
                )
                .unwrap();
            prop_assert_eq!(&written, &expected, "at {} workers", workers);
            prop_assert_eq!(stats.items, values.len() as u64);
            prop_assert_eq!(stats.chunks, expected.len() as u64);
        }
    }
}

#[test]
fn pipeline_never_holds_more_than_two_chunks() {
    const CHUNK: usize = 64;
    const CHUNKS: usize = 200;
    for workers in WORKER_COUNTS {
        let inputs = Arc::new(Census::default());
        let outputs = Arc::new(Census::default());
        let pool = Pool::new(workers).unwrap();
        let mut produced = 0u64;
        let mut checksum = 0u64;
        pool.pipeline(
            &Control::new(),
            CHUNK,
            |buf: &mut Vec<Tracked>, n| {
                let end = (produced + n as u64).min((CHUNK * CHUNKS) as u64 - 7);
                buf.extend((produced..end).map(|v| Tracked::new(v, &inputs)));
                produced = end;
                Ok::<_, ()>(())
            },
            |position, item| Ok(Tracked::new(transform(position, item.value), &outputs)),
            |_, out: &[Tracked]| {
                checksum = out
                    .iter()
                    .fold(checksum, |acc, t| acc.wrapping_add(t.value));
                Ok(())
            },
        )
        .unwrap();
        let expected = (0..(CHUNK * CHUNKS) as u64 - 7)
            .fold(0u64, |acc, v| acc.wrapping_add(transform(v as usize, v)));
        assert_eq!(checksum, expected);
        let (peak_in, peak_out) = (
            inputs.peak.load(Ordering::SeqCst),
            outputs.peak.load(Ordering::SeqCst),
        );
        assert!(peak_in <= 2 * CHUNK, "{peak_in} inputs alive at once");
        assert!(peak_out <= CHUNK, "{peak_out} outputs alive at once");
        assert_eq!(inputs.live.load(Ordering::SeqCst), 0);
        assert_eq!(outputs.live.load(Ordering::SeqCst), 0);
    }
}

#[test]
fn reading_the_next_chunk_overlaps_processing() {
    // The reader of chunk i + 1 waits until processing of chunk i has begun and is still going:
    // a pipeline that read and processed in turn would never let it through.
    let pool = Pool::new(2).unwrap();
    let busy = Arc::new((Mutex::new(0usize), Condvar::new()));
    let release = AtomicBool::new(false);
    let mut reads = 0;
    let mut overlapped = 0;
    pool.pipeline(
        &Control::new(),
        4,
        |buf: &mut Vec<u32>, n| {
            reads += 1;
            if reads > 1 {
                let (lock, ready) = &*busy;
                let (guard, timeout) = ready
                    .wait_timeout_while(lock.lock().unwrap(), Duration::from_secs(20), |b| *b == 0)
                    .unwrap();
                if !timeout.timed_out() && *guard > 0 {
                    overlapped += 1;
                }
                drop(guard);
                release.store(true, Ordering::SeqCst);
            }
            if reads <= 4 {
                buf.extend((0..n as u32).take(n));
            }
            Ok::<_, ()>(())
        },
        |_, &x| {
            let (lock, ready) = &*busy;
            *lock.lock().unwrap() += 1;
            ready.notify_all();
            // Hold the chunk until the reader has seen it in flight.
            let started = std::time::Instant::now();
            while !release.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(20) {
                std::thread::sleep(Duration::from_micros(200));
            }
            *lock.lock().unwrap() -= 1;
            Ok(x)
        },
        |_, _| {
            release.store(false, Ordering::SeqCst);
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(
        overlapped, 4,
        "each read after the first overlapped processing"
    );
}

#[test]
fn cancellation_stops_within_one_chunk() {
    const CHUNK: usize = 100;
    for (_, pool) in crate::pools() {
        let token = CancelToken::new();
        let control = Control::new().with_cancel(token.clone());
        let processed_after_cancel = AtomicUsize::new(0);
        let mut chunks_written = 0;
        let mut next = 0u64;
        let result = pool.pipeline(
            &control,
            CHUNK,
            |buf: &mut Vec<u64>, n| {
                buf.extend(next..next + n as u64);
                next += n as u64; // an endless stream: only cancellation ends it
                Ok::<_, ()>(())
            },
            |position, &v| {
                if token.is_cancelled() {
                    processed_after_cancel.fetch_add(1, Ordering::SeqCst);
                }
                if position == 5 * CHUNK + 17 {
                    token.cancel();
                }
                Ok(v)
            },
            |_, _| {
                chunks_written += 1;
                Ok(())
            },
        );
        assert!(matches!(result, Err(Error::Cancelled)), "{result:?}");
        assert_eq!(chunks_written, 5, "nothing is written after the cancel");
        assert!(processed_after_cancel.load(Ordering::SeqCst) < CHUNK);
    }
}

#[test]
fn pipeline_failures_come_from_the_lowest_position_whatever_the_stage() {
    let pool = Pool::new(3).unwrap();
    let run = |read_fails_at: Option<usize>,
               process_fails_at: Option<usize>,
               write_fails_at: Option<usize>| {
        let mut next = 0usize;
        pool.pipeline(
            &Control::new(),
            10,
            |buf: &mut Vec<usize>, n| {
                // Delivers the items before the failing position, then fails.
                let end = (next + n).min(95);
                if let Some(p) = read_fails_at.filter(|&p| p < end) {
                    buf.extend(next..p);
                    next = p;
                    return Err(format!("read {p}"));
                }
                buf.extend(next..end);
                next = end;
                Ok(())
            },
            |position, &v| {
                if process_fails_at == Some(position) {
                    return Err(format!("process {position}"));
                }
                Ok(v)
            },
            |position, _: &[usize]| {
                if write_fails_at == Some(position) {
                    return Err(format!("write {position}"));
                }
                Ok(())
            },
        )
    };
    let err = |r: Result<_, Error<String>>| match r.unwrap_err() {
        Error::Task { position, source } => (position, source),
        other => panic!("{other:?}"),
    };
    // The read of the chunk at 40 runs while the chunk at 30 is processed; the process error
    // at 33 comes first in the stream, so it wins.
    assert_eq!(
        err(run(Some(45), Some(33), None)),
        (33, "process 33".into())
    );
    assert_eq!(err(run(Some(45), None, None)), (45, "read 45".into()));
    assert_eq!(err(run(Some(45), None, Some(30))), (30, "write 30".into()));
    // Items 40..45 were delivered before the read failed: a process error among them wins, as
    // the serial loop would meet it first.
    assert_eq!(
        err(run(Some(45), Some(42), None)),
        (42, "process 42".into())
    );
    assert_eq!(
        err(run(None, Some(71), Some(70))),
        (71, "process 71".into())
    );
    assert_eq!(err(run(Some(0), None, None)), (0, "read 0".into()));
    assert!(run(None, None, None).is_ok());
}

#[test]
fn pipeline_progress_reaches_the_stream_length() {
    let pool = Pool::new(2).unwrap();
    let progress = Progress::new(|_| {});
    let control = Control::new().with_progress(progress.clone());
    progress.start(None);
    let mut next = 0u32;
    pool.pipeline(
        &control,
        33,
        |buf: &mut Vec<u32>, n| {
            let end = (next + n as u32).min(1000);
            buf.extend(next..end);
            next = end;
            Ok::<_, ()>(())
        },
        |_, &x| Ok(x),
        |_, _: &[u32]| Ok(()),
    )
    .unwrap();
    assert_eq!(
        progress.snapshot().unwrap(),
        lockstep_shard::Report {
            done: 1000,
            total: None
        }
    );
}
