"""lockstep.spark: a request, a raw setup with its permutation and responses masked on Spark's
executors, byte for byte the CLI's `psi request/setup/respond` files over the same CSV, on
`local[2]` (one partition and several) and on a standalone cluster of one master and two
workers started here on 127.0.0.1, where an executor killed mid-stage is retried by Spark and
the bytes do not change."""

import csv
import io
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import pytest
from pyspark.sql import SparkSession

import lockstep
import lockstep.spark as ls
import standalone

HEADER = ["id", "first", "email", "note"]


def records(rows, shift, seed):
    """People as CSV text: unicode, commas and doubled quotes in quoted fields, emails with case
    and spacing to normalize, empty keys (left out), a repeated key."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(HEADER)
    names = ["José", "Zoë", "Ana María", "O'Brien", "李", "Smith, Jr."]
    for i in range(rows):
        n = i + shift
        email = "" if n % 23 == 0 else (f"  Person.{n}@Example.org " if n % 4 == 0 else f"person.{n}@example.org")
        w.writerow([f"{seed}-{i}", names[n % len(names)], email, f'say "{n}", twice'])
    w.writerow([f"{seed}-dup", names[shift % len(names)], f"person.{shift + 1}@example.org", "again"])
    return out.getvalue()


def cli(lockstep_bin, tmp, *args):
    subprocess.run([str(lockstep_bin), "--quiet", *map(str, args)], cwd=tmp, check=True, timeout=300)


@pytest.fixture(scope="module")
def files(tmp_path_factory, lockstep_bin):
    """The parties' CSVs, their keys, and the CLI's files for each key (one column, two columns
    normalized) and mode."""
    tmp = tmp_path_factory.mktemp("spark")
    (tmp / "starter.csv").write_text(records(700, 0, "s"), encoding="utf-8")
    (tmp / "joiner.csv").write_text(records(500, 450, "j"), encoding="utf-8")
    cli(lockstep_bin, tmp, "psi", "key", "new", "--out", "s.key")
    cli(lockstep_bin, tmp, "psi", "key", "new", "--out", "j.key")
    for tag, on, norm in (("one", ["email"], []), ("two", ["first", "email"], ["--normalize"])):
        cols = [a for c in on for a in ("--column", c)]
        cli(lockstep_bin, tmp, "psi", "setup", "--key", "s.key", "--input", "starter.csv", *cols, *norm,
            "--joiner-count", 600, "--format", "raw", "--out", f"cli-setup-{tag}", "--permutation-out", f"cli-perm-{tag}")
        cli(lockstep_bin, tmp, "psi", "request", "--key", "j.key", "--input", "joiner.csv", *cols, *norm,
            "--out", f"cli-request-{tag}")
        cli(lockstep_bin, tmp, "psi", "respond", "--key", "s.key", "--request", f"cli-request-{tag}",
            "--joiner-count", 600, "--out", f"cli-response-{tag}")
    cli(lockstep_bin, tmp, "psi", "request", "--key", "j.key", "--input", "joiner.csv", "--column", "email",
        "--size-only", "--out", "cli-request-size")
    cli(lockstep_bin, tmp, "psi", "request", "--key", "j.key", "--input", "joiner.csv", "--column", "email",
        "--column", "email", "--out", "cli-request-twice")
    cli(lockstep_bin, tmp, "psi", "respond", "--key", "s.key", "--request", "cli-request-size", "--joiner-count", 600,
        "--size-only", "--out", "cli-response-size")
    return tmp


def session(master, tmp, **conf):
    # The executors' Python: PySpark reads it from the driver's environment.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = (
        SparkSession.builder.master(master)
        .appName("lockstep-test")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "3")
        .config("spark.local.dir", str(tmp / "spark-local"))
    )
    for name, value in conf.items():
        builder = builder.config(name.replace("_", "."), value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def same(tmp, ours, theirs):
    assert (tmp / ours).read_bytes() == (tmp / theirs).read_bytes(), f"{ours} differs from {theirs}"


def round_on(spark, tmp, tag, *, partitions_at_least=1):
    """Every step on `spark` against the CLI's files; the CSV read in several partitions."""
    on, normalize = (["email"], False) if tag == "one" else (["first", "email"], True)
    joiner = ls.read_csv(spark, tmp / "joiner.csv")
    assert joiner.rdd.getNumPartitions() >= partitions_at_least
    written = ls.request(joiner, on=on, normalize=normalize, key=tmp / "j.key", out=tmp / f"sp-request-{tag}")
    assert written.rows == 501
    same(tmp, f"sp-request-{tag}", f"cli-request-{tag}")
    starter = ls.read_csv(spark, tmp / "starter.csv")
    written = ls.setup(starter, on=on, normalize=normalize, key=tmp / "s.key", out=tmp / f"sp-setup-{tag}",
                       permutation_out=tmp / f"sp-perm-{tag}")
    assert written.rows == 701
    same(tmp, f"sp-setup-{tag}", f"cli-setup-{tag}")
    same(tmp, f"sp-perm-{tag}", f"cli-perm-{tag}")
    ls.respond(spark, request=tmp / f"cli-request-{tag}", key=tmp / "s.key", joiner_count=600,
               out=tmp / f"sp-response-{tag}", tmp=tmp, partitions=3)
    same(tmp, f"sp-response-{tag}", f"cli-response-{tag}")


