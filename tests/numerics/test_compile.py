"""Tests of numerics.compile and numerics.printer: SymPy → generated module → cached numba kernels.

Kernels are compared with mpmath (30 digits) evaluations of the same SymPy expressions; the
printer is pinned by golden strings; the on-disk cache is checked across two fresh processes.
"""

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import mpmath
import numba
import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given, note, settings
from hypothesis import strategies as st
from sympy.codegen.cfunctions import expm1

from derivations.errors import InvalidArgument
from numerics import stable
from numerics.compile import (
    LOOP_TERMS,
    EventSpec,
    Expm1Ratio,
    event_state,
    event_time,
    grid_kernel,
    kernel_source,
    scalar_kernel,
    scalar_source,
    vector_field,
)
from numerics.printer import NumbaPrinter

REPO = Path(__file__).resolve().parents[2]
RTOL = 1e-12

p, x, y, w = sp.symbols("p x y w", real=True)
L = sp.Symbol("L", integer=True, positive=True)
s = sp.Symbol("s", integer=True)

# ih.cf.M and ih.cf.m of the induction-head spec (§3, §8).
M_CLOSED = (1 - sp.exp(-p * (L - 2))) / (1 - sp.exp(-p))
M_STABLE = Expm1Ratio(L - 2, -p)
m_SUM = sp.Sum(s * sp.exp(-p * s), (s, 1, L - 3))
m_CLOSED = (sp.exp(-p) - (L - 2) * sp.exp(-p * (L - 2)) + (L - 3) * sp.exp(-p * (L - 1))) / (
    1 - sp.exp(-p)
) ** 2
PIECEWISE = sp.Piecewise((x * sp.exp(x), x < 0), (sp.log(1 + x**2), True))


def reference(expr, args, values, dps=30):
    """Mpmath evaluation of ``expr`` at ``values``: ``dps`` digits, doubled until two levels agree.

    The SymPy expression is evaluated as written (log(1 + x), not log1p), so at x = 1e-88 thirty
    digits give 0; the working precision is doubled until consecutive results agree to 25 digits
    (an exact zero is accepted only at the last level, ~1000 digits).
    """
    f = sp.lambdify(args, expr, modules="mpmath")
    previous = None
    while dps <= 1000:
        with mpmath.workdps(dps):
            converted = [int(v) if a.is_integer else mpmath.mpf(v) for a, v in zip(args, values, strict=True)]
            value = f(*converted)
        if previous is not None and value != 0 and abs(value - previous) <= 1e-25 * abs(value):
            return value
        previous, dps = value, 2 * dps
    return previous


def assert_close(got, want, rtol=RTOL):
    want = float(want)
    note(f"got={got!r} want={want!r}")
    assert math.isclose(got, want, rel_tol=rtol, abs_tol=1e-300), (got, want, abs(got - want) / abs(want))


# --- kernels under test (module scope: each compiles once, or loads from numba's cache) -----------


@pytest.fixture(scope="module")
def kernels():
    return {
        "M": scalar_kernel(M_CLOSED, [p, L], name="t_M", stable={M_CLOSED: M_STABLE}),
        "m": scalar_kernel(m_CLOSED, [p, L], name="t_m", stable={m_CLOSED: m_SUM}),
        "m_naive": scalar_kernel(m_CLOSED, [p, L], name="t_m_naive"),
        "lemma7": scalar_kernel((1 - 4 * w**4) ** sp.Rational(-1, 2), [w], name="t_inv_sqrt"),
        "piecewise": scalar_kernel(PIECEWISE, [x], name="t_piecewise"),
        "log1p": scalar_kernel(sp.log(1 + x), [x], name="t_log1p"),
        "expm1": scalar_kernel(sp.exp(x) - 1, [x], name="t_expm1"),
        "logaddexp": scalar_kernel(sp.log(sp.exp(x) + sp.exp(y)), [x, y], name="t_logaddexp"),
    }


small_or_moderate = st.one_of(
    st.floats(1e-6, 30.0), st.floats(-2.0, -1e-6), st.sampled_from([1e-6, 1e-3, -1e-6, 0.5, 2.0])
)


