"""Proof-level claims of the IH head, [W] App. C.3.2 ([F] App. C.2): (P1.1)–(P1.3), Eq. (12)–(14), Step II.1, Eq. (18).

Paper: Wang, Yu, E, Wu (arXiv:2410.11474); spec ``shared/spec/induction-head.md`` §5.3. Each
claim integrates the (h, w) flow (``ih_proof_runs``) on its grid, in every flow mode and head-2
range, locates its window first, and tests every printed display pointwise inside the window
(a chain display is a part with its own status). The verdict is the canonical reading's
(paper ODE, canonical range); the others are in ``evidence["readings"]``. The bounds of
Eq. (15)–(17) and the technical simplification are in ``ih_proof_bounds``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from checks.claim import Context, Outcome
from checks import along as A
from checks.induction_head import ih_proof_runs as R
from derivations.induction_head import ih_proof as P
from numerics.differences import central_jacobian

PAPER = "ih"


def _fmt(x: float | None, spec: str = ".4g") -> str:
    return "—" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, spec)


def _canonical_D0(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The canonical record at the first configuration (D0 unless pinned otherwise)."""
    return A.deciding(records)[0]


# ----------------------------------------------------------------------------- (P1.1)


def _unresolved_t2h(run: R.Run, parts: dict[str, dict[str, Any]], names) -> dict[str, dict[str, Any]]:
    """The parts ``names`` (those that start at T_2^h) made inconclusive when T_2^h is a noise crossing
    (:func:`ih_proof_runs.t2h_noise`), their measured status kept beside."""
    why = R.t2h_noise(run)
    if why:
        for name in names:
            if name in parts:
                parts[name] = {**parts[name], "measured_status": parts[name].get("status"),
                               "status": "inconclusive", "why": why}
    return parts


def eval_p1_1(run: R.Run) -> dict[str, dict[str, Any]]:
    """(P1.1): T_1^h exists; h ≥ h* for t > T_1^h and for t > T_2^h (resolved times)."""
    t1, t2 = run.event("T_1h"), run.event("T_2h")
    ratio = run.h / run.hstar
    parts = {"T1h_exists": {"status": "holds" if math.isfinite(t1) else "fails", "T_1h": A.finite(t1),
                            "why": "" if math.isfinite(t1) else f"h never exceeds h* (max h/h* = {ratio.max():.6g})"}}
    for name, start in (("above_after_T1h", t1), ("above_after_T2h", t2)):
        mask = run.window(start, math.inf, closed=False, resolved=True)
        part = A.pointwise(run, mask, ratio, 1.0, relation=">=", window=f"t > {name[-3:]}, resolved")
        raw = run.window(start, math.inf, closed=False)
        part["min_rel_excess_resolved"] = A.extreme(run, mask, ratio - 1, "min")
        part["min_rel_excess_raw"] = A.extreme(run, raw, ratio - 1, "min")
        parts[name] = part
    below = run.state_at("T_h_below")
    if below:
        below["dist_to_fixed_point"] = max(abs(below["h"] * (1 + run.alpha) - 1), abs(below["w"] / run.wstar - 1))
        below["at_noise_floor"] = below["dist_to_fixed_point"] <= R.EQUILIBRIUM_FLOOR
    parts["T_h_hstar"] = {"status": "holds" if not below or below["at_noise_floor"] else "fails",
                          "statement": "T^h_{h*} = +∞ (first t > T_2^h with h < h*)", "crossing": below or None}
    return _unresolved_t2h(run, parts, ("above_after_T2h", "T_h_hstar"))


def check_p1_1(ctx: Context) -> Outcome:
    """(P1.1) 'h initially increases beyond h*, and then remains above this value'."""

    def head(status, records):
        rec = _canonical_D0(records)
        p = rec["parts"]["above_after_T1h"]
        m = (p.get("min_rel_excess_resolved") or {}).get("value")
        return (f"(P1.1) {status}: T_1^h = {_fmt(rec['events']['T_1h'])}, min (h-h*)/h* after T_1^h = {_fmt(m)} "
                f"(resolved; floor {R.EQUILIBRIUM_FLOOR:g}) at {rec['config']}")

    return R.run_claim(ctx, eval_p1_1, main=["T1h_exists", "above_after_T1h", "above_after_T2h"],
                       chain=["T_h_hstar"], head=head)


