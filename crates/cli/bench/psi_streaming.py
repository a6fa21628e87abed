#!/usr/bin/env python3
"""The PSI round past memory: every step of a raw round (setup with its permutation, request,
respond, intersect with rows and pairs, resolve) run by the release CLI under --memory, at
several sizes; each step's seconds, rows/s, peak RSS (the process's VmHWM, sampled every 20 ms)
and the most its --tmp folder held (sampled every 200 ms). With --peer-rows, openmined.psi's peak RSS for the same round in memory
(peers/.venv, scripts/install-peers), side by side.

    crates/cli/bench/psi_streaming.py --rows 1000000,3000000,10000000 --memory 256MiB

Each party has N rows (CSV: id, email); half the joiner's emails are the starter's. Files go in
a temporary folder, removed at the end. Prints a table, then the flatness of peak RSS across
sizes, then the 100M-row projection from the largest size's rates."""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CLI = os.path.join(ROOT, "target", "release", "lockstep")


def size(text):
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    for unit, factor in units.items():
        if text.endswith(unit):
            return int(text[: -len(unit)]) * factor
    return int(text)


def write_party(path, first, rows):
    with open(path, "w") as f:
        f.write("id,email\n")
        chunk = []
        for i in range(first, first + rows):
            chunk.append(f"r{i},person{i}@example.org\n")
            if len(chunk) == 100_000:
                f.write("".join(chunk))
                chunk.clear()
        f.write("".join(chunk))


def folder_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def high_water(pid):
    """The process's peak resident set so far (VmHWM, bytes), 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run(args, cwd, tmp):
    """Runs the CLI; returns (seconds, peak RSS bytes, most bytes in tmp). The peak is the
    process's own high-water mark (VmHWM), sampled every 20 ms until it exits: wait4's
    ru_maxrss would carry the forking Python process's size into the child."""
    most = [0]
    done = threading.Event()

    def watch():
        while not done.wait(0.2):
            most[0] = max(most[0], folder_bytes(tmp))

    watcher = threading.Thread(target=watch)
    watcher.start()
    started = time.monotonic()
    process = subprocess.Popen([CLI] + args, cwd=cwd, stdout=subprocess.DEVNULL)
    peak = 0
    while process.poll() is None:
        peak = max(peak, high_water(process.pid))
        time.sleep(0.02)
    seconds = time.monotonic() - started
    done.set()
    watcher.join()
    if process.returncode != 0:
        sys.exit(f"lockstep {' '.join(args)} failed ({process.returncode})")
    return seconds, peak, most[0]


