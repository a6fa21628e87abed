//! Sorting more fixed-length records than memory holds: runs sorted on the pool and spilled to
//! a temporary folder, then merged k-way (in passes of at most [`FAN_IN`] runs), read back in
//! order a record at a time.
//!
//! # Determinism
//! Records are ordered by their bytes, all of them: two records that compare equal are the same
//! bytes, so the output is the input's sorted multiset whatever the memory given, the run
//! lengths, the merge passes or the worker count. It equals `records.sort_unstable()` on the
//! whole input ([`sort_serial`]).
//!
//! # Memory and disk
//! A sort holds at most `memory` bytes of records (one run, allocated fallibly; sorted in place
//! in ranges, one a worker, and merged from them as it is written) and, when merging, a read
//! buffer per run of a pass that together take the same (at least 4 KiB a run: a pass of 64
//! runs takes 256 KiB under a smaller budget). Its runs take the input's bytes on
//! disk, twice during a pass that merges runs into a longer one; more than the disk limit
//! (the folder's free space when the sort starts, or the caller's limit) is refused before the
//! write that would pass it. The folder and every run in it are removed when the sort or its
//! output is dropped: on success, on an error, and while a panic unwinds.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::{Control, Cut, Pool, split};

/// The most runs one merge pass reads at once (open files and read buffers are per run).
pub const FAN_IN: usize = 64;

/// Records a merge pass writes between two cancellation checks.
const CANCEL_CHECK: u64 = 1 << 16;

/// The least bytes of a run's read buffer.
const MIN_READ_BUFFER: usize = 4096;

/// Where a sort spills and how much it may hold.
#[derive(Clone, Debug)]
pub struct SpillConfig<'a> {
    /// The folder its temporary folder is made in.
    pub dir: &'a Path,
    /// The most bytes of records held in memory at once (a run): at least one record.
    pub memory: usize,
    /// The most bytes its runs may take on disk; `None`: the folder's free space when it starts.
    pub disk: Option<u64>,
}

/// Why a sort failed. Its temporary files are removed either way.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpillError {
    /// Reading or writing its temporary files failed (a full disk among others).
    #[error("temporary files in {}", .dir.display())]
    Io {
        /// The folder the sort spills to.
        dir: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Its runs would take more disk than allowed.
    #[error(
        "temporary files in {}: {needed} bytes needed, more than the {limit} bytes the sort may take (the folder's free space when it started, or the limit given)",
        .dir.display()
    )]
    Disk {
        /// The folder.
        dir: PathBuf,
        /// The bytes the runs would take with the next write.
        needed: u64,
        /// The limit.
        limit: u64,
    },
    /// A run's records could not be allocated.
    #[error("the sort's run of {bytes} bytes")]
    Memory {
        /// The bytes asked for.
        bytes: usize,
        /// The allocator's refusal.
        #[source]
        source: crate::memory::AllocError,
    },
    /// The run was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// A worker failed sorting a run (a panic, a stall).
    #[error("sorting a run: {0}")]
    Run(String),
}

/// A sort of `N`-byte records that spills to disk past its memory (see the module).
#[derive(Debug)]
pub struct ExternalSort<const N: usize> {
    folder: tempfile::TempDir,
    run_records: usize,
    memory: usize,
    buffer: Vec<[u8; N]>,
    runs: Vec<Run>,
    disk_limit: u64,
    on_disk: u64,
    len: u64,
    /// Files written so far (each file's name is its number).
    files: usize,
}

/// A sorted run on disk.
#[derive(Debug)]
struct Run {
    path: PathBuf,
    records: u64,
}

impl<const N: usize> ExternalSort<N> {
    /// A sort spilling to a new temporary folder in `config.dir`.
    ///
    /// # Errors
    /// [`SpillError::Io`] if the folder cannot be made or its free space read.
    ///
    /// # Panics
    /// If `N` is 0 (a bug in the caller).
    pub fn new(config: &SpillConfig<'_>) -> Result<Self, SpillError> {
        assert!(N > 0, "invariant: records of at least one byte");
        let io = |source| SpillError::Io {
            dir: config.dir.to_owned(),
            source,
        };
        let folder = tempfile::Builder::new()
            .prefix(".lockstep-sort-")
            .tempdir_in(config.dir)
            .map_err(io)?;
        let disk_limit = match config.disk {
            Some(limit) => limit,
            None => free_space(folder.path()).map_err(io)?,
        };
        let run_records = (config.memory / N).max(1);
        Ok(Self {
            folder,
            run_records,
            memory: config.memory.max(N),
            buffer: Vec::new(),
            runs: Vec::new(),
            disk_limit,
            on_disk: 0,
            len: 0,
            files: 0,
        })
    }