# ----------------------------------------------------------------------------- (P1.2)


def eval_p1_2(run: R.Run) -> dict[str, dict[str, Any]]:
    """(P1.2): dw/dt > 0 and w < w* at every resolved time."""
    everywhere = run.window(0.0, math.inf, resolved=True)
    parts = {
        "w_increasing": A.pointwise(run, everywhere, run.dw, 0.0, relation=">", window="t ≥ 0, resolved"),
        "w_below_wstar": A.pointwise(run, everywhere, run.w / run.wstar, 1.0, relation="<",
                                     window="t ≥ 0, resolved"),
    }
    parts["w_increasing"]["min_dwdt"] = A.extreme(run, everywhere, run.dw, "min")
    parts["w_below_wstar"]["max_w_over_wstar_resolved"] = A.extreme(run, everywhere, run.w / run.wstar)
    parts["w_below_wstar"]["max_w_over_wstar_raw"] = float((run.w / run.wstar).max())
    return parts


def _p1_2_display(ctx: Context, runs) -> dict[str, dict[str, Any]]:
    agreement = P.p1_2_formula().verify(n_points=8 if ctx.quick else 24, seed=ctx.seed,
                                        symbolic_seconds=0.5 if ctx.quick else 8.0)
    return {"dHdt_display": {"status": "holds" if agreement.equal else "differs", "role": "chain",
                             "statement": "dH/dt|_t̄ = -h'(t̄)(1-4w*⁴)^{-3/2}·2w(t̄) where dw/dt = 0",
                             "derived": "-h'(t̄)(1-4w(t̄)⁴)^{-3/2}·2w(t̄)² (∂H/∂h·h')",
                             "agreement": agreement.to_dict()}}


def check_p1_2(ctx: Context) -> Outcome:
    """(P1.2) 'w keeps increasing but always stays below w*'."""

    def head(status, records):
        rec = _canonical_D0(records)
        p = rec["parts"]
        return (f"(P1.2) {status}: min dw/dt = {_fmt(p['w_increasing']['min_dwdt']['value'])}, max w/w* = "
                f"{_fmt(p['w_below_wstar']['max_w_over_wstar_resolved']['value'], '.10f')} (resolved) at "
                f"{rec['config']}")

    return R.run_claim(ctx, eval_p1_2, main=["w_increasing", "w_below_wstar"], chain=["dHdt_display"], head=head,
                       claim_parts=_p1_2_display)


# ----------------------------------------------------------------------------- (P1.3)


def sign_of_dhdt(run: R.Run, window: np.ndarray, relation: str, text: str) -> dict[str, Any]:
    """dh/dt ``relation`` 0 at the times of ``window`` where its sign is resolved (``Run.rate_resolved``).

    The others are counted (``n_unresolved``, with the largest |dh/dt| among them and the floor); a window that
    only unresolved times fill is ``inconclusive``, not empty.
    """
    resolved = window & run.rate_resolved
    part = A.pointwise(run, resolved, run.dh, 0.0, relation=relation, window=f"{text}, |dh/dt| resolved")
    unresolved = window & ~run.rate_resolved
    part["n_unresolved"] = int(np.count_nonzero(unresolved))
    if part["n_unresolved"]:
        part["rate_floor"] = run.meta["rate_floor"]
        part["largest_unresolved_abs_dhdt"] = float(np.max(np.abs(run.dh[unresolved])))
        if not resolved.any():
            part.update(status="inconclusive", why=f"all {part['n_unresolved']} times of '{text}' have |dh/dt| at "
                                                   f"or below its resolution {run.meta['rate_floor']:.3g}")
    return part


