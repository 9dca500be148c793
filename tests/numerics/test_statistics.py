"""Statistics for stochastic claims: known answers, coverage at fixed seeds, determinism, bad input."""

import json
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import optimize, stats

from derivations.errors import InvalidArgument, NumericalTrouble
from numerics import statistics as S

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


def mc_tolerance(p: float, m: int, k: float = 3.0) -> float:
    """Return ``k`` binomial standard errors of a frequency ``p`` estimated from ``m`` draws."""
    return k * math.sqrt(p * (1 - p) / m)


def assert_json_ready(record) -> None:
    """Check that ``to_dict`` survives a strict JSON round trip unchanged."""
    d = record.to_dict()
    assert json.loads(json.dumps(d, allow_nan=False)) == d


# --------------------------------------------------------------------------------------------------
# summary
# --------------------------------------------------------------------------------------------------


def test_summary_known_answer():
    """Mean 2.5, sd**2 = 5/3 and se = sd/2 for 1, 2, 3, 4."""
    s = S.summary([1, 2, 3, 4])
    assert (s.mean, s.n) == (2.5, 4)
    assert s.sd == pytest.approx(math.sqrt(5 / 3), rel=1e-15)
    assert s.se == pytest.approx(math.sqrt(5 / 3) / 2, rel=1e-15)
    assert_json_ready(s)


@given(hnp.arrays(np.float64, st.integers(2, 40), elements=finite))
def test_summary_matches_numpy(values):
    """Mean and ddof=1 deviation are NumPy's; se = sd / sqrt(n)."""
    s = S.summary(values)
    assert s.mean == np.mean(values)
    assert s.sd == np.std(values, ddof=1)
    assert s.se == pytest.approx(s.sd / math.sqrt(values.size), rel=1e-15, abs=0)
    assert s.n == values.size


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_summary_reduces_the_given_axis(axis):
    """Two-dimensional input gives read-only arrays over the remaining axis and lists in to_dict."""
    values = np.arange(12.0).reshape(4, 3) ** 2
    s = S.summary(values, axis=axis)
    np.testing.assert_array_equal(s.mean, values.mean(axis=axis))
    np.testing.assert_array_equal(s.sd, values.std(axis=axis, ddof=1))
    assert s.n == values.shape[axis]
    assert not s.mean.flags.writeable
    assert_json_ready(s)


def test_summary_reports_overflow_instead_of_returning_inf():
    """A spread beyond float64 is NumericalTrouble, not an infinite standard deviation."""
    with pytest.raises(NumericalTrouble, match="overflows"):
        S.summary([1e308, -1e308, 1e308])


# --------------------------------------------------------------------------------------------------
# drift_sign
# --------------------------------------------------------------------------------------------------


def test_drift_sign_on_strongly_signed_and_symmetric_data():
    """Clear drifts get their sign; values symmetric about zero stay unresolved."""
    rng = np.random.default_rng(11)
    up = rng.normal(1.0, 0.5, size=20)
    assert S.drift_sign(up).sign == "+"
    assert S.drift_sign(-up).sign == "-"
    symmetric = np.concatenate([up, -up])
    d = S.drift_sign(symmetric)
    assert d.sign == "unresolved"
    assert abs(d.mean) < 1e-12 < d.se
    assert_json_ready(d)


def test_drift_sign_threshold_is_strict():
    """For 1 and 3: mean 2, se exactly 1, so the sign appears for k < 2 and not at k = 2."""
    assert S.drift_sign([1.0, 3.0], k=1.999).sign == "+"
    d = S.drift_sign([1.0, 3.0], k=2.0)
    assert (d.mean, d.se, d.sign) == (2.0, 1.0, "unresolved")


