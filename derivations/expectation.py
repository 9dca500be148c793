"""Gaussian and Rademacher expectations of polynomial x exp(quadratic) integrands.

This is item 3 of §9 of the induction-head specification ("Gaussian and Rademacher expectation
engine"), used by ih.cf.lemma7 (Lemma 7, App. D), ih.cf.L_IH2 (C.3.2, Eq. (10)) and ih.dv.boolean.

Level 1 (explicit variables)
    :func:`gaussian_expectation` and :func:`rademacher_expectation` take a SymPy expression that is
    a sum of terms ``coeff * prod_i x_i**k_i * exp(x^T B x + c^T x + d)`` in the listed variables.
    For iid N(0, 1) variables, with M := I - 2B and Sigma := M^{-1},

        E[x^k exp(x^T B x + c^T x)] = det(M)^{-1/2} exp(c^T Sigma c / 2) E_{N(Sigma c, Sigma)}[x^k],

    valid iff M is positive definite; the leading principal minors of M (> 0) are returned as
    side conditions (Sylvester's criterion). For exp(a X Y): M = [[1, -a], [-a, 1]], condition
    ``1 - a**2 > 0`` -- Lemma 7's "a < 1" is not the domain. Moments come from Isserlis' theorem.
    For iid Unif{+-1} variables, x**k is reduced to x**(k mod 2), x**2 inside the exponent to 1,
    and each block of variables coupled by the exponent is summed over its sign patterns; the
    result is rewritten with cosh/sinh (E e^{aXY} = cosh a).

    Independence bookkeeping: the variables of a term split into blocks (connected components
    of the graph whose edges are the cross terms x_i x_j of the exponent). Blocks factor. A block
    without a linear exponent term is invariant under flipping all its signs, so it vanishes when
    its total degree is odd; the certificate names the odd variable(s). A term that vanishes this
    way still contributes its integrability conditions: the symmetry argument (and linearity of
    E) needs E|term| < oo, so ``conditions`` covers every term, vanishing or not.

Level 2 (sums over index ranges of symbolic length L)
    :func:`expect_sum_product` computes E[sum_{s in A} sum_{s' in B} a_s b_{s'}] for summand
    :class:`Pattern` s over :class:`IndexRange` s whose bounds are affine in L, and
    :func:`expect_square` the expectation of the square of a signed sum of such sums. The double
    sum is split into cells by every coincidence that changes the joint law of the factors:
    s at a special value (s + k equal to a fixed position of either pattern), s' likewise, and
    s' - s equal to a difference k - k' of offsets; the remaining pairs are generic. Each cell's
    count is exact (inclusion-exclusion on ranges, a polynomial in L); each cell's expectation
    is a Level-1 computation on representative variables. Every comparison between positions
    must come out the same for every integer L >= L_min, otherwise InvalidArgument asks for a
    larger L_min; the result is then exact for all integers L >= L_min.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import sympy
from sympy.core.function import AppliedUndef

from derivations.indices import IndexRange
from derivations.errors import InternalError, InvalidArgument, unknown_name

__all__ = [
    "L_SYMBOL",
    "LAWS",
    "Case",
    "Expectation",
    "IndexRange",
    "Pattern",
    "expect_square",
    "expect_sum_product",
    "gaussian_expectation",
    "rademacher_expectation",
    "second_moment_conditions",
    "x",
]

LAWS = ("gaussian", "rademacher")
#: Default sequence-length symbol of Level 2.
L_SYMBOL = sympy.Symbol("L", integer=True, positive=True)
#: Default sequence function for :class:`Pattern`: write ``x(s - 1)``, ``x(L)``.
x = sympy.Function("x")
#: Rademacher blocks are summed over 2**k sign patterns; beyond this k the sum is refused.
_MAX_RADEMACHER_BLOCK = 14


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One cell of a Level-2 double sum.

    Attributes
    ----------
    description : str
        Which pairs (s, s') the cell holds, e.g. ``"s' = s + 1 (s, s' generic)"``.
    count : sympy.Expr
        Number of pairs in the cell, exact for every integer L >= L_min.
    value : sympy.Expr
        E[a_s b_{s'}] for any pair of the cell.
    conditions : tuple of sympy.Boolean
        Existence conditions of that expectation.
    certificate : str
        Why ``value`` is 0, when it is.
    """

    description: str
    count: sympy.Expr
    value: sympy.Expr
    conditions: tuple[sympy.Boolean, ...]
    certificate: str = ""


@dataclass(frozen=True)
class Expectation:
    """An exact expectation with the conditions under which it exists.

    Attributes
    ----------
    value : sympy.Expr
        The expectation, valid where every condition holds.
    conditions : tuple of sympy.Boolean
        Side conditions for E|integrand| < oo (Gaussian: I - 2B positive definite for the
        exponent of every term, as leading principal minors > 0). Empty when always finite.
    certificate : str
        For every term (Level 1) or cell (Level 2) that vanishes by independence/symmetry: the
        variable(s) of odd degree and why. Empty when nothing vanished.
    cases : tuple of Case
        Level 2 only: the cells of the double sum.
    """

    value: sympy.Expr
    conditions: tuple[sympy.Boolean, ...]
    certificate: str = ""
    cases: tuple[Case, ...] = ()


