"""Expectations that always carry a standard error: plain Monte-Carlo and exact enumeration.

Both backends implement one interface, :class:`Expectation`: ``estimate(params)`` returns an
:class:`Estimate` (mean, standard error, sample count, method), and ``estimate_many(params_list)``
does the same for several parameter points.

Reproducibility. The ``n`` samples of :class:`MonteCarlo` are cut into chunks of ``chunk_size``
(the last one shorter); chunk ``i`` draws from ``default_rng(SeedSequence(seed, spawn_key=(i,)))``,
which is the ``i``-th child of ``SeedSequence(seed).spawn(...)``. The chunks depend on ``n`` and
``chunk_size`` only, never on the number of threads, and the per-chunk moments are combined in
chunk order with the pairwise update of Chan, Golub & LeVeque (1979). An estimate is therefore
bit-identical whatever numba's thread count and whatever order the chunks were computed in.

Common random numbers. Two estimates with the same ``draw``, ``n``, ``seed`` and ``chunk_size``
use the same draws, whatever their parameters; :meth:`MonteCarlo.estimate_many` draws each chunk
once and evaluates the integrand at every parameter point, so differences across a grid are not
blurred by independent sampling noise.

Control variates. :class:`ControlVariateMonteCarlo` takes an integrand that returns f and k
controls g of known mean per sample, fits β by regression on the whole run and reports
f̄ − β·(ḡ − E g) with its standard error and the variance reduction; chunks are folded in order
as above, so it is just as reproducible.

Heavy tails. A standard error means nothing when the integrand's second moment is infinite (the
estimate converges slower than ``n**-0.5``, or not at all, while the sample variance looks fine).
A :class:`MonteCarlo` may declare the condition under which the second moment is finite; it then
refuses parameters that violate it. Independently of any declaration, every estimate reports the
largest share of the centred sum of squares owed to a single sample (``max_share``) and flags
``heavy_tail_suspect`` when it exceeds ``heavy_tail_share``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np

from derivations.errors import InvalidArgument, NumericalTrouble
from numerics._jit import jit

Inputs = tuple[np.ndarray, ...]


#: a single sample owning more than this share of the centred sum of squares flags a suspected heavy tail
HEAVY_TAIL_SHARE = 0.1


@dataclass(frozen=True)
class Estimate:
    """An expectation with its standard error.

    Attributes
    ----------
    mean, se : float
        The estimate and its standard error (``se == 0`` for an exact method).
    n : int
        Samples (Monte-Carlo) or points (enumeration) used.
    method : str
        ``"monte-carlo"``, ``"enumeration"``, ...
    max_share : float
        Largest share of the centred sum of squares owed to one sample; near ``1/n`` for a
        light-tailed integrand, of order one when a single sample dominates the variance.
    heavy_tail_suspect : bool
        ``max_share`` exceeded the estimator's threshold: the standard error is not trustworthy.
    seed : int or None
        The root seed of a Monte-Carlo estimate.
    variance_reduction : float
        Plain-MC variance over this estimator's variance (1 without a control variate).
    """

    mean: float
    se: float
    n: int
    method: str
    max_share: float = 0.0
    heavy_tail_suspect: bool = False
    seed: int | None = None
    variance_reduction: float = 1.0

    def agrees_with(self, value: float, k_se: float = 4.0, *, rtol: float = 1e-12, atol: float = 0.0) -> bool:
        """Return whether ``|mean - value| <= k_se * se``.

        An exact estimate (``se == 0``) is compared with ``math.isclose(rel_tol=rtol, abs_tol=atol)``
        instead, since the only error left is rounding.
        """
        if not k_se > 0:
            msg = f"k_se={k_se!r} must be positive; pass the number of standard errors allowed, e.g. 4.0"
            raise InvalidArgument(msg)
        if self.se == 0:
            return math.isclose(self.mean, value, rel_tol=rtol, abs_tol=atol)
        return abs(self.mean - value) <= k_se * self.se

    def interval(self, k: float = 1.96) -> tuple[float, float]:
        """Return ``(mean - k*se, mean + k*se)``; ``k=1.96`` is the normal 95% interval."""
        return (self.mean - k * self.se, self.mean + k * self.se)

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a JSON-ready dict."""
        return asdict(self)


class Expectation(Protocol):
    """What :class:`MonteCarlo` and :class:`Enumeration` have in common."""

    def estimate(self, params: Any = ()) -> Estimate:
        """Return the expectation of the integrand at ``params``."""
        ...

    def estimate_many(self, params_list: Iterable[Any]) -> list[Estimate]:
        """Return one estimate per parameter point."""
        ...


