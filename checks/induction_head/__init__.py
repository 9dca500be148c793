"""The induction-head paper (prefix ``ih``) as checks; importing this package registers every claim.

Paper: Wang, Yu, E, Wu (arXiv:2410.11474), workshop version [W] and full version [F];
specification ``shared/spec/induction-head.md``. One module per part of the specification:

closed_forms
    §3 ``ih.cf.*`` and the closed-form ``ih.dv.*`` items.
"""

from checks.induction_head import closed_forms  # noqa: F401
