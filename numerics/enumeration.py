"""Finite sets of strings, enumerated exactly or sampled by strata: two implementations of one expectation.

A data set here is a list of **strata**. Stratum h holds every string of length ``lengths[h]``
over the alphabet {0, …, k−1} (k**L strings, in lexicographic order, first character most
significant), and carries a total weight ``stratum_weights[h]`` (an exact rational, 1 by
default) shared equally by its strings, so a string of stratum h weighs
``stratum_weights[h] / k**L``. The expectation of a per-string function f is then

    Σ_h stratum_weights[h] · mean_{s ∈ {0..k−1}^{L_h}} f(s),

a sum over strata of per-stratum means (not a global mean). A length may appear in several
strata (a sample counted in two loss terms, possibly with different labels).

Two implementations of :class:`numerics.montecarlo.Expectation` compute it from one integrand:

* :meth:`StringSet.enumeration` — a :class:`numerics.montecarlo.Enumeration` over every string
  with the per-string weights and ``normalise=False``: exact (``se == 0``), cost Σ_h k**L_h;
* :meth:`StringSet.monte_carlo` — a :class:`StratifiedMonteCarlo`: in each stratum, ``n``
  uniform strings of its length; the estimate Σ_h w_h·(stratum sample mean) with standard error
  √(Σ_h w_h² se_h²).

Both hand the integrand the same three arrays (one row per string): ``chars`` (n, width) int64,
the characters padded with :data:`PAD` beyond each string's length (``width`` = the longest
length of the set); ``length`` (n,) int64; ``stratum`` (n,) int64, the stratum index (so an
integrand can look up a per-stratum label rule). The integrand is ``integrand(chars, length,
stratum, params)`` and returns one float64 per string.

Reproducibility: stratum h of a :class:`StratifiedMonteCarlo` with root seed ``seed`` draws
chunk i from ``default_rng(SeedSequence(seed, spawn_key=(h, i)))``; chunks are combined in order
as in :mod:`numerics.montecarlo`, so an estimate depends on (seed, n, chunk_size) only.

Labels come from rules: a **label rule** maps an (n, L) int64 array of strings of one length L
to n labels in {+1, −1} (vectorised NumPy); :func:`rowwise` lifts a function of one string
(a tuple of ints) to a rule.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from derivations.errors import InvalidArgument
from numerics.montecarlo import Enumeration, Estimate, MonteCarlo

#: the pad value of ``chars`` beyond a string's length
PAD = -1
#: the largest number of strings a :class:`StringSet` enumerates unless told otherwise
MAX_POINTS = 2**24

LabelRule = Callable[[np.ndarray], np.ndarray]


def _int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        msg = f"{name}={value!r} must be an integer >= {minimum}"
        raise InvalidArgument(msg)
    return int(value)


def _rational(name: str, value: Any) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, numbers.Rational | float):
        msg = f"{name}={value!r} must be a non-negative rational (int, Fraction or float)"
        raise InvalidArgument(msg)
    if isinstance(value, float) and not math.isfinite(value):
        msg = f"{name}={value!r} must be finite"
        raise InvalidArgument(msg)
    out = Fraction(value)
    if out < 0:
        msg = f"{name}={value!r} must be >= 0"
        raise InvalidArgument(msg)
    return out


def strings_of_length(alphabet: int, length: int) -> np.ndarray:
    """Every string of ``length`` over {0..alphabet−1}, as an (alphabet**length, length) int64 array.

    Row r is r written in base ``alphabet`` with the first character most significant, so the
    rows are in lexicographic order.
    """
    alphabet = _int("alphabet", alphabet, 1)
    length = _int("length", length, 1)
    codes = np.arange(alphabet**length, dtype=np.int64)
    powers = alphabet ** np.arange(length - 1, -1, -1, dtype=np.int64)
    return (codes[:, None] // powers[None, :]) % alphabet


def rowwise(fn: Callable[[tuple[int, ...]], Any]) -> LabelRule:
    """Lift ``fn(string) -> ±1 or bool`` (``string`` a tuple of ints) to a label rule; True means +1."""
    if not callable(fn):
        msg = f"fn={fn!r} is not callable; pass a function of one string (a tuple of ints)"
        raise InvalidArgument(msg)

    def rule(chars: np.ndarray) -> np.ndarray:
        out = [fn(tuple(int(c) for c in row)) for row in chars]
        signs = [(1 if v else -1) if isinstance(v, bool | np.bool_) else v for v in out]
        return np.array(signs, dtype=np.int64)

    rule.__name__ = getattr(fn, "__name__", "rule")
    rule.__doc__ = fn.__doc__
    return rule


def _apply_rule(rule: LabelRule, chars: np.ndarray, where: str) -> np.ndarray:
    labels = np.asarray(rule(chars))
    if labels.shape != (chars.shape[0],):
        msg = (f"label rule {getattr(rule, '__name__', rule)!r} returned shape {labels.shape} for "
               f"{chars.shape[0]} strings {where}; a rule returns one label per row")
        raise InvalidArgument(msg)
    if labels.dtype == bool:
        labels = np.where(labels, 1, -1)
    if not np.all((labels == 1) | (labels == -1)):
        bad = int(np.flatnonzero((labels != 1) & (labels != -1))[0])
        msg = (f"label rule {getattr(rule, '__name__', rule)!r} gave label {labels[bad]!r} to the string "
               f"{chars[bad].tolist()} {where}; labels must be +1 or -1 (or bool, True = +1)")
        raise InvalidArgument(msg)
    return labels.astype(np.int64)


@dataclass(frozen=True, eq=False)
class StringSet:
    """Every string of each stratum's length, with exact per-string weights (build with :func:`all_strings`).

    Attributes
    ----------
    alphabet : int
        k; the characters are 0..k−1.
    lengths : tuple of int
        The length of each stratum (repeats allowed).
    stratum_weights : tuple of Fraction
        The total weight of each stratum.
    chars : ndarray (N, width) int64
        The strings, stratum by stratum, padded with :data:`PAD`; ``width = max(lengths)``.
    length, stratum : ndarray (N,) int64
        Each string's length and stratum index.
    weights_exact : tuple of Fraction
        Per-string weights ``stratum_weights[h] / k**L_h``.
    weights : ndarray (N,) float64
        The same, rounded to float64.
    offsets : ndarray (H+1,) int64
        Stratum h is rows ``offsets[h]:offsets[h+1]``.
    """

    alphabet: int
    lengths: tuple[int, ...]
    stratum_weights: tuple[Fraction, ...]
    chars: np.ndarray = field(repr=False)
    length: np.ndarray = field(repr=False)
    stratum: np.ndarray = field(repr=False)
    weights_exact: tuple[Fraction, ...] = field(repr=False)
    weights: np.ndarray = field(repr=False)
    offsets: np.ndarray = field(repr=False)

    @property
    def n(self) -> int:
        """Number of strings N."""
        return int(self.length.size)

    @property
    def width(self) -> int:
        """The longest length (columns of ``chars``)."""
        return int(self.chars.shape[1])

    @property
    def points(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The integrand's inputs ``(chars, length, stratum)``."""
        return self.chars, self.length, self.stratum

    @property
    def total_weight(self) -> Fraction:
        """Σ_h stratum_weights[h] (the value of the expectation of f ≡ 1)."""
        return sum(self.stratum_weights, Fraction(0))

    def rows(self, h: int) -> slice:
        """Return the rows of stratum ``h``."""
        if isinstance(h, bool) or not isinstance(h, numbers.Integral) or not 0 <= h < len(self.lengths):
            msg = f"h={h!r} is not a stratum index; valid indices are 0..{len(self.lengths) - 1}"
            raise InvalidArgument(msg)
        return slice(int(self.offsets[h]), int(self.offsets[h + 1]))

    def strings(self) -> Iterable[tuple[int, ...]]:
        """Each string as a tuple of ints, in row order."""
        for row, n in zip(self.chars, self.length, strict=True):
            yield tuple(int(c) for c in row[:n])

    def labels(self, rules: LabelRule | Sequence[LabelRule]) -> np.ndarray:
        """Labels in {+1, −1} (int64, one per string) from one rule or one rule per stratum."""
        if callable(rules):
            rules = [rules] * len(self.lengths)
        rules = list(rules)
        if len(rules) != len(self.lengths) or not all(callable(r) for r in rules):
            msg = (f"rules has {len(rules)} entries; pass one callable label rule, or one per stratum "
                   f"({len(self.lengths)})")
            raise InvalidArgument(msg)
        out = np.empty(self.n, dtype=np.int64)
        for h, rule in enumerate(rules):
            rows = self.rows(h)
            out[rows] = _apply_rule(rule, self.chars[rows, : self.lengths[h]], f"in stratum {h} (length "
                                    f"{self.lengths[h]})")
        return out

    def enumeration(self, integrand: Callable[..., np.ndarray]) -> Enumeration:
        """Return the exact Σ_h w_h·mean_h f as an :class:`~numerics.montecarlo.Enumeration` (se = 0)."""
        return Enumeration(self.points, integrand, weights=self.weights, normalise=False)

    def monte_carlo(
        self, integrand: Callable[..., np.ndarray], *, n: int | Sequence[int], seed: int, **kwargs: Any
    ) -> StratifiedMonteCarlo:
        """Return the same expectation by :class:`StratifiedMonteCarlo`: ``n`` uniform strings per stratum.

        ``kwargs`` go to each stratum's :class:`~numerics.montecarlo.MonteCarlo` (``chunk_size``,
        ``workers``, ``heavy_tail_share``, ``second_moment_finite``).
        """
        draws = [UniformStrings(self.alphabet, L, self.width, h) for h, L in enumerate(self.lengths)]
        return StratifiedMonteCarlo(draws, integrand, n=n, seed=seed,
                                    weights=[float(w) for w in self.stratum_weights], **kwargs)