# ---------------------------------------------------------------------------------------------
# Level 1: parsing
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Term:
    """``coeff * prod x_i**powers[i] * exp(sum quad[(i, j)] x_i x_j + sum lin[i] x_i)``."""

    source: sympy.Expr
    coeff: sympy.Expr
    powers: tuple[int, ...]
    quad: tuple[tuple[tuple[int, int], sympy.Expr], ...]
    lin: tuple[tuple[int, sympy.Expr], ...]


def _check_variables(variables) -> tuple[sympy.Symbol, ...]:
    if isinstance(variables, sympy.Basic | str) or not isinstance(variables, Iterable):
        msg = f"variables={variables!r} must be a list of sympy Symbols, e.g. [X, Y, Z]"
        raise InvalidArgument(msg)
    out = tuple(variables)
    for v in out:
        if not isinstance(v, sympy.Symbol):
            msg = (
                f"variables contains {v!r}, which is not a sympy Symbol; "
                "pass Symbols, e.g. sympy.symbols('X Y')"
            )
            raise InvalidArgument(msg)
    seen = set()
    for v in out:
        if v in seen:
            msg = (
                f"variables={list(out)} lists {v} twice; each variable is one independent draw, "
                "list it once"
            )
            raise InvalidArgument(msg)
        seen.add(v)
    return out


def _hyperbolic_to_exp(expr: sympy.Expr, variables: tuple[sympy.Symbol, ...]) -> sympy.Expr:
    if not variables:
        return expr
    return expr.replace(
        lambda e: isinstance(e, sympy.cosh | sympy.sinh) and e.has(*variables),
        lambda e: e.rewrite(sympy.exp),
    )


def _split_exponent(expo, variables, term):
    """Return (quad, lin, const) of a quadratic exponent, or raise."""
    if expo == 0:
        return (), (), sympy.Integer(0)
    try:
        poly = sympy.Poly(expo, *variables)
    except sympy.PolynomialError:
        msg = (
            f"exponent {expo} of term {term} is not a polynomial in the variables; "
            "only exp(quadratic) factors are supported"
        )
        raise InvalidArgument(msg) from None
    if poly.total_degree() > 2:
        msg = (
            f"exponent {expo} of term {term} has degree {poly.total_degree()} in the variables; "
            "only exp of a polynomial of degree <= 2 has a closed-form expectation here"
        )
        raise InvalidArgument(msg)
    quad, lin, const = {}, {}, sympy.Integer(0)
    for monom, coef in poly.terms():
        idx = [i for i, e in enumerate(monom) for _ in range(e)]
        if not idx:
            const = coef
        elif len(idx) == 1:
            lin[idx[0]] = coef
        else:
            quad[(idx[0], idx[1])] = coef
    return tuple(sorted(quad.items())), tuple(sorted(lin.items())), const


def _decompose(expr, variables) -> list[_Term]:
    try:
        expr = sympy.sympify(expr)
    except (sympy.SympifyError, TypeError) as err:
        msg = f"expr={expr!r} is not a SymPy expression"
        raise InvalidArgument(msg) from err
    if not isinstance(expr, sympy.Expr):
        msg = f"expr={expr!r} must be a SymPy expression, got {type(expr).__name__}"
        raise InvalidArgument(msg)
    expr = _hyperbolic_to_exp(expr, variables)
    position = {v: i for i, v in enumerate(variables)}
    terms = []
    for t in sympy.Add.make_args(sympy.expand(expr)):
        coeff, expo, powers = sympy.Integer(1), sympy.Integer(0), [0] * len(variables)
        for f in sympy.Mul.make_args(t):
            if not variables or not f.has(*variables):
                coeff *= f
                continue
            if isinstance(f, sympy.exp):
                expo += f.args[0]
                continue
            base, e = f.as_base_exp()
            if isinstance(base, sympy.exp) and not e.has(*variables):
                expo += base.args[0] * e
                continue
            if base in position and e.is_Integer and e >= 0:
                powers[position[base]] += int(e)
                continue
            msg = (
                f"factor {f} of term {t} is neither a non-negative integer power of a variable nor "
                "exp(quadratic in the variables); the integrand must be polynomial x exp(quadratic)"
            )
            raise InvalidArgument(msg)
        quad, lin, const = _split_exponent(expo, variables, t)
        if const != 0:
            coeff *= sympy.exp(const)
        terms.append(_Term(t, coeff, tuple(powers), quad, lin))
    return terms


def _blocks(term: _Term) -> list[list[int]]:
    """Variables of the term grouped by the cross terms of its exponent (union-find)."""
    active = {i for i, k in enumerate(term.powers) if k}
    active |= {i for (i, j), _ in term.quad} | {j for (i, j), _ in term.quad}
    active |= {i for i, _ in term.lin}
    parent = {i: i for i in active}

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for (i, j), _ in term.quad:
        if i != j:
            parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for i in sorted(active):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values())


def _restrict(term: _Term, block: list[int], variables):
    # Hubs last: the leading principal minors of I - 2B then start with uncoupled variables and
    # are trivially positive (a star exp(x_L (a x_1 + b x_2)) gives only 1 - a**2 - b**2 > 0).
    degree = dict.fromkeys(block, 0)
    for (i, j), _ in term.quad:
        if i != j and i in degree:
            degree[i] += 1
            degree[j] += 1
    block = sorted(block, key=lambda g: (degree[g], g))
    local = {g: n for n, g in enumerate(block)}
    syms = tuple(variables[g] for g in block)
    powers = tuple(term.powers[g] for g in block)
    quad = tuple(((local[i], local[j]), c) for (i, j), c in term.quad if i in local)
    lin = tuple((local[i], c) for i, c in term.lin if i in local)
    return syms, powers, quad, lin