    /// The records pushed so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether no record was pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The runs spilled so far.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Adds a record; a full run is sorted on `pool` and written to disk first.
    ///
    /// # Errors
    /// As [`finish`](Self::finish).
    pub fn push(
        &mut self,
        pool: &Pool,
        control: &Control,
        record: [u8; N],
    ) -> Result<(), SpillError> {
        if self.buffer.len() == self.run_records {
            self.spill(pool, control)?;
        }
        if self.buffer.len() == self.buffer.capacity() {
            // Grown by doubling up to a run, exactly (the allocator's own doubling would pass the
            // run's share): a small input never asks for the whole budget.
            let more = (self.run_records - self.buffer.len()).min(self.buffer.len().max(1024));
            crate::memory::try_reserve_exact(&mut self.buffer, more).map_err(|source| {
                SpillError::Memory {
                    bytes: (self.buffer.len() + more) * N,
                    source,
                }
            })?;
        }
        self.buffer.push(record);
        self.len += 1;
        Ok(())
    }

    /// Sorts the records held on `pool` and writes them as a run.
    fn spill(&mut self, pool: &Pool, control: &Control) -> Result<(), SpillError> {
        if control.is_cancelled() {
            return Err(SpillError::Cancelled);
        }
        let ranges = sort_ranges(pool, control, &mut self.buffer)?;
        let records = self.buffer.len() as u64;
        let path = self.next_path();
        self.reserve(records)?;
        let mut merge = InMemory::new(std::mem::take(&mut self.buffer), ranges);
        let written = write_run(&path, || Ok(merge.next_record()));
        self.buffer = merge.into_records();
        if let Err(error) = written {
            // Not a run: its bytes are not counted and its file is not kept.
            self.on_disk -= records * N as u64;
            let _ = std::fs::remove_file(&path);
            return Err(self.io(error));
        }
        self.runs.push(Run { path, records });
        self.buffer.clear();
        Ok(())
    }

    /// A new file's path in the folder.
    fn next_path(&mut self) -> PathBuf {
        self.files += 1;
        self.folder.path().join(format!("run-{}", self.files))
    }

    fn io(&self, source: std::io::Error) -> SpillError {
        SpillError::Io {
            dir: self.folder.path().to_owned(),
            source,
        }
    }

    /// Counts `records` more on disk, refused past the limit.
    fn reserve(&mut self, records: u64) -> Result<(), SpillError> {
        let needed = self.on_disk + records * N as u64;
        if needed > self.disk_limit {
            return Err(SpillError::Disk {
                dir: self.folder.path().to_owned(),
                needed,
                limit: self.disk_limit,
            });
        }
        self.on_disk = needed;
        Ok(())
    }

