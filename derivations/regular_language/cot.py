"""Parity by chain of thought: the procedures of Sec. 5.1–5.2 and the stationarity of L_CoT at 0.

rl.cf.cot_recurrences: the full CoT ground truth (Sec. 5.2), truncated CoT (Alg. 1) run with a
perfect EP predictor (first token = last token), and the 2-state automaton (Sec. 5.1) in both
``automaton_start`` readings, each compared exhaustively with the parity and with its ±1
recurrence; the printed worked examples (abb under the automaton, abb with L0 = 3, Fig. 1).
rl.cf.cot_stationarity: ∇L_CoT(0, 0) = 0 exactly, so GD on L_CoT alone never leaves 0.
"""

from __future__ import annotations

import math

import sympy as sp

from derivations.core import Formula, Item
from derivations.domain import Domain
from derivations.regular_language import data as D
from derivations.regular_language import early_steps as E
from derivations.regular_language import model as M
from derivations.predicates import Predicate
from derivations.regular_language.symbols import check_reading, eta

A, B = "a", "b"


def same(x: str, y: str) -> str:
    """a if the two characters are equal, else b (the label of a compared pair)."""
    return A if x == y else B


def full_cot(X: tuple[str, ...]) -> tuple[str, ...]:
    """Sec. 5.2 ground truth: X^1 = X; w_{L0+t} = a iff w_{L0+t-1} = w_t, t = 1..L0-1; returns w_1..w_{2L0-1}."""
    w = list(X)
    L0 = len(X)
    for t in range(1, L0):
        w.append(same(w[L0 + t - 2], w[t - 1]))
    return tuple(w)


def truncated_cot(X: tuple[str, ...], predict=D.first_last_label) -> str | None:
    """Alg. 1 with a predictor of the EP label: window of length L, append the prediction, drop the first token.

    Returns the token of y_{L-1} (None for L = 1: the loop does not run and y_{L-1} = y_0 is undefined).
    """
    window = list(X)
    y = None
    for _ in range(1, len(X)):
        y = A if predict(tuple(window)) == 1 else B
        window = window[1:] + [y]
    return y


def truncated_sequence(X: tuple[str, ...]) -> tuple[str, ...]:
    """w_1..w_{2L-1} produced by Alg. 1 with the perfect EP predictor."""
    w = list(X)
    L = len(X)
    for t in range(1, L):
        w.append(same(w[t - 1], w[L + t - 2]))
    return tuple(w)


def automaton(X: tuple[str, ...], start: str = "t1") -> tuple[str, ...]:
    """States s_1..s_L: s_1 = w_1, s_{t+1} = a iff s_t = w_{t+1}; transitions for t >= 1 (``t1``) or t >= 2 (``t2``,
    with s_2 = s_1 carried over)."""
    check_reading("automaton_start", start)
    states = [X[0]]
    first = 1 if start == "t1" else 2
    for t in range(1, len(X)):
        states.append(same(states[-1], X[t]) if t >= first else states[-1])
    return tuple(states)


def parity_token(X) -> str:
    """a iff the number of b's is even."""
    return A if D.parity_label(X) == 1 else B


def _sign(c: str) -> int:
    return D.SIGN[c]


def _product(values) -> int:
    return math.prod(values)


def _inputs(lo: int, hi: int):
    return lambda: (s for n in range(lo, hi + 1) for s in D.strings(n))


