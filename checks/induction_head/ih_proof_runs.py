"""Trajectories of the IH head (h, w) for the proof-level claims of [W] App. C.3.2, and their bookkeeping.

The (h, w) block of Stage II is independent of the 4-gram block (p, g) under the ideal first
layer and separate value layout (spec §2.7). The runs come from the toolkit's one (h, w) engine,
``numerics.models.induction_head.stage2.ih_flow`` integrated by ``sweeps.run_grid`` (one batch per
mode, in scaled time τ = t/S, events T_o = T_1^h, T_2h, T_w_half, T_w_001, T_h_half, T_h_below,
T_II, T_III), run to 60·S without the tail stop. The losses are the toolkit's own: the
exp-simplified L_IH2 (ih.cf.L_IH2's derivation, per head-2 range) or the large-L true-softmax loss
derived from its definition (``derive_verify.softmax_largeL_derived``; ih.dv.softmax_loss verifies it
equals the spec's stated form), under the ``paper`` or ``balanced`` flow (``derivations.flows``).
This module keeps only the claims' bookkeeping: windows, pointwise tests, verdicts.

Modes: the flow-mode shorthands of spec §2.7 (``derivations.induction_head.symbols.FLOW_MODES``:
``paper``, ``balanced``, ``softmaxLL``), seen here as :data:`MODES` = name -> (ih_loss, flow).

Verdict bookkeeping: a *part* is one printed display or statement tested on one run, with its
own status (holds / fails / outside-regime when its window is empty); a claim's status is
decided on the canonical reading (paper ODE, canonical range) over its grid of configurations.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import sympy as sp

from checks import along, configurations
from checks.asymptotics import Asymptotic
from checks.claim import Context, Param
from checks.status import Status, combine, status
from derivations.errors import InvalidArgument, NumericalTrouble
from derivations.induction_head.symbols import FLOW_MODES
from numerics.differences import central_jacobian
from numerics.trajectory import Trajectory

#: flow mode -> (ih_loss, flow): a view of the shorthands of spec §2.7 in the order its callers unpack
MODES = {name: (mode["ih_loss"], mode["flow"]) for name, mode in FLOW_MODES.items()}
RANGES = ("canonical", "literal")
CANONICAL = ("paper", "canonical")
#: states within this relative distance of (h*, w*) are at the solver's noise floor: signs of
#: velocities there are not resolved (spec ih.p1_1: "with the solver noise floor recorded")
EQUILIBRIUM_FLOOR = 1e-7
#: the proof's name T_1^h for the engine's T_o (Thm 4's T_o := T_1^h)
ALIASES = {"T_1h": "T_o"}
#: relative accuracy of a hitting time of these runs (rtol 1e-10, events to 1e-13): the error model of the
#: limit decisions (checks.asymptotics), which also allow for the truncation of their corrections
HITTING_TIME_REL_ERR = 1e-6
#: the asymptotic variables of the proof's rates: L → ∞, σ → 0 with algebraic corrections (a rate without σ)
#: or logarithmic ones with an O(σ) term beside them (a rate with ln(1/σ))
L_LIMIT = Asymptotic("L", "inf", "algebraic")
SIGMA_ALGEBRAIC = Asymptotic("sigma", "0", "algebraic")
SIGMA_LOG = Asymptotic("sigma", "0", "log", extra=("x",))
#: save grid in τ = t/S: evenly spaced on [0, 4] (the windows up to T_III) and log-spaced to the horizon
N_LINEAR, LINEAR_END, N_LOG = 3000, 4.0, 1000
#: runs integrated per batch
CHUNK = 256


def loss_kernel(mode: str, ih_model_range: str) -> Callable:
    """L_IH2(h, log_w, L, α*, w*) of a flow mode and head-2 range (compiled, broadcasting)."""
    from numerics.models.induction_head.stage2 import ih_loss_kernel

    return ih_loss_kernel(ih_model_range, MODES[mode][0])


def velocity_kernels(mode: str, ih_model_range: str) -> tuple[Callable, Callable]:
    """(dh/dt, dw/dt)(h, w, L, α*, w*) of a flow mode and head-2 range."""
    from numerics.models.induction_head.stage2 import ih_velocity

    loss, flow = MODES[mode]
    return ih_velocity(flow, ih_model_range, loss)


#: ∂_w(dh/dt) at T_2^h above this fraction of ∂_w of its h-free term: the crossing is noise (see t2h_noise)
NOISE_CROSSING_RATIO = 0.01


def velocity(run: Run) -> Callable[[np.ndarray], np.ndarray]:
    """(dh/dt, dw/dt) at z = (h, w) for the run's flow mode, head-2 range and parameters."""
    kernels = velocity_kernels(run.mode, run.ih_model_range)
    args = (float(run.L), run.alpha, run.wstar)
    return lambda z: np.array([float(k(z[0], z[1], *args)) for k in kernels])


