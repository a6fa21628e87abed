"""lockstep.plan over numpy arrays: every op x dtype byte for byte against `lockstep plan run`
(the CLI's files) at 1, 2 and 3 workers, against numpy where numpy computes the same IEEE or
wrapping result, outputs given or allocated, views, and the division-by-zero error."""

import json
import subprocess

import numpy as np
import pytest

import lockstep
import lockstep.plan as plan

DTYPES = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16,
          "i32": np.int32, "u32": np.uint32, "f32": np.float32, "f64": np.float64}
EDGES = {
    "i8": [-128, 127, -1, 0, 1], "u8": [0, 255, 1, 128],
    "i16": [-32768, 32767, -1, 0], "u16": [0, 65535, 1, 32768],
    "i32": [-2147483648, 2147483647, -1, 0, 7], "u32": [0, 4294967295, 1, 2147483648],
    "f32": [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, 1.1754942e-38, 3.4028235e38, -1.5, 0.1],
    "f64": [np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -1.5, 0.1],
}
COMPARISONS = ["eq", "ne", "lt", "le", "gt", "ge"]
LENGTH = 33_001  # odd, past a block of every dtype and past one task's size


def values(dtype, length, seed, nonzero=False):
    """`length` values of `dtype`: edge values mixed with random ones."""
    rng = np.random.default_rng(seed)
    t = DTYPES[dtype]
    if dtype.startswith("f"):
        out = ((rng.random(length) - 0.5) * 2.0 ** rng.integers(-20, 20, length)).astype(t)
    else:
        info = np.iinfo(t)
        out = rng.integers(int(info.min), int(info.max), length, endpoint=True, dtype=np.int64).astype(t)
    edges = np.array(EDGES[dtype], dtype=t)
    pick = rng.random(length) < 0.2
    out[pick] = edges[rng.integers(0, len(edges), int(pick.sum()))]
    if nonzero:
        out[out == 0] = 3
    return out


def plan_of(dtype):
    """Every op over `dtype`, read through views and written through some (the JS suite's)."""
    floating = dtype.startswith("f")
    nodes = [{"id": op, "op": op, "args": ["a", "b"]} for op in ("add", "sub", "mul", "div", "min", "max")]
    nodes += [{"id": "neg", "op": "neg", "args": ["a"]}, {"id": "abs", "op": "abs", "args": ["c"]}]
    if floating:
        nodes.append({"id": "sqrt", "op": "sqrt", "args": ["c"]})
    nodes.append({"id": "fma", "op": "fma", "args": ["a", "b", "c"]})
    nodes += [{"id": f"cast_{to}", "op": "cast", "args": ["a"], "to": to} for to in DTYPES]
    nodes += [{"id": op, "op": op, "args": ["a", "c"]} for op in COMPARISONS]
    nodes.append({"id": "select", "op": "select", "args": ["m", "a", "b"]})
    nodes += [
        {"id": "f1", "op": "add", "args": ["a", "k"]},
        {"id": "f2", "op": "mul", "args": ["f1", "c"]},
        {"id": "f3", "op": "sub", "args": ["f2", "b"]},
        {"id": "f4", "op": "max", "args": ["f3", "a"]},
        {"id": "f5", "op": "sqrt" if floating else "neg", "args": ["f4"]},
        {"id": "chain", "op": "min", "args": ["f5", "b"]},
    ]
    finals = [n for n in nodes if n["id"] not in ("f1", "f2", "f3", "f4", "f5")]
    return {
        "version": 1,
        "inputs": [
            {"id": "a", "dtype": dtype, "view": {"offset": 3, "stride": 2}},
            {"id": "b", "dtype": dtype},
            {"id": "c", "dtype": dtype, "view": {"offset": 1}},
            {"id": "m", "dtype": "u8"},
        ],
        "constants": [{"id": "k", "dtype": dtype, "value": 0.75 if floating else 3}],
        "nodes": nodes,
        "outputs": [
            {"id": f"o_{n['id']}", "from": n["id"], **({"view": {"offset": 2, "stride": 3}} if i % 3 == 1 else {})}
            for i, n in enumerate(finals)
        ],
    }


def inputs_of(dtype, d):
    m = values("u8", LENGTH, 91 + d)
    m[m % 3 == 0] = 0
    return [
        values(dtype, 3 + 2 * (LENGTH - 1) + 1, 17 * (d + 1)),
        values(dtype, LENGTH, 17 * (d + 1) + 1, nonzero=True),
        values(dtype, LENGTH + 1, 17 * (d + 1) + 2),
        m,
    ]