@dataclass(frozen=True)
class ChunkStats:
    """Moments of one chunk of samples: count, mean, centred sum of squares, min and max."""

    n: int
    mean: float
    m2: float
    lo: float
    hi: float


def fold_in_order(parts: Iterable, merge: Callable, name: str):
    """Fold ``parts`` left to right with ``merge(acc, part)``; ``name`` names the caller in the error for no parts.

    The fold is sequential on purpose: floating-point addition is not associative, and a fixed
    order is what makes the result independent of how the chunks were computed.
    """
    acc = None
    for part in parts:
        acc = part if acc is None else merge(acc, part)
    if acc is None:
        raise InvalidArgument(f"parts is empty; {name} needs at least one chunk")
    return acc


def _merge_chunks(acc: ChunkStats, part: ChunkStats) -> ChunkStats:
    n = acc.n + part.n
    delta = part.mean - acc.mean
    mean = acc.mean + delta * (part.n / n)
    m2 = acc.m2 + part.m2 + delta * delta * (acc.n * part.n / n)
    return ChunkStats(n, mean, m2, min(acc.lo, part.lo), max(acc.hi, part.hi))


def combine(parts: Iterable[ChunkStats]) -> ChunkStats:
    """Fold chunk moments in the order given (Chan, Golub & LeVeque's pairwise update)."""
    return fold_in_order(parts, _merge_chunks, "combine")


@jit
def _chunk_moments(values):
    """Return (mean, m2, lo, hi, n_bad, first_bad) of a 1-D float64 array.

    Corrected two-pass algorithm: the second pass also sums the deviations, whose (ideally zero)
    total removes the rounding error of the first-pass mean. Non-finite values are counted and
    reported, not raised on (kernels return status, the wrapper raises).
    """
    n = values.size
    total = 0.0
    lo = np.inf
    hi = -np.inf
    n_bad = 0
    first_bad = -1
    for i in range(n):
        v = values[i]
        if not np.isfinite(v):
            n_bad += 1
            if first_bad < 0:
                first_bad = i
            continue
        total += v
        lo = min(lo, v)
        hi = max(hi, v)
    if n_bad > 0:
        return np.nan, np.nan, lo, hi, n_bad, first_bad
    mean = total / n
    m2 = 0.0
    drift = 0.0
    for i in range(n):
        d = values[i] - mean
        drift += d
        m2 += d * d
    return mean + drift / n, m2 - drift * drift / n, lo, hi, 0, -1


@jit
def _weighted_sums(values, weights):
    """Return (sum w*f, sum w, n_bad, first_bad) with Neumaier-compensated summation."""
    s = 0.0
    cs = 0.0
    w = 0.0
    cw = 0.0
    n_bad = 0
    first_bad = -1
    for i in range(values.size):
        v = values[i]
        if not np.isfinite(v):
            n_bad += 1
            if first_bad < 0:
                first_bad = i
            continue
        term = weights[i] * v
        t = s + term
        cs += (s - t) + term if abs(s) >= abs(term) else (term - t) + s
        s = t
        t = w + weights[i]
        cw += (w - t) + weights[i] if abs(w) >= abs(weights[i]) else (weights[i] - t) + w
        w = t
    return s + cs, w + cw, n_bad, first_bad


