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
:func:`control_means` sums these exactly over all tuples (O(L⁴)
terms for g₂; 2·10⁶ at L = 40, a fraction of a second). The means are checked against
Monte-Carlo in the tests (an independent method).

Used with :class:`numerics.montecarlo.ControlVariateMonteCarlo`, g₁ and g₂ cut the variance of the
L = 40 benchmark point about a hundredfold (the regression picks the combination; measured in
``tdcheck bench ih-mc``).
"""

from __future__ import annotations

import math

import numpy as np

from derivations.errors import InvalidArgument
from numerics._jit import jit
from numerics.models.induction_head.integrands import CONTROL_CUT as CUT
from numerics.models.induction_head.integrands import _ih_softmax_kernel


@jit
def _tuple_mean(L, scales_n, scales_d, n_d, cut):
    """Σ over s, s′ ∈ 2..L−1 and r, r′ (the first ``n_d`` of them) of E[e^{(1)}_s x_s e^{(2)}_{s′} x_{s′} Π e^{(D)}_r; |x_L| ≤ cut].

    ``scales_n`` = (a₁, a₂) are the scales of the two N factors, ``scales_d`` those of the D
    factors. Returns the sum (not yet divided by n^{2+n_d}).
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
def _truncated_gaussian_moments(beta, cut):
    """(I₀, I₂) = (1/√(2π)) ∫_{−cut}^{cut} (1, ξ²) e^{−βξ²} dξ for β > 0 (cut = ∞ allowed).

    I₀ = erf(cut√β)/√(2β); I₂ = (I₀ − 2cut·e^{−βcut²}/√(2π))/(2β) (by parts).
    """
    i0 = math.erf(cut * math.sqrt(beta)) / math.sqrt(2.0 * beta)
    edge = 0.0 if math.isinf(cut) else 2.0 * cut * math.exp(-beta * cut * cut) / math.sqrt(2.0 * math.pi)
    return i0, (i0 - edge) / (2.0 * beta)


def _moment(L: int, a1: float, a2: float, d_scales: tuple[float, ...], cut: float = CUT) -> float:
    """E[N_{a1} N_{a2} Π_{c ∈ d_scales} D_c · 1{|x_L| ≤ cut}] exactly (module docstring)."""
    padded = np.array(list(d_scales) + [0.0] * (2 - len(d_scales)))
    raw = _tuple_mean(int(L), np.array([a1, a2]), padded, len(d_scales), float(cut))
    return raw / (L - 2.0) ** (2 + len(d_scales))


def control_means(L: int, w: float, h: float, alpha: float, wstar: float) -> tuple[float, float]:
    """(E g₁, E g₂) of the controls of the module docstring, exactly.

    Finite only when every Gaussian factor converges (1 − 2Q > 0 for all tuples); for the
    scales a = w², a* = w*² this holds for 12·max(a, a*)² < 1 (four exponentials keyed at one
    position). Raises :class:`InvalidArgument` outside.
    """
    a, a_star = w * w, wstar * wstar
    if not 12 * max(a, a_star) ** 2 < 1:
        raise InvalidArgument(
            f"the controls' means exist only for 12·max(w², w*²)² < 1; got w={w}, wstar={wstar}"
        )
    if int(L) != L or L < 6:
        raise InvalidArgument(f"L={L} must be an integer >= 6")
    hstar = 1 / (1 + alpha)
    heads = [(a_star, hstar), (a, -h)]
    g1 = 0.5 * sum(ci * cj * _moment(L, ai, aj, ()) for ai, ci in heads for aj, cj in heads)
    # (2N_i − N_i D_i)(2N_j − N_j D_j) = 4N_iN_j − 2N_iN_jD_j − 2N_iN_jD_i + N_iN_jD_iD_j
    g2 = 0.0
    for ai, ci in heads:
        for aj, cj in heads:
            g2 += ci * cj * (4 * _moment(L, ai, aj, ()) - 2 * _moment(L, ai, aj, (aj,)) - 2 * _moment(L, ai, aj, (ai,))
                             + _moment(L, ai, aj, (ai, aj)))
    return g1, 0.5 * g2


def ih_softmax_loss_with_controls(X, w, h, alpha, wstar):
    """Columns (true-softmax IH loss f, control g₁, control g₂) per sequence, shape (n, 3)."""
    return _ih_softmax_kernel(X, float(w), float(h), float(alpha), float(wstar), True)
