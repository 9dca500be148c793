"""Second methods of rl.cf.model_loss, rl.cf.ep_label, rl.cf.gradient and rl.cf.effective_rate.

The loss at 0 by the numba kernel and at 60 digits against the print and the derivation, exact
enumeration against stratified Monte-Carlo; the numerics' EP labels against the derivation's
label rule on every short string; the numba and the 60-digit gradients against central
differences of the 60-digit loss and complex-step derivatives of a separate NumPy loss; the
logits K = W/λ of actual GD runs (the training driver) moving at the derived rate.
"""

from __future__ import annotations

import re
from typing import Any

import mpmath
import numpy as np
from mpmath import mp

from checks.agreement import K_SE, agrees, z_score
from checks.claim import Context
from checks.regular_language.cross_checks._common import (
    DPS,
    FLOAT_RTOL,
    MP_RTOL,
    _block_error,
    _coordinate,
    _family,
    _formulas,
    _mp_array,
    _pin,
    _point_values,
    _random_point,
    _rel,
    _result,
    _rng,
    _seed,
    _symbolic,
    _Tally,
)
from derivations.core import Item
from numerics.differences import complex_step_gradient
from numerics.models.regular_language.analytic import loss_analytic
from numerics.models.regular_language.data import EP_COUNTS, RLData, cot_data, ep_count, ep_data
from numerics.models.regular_language.gd import run_gd
from numerics.models.regular_language.model import RLModel
from numerics.models.regular_language.precise import gradient_mp, loss_mp


# ----------------------------------------------------------------------------------------------
# rl.cf.model_loss


