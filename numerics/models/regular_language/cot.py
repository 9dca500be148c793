"""Parity by chain of thought with the one-layer model: Alg. 1, full CoT, the automaton, exact oracles.

Regular-language paper, Sec. 5.1 (truncated CoT, Alg. 1; the 2-state automaton) and Sec. 5.2 /
Fig. 1 (full CoT inference); spec §2.7, §2.9 (``sign_zero``, ``automaton_start``), §10
(``truncated_cot``, ``full_cot``) and rl.cf.cot_recurrences.

Encodings. A *string* (input, chain, automaton states) is an (n, L) int array of characters,
a = 0 and b = 1, as in :mod:`.data`; position ℓ (0-based) with character c is token 2ℓ + c.
A *label* (prediction, output, parity) is +1 or −1 with a ≡ +1 and b ≡ −1 as in the paper's CoT
parts ("we equate 1 with token a and −1 with token b"), so the appended character is (1 − y)/2
and +1 means an even number of b's.

``sign_zero`` (spec §2.9; the paper does not define sign(0)):

* ``+1`` — sign(0) = +1: a T = 0 prediction is the label +1 (appends a);
* ``count_as_error`` — a T = 0 prediction is always wrong: :func:`predict` reports the label 0
  (equal to no ±1 label, so ``y == label`` counts it as an error). In a rollout the chain goes
  on with a, so the chain and the T = 0 counts are the same under both readings, and the
  rollout's output is 0 (wrong) as soon as any of its steps had T = 0: a step without a sign
  breaks the chain, whatever the later tokens. ``zero_final`` records whether the last step was
  one, for a caller who wants to read it otherwise.

Oracles (:func:`ep_oracle`, :func:`cot_oracle`, :func:`key_lookup_oracle`): a (u, W) whose
prediction is exactly "the query's character equals the character at a key position k(L)",
with k(L) = 1 for even pairs (first = last, Sec. 3) and k(L) = L − L0 + 1 for the CoT label
(Sec. 5.2). The construction and its proof are in :func:`key_lookup_oracle`.

Derived (rl.cf.cot_recurrences): with exact rules, Alg. 1 and full CoT build the same chain
w_{L+t} = w_t ⊕ w_{L+t−1} (⊕ = xor on characters, the product in ±1): the window of Alg. 1 at
step t is w_t ⋯ w_{L+t−1}, whose first token is w_t and last w_{L+t−1}, exactly the pair the
Sec. 5.2 ground-truth step compares; unrolled, w_{2L−1} = w_1 ⊕ ⋯ ⊕ w_L, the parity.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from derivations.errors import InvalidArgument
from numerics._jit import jit
from numerics.enumeration import strings_of_length
from numerics.models.regular_language.model import LAYOUT, SIGN_ZERO, _positive_lam, attend

AUTOMATON_STARTS = ("t1", "t2")
PROCEDURES = ("truncated", "full")
#: the longest input enumerated by :func:`cot_accuracy` (2^L rollouts)
MAX_ENUMERATED = 20


# ----------------------------------------------------------------------------------------------
# Kernels. chars (n, L) int64 in {0, 1}; u (d,), W (d, d) float64 with 2·(longest input) <= d.
# Nothing raises; the wrappers validate shapes, characters, d and finiteness beforehand.


@jit
def _label(T, zero_is_error):
    """+1 if T > 0, −1 if T < 0; for T = 0: 0 when ``zero_is_error``, else +1."""
    if T > 0.0:
        return 1
    if T < 0.0:
        return -1
    return 0 if zero_is_error else 1


@jit
def predict_kernel(u, W, chars, lam, T):
    """Write T_θ of each row of ``chars`` (n, L) into ``T`` (n,)."""
    n, L = chars.shape
    row = np.empty(L, dtype=np.int64)
    phi = np.empty(L)
    for i in range(n):
        for ell in range(L):
            row[ell] = 2 * ell + chars[i, ell]
        T[i] = attend(u, W, row, L, lam, phi)


@jit
def truncated_kernel(u, W, chars, lam, zero_is_error, chain, out, n_zero, zero_final):
    """Alg. 1 on each row of ``chars`` (n, L), L >= 2.

    Writes ``chain`` (n, 2L−1) = w_1 ⋯ w_{2L−1}, ``out`` (n,) = y_{L−1} (0 if a step had T = 0
    and ``zero_is_error``), ``n_zero`` (n,) the number of T = 0 steps and ``zero_final`` (n,) 1
    if the last step had T = 0.
    """
    n, L = chars.shape
    row = np.empty(L, dtype=np.int64)
    phi = np.empty(L)
    for i in range(n):
        for ell in range(L):
            chain[i, ell] = chars[i, ell]
        zeros = 0
        y = 1
        T = 1.0
        for t in range(1, L):
            # the window X = w_t ⋯ w_{L+t−1} (1-based) is read at positions 1..L of its own
            for ell in range(L):
                row[ell] = 2 * ell + chain[i, t - 1 + ell]
            T = attend(u, W, row, L, lam, phi)
            y = _label(T, False)
            if not (T > 0.0 or T < 0.0):
                zeros += 1
            chain[i, L + t - 1] = (1 - y) // 2
        out[i] = 0 if (zero_is_error and zeros > 0) else y
        n_zero[i] = zeros
        zero_final[i] = 1 if not (T > 0.0 or T < 0.0) else 0


@jit
def full_kernel(u, W, chars, lam, zero_is_error, chain, out, n_zero, zero_final):
    """Full CoT (Sec. 5.2) on each row of ``chars`` (n, L0), L0 >= 2; outputs as :func:`truncated_kernel`.

    X^t = w_1 ⋯ w_{L0+t−1} for t = 1..L0−1; w_{L0+t} from sign T_θ(X^t); ``out`` = w_{2L0−1} as a label.
    """
    n, L0 = chars.shape
    longest = 2 * L0 - 1
    row = np.empty(longest, dtype=np.int64)
    phi = np.empty(longest)
    for i in range(n):
        for ell in range(L0):
            chain[i, ell] = chars[i, ell]
            row[ell] = 2 * ell + chars[i, ell]
        zeros = 0
        y = 1
        T = 1.0
        for t in range(1, L0):
            L = L0 + t - 1
            T = attend(u, W, row, L, lam, phi)
            y = _label(T, False)
            if not (T > 0.0 or T < 0.0):
                zeros += 1
            c = (1 - y) // 2
            chain[i, L] = c
            row[L] = 2 * L + c
        out[i] = 0 if (zero_is_error and zeros > 0) else y
        n_zero[i] = zeros
        zero_final[i] = 1 if not (T > 0.0 or T < 0.0) else 0


# ----------------------------------------------------------------------------------------------
# Validation


def _choice(name: str, value, choices) -> str:
    if value not in choices:
        msg = f"{name}={value!r} is not a known reading; valid values: {', '.join(map(repr, choices))}"
        raise InvalidArgument(msg)
    return value


def _int(name: str, value, minimum: int, why: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        msg = f"{name}={value!r} must be an integer >= {minimum} ({why})"
        raise InvalidArgument(msg)
    return int(value)


def _strings(strings, name: str = "strings", min_length: int = 1, why: str = "") -> np.ndarray:
    chars = np.asarray(strings)
    if chars.ndim != 2:
        msg = (f"{name} has shape {chars.shape}; expected (n, L): one row of characters (a = 0, b = 1) per "
               f"string, all of one length (use encode('abb', ...) for words)")
        raise InvalidArgument(msg)
    if chars.dtype != bool and not np.issubdtype(chars.dtype, np.integer):
        msg = f"{name} has dtype {chars.dtype}; expected integer characters a = 0, b = 1"
        raise InvalidArgument(msg)
    chars = np.ascontiguousarray(chars, dtype=np.int64)
    bad = np.flatnonzero((chars != 0) & (chars != 1))
    if bad.size:
        r, c = divmod(int(bad[0]), chars.shape[1])
        msg = f"{name}[{r}, {c}]={int(chars[r, c])} is not a character; characters are a = 0 and b = 1"
        raise InvalidArgument(msg)
    if chars.shape[1] < min_length:
        msg = f"{name} has length L={chars.shape[1]}; it must be >= {min_length} ({why})"
        raise InvalidArgument(msg)
    return chars


def _need_dim(d: int, longest: int, what: str) -> None:
    need = 2 * longest
    if d < need:
        # the first index that does not fit, named as the paper names embeddings (1-based)
        first = d + 1
        position, char = (first + 1) // 2, "a" if first % 2 else "b"
        msg = (f"d={d} is too small: {what} reads inputs of length up to {longest}, whose embedding "
               f"E_{position}^{char} = e_{first} needs index {first} > d={d} (indices up to {need} are "
               "used); "
               f"choose d >= {need}")
        raise InvalidArgument(msg)


def _params(u, W) -> tuple[np.ndarray, np.ndarray]:
    u = np.ascontiguousarray(u, dtype=np.float64)
    W = np.ascontiguousarray(W, dtype=np.float64)
    if u.ndim != 1 or W.shape != (u.size, u.size):
        msg = f"u has shape {u.shape} and W {W.shape}; expected (d,) and (d, d)"
        raise InvalidArgument(msg)
    for name, value in (("u", u), ("W", W)):
        bad = np.argwhere(~np.isfinite(value))
        if bad.size:
            where = ", ".join(map(str, bad[0]))
            value_text = repr(float(value[tuple(bad[0])]))
            msg = f"{name}[{where}]={value_text} must be finite (T_θ is undefined otherwise)"
            raise InvalidArgument(msg)
    return u, W


def _split(theta, d) -> tuple[np.ndarray, np.ndarray]:
    d = _int("d", d, 2, "the embedding dimension; two characters per position")
    theta = np.ascontiguousarray(theta, dtype=np.float64)
    if theta.shape != (d + d * d,):
        msg = f"theta has shape {theta.shape}; expected ({d + d * d},) = d + d*d with d={d} ({LAYOUT})"
        raise InvalidArgument(msg)
    bad = np.flatnonzero(~np.isfinite(theta))
    if bad.size:
        msg = f"theta[{int(bad[0])}]={float(theta[bad[0]])!r} must be finite (T_θ is undefined otherwise)"
        raise InvalidArgument(msg)
    return theta[:d], theta[d:].reshape(d, d)


# ----------------------------------------------------------------------------------------------
# Words, rules and the automaton (exact, no model)


def encode(*words: str) -> np.ndarray:
    """Return words over {a, b} of one length as an (n, L) int64 array (a = 0, b = 1)."""
    if not words or any(not isinstance(w, str) or not w or set(w) - {"a", "b"} for w in words):
        msg = f"words={words!r} must be one or more non-empty strings over 'a' and 'b'"
        raise InvalidArgument(msg)
    if len({len(w) for w in words}) != 1:
        msg = f"words={words!r} have different lengths; a batch holds strings of one length"
        raise InvalidArgument(msg)
    return np.array([[0 if ch == "a" else 1 for ch in w] for w in words], dtype=np.int64)


def decode(chars) -> list[str]:
    """Return the rows of an (n, L) character array as words over {a, b}."""
    return ["".join("ab"[c] for c in row) for row in _strings(chars, "chars")]


def labels_of(chars) -> np.ndarray:
    """Return the labels of characters (a → +1, b → −1), any shape."""
    return 1 - 2 * np.asarray(chars, dtype=np.int64)


def parity(strings) -> np.ndarray:
    """+1 iff the number of b's is even (the parity check of Sec. 3), one label per row."""
    chars = _strings(strings)
    return np.where(chars.sum(axis=1) % 2 == 0, 1, -1).astype(np.int64)


