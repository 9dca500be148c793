"""Counter-based generator: SplitMix64 words, ziggurat normals, thread- and batching-independence."""

import math

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from derivations.errors import InvalidArgument
from numerics import rng as R

MASK = 2**64 - 1
GAMMA = 0x9E3779B97F4A7C15


def mix64_reference(z: int) -> int:
    """Stafford's Mix13, in Python integers (the SplitMix64 finaliser)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def test_first_splitmix64_output_from_state_zero():
    # SplitMix64 seeded with 0 first returns 0xE220A8397B1DCDAF (Vigna's reference implementation)
    assert int(R.word(np.uint64(0), 0)) == 0xE220A8397B1DCDAF


@given(st.integers(0, MASK), st.integers(0, 2**40), st.integers(0, 10**6))
def test_words_are_splitmix64_of_the_stream_base(key, stream, counter):
    base = mix64_reference((mix64_reference(key) + (stream + 1) * GAMMA) & MASK)
    assert int(R.stream_base(np.uint64(key), stream)) == base
    assert int(R.word(np.uint64(base), counter)) == mix64_reference((base + (counter + 1) * GAMMA) & MASK)


def test_ziggurat_layers_have_equal_area():
    k, w, f = R._ziggurat_tables()
    x = w * 2.0**52  # x_i; x_0 is the base strip's width q
    v = R.ZIGGURAT_V
    layers = x[1:] * (f[:-1] - f[1:])  # layer i: [0, x_i] × [f(x_i), f(x_{i-1})], i = 1..255
    np.testing.assert_allclose(layers[1:], v, rtol=1e-9)  # layer 1 closes at f(x_0)=1 by construction
    r = R.ZIGGURAT_R
    tail = math.sqrt(math.pi / 2) * math.erfc(r / math.sqrt(2))
    assert r * math.exp(-r * r / 2) + tail == pytest.approx(v, rel=1e-9)
    assert x[0] * f[255] == pytest.approx(v, rel=1e-12)


@pytest.fixture(scope="module")
def draws():
    return R.token_rows(R.key_from_seed(2026), 100_000, 41)[:, 1:].ravel()  # 4·10⁶ normals


def test_moments_within_four_standard_errors(draws):
    n = draws.size
    for power, exact, var in ((1, 0.0, 1.0), (2, 1.0, 2.0), (3, 0.0, 15.0), (4, 3.0, 96.0)):
        assert abs(np.mean(draws**power) - exact) < 4 * math.sqrt(var / n), power


def test_distribution_passes_ks_and_chi_square(draws):
    assert stats.kstest(draws, "norm").pvalue > 1e-3
    edges = stats.norm.ppf(np.linspace(0, 1, 201))  # 200 equiprobable bins
    counts = np.histogram(draws, edges)[0]
    assert stats.chisquare(counts).pvalue > 1e-3


def test_tail_beyond_r_has_the_normal_probability(draws):
    # the tail |x| > r is drawn by a separate algorithm: its mass must be 2(1 - Φ(r))
    p = math.erfc(R.ZIGGURAT_R / math.sqrt(2))
    observed = np.mean(np.abs(draws) > R.ZIGGURAT_R)
    assert abs(observed - p) < 4 * math.sqrt(p * (1 - p) / draws.size)
    deep = draws[np.abs(draws) > R.ZIGGURAT_R]
    # conditional law of |x| beyond r: compare with the truncated normal by KS
    truncated = stats.truncnorm(R.ZIGGURAT_R, np.inf)
    assert stats.kstest(np.abs(deep), truncated.cdf).pvalue > 1e-3


def test_boolean_tokens_are_fair_signs():
    X = R.token_rows(R.key_from_seed(1), 50_000, 21, boolean=True)
    assert np.all(X[:, 0] == 0) and set(np.unique(X[:, 1:])) == {-1.0, 1.0}
    assert abs(X[:, 1:].mean()) < 4 / math.sqrt(X[:, 1:].size)


def test_same_numbers_at_every_thread_count_and_batching():
    key = R.key_from_seed(7)
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = R.token_rows(key, 3000, 41)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = R.token_rows(key, 3000, 41)
    finally:
        numba.set_num_threads(previous)
    assert np.array_equal(one, many)
    assert np.array_equal(R.token_rows(key, 100, 41, first_stream=1234), one[1234:1334])


def test_keys_from_seeds_and_children_differ():
    children = np.random.SeedSequence(0).spawn(3)
    keys = {int(R.key_from_seed(c)) for c in children} | {int(R.key_from_seed(0))}
    assert len(keys) == 4
    assert R.key_from_seed(5) == R.key_from_seed(np.random.SeedSequence(5))


@pytest.mark.parametrize("bad", [-1, 1.5, "0", True])
def test_bad_seed_is_named(bad):
    with pytest.raises(InvalidArgument, match="seed="):
        R.key_from_seed(bad)


def test_bad_sizes_are_named():
    with pytest.raises(InvalidArgument, match="size=-1"):
        R.token_rows(1, -1, 5)
    with pytest.raises(InvalidArgument, match="width=0"):
        R.token_rows(1, 3, 0)
