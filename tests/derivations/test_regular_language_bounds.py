"""rl printed inequalities of App. A (rl.cf.softmax_lipschitz, rl.cf.logistic_taylor): sample_margin and
verify() against independent mpmath evaluations, and property tests of the identities behind them."""

import sys
from pathlib import Path

import mpmath
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations.regular_language import bounds as B
from derivations.regular_language.symbols import f, x

sys.path.insert(0, str(Path(__file__).parent))
import test_regular_language_reference as R  # noqa: E402

MP = mpmath.mpf


def softmax(values, lam):
    e = [mpmath.exp(v / lam) for v in values]
    z = sum(e)
    return [v / z for v in e]


def logistic(z):
    return 1 / (1 + mpmath.exp(z))


def _vector(point, prefix, n):
    return [MP(R.rational(point[f"{prefix}{i + 1}"]).p) / R.rational(point[f"{prefix}{i + 1}"]).q for i in range(n)]


def softmax_margin(inequality, point):
    """rhs - lhs of a softmax_lipschitz inequality, computed without SymPy."""
    iid = inequality.id
    num = {k: MP(R.rational(v).p) / R.rational(v).q for k, v in point.items()}
    if ".after_A1." in iid:
        names = sorted(k for k in num if k.startswith("W_"))
        s = [num[k] for k in names]
        sp_ = [num["Wp" + k[1:]] for k in names]
        a, b = softmax(s, num["lam"]), softmax(sp_, num["lam"])
        total = mpmath.sqrt(sum((p - q) ** 2 for p, q in zip(a, b)))
        if ".second" in iid:
            return mpmath.sqrt(sum((p - q) ** 2 for p, q in zip(s, sp_))) / num["lam"] - total
        i = int(iid.rsplit(".l", 1)[1]) - 1
        return total - abs(a[i] - b[i])
    n = int(iid.rsplit(".L", 1)[1])
    xs, lamv = _vector(point, "x", n), num.get("lam", MP(1))
    if ".jacobian_quadratic_form." in iid:
        v = _vector(point, "v", n)
        phi = softmax(xs, 1)
        mean = sum(p * vi for p, vi in zip(phi, v))
        return sum(vi**2 for vi in v) / 2 - (sum(p * vi**2 for p, vi in zip(phi, v)) - mean**2)
    ys = _vector(point, "y", n)
    gap = mpmath.sqrt(sum((p - q) ** 2 for p, q in zip(softmax(xs, lamv), softmax(ys, lamv))))
    dist = mpmath.sqrt(sum((p - q) ** 2 for p, q in zip(xs, ys))) / lamv
    return (dist / 2 if ".sharp." in iid else dist) - gap


def test_softmax_lipschitz_margins_agree_with_mpmath():
    item = B.item_softmax_lipschitz()
    for inequality in item.inequalities:
        margin = inequality.sample_margin(n_points=150)
        with mpmath.workdps(R.DPS):
            independent = softmax_margin(inequality, margin.worst_point)
        assert abs(independent - MP(margin.min_margin)) <= MP(10) ** -12 * max(1, abs(independent)), inequality.id
        assert margin.holds == (independent >= 0)
    formula = item.formulas[0]  # the sharp constant, attained as h -> 0
    with mpmath.workdps(R.DPS):
        lamv = MP(3)
        h = MP(10) ** -12
        a = softmax([h, -h], lamv)
        ratio = mpmath.sqrt((a[0] - MP(1) / 2) ** 2 + (a[1] - MP(1) / 2) ** 2) / mpmath.sqrt(2 * h**2)
        assert formula.verify().equal == R.close(R.evaluate(formula.stated, {"lam": lamv}), ratio, MP(10) ** -10)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-8, 8), min_size=2, max_size=6), st.lists(st.floats(-3, 3), min_size=6, max_size=6))
def test_softmax_jacobian_quadratic_form_is_at_most_half(scores, v):
    phi = softmax([MP(s) for s in scores], 1)
    v = [MP(a) for a in v[: len(scores)]]
    mean = sum(p * a for p, a in zip(phi, v))
    assert sum(p * a**2 for p, a in zip(phi, v)) - mean**2 <= sum(a**2 for a in v) / 2 + MP(10) ** -12


