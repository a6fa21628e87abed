"""Bad input gets a clear error and loses nothing: wrong types, bad messages, closed objects, huge
declared sizes, one object called from many threads at once. Run under faulthandler (pytest's
default), so a crash would name its thread."""

import threading

import numpy as np
import pytest

import lockstep
import lockstep.plan as plan
import lockstep.psi as psi


def code_of(call):
    with pytest.raises(lockstep.LockstepError) as refused:
        call()
    return refused.value.code


def test_wrong_types_are_type_errors_naming_the_value():
    client = psi.client.CreateWithNewKey(True)
    with pytest.raises(TypeError, match=r"values\[1\]: a str or bytes, not int"):
        client.CreateRequest(["a", 3])
    with pytest.raises(TypeError, match="not a single str"):
        client.CreateRequest("abc")
    with pytest.raises(TypeError):
        client.CreateRequest(None)
    server = psi.server.CreateWithNewKey(True)
    with pytest.raises(TypeError, match="ds: a DataStructure"):
        server.CreateSetupMessage(0.1, 1, ["a"], 3)
    with pytest.raises(TypeError, match="client_request: a message or bytes"):
        server.ProcessRequest(42)
    import pandas as pd
    import lockstep.link as link

    with pytest.raises(TypeError, match="on="):
        link.Joiner().request(pd.DataFrame({"email": ["a"]}))


def test_bad_messages_keys_and_parameters_are_refused_with_their_codes():
    server = psi.server.CreateWithNewKey(True)
    client = psi.client.CreateWithNewKey(True)
    setup = server.CreateSetupMessage(0.01, 2, ["a", "b"], psi.DataStructure.GCS)
    request = client.CreateRequest(["a"])
    assert code_of(lambda: server.ProcessRequest(b"\xff\xff\xff")) == "PSI_MESSAGE"
    assert code_of(lambda: server.ProcessRequest(setup.save())) == "PSI_MESSAGE"
    assert code_of(lambda: psi.Request.Load(setup.save())) == "PSI_MESSAGE"
    assert code_of(lambda: psi.ServerSetup().ParseFromString(b"\x0a\x05\x0a\x03abc")) == "PSI_MESSAGE"
    # Request elements off the curve: about half of all x have no point; of 64 tries (the last
    # byte of x), each is refused by name or answered, and some are refused.
    refused = 0
    for last in range(64):
        forged = bytearray(request.save())
        forged[-1] = last
        try:
            server.ProcessRequest(bytes(forged))
        except lockstep.PsiError as e:
            assert e.code == "PSI_MESSAGE" and "element 0" in e.message, e
            refused += 1
    assert 0 < refused < 64
    bad_prefix = bytearray(request.save())
    bad_prefix[-33] = 0x05
    assert code_of(lambda: server.ProcessRequest(bytes(bad_prefix))) == "PSI_MESSAGE"
    assert code_of(lambda: psi.client.CreateFromKey(b"\x00" * 32, True)) == "PSI_KEY"
    assert code_of(lambda: psi.client.CreateFromKey(b"\xff" * 32, True)) == "PSI_KEY"
    assert code_of(lambda: psi.client.CreateFromKey(b"\x01" * 40, True)) == "PSI_KEY"
    assert code_of(lambda: server.CreateSetupMessage(1.5, 1, ["a"], psi.DataStructure.GCS)) == "PSI_PARAMS"
    assert code_of(lambda: server.CreateSetupMessage(0.1, 0, ["a"], psi.DataStructure.BLOOM_FILTER)) == "PSI_PARAMS"
    # The other mode, both ways.
    size_only = psi.client.CreateWithNewKey(False)
    assert code_of(lambda: server.ProcessRequest(size_only.CreateRequest(["a"]))) == "PSI_ROUND"
    response = server.ProcessRequest(request)
    assert code_of(lambda: size_only.GetIntersection(setup, response)) == "PSI_ROUND"
    assert code_of(lambda: client.GetIntersection(response, setup)) == "PSI_MESSAGE"
    assert code_of(lambda: server.CreateSetupMessage(0.1, 1, ["a"], psi.DataStructure.GCS, workers=10_000)) == "PSI_USAGE"


def test_a_huge_declared_size_is_refused_before_any_work():
    server = psi.server.CreateWithNewKey(True)
    for ds in (psi.DataStructure.GCS, psi.DataStructure.BLOOM_FILTER):
        assert code_of(lambda: server.CreateSetupMessage(1e-9, 2**62, ["a"], ds)) == "PSI_LIMIT"
    with pytest.raises(OverflowError):
        server.CreateSetupMessage(1e-9, 2**80, ["a"], psi.DataStructure.GCS)
    # A raw setup ignores the count, as OpenMined's does.
    assert server.CreateSetupMessage(1e-9, 2**62, ["a"], psi.DataStructure.RAW).ByteSize() == 37
    p = plan.Plan({"version": 1, "inputs": [{"id": "x", "dtype": "f64"}], "nodes": [{"id": "y", "op": "sqrt", "args": ["x"]}], "outputs": [{"id": "o", "from": "y"}]})
    assert code_of(lambda: p.run([np.zeros(4)], workers=100_000)) == "PLAN_BINDING"


