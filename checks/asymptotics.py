r"""Θ, O and Ω decided in the limit: the ratio's limit along each asymptotic variable, with its error.

A statement "T = Θ(g) as x → x₀" hides its constants, so it is tested on a sweep along the
*asymptotic variable* x (σ → 0, L → ∞, t → ∞, …) with the other parameters fixed (one *slice* per
combination of them). On each slice the ratio r = T/g is fitted with its leading correction and
extrapolated to the limit; a drift of log r along the sweep says nothing by itself, because a true
statement with a lower-order term (T = a·g + b, ln(c/σ) for ln(1/σ)) drifts along every finite grid.

Depth. Each variable has a depth ℓ(x) that grows toward the limit and a correction u(ℓ) that
vanishes there:

==================  ==============  ==============
variable            ℓ(x)            u
==================  ==============  ==============
x → ∞, algebraic    x               1/x
x → ∞, logarithmic  ln x            1/ln x
x → 0, algebraic    1/x             x
x → 0, logarithmic  ln(1/x)         1/ln(1/x)
==================  ==============  ==============

Models, fitted by weighted least squares with the error model
s_i² = se_i² + (rel_err·r_i)² (Monte-Carlo standard errors; the integrator's relative accuracy):

* limit:  r = r∞ + c₁u (and r∞ + c₁u + c₂u², whose r∞ differs from the first by the truncation
  error, added to the interval, and so is the move of r∞ when the deeper half of a sweep of at least
  2·``MIN_POINTS`` points is fitted alone), with an algebraic term d·x beside them where the variable
  declares it (``Asymptotic.extra``): the ratio settles;
* drift:  r = A·ℓ^β and r = A·(ln ℓ)^β: the ratio keeps moving, toward 0 (β < 0) or ∞ (β > 0) — a
  power of the depth or of its logarithm (ln ln(1/σ) for a logarithmic variable).

A model *fits* when its χ² is below the 99.9 % quantile of χ² with its degrees of freedom, or when
every value lies within ``TRUNCATION`` (2 %) of the model, relatively; a model that fits only by that
allowance yields to a rival (limit against drift) whose largest residual is ``COMPARE`` (3) times
smaller, since the data then prefer the rival's shape. Deterministic
ratios (ODE hitting times, error 1e-9) carry the truncation of the asymptotic model, which χ² at the
integrator's accuracy would count as misfit. Parameter errors are scaled by the Birge ratio
√(χ²/dof) when it exceeds 1, so a model fitted through its truncation has honest intervals. The
limit r∞ has the interval r∞ ± (t·SE + truncation). On a slice the ratio

* has a **positive limit** when the limit model fits, r∞'s interval lies in (0, ∞), the deepest ratio
  is within half of r∞ from it (the sweep has reached the limit, not only extrapolated to it), and every drift
  model that fits has β's interval inside ±``BETA_RESOLUTION`` (0.05): the sweep resolves drifts
  that small and sees none (a drift interval away from 0 means the grid cannot tell; a wide one
  means the noise cannot: both ``inconclusive``);
* **tends to 0** when the limit model fits with r∞ = 0 inside an interval below a tenth of every
  observed ratio, or a drift model fits with β < 0 (interval) and the limit model does not fit, its
  r∞ interval reaches 0, or the data never come near r∞; **tends to ∞** likewise with β > 0;
* is ``inconclusive`` otherwise (too few points, no model fits, both fit), with the reason.

Every definite answer needs a sweep that reaches toward the limit: ℓ_max/ℓ_min ≥ ``DEPTH_SPAN`` (a
decade of x for algebraic variables, a factor 4 in ln(1/σ) for logarithmic ones); a shallower sweep
is ``inconclusive``, whatever its noise.

Forms: Θ holds with a positive limit and fails when r → 0 or ∞; O holds when r has a finite limit
(positive, or 0) and fails when r → ∞; Ω holds with a positive limit or r → ∞ and fails when
r → 0. Signed statements (T = −Θ(g)) are tested on −T. Θ̃/Õ/Ω̃ (polylogarithmic factors allowed)
treat a polylogarithmic drift (ln ℓ)^β with |β| <= ``POLYLOG_MAX`` (2) as a limit. A statement with several
asymptotic variables holds when every slice along every variable holds, fails when one fails, and is
``inconclusive`` otherwise; a slice where the quantity was not reached at enough points (NaN) is reported
as unmeasured and left out, and so is a slice that leaves the statement's regime (``decide(regime=...)``:
σ → 0 at a fixed L leaves L = Ω(1/σ)); all slices left out: ``inconclusive``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from checks.status import Status, combine
from derivations.errors import InvalidArgument
from numerics.montecarlo import control_variate_mean

FORMS = ("Theta", "O", "Omega", "Theta~", "O~", "Omega~")
#: χ² quantile below which a model fits its residuals
FIT_LEVEL = 0.999
#: a model that every value lies within this relative distance of fits them:
#: deterministic ratios (ODE hitting times) carry the truncation of the asymptotic model, far above the
#: integrator's error, and the χ² test alone would reject every model
TRUNCATION = 0.02
#: a model that fits only within the truncation allowance yields to a rival whose residuals are this many
#: times smaller (an exact 9.86 − 19.7/L is not a drift because a power law also passes within 2 %)
COMPARE = 3.0
#: a limit model whose r∞ interval holds 0 and lies below this fraction of every observed ratio says r → 0
ZERO_FRACTION = 0.1
#: confidence level of r∞'s and β's intervals
LEVEL = 0.95
#: the largest power of a logarithm a Θ̃/Õ/Ω̃ statement absorbs (the candidate factors ln^k, k = 1, 2): a fitted
#: (ln ℓ)^10 over a short sweep is a power law in disguise, not a polylogarithmic factor
POLYLOG_MAX = 2.0
#: fewest points a slice needs (the two-correction limit model has three parameters)
MIN_POINTS = 4
#: how far a sweep must reach toward the limit, as the ratio of its deepest to its shallowest depth ℓ
#: (algebraic: a decade of x; logarithmic: e.g. σ from 1e-2 to 1e-8): a shorter sweep cannot tell a limit
#: from a slow drift, whatever the noise, so it is never read as a limit
DEPTH_SPAN = {"algebraic": 10.0, "log": 4.0}
#: the drift a sweep must resolve before it may call a limit: a drift model that fits must have its β
#: interval inside ±BETA_RESOLUTION (noise that leaves room for r ∝ ℓ^0.1 leaves the question open)
BETA_RESOLUTION = 0.05


@dataclass(frozen=True)
class Asymptotic:
    """An asymptotic variable: its name, where it goes (``"0"`` or ``"inf"``) and its scale.

    ``scale`` is ``"log"`` when the statement's corrections are powers of a logarithm (ln(1/σ),
    ln t) and ``"algebraic"`` when they are powers of the variable itself (1/L).
    """

    name: str
    toward: str = "inf"
    scale: str = "algebraic"
    #: corrections beside the powers of u: ``"x"`` adds a term linear in the variable's own algebraic
    #: correction (x itself as x → 0, 1/x as x → ∞), for a logarithmic statement whose quantity also
    #: carries an algebraic correction (a hitting time that is a·ln(1/σ) + b + O(σ))
    extra: tuple[str, ...] = ()

    def __post_init__(self):
        if self.toward not in ("0", "inf"):
            raise InvalidArgument(f"toward={self.toward!r} for {self.name} must be '0' or 'inf'")
        if self.scale not in ("log", "algebraic"):
            raise InvalidArgument(f"scale={self.scale!r} for {self.name} must be 'log' or 'algebraic'")
        object.__setattr__(self, "extra", tuple(self.extra))
        bad = [e for e in self.extra if e != "x"]
        if bad:
            raise InvalidArgument(f"extra={self.extra!r} for {self.name}: the only extra correction is 'x'")

    def extra_columns(self, x: np.ndarray) -> list[np.ndarray]:
        """The extra correction columns at ``x``."""
        x = np.asarray(x, dtype=float)
        return [x if self.toward == "0" else 1.0 / x for _ in self.extra]

    def depth(self, x: np.ndarray) -> np.ndarray:
        """ℓ(x), growing toward the limit (table in the module docstring)."""
        x = np.asarray(x, dtype=float)
        if np.any(x <= 0) or np.any(~np.isfinite(x)):
            raise InvalidArgument(f"{self.name} must be finite and > 0 along its sweep; got {x[(x <= 0) | ~np.isfinite(x)][:3]}")
        base = x if self.toward == "inf" else 1.0 / x
        if self.scale == "log":
            if np.any(base <= 1):
                raise InvalidArgument(f"{self.name}: a logarithmic depth needs {'x > 1' if self.toward == 'inf' else 'x < 1'}")
            return np.log(base)
        return base

    def correction(self) -> str:
        """The leading correction u in words: ``1/ln(1/sigma)``, ``sigma``, ``1/L``, ``1/ln L``."""
        base = self.name if self.toward == "0" else f"1/{self.name}"
        if self.scale == "log":
            return f"1/ln(1/{self.name})" if self.toward == "0" else f"1/ln {self.name}"
        return base

    def describe(self) -> str:
        """E.g. ``sigma → 0 (logarithmic)``."""
        return f"{self.name} → {'0' if self.toward == '0' else '∞'} ({'logarithmic' if self.scale == 'log' else 'algebraic'})"


@dataclass
class Fit:
    """A weighted least-squares fit: parameters, their standard errors, χ², dof and whether it fits."""

    name: str
    params: np.ndarray
    se: np.ndarray
    chi2: float
    dof: int
    #: the largest residual relative to its value (a ratio), or absolute in log r (a drift: also relative)
    residual_fraction: float = 0.0

    @property
    def fits_noise(self) -> bool:
        """χ² below the FIT_LEVEL quantile (an exact fit with no dof fits trivially)."""
        return self.dof <= 0 or self.chi2 <= stats.chi2.ppf(FIT_LEVEL, self.dof)

    @property
    def fits(self) -> bool:
        """Within the noise (χ²), or every value within TRUNCATION of the model, relatively
        (deterministic values: the model's own truncation, not the integrator, sets the residuals)."""
        return self.fits_noise or self.residual_fraction <= TRUNCATION

    def competes(self, rivals: Sequence[Fit]) -> bool:
        """Fits, and — where only the truncation allowance lets it fit — no rival fits far better: its
        largest residual within COMPARE of the best rival's (else the data prefer the rival's shape)."""
        if self.fits_noise:
            return True
        if not self.fits:
            return False
        best = min((r.residual_fraction for r in rivals if r.fits), default=math.inf)
        return self.residual_fraction <= COMPARE * best

    def interval(self, k: int) -> tuple[float, float]:
        """The LEVEL interval of parameter ``k`` (Student t with the fit's dof, normal without)."""
        q = stats.t.ppf(0.5 + LEVEL / 2, self.dof) if self.dof > 0 else math.inf
        return float(self.params[k] - q * self.se[k]), float(self.params[k] + q * self.se[k])

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"model": self.name, "params": self.params.tolist(), "se": self.se.tolist(),
                "chi2": self.chi2, "dof": self.dof, "fits": self.fits,
                "largest_relative_residual": self.residual_fraction}


