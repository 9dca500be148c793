"""Tests of numerics.enumeration: exact string sets with per-stratum weights, label rules, stratified Monte-Carlo."""

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from derivations.errors import InvalidArgument
from numerics.enumeration import (
    PAD,
    StratifiedMonteCarlo,
    UniformStrings,
    all_strings,
    rowwise,
    strings_of_length,
)
from numerics.montecarlo import Enumeration


def ones_squared(chars, length, stratum, params):
    """(number of 1s)² per string; mean over {0,1}^L is L/4 + L²/4."""
    return ((chars == 1).sum(axis=1) ** 2).astype(np.float64)


def constant(chars, length, stratum, params):
    return np.full(chars.shape[0], float(params), dtype=np.float64)


def scaled_length(chars, length, stratum, params):
    return params * length.astype(np.float64) + stratum


def test_strings_of_length_are_lexicographic_and_complete():
    for k, L in ((2, 1), (2, 4), (3, 3), (1, 5)):
        got = strings_of_length(k, L)
        assert got.shape == (k**L, L) and got.dtype == np.int64
        assert [tuple(r) for r in got] == list(itertools.product(range(k), repeat=L))


def test_all_strings_layout_and_exact_weights():
    s = all_strings(2, range(1, 7))
    assert s.n == 2**7 - 2 and s.width == 6
    assert s.offsets.tolist() == [0, 2, 6, 14, 30, 62, 126]
    for h, L in enumerate(s.lengths):
        rows = s.rows(h)
        assert np.all(s.length[rows] == L) and np.all(s.stratum[rows] == h)
        assert np.all(s.chars[rows, L:] == PAD) and np.all(s.chars[rows, :L] >= 0)
        assert sum(s.weights_exact[rows]) == 1
        assert set(s.weights_exact[rows]) == {Fraction(1, 2**L)}
    assert s.total_weight == 6
    assert np.array_equal(s.weights, [float(w) for w in s.weights_exact])
    assert list(s.strings())[:6] == [(0,), (1,), (0, 0), (0, 1), (1, 0), (1, 1)]


def test_repeated_lengths_and_rational_stratum_weights():
    s = all_strings(3, [2, 2, 1], stratum_weights=[Fraction(1, 3), 2, 0.5])
    assert s.n == 9 + 9 + 3
    assert s.stratum_weights == (Fraction(1, 3), Fraction(2), Fraction(1, 2))
    assert s.weights_exact[0] == Fraction(1, 27) and s.weights_exact[9] == Fraction(2, 9)
    assert s.total_weight == Fraction(17, 6)


def test_enumeration_is_a_sum_of_per_length_means():
    lengths = range(1, 8)
    est = all_strings(2, lengths).enumeration(ones_squared).estimate()
    assert est.se == 0.0 and est.method == "enumeration" and est.n == 2**8 - 2
    exact = sum(Fraction(L, 4) + Fraction(L * L, 4) for L in lengths)
    assert est.agrees_with(float(exact), rtol=1e-15)


def test_enumeration_normalise_flag():
    points = np.arange(4.0)
    w = np.array([1.0, 1.0, 2.0, 0.0])
    f = lambda x, params: x * 1.0  # noqa: E731
    assert Enumeration(points, f, weights=w).estimate().mean == pytest.approx(5 / 4)
    assert Enumeration(points, f, weights=w, normalise=False).estimate().mean == 5.0


def test_label_rules_vectorised_rowwise_and_per_stratum():
    s = all_strings(2, range(1, 6))

    def first_last(string):
        return string[0] == string[-1]

    def vectorised(chars):
        return np.where(chars[:, 0] == chars[:, -1], 1, -1)

    assert np.array_equal(s.labels(rowwise(first_last)), s.labels(vectorised))
    mixed = s.labels([vectorised, vectorised, lambda c: np.ones(c.shape[0], int), vectorised, vectorised])
    assert np.all(mixed[s.rows(2)] == 1)
    assert np.array_equal(mixed[s.rows(3)], s.labels(vectorised)[s.rows(3)])