def test_one_object_called_from_many_threads_gives_each_its_answer_or_a_clear_error():
    server = psi.server.CreateWithNewKey(True)
    client = psi.client.CreateWithNewKey(True)
    request = client.CreateRequest([f"v{i}" for i in range(3000)])
    expected = server.ProcessRequest(request, workers=1).save()
    results, errors = [], []
    barrier = threading.Barrier(6)

    def respond():
        barrier.wait()
        try:
            results.append(server.ProcessRequest(request, workers=2).save())
        except lockstep.PsiError as e:  # closed before it began: a clear refusal, never a crash
            errors.append(e.code)

    threads = [threading.Thread(target=respond) for _ in range(5)]
    for t in threads:
        t.start()
    barrier.wait()
    for t in threads:
        t.join(timeout=120)
    assert results == [expected] * 5 and not errors
    # A close while steps run: each step ends with its answer or a clear error.
    threads = [threading.Thread(target=respond) for _ in range(5)]
    results.clear()
    barrier = threading.Barrier(6)
    for t in threads:
        t.start()
    barrier.wait()
    try:
        server.close()
        closed = True
    except lockstep.PsiError as e:  # a step holds it: refused by code, the steps go on
        assert e.code == "PSI_USAGE" and "in a step" in e.message
        closed = False
    for t in threads:
        t.join(timeout=120)
    # Each step got its answer, or (closed before it began) PSI_USAGE; nothing else.
    assert all(r == expected for r in results)
    assert all(e == "PSI_USAGE" for e in errors), errors
    assert len(results) + len(errors) == 5
    assert closed or not errors


def test_plan_inputs_of_the_wrong_kind_dtype_layout_or_aliasing_are_refused_before_work():
    p = plan.Plan({"version": 1, "inputs": [{"id": "x", "dtype": "f32"}], "nodes": [{"id": "y", "op": "neg", "args": ["x"]}], "outputs": [{"id": "o", "from": "y"}]})
    x = np.arange(10, dtype=np.float32)
    assert code_of(lambda: p.run([x.astype(np.float64)])) == "PLAN_BINDING"
    assert code_of(lambda: p.run([x.astype(np.int64)])) == "PLAN_BINDING"
    assert code_of(lambda: p.run([x[::2]])) == "PLAN_BINDING"
    assert code_of(lambda: p.run([[1.0, 2.0]])) == "PLAN_BINDING"
    assert code_of(lambda: p.run([x, x])) == "PLAN_BINDING"
    assert code_of(lambda: p.run([x], [x])) == "PLAN_BINDING"  # the output is the input
    out = np.full(10, 7, dtype=np.float32)
    assert code_of(lambda: p.run([x], [np.zeros(9, dtype=np.float32)])) == "PLAN_BINDING"
    assert code_of(lambda: p.run([x], [out.astype(np.float64)])) == "PLAN_BINDING"
    assert (out == 7).all(), "nothing written by a refused run"
    assert code_of(lambda: plan.Plan("{")) == "PLAN_INVALID"
    assert code_of(lambda: plan.Plan({"version": 2})) == "PLAN_INVALID"
    assert code_of(lambda: p.run({"y": x})) == "PLAN_BINDING"
    # Contiguous but misaligned: a view at an odd byte offset.
    odd = np.frombuffer(bytearray(4 * 11), dtype=np.float32, count=10, offset=1)
    assert code_of(lambda: p.run([odd])) == "PLAN_BINDING"
    read_only = np.zeros(10, dtype=np.float32)
    read_only.flags.writeable = False
    assert code_of(lambda: p.run([x], [read_only])) == "PLAN_BINDING"


def test_an_output_numpy_cannot_allocate_is_its_memory_error_not_a_crash():
    huge = plan.Plan({"version": 1, "inputs": [{"id": "x", "dtype": "f64"}],
                      "nodes": [{"id": "y", "op": "neg", "args": ["x"]}],
                      "outputs": [{"id": "o", "from": "y", "view": {"offset": 0, "stride": 2**40}}]})
    with pytest.raises((MemoryError, lockstep.PlanError)):
        huge.run([np.zeros(1 << 12)])


def test_ctrl_c_cancels_a_step_that_reports_nothing_within_a_fraction_of_a_second():
    import os
    import signal
    import time

    server = psi.server.CreateWithNewKey(True)
    values = [f"v{i}" for i in range(200_000)]  # about 10 s on one worker
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        server.CreateSetupMessage(1e-9, 10, values, psi.DataStructure.RAW, workers=1)
    assert time.monotonic() - started < 3.0
    # The server is whole after it: a step runs to its end.
    assert server.CreateSetupMessage(1e-9, 1, ["a"], psi.DataStructure.RAW).ByteSize() == 37