    /// Ends the input: the records in order. Nothing is written when they fit in memory;
    /// otherwise the last run is spilled and runs are merged in passes of [`FAN_IN`] until one
    /// pass can read them all.
    ///
    /// # Errors
    /// [`SpillError::Io`] (a full disk among others), [`SpillError::Disk`] past the limit,
    /// [`SpillError::Cancelled`], [`SpillError::Run`]; the temporary folder is removed.
    pub fn finish(mut self, pool: &Pool, control: &Control) -> Result<Sorted<N>, SpillError> {
        if control.is_cancelled() {
            return Err(SpillError::Cancelled);
        }
        if self.runs.is_empty() {
            let ranges = sort_ranges(pool, control, &mut self.buffer)?;
            let records = std::mem::take(&mut self.buffer);
            return Ok(Sorted {
                len: self.len,
                source: Source::Memory(InMemory::new(records, ranges)),
                failed: false,
                _folder: Some(self.folder),
            });
        }
        if !self.buffer.is_empty() {
            self.spill(pool, control)?;
        }
        self.buffer = Vec::new();
        while self.runs.len() > FAN_IN {
            if control.is_cancelled() {
                return Err(SpillError::Cancelled);
            }
            let group: Vec<Run> = self.runs.drain(..FAN_IN).collect();
            let records = group.iter().map(|r| r.records).sum();
            let path = self.next_path();
            self.reserve(records)?;
            let buffer = self.read_buffer(group.len());
            let mut written = 0u64;
            let merged = Heads::<N>::open(&group, buffer).and_then(|mut heads| {
                write_run(&path, || {
                    written += 1;
                    if written.is_multiple_of(CANCEL_CHECK) && control.is_cancelled() {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::Interrupted,
                            "cancelled",
                        ));
                    }
                    heads.next_record()
                })
            });
            if let Err(error) = merged {
                return Err(if control.is_cancelled() {
                    SpillError::Cancelled
                } else {
                    self.io(error)
                });
            }
            for run in &group {
                let _ = std::fs::remove_file(&run.path);
            }
            self.on_disk -= records * N as u64;
            self.runs.push(Run { path, records });
        }
        let heads =
            Heads::open(&self.runs, self.read_buffer(self.runs.len())).map_err(|e| self.io(e))?;
        Ok(Sorted {
            len: self.len,
            source: Source::Runs {
                heads,
                dir: self.folder.path().to_owned(),
            },
            failed: false,
            _folder: Some(self.folder),
        })
    }

    /// The read buffer of each of `runs` runs merged at once: the memory shared out.
    fn read_buffer(&self, runs: usize) -> usize {
        (self.memory / runs.max(1)).max(MIN_READ_BUFFER)
    }
}

/// Sorts ranges of `records` on `pool`, one a worker, in place; returns the ranges, each
/// sorted, for a k-way merge ([`InMemory`]).
fn sort_ranges<const N: usize>(
    pool: &Pool,
    control: &Control,
    records: &mut [[u8; N]],
) -> Result<Vec<Range<usize>>, SpillError> {
    let ranges = split::balanced(records.len(), pool.workers().max(1));
    pool.for_each_block(
        control,
        records,
        Cut::Ranges(&ranges),
        |_, _, block: &mut [[u8; N]]| {
            block.sort_unstable();
            Ok::<(), std::convert::Infallible>(())
        },
    )
    .map_err(|e| match e {
        crate::Error::Cancelled => SpillError::Cancelled,
        other => SpillError::Run(other.to_string()),
    })?;
    Ok(ranges)
}

/// The serial reference: every record sorted by its bytes at once.
pub fn sort_serial<const N: usize>(mut records: Vec<[u8; N]>) -> Vec<[u8; N]> {
    records.sort_unstable();
    records
}

/// Writes the records `next` gives, in order, to a new file at `path`. Not synced: a run
/// outlives no crash (its folder is temporary), and a full disk is reported by the writes.
fn write_run<const N: usize>(
    path: &Path,
    mut next: impl FnMut() -> std::io::Result<Option<[u8; N]>>,
) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 16, File::create(path)?);
    while let Some(record) = next()? {
        out.write_all(&record)?;
    }
    out.flush()
}

/// A k-way merge of sorted ranges of records held in memory (no second copy of them).
#[derive(Debug)]
struct InMemory<const N: usize> {
    records: Vec<[u8; N]>,
    next: Vec<usize>,
    ends: Vec<usize>,
    heap: BinaryHeap<Reverse<([u8; N], usize)>>,
}

impl<const N: usize> InMemory<N> {
    fn new(records: Vec<[u8; N]>, ranges: Vec<Range<usize>>) -> Self {
        let mut merge = Self {
            next: ranges.iter().map(|r| r.start).collect(),
            ends: ranges.iter().map(|r| r.end).collect(),
            heap: BinaryHeap::with_capacity(ranges.len()),
            records,
        };
        for i in 0..merge.next.len() {
            merge.refill(i);
        }
        merge
    }

    fn refill(&mut self, i: usize) {
        if self.next[i] < self.ends[i] {
            self.heap.push(Reverse((self.records[self.next[i]], i)));
            self.next[i] += 1;
        }
    }

    fn next_record(&mut self) -> Option<[u8; N]> {
        let Reverse((record, i)) = self.heap.pop()?;
        self.refill(i);
        Some(record)
    }

    /// The records' storage back (for the next run).
    fn into_records(self) -> Vec<[u8; N]> {
        self.records
    }
}