# ---------------------------------------------------------------------------------------------
# Level 1: Gaussian blocks
# ---------------------------------------------------------------------------------------------


def _precision_matrix(k, quad) -> sympy.Matrix:
    """M = I - 2B for exponent sum quad[(i, j)] x_i x_j (i <= j)."""
    m = sympy.eye(k)
    for (i, j), c in quad:
        if i == j:
            m[i, i] -= 2 * c
        else:
            m[i, j] -= c
            m[j, i] -= c
    return m


def _det(m: sympy.Matrix) -> sympy.Expr:
    # Explicit small formulas keep forms like 1 - (v + vs)**2 unexpanded (they read as printed).
    if m.rows == 1:
        return m[0, 0]
    if m.rows == 2:  # M is symmetric
        off = -m[0, 1] if m[0, 1].could_extract_minus_sign() else m[0, 1]
        return m[0, 0] * m[1, 1] - off**2  # 1 - (v + w)**2 rather than 1 - (-v - w)**2
    return sympy.expand(m.det(method="berkowitz"))


def _adjugate(m: sympy.Matrix) -> sympy.Matrix:
    if m.rows == 1:
        return sympy.Matrix([[1]])
    if m.rows == 2:
        return sympy.Matrix([[m[1, 1], -m[0, 1]], [-m[1, 0], m[0, 0]]])
    return m.adjugate(method="berkowitz").applyfunc(sympy.expand)


def _positive_definite_conditions(m: sympy.Matrix) -> list[sympy.Boolean]:
    out = []
    for r in range(1, m.rows + 1):
        cond = sympy.Gt(_det(m[:r, :r]), 0)
        if cond is not sympy.true:
            out.append(cond)
    return out


def _isserlis(cov: sympy.Matrix, idx: tuple[int, ...]) -> sympy.Expr:
    """E[z_{idx[0]} ... z_{idx[-1]}] for z ~ N(0, cov), by Isserlis/Wick pairings."""

    @lru_cache(maxsize=None)
    def rec(rest: tuple[int, ...]) -> sympy.Expr:
        if not rest:
            return sympy.Integer(1)
        if len(rest) % 2:
            return sympy.Integer(0)
        first, others = rest[0], list(rest[1:])
        total = sympy.Integer(0)
        for j in sorted(set(others)):
            # pairing `first` with any of the copies of j leaves the same remainder
            remainder = list(others)
            remainder.remove(j)
            total += others.count(j) * cov[first, j] * rec(tuple(remainder))
        return sympy.expand(total)

    return rec(tuple(sorted(idx)))


def _odd_certificate(syms, powers, law, quad, lin) -> str:
    odd = [f"{s}^{k}" if k != 1 else str(s) for s, k in zip(syms, powers, strict=True) if k % 2]
    law_name = "N(0, 1)" if law == "gaussian" else "Unif{+-1}"
    if len(syms) == 1 and not quad and not lin:
        s, k = syms[0], powers[0]
        return (
            f"{s} appears to the odd power {k} and is independent of every other factor "
            f"(it is in no exponent), so E[{s}^{k}] = 0 factors out ({law_name} is symmetric)"
        )
    if len(syms) == 1:
        return (
            f"{syms[0]} appears to the odd power {powers[0]}, independent of every other variable, "
            f"and its exponent is even in {syms[0]}, so the factor is odd under {syms[0]} -> -{syms[0]}"
        )
    names = ", ".join(map(str, syms))
    return (
        f"odd total degree {sum(powers)} (odd powers: {', '.join(odd)}) in the block ({names}) coupled "
        f"by the exponent, which has no linear term and is invariant under ({names}) -> -({names}); "
        "the block is independent of the rest, so its factor is odd and has mean 0"
    )


@lru_cache(maxsize=4096)
def _gaussian_block(syms, powers, quad, lin):
    """(value, conditions, certificate) of one independent Gaussian block."""
    k = len(syms)
    if not quad and not lin:  # a lone variable outside every exponent
        (p,) = powers
        if p % 2:
            return sympy.Integer(0), (), _odd_certificate(syms, powers, "gaussian", quad, lin)
        return sympy.Integer(math.prod(range(p - 1, 0, -2))), (), ""
    m = _precision_matrix(k, quad)
    conds = tuple(_positive_definite_conditions(m))
    if not lin and sum(powers) % 2:
        return sympy.Integer(0), conds, _odd_certificate(syms, powers, "gaussian", quad, lin)
    det, adj = _det(m), _adjugate(m)
    idx = tuple(i for i, p in enumerate(powers) for _ in range(p))
    if not lin:
        # Isserlis is homogeneous of degree r in the covariance: Sigma = adj/det pulls det^{-r} out.
        r = len(idx) // 2
        return sympy.factor_terms(_isserlis(adj, idx)) * det ** (-sympy.Rational(2 * r + 1, 2)), conds, ""
    c = sympy.Matrix([dict(lin).get(i, 0) for i in range(k)])
    sigma = adj / det
    mu = sigma * c
    moment = sympy.Integer(0)
    for split in itertools.product(*[range(p + 1) for p in powers]):
        centred = tuple(i for i, j in enumerate(split) for _ in range(j))
        weight = math.prod(math.comb(p, j) for p, j in zip(powers, split, strict=True))
        shift = sympy.Mul(*[mu[i] ** (p - j) for i, (p, j) in enumerate(zip(powers, split, strict=True))])
        moment += weight * shift * _isserlis(sigma, centred)
    quad_form = sympy.together((c.T * adj * c)[0, 0] / det)
    value = det ** sympy.Rational(-1, 2) * sympy.exp(quad_form / 2) * sympy.factor(moment)
    return value, conds, ""


