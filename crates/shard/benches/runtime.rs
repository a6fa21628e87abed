//! The runtime's own overhead: ordered maps and the chunk pipeline against plain serial loops.
//!
//! `cargo bench -p lockstep-shard --bench runtime`
//!
//! - `map_trivial/*`: 1,048,576 items, one multiply-add each, so the figure is nearly all
//!   runtime overhead (task split, result placement, failure checks).
//! - `map_work/*`: 65,536 items of about 1 us each, the grain of a curve operation, to show
//!   parallel efficiency (time at 1 worker / (2 x time at 2 workers)).
//! - `pipeline/*`: the same trivial map over a 1,048,576-item stream in 4,096-item chunks,
//!   read from memory and written to a checksum.
//! - `blocks_trivial/*`: `for_each_block` over 1,048,576 f32 in 4,096-item blocks, one
//!   multiply-add each (`x * 0.5 + 1`, which stays bounded), in place, against the bare serial
//!   loop: the plan executor's shape. Checked once on fresh data, then timed in place.
//! - `blocks_work/*`: `for_each_block` over 65,536 items of about 1 us.
//! - `owners/*`: 1,048,576 updates (a ~0.1 us xorshift each) to 4,096 targets, read from a
//!   stream in batches of 16,384: batch by batch (`apply`, reading between batches) against
//!   `apply_stream` (reading the next batch while the owners apply), with uniform targets and
//!   with 70% of updates on target 0, without and with it declared hot.
//!
//! Every parallel variant checks its result against the serial one before it is timed.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use lockstep_shard::{Control, Cut, Owned, Pool};

const TRIVIAL_ITEMS: usize = 1 << 20;
const WORK_ITEMS: usize = 1 << 16;
const CHUNK: usize = 4096;
const WORKERS: [usize; 2] = [1, 2];

fn trivial(i: usize, x: &u64) -> u64 {
    x.wrapping_mul(3).wrapping_add(i as u64)
}

/// About a microsecond of dependent arithmetic (an xorshift chain).
fn work(i: usize, x: &u64) -> u64 {
    let mut v = *x ^ i as u64 | 1;
    for _ in 0..400 {
        v ^= v << 13;
        v ^= v >> 7;
        v ^= v << 17;
    }
    v
}

fn serial_map(items: &[u64], f: fn(usize, &u64) -> u64) -> Vec<u64> {
    items.iter().enumerate().map(|(i, x)| f(i, x)).collect()
}

fn bench_maps(c: &mut Criterion) {
    for (name, len, f) in [
        (
            "map_trivial",
            TRIVIAL_ITEMS,
            trivial as fn(usize, &u64) -> u64,
        ),
        ("map_work", WORK_ITEMS, work),
    ] {
        let items: Vec<u64> = (0..len as u64).collect();
        let expected = serial_map(&items, f);
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Elements(len as u64));
        group.bench_function("serial", |b| b.iter(|| serial_map(black_box(&items), f)));
        for workers in WORKERS {
            let pool = Pool::new(workers).expect("pool");
            let control = Control::new();
            let run = || {
                pool.map_items(&control, &items, |i, x| Ok::<_, ()>(f(i, x)))
                    .expect("infallible")
            };
            assert_eq!(run(), expected);
            group.bench_function(BenchmarkId::new("workers", workers), |b| b.iter(run));
        }
        group.finish();
    }
}

fn bench_pipeline(c: &mut Criterion) {
    let items: Vec<u64> = (0..TRIVIAL_ITEMS as u64).collect();
    let serial = || {
        let mut sum = 0u64;
        for (k, chunk) in items.chunks(CHUNK).enumerate() {
            let out: Vec<u64> = chunk
                .iter()
                .enumerate()
                .map(|(j, x)| trivial(k * CHUNK + j, x))
                .collect();
            sum = out.iter().fold(sum, |a, v| a.wrapping_add(*v));
        }
        sum
    };
    let expected = serial();
    let mut group = c.benchmark_group("pipeline");
    group.throughput(Throughput::Elements(TRIVIAL_ITEMS as u64));
    group.bench_function("serial", |b| b.iter(serial));
    for workers in WORKERS {
        let pool = Pool::new(workers).expect("pool");
        let control = Control::new();
        let run = || {
            let (mut cursor, mut sum) = (0usize, 0u64);
            pool.pipeline(
                &control,
                CHUNK,
                |buf: &mut Vec<u64>, n| {
                    let end = (cursor + n).min(items.len());
                    buf.extend_from_slice(&items[cursor..end]);
                    cursor = end;
                    Ok::<_, ()>(())
                },
                |i, x| Ok(trivial(i, x)),
                |_, out: &[u64]| {
                    sum = out.iter().fold(sum, |a, v| a.wrapping_add(*v));
                    Ok(())
                },
            )
            .expect("infallible");
            sum
        };
        assert_eq!(run(), expected);
        group.bench_function(BenchmarkId::new("workers", workers), |b| b.iter(run));
    }
    group.finish();
}

const BLOCK: usize = 4096;