def _count(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        msg = f"{name}={value!r} must be an integer >= {minimum}; pass e.g. {name}={max(minimum, 1) * 1000}"
        raise InvalidArgument(msg)
    return int(value)


def _as_inputs(drawn: Any, size: int, origin: str) -> Inputs:
    inputs = drawn if isinstance(drawn, tuple) else (drawn,)
    for k, arr in enumerate(inputs):
        if not isinstance(arr, np.ndarray) or arr.ndim == 0 or arr.shape[0] != size:
            shape = getattr(arr, "shape", type(arr).__name__)
            msg = (f"{origin} gave input {k} of shape {shape}; expected an array (or a tuple of arrays) "
                   f"whose first axis is the sample axis, of length {size}")
            raise InvalidArgument(msg)
    return inputs


def _values(integrand: Callable, inputs: Inputs, params: Any, size: int) -> np.ndarray:
    values = integrand(*inputs, params)
    if not isinstance(values, np.ndarray) or values.dtype != np.float64 or values.shape != (size,):
        got = f"{values.dtype}{values.shape}" if isinstance(values, np.ndarray) else type(values).__name__
        msg = (f"integrand returned {got} at params={params!r}; expected a 1-D float64 array of "
               f"length {size} (one value per sample): convert with np.asarray(..., dtype=np.float64)")
        raise InvalidArgument(msg)
    return np.ascontiguousarray(values)


def _non_finite(
    values: np.ndarray, inputs: Inputs, params: Any, n_bad: int, first: int, where: str
) -> None:
    shown = ", ".join(f"input{k}={np.asarray(arr[first]).tolist()!r}" for k, arr in enumerate(inputs))
    msg = (f"integrand gave {n_bad} non-finite value(s) {where} at params={params!r}; the first is "
           f"{float(values[first])!r} at sample {first} ({shown}). Check the integrand's domain, "
           "or rewrite it in a stable form (expm1, log1p, log-sum-exp)")
    raise NumericalTrouble(msg)


class MonteCarlo:
    """Plain Monte-Carlo estimate of ``E[integrand(X, params)]`` with ``X ~ draw``.

    Parameters
    ----------
    draw : callable
        ``draw(rng, size)`` returns an array, or a tuple of arrays, whose first axis has length
        ``size`` (one row per sample). Vectorised NumPy; all randomness must come from ``rng``.
    integrand : callable
        ``integrand(*inputs, params)`` returns a 1-D float64 array of per-sample values; typically a
        numba kernel. It must be deterministic, so that the estimate depends only on the seed.
    n : int
        Number of samples (at least 2, for a standard error).
    seed : int
        Non-negative root seed of the :class:`numpy.random.SeedSequence`.
    chunk_size : int
        Samples per chunk: bounds memory and fixes the stream layout (see the module docstring).
    second_moment_finite : callable, optional
        ``second_moment_finite(params) -> (bool, reason)``. When it returns ``False`` the estimate
        is refused with :class:`NumericalTrouble`; ``reason`` should name the violated condition and
        the parameter values, e.g. ``"16*w**4 < 1 violated at w=0.55"``.
    workers : int
        Threads that compute chunks concurrently (useful with ``nogil`` kernels). Chunks are
        combined in order, so the result does not depend on ``workers``.
    heavy_tail_share : float
        ``heavy_tail_suspect`` is set when one sample owns more than this share of the centred sum
        of squares. 0.1 is far above the ``~2 log(n)/n`` of a Gaussian integrand once ``n >= 1000``.
    """

    method = "monte-carlo"

    def __init__(
        self,
        draw: Callable[[np.random.Generator, int], Any],
        integrand: Callable[..., np.ndarray],
        *,
        n: int,
        seed: int,
        chunk_size: int = 2**16,
        second_moment_finite: Callable[[Any], tuple[bool, str]] | None = None,
        workers: int = 1,
        heavy_tail_share: float = HEAVY_TAIL_SHARE,
    ) -> None:
        for name, fn in (("draw", draw), ("integrand", integrand)):
            if not callable(fn):
                msg = f"{name}={fn!r} is not callable; pass a function (see the MonteCarlo docstring)"
                raise InvalidArgument(msg)
        if second_moment_finite is not None and not callable(second_moment_finite):
            msg = (f"second_moment_finite={second_moment_finite!r} is not callable; pass "
                   "params -> (bool, reason) or None")
            raise InvalidArgument(msg)
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            msg = f"seed={seed!r} must be a non-negative integer (root of a SeedSequence); pass e.g. seed=0"
            raise InvalidArgument(msg)
        if not 0 < heavy_tail_share <= 1:
            msg = f"heavy_tail_share={heavy_tail_share!r} must lie in (0, 1]; the default is 0.1"
            raise InvalidArgument(msg)
        self.draw = draw
        self.integrand = integrand
        self.n = _count("n", n, 2)
        self.seed = int(seed)
        self.chunk_size = _count("chunk_size", chunk_size, 1)
        self.workers = _count("workers", workers, 1)
        self.second_moment_finite = second_moment_finite
        self.heavy_tail_share = float(heavy_tail_share)
        self.n_chunks = -(-self.n // self.chunk_size)

    def chunk_rng(self, i: int) -> np.random.Generator:
        """Return the generator of chunk ``i`` (the ``i``-th child of ``SeedSequence(seed)``)."""
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(i,)))

    def chunk_length(self, i: int) -> int:
        """Return the number of samples in chunk ``i``."""
        return min(self.chunk_size, self.n - i * self.chunk_size)

    def chunk_inputs(self, i: int) -> tuple[Inputs, int]:
        """Draw chunk ``i``: its inputs and its length."""
        if not 0 <= i < self.n_chunks:
            msg = f"i={i!r} is not a chunk index; valid indices are 0..{self.n_chunks - 1}"
            raise InvalidArgument(msg)
        size = self.chunk_length(i)
        return _as_inputs(self.draw(self.chunk_rng(i), size), size, "draw"), size

    def chunk_stats(self, i: int, params_list: Sequence[Any]) -> list[ChunkStats]:
        """Draw chunk ``i`` once and return its moments at each parameter point."""
        inputs, size = self.chunk_inputs(i)
        out = []
        for params in params_list:
            values = _values(self.integrand, inputs, params, size)
            mean, m2, lo, hi, n_bad, first = _chunk_moments(values)
            if n_bad:
                where = f"in chunk {i} (seed={self.seed}, chunk_size={self.chunk_size})"
                _non_finite(values, inputs, params, int(n_bad), int(first), where)
            out.append(ChunkStats(size, float(mean), float(m2), float(lo), float(hi)))
        return out

    def _refuse_heavy_tail(self, params: Any) -> None:
        if self.second_moment_finite is None:
            return
        answer = self.second_moment_finite(params)
        if not (isinstance(answer, tuple) and len(answer) == 2):
            msg = f"second_moment_finite returned {answer!r}; it must return a pair (bool, reason)"
            raise InvalidArgument(msg)
        finite, reason = answer
        if not finite:
            msg = (f"plain Monte-Carlo refused at params={params!r}: the integrand's second moment is "
                   f"infinite ({reason}), so the sample variance and the standard error are meaningless. "
                   "Choose parameters inside the condition, or use a closed form, an enumeration or "
                   "an importance-sampled estimator")
            raise NumericalTrouble(msg)

    _combine = staticmethod(combine)

    def _estimate(self, stats: ChunkStats, params: Any) -> Estimate:
        se = math.sqrt(stats.m2 / (stats.n - 1) / stats.n)
        spread = max((stats.hi - stats.mean) ** 2, (stats.lo - stats.mean) ** 2)
        share = spread / stats.m2 if stats.m2 > 0 else 0.0
        return Estimate(stats.mean, se, stats.n, self.method, share, share > self.heavy_tail_share, self.seed)

    def estimate(self, params: Any = ()) -> Estimate:
        """Return the Monte-Carlo estimate at ``params`` (passed unchanged to the integrand)."""
        return self.estimate_many([params])[0]

    def estimate_many(self, params_list: Iterable[Any]) -> list[Estimate]:
        """Return estimates at several parameter points from the same draws (common random numbers).

        Every parameter point is checked against ``second_moment_finite`` before anything is drawn.
        """
        params_list = list(params_list)
        for params in params_list:
            self._refuse_heavy_tail(params)

        def work(i: int) -> list[ChunkStats]:
            return self.chunk_stats(i, params_list)

        if self.workers == 1:
            per_chunk = [work(i) for i in range(self.n_chunks)]
        else:
            with ThreadPoolExecutor(self.workers) as pool:
                per_chunk = list(pool.map(work, range(self.n_chunks)))  # map returns in chunk order
        return [self._estimate(self._combine(chunk[j] for chunk in per_chunk), params_list[j])
                for j in range(len(params_list))]