@given(
    hnp.arrays(np.float64, st.integers(2, 30), elements=finite),
    st.floats(0.1, 10),
    st.integers(-20, 20),
)
def test_drift_sign_is_odd_and_scale_free(values, k, power):
    """Negation flips the sign; scaling by a power of two (exact in floating point) keeps it."""
    d = S.drift_sign(values, k)
    flipped = {"+": "-", "-": "+", "unresolved": "unresolved"}[d.sign]
    assert S.drift_sign(-values, k).sign == flipped
    assert S.drift_sign(values * 2.0**power, k).sign == d.sign


# --------------------------------------------------------------------------------------------------
# clopper_pearson
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("trials", [1, 2, 7, 40, 150])
def test_clopper_pearson_matches_scipy_binomtest(trials, level):
    """Every count agrees with scipy's exact binomial interval."""
    for x in range(trials + 1):
        ci = S.clopper_pearson(x, trials, level)
        ref = stats.binomtest(x, trials).proportion_ci(confidence_level=level, method="exact")
        # scipy finds the ends with brentq at its default absolute xtol of 2e-12; beta.ppf is sharper
        assert ci.lower == pytest.approx(ref.low, rel=1e-12, abs=1e-11)
        assert ci.upper == pytest.approx(ref.high, rel=1e-12, abs=1e-11)
        assert ci.fraction == x / trials


@given(st.integers(1, 10_000), st.floats(0.5, 0.999))
@example(trials=1, level=0.95)
def test_clopper_pearson_closed_forms_at_the_ends(trials, level):
    """At x = 0, upper = 1 - (alpha/2)**(1/n); at x = n, lower = (alpha/2)**(1/n)."""
    half_alpha = (1 - level) / 2
    zero = S.clopper_pearson(0, trials, level)
    full = S.clopper_pearson(trials, trials, level)
    assert zero.lower == 0.0
    assert full.upper == 1.0
    assert zero.upper == pytest.approx(-math.expm1(math.log(half_alpha) / trials), rel=1e-9)
    assert full.lower == pytest.approx(half_alpha ** (1 / trials), rel=1e-9)


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_clopper_pearson_inverts_the_binomial_tails(xn):
    """The ends solve P(X >= x | lower) = alpha/2 and P(X <= x | upper) = alpha/2."""
    x, n = xn
    ci = S.clopper_pearson(x, n, 0.95)
    if x > 0:
        assert stats.binom.sf(x - 1, n, ci.lower) == pytest.approx(0.025, rel=1e-8)
    if x < n:
        assert stats.binom.cdf(x, n, ci.upper) == pytest.approx(0.025, rel=1e-8)
    assert ci.lower <= ci.fraction <= ci.upper


@pytest.mark.parametrize(("x", "n"), [(1, 1), (1, 333), (2, 333), (50, 333), (332, 333), (7, 20)])
def test_clopper_pearson_ends_at_forty_digits(x, n):
    """Each end solves I_p(a, b) = alpha/2 to 1e-13 relative, judged by a Newton step at 40 digits.

    The lower end solves ``I_L(x, n-x+1) = alpha/2``, the upper ``1 - I_U(x+1, n-x) = alpha/2``;
    one Newton step ``(I_p - target) / I'_p`` at 40 digits is the distance to the true root.
    """
    with mp.workdps(40):
        half_alpha = mp.mpf(1 - 0.99) / 2
        ci = S.clopper_pearson(x, n, 0.99)
        ends = [(ci.lower, x, n - x + 1, half_alpha)]
        if x < n:
            ends.append((ci.upper, x + 1, n - x, 1 - half_alpha))
        for end, a, b, target in ends:
            p = mp.mpf(end)
            density = p ** (a - 1) * (1 - p) ** (b - 1) / mp.beta(a, b)
            newton = (mp.betainc(a, b, 0, p, regularized=True) - target) / density
            assert abs(newton / p) < 1e-13, (end, a, b)