def round_at(rows, memory, workers, parent):
    d = tempfile.mkdtemp(prefix="psi-streaming-", dir=parent)
    tmp = os.path.join(d, "tmp")
    os.mkdir(tmp)
    try:
        write_party(os.path.join(d, "starter.csv"), 0, rows)
        write_party(os.path.join(d, "joiner.csv"), rows // 2, rows)
        for key in ("starter.key", "joiner.key"):
            run(["psi", "key", "new", "--out", key, "-q"], d, tmp)
        common = ["--memory", memory, "--tmp", "tmp", "--workers", str(workers), "-q"]
        starter = ["--input", "starter.csv", "--column", "email"]
        joiner = ["--input", "joiner.csv", "--column", "email"]
        n = str(rows)
        steps = [
            ("setup", ["psi", "setup", "--key", "starter.key", "--joiner-count", n,
                       "--permutation-out", "perm.csv", "--out", "setup.bin"] + starter),
            ("request", ["psi", "request", "--key", "joiner.key", "--out", "request.bin"] + joiner),
            ("respond", ["psi", "respond", "--key", "starter.key", "--request", "request.bin",
                         "--joiner-count", n, "--out", "response.bin"]),
            ("intersect", ["psi", "intersect", "--key", "joiner.key", "--setup", "setup.bin",
                           "--response", "response.bin", "--request", "request.bin",
                           "--out", "matches.csv", "--pairs-out", "pairs.csv"] + joiner),
            ("resolve", ["psi", "resolve", "--permutation", "perm.csv", "--matches", "pairs.csv",
                         "--out", "resolved.csv"] + starter),
        ]
        results = []
        for name, args in steps:
            seconds, rss, disk = run(args + common, d, tmp)
            results.append((name, seconds, rss, disk))
        with open(os.path.join(d, "resolved.csv")) as f:
            matched = sum(1 for _ in f) - 1
        if matched != rows - rows // 2:
            sys.exit(f"{rows} rows: {matched} pairs resolved, {rows - rows // 2} expected")
        return results
    finally:
        shutil.rmtree(d)


PEER = r"""
import resource, sys, time
import private_set_intersection.python as psi
n = int(sys.argv[1])
starter = [f"person{i}@example.org" for i in range(n)]
joiner = [f"person{i}@example.org" for i in range(n // 2, n // 2 + n)]
server = psi.server.CreateWithNewKey(True)
client = psi.client.CreateWithNewKey(True)
setup = server.CreateSetupMessage(1e-9, n, starter, psi.DataStructure.RAW)
request = client.CreateRequest(joiner)
response = server.ProcessRequest(request)
found = client.GetIntersection(setup, response)
assert len(found) == n - n // 2, len(found)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def peer_rss(rows):
    python = os.path.join(ROOT, "peers", ".venv", "bin", "python")
    if not os.path.exists(python):
        sys.exit("no peers/.venv: run scripts/install-peers")
    out = subprocess.run([python, "-c", PEER, str(rows)], check=True, capture_output=True, text=True)
    return int(out.stdout.strip())


def mib(b):
    return b / (1 << 20)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="1000000,3000000,10000000")
    parser.add_argument("--memory", default="256MiB")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--peer-rows", default="", help="sizes to run openmined.psi at too")
    parser.add_argument("--dir", default=None, help="where the files go (default: the system's)")
    a = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "lockstep-cli"],
                   cwd=ROOT, check=True)
    sizes = [int(r) for r in a.rows.split(",")]
    peers = {int(r) for r in a.peer_rows.split(",") if r}
    print(f"PSI round past memory: --memory {a.memory}, --workers {a.workers}, "
          f"{os.cpu_count()} cores; each party N rows, half shared")
    print(f"{'rows':>12} {'step':<10} {'seconds':>9} {'rows/s':>9} {'peak RSS MiB':>13} {'tmp MiB':>9}")
    peaks = {}
    last = None
    for rows in sizes:
        results = round_at(rows, a.memory, a.workers, a.dir)
        for name, seconds, rss, disk in results:
            print(f"{rows:>12,} {name:<10} {seconds:>9.1f} {rows / seconds:>9.0f} "
                  f"{mib(rss):>13.1f} {mib(disk):>9.0f}", flush=True)
        peaks[rows] = max(r[2] for r in results)
        if rows in peers:
            theirs = peer_rss(rows)
            print(f"{rows:>12,} openmined.psi, the same round in memory: peak RSS "
                  f"{mib(theirs):.1f} MiB; lockstep's largest step {mib(peaks[rows]):.1f} MiB "
                  f"({theirs / peaks[rows]:.1f}x less)", flush=True)
        last = (rows, results)
    first = sizes[0]
    print("peak RSS, the largest step: " + ", ".join(
        f"{r:,} rows {mib(p):.1f} MiB" for r, p in peaks.items())
        + f" (largest / smallest: {peaks[sizes[-1]] / peaks[first]:.2f}) under --memory {a.memory}")
    rows, results = last
    projected = 100_000_000
    print(f"projection to {projected:,} rows a party, from the {rows:,}-row rates:")
    for name, seconds, rss, disk in results:
        rate = rows / seconds
        print(f"  {name:<10} {projected / rate / 3600:>6.2f} h at {rate:,.0f} rows/s, "
              f"tmp about {mib(disk) * projected / rows / 1024:,.1f} GiB")


if __name__ == "__main__":
    main()