@pytest.mark.parametrize("d,dtype", list(enumerate(DTYPES)))
def test_every_op_gives_the_cli_s_bytes_at_every_worker_count(tmp_path, lockstep_bin, d, dtype):
    spec = plan_of(dtype)
    arrays = inputs_of(dtype, d)
    (tmp_path / "plan.json").write_text(json.dumps(spec))
    args = [str(lockstep_bin), "--quiet", "--workers", "2", "plan", "run", "plan.json"]
    for spec_input, array in zip(spec["inputs"], arrays):
        array.tofile(tmp_path / f"{spec_input['id']}.raw")
        args += ["--input", f"{spec_input['id']}={spec_input['id']}.raw"]
    args += [a for o in spec["outputs"] for a in ("--output", f"{o['id']}={o['id']}.raw")]
    subprocess.run(args, cwd=tmp_path, check=True, timeout=300)
    compiled = plan.Plan(spec)
    for workers in (1, 2, 3):
        outputs = compiled.run(arrays, workers=workers)
        assert len(outputs) == len(spec["outputs"])
        for o, got in zip(spec["outputs"], outputs):
            cli = (tmp_path / f"{o['id']}.raw").read_bytes()
            assert got.tobytes() == cli, (dtype, o["id"], workers)
    # Given outputs (inputs by id) are written in place through their views: the same bytes
    # where the view writes, the caller's own elsewhere (a strided view's gaps).
    given = [np.full_like(o, 0x5A) for o in outputs]
    returned = compiled.run(dict(zip("abcm", arrays)), given, workers=2)
    assert all(r is g for r, g in zip(returned, given))
    for o, got, expected in zip(spec["outputs"], given, outputs):
        view = o.get("view", {"offset": 0, "stride": 1})
        written = np.zeros(len(got), dtype=bool)
        written[view["offset"]::view["stride"]] = True
        assert got[written].tobytes() == expected[written].tobytes(), o["id"]
        assert (got[~written] == np.full(1, 0x5A).astype(got.dtype)).all(), o["id"]


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_ops_numpy_computes_alike_equal_numpy(dtype):
    t = DTYPES[dtype]
    floating = dtype.startswith("f")
    a = values(dtype, 10_001, 5)
    b = values(dtype, 10_001, 6, nonzero=True)
    if floating:  # numpy's NaN payloads are its own: compare where no NaN is made
        a[np.isnan(a)] = 2.5
        b[np.isnan(b)] = -4.0
    ops = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "neg": None}
    if floating:
        ops.update(div=np.divide, min=np.minimum, max=np.maximum, sqrt=None, abs=None)
    else:
        ops.update(min=np.minimum, max=np.maximum)
    for op, f in ops.items():
        unary = f is None
        declared = [{"id": "a", "dtype": dtype}] + ([] if unary else [{"id": "b", "dtype": dtype}])
        spec = {"version": 1, "inputs": declared,
                "nodes": [{"id": "y", "op": op, "args": ["a"] if unary else ["a", "b"]}],
                "outputs": [{"id": "o", "from": "y"}]}
        [got] = plan.run(spec, [a] if unary else [a, b], workers=2)
        with np.errstate(all="ignore"):
            expected = {"neg": np.negative, "sqrt": np.sqrt, "abs": np.absolute}[op](a) if unary else f(a, b)
        assert got.dtype == t
        np.testing.assert_array_equal(got, expected.astype(t), err_msg=f"{dtype} {op}")


def test_an_integer_division_by_zero_is_its_coded_error():
    spec = {"version": 1, "inputs": [{"id": "a", "dtype": "i32"}, {"id": "b", "dtype": "i32"}],
            "nodes": [{"id": "y", "op": "div", "args": ["a", "b"]}], "outputs": [{"id": "o", "from": "y"}]}
    a = np.arange(100_000, dtype=np.int32)
    b = np.ones(100_000, dtype=np.int32)
    b[77_777] = 0
    with pytest.raises(lockstep.PlanError) as refused:
        plan.run(spec, [a, b], workers=2)
    assert refused.value.code == "PLAN_DIVISION_BY_ZERO"
    assert isinstance(refused.value, RuntimeError)


def test_any_contiguous_shape_runs_flat_and_progress_reaches_the_caller():
    spec = {"version": 1, "inputs": [{"id": "x", "dtype": "f64"}],
            "nodes": [{"id": "y", "op": "mul", "args": ["x", "x"]}], "outputs": [{"id": "o", "from": "y"}]}
    x = np.arange(600_000, dtype=np.float64).reshape(600, 1000)
    seen = []
    [y] = plan.run(spec, [x], workers=2, progress=lambda done, total: seen.append((done, total)))
    np.testing.assert_array_equal(y, (x * x).ravel())
    assert seen and seen[-1] == (600_000, 600_000)
    assert {total for _, total in seen} == {600_000}
    assert plan.Plan(spec).signature == {"inputs": [{"id": "x", "dtype": "f64"}], "outputs": [{"id": "o", "dtype": "f64"}]}