def eval_p1_3(run: R.Run) -> dict[str, dict[str, Any]]:
    """(P1.3): T_2^h exists, dh/dt > 0 before it and ≤ 0 after it; sign changes counted. Resolved times only: away
    from (h*, w*), and with |dh/dt| above its resolution (:func:`sign_of_dhdt`)."""
    t2 = run.event("T_2h")
    res = run.resolved & run.rate_resolved
    signs = np.sign(run.dh[res])
    signs = signs[signs != 0]
    changes = int(np.count_nonzero(np.diff(signs)))
    parts = {"T2h_exists": {"status": "holds" if math.isfinite(t2) else "fails", "T_2h": A.finite(t2),
                            "n_sign_changes_dhdt": changes}}
    before = run.window(0.0, t2, closed=False, resolved=True) if math.isfinite(t2) else np.zeros(run.t.size, bool)
    after = run.window(t2, math.inf, closed=False, resolved=True)
    parts["increasing_before"] = sign_of_dhdt(run, before, ">", "0 < t < T_2^h, resolved")
    parts["decreasing_after"] = sign_of_dhdt(run, after, "<=", "t > T_2^h, resolved")
    parts["decreasing_after"]["max_dhdt_after"] = A.extreme(run, after & run.rate_resolved, run.dh)
    parts["single_sign_change"] = {"status": "holds" if changes == 1 else "fails", "n_sign_changes_dhdt": changes}
    return _unresolved_t2h(run, parts, ("T2h_exists", "increasing_before", "decreasing_after", "single_sign_change"))


def check_p1_3(ctx: Context) -> Outcome:
    """(P1.3) 'h increases before T_2^h, but decreases after T_2^h'."""

    def head(status, records):
        rec = _canonical_D0(records)
        p = rec["parts"]
        return (f"(P1.3) {status}: T_2^h = {_fmt(rec['events']['T_2h'])}, dh/dt changes sign "
                f"{p['T2h_exists']['n_sign_changes_dhdt']}×, max dh/dt after T_2^h = "
                f"{_fmt(p['decreasing_after']['max_dhdt_after']['value'])} at {rec['config']}")

    return R.run_claim(ctx, eval_p1_3, main=["T2h_exists", "increasing_before", "decreasing_after",
                                              "single_sign_change"], chain=[], head=head)


# ----------------------------------------------------------------------------- Eq. (12)-(13)


@functools.cache
def _eq12_forms() -> dict[str, Callable]:
    """NumPy evaluators of the printed and derived forms of Eq. (12)-(13) (built on first use)."""
    forms = {
        "cap": P.eq12_h_cap(), "dh": P.eq12_dh_lower(), "dh_derived": P.eq12_dh_lower_derived(),
        "h": P.eq12_h_lower(), "h_derived": P.eq12_h_lower_derived(), "T_first": P.eq13_first(),
        "T_second": P.eq13_second(), "T_derived": P.eq13_derived(), "dw": P.eq13_dw_upper()}
    args = ("h", "w", "wstar", "alpha", "L", "t", "h0")
    return {name: R.array_form(expr, *args, name=f"ih_proof_eq12_{name}") for name, expr in forms.items()}


def _eq12(name: str, run: R.Run, h=None, w=None, t=None):
    h = run.h if h is None else h
    w = run.w if w is None else w
    t = run.t if t is None else t
    return np.asarray(_eq12_forms()[name](h, w, run.wstar, run.alpha, float(run.L), t, run.sigma), dtype=float)


def _prefix(mask: np.ndarray) -> np.ndarray:
    """The initial run of True values (the window 'while the conditions hold')."""
    out = np.zeros_like(mask)
    stop = int(np.argmin(mask)) if not mask.all() else mask.size
    out[:stop] = True
    return out


