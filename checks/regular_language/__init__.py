"""The regular-language paper (prefix ``rl``) as checks; importing this package registers every claim.

Paper: Huang, Liang, Yang, "How Transformers Learn Regular Language Recognition" (arXiv:2505.00926);
specification ``shared/spec/regular-language.md``. One module per part of the specification:

closed_forms
    §3 and §4, the 24 ``rl.cf.*`` items: every printed display beside its derivation
    (``derivations.regular_language``), every printed inequality sampled (and certified where its
    box is finite), every printed statement over strings compared exhaustively, and a second,
    numeric method per item (the package ``cross_checks``, one module per theme).
"""

from checks.regular_language import closed_forms  # noqa: F401
