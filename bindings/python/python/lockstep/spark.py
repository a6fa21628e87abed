"""PSI masking on Spark: a party whose records live in a cluster masks them on its executors, and
its driver writes the files `lockstep psi` writes for the same rows, byte for byte:

- `request(df, ...)`: the joiner's request (`lockstep psi request`);
- `setup(df, ...)`: the starter's raw setup and its permutation, the association table
  (`lockstep psi setup --format raw --permutation-out`);
- `respond(spark, ...)`: the starter's response to a request file (`lockstep psi respond`).

The rest of a round (`intersect`, `resolve`) reads these files with the CLI, past memory
(`--memory`). The bytes are the CLI's at every partitioning, executor count and task retry:

- **Keys** are made by the engine's record rules in `mapInArrow` (`on=` one column as it is,
  several joined unambiguously, `normalize=True` trimming, lowercasing, collapsing whitespace);
  a null field is an empty one (Spark's CSV reader reads an empty field as null). A row whose
  key is empty is counted and left out of the set, as the CLI leaves it.
- **Rows** are numbered 0, 1, 2, ... in the DataFrame's order, partition by partition (Spark's
  `spark_partition_id` and `monotonically_increasing_id`, made consecutive from the partitions'
  counts). For one CSV file read by `read_csv` that is the file's order; Spark orders the
  splits of several files by size, so give one file, or a DataFrame in the order you mean.
  The DataFrame must give the same rows when Spark computes a partition again (a lost executor,
  a retried task): a file read is; a random sample or a non-deterministic join is not
  (`checkpoint()` it first).
- **The request** is the distinct keys in order of first row, each masked once; **the raw
  setup** the distinct keys masked, sorted by Spark on the element's bytes (ties by first row);
  **the permutation** a join of every row with its key's setup position, sorted by position
  then row. The driver writes each message from the sorted partitions in order, holding a
  partition or two at a time (`toLocalIterator`'s prefetch): keep partitions to tens of MB
  (`spark.sql.shuffle.partitions`; a response task re-masks at most 2^20 elements).
- **The response** re-masks a request the driver first copies, checked whole, into `tmp` as
  packed elements; each task reads its range of that file. `tmp` must be a folder every
  executor reads at the same path (a shared or network file system on a real cluster; the
  driver's temporary folder suffices for `local[N]` and for workers on the driver's machine).

**Where the key travels**: the driver reads the key file (`lockstep psi key new` writes one; a
regular file of 32 bytes, private to its owner unless `allow_open_key=True`) and sends its bytes
to the executors as a Spark broadcast. A broadcast travels unencrypted between the driver and
the executors unless `spark.authenticate` and `spark.network.crypto.enabled` are set, and its
blocks may be written to `spark.local.dir` on every executor: whoever can read the cluster's
network or those folders can read the key (`spark.io.encryption.enabled` encrypts what Spark
writes there). PySpark also pickles a broadcast into a file in the driver's `spark.local.dir`,
and an executor's Python worker, reused between tasks, keeps the broadcast's `bytes`, which
Python cannot wipe; the executors' helpers wipe their own copies when dropped, and the
broadcast is destroyed when the step ends, however it ends.

Refusals are `PsiError`s with the engine's codes, raised on the driver also when an executor
found them (Spark first retries the task, `spark.task.maxFailures` times). Outputs are staged
beside their destination and put in place only when whole; an output that names an input (the
key file, the request) is refused before any work.

The executors' Python must have this package (`PYSPARK_PYTHON` pointing at the environment
that has it) and pyarrow.

```python
from pyspark.sql import SparkSession
import lockstep.spark as ls

spark = SparkSession.builder.master("local[2]").getOrCreate()
clinic = ls.read_csv(spark, "clinic.csv")
ls.setup(clinic, on=["email"], normalize=True, key="starter.key",
         out="setup.bin", permutation_out="perm.csv")
registry = ls.read_csv(spark, "registry.csv")
ls.request(registry, on=["email"], normalize=True, key="joiner.key", out="request.bin")
ls.respond(spark, request="request.bin", key="starter.key", joiner_count=1_000_000,
           out="response.bin")
# then: lockstep psi intersect ... --pairs-out pairs.csv; lockstep psi resolve ...
```
"""

import contextlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from typing import Iterator, List, Optional, Sequence, Union

import numpy as np
import pyarrow as pa

from lockstep import _native
from lockstep._errors import PsiError

