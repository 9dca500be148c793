r"""Claims of spec §6.2 on the matrices E, E' of App. B.5: Lemmas 13, 15, 16, 17, Eqns 90 and 93.

Every printed inequality is a *link* ``lhs rel rhs`` between two *members* (the printed expressions of a
chain, evaluated as printed, R1); each step of a chain is its own link, and so is the statement (R17 (b)).
A link is decided on the inside-regime points of the canonical reading only (R11); the other readings, the
outside-regime points and the derived forms are reported beside it. Importing this package registers every
claim; the modules, one per theme:

_engine
    The engine: the sampled matrices (``ss.cfg.randE``, the outside-regime probes, ``ss.cfg.thm_hyp``),
    their spectra in float64 and at 50 digits, links and items, Assumption 2's regime, the judge of a link,
    :func:`evaluate` and the verdict's summary, the shared parameters (method and samples: its docstring).
lemmas
    Lemma 13 / Eqn 74, Lemma 15 / Eqn 78, Lemma 16, Lemma 17 / Eqn 80 and Eqn 90.
chain93
    Eqn 93 and L801–L803 (Theorem 1(a)), with the draws of (δ₁, δ₃, σ).
"""

# isort: off
# the registering submodules, in the order their claims were always registered (``tdcheck list`` shows it)
from checks.scan_snap.matrix_claims import lemmas
from checks.scan_snap.matrix_claims import chain93
# isort: on
from checks.scan_snap.matrix_claims._engine import (
    COUNT,
    DPS,
    EPRIME,
    EPS,
    M_A2,
    M_GRID,
    MUCH,
    PAPER,
    PROBES_PER_K,
    RECHECKS,
    U_INDEX,
    ULPS,
    Batch,
    Exact,
    Group,
    Item,
    Link,
    Matrix,
    evaluate,
    exact,
    groups,
    probes,
    randE,
    thm_hyp,
)
from checks.scan_snap.matrix_claims.chain93 import CHAIN93, check_chain93, draws
from checks.scan_snap.matrix_claims.lemmas import (
    EQN90,
    LEMMA13,
    LEMMA15,
    LEMMA16,
    LEMMA17,
    check_eqn90,
    check_lemma13,
    check_lemma15,
    check_lemma16,
    check_lemma17,
)

__all__ = [
    "CHAIN93",
    "COUNT",
    "DPS",
    "EPRIME",
    "EPS",
    "EQN90",
    "LEMMA13",
    "LEMMA15",
    "LEMMA16",
    "LEMMA17",
    "MUCH",
    "M_A2",
    "M_GRID",
    "PAPER",
    "PROBES_PER_K",
    "RECHECKS",
    "ULPS",
    "U_INDEX",
    "Batch",
    "Exact",
    "Group",
    "Item",
    "Link",
    "Matrix",
    "chain93",
    "check_chain93",
    "check_eqn90",
    "check_lemma13",
    "check_lemma15",
    "check_lemma16",
    "check_lemma17",
    "draws",
    "evaluate",
    "exact",
    "groups",
    "lemmas",
    "probes",
    "randE",
    "thm_hyp",
]