def all_strings(
    alphabet: int,
    lengths: Sequence[int],
    *,
    stratum_weights: Sequence[Any] | None = None,
    max_points: int = MAX_POINTS,
) -> StringSet:
    """Enumerate every string of each length in ``lengths`` over {0..alphabet−1}.

    Parameters
    ----------
    alphabet : int
        k >= 1.
    lengths : sequence of int
        One stratum per entry (lengths >= 1; repeats make separate strata).
    stratum_weights : sequence of rationals, optional
        Total weight of each stratum (exact; default 1 each, so every length counts equally).
    max_points : int
        Refuse sets of more strings than this (the cost of enumeration is Σ_h k**L_h).
    """
    alphabet = _int("alphabet", alphabet, 1)
    if isinstance(lengths, numbers.Integral) or not isinstance(lengths, Sequence) or len(lengths) == 0:
        msg = f"lengths={lengths!r} must be a non-empty sequence of lengths, e.g. range(1, L_max + 1)"
        raise InvalidArgument(msg)
    lengths = tuple(_int("lengths", L, 1) for L in lengths)
    if stratum_weights is None:
        weights = tuple(Fraction(1) for _ in lengths)
    else:
        if len(stratum_weights) != len(lengths):
            msg = (f"stratum_weights has {len(stratum_weights)} entries for {len(lengths)} strata; "
                   "give one total weight per stratum")
            raise InvalidArgument(msg)
        weights = tuple(_rational("stratum_weights", w) for w in stratum_weights)
    max_points = _int("max_points", max_points, 1)
    total = sum(alphabet**L for L in lengths)
    if total > max_points:
        msg = (f"lengths={lengths!r} over an alphabet of {alphabet} give {total} strings > max_points="
               f"{max_points}; enumeration costs alphabet**L per length: shorten the lengths, raise "
               "max_points, or use StringSet.monte_carlo on a smaller set")
        raise InvalidArgument(msg)
    width = max(lengths)
    chars = np.full((total, width), PAD, dtype=np.int64)
    length = np.empty(total, dtype=np.int64)
    stratum = np.empty(total, dtype=np.int64)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    exact: list[Fraction] = []
    for h, (L, w) in enumerate(zip(lengths, weights, strict=True)):
        start, count = int(offsets[h]), alphabet**L
        chars[start:start + count, :L] = strings_of_length(alphabet, L)
        length[start:start + count] = L
        stratum[start:start + count] = h
        offsets[h + 1] = start + count
        exact.extend([w / count] * count)
    return StringSet(alphabet, lengths, weights, chars, length, stratum, tuple(exact),
                     np.array([float(w) for w in exact]), offsets)