__all__ = ["PsiError", "Written", "read_csv", "request", "respond", "setup"]

On = Union[str, Sequence[str]]
PathLike = Union[str, "os.PathLike[str]"]

#: An element's length in bytes (a compressed P-256 point).
_ELEMENT_LEN = 33

#: The most elements a response task re-masks (33 MB of them): the driver collects a
#: partition at a time.
_ELEMENTS_A_TASK = 1 << 20


@dataclass(frozen=True)
class Written:
    """What a step wrote."""

    #: The message's elements (distinct keys masked, or the request's elements re-masked).
    elements: int
    #: The records' rows (0 for a response).
    rows: int
    #: The SHA-256 of the message file (hex), as a permutation names it.
    sha256: str


def read_csv(spark, path: PathLike):
    """A CSV file with a header read as the CLI reads `--input`, as near as Spark's reader
    comes: every column a string, quotes doubled inside quoted fields, whitespace kept, an empty
    field null (which keys read as empty). Where Spark's reader differs from the engine's, the
    files differ from the CLI's for the same file:
    - bytes that are not UTF-8 become U+FFFD (the CLI keys them as they are, or refuses them
      under `normalize`): two keys differing there become one;
    - a line of whitespace alone is dropped (the CLI counts it as a row, or refuses it);
    - a short row's missing fields are null, so an empty key (the CLI refuses the row);
    - header names differing in case alone are renamed (`email`, `EMAIL`: `email0`, `EMAIL1`);
    - a field spanning lines, a lone carriage return, a byte-order mark.
    Keep those out of the files, or make the rows with the CLI (`lockstep psi`, within
    `--memory`)."""
    return (
        spark.read.option("header", True)
        .option("inferSchema", False)
        .option("escape", '"')
        .option("ignoreLeadingWhiteSpace", False)
        .option("ignoreTrailingWhiteSpace", False)
        .option("mode", "FAILFAST")
        .csv(os.fspath(path))
    )


def _columns(on: On) -> List[str]:
    columns = [on] if isinstance(on, str) else list(on)
    if not columns or not all(isinstance(c, str) for c in columns):
        raise PsiError("PSI_USAGE", "on: a column name or a non-empty list of them")
    return columns


def _arrow_column(array: pa.Array):
    """An Arrow string or binary column as the engine takes it: `(data, offsets)` bytes."""
    array = array.fill_null("") if array.null_count else array
    if pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type):
        array = array.cast(pa.large_binary()).cast(pa.binary())
    elif not pa.types.is_binary(array.type):
        array = array.cast(pa.binary())
    _, offsets, data = array.buffers()
    offsets = np.frombuffer(offsets, dtype="<u4", count=len(array) + 1, offset=array.offset * 4)
    return (data.to_pybytes() if data is not None else b""), offsets.tobytes()