def _wls(design: np.ndarray, y: np.ndarray, s: np.ndarray, name: str, scale_of=np.abs) -> Fit:
    w = 1.0 / s
    a, b = design * w[:, None], y * w
    params, *_ = np.linalg.lstsq(a, b, rcond=None)
    resid = b - a @ params
    chi2 = float(resid @ resid)
    dof = y.size - design.shape[1]
    cov = np.linalg.pinv(a.T @ a)
    # a fit that does not fit its residuals gets its parameter errors scaled up (Birge ratio)
    scale = max(1.0, chi2 / dof) if dof > 0 else 1.0
    fraction = float(np.max(np.abs(y - design @ params) / scale_of(y)))
    return Fit(name, params, np.sqrt(np.clip(np.diag(cov) * scale, 0, None)), chi2, dof, fraction)


@dataclass
class SliceDecision:
    """The limit analysis of r along one asymptotic variable on one slice."""

    variable: Asymptotic
    fixed: dict[str, Any]
    x: np.ndarray
    r: np.ndarray
    s: np.ndarray
    #: "limit", "to_zero", "to_infinity", "bounded" (a positive limit or a decay to 0, the grid cannot tell
    #: which: enough for O), "undecided", "unmeasured", "outside"
    behaviour: str
    reason: str
    r_inf: float = math.nan
    r_inf_interval: tuple[float, float] = (math.nan, math.nan)
    correction: float = math.nan
    drift: dict[str, Any] = field(default_factory=dict)
    fits: list[Fit] = field(default_factory=list)
    #: the ratios' own standard errors (``s`` adds the relative accuracy)
    se: np.ndarray | None = None
    #: shallowest points left out because no model fitted them (``limit_of_ratio``)
    dropped: int = 0

    def status(self, form: str) -> Status:
        """The status of ``form`` on this slice (module docstring)."""
        base = form.rstrip("~")
        table = {
            "Theta": {"limit": Status.HOLDS, "to_zero": Status.FAILS, "to_infinity": Status.FAILS},
            "O": {"limit": Status.HOLDS, "to_zero": Status.HOLDS, "to_infinity": Status.FAILS, "bounded": Status.HOLDS},
            "Omega": {"limit": Status.HOLDS, "to_zero": Status.FAILS, "to_infinity": Status.HOLDS},
        }[base]
        if self.behaviour in ("unmeasured", "outside"):
            return Status.OUTSIDE  # nothing measured on this slice: it neither supports nor weakens
        return table.get(self.behaviour, Status.INCONCLUSIVE)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the slice, the grid, the limit with its interval, the drift, every fit."""
        return {"variable": self.variable.describe(), "fixed": self.fixed, "x": self.x.tolist(),
                "ratio": self.r.tolist(), "error": self.s.tolist(), "behaviour": self.behaviour,
                "reason": self.reason, "r_inf": self.r_inf, "r_inf_interval": list(self.r_inf_interval),
                "correction_coefficient": self.correction, "drift": self.drift, "shallowest_dropped": self.dropped,
                "fits": [f.to_dict() for f in self.fits]}


def limit_of_ratio(x: Sequence[float], r: Sequence[float], se: Sequence[float] | None = None, *,
                   variable: Asymptotic, rel_err: float = 1e-6, polylog_is_limit: bool = False,
                   fixed: Mapping[str, Any] | None = None) -> SliceDecision:
    """Decide how the ratio ``r`` behaves as ``variable`` goes to its limit (module docstring).

    ``se`` are absolute standard errors of ``r`` (0 for deterministic values), ``rel_err`` the
    relative accuracy of every value (integration tolerance, event location); ``polylog_is_limit``
    treats a polylogarithmic drift as a limit (Θ̃ statements). When no model fits the whole sweep,
    its shallowest points are dropped one at a time (they may precede the asymptotic regime) while
    ``MIN_POINTS`` remain and the sweep keeps its ``DEPTH_SPAN``; the decision says how many.
    """
    first = _limit_of_ratio(x, r, se, variable=variable, rel_err=rel_err, polylog_is_limit=polylog_is_limit,
                            fixed=fixed)
    out, dropped = first, 0
    while out.behaviour == "undecided" and out.reason.startswith(NO_MODEL_FITS) and out.x.size > MIN_POINTS:
        depth = variable.depth(out.x[1:])
        if depth[-1] / depth[0] < DEPTH_SPAN[variable.scale]:
            break
        dropped += 1
        out = _limit_of_ratio(out.x[1:], out.r[1:], out.se[1:], variable=variable, rel_err=rel_err,
                              polylog_is_limit=polylog_is_limit, fixed=fixed)
    if out.behaviour == "undecided":
        return first
    if dropped:
        out.reason += f" (on the deepest {out.x.size} points: the shallowest {dropped} fit no model)"
        out.dropped = dropped
    return out


NO_MODEL_FITS = "no model fits the residuals"


def _limit_of_ratio(x: Sequence[float], r: Sequence[float], se: Sequence[float] | None = None, *,
                    variable: Asymptotic, rel_err: float = 1e-6, polylog_is_limit: bool = False,
                    fixed: Mapping[str, Any] | None = None) -> SliceDecision:
    x, r = np.asarray(x, dtype=float), np.asarray(r, dtype=float)
    se = np.zeros_like(r) if se is None else np.asarray(se, dtype=float)
    if not (x.shape == r.shape == se.shape) or x.ndim != 1:
        raise InvalidArgument(f"x, r and se must be 1-D of one length; got {x.shape}, {r.shape}, {se.shape}")
    if not rel_err > 0:
        raise InvalidArgument(f"rel_err={rel_err} must be > 0 (the relative accuracy of every ratio)")
    keep = np.isfinite(r) & np.isfinite(se)
    fixed = dict(fixed or {})
    depth = variable.depth(x[keep])
    order = np.argsort(depth)
    xs, rs, ses, ell = x[keep][order], r[keep][order], se[keep][order], depth[order]
    s = np.sqrt(ses**2 + (rel_err * np.abs(rs)) ** 2)
    s = np.where(s > 0, s, np.finfo(float).tiny)
    out = SliceDecision(variable, fixed, xs, rs, s, "undecided", "", se=ses)
    if np.unique(ell).size < MIN_POINTS and np.unique(x).size >= MIN_POINTS:
        out.behaviour = "unmeasured"
        out.reason = (f"the quantity has no value at {int(np.sum(~keep))} of {x.size} points of the sweep "
                      f"(not reached): {np.unique(ell).size} left, too few to decide")
        return out
    if np.unique(ell).size < MIN_POINTS:
        out.reason = f"{np.unique(ell).size} distinct values of {variable.name} (need ≥ {MIN_POINTS})"
        return out
    if np.any(rs <= 0):
        out.behaviour, out.reason = "undecided", "the ratio is ≤ 0 somewhere: wrong sign for a positive rate"
        return out
    u = 1.0 / ell
    one = np.ones_like(u)
    extra = variable.extra_columns(xs)
    tag = " + d·x" * len(extra)
    first = _wls(np.column_stack([one, u, *extra]), rs, s, "r∞ + c₁u" + tag)
    second = _wls(np.column_stack([one, u, u**2, *extra]), rs, s, "r∞ + c₁u + c₂u²" + tag)
    limit_fit = first if first.fits else second
    out.fits = [first, second]
    truncation = abs(first.params[0] - second.params[0]) if first.fits else 0.0
    half = rs.size // 2
    if rs.size - half >= MIN_POINTS and limit_fit.fits:
        # the limit must not depend on where the sweep starts: refit the deeper half, count the move
        deep_cols = [one[half:], u[half:]] + ([u[half:] ** 2] if limit_fit is second else []) \
            + [c[half:] for c in extra]
        deep = _wls(np.column_stack(deep_cols), rs[half:], s[half:], limit_fit.name)
        truncation = max(truncation, abs(deep.params[0] - limit_fit.params[0]))
    lo, hi = limit_fit.interval(0)
    lo, hi = lo - truncation, hi + truncation
    out.r_inf, out.r_inf_interval, out.correction = float(limit_fit.params[0]), (lo, hi), float(limit_fit.params[1])
    # drifts: log r against log ℓ (a power of the depth), and log ln ℓ (a polylogarithm)
    log_r, log_s = np.log(rs), s / rs
    in_log = np.ones_like  # a residual of log r is already relative
    drifts = [_wls(np.column_stack([one, np.log(ell)]), log_r, log_s, "A·ℓ^β", in_log)]
    if np.all(ell > 1.0):
        drifts.append(_wls(np.column_stack([one, np.log(np.log(ell))]), log_r, log_s, "A·(ln ℓ)^β", in_log))
    out.fits += drifts
    limit_ok = limit_fit.competes(drifts)
    drift_ok = {d.name: d.competes([limit_fit]) for d in drifts}
    significant, unresolved = [], []
    for d in drifts:
        b_lo, b_hi = d.interval(1)
        if limit_ok and -BETA_RESOLUTION < b_lo and b_hi < BETA_RESOLUTION:
            continue  # resolved to below the resolution while a limit fits: the limit's own approach, not a drift
        if drift_ok[d.name] and (b_lo > 0 or b_hi < 0):
            significant.append((d, b_lo, b_hi))
        elif drift_ok[d.name] and (b_lo < -BETA_RESOLUTION or b_hi > BETA_RESOLUTION):
            unresolved.append((d, b_lo, b_hi))
    if polylog_is_limit:
        def tame(t) -> bool:  # a polylogarithmic factor of bounded degree: ln^k with |k| <= POLYLOG_MAX
            edge = POLYLOG_MAX + BETA_RESOLUTION
            return t[0].name == "A·(ln ℓ)^β" and -edge <= t[1] and t[2] <= edge
        significant = [t for t in significant if not tame(t)]
        unresolved = [t for t in unresolved if not tame(t)]
        polylog = next((d for d in drifts if d.name == "A·(ln ℓ)^β"), None)
        if not limit_ok and polylog is not None and drift_ok[polylog.name] and tame((polylog, *polylog.interval(1))):
            out.drift = {"model": polylog.name, "beta": float(polylog.params[1]), "interval": list(polylog.interval(1))}
            out.behaviour, out.reason = "limit", "a polylogarithmic drift, allowed by the Θ̃ form"
            return out
    if significant:
        d, b_lo, b_hi = significant[0]
        out.drift = {"model": d.name, "beta": float(d.params[1]), "interval": [b_lo, b_hi]}
    span = float(ell[-1] / ell[0])
    deep_enough = span >= DEPTH_SPAN[variable.scale]
    # a limit the sweep has reached: its deepest ratio within half the limit of it (else the data never
    # came near r∞ and the extrapolation, however well it fits, is not evidence of a positive limit)
    settled = math.isfinite(out.r_inf) and abs(rs[-1] - out.r_inf) <= 0.5 * abs(out.r_inf)
    positive = limit_ok and lo > 0 and math.isfinite(hi) and settled
    if not deep_enough:
        out.reason = (f"the sweep reaches ℓ_max/ℓ_min = {span:.3g} < {DEPTH_SPAN[variable.scale]:g} along "
                      f"{variable.name}: too shallow to tell a limit from a drift")
    elif positive and not significant and not unresolved:
        out.behaviour = "limit"
        out.reason = f"r → {out.r_inf:.4g} in [{lo:.4g}, {hi:.4g}] (r ≈ r∞ + {out.correction:.3g}·{variable.correction()})"
    elif limit_ok and lo <= 0 < hi < ZERO_FRACTION * float(np.min(rs)):
        out.behaviour = "to_zero"
        out.reason = (f"r∞ = 0 within [{lo:.3g}, {hi:.3g}], below a tenth of every ratio of the sweep "
                      f"(r ≈ {out.r_inf:.3g} + {out.correction:.3g}·{variable.correction()})")
    elif significant and (not limit_ok or not settled or (lo <= 0 and out.drift["beta"] < 0)):
        out.behaviour = "to_zero" if out.drift["beta"] < 0 else "to_infinity"
        out.reason = (f"r ∝ {d.name.replace('A·', '')} with β = {out.drift['beta']:.3g} in [{b_lo:.3g}, {b_hi:.3g}]"
                      + ("" if limit_ok else "; no limit model fits"))
    elif positive and significant:
        out.reason = (f"the grid cannot tell a limit (r∞ = {out.r_inf:.4g} in [{lo:.4g}, {hi:.4g}]) from a drift "
                      f"(β = {out.drift['beta']:.3g}): extend the sweep along {variable.name}")
        if out.drift["beta"] < 0:
            # a positive limit or a decay to 0: bounded either way, which is all an O statement asks
            out.behaviour = "bounded"
            out.reason += "; the ratio is bounded either way"
    elif positive and unresolved:
        d, b_lo, b_hi = unresolved[0]
        out.reason = (f"r∞ = {out.r_inf:.4g} in [{lo:.4g}, {hi:.4g}], but a drift {d.name} with β in "
                      f"[{b_lo:.3g}, {b_hi:.3g}] also fits: the noise leaves drifts beyond ±{BETA_RESOLUTION:g} open")
        if not significant and all(high <= BETA_RESOLUTION for _, _, high in unresolved):
            # the open drifts all point down (or up by less than a limit tolerates): bounded, all O asks
            out.behaviour = "bounded"
            out.reason += f"; no growth beyond β = {BETA_RESOLUTION:g}: the ratio is bounded either way"
    elif not limit_ok and not any(drift_ok.values()):
        out.reason = NO_MODEL_FITS + " (a limit with one or two corrections, a power or polylog drift)"
    else:
        out.reason = (f"r∞ = {out.r_inf:.4g} in [{lo:.4g}, {hi:.4g}] reaches 0 or ∞ and no drift is significant: "
                      f"extend the sweep along {variable.name}")
    return out


@dataclass
class AsymptoticDecision:
    """A Θ/O/Ω statement decided over every slice of every asymptotic variable."""

    form: str
    status: Status
    slices: list[SliceDecision]
    summary: str

    def constants(self) -> list[float]:
        """The limits r∞ of the slices where the ratio has one."""
        return [s.r_inf for s in self.slices if s.behaviour == "limit"]

    def constant_band(self) -> tuple[float, float]:
        """The smallest lower and largest upper end of r∞'s intervals over the slices with a limit."""
        ivs = [s.r_inf_interval for s in self.slices if s.behaviour == "limit"]
        if not ivs:
            return (math.nan, math.nan)
        return (min(i[0] for i in ivs), max(i[1] for i in ivs))

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        lo, hi = self.constant_band()
        return {"form": self.form, "decision": self.status.value, "summary": self.summary,
                "constant_band": [lo, hi], "slices": [s.to_dict() for s in self.slices],
                "rules": "checks.asymptotics (module docstring)"}


