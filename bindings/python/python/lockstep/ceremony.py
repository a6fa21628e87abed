"""A Groth16 trusted-setup ceremony's files from Python: what any file holds, and the checks.

The files are gnark v0.15's (phase 1 objects, sealed SRSs, phase 2 objects, R1CS, proving and
verifying keys, proofs, witnesses) and snarkjs's and circom's (`.ptau`, `.zkey`, `.r1cs`,
`.wtns`), read and checked whole by the same engine as `lockstep ceremony`, with the same words:

- `info(path)`: the file's facts as a dict (`kind`, then its own: `power`, `hash`, `wires`...);
  `info_text(path)` is what `lockstep ceremony info PATH` prints.
- `verify_phase1(files, ...)`, `verify_phase2(files, ...)`: a contribution chain, each file
  against its predecessor, from the initial object (or after `previous`), and a phase 1's seal.
- `verify_zkey(r1cs, ptau, zkey)`: a snarkjs key against its circuit and powers of tau.
- `verify_proof(vk, proof, public)`: a Groth16 proof, gnark's files or snarkjs's JSON.
- `verify_ptau(path)`: a `.ptau`'s powers.

A file that fails raises `lockstep.CeremonyError` with a stable `code`: `CEREMONY_REJECTED`
(a check failed: the message names the file and the first check), `CEREMONY_FILE` (its reader
refuses it: a bad point, a truncated file), `CEREMONY_KIND` (another kind of file than the call
takes), `CEREMONY_IO`, `CEREMONY_USAGE`, `CEREMONY_RUN`. Nothing is written: contributing stays
with the CLI (`lockstep ceremony phase1 contribute`), where a contribution's secrets never
leave one process.

Every call lets go of the GIL while it reads and checks, calls `progress(done, total)` on the
calling thread (each phase of a call counts from 0: a file's reading, its check), and stops
within about 100 ms on Ctrl-C (`KeyboardInterrupt`); a raise from `progress` stops it too.
`workers=0` takes the CLI's count (`LOCKSTEP_WORKERS` where set, else the machine's), and every
count gives the same result.
"""

import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from lockstep import _native

PathLike = Union[str, "os.PathLike[str]"]
Progress = Optional[Callable[[float, float], Any]]

__all__ = [
    "info",
    "info_text",
    "verify_phase1",
    "verify_phase2",
    "verify_proof",
    "verify_ptau",
    "verify_zkey",
]


def info(path: PathLike, *, workers: int = 0, progress: Progress = None) -> Dict[str, Any]:
    """What the ceremony file at `path` holds, after reading and checking all of it.

    A dict by the engine's keys, in its order: `kind` (the kind's words), then the kind's facts
    (`power`, `hash`, `contribution`, `wires`, `constraints`, `domain` as the exponent of its
    power of two (text shows `2^6`, the dict 6),
    `contributions` as a list of dicts for a `.zkey`...), hashes as bytes, and `size` (bytes).
    The same facts `lockstep ceremony info` prints (`info_text`).
    """
    facts, _ = _native.ceremony_info(os.fspath(path), workers, progress)
    return facts


def info_text(path: PathLike, *, workers: int = 0, progress: Progress = None) -> str:
    """`lockstep ceremony info PATH`'s output, word for word."""
    _, text = _native.ceremony_info(os.fspath(path), workers, progress)
    return text


def _paths(files: Sequence[PathLike]) -> List[str]:
    if isinstance(files, (str, bytes, os.PathLike)):
        raise TypeError("files: a sequence of paths (a chain), not one path")
    return [os.fspath(f) for f in files]


def _optional(path: Optional[PathLike]) -> Optional[str]:
    return None if path is None else os.fspath(path)


def verify_phase1(
    files: Sequence[PathLike],
    *,
    previous: Optional[PathLike] = None,
    sealed: Optional[PathLike] = None,
    beacon: Optional[str] = None,
    iterations: int = 0,
    workers: int = 0,
    progress: Progress = None,
) -> Dict[str, Any]:
    """Verifies a phase 1 chain, as `lockstep ceremony phase1 verify`.

    `files` in order: from the initial object (a first file that is a contribution is checked
    against the initial object of its power), or each after `previous`. With `sealed` and
    `beacon` (hex) and `iterations`, the sealed SRS is checked to be the chain's seal (both or
    neither: `CEREMONY_USAGE`, as `iterations` without them).

    Returns `{"contributions": n, "steps": [{"path", "verdict", "hash", "line"}, ...]}`, a step
    a file (`verdict`: "initial", "contribution" or "seal"; `line`: the CLI's line for it).
    Raises `CeremonyError` at the first file that fails, naming it.
    """
    return _native.ceremony_verify_phase1(
        _paths(files), _optional(previous), _optional(sealed), beacon, iterations, workers, progress
    )


def verify_phase2(
    files: Sequence[PathLike],
    *,
    previous: Optional[PathLike] = None,
    r1cs: Optional[PathLike] = None,
    phase1: Optional[PathLike] = None,
    workers: int = 0,
    progress: Progress = None,
) -> Dict[str, Any]:
    """Verifies a phase 2 chain, as `lockstep ceremony phase2 verify`.

    With `r1cs` (gnark's R1CS) and `phase1` (the sealed SRS), the chain's start is re-derived
    from them: a first file that is an initial object must equal it byte for byte, a first
    contribution must be made on it (gnark's `VerifyPhase2`). Without, the first file must be
    an initial object (taken as it is), or give `previous` (not with `r1cs` and `phase1`:
    `CEREMONY_USAGE`).

    Returns as `verify_phase1`. Raises `CeremonyError` at the first file that fails.
    """
    return _native.ceremony_verify_phase2(
        _paths(files), _optional(previous), _optional(r1cs), _optional(phase1), workers, progress
    )


def verify_zkey(
    r1cs: PathLike, ptau: PathLike, zkey: PathLike, *, workers: int = 0, progress: Progress = None
) -> Dict[str, Any]:
    """Verifies a snarkjs `.zkey` against its circom circuit and `.ptau` (`snarkjs zkey verify`).

    Returns `{"circuit_hash": bytes, "contributions": [{"name", "hash", "beacon"}, ...]}`, the
    hashes snarkjs prints (64 bytes), a beacon's `{"hash", "exp"}` or None.
    """
    return _native.ceremony_verify_zkey(
        os.fspath(r1cs), os.fspath(ptau), os.fspath(zkey), workers, progress
    )


def verify_proof(vk: PathLike, proof: PathLike, public: PathLike) -> Dict[str, Any]:
    """Verifies a Groth16 proof: gnark's verifying key, proof and public witness, or snarkjs's
    `verification_key.json`, `proof.json` and `public.json` (told by the key's first bytes).

    Returns `{"public": n, "format": "gnark" | "snarkjs"}`; raises `CeremonyError` with
    `CEREMONY_REJECTED` when the proof does not verify.
    """
    return _native.ceremony_verify_proof(os.fspath(vk), os.fspath(proof), os.fspath(public))


def verify_ptau(path: PathLike, *, workers: int = 0, progress: Progress = None) -> Dict[str, Any]:
    """Checks a snarkjs `.ptau`'s powers (what `lockstep ceremony ptau import` checks).

    Returns `{"power": p, "contributions": n}` (snarkjs's recorded contributions, not
    re-checked: snarkjs proves them in its own form).
    """
    return _native.ceremony_verify_ptau(os.fspath(path), workers, progress)
