"""lockstep.link: record linkage over pandas and polars frames, CSV bytes and value lists, byte for
byte against the CLI's `psi setup/request/respond/intersect/resolve` on the same records and keys,
at 1, 2 and 3 workers."""

import csv
import io
import os
import subprocess

import pandas as pd
import polars as pl
import pytest

import lockstep
import lockstep.link as link

HEADER = ["id", "first", "last", "email", "note"]


def records(rows, shift, seed):
    """People as a CSV's text: composite keys (first, last), emails with case and spacing to
    normalize, unicode, quotes, commas, a repeated key."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(HEADER)
    names = ["José", "Zoë", "Ana María", "O'Brien", "李", "Smith, Jr."]
    for i in range(rows):
        n = i + shift
        first = names[n % len(names)]
        email = f"  Person.{n}@Example.org " if n % 4 == 0 else f"person.{n}@example.org"
        w.writerow([f"{seed}-{i}", first, f"Last{n}", email, f'say "{n}"'])
    w.writerow([f"{seed}-dup", names[0], f"Last{shift}", f"person.{shift}@example.org", "again"])
    return out.getvalue()


def cli(lockstep_bin, tmp, *args):
    subprocess.run([str(lockstep_bin), "--quiet", *map(str, args)], cwd=tmp, check=True, timeout=300)


def key_file(tmp, name, key):
    path = tmp / name
    path.write_bytes(key)
    os.chmod(path, 0o600)
    return path


@pytest.mark.parametrize("fmt", ["raw", "gcs", "bloom"])
@pytest.mark.parametrize("frame", ["pandas", "polars", "bytes"])
def test_a_round_over_frames_gives_the_cli_s_bytes_and_rows(tmp_path, lockstep_bin, fmt, frame):
    starter_csv, joiner_csv = records(400, 0, "s"), records(300, 250, "j")
    (tmp_path / "starter.csv").write_text(starter_csv, encoding="utf-8")
    (tmp_path / "joiner.csv").write_text(joiner_csv, encoding="utf-8")

    def frame_of(text):
        if frame == "pandas":
            return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
        if frame == "polars":
            return pl.read_csv(io.StringIO(text), infer_schema=False)
        return text.encode("utf-8")

    on = ["first", "email"]
    starter, joiner = link.Starter(), link.Joiner()
    key_file(tmp_path, "s.key", starter.export_key())
    key_file(tmp_path, "j.key", joiner.export_key())
    cols = [a for c in on for a in ("--column", c)]
    cli(lockstep_bin, tmp_path, "psi", "setup", "--key", "s.key", "--input", "starter.csv", *cols, "--normalize",
        "--joiner-count", 400, "--format", fmt, "--out", "setup.bin",
        *(["--permutation-out", "perm.bin"] if fmt == "raw" else []))
    cli(lockstep_bin, tmp_path, "psi", "request", "--key", "j.key", "--input", "joiner.csv", *cols, "--normalize", "--out", "request.bin")
    cli(lockstep_bin, tmp_path, "psi", "respond", "--key", "s.key", "--request", "request.bin", "--joiner-count", 400, "--out", "response.bin")
    cli(lockstep_bin, tmp_path, "psi", "intersect", "--key", "j.key", "--setup", "setup.bin", "--response", "response.bin",
        "--input", "joiner.csv", *cols, "--normalize", "--request", "request.bin", "--out", "rows.csv",
        *(["--pairs-out", "pairs.bin"] if fmt == "raw" else []))
    if fmt == "raw":
        cli(lockstep_bin, tmp_path, "psi", "resolve", "--permutation", "perm.bin", "--matches", "pairs.bin",
            "--input", "starter.csv", *cols, "--normalize", "--out", "resolved.csv")
    read = lambda name: (tmp_path / name).read_bytes()  # noqa: E731

    for workers in (1, 2, 3):
        setup = starter.setup(frame_of(starter_csv), on, joiner_count=400, format=fmt, normalize=True, workers=workers)
        assert setup == read("setup.bin"), workers
        request = joiner.request(frame_of(joiner_csv), on, normalize=True, workers=workers)
        assert request == read("request.bin")
        response = starter.respond(request, 400, workers=workers)
        assert response == read("response.bin")
        found = joiner.intersect(setup, response, workers=workers)
        assert found.rows_file == read("rows.csv")
        # Rows index the frame: the matched people are those both hold.
        # Rows index the frame, ascending; a repeated key finds every row that holds it.
        assert len(found.rows) >= found.size > 0
        assert found.rows == sorted(found.rows) and found.rows[0] == 0
        if fmt == "raw":
            assert starter.permutation_file() == read("perm.bin")
            assert found.pairs_file == read("pairs.bin")
            resolved = starter.resolve(found.pairs_file)
            assert resolved.file == read("resolved.csv")
            assert len(resolved.joiner_rows) == len(resolved.starter_rows) >= len(found.rows)
        else:
            assert found.pairs_file is None


def test_values_one_a_row_and_size_only():
    starter, joiner = link.Starter(), link.Joiner()
    setup = starter.setup(pd.Series(["a", "b", "c"]), joiner_count=3, format="gcs")
    request = joiner.request(pl.Series(["c", "x", "a"]), size_only=True)
    response = starter.respond(request, 3, size_only=True)
    found = joiner.intersect(setup, response)
    assert (found.size, found.rows, found.rows_file) == (2, [], None)


def test_bad_records_and_steps_are_refused_with_the_engine_s_codes():
    starter, joiner = link.Starter(), link.Joiner()
    frame = pd.DataFrame({"email": ["a@x", "b@x"]})
    with pytest.raises(lockstep.PsiError) as refused:
        starter.setup(frame, ["email", "phone"], joiner_count=2)
    assert refused.value.code == "PSI_INPUT" and "phone" in refused.value.message
    with pytest.raises(lockstep.PsiError) as refused:
        joiner.intersect(b"", b"")
    assert refused.value.code == "PSI_ORDER"
    with pytest.raises(lockstep.PsiError) as refused:
        starter.setup(frame, "email", joiner_count=2, format="xml")
    assert refused.value.code == "PSI_USAGE"
    with pytest.raises(lockstep.PsiError) as refused:
        starter.resolve(b"junk")
    assert refused.value.code == "PSI_ORDER"
    with pytest.raises(TypeError):
        joiner.request("one string")
    with pytest.raises(lockstep.PsiError) as refused:
        link.Starter(b"\x00" * 32)
    assert refused.value.code == "PSI_KEY"
    again = link.Starter(starter.export_key())
    assert again.setup(frame, "email", joiner_count=2) == starter.setup(frame, "email", joiner_count=2)
    starter.close()
    with pytest.raises(lockstep.PsiError) as refused:
        starter.setup(frame, "email", joiner_count=2)
    assert refused.value.code == "PSI_USAGE"


def test_a_call_while_a_step_runs_is_refused_with_psi_usage_never_queued_or_crashed():
    import threading

    starter = link.Starter()
    values = [f"v{i}" for i in range(20_000)]

    def nested(done, total):
        starter.export_key()  # the step's own callback calling into its party

    with pytest.raises(lockstep.PsiError) as refused:
        starter.setup(values, joiner_count=10, progress=nested)
    assert refused.value.code == "PSI_USAGE" and "one call at a time" in refused.value.message

    outcomes, barrier = [], threading.Barrier(3)

    def step():
        barrier.wait()
        try:
            outcomes.append(len(starter.setup(values, joiner_count=10, workers=1)))
        except lockstep.PsiError as e:
            outcomes.append(e.code)

    threads = [threading.Thread(target=step) for _ in range(2)]
    for t in threads:
        t.start()
    barrier.wait()
    try:
        starter.close()
        outcomes.append("closed")
    except lockstep.PsiError as e:
        outcomes.append(e.code)
    for t in threads:
        t.join(timeout=120)
    # Each call got its answer or PSI_USAGE; at least one step ran or the close came first.
    assert len(outcomes) == 3
    assert all(o in ("PSI_USAGE", "closed") or isinstance(o, int) for o in outcomes), outcomes
    assert any(isinstance(o, int) for o in outcomes) or "closed" in outcomes