def eval_eq13(run: R.Run) -> dict[str, dict[str, Any]]:
    """Eq. (12) on its window {w ≤ 0.01w*, h ≤ cap}; Eq. (13) against T_1^h; dw/dt bound on [0, T_1^h]."""
    cap = float(_eq12("cap", run, t=0.0))
    win = _prefix((run.w <= 0.01 * run.wstar) & (run.h <= cap))
    text = "initial interval with w ≤ 0.01w* and h ≤ h*(1-w*⁴)^{-1/2}/(1-0.01⁴w*⁴)^{-1/2}"
    parts = {
        "eq12_dh": A.pointwise(run, win, run.dh, _eq12("dh", run), relation=">=", window=text),
        "eq12_h": A.pointwise(run, win, run.h, _eq12("h", run), relation=">=", window=text),
        "eq12_dh_derived": A.pointwise(run, win, run.dh, _eq12("dh_derived", run), relation=">=", window=text),
        "eq12_h_derived": A.pointwise(run, win, run.h, _eq12("h_derived", run), relation=">=", window=text),
    }
    parts["eq12_h"]["window_end"] = float(run.t[win][-1]) if win.any() else None
    t1 = run.event("T_1h")
    bounds = {k: float(_eq12(k, run, h=run.hstar, t=0.0)) for k in ("T_first", "T_second", "T_derived")}
    for key, name in (("T_first", "eq13_first"), ("T_second", "eq13_second"), ("T_derived", "eq13_derived")):
        parts[name] = A.hitting_time(t1, bounds[key], relation="<=", event="T_1^h")
    before_t1 = run.window(0.0, t1)
    parts["dw_bound"] = A.pointwise(run, before_t1, run.dw, _eq12("dw", run), relation="<=", window="0 ≤ t ≤ T_1^h")
    t001 = run.event("T_w_001")
    if run.sigma > 0.01 * run.wstar:
        parts["T1h_before_Tw001"] = {"status": "outside-regime", "why": f"w(0) = σ = {run.sigma:g} > 0.01w*"}
    else:
        ok = math.isfinite(t1) and (not math.isfinite(t001) or t1 < t001)
        parts["T1h_before_Tw001"] = {"status": "holds" if ok else "fails", "T_1h": A.finite(t1),
                                     "T_w_001": A.finite(t001)}
    rhs12 = _eq12("h", run)
    pos = before_t1 & (rhs12 > 0)
    parts["one_plus_eps"] = {"status": "holds", "statement": "h ≤ (1+ε)·RHS(12) on [0, T_1^h] (ε reported)",
                             "max_h_over_rhs12": A.extreme(run, pos, run.h / np.where(pos, rhs12, 1.0))}
    parts["Th_half_reading"] = {"status": "holds", "T_1h": A.finite(t1), "T_h_half": A.finite(run.event("T_h_half")),
                                "note": "flag Th_half_reading: T^h_{1/2} read as T_1^h (default) or h ≥ h*/2"}
    return parts


def _eq13_functions(ctx: Context, runs) -> dict[str, dict[str, Any]]:
    """'first ≤ second' of (13) on 0 < w* < 1/√2, and the Θ(L) sweep of T_1^h."""
    ws = np.linspace(1e-3, 0.7071, 20000)
    first = np.asarray(_eq12_forms()["T_first"](0.0, 0.0, ws, 1.0, 3.0, 0.0, 0.0), dtype=float)
    second = np.asarray(_eq12_forms()["T_second"](0.0, 0.0, ws, 1.0, 3.0, 0.0, 0.0), dtype=float) * np.ones_like(ws)
    parts = {"eq13_first_le_second": A.function_part(first, second, {"wstar": ws}, role="chain",
                                                     statement="(13): first expression ≤ 2(L-2)(1-w*⁴/2), per (L-2)")}
    sweep = R.sub_sweep(ctx, {"L": [40, 80, 160, 400], "alpha": [1.0, 4.0], "wstar": [0.49],
                              "sigma": [1e-2, 1e-4, 1e-6, 1e-9]},
                        {"L": [40, 100, 400, 1000, 4000], "alpha": [0.5, 1.0, 4.0, 9.0], "wstar": [0.1, 0.3, 0.49, 0.65],
                         "sigma": [1e-2, 1e-4, 1e-6, 1e-8, 1e-12]})
    sweep_runs = R.runs_for(ctx, sweep, [R.CANONICAL])
    parts["T1h_Theta_L"] = R.scaling_part(sweep_runs, lambda r: r.event("T_1h"), lambda r: float(r.L),
                                          form="Theta", rate_name="L", variables=(R.L_LIMIT, R.SIGMA_ALGEBRAIC),
                                          figure_path=ctx.figure_path("T1h_over_L_limit.png"))
    parts["T1h_Theta_L"]["vs_dv_hitting_times"] = [
        {**r.config, "T_1h": A.finite(r.event("T_1h")),
         "ratio_to_(L-2)ln(1/(1-sqrt(1-w*^4)))": A.finite(r.event("T_1h") / (
             (r.L - 2) * math.log(1 / (1 - math.sqrt(1 - r.wstar**4)))))} for r in sweep_runs]
    return parts


