"""PSI masking on Spark (lockstep.spark) against the release CLI on the same rows, in one run:
each step (request, raw setup with its permutation, respond) timed on a standalone cluster of
one-core executors (tests/standalone.py, on 127.0.0.1) at each executor count, and the CLI's
same step at as many workers; the files compared byte for byte; rows/s, rows/s per executor
core, the 1 -> N efficiency, Spark over the CLI as a ratio; then the 100M-row projection from
the largest size's rates.

    bindings/python/bench/run spark --rows 1000000 --executors 1,2
    bindings/python/bench/run spark --rows 10000000 --executors 2 --no-cli

With --no-cli the CLI's steps are not run (its rates past memory at 10M are in
crates/psi/README.md): the Spark request is answered and no file is compared.

Each party has N rows (CSV: id, email); half the joiner's emails are the starter's. Files go in
a temporary folder (--tmp), removed at the end."""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[3]
CLI = ROOT / "target" / "release" / "lockstep"
sys.path.insert(0, str(ROOT / "bindings" / "python" / "tests"))

import standalone  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

import lockstep.spark as ls  # noqa: E402

STEPS = ("request", "setup", "respond")


def write_party(path, first, rows):
    with open(path, "w") as f:
        f.write("id,email\n")
        for start in range(first, first + rows, 100_000):
            end = min(first + rows, start + 100_000)
            f.write("".join(f"r{i},person{i}@example.org\n" for i in range(start, end)))


def cli(folder, *args):
    began = time.perf_counter()
    subprocess.run([str(CLI), "--quiet", *map(str, args)], cwd=folder, check=True)
    return time.perf_counter() - began


def cli_round(folder, rows, workers):
    w = ["--workers", workers]
    return {
        "request": cli(folder, "psi", "request", *w, "--key", "j.key", "--input", "joiner.csv", "--column", "email",
                       "--out", "cli-request"),
        "setup": cli(folder, "psi", "setup", *w, "--key", "s.key", "--input", "starter.csv", "--column", "email",
                     "--joiner-count", rows, "--format", "raw", "--out", "cli-setup", "--permutation-out", "cli-perm"),
        "respond": cli(folder, "psi", "respond", *w, "--key", "s.key", "--request", "cli-request",
                       "--joiner-count", rows, "--out", "cli-response"),
    }


def spark_round(spark, folder, rows, compare=True):
    times = {}
    began = time.perf_counter()
    ls.request(ls.read_csv(spark, folder / "joiner.csv"), on="email", key=folder / "j.key",
               out=folder / "sp-request")
    times["request"] = time.perf_counter() - began
    began = time.perf_counter()
    ls.setup(ls.read_csv(spark, folder / "starter.csv"), on="email", key=folder / "s.key", out=folder / "sp-setup",
             permutation_out=folder / "sp-perm", tmp=folder)
    times["setup"] = time.perf_counter() - began
    began = time.perf_counter()
    request = folder / ("cli-request" if compare else "sp-request")
    ls.respond(spark, request=request, key=folder / "s.key", joiner_count=rows,
               out=folder / "sp-response", tmp=folder)
    times["respond"] = time.perf_counter() - began
    if not compare:
        return times
    for ours, theirs in (("sp-request", "cli-request"), ("sp-setup", "cli-setup"), ("sp-perm", "cli-perm"),
                         ("sp-response", "cli-response")):
        if (folder / ours).read_bytes() != (folder / theirs).read_bytes():
            raise SystemExit(f"{ours} is not the CLI's {theirs}: the bench's premise fails")
    return times


def session(master, folder, executors, rows):
    os.environ["PYSPARK_PYTHON"] = sys.executable
    # Enough splits and shuffle partitions for every core, a few per core as sizes grow.
    parts = max(4, 4 * executors, rows // 250_000)
    spark = (
        SparkSession.builder.master(master)
        .appName(f"lockstep-bench-{executors}")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.cores.max", str(executors))
        .config("spark.executor.cores", "1")
        .config("spark.executor.memory", "2g")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.shuffle.partitions", str(parts))
        .config("spark.sql.files.maxPartitionBytes", str(max(1 << 20, (rows * 30) // parts)))
        .config("spark.local.dir", str(folder / "spark-local"))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="1000000", help="rows a party, comma-separated")
    parser.add_argument("--executors", default="1,2", help="executor counts (one core each), comma-separated")
    parser.add_argument("--tmp", default=None, help="folder for the files (default: the system's)")
    parser.add_argument("--no-cli", action="store_true", help="Spark alone: no CLI steps, no comparison")
    args = parser.parse_args()
    sizes = [int(r) for r in args.rows.split(",")]
    counts = [int(e) for e in args.executors.split(",")]
    if not CLI.exists():
        raise SystemExit(f"{CLI} is missing: cargo build --release -p lockstep-cli")
    print(f"host: {os.cpu_count()} cores; spark {__import__('pyspark').__version__}; executors of one core each")
    results = {}
    for rows in sizes:
        folder = pathlib.Path(tempfile.mkdtemp(prefix="lockstep-spark-bench-", dir=args.tmp))
        try:
            write_party(folder / "starter.csv", 0, rows)
            write_party(folder / "joiner.csv", rows // 2, rows)
            cli(folder, "psi", "key", "new", "--out", "s.key")
            cli(folder, "psi", "key", "new", "--out", "j.key")
            with standalone.Cluster(folder, workers=max(counts), worker_memory="3g") as master:
                for executors in counts:
                    theirs = None if args.no_cli else cli_round(folder, rows, executors)
                    spark = session(master.url, folder, executors, rows)
                    master.wait_for_executors(spark, executors)
                    ours = spark_round(spark, folder, rows, compare=not args.no_cli)
                    spark.stop()
                    results[(rows, executors)] = (ours, theirs)
                    for step in STEPS:
                        rate = rows / ours[step]
                        line = (f"{rows:>11,} rows  {step:<8} {executors} executor(s): spark {ours[step]:8.1f} s "
                                f"({rate:>8,.0f} rows/s, {rate / executors:>7,.0f} a core)")
                        if theirs is not None:
                            line += (f"  cli --workers {executors}: {theirs[step]:8.1f} s "
                                     f"({rows / theirs[step]:>8,.0f} rows/s)  spark/cli time "
                                     f"{ours[step] / theirs[step]:.2f}x  (same bytes)")
                        print(line, flush=True)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    for rows in sizes:
        if 1 in counts and len(counts) > 1:
            top = max(counts)
            for step in STEPS:
                one, many = results[(rows, 1)][0][step], results[(rows, top)][0][step]
                print(f"{rows:>11,} rows  {step:<8} 1 -> {top} executors: {one / many:.2f}x "
                      f"({one / many / top:.0%} efficiency)")
    rows, top = max(sizes), max(counts)
    ours = results[(rows, top)][0]
    total = sum(100_000_000 / (rows / ours[s]) for s in STEPS)
    print(f"projection to 100M rows a party from {rows:,} on {top} one-core executors: "
          + ", ".join(f"{s} {100_000_000 / (rows / ours[s]) / 3600:.2f} h" for s in STEPS)
          + f"; {total / 3600:.2f} h; a step scales with cores: on 64 cores about "
          + f"{total * top / 64 / 3600:.2f} h at this per-core rate")


if __name__ == "__main__":
    main()