# ---------------------------------------------------------------------------------------------
# Level 1: Rademacher blocks
# ---------------------------------------------------------------------------------------------


def _exp_to_hyperbolic(expr: sympy.Expr) -> sympy.Expr:
    return sympy.expand(expr.replace(sympy.exp, lambda u: sympy.cosh(u) + sympy.sinh(u)))


@lru_cache(maxsize=4096)
def _rademacher_block(syms, powers, quad, lin):
    powers = tuple(p % 2 for p in powers)  # x**2 = 1
    diag = sympy.Add(*[c for (i, j), c in quad if i == j])  # x_i**2 = 1 inside the exponent
    cross = tuple(((i, j), c) for (i, j), c in quad if i != j)
    const = sympy.exp(diag)
    if not cross and not lin:
        if powers[0]:
            return sympy.Integer(0), (), _odd_certificate(syms, powers, "rademacher", quad, lin)
        return const, (), ""
    if not lin and sum(powers) % 2:
        return sympy.Integer(0), (), _odd_certificate(syms, powers, "rademacher", cross, lin)
    k = len(syms)
    if k > _MAX_RADEMACHER_BLOCK:
        msg = (
            f"a block of {k} Rademacher variables ({', '.join(map(str, syms))}) is coupled by the exponent; "
            f"summing 2**{k} sign patterns is refused above {_MAX_RADEMACHER_BLOCK} variables"
        )
        raise InvalidArgument(msg)
    total = sympy.Integer(0)
    for eps in itertools.product((1, -1), repeat=k):
        mono = math.prod(e for e, p in zip(eps, powers, strict=True) if p)
        expo = sum(c * eps[i] * eps[j] for (i, j), c in cross) + sum(c * eps[i] for i, c in lin)
        total += mono * sympy.exp(expo)
    return const * _exp_to_hyperbolic(total / 2**k), (), ""


# ---------------------------------------------------------------------------------------------
# Level 1: public functions
# ---------------------------------------------------------------------------------------------


def _check_law(law: str) -> str:
    if law not in LAWS:
        raise unknown_name("law", law, LAWS)
    return law


def _expect(expr, variables, law: str, *, strict: bool = True) -> Expectation:
    variables = _check_variables(variables)
    block_fn = _gaussian_block if _check_law(law) == "gaussian" else _rademacher_block
    values, conditions, certificates = [], {}, []
    for term in _decompose(expr, variables):
        value, certificate, priority = term.coeff, "", math.inf
        for block in _blocks(term):
            restricted = _restrict(term, block, variables)
            v, conds, cert = block_fn(*restricted)
            for cond in conds:
                if cond is sympy.false and strict:
                    m = _precision_matrix(len(block), restricted[2])
                    msg = (
                        f"term {term.source} has no finite {law} expectation: I - 2B = {m.tolist()} for the "
                        f"block ({', '.join(map(str, restricted[0]))}) is not positive definite; "
                        "shrink the exponent's coefficients"
                    )
                    raise InvalidArgument(msg)
                conditions[cond] = None
            # prefer naming a lone variable outside every exponent (the clearest certificate)
            rank = len(block) + (1 if restricted[2] or restricted[3] else 0)
            if cert and rank < priority:
                certificate, priority = cert, rank
            value *= v
        if certificate:
            certificates.append(f"E[{term.source}] = 0: {certificate}")
            value = sympy.Integer(0)
        values.append(value)
    return Expectation(sympy.Add(*values), tuple(conditions), "\n".join(certificates))


def gaussian_expectation(expr, variables) -> Expectation:
    """E[expr] for iid N(0, 1) ``variables``, with its existence conditions.

    Parameters
    ----------
    expr : sympy.Expr
        A sum of terms polynomial(variables) x exp(quadratic(variables)); other symbols are
        real parameters. cosh/sinh of quadratics are accepted (rewritten with exp).
    variables : sequence of sympy.Symbol
        The independent standard normal variables, each listed once.

    Returns
    -------
    Expectation
        ``value`` valid where all ``conditions`` hold; ``conditions`` are the leading principal
        minors of I - 2B (> 0) of every term's exponent, e.g. ``1 - a**2 > 0`` for exp(a X Y)
        (Lemma 7, App. D of the induction-head paper, whose printed domain "a < 1" is too large).

    Raises
    ------
    InvalidArgument
        Non-polynomial factors, exponents of degree > 2, duplicate variables, or parameters
        that are numbers and violate a condition (the expectation diverges).
    """
    return _expect(expr, variables, "gaussian")


def rademacher_expectation(expr, variables) -> Expectation:
    """E[expr] for iid Unif{+-1} ``variables`` (always finite; ``conditions`` is empty).

    Same integrands as :func:`gaussian_expectation`. Blocks coupled by the exponent are summed
    over their sign patterns, e.g. E[exp(a X Y) Z**2] = cosh(a) (ih.dv.boolean, Lemma 7 analogue).
    """
    return _expect(expr, variables, "rademacher")