def check_eq13(ctx: Context) -> Outcome:
    """Eq. (12)–(13), the dw/dt bound for t ≤ T_1^h and 'T_1^h = Θ(L)'."""

    def head(status, records):
        rec = _canonical_D0(records)
        p = rec["parts"]
        return (f"Eq. (12)-(13) {status}: at {rec['config']} T_1^h = {_fmt(p['eq13_first']['measured'])} vs (13) "
                f"{_fmt(p['eq13_first']['bound'])} and {_fmt(p['eq13_second']['bound'])}; (12) window "
                f"{'empty' if p['eq12_h']['status'] == 'outside-regime' else 'non-empty'}")

    return R.run_claim(ctx, eval_eq13, main=["eq12_dh", "eq12_h", "eq13_first", "eq13_second"],
                       chain=["eq12_dh_derived", "eq12_h_derived", "eq13_derived", "dw_bound", "T1h_before_Tw001"],
                       head=head, claim_parts=_eq13_functions, flags={"Th_half_reading": "T_1^h"})


# ----------------------------------------------------------------------------- Eq. (14)


def _R_of(wstar: float) -> float:
    import sympy as sp

    from derivations.induction_head import ih_head
    from derivations.induction_head import symbols as S

    return float(ih_head.R_of_wstar().subs(S.wstar, sp.Float(wstar, 30)).evalf(20))


def eval_eq14(run: R.Run) -> dict[str, dict[str, Any]]:
    """Eq. (14): h* ≤ h(t) ≤ (1+0.04375w*)h* for t ≥ T_1^h; max h/h* against R(w*)."""
    t1 = run.event("T_1h")
    after = run.window(t1, math.inf, closed=False)
    ratio = run.h / run.hstar
    upper = 1 + 0.04375 * run.wstar
    parts = {
        "lower": A.pointwise(run, after & run.resolved, ratio, 1.0, relation=">=", window="t > T_1^h, resolved"),
        "upper": A.pointwise(run, after, ratio, upper, relation="<=", window="t ≥ T_1^h"),
    }
    peak = run.state_at("T_2h")
    parts["upper"].update({"max_h_over_hstar": A.extreme(run, after, ratio), "printed_factor": upper,
                           "R_wstar": _R_of(run.wstar),
                           "h_over_hstar_at_T2h": peak["h"] / run.hstar if peak else None})
    parts["lower"]["min_h_over_hstar"] = A.extreme(run, after & run.resolved, ratio, "min")
    if not math.isfinite(t1):
        parts = {k: {"status": "outside-regime", "why": "T_1^h not reached"} for k in parts}
    return parts


def check_eq14(ctx: Context) -> Outcome:
    """Eq. (14): h* ≤ h(t) ≤ (1 + 0.04375w*)h* for all t ≥ T_1^h."""

    def head(status, records):
        rows = A.deciding(records)
        bits = [f"w*={r['config']['wstar']:g}: max h/h* {_fmt(r['parts']['upper'].get('max_h_over_hstar', {}).get('value'), '.5f')}"
                f" vs 1+0.04375w* = {_fmt(r['parts']['upper'].get('printed_factor'), '.5f')}" for r in rows]
        # configurations that differ only in σ give the same line: say it once
        return f"Eq. (14) {status}: " + "; ".join(list(dict.fromkeys(bits))[:3])

    return R.run_claim(ctx, eval_eq14, main=["lower", "upper"], chain=[], head=head)


