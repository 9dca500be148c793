"""Rule 6 (checks.high_probability): decisions against the Clopper–Pearson bound computed from the Beta law."""

import numpy as np
import pytest
from scipy import stats

from checks.high_probability import decide_probability
from derivations.errors import InvalidArgument


def _upper(k, n):
    return 1.0 if k == n else float(stats.beta.ppf(0.95, k + 1, n - k))


@pytest.mark.parametrize("k, n, delta", [(300, 300, 0.1), (290, 300, 0.1), (270, 300, 0.1), (250, 300, 0.1),
                                         (2, 2, 0.01), (0, 5, 0.5), (97, 100, 0.01)])
def test_the_decision_follows_rule_6(k, n, delta):
    decision = decide_probability([True] * k + [False] * (n - k), delta)
    assert decision.p_upper == pytest.approx(_upper(k, n), rel=1e-9)
    expected = "fails" if _upper(k, n) < 1 - delta else "holds" if k / n >= 1 - delta else "inconclusive"
    assert decision.status.value == expected
    assert decision.failing == list(range(k, n))


def test_quantiles_and_the_worst_draw_are_reported():
    ratios = np.linspace(0.1, 1.5, 15)
    decision = decide_probability(ratios <= 1, 0.1, labels=[f"seed {i}" for i in range(15)], normalised=ratios)
    assert decision.worst == {"draw": "seed 14", "normalised": 1.5}
    assert decision.quantiles["max"] == 1.5


@pytest.mark.parametrize("kwargs, words", [({"satisfied": []}, "non-empty"), ({"delta": 1.0}, "delta"),
                                           ({"labels": [1]}, "labels")])
def test_bad_input_is_refused(kwargs, words):
    call = {"satisfied": [True, False], "delta": 0.1, **kwargs}
    with pytest.raises(InvalidArgument, match=words):
        decide_probability(call.pop("satisfied"), call.pop("delta"), **call)
