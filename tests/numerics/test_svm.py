"""The high-precision hard-margin SVM (numerics.svm): hand-solved, exact brute force, ill-conditioned.

Exact references are computed here in rational arithmetic: the KKT system of an active set S is
linear (G_S ν = 1, u = Z_Sᵀν), so brute force over all independent subsets with Fractions gives
u* exactly (or proves infeasibility: no subset passes).
"""

import math
import warnings
from fractions import Fraction
from itertools import combinations

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, note, settings
from hypothesis import strategies as st
from scipy.optimize import minimize, nnls

from derivations.errors import InvalidArgument, NumericalTrouble
from numerics.svm import exact_hard_margin, hard_margin_svm, kkt_residuals, nearly_collinear_problem

TOL = mpmath.mpf(10) ** -50


# --------------------------------------------------------------------------- exact references


def _solve_exact(A: list[list[Fraction]], b: list[Fraction]) -> list[Fraction] | None:
    """Gauss–Jordan in Fractions; None if A is singular."""
    n = len(A)
    M = [row[:] + [b[i]] for i, row in enumerate(A)]
    for c in range(n):
        p = next((i for i in range(c, n) if M[i][c] != 0), None)
        if p is None:
            return None
        M[c], M[p] = M[p], M[c]
        for i in range(n):
            if i != c and M[i][c] != 0:
                f = M[i][c] / M[c][c]
                M[i] = [a - f * x for a, x in zip(M[i], M[c], strict=True)]
    return [M[i][n] / M[i][i] for i in range(n)]


def exact_svm(rows: list[list[Fraction]]) -> tuple[list[Fraction], list[Fraction]] | None:
    """(u*, ν) by brute force over all independent active sets in exact arithmetic; None if infeasible."""
    K, d = len(rows), len(rows[0])
    for size in range(1, min(d, K) + 1):
        for S in combinations(range(K), size):
            G = [[sum(a * b for a, b in zip(rows[i], rows[j], strict=True)) for j in S] for i in S]
            nu_s = _solve_exact(G, [Fraction(1)] * size)
            if nu_s is None or min(nu_s) < 0:
                continue
            u = [sum(n * rows[k][c] for n, k in zip(nu_s, S, strict=True)) for c in range(d)]
            if all(sum(a * b for a, b in zip(z, u, strict=True)) >= 1 for z in rows):
                nu = [Fraction(0)] * K
                for n, k in zip(nu_s, S, strict=True):
                    nu[k] = n
                return u, nu
    return None


def _fraction(x: mpmath.mpf) -> Fraction:
    sign, man, exp, _ = x._mpf_
    return (-1) ** sign * Fraction(man) * Fraction(2) ** exp


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def assert_close(got, exact, rel=mpmath.mpf(10) ** -50):
    """Every component of ``got`` within rel·‖exact‖ of ``exact``, evaluated at 120 digits."""
    with mpmath.workdps(120):
        scale = mpmath.sqrt(sum(_mp(x) ** 2 for x in exact))
        worst = max(abs(mpmath.mpf(g) - _mp(x)) for g, x in zip(got, exact, strict=True))
        assert worst <= rel * scale, f"off by {mpmath.nstr(worst / scale, 5)} relative"


def assert_certified(result):
    assert result.status == "certified", result.summary()
    assert result.residuals.within(result.tol), result.residuals.log10()
    assert max(result.residuals.log10().values()) <= -(result.dps - 10)


# --------------------------------------------------------------------------- float64 peers (what one writes)


def scipy_nnls_svm(Z: np.ndarray):
    """Lawson–Hanson LDP with scipy's NNLS: (u, support), u None if it finds 0 in the hull."""
    K, d = Z.shape
    E = np.vstack([Z.T, np.ones((1, K))])
    f = np.zeros(d + 1)
    f[-1] = 1.0
    w, _ = nnls(E, f)
    r = E @ w - f
    support = tuple(int(k) for k in np.flatnonzero(w > 0))
    return (None if r[-1] >= 0 else (Z.T @ w) / -r[-1]), support


