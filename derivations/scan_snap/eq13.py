r"""The constants of Eqn 13 (``ss.dv.eq13_constants``), derived from Eqn 97 under the approximations of Sec. 6.

Sec. 6 (L192) assumes, for a single common token l: constant normalisers ρ₀, so every class n holding l has
f_nl = e^{z_l}/ρ₀ =: u; f_nᵀf_{n'} ≈ β_{nn'} ≈ e^{2z_l}/ρ₀² = u² for overlapping pairs; 1 − f_nl² ≈ 1. Eqn 97,

    ż_l = η_Z γ Σ_{n∈ψ⁻¹(m)} f_nl Σ_{n'≠n} β_{nn'} [(f_nᵀf_{n'}) f_nl − f_{n'l}],

and ξ_n = γ Σ_{n'≠n} β_{nn'} f_nᵀf_{n'} are written out with feature vectors whose only shared entry is l
(distinct entries are free symbols) and β_{nn'} := f_nᵀf_{n'}; each is a polynomial in u whose lowest term,
the order the approximations keep (1 − u² ≈ 1), is c·u⁴ = c·ρ₀⁻⁴e^{4z_l}. Hence, with C the classes holding l,

    ż_l(m) ≈ −c_z(m) ρ₀⁻⁴ η_Z γ e^{4z_l},  c_z(m) = (|C| − 1)·|ψ⁻¹(m) ∩ C|;   ξ_n ≈ c_ξ(n) ρ₀⁻⁴ γ e^{4z_l},  c_ξ(n) = |C| − 1,

against the printed K in both places (Eqn 13, Theorem 4): equal only for ż_l with K = 2 classes sharing their
last token. Each structure's explicit expansion is checked against this law (a mismatch is a bug).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from derivations.core import Formula, Item
from derivations.domain import Domain, Interval
from derivations.errors import InternalError
from derivations.scan_snap.symbols import etaZ, rho0, z

u = sp.Symbol("u", positive=True)  # e^{z_l}/ρ₀
gamma_value = sp.Symbol("gamma", positive=True)  # γ(t) at the time considered


@dataclass(frozen=True)
class Structure:
    """K classes, the classes ``holders`` whose support holds the common token l, and the last-token map ψ."""

    name: str
    tag: str
    K: int
    holders: tuple[int, ...]
    psi: tuple[int, ...]


#: the named single-common-token configurations of spec §2.10 and the structural cases of R6
STRUCTURES = (
    Structure("K2_own", "K2_own", 2, (0, 1), (0, 1)),
    Structure("thm_hyp.ct1 (K = 2, shared last token)", "thm_hyp_ct1", 2, (0, 1), (0, 0)),
    Structure("K3_own", "K3_own", 3, (0, 1, 2), (0, 1, 2)),
    Structure("K3_shared", "K3_shared", 3, (0, 1, 2), (0, 0, 0)),
    Structure("K = 4, mixed sharing ψ = (a, a, b, b)", "K4_mixed", 4, (0, 1, 2, 3), (0, 0, 1, 1)),
    Structure("K = 4, l held by 3 classes, one isolated, shared last token", "K4_subset_isolated", 4, (0, 1, 2),
              (0, 0, 0, 0)),
    Structure("K = 5, shared last token", "K5_shared", 5, (0, 1, 2, 3, 4), (0, 0, 0, 0, 0)),
)


def _features(st: Structure) -> list[dict]:
    """f_n as {token: entry}: u at the common token for holders, two free distinct entries per class."""
    out = []
    for n in range(st.K):
        f = {("distinct", n, k): sp.Symbol(f"d_{n}{k}", positive=True) for k in range(2)}
        if n in st.holders:
            f["l"] = u
        out.append(f)
    return out


def _inner(f: dict, g: dict) -> sp.Expr:
    return sp.Add(*[f[k] * g[k] for k in f.keys() & g.keys()])


def _leading(expr: sp.Expr) -> sp.Expr:
    """The coefficient of u⁴, checked to be the lowest power of u in ``expr`` (a polynomial in u)."""
    poly = sp.Poly(sp.expand(expr), u)
    if poly.is_zero:
        return sp.Integer(0)
    low = min(monomial[0] for monomial in poly.monoms())
    if low != 4:
        raise InternalError(f"the lowest power of u is {low}, not 4: the approximations of Sec. 6 do not apply")
    return sp.simplify(poly.coeff_monomial(u**4))


def zdot_coefficient(st: Structure, m: int) -> sp.Expr:
    """c_z(m): minus the u⁴ coefficient of Eqn 97 / (η_Zγ) for the last token m, β_{nn'} = f_nᵀf_{n'}."""
    f = _features(st)
    total = sp.Integer(0)
    for n in (k for k in range(st.K) if st.psi[k] == m):
        for n2 in (k for k in range(st.K) if k != n):
            beta = _inner(f[n], f[n2])
            total += f[n].get("l", 0) * beta * (_inner(f[n], f[n2]) * f[n].get("l", 0) - f[n2].get("l", 0))
    return -_leading(total)


def xi_coefficient(st: Structure, n: int) -> sp.Expr:
    """c_ξ(n): the u⁴ coefficient of ξ_n/γ, β_{nn'} = f_nᵀf_{n'}."""
    f = _features(st)
    return _leading(sp.Add(*[_inner(f[n], f[k]) ** 2 for k in range(st.K) if k != n]))


def law(st: Structure) -> tuple[dict[int, int], dict[int, int]]:
    """The general law of the module docstring: c_z per last token, c_ξ per class."""
    C = len(st.holders)
    cz = {m: (C - 1) * sum(1 for n in st.holders if st.psi[n] == m) for m in sorted(set(st.psi))}
    cx = {n: (C - 1 if n in st.holders else 0) for n in range(st.K)}
    return cz, cx


def constants(st: Structure) -> tuple[dict[int, sp.Expr], dict[int, sp.Expr]]:
    """c_z(m) for every last token and c_ξ(n) for every class, each checked against :func:`law`."""
    cz = {m: zdot_coefficient(st, m) for m in sorted(set(st.psi))}
    cx = {n: xi_coefficient(st, n) for n in range(st.K)}
    if (cz, cx) != law(st):
        raise InternalError(f"{st.name}: expansion gives c_z = {cz}, c_ξ = {cx}, the law {law(st)}: a bug")
    return cz, cx


def item_eq13_constants() -> Item:
    """ss.dv.eq13_constants — Eqn 13's ż_l ≈ −Kρ₀⁻⁴η_Zγe^{4z_l} and ξ_n ≈ Kρ₀⁻⁴γe^{4z_l} against the constants
    derived from Eqn 97 under Sec. 6's approximations (module docstring), on every structure of
    :data:`STRUCTURES`."""
    unit = rho0**-4 * sp.exp(4 * z)  # ρ₀⁻⁴e^{4z_l}
    domain = Domain({rho0: Interval(0.1, 10, scale="log"), etaZ: Interval(0.01, 10, scale="log"),
                     gamma_value: Interval(1e-3, 10, scale="log"), z: Interval(-10, 0)})
    formulas = []
    for st in STRUCTURES:
        cz, cx = constants(st)
        tag = st.tag
        for m, c in cz.items():
            if c == 0:
                continue
            formulas.append(Formula(
                f"ss.dv.eq13_constants.zdot.{tag}.m{m}", "Eqn 13 (ż_l)", -st.K * unit * etaZ * gamma_value,
                -c * unit * etaZ * gamma_value, domain,
                description=f"{st.name}: ż_l for last token {m} ({sum(st.psi[n] == m for n in st.holders)} "
                            f"holders of l with that last token), c_z = {c} against the printed K = {st.K}"))
        for c in sorted(set(cx.values()) - {0}):
            classes = [n for n, v in cx.items() if v == c]
            formulas.append(Formula(
                f"ss.dv.eq13_constants.xi.{tag}.n{classes[0]}", "Eqn 13 (ξ_n)", st.K * unit * gamma_value,
                c * unit * gamma_value, domain,
                description=f"{st.name}: ξ_n for classes {classes}, c_ξ = {c} against the printed K = {st.K}"))
    return Item("ss.dv.eq13_constants", "derived (Eqn 97 → Eqn 13)", "", "Eqn 13's constants", formulas=formulas,
                notes=["f_nl = e^{z_l}/ρ₀ for every holder n (constant normalisers), β_{nn'} = f_nᵀf_{n'}, "
                       "leading order in e^{2z_l}/ρ₀² (1 − f_nl² ≈ 1); derived: c_z(m) = (|C| − 1)|ψ⁻¹(m) ∩ C|, "
                       "c_ξ(n) = |C| − 1 for the holders C of l"])
