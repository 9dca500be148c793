"""The word co-occurrence paper (prefix ``co``) as checks; importing this package registers every item.

Paper: Yang, Kailkhura, Wang, Liang, "Training Dynamics of Transformers to Recognize Word Co-occurrence via
Gradient Flow Analysis" (NeurIPS 2024); specification ``shared/spec/word-cooccurrence.md``.

closed_forms
    SymPy items (the logistic loss, the softmax Jacobian, the loss bounds), decided by
    :class:`checks.kinds.ItemCheck`.
model_items
    The model and its exact flow on ``co.regime.harness`` (array identities against the complex-step oracle).
gradient_items
    App. B's printed gradient forms against the complex-step oracle.
init_items
    Lemma G.2's softmax perturbation (Monte Carlo along ‖ε‖ → 0, a proven Hessian constant) and the initial
    moments of the proofs of Lemmas D.4 and D.7 (symbolic Gaussian moments, Monte Carlo over inits).
rate_items
    The printed rates of bilinear observables (App. C, §4, Apps. E–F) against the chain rule along the flow.
reduced_items
    The reduced model with frozen attention: exact on its manifold, and overlaid on the full model.
maxmargin_items
    Its long-time limit: the exact max-margin separator of the group features and the limits it implies.
clock_items
    The end of Phase 1 in the reduced model against the full model's.
band_items
    Explicit constants for Thm F.8's loss rate in the reduced model.
grad0_items
    The claims about the gradients at t = 0 (exact rates of every neuron and token, rule 7 along m), Prop. E.5,
    and the rule-7 initialization claims (Cor. D.2, Lemma D.7).
init_claims
    The initialization claims of Apps. D, H over random initializations (with probability 1 − δ).
"""

from checks.word_cooccurrence import closed_forms, gradient_items, model_items, rate_items, reduced_items  # noqa: F401
from checks.word_cooccurrence import band_items, clock_items, init_claims, init_items, maxmargin_items  # noqa: F401
from checks.word_cooccurrence import grad0_items  # noqa: F401