def second_moment_conditions(expr, variables, *, law: str = "gaussian") -> tuple[sympy.Boolean, ...]:
    """Conditions under which E[expr**2] < oo (the heavy-tail guard of Monte-Carlo estimates).

    Sufficient conditions: every product of two terms of ``expr`` is absolutely integrable, i.e.
    I - 2(B_i + B_j) is positive definite for every pair of exponents. Numerically violated
    conditions are returned as ``false``, not raised. For exp(a X Y) Z**2: ``1 - 4*a**2 > 0``.
    """
    variables = _check_variables(variables)
    if _check_law(law) == "rademacher":
        _decompose(expr, variables)  # validates the integrand
        return ()
    exponents = {}
    for term in _decompose(expr, variables):
        exponents[(term.quad, term.lin)] = term
    conditions: dict[sympy.Boolean, None] = {}
    keys = list(exponents)
    for a, b in itertools.combinations_with_replacement(range(len(keys)), 2):
        quad: dict = {}
        for q in (keys[a][0], keys[b][0]):
            for ij, c in q:
                quad[ij] = quad.get(ij, 0) + c
        lin = tuple(i for i, _ in keys[a][1] + keys[b][1])
        term = _Term(sympy.Integer(0), sympy.Integer(1), (0,) * len(variables),
                     tuple(sorted(quad.items())), tuple((i, 1) for i in sorted(set(lin))))
        for block in _blocks(term):
            _, _, q, _ = _restrict(term, block, variables)
            for cond in _positive_definite_conditions(_precision_matrix(len(block), q)):
                conditions[cond] = None
    return tuple(conditions)


# ---------------------------------------------------------------------------------------------
# Level 2: index ranges and patterns
# ---------------------------------------------------------------------------------------------


def _applications(expr, seq: str):
    return {e for e in expr.atoms(AppliedUndef) if e.func.__name__ == seq}


@dataclass(frozen=True)
class Pattern:
    """A summand a_s in the index ``index``: ``expr`` written with ``seq`` applications.

    Example: ``Pattern(c * exp(a * x(L) * x(s - 1)) * x(s), s)`` with ``x`` this module's
    ``x = sympy.Function("x")``. Each ``x(arg)`` is either relative (arg - index an integer k:
    the token x_{s+k}) or fixed (arg free of index, an integer or affine in L, e.g. x_L).
    ``index`` may appear nowhere else (the summand's law must not depend on s except through
    positions), so the coefficient must be free of it.
    """

    expr: sympy.Expr
    index: sympy.Symbol
    seq: str = "x"

    def __post_init__(self):
        object.__setattr__(self, "expr", sympy.sympify(self.expr))
        if not isinstance(self.index, sympy.Symbol):
            msg = f"Pattern index={self.index!r} must be a sympy Symbol, e.g. s = sympy.Symbol('s')"
            raise InvalidArgument(msg)
        apps = _applications(self.expr, self.seq)
        if not apps:
            msg = f"Pattern expr={self.expr} contains no token {self.seq}(...); write e.g. {self.seq}(s)"
            raise InvalidArgument(msg)
        for app in apps:
            if len(app.args) != 1:
                msg = f"token {app} must have exactly one argument (a position)"
                raise InvalidArgument(msg)
            (arg,) = app.args
            if arg.has(self.index) and not (arg - self.index).is_Integer:
                msg = f"token {app}: position {arg} must be {self.index} + integer or free of {self.index}"
                raise InvalidArgument(msg)
        stripped = self.expr.xreplace({a: sympy.Dummy() for a in apps})
        if stripped.has(self.index):
            msg = (
                f"Pattern expr={self.expr} uses the index {self.index} outside token positions; "
                "a summand whose coefficient depends on s has no single per-case value"
            )
            raise InvalidArgument(msg)

    def offsets(self) -> tuple[int, ...]:
        """Relative offsets k of the tokens x_{s+k}."""
        return tuple(sorted({int(a.args[0] - self.index) for a in _applications(self.expr, self.seq)
                             if a.args[0].has(self.index)}))

    def fixed(self) -> tuple[sympy.Expr, ...]:
        """Fixed positions (tokens whose position does not depend on the index)."""
        return tuple(sorted({a.args[0] for a in _applications(self.expr, self.seq)
                             if not a.args[0].has(self.index)}, key=sympy.default_sort_key))


# ---------------------------------------------------------------------------------------------
# Level 2: affine arithmetic that holds uniformly for L >= L_min
# ---------------------------------------------------------------------------------------------

_Aff = tuple[int, int]  # a*L + b


