"""The induction-head paper (prefix ``ih``) as checks; importing this package registers every claim.

Paper: Wang, Yu, E, Wu (arXiv:2410.11474), workshop version [W] and full version [F];
specification ``shared/spec/induction-head.md``. One module per part of the specification:

closed_forms
    §3 ``ih.cf.*`` and the closed-form ``ih.dv.*`` items.
figures, experiments (machinery in stage2_runs)
    §6 ``ih.fig1``, ``ih.fig3``, ``ih.fig4`` and §6.5 ``ih.exp.simplification_gap``, ``ode_vs_sgd``,
    ``stage1_protocol``: runs of the actual model against the ODEs.
real_data
    §6 ``ih.fig2`` (wikitext-2 standard transformer) as a CPU proxy on synthetic data.
four_gram_claims, phase1_claims, stage1_claims, fixed_point_claims (runs in four_gram_runs)
    §5.1–5.3 Stage I, balance, the fixed point, Thm 4 Phase I and the C.3.1 (4-gram) claims, with
    ``ih.dv.G4_tail``, ``ih.dv.stage1_rate`` and ``ih.exp.phase1_ratio``.
approximation
    §4 ``ih.dv.thm41_bound`` and §5.4 ``ih.thm4_1``, ``ih.thm4_3``, ``ih.thm4_4`` ([F] §4, reconstructed statements).
"""

from checks.induction_head import closed_forms  # noqa: F401
from checks.induction_head import figures  # noqa: F401
from checks.induction_head import experiments  # noqa: F401
from checks.induction_head import approximation  # noqa: F401
from checks.induction_head import ih_proof  # noqa: F401
from checks.induction_head import ih_proof_bounds  # noqa: F401
from checks.induction_head import real_data  # noqa: F401
from checks.induction_head import four_gram_claims  # noqa: F401
from checks.induction_head import phase1_claims  # noqa: F401
from checks.induction_head import stage1_claims  # noqa: F401
from checks.induction_head import fixed_point_claims  # noqa: F401
from checks.induction_head import theorem4  # noqa: F401