class UniformStrings:
    """A ``draw(rng, size)`` of uniform strings of one length, in the layout of :class:`StringSet`.

    Returns ``(chars, length, stratum)``: ``chars`` (size, width) int64 padded with :data:`PAD`,
    ``length`` filled with ``length``, ``stratum`` filled with ``stratum``. A class, not a closure,
    so that it pickles.
    """

    def __init__(self, alphabet: int, length: int, width: int, stratum: int = 0) -> None:
        self.alphabet = _int("alphabet", alphabet, 1)
        self.length = _int("length", length, 1)
        self.width = _int("width", width, self.length)
        self.stratum = _int("stratum", stratum, 0)

    def __call__(self, rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Draw ``size`` strings: ``(chars, length, stratum)``."""
        chars = np.full((size, self.width), PAD, dtype=np.int64)
        chars[:, : self.length] = rng.integers(0, self.alphabet, size=(size, self.length), dtype=np.int64)
        return chars, np.full(size, self.length, dtype=np.int64), np.full(size, self.stratum, dtype=np.int64)


class _Stratum(MonteCarlo):
    """One stratum's Monte-Carlo: chunk i of stratum h draws from ``SeedSequence(seed, spawn_key=(h, i))``."""

    def __init__(self, h: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.h = h

    def chunk_rng(self, i: int) -> np.random.Generator:
        """Return the generator of chunk ``i`` of this stratum."""
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(self.h, i)))


