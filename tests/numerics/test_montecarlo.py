"""Tests of numerics.montecarlo: known means, interval coverage, determinism, the heavy-tail guard."""

import itertools
import math

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import prange
from scipy import stats

from derivations.errors import InvalidArgument, NumericalTrouble
from numerics._jit import jit, parallel_jit
from numerics.montecarlo import ChunkStats, Enumeration, Estimate, MonteCarlo, combine

# --- samplers and kernels (top level, so numba can cache them) ---------------------------------


def gaussian(rng, size):
    return rng.standard_normal(size)


def gaussian3(rng, size):
    return rng.standard_normal(size), rng.standard_normal(size), rng.standard_normal(size)


def uniform(rng, size):
    return rng.random(size)


@jit
def square(x, params):
    return x * x


@jit
def exp_ax(x, params):
    return np.exp(params[0] * x)


@jit
def below(u, params):
    return (u < params[0]).astype(np.float64)


@jit
def pareto_like(u, params):
    # E = 10 but E[f**2] = inf: the second moment of u**-0.9 diverges at 0.
    return u ** -0.9


@parallel_jit
def exp_axy_z2(x, y, z, params):
    out = np.empty(x.size)
    for i in prange(x.size):
        out[i] = math.exp(params[0] * x[i] * y[i]) * z[i] * z[i]
    return out


@jit
def log_x(x, params):
    return np.log(x)


@jit
def product_of_pair(x, params):
    return x[:, 0] * x[:, 1]


@jit
def fourth_power_of_sum(x, params):
    s = x.sum(axis=1)
    return s**4


@jit
def first_coordinate(x, params):
    return x[:, 0].copy()


def exp_axy_second_moment(params):
    """E[e^{2aXY} Z^4] = 3 / sqrt(1 - 4a^2): finite iff 4 a^2 < 1."""
    (a,) = params
    return 4 * a**2 < 1, f"4*a**2 < 1 violated at a={a}"


def rademacher_cube(d):
    return np.array(list(itertools.product([-1.0, 1.0], repeat=d)))


# --- Estimate -------------------------------------------------------------------------------


def test_estimate_helpers():
    est = Estimate(mean=1.0, se=0.1, n=100, method="monte-carlo")
    assert est.agrees_with(1.39) and not est.agrees_with(1.41)
    assert est.interval(2.0) == pytest.approx((0.8, 1.2))
    assert est.to_dict()["se"] == 0.1
    exact = Estimate(mean=0.25, se=0.0, n=4, method="enumeration")
    assert exact.agrees_with(0.25) and not exact.agrees_with(0.2500001)


# --- known means ----------------------------------------------------------------------------


def test_gaussian_second_moment():
    est = MonteCarlo(gaussian, square, n=100_000, seed=1, chunk_size=30_000).estimate()
    assert est.n == 100_000 and est.method == "monte-carlo" and est.seed == 1
    assert est.se == pytest.approx(math.sqrt(2 / 100_000), rel=0.05)  # Var[x^2] = 2
    assert est.agrees_with(1.0)
    assert not est.heavy_tail_suspect


def test_exponential_moment_grid_with_common_draws():
    mc = MonteCarlo(gaussian, exp_ax, n=200_000, seed=2)
    grid = [(a,) for a in (-0.5, 0.0, 0.3, 0.7)]
    many = mc.estimate_many(grid)
    for (a,), est in zip(grid, many, strict=True):
        assert est.agrees_with(math.exp(a * a / 2)), (a, est)
    # Same seed, same draws: one point on its own equals its entry in the grid, bit for bit.
    assert mc.estimate((0.3,)) == many[2]
    assert many[1].se == 0.0 and many[1].mean == 1.0


@pytest.mark.parametrize("p", [0.03, 0.5, 0.9])
def test_bernoulli_mean(p):
    est = MonteCarlo(uniform, below, n=50_000, seed=3).estimate((p,))
    assert est.agrees_with(p)
    assert est.se == pytest.approx(math.sqrt(p * (1 - p) / 50_000), rel=0.05)


def test_interval_coverage_across_seeds():
    seeds = 200
    covered = 0
    for seed in range(seeds):
        lo, hi = MonteCarlo(gaussian, square, n=2_000, seed=seed).estimate().interval(1.96)
        covered += lo <= 1.0 <= hi
    low, high = stats.binom.interval(0.999, seeds, 0.95)
    assert low <= covered <= high, covered


# --- determinism ----------------------------------------------------------------------------


def test_chunk_streams_are_spawned_children():
    mc = MonteCarlo(gaussian, square, n=10, seed=5, chunk_size=3)
    children = np.random.SeedSequence(5).spawn(mc.n_chunks)
    assert mc.n_chunks == 4 and [mc.chunk_length(i) for i in range(4)] == [3, 3, 3, 1]
    for i, child in enumerate(children):
        assert np.array_equal(mc.chunk_rng(i).random(4), np.random.default_rng(child).random(4))


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two numba threads")
def test_identical_at_one_and_two_numba_threads():
    mc = MonteCarlo(gaussian3, exp_axy_z2, n=60_000, seed=6, chunk_size=7_000)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = mc.estimate((0.2,))
        numba.set_num_threads(2)
        two = mc.estimate((0.2,))
    finally:
        numba.set_num_threads(before)
    assert one.to_dict() == two.to_dict()
    assert one.agrees_with(1 / math.sqrt(1 - 0.04))


