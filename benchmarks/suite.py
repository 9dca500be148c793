"""The benchmarks of ``tdcheck bench``: tdcheck and its peers on the same work, in one process run.

Each function takes ``quick`` (fewer repeats; same work) and returns a
:class:`checks.bench.Result`. Times are the best of several repeats after a warm-up call (compile
time is measured separately by ``compile``). Ratios are peer time / tdcheck time.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from checks.bench import Peer, Result

HERE = Path(__file__).parent
#: the ih-flow configuration of issue #4
FLOW = {"L": 40.0, "alpha": 1.0, "wstar": 0.49, "sigma": 0.01, "t1": 2e4, "rtol": 1e-8, "atol": 1e-11}


def _best(fn, repeats: int) -> float:
    fn()  # warm-up: compilation and caches
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _flow_field(closed_sums: bool = True):
    """tdcheck's generated Stage-II field (paper flow, canonical ranges) without its events."""
    from numerics.models.induction_head import stage2_flow

    field = stage2_flow("paper", closed_sums=closed_sums)
    return dataclasses.replace(field, events=None, event_names=(), event_directions=(), terminal=())


def _y0() -> np.ndarray:
    s = FLOW["sigma"]
    return np.array([s, s, s, math.log(s)])


def ih_flow(quick: bool = False) -> Result:
    """One Stage-II trajectory: generated kernel vs SciPy solve_ivp (RK45, DOP853) and hand-written numba."""
    from ih_flow_reference import rhs_python, solve_reference
    from scipy.integrate import solve_ivp

    from numerics.ode import Tolerance, integrate

    field = _flow_field()
    params = np.array([FLOW["L"], FLOW["alpha"], FLOW["wstar"], 0.0])
    tol = Tolerance(FLOW["rtol"], FLOW["atol"])
    y0, t1 = _y0(), FLOW["t1"]
    out = {}

    def ours():
        out["tdcheck"] = integrate(field, y0, (0.0, t1), params, tol=tol)

    repeats = 3 if quick else 10
    ours_s = _best(ours, repeats)
    peers, finals = [], {"tdcheck": out["tdcheck"].y_final}
    for method in ("RK45", "DOP853"):
        def scipy_run(method=method):
            out[method] = solve_ivp(rhs_python, (0.0, t1), y0, method=method, rtol=FLOW["rtol"], atol=FLOW["atol"],
                                    args=(FLOW["L"], FLOW["alpha"], FLOW["wstar"]))
        seconds = _best(scipy_run, 1 if quick else 2)
        finals[method] = out[method].y[:, -1]
        peers.append(Peer(f"scipy solve_ivp {method}", seconds, seconds / ours_s,
                          f"{out[method].nfev} rhs calls"))

    def hand():
        out["hand"] = solve_reference(y0, t1, FLOW["L"], FLOW["alpha"], FLOW["wstar"], FLOW["rtol"], FLOW["atol"],
                                      1e-3)
    hand_s = _best(hand, repeats)
    finals["hand-written numba"] = out["hand"][0]
    peers.append(Peer("hand-written numba DOPRI5", hand_s, hand_s / ours_s, f"{out['hand'][1]} steps"))
    rk45 = peers[0].ratio
    within = ours_s <= 1.5 * hand_s
    spread = {name: float(np.max(np.abs(y - finals["DOP853"]))) for name, y in finals.items()}
    return Result("ih-flow", "Stage-II flow, L=40, α*=1, w*=0.49, σ=0.01, t∈[0,2e4], rtol 1e-8, atol 1e-11",
                  ours_s, peers, target="≥100× SciPy RK45; ≤1.5× hand-written numba",
                  met=bool(rk45 >= 100 and within),
                  extra={"tdcheck steps": out["tdcheck"].n_steps, "tdcheck/hand-written time": ours_s / hand_s,
                         "max |y(t1) - y_DOP853(t1)|": spread})


