"""soac, the Spatial Operator Algebra compiler, from Python (docs/python.md).

    import soac
    panda = soac.Robot("examples/robots/panda.urdf")
    print(soac.derive("J calM^-1 J*"))              # every step, rule and citation
    fd = soac.compile(panda)                        # the standard kernels, JIT-compiled
    qdd = fd.forward_dynamics(q, qd, T)             # (9,), or (B, 9) for (B, ...) inputs

Conventions are the C++ API's (README, Conventions): joint-space vectors in soac's order
(Robot.joints), a free-flyer's q = [x y z qx qy qz qw] and qd = [omega; v] in its body frame,
spatial vectors [angular; linear], matrices (rows, cols) as numpy arrays (column-major, as the
C++ API writes them). Bad input raises soac.Error (a ValueError) with soac's one-line message.
"""

from ._soac import (
    Body,
    Cost,
    Derivation,
    DerivationCheck,
    Dynamics,
    Error,
    Evaluation,
    Frame,
    InternalError,
    NotSupported,
    Robot,
    Step,
    VerifyResult,
    Worst,
    __version__,
    compile,
    derive,
    emit,
    evaluate,
    has_jit,
    tune_llvm,
    verify,
)

__all__ = [
    "__version__",
    "Body",
    "Cost",
    "Derivation",
    "DerivationCheck",
    "Dynamics",
    "Error",
    "Evaluation",
    "Frame",
    "InternalError",
    "NotSupported",
    "Robot",
    "Step",
    "VerifyResult",
    "Worst",
    "compile",
    "derive",
    "emit",
    "evaluate",
    "has_jit",
    "tune_llvm",
    "verify",
]
