"""Alias-table categorical draws and multinomial counts: laws, exact zeros, thread and split invariance."""

import itertools
import math
from fractions import Fraction
from itertools import pairwise

import numba
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats

from derivations.errors import InvalidArgument
from numerics import categorical as C
from numerics.rng import key_from_seed, stream_base

MASK = 2**64 - 1


@st.composite
def probability_vectors(draw, max_size=40):
    """Normalised vectors with exact zeros, tiny and huge weights side by side."""
    size = draw(st.integers(1, max_size))
    weight = st.one_of(st.just(0.0), st.floats(1e-300, 1e3), st.integers(1, 5).map(float))
    raw = draw(st.lists(weight, min_size=size, max_size=size).filter(lambda r: sum(r) > 0))
    return np.array(raw) / math.fsum(raw)


def implied_law(prob, alias):
    """P(category j) of the table, exactly: (prob_j + Σ_{i: alias_i = j} (1 - prob_i)) / K."""
    size = prob.size
    law = [Fraction(0)] * size
    for j in range(size):
        law[j] += Fraction(float(prob[j]))
        law[int(alias[j])] += 1 - Fraction(float(prob[j]))
    return [x / size for x in law]


def base_of(seed, stream=0):
    """Return the start of stream ``stream`` under the key of ``seed``, as the kernels take it."""
    return np.uint64(stream_base(key_from_seed(seed), stream))


@settings(deadline=None, max_examples=80)
@given(probability_vectors())
@example(np.array([0.0, 1.0, 0.0]))
@example(np.array([1.0]))
@example(np.array([1e-300, 0.0, 1.0 - 1e-300]))
def test_table_represents_p_to_its_resolution_and_never_reaches_a_zero(p):
    """The table's exact law is p/Σp to 1/(K·2⁵³), and a zero is neither kept nor an alias."""
    prob, alias = C.alias_table(p)
    size = p.size
    assert prob.dtype == np.float64 and alias.dtype == np.int64 and prob.shape == alias.shape == (size,)
    assert np.all((prob >= 0) & (prob <= 1)) and np.all((alias >= 0) & (alias < size))
    assert np.all(prob * 2.0**53 == np.floor(prob * 2.0**53))  # thresholds on the 2⁻⁵³ grid
    assert np.all(alias[prob == 1] == np.flatnonzero(prob == 1))
    total = sum(Fraction(float(x)) for x in p)
    for j, q in enumerate(implied_law(prob, alias)):
        assert abs(q - Fraction(float(p[j])) / total) < Fraction(1, size * 2**53), j
    zero = np.flatnonzero(p == 0)
    assert np.all(prob[zero] == 0)
    assert not set(alias[prob < 1].tolist()) & set(zero.tolist())  # nobody's alias


@settings(deadline=None)
@given(st.integers(0, MASK), st.integers(1, C.MAX_CATEGORIES))
@example(MASK, C.MAX_CATEGORIES)
def test_mulhi_is_the_high_half_of_the_128_bit_product(w, k):
    """The column of a draw is the high half of w·K, as Python's big integers compute it."""
    assert int(C.mulhi(np.uint64(w), np.uint64(k))) == (w * k) >> 64


def test_single_draws_add_up_to_multinomial_counts():
    """Counts are the histogram of single draws on the same counters."""
    prob, alias = C.alias_table([0.1, 0.0, 0.25, 0.65])
    base, counter0, n = base_of(3), 777, 4000
    draws = []
    counter = counter0
    for _ in range(n):
        j, counter = C.categorical(prob, alias, base, counter)
        draws.append(j)
    assert counter == counter0 + n
    out = np.full(4, -5, dtype=np.int64)
    assert C.multinomial_counts(prob, alias, n, base, counter0, out) == counter0 + n
    assert np.array_equal(out, np.bincount(draws, minlength=4))


def test_a_python_int_base_draws_like_its_uint64():
    """Numba hands a uint64 back to Python as int; passed back in, it is typed int64 below 2⁶³."""
    prob, alias = C.alias_table([0.2, 0.3, 0.5])
    bases = [stream_base(key_from_seed(seed), 0) for seed in range(8)]  # Python ints
    assert all(isinstance(base, int) for base in bases)
    for base in [b for b in bases if b < 2**63]:  # numba refuses the others with OverflowError
        for counter in (0, 1, 2**40):
            assert C.categorical(prob, alias, base, counter) == C.categorical(
                prob, alias, np.uint64(base), counter
            )


def test_counts_kernel_refuses_a_wrong_output_length():
    """A wrong ``out`` length is a status code, not a write."""
    prob, alias = C.alias_table([0.5, 0.5])
    out = np.full(3, 7, dtype=np.int64)
    assert C.multinomial_counts(prob, alias, 10, base_of(0), 0, out) == -1
    assert np.all(out == 7)