def sweep_points(n: int, seed: int = 0, lengths=(40.0, 100.0, 400.0)) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random Stage-II configurations: initial states (σ, σ, σ, ln σ) and params (L, α*, w*, L_G4(0))."""
    rng = np.random.default_rng(seed)
    wstar = rng.uniform(0.2, 0.6, n)
    alpha = rng.choice([0.5, 1.0, 4.0], n)
    sigma = 10.0 ** rng.uniform(-4, -2, n)
    L = rng.choice(list(lengths), n)
    y0 = np.column_stack([sigma, sigma, sigma, np.log(sigma)])
    gs = alpha / (1 + alpha)
    loss0 = 0.5 * (gs**2 - 2 * sigma * gs / L + sigma**2 / L)  # L_G4 at p ≈ 0: the T_I threshold scale
    return y0, np.column_stack([L, alpha, wstar, loss0])


def ih_sweep(quick: bool = False) -> Result:
    """1000 trajectories of the G_IH engine with hitting-time events in one batch, at 1 and 2 numba threads.

    The engine of ``run_grid`` and the claims: the (h, ln w, dh/dτ) field in scaled time τ = t/S, to τ = 60
    or T_tail, at rtol 1e-10 (``stage2.ih_tolerance``), over random (L, α*, w*, σ) (:func:`sweep_points`).
    """
    import numba

    from numerics.models.induction_head.stage2 import ih_flow, ih_initial, ih_tolerance
    from numerics.ode import integrate_batch

    field = ih_flow("paper")
    n = 1000
    first_states, points = sweep_points(n)
    sigmas = first_states[:, 0]
    starts = [ih_initial(int(L), float(alpha), float(wstar), float(sigma))[:2]
              for (L, alpha, wstar, _), sigma in zip(points, sigmas, strict=True)]
    y0s, params = np.array([y for y, _ in starts]), np.array([p for _, p in starts])
    tol = ih_tolerance(1e-10, 1e-13)
    times, results = {}, {}
    available = numba.config.NUMBA_NUM_THREADS
    previous = numba.get_num_threads()
    try:
        for threads in sorted({1, min(2, available)}):
            numba.set_num_threads(threads)

            def run(threads=threads):
                results[threads] = integrate_batch(field, y0s, params, (0.0, 60.0), tol=tol, on_error="record")
            times[threads] = _best(run, 1 if quick else 3)
    finally:
        numba.set_num_threads(previous)
    speedup = times[1] / times[max(times)] if len(times) > 1 else None
    identical = all(np.array_equal(results[1].event_times, r.event_times, equal_nan=True) for r in results.values())
    peers = [Peer(f"tdcheck, {t} thread{'s' if t > 1 else ''}", s, None, f"{n / s:.0f} trajectories/s")
             for t, s in times.items()]
    return Result("ih-sweep", f"{n} (h, ln w, dh/dτ) trajectories with {len(field.event_names)} hitting-time events, batched",
                  times[max(times)], peers, target="≥1.7× from 1 to 2 threads",
                  met=None if speedup is None else bool(speedup >= 1.7),
                  extra={"speedup 1→2 threads": speedup, "trajectories/s": {t: n / s for t, s in times.items()},
                         "results identical across thread counts": identical,
                         "points ok": int(results[1].ok.sum()), "numba threads available": available})


def ih_mc(quick: bool = False) -> Result:
    """True-softmax IH loss at L=40 by Monte-Carlo: samples/s vs vectorised NumPy, and time to rel. SE 1e-3.

    tdcheck: tokens from the counter-based generator, the loss kernel, and two control variates
    with exact means (``numerics.models.induction_head.controls``); NumPy: plain MC, vectorised.
    """
    from numpy_peers import softmax_loss_numpy

    from numerics.models.induction_head import token_sampler
    from numerics.models.induction_head.controls import control_means, ih_softmax_loss_with_controls
    from numerics.montecarlo import ControlVariateMonteCarlo

    L, w, h, alpha, wstar = 40, 0.25, 0.5, 1.0, 0.49
    n = 400_000 if quick else 2_000_000
    mc = ControlVariateMonteCarlo(token_sampler(L), lambda X, prm: ih_softmax_loss_with_controls(X, *prm),
                                  lambda prm: control_means(L, *prm), n=n, seed=0)
    est = {}
    ours = _best(lambda: est.setdefault("ours", mc.estimate((w, h, alpha, wstar))), 1 if quick else 3)
    rng = np.random.default_rng(0)

    def peer():
        est["numpy"] = softmax_loss_numpy(rng, n, L, w, h, alpha, wstar)
    theirs = _best(peer, 1 if quick else 3)
    mine = est["ours"]
    needed = n * (mine.se / mine.mean / 1e-3) ** 2  # samples for relative SE 1e-3
    ours_rate, peer_rate = n / ours, n / theirs
    np_mean, np_se = est["numpy"]
    np_needed = n * ((np_se / np_mean) / 1e-3) ** 2
    time_ours, time_peer = needed / ours_rate, np_needed / peer_rate
    agree = abs(mine.mean - np_mean) / math.hypot(mine.se, np_se)
    return Result("ih-mc", f"E of the true-softmax IH loss, L={L}, (w,h)=({w},{h}), w*={wstar}", ours,
                  [Peer("vectorised NumPy", theirs, theirs / ours, f"{peer_rate:.3g} samples/s"),
                   Peer("NumPy, time to rel. SE 1e-3", time_peer, time_peer / time_ours, "extrapolated from the SE")],
                  target="≥3× NumPy samples/s; ≥20× time to rel. SE 1e-3",
                  met=bool(theirs / ours >= 3 and time_peer / time_ours >= 20),
                  extra={"tdcheck samples/s": ours_rate, "estimate": f"{mine.mean:.6g} ± {mine.se:.2g}",
                         "numpy estimate": f"{np_mean:.6g} ± {np_se:.2g}",
                         "|difference| / combined SE": agree,
                         "tdcheck time to rel. SE 1e-3 (s)": time_ours,
                         "variance reduction (control variates)": mine.variance_reduction})


def ih_sgd(quick: bool = False) -> Result:
    """Fig. 1 Stage-II SGD (B=1000, L=40, float64): iterations per second, tdcheck vs PyTorch (CPU)."""
    from numerics.models.induction_head.sgd import Stage2Config, train_stage2

    iterations = 200 if quick else 1000
    config = Stage2Config()

    def ours():
        train_stage2(config, iterations=iterations, log_every=iterations, eval_size=1000, seed=0)
    ours_s = _best(ours, 1 if quick else 3)
    extra = {"tdcheck iterations/s": iterations / ours_s}
    try:
        import torch
    except ImportError:
        return Result("ih-sgd", "Fig. 1 Stage-II SGD, B=1000, L=40, float64", ours_s, [], target="≥3× PyTorch",
                      met=None, extra=extra, skipped="PyTorch is not installed (pip install 'tdcheck[bench]')")
    from torch_peer import train_stage2_torch

    theirs = _best(lambda: train_stage2_torch(iterations=iterations), 1 if quick else 3)
    extra["PyTorch iterations/s"] = iterations / theirs
    extra["PyTorch threads"] = torch.get_num_threads()
    return Result("ih-sgd", f"Fig. 1 Stage-II SGD, B=1000, L=40, float64, {iterations} iterations", ours_s,
                  [Peer(f"PyTorch {torch.__version__} (CPU, autograd)", theirs, theirs / ours_s)],
                  target="≥3× PyTorch", met=bool(theirs / ours_s >= 3), extra=extra)


#: the rl-gd configuration of issue #13: the paper's EP experiment (spec §2.10 G_X), N = 126, d = 12
RL_GD = {"L_max": 6, "lam": 2.0, "eta": 0.1, "t0": 100, "steps": 20_000}


def rl_gd(quick: bool = False) -> Result:
    """Full-data two-phase GD of the regular-language model: the driver's compiled loop vs vectorised NumPy.

    tdcheck: ``run_gd`` (the one driver, compiled loop, logging only the first and last step). Peers:
    spec §10's ``gd`` vectorised over all samples in NumPy, with its scatter_add as ``np.add.at``
    and as ``np.bincount``, and tdcheck's own Python loop (one kernel call per step) on the same
    kernel. Same data, schedule and step count; the final θ must agree to rounding.
    """
    from numpy_peers import rl_gd_numpy

    from numerics.models.regular_language import ep_data
    from numerics.models.regular_language.gd import run_gd

    L_max, lam, eta, t0, steps = (RL_GD[k] for k in ("L_max", "lam", "eta", "t0", "steps"))
    data = ep_data(L_max)
    d = data.dim
    out = {}
    repeats = 1 if quick else 3

    def ours(compiled=True):
        out[compiled] = run_gd(data, lam, eta, t0, steps, log=[steps], compiled=compiled)
    ours_s = _best(ours, repeats)
    python_s = _best(lambda: ours(compiled=False), repeats)
    theta = out[True].meta["theta"]
    identical = bool(np.array_equal(theta, out[False].meta["theta"]))
    peers = [Peer("tdcheck, Python loop (a kernel call per step)", python_s, python_s / ours_s,
                  f"{steps / python_s:.3g} steps/s; bit-identical: {identical}")]
    deviation = {}
    for scatter in ("add.at", "bincount"):
        def peer(scatter=scatter):
            out[scatter] = rl_gd_numpy(data.idx, data.length, data.y, data.weight, d, lam, eta, t0, steps,
                                       scatter=scatter)
        seconds = _best(peer, repeats)
        u, W = out[scatter]
        deviation[scatter] = float(np.max(np.abs(theta - np.concatenate([u, W.reshape(-1)]))))
        peers.append(Peer(f"vectorised NumPy (§10 gd, scatter {scatter})", seconds, seconds / ours_s,
                          f"{steps / seconds:.3g} steps/s"))
    numpy_ratio = min(p.ratio for p in peers[1:])
    scale = float(np.max(np.abs(theta)))
    agree = max(deviation.values()) <= 1e-9 * max(scale, 1.0)
    what = (f"EP full-batch two-phase GD, L_max={L_max} (N={data.n}, d={d}), λ={lam}, η={eta}, t0={t0}, "
            f"{steps} steps")
    return Result("rl-gd", what, ours_s, peers, target="≥20× vectorised NumPy (the faster variant)",
                  met=bool(numpy_ratio >= 20 and agree and identical),
                  extra={"tdcheck steps/s": steps / ours_s, "ratio to the faster NumPy": numpy_ratio,
                         "max |θ_tdcheck − θ_numpy|": deviation, "max |θ|": scale,
                         "agree to 1e-9·max(|θ|, 1)": agree, "compiled = Python loop bit for bit": identical,
                         "final loss": float(out[True]["loss"][-1])})


#: the ss-sgd configuration: Fig. 6's largest cell (spec §7 ss.fig6, §8.1): Syn-Medium with num_last=10
#: (K=20, M=240), torch_uniform init, T=128, batch 128, SGD momentum 0.9, lr_z=3, ratio 10, 100 iterations
SS_SGD = {"num_last": 10, "T": 128, "batch": 128, "momentum": 0.9, "lr_z": 3.0, "ratio": 10.0, "steps": 100}


def ss_sgd(quick: bool = False) -> Result:
    """Counts-SGD of "Scan and Snap" at Fig. 6's largest cell: tdcheck's kernel in the driver vs NumPy.

    tdcheck: ``train_ss`` (the one driver's compiled loop on the batch kernel; logs the first and last
    step). Peers (``scan_snap_peer.py``), on the same batches (``BatchSampler.draw``) and θ(0): spec §10
    vectorised over the batch with BLAS products and ``np.exp`` (agrees to rounding), and the same in
    the kernel's order of operations (bit for bit, slow).
    """
    import numba
    from scan_snap_peer import synmedium_layout, train_reference

    from numerics.models.scan_snap.sgd import train_ss

    c = SS_SGD
    lay = synmedium_layout(c["num_last"])
    kwargs = {"T": c["T"], "batch": c["batch"], "steps": c["steps"], "etaY": c["lr_z"] * c["ratio"],
              "etaZ": c["lr_z"], "optimizer": "momentum", "momentum": c["momentum"], "init": "torch_uniform",
              "seed": 0, "class_schedule": "iid_uniform"}
    out = {}
    repeats = 3 if quick else 10

    def ours():
        out["tdcheck"] = train_ss(lay, **kwargs)
    ours_s = _best(ours, repeats)
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one_thread_s = _best(ours, repeats)
    finally:
        numba.set_num_threads(previous)

    def peer(exact=False):
        out[exact] = train_reference(lay, exact=exact, **kwargs)
    numpy_s = _best(peer, 2 if quick else 5)
    exact_s = _best(lambda: peer(exact=True), 1)
    run = out["tdcheck"]
    Y, Z = run.meta["Y"], run.meta["Z"]
    deviation = max(float(np.max(np.abs(Y - out[False]["Y"]))), float(np.max(np.abs(Z - out[False]["Z"]))))
    identical = bool(np.array_equal(Y, out[True]["Y"]) and np.array_equal(Z, out[True]["Z"]))
    scale = max(float(np.max(np.abs(Y))), float(np.max(np.abs(Z))))
    steps = c["steps"]
    peers = [Peer("vectorised NumPy (§10 over the batch, BLAS, np.exp)", numpy_s, numpy_s / ours_s,
                  f"{steps / numpy_s:.3g} steps/s; max |Δθ| {deviation:.2g}"),
             Peer("NumPy in the kernel's order (bit for bit)", exact_s, exact_s / ours_s,
                  f"{steps / exact_s:.3g} steps/s; identical: {identical}"),
             Peer("tdcheck, 1 numba thread", one_thread_s, one_thread_s / ours_s,
                  f"{steps / one_thread_s:.3g} steps/s")]
    what = (f"Fig. 6 cell: Syn-Medium num_last={c['num_last']} (K={lay.K}, M={lay.M}), T={c['T']}, "
            f"batch {c['batch']}, momentum {c['momentum']}, lr_z={c['lr_z']}, ratio {c['ratio']}, {steps} steps")
    return Result("ss-sgd", what, ours_s, peers, target="≥5× vectorised NumPy",
                  met=bool(numpy_s / ours_s >= 5 and identical and deviation <= 1e-9 * max(scale, 1.0)),
                  extra={"tdcheck steps/s": steps / ours_s, "numba threads": numba.get_num_threads(),
                         "bit-identical to the exact-order NumPy": identical,
                         "max |θ_tdcheck − θ_numpy|": deviation, "max |θ|": scale,
                         "final batch cross-entropy": float(-run.meta["batch_objective"][-1])})


def _subprocess_seconds(code: str, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    return time.perf_counter() - start


_COMPILE_PROBE = """
import time, numpy as np
import numerics.models.induction_head as m
from numerics.ode import integrate, Tolerance
from numba.core.registry import cpu_target
t0 = time.perf_counter()
cpu_target.target_context.refresh()  # numba's own one-time start: its registries, SciPy's BLAS check
t1 = time.perf_counter()
f = m.stage2_flow('paper')
integrate(f, np.array([.01, .01, .01, np.log(.01)]), (0., 1.), np.array([40., 1., .49, .1]), tol=Tolerance(1e-8, 1e-11))
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def compile_times(quick: bool = False) -> Result:
    """Cold compile of the Stage-II flow kernels into an empty cache, then the warm load from it (fresh processes).

    Each process first pays numba's own start-up (loading its registries, which imports
    scipy.linalg to look for BLAS; any numba code pays it once per process). It is timed apart:
    the load is ``stage2_flow`` + the first ``integrate``, and the total is reported beside.
    """
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TDCHECK_CACHE_DIR": cache, "NUMBA_CACHE_DIR": str(Path(cache) / "numba")}
        out = []
        for _ in range(3 if quick else 5):
            result = subprocess.run([sys.executable, "-c", _COMPILE_PROBE], env=env, check=True, capture_output=True,
                                    text=True)
            out.append([float(v) for v in result.stdout.split()])
    (numba_cold, cold), warm_runs = out[0], out[1:]
    numba_start, warm = min(w[0] for w in warm_runs), min(w[1] for w in warm_runs)
    return Result("compile", "Stage-II flow kernels: build + first integrate, fresh process", warm,
                  [Peer("cold (empty cache)", cold, cold / warm)], target="warm load ≤ 1 s", met=bool(warm <= 1.0),
                  extra={"cold compile (s)": cold, "warm load (s)": warm, "numba start-up (s)": numba_start,
                         "warm load + numba start-up (s), each run": [sum(w) for w in warm_runs]})


