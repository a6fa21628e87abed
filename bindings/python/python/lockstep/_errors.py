"""The exceptions every lockstep call raises for a refusal, each carrying the engine's stable code.

The codes and their meanings are the engines' (docs/ARCHITECTURE.md): `PSI_USAGE`, `PSI_INPUT`,
`PSI_PARAMS`, `PSI_KEY`, `PSI_MESSAGE`, `PSI_ROUND`, `PSI_LIMIT`, `PSI_CANCELLED`,
`PSI_INTERNAL`, `PSI_FILE` (a file `lockstep.spark`'s driver reads or writes); `PLAN_INVALID`, `PLAN_BINDING`, `PLAN_BUDGET`, `PLAN_DIVISION_BY_ZERO`,
`PLAN_RUNTIME`, ...; `CEREMONY_REJECTED`, `CEREMONY_FILE`, `CEREMONY_KIND`, `CEREMONY_IO`,
`CEREMONY_USAGE`, `CEREMONY_RUN`. The same code comes from the CLI, the Node addon and the wasm module for the
same refusal.
"""


class LockstepError(RuntimeError):
    """A refusal by one of lockstep's engines: `code` is stable, `message` the engine's words.

    A `RuntimeError`, as `openmined.psi` raises, so code written for it catches ours.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class PsiError(LockstepError):
    """A refusal by the PSI engine (a `PSI_*` code)."""


class PlanError(LockstepError):
    """A refusal by the plan engine (a `PLAN_*` code)."""


class CeremonyError(LockstepError):
    """A refusal by the ceremony engine (a `CEREMONY_*` code)."""