@pytest.mark.parametrize(("trials", "p"), [(10, 0.5), (25, 0.1), (60, 0.02), (200, 0.7)])
def test_clopper_pearson_covers_at_least_the_level(trials, p):
    """Simulated coverage (seed 2024) is >= 0.95 within three Monte-Carlo standard errors."""
    m = 20_000
    intervals = [S.clopper_pearson(x, trials) for x in range(trials + 1)]
    covers = np.array([ci.lower <= p <= ci.upper for ci in intervals])
    counts = np.random.default_rng(2024).binomial(trials, p, size=m)
    assert covers[counts].mean() >= 0.95 - mc_tolerance(0.95, m)
    # the exact coverage, summed over the binomial law, is >= 0.95 with no Monte-Carlo error at all
    assert stats.binom.pmf(np.arange(trials + 1), trials, p) @ covers >= 0.95


def test_clopper_pearson_compare_with_a_printed_level():
    """0 of 100 lies below 0.05, 100 of 100 above 0.95, 50 of 100 contains 0.5."""
    assert S.clopper_pearson(0, 100).compare(0.05) == "below"
    assert S.clopper_pearson(100, 100).compare(0.95) == "above"
    mid = S.clopper_pearson(50, 100)
    assert mid.compare(0.5) == "contains"
    assert not mid.below(0.5) and not mid.above(0.5)
    assert_json_ready(mid)


# --------------------------------------------------------------------------------------------------
# extrapolate_inverse
# --------------------------------------------------------------------------------------------------


@given(
    st.floats(-100, 100),
    st.floats(-100, 100),
    st.lists(st.integers(1, 1000), min_size=3, max_size=12, unique=True),
    st.booleans(),
)
def test_extrapolation_is_exact_on_noiseless_lines(y_inf, slope, sizes, weighted):
    """A line through exact points gives back its intercept and slope with zero error."""
    x = 1.0 / np.array(sizes, dtype=float)
    y = y_inf + slope * x
    se = np.linspace(0.5, 2.0, x.size) if weighted else None
    fit = S.extrapolate_inverse(x, y, se)
    assert fit.y_inf == pytest.approx(y_inf, abs=1e-9)
    assert fit.slope == pytest.approx(slope, abs=1e-7 * max(1.0, abs(slope)) / x.min())
    assert fit.y_inf_se < 1e-8 and fit.chi2 < 1e-12
    assert (fit.dof, fit.n, fit.weighted) == (x.size - 2, x.size, weighted)


def test_extrapolation_matches_linregress_and_curve_fit():
    """Unweighted: scipy.stats.linregress; weighted: scipy.optimize.curve_fit with relative sigma."""
    rng = np.random.default_rng(5)
    x = 1 / np.array([4.0, 8, 16, 32, 64, 128])
    se = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.05])
    y = 2.0 - 3.0 * x + se * rng.normal(size=x.size)
    fit = S.extrapolate_inverse(x, y)
    ref = stats.linregress(x, y)
    assert fit.y_inf == pytest.approx(ref.intercept, rel=1e-12)
    assert fit.slope == pytest.approx(ref.slope, rel=1e-12)
    assert fit.y_inf_se == pytest.approx(ref.intercept_stderr, rel=1e-10)
    assert fit.slope_se == pytest.approx(ref.stderr, rel=1e-10)
    wfit = S.extrapolate_inverse(x, y, se)
    popt, pcov = optimize.curve_fit(lambda t, c, a: c + a * t, x, y, sigma=se, absolute_sigma=False)
    assert (wfit.y_inf, wfit.slope) == pytest.approx(tuple(popt), rel=1e-8)
    assert (wfit.y_inf_se, wfit.slope_se) == pytest.approx(tuple(np.sqrt(np.diag(pcov))), rel=1e-6)
    t = stats.t.ppf(0.975, x.size - 2)
    assert (wfit.low, wfit.high) == pytest.approx(
        (wfit.y_inf - t * wfit.y_inf_se, wfit.y_inf + t * wfit.y_inf_se)
    )
    assert_json_ready(wfit)