def automaton_states(strings, start: str = "t1") -> np.ndarray:
    """Return the states s_1..s_L of the 2-state automaton of Sec. 5.1 as characters, (n, L).

    s_1 = w_1 and s_{t+1} = a if s_t = w_{t+1}, otherwise b (s_{t+1} = s_t ⊕ w_{t+1}). Flag
    ``automaton_start``: ``t1`` applies the transition for t = 1..L−1 (the worked example abb);
    ``t2`` only for t = 2..L−1 (the sentence "updates s_t for t >= 2"), carrying s_2 = s_1.
    """
    chars = _strings(strings)
    _choice("automaton_start", start, AUTOMATON_STARTS)
    inputs = chars.copy()
    if start == "t2" and inputs.shape[1] >= 2:
        inputs[:, 1] = 0  # no transition into s_2: xor with a leaves the state unchanged
    return np.bitwise_xor.accumulate(inputs, axis=1)


def automaton(strings, start: str = "t1") -> np.ndarray:
    """Return the last state as a label: +1 (a) is "even parity" (Sec. 5.1); see :func:`automaton_states`."""
    return labels_of(automaton_states(strings, start)[:, -1])


def ground_truth_cot(strings) -> np.ndarray:
    """Return the ground-truth CoT chain w_1..w_{2L0−1} of Sec. 5.2 as characters, (n, 2L0−1).

    "take X^t and compare its tokens w_{L0+t−1} and w_t. If they are the same, let w_{L0+t} = a;
    otherwise, let w_{L0+t} = b", for t = 1..L0−1, with L0 the width of ``strings``; the
    output is ``labels_of(chain[:, -1])``. L0 = 1 gives the chain w_1 (no step). The same chain
    is Alg. 1 run with an exact "first = last" predictor (module docstring).
    """
    chars = _strings(strings)
    L0 = chars.shape[1]
    chain = np.empty((chars.shape[0], 2 * L0 - 1), dtype=np.int64)
    chain[:, :L0] = chars
    for t in range(1, L0):
        chain[:, L0 + t - 1] = chain[:, L0 + t - 2] ^ chain[:, t - 1]
    return chain


