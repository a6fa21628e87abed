"""The plan engine's peers: numpy and numexpr.

  plan.py eval PLAN OUT_DIR NAME=FILE.npy ...
      Evaluates a plan of IEEE-exact ops (add, sub, mul, div, sqrt, min, max, neg, abs) with
      numpy, node by node, and writes each output as OUT_DIR/<output id>.npy. Inputs are dense.
  plan.py bench --dtype f32 --elements N --nodes K --repeats R
      Times the bench's chain plan (x + 1 + 1 ... K times) with numpy (a new array per node),
      numpy in place (out=) and numexpr (one expression), and prints the medians in ms as JSON.
"""

import argparse
import json
import statistics
import sys
import time

import numexpr
import numpy as np

DTYPES = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16,
          "i32": np.int32, "u32": np.uint32, "f32": np.float32, "f64": np.float64}
OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
       "min": np.minimum, "max": np.maximum, "sqrt": np.sqrt, "neg": np.negative,
       "abs": np.absolute}


def evaluate(args):
    plan = json.load(open(args.plan))
    inputs = dict(binding.split("=", 1) for binding in args.inputs)
    values = {i["id"]: np.load(inputs[i["id"]]) for i in plan["inputs"]}
    for c in plan.get("constants", []):
        values[c["id"]] = DTYPES[c["dtype"]](c["value"])
    pending = list(plan["nodes"])
    while pending:  # nodes in any order: evaluate those whose arguments are ready
        rest = []
        for node in pending:
            if all(a in values for a in node["args"]):
                values[node["id"]] = OPS[node["op"]](*(values[a] for a in node["args"]))
            else:
                rest.append(node)
        if len(rest) == len(pending):
            sys.exit("plan.py: a cycle or an undefined id")
        pending = rest
    for output in plan["outputs"]:
        np.save(f"{args.out_dir}/{output['id']}.npy", values[output["from"]])


def bench(args):
    dtype = DTYPES[args.dtype]
    x = np.ones(args.elements, dtype=dtype)
    one = dtype(1)

    def naive():
        y = x
        for _ in range(args.nodes):
            y = y + one
        return y

    def in_place():
        y = np.add(x, one)
        for _ in range(args.nodes - 1):
            np.add(y, one, out=y)
        return y

    expression = "x" + " + one" * args.nodes
    local = {"x": x, "one": one}

    def ne():
        return numexpr.evaluate(expression, local_dict=local)

    numexpr.set_num_threads(args.threads)
    results = {}
    for name, f in [("numpy", naive), ("numpy_in_place", in_place), ("numexpr", ne)]:
        f()  # warm up
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            y = f()
            times.append((time.perf_counter() - start) * 1e3)
        assert y[0] == dtype(1 + args.nodes) or args.dtype in ("i8", "u8"), (name, y[0])
        results[name] = statistics.median(times)
    results["numexpr_threads"] = args.threads
    print(json.dumps(results))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    e = sub.add_parser("eval")
    e.add_argument("plan")
    e.add_argument("out_dir")
    e.add_argument("inputs", nargs="*")
    b = sub.add_parser("bench")
    b.add_argument("--dtype", required=True)
    b.add_argument("--elements", type=int, required=True)
    b.add_argument("--nodes", type=int, required=True)
    b.add_argument("--repeats", type=int, default=15)
    b.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    evaluate(args) if args.command == "eval" else bench(args)


if __name__ == "__main__":
    main()