def scipy_slsqp_svm(Z: np.ndarray):
    """min ½‖u‖² s.t. Zu ≥ 1 by SLSQP: (u, support from its multipliers)."""
    x0 = np.linalg.lstsq(Z, np.ones(len(Z)), rcond=None)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = minimize(lambda u: 0.5 * u @ u, x0, jac=lambda u: u, method="SLSQP",
                       constraints=[{"type": "ineq", "fun": lambda u: Z @ u - 1, "jac": lambda u: Z}],
                       options={"maxiter": 500, "ftol": 1e-15})
    mult = np.asarray(res.multipliers)
    return res.x, tuple(int(k) for k in np.flatnonzero(mult > 1e-12 * max(mult.max(), 1e-300)))


# --------------------------------------------------------------------------- hand-solved


def test_hand_solved_two_dimensional():
    """Rows z0 = (2, 0), z1 = (0, 1), z2 = (1, 1), z3 = (-1, 3).

    Min-norm point of the segment [z0, z1]: p(t) = (2 - 2t, t), d/dt ‖p‖² = -8 + 10t = 0 at t = 4/5,
    so p = (2/5, 4/5), ‖p‖² = 4/5 and u* = p/‖p‖² = (1/2, 1), ‖u*‖ = √5/2, margin 2/√5.
    z0·u* = z1·u* = 1 (tight); z2·u* = 3/2 and z3·u* = 5/2 (inactive). Multipliers from
    u* = ν0 z0 + ν1 z1: ν = (1/4, 1, 0, 0); Σν = 5/4 = ‖u*‖²; p* = Σνz/Σν = (2/5, 4/5). Since z2 and z3
    lie on the far side of the line z·u* = 1, p is also the min-norm point of the whole hull.
    """
    rows = [[2, 0], [0, 1], [1, 1], [-1, 3]]
    result = hard_margin_svm(rows)
    assert_certified(result)
    assert result.support == (0, 1) == result.active_set == result.tight
    assert_close(result.u, [Fraction(1, 2), Fraction(1)])
    assert_close(result.multipliers, [Fraction(1, 4), Fraction(1), Fraction(0), Fraction(0)])
    assert_close(result.dual_point, [Fraction(2, 5), Fraction(4, 5)])
    with mpmath.workdps(80):
        assert abs(result.norm - mpmath.sqrt(5) / 2) < TOL
        assert abs(result.margin - 2 / mpmath.sqrt(5)) < TOL
    assert result.float_guess_correct is True and result.float_support_correct is True
    assert [s.stage for s in result.path] == ["float64", "polish"]
    line = result.summary()
    assert line.startswith("certified") and "support [0, 1]" in line
    assert "float64 guess: support right" in line


def test_single_support_row():
    """z0 = (2, 1), z1 = (1, 4): on [z0, z1], p(t) = (2 - t, 1 + 3t) has d/dt ‖p‖² = 2 + 20t > 0 for t ≥ 0,
    so p* = z0, u* = z0/5 = (2/5, 1/5), ν = (1/5, 0), and z1·u* = 6/5 > 1."""
    result = hard_margin_svm(np.array([[2.0, 1.0], [1.0, 4.0]]))
    assert_certified(result)
    assert result.support == (0,)
    assert_close(result.u, [Fraction(2, 5), Fraction(1, 5)])


# -------------------------------------------------------------------- random problems vs exact brute force


@st.composite
def small_problems(draw):
    d = draw(st.integers(1, 3))
    K = draw(st.integers(1, 5))
    entry = st.one_of(st.integers(-4, 4), st.fractions(min_value=-3, max_value=3, max_denominator=7))
    rows = [[Fraction(draw(entry)) for _ in range(d)] for _ in range(K)]
    form = draw(st.sampled_from(["fraction", "float", "mpmath"]))
    if form == "float":  # float64 rows: the exact reference is the rows as rounded
        rows = [[Fraction(float(x)) for x in row] for row in rows]
        given_rows = np.array([[float(x) for x in row] for row in rows])
    elif form == "mpmath":  # 200-digit rows: the exact reference is their binary value
        with mpmath.workdps(200):
            given_rows = mpmath.matrix([[_mp(x) for x in row] for row in rows])
        rows = [[_fraction(given_rows[i, j]) for j in range(d)] for i in range(K)]
    else:
        given_rows = rows
    return rows, given_rows