def test_extrapolation_weights_are_relative():
    """A common factor in se (here 1e-150) leaves the fit and its interval unchanged; chi2 scales."""
    x = np.array([0.5, 0.25, 0.125, 0.0625])
    y = np.array([1.3, 1.1, 1.06, 1.01])
    se = np.array([4.0, 2.0, 1.0, 1.0])
    ref = S.extrapolate_inverse(x, y, se)
    tiny = S.extrapolate_inverse(x, y, se * 1e-150)
    for name in ("y_inf", "y_inf_se", "slope", "slope_se", "low", "high"):
        assert getattr(tiny, name) == pytest.approx(getattr(ref, name), rel=1e-12), name
    assert tiny.chi2 == pytest.approx(ref.chi2 * 1e300, rel=1e-12)
    with pytest.raises(NumericalTrouble, match="not finite"):
        S.extrapolate_inverse(x, y * 1e300, se)


@pytest.mark.parametrize("scale", [1.0, 3.0])
def test_extrapolation_covers_the_truth_at_the_nominal_rate(scale):
    """Noisy lines (seed 7): the 95% interval covers y_inf in 95% +- 3 MC standard errors of runs.

    The noise is ``scale`` times the given se: the residual scale is estimated, so the coverage
    stays nominal when only the relative errors are right.
    """
    m, y_inf, slope = 3000, 0.75, -2.0
    x = 1 / np.array([5.0, 10, 20, 40, 80])
    se = 0.05 * np.sqrt(x / x.min())
    noise = np.random.default_rng(7).normal(size=(m, x.size)) * scale * se
    fits = [S.extrapolate_inverse(x, y_inf + slope * x + e, se) for e in noise]
    coverage = np.mean([f.covers(y_inf) for f in fits])
    assert abs(coverage - 0.95) <= mc_tolerance(0.95, m)
    z = np.array([(f.y_inf - y_inf) / f.y_inf_se for f in fits])
    assert abs(z.mean()) <= 3 * math.sqrt(stats.t.var(x.size - 2) / m)


# --------------------------------------------------------------------------------------------------
# rank_correlation
# --------------------------------------------------------------------------------------------------


def tied_data(seed: int, n_seeds: int = 6, n_points: int = 9):
    """Rows of a noisy increasing trend, rounded so that ranks tie."""
    rng = np.random.default_rng(seed)
    x = np.tile(np.arange(n_points, dtype=float), (n_seeds, 1))
    y = np.round(0.5 * x + rng.normal(0, 2, size=x.shape))
    return x, y


def reference_bootstrap(x, y, method, pool, n_boot, seed, level=0.95):
    """Resample rows with scipy's own correlations, as the docstring specifies."""
    corr = {"spearman": stats.spearmanr, "kendall": stats.kendalltau}[method]
    idx = np.random.default_rng(seed).integers(0, x.shape[0], size=(n_boot, x.shape[0]))
    if pool == "mean":
        reps = [corr(x[i].mean(axis=0), y[i].mean(axis=0)).statistic for i in idx]
    else:
        reps = [corr(x[i].ravel(), y[i].ravel()).statistic for i in idx]
    return np.quantile(reps, [0.5 - level / 2, 0.5 + level / 2])


@pytest.mark.parametrize("method", ["spearman", "kendall"])
@settings(max_examples=25)
@given(st.integers(0, 2**32 - 1), st.integers(2, 7), st.integers(3, 8), st.integers(0, 2**16))
def test_rank_correlation_equals_scipy_on_pooled_and_mean_data(method, data_seed, n_seeds, n_points, seed):
    """Statistic and every replicate = scipy's on the pooled pairs (or column means) of the rows drawn."""
    x, y = tied_data(data_seed, n_seeds, n_points)
    x = x + np.random.default_rng(data_seed).integers(0, 3, size=x.shape)  # ties in x too
    corr = {"spearman": stats.spearmanr, "kendall": stats.kendalltau}[method]
    idx = np.random.default_rng(seed).integers(0, n_seeds, size=(20, n_seeds))
    for pool, reduce in {"pooled": np.ravel, "mean": lambda a: a.mean(axis=0)}.items():
        if np.ptp(reduce(y)) == 0:
            continue
        r = S.rank_correlation(x, y, method, n_boot=100, seed=seed, pool=pool)
        assert r.statistic == pytest.approx(corr(reduce(x), reduce(y)).statistic, abs=1e-12)
        _, reps = S._correlations(x, y, method, pool, 20, seed)
        for i, rep in zip(idx, reps, strict=True):
            if np.ptp(reduce(x[i])) == 0 or np.ptp(reduce(y[i])) == 0:
                assert math.isnan(rep)
            else:
                assert rep == pytest.approx(corr(reduce(x[i]), reduce(y[i])).statistic, abs=1e-12)