class _Lengths:
    """Affine forms a*L + b whose comparisons must be the same for every integer L >= L_min."""

    def __init__(self, symbol: sympy.Symbol, L_min: int):
        self.symbol, self.L_min = symbol, L_min

    def affine(self, expr, what: str) -> _Aff:
        expr = sympy.sympify(expr)
        extra = expr.free_symbols - {self.symbol}
        if extra:
            msg = (
                f"{what}={expr} contains {sorted(map(str, extra))}; positions and range bounds must be "
                f"integers or affine in L={self.symbol} (pass L=<your length symbol>)"
            )
            raise InvalidArgument(msg)
        poly = sympy.Poly(expr, self.symbol)
        if poly.degree() > 1 or not all(c.is_Integer for c in poly.all_coeffs()):
            msg = f"{what}={expr} must be affine in {self.symbol} with integer coefficients"
            raise InvalidArgument(msg)
        coeffs = [int(c) for c in poly.all_coeffs()]
        return (0, coeffs[0]) if len(coeffs) == 1 else (coeffs[0], coeffs[1])

    def expr(self, f: _Aff) -> sympy.Expr:
        return f[0] * self.symbol + f[1]

    def _mixed(self, what: str, statement: str, needed: int) -> InvalidArgument:
        msg = (
            f"L_min={self.L_min} is too small: {what}: '{statement}' is true for some L >= {self.L_min} and "
            f"false for others, so the case split is not uniform; pass L_min >= {needed}"
        )
        return InvalidArgument(msg)

    def nonneg(self, f: _Aff, what: str) -> bool:
        """Whether a*L + b >= 0, required to be the same for every integer L >= L_min."""
        a, b = f
        at_min = a * self.L_min + b
        if a == 0 or (a > 0 and at_min >= 0) or (a < 0 and at_min < 0):
            return at_min >= 0
        # a > 0: becomes true at ceil(-b/a); a < 0: becomes false after floor(-b/a)
        needed = math.ceil(Fraction(-b, a)) if a > 0 else math.floor(Fraction(-b, a)) + 1
        raise self._mixed(what, f"{self.expr(f)} >= 0", needed)

    def le(self, p: _Aff, q: _Aff, what: str) -> bool:
        return self.nonneg((q[0] - p[0], q[1] - p[1]), what)

    def eq(self, p: _Aff, q: _Aff, what: str) -> bool:
        """Whether p == q, required to be the same for every integer L >= L_min."""
        a, b = q[0] - p[0], q[1] - p[1]
        if a == 0:
            return b == 0
        root = Fraction(-b, a)
        if root.denominator == 1 and root >= self.L_min:
            raise self._mixed(what, f"{self.expr(p)} = {self.expr(q)}", int(root) + 1)
        return False

    def inside(self, p: _Aff, rng: tuple[_Aff, _Aff], what: str) -> bool:
        return self.le(rng[0], p, what) and self.le(p, rng[1], what)

    def count(self, lo: _Aff, hi: _Aff, what: str) -> _Aff:
        """max(0, hi - lo + 1)."""
        d = (hi[0] - lo[0], hi[1] - lo[1] + 1)
        return d if self.nonneg(d, what) else (0, 0)


def _shift(p: _Aff, k: int) -> _Aff:
    return (p[0], p[1] + k)


def _position_name(key) -> str:
    kind, val = key
    if kind == "abs":
        a, b = val
        if a == 0:
            return f"x_{b}"
        head = "L" if a == 1 else f"{a}L"
        return f"x_{head}" if b == 0 else f"x_{{{head}{b:+d}}}"
    return f"x_{kind}" if val == 0 else f"x_{{{kind}{val:+d}}}"


def _key_order(key):
    kind, val = key
    return (0, -val[0], -val[1]) if kind == "abs" else (1 if kind == "s" else 2, val, 0)


# ---------------------------------------------------------------------------------------------
# Level 2: the double sum
# ---------------------------------------------------------------------------------------------


class _Side:
    """One pattern with its range, parsed into affine positions."""

    def __init__(self, name: str, pattern: Pattern, rng: IndexRange, lengths: _Lengths):
        if not isinstance(pattern, Pattern):
            msg = f"pattern_{name}={pattern!r} must be a Pattern"
            raise InvalidArgument(msg)
        if not isinstance(rng, IndexRange):
            msg = f"range_{name}={rng!r} must be an IndexRange"
            raise InvalidArgument(msg)
        self.name, self.pattern = name, pattern
        lo = lengths.affine(rng.lo, f"range_{name}.lo")
        hi = lengths.affine(rng.hi, f"range_{name}.hi")
        self.range = (lo, hi)
        size = (hi[0] - lo[0], hi[1] - lo[1] + 1)
        try:
            nonempty = lengths.nonneg((size[0], size[1] - 1), f"size of range_{name}")
        except InvalidArgument:
            nonempty = False
        if not nonempty:
            first = math.ceil(Fraction(1 - size[1], size[0])) if size[0] > 0 else None
            hint = f"pass L_min >= {first}" if first is not None else "fix the range"
            msg = (
                f"range_{name}={rng} is empty at some L >= L_min={lengths.L_min} (L range too small: its "
                f"size {lengths.expr(size)} must be >= 1 for every admissible L); {hint}"
            )
            raise InvalidArgument(msg)
        self.size = lengths.expr(size)
        self.offsets = pattern.offsets()
        self.fixed = tuple(lengths.affine(f, f"fixed position in pattern_{name}") for f in pattern.fixed())
        for k in self.offsets:
            token = _position_name(("s", k)).replace("s", pattern.index.name, 1)
            for end, bound in ((lo, rng.lo), (hi, rng.hi)):
                where = f"position of {token} at {pattern.index} = {bound}"
                position = _shift(end, k)
                if not (lengths.le((0, 1), position, where) and lengths.le(position, (1, 0), where)):
                    msg = (
                        f"pattern_{name}: token {token} at {pattern.index} = {bound} is "
                        f"x_{lengths.expr(position)}, outside x_1..x_L; shrink range_{name}={rng}"
                    )
                    raise InvalidArgument(msg)
        for f in self.fixed:
            where = f"fixed position x_{lengths.expr(f)}"
            if not (lengths.le((0, 1), f, where) and lengths.le(f, (1, 0), where)):
                msg = f"pattern_{name}: fixed token x_{lengths.expr(f)} is outside x_1..x_L"
                raise InvalidArgument(msg)

    def tokens(self):
        """(application, relative offset or None, fixed affine or None)."""
        for app in _applications(self.pattern.expr, self.pattern.seq):
            (arg,) = app.args
            if arg.has(self.pattern.index):
                yield app, int(arg - self.pattern.index), None
            else:
                yield app, None, arg