@settings(max_examples=60, deadline=None)
@given(small_problems())
@example(([[Fraction(1), Fraction(0)], [Fraction(-1), Fraction(0)]],) * 2)  # 0 on a segment
@example(([[Fraction(1), Fraction(1)], [Fraction(1), Fraction(1)], [Fraction(2), Fraction(0)]],) * 2)  # twins
@example(([[Fraction(0), Fraction(0)]],) * 2)  # a zero row
def test_random_problems_agree_with_exact_brute_force(problem):
    rows, given_rows = problem
    exact = exact_svm(rows)
    result = hard_margin_svm(given_rows)
    note(result.summary())
    if exact is None:
        assert result.status == "infeasible"
        ev = result.infeasibility
        with mpmath.workdps(120):
            assert abs(mpmath.fsum(ev.weights) - 1) < TOL and ev.min_weight >= -TOL
            point = [mpmath.fsum(w * _mp(z[c]) for w, z in zip(ev.weights, rows, strict=True))
                     for c in range(len(rows[0]))]
            assert mpmath.norm(point) <= 10 * TOL * max(mpmath.norm([_mp(x) for x in z]) for z in rows)
        return
    u, _ = exact
    assert_certified(result)
    assert_close(result.u, u)
    # multipliers need not be unique (duplicated or dependent rows), u* is: the support must be tight exactly
    for k in result.support:
        assert sum(a * b for a, b in zip(rows[k], u, strict=True)) == 1
    with mpmath.workdps(120):
        exact_norm = mpmath.sqrt(sum(_mp(x) ** 2 for x in u))
        assert abs(result.norm - exact_norm) <= TOL * exact_norm


# --------------------------------------------------------------------------- ill-conditioned family


def _exact_kkt(problem):
    """The family's closed form checked in exact arithmetic, independently of the solver."""
    rows = [[Fraction(float(x)) for x in row] for row in problem.rows]
    for k, z in enumerate(rows):
        margin = sum(a * b for a, b in zip(z, problem.u, strict=True))
        assert (margin == 1) if k in problem.support else (margin > 1)
        assert (problem.multipliers[k] > 0) == (k in problem.support)
    combo = [sum(n * z[c] for n, z in zip(problem.multipliers, rows, strict=True))
             for c in range(len(problem.u))]
    assert combo == list(problem.u)
    return rows


@settings(max_examples=25, deadline=None)
@given(d=st.integers(2, 6), seed=st.integers(0, 10**6), eps_exp=st.sampled_from([30, 40, 50]),
       distractors=st.integers(0, 4), data=st.data())
@example(d=3, seed=0, eps_exp=50, distractors=2, data=None)
def test_nearly_collinear_family_is_solved_to_1e_50(d, seed, eps_exp, distractors, data):
    s = d if data is None else data.draw(st.integers(2, d), label="support_size")
    problem = nearly_collinear_problem(d, s, eps_exp=eps_exp, distractors=distractors, seed=seed)
    _exact_kkt(problem)
    result = hard_margin_svm(problem.rows)
    note(result.summary())
    assert_certified(result)
    assert result.support == problem.support
    assert_close(result.u, problem.u)
    assert_close(result.multipliers, problem.multipliers)
    with mpmath.workdps(80):
        assert abs(result.norm - mpmath.mpf(2) ** eps_exp) <= TOL * 2**eps_exp
    # rows within ~1e-12 (relative) of ±e_k: the near-collinearity the family promises
    Z = problem.rows / np.linalg.norm(problem.rows, axis=1, keepdims=True)
    assert np.all(np.abs(np.abs(Z @ Z[0]) - 1) < 1e-10)