# --- golden strings --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "printed"),
    [
        (x**2 + 1 / x**3, "(x*x) + (1/(x*x*x))"),
        ((1 - 4 * w**4) ** sp.Rational(-1, 2), "1/math.sqrt(1 - 4*(w*w*w*w))"),
        (x**-0.5, "x**(-0.5)"),
        (sp.Piecewise((x, x < 0), (x**2, True)), "((x) if (x < 0) else ((x*x)))"),
        (sp.sign(x) * sp.Max(x, y) + sp.Abs(y) + sp.Min(x, 1), "abs(y) + sign(x)*max(x, y) + min(1, x)"),
        (sp.Rational(1, 3) * x + sp.Float("0.1") * y, "(1/3)*x + 0.1*y"),
        (expm1(x) / Expm1Ratio(L, -p), "math.expm1(x)/expm1_ratio(L, -p)"),
        (sp.Rational(2**60, 3), "3.843071682022823e+17"),
    ],
)
def test_printer_golden(expr, printed):
    assert NumbaPrinter().doprint(expr) == printed


def function_text(source, name):
    return source[source.index(f"def {name}(") :].split("\n\n\n")[0].rstrip("\n")


def test_generated_source_golden():
    src = scalar_source(
        [sp.exp(x) - 1, sp.log(1 + x), sp.log(sp.exp(x) + sp.exp(y)), M_CLOSED], [x, y, p, L],
        name="g", stable={M_CLOSED: M_STABLE},
    )  # fmt: skip
    assert function_text(src, "g") == textwrap.dedent(
        """\
        def g(x, y_, p, L):
            L = float(L)
            return (math.expm1(x), math.log1p(x), logaddexp(x, y_), expm1_ratio(L - 2, -p))"""
    )
    assert "# scalar kernel g(x: float64, y: float64, p: float64, L: int64)" in src
    assert "#   (1 - exp(-p*(L - 2)))/(1 - exp(-p))  ->  Expm1Ratio(L - 2, -p)" in src


def test_sum_is_a_loop_and_cse_is_shared():
    twice = sp.exp(p) * m_SUM + sp.exp(p) / m_SUM
    src = scalar_source(twice, [p, L], name="g")
    assert src.count("def _sum") == 1  # one helper for the repeated sum, called once after cse
    # a geometric sum: in closed form beyond LOOP_TERMS terms (weight k: S_1 of numerics.geometric_sums),
    # else one exp for the ratio, then a product per term, walking down the terms
    assert f"    if _stop - _start > {LOOP_TERMS}:" in src and "_a1 * geometric_moment1(_gamma0, _n)" in src
    assert "    for _i in range(_first, _last, _step):" in src
    assert "        _acc0 += (_k0) * _factor0\n        _factor0 *= _ratio0" in src
    assert function_text(src, "g") == textwrap.dedent(
        """\
        def g(p, L):
            L = float(L)
            _x0 = math.exp(p)
            _x1 = _sum0(L, p)
            return _x0*_x1 + _x0/_x1"""
    )


def test_source_is_deterministic():
    def build():
        return scalar_source([m_CLOSED, sp.diff(m_CLOSED, p), m_SUM], [p, L], name="g")

    assert build() == build()


# --- scalar kernels against mpmath ------------------------------------------------------------------


@given(p_=small_or_moderate, L_=st.integers(3, 300))
@example(p_=1e-6, L_=300)
@example(p_=30.0, L_=3)
def test_M_stable_form_matches_closed_form(kernels, p_, L_):
    assert_close(kernels["M"](p_, L_), reference(M_CLOSED, [p, L], [p_, L_]))


@pytest.mark.parametrize("L_", [3, 4, 10, 1000])
def test_M_limit_at_zero(kernels, L_):
    assert kernels["M"](0.0, L_) == L_ - 2


@given(p_=small_or_moderate, L_=st.integers(3, 200))
@example(p_=1e-6, L_=200)
def test_m_direct_sum_matches_definition(kernels, p_, L_):
    assert_close(kernels["m"](p_, L_), reference(m_SUM, [p, L], [p_, L_]))