fn bench_blocks(c: &mut Criterion) {
    let input: Vec<f32> = (0..TRIVIAL_ITEMS).map(|i| i as f32 * 0.25).collect();
    let serial = |data: &mut [f32]| data.iter_mut().for_each(|x| *x = *x * 0.5 + 1.0);
    let mut expected = input.clone();
    serial(&mut expected);
    let mut group = c.benchmark_group("blocks_trivial");
    group.throughput(Throughput::Elements(TRIVIAL_ITEMS as u64));
    let mut data = input.clone();
    group.bench_function("serial", |b| b.iter(|| serial(black_box(&mut data))));
    for workers in WORKERS {
        let pool = Pool::new(workers).expect("pool");
        let control = Control::new();
        let run = |data: &mut [f32]| {
            pool.for_each_block(&control, data, Cut::Blocks(BLOCK), |_, _, block| {
                serial(block);
                Ok::<_, ()>(())
            })
            .expect("infallible");
        };
        data.copy_from_slice(&input);
        run(&mut data);
        assert_eq!(data, expected);
        group.bench_function(BenchmarkId::new("workers", workers), |b| {
            b.iter(|| run(black_box(&mut data)));
        });
    }
    group.finish();

    let items: Vec<u64> = (0..WORK_ITEMS as u64).collect();
    let expected = serial_map(&items, work);
    let mut group = c.benchmark_group("blocks_work");
    group.throughput(Throughput::Elements(WORK_ITEMS as u64));
    let mut out = vec![0u64; WORK_ITEMS];
    group.bench_function("serial", |b| {
        b.iter(|| {
            for (i, (o, x)) in out.iter_mut().zip(&items).enumerate() {
                *o = work(i, x);
            }
        });
    });
    for workers in WORKERS {
        let pool = Pool::new(workers).expect("pool");
        let control = Control::new();
        let run = |out: &mut Vec<u64>| {
            pool.for_each_block(
                &control,
                (&mut out[..], &items[..]),
                Cut::Blocks(256),
                |_, range, (out, items)| {
                    for ((i, o), x) in range.zip(out.iter_mut()).zip(items) {
                        *o = work(i, x);
                    }
                    Ok::<_, ()>(())
                },
            )
            .expect("infallible");
        };
        run(&mut out);
        assert_eq!(out, expected);
        group.bench_function(BenchmarkId::new("workers", workers), |b| {
            b.iter(|| run(&mut out))
        });
    }
    group.finish();
}

const UPDATES: usize = 1 << 20;
const TARGETS: usize = 4096;
const BATCH: usize = 16_384;

/// About 0.1 us of arithmetic folded into a target.
fn fold(target: &mut u64, update: &(usize, u64)) -> Result<(), ()> {
    let mut v = update.1 | 1;
    for _ in 0..40 {
        v ^= v << 13;
        v ^= v >> 7;
        v ^= v << 17;
    }
    *target = target.wrapping_add(v);
    Ok(())
}

fn bench_owners(c: &mut Criterion) {
    for (name, hot_share) in [("uniform", 0u64), ("hot70", 70)] {
        let updates: Vec<(usize, u64)> = (0..UPDATES as u64)
            .map(|i| {
                let r = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
                let target = if r % 100 < hot_share {
                    0
                } else {
                    (r % TARGETS as u64) as usize
                };
                (target, i)
            })
            .collect();
        let mut serial = vec![0u64; TARGETS];
        for u in &updates {
            fold(&mut serial[u.0], u).expect("infallible");
        }
        let mut group = c.benchmark_group(format!("owners_{name}"));
        group.sample_size(10);
        group.throughput(Throughput::Elements(UPDATES as u64));
        group.bench_function("serial", |b| {
            b.iter(|| {
                let mut targets = vec![0u64; TARGETS];
                for u in &updates {
                    fold(&mut targets[u.0], u).expect("infallible");
                }
                targets
            });
        });
        for workers in WORKERS {
            let pool = Pool::new(workers).expect("pool");
            let control = Control::new();
            let owned = |hot: bool| {
                let owned = Owned::new(vec![0u64; TARGETS], workers);
                if hot {
                    owned.with_hot(&[0], || 0, |t, p| *t = t.wrapping_add(p))
                } else {
                    owned
                }
            };
            let batched = || {
                let mut owned = owned(false);
                for (k, batch) in updates.chunks(BATCH).enumerate() {
                    // Reading a batch: copying it from the stream.
                    let batch: Vec<(usize, u64)> = batch.to_vec();
                    owned
                        .apply(&pool, &control, k * BATCH, &batch, |u| u.0, fold)
                        .expect("infallible");
                }
                owned.into_vec()
            };
            let streamed = |hot: bool| {
                let mut owned = owned(hot);
                owned
                    .apply_stream(
                        &pool,
                        &control,
                        updates.iter().map(|&u| Ok(u)),
                        BATCH,
                        |u| u.0,
                        fold,
                    )
                    .expect("infallible");
                owned.into_vec()
            };
            assert_eq!(batched(), serial);
            assert_eq!(streamed(false), serial);
            assert_eq!(streamed(true), serial);
            group.bench_function(BenchmarkId::new("batched", workers), |b| b.iter(batched));
            group.bench_function(BenchmarkId::new("overlapped", workers), |b| {
                b.iter(|| streamed(false));
            });
            if hot_share > 0 {
                group.bench_function(BenchmarkId::new("overlapped_hot", workers), |b| {
                    b.iter(|| streamed(true));
                });
            }
        }
        group.finish();
    }
}

criterion_group!(
    benches,
    bench_maps,
    bench_pipeline,
    bench_blocks,
    bench_owners
);
criterion_main!(benches);