def test_float64_scipy_gets_the_family_wrong_and_the_solver_gets_it_right():
    """At ‖u*‖ = 2^50 ≈ 1.1e15 with rows 1e-12 apart, scipy's NNLS and SLSQP miss the support or ‖u*‖."""
    wrong_nnls = wrong_slsqp = 0
    cases = [(d, seed) for d in (3, 4, 5) for seed in range(3)]
    for d, seed in cases:
        problem = nearly_collinear_problem(d, seed=seed, eps_exp=50, distractors=3)
        norm = 2.0**50
        u, support = scipy_nnls_svm(problem.rows)
        wrong_nnls += u is None or support != problem.support or abs(np.linalg.norm(u) - norm) > 1e-6 * norm
        x, support = scipy_slsqp_svm(problem.rows)
        wrong_slsqp += support != problem.support or abs(np.linalg.norm(x) - norm) > 1e-6 * norm
        result = hard_margin_svm(problem.rows)
        assert_certified(result)
        assert result.support == problem.support
        assert result.float_guess_correct is False  # and it says so
        assert "WRONG" in result.summary() or result.float_norm_rel_error > 1e-8
        if x is not None:  # the scipy answer fails the extended-precision certificate
            res = kkt_residuals(problem.rows, x, [0.0] * len(problem.rows))
            assert not res.within(TOL)
    assert wrong_nnls == len(cases)
    assert wrong_slsqp == len(cases)


def _rotate(rows, vector, d):
    """Pythagorean (3/5, 4/5) rotations in the planes (j, j+1): exact, and non-dyadic."""
    rows = [[Fraction(float(x)) for x in row] for row in rows]
    vector = list(vector)
    c, s = Fraction(3, 5), Fraction(4, 5)
    for j in range(d - 1):
        for v in [*rows, vector]:
            v[j], v[j + 1] = c * v[j] - s * v[j + 1], s * v[j] + c * v[j + 1]
    return rows, vector


@settings(max_examples=10, deadline=None)
@given(d=st.integers(2, 5), seed=st.integers(0, 1000), eps_exp=st.sampled_from([40, 50]))
def test_rotated_rational_family_needs_and_gets_more_digits(d, seed, eps_exp):
    """Rotated by rationals the rows are not dyadic: the residuals are roundoff, not exact zeros,
    and 80 digits do not reach 1e-50 at ‖u*‖ ~ 1e12–1e15; the working precision is raised."""
    problem = nearly_collinear_problem(d, seed=seed, eps_exp=eps_exp, distractors=2)
    rows, u = _rotate(problem.rows, problem.u, d)
    result = hard_margin_svm(rows)
    note(result.summary())
    assert_certified(result)
    assert result.support == problem.support
    assert_close(result.u, u)
    assert result.working_dps > 80
    assert max(result.residuals.log10().values()) > -math.inf


def test_row_scale_does_not_change_the_answer():
    """Exact rescaling by 2^±600: same support and u*/2^±600; the residuals are of the rescaled rows."""
    problem = nearly_collinear_problem(4, seed=3, distractors=3)
    base = hard_margin_svm(problem.rows)
    for e in (600, -600):
        scaled = hard_margin_svm(problem.rows * 2.0**e)
        assert_certified(scaled)
        assert scaled.support == base.support == problem.support
        assert scaled.row_scale_exponent == base.row_scale_exponent + e
        assert_close([mpmath.ldexp(x, e) for x in scaled.u], problem.u)


# --------------------------------------------------------------------------- warm start


def test_warm_start_gives_the_same_answer_without_search():
    problem = nearly_collinear_problem(5, seed=2, distractors=4)
    cold = hard_margin_svm(problem.rows)
    assert cold.subsets_tried > 0  # float64 missed: brute force was needed
    warm = hard_margin_svm(problem.rows, warm_start=cold.active_set)
    assert_certified(warm)
    assert warm.subsets_tried == 0
    assert [(s.stage, s.outcome) for s in warm.path[1:]] == [("warm polish", "certified")]
    assert warm.support == cold.support and warm.active_set == cold.active_set
    with mpmath.workdps(120):
        assert max(abs(a - b) for a, b in zip(warm.u, cold.u, strict=True)) <= TOL * cold.norm