@settings(max_examples=60, deadline=None)
@given(st.floats(-40, 40))
def test_odd_part_of_f_is_minus_tanh_half(z):
    with mpmath.workdps(30):
        assert abs(logistic(MP(z)) - logistic(-MP(z)) + mpmath.tanh(MP(z) / 2)) < MP(10) ** -25


def test_logistic_taylor_formulas_agree_with_mpmath():
    item = B.item_logistic_taylor()
    references = {
        "series": lambda p: mpmath.taylor(logistic, 0, 6) and sum(
            c * MP(R.rational(p["x"])) ** k for k, c in enumerate(mpmath.taylor(logistic, 0, 6))),
        "slope": lambda p: mpmath.diff(lambda z: logistic(z) - (MP(1) / 2 - z / 4), MP(R.rational(p["x"]).p) /
                                       R.rational(p["x"]).q),
        "sup_ratio": lambda p: (logistic(MP(10) ** -8) - (MP(1) / 2 - MP(10) ** -8 / 4)) / MP(10) ** -24,
        "max_slope_f": lambda p: -mpmath.diff(logistic, 0),
        "f_odd_part": lambda p: logistic(MP(R.rational(p["x"]).p) / R.rational(p["x"]).q) -
        logistic(-MP(R.rational(p["x"]).p) / R.rational(p["x"]).q),
    }
    for formula in item.formulas:
        name = formula.id.split(".")[3]
        with mpmath.workdps(R.DPS):
            R.assert_verdict_matches(formula, references[name], rel=MP(10) ** -7 if name == "sup_ratio" else None)


def test_logistic_taylor_failure_set_on_a_grid():
    grid = [MP(k) / 8 for k in range(-400, 401)] + [MP(10) ** (k / 10) * s for k in range(17, 31) for s in (1, -1)]
    with mpmath.workdps(30):
        for reading, rhs in (("as_printed", lambda z: z**3), ("abs", lambda z: abs(z) ** 3)):
            fails = [z for z in grid if abs(logistic(z) - (MP(1) / 2 - z / 4)) > rhs(z)]
            derived = B.failure_set(reading)
            assert all(sp.Float(str(z)) in derived for z in fails)
            assert all(sp.Float(str(z)) not in derived for z in grid if z not in fails)


def test_logistic_taylor_inequalities_agree_with_mpmath():
    item = B.item_logistic_taylor()
    for inequality in item.inequalities:
        margin = inequality.sample_margin(n_points=200)
        point = {k: MP(R.rational(v).p) / R.rational(v).q for k, v in margin.worst_point.items()}
        z, zp = point["x"], point.get("xprime")
        with mpmath.workdps(R.DPS):
            iid = inequality.id
            if ".eq2_taylor." in iid:
                rhs = z**3 if ".as_printed." in iid else abs(z) ** 3
                independent = rhs - abs(logistic(z) - (MP(1) / 2 - z / 4))
            elif iid.endswith("sharp_cubic"):
                independent = abs(z) ** 3 / 48 - abs(logistic(z) - (MP(1) / 2 - z / 4))
            else:
                scale = MP(1) / 4 if iid.endswith("sharp_lipschitz") else 1
                independent = scale * abs(z - zp) - abs(logistic(z) - logistic(zp))
        assert margin.holds == (independent >= 0), iid
        assert abs(independent - MP(margin.min_margin)) <= MP(10) ** -10 * max(1, abs(independent)), iid


def test_the_cubic_ratio_decreases_from_one_48th():
    ratio = sp.lambdify(x, (f(x) - (sp.Rational(1, 2) - x / 4)) / x**3, "mpmath")
    with mpmath.workdps(30):
        values = [ratio(MP(k) / 10) for k in range(1, 200)]
    assert all(a >= b for a, b in zip(values, values[1:])) and values[0] < MP(1) / 48


def test_gradient_norm_bound_sharp_constant_is_attained_in_the_limit():
    # u = (1, -1) on a length-2 sample with φ = (1/2, 1/2): (diag φ - φφ^⊤)u = u/2, so ‖·‖ = ‖u‖/2
    phi = [MP(1) / 2, MP(1) / 2]
    u = [MP(1), MP(-1)]
    T = sum(p * a for p, a in zip(phi, u))
    vec = [p * (a - T) for p, a in zip(phi, u)]
    assert mpmath.sqrt(sum(v**2 for v in vec)) == mpmath.sqrt(2) / 2
