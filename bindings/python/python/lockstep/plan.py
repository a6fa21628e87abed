"""Typed-array compute plans (lockstep's plan format v1) run over numpy arrays without a copy.

A plan is JSON (a `str`, or a `dict` to be dumped): its inputs, constants, nodes and outputs,
validated when the `Plan` is made (`PlanError`, `PLAN_INVALID`, naming the item and field).
`Plan.run(inputs)` computes its outputs with the same bytes as `lockstep plan run` at every
worker count:

- **Inputs** are numpy arrays of the plan's dtypes (`int8`, `uint8`, `int16`, `uint16`, `int32`,
  `uint32`, `float32`, `float64`), C-contiguous, any shape (their elements in memory order),
  borrowed read-only without a copy; given as a list in the plan's input order or a dict by id.
  A strided view is refused (pass `numpy.ascontiguousarray`, or put the stride in the plan's
  view); a wrong dtype, a wrong length or an array that is also an output is refused with
  `PLAN_BINDING` before any work.
- **Outputs** are allocated (one-dimensional, the lengths the plan's views need) or given
  (`outputs=`, written in place, C-contiguous, the plan's dtypes). After
  `PLAN_DIVISION_BY_ZERO` (an integer division by zero), a `progress` that raised or Ctrl-C the
  given outputs are partly written.
- `workers=` (0: `LOCKSTEP_WORKERS` or every core, fewer for a small run), `progress=` (a
  callable `(done, total)` on the calling thread; raising cancels the run). The GIL is let go
  while the plan runs; Ctrl-C cancels it.
"""

import json
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from lockstep import _native
from lockstep._errors import PlanError

__all__ = ["Plan", "PlanError", "run"]

Progress = Optional[Callable[[float, float], Any]]


class Plan:
    """A validated plan of format v1."""

    def __init__(self, plan: Union[str, Mapping[str, Any]]) -> None:
        text = plan if isinstance(plan, str) else json.dumps(plan)
        self._plan = _native.Plan(text)
        self._signature: Dict[str, Any] = json.loads(self._plan.describe())

    @classmethod
    def from_file(cls, path: str) -> "Plan":
        """The plan in the JSON file at `path`."""
        with open(path, encoding="utf-8") as f:
            return cls(f.read())

    @property
    def signature(self) -> Dict[str, Any]:
        """The plan's inputs and outputs: their ids and dtypes, in order."""
        return self._signature

    def run(
        self,
        inputs: Union[Sequence[Any], Mapping[str, Any]],
        outputs: Optional[Sequence[Any]] = None,
        *,
        workers: int = 0,
        progress: Progress = None,
    ) -> List[Any]:
        """The plan's outputs over `inputs` (numpy arrays), in the plan's output order."""
        if isinstance(inputs, Mapping):
            ids = [i["id"] for i in self._signature["inputs"]]
            missing = [i for i in ids if i not in inputs]
            extra = [k for k in inputs if k not in ids]
            if missing or extra:
                raise PlanError(
                    "PLAN_BINDING",
                    f"inputs: missing {missing}, not in the plan {extra}",
                )
            inputs = [inputs[i] for i in ids]
        return self._plan.run(list(inputs), None if outputs is None else list(outputs), workers, progress)


def run(
    plan: Union[str, Mapping[str, Any], Plan],
    inputs: Union[Sequence[Any], Mapping[str, Any]],
    outputs: Optional[Sequence[Any]] = None,
    *,
    workers: int = 0,
    progress: Progress = None,
) -> List[Any]:
    """`Plan(plan).run(inputs, outputs, workers=..., progress=...)`."""
    plan = plan if isinstance(plan, Plan) else Plan(plan)
    return plan.run(inputs, outputs, workers=workers, progress=progress)
