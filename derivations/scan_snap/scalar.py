r"""The scalar functions of App. B.3 and App. D: h (Lemma 6), h* (Eqn 33), the roots of Lemma 8, γ (L579).

Definitions (spec §2.8):

* h is the solution of Eqn 44, dh/ds = η_Y/((M−1) + e^{Mh}), h(0) = 0 (s counts visits of one class).
  Separating variables, s(h) = η_Y^{-1} ∫₀^h ((M−1) + e^{Mh'}) dh' (the inverse of h, which increases);
  solving for h with Lambert W: Mh = C − W₀(e^C/(M−1)), C = (Mη_Y s + 1)/(M−1) (spec ``ss.dv.lambertw``).
* γ(t) = (M−1)² h(t/K)/((M−1) + e^{Mh(t/K)}) (L579; Eqn 85 prints h(⌈t/K⌉)).
* The roots of Lemma 8: e^u = (M−1)u, u = Mh, lower u₀ = −W₀(−1/(M−1)), upper u₁ = −W₋₁(−1/(M−1)).

Every function here returns a SymPy expression; the items that compare the paper's displays with these
definitions are in :mod:`derivations.scan_snap.scalar_items`.
"""

from __future__ import annotations

import sympy as sp

from derivations.scan_snap.symbols import M, etaY, h

_hp = sp.Dummy("h_prime", nonnegative=True)


def visits_to_reach(value: sp.Expr, eta: sp.Expr = etaY) -> sp.Expr:
    """s(h): the visits after which h equals ``value``, ∫₀^h ((M−1) + e^{Mh'}) dh' / η_Y (Eqn 44 separated)."""
    integral = sp.integrate((M - 1) + sp.exp(M * _hp), (_hp, 0, value))
    return sp.simplify(integral) / eta


def h_of(tau: sp.Expr) -> sp.Expr:
    """h as a function of τ = η_Y s: (C − W₀(e^C/(M−1)))/M with C = (Mτ + 1)/(M−1) (spec ss.dv.lambertw)."""
    C = (M * tau + 1) / (M - 1)
    return (C - sp.LambertW(sp.exp(C) / (M - 1))) / M


def gamma_of_h(value: sp.Expr) -> sp.Expr:
    """γ as a function of h: (M−1)² h/((M−1) + e^{Mh}) (L579, L979)."""
    return (M - 1) ** 2 * value / ((M - 1) + sp.exp(M * value))


def gamma_stable_of_h(value: sp.Expr) -> sp.Expr:
    """The overflow-safe form (M−1)² h e^{−Mh}/((M−1)e^{−Mh} + 1) (spec ss.dv.gamma_stable)."""
    decay = sp.exp(-M * value)
    return (M - 1) ** 2 * value * decay / ((M - 1) * decay + 1)


def lower_root() -> sp.Expr:
    """u₀, the smaller positive root of e^u = (M−1)u: u₀ = −W₀(−1/(M−1)) (exists for M − 1 > e)."""
    return -sp.LambertW(-1 / (M - 1))


def upper_root() -> sp.Expr:
    """u₁, the larger positive root of e^u = (M−1)u: u₁ = −W₋₁(−1/(M−1))."""
    return -sp.LambertW(-1 / (M - 1), -1)


def omega0() -> sp.Expr:
    """ω₀ defined by h = M^{−(2−ω₀)} at the lower root, i.e. u₀ = M^{ω₀−1}: ω₀ = 1 + ln u₀/ln M."""
    return 1 + sp.log(lower_root()) / sp.log(M)


def omega1() -> sp.Expr:
    """ω₁ defined by h = (1+ω₁) ln M/M at the upper root, i.e. u₁ = (1+ω₁) ln M."""
    return upper_root() / sp.log(M) - 1


def peak_u() -> sp.Expr:
    """u* maximising (M−1)²u/(M((M−1) + e^u)): the root of e^u(u−1) = M−1, u* = 1 + W₀((M−1)/e)."""
    return 1 + sp.LambertW((M - 1) / sp.E)


def h_derivative(value: sp.Expr = h, eta: sp.Expr = etaY) -> sp.Expr:
    """dh/ds at h (Eqn 44)."""
    return eta / ((M - 1) + sp.exp(M * value))