def t2h_noise(run: Run) -> str:
    """Why the run's T_2^h is a noise crossing of dh/dt, or "" when it is a genuine one.

    At a downward zero of q = dh/dt = f_h(h, w), dq/dt = ∂_h f_h · q + ∂_w f_h · f_w = ∂_w f_h · f_w, so a
    genuine T_2^h needs ∂_w f_h · f_w ≤ 0: there ∂_w f_h has turned negative (w near w°, 0.58–0.66 w* on the
    grids). On a long plateau h tracks its quasi-steady value to 10⁻¹², dh/dt is 10⁻¹⁷–10⁻¹⁴ of its terms,
    below the state error at any double-precision tolerance, and its computed sign is noise: an event there
    has ∂_w f_h ≈ ∂_w of f_h's h-free term (ratio 1, against −0.007 … −0.12 at genuine crossings). Found at
    L = 40, α* = 9, w* = 0.05, σ = 10⁻⁴, where T_2^h, read off f_h(h, w), fired at w = 0.01 w* (SciPy's Radau
    and DOP853 at rtol 10⁻¹² place it at w = 0.577 w*). Since q is integrated as a state of its own
    (``stage2.ih_flow``) T_2^h fires there at 0.577 w*; this test stays as a second, independent look at
    every T_2^h. Central differences in w (step 10⁻³ w).
    """
    t2 = run.event("T_2h")
    state = run.state_at("T_2h")
    if not math.isfinite(t2) or not state:
        return ""
    field = velocity(run)
    h, w = state["h"], state["w"]
    # dh/dt and its h-free term as functions of (h, w); their w-slopes by central differences (step 1e-3 w)
    jac = central_jacobian(lambda z: np.array([field(z)[0], field(np.array([0.0, z[1]]))[0]]), np.array([h, w]),
                           rel_step=1e-3 * w)
    slope, drive_slope = jac[0, 1], jac[1, 1]
    if not (slope * field(np.array([h, w]))[1] > 0 and drive_slope and slope / drive_slope > NOISE_CROSSING_RATIO):
        return ""
    return (f"T_2^h = {t2:.6g} (w = {w / run.wstar:.3g} w*) is a noise crossing of dh/dt: there d²h/dt² = "
            f"∂_w(dh/dt)·dw/dt > 0 ({slope / drive_slope:.3g} of the h-free term's slope), so dh/dt cannot turn "
            "negative; its sign is below the integrator's resolution on the plateau, and the true T_2^h is later")