def item_cot_recurrences(max_len: int = 10) -> Item:
    """rl.cf.cot_recurrences — Sec. 5.1 (automaton, Alg. 1), Sec. 5.2 (CoT, Fig. 1).

    Definitions used: the printed procedures (spec §2.7), run literally; ±1 encoding a = +1,
    b = -1. Printed statements: "the label w_{2L0-1} is the parity of X", "after L - 1 iterations,
    the final prediction provides the parity", "the character a of the last state indicates …
    even parity" (flag ``automaton_start``: ``t1`` canonical, ``t2`` the sentence "updates s_t for
    t >= 2"), and the worked examples. Derived ±1 recurrences: w_{L0+t} = w_{L0+t-1}·w_t,
    w_{L+t} = w_t·w_{L+t-1}, s_{t+1} = s_t·w_{t+1}. Exhaustive for lengths up to ``max_len``.
    """
    show = "".join
    predicates = [
        Predicate("rl.cf.cot_recurrences.full_cot.parity", "Sec. 5.2", parity_token, lambda X: full_cot(X)[-1],
                  _inputs(2, max_len), f"w_(2L0-1) of the ground-truth CoT vs parity, L0 = 2..{max_len}",
                  r"\text{``the label }w_{2L_0-1}\text{ is the parity of }X\text{''}", show=show),
        Predicate("rl.cf.cot_recurrences.full_cot.recurrence", "derived ±1 form",
                  lambda X: _full_product_form(X), lambda X: tuple(_sign(c) for c in full_cot(X)),
                  _inputs(2, max_len), "w_{L0+t} = w_{L0+t-1} w_t (±1) vs the procedure", show=show),
        Predicate("rl.cf.cot_recurrences.truncated.parity", "Sec. 5.1, Alg. 1", parity_token, truncated_cot,
                  _inputs(2, max_len), f"Alg. 1 with a perfect EP predictor vs parity, L = 2..{max_len}",
                  r"\text{``after }L-1\text{ iterations, the final prediction provides the parity''}", show=show),
        Predicate("rl.cf.cot_recurrences.truncated.recurrence", "derived ±1 form",
                  lambda X: _truncated_product_form(X), lambda X: tuple(_sign(c) for c in truncated_sequence(X)),
                  _inputs(2, max_len), "w_{L+t} = w_t w_{L+t-1} (±1) vs Alg. 1", show=show),
    ]
    for start in ("t1", "t2"):
        predicates.append(Predicate(
            f"rl.cf.cot_recurrences.automaton.parity.{start}", "Sec. 5.1 (2-state automaton)", parity_token,
            lambda X, s=start: automaton(X, s)[-1], _inputs(1, max_len),
            f"last state vs parity, transitions from t = {start[1]}", reading={"automaton_start": start},
            latex=r"\text{``The character }a\text{ of the last state indicates \dots even parity''}", show=show))
        predicates.append(Predicate(
            f"rl.cf.cot_recurrences.automaton.example_abb.{start}", "Sec. 5.1 worked example",
            lambda X: (A, B, A), lambda X, s=start: automaton(X, s), lambda: [tuple("abb")],
            "X = abb: s_1 = a -> s_2 = b -> s_3 = a as printed", reading={"automaton_start": start},
            latex=r"s_1=a\rightarrow s_2=b\rightarrow s_3=a", show=show))
    predicates.append(Predicate(
        "rl.cf.cot_recurrences.automaton.recurrence", "derived ±1 form",
        lambda X: tuple(_product(_sign(c) for c in X[:t]) for t in range(1, len(X) + 1)),
        lambda X: tuple(_sign(c) for c in automaton(X, "t1")), _inputs(1, max_len),
        "s_t = w_1 ⋯ w_t (±1) vs the automaton (t1)", reading={"automaton_start": "t1"}, show=show))
    predicates.append(Predicate(
        "rl.cf.cot_recurrences.fig1_abb", "Fig. 1 (abb, L0 = 3)", parity_token, lambda X: full_cot(X)[-1],
        lambda: [tuple("abb")], "the rolled-out w_5 of 'CoT on input abb, where L0 = 3' vs the parity of abb; the "
        "figure itself is not in the text (its CoT inputs are full_cot(abb) = abbba read as X^1 = abb, X^2 = abbb)",
        show=show))
    return Item("rl.cf.cot_recurrences", "Sec. 5.1, Sec. 5.2, Fig. 1, Alg. 1", "", "CoT recurrences", [],
                         predicates=predicates,
                         notes=["Alg. 1 at L = 1 runs no iteration and outputs y_0, which it never defines"])