@pytest.fixture(scope="module")
def local(files):
    spark = session("local[2]", files, spark_sql_files_maxPartitionBytes="4096",
                    spark_sql_files_openCostInBytes="0")
    yield spark
    spark.stop()


@pytest.mark.parametrize("tag", ["one", "two"])
def test_local_steps_give_the_cli_s_bytes(local, files, tag):
    round_on(local, files, tag, partitions_at_least=3)


def test_local_size_only_and_one_partition_give_the_cli_s_bytes(local, files):
    joiner = ls.read_csv(local, files / "joiner.csv").coalesce(1)
    ls.request(joiner, on="email", key=files / "j.key", out=files / "sp-request-size", size_only=True)
    same(files, "sp-request-size", "cli-request-size")
    ls.respond(local, request=files / "cli-request-size", key=files / "s.key", joiner_count=600, size_only=True,
               out=files / "sp-response-size", tmp=files)
    same(files, "sp-response-size", "cli-response-size")
    # A key naming one column twice, as --column may.
    ls.request(joiner, on=["email", "email"], key=files / "j.key", out=files / "sp-request-twice")
    same(files, "sp-request-twice", "cli-request-twice")
    # No work folder is left behind.
    assert not [p for p in files.iterdir() if p.name.startswith(".lockstep")]


