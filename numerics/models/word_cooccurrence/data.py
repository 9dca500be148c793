r"""Word co-occurrence data (spec §2.1, §2.2, §2.8): 𝒟 (Def. 2.1), training and test sets, regimes.

Tokens are integer indices 0..d−1 of the one-hot vocabulary μ_i = e_i (spec §2.1), shifted by one:

* 0 ↔ μ₁ and 1 ↔ μ₂ (the target words),
* 2 ↔ μ₃ (the common token, exactly once in every sample),
* 3, 4, … ↔ μ₄, μ₅, … (the random tokens ℛ).

A sample of type k (group I_k) holds μ₃ at a uniform position and then: type 1 (y = +1) μ₁ and μ₂, type 2
(y = −1) μ₁ only, type 3 (y = −1) μ₂ only, type 4 (y = −1) neither, at distinct uniform positions among the
rest. Its other positions are random slots, L−3, L−2, L−2, L−1 of them (:func:`random_slots`). Positions come
from one uniform permutation of [L] per sample: its first entry is i₃, the next ones the targets' positions
(i₁, then i₂), which is steps 1–2 of spec §2.2 exactly.

Training sets (:func:`build_dataset`) have exact group counts (|I₁|, |I₂|, |I₃|, |I₄|) and store the groups
in the order 1, 2, 3, 4 (contiguous blocks). Option ``random_tokens``:

* ``unique`` (canonical) — the random slots get 3, 4, 5, … in order (samples in order, positions left to
  right), so Assumption 2.3 (ii) holds; it needs d >= :func:`required_vocabulary`;
* ``iid`` — Def. 2.1 literally: every random slot is uniform over 3..d−1, independently;
* ``iid_distinct_within_sample`` — uniform without replacement inside a sample, independent across samples.

Randomness: ``default_rng(SeedSequence([seed, stream]))`` with stream 0 for training sets and 1 for test
sets. Positions are drawn before the random tokens, so one seed gives the same positions under every
``random_tokens`` option. Test sets (:func:`test_set`, option ``test_tokens``) draw each sample's type with
the probabilities 1/2, 1/6, 1/6, 1/6 of Def. 2.1. :data:`REGIMES` holds the named parameter sets of spec
§2.8, with Figure 1's configuration (§7.1).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from derivations.errors import InvalidArgument

#: token indices of μ₁, μ₂, μ₃ and of the first random token μ₄
MU1, MU2, MU3, FIRST_RANDOM = 0, 1, 2, 3
#: the sample types (groups I₁…I₄), their labels and their probabilities under 𝒟 (Def. 2.1)
GROUPS = (1, 2, 3, 4)
LABELS = (1, -1, -1, -1)
GROUP_PROBABILITIES = (1 / 2, 1 / 6, 1 / 6, 1 / 6)
#: the target tokens of each type, placed after μ₃ in a sample's position permutation
TARGETS = ((MU1, MU2), (MU1,), (MU2,), ())
RANDOM_TOKENS = ("unique", "iid", "iid_distinct_within_sample")
TEST_TOKENS = ("unseen", "uniform_all")
_TRAIN_STREAM, _TEST_STREAM = 0, 1

Counts = tuple[int, int, int, int]


@dataclass(frozen=True, eq=False)
class Dataset:
    """n samples of L tokens over the vocabulary 0..d−1 (module docstring): ``tokens`` (n × L, int32),
    ``labels`` (±1, int8) and ``groups`` (the type 1–4 of each sample, int8); the arrays are read-only."""

    tokens: np.ndarray
    labels: np.ndarray
    groups: np.ndarray
    d: int

    def __post_init__(self):
        d = _integer("d", self.d, FIRST_RANDOM, "μ₁, μ₂ and μ₃ are the tokens 0, 1, 2")
        tokens, labels, groups = (np.asarray(a) for a in (self.tokens, self.labels, self.groups))
        if tokens.ndim != 2 or tokens.shape[0] < 1 or tokens.shape[1] < 3 or not _is_integer(tokens):
            raise InvalidArgument(f"tokens (shape {tokens.shape}, dtype {tokens.dtype}) must be an integer "
                                  f"n × L array with n >= 1 and L >= 3")
        if np.any((tokens < 0) | (tokens >= d)):
            raise InvalidArgument(f"tokens must lie in [0, d={d}); got values in "
                                  f"[{tokens.min()}, {tokens.max()}]")
        n = tokens.shape[0]
        if groups.shape != (n,) or not _is_integer(groups) or not np.all(np.isin(groups, GROUPS)):
            raise InvalidArgument(f"groups must be n={n} integers in {{1, 2, 3, 4}}; got shape "
                                  f"{groups.shape}")
        if labels.shape != (n,) or not np.array_equal(labels, np.asarray(LABELS)[groups - 1]):
            raise InvalidArgument(f"labels must be n={n} values +1 (type 1) or −1 (types 2–4) matching "
                                  f"groups")
        for name, array, dtype in (("tokens", tokens, np.int32), ("labels", labels, np.int8),
                                   ("groups", groups, np.int8)):
            owned = np.array(array, dtype=dtype)
            owned.setflags(write=False)
            object.__setattr__(self, name, owned)
        object.__setattr__(self, "d", d)

    @property
    def n(self) -> int:
        return self.tokens.shape[0]

    @property
    def L(self) -> int:
        return self.tokens.shape[1]

    @property
    def counts(self) -> Counts:
        """(|I₁|, |I₂|, |I₃|, |I₄|)."""
        return tuple(int(c) for c in np.bincount(self.groups, minlength=5)[1:])

    def group_indices(self, k: int) -> np.ndarray:
        """The sample indices of group I_k, k ∈ {1, 2, 3, 4}, in increasing order."""
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k not in GROUPS:
            raise InvalidArgument(f"k={k!r} must be a group 1, 2, 3 or 4")
        return np.flatnonzero(self.groups == k)


def random_slots(L: int) -> tuple[int, int, int, int]:
    """Random-token slots of a sample of type 1, 2, 3, 4: (L−3, L−2, L−2, L−1) (spec §2.2)."""
    L = _length(L)
    return tuple(L - 1 - len(targets) for targets in TARGETS)


def required_vocabulary(counts, L: int) -> int:
    """The smallest d of Assumption 2.3 (ii) (dataset option ``unique``): 3 + Σ_k |I_k|·(random slots of type
    k), which is 3 + n(L − 7/3) for the split 1/2, 1/6, 1/6, 1/6 (spec §2.2)."""
    counts = _counts(counts)
    return FIRST_RANDOM + sum(c * s for c, s in zip(counts, random_slots(L), strict=True))


def build_dataset(counts, L: int, d: int, seed: int, random_tokens: str = "unique") -> Dataset:
    """A training set with exact group counts ``counts`` = (|I₁|, |I₂|, |I₃|, |I₄|), groups in order 1–4, μ₃
    and the targets at uniform positions (spec §2.2 steps 1–2), random slots filled by ``random_tokens``
    (module docstring). The same arguments give the same arrays bit for bit."""
    counts, L = _counts(counts), _length(L)
    option = _option("random_tokens", random_tokens, RANDOM_TOKENS)
    d = _training_vocabulary(d, counts, L, option)
    rng = _rng(seed, _TRAIN_STREAM)
    groups = np.repeat(np.array(GROUPS, dtype=np.int8), counts)
    tokens = _place_targets(rng, groups, L)
    _fill_random(rng, tokens, option, FIRST_RANDOM, d)
    return Dataset(tokens, np.asarray(LABELS, dtype=np.int8)[groups - 1], groups, d)


def test_set(train: Dataset, n_test: int, seed: int, test_tokens: str = "unseen", d_total: int | None = None
             ) -> Dataset:
    """``n_test`` fresh samples of 𝒟 (types drawn with probabilities 1/2, 1/6, 1/6, 1/6) with the training
    set's L, for the generalization loss (spec §2.2 "Test data"). ``test_tokens``:

    * ``unseen`` (canonical) — the random slots get fresh tokens in order, starting after the training set's
      largest token, none of them used in training; n_test·(L−1) entries are allocated, so the returned d is
      max(train.d, largest training token + 1 + n_test·(L−1)), a vocabulary covering both sets, unless
      ``d_total`` (at least that) is given. Under the flow, unseen tokens keep their exchangeable initial
      embeddings, so distinct fresh tokens are 𝒟's random tokens over a vocabulary without repeats.
    * ``uniform_all`` — Def. 2.1 literally: every random slot uniform over 3..d−1 with d = ``d_total``
      (default: the training vocabulary ``train.d``); tokens may be training tokens.
    """
    if not isinstance(train, Dataset):
        raise InvalidArgument(f"train must be a Dataset; got {type(train).__name__}")
    n_test = _integer("n_test", n_test, 1, "the number of test samples")
    option = _option("test_tokens", test_tokens, TEST_TOKENS)
    if option == "unseen":
        first = max(int(train.tokens.max()) + 1, FIRST_RANDOM)
        why = (f"test_tokens='unseen' allocates n_test·(L−1) = {n_test}·{train.L - 1} tokens after the "
               f"largest training token {first - 1}, in a vocabulary of at least the training d={train.d}")
        d = _test_vocabulary(d_total, max(train.d, first + n_test * (train.L - 1)), why)
    else:
        first = FIRST_RANDOM
        d = _test_vocabulary(d_total, max(train.d, FIRST_RANDOM + 1),
                             f"test_tokens='uniform_all' draws over the training vocabulary d={train.d} or a "
                             f"larger one, with at least one random token")
    rng = _rng(seed, _TEST_STREAM)
    groups = (rng.choice(len(GROUPS), size=n_test, p=GROUP_PROBABILITIES) + 1).astype(np.int8)
    tokens = _place_targets(rng, groups, train.L)
    _fill_random(rng, tokens, "unique" if option == "unseen" else "iid", first, d)
    return Dataset(tokens, np.asarray(LABELS, dtype=np.int8)[groups - 1], groups, d)


test_set.__test__ = False  # a library function: pytest must not collect it where a test module imports it


def assumption_2_3(dataset: Dataset) -> dict:
    """Assumption 2.3 on a data set (spec §2.2): (i) group fractions exactly 1/2, 1/6, 1/6, 1/6 (so 6 | n),
    (ii) all random tokens distinct across the set; also whether no token repeats inside a sample (the
    position map l(i, μ) is single-valued) and the vocabulary ``unique`` would need."""
    n, counts = dataset.n, dataset.counts
    fractions = n % 6 == 0 and counts == (n // 2, n // 6, n // 6, n // 6)
    random = dataset.tokens[dataset.tokens >= FIRST_RANDOM]
    rows = np.sort(dataset.tokens, axis=1)
    distinct = np.unique(random).size == random.size
    return {
        "n": n, "counts": counts, "d": dataset.d, "d_required_unique": required_vocabulary(counts, dataset.L),
        "i_fractions": bool(fractions), "ii_distinct_random_tokens": bool(distinct),
        "position_map_single_valued": not bool(np.any(rows[:, 1:] == rows[:, :-1])),
        "holds": bool(fractions and distinct),
    }


# ----------------------------------------------------------------------------------------------
# Sampling


def _rng(seed, stream: int) -> np.random.Generator:
    seed = _integer("seed", seed, 0, "the entropy of a SeedSequence")
    return np.random.default_rng(np.random.SeedSequence([seed, stream]))


def _place_targets(rng: np.random.Generator, groups: np.ndarray, L: int) -> np.ndarray:
    """Tokens (n × L, int32) with μ₃ at order[:, 0] and the targets of each type at order[:, 1], order[:, 2],
    where order is a uniform permutation of [L] per sample (spec §2.2 steps 1–2); −1 marks random slots."""
    n = groups.size
    order = rng.permuted(np.tile(np.arange(L), (n, 1)), axis=1)
    tokens = np.full((n, L), -1, dtype=np.int32)
    rows = np.arange(n)
    tokens[rows, order[:, 0]] = MU3
    for k, targets in zip(GROUPS, TARGETS, strict=True):
        members = rows[groups == k]
        for j, target in enumerate(targets, start=1):
            tokens[members, order[members, j]] = target
    return tokens


def _fill_random(rng: np.random.Generator, tokens: np.ndarray, option: str, low: int, high: int) -> None:
    """Fill the random slots (−1) of ``tokens`` in place, row-major: ``unique`` gives low, low+1, … in order;
    ``iid`` independent uniform draws over [low, high); ``iid_distinct_within_sample`` draws without
    replacement inside each row."""
    slots = tokens < 0
    count = int(slots.sum())
    if option == "unique":
        tokens[slots] = low + np.arange(count)
    elif option == "iid":
        tokens[slots] = rng.integers(low, high, size=count)
    else:
        per_row = [low + rng.choice(high - low, size=s, replace=False) for s in slots.sum(axis=1)]
        tokens[slots] = np.concatenate(per_row)


# ----------------------------------------------------------------------------------------------
# Validation


def _is_integer(array: np.ndarray) -> bool:
    return np.issubdtype(array.dtype, np.integer)


def _integer(name: str, value, minimum: int, why: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise InvalidArgument(f"{name}={value!r} must be an integer >= {minimum} ({why})")
    return int(value)


def _length(L) -> int:
    return _integer("L", L, 3, "μ₁, μ₂ and μ₃ occupy three positions of a type-1 sample")


def _option(name: str, value, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        valid = ", ".join(map(repr, choices))
        raise InvalidArgument(f"{name}={value!r} is not a known option; valid values: {valid}")
    return value


def _counts(counts) -> Counts:
    values = tuple(counts) if isinstance(counts, (tuple, list, np.ndarray)) else ()
    bad = any(isinstance(c, bool) or not isinstance(c, numbers.Integral) or c < 0 for c in values)
    if len(values) != 4 or bad:
        raise InvalidArgument(f"counts={counts!r} must be four integers >= 0, the group sizes "
                              f"(|I1|, |I2|, |I3|, |I4|)")
    if sum(values) == 0:
        raise InvalidArgument(f"counts={counts!r} give n=0; at least one group must be non-empty")
    return tuple(int(c) for c in values)


def _training_vocabulary(d, counts: Counts, L: int, option: str) -> int:
    """d, checked against the smallest vocabulary ``option`` can fill (the message names d, the bound and
    its formula; every bound is >= 3, the tokens μ₁, μ₂, μ₃)."""
    d = _integer("d", d, 1, "the vocabulary size")
    slots = random_slots(L)
    if option == "unique":
        bound = required_vocabulary(counts, L)
        terms = " + ".join(f"{c}·{s}" for c, s in zip(counts, slots, strict=True))
        formula = (f"d >= 3 + Σ_k |I_k|·(random slots of type k) = 3 + {terms} = {bound} (slots L−3, L−2, "
                   f"L−2, L−1 of types 1–4; 3 + n(L − 7/3) for the split 1/2, 1/6, 1/6, 1/6; spec §2.2)")
        hint = "use a larger d or random_tokens='iid'"
        why = "Assumption 2.3 (ii), all random tokens distinct, needs"
    elif option == "iid":
        bound = FIRST_RANDOM + 1
        formula = f"d >= {bound} (at least the random token μ₄)"
        hint, why = "use a larger d", "drawing random tokens from 3..d−1 needs"
    else:
        widest = max(1, *(s for c, s in zip(counts, slots, strict=True) if c > 0))
        bound = FIRST_RANDOM + widest
        formula = f"d >= 3 + max(1, most random slots of a sample) = 3 + {widest} = {bound}"
        hint, why = "use a larger d or random_tokens='iid'", "distinct random tokens inside a sample need"
    if d < bound:
        raise InvalidArgument(f"d={d} is too small for random_tokens={option!r}: {why} {formula}; {hint}")
    return d


def _test_vocabulary(d_total, bound: int, why: str) -> int:
    if d_total is None:
        return bound
    d_total = _integer("d_total", d_total, FIRST_RANDOM, "μ₁, μ₂ and μ₃ are the tokens 0, 1, 2")
    if d_total < bound:
        raise InvalidArgument(f"d_total={d_total} is below the bound {bound}: {why}")
    return d_total


# ----------------------------------------------------------------------------------------------
# Named regimes (spec §2.8, §7.1)


@dataclass(frozen=True)
class Regime:
    """A named parameter set of spec §2.8, values as printed; tuples list the values a regime sweeps.

    ``counts`` and ``d``: the group counts (|I₁|, …, |I₄|) and vocabulary of each of the regime's data sets
    (aligned; empty where the regime has no data set); ``kappa``: the (κ₀, κ₁) pairs of ``init`` =
    ``gaussian_kappa`` (σ₀ = κ₀/√(Lm), σ₁ = κ₁/√m₁, spec §2.4); ``sigma``: (σ₀, σ₁) of ``gaussian_sigma``;
    ``random_tokens``: the dataset options, canonical first; ``output_weights``: the fixed a (None: a drawn
    from Uniform(±1)^{m₁}); ``t_end_factor``: the Phase-2 horizon T_end(m) = t_end_factor·m (spec §2.7).
    """

    name: str
    L: int
    counts: tuple[Counts, ...]
    d: tuple[int, ...]
    m: tuple[int, ...]
    m1: int
    init: str
    kappa: tuple[tuple[float, float], ...] = ()
    sigma: tuple[float, float] | None = None
    random_tokens: tuple[str, ...] = ("unique",)
    output_weights: tuple[int, ...] | None = None
    t_end_factor: int | None = None

    @property
    def n(self) -> tuple[int, ...]:
        return tuple(sum(c) for c in self.counts)

    def t_end(self, m: int) -> int:
        """T_end(m) = 4m, the end of every Phase-2 run (spec §2.7)."""
        if self.t_end_factor is None:
            raise InvalidArgument(f"regime {self.name!r} has no Phase-2 horizon T_end(m) = 4m (spec §2.7)")
        return self.t_end_factor * _integer("m", m, 1, "the embedding dimension")


#: ``harness`` — closed-form identity tests (3 tokens unused), a = (+1, −1, +1, −1) at seed 0, other seeds
#: draw a with both signs; ``symbolic`` — any one-hot sequence of distinct tokens, no data set, evaluated at
#: a random rational point; ``A``, ``B`` — Phases 1 and 2 at d = required_vocabulary; ``init`` — t = 0
#: quantities at n ∈ {24, 600} (d = required_vocabulary, the toolkit's choice) for m = 128…8192 (the budgets
#: of §2.9 take subsets), κ₀ = κ₁ = κ; ``fig1`` — Figure 1's data and sizes (App. A), Kaiming matrices,
#: ``iid`` canonical because ``unique`` needs d >= 163.
REGIMES: dict[str, Regime] = {
    "harness": Regime("harness", L=4, counts=((3, 1, 1, 1),), d=(16,), m=(5,), m1=4, init="gaussian_sigma",
                      sigma=(0.7, 0.6), output_weights=(1, -1, 1, -1)),
    "symbolic": Regime("symbolic", L=3, counts=(), d=(3,), m=(2,), m1=2, init="rational_point",
                       random_tokens=(), output_weights=(1, -1)),
    "A": Regime("A", L=4, counts=((12, 4, 4, 4),), d=(43,), m=(128, 256, 512, 1024, 2048), m1=8,
                init="gaussian_kappa", kappa=((0.5, 0.5),), t_end_factor=4),
    "B": Regime("B", L=4, counts=((300, 100, 100, 100),), d=(1003,), m=(128, 256, 512, 1024), m1=8,
                init="gaussian_kappa", kappa=((0.25, 0.5),), t_end_factor=4),
    "init": Regime("init", L=4, counts=((12, 4, 4, 4), (300, 100, 100, 100)), d=(43, 1003),
                   m=(128, 256, 512, 1024, 2048, 4096, 8192), m1=8, init="gaussian_kappa",
                   kappa=tuple((k, k) for k in (0.5, 0.25, 0.1, 0.05, 0.02))),
    "fig1": Regime("fig1", L=5, counts=((30, 10, 10, 10),), d=(64,), m=(128,), m1=256, init="kaiming_normal",
                   random_tokens=("iid", "iid_distinct_within_sample")),
}
