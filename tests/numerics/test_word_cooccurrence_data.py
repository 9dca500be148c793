"""Data of the co paper (spec §2.2, §2.8): composition, Assumption 2.3, uniform positions, test sets."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from derivations.errors import InvalidArgument
from numerics.models.word_cooccurrence.data import (
    GROUP_PROBABILITIES,
    MU1,
    MU2,
    MU3,
    RANDOM_TOKENS,
    REGIMES,
    Dataset,
    assumption_2_3,
    build_dataset,
    random_slots,
    required_vocabulary,
    test_set,
)

#: (μ₁, μ₂, μ₃) occurrences of a sample of type 1, 2, 3, 4 (spec §2.2)
TARGET_COUNTS = {1: (1, 1, 1), 2: (1, 0, 1), 3: (0, 1, 1), 4: (0, 0, 1)}

counts_st = st.tuples(*[st.integers(0, 6)] * 4).filter(lambda c: sum(c) > 0)
lengths = st.integers(3, 7)
seeds = st.integers(0, 2**32)
options = st.sampled_from(RANDOM_TOKENS)


def _minimal_d(counts, L, option):
    if option == "unique":
        return required_vocabulary(counts, L)
    slots = [s for c, s in zip(counts, random_slots(L), strict=True) if c]
    return 3 + (max(1, *slots) if option == "iid_distinct_within_sample" else 1)


def assert_composition(ds: Dataset):
    """Every sample has its type's μ₁/μ₂/μ₃ occurrences, random slots and label."""
    slots = random_slots(ds.L)
    for tokens, label, group in zip(ds.tokens, ds.labels, ds.groups, strict=True):
        assert tuple(int(np.sum(tokens == mu)) for mu in (MU1, MU2, MU3)) == TARGET_COUNTS[group]
        assert np.sum(tokens >= 3) == slots[group - 1]
        assert label == (1 if group == 1 else -1)
    assert np.all((ds.tokens >= 0) & (ds.tokens < ds.d))


@settings(deadline=None, max_examples=80)
@given(counts=counts_st, L=lengths, option=options, extra=st.integers(0, 3), seed=seeds)
def test_samples_have_their_types_composition(counts, L, option, extra, seed):
    ds = build_dataset(counts, L, _minimal_d(counts, L, option) + extra, seed, option)
    assert ds.counts == counts and ds.n == sum(counts) and ds.L == L
    assert np.all(np.diff(ds.groups) >= 0)  # groups stored in order 1, 2, 3, 4
    assert np.concatenate([ds.group_indices(k) for k in (1, 2, 3, 4)]).tolist() == list(range(ds.n))
    assert_composition(ds)
    if option != "iid":
        assert assumption_2_3(ds)["position_map_single_valued"]


@settings(deadline=None, max_examples=60)
@given(counts=counts_st, L=lengths, seed=seeds)
def test_unique_meets_assumption_ii_with_exactly_the_required_vocabulary(counts, L, seed):
    d = required_vocabulary(counts, L)
    ds = build_dataset(counts, L, d, seed)
    report = assumption_2_3(ds)
    assert report["ii_distinct_random_tokens"] and report["position_map_single_valued"]
    assert report["d_required_unique"] == d
    assert sorted(ds.tokens[ds.tokens >= 3].tolist()) == list(range(3, d))


@settings(deadline=None, max_examples=60)
@given(counts=counts_st, L=lengths, seed=seeds)
def test_unique_below_the_requirement_is_refused_naming_d_and_the_bound(counts, L, seed):
    d = required_vocabulary(counts, L)
    with pytest.raises(InvalidArgument, match=rf"d={d - 1} is too small for random_tokens='unique'") as error:
        build_dataset(counts, L, d - 1, seed)
    assert f"= {d} " in str(error.value) and "3 + n(L − 7/3)" in str(error.value)


@settings(deadline=None)
@given(k=st.integers(1, 200), L=st.integers(3, 50))
def test_required_vocabulary_is_3_plus_n_L_minus_7_thirds_for_the_exact_split(k, L):
    n = 6 * k
    assert required_vocabulary((3 * k, k, k, k), L) == 3 + n * (L - Fraction(7, 3))