def test_warm_start_along_checkpoints_and_from_a_wrong_set():
    """A run of checkpoints (the margin ε shrinking): each warm-started from the last active set."""
    previous = None
    for eps_exp in (20, 30, 40, 50):
        problem = nearly_collinear_problem(4, seed=5, eps_exp=eps_exp, distractors=3)
        cold = hard_margin_svm(problem.rows)
        warm = hard_margin_svm(problem.rows, warm_start=previous)
        assert warm.support == cold.support == problem.support
        assert_close(warm.u, problem.u)
        previous = warm.active_set
    wrong = tuple(k for k in range(len(problem.rows)) if k not in problem.support)[:2]
    result = hard_margin_svm(problem.rows, warm_start=wrong)
    assert result.support == problem.support
    assert (result.path[1].stage, result.path[1].outcome) == ("warm polish", "wrong")


# --------------------------------------------------------------------------- infeasible


@pytest.mark.parametrize("rows", [
    [[1, 0], [-1, 0], [0, 1]],                              # 0 on the segment [z0, z1]
    [[1, 2, 3], [-1, 1, 0], [0, -3, -3], [5, 5, 5]],        # 0 = (z0 + z1 + z2)/3
    [[Fraction(1, 3), Fraction(1, 7)], [Fraction(-2, 3), Fraction(-2, 7)]],
    [[0.0, 0.0]],
])
def test_infeasible_problems_are_detected_with_evidence(rows):
    result = hard_margin_svm(rows)
    assert result.status == "infeasible"
    assert result.u is None and result.residuals is None
    ev = result.infeasibility
    assert ev.min_weight >= -TOL and abs(mpmath.fsum(ev.weights) - 1) < TOL and ev.point_norm <= TOL
    assert result.summary().startswith("infeasible: 0 ∈ conv{z_k}")


def test_infeasible_found_when_float64_fails(monkeypatch):
    """With the float64 guess failing (simulated), brute force exhausts and the hull-point search finds 0."""
    import numerics.svm as svm

    def no_guess(rows):
        return svm.Float64Guess(None, None, None, None, math.nan, math.nan, math.nan, False, ("simulated",),
                                0.0)

    monkeypatch.setattr(svm, "_float_guess", no_guess)
    result = hard_margin_svm([[1, 2, 3], [-1, 1, 0], [0, -3, -3], [5, 5, 5]])
    assert result.status == "infeasible"
    assert [s.stage for s in result.path] == ["float64", "brute force", "hull points"]
    assert result.path[1].outcome == "exhausted after 14 subsets"  # C(4,1) + C(4,2) + C(4,3)
    assert result.float_guess_correct is False


def test_rows_beyond_float64_range():
    """Rows of size 1e400 are scaled by an exact power of two before float64 sees them."""
    big = mpmath.mpf("1e400")
    assert hard_margin_svm(mpmath.matrix([[big, 0], [-big, 0]])).status == "infeasible"
    feasible = hard_margin_svm(mpmath.matrix([[big, 0], [0, 2 * big]]))
    assert_certified(feasible)
    assert feasible.float_support_correct is True
    assert any("underflows float64 in the rows' units" in n for n in feasible.float_guess.notes)
    with mpmath.workdps(60):
        assert abs(feasible.norm * big - mpmath.sqrt(5) / 2) < TOL


