"""lockstep: private set intersection (a drop-in for `openmined.psi`) and numeric plans over
numpy arrays, computed in parallel with output byte-identical to one thread at every worker count.

- `lockstep.psi`: OpenMined PSI's `server` and `client` (`import lockstep.psi as psi` in place of
  `import private_set_intersection.python as psi`), the same bytes, with `workers=` and
  `progress=` on every step.
- `lockstep.link`: record linkage over data frames (pandas, polars) or CSV bytes: the engine's
  record rules, composite keys, normalisation, the association table and resolve.
- `lockstep.spark`: the same record linkage's masking on a Spark cluster's executors, the files
  written by the driver byte for byte as `lockstep psi request/setup/respond` writes them.
- `lockstep.plan`: typed-array compute plans (format v1) run over numpy arrays without a copy.
- `lockstep.ceremony`: a Groth16 ceremony's files (gnark's, snarkjs's, circom's): what each
  holds, and the verifications of chains, keys and proofs.

Every refusal raises `LockstepError` (a `RuntimeError`) with the engine's stable `code`:
`PsiError` for PSI, `PlanError` for plans, `CeremonyError` for the ceremony. Every step lets go of the GIL while it computes.
"""

from lockstep import _native
from lockstep._errors import CeremonyError, LockstepError, PlanError, PsiError

__version__ = "0.1.0"

#: The version of the engines' face this module was built from (the Node addon's `abiVersion`).
ABI_VERSION: int = _native.ABI_VERSION

__all__ = ["ABI_VERSION", "CeremonyError", "LockstepError", "PlanError", "PsiError", "__version__"]