def _full_product_form(X) -> tuple[int, ...]:
    w = [_sign(c) for c in X]
    L0 = len(X)
    for t in range(1, L0):
        w.append(w[L0 + t - 2] * w[t - 1])
    return tuple(w)


def _truncated_product_form(X) -> tuple[int, ...]:
    w = [_sign(c) for c in X]
    L = len(X)
    for t in range(1, L):
        w.append(w[t - 1] * w[L + t - 2])
    return tuple(w)


def item_cot_stationarity(L0_values=(3, 4)) -> Item:
    """rl.cf.cot_stationarity — derived; explains the Sec. 5.2 observation "the gradient vanishes".

    Definition used: L_CoT of Sec. 5.2 (lengths L0..L_max, CoT labels, no regulariser) on the
    enumerated data, both ``cot_max_len``. Derived: ∇L_CoT(0, 0) = 0 exactly (sum of squares of
    every gradient coordinate in rationals), so exact GD from 0 stays at 0 (3 steps); for every
    length, position and character the CoT labels are balanced; with the regulariser the first
    step is u_1 = (η/4)(E_1^a + E_1^b).
    """
    formulas, predicates = [], []
    for L0 in L0_values:
        for cot_max_len in ("2L0-1", "2L0-2"):
            alone = D.cot_dataset(L0, cot_max_len, regulariser=False)
            tag = alone.name.replace(" ", "")
            total = sp.Add(*[g**2 for g in M.gradient_at(alone, {}).values()])
            formulas.append(Formula(f"rl.cf.cot_stationarity.gradient_at_zero.{tag}", "derived (Sec. 5.2)",
                                    sp.Integer(0), total, Domain({}), "Σ over all coordinates of (∂L_CoT/∂θ(0))²",
                                    reading=alone.reading))
            theta3 = E.gd_steps(alone, 3)[3]
            formulas.append(Formula(f"rl.cf.cot_stationarity.gd_stays.{tag}", "derived (Sec. 5.2)", sp.Integer(0),
                                    sp.Add(*[v**2 for v in theta3.values()]), E.ETA_LAM_DOMAIN,
                                    "‖θ_3‖² of exact GD on L_CoT alone from 0", reading=alone.reading))
            predicates.append(Predicate(
                f"rl.cf.cot_stationarity.balanced.{tag}", "derived (Sec. 5.2)", lambda case: True,
                lambda case, ds=alone: (lambda n: n[0] == n[1])(D.class_counts(ds, *case)),
                lambda ds=alone: [(L, p, c) for L in ds.lengths() for p in range(1, L + 1) for c in D.CHARS],
                "N^+ = N^- among the samples of length L with character c at position ℓ",
                reading=alone.reading, show=lambda c: f"L={c[0]}, position {c[1]}, char {c[2]}"))
            regularised = D.cot_dataset(L0, cot_max_len)
            theta1 = E.gd_steps(regularised, 1)[1]
            for p in range(1, regularised.max_len + 1):
                for c in D.CHARS:
                    rtag = regularised.name.replace(" ", "")
                    formulas.append(Formula(
                        f"rl.cf.cot_stationarity.with_regulariser.u1.l{p}{c}.{rtag}", "spec (as rl.cf.first_step)",
                        eta / 4 if p == 1 else sp.Integer(0), theta1[M.u_symbol(p, c)], E.ETA_DOMAIN,
                        "u_1 = (η/4)(E_1^a + E_1^b) with L_Reg", reading=regularised.reading))
    return Item("rl.cf.cot_stationarity", "derived (Sec. 5.2)", "", "L_CoT stationary at 0", formulas,
                         predicates=predicates,
                         notes=["float64 drift from the exact stationary point over 2e4 steps: numerics"])
