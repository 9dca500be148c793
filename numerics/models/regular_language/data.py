"""The enumerated data sets of the regular-language paper (spec §2.1–2.3, §2.7, §2.9), with their labels.

Characters are ints: a = 0, b = 1 (c in the spec's idx(ℓ, c)). A data set holds every string of
each length of its loss terms (:func:`numerics.enumeration.all_strings`), with

* ``idx[n, ℓ] = 2ℓ + c_ℓ`` (0-based position ℓ, so E_ℓ^a = e_{2ℓ−1}, E_ℓ^b = e_{2ℓ} 1-based,
  spec §2.2), padded with −1 beyond the string's length (never read by the kernels);
* ``query[n] = idx[n, L_n − 1]`` (the query is the last token);
* ``weight_exact[n] = 1/|I_L| = 2^{−L}`` (Fraction) and ``weight`` (float64): each loss term's
  length carries total weight 1, and the loss is a sum over lengths of per-length means;
* ``y[n] ∈ {+1, −1}`` (float64) from the task's label rule.

Tasks and label rules (the rules act on an (n, L) array of strings of one length):

* ``ep`` — even pairs, P = {ab, ba}: y = +1 iff N_P is even, lengths 1..L_max. ``ep_count``:
  ``contiguous`` (canonical) counts occurrences of ab or ba as adjacent pairs, i.e. the number of
  character changes s_i ≠ s_{i+1}; ``subsequence`` counts occurrences as (not necessarily
  contiguous) subsequences, i.e. index pairs i < j with s_i ≠ s_j, which is n_a·n_b. On the
  paper's example aabba the contiguous count is 2 ("one ab and one ba") and the subsequence
  count is 6; both are even. Under ``contiguous`` the label is "first = last" (N_P counts the
  changes of a walk from s_1 to s_L); under ``subsequence`` every odd-length string is positive.
* ``parity`` — P = {b}: y = +1 iff the number of b's is even, lengths 1..L_max.
* ``cot`` — parity by CoT under teacher forcing (Sec. 5.2, Eq. (1)), L0 >= 2: the CoT term has
  lengths L0..L_max with y^p = +1 iff c_L = c_{ℓ0}, ℓ0 = L − L0 + 1 (``cot_max_len``: L_max =
  2L0−1 canonical, or 2L0−2); the regulariser term has lengths 1..L0−1 (``reg_max_len`` = L0−1,
  canonical) or 1..L0 (``L0``: length L0 then appears in both terms, as two strata with equal
  labels) with y^e = +1 iff c_L = c_1. The regulariser label is the printed "last token matches
  the first token" whatever ``ep_count`` says.

``dim``: ``"2*maxlen"`` (canonical: d = 2·longest length) or an integer d; every embedding index
the data use must be <= d (1-based), otherwise the data set is refused with the index named.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial

import numpy as np

from derivations.errors import InvalidArgument
from numerics.enumeration import StringSet, all_strings

TASKS = ("ep", "parity", "cot")
EP_COUNTS = ("contiguous", "subsequence")
COT_MAX_LENS = ("2L0-1", "2L0-2")
REG_MAX_LENS = ("L0-1", "L0")
DIM_DEFAULT = "2*maxlen"
#: the characters as ints (c in idx(ℓ, c) = 2ℓ + c)
A, B = 0, 1
#: the pad of ``idx`` beyond a string's length
PAD = -1
#: the largest L_max (or longest CoT length) accepted: 2^{L+1} strings are enumerated
MAX_LENGTH = 20


# ----------------------------------------------------------------------------------------------
# Literal counts (one string, a tuple of ints) and vectorised label rules ((n, L) int arrays)


def ep_count(s: tuple[int, ...], mode: str = "contiguous") -> int:
    """Return N_P for P = {ab, ba} by literal counting.

    ``contiguous``: adjacent pairs (s_i, s_{i+1}) that read ab or ba; ``subsequence``: index pairs
    i < j with (s_i, s_j) = ab or ba.
    """
    _choice("ep_count", mode, EP_COUNTS)
    if mode == "contiguous":
        return sum(1 for i in range(len(s) - 1) if s[i] != s[i + 1])
    return sum(1 for i in range(len(s)) for j in range(i + 1, len(s)) if s[i] != s[j])


def ep_label_literal(s: tuple[int, ...], mode: str = "contiguous") -> int:
    """+1 iff N_P (literal count, :func:`ep_count`) is even."""
    return 1 if ep_count(s, mode) % 2 == 0 else -1


def _pm(condition: np.ndarray) -> np.ndarray:
    return np.where(condition, 1, -1).astype(np.int64)


def ep_rule(chars: np.ndarray, mode: str = "contiguous") -> np.ndarray:
    """Return the EP labels of an (n, L) array: parity of the changes, or of n_a·n_b (``subsequence``)."""
    if mode == "contiguous":
        changes = (chars[:, 1:] != chars[:, :-1]).sum(axis=1)
        return _pm(changes % 2 == 0)
    n_b = (chars == B).sum(axis=1)
    return _pm((n_b * (chars.shape[1] - n_b)) % 2 == 0)


def first_last_rule(chars: np.ndarray) -> np.ndarray:
    """+1 iff c_L = c_1 (the regulariser label y^e; the EP label under ``contiguous``)."""
    return _pm(chars[:, 0] == chars[:, -1])


def parity_rule(chars: np.ndarray) -> np.ndarray:
    """+1 iff the number of b's is even."""
    return _pm((chars == B).sum(axis=1) % 2 == 0)