def test_budget_exhaustion_is_reported_not_hidden():
    problem = nearly_collinear_problem(5, seed=2, distractors=4)
    with pytest.raises(NumericalTrouble, match=r"budget=0"):
        hard_margin_svm(problem.rows, budget=0)
    result = hard_margin_svm(problem.rows, budget=0, on_uncertified="return")
    assert result.status == "uncertified" and not result.residuals.within(result.tol)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("kwargs", "pattern"), [
    ({"rows": []}, r"rows is empty"),
    ({"rows": np.empty((0, 3))}, r"rows is empty"),
    ({"rows": [[]]}, r"rows\[0\] is empty"),
    ({"rows": [[1, 2], [3]]}, r"rows\[1\] has length 1 but rows\[0\] has length 2"),
    ({"rows": [[1, float("nan")]]}, r"rows\[0\]\[1\]=nan is not finite"),
    ({"rows": np.array([[1.0, np.inf]])}, r"rows\[0\]\[1\]=inf is not finite"),
    ({"rows": [[mpmath.inf, 1]]}, r"rows\[0\]\[0\]=\+inf is not finite"),
    ({"rows": [["a", 1]]}, r"rows\[0\]\[0\]='a' of type str is not a real number"),
    ({"rows": [[True, 1]]}, r"rows\[0\]\[0\]=True is a bool"),
    ({"rows": np.ones(3)}, r"rows has shape \(3,\)"),
    ({"rows": np.ones((2, 2), dtype=complex)}, r"complex"),
    ({"rows": 3.0}, r"rows=3.0 is not a K×d table"),
    ({"rows": [[1, 0]], "dps": 49}, r"dps=49 must be an integer ≥ 50"),
    ({"rows": [[1, 0]], "dps": 60.5}, r"dps=60.5"),
    ({"rows": [[1, 0]], "warm_start": [2]}, r"warm_start contains 2; .* \[0, 1\)"),
    ({"rows": [[1, 0]], "budget": -1}, r"budget=-1"),
    ({"rows": [[1, 0]], "max_working_dps": 70}, r"max_working_dps=70 must be an integer ≥ 80"),
    ({"rows": [[1, 0]], "on_uncertified": "ignore"}, r"on_uncertified='ignore'"),
])
def test_bad_input_is_refused_with_its_name(kwargs, pattern):
    with pytest.raises(InvalidArgument, match=pattern):
        hard_margin_svm(**kwargs)


def test_kkt_residuals_and_family_refuse_bad_input():
    with pytest.raises(InvalidArgument, match=r"u has length 1"):
        kkt_residuals([[1, 0]], [1.0], [1.0])
    with pytest.raises(InvalidArgument, match=r"multipliers has length 2"):
        kkt_residuals([[1, 0]], [1.0, 0.0], [1.0, 0.0])
    with pytest.raises(InvalidArgument, match=r"support_size=4 exceeds d=3"):
        nearly_collinear_problem(3, 4)
    exact = kkt_residuals([[2, 0], [0, 1]], [Fraction(1, 2), 1], [Fraction(1, 4), 1])
    assert exact.worst() == 0


# ---- exact_hard_margin (rationals, active-set enumeration) ---------------------------------------------


def test_exact_hard_margin_known_answers():
    one = exact_hard_margin([[2, 0]])  # u = (1/2, 0)
    assert one.u == [Fraction(1, 2), 0] and one.norm_squared == Fraction(1, 4) and one.support == (0,)
    groups = exact_hard_margin([[1, 1, 1], [-1, 0, -1], [0, -1, -1], [0, 0, -1]])
    assert groups.u == [2, 2, -3] and groups.multipliers == [7, 5, 5, 0] and groups.margins == [1, 1, 1, 3]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.integers(-4, 4), min_size=3, max_size=3), min_size=1, max_size=5))
def test_exact_hard_margin_is_optimal_and_agrees_with_the_certified_solver(rows):
    certified = hard_margin_svm(rows, dps=60)
    if certified.status != "certified":
        with pytest.raises(InvalidArgument, match="infeasible"):
            exact_hard_margin(rows)
        return
    exact = exact_hard_margin(rows)
    assert min(exact.margins) >= 1 and min(exact.multipliers) >= 0
    # KKT exactly: u = Σ ν_k z_k and complementary slackness
    assert exact.u == [sum(n * Fraction(z[j]) for n, z in zip(exact.multipliers, rows)) for j in range(3)]
    assert all(n == 0 or g == 1 for n, g in zip(exact.multipliers, exact.margins))
    with mpmath.workdps(60):
        for x, y in zip(exact.u, certified.u):
            assert abs(mpmath.mpf(x.numerator) / x.denominator - y) < mpmath.mpf(10) ** -30


def test_exact_hard_margin_refuses_large_problems():
    with pytest.raises(InvalidArgument, match="max_rows"):
        exact_hard_margin([[1, 0]] * 17)