def test_m_closed_form_cancels_and_direct_sum_does_not(kernels):
    # Spec §8: the closed form of ih.cf.m loses ~2·log10(1/p) digits; the stable form keeps them all.
    p_, L_ = 1e-5, 50
    exact = float(reference(m_CLOSED, [p, L], [p_, L_], dps=60))
    assert math.isclose(kernels["m"](p_, L_), exact, rel_tol=1e-14)
    assert abs(kernels["m_naive"](p_, L_) - exact) / exact > 1e-9
    assert kernels["m"](0.0, L_) == (L_ - 2) * (L_ - 3) / 2


@given(w_=st.floats(-0.69, 0.69))
def test_inverse_sqrt(kernels, w_):
    assert_close(kernels["lemma7"](w_), reference((1 - 4 * w**4) ** sp.Rational(-1, 2), [w], [w_]))


@given(x_=st.floats(-50.0, 50.0))
@example(x_=0.0)
@example(x_=-1e-300)
def test_piecewise_with_default(kernels, x_):
    assert_close(kernels["piecewise"](x_), reference(PIECEWISE, [x], [x_]))


tiny = st.floats(1e-300, 1e-4) | st.floats(-1e-4, -1e-300)


@given(x_=st.floats(-0.9, 10.0) | tiny)
@example(x_=1e-12)
def test_log1p_rewrite(kernels, x_):
    assert_close(kernels["log1p"](x_), reference(sp.log(1 + x), [x], [x_]))


@given(x_=st.floats(-30.0, 30.0) | tiny)
@example(x_=1e-12)
def test_expm1_rewrite(kernels, x_):
    assert_close(kernels["expm1"](x_), reference(sp.exp(x) - 1, [x], [x_]))


def test_rewrites_beat_the_naive_formula(kernels):
    x_ = 1e-12
    for key, naive, expr in [
        ("log1p", math.log(1 + x_), sp.log(1 + x)),
        ("expm1", math.exp(x_) - 1, sp.exp(x) - 1),
    ]:
        exact = float(reference(expr, [x], [x_]))
        assert abs(kernels[key](x_) - exact) / exact < 1e-15
        assert abs(naive - exact) / exact > 1e-5
        assert f"math.{key}(x)" in kernel_source(kernels[key])


@given(x_=st.floats(-800.0, 800.0), y_=st.floats(-800.0, 800.0))
def test_logaddexp_rewrite(kernels, x_, y_):
    assert_close(kernels["logaddexp"](x_, y_), reference(sp.log(sp.exp(x) + sp.exp(y)), [x, y], [x_, y_]))


LO, HI = sp.symbols("lo hi", integer=True)
SUM_PRODUCT = [sp.Sum(x * s**2 + 1, (s, LO, HI)), sp.Product(1 + x / (s**2 + 1), (s, LO, HI))]


@pytest.fixture(scope="module")
def sum_product():
    return scalar_kernel(SUM_PRODUCT, [x, LO, HI], name="t_sum_product")


@given(a=st.integers(-6, 12), b=st.integers(-6, 12), x_=st.floats(0.0, 1.5))
@example(a=5, b=2, x_=0.5)  # reversed: Karr's convention gives minus the sum over 3..4
def test_sum_and_product_follow_sympy_including_reversed_ranges(sum_product, a, b, x_):
    for got, expr in zip(sum_product(x_, a, b), SUM_PRODUCT, strict=True):
        want = expr.subs({LO: a, HI: b}).doit().subs(x, sp.Float(x_, 30))
        assert_close(got, sp.N(want, 30), rtol=1e-13)


def test_integer_arguments_are_int64_and_kernels_do_not_raise(kernels):
    assert [str(t) for t in kernels["M"].signatures[0]] == ["float64", "int64"]
    k = scalar_kernel([1 / x, sp.log(x), sp.sqrt(x)], [x], name="t_no_raise")
    assert k(0.0) == (math.inf, -math.inf, 0.0)
    assert all(math.isnan(v) for v in k(-1.0)[1:])
    assert math.isnan(kernels["m"](math.nan, 10))  # NaN bound value: NaN, not an endless loop


def test_several_outputs_share_cse():
    k = scalar_kernel([sp.exp(x) * y, sp.exp(x) / y], [x, y], name="t_tuple")
    assert k(1.0, 2.0) == (math.e * 2.0, math.e / 2.0)
    assert "_x0 = math.exp(x)" in kernel_source(k)