def test_bad_label_rules_are_refused():
    s = all_strings(2, [1, 2])
    with pytest.raises(InvalidArgument, match="labels must be"):
        s.labels(lambda c: np.zeros(c.shape[0], int))
    with pytest.raises(InvalidArgument, match="one label per row"):
        s.labels(lambda c: np.ones(3, int))
    with pytest.raises(InvalidArgument, match="rules has 1 entries"):
        s.labels([lambda c: np.ones(c.shape[0], int)])


def test_stratified_monte_carlo_agrees_with_enumeration():
    s = all_strings(2, range(1, 9))
    exact = s.enumeration(ones_squared).estimate()
    mc = s.monte_carlo(ones_squared, n=20_000, seed=11)
    est = mc.estimate()
    assert est.method == "stratified monte-carlo" and est.n == 8 * 20_000 and est.seed == 11
    assert est.se > 0 and not est.heavy_tail_suspect
    assert est.agrees_with(exact.mean, k_se=4.0)
    # reproducible from the seed, and the standard error is the strata's combined in quadrature
    again = s.monte_carlo(ones_squared, n=20_000, seed=11).estimate()
    assert again == est
    parts = mc.estimate_strata()
    assert est.se == pytest.approx(np.sqrt(sum(p.se**2 for p in parts)), rel=1e-12)
    assert est.mean == pytest.approx(sum(p.mean for p in parts), rel=1e-12)
    assert s.monte_carlo(ones_squared, n=20_000, seed=12).estimate().mean != est.mean


def test_strata_draw_independent_streams_and_common_random_numbers():
    draws = [UniformStrings(2, 3, 3, h) for h in range(2)]
    mc = StratifiedMonteCarlo(draws, scaled_length, n=50, seed=3, chunk_size=16)
    a, b = mc.strata[0].chunk_inputs(0)[0][0], mc.strata[1].chunk_inputs(0)[0][0]
    assert not np.array_equal(a, b)
    many = mc.estimate_many([1.0, 2.0])
    assert many == [mc.estimate(1.0), mc.estimate(2.0)]
    assert many[0].se == 0.0 and many[0].mean == 3.0 + 3.0 + 1.0  # 1·L + stratum, summed over strata


def test_stratum_weights_scale_the_estimate():
    s = all_strings(2, [2, 3], stratum_weights=[Fraction(1, 2), 3])
    assert s.enumeration(constant).estimate(2.0).mean == pytest.approx(7.0)
    mc = s.monte_carlo(constant, n=10, seed=0).estimate(2.0)
    assert mc.mean == pytest.approx(7.0) and mc.se == 0.0


@given(
    alphabet=st.integers(1, 3),
    lengths=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    weights=st.data(),
)
def test_enumeration_of_one_is_the_total_weight(alphabet, lengths, weights):
    w = weights.draw(st.lists(st.fractions(0, 5, max_denominator=7), min_size=len(lengths), max_size=len(lengths)))
    s = all_strings(alphabet, lengths, stratum_weights=w)
    assert sum(s.weights_exact) == sum(w, Fraction(0))
    assert s.n == sum(alphabet**L for L in lengths)
    assert s.enumeration(constant).estimate(1.0).mean == pytest.approx(float(sum(w, Fraction(0))), rel=1e-14,
                                                                         abs=1e-15)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: all_strings(0, [1]), "alphabet="),
        (lambda: all_strings(2, []), "lengths="),
        (lambda: all_strings(2, 3), "lengths="),
        (lambda: all_strings(2, [0, 1]), "lengths="),
        (lambda: all_strings(2, [1, 2], stratum_weights=[1]), "stratum_weights has 1"),
        (lambda: all_strings(2, [1], stratum_weights=[-1]), "stratum_weights="),
        (lambda: all_strings(2, [30]), "max_points="),
        (lambda: all_strings(2, [3]).rows(1), "h="),
        (lambda: StratifiedMonteCarlo([], constant, n=10, seed=0), "draws is empty"),
        (lambda: StratifiedMonteCarlo([UniformStrings(2, 1, 1)], constant, n=[10, 10], seed=0), "n has 2"),
        (lambda: StratifiedMonteCarlo([UniformStrings(2, 1, 1)], constant, n=1, seed=0), "n=1"),
        (lambda: StratifiedMonteCarlo([UniformStrings(2, 1, 1)], constant, n=9, seed=-1), "seed=-1"),
        (lambda: UniformStrings(2, 4, 3), "width=3"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(InvalidArgument, match=name):
        call()