class Run(Trajectory):
    """One (h, w) trajectory: states h, w; observables dh (integrated as a state), dw (the flow's) and the loss;
    hitting times (NaN: not reached); ``meta`` holds L, alpha, wstar, sigma, mode, ih_model_range, horizon and
    rate_floor (the |dh/dt| below which its sign is not resolved)."""

    h = property(lambda self: self.states["h"], doc="h at the saved times")
    w = property(lambda self: self.states["w"], doc="w at the saved times")
    dh = property(lambda self: self.observables["dh"], doc="dh/dt at the saved times")
    dw = property(lambda self: self.observables["dw"], doc="dw/dt at the saved times")
    loss = property(lambda self: self.observables["loss"], doc="L_IH2 at the saved times")
    L = property(lambda self: self.meta["L"])
    alpha = property(lambda self: self.meta["alpha"])
    wstar = property(lambda self: self.meta["wstar"])
    sigma = property(lambda self: self.meta["sigma"])
    mode = property(lambda self: self.meta["mode"])
    ih_model_range = property(lambda self: self.meta["ih_model_range"])
    horizon = property(lambda self: self.meta["horizon"])

    @property
    def hstar(self) -> float:
        """h* = 1/(1+α*)."""
        return 1.0 / (1.0 + self.alpha)

    @property
    def scale(self) -> float:
        """S = (1+α*)² L ln(1/σ)/w*² (spec §2.11)."""
        from numerics.models.induction_head.stage2 import time_scale

        return time_scale(self.L, self.alpha, self.wstar, self.sigma)

    @property
    def reading(self) -> dict[str, str]:
        """The mode flags of this run."""
        loss, flow = MODES[self.mode]
        return {"flow": flow, "ih_loss": loss, "ih_model_range": self.ih_model_range}

    @property
    def label(self) -> str:
        """Short name of the reading."""
        return f"{self.mode}/{self.ih_model_range}"

    @property
    def config(self) -> dict[str, Any]:
        """The parameters of this run."""
        return {"L": self.L, "alpha": self.alpha, "wstar": self.wstar, "sigma": self.sigma}

    @property
    def rate_resolved(self) -> np.ndarray:
        """Mask of the saved times where |dh/dt| exceeds ``stage2.RATE_RESOLUTION``/S: below it the sign of a saved
        dh/dt is not resolved (a plateau at L = 4000, w* = 0.7, σ = 10⁻⁸ has dh/dτ ~ 10⁻¹⁴)."""
        return np.abs(self.dh) > self.meta["rate_floor"]

    @property
    def resolved(self) -> np.ndarray:
        """Mask of the saved times whose state is farther than EQUILIBRIUM_FLOOR from (h*, w*)."""
        dist = np.maximum(np.abs(self.h / self.hstar - 1), np.abs(self.w / self.wstar - 1))
        return dist > EQUILIBRIUM_FLOOR

    def window(self, start: float = -math.inf, end: float = math.inf, *, closed: bool = True,
               resolved: bool = False) -> np.ndarray:
        """Saved times in [start, end] (``Trajectory.window``), optionally only the resolved ones."""
        mask = super().window(start, end, closed=closed)
        return mask & self.resolved if resolved else mask

    def state_at(self, name: str) -> dict[str, float]:
        """(t, h, w) where a hitting time fired (empty when it did not)."""
        return self.event_state(name)


def _check(mode: str, ih_model_range: str) -> None:
    if mode not in MODES:
        raise InvalidArgument(f"flow={mode!r} is not one of {', '.join(MODES)}")
    if ih_model_range not in RANGES:
        raise InvalidArgument(f"ih_model_range={ih_model_range!r} is not one of {', '.join(RANGES)}")


#: the integrator's tolerances, and the tighter ones a failing run is repeated at (``run_claim``)
TOLERANCE, REFINED_TOLERANCE = (1e-10, 1e-13), (1e-12, 1e-16)
#: the end of every run in units of S (spec: 60)
HORIZON = 60.0


def ih_runs(specs: Iterable[tuple], horizon_factor: float = HORIZON,
            tolerance: tuple[float, float] = TOLERANCE) -> list[Run]:
    """Runs of (L, α*, w*, σ, mode, range) from h(0) = w(0) = σ (init eq4) to horizon_factor·S at
    ``tolerance`` = (rtol, atol), (1e-10, 1e-13) by default.

    One ``run_grid`` call (a batch per mode; runs already made in this process are recalled).
    Saved times: 3000 evenly spaced on [0, 4S] and 1000 log-spaced on [1e-8 S, horizon].
    Velocities: dh/dt integrated as a state (``stage2.ih_flow``), dw/dt the flow's at the saved states.
    """
    from numerics.models.induction_head.sweeps import run_grid

    specs = [(int(L), float(a), float(ws), float(sg), mode, rng) for L, a, ws, sg, mode, rng in specs]
    for spec in specs:
        _check(*spec[4:])
    points = [{"L": L, "alpha": a, "wstar": ws, "sigma": sg, "mode": mode, "ih_model_range": rng}
              for L, a, ws, sg, mode, rng in specs]
    out = []
    for start in range(0, len(specs), CHUNK):  # bounded memory at the full budget (thousands of runs)
        res = run_grid(points[start:start + CHUNK], horizon=horizon_factor, n_log=N_LOG, n_linear=N_LINEAR,
                       linear_end=LINEAR_END, tail=False, rtol=tolerance[0], atol=tolerance[1])
        out += [_run_from(res, i, spec, horizon_factor) for i, spec in enumerate(specs[start:start + CHUNK])]
    return out


