"""The Scan-and-Snap paper (prefix ``ss``) as checks; importing this package registers every item.

Paper: Tian, Wang, Chen, Du, "Scan and Snap: Understanding Training Dynamics and Token Composition in
1-layer Transformer" (NeurIPS 2023, arXiv:2305.16380); specification ``shared/spec/scan-and-snap.md``.

One module per part of the specification (part 1 of issue #14: the model, decoder, scalar and surrogate levels):

closed_forms, cross_checks
    SymPy items (spec §4.3–§4.4, §4.6, §4.8, §5): each printed display beside its derivation
    (``derivations.scan_snap``), decided by :class:`checks.kinds.ItemCheck`, with a second, numeric method.
model_items
    Eqns 1–4, 15–19 and the model-level derive-and-verify items on random instances (array identities against
    complex-step gradients of a separate analytic loss).
sequence_items
    Finite-T identities, the T → ∞ limits (Monte Carlo, R16), the delta method, Remark 1's effective rate,
    Assumption 2's regime check, Lemma 7's interpolant, the positional bias of Sec. 7.
decoder_items
    The decoder level on simulated decoder-only runs (Lemma 3, Remark 1, Lemma 12, Theorem 5, Corollary 1, Eqn 9).
matrix_items, matrix_claims
    E and E' of App. B.5: identities at 60 digits and the inequalities of Lemmas 13–17, Eqns 90, 93.
feasibility
    For which (K, M) Assumption 2 can hold at all: constructions above each derived boundary, certified
    searches below it.
count_claims
    Coverage claims on multinomial counts (Lemmas 10, 11, 18; Remark 4), exact and by Monte Carlo.
scalar_claims, snap_items, surrogate_claims, figures
    h, h*, ω, γ (Lemmas 7–9, Theorem 1(b)), Theorem 4's transition times and scalar surrogate, Figs. 8–9.
phase_claims
    Theorem 4's scanning and snapping phases at the scalar level.
xi_positive
    Theorem 1(a): ξ_n > 0 on random E and along T = ∞ SGD trajectories, inside Assumption 2.
settings
    The setting options (``ss.opt.*``) and named parameter sets (``ss.cfg.*``) as records (spec R17 (g)).
"""

from checks.scan_snap import (  # noqa: F401
    closed_forms,
    count_claims,
    decoder_items,
    decoder_claims,
    feasibility,
    figures,
    matrix_claims,
    matrix_items,
    model_items,
    phase_claims,
    scalar_claims,
    sequence_items,
    settings,
    snap_items,
    surrogate_claims,
    xi_positive,
)
