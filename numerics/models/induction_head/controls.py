"""Control variates for the true-softmax IH loss, with their exact means.

The loss of one sequence is f = ½(h*·N*/D* − h·N/D)², a ratio of sums over s = 2..L−1 with
weights e_s = exp(a x_L x_{s−1} − a² x_L²/2) (a = w² for the model, a* = w*² for the target):

    N = (1/n) Σ_s e_s x_s,   D = (1/n) Σ_s e_s,   n = L − 2,   E[e_s | x_L] = 1.

Two controls replace 1/D by its expansion around E[D | x_L] = 1:

    g₁ = ½(h* N* − h N)²·1{|x_L| ≤ c}                      (1/D ≈ 1)
    g₂ = ½(h* N*(2 − D*) − h N(2 − D))²·1{|x_L| ≤ c}       (1/D ≈ 2 − D, first order)

The cut c = :data:`CUT` (= 5) matters: without it g₂'s variance is infinite for w*² > 0.134 (its
square holds e^{8a x_L x} terms whose mean given x_L grows like e^{28a²x_L²}), and a control of
infinite variance would make the standard error meaningless. With it every moment is finite, and
only the 6·10⁻⁷ of sequences with |x_L| > 5 go uncontrolled.

Both are polynomials in N and D, so their means are sums over index tuples (s, s′, r, r′) of
Gaussian expectations that factor over token positions. Given x_L = ξ, a position p carrying the
key coefficient c_p ξ (sum of the scales of the exponentials keyed at p) and k_p value factors
contributes E[x^k e^{c ξ x}] = e^{c²ξ²/2}·{1, cξ, 1 + c²ξ²}[k]; then E_ξ[ξ^{2m} e^{Qξ²}] =
(2m−1)!!(1 − 2Q)^{−m−1/2}, or over |ξ| ≤ c the erf form of :func:`_truncated_gaussian_moments`.
A term depends only on which of the positions s−1, s′−1, r−1, r′−1, s, s′ coincide, so
:func:`_tuple_mean` sums by pattern in O(L) instead of over all O(L⁴) tuples: a D factor keyed
at a position nothing else touches has E[e_r | x_L] = 1 and factors out with its count, and
pairs s, s′ at least 2 apart share one value per boundary class (:func:`_pair_sum`). It equals
the brute-force :func:`_tuple_mean_bruteforce` to rounding, and the means are checked against
Monte-Carlo in the tests (an independent method).

Boolean tokens (x_i = ±1) take the same controls with the weights normalised by E[e^{a x_L x}] =
cosh a; a position then contributes cosh c_p (or sinh c_p for a lone value factor) and x_L² = 1
leaves nothing to integrate, so every mean is finite and the cut is void (:func:`_boolean_term`;
checked against exact enumeration of all ±1 sequences).

Used with :class:`numerics.montecarlo.ControlVariateMonteCarlo`, g₁ and g₂ cut the variance of the
L = 40 benchmark point about a hundredfold (the regression picks the combination; measured in
``tdcheck bench ih-mc``).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from derivations.errors import InvalidArgument
from numerics._jit import jit
from numerics.models.induction_head.integrands import CONTROL_CUT as CUT
from numerics.models.induction_head.integrands import _ih_softmax_kernel, ih_softmax_loss_samples
from numerics.models.induction_head.tokens import token_sampler
from numerics.montecarlo import ControlVariateMonteCarlo, MonteCarlo


@jit
def _tuple_mean_bruteforce(L, scales_n, scales_d, n_d, cut):
    """Σ over s, s′ ∈ 2..L−1 and r, r′ (the first ``n_d`` of them) of E[e^{(1)}_s x_s e^{(2)}_{s′} x_{s′} Π e^{(D)}_r; |x_L| ≤ cut].

    ``scales_n`` = (a₁, a₂) are the scales of the two N factors, ``scales_d`` those of the D
    factors. Returns the sum (not yet divided by n^{2+n_d}). Enumerates all O(L^{2+n_d}) tuples:
    the test oracle of the pattern sum :func:`_tuple_mean`.
    """
    coef = np.zeros(L + 1)
    touched = np.empty(6, dtype=np.int64)
    base_q = -0.5 * (scales_n[0] ** 2 + scales_n[1] ** 2)
    for i in range(n_d):
        base_q -= 0.5 * scales_d[i] ** 2
    hi_r = L if n_d >= 1 else 3
    hi_r2 = L if n_d >= 2 else 3
    total = 0.0
    for s in range(2, L):
        for s2 in range(2, L):
            for r in range(2, hi_r):
                for r2 in range(2, hi_r2):
                    keys = (s - 1, s2 - 1, r - 1, r2 - 1)
                    weights = (scales_n[0], scales_n[1], scales_d[0] if n_d >= 1 else 0.0,
                               scales_d[1] if n_d >= 2 else 0.0)
                    m = 0
                    for j in range(2 + n_d):
                        coef[keys[j]] += weights[j]
                        touched[m] = keys[j]
                        m += 1
                    touched[m] = s
                    touched[m + 1] = s2
                    m += 2
                    q = base_q
                    for j in range(m):  # each distinct touched position once
                        p = touched[j]
                        first = True
                        for i in range(j):
                            if touched[i] == p:
                                first = False
                        if first:
                            q += 0.5 * coef[p] ** 2
                    if s == s2:  # E[x² e^{cξx}] → 1 + c²ξ²
                        c = coef[s]
                        p0, p2 = 1.0, c * c
                    else:  # E[x e^{cξx}]·E[x′ e^{c′ξx′}] → c c′ ξ²
                        p0, p2 = 0.0, coef[s] * coef[s2]
                    for j in range(2 + n_d):
                        coef[keys[j]] = 0.0
                    if p0 == 0.0 and p2 == 0.0:
                        continue
                    if not q < 0.5:
                        return math.inf
                    i0, i2 = _truncated_gaussian_moments(0.5 - q, cut)
                    total += p0 * i0 + p2 * i2
    return total


@jit
def _tuple_mean(L, scales_n, scales_d, n_d, cut, boolean=False):
    """Return the sum of :func:`_tuple_mean_bruteforce`, by pattern in O(L) terms.

    Pairs with |s − s′| ≤ 1 are summed one by one. The others touch four distinct positions
    {s−1, s, s′−1, s′}, so their value depends only on whether s or s′ is L−1 (position L−1 is
    no key of any r ≤ L−1): (L−4)(L−5) pairs inside 2..L−2, represented by (2, 4), and L−4
    with s = L−1 (resp. s′ = L−1), represented by (L−1, 2) (resp. (2, L−1)).
    """
    coef = np.zeros(L + 1)
    keys = np.zeros(4, dtype=np.int64)
    weights = np.zeros(4)
    total = 0.0
    for s in range(2, L):
        for s2 in range(max(2, s - 1), min(L - 1, s + 1) + 1):
            total += _pair_sum(L, s, s2, scales_n, scales_d, n_d, cut, boolean, keys, weights, coef)
    inner = max(L - 4, 0) * max(L - 5, 0)
    if inner > 0:
        total += inner * _pair_sum(L, 2, 4, scales_n, scales_d, n_d, cut, boolean, keys, weights, coef)
    if L - 4 > 0:
        total += (L - 4) * (_pair_sum(L, L - 1, 2, scales_n, scales_d, n_d, cut, boolean, keys, weights, coef)
                            + _pair_sum(L, 2, L - 1, scales_n, scales_d, n_d, cut, boolean, keys, weights, coef))
    return total


@jit
def _pair_sum(L, s, s2, scales_n, scales_d, n_d, cut, boolean, keys, weights, coef):
    """Σ over r, r′ ∈ 2..L−1 (the first ``n_d`` of them) of the term of (s, s′), in O(1).

    r is *attached* when r − 1 ∈ A = {s−1, s, s′−1, s′} ∩ 1..L−2, else *free* (n_free = L − 2 − |A|
    choices). A lone free factor has E[e_r | x_L] = 1, so

        n_d = 1:  Σ_{r att} T(r) + n_free T(∅)
        n_d = 2:  Σ_{r, r′ att} T(r, r′) + n_free Σ_{r att} (T(r) + T(r′)) + n_free(n_free − 1) T(∅)
                  + n_free T(r = r′ free),

    where the last term keeps both D factors on one fresh position (E[e_r e′_r | x_L] = e^{a a′ x_L²}
    ≠ 1); position 0, which no tuple touches, stands for it. ``keys``, ``weights``, ``coef`` are
    scratch (lengths 4, 4, L + 1).
    """
    attached = np.empty(4, dtype=np.int64)
    n_att = 0
    for p in (s - 1, s, s2 - 1, s2):
        new = p <= L - 2
        for i in range(n_att):
            if attached[i] == p:
                new = False
        if new:
            attached[n_att] = p
            n_att += 1
    n_free = L - 2 - n_att
    keys[0], keys[1] = s - 1, s2 - 1
    weights[0], weights[1] = scales_n[0], scales_n[1]
    if n_d == 0:
        return _term(s, s2, keys, weights, 2, coef, cut, boolean)
    total = 0.0
    if n_d == 1:
        weights[2] = scales_d[0]
        for i in range(n_att):
            keys[2] = attached[i]
            total += _term(s, s2, keys, weights, 3, coef, cut, boolean)
        if n_free > 0:
            total += n_free * _term(s, s2, keys, weights, 2, coef, cut, boolean)
        return total
    weights[2], weights[3] = scales_d[0], scales_d[1]
    for i in range(n_att):
        for j in range(n_att):
            keys[2], keys[3] = attached[i], attached[j]
            total += _term(s, s2, keys, weights, 4, coef, cut, boolean)
    if n_free > 0:
        one = 0.0
        for i in range(n_att):
            for d in range(2):
                keys[2], weights[2] = attached[i], scales_d[d]
                one += _term(s, s2, keys, weights, 3, coef, cut, boolean)
        keys[2], keys[3] = 0, 0
        weights[2], weights[3] = scales_d[0], scales_d[1]
        total += (n_free * one + n_free * (n_free - 1) * _term(s, s2, keys, weights, 2, coef, cut, boolean)
                  + n_free * _term(s, s2, keys, weights, 4, coef, cut, boolean))
    return total


@jit
def _term(s, s2, keys, weights, m, coef, cut, boolean):
    """E[x_s x_{s′} Π_{j<m} e^{a_j ξ x_{k_j}}/E[e^{a_j ξ x}]; |ξ| ≤ cut], ξ = x_L, k = ``keys``, a = ``weights``.

    Gaussian tokens (E e^{cx} = e^{c²/2}): with c_p = Σ_{k_j = p} a_j, Q = Σ_p c_p²/2 − Σ_j a_j²/2 over
    distinct keys, times (1 + c_s²ξ²) if s = s′ else c_s c_{s′} ξ², integrated by
    :func:`_truncated_gaussian_moments`; ∞ when 1 − 2Q ≤ 0. Boolean tokens (x, ξ = ±1; E e^{cx} =
    cosh c): Π_p cosh c_p over the keys other than s, s′, times cosh c_s if s = s′ else
    sinh c_s · sinh c_{s′} (ξ² = 1), over Π_j cosh a_j; no ξ left to integrate, and |ξ| = 1 ≤ cut.
    ``coef`` (zeros on entry and exit) has length > max(keys, s, s′).
    """
    if boolean:
        return _boolean_term(s, s2, keys, weights, m, coef)
    q = 0.0
    for j in range(m):
        coef[keys[j]] += weights[j]
        q -= 0.5 * weights[j] ** 2
    for j in range(m):
        first = True
        for i in range(j):
            if keys[i] == keys[j]:
                first = False
        if first:
            q += 0.5 * coef[keys[j]] ** 2
    if s == s2:
        p0, p2 = 1.0, coef[s] ** 2
    else:
        p0, p2 = 0.0, coef[s] * coef[s2]
    for j in range(m):
        coef[keys[j]] = 0.0
    if p0 == 0.0 and p2 == 0.0:
        return 0.0
    if not q < 0.5:
        return math.inf
    i0, i2 = _truncated_gaussian_moments(0.5 - q, cut)
    return p0 * i0 + p2 * i2


@jit
def _boolean_term(s, s2, keys, weights, m, coef):
    """The Boolean case of :func:`_term`."""
    value = 1.0
    for j in range(m):
        coef[keys[j]] += weights[j]
        value /= math.cosh(weights[j])
    for j in range(m):
        p = keys[j]
        first = p != s and p != s2
        for i in range(j):
            if keys[i] == p:
                first = False
        if first:
            value *= math.cosh(coef[p])
    if s == s2:
        value *= math.cosh(coef[s])
    else:
        value *= math.sinh(coef[s]) * math.sinh(coef[s2])
    for j in range(m):
        coef[keys[j]] = 0.0
    return value


@jit
def _truncated_gaussian_moments(beta, cut):
    """(I₀, I₂) = (1/√(2π)) ∫_{−cut}^{cut} (1, ξ²) e^{−βξ²} dξ for β > 0 (cut = ∞ allowed).

    I₀ = erf(cut√β)/√(2β); I₂ = (I₀ − 2cut·e^{−βcut²}/√(2π))/(2β) (by parts).
    """
    i0 = math.erf(cut * math.sqrt(beta)) / math.sqrt(2.0 * beta)
    edge = 0.0 if math.isinf(cut) else 2.0 * cut * math.exp(-beta * cut * cut) / math.sqrt(2.0 * math.pi)
    return i0, (i0 - edge) / (2.0 * beta)


def _moment(L: int, a1: float, a2: float, d_scales: tuple[float, ...], cut: float = CUT,
            boolean: bool = False) -> float:
    """E[N_{a1} N_{a2} Π_{c ∈ d_scales} D_c · 1{|x_L| ≤ cut}] exactly (module docstring)."""
    padded = np.array(list(d_scales) + [0.0] * (2 - len(d_scales)))
    raw = _tuple_mean(int(L), np.array([a1, a2]), padded, len(d_scales), float(cut), bool(boolean))
    return raw / (L - 2.0) ** (2 + len(d_scales))


def _check_tokens(tokens: str) -> None:
    if tokens not in ("gaussian", "boolean"):
        raise InvalidArgument(f"tokens={tokens!r} is not one of gaussian, boolean")


def means_exist(w: float, wstar: float, tokens: str) -> bool:
    """Whether the controls' means are finite: always for Boolean tokens, for 12·max(w², w*²)² < 1 if Gaussian."""
    _check_tokens(tokens)
    return tokens == "boolean" or 12 * max(w * w, wstar * wstar) ** 2 < 1