LAWS = {
    "uniform7": np.full(7, 1 / 7),
    "dirichlet100": np.random.default_rng(11).dirichlet(np.full(100, 2.0)),
    "rare": np.array([1e-3, 1 - 1e-3]),
    "zipf30": (lambda w: w / w.sum())(1.0 / np.arange(1, 31)),
    "with_zeros": np.array([0.0, 0.3, 0.0, 0.2, 0.5, 0.0]),
}


@pytest.mark.parametrize("name", sorted(LAWS))
def test_categorical_frequencies_pass_chi_square(name):
    """Frequencies of 2·10⁶ draws fit p (chi-square at a fixed seed)."""
    p = LAWS[name]
    prob, alias = C.alias_table(p)
    n = 2_000_000
    out = np.empty(p.size, dtype=np.int64)
    C.multinomial_counts(prob, alias, n, base_of(2026), 0, out)
    positive = p > 0
    assert np.all(out[~positive] == 0)
    expected = n * p[positive] / p[positive].sum()
    assert expected.min() > 50
    assert stats.chisquare(out[positive], expected).pvalue > 1e-3


def test_small_multinomial_matches_its_exact_law():
    """Every outcome of Multinomial(4, p) has its exact probability: draws within a sample are iid."""
    # every outcome of Multinomial(4, p): tests the joint law of the draws within a sample
    p, n, samples = np.array([0.2, 0.5, 0.3]), 4, 20_000
    counts = C.sample_counts(p, n, samples, seed=5)
    outcomes = [c for c in itertools.product(range(n + 1), repeat=3) if sum(c) == n]
    index = {c: i for i, c in enumerate(outcomes)}
    observed = np.bincount([index[tuple(row)] for row in counts.tolist()], minlength=len(outcomes))
    expected = samples * stats.multinomial.pmf(np.array(outcomes), n, p)
    assert expected.min() > 30
    assert stats.chisquare(observed, expected * samples / expected.sum()).pvalue > 1e-3


def test_multinomial_mean_and_covariance_within_standard_errors():
    """Mean n·p and covariance n(diag p - p pᵀ) within 4.5 standard errors."""
    p = np.random.default_rng(3).dirichlet(np.full(8, 3.0))
    n, samples, k_se = 2000, 20_000, 4.5
    counts = C.sample_counts(p, n, samples, seed=9)
    mean = n * p
    se_mean = np.sqrt(n * p * (1 - p) / samples)
    assert np.all(np.abs(counts.mean(axis=0) - mean) < k_se * se_mean)
    deviations = counts - mean
    products = deviations[:, :, None] * deviations[:, None, :]  # with the exact mean: unbiased
    covariance = n * (np.diag(p) - np.outer(p, p))
    se_cov = products.std(axis=0, ddof=1) / math.sqrt(samples)
    assert np.all(np.abs(products.mean(axis=0) - covariance) < k_se * se_cov)
    pooled = counts.sum(axis=0)
    assert stats.chisquare(pooled, samples * n * p * pooled.sum() / (samples * n * p).sum()).pvalue > 1e-3


def test_zero_probability_categories_are_never_drawn():
    """Categories of probability zero get no count, beside a positive 1e-9."""
    p = np.array([0.0, 1e-9, 0.0, 0.4, 0.0, 0.6 - 1e-9, 0.0])
    counts = C.sample_counts(p, 1000, 3000, seed=1)
    assert np.all(counts[:, p == 0] == 0)
    assert np.array_equal(C.sample_counts([0.0, 1.0, 0.0], 50, 10, seed=2)[:, 1], np.full(10, 50))


@settings(deadline=None, max_examples=40)
@given(
    probability_vectors(),
    st.integers(0, 300),
    st.integers(0, 20),
    st.integers(0, 2**32),
    st.integers(0, 2**40),
)
def test_counts_are_nonnegative_and_sum_to_n_exactly(p, n, samples, seed, stream):
    """Every row sums to n exactly, with no count in a zero category."""
    counts = C.sample_counts(p, n, samples, seed, stream=stream)
    assert counts.dtype == np.int64 and counts.shape == (samples, p.size)
    assert np.all(counts >= 0) and np.all(counts.sum(axis=1) == n)
    assert np.all(counts[:, p == 0] == 0)


def test_same_counts_at_every_thread_count():
    """One thread and all threads give the same array."""
    p = np.random.default_rng(1).dirichlet(np.ones(50))
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = C.sample_counts(p, 500, 4000, seed=7, stream=3)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = C.sample_counts(p, 500, 4000, seed=7, stream=3)
    finally:
        numba.set_num_threads(previous)
    assert np.array_equal(one, many)


def test_rows_are_the_serial_kernel_on_their_counter_blocks():
    """Parallel = serial: row r is the counts kernel on block (first_sample + r)·n."""
    p, n, seed, stream = np.array([0.1, 0.2, 0.3, 0.4]), 37, 4, 2
    prob, alias = C.alias_table(p)
    counts = C.sample_counts(p, n, 25, seed, stream=stream, first_sample=10)
    out = np.empty(4, dtype=np.int64)
    for r, row in enumerate(counts):
        C.multinomial_counts(prob, alias, n, base_of(seed, stream), (10 + r) * n, out)
        assert np.array_equal(row, out)