# ----------------------------------------------------------------------------------------------
# The model on arbitrary strings, and the two rollouts


@dataclass(frozen=True, eq=False)
class Prediction:
    """T_θ and its sign: ``y`` ∈ {+1, −1, 0} (0: T = 0 under ``count_as_error``); ``zero`` marks T = 0."""

    T: np.ndarray
    y: np.ndarray
    zero: np.ndarray
    sign_zero: str


def predict(u, W, lam, tokens, sign_zero: str = "+1") -> Prediction:
    """Evaluate T_θ(X) = Σ_ℓ φ_ℓ u[i_ℓ], φ = softmax(W[i_ℓ, i_L]/λ), on each row of ``tokens``; take the sign.

    ``tokens`` is an (n, L) array of characters (any strings, not only a training set); the
    token of position ℓ (0-based) is 2ℓ + c, so d >= 2L is required. ``sign_zero`` as in the
    module docstring.
    """
    u, W = _params(u, W)
    lam = _positive_lam(lam)
    _choice("sign_zero", sign_zero, SIGN_ZERO)
    chars = _strings(tokens, "tokens")
    _need_dim(u.size, chars.shape[1], "predict")
    T = np.empty(chars.shape[0])
    predict_kernel(u, W, chars, lam, T)
    zero = T == 0.0
    y = np.where(T > 0, 1, -1).astype(np.int64)
    y[zero] = 1 if sign_zero == "+1" else 0
    return Prediction(T, y, zero, sign_zero)