class StratifiedMonteCarlo:
    """Monte-Carlo estimate of Σ_h w_h E_h[f] with independent samples in each stratum.

    Parameters
    ----------
    draws : sequence of callables
        ``draws[h](rng, size)``: the inputs of ``size`` draws from stratum h (as for
        :class:`~numerics.montecarlo.MonteCarlo`).
    integrand : callable
        ``integrand(*inputs, params)``, one float64 per draw; the same for every stratum.
    n : int or sequence of int
        Samples per stratum (at least 2 each).
    seed : int
        Root seed; stratum h, chunk i uses ``SeedSequence(seed, spawn_key=(h, i))``.
    weights : sequence of float, optional
        The stratum weights w_h (default 1 each: a sum of per-stratum means).
    **kwargs
        ``chunk_size``, ``workers``, ``heavy_tail_share``, ``second_moment_finite`` of each
        stratum's :class:`~numerics.montecarlo.MonteCarlo`.

    The estimate is Σ_h w_h f̄_h with se = √(Σ_h w_h² se_h²) (strata independent); ``n`` is the
    total number of draws, ``max_share`` the largest over strata and ``heavy_tail_suspect`` set
    when any stratum is suspect. :meth:`estimate_strata` gives the per-stratum estimates.
    """

    method = "stratified monte-carlo"

    def __init__(
        self,
        draws: Sequence[Callable[[np.random.Generator, int], Any]],
        integrand: Callable[..., np.ndarray],
        *,
        n: int | Sequence[int],
        seed: int,
        weights: Sequence[float] | None = None,
        **kwargs: Any,
    ) -> None:
        draws = list(draws)
        if not draws:
            msg = "draws is empty; pass one draw(rng, size) per stratum"
            raise InvalidArgument(msg)
        counts = [n] * len(draws) if isinstance(n, numbers.Integral) else list(n)
        if len(counts) != len(draws):
            msg = f"n has {len(counts)} entries for {len(draws)} strata; give one count, or one per stratum"
            raise InvalidArgument(msg)
        w = [1.0] * len(draws) if weights is None else [float(x) for x in weights]
        if len(w) != len(draws) or not all(math.isfinite(x) and x >= 0 for x in w):
            msg = f"weights={weights!r} must be {len(draws)} finite non-negative stratum weights"
            raise InvalidArgument(msg)
        self.strata = [_Stratum(h, draw, integrand, n=count, seed=seed, **kwargs)
                       for h, (draw, count) in enumerate(zip(draws, counts, strict=True))]
        self.weights = tuple(w)
        self.seed = self.strata[0].seed
        self.n = sum(s.n for s in self.strata)

    def _combine(self, per_stratum: Sequence[Estimate]) -> Estimate:
        mean = math.fsum(w * e.mean for w, e in zip(self.weights, per_stratum, strict=True))
        se = math.sqrt(math.fsum((w * e.se) ** 2 for w, e in zip(self.weights, per_stratum, strict=True)))
        share = max(e.max_share for e in per_stratum)
        suspect = any(e.heavy_tail_suspect for e in per_stratum)
        return Estimate(mean, se, self.n, self.method, share, suspect, self.seed)

    def estimate_strata(self, params: Any = ()) -> list[Estimate]:
        """Return the per-stratum estimates of E_h f at ``params`` (unweighted)."""
        return [s.estimate(params) for s in self.strata]

    def estimate(self, params: Any = ()) -> Estimate:
        """Return the estimate of Σ_h w_h E_h f at ``params``, with its standard error."""
        return self._combine(self.estimate_strata(params))

    def estimate_many(self, params_list: Iterable[Any]) -> list[Estimate]:
        """Return estimates at several parameter points from the same draws (common random numbers)."""
        params_list = list(params_list)
        per_stratum = [s.estimate_many(params_list) for s in self.strata]
        return [self._combine([column[j] for column in per_stratum]) for j in range(len(params_list))]