def decide(form: str, observed: Sequence[float], rate: Sequence[float], points: Sequence[Mapping[str, Any]], *,
           variables: Sequence[Asymptotic], se: Sequence[float] | None = None, rel_err: float = 1e-6,
           sign: int = 1, regime: Sequence[bool] | None = None, regime_name: str = "the hypotheses") -> AsymptoticDecision:
    """Decide ``observed = form(rate)`` over a sweep of ``points`` (dicts of parameters).

    For each asymptotic variable, the points are grouped into slices by the values of every other
    parameter; each slice is decided by :func:`limit_of_ratio`. ``sign=-1`` tests a signed statement
    (observed = −Θ(rate)) on −observed. ``se`` are the observed values' standard errors.

    ``regime`` marks the points that meet the statement's hypotheses (e.g. L = Ω(1/σ) read as Lσ ≥ 1):
    only they enter a slice, and a slice left with fewer than ``MIN_POINTS`` of them leaves the
    regime along its variable (σ → 0 at fixed L) and is reported as outside it, not decided.
    """
    if form not in FORMS:
        raise InvalidArgument(f"form={form!r} is not one of {', '.join(FORMS)}")
    if sign not in (1, -1):
        raise InvalidArgument(f"sign={sign} must be 1 or -1")
    obs = sign * np.asarray(observed, dtype=float)
    den = np.asarray(rate, dtype=float)
    err = np.zeros_like(obs) if se is None else np.abs(np.asarray(se, dtype=float))
    if not (obs.shape == den.shape == err.shape == (len(points),)):
        raise InvalidArgument("observed, rate, se and points must have one entry per sweep point")
    ratio, ratio_se = obs / den, err / np.abs(den)
    inside = np.ones(len(points), dtype=bool) if regime is None else np.asarray(regime, dtype=bool)
    if inside.shape != (len(points),):
        raise InvalidArgument(f"regime must have one entry per sweep point ({len(points)}); got shape {inside.shape}")
    slices: list[SliceDecision] = []
    for var in variables:
        others = sorted({k for p in points for k in p} - {var.name})
        groups: dict[tuple, list[int]] = {}
        for i, p in enumerate(points):
            if var.name not in p:
                raise InvalidArgument(f"point {dict(p)} has no value of the asymptotic variable {var.name!r}")
            groups.setdefault(tuple(p.get(k) for k in others), []).append(i)
        for key, idx in groups.items():
            fixed = dict(zip(others, key, strict=True))
            kept = [i for i in idx if inside[i]]
            if len(kept) < MIN_POINTS <= len(idx):
                xs = np.array([points[i][var.name] for i in idx], dtype=float)
                slices.append(SliceDecision(var, fixed, xs, ratio[idx], ratio_se[idx], "outside",
                                            f"{len(kept)} of {len(idx)} points along {var.name} meet {regime_name}: "
                                            f"the slice leaves the regime"))
                continue
            idx = np.array(kept if len(kept) < len(idx) else idx, dtype=int)
            slices.append(limit_of_ratio([points[i][var.name] for i in idx], ratio[idx], ratio_se[idx],
                                         variable=var, rel_err=rel_err, polylog_is_limit=form.endswith("~"),
                                         fixed=fixed))
    return combine_slices(form, slices)