def model_loss(ctx: Context, item: Item) -> dict[str, Any]:
    """L(0, 0) by the numba kernel and at 60 digits vs the print and the derivation; enumeration vs MC.

    EP L_max = 2..6 (full 2..10; L_max = 1 has no negative samples and the numerics refuse it),
    CoT L0 ∈ {3, 4} (full 2..5) under both ``cot_max_len`` and ``reg_max_len``; stratified
    Monte-Carlo (1e5 strings per length, full 1e6) within 4 standard errors of exact enumeration
    at 3 (full 20) random points of EP L_max = 6; the enumeration, the tabled kernel and the
    60-digit loss against each other; the 60-digit loss at a random point against the
    derivation's loss expression.
    """
    quick = ctx.quick
    lam = _pin(ctx, "lam")
    zero, disagrees = [], []
    formulas = _formulas(item, r"zero\..*")
    sets = [(f"EP_Lmax{n}", ep_data(n), n) for n in range(2, 7 if quick else 11)]
    for L0 in ((3, 4) if quick else (2, 3, 4, 5)):
        for cml in ("2L0-1", "2L0-2"):
            for rml in ("L0-1", "L0"):
                count = 2 * L0 - 1 if cml == "2L0-1" else 2 * L0 - 2
                data = cot_data(L0, cot_max_len=cml, reg_max_len=rml)
                sets.append((f"CoT_L0{L0}_{cml}_{rml}", data, count))
    for name, data, count in sets:
        model = RLModel(data, 1.0 if lam is None else lam)
        u0, W0 = np.zeros(data.dim), np.zeros((data.dim, data.dim))
        value64 = model.loss(model.zeros())
        value_mp = loss_mp(data, u0, W0, model.lam)
        with mp.workdps(DPS):
            printed_mp = count * mp.log(2)
            record = {"set": name, "numba": value64, "mp60": mpmath.nstr(value_mp, 20),
                      "printed": mpmath.nstr(printed_mp, 20),
                      "numba_vs_printed": _rel(value64, printed_mp),
                      "mp_equals_printed": bool(abs(value_mp - printed_mp) <= mp.mpf(10) ** (10 - DPS))}
        formula = formulas.get(f"zero.{name}")
        if formula is not None:
            (derived,) = _symbolic([formula.derived], lambda s: 0)
            record["derivation"] = mpmath.nstr(derived, 20)
            if _rel(value_mp, derived) > MP_RTOL or _rel(value64, derived) > FLOAT_RTOL:
                disagrees.append(f"zero.{name}")
        zero.append(record)
    # Monte-Carlo and the three implementations at random points
    n_points, n_mc = (3, 10**5) if quick else (20, 10**6)
    data = ep_data(6)
    mc_records = []
    for k in range(n_points):
        u, W, lam_k = _random_point(_rng(ctx, item.id, k), data.dim, lam)
        model = RLModel(data, lam_k)
        theta = model.join(u, W)
        exact = model.enumeration().estimate(theta)
        mc = model.monte_carlo(n=n_mc, seed=_seed(ctx, item.id, k)).estimate(theta)
        tabled, precise = model.loss(theta), loss_mp(data, u, W, lam_k)
        ok = agrees(mc, exact.mean, K_SE)
        mc_records.append({"point": k, "lam": lam_k, "enumeration": exact.mean, "tabled_kernel": tabled,
                           "mp60": mpmath.nstr(precise, 20), "mc_mean": mc.mean, "mc_se": mc.se, "mc_n": mc.n,
                           "z": z_score(mc, exact.mean), "mc_agrees_4se": ok,
                           "per_sample_vs_mp": _rel(exact.mean, precise),
                           "tabled_vs_mp": _rel(tabled, precise)})
        if not ok:
            disagrees.append("monte_carlo")
        if max(_rel(exact.mean, precise), _rel(tabled, precise)) > FLOAT_RTOL:
            disagrees.append("implementations")
    # the derivation's loss expression at a random point of its own size
    general = _formulas(item, r"sec3_vs_A1")
    at_point = {}
    for short, formula in general.items():
        names = " ".join(s.name for s in formula.derived.free_symbols)
        L_max = max(int(m) for m in re.findall(r"_(\d+)[ab]", names))
        small = ep_data(L_max)
        u, W, lam_k = _random_point(_rng(ctx, item.id, 1000), small.dim, lam)
        stated, derived = _symbolic([formula.stated, formula.derived], _point_values(u, W, lam_k))
        precise = loss_mp(small, u, W, lam_k)
        at_point = {"L_max": L_max, "lam": lam_k, "mp60": mpmath.nstr(precise, 20),
                    "derivation": mpmath.nstr(derived, 20), "sec3_form": mpmath.nstr(stated, 20),
                    "relative_gap": _rel(precise, derived)}
        if _rel(precise, derived) > 1e-25:
            disagrees.append(short)
    n_zero_ok = sum(r["mp_equals_printed"] for r in zero)
    n_mc_ok = sum(r["mc_agrees_4se"] for r in mc_records)
    with mp.workdps(DPS):
        others = [f"{r['set']} = {float(mp.mpf(r['mp60']) / mp.log(2)):.6g} log 2 (printed "
                  f"{float(mp.mpf(r['printed']) / mp.log(2)):.6g} log 2)"
                  for r in zero if not r["mp_equals_printed"]]
    evidence = {
        "method": "numba tabled kernel, exact enumeration (per-sample kernel), 60-digit mpmath loss, "
                  "stratified Monte-Carlo",
        "loss_at_zero": zero, "monte_carlo": mc_records, "loss_at_random_point_vs_derivation": at_point,
        "note": "L_max = 1 is refused by the numerics (even pairs needs a negative sample); the "
                "derivation's L_max = 1 value is not cross-checked",
    }
    summary = (f"second method: L(0,0) equals the printed value in {n_zero_ok}/{len(zero)} data sets"
               + (f" (not: {'; '.join(others[:2])}{' …' if len(others) > 2 else ''})" if others else "")
               + f"; Monte-Carlo within {K_SE:g} SE of enumeration at {n_mc_ok}/{len(mc_records)} points")
    return _result(evidence, summary, disagrees)


# ----------------------------------------------------------------------------------------------
# rl.cf.ep_label