# --- grid kernels ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def grid_M():
    return grid_kernel(M_CLOSED + m_SUM, [p, L], name="t_grid_M", stable={M_CLOSED: M_STABLE})


def test_grid_equals_scalar_and_is_thread_independent(grid_M):
    rng = np.random.default_rng(7)
    ps = np.concatenate([rng.uniform(-1, 5, 2000), [0.0, 1e-12, -1e-12]])
    Ls = rng.integers(3, 60, ps.size)
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs NUMBA_NUM_THREADS >= 2")
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = grid_M(ps, Ls)
        numba.set_num_threads(2)
        two = grid_M(ps, Ls)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(one, two)
    scalar = np.array([grid_M.scalar(a, b) for a, b in zip(ps, Ls, strict=True)])
    assert np.array_equal(one, scalar)


def test_grid_broadcasts_and_validates(grid_M):
    out = grid_M(np.array([[0.1], [0.2]]), np.array([5, 6, 7]))
    assert out.shape == (2, 3)
    assert out[1, 2] == grid_M.scalar(0.2, 7)
    assert grid_M(0.3, 10.0).shape == ()
    with pytest.raises(InvalidArgument, match=r"L=10\.5 is not an integer"):
        grid_M(0.3, [10.5])
    with pytest.raises(InvalidArgument, match="do not broadcast"):
        grid_M(np.zeros(3), np.zeros(4, dtype=int) + 5)
    with pytest.raises(InvalidArgument, match="complex"):
        grid_M(np.zeros(3) + 1j, 5)
    with pytest.raises(InvalidArgument, match="takes 2 values"):
        grid_M(0.1)


# --- refusals -------------------------------------------------------------------------------------------


def test_piecewise_without_default_is_refused():
    with pytest.raises(InvalidArgument, match=r"Piecewise without a default branch.*Piecewise\(\(x, x < 0\)"):
        scalar_source(sp.Piecewise((x, x < 0), (x**2, x > 1)), [x], name="g")


@pytest.mark.parametrize(
    ("expr", "named"),
    [
        (sp.besselj(0, x), r"function besselj \(in besselj\(0, x\)\)"),
        (sp.factorial(x), "function factorial"),
        (sp.Function("f")(x) + 1, r"undefined function f \(in f\(x\)\)"),
        (sp.Integral(x * y, (y, 0, 1)) + x, "Integral"),
        (sp.I * x, "complex numbers are not supported"),
    ],
)
def test_unsupported_functions_are_named(expr, named):
    with pytest.raises(InvalidArgument, match=named):
        scalar_source(expr, [x], name="g")


def test_bad_arguments_are_refused():
    with pytest.raises(InvalidArgument, match="symbols not among the arguments: y"):
        scalar_source(x + y, [x], name="g")
    with pytest.raises(InvalidArgument, match="matches no sub-expression"):
        scalar_source(x + 1, [x], name="g", stable={sp.exp(x) - 1: expm1(x)})
    with pytest.raises(InvalidArgument, match="name='1bad'"):
        scalar_source(x, [x], name="1bad")
    with pytest.raises(InvalidArgument, match="more than once"):
        scalar_source(x, [x, x], name="g")


def test_stable_form_inside_a_product_is_found():
    src = scalar_source(y * M_CLOSED, [p, L, y], name="g", stable={M_CLOSED: M_STABLE})
    assert "expm1_ratio(L - 2, -p)" in src


def test_reserved_and_unicode_names_become_identifiers():
    sig, wstar, out = (
        sp.Symbol("\N{GREEK SMALL LETTER SIGMA}"),
        sp.Symbol("w^\N{STAR OPERATOR}"),
        sp.Symbol("out"),
    )
    k = scalar_kernel(sig * wstar + out, [sig, wstar, out], name="t_names")
    assert k(2.0, 3.0, 1.0) == 7.0
    assert "def t_names(sigma, w__, out_):" in kernel_source(k)


# --- vector fields and events ----------------------------------------------------------------------------