def decide_replicates(form: str, points: Sequence[Mapping[str, Any]], replicates: Sequence[Any], *,
                      variables: Sequence[Asymptotic], sign: int = 1, control_means: Sequence[float] | None = None,
                      **options) -> AsymptoticDecision:
    """:func:`decide` for a random statistic observed on independent replicates (seeds, initializations) at each
    sweep point: the ratio is the replicates' mean, its error their standard error (sample standard deviation
    over √count, so each point needs two replicates). With ``control_means`` (the exact means of k controls),
    each point's replicates are rows (f, g₁..g_k) and the mean is the control-variate regression estimate
    (:func:`numerics.montecarlo.control_variate_mean`) with its standard error. ``options`` go to :func:`decide`."""
    if len(points) != len(replicates):
        raise InvalidArgument(f"points ({len(points)}) and replicates ({len(replicates)}) must have one entry each")
    means, errors = [], []
    for point, values in zip(points, replicates, strict=True):
        values = np.asarray(values, dtype=float)
        if values.shape[0] < (2 if control_means is None else len(control_means) + 2):
            raise InvalidArgument(f"point {dict(point)} has {values.shape[0]} replicate(s); a standard error needs "
                                  f"{2 if control_means is None else len(control_means) + 2}")
        if control_means is None:
            if values.ndim != 1:
                raise InvalidArgument(f"point {dict(point)}: replicates must be a 1-D array without control_means")
            means.append(float(values.mean()))
            errors.append(float(values.std(ddof=1) / math.sqrt(values.size)))
        else:
            estimate = control_variate_mean(values, control_means)
            means.append(estimate.mean)
            errors.append(estimate.se)
    return decide(form, means, np.ones(len(means)), points, variables=variables, se=errors, sign=sign, **options)