def ep_label(ctx: Context, item: Item) -> dict[str, Any]:
    """The numerics' EP labels vs the derivation's label rule on every string of length <= 12 (full 16)."""
    max_len = 12 if ctx.quick else 16
    records, disagrees = {}, []
    predicates = {p.id.removeprefix(item.id + "."): p for p in item.predicates}
    for mode in EP_COUNTS:
        data = ep_data(max_len, ep_count=mode)
        chars, length = data.chars, data.length
        first_last = np.where(chars[:, 0] == chars[np.arange(data.n), length - 1], 1, -1)
        numeric_equivalent = data.y == first_last
        predicate = predicates.get(mode)
        mismatch_definition = mismatch_statement = 0
        first = None
        if predicate is not None:
            for n in range(data.n):
                s = tuple("ab"[c] for c in chars[n, : length[n]])
                if predicate.derived(s) != int(data.y[n]):
                    mismatch_definition += 1
                    first = first or "".join(s)
                if predicate.stated(s) != int(first_last[n]):
                    mismatch_statement += 1
        else:
            disagrees.append(f"{mode} (predicate missing)")
        records[mode] = {
            "strings": data.n, "max_length": max_len,
            "numerics_label_equals_first_last": int(numeric_equivalent.sum()),
            "equivalence_holds": bool(numeric_equivalent.all()),
            "first_string_where_not": next(map(data.string, np.flatnonzero(~numeric_equivalent)), None),
            "numerics_vs_derivation_label": mismatch_definition, "first_mismatch": first,
            "aabba_count": ep_count((0, 0, 1, 1, 0), mode),
        }
        if mismatch_definition or mismatch_statement:
            disagrees.append(mode)
    holding = ", ".join(m for m in EP_COUNTS if records[m]["equivalence_holds"]) or "no counting mode"
    summary = ("second method: the numerics' labels equal the derivation's rule on all "
               f"{records['contiguous']['strings']} strings of length <= {max_len} in both counting modes; "
               f"first = last holds under {holding}")
    if disagrees:
        summary = "second method: the numerics' EP labels disagree with the derivation's rule"
    return _result({"method": "numerics data labels (vectorised rules) vs the derivation's literal count",
                    "modes": records}, summary, disagrees)


# ----------------------------------------------------------------------------------------------
# rl.cf.gradient


