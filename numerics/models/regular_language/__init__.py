"""The regular-language paper's model in numbers: enumerated data, one-layer attention, an mpmath twin.

``data`` (the enumerated data sets with EP, parity, CoT and regulariser labels), ``model`` (forward,
logistic loss and analytic gradient as numba kernels, live entries, sign accuracy), ``precise``
(the same at 60 digits with mpmath, and the attention features for the SVM). The main names are
re-exported here.
"""

from numerics.models.regular_language.data import (
    COT_MAX_LENS,
    DIM_DEFAULT,
    EP_COUNTS,
    REG_MAX_LENS,
    TASKS,
    RLData,
    cot_data,
    ep_count,
    ep_data,
    ep_label_literal,
    make_data,
    parity_data,
)
from numerics.models.regular_language.model import (
    LAYOUT,
    SIGN_ZERO,
    Accuracy,
    RLModel,
    live_entries,
    live_tokens,
)
from numerics.models.regular_language.precise import (
    DPS,
    ClassFeature,
    attention_mp,
    class_features_mp,
    features_mp,
    flat_mp,
    forward_mp,
    gradient_mp,
    loss_mp,
    mp_value,
    split_flat,
)

__all__ = [
    "COT_MAX_LENS", "DIM_DEFAULT", "DPS", "EP_COUNTS", "LAYOUT", "REG_MAX_LENS", "SIGN_ZERO", "TASKS",
    "Accuracy", "ClassFeature", "RLData", "RLModel", "attention_mp", "class_features_mp", "cot_data",
    "ep_count", "ep_data", "ep_label_literal", "features_mp", "flat_mp", "forward_mp", "gradient_mp",
    "live_entries",
    "live_tokens", "loss_mp", "make_data", "mp_value", "parity_data", "split_flat",
]