def _binary(data: bytes, offsets: bytes) -> pa.Array:
    count = len(offsets) // 4 - 1
    return pa.Array.from_buffers(pa.binary(), count, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _elements(packed: bytes) -> pa.Array:
    count = len(packed) // _ELEMENT_LEN
    offsets = np.arange(0, (count + 1) * _ELEMENT_LEN, _ELEMENT_LEN, dtype="<i4")
    return pa.Array.from_buffers(pa.binary(), count, [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(packed)])


def _numbered(df, name: str):
    """`df` with a column `name` numbering its rows 0, 1, 2, ... in partition order: a
    partition's rows are consecutive from the counts of the partitions before it. Persisted, so
    every later job numbers the same rows alike."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    tagged = df.withColumn("_lockstep_part", F.spark_partition_id()).withColumn(
        "_lockstep_id", F.monotonically_increasing_id()
    ).persist(StorageLevel.MEMORY_AND_DISK)
    counts = sorted(tagged.groupBy("_lockstep_part").count().collect())
    starts, total = [], 0
    for part, count in counts:
        starts.append((part, total))
        total += count
    spark = df.sparkSession
    starts_df = spark.createDataFrame(starts or [(0, 0)], "_lockstep_part int, _lockstep_start long")
    local = F.col("_lockstep_id") - F.shiftleft(F.col("_lockstep_part").cast("long"), 33)
    numbered = (
        tagged.join(F.broadcast(starts_df), "_lockstep_part")
        .withColumn(name, F.col("_lockstep_start") + local)
        .drop("_lockstep_part", "_lockstep_id", "_lockstep_start")
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    return numbered, total, tagged


def _keyed(df, columns: List[str], normalize: bool):
    """`(row, key)` for every row of `df`, rows numbered in its order, keys by the engine's rules
    (empty for a row without one). `keyed`'s partitions are in row order."""
    from pyspark.sql import functions as F

    header = list(dict.fromkeys(columns))  # a key may name a column twice, as --column may
    missing = [c for c in header if c not in df.columns]
    if missing:
        raise PsiError("PSI_INPUT", f"no column {missing[0]!r} in the DataFrame (its columns: {df.columns})")
    quoted = [F.col("`" + c.replace("`", "``") + "`") for c in header]
    numbered, rows, tagged = _numbered(df.select(*quoted), "_lockstep_row")
    key = list(columns)

    def keys(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            row = batch.column("_lockstep_row")
            data, offsets = _native.column_keys(
                header, [_arrow_column(batch.column(i)) for i in range(len(header))], key, normalize,
                row[0].as_py(),
            )
            yield pa.RecordBatch.from_arrays([row, _binary(data, offsets)], names=["row", "key"])

    keyed = numbered.mapInArrow(keys, "row long, key binary")
    return keyed, rows, [numbered, tagged]


def _masked(distinct, role: str, key_bc):
    """`(first, element)`: each distinct key masked on the executors with the broadcast key."""

    def mask(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        helper = _native.Helper(role, key_bc.value)
        for batch in batches:
            if batch.num_rows == 0:
                continue
            packed = helper.mask(*_arrow_column(batch.column("key")))
            yield pa.RecordBatch.from_arrays([batch.column("first"), _elements(packed)], names=["first", "element"])

    return distinct.mapInArrow(mask, "first long, element binary")


def _packed(df, value: Optional[str], numbers: Sequence[str] = ()):
    """The rows of `df` as the driver reads them, in partition order: one row a batch, with
    `value`'s bytes (`data`) and offsets from 0 (`offsets`, little-endian u32s), and each of
    `numbers` as little-endian u64s (`n0`, `n1`, ...)."""
    numbers = list(numbers)
    names = ["data", "offsets"] + [f"n{i}" for i in range(len(numbers))]

    def pack(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            fields = [b"", b""]
            if value is not None:
                data, offsets = _arrow_column(batch.column(value))
                ends = np.frombuffer(offsets, dtype="<u4")
                fields = [data[ends[0] : ends[-1]], (ends - ends[0]).astype("<u4").tobytes()]
            fields += [batch.column(n).to_numpy().astype("<u8").tobytes() for n in numbers]
            yield pa.RecordBatch.from_arrays([pa.array([f], pa.binary()) for f in fields], names=names)

    return df.mapInArrow(pack, ", ".join(f"{n} binary" for n in names))


def _rows_in_order(df):
    """The driver's pass over `df`, partition by partition, in order."""
    return df.toLocalIterator(prefetchPartitions=True)


_EXECUTOR_REFUSAL = re.compile(r"PsiError: (PSI_[A-Z_]+): ([^\n]*)")


@contextlib.contextmanager
def _step():
    """A step's run: a refusal raised on an executor (Spark hands it back as its own exception,
    after its task's retries) raised again as the `PsiError` it was; what the step holds
    (persisted frames, the key's broadcast, writers not committed) let go on every exit."""
    held = _Held()
    try:
        yield held
    except Exception as error:
        found = None if isinstance(error, PsiError) else _EXECUTOR_REFUSAL.search(str(error))
        if found is not None:
            raise PsiError(found.group(1), found.group(2).strip()) from error
        raise
    finally:
        held.release()


class _Held:
    """What a step holds until it ends."""

    def __init__(self):
        self.frames = []
        self.writers = []
        self.broadcast = None

    def frame(self, df):
        self.frames.append(df)
        return df

    def writer(self, writer):
        self.writers.append(writer)
        return writer

    def key(self, spark, key: PathLike, allow_open_key: bool):
        self.broadcast = spark.sparkContext.broadcast(_native.read_key(os.fspath(key), allow_open_key))
        return self.broadcast

    def release(self):
        for writer in self.writers:
            writer.abort()  # a committed writer has nothing left to drop
        for frame in self.frames:
            frame.unpersist()
        if self.broadcast is not None:
            self.broadcast.destroy()


def _computed(df, held: _Held):
    """`df` persisted and computed, every partition at once on the executors: the driver's pass
    (`toLocalIterator`) computes a partition or two at a time, and a sort's sampling pass reads
    its input again, so masked elements are made here, once. Returns it and its rows."""
    from pyspark import StorageLevel

    held.frame(df.persist(StorageLevel.MEMORY_AND_DISK))
    return df, df.count()


def request(
    df,
    *,
    on: On,
    key: PathLike,
    out: PathLike,
    normalize: bool = False,
    size_only: bool = False,
    allow_open_key: bool = False,
) -> Written:
    """The joiner's request over the rows of `df` keyed on `on`, masked on the executors with
    the key file `key`, written by the driver to `out`: the bytes of `lockstep psi request
    --input FILE --column ... [--normalize] [--size-only]` over the same rows.

    Raises `PsiError`: `PSI_INPUT` for a missing column, no row with a key, or a key field that
    is not UTF-8 under `normalize`; `PSI_USAGE` for `out` naming the key file; `PSI_FILE` for a
    key or output file; the engine's codes for a key that cannot be used. `out` is left as it
    was on any failure."""
    from pyspark.sql import functions as F

    columns = _columns(on)
    with _step() as held:
        writer = held.writer(_native.MessageOut(os.fspath(out), "request", size_only=size_only,
                                                inputs=[os.fspath(key)]))
        key_bc = held.key(df.sparkSession, key, allow_open_key)
        keyed, rows, frames = _keyed(df, columns, normalize)
        held.frames.extend(frames)
        distinct = (
            keyed.where(F.length("key") > 0).groupBy("key").agg(F.min("row").alias("first"))
        )
        # Sorted before masking: a sort's sampling pass reads its input again, and keys are
        # cheap to read again where masked elements are not; masking keeps the order.
        masked, _ = _computed(_masked(distinct.orderBy("first"), "joiner", key_bc), held)
        for part in _rows_in_order(_packed(masked, "element")):
            writer.push(part.data)
        elements = writer.written
        if elements == 0:
            raise PsiError("PSI_INPUT", "no row has a non-empty key; nothing to intersect")
        digest = writer.finish()
        writer.commit()
        return Written(elements=elements, rows=rows, sha256=digest)


def setup(
    df,
    *,
    on: On,
    key: PathLike,
    out: PathLike,
    permutation_out: Optional[PathLike] = None,
    normalize: bool = False,
    tmp: Optional[PathLike] = None,
    allow_open_key: bool = False,
) -> Written:
    """The starter's raw setup over the rows of `df` keyed on `on`, masked on the executors
    with the key file `key`, sorted by Spark, written by the driver to `out`, and with
    `permutation_out` its permutation (setup positions to rows, by a join and a sort): the
    bytes of `lockstep psi setup --format raw --input FILE --column ... [--normalize]
    [--permutation-out ...]` over the same rows. The permutation's entries wait in an unnamed
    file in `tmp` (default: the permutation's folder) until its digests are known.

    Raises `PsiError` as `request` does (and `PSI_USAGE` for the permutation naming the setup's
    file); neither file is put in place until both are whole (then the permutation, then the
    setup)."""
    from pyspark.sql import functions as F

    columns = _columns(on)
    with _step() as held:
        permutation = None
        if permutation_out is not None:
            folder = os.fspath(tmp) if tmp is not None else os.path.dirname(os.path.abspath(permutation_out))
            permutation = held.writer(_native.PermutationOut(
                os.fspath(permutation_out), folder, columns, normalize, os.fspath(out), inputs=[os.fspath(key)]))
        key_bc = held.key(df.sparkSession, key, allow_open_key)
        keyed, rows, frames = _keyed(df, columns, normalize)
        keyed, _ = _computed(keyed, held)
        distinct, count = _computed(
            keyed.where(F.length("key") > 0).groupBy("key").agg(F.min("row").alias("first")), held
        )
        # The rows' numbering is in `keyed` now (a lost block of it is recomputed from the
        # input, as the numbering was).
        for frame in frames:
            frame.unpersist()
        if count == 0:
            raise PsiError("PSI_INPUT", "no row has a non-empty key; nothing to intersect")
        writer = held.writer(_native.MessageOut(os.fspath(out), "raw_setup", count=count, inputs=[os.fspath(key)]))
        # Masked once and kept: the sort's sampling pass reads its input again.
        masked, _ = _computed(_masked(distinct, "starter", key_bc), held)
        ranked, _, tagged = _numbered(masked.orderBy("element", "first"), "position")
        held.frames.extend([ranked, tagged])
        for part in _rows_in_order(_packed(ranked, "element")):
            writer.push(part.data)
        digest = writer.finish()
        if permutation is not None:
            # `keyed`'s partitions are in row order: every row's key, for the key column's digest.
            for part in _rows_in_order(_packed(keyed, "key")):
                permutation.keys(part.data, part.offsets)
            positions = distinct.join(ranked.select("first", "position"), "first").select("key", "position")
            entries = (
                keyed.where(F.length("key") > 0)
                .join(positions, "key")
                .select("position", "row")
                .orderBy("position", "row")
            )
            for part in _rows_in_order(_packed(entries, None, ["position", "row"])):
                permutation.entries(part.n0, part.n1)
            permutation.finish(count, digest)
            permutation.commit()
        writer.commit()
        return Written(elements=count, rows=rows, sha256=digest)


def respond(
    spark,
    *,
    request: PathLike,
    key: PathLike,
    out: PathLike,
    joiner_count: int,
    size_only: bool = False,
    tmp: Optional[PathLike] = None,
    partitions: Optional[int] = None,
    allow_open_key: bool = False,
) -> Written:
    """The starter's response to the request file `request` (at most `joiner_count` elements),
    re-masked on the executors with the key file `key`, written by the driver to `out`: the
    bytes of `lockstep psi respond [--size-only]`. The driver first copies the request's
    elements, checked whole, into a folder in `tmp` that every executor must read at the same
    path, as the driver's user (default: the system's temporary folder); `partitions` tasks
    (default: Spark's default parallelism, more where a task would re-mask over 2^20 elements)
    each re-mask a range of them. A size-only response is sorted by Spark.

    Raises `PsiError` for the request (`PSI_MESSAGE`, `PSI_LIMIT`, `PSI_ROUND` for the other
    mode), `PSI_USAGE` for `out` naming an input, `PSI_FILE` for a file; `out` is left as it was
    on any failure."""
    if isinstance(joiner_count, bool) or not isinstance(joiner_count, int) or joiner_count < 1:
        raise PsiError("PSI_USAGE", f"joiner_count must be a whole number of at least 1, not {joiner_count!r}")
    with _step() as held:
        writer = held.writer(_native.MessageOut(os.fspath(out), "response",
                                                inputs=[os.fspath(key), os.fspath(request)]))
        key_bc = held.key(spark, key, allow_open_key)
        work = tempfile.mkdtemp(prefix=".lockstep-spark-", dir=os.fspath(tmp) if tmp is not None else None)
        try:
            packed = os.path.join(work, "request.elements")
            count = _native.unpack_request(os.fspath(request), packed, joiner_count, size_only)
            asked = partitions or spark.sparkContext.defaultParallelism
            parts = max(1, min(count, max(asked, -(-count // _ELEMENTS_A_TASK))))
            block = 8192

            def remask(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
                helper = _native.Helper("starter", key_bc.value)
                with open(packed, "rb") as elements:
                    for batch in batches:
                        for part in batch.column("id").to_pylist():
                            start, end = count * part // parts, count * (part + 1) // parts
                            for first in range(start, end, block):
                                last = min(end, first + block)
                                elements.seek(first * _ELEMENT_LEN)
                                chunk = elements.read((last - first) * _ELEMENT_LEN)
                                if len(chunk) != (last - first) * _ELEMENT_LEN:
                                    raise PsiError("PSI_FILE", f"{packed} is shorter than its {count} elements")
                                yield pa.RecordBatch.from_arrays(
                                    [pa.array(np.arange(first, last, dtype=np.int64)),
                                     _elements(helper.remask(chunk, first))],
                                    names=["first", "element"],
                                )

            ids = spark.range(0, parts, numPartitions=parts)
            remasked, _ = _computed(ids.mapInArrow(remask, "first long, element binary"), held)
            if size_only:
                # A size-only response is sorted by bytes; a reveal one is in request order,
                # which the ranges' partitions already are.
                remasked = remasked.orderBy("element")
            for part in _rows_in_order(_packed(remasked, "element")):
                writer.push(part.data)
            if writer.written != count:
                raise PsiError("PSI_INTERNAL", f"{writer.written} elements re-masked of the request's {count}")
            digest = writer.finish()
            writer.commit()
            return Written(elements=count, rows=0, sha256=digest)
        finally:
            shutil.rmtree(work, ignore_errors=True)