/// The heads of runs being merged: each run's next record on a heap, ties by run (equal
/// records are equal bytes, so ties never change the output).
#[derive(Debug)]
struct Heads<const N: usize> {
    readers: Vec<BufReader<File>>,
    left: Vec<u64>,
    heap: BinaryHeap<Reverse<([u8; N], usize)>>,
}

impl<const N: usize> Heads<N> {
    fn open(runs: &[Run], buffer: usize) -> std::io::Result<Self> {
        let mut heads = Self {
            readers: Vec::with_capacity(runs.len()),
            left: runs.iter().map(|r| r.records).collect(),
            heap: BinaryHeap::with_capacity(runs.len()),
        };
        for (i, run) in runs.iter().enumerate() {
            heads
                .readers
                .push(BufReader::with_capacity(buffer, File::open(&run.path)?));
            heads.refill(i)?;
        }
        Ok(heads)
    }

    /// Pushes run `i`'s next record, if it has one.
    fn refill(&mut self, i: usize) -> std::io::Result<()> {
        if self.left[i] == 0 {
            return Ok(());
        }
        let mut record = [0u8; N];
        self.readers[i].read_exact(&mut record)?;
        self.left[i] -= 1;
        self.heap.push(Reverse((record, i)));
        Ok(())
    }

    fn next_record(&mut self) -> std::io::Result<Option<[u8; N]>> {
        let Some(Reverse((record, i))) = self.heap.pop() else {
            return Ok(None);
        };
        self.refill(i)?;
        Ok(Some(record))
    }
}

/// A sort's output: its records in order, read a record at a time; after an error it yields
/// nothing more (the records after it are not a sorted whole). Its temporary folder is removed
/// when it is dropped.
#[derive(Debug)]
pub struct Sorted<const N: usize> {
    len: u64,
    source: Source<N>,
    /// Set by the first error: nothing is read after it (a run's record would be missing).
    failed: bool,
    _folder: Option<tempfile::TempDir>,
}

#[derive(Debug)]
enum Source<const N: usize> {
    Memory(InMemory<N>),
    Runs { heads: Heads<N>, dir: PathBuf },
}

impl<const N: usize> Sorted<N> {
    /// The records it holds.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<const N: usize> Iterator for Sorted<N> {
    type Item = Result<[u8; N], SpillError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let next = match &mut self.source {
            Source::Memory(merge) => merge.next_record().map(Ok),
            Source::Runs { heads, dir } => heads
                .next_record()
                .map_err(|source| SpillError::Io {
                    dir: dir.clone(),
                    source,
                })
                .transpose(),
        };
        self.failed = matches!(next, Some(Err(_)));
        next
    }
}