h, ws, a, t = sp.symbols("h w_s alpha t", real=True)
RHS = [
    a * sp.exp(-t) - w * h + m_SUM.subs(p, w) / L,
    h * (ws - w) ** 2 + sp.log(1 + w**2),
]
EVENTS = [
    EventSpec("hit", w - 0.5, direction=1),
    EventSpec("later", h - 2 * event_state("hit", h) + (t - event_time("hit")) * ws, terminal=True),
    EventSpec("both", event_state("later", w) - event_state("hit", w) + w),
]


@pytest.fixture(scope="module")
def field():
    return vector_field(RHS, [w, h], [ws, a, L], name="t_field", events=EVENTS, time=t)


@given(
    t_=st.floats(0, 10), w_=st.floats(-2, 2), h_=st.floats(-2, 2), ws_=st.floats(-1, 1),
    a_=st.floats(-1, 1), L_=st.integers(3, 40),
)  # fmt: skip
def test_rhs_matches_mpmath_lambdify(field, t_, w_, h_, ws_, a_, L_):
    out = np.empty(2)
    field.rhs(t_, np.array([w_, h_]), np.array([ws_, a_, float(L_)]), out)
    for got, expr in zip(out, RHS, strict=True):
        want = reference(expr, [t, w, h, ws, a, L], [t_, w_, h_, ws_, a_, L_])
        assert math.isclose(got, float(want), rel_tol=1e-12, abs_tol=1e-14)


def test_events_use_event_arrays_and_nan_before_firing(field):
    assert field.event_names == ("hit", "later", "both")
    assert field.event_directions == (1, 0, 0)
    assert field.terminal == (False, True, False)
    assert field.n_state == 2
    assert field.state_names == ("w", "h")
    src = kernel_source(field)
    assert "event_states[0, 1]" in src and "event_times[0]" in src
    assert "if math.isnan(event_times[0]) or math.isnan(event_times[1]):" in src

    y_, params = np.array([0.3, 1.25]), np.array([0.7, 0.1, 10.0])
    times, states, out = np.full(3, np.nan), np.full((3, 2), np.nan), np.empty(3)
    field.events(2.0, y_, params, times, states, out)
    assert out[0] == 0.3 - 0.5
    assert np.isnan(out[1]) and np.isnan(out[2])

    times[0], states[0] = 1.5, [0.5, 0.25]  # "hit" fired at t = 1.5 in state (0.5, 0.25)
    field.events(2.0, y_, params, times, states, out)
    assert out[1] == 1.25 - 2 * 0.25 + (2.0 - 1.5) * 0.7
    assert np.isnan(out[2])  # "both" still waits for "later"

    times[1], states[1] = 1.8, [0.9, 0.0]
    field.events(2.0, y_, params, times, states, out)
    assert out[2] == 0.9 - 0.5 + 0.3


def test_field_drives_the_integrator_with_relative_events():
    from numerics.ode import Tolerance, VectorField, integrate

    u, v, rate = sp.symbols("u v rate", real=True)
    events = [
        EventSpec("hit", u - 1, direction=1),  # u = t: fires at t = 1, where v = 2
        EventSpec("later", v - event_state("hit", v) - 1, direction=1),  # v = 3 at t = 1.5
        EventSpec("after", t - event_time("hit") - 0.75, direction=1, terminal=True),  # t = 1.75
    ]
    vf = vector_field([sp.Integer(1), rate], [u, v], [rate], name="t_ode", events=events, time=t)
    assert isinstance(vf, VectorField)
    sol = integrate(vf, [0.0, 0.0], (0.0, 3.0), [2.0], tol=Tolerance(rtol=1e-10, atol=1e-12))
    assert math.isclose(sol.event_times["hit"], 1.0, rel_tol=1e-10)
    assert math.isclose(sol.event_times["later"], 1.5, rel_tol=1e-10)
    assert np.allclose(sol.event_states["later"], [1.5, 3.0], rtol=1e-10)
    assert math.isclose(sol.event_times["after"], 1.75, rel_tol=1e-10)
    assert sol.status == "terminated by event after"


