"""Float64 peers of ``numerics.svm.hard_margin_svm``, and a harness timing them on ill-conditioned problems.

What a researcher would write without tdcheck: the hard-margin SVM u* = argmin ‖u‖ s.t. Zu ≥ 1
by SciPy's NNLS on the Lawson–Hanson least-distance dual, or by SLSQP on the primal. The problems
are ``nearly_collinear_problem``'s family (rows within ~1e-12 of ±e_1, ‖u*‖ = 2^eps_exp, exact
answer known), so "right" is decided against the closed form, not against tdcheck. Never
imported by the packages.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from scipy.optimize import minimize, nnls

from checks.bench import Peer, Result
from numerics.svm import KnownAnswer, hard_margin_svm, kkt_residuals, nearly_collinear_problem

#: a float64 ‖u‖ within this relative error of 2^eps_exp counts as precise
NORM_RTOL = 1e-6


def nnls_dual(Z: np.ndarray) -> tuple[np.ndarray | None, tuple[int, ...], np.ndarray | None]:
    """(u, support, ν) by NNLS on [Zᵀ; 1ᵀ]w ≈ e_{d+1}; u is None when NNLS finds 0 in the hull."""
    K, d = Z.shape
    E = np.vstack([Z.T, np.ones((1, K))])
    f = np.zeros(d + 1)
    f[-1] = 1.0
    w, _ = nnls(E, f)
    r = E @ w - f
    support = tuple(int(k) for k in np.flatnonzero(w > 0))
    if r[-1] >= 0:
        return None, support, None
    return (Z.T @ w) / -r[-1], support, w / -r[-1]


def slsqp_primal(Z: np.ndarray) -> tuple[np.ndarray, tuple[int, ...], np.ndarray]:
    """(u, support, ν) by SLSQP on min ½‖u‖² s.t. Zu ≥ 1 from least squares; support: ν > 1e-12·max ν."""
    x0 = np.linalg.lstsq(Z, np.ones(len(Z)), rcond=None)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its failures show in u, support and the KKT check, not in warnings
        res = minimize(lambda u: 0.5 * u @ u, x0, jac=lambda u: u, method="SLSQP",
                       constraints=[{"type": "ineq", "fun": lambda u: Z @ u - 1, "jac": lambda u: Z}],
                       options={"maxiter": 500, "ftol": 1e-15})
    mult = np.asarray(res.multipliers, dtype=float)
    return res.x, tuple(int(k) for k in np.flatnonzero(mult > 1e-12 * max(mult.max(), 1e-300))), mult


def problems(quick: bool = False) -> list[tuple[int, KnownAnswer]]:
    """(eps_exp, problem): d = 2..7, ‖u*‖ = 2^20 … 2^50 (1e6 … 1.1e15), rows ~2^-40 ≈ 1e-12 apart."""
    seeds = range(2) if quick else range(4)
    return [(e, nearly_collinear_problem(d, seed=s, eps_exp=e, delta_exp=40, distractors=3))
            for e in (20, 30, 40, 50) for d in range(2, 8) for s in seeds]


def _timed(fn, repeats: int):
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def compare(cases: list[tuple[int, KnownAnswer]], repeats: int = 1) -> dict:
    """Seconds (best of ``repeats``, summed over the problems) and correctness of each solver, per ‖u*‖."""
    solvers = {"tdcheck hard_margin_svm (mpmath, certified)": None, "scipy NNLS (LDP dual)": nnls_dual,
               "scipy SLSQP (primal)": slsqp_primal}
    report = {name: {"seconds": 0.0, "support right": 0, "‖u‖ within 1e-6": 0, "KKT ≤ 1e-50": 0,
                     "by eps_exp": {}} for name in solvers}
    for eps_exp, problem in cases:
        norm = 2.0**eps_exp
        for name, fn in solvers.items():
            if fn is None:
                seconds, result = _timed(lambda p=problem: hard_margin_svm(p.rows), repeats)
                support, u_norm = result.support, float(result.norm)
                certified = result.status == "certified"
            else:
                seconds, (u, support, nu) = _timed(lambda p=problem, f=fn: f(p.rows), repeats)
                u_norm = float("nan") if u is None else float(np.linalg.norm(u))
                certified = u is not None and kkt_residuals(problem.rows, u, nu).within(10.0**-50)
            row = report[name]
            right = support == problem.support
            precise = abs(u_norm - norm) <= NORM_RTOL * norm
            row["seconds"] += seconds
            row["support right"] += right
            row["‖u‖ within 1e-6"] += precise
            row["KKT ≤ 1e-50"] += certified
            cell = row["by eps_exp"].setdefault(f"2^{eps_exp}", [0, 0, 0])
            cell[0] += right
            cell[1] += precise
            cell[2] += 1
    return report


def svm_benchmark(name: str = "svm", quick: bool = False) -> Result:
    """Time and correctness on :func:`problems`; ratio = peer time / tdcheck time (< 1: peer faster)."""
    cases = problems(quick)
    n = len(cases)
    report = compare(cases, repeats=1 if quick else 3)
    ours_name, *peer_names = report
    ours = report[ours_name]
    peers = [Peer(p, report[p]["seconds"], report[p]["seconds"] / ours["seconds"],
                  f"support right {report[p]['support right']}/{n}, ‖u‖ within 1e-6 "
                  f"{report[p]['‖u‖ within 1e-6']}/{n}") for p in peer_names]
    met = ours["support right"] == n and ours["KKT ≤ 1e-50"] == n
    extra = {p: {k: v for k, v in row.items() if k != "seconds"} for p, row in report.items()}
    extra["by eps_exp, per cell"] = "(support right, ‖u‖ within 1e-6, problems)"
    return Result(name, f"hard-margin SVM, {n} nearly collinear problems (d=2..7, ‖u*‖=1e6..1.1e15)",
                  ours["seconds"], peers, target="support right and KKT residuals ≤ 1e-50 on every problem",
                  met=met, extra=extra)


if __name__ == "__main__":
    import json

    result = svm_benchmark(quick=True)
    print(json.dumps(result.to_dict(), indent=1, default=str))
