"""Oracle 2 (spec §3): on co.regime.symbolic the vectorised flow equals −∇ of Eq. (1)'s loss to >= 40 digits, and the
float64 flow of numerics equals both to rounding."""

import mpmath
import numpy as np
import sympy as sp

from derivations.word_cooccurrence import model as S
from numerics.models.word_cooccurrence import model as Mo


def test_the_symbolic_route_agrees_to_40_digits():
    F = S.output()
    loss = sp.log(1 + sp.exp(-F))
    flow = sp.lambdify(S.PARAMETERS, S.vectorised_flow(F), "mpmath")
    gradient = sp.lambdify(S.PARAMETERS, [sp.diff(loss, p) for p in S.PARAMETERS], "mpmath")
    rng = np.random.default_rng(11)
    point = [sp.Rational(int(k), 97) for k in rng.integers(-97, 98, len(S.PARAMETERS))]
    with mpmath.workdps(50):
        values = [mpmath.mpf(x.p) / x.q for x in point]
        printed, derived = flow(*values), [-g for g in gradient(*values)]
        scale = max(abs(x) for x in derived)
        assert max(abs(a - b) for a, b in zip(printed, derived)) <= mpmath.mpf(10) ** -40 * scale
    # the float64 kernel of numerics at the same point (layout W, W_V, W_K, W_Q row-major, as PARAMETERS)
    lay = Mo.layout(S.M, S.M1, S.D)
    theta = np.array([float(x) for x in point])
    numeric = Mo.flow(theta, lay, np.array([[0, 1, 2]]), np.array([1.0]), np.array(S.A, dtype=float))
    np.testing.assert_allclose(numeric, [float(x) for x in derived], rtol=0, atol=1e-14 * float(scale))