def sum_of_terms_status(statuses: Sequence[Status]) -> Status:
    """X = O(Σ_k f_k) (f_k >= 0) from the decisions of X = O(f_k), term by term: X/Σf <= X/f_k for every k, so one
    bounded ratio proves it (holds); X/Σf → ∞ needs X/f_k → ∞ for every k (fails); inconclusive otherwise.
    Deciding the sum directly would read a pre-asymptotic crossover (a term that dominates only beyond the sweep)
    as a divergence."""
    statuses = list(statuses)
    if not statuses:
        raise InvalidArgument("a sum needs at least one term")
    if Status.HOLDS in statuses:
        return Status.HOLDS
    return Status.FAILS if all(st is Status.FAILS for st in statuses) else Status.INCONCLUSIVE


def combine_slices(form: str, slices: Sequence[SliceDecision]) -> AsymptoticDecision:
    """One decision of ``form`` from slices decided by :func:`limit_of_ratio`: fails when one slice
    fails, holds when every measured slice holds, inconclusive otherwise (module docstring)."""
    if form not in FORMS:
        raise InvalidArgument(f"form={form!r} is not one of {', '.join(FORMS)}")
    slices = list(slices)
    statuses = [st for st in (s.status(form) for s in slices) if st is not Status.OUTSIDE]
    status = (Status.FAILS if Status.FAILS in statuses else
              Status.HOLDS if statuses and all(st is Status.HOLDS for st in statuses) else Status.INCONCLUSIVE)
    summary = _summary(form, status, slices)
    return AsymptoticDecision(form, status, slices, summary)