def test_spec_examples_of_the_required_vocabulary():
    assert required_vocabulary((12, 4, 4, 4), 4) == 43
    assert required_vocabulary((300, 100, 100, 100), 4) == 1003
    assert required_vocabulary((30, 10, 10, 10), 5) == 163  # Figure 1: unique infeasible at d = 64
    assert random_slots(4) == (1, 2, 2, 3)


def test_mu3_position_is_uniform():
    ds = build_dataset((300, 300, 300, 300), 5, 64, seed=11, random_tokens="iid")
    position = np.argmax(ds.tokens == MU3, axis=1)
    assert chisquare(np.bincount(position, minlength=5)).pvalue > 1e-3


def test_type1_positions_are_uniform_ordered_triples():
    # (i₃, i₁, i₂) uniform over the L(L−1)(L−2) = 24 ordered triples of distinct positions (§2.2 steps 1–2)
    ds = build_dataset((2400, 0, 0, 0), 4, 4, seed=5, random_tokens="iid")
    i3, i1, i2 = (np.argmax(ds.tokens == mu, axis=1) for mu in (MU3, MU1, MU2))
    cells = np.bincount(16 * i3 + 4 * i1 + i2, minlength=64)
    triples = [(a, b, c) for a in range(4) for b in range(4) for c in range(4) if len({a, b, c}) == 3]
    distinct = [16 * a + 4 * b + c for a, b, c in triples]
    assert np.sum(cells) == np.sum(cells[distinct])
    assert chisquare(cells[distinct]).pvalue > 1e-3


def test_test_set_types_follow_the_distribution():
    train = build_dataset((3, 1, 1, 1), 4, 16, seed=0)
    test = test_set(train, 6000, seed=2)
    expected = 6000 * np.array(GROUP_PROBABILITIES)
    assert chisquare(np.bincount(test.groups, minlength=5)[1:], expected).pvalue > 1e-3
    assert chisquare(np.bincount(np.argmax(test.tokens == MU3, axis=1), minlength=4)).pvalue > 1e-3
    assert_composition(test)


@pytest.mark.parametrize("option", RANDOM_TOKENS)
def test_same_seed_same_arrays_and_positions_shared_by_options(option):
    args = ((6, 2, 2, 2), 5, 60)
    a, b = build_dataset(*args, 7, option), build_dataset(*args, 7, option)
    for name in ("tokens", "labels", "groups"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.tokens, build_dataset(*args, 8, option).tokens)
    canonical = build_dataset(*args, 7)
    targets = a.tokens < 3
    assert np.array_equal(targets, canonical.tokens < 3)
    assert np.array_equal(a.tokens[targets], canonical.tokens[targets])
    assert np.array_equal(test_set(a, 50, 3).tokens, test_set(b, 50, 3).tokens)


@settings(deadline=None, max_examples=40)
@given(counts=counts_st, L=lengths, option=options, n_test=st.integers(1, 40), seed=seeds)
def test_unseen_test_tokens_never_appear_in_training(counts, L, option, n_test, seed):
    train = build_dataset(counts, L, _minimal_d(counts, L, option) + 2, seed, option)
    test = test_set(train, n_test, seed)
    random = test.tokens[test.tokens >= 3]
    assert not np.isin(random, train.tokens).any()
    assert np.unique(random).size == random.size
    assert test.d == max(train.d, int(train.tokens.max()) + 1 + n_test * (L - 1)) and test.L == L
    assert_composition(test)


def test_uniform_all_draws_over_the_training_vocabulary():
    train = build_dataset((12, 4, 4, 4), 4, 43, seed=0)
    test = test_set(train, 3000, seed=1, test_tokens="uniform_all")
    assert test.d == 43 and set(test.tokens[test.tokens >= 3].tolist()) == set(range(3, 43))
    assert test_set(train, 10, seed=1, test_tokens="uniform_all", d_total=50).d == 50