def cot_rule(chars: np.ndarray, L0: int) -> np.ndarray:
    """+1 iff c_L = c_{ℓ0} with ℓ0 = L − L0 + 1 (1-based), for strings of length L >= L0."""
    L = chars.shape[1]
    return _pm(chars[:, L - L0] == chars[:, -1])


# ----------------------------------------------------------------------------------------------
# Validation


def _choice(name: str, value, choices) -> str:
    if value not in choices:
        msg = f"{name}={value!r} is not a known reading; valid values: {', '.join(map(repr, choices))}"
        raise InvalidArgument(msg)
    return value


def _length(name: str, value, minimum: int, why: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        msg = f"{name}={value!r} must be an integer >= {minimum} ({why})"
        raise InvalidArgument(msg)
    return int(value)


def _dim(dim, longest: int) -> int:
    need = 2 * longest
    if dim == DIM_DEFAULT:
        return need
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1:
        msg = f"dim={dim!r} must be {DIM_DEFAULT!r} or a positive integer d"
        raise InvalidArgument(msg)
    if dim < need:
        # the first index that does not fit, named as the paper names embeddings (1-based)
        first = int(dim) + 1
        position, char = (first + 1) // 2, "a" if first % 2 else "b"
        msg = (f"dim={dim} is too small: the embedding E_{position}^{char} = e_{first} needs index {first} > "
               f"d={dim} (the longest string has length {longest}, so the data use indices up to {need}); "
               f"choose dim >= {need} or dim={DIM_DEFAULT!r}")
        raise InvalidArgument(msg)
    return int(dim)


# ----------------------------------------------------------------------------------------------
# The data set


@dataclass(frozen=True, eq=False)
class RLData:
    """One enumerated data set, built by :func:`ep_data`, :func:`parity_data`, :func:`cot_data`.

    Attributes
    ----------
    task : str
        ``ep``, ``parity`` or ``cot``.
    flags : dict
        The readings used (``ep_count``, ``cot_max_len``, ``reg_max_len``, ``dim``) with their values.
    strings : StringSet
        The enumeration (strata, exact per-string weights, characters).
    terms : tuple of str
        The loss term of each stratum: ``ep``, ``parity``, ``cot`` or ``reg``.
    idx : ndarray (N, L_max) int64
        Token indices 2ℓ + c (0-based), padded with −1.
    length, query : ndarray (N,) int64
        Lengths and the query's index idx[n, L_n − 1].
    y : ndarray (N,) float64
        Labels ±1.
    weight : ndarray (N,) float64
        2^{−L} (rounded from ``weight_exact``, which is exact for these weights).
    weight_exact : tuple of Fraction
        2^{−L}.
    dim : int
        d.
    rules : tuple of callables
        The label rule of each stratum (act on an (n, L) int array of strings of that length).
    L0 : int or None
        The CoT input length (``cot`` only).
    """

    task: str
    flags: dict
    strings: StringSet = field(repr=False)
    terms: tuple[str, ...]
    idx: np.ndarray = field(repr=False)
    length: np.ndarray = field(repr=False)
    query: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    weight: np.ndarray = field(repr=False)
    weight_exact: tuple[Fraction, ...] = field(repr=False)
    dim: int
    rules: tuple[Callable, ...] = field(repr=False, default=())
    L0: int | None = None

    @property
    def n(self) -> int:
        """Number of samples N."""
        return int(self.length.size)

    @property
    def L_max(self) -> int:
        """The longest length."""
        return int(self.idx.shape[1])

    @property
    def lengths(self) -> tuple[int, ...]:
        """The length of each stratum (a length appears twice when it is in two loss terms)."""
        return self.strings.lengths

    @property
    def chars(self) -> np.ndarray:
        """Characters (N, L_max) int64, a = 0, b = 1, padded with −1."""
        return self.strings.chars

    def term_of(self) -> np.ndarray:
        """Return the loss term of each sample (array of str)."""
        return np.array(self.terms, dtype=object)[self.strings.stratum]

    def classes(self) -> dict[tuple[str, int, int], np.ndarray]:
        """Return the sample indices of each class (term, L, y), in row order."""
        term = self.term_of()
        out: dict[tuple[str, int, int], np.ndarray] = {}
        for h, L in enumerate(self.lengths):
            rows = np.arange(self.n)[self.strings.rows(h)]
            for label in (1, -1):
                members = rows[self.y[rows] == label]
                if members.size:
                    out[(str(term[rows[0]]), L, label)] = members
        return out

    def string(self, n: int) -> str:
        """Return sample ``n`` as a string of a's and b's."""
        return "".join("ab"[c] for c in self.chars[n, : self.length[n]])


def _build(task: str, strata: list[tuple[int, str, Callable]], flags: dict, dim, L0: int | None = None
           ) -> RLData:
    lengths = [L for L, _, _ in strata]
    longest = max(lengths)
    d = _dim(dim, longest)
    strings = all_strings(2, lengths)
    y = strings.labels([rule for _, _, rule in strata]).astype(np.float64)
    positions = np.arange(strings.width, dtype=np.int64)
    idx = np.where(strings.chars >= 0, 2 * positions[None, :] + strings.chars, PAD)
    query = idx[np.arange(strings.n), strings.length - 1]
    terms = tuple(t for _, t, _ in strata)
    rules = tuple(rule for _, _, rule in strata)
    return RLData(task, {**flags, "dim": dim}, strings, terms, idx, strings.length.copy(), query, y,
                  strings.weights.copy(), strings.weights_exact, d, rules, L0)


def ep_data(L_max: int, *, ep_count: str = "contiguous", dim=DIM_DEFAULT) -> RLData:
    """Even pairs on all strings of lengths 1..L_max (spec §2.1, §2.3)."""
    L_max = _length("L_max", L_max, 2, "even pairs needs lengths >= 2 for negative samples")
    if L_max > MAX_LENGTH:
        msg = f"L_max={L_max} must be <= {MAX_LENGTH} (enumeration holds 2^(L_max+1) - 2 strings)"
        raise InvalidArgument(msg)
    _choice("ep_count", ep_count, EP_COUNTS)
    rule = partial(ep_rule, mode=ep_count)
    rule.__name__ = f"ep_{ep_count}"  # type: ignore[attr-defined]
    return _build("ep", [(L, "ep", rule) for L in range(1, L_max + 1)], {"ep_count": ep_count}, dim)


def parity_data(L_max: int, *, dim=DIM_DEFAULT) -> RLData:
    """Parity (y = +1 iff the number of b's is even) on all strings of lengths 1..L_max."""
    L_max = _length("L_max", L_max, 2, "parity needs lengths >= 2 to be non-trivial")
    if L_max > MAX_LENGTH:
        msg = f"L_max={L_max} must be <= {MAX_LENGTH} (enumeration holds 2^(L_max+1) - 2 strings)"
        raise InvalidArgument(msg)
    return _build("parity", [(L, "parity", parity_rule) for L in range(1, L_max + 1)], {}, dim)


def cot_data(L0: int, *, cot_max_len: str = "2L0-1", reg_max_len: str = "L0-1", dim=DIM_DEFAULT) -> RLData:
    """CoT training data of Eq. (1): regulariser lengths with y^e, then CoT lengths L0..L_max with y^p."""
    L0 = _length("L0", L0, 2, "Sec. 5.2 fixes L0 >= 2; the CoT key L - L0 + 1 must precede the query")
    _choice("cot_max_len", cot_max_len, COT_MAX_LENS)
    _choice("reg_max_len", reg_max_len, REG_MAX_LENS)
    L_max = 2 * L0 - 1 if cot_max_len == "2L0-1" else 2 * L0 - 2
    if L_max > MAX_LENGTH:
        msg = f"L0={L0} gives L_max={L_max} > {MAX_LENGTH} (enumeration holds about 2^(L_max+1) strings)"
        raise InvalidArgument(msg)
    reg_last = L0 - 1 if reg_max_len == "L0-1" else L0
    cot = partial(cot_rule, L0=L0)
    cot.__name__ = f"cot_L0_{L0}"  # type: ignore[attr-defined]
    strata = [(L, "reg", first_last_rule) for L in range(1, reg_last + 1)]
    strata += [(L, "cot", cot) for L in range(L0, L_max + 1)]
    return _build("cot", strata, {"cot_max_len": cot_max_len, "reg_max_len": reg_max_len}, dim, L0)


def make_data(task: str, **kwargs) -> RLData:
    """Build the data set of ``task``.

    ``ep`` takes (L_max, ep_count, dim), ``parity`` (L_max, dim), ``cot`` (L0, cot_max_len,
    reg_max_len, dim).
    """
    builders = {"ep": ep_data, "parity": parity_data, "cot": cot_data}
    _choice("task", task, TASKS)
    try:
        return builders[task](**kwargs)
    except TypeError as error:
        msg = f"task={task!r} does not take these arguments ({error}); see make_data's docstring"
        raise InvalidArgument(msg) from None