@dataclass(frozen=True, eq=False)
class Rollout:
    """A CoT rollout on a batch.

    Attributes
    ----------
    procedure : str
        ``truncated`` (Alg. 1) or ``full`` (Sec. 5.2).
    chain : ndarray (n, 2L−1) int64
        w_1 ⋯ w_{2L−1} as characters (L the input length, L0 for full CoT).
    output : ndarray (n,) int64
        y_{L−1} (truncated) or w_{2L0−1} (full) as a label; 0 under ``count_as_error`` when a step had T = 0.
    n_zero : ndarray (n,) int64
        Number of steps with T = 0.
    zero_final : ndarray (n,) bool
        Whether the last step had T = 0.
    sign_zero : str
    """

    procedure: str
    chain: np.ndarray
    output: np.ndarray
    n_zero: np.ndarray
    zero_final: np.ndarray
    sign_zero: str


def _rollout(kernel, procedure, theta, lam, d, chars, sign_zero) -> Rollout:
    u, W = _split(theta, d)
    lam = _positive_lam(lam)
    _choice("sign_zero", sign_zero, SIGN_ZERO)
    n, L = chars.shape
    chain = np.empty((n, 2 * L - 1), dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    n_zero = np.empty(n, dtype=np.int64)
    zero_final = np.empty(n, dtype=np.int64)
    kernel(u, W, chars, lam, sign_zero == "count_as_error", chain, out, n_zero, zero_final)
    return Rollout(procedure, chain, out, n_zero, zero_final.astype(bool), sign_zero)


def truncated_cot(theta, lam, d, strings, sign_zero: str = "+1") -> Rollout:
    """Alg. 1 (truncated CoT, Sec. 5.1) as printed, on each row of ``strings`` (n, L).

    "for t ∈ {1, …, L−1} do: Predict y_t = T_{θ_T}(X). Let w_{L+t} = a if y_t = 1 and w_{L+t} =
    b if y_t = −1. Update X = w_{t+1} ⋯ w_{L+t}. end for. Output y_{L−1}", with y_t = sign T_θ(X)
    (spec §2.7). The window always has length L and is read at positions 1..L, so d >= 2L.
    L = 1 is refused: the loop does not run and y_0 is never defined. +1 means an even number
    of b's.
    """
    chars = _strings(strings, min_length=2, why="Alg. 1 runs t = 1..L-1 and outputs y_{L-1}; at L = 1 it "
                                                 "makes no prediction")
    d = _int("d", d, 2, "the embedding dimension")
    _need_dim(d, chars.shape[1], "truncated CoT (Alg. 1)")
    return _rollout(truncated_kernel, "truncated", theta, lam, d, chars, sign_zero)


def full_cot(theta, lam, d, strings, L0, sign_zero: str = "+1") -> Rollout:
    """Full CoT inference (Sec. 5.2, Fig. 1) on each row of ``strings`` (n, L0).

    X^1 = w_1 ⋯ w_{L0}; for t = 1..L0−1, w_{L0+t} = a if sign T_θ(X^t) = +1 else b and X^{t+1} =
    w_1 ⋯ w_{L0+t}; the output is w_{2L0−1}. The inputs have lengths L0..2L0−2, so d >= 2(2L0−2)
    (the paper's "d >= 2L0 − 2" is not enough for the embedding E_ℓ^b = e_{2ℓ}).
    """
    L0 = _int("L0", L0, 2, "Sec. 5.2 fixes L0 >= 2")
    chars = _strings(strings)
    if chars.shape[1] != L0:
        msg = f"strings have length {chars.shape[1]} but L0={L0}; full CoT starts from inputs of length L0"
        raise InvalidArgument(msg)
    d = _int("d", d, 2, "the embedding dimension")
    _need_dim(d, 2 * L0 - 2, f"full CoT with L0={L0}")
    return _rollout(full_kernel, "full", theta, lam, d, chars, sign_zero)


@dataclass(frozen=True)
class CoTAccuracy:
    """Parity accuracy of a CoT procedure over all 2^L inputs (spec §2.7 "Metrics").

    ``fraction`` = ``n_correct``/``n``; ``n_zero_rollouts`` inputs had a T = 0 step (wrong under
    ``count_as_error``), ``n_zero_steps`` T = 0 predictions in all, ``n_zero_final`` at the last step.
    """

    procedure: str
    L: int
    sign_zero: str
    n: int
    n_correct: int
    fraction: float
    n_zero_rollouts: int
    n_zero_steps: int
    n_zero_final: int


def cot_accuracy(theta, lam, d, L, *, procedure: str = "truncated", sign_zero: str = "+1") -> CoTAccuracy:
    """Run ``procedure`` (``truncated``: Alg. 1, window L; ``full``: L0 = L) on all 2^L inputs vs parity."""
    _choice("procedure", procedure, PROCEDURES)
    L = _int("L", L, 2, "Alg. 1 and full CoT need inputs of length >= 2")
    if L > MAX_ENUMERATED:
        msg = f"L={L} must be <= {MAX_ENUMERATED} (2^L rollouts are enumerated)"
        raise InvalidArgument(msg)
    strings = strings_of_length(2, L)
    if procedure == "truncated":
        roll = truncated_cot(theta, lam, d, strings, sign_zero)
    else:
        roll = full_cot(theta, lam, d, strings, L, sign_zero)
    correct = int(np.sum(roll.output == parity(strings)))
    return CoTAccuracy(procedure, L, sign_zero, strings.shape[0], correct, correct / strings.shape[0],
                       int(np.sum(roll.n_zero > 0)), int(roll.n_zero.sum()), int(roll.zero_final.sum()))


# ----------------------------------------------------------------------------------------------
# Exact oracles


def key_lookup_oracle(d: int, lam: float, keys: Mapping[int, int], *, gap: float = 4.0) -> np.ndarray:
    """Return a flat θ (:data:`LAYOUT`) with sign T_θ(X) = +1 iff c_L = c_{k(L)} exactly, every L in ``keys``.

    ``keys`` maps a query length L >= 2 to its key position k(L) ∈ 1..L−1 (1-based). With
    m = ln(max(L) − 1) + ``gap`` and M = λm::

        W[(k(L), c), (L, c)] = 2M,   W[(L, c), (L, c)] = M   (c = a, b; every other entry 0),
        u[(k, c)] = +1 for every key position k,   u[(L, c)] = −1 for every query length L,

    and u = 0 elsewhere. Key positions and query lengths must be disjoint (a token's u cannot be
    both); positions are tokens (ℓ, c) ↦ index 2(ℓ−1) + c.

    Why it works. Column (L, c_L) of W holds only the two entries above, so in a string of length
    L the scores are s_k = 2M if c_k = c_L (match) or 0 (mismatch), s_L = M, and 0 at the
    other L − 2 positions, whose u lies in [−1, 1]. With Z the softmax normaliser (scores /λ):

    * match: Z·T >= e^{2m} − e^{m} − (L − 2) = e^m(e^m − 1) − (L − 2) > 0, since e^m > L − 1
      gives e^m(e^m − 1) > (L − 1)(L − 2) >= L − 2 for L >= 3, and e^m > 1 suffices at L = 2;
    * mismatch: Z·T <= −e^{m} + (L − 1) < 0, since e^m > L − 1.

    So any ``gap`` > 0 decides every sign strictly (T = 0 never occurs); a larger ``gap`` pushes
    φ towards a one-hot on the key (match) or the query (mismatch) and |T| towards 1. A length-1
    string has T = u[(1, c)], +1 when position 1 is a key (the EP label of a single character).
    """
    d = _int("d", d, 2, "the embedding dimension")
    lam = _positive_lam(lam)
    if isinstance(gap, bool) or not isinstance(gap, numbers.Real) or not (math.isfinite(gap) and gap > 0):
        msg = f"gap={gap!r} must be a finite real > 0 (the margin of m = M/λ over ln(L_max − 1))"
        raise InvalidArgument(msg)
    if not keys:
        msg = "keys={} is empty; give at least one query length L >= 2 and its key position"
        raise InvalidArgument(msg)
    for L, k in keys.items():
        _int("keys (a query length)", L, 2, "a query length; length 1 needs no attention")
        _int(f"keys[{L}]", k, 1, "a 1-based key position")
        if k >= L:
            msg = f"keys[{L}]={k} must be a position before the query, 1 <= k <= {L - 1}"
            raise InvalidArgument(msg)
    overlap = sorted(set(keys.values()) & set(keys))
    if overlap:
        msg = (f"keys uses position {overlap[0]} both as a key position and as a query length; "
               f"u[({overlap[0]}, c)] cannot be +1 and -1 at once (restrict the lengths)")
        raise InvalidArgument(msg)
    _need_dim(d, max(keys), "the oracle")
    m = math.log(max(max(keys) - 1, 1)) + float(gap)
    M = lam * m
    u = np.zeros(d)
    W = np.zeros((d, d))
    for L, k in keys.items():
        for c in (0, 1):
            query, key = 2 * (L - 1) + c, 2 * (k - 1) + c
            W[key, query] = 2.0 * M
            W[query, query] = M
            u[key] = 1.0
            u[query] = -1.0
    return np.concatenate([u, W.reshape(-1)])


def ep_oracle(L_max: int, lam: float, d: int | None = None, *, gap: float = 4.0) -> np.ndarray:
    """θ whose sign is the EP label "first = last" (Sec. 3) exactly on every string of length 1..L_max.

    :func:`key_lookup_oracle` with k(L) = 1 for L = 2..L_max (d = 2L_max by default): the
    query attends to position 1 when c_1 = c_L (u = +1 there) and to itself otherwise (u = −1).
    """
    L_max = _int("L_max", L_max, 2, "even pairs needs lengths >= 2 for negative samples")
    d = 2 * L_max if d is None else d
    return key_lookup_oracle(d, lam, {L: 1 for L in range(2, L_max + 1)}, gap=gap)


def cot_oracle(L0: int, lam: float, d: int | None = None, *, gap: float = 4.0) -> np.ndarray:
    """θ whose sign is the CoT label c_L = c_{L−L0+1} (Sec. 5.2) exactly on every string of length L0..2L0−2.

    :func:`key_lookup_oracle` with k(L) = L − L0 + 1 (d = 2(2L0−2) by default). These are the
    lengths full CoT inference reads: key positions 1..L0−1 and query positions L0..2L0−2 are
    disjoint. This family does not extend to the training lengths 2L0−1 (key L0 is a query
    position) or to the regulariser lengths 2..L0−1 (their queries are key positions).
    """
    L0 = _int("L0", L0, 2, "Sec. 5.2 fixes L0 >= 2")
    d = 2 * (2 * L0 - 2) if d is None else d
    return key_lookup_oracle(d, lam, {L: L - L0 + 1 for L in range(L0, 2 * L0 - 1)}, gap=gap)
