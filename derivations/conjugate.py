"""Sums that cancel, rewritten by their conjugate: ``P + Q√B = (P² − Q²B) / (P − Q√B)``.

Interval arithmetic cannot see that ``3 − 4u − √((4u − 3)² − 16u)`` is ``8u/3 + O(u²)`` for small
``u``: both terms are close to 3, and the enclosure of their difference is as wide as the
enclosures of the terms, so no box near ``u = 0`` is ever proven (w° of [W] Eq. (11) near
w* = 0 is such a value). Multiplying by the conjugate moves the cancellation into the
polynomial ``P² − Q²B``, where expansion removes it exactly (here ``16u``), and leaves a
denominator without cancellation. The identity holds wherever ``P − Q√B ≠ 0``; where that
denominator vanishes the rewritten form is undefined, which interval arithmetic reports as
such (it never proves a box there).
"""

from __future__ import annotations

import sympy as sp

#: sums larger than this (in operations) are left alone: expanding P² − Q²B could take long
MAX_OPS = 300
#: nor is a sum whose P² − Q²B would expand to more terms than this (:func:`_expanded_terms`)
MAX_EXPANDED_TERMS = 400


def _expanded_terms(expr: sp.Expr) -> int:
    """An upper bound on the terms of ``expand(together(expr))``'s numerator, counted without expanding.

    A sum adds its parts' counts, a product multiplies them, an integer power n (of either sign:
    ``together`` multiplies denominators out) raises to |n|; anything else is one term.
    """
    if expr.is_Add:
        return sum(_expanded_terms(a) for a in expr.args)
    if expr.is_Mul:
        out = 1
        for a in expr.args:
            out *= _expanded_terms(a)
            if out > 10**6:
                break
        return out
    if expr.is_Pow and expr.exp.is_Integer:
        base = _expanded_terms(expr.base)
        return base ** min(abs(int(expr.exp)), 20) if base > 1 else 1
    return 1


def _half_odd_base(term: sp.Expr) -> dict[sp.Expr, sp.Rational]:
    """The bases B of ``term``'s factors B^(k/2) with k odd, with their exponents."""
    out = {}
    for base, e in term.as_powers_dict().items():
        if isinstance(e, sp.Rational) and e.q == 2:
            out[base] = e
    return out


def _terms(expr: sp.Expr) -> int:
    num, _ = sp.fraction(sp.together(expr))
    return len(sp.Add.make_args(sp.expand(num)))


def _opposite_signs(P: sp.Expr, R: sp.Expr, points) -> bool:
    """P and R (= Q√B) have opposite signs (or one vanishes) at every point where both are real numbers.

    Only then can ``P + R`` cancel; where they have one sign, it is the conjugate ``P − R`` that
    would cancel, and the rewrite would make the evaluation worse.
    """
    for point in points:
        a, b = P.evalf(15, subs=point), R.evalf(15, subs=point)
        if a.is_real and b.is_real and a.is_finite and b.is_finite and a * b > 0:
            return False
    return True


def _conjugate(node: sp.Add, points=()) -> sp.Expr | None:
    """``node`` rewritten by the conjugate of one square root, when expansion cancels terms; else None."""
    if sp.count_ops(node) > MAX_OPS:
        return None
    bases: dict[sp.Expr, int] = {}
    for term in node.args:
        for base in _half_odd_base(term):
            bases[base] = bases.get(base, 0) + 1
    for base in sorted(bases, key=sp.default_sort_key):
        root = sp.sqrt(base)
        p_terms, q_terms = [], []
        for term in node.args:
            if base in _half_odd_base(term):
                q_terms.append(sp.powsimp(term / root))
            else:
                p_terms.append(term)
        if not p_terms or not q_terms:
            continue
        P, Q = sp.Add(*p_terms), sp.Add(*q_terms)
        if Q.has(root) or P.has(root):
            continue
        if _expanded_terms(P**2) + _expanded_terms(Q**2 * base) > MAX_EXPANDED_TERMS:
            continue
        if points and not _opposite_signs(P, Q * root, points):
            continue
        difference = sp.together(P**2 - Q**2 * base)
        num, den = sp.fraction(difference)
        num = sp.expand(num)
        if len(sp.Add.make_args(num)) >= _terms(P**2) + _terms(Q**2 * base):
            continue  # nothing cancelled: the rewrite would only add a denominator
        return sp.factor_terms(num) / (den * (P - Q * root))
    return None


def rationalise_cancellations(expr: sp.Expr, points=()) -> tuple[sp.Expr, int]:
    """``expr`` with every cancelling sum ``P + Q√B`` (inner sums first) replaced by its conjugate form.

    A sum is rewritten when expanding ``P² − Q²B`` removes terms and, if ``points`` (a few
    ``{symbol: value}`` of the region of interest) are given, ``P`` and ``Q√B`` have opposite
    signs at each of them. Returns the rewritten expression and the number of sums rewritten.
    Equal to ``expr`` wherever each rewritten sum's conjugate ``P − Q√B`` is non-zero.
    """
    count = 0
    memo: dict[sp.Basic, sp.Basic] = {}

    def walk(node: sp.Basic) -> sp.Basic:
        nonlocal count
        if node in memo:
            return memo[node]
        if node.is_Atom or not node.args:
            return node
        args = [walk(a) for a in node.args]
        out = node.func(*args) if any(a is not b for a, b in zip(args, node.args, strict=True)) else node
        if isinstance(out, sp.Add):
            rewritten = _conjugate(out, points)
            if rewritten is not None:
                count += 1
                out = rewritten
        memo[node] = out
        return out

    return walk(sp.sympify(expr)), count