# ----------------------------------------------------------------------------- Step II.1


def _ratio_bounds(run: R.Run) -> tuple[np.ndarray, np.ndarray]:
    v, vs = run.w**2, run.wstar**2
    psi = lambda x: (1 - x**2) ** -0.5  # noqa: E731
    phi = lambda x: x * (1 - x**2) ** -1.5  # noqa: E731
    return psi(v + vs) / psi(2 * v), phi(v + vs) / phi(2 * v)


def eval_step_ii1(run: R.Run) -> dict[str, dict[str, Any]]:
    """Step II.1 for t > T_2^h (t_2 read as T_2^h): dv/dt > 0, dh/dt < 0, the two ratio bounds, the limits."""
    t2 = run.event("T_2h")
    after = run.window(t2, math.inf, closed=False, resolved=True)
    lo, hi = _ratio_bounds(run)
    ratio = run.h / run.hstar
    text = "t > T_2^h, resolved"
    parts = {
        "v_increasing": A.pointwise(run, after, 2 * run.w * run.dw, 0.0, relation=">", window=text),
        "h_decreasing": sign_of_dhdt(run, after, "<", text),
        "lower_ratio": A.pointwise(run, after, lo, ratio, relation="<", window=text),
        "upper_ratio": A.pointwise(run, after, ratio, hi, relation="<", window=text),
    }
    dv, dh = abs(run.w[-1] ** 2 / run.wstar**2 - 1), abs(ratio[-1] - 1)
    parts["limits"] = {"status": "holds" if max(dv, dh) <= 1e-6 else "fails", "t_end": float(run.t[-1]),
                       "abs_v_over_vstar_minus_1": dv, "abs_h_over_hstar_minus_1": dh, "tolerance": 1e-6}
    if not math.isfinite(t2):
        for k in ("v_increasing", "h_decreasing", "lower_ratio", "upper_ratio"):
            parts[k] = {"status": "outside-regime", "why": "T_2^h not reached"}
    return _unresolved_t2h(run, parts, ("v_increasing", "h_decreasing", "lower_ratio", "upper_ratio"))


def check_step_ii1(ctx: Context) -> Outcome:
    """Step II.1: dv/dt > 0, dh/dt < 0 and ψ(v+v*)/ψ(2v) < h/h* < φ(v+v*)/φ(2v) for t > t_2; v → v*, h → h*."""

    def head(status, records):
        rec = _canonical_D0(records)
        p = rec["parts"]["limits"]
        return (f"Step II.1 {status}: at {rec['config']} after T_2^h = {_fmt(rec['events']['T_2h'])}; at t = "
                f"{p['t_end']:.3g}, |v/v*-1| = {p['abs_v_over_vstar_minus_1']:.2g}, |h/h*-1| = "
                f"{p['abs_h_over_hstar_minus_1']:.2g}")

    return R.run_claim(ctx, eval_step_ii1, main=["v_increasing", "h_decreasing", "lower_ratio", "upper_ratio",
                                                  "limits"], chain=[], head=head, flags={"t2_reading": "T_2^h"})


# ----------------------------------------------------------------------------- Eq. (18)


def _jacobian_rate(run: R.Run) -> float:
    """2·(slowest decay rate) of the linearised (h, w) flow at (h*, w*): the decay rate of G.

    Central differences of the flow's (dh/dt, dw/dt); eigenvalues at a fixed point do not depend
    on the coordinates.
    """
    jac = central_jacobian(R.velocity(run), np.array([run.hstar, run.wstar]))
    return float(2 * np.min(-np.linalg.eigvals(jac).real))


