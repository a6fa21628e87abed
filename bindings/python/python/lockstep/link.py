"""Record linkage between two organisations over data frames: which of your rows the other
party also holds, by a key of one or more columns, revealing nothing else. The rules are the
engine's, the same as `lockstep psi setup/request/respond/intersect/resolve` and the npm
package's: the same bytes and rows on the same records at every worker count.

The **starter** masks its records into a setup and answers the joiner's request; the
**joiner** masks its records into a request and finds its matched rows. After a raw setup the
joiner's pairs file lets the starter resolve the matches to its own rows (the association
table).

Records are either
- a data frame (pandas or polars) with `on=` naming the key's columns (one, or several for a
  composite key joined unambiguously): the frame is written as the CSV it writes itself
  (`to_csv(index=False)` / `write_csv()`; a missing value is an empty field, a float as the
  frame prints it) and read by the engine's record rules, as the CLI reads
  `--input FILE --column ...` (so the matched rows' file is the CLI's, every column);
- `bytes` of a CSV file with a header, with `on=` its key columns;
- or, with `on=None`, one value a row: a list, a numpy array, a pandas or polars series, a
  pyarrow array (`str` or `bytes`).

`normalize=True` trims, lowercases and collapses whitespace in key fields (both parties must
agree). Rows are 0-based positions in the records given (`frame.iloc[found.rows]`). Refusals
raise `lockstep.PsiError` with the engine's code; keys stay inside each party until
`export_key()`, wiped on `close()`.

```python
import lockstep.link as link
starter, joiner = link.Starter(), link.Joiner()           # in two organisations
setup = starter.setup(clinic, on=["email"], normalize=True, joiner_count=len(registry))
request = joiner.request(registry, on=["email"], normalize=True)
response = starter.respond(request, joiner_count=len(registry))
found = joiner.intersect(setup, response)                 # found.rows: the joiner's matched rows
shared = registry.iloc[found.rows]
pairs = starter.resolve(found.pairs_file)                 # the joiner sends its pairs file
both = clinic.iloc[pairs.starter_rows]                    # row for row with registry.iloc[pairs.joiner_rows]
```
"""

from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Union

from lockstep import _native
from lockstep._errors import PsiError
from lockstep.psi import _values

__all__ = ["Found", "Joiner", "PsiError", "Resolved", "Starter"]

Progress = Optional[Callable[[float, float], Any]]
On = Union[None, str, Sequence[str]]


@dataclass(frozen=True)
class Found:
    """A joiner's intersection."""

    #: Distinct keys found.
    size: int
    #: The matched rows, 0-based, ascending (empty for a size-only round).
    rows: List[int]
    #: After a raw setup, the setup position each matched row found (else None).
    setup_positions: Optional[List[int]]
    #: The matched rows as `psi intersect --out` writes them (None: size-only).
    rows_file: Optional[bytes]
    #: After a raw setup, the pairs file for the starter (`psi intersect --pairs-out`).
    pairs_file: Optional[bytes]


@dataclass(frozen=True)
class Resolved:
    """The starter's rows of the joiner's pairs, pair by pair."""

    joiner_rows: List[int]
    starter_rows: List[int]
    #: The pairs with the starter's rows, as `psi resolve --out` writes them.
    file: bytes


def _columns(on: On) -> List[str]:
    return [on] if isinstance(on, str) else list(on or [])


def _rows(records: Any, on: On):
    """`(data, options)` for the engine: a CSV's bytes keyed on `on`, or values packed."""
    columns = _columns(on)
    if not columns:
        if hasattr(records, "columns"):  # a frame: its rows are records, keyed on named columns
            raise TypeError("records: a frame needs on= naming its key columns")
        records = _values(records)
        if isinstance(records, (bytes, str)):
            raise TypeError("records: with on=None, one value a row (a list or a series), not a single value")
        return records, {"packed": True}
    if isinstance(records, (bytes, bytearray, memoryview)):
        return bytes(records), {"columns": columns}
    # The whole frame, as the CSV it writes: the engine reads it as the CLI reads that file
    # (the matched rows' file holds every column) and refuses a key column it lacks.
    if hasattr(records, "write_csv") and hasattr(records, "select"):  # polars
        return records.write_csv().encode("utf-8"), {"columns": columns}
    if hasattr(records, "to_csv"):  # pandas
        data = records.to_csv(index=False, lineterminator="\n").encode("utf-8")
        return data, {"columns": columns}
    raise TypeError(f"records: a pandas or polars frame or a CSV's bytes with on=, not {type(records).__name__}")


class _Party:
    _role = ""

    def __init__(self, key: Optional[bytes] = None) -> None:
        """A party with a fresh key, or with `key` (32 bytes from `export_key()`)."""
        if key is None:
            self._party = _native.Party.generate(self._role)
        else:
            self._party = _native.Party.from_key(self._role, bytes(key))

    def export_key(self) -> bytes:
        """The key's 32 bytes: to keep for a later step of this party. Never send it."""
        return self._party.export_key()

    def close(self) -> None:
        """Wipes the key now; later calls raise `PsiError` (`PSI_USAGE`)."""
        self._party.close()

    def __enter__(self) -> "_Party":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class Starter(_Party):
    """The party that publishes its masked records and answers requests."""

    _role = "starter"

    def setup(
        self,
        records: Any,
        on: On = None,
        *,
        joiner_count: int,
        format: str = "raw",
        fpr: Optional[float] = None,
        normalize: bool = False,
        workers: int = 0,
        progress: Progress = None,
    ) -> bytes:
        """The setup message over the records' distinct keys (`format`: raw, gcs or bloom;
        `fpr`: the joiner's whole query's false-positive rate, default 1e-9)."""
        data, options = _rows(records, on)
        options.update(format=format, joinerCount=joiner_count, normalize=normalize, fpr=fpr)
        return self._party.setup(data, options, workers, progress)

    def permutation_file(self) -> bytes:
        """The last raw setup's permutation (setup position -> rows): yours alone, for resolve."""
        return self._party.permutation_file()

    def respond(
        self,
        request: bytes,
        joiner_count: int,
        *,
        size_only: bool = False,
        workers: int = 0,
        progress: Progress = None,
    ) -> bytes:
        """The response to a joiner's request of at most `joiner_count` keys."""
        return self._party.respond(bytes(request), joiner_count, size_only, workers, progress)

    def resolve(self, pairs_file: bytes) -> Resolved:
        """The joiner's pairs resolved to this starter's rows (after a raw setup)."""
        joiner_rows, starter_rows, file = self._party.resolve(bytes(pairs_file))
        return Resolved(joiner_rows, starter_rows, file)


class Joiner(_Party):
    """The party that asks which of its records the starter holds."""

    _role = "joiner"

    def request(
        self,
        records: Any,
        on: On = None,
        *,
        normalize: bool = False,
        size_only: bool = False,
        workers: int = 0,
        progress: Progress = None,
    ) -> bytes:
        """The request over the records' distinct keys."""
        data, options = _rows(records, on)
        options.update(normalize=normalize, sizeOnly=size_only)
        return self._party.request(data, options, workers, progress)

    def intersect(
        self,
        setup: bytes,
        response: bytes,
        *,
        max_setup_bytes: Optional[int] = None,
        workers: int = 0,
        progress: Progress = None,
    ) -> Found:
        """The matched rows of this joiner's last request."""
        found = self._party.intersect(bytes(setup), bytes(response), max_setup_bytes, workers, progress)
        return Found(**found)
