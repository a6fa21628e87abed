"""lockstep.ceremony against the CLI: the same facts, verdicts and refusals for the same files.

The files are made by the CLI under test (LOCKSTEP_BIN): a phase 1 chain and its seal, its
.ptau, a phase 2 chain over gnark's circuit fixture and its keys, a snarkjs .zkey chain over
circom's fixture and a proof of it. Every `info` is compared with `lockstep ceremony info`'s
text, every chain's verdicts with `... verify`'s lines, every refusal's words with the CLI's.
"""

import os
import re
import shutil
import subprocess

import pytest

import lockstep
from lockstep import ceremony

#: BLS12-381's scalar field modulus r.
R = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001


def run(bin_path, cwd, *args, ok=True):
    done = subprocess.run(
        [str(bin_path), "-q", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    if ok and done.returncode != 0:
        raise AssertionError(f"lockstep {args}: {done.stderr}")
    return done


def gnark_witness(public, secret):
    """gnark's full witness (witness.WriteTo): counts, then 32-byte big-endian values."""
    values = [*public, *secret]
    head = b"".join(n.to_bytes(4, "big") for n in (len(public), len(secret), len(values)))
    return head + b"".join((v % R).to_bytes(32, "big") for v in values)


def chain_60(x, s):
    """gnark's test circuit of 60 constraints (interop/gnark/phase2.go): its public Y."""
    coeffs = [3, 2, -1, -2, 5, 1, 7]
    acc = x
    for i in range(56):
        acc = acc * s[i % 8] + x * coeffs[i % 7]
        if i % 2 == 1:
            acc -= s[(i + 1) % 8]
        acc %= R
    return acc


def wtns(values):
    """A circom .wtns (version 2) of `values`, the constant 1 first."""
    header = (32).to_bytes(4, "little") + R.to_bytes(32, "little") + len(values).to_bytes(4, "little")
    body = b"".join(v.to_bytes(32, "little") for v in values)
    out = b"wtns" + (2).to_bytes(4, "little") + (2).to_bytes(4, "little")
    out += (1).to_bytes(4, "little") + len(header).to_bytes(8, "little") + header
    out += (2).to_bytes(4, "little") + len(body).to_bytes(8, "little") + body
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory, lockstep_bin, root):
    d = tmp_path_factory.mktemp("ceremony")

    def cli(*args):
        return run(lockstep_bin, d, *args)

    cli("ceremony", "phase1", "new", "--power", "6", "--out", "c0")
    cli("ceremony", "phase1", "contribute", "--in", "c0", "--out", "c1")
    cli("ceremony", "phase1", "contribute", "--in", "c1", "--out", "c2")
    cli("ceremony", "phase1", "seal", "--in", "c2", "--beacon", "ab", "--iterations", "3", "--out", "srs")
    cli("ceremony", "ptau", "export", "c2", "--out", "c2.ptau")
    shutil.copy(root / "crates/ceremony/tests/fixtures/chain-60.r1cs", d / "circuit.r1cs")
    cli("ceremony", "phase2", "new", "--r1cs", "circuit.r1cs", "--phase1", "srs", "--out", "q0")
    cli("ceremony", "phase2", "contribute", "--in", "q0", "--out", "q1", "--entropy", "x")
    cli("ceremony", "phase2", "contribute", "--in", "q1", "--out", "q2", "--entropy", "y")
    cli(
        "ceremony", "phase2", "seal", "q0", "q1", "q2", "--r1cs", "circuit.r1cs", "--phase1", "srs",
        "--beacon", "0badc0de", "--pk", "pk", "--vk", "vk",
    )
    fixtures = root / "crates/cli/tests/fixtures/zkey"
    shutil.copy(fixtures / "three.r1cs", d / "three.r1cs")
    shutil.copy(fixtures / "power4-prepared.ptau", d / "p4.ptau")
    cli("ceremony", "zkey", "new", "three.r1cs", "p4.ptau", "--out", "k0.zkey")
    cli("ceremony", "zkey", "contribute", "--in", "k0.zkey", "--out", "k1.zkey", "--name", "alice", "--entropy", "x")
    cli("ceremony", "zkey", "beacon", "--in", "k1.zkey", "--out", "k2.zkey", "--beacon", "0102", "--exp", "10")
    cli("ceremony", "zkey", "export-vkey", "k2.zkey", "--out", "vk.json")
    # three.r1cs: a*b = t, t*x = out, (a + 2b) * 1 = t + x - 1; wires 1, out, x, a, b, t.
    (d / "three.wtns").write_bytes(wtns([1, 8, 4, 1, 2, 2]))
    secret = [3, 5, 7, 11, 13, 17, 19, 23]
    (d / "w").write_bytes(gnark_witness([9, chain_60(9, secret)], secret))
    cli(
        "groth16", "prove", "--pk", "pk", "--r1cs", "circuit.r1cs", "--witness", "w",
        "--vk", "vk", "--proof", "gproof", "--public", "gpublic",
    )
    cli(
        "groth16", "prove", "--zkey", "k2.zkey", "--witness", "three.wtns", "--r1cs", "three.r1cs",
        "--proof", "proof.json", "--public", "public.json",
    )
    return d


#: Every kind the engine reads (13), an initial and a later object of each chain.
ALL = [
    "c0", "c1", "srs", "c2.ptau", "q0", "q2", "circuit.r1cs", "pk", "vk", "gproof", "gpublic",
    "w", "three.r1cs", "three.wtns", "k2.zkey",
]


@pytest.mark.parametrize("name", ALL)
def test_info_is_the_cli_s_text_and_its_facts(files, lockstep_bin, name):
    path = files / name
    cli = run(lockstep_bin, files, "ceremony", "info", str(path)).stdout
    assert ceremony.info_text(path) == cli
    facts = ceremony.info(path)
    assert facts["size"] == path.stat().st_size
    assert f"kind: {facts['kind']}\n" in cli
    # Every fact the text shows is in the dict; text-only renderings aside, the values agree.
    for key, value in facts.items():
        if isinstance(value, int) and not isinstance(value, bool) and key not in ("size", "domain"):
            assert str(value) in cli, (key, value)
        if isinstance(value, bytes) and key == "hash":
            assert value.hex() in cli


def test_info_gives_typed_values(files):
    c1 = ceremony.info(files / "c1")
    c0 = ceremony.info(files / "c0")
    assert (c0["initial"], c0["challenge"], c1["initial"]) == (True, None, False)
    assert c1["power"] == 6 and c1["challenge"] == c0["hash"] and len(c1["hash"]) == 32
    key = ceremony.info(files / "k2.zkey")
    assert [c["kind"] for c in key["contributions"]] == ["contribution", "beacon"]
    assert key["contributions"][0]["name"] == "alice" and len(key["circuit_hash"]) == 64
    assert ceremony.info(files / "three.r1cs")["constraints"] == 3
    # Every worker count gives the same facts.
    assert ceremony.info(files / "c2.ptau", workers=1) == ceremony.info(files / "c2.ptau", workers=2)


def lines(stdout):
    return [line for line in stdout.splitlines() if not line.startswith("verified:")]


def test_a_phase1_chain_and_its_seal_are_the_cli_s_verdicts(files, lockstep_bin):
    chain = [str(files / n) for n in ("c0", "c1", "c2")]
    cli = run(
        lockstep_bin, files, "ceremony", "phase1", "verify", *chain,
        "--sealed", str(files / "srs"), "--beacon", "ab", "--iterations", "3",
    ).stdout
    for workers in (1, 2):
        got = ceremony.verify_phase1(
            chain, sealed=files / "srs", beacon="ab", iterations=3, workers=workers
        )
        assert [s["line"] for s in got["steps"]] == lines(cli)
        assert [s["verdict"] for s in got["steps"]] == ["initial", "contribution", "contribution", "seal"]
        assert got["contributions"] == 2
    assert got["steps"][1]["hash"] == ceremony.info(files / "c1")["hash"]
    # From a first contribution, and after --previous.
    assert ceremony.verify_phase1(chain[1:])["contributions"] == 2
    after = ceremony.verify_phase1(chain[2:], previous=chain[1])
    assert (after["contributions"], after["steps"][0]["verdict"]) == (1, "contribution")


def test_phase1_refusals_are_the_cli_s_words(files, lockstep_bin):
    skipped = [str(files / "c0"), str(files / "c2")]
    cli = run(lockstep_bin, files, "ceremony", "phase1", "verify", *skipped, ok=False)
    with pytest.raises(lockstep.CeremonyError) as refused:
        ceremony.verify_phase1(skipped)
    assert refused.value.code == "CEREMONY_REJECTED"
    assert refused.value.message.startswith(f"{skipped[1]}: REJECTED: challenge:")
    assert refused.value.message in cli.stderr
    # Another beacon: not the seal.
    with pytest.raises(lockstep.CeremonyError, match="REJECTED: not the seal of the chain") as e:
        ceremony.verify_phase1([files / "c0", files / "c1", files / "c2"], sealed=files / "srs", beacon="cd")
    assert e.value.code == "CEREMONY_REJECTED"
    # Bad arguments, before any file is read.
    for kwargs, words in [
        ({"sealed": files / "srs", "beacon": "zz"}, "beacon: 'z' (character 1) is not a hex digit"),
        ({"sealed": files / "srs", "beacon": "ab", "iterations": 2**32 + 1}, "iterations 4294967297: at most"),
        ({"sealed": files / "srs"}, "give both"),
        ({"iterations": 5}, "iterations: the beacon's delay, given without a sealed SRS"),
    ]:
        with pytest.raises(lockstep.CeremonyError, match=re.escape(words)) as e:
            ceremony.verify_phase1([files / "c0"], **kwargs)
        assert e.value.code == "CEREMONY_USAGE"
    with pytest.raises(lockstep.CeremonyError, match="none given"):
        ceremony.verify_phase1([])
    with pytest.raises(TypeError, match="not one path"):
        ceremony.verify_phase1(str(files / "c0"))


def test_bad_files_are_named_with_their_fault(files, tmp_path):
    with pytest.raises(lockstep.CeremonyError, match="is a sealed SRS, not a phase 1 object") as e:
        ceremony.verify_phase1([files / "srs"])
    assert e.value.code == "CEREMONY_KIND"
    truncated = tmp_path / "cut"
    truncated.write_bytes((files / "c1").read_bytes()[:-10])
    with pytest.raises(lockstep.CeremonyError, match="truncated") as e:
        ceremony.info(truncated)
    assert e.value.code == "CEREMONY_FILE" and str(truncated) in e.value.message
    junk = tmp_path / "notes.txt"
    junk.write_text("hello, not a ceremony file\n" * 10)
    with pytest.raises(lockstep.CeremonyError, match="is not a ceremony file") as e:
        ceremony.info(junk)
    assert e.value.code == "CEREMONY_KIND"
    with pytest.raises(lockstep.CeremonyError) as e:
        ceremony.info(tmp_path / "missing")
    assert e.value.code == "CEREMONY_IO"
    with pytest.raises(lockstep.CeremonyError, match="not a regular file") as e:
        ceremony.info(tmp_path)
    assert e.value.code == "CEREMONY_IO"
    # A named pipe is refused, never waited on.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for call in (lambda: ceremony.info(fifo), lambda: ceremony.verify_proof(fifo, fifo, fifo)):
        with pytest.raises(lockstep.CeremonyError, match="not a regular file"):
            call()
    with pytest.raises(lockstep.CeremonyError, match="workers: at most") as e:
        ceremony.info(files / "c0", workers=5000)
    with pytest.raises(OverflowError):
        ceremony.info(files / "c0", workers=-1)
    with pytest.raises(TypeError):
        ceremony.info(42)


def test_a_phase2_chain_is_the_cli_s_verdicts(files, lockstep_bin):
    chain = [str(files / n) for n in ("q0", "q1", "q2")]
    circuit = {"r1cs": str(files / "circuit.r1cs"), "phase1": str(files / "srs")}
    cli = run(
        lockstep_bin, files, "ceremony", "phase2", "verify", *chain,
        "--r1cs", circuit["r1cs"], "--phase1", circuit["phase1"],
    ).stdout
    got = ceremony.verify_phase2(chain, **circuit)
    assert [s["line"] for s in got["steps"]] == lines(cli)
    assert got["contributions"] == 2 and got["steps"][0]["verdict"] == "initial"
    # gnark's form: the chain's first file is its first contribution.
    assert ceremony.verify_phase2(chain[1:], **circuit)["contributions"] == 2
    assert ceremony.verify_phase2(chain[2:], previous=chain[1])["contributions"] == 1
    unchecked = ceremony.verify_phase2(chain)
    assert "not checked against a circuit" in unchecked["steps"][0]["line"]
    for given, words in [
        ((chain[1:], {}), "REJECTED: not an initial object (it carries a contribution)"),
        ((chain[2:], circuit), "REJECTED: not made on the initial object of"),
    ]:
        with pytest.raises(lockstep.CeremonyError, match=re.escape(words)) as e:
            ceremony.verify_phase2(given[0], **given[1])
        assert e.value.code == "CEREMONY_REJECTED"
    for kwargs in [{"r1cs": circuit["r1cs"]}, {"previous": chain[0], **circuit}]:
        with pytest.raises(lockstep.CeremonyError, match="r1cs and phase1") as e:
            ceremony.verify_phase2(chain[1:], **kwargs)
        assert e.value.code == "CEREMONY_USAGE"


def test_a_zkey_is_verified_with_snarkjs_s_hashes(files, lockstep_bin):
    cli = run(
        lockstep_bin, files, "ceremony", "zkey", "verify", "three.r1cs", "p4.ptau", "k2.zkey"
    ).stdout
    got = ceremony.verify_zkey(files / "three.r1cs", files / "p4.ptau", files / "k2.zkey")
    flat = cli.replace("\t", "").replace(" ", "").replace("\n", "")
    assert got["circuit_hash"].hex() in flat
    assert [c["name"] for c in got["contributions"]] == ["alice", None]
    for c in got["contributions"]:
        assert c["hash"].hex() in flat
    assert got["contributions"][1]["beacon"]["exp"] == 10
    assert got["contributions"][0]["beacon"] is None
    with pytest.raises(lockstep.CeremonyError, match="is a circom .r1cs file, not a snarkjs .zkey") as e:
        ceremony.verify_zkey(files / "three.r1cs", files / "p4.ptau", files / "three.r1cs")
    assert e.value.code == "CEREMONY_KIND"


def test_proofs_and_powers_verify_and_a_changed_input_is_rejected(files, tmp_path):
    got = ceremony.verify_proof(files / "vk.json", files / "proof.json", files / "public.json")
    assert got == {"public": 2, "format": "snarkjs"}
    assert ceremony.verify_proof(files / "vk", files / "gproof", files / "gpublic") == {
        "public": 2,
        "format": "gnark",
    }
    changed = bytearray((files / "gpublic").read_bytes())
    changed[-1] ^= 1
    (tmp_path / "gpublic").write_bytes(bytes(changed))
    with pytest.raises(lockstep.CeremonyError, match="gproof: REJECTED") as e:
        ceremony.verify_proof(files / "vk", files / "gproof", tmp_path / "gpublic")
    assert e.value.code == "CEREMONY_REJECTED"
    with pytest.raises(lockstep.CeremonyError, match="is a sealed SRS, not snarkjs's JSON") as e:
        ceremony.verify_proof(files / "vk.json", files / "srs", files / "public.json")
    assert e.value.code == "CEREMONY_KIND"
    other = tmp_path / "public.json"
    other.write_text('["8", "5"]')
    with pytest.raises(lockstep.CeremonyError, match="REJECTED") as e:
        ceremony.verify_proof(files / "vk.json", files / "proof.json", other)
    assert e.value.code == "CEREMONY_REJECTED"
    with pytest.raises(lockstep.CeremonyError, match="is a sealed SRS, not a Groth16 verifying key"):
        ceremony.verify_proof(files / "srs", files / "proof.json", files / "public.json")
    assert ceremony.verify_ptau(files / "c2.ptau") == {"power": 6, "contributions": 0}
    assert ceremony.verify_ptau(files / "p4.ptau", workers=1)["power"] == 4


def test_progress_is_reported_and_a_raise_stops_the_check(files):
    chain = [files / n for n in ("c0", "c1", "c2")]
    seen = []
    ceremony.verify_phase1(chain, progress=lambda done, total: seen.append((done, total)))
    assert seen and all(0 <= done <= total for done, total in seen), seen

    class Stop(Exception):
        pass

    def stop(done, total):
        raise Stop()

    with pytest.raises(Stop):
        ceremony.verify_phase1(chain, progress=stop)
    # The module is whole after it.
    assert ceremony.verify_phase1(chain)["contributions"] == 2