def control_means(L: int, w: float, h: float, alpha: float, wstar: float,
                  tokens: str = "gaussian") -> tuple[float, float]:
    """(E g₁, E g₂) of the controls of the module docstring, exactly, for Gaussian or Boolean tokens.

    Gaussian: finite only when every Gaussian factor converges (1 − 2Q > 0 for all tuples); for the
    scales a = w², a* = w*² this holds for 12·max(a, a*)² < 1 (four exponentials keyed at one
    position). Raises :class:`InvalidArgument` outside. Boolean: always finite.
    """
    if not means_exist(w, wstar, tokens):
        raise InvalidArgument(
            f"the controls' means exist only for 12·max(w², w*²)² < 1; got w={w}, wstar={wstar}"
        )
    if int(L) != L or L < 6:
        raise InvalidArgument(f"L={L} must be an integer >= 6")
    a, a_star = w * w, wstar * wstar
    moment = functools.partial(_moment, boolean=tokens == "boolean")
    hstar = 1 / (1 + alpha)
    heads = [(a_star, hstar), (a, -h)]
    g1 = 0.5 * sum(ci * cj * moment(L, ai, aj, ()) for ai, ci in heads for aj, cj in heads)
    # (2N_i − N_i D_i)(2N_j − N_j D_j) = 4N_iN_j − 2N_iN_jD_j − 2N_iN_jD_i + N_iN_jD_iD_j
    g2 = 0.0
    for ai, ci in heads:
        for aj, cj in heads:
            g2 += ci * cj * (4 * moment(L, ai, aj, ()) - 2 * moment(L, ai, aj, (aj,)) - 2 * moment(L, ai, aj, (ai,))
                             + moment(L, ai, aj, (ai, aj)))
    return g1, 0.5 * g2