def _run_from(res, i: int, spec: tuple, horizon_factor: float) -> Run:
    from numerics.models.induction_head.stage2 import RATE_RESOLUTION
    from numerics.ode import STATUS

    L, alpha, wstar, sigma, mode, rng = spec
    if res.status[i] >= 2:
        raise NumericalTrouble(f"(h, w) run at L={L}, alpha={alpha}, wstar={wstar}, sigma={sigma}, {mode}/{rng} "
                               f"stopped at t={res.end_t[i]:.6g}: {STATUS[int(res.status[i])]}")
    base = res.trajectory(i)
    h, w = base["h"], base["w"]
    dw_k = velocity_kernels(mode, rng)[1]
    events, states = dict(base.events), dict(base.event_states)
    for alias, name in ALIASES.items():
        events[alias], states[alias] = events[name], states[name]
    observables = {"dh": base["dh"], "dw": dw_k(h, w, float(L), alpha, wstar),
                   "loss": base["loss"]}
    meta = {"L": L, "alpha": alpha, "wstar": wstar, "sigma": sigma, "mode": mode, "ih_model_range": rng,
            "horizon": horizon_factor * res.S[i], "rate_floor": RATE_RESOLUTION / res.S[i]}
    return Run(base.t, base.states, observables, events, states, meta)


def ih_run(L: int, alpha: float, wstar: float, sigma: float, mode: str = "paper",
           ih_model_range: str = "canonical", horizon_factor: float = HORIZON) -> Run:
    """One run of :func:`ih_runs`."""
    return ih_runs([(L, alpha, wstar, sigma, mode, ih_model_range)], horizon_factor)[0]


# ----------------------------------------------------------------------------- parameters, grids and readings


#: the canonical configuration D0 (spec §2.11) and the quick grid: D0 and a smaller w*, σ (four configurations)
QUICK = {"L": (40,), "alpha": (1.0,), "wstar": (0.49, 0.3), "sigma": (1e-2, 1e-4)}
#: full: the spec's G_IH axes
FULL = {"L": (40, 400, 4000), "alpha": (0.5, 1.0, 4.0, 9.0),
        "wstar": (0.05, 0.1, 0.2, 0.3, 0.35, 0.4, 0.45, 0.47, 0.49, 0.55, 0.6, 0.65, 0.7),
        "sigma": (1e-2, 1e-4, 1e-6, 1e-8)}
CONFIG_NAMES = ("L", "alpha", "wstar", "sigma")


def proof_params(*, softmax: bool = True, quick: Mapping[str, tuple] | None = None) -> tuple[Param, ...]:
    """The declared parameters of a proof-level claim: the (L, α*, w*, σ) grid and the reading flags.

    ``quick`` replaces axes of the quick grid (a claim that needs a w* beyond the canonical pair).
    The defaults are D0 = (L 40, α* 1, w* 0.49, σ 0.01) and the canonical reading (paper, canonical).
    """
    quick = {**QUICK, **(quick or {})}
    doc = {"L": "sequence length", "alpha": "α*", "wstar": "w*", "sigma": "σ_init"}
    numeric = tuple(Param(name, quick[name][0], quick=quick[name], full=FULL[name], doc=doc[name])
                    for name in CONFIG_NAMES)
    modes = tuple(MODES) if softmax else ("paper", "balanced")
    return (*numeric,
            Param("flow", CANONICAL[0], quick=modes, full=modes, choices=tuple(MODES),
                  doc="flow mode (spec §2.7): paper | balanced | softmaxLL"),
            Param("ih_model_range", CANONICAL[1], quick=RANGES, full=RANGES, choices=RANGES,
                  doc="head 2's summation range"))


def readings(ctx: Context) -> list[tuple[str, str]]:
    """(mode, range) pairs: canonical first; the quick budget runs one alternative per flag."""
    return configurations.readings(ctx, ["flow", "ih_model_range"],
                                   allowed=lambda p: not (p[0] == "softmaxLL" and p[1] == "literal"))


def runs_for(ctx: Context, configs: Iterable[Mapping[str, Any]], pairs: list[tuple[str, str]],
             horizon_factor: float = HORIZON) -> list[Run]:
    """Every (configuration, reading) run, canonical reading first within each configuration."""
    specs = [(cfg["L"], cfg["alpha"], cfg["wstar"], cfg["sigma"], mode, rng)
             for cfg, (mode, rng) in itertools.product(configs, pairs)]
    ctx.report_progress(0.1, f"integrating {len(specs)} (h, w) runs")
    return ih_runs(specs, horizon_factor)


