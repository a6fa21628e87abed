"""Generates lockstep's PSI known-answer vectors from the installed peers.

    peers/.venv/bin/python peers/make-vectors.py

Writes crates/psi/tests/vectors/{psi-js,openmined-py}.json: for each case (fixed keys, inputs,
false-positive rate, joiner count) the bytes each peer produces for the raw, GCS and Bloom setups,
the reveal and size-only requests and responses, and the intersections it computes. Messages over
10 KB are stored as their SHA-256 and length.
"""
import hashlib
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "psi", "tests", "vectors")
BIG = 20_000  # hex characters


def key(label):
    # Deterministic keys; every 32-byte SHA-256 here is below the group order.
    return hashlib.sha256(label.encode()).hexdigest()


def people(prefix, start, count):
    return [f"{prefix}{i}@example.org" for i in range(start, start + count)]


def cases():
    yield dict(
        name="one element, key with a leading zero byte",
        starter_key="00" + key("starter 0")[2:],
        joiner_key=key("joiner 0"),
        starter_inputs=["solo"],
        joiner_inputs=["solo"],
        fpr=0.1,
        joiner_count=1,
    )
    shared = ["Zoë Ångström", "", "ada@example.org", "+44 20 7946 0958"]
    yield dict(
        name="small, unicode and an empty value",
        starter_key=key("starter 1"),
        joiner_key=key("joiner 1"),
        starter_inputs=shared + people("s", 0, 6),
        joiner_inputs=people("j", 0, 4) + shared[::-1],
        fpr=0.01,
        joiner_count=8,
    )
    for n, m, overlap, fpr in [(100, 100, 37, 1e-3), (1000, 700, 250, 1e-6), (1000, 1000, 500, 1e-9)]:
        yield dict(
            name=f"{n} starter, {m} joiner, {overlap} shared, fpr {fpr}",
            starter_key=key(f"starter {n} {fpr}"),
            joiner_key=key(f"joiner {n} {fpr}"),
            starter_inputs=people("p", 0, n),
            joiner_inputs=people("p", n - overlap, m),
            fpr=fpr,
            joiner_count=m,
        )
    yield dict(
        name="joiner count above the joiner's set, fpr 0.5",
        starter_key=key("starter odd"),
        joiner_key=key("joiner odd"),
        starter_inputs=people("q", 0, 257),
        joiner_inputs=people("q", 100, 3),
        fpr=0.5,
        joiner_count=10,
    )


def shrink(value):
    if isinstance(value, str) and len(value) > BIG:
        raw = bytes.fromhex(value)
        return {"sha256": hashlib.sha256(raw).hexdigest(), "len": len(raw)}
    if isinstance(value, dict):
        return {k: shrink(v) for k, v in value.items()}
    return value


def run(command, job):
    result = subprocess.run(command, input=json.dumps(job), capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        sys.exit(f"{command}: {result.stdout} {result.stderr}")
    return json.loads(result.stdout)


def main():
    job = {"op": "vectors", "cases": list(cases())}
    peers = {
        "psi-js.json": ["node", "peers/psi-js.mjs"],
        "openmined-py.json": [sys.executable, "peers/openmined.py"],
    }
    os.makedirs(OUT, exist_ok=True)
    for name, command in peers.items():
        vectors = run(command, job)
        for case in vectors["cases"]:
            for field in ("setup", "request", "response", "request_size_only", "response_size_only"):
                case[field] = shrink(case[field])
        with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
            json.dump(vectors, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(f"wrote {name}: {len(vectors['cases'])} cases")


if __name__ == "__main__":
    main()
