"""ih.fixed_point ([W] §3.2, [F] §5.2): "GF has a unique fixed point w_V1 = α*/(1+α*), w_V2 = 1/(1+α*),
p = +∞, w_KQ = w*, which corresponds to a global minimizer of the objective (3)".

The Stage-II flow splits into the (p, g) block and the (w, h) block (spec §2.7), so its stationary
points are products of the blocks' stationary points. For each block and mode:

* (p, g): every stationary point has g = g_eq(p) := g*π_{L-1}/‖π‖² (∂L/∂g = 0) and then
  ∂L/∂p = dL_red/dp with L_red(p) = L(p, g_eq(p)); the canonical reading has no finite stationary
  point iff dL_red/dp < 0 on p ≥ 0 (tested on a grid). The literal reading (s = 2..L-2) has the
  whole line {g = 0} stationary.
* (w, h): multistart root search of the flow's right-hand side (paper: -∂_w L, balanced:
  -½∂_w L, same zeros) for the exp-simplified loss (both head-2 ranges) and the large-L softmax
  loss, classified by the eigenvalues of the Jacobian; and the six-parameter flow in (w_Q, w_K, h).
* ``value_layout = printed_matrices``: both heads then write the first output coordinate; the loss
  at the printed point against the loss at h = 0, by Monte-Carlo of the true softmax.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
import sympy as sp

from checks.claim import Claim, Context, Outcome, Param
from checks.registry import register
from derivations.induction_head import symbols as S
from numerics.differences import central_jacobian

PAPER = "ih"
IH_LOSSES = (("exp_simplified", "canonical"), ("exp_simplified", "literal"), ("softmax_largeL", "canonical"))
FLOWS = ("paper", "balanced")
W_MAX = 2**-0.5
P_MAX = 12.0


def _ih_loss(loss_mode: str, ih_range: str) -> sp.Expr:
    from derivations.induction_head import derive_verify, ih_head

    if loss_mode == "exp_simplified":
        return ih_head.L_IH2_derived(ih_range)
    return derive_verify.softmax_largeL_stated("gaussian")


@functools.lru_cache(maxsize=8)
def _wh_forms(loss_mode: str, ih_range: str, flow: str):
    """NumPy evaluators of (loss, flow, Jacobian) of the (w, h) block in (w, h, L, α*, w*)."""
    from derivations.flows import balanced_manifold_flow, jacobian
    from numerics.compile import array_function

    loss = _ih_loss(loss_mode, ih_range)
    rhs = balanced_manifold_flow(loss, S.w, [S.h], S.reduced_mode(flow))  # the (w, h) flow of the mode, as the ODE runs it
    args = (S.w, S.h, S.L, S.alpha, S.wstar)
    name = f"ih_fixed_point_{loss_mode}_{ih_range}_{flow}"
    return (array_function(loss, args, name=f"{name}_loss"), array_function(rhs, args, name=f"{name}_rhs"),
            array_function(jacobian(rhs, [S.w, S.h]), args, name=f"{name}_jac"))


def _wh_functions(loss_mode: str, ih_range: str, flow: str, L: int, alpha: float, wstar: float):
    """(loss, flow, Jacobian) of the (w, h) block as functions of (w, h) at the given (L, α*, w*)."""
    def at(f):
        return lambda w, h: f(w, h, L, alpha, wstar)

    return tuple(at(f) for f in _wh_forms(loss_mode, ih_range, flow))


def _classify(eigs: np.ndarray, scale: float) -> str:
    re = np.real(eigs)
    if np.any(np.abs(re) <= 1e-9 * scale):
        return "degenerate (zero eigenvalue)"
    if np.all(re < 0):
        return "stable (local minimum)"
    if np.all(re > 0):
        return "unstable (local maximum)"
    return "saddle"


def wh_stationary_points(loss_mode: str, ih_range: str, flow: str, L: int, alpha: float, wstar: float):
    """Distinct zeros of the (w, h) flow on |w| < 1/√2 from a grid of starting points (scipy hybr)."""
    from scipy.optimize import root

    loss, rhs, jac = _wh_functions(loss_mode, ih_range, flow, L, alpha, wstar)
    found: list[dict[str, Any]] = []
    for w0 in np.linspace(-0.68, 0.68, 9):
        for h0 in (-1.0, -0.2, 0.3, 0.6, 1.5):
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # iterates may leave |w| < 2^{-1/2}: NaN, rejected
                sol = root(lambda z: np.array(rhs(*z), dtype=float), [w0, h0],
                           jac=lambda z: np.array(jac(*z), dtype=float), method="hybr", tol=1e-14)
            w, h = (float(v) for v in sol.x)
            if not (sol.success and abs(w) < W_MAX and np.max(np.abs(rhs(w, h))) < 1e-12):
                continue
            if any(abs(w - f["w"]) < 1e-6 and abs(h - f["h"]) < 1e-6 for f in found):
                continue
            J = np.array(jac(w, h), dtype=float)
            eigs = np.linalg.eigvals(J)
            found.append({"w": w, "h": h, "loss": float(loss(w, h)), "eigenvalues": eigs.real.tolist(),
                          "type": _classify(eigs, float(np.max(np.abs(J))) or 1.0)})
    found.sort(key=lambda f: (f["w"], f["h"]))
    if found:
        best = min(f["loss"] for f in found)
        for f in found:
            f["global_minimiser_among_stationary"] = bool(f["loss"] <= best + 1e-15 and f["type"].startswith("stable"))
    return found


def pg_block(L: int, alpha: float, head1_range: str) -> dict[str, Any]:
    """Stationary points of the (p, g) block, per head-1 reading."""
    from numerics.models.induction_head.four_gram import four_gram_kernels

    kern = four_gram_kernels(head1_range)
    gs = alpha / (1 + alpha)
    # beyond p ≈ 12 the flow's size g*²e^{-2p} (ih.dv.G4_tail) reaches double-precision rounding of L_G4;
    # the tail's sign there is the derived one (dL_red/dp = -g*²u² < 0), not a grid value
    p = np.concatenate([[0.0], np.geomspace(1e-4, P_MAX, 600)])
    Lf = float(L)
    if head1_range == "canonical":
        lags = np.arange(L - 2)
        e = np.exp(-np.outer(p, lags))
        pi = e / e.sum(1, keepdims=True)
        g_eq = gs * pi[:, 0] / (pi**2).sum(1)
        dp = kern["dp"](p, g_eq, Lf, alpha)  # = -dL_red/dp on the manifold ∂L/∂g = 0
        dg = kern["dg"](p, g_eq, Lf, alpha)
        return {"head1_range": head1_range, "finite_stationary_points": int(np.sum(dp <= 0)),
                "min_dp_on_g_eq": float(dp.min()), "at_p": float(p[int(np.argmin(dp))]),
                "max_abs_dg_on_g_eq": float(np.abs(dg).max()),
                "p_grid": [0.0, P_MAX], "g_eq_at_p_max_over_gstar": float(g_eq[-1] / gs), "loss_at_p_max_g_eq": float(kern["loss"](p[-1:], g_eq[-1:],
                                                                                                       Lf, alpha)[0]),
                "printed_point_loss": 0.0, "printed_point": "p = +∞, g = g*: L_G4 → 0 (limit point, not attained)"}
    zeros = np.zeros_like(p)
    dp, dg = kern["dp"](p, zeros, Lf, alpha), kern["dg"](p, zeros, Lf, alpha)
    jac_gg = kern["jac_gg"](p, zeros, Lf, alpha)
    return {"head1_range": head1_range, "stationary_line_g0": bool(np.all(dp == 0) and np.all(dg == 0)),
            "loss_on_line": float(kern["loss"](p[:1], zeros[:1], Lf, alpha)[0]), "half_gstar2": gs**2 / 2,
            "jacobian_eigenvalues_on_line": {"p-direction": 0.0, "g-direction_range": [float(jac_gg.min()),
                                                                                        float(jac_gg.max())]},
            "printed_point_loss": gs**2, "printed_point_dg": -gs,
            "printed_point": "p = +∞, g = g*: not stationary (dg/dt → -g*), loss g*²"}


def _velocity(field, y, params) -> np.ndarray:
    out = np.empty(y.size)
    field.rhs(0.0, y, params, out)
    return out


def six_parameter(L: int, alpha: float, wstar: float) -> dict[str, Any]:
    """The (h, w_Q, w_K) flow at w_Q w_K = w*², h = h* off the balanced manifold, and at the origin."""
    from checks.induction_head.stage1_claims import _pair_field

    field, _ = _pair_field()
    params = np.array([float(L), alpha, wstar])
    rows = []
    hs = 1 / (1 + alpha)
    for wq in (0.3, wstar, 0.6, -wstar):
        y = np.array([hs, wq, wstar**2 / wq])
        out = _velocity(field, y, params)
        J = central_jacobian(lambda z: _velocity(field, z, params), y)
        eigs = np.sort(np.linalg.eigvals(J).real)
        rows.append({"wQ": float(wq), "wK": float(y[2]), "h": hs, "max_abs_rhs": float(np.max(np.abs(out))),
                     "jacobian_eigenvalues": eigs.tolist()})
    return {"points_on_wQwK_eq_wstar2": rows,
            "reading": "the zero set contains the hyperbola w_Q w_K = w*² (h = h*): a curve of fixed points"}


def printed_matrices(ctx: Context, L: int, alpha: float, wstar: float) -> dict[str, Any]:
    """Loss under value_layout = printed_matrices at the printed point vs at h = 0 (Monte-Carlo, true softmax).

    Both W_V matrices write the first output coordinate: TF = (g Σπ_s y_s + h Σρ_s x_s, 0). At p = ∞,
    g = g*, the first residual is h·o₂ and the second -h*·IH₂, so L(h) = ½h²E o₂² + ½h*²E IH₂²,
    minimised at h = 0. At the printed point o₂ = IH₂ (w = w*), so L = h*²E IH₂² = 2 L(0).
    """
    from numerics.models.induction_head.controls import softmax_loss_estimate

    n = 100_000 if ctx.quick else 1_000_000
    half = softmax_loss_estimate(L, wstar, 0.0, alpha, wstar, n=n, seed=ctx.seed)  # ½h*² E IH₂²
    at_printed, at_zero = 2 * half.mean, half.mean
    return {"loss_at_printed_point": at_printed, "loss_at_h0": at_zero, "se": 2 * half.se, "n": n,
            "printed_point_minimises": bool(at_printed <= at_zero),
            "ratio_printed_to_minimum": 2.0, "argument": printed_matrices.__doc__.split("\n\n")[1].strip()}


def check_fixed_point(ctx: Context) -> Outcome:
    """ih.fixed_point: enumerate the stationary points of the Stage-II flow per block and mode; classify them."""
    L, alpha, wstar = int(ctx.value("L")), float(ctx.value("alpha")), float(ctx.value("wstar"))
    hs = 1 / (1 + alpha)
    pg = {r: pg_block(L, alpha, r) for r in ("canonical", "literal")}
    wh: dict[str, Any] = {}
    for loss_mode, rng in IH_LOSSES:
        for flow in FLOWS:
            pts = wh_stationary_points(loss_mode, rng, flow, L, alpha, wstar)
            loss_fn = _wh_functions(loss_mode, rng, flow, L, alpha, wstar)[0]
            rhs = _wh_functions(loss_mode, rng, flow, L, alpha, wstar)[1]
            wh[f"{loss_mode}/{rng}/{flow}"] = {
                "stationary_points": pts, "count": len(pts),
                "count_w_nonnegative": sum(p["w"] >= -1e-12 for p in pts),
                "printed_point": {"w": wstar, "h": hs, "loss": float(loss_fn(wstar, hs)),
                                  "max_abs_rhs": float(np.max(np.abs(rhs(wstar, hs))))}}
    six = six_parameter(L, alpha, wstar)
    layout = printed_matrices(ctx, L, alpha, wstar)
    canon = wh["exp_simplified/canonical/paper"]
    unique = pg["canonical"]["finite_stationary_points"] == 0 and canon["count_w_nonnegative"] == 1
    status = "holds" if unique else "fails"
    others = [p for p in canon["stationary_points"] if abs(p["w"] - wstar) > 1e-6]
    summary = (f"(p, g): {'no finite stationary point (dL_red/dp < 0), only the limit p=∞, g=g*' if pg['canonical']['finite_stationary_points'] == 0 else 'finite stationary points exist'}; "
               f"(w, h), paper ODE: {canon['count']} stationary points: "
               + "; ".join(f"w={p['w']:.4g}, h={p['h']:.4g} ({p['type']}, loss {p['loss']:.3g})"
                           for p in canon["stationary_points"])
               + "; six-parameter flow: a curve w_Q w_K = w*² of fixed points; literal head-1 range: line g=0 "
               "stationary; printed_matrices: printed point loss = 2× the minimum (h = 0)")
    evidence = {"params": {"L": L, "alpha": alpha, "wstar": wstar}, "pg_block": pg, "wh_block": wh,
                "six_parameter": six, "value_layout_printed_matrices": layout,
                "stationary_points_other_than_printed": others,
                "canonical_reading": {"flow": "paper", "ih_loss": "exp_simplified", "ih_model_range": "canonical",
                                      "head1_range": "canonical", "value_layout": "separate"},
                "readings": {k: f"{v['count']} stationary points, printed point loss {v['printed_point']['loss']:.3g}"
                             for k, v in wh.items()}}
    return Outcome(status, summary, evidence)


register(Claim("ih.fixed_point", PAPER, "[W] §3.2", "claim", check_fixed_point,
               statement=r"\text{GF has a unique fixed point } w_{V_1}=\frac{\alpha^\star}{1+\alpha^\star},\ "
                         r"w_{V_2}=\frac{1}{1+\alpha^\star},\ p=+\infty,\ w_{KQ}=w^\star\text{, a global minimizer of (3)}",
               label_alt="[F] §5.2",
               params=(Param("L", 40, doc="D0"), Param("alpha", 1.0, doc="D0"), Param("wstar", 0.49, doc="D0")),
               domain=S.domain(S.L, S.alpha, S.wstar, constraints=S.EQ10_CONSTRAINTS[:1]),
               doc=check_fixed_point.__doc__ or "", cost=3))