def sub_sweep(ctx: Context, quick: Mapping[str, list], full: Mapping[str, list]) -> list[dict[str, Any]]:
    """A second sweep inside a claim (its own axes per budget), a pinned parameter replacing its axis."""
    axes = quick if ctx.quick else full
    return [dict(zip(axes, combo, strict=True))
            for combo in itertools.product(*(ctx.grid(name, values) for name, values in axes.items()))]


def run_record(run: Run, parts: dict[str, dict[str, Any]], **extra) -> dict[str, Any]:
    """One outcome record per configuration and reading (spec §0.1 item 5)."""
    return along.record(parts, label=run.label, reading=run.reading,
                        canonical=(run.mode, run.ih_model_range) == CANONICAL, config=run.config,
                        events=run.events, **extra)


def array_form(expr: sp.Expr, *names: str, name: str) -> Callable:
    """A NumPy evaluator (``numerics.compile.array_function``) of ``expr``, arguments given by symbol name.

    Any symbols of the ih package; a name that ``expr`` does not use is a dummy argument. A printed
    bound may overflow to +inf (exp of a large rate·t): inf is its value, not an error.
    """
    from numerics.compile import array_function

    symbols = {s.name: s for s in expr.free_symbols}
    args = [symbols.get(n, sp.Symbol(n)) for n in names]
    return array_function(expr, args, name=name, overflow=True)


# ----------------------------------------------------------------------------- the driver


def register_proof_claim(claim_id: str, label: str, label_alt: str, check, statement: str, cost: float = 2.0,
                         params: tuple | None = None) -> None:
    """Register a proof-level claim of the IH head: the proof grid's parameters unless given, its domain."""
    from checks.claim import Claim
    from checks.registry import register

    register(Claim(claim_id, "ih", label, "claim", check, statement=statement, label_alt=label_alt,
                   params=params or proof_params(), domain=domain(), doc=check.__doc__ or "", cost=cost))


def domain():
    """Validated numeric parameters of the proof-level claims."""
    from derivations.induction_head import symbols as S

    return S.domain(S.L, S.alpha, S.wstar, S.sigma, constraints=S.EQ10_CONSTRAINTS[:1])


def run_claim(ctx: Context, evaluate: Callable[[Run], dict[str, dict[str, Any]]], *, main: list[str],
              chain: list[str], head: Callable[[str, list[dict[str, Any]]], str],
              claim_parts: Callable[[Context, list[Run]], dict[str, dict[str, Any]]] | None = None,
              flags: Mapping[str, str] | None = None):
    """Evaluate ``evaluate`` on every run of the claim's grid and decide on the canonical reading.

    The grid is the declared one (``proof_params``; pins replace axes). ``claim_parts`` adds parts
    that are not per run (inequalities between explicit functions, scaling fits); each carries
    ``role`` ``main`` or ``chain``. The claim's status combines the canonical per-run main parts
    with the main claim parts (``checks.status.combine``).
    """
    from checks.claim import Outcome

    configs = configurations.configurations(ctx, CONFIG_NAMES)
    runs = runs_for(ctx, configs, readings(ctx))
    records = [run_record(r, evaluate(r)) for r in runs]
    records, refined = _refine_failures(runs, records, evaluate, main)
    status, by_reading = along.decide(records, main)
    run_status = status
    extra = claim_parts(ctx, runs) if claim_parts else {}
    main_extra = [p["status"] for p in extra.values() if p.get("role") == "main"]
    if main_extra:
        status = combine([status, *main_extra]).value if status != Status.OUTSIDE else combine(main_extra).value
    text = along.summarise(status, head(status, records), records, main, by_reading, chain, run_status)
    if refined:
        flipped = sum(r["not_confirmed"] for r in refined)
        text += (f"; {len(refined)} failing run(s) repeated at rtol {REFINED_TOLERANCE[0]:g}: {flipped} not confirmed "
                 f"(the tighter run decides)")
    bad_extra = [n for n, p in extra.items() if p["status"] in (Status.FAILS, Status.DIFFERS)]
    if bad_extra:
        text += "; claim-level parts failing: " + ", ".join(bad_extra)
    keep = records if ctx.quick else [r for r in records if r["canonical"] or any(
        p["status"] in (Status.FAILS, Status.DIFFERS) for p in r["parts"].values())][:200]
    evidence = {
        "grid": {name: sorted({c[name] for c in configs}) for name in CONFIG_NAMES},
        "n_configurations": len(configs), "n_runs": len(runs),
        "canonical_reading": {"flow": "paper", "ih_loss": "exp_simplified", "ih_model_range": "canonical",
                              **(flags or {})},
        "main_parts": main, "chain_parts": chain,
        "readings": by_reading, "claim_parts": extra, "records": keep,
        "integrator": {"rtol": TOLERANCE[0], "atol": TOLERANCE[1], "point_tolerance": along.POINT_TOL,
                       "equilibrium_floor": EQUILIBRIUM_FLOOR,
                       "failures_repeated_at": {"rtol": REFINED_TOLERANCE[0], "atol": REFINED_TOLERANCE[1]},
                       "failures_repeated": len(refined),
                       "failures_not_confirmed": [r for r in refined if r["not_confirmed"]]},
    }
    figures = [p["figure"] for p in extra.values() if p.get("figure")]
    return Outcome(status, text, evidence, figures)


