"""Small statistics for stochastic statements: seed summaries, signs, binomial and bootstrap intervals.

A claim about a random quantity (a drift over seeds, a success rate, a limit extrapolated from
finite-size runs, a monotone trend) is decided by an interval, never by a point value. Each
function here validates its input, computes one interval or test, and returns a small frozen
record whose ``to_dict()`` is ready for JSON (plain floats, ints, bools and strings).

Conventions.

* Non-finite input (NaN, inf) is refused with :class:`~derivations.errors.InvalidArgument` naming
  the argument and the first bad entry; nothing is dropped silently. A failed seed must be removed
  (or rerun) by the caller, who then knows and can say so.
* Randomness comes only from an explicit integer ``seed`` through ``numpy.random.default_rng(seed)``;
  the same seed gives the same numbers. ``seed=None`` (entropy from the OS) is refused.
* Bootstraps resample **seeds** (rows), never points inside a seed: points of one run are
  correlated, runs of different seeds are independent, so the seed is the sampling unit. The
  replicate draw is ``rng.integers(0, n_seeds, size=(n_boot, n_seeds))``, one row of row indices
  per replicate, and the interval is the percentile interval of the replicates.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from scipy import special, stats

from derivations.errors import InvalidArgument, NumericalTrouble

_SIGNS = ("+", "-", "unresolved")
_RANK_METHODS = ("spearman", "kendall")
_POOLINGS = ("pooled", "mean")
_MIN_BOOT = 100
# Bootstrap replicates are ranked in blocks of about this many numbers, to bound memory.
_BLOCK = 1 << 22
# Longer rows are ranked by scipy's O(N log N) Kendall tau instead of comparing all N**2 pairs.
_PAIRWISE_MAX = 1000


# ----------------------------------------------------------------------------------------------------
# Records
# ----------------------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


class _Record:
    """Mixin: ``to_dict()`` for the frozen dataclasses below."""

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a JSON-ready dict (arrays become nested lists)."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]


@dataclass(frozen=True, eq=False)
class Summary(_Record):
    """Mean over seeds with its spread.

    Attributes
    ----------
    mean : float or ndarray
        ``mean = (1/n) sum_i v_i``.
    sd : float or ndarray
        Across-seed standard deviation, ``sd**2 = sum_i (v_i - mean)**2 / (n - 1)`` (ddof=1).
    se : float or ndarray
        Standard error of the mean, ``se = sd / sqrt(n)``.
    n : int
        Number of values (seeds) along the reduced axis.

    Floats for one-dimensional input; read-only arrays (the shape of the input without the reduced
    axis) otherwise.
    """

    mean: float | np.ndarray
    sd: float | np.ndarray
    se: float | np.ndarray
    n: int


@dataclass(frozen=True)
class DriftSign(_Record):
    """The sign of a mean, reported only when it stands out of the noise.

    Attributes
    ----------
    mean, se : float
        Mean over seeds and its standard error.
    k : float
        Threshold in standard errors.
    sign : str
        ``"+"`` if ``mean > k*se``, ``"-"`` if ``mean < -k*se``, else ``"unresolved"``.
    n : int
        Number of seeds.
    """

    mean: float
    se: float
    k: float
    sign: str
    n: int


@dataclass(frozen=True)
class BinomialInterval(_Record):
    """Exact (Clopper-Pearson) interval for a success probability.

    Attributes
    ----------
    successes, trials : int
        The observed count ``x`` and the number of trials ``n``.
    level : float
        Confidence level ``1 - alpha``.
    fraction : float
        ``x / n``.
    lower, upper : float
        ``lower = B(alpha/2; x, n-x+1)`` (0 when ``x = 0``) and ``upper = B(1-alpha/2; x+1, n-x)``
        (1 when ``x = n``), with ``B(q; a, b)`` the ``q``-quantile of the Beta(a, b) law.
    """

    successes: int
    trials: int
    level: float
    fraction: float
    lower: float
    upper: float

    def below(self, p0: float) -> bool:
        """Return whether the whole interval lies below ``p0`` (``upper < p0``)."""
        return self.upper < _probability("p0", p0)

    def above(self, p0: float) -> bool:
        """Return whether the whole interval lies above ``p0`` (``lower > p0``)."""
        return self.lower > _probability("p0", p0)

    def compare(self, p0: float) -> str:
        """Return ``"below"``, ``"above"`` or ``"contains"``: where the interval lies relative to ``p0``."""
        if self.below(p0):
            return "below"
        if self.above(p0):
            return "above"
        return "contains"


@dataclass(frozen=True)
class InverseFit(_Record):
    """Straight-line extrapolation ``y = y_inf + slope * x`` to ``x = 0``.

    Attributes
    ----------
    y_inf, y_inf_se : float
        The intercept and its standard error.
    low, high : float
        ``y_inf -/+ t_{dof}((1+level)/2) * y_inf_se``.
    level : float
        Confidence level of ``(low, high)``.
    slope, slope_se : float
        The slope and its standard error.
    chi2 : float
        ``sum_i w_i r_i**2`` at the fit (``w_i = 1/se_i**2``, or 1 when no ``se`` was given).
    dof : int
        ``n - 2``.
    n : int
        Number of points.
    weighted : bool
        Whether per-point standard errors were given.
    """

    y_inf: float
    y_inf_se: float
    low: float
    high: float
    level: float
    slope: float
    slope_se: float
    chi2: float
    dof: int
    n: int
    weighted: bool

    def covers(self, value: float) -> bool:
        """Return whether ``low <= value <= high``."""
        return self.low <= value <= self.high


@dataclass(frozen=True)
class RankCorrelation(_Record):
    """A rank correlation with a seed-bootstrap percentile interval.

    Attributes
    ----------
    method : str
        ``"spearman"`` (rho) or ``"kendall"`` (tau-b).
    pool : str
        ``"pooled"``: correlate all ``(x, y)`` pairs of all seeds; ``"mean"``: correlate the
        per-point means over seeds.
    statistic : float
        The correlation of the data as given.
    low, high : float
        Percentile interval of the bootstrap replicates at ``level``.
    level : float
        Confidence level.
    excludes_zero : bool
        ``low > 0`` or ``high < 0``.
    sign : str
        ``"+"`` if ``low > 0``, ``"-"`` if ``high < 0``, else ``"unresolved"``.
    n_seeds, n_points : int
        Shape of the input.
    n_boot, seed : int
        Bootstrap replicates drawn and the seed of their generator.
    n_undefined : int
        Replicates whose correlation is undefined (a resample with constant x or y); they are left
        out of the interval and counted here.
    """

    method: str
    pool: str
    statistic: float
    low: float
    high: float
    level: float
    excludes_zero: bool
    sign: str
    n_seeds: int
    n_points: int
    n_boot: int
    seed: int
    n_undefined: int


@dataclass(frozen=True)
class MeanDifference(_Record):
    """Difference of two means over seeds with a seed-bootstrap percentile interval.

    Attributes
    ----------
    difference : float
        ``mean(a) - mean(b)`` (for two-dimensional input, means of the per-seed row means).
    se : float
        Standard deviation of the bootstrap replicates.
    low, high : float
        Percentile interval of the replicates at ``level``.
    level : float
        Confidence level.
    excludes_zero : bool
        ``low > 0`` or ``high < 0``.
    sign : str
        ``"+"`` if ``low > 0``, ``"-"`` if ``high < 0``, else ``"unresolved"``.
    n_a, n_b : int
        Seeds in each sample.
    paired : bool
        Whether seed ``i`` of ``a`` and of ``b`` were resampled together.
    n_boot, seed : int
        Bootstrap replicates drawn and the seed of their generator.
    """

    difference: float
    se: float
    low: float
    high: float
    level: float
    excludes_zero: bool
    sign: str
    n_a: int
    n_b: int
    paired: bool
    n_boot: int
    seed: int


# ----------------------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------------------


def _real_array(name: str, values: Any, *, ndim: int | tuple[int, ...] | None = None) -> np.ndarray:
    """Return ``values`` as a finite float array, or raise naming ``name``."""
    try:
        arr = np.asarray(values)
    except ValueError as exc:  # ragged nested sequences
        msg = f"{name} is not a rectangular array of numbers ({exc}); pass equal-length rows"
        raise InvalidArgument(msg) from exc
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError) as exc:
            msg = f"{name} holds entries that are not real numbers ({exc})"
            raise InvalidArgument(msg) from exc
    if arr.dtype.kind not in "iuf":
        msg = f"{name} has dtype {arr.dtype}; pass real numbers (int or float)"
        raise InvalidArgument(msg)
    arr = arr.astype(float)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in allowed:
            want = " or ".join(str(d) for d in allowed)
            msg = f"{name} has shape {arr.shape} ({arr.ndim}-dimensional); pass a {want}-dimensional array"
            raise InvalidArgument(msg)
    bad = ~np.isfinite(arr)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f"[{', '.join(map(str, first))}]" if first else ""
        msg = (
            f"{name}{where}={float(arr[first])!r} is not finite ({int(bad.sum())} of {arr.size} entries are "
            "NaN or inf); statistics never drop such values silently: remove or rerun the failed "
            "seeds and say so"
        )
        raise InvalidArgument(msg)
    return arr


def _count(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool | np.bool_):
        msg = f"{name}={value!r} is a bool; pass an integer >= {minimum}"
        raise InvalidArgument(msg)
    try:
        n = operator.index(value)
    except TypeError as exc:
        msg = f"{name}={value!r} is not an integer; pass an integer >= {minimum}"
        raise InvalidArgument(msg) from exc
    if n < minimum:
        msg = f"{name}={n} violates {name} >= {minimum}"
        raise InvalidArgument(msg)
    return n


def _seed(seed: Any) -> int:
    if seed is None:
        msg = "seed=None would draw entropy from the OS and make the result irreproducible; pass an integer"
        raise InvalidArgument(msg)
    return _count("seed", seed, 0)


def _level(level: Any) -> float:
    try:
        value = float(level)
    except (TypeError, ValueError) as exc:
        msg = f"level={level!r} is not a number; pass a confidence level such as 0.95"
        raise InvalidArgument(msg) from exc
    if not 0.0 < value < 1.0:
        msg = f"level={level!r} violates 0 < level < 1; pass a confidence level such as 0.95"
        raise InvalidArgument(msg)
    return value


def _probability(name: str, p: Any) -> float:
    try:
        value = float(p)
    except (TypeError, ValueError) as exc:
        msg = f"{name}={p!r} is not a number; pass a probability in [0, 1]"
        raise InvalidArgument(msg) from exc
    if not 0.0 <= value <= 1.0:
        msg = f"{name}={p!r} violates 0 <= {name} <= 1"
        raise InvalidArgument(msg)
    return value


def _sign(low: float, high: float) -> str:
    if low > 0:
        return "+"
    if high < 0:
        return "-"
    return "unresolved"


# ----------------------------------------------------------------------------------------------------
# Summaries and signs
# ----------------------------------------------------------------------------------------------------


def summary(values: Any, axis: int = 0) -> Summary:
    """Return mean, across-seed standard deviation, standard error and count along ``axis``.

    ``mean = sum_i v_i / n``, ``sd = sqrt(sum_i (v_i - mean)**2 / (n - 1))`` and
    ``se = sd / sqrt(n)``, with ``i`` running over the ``n`` entries along ``axis`` (the seeds).

    Parameters
    ----------
    values : array_like
        Finite real numbers, at least one-dimensional, with at least 2 entries along ``axis``.
    axis : int
        The seed axis.

    Raises
    ------
    InvalidArgument
        Fewer than 2 values along ``axis``, a non-finite entry, or a bad ``axis``.
    """
    arr = _real_array("values", values)
    if arr.ndim == 0:
        msg = f"values={arr.item()!r} is a scalar; pass one value per seed (at least 2)"
        raise InvalidArgument(msg)
    try:
        ax = operator.index(axis)
    except TypeError as exc:
        msg = f"axis={axis!r} is not an integer"
        raise InvalidArgument(msg) from exc
    if not -arr.ndim <= ax < arr.ndim:
        msg = f"axis={axis!r} is out of range for values of shape {arr.shape}"
        raise InvalidArgument(msg)
    n = arr.shape[ax]
    if n < 2:
        msg = (
            f"values has n={n} entries along axis {ax} (shape {arr.shape}); the across-seed standard "
            "deviation (ddof=1) needs n >= 2: run at least 2 seeds"
        )
        raise InvalidArgument(msg)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below, not warned
        mean = arr.mean(axis=ax)
        sd = arr.std(axis=ax, ddof=1)
    se = sd / math.sqrt(n)
    if not (np.all(np.isfinite(sd)) and np.all(np.isfinite(mean))):
        msg = f"the spread of values (shape {arr.shape}) overflows float64; rescale the values"
        raise NumericalTrouble(msg)
    if arr.ndim == 1:
        return Summary(float(mean), float(sd), float(se), n)
    for a in (mean, sd, se):
        a.flags.writeable = False
    return Summary(mean, sd, se, n)


def drift_sign(values: Any, k: float = 3.0) -> DriftSign:
    """Return the sign of the mean of ``values`` when ``|mean| > k * se``, else ``"unresolved"``.

    With ``n`` independent seeds, ``(mean - mu) / se`` is approximately standard normal (Student t
    with ``n - 1`` degrees of freedom for Gaussian values), so under ``mu = 0`` a sign is reported
    wrongly with probability about ``2 * (1 - Phi(k))`` (0.27 % at ``k = 3``); with few seeds the
    t tail is heavier (``P(|t_4| > 3)`` = 4 % at ``n = 5``), so choose ``k`` or ``n`` accordingly.

    Parameters
    ----------
    values : array_like, shape (n,)
        One finite value per seed (a drift, a slope, a change), ``n >= 2``.
    k : float
        Threshold in standard errors, finite and positive.
    """
    arr = _real_array("values", values, ndim=1)
    try:
        kf = float(k)
    except (TypeError, ValueError) as exc:
        msg = f"k={k!r} is not a number; pass the number of standard errors, e.g. 3.0"
        raise InvalidArgument(msg) from exc
    if not (math.isfinite(kf) and kf > 0):
        msg = f"k={k!r} violates 0 < k < inf; pass the number of standard errors, e.g. 3.0"
        raise InvalidArgument(msg)
    s = summary(arr)
    mean, se = float(s.mean), float(s.se)
    sign = "+" if mean > kf * se else "-" if mean < -kf * se else "unresolved"
    return DriftSign(mean=mean, se=se, k=kf, sign=sign, n=s.n)


# ----------------------------------------------------------------------------------------------------
# Binomial
# ----------------------------------------------------------------------------------------------------


def clopper_pearson(successes: int, trials: int, level: float = 0.95) -> BinomialInterval:
    """Return the exact (Clopper-Pearson) confidence interval for a binomial probability.

    With ``x`` successes in ``n`` trials and ``alpha = 1 - level``, the interval ``[L, U]`` solves
    ``P(X >= x | L) = alpha/2`` and ``P(X <= x | U) = alpha/2``; by the Beta-binomial identity

        L = B(alpha/2; x, n - x + 1),   U = B(1 - alpha/2; x + 1, n - x),

    with ``L = 0`` at ``x = 0`` and ``U = 1`` at ``x = n`` (then ``U = 1 - (alpha/2)**(1/n)`` at
    ``x = 0`` and ``L = (alpha/2)**(1/n)`` at ``x = n``). Its coverage is at least ``level`` for
    every true probability.

    Parameters
    ----------
    successes : int
        ``0 <= successes <= trials``.
    trials : int
        ``trials >= 1``.
    level : float
        Confidence level in (0, 1).
    """
    n = _count("trials", trials, 1)
    x = _count("successes", successes, 0)
    if x > n:
        msg = f"successes={x} violates successes <= trials (trials={n})"
        raise InvalidArgument(msg)
    lev = _level(level)
    alpha = 1.0 - lev
    lower = 0.0 if x == 0 else float(stats.beta.ppf(alpha / 2, x, n - x + 1))
    upper = 1.0 if x == n else float(stats.beta.ppf(1 - alpha / 2, x + 1, n - x))
    return BinomialInterval(successes=x, trials=n, level=lev, fraction=x / n, lower=lower, upper=upper)


# ----------------------------------------------------------------------------------------------------
# Extrapolation
# ----------------------------------------------------------------------------------------------------


def extrapolate_inverse(x: Any, y: Any, se: Any = None, *, level: float = 0.95) -> InverseFit:
    """Fit ``y = y_inf + a * x`` by weighted least squares and report the intercept with its interval.

    Typically ``x = 1/T`` for a finite size ``T``, so ``y_inf`` is the ``T -> infinity`` limit.
    Weights are ``w_i = 1/se_i**2`` (all 1 without ``se``). With ``W = sum w_i``,
    ``xbar = sum w_i x_i / W``, ``ybar = sum w_i y_i / W`` and ``Sxx = sum w_i (x_i - xbar)**2``:

        a = sum w_i (x_i - xbar)(y_i - ybar) / Sxx,   y_inf = ybar - a * xbar,
        chi2 = sum w_i (y_i - y_inf - a x_i)**2,       s2 = chi2 / (n - 2),
        se(a)**2 = s2 / Sxx,                            se(y_inf)**2 = s2 * (1/W + xbar**2 / Sxx).

    The residual scale ``s2`` is estimated from the fit (the weights fix only the relative errors),
    so ``(y_inf - truth) / se(y_inf)`` follows Student's t with ``n - 2`` degrees of freedom for a
    linear truth with Gaussian errors, and ``y_inf -/+ t_{n-2}((1+level)/2) * se(y_inf)`` covers
    the truth with probability ``level``. A line that misses a curved truth inflates ``chi2``
    and with it the interval; compare ``chi2`` with ``dof`` when ``se`` holds absolute errors.
    Everything but ``chi2`` is unchanged by a common factor in the weights, so the fit itself uses
    ``w_i = (min se / se_i)**2``, which cannot overflow for tiny standard errors.

    Parameters
    ----------
    x, y : array_like, shape (n,)
        Finite abscissae (at least two distinct) and ordinates, ``n >= 3``.
    se : array_like, shape (n,), optional
        Finite positive standard errors of ``y``.
    level : float
        Confidence level of the intercept's interval.
    """
    xs = _real_array("x", x, ndim=1)
    ys = _real_array("y", y, ndim=1)
    n = xs.size
    if n < 3:
        msg = f"x has n={n} points; a line with an error estimate needs n >= 3 (one residual degree)"
        raise InvalidArgument(msg)
    if ys.size != n:
        msg = f"y has {ys.size} points but x has {n}; pass one y per x"
        raise InvalidArgument(msg)
    if np.all(xs == xs[0]):
        msg = f"x has a single distinct value x={float(xs[0])!r} (n={n}); the slope is undetermined: vary x"
        raise InvalidArgument(msg)
    ses = np.ones(n) if se is None else _real_array("se", se, ndim=1)
    if ses.size != n:
        msg = f"se has {ses.size} entries but x has {n}; pass one standard error per point"
        raise InvalidArgument(msg)
    if np.any(ses <= 0):
        i = int(np.argmax(ses <= 0))
        msg = f"se[{i}]={float(ses[i])!r} violates se > 0; pass positive standard errors"
        raise InvalidArgument(msg)
    lev = _level(level)
    dof = n - 2
    # The fit needs only relative weights (the scale is estimated), so w is normalised to max 1:
    # tiny standard errors cannot overflow it. chi2 keeps the absolute weights 1/se**2.
    w = (ses.min() / ses) ** 2
    with np.errstate(all="ignore"):  # overflow of huge x or y is reported below, not warned
        big_w = w.sum()
        xbar = w @ xs / big_w
        ybar = w @ ys / big_w
        dx = xs - xbar
        sxx = w @ dx**2
        slope = w @ (dx * (ys - ybar)) / sxx
        y_inf = ybar - slope * xbar
        resid = ys - y_inf - slope * xs
        s2 = (w @ resid**2) / dof
        slope_se = np.sqrt(s2 / sxx)
        y_inf_se = np.sqrt(s2 * (1.0 / big_w + xbar**2 / sxx))
        chi2 = np.sum((resid / ses) ** 2)
    values = np.array([y_inf, y_inf_se, slope, slope_se, chi2])
    if not np.all(np.isfinite(values)):
        msg = (
            f"the fit of x={xs!r}, y={ys!r} is not finite in float64 (overflow, or se so unequal that "
            "fewer than two distinct x keep a weight); rescale x, y or se"
        )
        raise NumericalTrouble(msg)
    y_inf, y_inf_se, slope, slope_se, chi2 = (float(v) for v in values)
    half = float(special.stdtrit(dof, 0.5 + lev / 2)) * y_inf_se
    return InverseFit(
        y_inf=y_inf,
        y_inf_se=y_inf_se,
        low=y_inf - half,
        high=y_inf + half,
        level=lev,
        slope=slope,
        slope_se=slope_se,
        chi2=chi2,
        dof=dof,
        n=n,
        weighted=se is not None,
    )


# ----------------------------------------------------------------------------------------------------
# Seed bootstraps
# ----------------------------------------------------------------------------------------------------


def _spearman_rows(xr: np.ndarray, yr: np.ndarray) -> np.ndarray:
    """Spearman rho of each row pair: Pearson correlation of mid-ranks (NaN for a constant row)."""
    rx = stats.rankdata(xr, axis=-1)
    ry = stats.rankdata(yr, axis=-1)
    rx -= rx.mean(axis=-1, keepdims=True)
    ry -= ry.mean(axis=-1, keepdims=True)
    num = np.einsum("ij,ij->i", rx, ry)
    den = np.sqrt(np.einsum("ij,ij->i", rx, rx) * np.einsum("ij,ij->i", ry, ry))
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return np.clip(out, -1.0, 1.0)


def _kendall_rows(xr: np.ndarray, yr: np.ndarray) -> np.ndarray:
    """Kendall tau-b of each row pair (NaN for a constant row).

    Short rows compare all pairs at once, ``tau_b = sum sx*sy / sqrt(sum |sx| * sum |sy|)`` over
    ``i < j``, in exact integer sums; long rows go to ``scipy.stats.kendalltau`` (O(N log N)).
    """
    rows, n = xr.shape
    out = np.full(rows, np.nan)
    if n > _PAIRWISE_MAX:
        for i in range(rows):
            if np.ptp(xr[i]) > 0 and np.ptp(yr[i]) > 0:
                out[i] = stats.kendalltau(xr[i], yr[i]).statistic
        return out
    step = max(1, _BLOCK // (n * n))
    for start in range(0, rows, step):
        sx = np.sign(xr[start : start + step, :, None] - xr[start : start + step, None, :]).astype(np.int8)
        sy = np.sign(yr[start : start + step, :, None] - yr[start : start + step, None, :]).astype(np.int8)
        num = (sx * sy).sum(axis=(1, 2), dtype=np.int64)
        den = np.sqrt(
            np.abs(sx).sum(axis=(1, 2), dtype=np.int64) * np.abs(sy).sum(axis=(1, 2), dtype=np.int64)
        )
        np.divide(num, den, out=out[start : start + step], where=den > 0)
    return np.clip(out, -1.0, 1.0)


def _kendall_pooled(xs: np.ndarray, ys: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Kendall tau-b of pooled rows, row ``s`` of the data taken ``counts[b, s]`` times in replicate ``b``.

    With ``sx`` and ``sy`` the signs of x- and y-differences between entries ``(r, i)`` and
    ``(s, j)``, let ``M[r, s] = sum_ij sx*sy``, ``A[r, s] = sum_ij |sx|`` and ``B[r, s] = sum_ij |sy|``.
    Over the unordered pairs of the pooled sample (copies of one row included), ``C - D = c.M.c / 2``
    and the pairs untied in x (in y) number ``c.A.c / 2`` (``c.B.c / 2``), so
    ``tau_b = c.M.c / sqrt(c.A.c * c.B.c)``. The integer sums are exact, and the ``(S P)**2`` sign
    comparisons are made once for all replicates.
    """
    n_seeds, n_points = xs.shape
    m, a, b = (np.zeros((n_seeds, n_seeds), dtype=np.int64) for _ in range(3))
    step = max(1, _BLOCK // (8 * xs.size))
    for r in range(n_seeds):
        for i in range(0, n_points, step):
            sx = np.sign(xs[r, i : i + step, None, None] - xs[None, :, :]).astype(np.int8)
            sy = np.sign(ys[r, i : i + step, None, None] - ys[None, :, :]).astype(np.int8)
            m[r] += (sx * sy).sum(axis=(0, 2), dtype=np.int64)
            a[r] += np.abs(sx).sum(axis=(0, 2), dtype=np.int64)
            b[r] += np.abs(sy).sum(axis=(0, 2), dtype=np.int64)
    num, ca, cb = (np.einsum("ki,ij,kj->k", counts, q, counts) for q in (m, a, b))
    den = np.sqrt(ca.astype(float) * cb.astype(float))
    out = np.full(num.shape, np.nan)
    np.divide(num.astype(float), den, out=out, where=den > 0)
    return np.clip(out, -1.0, 1.0)


def _reduce(xs: np.ndarray, pool: str) -> np.ndarray:
    """Turn resampled data of shape (..., n_seeds, n_points) into rows to correlate."""
    if pool == "mean":
        return xs.mean(axis=-2)
    return xs.reshape(*xs.shape[:-2], xs.shape[-2] * xs.shape[-1])


def _percentile(reps: np.ndarray, lev: float) -> tuple[float, float]:
    low, high = np.quantile(reps, [0.5 - lev / 2, 0.5 + lev / 2])
    return float(low), float(high)


def _correlations(
    xs: np.ndarray, ys: np.ndarray, method: str, pool: str, n_boot: int, seed: int
) -> tuple[float, np.ndarray]:
    """Return the statistic of the data and its ``n_boot`` seed-bootstrap replicates."""
    n_seeds = xs.shape[0]
    idx = np.random.default_rng(seed).integers(0, n_seeds, size=(n_boot, n_seeds))
    if method == "kendall" and pool == "pooled":
        counts = np.zeros((n_boot + 1, n_seeds), dtype=np.int64)
        counts[0] = 1
        np.add.at(counts, (np.arange(1, n_boot + 1)[:, None], idx), 1)
        taus = _kendall_pooled(xs, ys, counts)
        return float(taus[0]), taus[1:]
    corr = _spearman_rows if method == "spearman" else _kendall_rows
    statistic = float(corr(_reduce(xs, pool)[None], _reduce(ys, pool)[None])[0])
    reps = np.empty(n_boot)
    step = max(1, _BLOCK // xs.size)
    for start in range(0, n_boot, step):
        block = idx[start : start + step]
        reps[start : start + block.shape[0]] = corr(_reduce(xs[block], pool), _reduce(ys[block], pool))
    return statistic, reps


def rank_correlation(
    x_by_seed: Any,
    y_by_seed: Any,
    method: str = "spearman",
    n_boot: int = 2000,
    seed: int = 0,
    *,
    pool: str = "pooled",
    level: float = 0.95,
) -> RankCorrelation:
    """Return a rank correlation of ``y`` against ``x`` with a seed-bootstrap percentile interval.

    ``statistic`` is Spearman's rho (the Pearson correlation of mid-ranks) or Kendall's tau-b
    ``(C - D) / sqrt((n0 - n1)(n0 - n2))`` of

    * ``pool="pooled"``: all ``n_seeds * n_points`` pairs ``(x[s, j], y[s, j])``;
    * ``pool="mean"``: the ``n_points`` pairs of per-point means over seeds.

    Each of ``n_boot`` replicates draws ``n_seeds`` row indices with replacement
    (``rng.integers(0, n_seeds, size=(n_boot, n_seeds))`` with ``rng = default_rng(seed)``),
    recomputes the statistic on those rows, and ``(low, high)`` are the ``(1 -/+ level)/2``
    quantiles of the replicates. The result depends only on the data, ``method``, ``pool``,
    ``n_boot``, ``seed`` and ``level``.

    Parameters
    ----------
    x_by_seed, y_by_seed : array_like, shape (n_seeds, n_points)
        Finite values, one row per seed, ``n_seeds >= 2``.
    method : {"spearman", "kendall"}
        The rank correlation.
    n_boot : int
        Bootstrap replicates, at least 100.
    seed : int
        Seed of the bootstrap generator (non-negative).
    pool : {"pooled", "mean"}
        Which pairs are correlated (see above).
    level : float
        Confidence level of the interval.

    Raises
    ------
    InvalidArgument
        Bad shapes or values, or a correlation undefined on the data (constant x or y).
    NumericalTrouble
        No bootstrap replicate has a defined correlation.
    """
    xs = _real_array("x_by_seed", x_by_seed, ndim=2)
    ys = _real_array("y_by_seed", y_by_seed, ndim=2)
    if xs.shape != ys.shape:
        msg = f"y_by_seed has shape {ys.shape} but x_by_seed has {xs.shape}; pass matching (seeds, points)"
        raise InvalidArgument(msg)
    for name, value, choices in (("method", method, _RANK_METHODS), ("pool", pool, _POOLINGS)):
        if value not in choices:
            msg = f"{name}={value!r} is not one of {', '.join(map(repr, choices))}"
            raise InvalidArgument(msg)
    n_seeds, n_points = xs.shape
    if n_seeds < 2:
        msg = f"x_by_seed has n_seeds={n_seeds} rows; a seed bootstrap needs n_seeds >= 2"
        raise InvalidArgument(msg)
    if pool == "mean" and n_points < 3:
        msg = f"x_by_seed has n_points={n_points} columns; pool='mean' correlates columns and needs >= 3"
        raise InvalidArgument(msg)
    boots = _count("n_boot", n_boot, _MIN_BOOT)
    root = _seed(seed)
    lev = _level(level)
    statistic, reps = _correlations(xs, ys, method, pool, boots, root)
    if math.isnan(statistic):
        rx = _reduce(xs, pool)
        which, flat = ("x_by_seed", rx) if np.ptp(rx) == 0 else ("y_by_seed", _reduce(ys, pool))
        msg = (
            f"{which} is constant ({pool} data all equal {float(flat.flat[0])!r}); a rank correlation "
            "is undefined: the data must vary in both x and y"
        )
        raise InvalidArgument(msg)
    defined = reps[~np.isnan(reps)]
    if defined.size == 0:
        msg = f"every one of n_boot={boots} bootstrap resamples has constant x or y; use more seeds"
        raise NumericalTrouble(msg)
    low, high = _percentile(defined, lev)
    sign = _sign(low, high)
    return RankCorrelation(
        method=method,
        pool=pool,
        statistic=statistic,
        low=low,
        high=high,
        level=lev,
        excludes_zero=sign != "unresolved",
        sign=sign,
        n_seeds=n_seeds,
        n_points=n_points,
        n_boot=boots,
        seed=root,
        n_undefined=int(boots - defined.size),
    )


def bootstrap_mean_difference(
    a_by_seed: Any,
    b_by_seed: Any,
    n_boot: int = 2000,
    seed: int = 0,
    *,
    paired: bool = False,
    level: float = 0.95,
) -> MeanDifference:
    """Return ``mean(a) - mean(b)`` with a seed-bootstrap percentile interval.

    A two-dimensional input ``(n_seeds, n_points)`` is first reduced to per-seed row means, so the
    seed stays the sampling unit. Let ``rng = default_rng(seed)``.

    * Unpaired (independent seeds): each replicate is ``mean(a[I]) - mean(b[J])`` with
      ``I = rng.integers(0, n_a, size=(n_boot, n_a))`` drawn first, then
      ``J = rng.integers(0, n_b, size=(n_boot, n_b))``.
    * Paired (seed ``i`` of both samples shares its randomness, e.g. common random numbers):
      ``n_a == n_b`` and each replicate is ``mean(d[I])`` with ``d = a - b``.

    ``(low, high)`` are the ``(1 -/+ level)/2`` quantiles of the replicates and ``se`` their
    standard deviation.

    Parameters
    ----------
    a_by_seed, b_by_seed : array_like, shape (n_seeds,) or (n_seeds, n_points)
        Finite values, at least 2 seeds each.
    n_boot : int
        Bootstrap replicates, at least 100.
    seed : int
        Seed of the bootstrap generator (non-negative).
    paired : bool
        Resample seeds of ``a`` and ``b`` jointly.
    level : float
        Confidence level of the interval.
    """
    a = _real_array("a_by_seed", a_by_seed, ndim=(1, 2))
    b = _real_array("b_by_seed", b_by_seed, ndim=(1, 2))
    a = a.mean(axis=1) if a.ndim == 2 else a
    b = b.mean(axis=1) if b.ndim == 2 else b
    for name, arr in (("a_by_seed", a), ("b_by_seed", b)):
        if arr.size < 2:
            msg = f"{name} has n_seeds={arr.size}; a seed bootstrap needs n_seeds >= 2"
            raise InvalidArgument(msg)
    if paired and a.size != b.size:
        msg = f"paired=True needs as many seeds in b_by_seed ({b.size}) as in a_by_seed ({a.size})"
        raise InvalidArgument(msg)
    boots = _count("n_boot", n_boot, _MIN_BOOT)
    root = _seed(seed)
    lev = _level(level)
    rng = np.random.default_rng(root)
    if paired:
        d = a - b
        reps = d[rng.integers(0, d.size, size=(boots, d.size))].mean(axis=1)
    else:
        ia = rng.integers(0, a.size, size=(boots, a.size))
        ib = rng.integers(0, b.size, size=(boots, b.size))
        reps = a[ia].mean(axis=1) - b[ib].mean(axis=1)
    low, high = _percentile(reps, lev)
    sign = _sign(low, high)
    return MeanDifference(
        difference=float(a.mean() - b.mean()),
        se=float(reps.std(ddof=1)),
        low=low,
        high=high,
        level=lev,
        excludes_zero=sign != "unresolved",
        sign=sign,
        n_a=int(a.size),
        n_b=int(b.size),
        paired=bool(paired),
        n_boot=boots,
        seed=root,
    )
