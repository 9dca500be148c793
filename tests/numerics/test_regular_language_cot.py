"""Tests of numerics.models.regular_language.cot: the automaton, the CoT procedures and the exact oracles.

Recorded outcomes (exhaustive, every string of each length; computed by the plain loops below):

* full-CoT ground truth (Sec. 5.2) vs parity: 2^L of 2^L for L0 = 1..10;
* automaton, ``automaton_start = t1`` (the worked example abb): 2^L of 2^L for L = 1..10;
* automaton, ``automaton_start = t2`` (the sentence "updates s_t for t >= 2"): 2 of 2 at L = 1 and
  2^(L-1) of 2^L for L = 2..10: the last state omits w_2, so it agrees iff w_2 = a; on abb it gives
  a → a → b, not the printed a → b → a;
* Alg. 1 with an exact EP model (the oracle) vs parity: 2^L of 2^L for L = 2..8 (and 9..14 sampled);
  L = 1 is outside Alg. 1 (no iteration, y_0 undefined);
* full CoT with an exact CoT-label model vs parity: 2^L0 of 2^L0 for L0 = 2..7;
* the inputs of full CoT reach length 2L0 − 2, so the model needs d >= 2(2L0 − 2), not the printed
  d >= 2L0 − 2 (Sec. 5.2), under E_ℓ^b = e_{2ℓ}.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from derivations.errors import InvalidArgument
from numerics.enumeration import strings_of_length
from numerics.models.regular_language import RLModel, cot_data, ep_data
from numerics.models.regular_language.cot import (
    automaton,
    automaton_states,
    cot_accuracy,
    cot_oracle,
    decode,
    encode,
    ep_oracle,
    full_cot,
    ground_truth_cot,
    key_lookup_oracle,
    parity,
    predict,
    truncated_cot,
)

MAX_L = 10


# --- plain-Python references (characters 'a'/'b', the printed procedures read literally) ------


def words(L):
    return ["".join(w) for w in itertools.product("ab", repeat=L)]


def literal_parity(w):
    return "a" if w.count("b") % 2 == 0 else "b"


def literal_automaton(w, start):
    states = [w[0]]
    first = 1 if start == "t1" else 2  # the 1-based step t of the first transition s_t -> s_{t+1}
    for t in range(1, len(w)):  # t is the 1-based index of s_t; s_{t+1} reads w_{t+1} = w[t]
        s = states[-1]
        states.append(("a" if s == w[t] else "b") if t >= first else s)
    return "".join(states)


def literal_full_cot(w):
    L0 = len(w)
    chain = list(w)
    for t in range(1, L0):
        chain.append("a" if chain[L0 + t - 2] == chain[t - 1] else "b")  # w_{L0+t-1} vs w_t
    return "".join(chain)


def literal_counts():
    counts = {}
    for L in range(1, MAX_L + 1):
        ws = words(L)
        counts[("cot", L)] = sum(literal_full_cot(w)[-1] == literal_parity(w) for w in ws)
        for start in ("t1", "t2"):
            counts[(start, L)] = sum(literal_automaton(w, start)[-1] == literal_parity(w) for w in ws)
    return counts


LITERAL = literal_counts()


def as_label(ch):
    return 1 if ch == "a" else -1


# --- the automaton and the ground-truth CoT vs parity -----------------------------------------


@pytest.mark.parametrize("L", range(1, MAX_L + 1))
def test_automaton_and_ground_truth_agreement_counts(L):
    strings = strings_of_length(2, L)
    ws = decode(strings)
    truth = parity(strings)
    assert truth.tolist() == [as_label(literal_parity(w)) for w in ws]
    for start in ("t1", "t2"):
        assert decode(automaton_states(strings, start)) == [literal_automaton(w, start) for w in ws]
        assert int(np.sum(automaton(strings, start) == truth)) == LITERAL[(start, L)]
    chain = ground_truth_cot(strings)
    assert decode(chain) == [literal_full_cot(w) for w in ws]
    assert int(np.sum(1 - 2 * chain[:, -1] == truth)) == LITERAL[("cot", L)]


def test_recorded_counts():
    """The counts of the module docstring (the derived closed forms of the loop results above)."""
    for L in range(1, MAX_L + 1):
        assert LITERAL[("t1", L)] == 2**L
        assert LITERAL[("cot", L)] == 2**L
        assert LITERAL[("t2", L)] == (2 if L == 1 else 2 ** (L - 1))


def test_worked_examples_abb():
    abb = encode("abb")
    # Sec. 5.1: s_1 = a -> s_2 = b -> s_3 = a; the t2 reading gives a -> a -> b (recorded, not judged)
    assert decode(automaton_states(abb, "t1")) == ["aba"]
    assert decode(automaton_states(abb, "t2")) == ["aab"]
    assert automaton(abb, "t1").tolist() == [1] and automaton(abb, "t2").tolist() == [-1]
    # Fig. 1 (abb, L0 = 3): X^1 = abb, w_4 = b (w_3 = b != w_1 = a), X^2 = abbb, w_5 = a (w_4 = w_2 = b)
    assert decode(ground_truth_cot(abb)) == ["abbba"]
    assert parity(abb).tolist() == [1]


# --- the model on arbitrary strings -----------------------------------------------------------


@pytest.mark.parametrize("data", [ep_data(5), cot_data(3)], ids=["ep5", "cot3"])
def test_predict_matches_rl_model(data):
    rng = np.random.default_rng(3)
    model = RLModel(data, 2.0)
    theta = rng.normal(size=model.size)
    u, W = model.split(theta)
    T = model.outputs(theta)
    for L in sorted(set(data.lengths)):
        rows = np.flatnonzero(data.length == L)
        got = predict(u, W, 2.0, data.chars[rows, :L])
        np.testing.assert_array_equal(got.T, T[rows])
        assert np.array_equal(got.y, np.where(T[rows] > 0, 1, -1))


def test_sign_zero_readings_at_zero():
    d, L = 8, 4
    theta = np.zeros(d + d * d)
    u, W = theta[:d], theta[d:].reshape(d, d)
    strings = strings_of_length(2, L)
    assert np.all(predict(u, W, 1.0, strings, "+1").y == 1)
    zero = predict(u, W, 1.0, strings, "count_as_error")
    assert np.all(zero.y == 0) and np.all(zero.zero)
    plus = cot_accuracy(theta, 1.0, d, L, sign_zero="+1")
    assert plus.fraction == 0.5 and plus.n_zero_steps == 2**L * (L - 1)
    assert plus.n_zero_rollouts == plus.n_zero_final == 2**L
    error = cot_accuracy(theta, 1.0, d, L, sign_zero="count_as_error")
    assert error.n_correct == 0 and error.n_zero_steps == plus.n_zero_steps
    full = cot_accuracy(theta, 1.0, 2 * (2 * 3 - 2), 3, procedure="full", sign_zero="count_as_error")
    assert full.n_correct == 0 and full.n_zero_steps == 2**3 * 2


def reference_rollout(u, W, lam, w, procedure):
    """spec §10 pseudo-code (truncated_cot / full_cot), one string, model = predict on one row."""
    X = list(w)
    y = None
    for _ in range(1, len(w)):
        y = int(predict(u, W, lam, np.array([X])).y[0])
        X = [*X[1:], (1 - y) // 2] if procedure == "truncated" else [*X, (1 - y) // 2]
    return y if procedure == "truncated" else 1 - 2 * X[-1]


@pytest.mark.parametrize(("procedure", "L"), [("truncated", 4), ("truncated", 5), ("full", 3), ("full", 4)])
def test_rollout_kernels_follow_the_pseudo_code(procedure, L):
    rng = np.random.default_rng(L)
    d = 2 * L if procedure == "truncated" else 2 * (2 * L - 2)
    theta = rng.normal(size=d + d * d)
    u, W = theta[:d], theta[d:].reshape(d, d)
    strings = strings_of_length(2, L)
    if procedure == "truncated":
        roll = truncated_cot(theta, 0.5, d, strings)
    else:
        roll = full_cot(theta, 0.5, d, strings, L)
    assert roll.output.tolist() == [reference_rollout(u, W, 0.5, w, procedure) for w in strings.tolist()]
    assert np.array_equal(roll.chain[:, :L], strings)


# --- exact oracles: Alg. 1 and full CoT compute parity ----------------------------------------


@pytest.mark.parametrize("lam", [0.5, 2.0, 18.0])
@pytest.mark.parametrize("gap", [0.05, 4.0])
def test_ep_oracle_is_an_exact_ep_recogniser(lam, gap):
    theta = ep_oracle(8, lam, gap=gap)
    u, W = theta[:16], theta[16:].reshape(16, 16)
    for L in range(1, 9):
        strings = strings_of_length(2, L)
        got = predict(u, W, lam, strings, "count_as_error")
        assert not got.zero.any()
        assert np.array_equal(got.y, np.where(strings[:, 0] == strings[:, -1], 1, -1))


@pytest.mark.parametrize("L", range(2, 9))
def test_truncated_cot_with_the_ep_oracle_is_parity(L):
    for d in (2 * L, 16):
        theta = ep_oracle(L if d == 2 * L else 8, 2.0, d=d)
        strings = strings_of_length(2, L)
        roll = truncated_cot(theta, 2.0, d, strings, "count_as_error")
        assert np.array_equal(roll.output, parity(strings))
        assert np.array_equal(roll.chain, ground_truth_cot(strings))
        assert not roll.n_zero.any()
        acc = cot_accuracy(theta, 2.0, d, L, sign_zero="count_as_error")
        assert acc.n_correct == acc.n == 2**L and acc.n_zero_steps == 0


@given(st.integers(9, 14).flatmap(lambda L: st.lists(st.integers(0, 1), min_size=L, max_size=L)))
def test_truncated_cot_with_the_ep_oracle_longer(w):
    theta = ep_oracle(14, 2.0)
    roll = truncated_cot(theta, 2.0, 28, np.array([w]))
    assert roll.output.tolist() == parity(np.array([w])).tolist()


@pytest.mark.parametrize("L0", range(2, 8))
def test_full_cot_with_the_cot_oracle_is_parity(L0):
    lam = 2.0
    d = 2 * (2 * L0 - 2)
    theta = cot_oracle(L0, lam)
    u, W = theta[:d], theta[d:].reshape(d, d)
    for L in range(L0, 2 * L0 - 1):
        strings = strings_of_length(2, L)
        got = predict(u, W, lam, strings, "count_as_error")
        assert np.array_equal(got.y, np.where(strings[:, L - L0] == strings[:, -1], 1, -1))
    strings = strings_of_length(2, L0)
    roll = full_cot(theta, lam, d, strings, L0, "count_as_error")
    assert np.array_equal(roll.output, parity(strings))
    assert np.array_equal(roll.chain, ground_truth_cot(strings))
    assert cot_accuracy(theta, lam, d, L0, procedure="full").fraction == 1.0


def test_fig1_abb_with_the_cot_oracle():
    roll = full_cot(cot_oracle(3, 2.0), 2.0, 8, encode("abb"), 3)
    assert decode(roll.chain) == ["abbba"] and roll.output.tolist() == [1]


def test_full_cot_needs_more_than_the_printed_dimension():
    """Sec. 5.2 prints d >= 2L0 - 2; the inputs X^t reach length 2L0 - 2, i.e. index 2(2L0 - 2)."""
    for L0 in (2, 3, 4):
        strings = strings_of_length(2, L0)
        theta = cot_oracle(L0, 2.0)
        full_cot(theta, 2.0, 4 * L0 - 4, strings, L0)
        if 4 * L0 - 5 >= 2:
            small = np.zeros(4 * L0 - 5 + (4 * L0 - 5) ** 2)
            with pytest.raises(InvalidArgument, match=f"d={4 * L0 - 5} is too small"):
                full_cot(small, 2.0, 4 * L0 - 5, strings, L0)


# --- bad inputs -------------------------------------------------------------------------------

D8 = np.zeros(8 + 64)
S3 = strings_of_length(2, 3)

BAD = [
    ("d too small", lambda: truncated_cot(np.zeros(5 + 25), 1.0, 5, S3), r"d=5 .*e_6"),
    ("d full CoT", lambda: full_cot(np.zeros(6 + 36), 1.0, 6, S3, 3), r"d=6 .*e_7"),
    ("predict d", lambda: predict(np.zeros(4), np.zeros((4, 4)), 1.0, S3), r"d=4 .*e_5"),
    ("sign_zero", lambda: truncated_cot(D8, 1.0, 8, S3, "zero"), "sign_zero='zero'"),
    ("predict sign_zero", lambda: predict(np.zeros(8), np.zeros((8, 8)), 1.0, S3, "0"), "sign_zero='0'"),
    ("automaton_start", lambda: automaton(S3, "t3"), "automaton_start='t3'"),
    ("character", lambda: parity(np.array([[0, 2]])), r"strings\[0, 1\]=2"),
    ("one string", lambda: parity(np.array([0, 1])), r"strings has shape \(2,\)"),
    ("float strings", lambda: parity(np.array([[0.0, 1.0]])), "dtype float64"),
    ("L = 1", lambda: truncated_cot(D8, 1.0, 8, np.array([[0], [1]])), "L=1"),
    ("L0 vs width", lambda: full_cot(D8, 1.0, 8, S3, 2), "L0=2"),
    ("L0 < 2", lambda: full_cot(D8, 1.0, 8, np.array([[0]]), 1), "L0=1"),
    ("theta shape", lambda: truncated_cot(np.zeros(10), 1.0, 8, S3), r"theta has shape \(10,\)"),
    ("theta finite", lambda: truncated_cot(np.r_[np.nan, np.zeros(71)], 1.0, 8, S3), r"theta\[0\]=nan"),
    ("lam", lambda: truncated_cot(D8, 0.0, 8, S3), "lam=0.0"),
    ("procedure", lambda: cot_accuracy(D8, 1.0, 8, 3, procedure="partial"), "procedure='partial'"),
    ("accuracy L", lambda: cot_accuracy(D8, 1.0, 8, 1), "L=1"),
    ("oracle overlap", lambda: key_lookup_oracle(8, 1.0, {2: 1, 3: 2}), "position 2"),
    ("oracle key", lambda: key_lookup_oracle(8, 1.0, {3: 3}), r"keys\[3\]=3"),
    ("oracle gap", lambda: ep_oracle(4, 1.0, gap=0.0), "gap=0.0"),
    ("oracle d", lambda: ep_oracle(4, 1.0, d=7), r"d=7 .*e_8"),
    ("encode", lambda: encode("abc"), "words="),
]


@pytest.mark.parametrize(("case", "call", "match"), BAD, ids=[c for c, _, _ in BAD])
def test_bad_inputs_are_refused_with_the_parameter_named(case, call, match):
    with pytest.raises(InvalidArgument, match=match):
        call()