def _refine_failures(runs: list[Run], records: list[dict[str, Any]], evaluate, main: list[str]):
    """Repeat every run whose main part fails at ``REFINED_TOLERANCE`` and keep the tighter run's record: a failure
    stands only when it survives a hundredfold tighter integration (the deviations some statements bound are
    within reach of the default tolerance's accumulated error: ih.eq18 at small w*). Returns the records and,
    per repeated run, its configuration and the main parts whose status changed."""
    bad = [i for i, rec in enumerate(records)
           if any(rec["parts"].get(p, {}).get("status") in (Status.FAILS, Status.DIFFERS) for p in main)]
    if not bad:
        return records, []
    specs = [(runs[i].L, runs[i].alpha, runs[i].wstar, runs[i].sigma, runs[i].mode, runs[i].ih_model_range)
             for i in bad]
    tight = ih_runs(specs, HORIZON, tolerance=REFINED_TOLERANCE)
    records = list(records)
    report = []
    for i, run in zip(bad, tight, strict=True):
        loose = {p: records[i]["parts"][p]["status"] for p in main if p in records[i]["parts"]}
        records[i] = run_record(run, evaluate(run), refined_from=loose)
        now = {p: records[i]["parts"][p]["status"] for p in main if p in records[i]["parts"]}
        changed = {p: [status(loose[p]).value, status(now[p]).value]
                   for p in loose if loose[p] != now.get(p)}
        report.append({"config": run.config, "reading": run.reading, "changed": changed,
                       "not_confirmed": bool(changed)})
    return records, report


def canonical_runs(runs: list[Run]) -> list[Run]:
    """The runs of the canonical reading."""
    return [r for r in runs if (r.mode, r.ih_model_range) == CANONICAL]


def scaling_part(runs: list[Run], observe: Callable[[Run], float], rate: Callable[[Run], float], *,
                 form: str, rate_name: str, variables: tuple, role: str = "main", figure_path=None) -> dict[str, Any]:
    """A Θ/O/Ω statement over the canonical runs of a sweep, decided in the limit along ``variables``
    (``checks.asymptotics``); the log-log drift of the ratio (``checks.scaling``) is kept as evidence, and
    the figure of the ratio against each variable is drawn at ``figure_path`` (``ctx.figure_path(...)``)."""
    from checks.asymptotics import decide, figure
    from checks.scaling import scaling_fit

    runs = canonical_runs(runs)
    obs = np.array([observe(r) for r in runs], dtype=float)
    den = np.array([rate(r) for r in runs], dtype=float)
    decision = decide(form, obs, den, [r.config for r in runs], variables=variables, rel_err=HITTING_TIME_REL_ERR)
    regs = {"L": [r.L for r in runs], "1+alpha": [1 + r.alpha for r in runs],
            "log(1/sigma)": [math.log(1 / r.sigma) for r in runs], "wstar": [r.wstar for r in runs]}
    drift = scaling_fit(obs, den, regs, form=form.rstrip("~"), rate_name=rate_name, labels=[r.config for r in runs])
    lo, hi = decision.constant_band()
    drawn = figure(decision, figure_path, title=f"{form}({rate_name}): {decision.status.value}") if figure_path else None
    return {"status": decision.status.value, "role": role, "statement": f"{form}({rate_name})",
            "summary": decision.summary, "theta_constant": [lo, hi], "limit": decision.to_dict(),
            "loglog_drift": drift.evidence(), "figure": str(drawn) if drawn else None}