@dataclass(frozen=True)
class JointStats:
    """Joint moments of (f, g₁..g_k) over one chunk: count, means, centred co-moment matrix, range of f."""

    n: int
    means: np.ndarray
    comoments: np.ndarray
    lo: float
    hi: float


def _merge_joint(acc: JointStats, part: JointStats) -> JointStats:
    n = acc.n + part.n
    delta = part.means - acc.means
    return JointStats(n, acc.means + delta * (part.n / n),
                      acc.comoments + part.comoments + np.outer(delta, delta) * (acc.n * part.n / n),
                      min(acc.lo, part.lo), max(acc.hi, part.hi))


def combine_joint(parts: Iterable[JointStats]) -> JointStats:
    """Fold joint chunk moments in the order given (the update of :func:`combine`, with co-moments)."""
    return fold_in_order(parts, _merge_joint, "combine_joint")


@jit
def _joint_moments(values):
    """(means, co-moment matrix, lo_f, hi_f, n_bad, first_bad) of the columns of an (n, m) array (two passes)."""
    n, m = values.shape
    sums = np.zeros(m)
    lo, hi = np.inf, -np.inf
    n_bad, first_bad = 0, -1
    for i in range(n):
        finite = True
        for j in range(m):
            finite = finite and np.isfinite(values[i, j])
        if not finite:
            n_bad += 1
            if first_bad < 0:
                first_bad = i
            continue
        for j in range(m):
            sums[j] += values[i, j]
        lo = min(lo, values[i, 0])
        hi = max(hi, values[i, 0])
    means = sums / n
    comoments = np.zeros((m, m))
    if n_bad > 0:
        return means, comoments, lo, hi, n_bad, first_bad
    centred = np.empty(m)
    for i in range(n):
        for j in range(m):
            centred[j] = values[i, j] - means[j]
        for j in range(m):
            for k in range(j, m):
                comoments[j, k] += centred[j] * centred[k]
    for j in range(m):
        for k in range(j):
            comoments[j, k] = comoments[k, j]
    return means, comoments, lo, hi, 0, -1


