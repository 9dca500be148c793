"""The Scan-and-Snap paper (prefix ``ss``) as checks; importing this package registers every item.

Paper: Tian, Wang, Chen, Du, "Scan and Snap: Understanding Training Dynamics and Token Composition in
1-layer Transformer" (NeurIPS 2023, arXiv:2305.16380); specification ``shared/spec/scan-and-snap.md``.

closed_forms
    The closed forms and derive-and-verify items of part 1 built so far (spec §4.3, §4.4, §4.8, §5):
    each printed display beside its derivation (``derivations.scan_snap``), decided by the shared kind
    :class:`checks.kinds.ItemCheck`, with a second, numeric method per item (``cross_checks``).
"""

from checks.scan_snap import (  # noqa: F401
    closed_forms,
    decoder_items,
    matrix_claims,
    matrix_items,
    model_items,
    scalar_claims,
    settings,
    snap_items,
)