def test_two_halves_equal_one_call():
    """Samples 0-99 and 100-199 in two calls equal samples 0-199 in one."""
    p = np.random.default_rng(2).dirichlet(np.ones(20))
    whole = C.sample_counts(p, 300, 200, seed=8)
    halves = [C.sample_counts(p, 300, 100, seed=8, first_sample=first) for first in (0, 100)]
    assert np.array_equal(np.vstack(halves), whole)


@settings(deadline=None, max_examples=30)
@given(st.lists(st.integers(0, 60), max_size=5), st.integers(0, 40))
def test_any_split_into_calls_gives_the_same_samples(cuts, n):
    """Any split of 60 samples into calls gives the same rows."""
    p = np.array([0.05, 0.0, 0.45, 0.3, 0.2])
    edges = [0, *sorted(cuts), 60]
    whole = C.sample_counts(p, n, 60, seed=12, stream=1)
    parts = [C.sample_counts(p, n, b - a, seed=12, stream=1, first_sample=a) for a, b in pairwise(edges)]
    assert np.array_equal(np.vstack(parts), whole)


def test_equal_seeds_reproduce_and_other_seeds_or_streams_differ():
    """Equal seeds reproduce; another seed or stream gives other counts."""
    p = np.full(10, 0.1)
    reference = C.sample_counts(p, 100, 50, seed=5)
    assert np.array_equal(reference, C.sample_counts(p, 100, 50, seed=5))
    assert np.array_equal(reference, C.sample_counts(p, 100, 50, seed=np.random.SeedSequence(5)))
    assert not np.array_equal(reference, C.sample_counts(p, 100, 50, seed=6))
    assert not np.array_equal(reference, C.sample_counts(p, 100, 50, seed=5, stream=1))


def test_degenerate_sizes():
    """One category, zero trials and zero samples."""
    assert np.array_equal(C.sample_counts([1.0], 17, 3, seed=0), np.full((3, 1), 17))
    assert np.array_equal(C.sample_counts([0.5, 0.5], 0, 4, seed=0), np.zeros((4, 2), dtype=np.int64))
    assert C.sample_counts([0.5, 0.5], 10, 0, seed=0).shape == (0, 2)


@pytest.mark.parametrize(
    ("p", "match"),
    [
        ([[0.5, 0.5]], r"p must be a non-empty 1-D array.*shape \(1, 2\)"),
        ([], r"p must be a non-empty 1-D array.*shape \(0,\)"),
        ([0.5, -0.1, 0.6], r"p\[1\]=-0.1 must be non-negative"),
        ([float("nan"), 1.0], r"p\[0\]=nan must be finite"),
        ([0.5, float("inf")], r"p\[1\]=inf must be finite"),
        ([0.5, 0.4], r"sum\(p\)=0.9 must be within 1e-12 of 1"),
        ([0.5, 0.5 + 1e-11], r"sum\(p\)=1.00000000001 must be within 1e-12 of 1"),
        ([0.5 + 0j, 0.5], r"p must be real"),
        (["a", "b"], r"p=\['a', 'b'\] must be a 1-D array of probabilities"),
    ],
)
def test_bad_probabilities_are_named(p, match):
    """Bad probability vectors are refused, naming p, the entry and the rule."""
    with pytest.raises(InvalidArgument, match=match):
        C.alias_table(p)
    with pytest.raises(InvalidArgument, match=match):
        C.sample_counts(p, 10, 2, seed=0)


def test_sum_within_tolerance_is_accepted():
    """A sum within 1e-12 of 1 is accepted."""
    prob, _ = C.alias_table([0.5, 0.5 + 1e-13])
    assert prob.size == 2


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_trials": -1}, "n_trials=-1 must be an integer"),
        ({"n_trials": 1.5}, "n_trials=1.5 must be an integer"),
        ({"n_trials": True}, "n_trials=True must be an integer"),
        ({"n_samples": -3}, "n_samples=-3 must be an integer"),
        ({"n_samples": "4"}, "n_samples='4' must be an integer"),
        ({"stream": -1}, "stream=-1 must be an integer"),
        ({"stream": 2**64}, r"stream=18446744073709551616 must be an integer in \[0, 2\*\*63 - 1\]"),
        ({"first_sample": -2}, "first_sample=-2 must be an integer"),
        ({"seed": -1}, "seed=-1"),
        ({"first_sample": 2**62, "n_trials": 4}, r"beyond 2\*\*63 - 1; use another stream"),
    ],
)
def test_bad_sizes_seeds_and_streams_are_named(kwargs, match):
    """Bad sizes, seeds and streams are refused, naming the parameter."""
    arguments = {"n_trials": 10, "n_samples": 2, "seed": 0} | kwargs
    with pytest.raises(InvalidArgument, match=match):
        C.sample_counts([0.5, 0.5], **arguments)