@pytest.mark.parametrize("method", ["spearman", "kendall"])
@pytest.mark.parametrize("pool", ["pooled", "mean"])
def test_rank_correlation_interval_is_the_reference_percentile_interval(method, pool):
    """The public interval equals the percentiles of the reference resampling at level 0.9."""
    x, y = tied_data(17)
    r = S.rank_correlation(x, y, method, n_boot=300, seed=99, pool=pool, level=0.9)
    ref = reference_bootstrap(x, y, method, pool, 300, 99, level=0.9)
    np.testing.assert_allclose([r.low, r.high], ref, atol=1e-12)
    assert r.n_undefined == 0


def test_rank_correlation_is_deterministic_and_resolves_a_clear_trend():
    """Same seed, same record; another seed moves the interval; a clear trend excludes zero."""
    x, y = tied_data(3)
    for method in ("spearman", "kendall"):
        r = S.rank_correlation(x, y, method, seed=123)
        assert r.to_dict() == S.rank_correlation(x, y, method, seed=123).to_dict()
        other = S.rank_correlation(x, y, method, seed=124)
        assert (other.low, other.high) != (r.low, r.high)
        assert r.excludes_zero and r.sign == "+" and r.low <= r.statistic <= r.high
        assert (r.n_boot, r.seed, r.n_seeds, r.n_points, r.n_undefined) == (2000, 123, 6, 9, 0)
        assert_json_ready(r)
        assert S.rank_correlation(x, -y, method, seed=123).sign == "-"


@pytest.mark.parametrize("method", ["spearman", "kendall"])
def test_rank_correlation_of_opposite_seeds_is_unresolved(method):
    """Half the seeds rise, half fall: pooled correlation 0 and an interval that contains it."""
    x = np.tile(np.arange(1.0, 11.0), (8, 1))
    y = x * np.repeat([1.0, -1.0], 4)[:, None]
    r = S.rank_correlation(x, y, method, seed=0)
    assert r.statistic == pytest.approx(0.0, abs=1e-12)
    assert r.sign == "unresolved" and not r.excludes_zero


def test_rank_correlation_counts_undefined_replicates():
    """Resamples of seed 0 alone have constant y: they are counted in n_undefined, not hidden."""
    x = np.tile(np.arange(6.0), (2, 1))
    y = np.vstack([np.full(6, 2.0), np.arange(6.0)])
    r = S.rank_correlation(x, y, "spearman", n_boot=400, seed=3)
    idx = np.random.default_rng(3).integers(0, 2, size=(400, 2))
    assert r.n_undefined == int(np.sum(np.all(idx == 0, axis=1))) > 0
    assert_json_ready(r)


def test_kendall_long_rows_use_scipy_and_agree(monkeypatch):
    """The O(N log N) path for long rows gives the pairwise path's replicates."""
    x, y = tied_data(9)
    fast = S.rank_correlation(x, y, "kendall", n_boot=200, pool="mean")
    monkeypatch.setattr(S, "_PAIRWISE_MAX", 0)
    slow = S.rank_correlation(x, y, "kendall", n_boot=200, pool="mean")
    assert (slow.statistic, slow.low, slow.high) == pytest.approx(
        (fast.statistic, fast.low, fast.high), abs=1e-12
    )


