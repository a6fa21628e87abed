"""A Spark standalone cluster on 127.0.0.1 for the tests and the bench: one master and N workers
of one core each, started from pip's pyspark (`spark-class`; pip's package has no start
scripts) on free ports, their folders and logs in a folder of the caller's, stopped (their
process groups) on exit."""

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pyspark


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parent_of(pid):
    return int(pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def executor_of(pid, worker_pids):
    """The executor JVM (`CoarseGrainedExecutorBackend`, a worker's child) that process `pid`
    (an executor's Python worker) runs under, or None."""
    while pid > 1:
        parent = parent_of(pid)
        if parent in worker_pids:
            cmdline = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
            return pid if b"CoarseGrainedExecutorBackend" in cmdline else None
        pid = parent
    return None


class Cluster:
    """`with Cluster(folder, workers=2) as master:` then `master.url` for a session's master."""

    def __init__(self, folder, workers=2, worker_memory="1g", timeout=90):
        self.folder = pathlib.Path(folder)
        self.workers = workers
        self.worker_memory = worker_memory
        self.timeout = timeout
        self.processes = []

    def _start(self, *args, env):
        home = pathlib.Path(pyspark.__file__).parent
        return subprocess.Popen([str(home / "bin" / "spark-class"), *args], env=env, stdout=self.log,
                                stderr=subprocess.STDOUT, start_new_session=True)

    def __enter__(self):
        home = pathlib.Path(pyspark.__file__).parent
        env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", SPARK_HOME=str(home), PYSPARK_PYTHON=sys.executable,
                   SPARK_WORKER_DIR=str(self.folder / "workers"), SPARK_LOG_DIR=str(self.folder / "logs"))
        port, self.ui = free_port(), free_port()
        self.url = f"spark://127.0.0.1:{port}"
        self.log = open(self.folder / "cluster.log", "ab")
        try:
            self.processes.append(self._start("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                              "--port", str(port), "--webui-port", str(self.ui), env=env))
            for i in range(self.workers):
                self.processes.append(self._start(
                    "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1", "--cores", "1",
                    "--memory", self.worker_memory, "--webui-port", str(free_port()),
                    "--work-dir", str(self.folder / f"worker-{i}"), env=env))
            self.worker_pids = {p.pid for p in self.processes[1:]}
            deadline = time.monotonic() + self.timeout
            while self._alive_workers() != self.workers:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{self.workers} workers did not register: {self.tail()}")
                time.sleep(0.5)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _alive_workers(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json/", timeout=5) as response:
                return json.load(response)["aliveworkers"]
        except OSError:
            return -1

    def tail(self):
        return (self.folder / "cluster.log").read_text(errors="replace")[-4000:]

    def wait_for_executors(self, spark, count):
        """Until `count` executors (and the driver) have registered with `spark`."""
        deadline = time.monotonic() + self.timeout
        while spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() < count + 1:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{count} executors did not register: {self.tail()}")
            time.sleep(0.5)

    def __exit__(self, *_):
        for process in reversed(self.processes):
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        self.log.close()