def ih_softmax_loss_with_controls(X, w, h, alpha, wstar, tokens="gaussian"):
    """Columns (true-softmax IH loss f, control g₁, control g₂) per sequence, shape (n, 3).

    ``tokens`` says how the weights of the controls are normalised (E[e^{c x}] = e^{c²/2} or cosh c).
    """
    _check_tokens(tokens)
    return _ih_softmax_kernel(X, float(w), float(h), float(alpha), float(wstar), True, tokens == "boolean")


def softmax_loss_estimate(L: int, w: float, h: float, alpha: float, wstar: float, *, n: int, seed: int,
                          tokens: str = "gaussian"):
    """E of the true-softmax IH loss (canonical range) by Monte-Carlo, with the controls where they apply.

    The controls apply wherever their means exist (:func:`means_exist`); elsewhere the estimate is
    plain Monte-Carlo. The returned :class:`numerics.montecarlo.Estimate`'s ``method`` says which,
    and ``variance_reduction`` by how much the controls helped.
    """
    L = int(L)
    params = (float(w), float(h), float(alpha), float(wstar))
    if means_exist(w, wstar, tokens):
        return ControlVariateMonteCarlo(token_sampler(L, tokens), _Controlled(tokens),
                                        lambda p: control_means(L, *p, tokens=tokens), n=n, seed=seed).estimate(params)
    return MonteCarlo(token_sampler(L, tokens), _plain, n=n, seed=seed).estimate(params)


class _Controlled:
    """Integrand (f, g₁, g₂) for one token law (picklable, unlike a closure)."""

    def __init__(self, tokens: str):
        self.tokens = tokens

    def __call__(self, X, params):
        return ih_softmax_loss_with_controls(X, *params, tokens=self.tokens)


def _plain(X, params):
    return ih_softmax_loss_samples(X, *params)