def _unique(points: Iterable[_Aff], lengths: _Lengths, what: str) -> list[_Aff]:
    out: list[_Aff] = []
    for p in points:
        if not any(lengths.eq(p, q, what) for q in out):
            out.append(p)
    return out


def _representative(side: _Side, where, lengths: _Lengths, symbols: dict) -> sympy.Expr:
    """The summand with tokens replaced by one Symbol per distinct position.

    ``where`` is ("abs", affine) for a concrete index, or (name, shift) for a generic one.
    """
    mapping = {}
    for app, k, fixed in side.tokens():
        if fixed is not None:
            key = ("abs", lengths.affine(fixed, "fixed position"))
        elif where[0] == "abs":
            key = ("abs", _shift(where[1], k))
        else:
            key = (where[0], where[1] + k)
        if key not in symbols:
            symbols[key] = sympy.Symbol(_position_name(key))
        mapping[app] = symbols[key]
    return side.pattern.expr.xreplace(mapping)


def expect_sum_product(
    pattern_a: Pattern,
    range_a: IndexRange,
    pattern_b: Pattern,
    range_b: IndexRange,
    law: str = "gaussian",
    L: sympy.Symbol = L_SYMBOL,
    *,
    L_min: int = 5,
) -> Expectation:
    """E[sum_{s in range_a} sum_{s' in range_b} a_s b_{s'}] for iid tokens x_1..x_L.

    Parameters
    ----------
    pattern_a, pattern_b : Pattern
        Summands; their tokens are x_{s+k} (relative) and fixed positions (affine in L).
    range_a, range_b : IndexRange
        Inclusive ranges, bounds integers or affine in ``L``; nonempty for every L >= L_min.
    law : {"gaussian", "rademacher"}
        Token law: iid N(0, 1) or iid Unif{+-1}.
    L : sympy.Symbol
        The sequence-length symbol used in the patterns and ranges.
    L_min : int
        The result is exact for every integer L >= L_min. Every comparison between positions
        (range ends, special indices, fixed tokens) must come out the same for all such L;
        otherwise InvalidArgument names the smallest admissible L_min.

    Returns
    -------
    Expectation
        ``value`` = sum over cells of count x E[a_s b_{s'}]; ``cases`` lists the cells;
        ``certificate`` lists the vanishing cells with the variable of odd degree;
        ``conditions`` collects the integrability conditions of every cell with a nonzero
        count (vanishing cells included: their symmetry argument needs them too).
    """
    _check_law(law)
    if not isinstance(L, sympy.Symbol):
        msg = f"L={L!r} must be a sympy Symbol (the sequence length); for a concrete L use Level 1"
        raise InvalidArgument(msg)
    if isinstance(L_min, bool) or not isinstance(L_min, int) or L_min < 1:
        msg = f"L_min={L_min!r} must be a positive int (the smallest sequence length covered)"
        raise InvalidArgument(msg)
    for pattern in (pattern_a, pattern_b):
        if isinstance(pattern, Pattern) and pattern.index == L:
            msg = f"Pattern index {pattern.index} coincides with the length symbol L={L}; rename the index"
            raise InvalidArgument(msg)
    lengths = _Lengths(L, L_min)
    a, b = _Side("a", pattern_a, range_a, lengths), _Side("b", pattern_b, range_b, lengths)
    fixed_all = _unique(a.fixed + b.fixed, lengths, "comparison of two fixed positions")

    def specials(side: _Side) -> list[_Aff]:
        cands = (_shift(f, -k) for f in fixed_all for k in side.offsets)
        inside = (p for p in cands if lengths.inside(p, side.range, f"special index of range_{side.name}"))
        return _unique(inside, lengths, f"comparison of special indices of range_{side.name}")

    special_a, special_b = specials(a), specials(b)
    deltas = sorted({k - kb for k in a.offsets for kb in b.offsets})

    def generic(point: _Aff, side: _Side, special: list[_Aff]) -> bool:
        return lengths.inside(point, side.range, f"index in range_{side.name}") and not any(
            lengths.eq(point, q, "index vs special index") for q in special
        )

    n_generic_a = sympy.expand(a.size - len(special_a))
    n_generic_b = sympy.expand(b.size - len(special_b))
    cells: list[tuple[str, sympy.Expr, object, object]] = []  # (description, count, where_a, where_b)
    ex = lengths.expr

    for sa in special_a:
        for sb in special_b:
            cells.append((f"s = {ex(sa)}, s' = {ex(sb)}", sympy.Integer(1), ("abs", sa), ("abs", sb)))
    for sa in special_a:
        hits = [d for d in deltas if generic(_shift(sa, d), b, special_b)]
        for d in hits:
            cells.append((f"s = {ex(sa)}, s' = {ex(_shift(sa, d))}", sympy.Integer(1),
                          ("abs", sa), ("abs", _shift(sa, d))))
        cells.append((f"s = {ex(sa)}, s' generic (s' - s not in {deltas})",
                      sympy.expand(n_generic_b - len(hits)), ("abs", sa), ("s'", 0)))
    for sb in special_b:
        hits = [d for d in deltas if generic(_shift(sb, -d), a, special_a)]
        for d in hits:
            cells.append((f"s = {ex(_shift(sb, -d))}, s' = {ex(sb)}", sympy.Integer(1),
                          ("abs", _shift(sb, -d)), ("abs", sb)))
        cells.append((f"s' = {ex(sb)}, s generic (s' - s not in {deltas})",
                      sympy.expand(n_generic_a - len(hits)), ("s", 0), ("abs", sb)))
    diagonal_total = sympy.Integer(0)
    for d in deltas:
        (alo, ahi), (blo, bhi) = a.range, b.range
        lo = blo_d if lengths.le(alo, blo_d := _shift(blo, -d), "range ends") else alo
        hi = ahi if lengths.le(ahi, bhi_d := _shift(bhi, -d), "range ends") else bhi_d
        n = ex(lengths.count(lo, hi, f"overlap of range_a and range_b - ({d})"))
        n -= sum(1 for p in special_a if lengths.inside(_shift(p, d), b.range, "special + delta"))
        n -= sum(1 for q in special_b if lengths.inside(_shift(q, -d), a.range, "special - delta"))
        n += sum(1 for p in special_a for q in special_b if lengths.eq(_shift(p, d), q, "special pair"))
        n = sympy.expand(n)
        diagonal_total += n
        sign = "+" if d > 0 else "-"
        rel = "s' = s" if d == 0 else f"s' = s {sign} {abs(d)}"
        cells.append((f"{rel} (s, s' generic)", n, ("s", 0), ("s", d)))
    cells.append((f"s' - s not in {deltas} (s, s' generic)",
                  sympy.expand(n_generic_a * n_generic_b - diagonal_total), ("s", 0), ("s'", 0)))

    total_count = sympy.expand(sum(c for _, c, _, _ in cells))
    if sympy.expand(total_count - a.size * b.size) != 0:
        msg = f"cell counts sum to {total_count}, not |A||B| = {sympy.expand(a.size * b.size)}; this is a bug"
        raise InternalError(msg)

    cases, values, conditions, certificates = [], [], {}, []
    for description, count, where_a, where_b in cells:
        if count == 0:
            continue
        symbols: dict = {}
        product = _representative(a, where_a, lengths, symbols)
        product *= _representative(b, where_b, lengths, symbols)
        variables = [symbols[k] for k in sorted(symbols, key=_key_order)]
        clash = {v.name for v in variables} & {s.name for s in product.free_symbols - set(variables)}
        if clash:
            msg = f"parameter name(s) {sorted(clash)} clash with the token names of Level 2; rename them"
            raise InvalidArgument(msg)
        result = _expect(product, variables, law)
        for cond in result.conditions:
            conditions[cond] = None
        certificate = ""
        if result.value == 0 and result.certificate:
            certificate = result.certificate
            certificates.append(f"[{description}] {certificate}")
        cases.append(Case(description, count, result.value, result.conditions, certificate))
        values.append(count * result.value)
    return Expectation(sympy.Add(*values), tuple(conditions), "\n".join(certificates), tuple(cases))


