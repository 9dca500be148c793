"""Inequalities proven on boxes by interval (ball) arithmetic, or refuted (implemented in checks.certify).

``certify(lhs, rhs, box)`` decides ``lhs <= rhs`` on a box of one to four variables and returns a
:class:`Certificate` (``certified``, ``fails`` with a counterexample, or ``undecided`` with why);
``certify_inequality`` takes a ``derivations.core.RegionInequality``.
"""

from checks.certify import Certificate, certify, certify_inequality

__all__ = ["Certificate", "certify", "certify_inequality"]