class ControlVariateMonteCarlo(MonteCarlo):
    """Monte-Carlo of E f with controls g₁..g_k of known means (the regression estimator).

    The integrand returns an (n, 1+k) float64 array: column 0 is f, columns 1..k the controls.
    With the centred sums S of the whole run, β = S_gg⁻¹ S_gf and

        θ̂ = f̄ − β·(ḡ − E g),   SE² = (S_ff − S_fg β) / ((n − 1 − k) n)

    (n − 1 − k degrees of freedom for the fitted coefficients). θ̂ is consistent with bias O(1/n),
    far below the SE at the sample sizes used. ``control_means(params)`` gives E g exactly (closed
    forms or exact sums); ``variance_reduction`` reports S_ff / (S_ff − S_fg β), the factor by which
    plain MC would need more samples. Other arguments as :class:`MonteCarlo`; the joint moments are
    combined in chunk order, so the estimate does not depend on the thread count.
    """

    method = "monte-carlo + control variates"
    _combine = staticmethod(combine_joint)

    def __init__(self, draw, integrand, control_means: Callable[[Any], Sequence[float]], **kwargs) -> None:
        if not callable(control_means):
            raise InvalidArgument(f"control_means={control_means!r} is not callable; pass params -> (E g₁, ..)")
        super().__init__(draw, integrand, **kwargs)
        self.control_means = control_means

    def chunk_stats(self, i: int, params_list: Sequence[Any]) -> list[JointStats]:
        """Draw chunk ``i`` once and return the joint moments of (f, g) at each parameter point."""
        inputs, size = self.chunk_inputs(i)
        out = []
        for params in params_list:
            values = self.integrand(*inputs, params)
            if (not isinstance(values, np.ndarray) or values.dtype != np.float64 or values.ndim != 2
                    or values.shape[0] != size or values.shape[1] < 2):
                got = f"{values.dtype}{values.shape}" if isinstance(values, np.ndarray) else type(values).__name__
                raise InvalidArgument(f"integrand returned {got} at params={params!r}; a control-variate "
                                      f"integrand returns a float64 array of shape ({size}, 1 + k): f, then k controls")
            means, comoments, lo, hi, n_bad, first = _joint_moments(np.ascontiguousarray(values))
            if n_bad:
                where = f"in chunk {i} (seed={self.seed}, chunk_size={self.chunk_size})"
                column = int(np.flatnonzero(~np.isfinite(values[first]))[0])
                _non_finite(np.ascontiguousarray(values[:, column]), inputs, params, int(n_bad), int(first), where)
            out.append(JointStats(size, means, comoments, float(lo), float(hi)))
        return out

    def _estimate(self, stats: JointStats, params: Any) -> Estimate:
        return regression_estimate(stats, self.control_means(params), self.method, self.heavy_tail_share, self.seed)