def expect_square(
    terms: Sequence[tuple[sympy.Expr, Pattern, IndexRange]],
    law: str = "gaussian",
    L: sympy.Symbol = L_SYMBOL,
    *,
    L_min: int = 5,
) -> Expectation:
    """E[(sum_i c_i sum_{s in R_i} p_i(s))**2] for ``terms = [(c_i, p_i, R_i), ...]``.

    Expands the square into the double sums of :func:`expect_sum_product` (pairs i < j counted
    twice). Case descriptions are prefixed with ``(i, j)``. Same ``law``, ``L``, ``L_min``.
    """
    parsed = []
    for n, term in enumerate(terms):
        if not (isinstance(term, tuple | list) and len(term) == 3):
            msg = f"terms[{n}]={term!r} must be a (coefficient, Pattern, IndexRange) triple"
            raise InvalidArgument(msg)
        parsed.append((sympy.sympify(term[0]), term[1], term[2]))
    if not parsed:
        msg = "terms is empty; pass at least one (coefficient, Pattern, IndexRange) triple"
        raise InvalidArgument(msg)
    values, conditions, certificates, cases = [], {}, [], []
    for i, j in itertools.combinations_with_replacement(range(len(parsed)), 2):
        ci, pi, ri = parsed[i]
        cj, pj, rj = parsed[j]
        res = expect_sum_product(pi, ri, pj, rj, law, L, L_min=L_min)
        weight = ci * cj * (1 if i == j else 2)
        values.append(weight * res.value)
        for cond in res.conditions:
            conditions[cond] = None
        if res.certificate:
            certificates.append("\n".join(f"({i}, {j}) {line}" for line in res.certificate.splitlines()))
        cases.extend(Case(f"({i}, {j}) {c.description}", c.count, c.value, c.conditions, c.certificate)
                     for c in res.cases)
    return Expectation(sympy.Add(*values), tuple(conditions), "\n".join(certificates), tuple(cases))
