"""lockstep's Python package beside its Python peers, in one run on this machine.

  python bench.py psi  [--rows 100000] [--workers 1,2] [--repeats 3]
  python bench.py plan [--elements 1048576] [--nodes 1,8,64] [--dtypes f32,f64,i32] [--workers 1,2]

psi: each step of a round through `lockstep.psi` (at each worker count) and through
openmined.psi 2.0.6 (one thread: it has no other), the same values and keys, best of --repeats
wall time from Python, values a row; prints rows/s, our ratio to openmined.psi on one worker
(per core) and our 2-worker speedup. Every step's bytes are checked equal to openmined.psi's.

plan: the plan bench's chain (x + 1 + 1 ... `nodes` times, crates/plan's bench shape) through
`lockstep.plan` (allocated output, at each worker count) beside numpy (a new array a node),
numpy in place (`out=`) and numexpr (one expression, on as many threads as our workers); medians.
Outputs are checked equal to numpy's.
"""

import argparse
import json
import statistics
import time

import numexpr
import numpy as np
import private_set_intersection.python as om

import lockstep.plan as plan
import lockstep.psi as psi


def best(repeats, body):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = body()
        times.append(time.perf_counter() - start)
    return min(times), result


def bench_psi(args):
    n = args.rows
    starter = [f"starter-{i}@example.org" for i in range(n)]
    joiner = [f"starter-{i + n // 2}@example.org" for i in range(n)]
    om_s, om_c = om.server.CreateWithNewKey(True), om.client.CreateWithNewKey(True)
    server_key, client_key = om_s.GetPrivateKeyBytes(), om_c.GetPrivateKeyBytes()
    ours_s = psi.server.CreateFromKey(server_key, True)
    ours_c = psi.client.CreateFromKey(client_key, True)
    steps = {}

    def run(label, s, c, ds_raw, ds_gcs, **kw):
        out = {}
        out["setup raw"], raw = best(args.repeats, lambda: s.CreateSetupMessage(1e-6, n, starter, ds_raw, **kw))
        out["setup gcs"], gcs = best(args.repeats, lambda: s.CreateSetupMessage(1e-6, n, starter, ds_gcs, **kw))
        out["request"], request = best(args.repeats, lambda: c.CreateRequest(joiner, **kw))
        out["response"], response = best(args.repeats, lambda: s.ProcessRequest(request, **kw))
        out["intersection raw"], found = best(args.repeats, lambda: c.GetIntersection(raw, response, **kw))
        steps[label] = out
        return [m.SerializeToString() for m in (raw, gcs, request, response)], found

    theirs = run("openmined.psi", om_s, om_c, om.DataStructure.RAW, om.DataStructure.GCS)
    for w in args.workers:
        ours = run(f"lockstep {w}w", ours_s, ours_c, psi.DataStructure.RAW, psi.DataStructure.GCS, workers=w)
        assert ours == theirs, f"lockstep at {w} workers: other bytes than openmined.psi's"
    names = list(steps["openmined.psi"])
    print(f"PSI, {n:,} values a party (rows/s; best of {args.repeats}; bytes equal to openmined.psi's)")
    header = ["step"] + list(steps) + ["1w / openmined"] + ([f"{args.workers[-1]}w / 1w"] if len(args.workers) > 1 else [])
    print(" | ".join(header))
    table = {}
    for name in names:
        rates = {label: n / t[name] for label, t in steps.items()}
        row = [name] + [f"{rates[label]:,.0f}" for label in steps]
        one = rates[f"lockstep {args.workers[0]}w"] / rates["openmined.psi"]
        row.append(f"{one:.2f}x")
        if len(args.workers) > 1:
            row.append(f"{rates[f'lockstep {args.workers[-1]}w'] / rates[f'lockstep {args.workers[0]}w']:.2f}x")
        print(" | ".join(row))
        table[name] = rates
    if args.json:
        print(json.dumps(table))


def bench_plan(args):
    print(f"plans: the chain x + 1 ... over {args.elements:,} elements (ms, median of {args.repeats})")
    print("dtype | nodes | numpy | numpy in place | " + " | ".join(
        f"numexpr {w}t | lockstep {w}w" for w in args.workers) + " | lockstep 1w / numpy in place")
    for name in args.dtypes:
        dtype = {"f32": np.float32, "f64": np.float64, "i32": np.int32}[name]
        x = np.ones(args.elements, dtype=dtype)
        one = dtype(1)
        for nodes in args.nodes:
            spec = {"version": 1, "inputs": [{"id": "x", "dtype": name}],
                    "constants": [{"id": "one", "dtype": name, "value": 1}],
                    "nodes": [{"id": f"n{i}", "op": "add", "args": ["x" if i == 0 else f"n{i - 1}", "one"]} for i in range(nodes)],
                    "outputs": [{"id": "y", "from": f"n{nodes - 1}"}]}
            compiled = plan.Plan(spec)

            def naive():
                y = x
                for _ in range(nodes):
                    y = y + one
                return y

            def in_place():
                y = np.add(x, one)
                for _ in range(nodes - 1):
                    np.add(y, one, out=y)
                return y

            expression = "x" + " + one" * nodes
            local = {"x": x, "one": one}

            def median(body):
                body()
                times = []
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    result = body()
                    times.append((time.perf_counter() - start) * 1e3)
                return statistics.median(times), result

            expected = naive()
            row = [name, str(nodes)]
            numpy_ms, _ = median(naive)
            in_place_ms, _ = median(in_place)
            row += [f"{numpy_ms:.2f}", f"{in_place_ms:.2f}"]
            ours_one = None
            for w in args.workers:
                numexpr.set_num_threads(w)
                ne_ms, got = median(lambda: numexpr.evaluate(expression, local_dict=local))
                ours_ms, [y] = median(lambda: compiled.run([x], workers=w))
                assert np.array_equal(y, expected), (name, nodes, w)
                ours_one = ours_one or ours_ms
                row += [f"{ne_ms:.2f}", f"{ours_ms:.2f}"]
            row.append(f"{in_place_ms / ours_one:.2f}x")
            print(" | ".join(row))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("psi")
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", action="store_true")
    q = sub.add_parser("plan")
    q.add_argument("--elements", type=int, default=1 << 20)
    q.add_argument("--nodes", default="1,8,64")
    q.add_argument("--dtypes", default="f32,f64,i32")
    q.add_argument("--workers", default="1,2")
    q.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    args.workers = [int(w) for w in args.workers.split(",")]
    if args.command == "psi":
        bench_psi(args)
    else:
        args.nodes = [int(k) for k in args.nodes.split(",")]
        args.dtypes = args.dtypes.split(",")
        bench_plan(args)


if __name__ == "__main__":
    main()
