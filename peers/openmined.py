"""The openmined.psi 2.0.6 (PyPI, native) peer: one JSON job on stdin, one JSON result on stdout.

Same jobs as psi-js.mjs (setup, request, respond, intersect, bench, vectors). Messages are the
bytes the C++ core serializes (`.save()`), not a Python re-serialization.
"""
import json
import sys
import time

from private_set_intersection.python import _openmined_psi as core

FORMATS = {
    "raw": core.data_structure.Raw,
    "gcs": core.data_structure.GCS,
    "bloom": core.data_structure.BloomFilter,
}


def server(key, reveal):
    return core.cpp_server.CreateFromKey(bytes.fromhex(key), reveal)


def client(key, reveal):
    return core.cpp_client.CreateFromKey(bytes.fromhex(key), reveal)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def inputs(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def intersect(c, setup_bytes, response_bytes, reveal):
    setup = core.cpp_proto_server_setup.Load(setup_bytes)
    response = core.cpp_proto_response.Load(response_bytes)
    size = c.GetIntersectionSize(setup, response)
    indices = sorted(c.GetIntersection(setup, response)) if reveal else None
    return {"indices": indices, "size": size}


def rate(rows, repeats, body):
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = body()
        best = min(best, time.perf_counter() - start)
    return rows / best, result


def op_setup(j):
    s = server(j["key"], j["reveal"])
    msg = s.CreateSetupMessage(j["fpr"], j["joiner_count"], inputs(j["inputs"]), FORMATS[j["format"]])
    write(j["out"], msg.save())
    return {}


def op_request(j):
    write(j["out"], client(j["key"], j["reveal"]).CreateRequest(inputs(j["inputs"])).save())
    return {}


def op_respond(j):
    s = server(j["key"], j["reveal"])
    request = core.cpp_proto_request.Load(read(j["request"]))
    write(j["out"], s.ProcessRequest(request).save())
    return {}


def op_intersect(j):
    return intersect(client(j["key"], j["reveal"]), read(j["setup"]), read(j["response"]), j["reveal"])


def op_bench(j):
    n, repeats = j["rows"], j.get("repeats", 1)
    starter_values = [f"starter-{i}@example.org" for i in range(n)]
    joiner_values = [f"starter-{i + n // 2}@example.org" for i in range(n)]
    s = core.cpp_server.CreateWithNewKey(True)
    c = core.cpp_client.CreateWithNewKey(True)
    out, setup = {}, None
    for name, fmt in FORMATS.items():
        r, msg = rate(n, repeats, lambda fmt=fmt: s.CreateSetupMessage(1e-6, n, starter_values, fmt))
        out[f"setup_{name}"] = r
        if name == "raw":
            setup = msg
    out["request"], request = rate(n, repeats, lambda: c.CreateRequest(joiner_values))
    out["response"], response = rate(n, repeats, lambda: s.ProcessRequest(request))
    out["intersect_raw"], found = rate(n, repeats, lambda: c.GetIntersection(setup, response))
    out["matches"] = len(found)
    return out


def op_vectors(j):
    cases = []
    for v in j["cases"]:
        s, c = server(v["starter_key"], True), client(v["joiner_key"], True)
        s_size, c_size = server(v["starter_key"], False), client(v["joiner_key"], False)
        setups = {
            name: s.CreateSetupMessage(v["fpr"], v["joiner_count"], v["starter_inputs"], fmt).save()
            for name, fmt in FORMATS.items()
        }
        request = c.CreateRequest(v["joiner_inputs"])
        response = s.ProcessRequest(request)
        request_size = c_size.CreateRequest(v["joiner_inputs"])
        response_size = s_size.ProcessRequest(request_size)
        case = dict(v)
        case.update(
            setup={k: b.hex() for k, b in setups.items()},
            request=request.save().hex(),
            response=response.save().hex(),
            request_size_only=request_size.save().hex(),
            response_size_only=response_size.save().hex(),
            intersection={
                k: intersect(c, setups[k], response.save(), True)["indices"] for k in FORMATS
            },
            intersection_size={
                k: intersect(c_size, setups[k], response_size.save(), False)["size"] for k in FORMATS
            },
            joiner_key_bytes=c.GetPrivateKeyBytes().hex(),
            starter_key_bytes=s.GetPrivateKeyBytes().hex(),
        )
        cases.append(case)
    return {"peer": "openmined.psi 2.0.6", "cases": cases}


OPS = {
    "setup": op_setup,
    "request": op_request,
    "respond": op_respond,
    "intersect": op_intersect,
    "bench": op_bench,
    "vectors": op_vectors,
}

if __name__ == "__main__":
    job = json.load(sys.stdin)
    try:
        if job["op"] not in OPS:
            raise ValueError(f"unknown op {job['op']}")
        json.dump(OPS[job["op"]](job), sys.stdout)
    except Exception as error:  # report, never hang: the caller reads one JSON object
        json.dump({"error": str(error)}, sys.stdout)
        sys.exit(1)