def test_assumption_2_3_report():
    report = assumption_2_3(build_dataset((12, 4, 4, 4), 4, 43, seed=0))
    assert report["holds"] and report["i_fractions"] and report["n"] == 24
    assert not assumption_2_3(build_dataset((2, 1, 1, 1), 4, 20, seed=0))["i_fractions"]
    fig1 = REGIMES["fig1"]
    repeated = assumption_2_3(build_dataset(fig1.counts[0], fig1.L, fig1.d[0], seed=0, random_tokens="iid"))
    assert repeated["i_fractions"] and not repeated["ii_distinct_random_tokens"] and not repeated["holds"]


def test_regimes_as_printed():
    harness, a_, b_, init, fig1 = (REGIMES[k] for k in ("harness", "A", "B", "init", "fig1"))
    assert required_vocabulary(harness.counts[0], harness.L) == harness.d[0] - 3  # 3 unused tokens
    for regime in (a_, b_, init):
        assert [required_vocabulary(c, regime.L) for c in regime.counts] == list(regime.d)
    assert (a_.n, b_.n, init.n, fig1.n) == ((24,), (600,), (24, 600), (60,))
    assert harness.output_weights == (1, -1, 1, -1) and REGIMES["symbolic"].output_weights == (1, -1)
    assert (a_.t_end(256), b_.t_end(256)) == (1024, 1024)
    assert b_.kappa == ((0.25, 0.5),) and harness.sigma == (0.7, 0.6)
    assert fig1.random_tokens[0] == "iid" and fig1.d[0] < required_vocabulary(fig1.counts[0], fig1.L)
    with pytest.raises(InvalidArgument, match="d=64 is too small"):
        build_dataset(fig1.counts[0], fig1.L, fig1.d[0], seed=0)
    with pytest.raises(InvalidArgument, match="fig1"):
        fig1.t_end(128)


def test_dataset_is_read_only_and_checked():
    ds = build_dataset((3, 1, 1, 1), 4, 16, seed=0)
    assert not ds.tokens.flags.writeable and ds.tokens.dtype == np.int32 and ds.labels.dtype == np.int8
    with pytest.raises(InvalidArgument, match="labels"):
        Dataset(ds.tokens, -ds.labels, ds.groups, ds.d)
    with pytest.raises(InvalidArgument, match="d=12"):
        Dataset(ds.tokens, ds.labels, ds.groups, 12)
    with pytest.raises(InvalidArgument, match="k=0"):
        ds.group_indices(0)


@pytest.mark.parametrize(("call", "named"), [
    (lambda: build_dataset((3, 1, 1, 1), 4, 16, 0, "unqiue"),
     "random_tokens='unqiue' is not a known option; "
     "valid values: 'unique', 'iid', 'iid_distinct_within_sample'"),
    (lambda: test_set(build_dataset((3, 1, 1, 1), 4, 16, 0), 5, 0, "seen"),
     "test_tokens='seen' is not a known option; valid values: 'unseen', 'uniform_all'"),
    (lambda: build_dataset((3, 1, 1, 1), 2, 16, 0), "L=2"),
    (lambda: build_dataset((3, 1, 1), 4, 16, 0), "counts=(3, 1, 1)"),
    (lambda: build_dataset((3, -1, 1, 1), 4, 16, 0), "counts=(3, -1, 1, 1)"),
    (lambda: build_dataset((0, 0, 0, 0), 4, 16, 0), "n=0"),
    (lambda: build_dataset((3, 1, 1, 1), 4, 3, 0, "iid"), "d=3 is too small for random_tokens='iid'"),
    (lambda: build_dataset((3, 1, 1, 1), 4, 5, 0, "iid_distinct_within_sample"), "d=5 is too small"),
    (lambda: build_dataset((3, 1, 1, 1), 4, 16, -1), "seed=-1"),
    (lambda: test_set(build_dataset((3, 1, 1, 1), 4, 16, 0), 5, 0, d_total=20), "d_total=20"),
    (lambda: test_set(build_dataset((3, 1, 1, 1), 4, 16, 0), 0, 0), "n_test=0"),
])
def test_bad_input_is_refused_by_name(call, named):
    with pytest.raises(InvalidArgument) as error:
        call()
    assert named in str(error.value)
