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
//!
//! Every parallel variant checks its result against the serial one before it is timed.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use lockstep_shard::{Control, Pool};

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

criterion_group!(benches, bench_maps, bench_pipeline);
criterion_main!(benches);