def test_local_refusals_are_clear_and_leave_outputs_alone(local, files):
    joiner = ls.read_csv(local, files / "joiner.csv")
    out = files / "kept"
    out.write_bytes(b"before")
    with pytest.raises(lockstep.PsiError) as error:
        ls.request(joiner, on="mail", key=files / "j.key", out=out)
    assert error.value.code == "PSI_INPUT" and "'mail'" in str(error.value)
    open_key = files / "open.key"
    open_key.write_bytes((files / "j.key").read_bytes())
    os.chmod(open_key, 0o644)
    with pytest.raises(lockstep.PsiError) as error:
        ls.request(joiner, on="email", key=open_key, out=out)
    assert error.value.code == "PSI_FILE"
    with pytest.raises(lockstep.PsiError) as error:
        ls.respond(local, request=files / "cli-request-one", key=files / "s.key", joiner_count=600,
                   size_only=True, out=out, tmp=files)
    assert error.value.code == "PSI_ROUND"
    with pytest.raises(lockstep.PsiError) as error:
        ls.respond(local, request=files / "cli-request-one", key=files / "s.key", joiner_count=10, out=out, tmp=files)
    assert error.value.code == "PSI_LIMIT"
    with pytest.raises(lockstep.PsiError) as error:
        ls.setup(joiner, on=[], key=files / "s.key", out=out)
    assert error.value.code == "PSI_USAGE"
    # An output naming an input, a permutation naming its setup: refused before any work.
    key = (files / "j.key").read_bytes()
    with pytest.raises(lockstep.PsiError) as error:
        ls.request(joiner, on="email", key=files / "j.key", out=files / "j.key")
    assert error.value.code == "PSI_USAGE" and "same file" in str(error.value)
    assert (files / "j.key").read_bytes() == key
    with pytest.raises(lockstep.PsiError) as error:
        ls.setup(joiner, on="email", key=files / "s.key", out=out, permutation_out=out)
    assert error.value.code == "PSI_USAGE"
    # A refusal found on an executor (a key field that is not UTF-8, normalized) is raised as
    # the engine's, on the driver.
    binary = local.createDataFrame([(b"ok",), (b"\xff",)], "email binary")
    with pytest.raises(lockstep.PsiError) as error:
        ls.request(binary, on="email", normalize=True, key=files / "j.key", out=out)
    assert error.value.code == "PSI_INPUT" and "row 2" in str(error.value), error.value
    assert out.read_bytes() == b"before"
    assert not [p for p in files.iterdir() if p.name.startswith(".lockstep")]
    # The driver's staged outputs watch for signals, yet Ctrl-C stays the interpreter's: a
    # KeyboardInterrupt, the process alive.
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)


# --- A standalone cluster: one master, two workers, on 127.0.0.1 (tests/standalone.py) -------


@pytest.fixture(scope="module")
def cluster(files):
    # One SparkContext a process: the local tests' session ends here (they ran first).
    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
    with standalone.Cluster(files, workers=2) as master:
        spark = session(master.url, files, spark_executor_cores="1", spark_executor_memory="512m",
                        spark_task_maxFailures="4", spark_sql_files_maxPartitionBytes="4096",
                        spark_sql_files_openCostInBytes="0")
        master.wait_for_executors(spark, 2)
        yield spark, master.worker_pids
        spark.stop()


def test_a_standalone_cluster_gives_the_cli_s_bytes(cluster, files):
    spark, _ = cluster
    round_on(spark, files, "two", partitions_at_least=3)


def test_an_executor_killed_mid_stage_is_retried_and_the_bytes_do_not_change(cluster, files):
    """A task's first attempt writes a marker with its Python worker's pid and waits; the test
    kills that worker's executor JVM (SIGKILL). Spark reruns the task elsewhere (attempt 1,
    which does not wait) and lockstep's files are still the CLI's."""
    spark, worker_pids = cluster
    marker = files / "marker"
    marker.unlink(missing_ok=True)

    def slow_first_attempt(batches):
        from pyspark import TaskContext

        context = TaskContext.get()
        for batch in batches:
            if context.partitionId() == 1 and context.attemptNumber() == 0 and not marker.exists():
                marker.write_text(str(os.getpid()))
                time.sleep(120)
            yield batch

    starter = ls.read_csv(spark, files / "starter.csv")
    starter = starter.mapInArrow(slow_first_attempt, starter.schema)
    outcome = {}

    def run():
        try:
            outcome["written"] = ls.setup(starter, on=["first", "email"], normalize=True, key=files / "s.key",
                                          out=files / "killed-setup", permutation_out=files / "killed-perm")
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            outcome["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert time.monotonic() < deadline and thread.is_alive(), outcome
        time.sleep(0.2)
    time.sleep(0.5)
    executor = standalone.executor_of(int(marker.read_text()), worker_pids)
    assert executor is not None, "the waiting task's executor was not found"
    os.kill(executor, signal.SIGKILL)
    thread.join(timeout=240)
    assert not thread.is_alive(), "setup did not finish after the kill"
    assert "error" not in outcome, outcome.get("error")
    assert not pathlib.Path(f"/proc/{executor}").exists()
    same(files, "killed-setup", "cli-setup-two")
    same(files, "killed-perm", "cli-perm-two")