def _summary(form: str, status: Status, slices: list[SliceDecision]) -> str:
    counts: dict[str, int] = {}
    for s in slices:
        counts[s.behaviour] = counts.get(s.behaviour, 0) + 1
    words = {"limit": "settle", "to_zero": "tend to 0", "to_infinity": "grow without bound",
             "bounded": "stay bounded (a limit or a decay)", "undecided": "undecided",
             "unmeasured": "have too few values (not reached)", "outside": "leave the regime of the hypotheses"}
    parts = [f"{form} {status.value}: " + ", ".join(f"{n} slices {words[b]}" for b, n in counts.items())]
    limits = [s for s in slices if s.behaviour == "limit"]
    if limits:
        lo = min(s.r_inf_interval[0] for s in limits)
        hi = max(s.r_inf_interval[1] for s in limits)
        parts.append(f"r∞ in [{lo:.4g}, {hi:.4g}]")
    bad = next((s for s in slices if s.status(form) is Status.FAILS), None) or next(
        (s for s in slices if s.behaviour == "undecided"), None)
    if bad is not None:
        where = ", ".join(f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}" for k, v in bad.fixed.items())
        parts.append(f"along {bad.variable.name}{' at ' + where if where else ''}: {bad.reason}")
    return "; ".join(parts)