# --------------------------------------------------------------------------------------------------
# bootstrap_mean_difference
# --------------------------------------------------------------------------------------------------


def test_mean_difference_follows_the_documented_resampling():
    """Unpaired: rows of a, then rows of b, from one generator; paired: rows of a - b."""
    rng = np.random.default_rng(1)
    a, b = rng.normal(1.0, 1.0, size=12), rng.normal(0.0, 1.0, size=9)
    d = S.bootstrap_mean_difference(a, b, n_boot=500, seed=42)
    gen = np.random.default_rng(42)
    ia, ib = gen.integers(0, 12, size=(500, 12)), gen.integers(0, 9, size=(500, 9))
    reps = a[ia].mean(axis=1) - b[ib].mean(axis=1)
    assert d.difference == pytest.approx(a.mean() - b.mean(), rel=1e-15)
    np.testing.assert_allclose([d.low, d.high], np.quantile(reps, [0.025, 0.975]), rtol=1e-15)
    assert d.se == pytest.approx(reps.std(ddof=1), rel=1e-15)
    assert d.to_dict() == S.bootstrap_mean_difference(a, b, n_boot=500, seed=42).to_dict()
    assert_json_ready(d)

    b12 = rng.normal(0.0, 1.0, size=12)
    p = S.bootstrap_mean_difference(a, b12, n_boot=500, seed=42, paired=True)
    reps = (a - b12)[np.random.default_rng(42).integers(0, 12, size=(500, 12))].mean(axis=1)
    np.testing.assert_allclose([p.low, p.high], np.quantile(reps, [0.025, 0.975]), rtol=1e-15)
    assert p.paired and p.difference == pytest.approx(np.mean(a - b12), rel=1e-14)


def test_mean_difference_reduces_rows_and_resolves_clear_gaps():
    """Two-dimensional input is averaged per seed; a clear gap is signed, equal samples are not."""
    rng = np.random.default_rng(8)
    a = rng.normal(2.0, 1.0, size=(10, 5))
    b = rng.normal(0.0, 1.0, size=(14, 5))
    d = S.bootstrap_mean_difference(a, b)
    assert d.difference == pytest.approx(a.mean() - b.mean(), rel=1e-14)
    assert (d.sign, d.n_a, d.n_b) == ("+", 10, 14)
    assert S.bootstrap_mean_difference(b, a).sign == "-"
    same = S.bootstrap_mean_difference(a, a, paired=True)
    assert (same.difference, same.low, same.high, same.sign) == (0.0, 0.0, 0.0, "unresolved")


# --------------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------------

X2, Y2 = tied_data(0)
NAN_ROWS = X2.copy()
NAN_ROWS[2, 3] = np.nan