def test_event_errors():
    with pytest.raises(InvalidArgument, match="unknown event 'hti'; did you mean hit"):
        vector_field([w], [w], [], name="g", events=[EventSpec("hit", w), EventSpec("b", event_time("hti"))])
    with pytest.raises(InvalidArgument, match="refers to its own firing"):
        vector_field([w], [w], [], name="g", events=[EventSpec("hit", w - event_state("hit", w))])
    with pytest.raises(InvalidArgument, match="only events may"):
        vector_field([event_time("a")], [w], [], name="g", events=[EventSpec("a", w)])
    with pytest.raises(InvalidArgument, match="pass time="):
        vector_field([t * w], [w], [], name="g")
    with pytest.raises(InvalidArgument, match="direction=2"):
        EventSpec("a", w, direction=2)


# --- the on-disk cache across processes ----------------------------------------------------------------

WARM_SCRIPT = """
import json, time
t0 = time.perf_counter()
import sympy as sp
from numerics.compile import Expm1Ratio, scalar_kernel, kernel_source
t1 = time.perf_counter()
p = sp.Symbol("p", real=True); L = sp.Symbol("L", integer=True, positive=True)
s = sp.Dummy("s", integer=True)
M = (1 - sp.exp(-p*(L - 2))) / (1 - sp.exp(-p))
m = sp.Sum(s*sp.exp(-p*s), (s, 1, L - 3))
k = scalar_kernel([M, m, sp.log(1 + p)], [p, L], name="warm", stable={M: Expm1Ratio(L - 2, -p)})
t2 = time.perf_counter()
print(json.dumps({
    "import_s": t1 - t0, "build_s": t2 - t1, "value": k(0.3, 12), "module": k.py_func.__module__,
    "hits": sum(k.stats.cache_hits.values()), "misses": sum(k.stats.cache_misses.values()),
}))
"""


