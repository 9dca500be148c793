"""The induction-head paper's models in numbers.

``tokens`` (samplers), ``integrands`` (per-sequence losses for Monte-Carlo), ``stage2`` (the
reduced Stage-II gradient flow with hitting times), ``sgd`` (online SGD/Adam of the actual model,
Stages I and II), ``highdim`` (the D-dimensional variant of Fig. 4). The main names are re-exported here.
"""

from numerics.models.induction_head.integrands import (
    coincidence_samples,
    g4_loss_samples,
    ih_exp_loss_samples,
    ih_softmax_loss_samples,
    lemma7_samples,
)
from numerics.models.induction_head.sgd import (
    Stage2Config,
    batch_gradient,
    train_stage1,
    train_stage2,
)
from numerics.models.induction_head.stage2 import (
    STAGE2_EVENTS,
    STAGE2_STATE,
    stage2_flow,
    stage2_losses,
    stage2_run,
)
from numerics.models.induction_head.tokens import TOKEN_LAWS, draw_tokens, token_sampler

__all__ = [
    "STAGE2_EVENTS", "STAGE2_STATE", "TOKEN_LAWS", "Stage2Config", "batch_gradient",
    "coincidence_samples", "draw_tokens", "g4_loss_samples", "ih_exp_loss_samples", "ih_softmax_loss_samples",
    "lemma7_samples", "stage2_flow", "stage2_losses", "stage2_run", "token_sampler", "train_stage1",
    "train_stage2",
]