def _central_difference(data: RLData, u, W, lam, direction_u, direction_W, dps: int = DPS):
    """(L(θ + hv) − L(θ − hv))/(2h) at ``dps`` digits, h = 10^(−dps/3)."""
    with mp.workdps(dps):
        h = mp.mpf(10) ** (-(dps // 3))
        up = loss_mp(data, _shift(u, direction_u, h), _shift(W, direction_W, h), lam, dps=dps)
        down = loss_mp(data, _shift(u, direction_u, -h), _shift(W, direction_W, -h), lam, dps=dps)
        return (up - down) / (2 * h)


def _shift(x, v, h):
    out = np.empty(np.shape(x), dtype=object)
    flat_x, flat_v, flat_o = np.ravel(x), np.ravel(v), out.reshape(-1)
    for i in range(flat_x.size):
        flat_o[i] = mp.mpf(float(flat_x[i]))
        if flat_v[i]:
            flat_o[i] += h * mp.mpf(float(flat_v[i]))
    return out


def _dot(gu, gW, du, dW):
    return mp.fsum(gu[i] * float(du[i]) for i in range(len(du)) if du[i]) + mp.fsum(
        gW[i, j] * float(dW[i, j]) for i in range(dW.shape[0]) for j in range(dW.shape[1]) if dW[i, j])


def gradient(ctx: Context, item: Item) -> dict[str, Any]:
    """The numba gradient and the 60-digit gradient vs central differences of the 60-digit loss.

    Quick: 3 random points cycling EP L_max = 6 and CoT L0 = 4 (numba vs mpmath on all d + d²
    coordinates; central differences along 3 random directions of all coordinates), and every
    coordinate (live and dead) of EP L_max = 4 at one point; the derivation's ``diff`` gradient at its
    own size. Full: 50 points over EP L_max 3..8 and CoT L0 3..5: every live coordinate on the sets
    of at most 126 strings, 8 random directions on the larger ones.
    """
    lam = _pin(ctx, "lam")
    quick = ctx.quick
    sets = [ep_data(6), cot_data(4)]
    if not quick:
        sets = [ep_data(n) for n in range(3, 9)] + [cot_data(L0) for L0 in (3, 4, 5)]
    n_points = 3 if quick else 50
    points, disagrees = [], []
    worst64 = worst_fd = worst_step = 0.0
    for k in range(n_points):
        data = sets[k % len(sets)]
        rng = _rng(ctx, item.id, k)
        u, W, lam_k = _random_point(rng, data.dim, lam)
        model = RLModel(data, lam_k)
        _, g64 = model.gradient(model.join(u, W))
        _, gu, gW = gradient_mp(data, u, W, lam_k)
        ref = np.concatenate([_mp_array(gu), _mp_array(gW).reshape(-1)])
        err64 = _block_error(g64, ref)
        # a third implementation: complex-step derivatives of the NumPy complex-dtype loss, every coordinate
        step = complex_step_gradient(lambda z, data=data, lam_k=lam_k: loss_analytic(data, z, lam_k),
                                     model.join(u, W))
        err_step = _block_error(g64, step)
        worst_step = max(worst_step, err_step)
        live = model.live_mask
        dead_exact = bool(np.all(g64[~live] == 0) and np.all(ref[~live] == 0))
        fd_gaps = []
        # every live coordinate costs two 60-digit losses: done where the loss is cheap (<= 126 strings),
        # along random directions of all coordinates elsewhere
        if quick or data.n > 126:
            for _ in range(3 if quick else 8):
                du, dW = rng.standard_normal(data.dim), rng.standard_normal((data.dim, data.dim))
                fd = _central_difference(data, u, W, lam_k, du, dW)
                with mp.workdps(DPS):
                    exact = _dot(gu, gW, du, dW)
                    fd_gaps.append(float(abs(fd - exact) / max(1, abs(exact))))
        else:
            for c in map(int, np.flatnonzero(live)):
                du, dW = np.zeros(data.dim), np.zeros((data.dim, data.dim))
                if c < data.dim:
                    du[c] = 1.0
                else:
                    dW.reshape(-1)[c - data.dim] = 1.0
                fd = _central_difference(data, u, W, lam_k, du, dW)
                exact = gu[c] if c < data.dim else gW[(c - data.dim) // data.dim, (c - data.dim) % data.dim]
                with mp.workdps(DPS):
                    fd_gaps.append(float(abs(fd - exact) / max(1, abs(exact))))
        worst64, worst_fd = max(worst64, err64), max(worst_fd, max(fd_gaps))
        points.append({"point": k, "data": f"{data.task} L_max={data.L_max}", "lam": lam_k,
                       "numba_vs_mp60": err64, "numba_vs_complex_step": err_step,
                       "dead_entries_exactly_zero": dead_exact,
                       "central_difference_vs_mp60": max(fd_gaps), "central_differences": len(fd_gaps)})
        if err64 > FLOAT_RTOL or err_step > FLOAT_RTOL or not dead_exact:
            disagrees.append("numba_gradient")
        if max(fd_gaps) > 1e-25:
            disagrees.append("mp_gradient")
    # every coordinate of a small model, dead ones included (their differences vanish exactly)
    small = ep_data(4)
    u, W, lam_small = _random_point(_rng(ctx, item.id, 500), small.dim, lam)
    _, gu, gW = gradient_mp(small, u, W, lam_small, dps=40)
    all_gap = 0.0
    for c in range(small.dim + small.dim**2):
        du, dW = np.zeros(small.dim), np.zeros((small.dim, small.dim))
        (du if c < small.dim else dW.reshape(-1))[c if c < small.dim else c - small.dim] = 1.0
        fd = _central_difference(small, u, W, lam_small, du, dW, dps=40)
        exact = gu[c] if c < small.dim else gW[(c - small.dim) // small.dim, (c - small.dim) % small.dim]
        with mp.workdps(40):
            all_gap = max(all_gap, float(abs(fd - exact) / max(1, abs(exact))))
    if all_gap > 1e-18:
        disagrees.append("mp_gradient")
    # the derivation's gradient (diff of its enumerated loss) at its own size
    tally = _Tally()
    coordinate_formulas = _formulas(item, r"[uW]\..*")
    if coordinate_formulas:
        L_max = max(int(re.search(r"Lmax(\d+)", s).group(1)) for s in coordinate_formulas)
        data = ep_data(L_max)
        u, W, lam_k = _random_point(_rng(ctx, item.id, 1000), data.dim, lam)
        _, gu, gW = gradient_mp(data, u, W, lam_k)
        value = _point_values(u, W, lam_k)
        for short, formula in coordinate_formulas.items():
            where = _coordinate(short.split(".")[1])
            numeric = gu[where[1]] if where[0] == "u" else gW[where[1], where[2]]
            stated, derived = _symbolic([formula.stated, formula.derived], value)
            tally.add(short + ".derived", numeric, derived, rtol=1e-25, atol=1e-45)
            tally.add(short + ".printed", numeric, stated, rtol=1e-25, atol=1e-45)
        disagrees += [_family(n) for n in tally.failed]
    evidence = {
        "method": "numba tabled-kernel gradient and 60-digit mpmath gradient vs central differences of the "
                  "60-digit loss (h = 1e-20; 40 digits and h = 1e-13 for the all-coordinates check); the numba "
                  "gradient vs complex-step derivatives (h = 1e-30) of the NumPy complex-dtype loss in every "
                  "coordinate",
        "points": points, "max_numba_vs_mp60": worst64, "max_numba_vs_complex_step": worst_step,
        "max_central_difference_gap": worst_fd,
        "all_coordinates_EP_Lmax4": {"coordinates": small.dim + small.dim**2, "lam": lam_small,
                                     "max_gap": all_gap},
        "derivation_gradient": tally.record(),
        "tolerances": {"numba": FLOAT_RTOL, "central_difference": 1e-25, "derivation": 1e-25},
    }
    summary = (f"second method: numba gradient within {worst64:.1e} of the 60-digit one, which central "
               f"differences confirm to {max(worst_fd, all_gap):.1e} at {len(points) + 1} points, and within "
               f"{worst_step:.1e} of complex-step derivatives of a separate NumPy loss; the "
               f"derivation's diff gradient "
               f"agrees at {tally.compared - len(tally.failed)}/{tally.compared} values")
    return _result(evidence, summary, disagrees)


# ----------------------------------------------------------------------------------------------
# rl.cf.effective_rate


def effective_rate(ctx: Context, item: Item) -> dict[str, Any]:
    """The logits K = W/λ of actual GD runs move at the derived rate (η/λ or η/λ² times ∇_K L̃).

    EP L_max = 6, λ ∈ {2, 360} (or pinned), η = 0.1 (or pinned), t0 = 2, 5 updates, under
    ``two_phase`` (both ``boost_steps``), ``vanilla_eta`` and ``vanilla_etalambda``, run by
    ``run_gd`` through the training driver. At each update t >= 1 (∇_W L_0 = 0 since u_0 = 0) the
    measured rate r_t = −⟨ΔK_t, ∇_K L̃_t⟩/‖∇_K L̃_t‖², ∇_K L̃ = λ∇_W L of the numba model, is compared
    with the derivation's rate of that update (``K_RATE`` of the phase the schedule puts it in);
    the residual ‖ΔK_t + r_t ∇_K L̃_t‖/‖ΔK_t‖ says the step is along the gradient. The item's
    displays (K-step vs W-step/λ) are also evaluated at a random point with the 60-digit gradient.
    """
    from derivations.regular_language.early_steps import w_step
    from derivations.regular_language.loss_gradient import K_RATE
    from derivations.regular_language.symbols import eta as ETA
    from derivations.regular_language.symbols import lam as LAM

    eta = float(_pin(ctx, "eta") or 0.1)
    lams = [float(_pin(ctx, "lam"))] if _pin(ctx, "lam") is not None else [2.0, 360.0]
    data = ep_data(6)
    t0, steps = 2, 5
    runs, disagrees, worst = [], [], 0.0
    configurations = [("two_phase", "t_lt_t0"), ("two_phase", "t_le_t0"), ("vanilla_eta", "t_lt_t0"),
                      ("vanilla_etalambda", "t_lt_t0")]
    for lam in lams:
        model = RLModel(data, lam)
        for schedule, boost in configurations:
            traj = run_gd(data, lam, eta, t0, steps, schedule=schedule, boost_steps=boost, log=1)
            us, Ws = traj.states["u"], traj.states["W"]
            rates = []
            for t in range(1, steps):
                _, grad = model.gradient(model.join(us[t], Ws[t]))
                gK = lam * grad[data.dim:].reshape(data.dim, data.dim)
                dK = (Ws[t + 1] - Ws[t]) / lam
                r = -float(np.sum(dK * gK)) / float(np.sum(gK * gK))
                residual = float(np.linalg.norm(dK + r * gK) / np.linalg.norm(dK))
                factor = w_step(t, t0, schedule, boost)
                mode = schedule
                if schedule == "two_phase":
                    mode = "phase1" if factor == ETA * LAM else "phase2"
                derived = float(K_RATE[mode].subs({ETA: eta, LAM: lam}))
                gap = abs(r / derived - 1)
                worst = max(worst, gap, residual)
                rates.append({"t": t, "phase": mode, "measured": r, "derived": derived, "relative_gap": gap,
                              "residual": residual})
                if gap > FLOAT_RTOL or residual > FLOAT_RTOL:
                    disagrees.append(f"rate.{mode}")
            runs.append({"lam": lam, "schedule": schedule, "boost_steps": boost, "updates": rates})
    # the item's displays with the 60-digit gradient at a random point
    tally = _Tally()
    displays = _formulas(item, r"(phase1|phase2|vanilla_eta|vanilla_etalambda)\.W_.*")
    if displays:
        small = ep_data(max(int(m) for short in displays for m in re.findall(r"_(\d+)[ab]", short)))
        rng = _rng(ctx, item.id, 1000)
        u, K, lam_k = _random_point(rng, small.dim, _pin(ctx, "lam"))
        eta_k = eta if _pin(ctx, "eta") is not None else float(rng.uniform(0.01, 1))
        # the point is drawn in K (floats, exact inputs of the derivation's evaluators); W = λK is
        # formed exactly at 60 digits (a product of two doubles has at most 106 bits)
        with mp.workdps(DPS):
            W_exact = np.array([[mp.mpf(float(k)) * mp.mpf(lam_k) for k in row] for row in K], dtype=object)
        _, _, gW = gradient_mp(small, u, W_exact, lam_k)
        base = _point_values(u, K, lam_k)

        def value(name: str):
            if name == "eta":
                return eta_k
            if name.startswith("K_"):
                return base("W" + name[1:])
            return base(name)

        for short, formula in displays.items():
            mode, entry = short.split(".")
            where = _coordinate(entry)
            with mp.workdps(DPS):
                factor = mp.mpf(eta_k) * (mp.mpf(lam_k) if mode in ("phase1", "vanilla_etalambda") else 1)
                numeric = -factor * gW[where[1], where[2]] / mp.mpf(lam_k)
            stated, derived = _symbolic([formula.stated, formula.derived], value)
            tally.add(short + ".derived", numeric, derived, rtol=1e-25, atol=1e-50)
            tally.add(short + ".stated", numeric, stated, rtol=1e-25, atol=1e-50)
        disagrees += [f"display.{_family(n)}" for n in tally.failed]
    evidence = {"method": "run_gd (training driver, compiled loop) and the numba gradient; the 60-digit "
                          "gradient for the displays", "eta": eta, "t0": t0, "runs": runs, "max_gap": worst,
                "displays": tally.record()}
    summary = (f"second method: GD runs move K = W/λ at the derived rate (η/λ in phase 1 and "
               f"vanilla_etalambda, η/λ² in phase 2 and vanilla_eta) to {worst:.1e} at λ = "
               + ", ".join(f"{v:g}" for v in lams))
    return _result(evidence, summary, disagrees)
