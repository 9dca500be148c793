"""The enumerated data sets of the regular-language paper: strings, labels, weights (spec §2.1–2.3, §2.7).

Every string of every length is present (I_L = {a, b}^L, Sec. 4 and Sec. 5.2); a sample of
length L weighs 1/|I_L| = 2^{-L}, so the loss is a sum over lengths of per-length means.
Nothing here is sampled: every expectation of the paper is a finite sum over these samples.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import sympy as sp

from derivations.errors import InvalidArgument
from derivations.regular_language.symbols import check_reading

CHARS = ("a", "b")
#: the ±1 encoding of the CoT parts: "we equate 1 with token a and -1 with token b"
SIGN = {"a": 1, "b": -1}
FLIP = {"a": "b", "b": "a"}


def strings(length: int) -> list[tuple[str, ...]]:
    """All 2^length strings over {a, b}, in lexicographic order."""
    return list(itertools.product(CHARS, repeat=length))


def pair_count(s, mode: str = "contiguous") -> int:
    """N_P for P = {ab, ba}: contiguous occurrences (adjacent changes) or ordered subsequences i < j."""
    check_reading("ep_count", mode)
    if mode == "contiguous":
        return sum(s[i] != s[i + 1] for i in range(len(s) - 1))
    return sum(s[i] != s[j] for i in range(len(s)) for j in range(i + 1, len(s)))


def ep_label(s, mode: str = "contiguous") -> int:
    """The even-pairs label from its definition (Sec. 3): +1 iff N_P is even."""
    return 1 if pair_count(s, mode) % 2 == 0 else -1


def first_last_label(s) -> int:
    """The label Sec. 3 says EP is equivalent to: +1 iff the first and last tokens are equal."""
    return 1 if s[0] == s[-1] else -1


def parity_label(s) -> int:
    """Parity check: +1 iff the number of b's is even."""
    return 1 if s.count("b") % 2 == 0 else -1


def cot_label(s, L0: int) -> int:
    """The CoT label y^p (Sec. 5.2): +1 iff the last token equals the token at ℓ0 = L - L0 + 1."""
    l0 = len(s) - L0 + 1
    if l0 < 1:
        raise InvalidArgument(f"length {len(s)} < L0={L0}: a CoT label needs L >= L0")
    return 1 if s[l0 - 1] == s[-1] else -1


def key_position(length: int, L0: int | None) -> int:
    """k_L: 1 for EP and for L <= L0, ℓ0 = L - L0 + 1 for CoT lengths L > L0 (spec §1)."""
    if L0 is None or length <= L0:
        return 1
    return length - L0 + 1


@dataclass(frozen=True)
class Sample:
    """One training sample: its characters, label, loss weight and the key position of its label."""

    chars: tuple[str, ...]
    label: int
    weight: sp.Rational
    key: int = 1

    @property
    def length(self) -> int:
        """L, the number of tokens."""
        return len(self.chars)


@dataclass(frozen=True)
class Dataset:
    """An enumerated training set: the samples of every loss term, and how it was built."""

    name: str
    samples: tuple[Sample, ...]
    max_len: int
    reading: dict = field(default_factory=dict)
    L0: int | None = None

    def lengths(self) -> list[int]:
        """The distinct lengths, in increasing order."""
        return sorted({s.length for s in self.samples})

    def multiplicity(self, length: int) -> int:
        """How many loss terms hold all strings of ``length`` (2 for L0 under reg_max_len = L0)."""
        return sum(1 for s in self.samples if s.length == length) // 2**length

    def dimension(self, dim: int | None = None) -> int:
        """d: 2·max_len by default (flag ``dim``); a given d must hold every embedding index used."""
        if dim is None:
            return 2 * self.max_len
        if dim < 2 * self.max_len:
            msg = (f"dim={dim} is too small: embedding index E_{self.max_len}^b = e_{2 * self.max_len} is "
                   f"needed by the length-{self.max_len} samples; choose dim >= {2 * self.max_len}")
            raise InvalidArgument(msg)
        return dim


def _weight(length: int) -> sp.Rational:
    return sp.Rational(1, 2**length)


def ep_dataset(max_len: int, ep_count: str = "contiguous") -> Dataset:
    """EP data: all strings of length 1..max_len with the EP label counted by ``ep_count``."""
    check_reading("ep_count", ep_count)
    if max_len < 1:
        raise InvalidArgument(f"max_len={max_len} must be >= 1")
    samples = tuple(Sample(s, ep_label(s, ep_count), _weight(n)) for n in range(1, max_len + 1) for s in strings(n))
    return Dataset(f"EP(L_max={max_len}, {ep_count})", samples, max_len, {"ep_count": ep_count})


def cot_max_length(L0: int, cot_max_len: str = "2L0-1") -> int:
    """The longest CoT length: 2L0 - 1, or 2L0 - 2 (flag ``cot_max_len``)."""
    check_reading("cot_max_len", cot_max_len)
    return 2 * L0 - 1 if cot_max_len == "2L0-1" else 2 * L0 - 2


def cot_dataset(L0: int, cot_max_len: str = "2L0-1", reg_max_len: str = "L0-1", regulariser: bool = True) -> Dataset:
    """Parity-by-CoT data, Eq. (1): L_CoT on lengths L0..L_max with y^p, plus L_Reg with y^e (EP labels).

    ``regulariser=False`` gives L_CoT alone (Sec. 5.2's vanishing-gradient observation). Under
    ``reg_max_len = L0`` length L0 appears in both terms (its two labels coincide there).
    """
    check_reading("reg_max_len", reg_max_len)
    if L0 < 2:
        raise InvalidArgument(f"L0={L0} must be >= 2 (Sec. 5.2 fixes L0 >= 2)")
    top = cot_max_length(L0, cot_max_len)
    samples = [Sample(s, cot_label(s, L0), _weight(n), key_position(n, L0))
               for n in range(L0, top + 1) for s in strings(n)]
    if regulariser:
        reg_top = L0 - 1 if reg_max_len == "L0-1" else L0
        samples += [Sample(s, first_last_label(s), _weight(n), 1) for n in range(1, reg_top + 1) for s in strings(n)]
    name = f"CoT(L0={L0}, {cot_max_len}, {reg_max_len}{'' if regulariser else ', no regulariser'})"
    reading = {"cot_max_len": cot_max_len, "reg_max_len": reg_max_len}
    return Dataset(name, tuple(samples), top, reading, L0)


def class_counts(dataset: Dataset, length: int, position: int, char: str, query: str | None = None):
    """(N^+, N^-): samples of ``length`` with ``char`` at ``position`` (and ``query`` last), by label."""
    plus = minus = 0
    for s in dataset.samples:
        if s.length != length or s.chars[position - 1] != char or (query is not None and s.chars[-1] != query):
            continue
        plus += s.label == 1
        minus += s.label == -1
    return plus, minus