def figure(decision: AsymptoticDecision, path, *, title: str = "", max_panels: int = 4):
    """r against each asymptotic variable, one panel per slice: the data with error bars, the fitted
    limit model and the r∞ band (up to ``max_panels`` slices, failing and undecided ones first)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = {"to_zero": 0, "to_infinity": 0, "undecided": 1, "bounded": 1, "limit": 2, "unmeasured": 3, "outside": 4}
    slices = sorted(decision.slices, key=lambda s: order[s.behaviour])[:max_panels]
    if not slices:
        return None
    fig, axes = plt.subplots(1, len(slices), figsize=(3.6 * len(slices), 3.2), squeeze=False)
    for ax, sl in zip(axes[0], slices, strict=False):
        ax.errorbar(sl.x, sl.r, yerr=2 * sl.s, fmt="o", ms=3, color="k", label="r = T/g (±2 SE)")
        fit = next((f for f in sl.fits if f.name.startswith("r∞") and f.fits), None)
        if fit is not None:
            depth = sl.variable.depth(sl.x)
            reach = 1.5 if sl.variable.scale == "log" else 10.0  # a little beyond the sweep, toward the limit
            ell = np.geomspace(depth.min(), depth.max() * reach, 200)
            u = 1 / ell
            curve = fit.params[0] + fit.params[1] * u + (fit.params[2] * u**2 if "c₂" in fit.name else 0)
            xs = ell if sl.variable.toward == "inf" else 1 / ell
            if sl.variable.scale == "log":
                xs = np.exp(ell) if sl.variable.toward == "inf" else np.exp(-ell)
            ax.plot(xs, curve, "C0-", lw=1, label=fit.name)
        if all(math.isfinite(v) for v in sl.r_inf_interval) and sl.behaviour == "limit":
            ax.axhspan(*sl.r_inf_interval, color="C2", alpha=0.25, label="r∞ interval")
        ax.set_xscale("log")
        if sl.variable.toward == "0":
            ax.invert_xaxis()
        ax.set_xlabel(sl.variable.name)
        fixed = ", ".join(f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}" for k, v in sl.fixed.items())
        ax.set_title(f"{sl.behaviour}\n{fixed}", fontsize=8)
        ax.legend(fontsize=6, loc="best")
    fig.suptitle(title or f"{decision.form}: {decision.status.value}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


#: the corrections g(s) an approximate statement's deviation is fitted with (spec rule R16 of the ss paper)
CORRECTIONS = {
    "1/s": lambda s: 1.0 / s,
    "1/sqrt(s)": lambda s: 1.0 / np.sqrt(s),
    "1/ln(s)": lambda s: 1.0 / np.log(s),
    "1/ln(ln(s))": lambda s: 1.0 / np.log(np.log(s)),
}


@dataclass(frozen=True)
class ApproximationDecision:
    """An approximate statement P ≈ Q decided in its limit s → ∞ (see :func:`approximation`)."""

    status: Status
    summary: str
    s: list[float]
    deviation: list[float]
    fits: dict[str, dict[str, float]]
    best: str

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status.value, "summary": self.summary, "s": self.s, "deviation": self.deviation,
                "fits": self.fits, "best": self.best}


def approximation(s: Sequence[float], printed: Sequence[float], exact: Sequence[float], *, name: str = "s",
                  quantity: str = "ratio", rel_err: float = 1e-9, level: float = LEVEL) -> ApproximationDecision:
    """Decide "P ≈ Q, exact as s → ∞" (an approximate statement and its asymptotic variable s).

    The deviation is D = |P/Q − 1| (``quantity="ratio"``, a positive quantity) or D = |P − Q| (``"log"``, a
    quantity printed as a logarithm), each value with the error ``rel_err``·(1 + |P|/|Q|) of the numbers
    behind it. D(s) = D∞ + a·g(s) is fitted by least squares for every g of :data:`CORRECTIONS` defined on
    the grid (g(s) finite and positive), its parameter errors scaled by √(χ²/dof) when the model misfits
    (truncation of the expansion), and the best-fitting g (smallest χ²) decides, with D∞'s interval at
    ``level`` (Student t, n − 2 dof). A decreasing D that no g describes within ``TRUNCATION`` (2 %) of
    its largest value beyond two of its errors (e.g. D ∝ ln ln s/ln s) leaves its limit undecided:

    * ``holds``: D decreases along s beyond its errors and the interval of D∞ contains 0 (or every D is
      within its error of 0);
    * ``fails``: D does not decrease (it stays or grows beyond its errors), or the interval of D∞ lies
      above 0;
    * ``inconclusive`` otherwise, e.g. fewer than 3 values or a decreasing D whose limit the fits place
      below 0 without reaching it.
    """
    x = np.asarray(s, dtype=float)
    P, Q = np.asarray(printed, dtype=float), np.asarray(exact, dtype=float)
    if quantity not in ("ratio", "log"):
        raise InvalidArgument(f"quantity={quantity!r} must be 'ratio' or 'log'")
    if not (x.shape == P.shape == Q.shape) or x.ndim != 1:
        raise InvalidArgument(f"{name}, printed and exact must be 1-D of one length; got {x.shape}, {P.shape}, {Q.shape}")
    D = np.abs(P / Q - 1) if quantity == "ratio" else np.abs(P - Q)
    err = rel_err * (1 + np.abs(P) / np.maximum(np.abs(Q), 1e-300)) if quantity == "ratio" else \
        rel_err * (1 + np.abs(P) + np.abs(Q))
    return deviation_limit(x, D, err, name=name, level=level)


def deviation_limit(s: Sequence[float], deviation: Sequence[float], error: Sequence[float], *, name: str = "s",
                    level: float = LEVEL) -> ApproximationDecision:
    """Decide whether a deviation D(s) >= 0, each value with its (absolute) ``error``, vanishes as s → ∞.

    The rules are those of :func:`approximation` (which computes D from a printed and an exact quantity);
    Monte-Carlo deviations pass their standard errors (times a coverage factor) as ``error``.
    """
    x, D, err = (np.asarray(v, dtype=float) for v in (s, deviation, error))
    if not (x.shape == D.shape == err.shape) or x.ndim != 1:
        raise InvalidArgument(f"{name}, deviation and error must be 1-D of one length; got {x.shape}, {D.shape}, "
                              f"{err.shape}")
    if x.size < 3:
        raise InvalidArgument(f"{name} has {x.size} values; an approximate statement needs at least 3 (spec R16)")
    if np.any(err <= 0) or not np.all(np.isfinite(D)):
        raise InvalidArgument(f"every error must be > 0 and every deviation finite (got errors {err.tolist()[:4]}, "
                              f"deviations {D.tolist()[:4]})")
    order = np.argsort(x)
    x, D, err = x[order], D[order], err[order]
    columns = {}  # the corrections that are finite and positive on the sweep
    for label, g in CORRECTIONS.items():
        with np.errstate(all="ignore"):
            column = g(x)
        if np.all(np.isfinite(column) & (column > 0)):
            columns[label] = column
    fits: dict[str, dict[str, float]] = {label: _deviation_fit(D, err, column, 1, level)
                                         for label, column in columns.items()}
    best = min(fits, key=lambda k: fits[k]["chi2"])
    fit = fits[best]
    steps = np.diff(D)
    decreasing = bool(np.all(steps <= 2 * (err[1:] + err[:-1]))) and D[-1] < D[0] - 2 * (err[0] + err[-1])
    at_zero = bool(np.all(D <= 2 * err))
    adequate = fit["max_misfit"] <= TRUNCATION
    if decreasing and not at_zero and not adequate:
        status = Status.INCONCLUSIVE
        text = (f"no decision: D decreases along {name} but no correction g describes it within "
                f"{TRUNCATION:.0%} of its range (best g = {best}, misfit {fit['max_misfit']:.1%}): the grid cannot "
                f"place its limit")
        return ApproximationDecision(status, text, x.tolist(), D.tolist(), fits, best)
    if at_zero or (decreasing and fit["D_inf_low"] <= 0 <= fit["D_inf_high"]):
        status = Status.HOLDS
        text = (f"D → 0 as {name} → ∞: every D within its error of 0" if at_zero else
                f"D decreases and D∞ = {fit['D_inf']:.3g} [{fit['D_inf_low']:.3g}, {fit['D_inf_high']:.3g}] "
                f"(g = {best}) contains 0: exact in the limit")
    elif not decreasing or fit["D_inf_low"] > 0:
        status = Status.FAILS
        why = "D does not decrease along " + name if not decreasing else "D∞'s interval lies above 0"
        text = (f"not exact in the limit: {why}; D∞ = {fit['D_inf']:.3g} [{fit['D_inf_low']:.3g}, "
                f"{fit['D_inf_high']:.3g}] (g = {best})")
    else:
        status = Status.INCONCLUSIVE
        text = (f"no decision: D decreases but D∞ = {fit['D_inf']:.3g} [{fit['D_inf_low']:.3g}, "
                f"{fit['D_inf_high']:.3g}] (g = {best}) lies below 0")
        # D >= 0 cannot have a negative limit: the one-term fit overshoots through curvature, so the next order
        # (D∞ + a·g + b·g², as for a ratio's limit) decides when the sweep has the points for it
        seconds = ({label: _deviation_fit(D, err, column, 2, level) for label, column in columns.items()}
                   if x.size >= 4 else {})
        if seconds:
            best2 = min(seconds, key=lambda k: seconds[k]["chi2"])
            second = fits[f"{best2} + ({best2})^2"] = seconds[best2]
            if second["D_inf_low"] <= 0 <= second["D_inf_high"]:
                status = Status.HOLDS
                text = (f"D decreases and, with a second-order term, D∞ = {second['D_inf']:.3g} "
                        f"[{second['D_inf_low']:.3g}, {second['D_inf_high']:.3g}] (g = {best2}, plus g²) contains 0: "
                        f"exact in the limit (the first-order fit overshot to {fit['D_inf']:.3g})")
            elif second["D_inf_low"] > 0:
                status = Status.FAILS
                text = (f"not exact in the limit: with a second-order term D∞ = {second['D_inf']:.3g} "
                        f"[{second['D_inf_low']:.3g}, {second['D_inf_high']:.3g}] (g = {best2}, plus g²) lies above 0")
    return ApproximationDecision(status, text, x.tolist(), D.tolist(), fits, best)


def _deviation_fit(D: np.ndarray, err: np.ndarray, column: np.ndarray, degree: int,
                   level: float) -> dict[str, float]:
    """D ≈ D∞ + a·g + (b·g² when ``degree`` is 2) by weighted least squares: D∞ with its interval (Birge-scaled,
    Student t), the coefficients, χ² and the misfit (the part of the residuals beyond two of their errors,
    relative to the largest deviation)."""
    design = np.column_stack([column**k for k in range(degree + 1)])
    weighted = design / err[:, None]
    coef, *_ = np.linalg.lstsq(weighted, D / err, rcond=None)
    residual = (D - design @ coef) / err
    dof = D.size - degree - 1
    chi2 = float(residual @ residual)
    cov = np.linalg.pinv(weighted.T @ weighted)
    se = float(np.sqrt(cov[0, 0] * (max(1.0, chi2 / dof) if dof > 0 else 1.0)))
    t = stats.t.ppf(0.5 + level / 2, max(dof, 1))
    misfit = float(np.max(np.maximum(np.abs(D - design @ coef) - 2 * err, 0.0)) / max(float(np.max(D)), 1e-300))
    out = {"D_inf": float(coef[0]), "a": float(coef[1]), "D_inf_low": float(coef[0] - t * se),
           "D_inf_high": float(coef[0] + t * se), "chi2": chi2, "dof": dof, "max_misfit": misfit}
    if degree == 2:
        out["b"] = float(coef[2])
    return out