def test_second_process_loads_from_numba_cache(tmp_path):
    env = {
        **os.environ,
        "TDCHECK_CACHE_DIR": str(tmp_path / "tdcheck"),
        "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    runs = []
    for seed in ("1", "2"):  # different hash seeds: the source must not depend on set order
        done = subprocess.run(
            [sys.executable, "-c", WARM_SCRIPT], env={**env, "PYTHONHASHSEED": seed},
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    print(f"cold build {cold['build_s']:.2f} s, warm build {warm['build_s']:.2f} s")
    assert cold["module"] == warm["module"]
    assert (cold["hits"], cold["misses"]) == (0, 1)
    assert (warm["hits"], warm["misses"]) == (1, 0)
    assert warm["value"] == cold["value"]
    assert warm["build_s"] < cold["build_s"]


# --- numerics.stable ---------------------------------------------------------------------------------


def test_stable_helpers():
    a = np.array([1000.0, 1000.0, -np.inf])
    assert stable.logsumexp(a) == 1000.0 + math.log(2.0)
    assert stable.logsumexp(np.full(2, -np.inf)) == -math.inf
    out = stable.softmax(a, np.empty(3))
    assert np.allclose(out, [0.5, 0.5, 0.0])
    assert stable.expm1_ratio(7.0, 0.0) == 7.0
    assert math.isclose(stable.expm1_ratio(2.0, 600.0), math.exp(600.0), rel_tol=1e-15)  # expm1(1200) = inf
    assert math.isclose(stable.expm1_ratio(-2.0, 600.0), -math.exp(-600.0), rel_tol=1e-14)
    assert math.isclose(stable.expm1_ratio(0.5, 1e-300), 0.5)
    assert stable.logaddexp(1000.0, 1000.0) == 1000.0 + math.log(2.0)
    assert math.isnan(stable.sign(math.nan)) and stable.sign(-0.0) == 0.0 and stable.sign(-3.0) == -1.0


@given(
    slope=st.floats(-40, 40, allow_nan=False),
    lo=st.integers(-5, 30),
    count=st.integers(-3, 400),
    shift=st.floats(-50, 50),
)
@settings(max_examples=60)
def test_geometric_sums_match_mpmath_at_any_slope_and_range(slope, lo, count, shift):
    """Σ_{k=lo}^{hi} (k² + 1) e^{a k + b} by the product recurrence equals the 50-digit sum, also for
    reversed ranges (Karr) and when the first terms underflow (a L ≫ 700)."""
    a, b, k, lo_s, hi_s = sp.symbols("a b k lo hi", real=True)
    expr = sp.Sum((k**2 + 1) * sp.exp(a * k + b), (k, lo_s, hi_s))
    fn = scalar_kernel(expr, [a, b, lo_s, hi_s], name="geometric_test")
    hi = lo + count
    with mpmath.workdps(50):
        if hi >= lo:
            exact = mpmath.fsum((j * j + 1) * mpmath.exp(slope * j + shift) for j in range(lo, hi + 1))
        elif hi == lo - 1:
            exact = mpmath.mpf(0)
        else:
            exact = -mpmath.fsum((j * j + 1) * mpmath.exp(slope * j + shift) for j in range(hi + 1, lo))
    got = fn(slope, shift, float(lo), float(hi))
    if abs(exact) > 1e300:
        assert not math.isfinite(got) or abs(got) > 1e300
    else:
        assert got == pytest.approx(float(exact), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("L_val", [300.0, 10.0**6])
@pytest.mark.parametrize("p_val", [0.37, 3.6838957303380635])
def test_geometric_sum_with_an_offset_exponent_keeps_full_precision(p_val, L_val):
    """Σ_{s=2}^{L−1} e^{−p(L−1−s)}: the term at the loop's first index must not be e^{p·s − p(L−1)}
    evaluated as a difference of two large numbers (at L = 10⁶ that cost 10⁻⁹ of relative accuracy)."""
    s_, L = sp.symbols("s_idx L", integer=True)
    total = sp.Sum(sp.exp(-p * (L - 1 - s_)), (s_, 2, L - 1))
    fn = scalar_kernel(total, [p, L], name="offset_geometric")
    with mpmath.workdps(40):
        r = mpmath.exp(-mpmath.mpf(p_val))
        exact = (1 - r ** (mpmath.mpf(L_val) - 2)) / (1 - r)
    assert fn(p_val, L_val) == pytest.approx(float(exact), rel=1e-14)


@given(p_val=st.floats(-1, 30), n=st.integers(1, 100), x_val=st.floats(-20, 5))
@settings(max_examples=25)
def test_fused_geometric_sums_and_shared_exponentials_keep_their_values(p_val, n, x_val):
    """M(p), m(p), M(2p) in one fused loop, and exp(x), exp(2x), exp(-3x) from one exp, equal the 50-digit values.

    (p ≥ -1 and n ≤ 100 keep the product m·M(2p) below overflow: that is the expression's order of
    evaluation, not the loop's.)"""
    k, x, N = sp.symbols("k x N", real=True)
    M1 = sp.Sum(sp.exp(-p * k), (k, 0, N - 1))
    m1 = sp.Sum(k * sp.exp(-p * k), (k, 0, N - 1))
    M2 = sp.Sum(sp.exp(-2 * p * k), (k, 0, N - 1))
    expr = m1 * M2 / M1**2 + sp.exp(x) + sp.exp(2 * x) * sp.exp(-3 * x) ** 0 + sp.exp(-3 * x)
    src = scalar_source(expr, [p, N, x], name="fused_src")
    assert src.count("def _fsum") == 1 and src.count("def _sum") == 0
    assert src.count("math.exp(x)") + src.count("math.exp(-x)") <= 1
    fn = scalar_kernel(expr, [p, N, x], name="fused_test")
    with mpmath.workdps(50):
        S = lambda f: mpmath.fsum(f(j) for j in range(n))  # noqa: E731
        pm = mpmath.mpf(p_val)
        exact = (S(lambda j: j * mpmath.exp(-pm * j)) * S(lambda j: mpmath.exp(-2 * pm * j))
                 / S(lambda j: mpmath.exp(-pm * j)) ** 2 + mpmath.exp(x_val) + mpmath.exp(2 * x_val)
                 + mpmath.exp(-3 * x_val))
    got = fn(p_val, float(n), x_val)
    if abs(exact) > 1e300:
        assert not math.isfinite(got) or got > 1e300
    else:
        assert got == pytest.approx(float(exact), rel=1e-11)


def test_generated_jacobian_is_the_exact_derivative():
    """vector_field(jacobian=True): ∂f_i/∂y_j of a field with a geometric sum, against SymPy's derivative
    evaluated at 30 digits (independent of the generated code) at random states."""
    p_, g_, L_ = sp.symbols("p g L", real=True)
    s_ = sp.Symbol("s", integer=True)
    M = sp.Sum(sp.exp(-p_ * s_), (s_, 0, L_ - 3))
    m = sp.Sum(s_ * sp.exp(-p_ * s_), (s_, 0, L_ - 3))
    rhs = [g_**2 * m / M**2 - g_ / M, 1 / M - g_ * sp.exp(-2 * p_) / M]
    field = vector_field(rhs, [p_, g_], [L_], name="test_jacobian_field", jacobian=True)
    rng = np.random.default_rng(5)
    for _ in range(5):
        y = np.array([rng.uniform(0.01, 3.0), rng.uniform(-1.0, 1.0)])
        L = float(rng.integers(4, 60))
        J = np.zeros((2, 2))
        field.jac(0.0, y, np.array([L]), J)
        for i, f in enumerate(rhs):
            for j, var in enumerate((p_, g_)):
                exact = sp.diff(f, var).subs({L_: int(L)}).doit().subs({p_: y[0], g_: y[1]})
                assert J[i, j] == pytest.approx(float(sp.N(exact, 30)), rel=1e-12, abs=1e-14)


def test_stiff_batch_with_the_jacobian_is_bit_identical_across_threads():
    """Rodas4P with the generated Jacobian on the Stage-II sweep: the same final states at 1 and 2 threads,
    and within a few tolerance units of Dormand–Prince."""
    from numerics.models.induction_head.stage2 import stage2_flow
    from numerics.ode import Tolerance, integrate_batch

    field = stage2_flow("paper")
    rng = np.random.default_rng(16)
    n = 8
    sigma = 10.0 ** rng.uniform(-4, -2, n)
    y0s = np.column_stack([sigma, sigma, sigma, np.log(sigma)])
    params = np.column_stack([rng.choice([40.0, 100.0, 400.0], n), rng.choice([0.5, 1.0, 4.0], n),
                              rng.uniform(0.2, 0.6, n), np.zeros(n)])
    tol = Tolerance(1e-8, 1e-11)
    previous = numba.get_num_threads()
    finals = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            finals.append(integrate_batch(field, y0s, params, (0.0, 100.0), tol=tol, method="rodas4p").y_final)
    finally:
        numba.set_num_threads(previous)
    assert np.array_equal(finals[0], finals[1])
    explicit = integrate_batch(field, y0s, params, (0.0, 100.0), tol=tol).y_final
    gap = np.abs(finals[0] - explicit) / (1e-11 + 1e-8 * np.abs(explicit))
    assert np.max(gap) < 100, np.max(gap)


@settings(max_examples=25, deadline=None)
@given(st.floats(-7, 1.5), st.sampled_from([4, 40, 129, 130, 400, 4000]))
def test_closed_form_sums_match_30_digits(log10_p, L):
    """Σ_{s=0}^{L-3} (1, s, s²)·e^{−ps} as generated against mpmath at 30 digits: beyond 128 terms (closed
    form) within 16 ulp of the value, at any length; up to 128 terms (a loop) within 2n ulp, the bound
    of recursive summation."""
    p_, L_ = sp.symbols("p L", real=True)
    s_ = sp.Symbol("s", integer=True)
    sums = [sp.Sum(s_**j * sp.exp(-p_ * s_), (s_, 0, L_ - 3)) for j in (0, 1, 2)]
    field = vector_field(sums, [p_, sp.Symbol("q"), sp.Symbol("r")], [L_], name="test_closed_sums")
    p = 10.0**log10_p
    out = np.zeros(3)
    field.rhs(0.0, np.array([p, 0.0, 0.0]), np.array([float(L)]), out)
    with mpmath.workdps(30):
        for j, value in enumerate(out):
            exact = mpmath.nsum(lambda k, j=j: k**j * mpmath.exp(-mpmath.mpf(p) * k), [0, L - 3])
            ulps = 16 if L - 2 > 128 else 2 * (L - 2)
            assert abs(value - float(exact)) <= ulps * np.spacing(float(exact)), (j, p, L, value, exact)