def regression_estimate(stats: JointStats, known: Sequence[float], method: str = ControlVariateMonteCarlo.method,
                        heavy_tail_share: float = HEAVY_TAIL_SHARE, seed: Any = None) -> Estimate:
    """The regression estimator of :class:`ControlVariateMonteCarlo` from joint moments of (f, g₁..g_k) and the
    controls' exact means ``known``."""
    k = stats.means.size - 1
    known = np.asarray(known, dtype=float)
    if known.shape != (k,):
        raise InvalidArgument(f"control_means returned {known.tolist()!r}; expected {k} means, one per control")
    if stats.n < k + 2:
        raise InvalidArgument(f"n={stats.n} is too small for {k} controls; it needs n >= {k + 2}")
    s_ff, s_gf, s_gg = stats.comoments[0, 0], stats.comoments[1:, 0], stats.comoments[1:, 1:]
    beta = np.linalg.lstsq(s_gg, s_gf, rcond=None)[0]
    residual = max(float(s_ff - s_gf @ beta), 0.0)
    mean = float(stats.means[0] - beta @ (stats.means[1:] - known))
    se = math.sqrt(residual / (stats.n - 1 - k) / stats.n)
    spread = max((stats.hi - stats.means[0]) ** 2, (stats.lo - stats.means[0]) ** 2)
    share = spread / s_ff if s_ff > 0 else 0.0
    reduction = s_ff / residual if residual > 0 else math.inf
    return Estimate(mean, se, stats.n, method, float(share), bool(share > heavy_tail_share), seed, float(reduction))


def control_variate_mean(values: Any, known: Sequence[float]) -> Estimate:
    """E f from independent replicates ``values`` (n, 1 + k): f, then k controls of exactly known means ``known``
    (the estimator of :class:`ControlVariateMonteCarlo` for samples drawn elsewhere, e.g. one per seed)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[1] < 2:
        raise InvalidArgument(f"values must have shape (n, 1 + k) with k >= 1 controls; got {values.shape}")
    means, comoments, lo, hi, n_bad, _ = _joint_moments(values)
    if n_bad:
        raise NumericalTrouble(f"{n_bad} of {values.shape[0]} replicates are not finite")
    return regression_estimate(JointStats(values.shape[0], means, comoments, float(lo), float(hi)), known)


class Enumeration:
    """Exact expectation over a finite data set: ``sum_i w_i f(x_i, params) / sum_i w_i``.

    Parameters
    ----------
    points : array or tuple of arrays
        The data set, one row per point along the first axis (same layout as ``MonteCarlo``'s draws).
    integrand : callable
        ``integrand(*points, params)``, a 1-D float64 array with one value per point.
    weights : array, optional
        Non-negative finite weights (probabilities up to a constant); uniform when omitted.
    normalise : bool
        True (default): the weights are probabilities up to a constant and the result is the
        weighted mean ``sum_i w_i f_i / sum_i w_i``. False: the weights are a measure and the
        result is the weighted sum ``sum_i w_i f_i`` (e.g. a sum over strata of per-stratum means,
        :mod:`numerics.enumeration`).

    The weighted sum is compensated (Neumaier), and the result carries ``se = 0``.
    """

    method = "enumeration"

    def __init__(
        self, points: Any, integrand: Callable[..., np.ndarray], weights: Any = None, *, normalise: bool = True
    ) -> None:
        if not callable(integrand):
            msg = f"integrand={integrand!r} is not callable; pass a function of (*points, params)"
            raise InvalidArgument(msg)
        first = points[0] if isinstance(points, tuple) and points else points
        size = first.shape[0] if isinstance(first, np.ndarray) and first.ndim > 0 else 0
        if size == 0:
            msg = "points is empty or not an array; pass an array (or tuple of arrays) with one row per point"
            raise InvalidArgument(msg)
        self.points = _as_inputs(points, size, "points")
        self.integrand = integrand
        self.n = size
        if weights is None:
            w = np.ones(size)
        else:
            w = np.asarray(weights, dtype=np.float64)
            if (w.shape != (size,) or not np.all(np.isfinite(w)) or np.any(w < 0)
                    or (normalise and not w.sum() > 0)):
                msg = (f"weights (shape {w.shape}) must be {size} finite non-negative numbers, one per point, "
                       "with a positive sum when normalise=True")
                raise InvalidArgument(msg)
        self.weights = np.ascontiguousarray(w)
        self.normalise = bool(normalise)

    def estimate(self, params: Any = ()) -> Estimate:
        """Return the exact weighted mean (``normalise=False``: weighted sum) of the integrand at ``params``."""
        values = _values(self.integrand, self.points, params, self.n)
        total, wsum, n_bad, first = _weighted_sums(values, self.weights)
        if n_bad:
            _non_finite(values, self.points, params, int(n_bad), int(first), f"over {self.n} points")
        return Estimate(float(total / wsum if self.normalise else total), 0.0, self.n, self.method)

    def estimate_many(self, params_list: Iterable[Any]) -> list[Estimate]:
        """Return one exact estimate per parameter point."""
        return [self.estimate(params) for params in params_list]