def run_ih(quick: bool = False) -> Result:
    """Wall time of ``tdcheck run ih`` at the quick budget, cold (empty caches) and warm; both runs must succeed."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TDCHECK_CACHE_DIR": cache, "NUMBA_CACHE_DIR": str(Path(cache) / "numba")}
        seconds, counts = [], []
        for label in ("cold", "warm"):
            report = Path(cache) / f"{label}.json"
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "checks.cli", "run", "ih", "--json", str(report)], env=env,
                                  capture_output=True, text=True)
            seconds.append(time.perf_counter() - start)
            if done.returncode != 0:
                raise RuntimeError(f"tdcheck run ih ({label}) exited with {done.returncode}: {done.stderr[-2000:]}")
            counts.append(json.loads(report.read_text())["counts"])
    cold, warm = seconds
    return Result("run-ih", "tdcheck run ih --budget quick", warm, [Peer("cold (empty caches)", cold, cold / warm)],
                  target="< 300 s cold, < 90 s warm", met=bool(cold < 300 and warm < 90),
                  extra={"cold (s)": cold, "warm (s)": warm, "verdicts": counts[-1]})


def sweep_memory(quick: bool = False) -> Result:
    """Peak memory of a 10⁵-point hitting-time sweep of the (h, ln w) flow, streamed in chunks, in a child process."""
    script = HERE / "memory_probe.py"
    points = 10_000 if quick else 100_000
    result = subprocess.run([sys.executable, str(script), str(points)], capture_output=True, text=True, check=True,
                            cwd=HERE)
    reached, seconds, peak_mib = (float(v) for v in result.stdout.strip().splitlines()[-3:])
    return Result("sweep-memory", f"{points}-point hitting-time sweep (run_grid in chunks of 2000, times kept)",
                  seconds, [], target="< 2 GiB", met=bool(peak_mib < 2048),
                  extra={"peak RSS (MiB)": peak_mib, "trajectories/s": points / seconds,
                         "points that reached T_III": int(reached)})


def rl_svm(quick: bool = False) -> Result:
    """Hard-margin SVM on nearly collinear rows, ‖u*‖ up to 1.1e15: certified mpmath vs float64 SciPy."""
    from svm_peer import svm_benchmark

    return svm_benchmark("rl-svm", quick=quick)


#: the co-flow configuration of issue #15: regime B (n = 600, L = 4, d = 1003, m₁ = 8, κ₀ = 0.25, κ₁ = 0.5) at m = 256
CO_FLOW = {"m": 256, "t1": 1000.0, "rtol": 1e-6, "atol": 1e-12, "seed": 0}


def co_flow(quick: bool = False) -> Result:
    """One regime-B trajectory of the word co-occurrence model (θ of 772 552 components) to t = 10³: the core
    integrator on the parallel numba field, observers instead of states, against SciPy RK45 with NumPy."""
    import numba
    from cooccurrence_peer import solve_reference

    from numerics.models.word_cooccurrence import flow as Fl
    from numerics.models.word_cooccurrence import model as Mo
    from numerics.models.word_cooccurrence.data import REGIMES, build_dataset
    from numerics.ode import Tolerance, integrate

    c, r = CO_FLOW, REGIMES["B"]
    (counts,), (d,), (kappa0, kappa1) = r.counts, r.d, r.kappa[0]
    data = build_dataset(counts, r.L, d, c["seed"])
    lay = Mo.layout(c["m"], r.m1, d)
    theta0 = Mo.init_params(c["m"], r.m1, d, kappa0 / math.sqrt(r.L * c["m"]), kappa1 / math.sqrt(r.m1), c["seed"])
    a = Mo.output_weights(r.m1, c["seed"])
    labels = data.labels.astype(float)
    params = Fl.flow_params(lay, data.tokens, labels, a)
    field = Fl.flow_field(lay)
    save = np.logspace(-2, math.log10(c["t1"]), 20)
    out = {}

    def ours():
        out["sol"] = integrate(field, theta0, (0.0, c["t1"]), params, tol=Tolerance(c["rtol"], c["atol"]),
                               save_at=save)
    ours_s = _best(ours, 1 if quick else 3)
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one_thread_s = _best(ours, 1)
    finally:
        numba.set_num_threads(previous)
    start = time.perf_counter()
    ref = solve_reference(lay, theta0, data.tokens, labels, a, c["t1"], c["rtol"], c["atol"], save)
    scipy_s = time.perf_counter() - start
    sol = out["sol"]
    loss = sol.y[:, list(Fl.OBSERVED).index("loss")]
    balance = sol.y[:, list(Fl.OBSERVED).index("value_balance")]
    deviation = float(np.max(np.abs(sol.y_final - ref["y_final"])) / np.max(np.abs(ref["y_final"])))
    peers = [Peer("SciPy solve_ivp RK45, vectorised NumPy rhs", scipy_s, scipy_s / ours_s,
                  f"{ref['nfev']} rhs evaluations; final θ within {deviation:.1e} (relative)"),
             Peer("tdcheck, 1 numba thread", one_thread_s, one_thread_s / ours_s, "")]
    return Result("co-flow", f"regime B, m = {c['m']} ({lay.size} state components), t ∈ [0, {c['t1']:g}], "
                             f"rtol {c['rtol']:g}, atol {c['atol']:g}, 20 observer saves",
                  ours_s, peers, target="≥ 3× SciPy and ≤ 45 s",
                  met=bool(scipy_s / ours_s >= 3 and ours_s <= 45),
                  extra={"steps": sol.n_steps, "rejected": sol.n_rejected, "rhs evaluations": sol.n_rhs,
                         "numba threads": numba.get_num_threads(), "loss at t = 0.01, 10³": [float(loss[0]),
                                                                                            float(loss[-1])],
                         "SciPy loss at 10³": float(ref["loss"][-1]),
                         "drift of ‖W‖² − ‖W_V‖² (conserved)": float(np.max(np.abs(balance - balance[0])))})


#: the batched sweep of issue #16 on one machine with 16 cores and an H100: diffrax (Dopri5, vmap) on the
#: GPU, trajectories per second, the figure a CPU machine is to beat
H100_DIFFRAX_RATE = 2564.0


def _normalised_gap(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> float:
    """max |a − b| / (atol + rtol·|b|) over finite entries: agreement in units of the tolerance."""
    ok = np.isfinite(a) & np.isfinite(b)
    return float(np.max(np.abs(a[ok] - b[ok]) / (atol + rtol * np.abs(b[ok])))) if ok.any() else math.nan


def ih_batch(quick: bool = False) -> Result:
    """The Stage-II sweep of issue #16: (p, g, h, ln w) from random (L, α*, w*, σ), t ∈ [0, 2·10⁴], rtol 1e-8.

    L ∈ {40, 100, 400}, α* ∈ {0.5, 1, 4}, w* ∈ U(0.2, 0.6), σ ∈ 10^U(−4, −2) (:func:`sweep_points`),
    no events. "Before": ``integrate_batch`` with Dormand–Prince and the sums as loops, as every
    sweep ran until now (about 6 100 steps per trajectory), on a subset. "Now": Rodas4P with the
    generated exact Jacobian and the sums of more than 128 terms in closed form, on all points
    (512 per core, 128 at quick). Rates are trajectories per core-second, at one numba
    thread; then the scaling of "now" from 1 thread to all cores, bit-identical final states
    across thread counts, and the gap between the two methods' final states in units of the
    tolerance. Peers: SciPy ``solve_ivp`` (LSODA, the Python right-hand side a researcher would
    write) on a few points, and diffrax on the CPU when JAX is installed.
    """
    import numba
    from ih_flow_reference import rhs_python
    from scipy.integrate import solve_ivp

    from numerics.ode import Tolerance, integrate_batch

    field, loops = _flow_field(), _flow_field(closed_sums=False)
    cores = os.cpu_count() or 1
    n = (128 if quick else 512) * cores
    n_before = 64 if quick else 256
    y0s, params = sweep_points(n, seed=16)
    rtol, atol = 1e-8, 1e-11
    tol = Tolerance(rtol, atol)
    span = (0.0, 2e4)
    available = numba.config.NUMBA_NUM_THREADS
    previous = numba.get_num_threads()
    results, seconds = {}, {}
    try:
        numba.set_num_threads(1)
        integrate_batch(field, y0s[:2], params[:2], span, tol=tol, method="rodas4p")  # compile
        integrate_batch(loops, y0s[:2], params[:2], span, tol=tol)
        start = time.perf_counter()
        before = integrate_batch(loops, y0s[:n_before], params[:n_before], span, tol=tol)
        seconds["before"] = time.perf_counter() - start
        threads = sorted({1, *(t for t in (2, 4, 8, 16, 32, 64) if t <= available), available})
        for t in threads:
            numba.set_num_threads(t)
            start = time.perf_counter()
            results[t] = integrate_batch(field, y0s, params, span, tol=tol, method="rodas4p")
            seconds[t] = time.perf_counter() - start
    finally:
        numba.set_num_threads(previous)
    rate_before = n_before / seconds["before"]
    rate_now = n / seconds[1]
    identical = all(np.array_equal(results[1].y_final, r.y_final, equal_nan=True) for r in results.values())
    gap = _normalised_gap(results[1].y_final[:n_before], before.y_final, rtol, atol)
    n_scipy = 2 if quick else 6
    start = time.perf_counter()
    for y0, (L, alpha, wstar, _) in zip(y0s[:n_scipy], params[:n_scipy], strict=True):
        solve_ivp(rhs_python, span, y0, method="LSODA", rtol=rtol, atol=atol, args=(L, alpha, wstar))
    scipy_rate = n_scipy / (time.perf_counter() - start)
    peers = [Peer("tdcheck before (Dormand–Prince, loops, 1 thread)", 1 / rate_before, rate_now / rate_before,
                  f"{rate_before:.0f} trajectories/s, {np.median(before.n_steps):.0f} steps"),
             Peer("scipy solve_ivp LSODA (Python rhs)", 1 / scipy_rate, rate_now / scipy_rate,
                  f"{scipy_rate:.2f} trajectories/s on {n_scipy} points")]
    try:
        import diffrax  # noqa: F401
        import jax  # noqa: F401

        peers.append(Peer("diffrax (JAX, CPU)", None, None, "installed, but the JAX peer is not written yet"))
    except ImportError:
        peers.append(Peer("diffrax (JAX, CPU)", None, None, "skipped: JAX/diffrax not installed"))
    rates = {t: n / s for t, s in seconds.items() if t != "before"}
    return Result("ih-batch", f"{n} Stage-II trajectories (issue #16 sweep), seconds per trajectory on one core",
                  1 / rate_now, peers, target="≥10× the Dormand–Prince path per core-second, final states within tolerance",
                  met=bool(rate_now >= 10 * rate_before and gap <= 10),
                  extra={"trajectories/s per core (now, 1 thread)": round(rate_now, 1),
                         "trajectories/s by threads": {t: round(r, 1) for t, r in rates.items()},
                         "speed-up 1 → all threads": round(rates[max(rates)] / rates[1], 2),
                         "final states identical across thread counts": identical,
                         "max final-state gap, Rodas4P vs Dormand–Prince (units of atol + rtol|y|)": round(gap, 3),
                         "median steps now": float(np.median(results[1].n_steps)),
                         "cores to match the H100 diffrax figure (2564 trajectories/s)":
                             math.ceil(H100_DIFFRAX_RATE / rate_now),
                         "points ok": int(results[1].ok.sum())})


#: the ih inequalities of the certify benchmark: (item builder, inequality id suffix), across items
CERTIFY_INEQUALITIES = (
    ("ih_head.item_w_circ", "w_circ.above_half"),
    ("ih_head.item_w_circ", "w_circ.increasing"),
    ("ih_head.item_R", "R.r_decreasing"),
    ("lyapunov.item_C_properties", "C_properties.C_superadditive"),
    ("lyapunov.item_C_properties", "C_properties.eq17_step2.gamma_R"),
    ("lyapunov.item_lyapunov_uv", "lyapunov_uv.step5.alpha1"),
    ("lyapunov.item_lyapunov_uv", "lyapunov_uv.step6a.alpha4"),
    ("lyapunov.item_lyapunov_vh", "lyapunov_vh.chain2"),
    ("lyapunov.item_lyapunov_vh", "lyapunov_vh.est_phi_upper1"),
    ("four_gram.item_lemma8", "lemma8.corrected_range.upper"),
)


def certify(quick: bool = False) -> Result:
    """Boxes per second of the certifier on ih inequalities: the compiled search vs the arb search alone.

    Each inequality is certified twice on one core: by the arb branch-and-bound alone (the path
    before the compiled search existed; ``compiled=False``, at most 1000 boxes, 300 at quick) and by
    the default path (compiled search of at most 200 000 boxes, 20 000 at quick, every closing box
    re-proven in arb, then the arb search of what it hands on). The rates compared are the arb
    search's boxes over its time and the compiled search's boxes over its time, its arb re-check
    of closing boxes included (``Certificate.search_seconds``, ``compiled_seconds``: building the
    problem, SymPy derivatives and the float pre-filter are the same for both and excluded).
    Ratios > 1: the compiled search is faster per box.
    """
    import importlib

    from checks.certify import certify_inequality

    arb_budget, compiled_budget = (300, 20_000) if quick else (1000, 200_000)
    rows, totals = [], {"compiled": [0, 0.0], "arb": [0, 0.0]}
    for builder, suffix in CERTIFY_INEQUALITIES:
        module, name = builder.split(".")
        item = getattr(importlib.import_module(f"derivations.induction_head.{module}"), name)()
        inequality = next(q for q in item.inequalities if q.id.endswith(suffix))
        integers = {sym: 40 for sym in inequality.domain.integers}
        arb = certify_inequality(inequality, integers=integers, compiled=False, arb_boxes=arb_budget,
                                 time_limit=600)
        fast = certify_inequality(inequality, integers=integers, max_boxes=compiled_budget, arb_boxes=arb_budget,
                                  time_limit=600)
        totals["arb"][0] += arb.n_boxes
        totals["arb"][1] += arb.search_seconds
        totals["compiled"][0] += fast.compiled_boxes
        totals["compiled"][1] += fast.compiled_seconds
        rows.append({"inequality": inequality.id, "arb path": f"{arb.status}, {arb.n_boxes} boxes, "
                     f"{arb.n_boxes / max(arb.search_seconds, 1e-9):.0f}/s",
                     "default path": f"{fast.status}, {fast.compiled_boxes} compiled boxes "
                     f"({fast.compiled_boxes / max(fast.compiled_seconds, 1e-9):.0f}/s) + {fast.arb_boxes} arb "
                     f"boxes, {fast.search_seconds:.2f} s in all"})
    rate = {k: n / t for k, (n, t) in totals.items()}
    ratio = rate["compiled"] / rate["arb"]
    peers = [Peer("arb branch-and-bound (compiled=False)", 1 / rate["arb"], ratio,
                  f"{rate['arb']:.0f} boxes/s")]
    return Result("certify", f"{len(rows)} ih inequalities, seconds per box (compiled: {rate['compiled']:.0f} boxes/s)",
                  1 / rate["compiled"], peers, target="≥50× boxes/s, ≥20 000 boxes/s",
                  met=bool(ratio >= 50 and rate["compiled"] >= 20_000),
                  extra={"boxes/s (compiled search, re-check included)": round(rate["compiled"]),
                         "boxes/s (arb path)": round(rate["arb"]), "per inequality": rows})


BENCHMARKS = {
    "ih-flow": ih_flow,
    "ih-sweep": ih_sweep,
    "ih-batch": ih_batch,
    "ih-mc": ih_mc,
    "ih-sgd": ih_sgd,
    "rl-gd": rl_gd,
    "ss-sgd": ss_sgd,
    "co-flow": co_flow,
    "compile": compile_times,
    "sweep-memory": sweep_memory,
    "run-ih": run_ih,
    "rl-svm": rl_svm,
    "certify": certify,
}