def eval_eq18(run: R.Run) -> dict[str, dict[str, Any]]:
    """The G bound for t > T_2^h, the fitted tail rate, and the Ω constants of (18) for h and w."""
    t2 = run.event("T_2h")
    if not math.isfinite(t2):
        return {k: {"status": "outside-regime", "why": "T_2^h not reached"} for k in ("G_bound", "h_omega", "w_omega")}
    v, vs, hs = run.w**2, run.wstar**2, run.hstar
    G = 0.5 * ((v - vs) ** 2 + (run.h - hs) ** 2)
    st = run.state_at("T_2h")
    G2 = 0.5 * ((st["w"] ** 2 - vs) ** 2 + (st["h"] - hs) ** 2)
    rate = vs * hs**2 / (4 * (run.L - 2))
    bound = G2 * np.exp(-rate * (run.t - t2))
    after = run.window(t2, math.inf, closed=False, resolved=True)
    parts = {"G_bound": A.pointwise(run, after, G, bound, relation="<=", window="t > T_2^h, resolved")}
    parts["G_bound"]["max_G_over_bound"] = A.extreme(run, after, G / bound)
    tail = after & (G < 1e-4 * G2) & (G > 1e-12 * G2)
    fitted = float(-np.polyfit(run.t[tail], np.log(G[tail]), 1)[0]) if tail.sum() >= 5 else None
    omega = vs / (run.L * (1 + run.alpha) ** 2)
    parts["G_bound"].update({"printed_rate": rate, "fitted_tail_rate": fitted,
                             "fitted_over_printed": fitted / rate if fitted else None,
                             "fitted_over_wstar2_over_L(1+a)^2": fitted / omega if fitted else None,
                             "linearised_rate_2lambda_slow": _jacobian_rate(run)})
    x = omega * (run.t - t2)
    for name, dev, dev2 in (("h_omega", run.h - hs, st["h"] - hs), ("w_omega", run.w - run.wstar,
                                                                       st["w"] - run.wstar)):
        ok = after & (x > 0)
        c = -np.log(np.maximum(dev[ok] ** 2, 1e-300) / dev2**2) / x[ok]
        k = int(np.argmin(c)) if c.size else None
        parts[name] = {"status": "holds" if c.size and c.min() > 0 else ("fails" if c.size else "outside-regime"),
                       "statement": "dev(t)² ≤ dev(T_2^h)² exp(-c·w*²(t-T_2^h)/(L(1+α*)²)) with c > 0",
                       "min_c": float(c[k]) if c.size else None, "t_min_c": float(run.t[ok][k]) if c.size else None,
                       "dev_T2h_relative": abs(dev2) / (hs if name == "h_omega" else run.wstar)}
    if run.wstar**2 > 0.3:
        for part in parts.values():
            part["measured_status"], part["status"] = part["status"], "outside-regime"
            part["why"] = f"Step II.2 assumes v* ≤ 0.3; v* = {run.wstar**2:.4g}"
        return parts
    return _unresolved_t2h(run, parts, ("G_bound", "h_omega", "w_omega"))


def _eq18_sweep(ctx: Context, runs) -> dict[str, dict[str, Any]]:
    """The Ω statements of (18) over a sweep: the tail rate of G against w*²/(L(1+α*)²)."""
    sweep = R.sub_sweep(ctx, {"L": [40, 80, 160, 400], "alpha": [1.0, 4.0], "wstar": [0.3, 0.49], "sigma": [1e-2]},
                        {"L": [40, 100, 400, 1000, 4000], "alpha": [0.5, 1.0, 4.0, 9.0],
                         "wstar": [0.1, 0.2, 0.3, 0.4, 0.49, 0.54], "sigma": [1e-2, 1e-4]})
    sweep_runs = R.runs_for(ctx, sweep, [R.CANONICAL])

    def tail_rate(r):
        part = eval_eq18(r).get("G_bound", {})
        return part.get("fitted_tail_rate") or math.nan

    return {"tail_rate_Omega": R.scaling_part(sweep_runs, tail_rate,
                                              lambda r: r.wstar**2 / (r.L * (1 + r.alpha) ** 2),
                                              form="Omega", rate_name="w*²/(L(1+α*)²)", variables=(R.L_LIMIT,),
                                              figure_path=ctx.figure_path("tail_rate_limit.png"))}