/// The bytes free to an unprivileged user on the file system holding `dir`.
fn free_space(dir: &Path) -> std::io::Result<u64> {
    #[cfg(target_os = "linux")]
    {
        let stat = rustix::fs::statvfs(dir).map_err(std::io::Error::from)?;
        Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        Ok(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(n: usize, seed: u64) -> Vec<[u8; 12]> {
        // A small generator with many repeats (the top byte from a few values).
        let mut x = seed;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let mut r = [0u8; 12];
                r[..8].copy_from_slice(&x.to_be_bytes());
                r[0] %= 5;
                r[8..].copy_from_slice(&u32::from(((x >> 20) % 3) == 1).to_le_bytes());
                r
            })
            .collect()
    }

    fn sorted(
        input: &[[u8; 12]],
        pool: &Pool,
        config: &SpillConfig<'_>,
    ) -> Result<(Vec<[u8; 12]>, usize), SpillError> {
        let control = Control::new();
        let mut sort = ExternalSort::<12>::new(config)?;
        for r in input {
            sort.push(pool, &control, *r)?;
        }
        let runs = sort.runs();
        let out = sort.finish(pool, &control)?;
        assert_eq!(out.len(), input.len() as u64);
        Ok((out.collect::<Result<Vec<_>, _>>()?, runs))
    }

    #[test]
    fn the_output_is_the_serial_sort_at_every_memory_and_worker_count() {
        let dir = tempfile::tempdir().unwrap();
        let input = records(5_000, 7);
        let expected = sort_serial(input.clone());
        let pools = [
            Pool::current_thread(),
            Pool::new(1).unwrap(),
            Pool::new(2).unwrap(),
            Pool::new(3).unwrap(),
            Pool::new(5).unwrap(),
        ];
        // In memory; a few runs; more runs than one pass merges (several passes).
        for memory in [1 << 20, 12 * 1000, 12 * 60, 12 * 7] {
            for pool in &pools {
                let config = SpillConfig {
                    dir: dir.path(),
                    memory,
                    disk: None,
                };
                let (out, runs) = sorted(&input, pool, &config).unwrap();
                assert!(
                    out == expected,
                    "memory {memory}, {} workers",
                    pool.workers()
                );
                assert_eq!(
                    runs == 0,
                    memory >= 12 * 5_000,
                    "memory {memory}: {runs} runs"
                );
            }
        }
        // A record a run: 5,000 runs, so that later passes merge earlier passes' outputs.
        let config = SpillConfig {
            dir: dir.path(),
            memory: 1,
            disk: None,
        };
        let (out, runs) = sorted(&input, &pools[2], &config).unwrap();
        // Runs spilled before `finish` (which spills the last).
        assert_eq!(runs, 4_999);
        assert!(out == expected, "a record a run");
        for n in [0, 1, 2] {
            let config = SpillConfig {
                dir: dir.path(),
                memory: 12,
                disk: None,
            };
            let input = records(n, 3);
            assert_eq!(
                sorted(&input, &pools[2], &config).unwrap().0,
                sort_serial(input)
            );
        }
        // Nothing is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_disk_limit_is_a_clear_error_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let input = records(1_000, 11);
        let pool = Pool::new(2).unwrap();
        // Enough for the runs once, not for a pass that copies them.
        let config = SpillConfig {
            dir: dir.path(),
            memory: 12 * 10,
            disk: Some(12 * 1_000 + 100),
        };
        let error = sorted(&input, &pool, &config).unwrap_err();
        assert!(
            matches!(error, SpillError::Disk { limit, .. } if limit == 12_100),
            "{error}"
        );
        assert!(
            error.to_string().contains("more than the 12100 bytes"),
            "{error}"
        );
        // A limit below the first run.
        let config = SpillConfig {
            dir: dir.path(),
            memory: 120,
            disk: Some(100),
        };
        assert!(matches!(
            sorted(&input, &pool, &config),
            Err(SpillError::Disk { .. })
        ));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // A folder that does not exist.
        let config = SpillConfig {
            dir: &dir.path().join("missing"),
            memory: 120,
            disk: None,
        };
        assert!(matches!(
            ExternalSort::<12>::new(&config),
            Err(SpillError::Io { .. })
        ));
    }

    #[test]
    fn after_a_read_error_the_output_yields_nothing_more() {
        let dir = tempfile::tempdir().unwrap();
        let pool = Pool::new(2).unwrap();
        let control = Control::new();
        // Five runs of 12,000 bytes, each read through a 4 KiB buffer.
        let config = SpillConfig {
            dir: dir.path(),
            memory: 12 * 1000,
            disk: None,
        };
        let mut sort = ExternalSort::<12>::new(&config).unwrap();
        for r in records(5_000, 9) {
            sort.push(&pool, &control, r).unwrap();
        }
        let mut out = sort.finish(&pool, &control).unwrap();
        // Every run cut short past what its buffer already holds.
        let folder = std::fs::read_dir(dir.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        for run in std::fs::read_dir(&folder).unwrap() {
            File::options()
                .write(true)
                .open(run.unwrap().path())
                .unwrap()
                .set_len(0)
                .unwrap();
        }
        let mut read = 0;
        let failed = loop {
            match out.next() {
                Some(Ok(_)) => read += 1,
                Some(Err(error)) => break error,
                None => panic!("the output ended without its error after {read} records"),
            }
        };
        assert!(matches!(failed, SpillError::Io { .. }), "{failed}");
        assert!(read < 5_000);
        assert!(out.next().is_none());
        drop(out);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_cancelled_sort_stops_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let pool = Pool::new(2).unwrap();
        let control = Control::new();
        let config = SpillConfig {
            dir: dir.path(),
            memory: 120,
            disk: None,
        };
        let mut sort = ExternalSort::<12>::new(&config).unwrap();
        for r in records(500, 5) {
            sort.push(&pool, &control, r).unwrap();
        }
        control.cancel_token().cancel();
        let error = sort.finish(&pool, &control).unwrap_err();
        assert!(matches!(error, SpillError::Cancelled), "{error}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