def test_identical_whatever_the_chunk_order_or_worker_count():
    mc = MonteCarlo(gaussian, exp_ax, n=50_000, seed=7, chunk_size=4_000)
    reference = mc.estimate((0.5,))
    order = np.random.default_rng(0).permutation(mc.n_chunks)
    done = {int(i): mc.chunk_stats(int(i), [(0.5,)])[0] for i in order}
    assert mc._estimate(combine(done[i] for i in range(mc.n_chunks)), (0.5,)) == reference
    threaded = MonteCarlo(gaussian, exp_ax, n=50_000, seed=7, chunk_size=4_000, workers=3)
    assert threaded.estimate((0.5,)) == reference


@settings(deadline=None)
@given(
    values=st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=60),
    cuts=st.lists(st.integers(1, 59), max_size=6),
)
def test_combined_moments_match_one_pass(values, cuts):
    x = np.array(values)
    edges = sorted({c for c in cuts if c < x.size})
    parts = [
        ChunkStats(p.size, p.mean(), ((p - p.mean()) ** 2).sum(), p.min(), p.max())
        for p in np.split(x, edges)
    ]
    total = combine(parts)
    scale = float(np.abs(x).max()) + 1.0
    assert total.n == x.size and total.lo == x.min() and total.hi == x.max()
    assert total.mean == pytest.approx(x.mean(), abs=1e-12 * scale)
    assert total.m2 == pytest.approx(((x - x.mean()) ** 2).sum(), rel=1e-9, abs=1e-9 * scale**2)


# --- guards ---------------------------------------------------------------------------------


def test_declared_infinite_second_moment_is_refused():
    mc = MonteCarlo(gaussian3, exp_axy_z2, n=10_000, seed=8, second_moment_finite=exp_axy_second_moment)
    with pytest.raises(NumericalTrouble, match=r"refused.*second moment.*4\*a\*\*2 < 1 violated at a=0.55"):
        mc.estimate((0.55,))
    with pytest.raises(NumericalTrouble, match="a=-0.6"):
        mc.estimate_many([(0.1,), (-0.6,)])
    est = mc.estimate((0.3,))
    assert est.agrees_with(1 / math.sqrt(1 - 0.09))


def test_empirical_heavy_tail_flag():
    heavy = MonteCarlo(uniform, pareto_like, n=20_000, seed=9).estimate()
    light = MonteCarlo(gaussian, square, n=20_000, seed=9).estimate()
    assert heavy.heavy_tail_suspect and heavy.max_share > 0.1
    assert not light.heavy_tail_suspect and light.max_share < 0.01


def test_non_finite_samples_are_reported():
    mc = MonteCarlo(gaussian, log_x, n=1_000, seed=10)
    with pytest.raises(NumericalTrouble, match=r"gave \d+ non-finite value\(s\) in chunk 0.*input0=-"):
        mc.estimate()


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n": 0}, "n"),
        ({"n": -5}, "n"),
        ({"n": 10.0}, "n"),
        ({"chunk_size": 0}, "chunk_size"),
        ({"chunk_size": -1}, "chunk_size"),
        ({"seed": "7"}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"seed": -1}, "seed"),
        ({"seed": True}, "seed"),
        ({"workers": 0}, "workers"),
    ],
)
def test_invalid_arguments_name_the_parameter(kwargs, name):
    args = {"n": 100, "seed": 0} | kwargs
    with pytest.raises(InvalidArgument, match=rf"^{name}="):
        MonteCarlo(gaussian, square, **args)


def test_integrand_with_wrong_output_is_refused():
    def as_float32(x, params):
        return (x * x).astype(np.float32)

    with pytest.raises(InvalidArgument, match="float64"):
        MonteCarlo(gaussian, as_float32, n=10, seed=0).estimate()


# --- enumeration ----------------------------------------------------------------------------


def test_enumeration_of_rademacher_products():
    for d in (2, 3, 6):
        cube = rademacher_cube(d)
        pair = Enumeration(cube, product_of_pair).estimate()
        quartic = Enumeration(cube, fourth_power_of_sum).estimate()
        assert pair.se == 0.0 and pair.method == "enumeration" and pair.n == 2**d
        assert pair.mean == 0.0
        assert quartic.mean == 3 * d * d - 2 * d  # E[(sum of d signs)^4]


def test_weighted_enumeration_of_biased_signs():
    p, d = 0.8, 4
    cube = rademacher_cube(d)
    ups = (cube > 0).sum(axis=1)
    weights = p**ups * (1 - p) ** (d - ups)
    est = Enumeration(cube, first_coordinate, weights=weights).estimate()
    assert est.agrees_with(2 * p - 1, rtol=1e-14)


def test_enumeration_refuses_bad_weights():
    with pytest.raises(InvalidArgument, match="weights"):
        Enumeration(rademacher_cube(2), first_coordinate, weights=[1.0, -1.0, 1.0, 1.0])