def check_eq18(ctx: Context) -> Outcome:
    """Eq. (18) and the exponential bound G(t) ≤ G(T_2^h)exp(-v*h*²(t-T_2^h)/(4(L-2)))."""

    def head(status, records):
        rec = _canonical_D0(records)
        p = rec["parts"]["G_bound"]
        mx = (p.get("max_G_over_bound") or {}).get("value")
        return (f"Eq. (18) {status}: at {rec['config']} max G/bound = {_fmt(mx)}; tail rate of G = "
                f"{_fmt(p.get('fitted_over_printed'))}× the printed v*h*²/(4(L-2))")

    return R.run_claim(ctx, eval_eq18, main=["G_bound", "h_omega", "w_omega"], chain=[], head=head,
                       claim_parts=_eq18_sweep)


# ----------------------------------------------------------------------------- registration


_register = R.register_proof_claim


_register("ih.p1_1", "[W] C.3.2 (P1.1)", "[F] C.2", check_p1_1,
          r"h initially increases beyond $h^\star$, and then remains above this value", cost=1.6)
_register("ih.p1_2", "[W] C.3.2 (P1.2)", "[F] C.2", check_p1_2,
          r"$w$ keeps increasing but always stays below $w^\star$; "
          r"$\frac{\mathrm dH}{\mathrm dt}\big|_{\bar t}=-h'(\bar t)(1-4w^{\star4})^{-\frac32}\cdot2w(\bar t)>0$", cost=1.8)
_register("ih.p1_3", "[W] C.3.2 (P1.3)", "[F] C.2", check_p1_3,
          r"$h$ increases before $T_2^h$, but decreases after $T_2^h$", cost=1.4)
_register("ih.eq13", "[W] Eq. (12)-(13)", "[F] Eq. (24)-(25)", check_eq13,
          r"\frac{\mathrm dh}{\mathrm dt}\ge\frac{-1}{L-2}\Big[h(1-0.01^4w^{\star4})^{-\frac12}-\frac{1}{1+\alpha^\star}"
          r"(1-w^{\star4})^{-\frac12}\Big];\ (12);\ T_1^h\le(1-0.01w^{\star4})^{\frac12}(L-2)\ln\Big(\frac{1}{1-\frac"
          r"{(1-w^{\star4})^{\frac12}}{(1-0.01^4w^{\star4})^{\frac12}}}\Big)\le2(L-2)\big(1-\tfrac12w^{\star4}\big)="
          r"\mathcal O(L)\ (13);\ T_1^h=\Theta(L)", cost=2.2)
_register("ih.eq14", "[W] Eq. (14)", "[F] Eq. (26)", check_eq14,
          r"h^\star\le h(t)\le(1+0.04375w^\star)h^\star,\quad\forall t\ge T_1^h.\tag{14}", cost=1.4,
          params=R.proof_params(quick={"wstar": (0.49, 0.3, 0.6)}))
_register("ih.step_ii1", "[W] C.3.2 Step II.1", "[F] C.2 Step II.1", check_step_ii1,
          r"dv/dt > 0 and dh/dt < 0 for t > t_2; $\psi(v+v^\star)/\psi(2v)<h/h^\star<\phi(v+v^\star)/\phi(2v)$; "
          r"$\lim_{t\to+\infty}v=v^\star$, $\lim_{t\to+\infty}h=h^\star$", cost=1.4)
_register("ih.eq18", "[W] Eq. (18)", "[F] Eq. (30)", check_eq18,
          r"G(v(t),h(t))\le G(v(T_2^h),h(T_2^h))\exp\Big(-\frac{v^\star h^{\star2}}{4(L-2)}(t-T_2^h)\Big);\ "
          r"(h(t)-h^\star)^2,(w(t)-w^\star)^2=\ldots\exp\Big(-\Omega\Big(\frac{w^{\star2}(t-T_2^h)}{L(1+\alpha^\star)^2}"
          r"\Big)\Big)\tag{18}", cost=3.1)