BAD = [
    ("values", S.summary, ([1.0],), {}),
    ("values", S.summary, ([1.0, np.nan, 2.0],), {}),
    ("values", S.summary, ([1.0, np.inf],), {}),
    ("values", S.summary, (3.0,), {}),
    ("values", S.summary, (["a", "b"],), {}),
    ("values", S.summary, ([[1.0, 2.0], [3.0]],), {}),
    ("axis", S.summary, ([1.0, 2.0],), {"axis": 1}),
    ("values", S.drift_sign, ([[1.0, 2.0], [3.0, 4.0]],), {}),
    ("values", S.drift_sign, ([1.0, -np.inf, 2.0],), {}),
    ("k", S.drift_sign, ([1.0, 2.0],), {"k": 0.0}),
    ("k", S.drift_sign, ([1.0, 2.0],), {"k": math.nan}),
    ("successes", S.clopper_pearson, (11, 10), {}),
    ("successes", S.clopper_pearson, (-1, 10), {}),
    ("successes", S.clopper_pearson, (2.5, 10), {}),
    ("trials", S.clopper_pearson, (0, 0), {}),
    ("trials", S.clopper_pearson, (2, True), {}),
    ("trials", S.clopper_pearson, (2, "ten"), {}),
    ("level", S.clopper_pearson, (1, 10), {"level": 1.0}),
    ("x", S.extrapolate_inverse, ([0.1, 0.2], [1.0, 2.0]), {}),
    ("x", S.extrapolate_inverse, ([0.1, 0.1, 0.1], [1.0, 2.0, 3.0]), {}),
    ("x", S.extrapolate_inverse, ([0.1, np.nan, 0.3], [1.0, 2.0, 3.0]), {}),
    ("y", S.extrapolate_inverse, ([0.1, 0.2, 0.3], [1.0, 2.0]), {}),
    ("y", S.extrapolate_inverse, ([0.1, 0.2, 0.3], [1.0, 2.0, np.inf]), {}),
    ("se", S.extrapolate_inverse, ([0.1, 0.2, 0.3], [1.0, 2.0, 3.0], [1.0, 0.0, 1.0]), {}),
    ("se", S.extrapolate_inverse, ([0.1, 0.2, 0.3], [1.0, 2.0, 3.0], [1.0, np.nan, 1.0]), {}),
    ("se", S.extrapolate_inverse, ([0.1, 0.2, 0.3], [1.0, 2.0, 3.0], [1.0, 1.0]), {}),
    ("level", S.extrapolate_inverse, ([0.1, 0.2, 0.3], [1.0, 2.0, 3.0]), {"level": 0.0}),
    ("level", S.extrapolate_inverse, ([0.1, 0.2, 0.3], [1.0, 2.0, 3.0]), {"level": "high"}),
    ("x_by_seed", S.rank_correlation, (NAN_ROWS, Y2), {}),
    ("x_by_seed", S.rank_correlation, (X2[0], Y2[0]), {}),
    ("x_by_seed", S.rank_correlation, (X2[:1], Y2[:1]), {}),
    ("x_by_seed", S.rank_correlation, (np.ones_like(X2), Y2), {}),
    ("y_by_seed", S.rank_correlation, (X2, Y2[:, :4]), {}),
    ("y_by_seed", S.rank_correlation, (X2, np.zeros_like(Y2)), {"pool": "mean"}),
    ("method", S.rank_correlation, (X2, Y2, "pearson"), {}),
    ("pool", S.rank_correlation, (X2, Y2), {"pool": "median"}),
    ("n_boot", S.rank_correlation, (X2, Y2), {"n_boot": 10}),
    ("seed", S.rank_correlation, (X2, Y2), {"seed": None}),
    ("seed", S.rank_correlation, (X2, Y2), {"seed": -1}),
    ("seed", S.rank_correlation, (X2, Y2), {"seed": 1.5}),
    ("a_by_seed", S.bootstrap_mean_difference, ([1.0], [1.0, 2.0]), {}),
    ("b_by_seed", S.bootstrap_mean_difference, ([1.0, 2.0], [1.0, np.nan]), {}),
    ("b_by_seed", S.bootstrap_mean_difference, ([1.0, 2.0], [1.0, 2.0, 3.0]), {"paired": True}),
    ("a_by_seed", S.bootstrap_mean_difference, (np.ones((2, 2, 2)), [1.0, 2.0]), {}),
    ("seed", S.bootstrap_mean_difference, ([1.0, 2.0], [1.0, 2.0]), {"seed": None}),
    ("n_boot", S.bootstrap_mean_difference, ([1.0, 2.0], [1.0, 2.0]), {"n_boot": 0}),
    ("p0", S.clopper_pearson(3, 10).compare, (1.5,), {}),
]


@pytest.mark.parametrize(("name", "func", "args", "kwargs"), BAD)
def test_bad_input_names_the_argument(name, func, args, kwargs):
    """Every refusal is an InvalidArgument whose message starts from the offending argument's name."""
    with pytest.raises(InvalidArgument, match=rf"\b{name}\b"):
        func(*args, **kwargs)
