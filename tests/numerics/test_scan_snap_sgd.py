"""ss SGD, levels (i) and (ii): batch gradient, NumPy peer bit for bit, threads, seeds, draws, row sums, errors.

The peer is ``benchmarks/scan_snap_peer.py`` (``exact=True``: NumPy in the kernel's order of operations, with the
kernel's exp and the C library's log), fed the same batches through ``BatchSampler.draw``.
"""

import importlib.util
import math
import types
from pathlib import Path

import numba
import numpy as np
import pytest
from hypothesis import example, given, note, settings
from hypothesis import strategies as st
from scipy import stats

from derivations.errors import InvalidArgument
from numerics.models.scan_snap.data import layout
from numerics.models.scan_snap.model import gradient_counts
from numerics.models.scan_snap.sgd import SCHEDULES, BatchSampler, batch_gradient, exp_nonpositive, train_ss


def _load_peer():
    path = Path(__file__).parents[2] / "benchmarks" / "scan_snap_peer.py"
    spec = importlib.util.spec_from_file_location("scan_snap_peer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


peer = _load_peer()
LAYOUTS = ("synsmall.code", "synsmall.shared_last", "K3_shared", "asym_2ct")


@settings(deadline=None, max_examples=60)
@given(st.lists(st.floats(-800.0, 0.0), min_size=1, max_size=300), st.floats(-50.0, 50.0))
@example([0.0, -1e-300, -708.39, -708.4, -745.13, -745.14, -746.0, -800.0], 0.0)
def test_kernel_exp_is_within_one_ulp_and_its_numpy_twin_is_identical(xs, shift):
    """The kernel's e^{x − shift} is within 1 ulp of the C library's, subnormals included; its NumPy twin is equal."""
    x = np.array(xs) + shift
    out, bits = np.empty(x.size), np.empty(x.size, dtype=np.int64)
    exp_nonpositive(x, shift, out, bits, x.size)
    exact = np.array([math.exp(v - shift) for v in x])
    assert np.all(np.abs(out - exact) <= np.spacing(np.maximum(exact, 5e-324)))
    assert np.array_equal(out, peer.exp_nonpositive(x, shift))


@st.composite
def configurations(draw):
    """A small run: layout, T (∞ = level (ii)), batch, schedule, z_index, init, rates, seed."""
    return {
        "layout": draw(st.sampled_from(LAYOUTS)),
        "T": draw(st.sampled_from([2, 3, 17, 128, math.inf])),
        "batch": draw(st.integers(1, 40)),
        "class_schedule": draw(st.sampled_from(SCHEDULES)),
        "key_query": draw(st.booleans()),
        "init": draw(st.sampled_from(["zero", "torch_uniform"])),
        "etaZ": draw(st.sampled_from([0.0, 0.5, 3.0])),
        "etaY": draw(st.sampled_from([0.5, 1.0, 30.0])),
        "seed": draw(st.integers(0, 2**32)),
    }


@settings(deadline=None, max_examples=15)  # each example loops over its batch in Python (40 took 16 s cold)
@given(configurations(), st.integers(0, 50), st.sampled_from([0.0, 0.3, 2.0]))
@example({"layout": "synsmall.code", "T": 128, "batch": 128, "class_schedule": "iid_uniform", "key_query": False,
          "init": "zero", "etaZ": 1.0, "etaY": 10.0, "seed": 0}, 0, 1.0)
def test_kernel_batch_gradient_is_the_mean_of_per_sample_gradients(config, step, scale):
    """The kernel's batch gradient = mean over the drawn batch of the model's per-sample ``gradient_counts``."""
    sampler = BatchSampler.build(config["layout"], T=config["T"], batch=config["batch"], seed=config["seed"],
                                 class_schedule=config["class_schedule"])
    M, key_query = sampler.M, config["key_query"]
    rng = np.random.default_rng(config["seed"])
    Y, Z = scale * rng.standard_normal((M, M)), scale * rng.standard_normal((M, M))
    J, gY, gZ = batch_gradient(sampler, Y, Z, step=step, key_query=key_query)
    classes, counts = sampler.draw(step)
    mean_J, mean_Y, mean_Z = 0.0, np.zeros((M, M)), np.zeros((M, M))
    one_Y, one_Z = np.zeros((M, M)), np.zeros((M, M))
    for b, n in enumerate(classes):
        N = sampler.P[n] if counts is None else counts[b]
        mean_J += gradient_counts(Y, Z, N, sampler.psi[n], sampler.next_token[n], key_query, one_Y, one_Z)
        mean_Y += one_Y
        mean_Z += one_Z
    B = classes.size
    mean_J, mean_Y, mean_Z = mean_J / B, mean_Y / B, mean_Z / B
    scale_g = max(1.0, np.abs(mean_Y).max(), np.abs(mean_Z).max())
    note(f"max |ΔY| = {np.abs(gY - mean_Y).max():.3g}, max |ΔZ| = {np.abs(gZ - mean_Z).max():.3g}")
    assert abs(J - mean_J) <= 1e-12 * max(1.0, abs(mean_J))
    assert np.abs(gY - mean_Y).max() <= 1e-13 * scale_g
    assert np.abs(gZ - mean_Z).max() <= 1e-13 * scale_g


def _runs(config, steps, optimizer, **extra):
    kwargs = {**config, "steps": steps, "optimizer": optimizer, "momentum": 0.9}
    ours = train_ss(**kwargs, **extra)
    return ours, peer.train_reference(**kwargs, exact=True)


@settings(deadline=None, max_examples=30)
@given(configurations(), st.integers(1, 6), st.sampled_from(["sgd", "momentum"]))
@example({"layout": "synsmall.code", "T": 128, "batch": 40, "class_schedule": "iid_uniform", "key_query": True,
          "init": "torch_uniform", "etaZ": 3.0, "etaY": 30.0, "seed": 7}, 6, "momentum")
def test_sgd_and_momentum_runs_equal_the_numpy_peer_bit_for_bit(config, steps, optimizer):
    """Same batches, same θ(0): the final (Y, Z) of train_ss and of the NumPy peer are identical."""
    ours, ref = _runs(config, steps, optimizer)
    assert np.array_equal(ours.meta["Y"], ref["Y"]) and np.array_equal(ours.meta["Z"], ref["Z"])
    assert np.allclose(ours.meta["batch_objective"], ref["objective"], rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("class_schedule", ["iid_uniform", "single_class"])
def test_fig6_layout_runs_equal_the_numpy_peer_bit_for_bit(class_schedule):
    """Syn-Medium (K = 20, M = 240; the benchmark's layout): rows in every class's support and rows in one, and
    (single_class) more samples of a class than one chunk of the kernel holds; the blocked sums are the peer's."""
    config = {"layout": "synmedium.10", "T": 128, "batch": 24, "class_schedule": class_schedule, "key_query": False,
              "init": "torch_uniform", "etaZ": 3.0, "etaY": 30.0, "seed": 11}
    ours, ref = _runs(config, 2, "momentum")
    assert np.array_equal(ours.meta["Y"], ref["Y"]) and np.array_equal(ours.meta["Z"], ref["Z"])


@settings(deadline=None, max_examples=10)
@given(configurations(), st.integers(1, 6))
def test_adam_runs_equal_the_numpy_peer_to_rounding(config, steps):
    """Adam agrees to rounding: the bias corrections β**t may come from different pow routines (numba's LLVM
    intrinsic, CPython's float power). On glibc both call the C library and the runs have been bit-identical."""
    ours, ref = _runs(config, steps, "adam")
    for name in ("Y", "Z"):
        assert np.allclose(ours.meta[name], ref[name], rtol=1e-12, atol=1e-12 * max(1.0, config["etaY"]))


def test_runs_are_identical_at_one_and_all_threads_and_reproducible_by_seed():
    """Phase 1 is per sample and phase 2 adds in sample order: the thread count changes nothing; the seed is all."""
    kwargs = {"T": 128, "batch": 96, "steps": 12, "etaY": 10.0, "etaZ": 1.0, "optimizer": "momentum",
              "init": "torch_uniform"}
    previous = numba.get_num_threads()
    runs = {}
    try:
        for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(threads)
            runs[threads] = train_ss("synsmall.code", seed=5, **kwargs)
    finally:
        numba.set_num_threads(previous)
    first, *others = runs.values()
    again = train_ss("synsmall.code", seed=5, **kwargs)
    other = train_ss("synsmall.code", seed=6, **kwargs)
    spawned = train_ss("synsmall.code", seed=np.random.SeedSequence(5), **kwargs)
    for run in [*others, again, spawned]:
        assert np.array_equal(run.meta["theta"], first.meta["theta"])
        assert np.array_equal(run.meta["batch_objective"], first.meta["batch_objective"])
    assert not np.array_equal(other.meta["theta"], first.meta["theta"])
    live = train_ss("synsmall.code", seed=5, states="live", **kwargs)  # the driver's blocks: live rows only
    rows, queries = live.meta["live"]["Y_rows"], live.meta["live"]["Z_queries"]
    assert np.array_equal(live["Y_live"][-1], first["Y"][-1][rows])
    assert np.array_equal(live["Z_live"][-1], first["Z"][-1][queries])


def _binomial_chi2(observed_values, n, p):
    """χ² p-value of integer samples against Binomial(n, p), bins merged until each expects >= 5."""
    pmf = stats.binom.pmf(np.arange(n + 1), n, p) * observed_values.size
    counts = np.bincount(observed_values, minlength=n + 1).astype(float)
    edges, acc = [], 0.0
    for k in range(n + 1):
        acc += pmf[k]
        if acc >= 5:
            edges.append(k + 1)
            acc = 0.0
    edges[-1] = n + 1
    groups = np.split(np.arange(n + 1), edges[:-1])
    exp = np.array([pmf[g].sum() for g in groups])
    obs = np.array([counts[g].sum() for g in groups])
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


def test_counts_are_multinomial_and_classes_follow_the_schedule():
    """Pooled counts per class pass χ² against (T−1)·ℙ(·|n); one token's counts pass χ² against Binomial(T−1, p);
    every row sums to T − 1 with zeros off the support; classes: uniform (χ²), cyclic, or class 0."""
    T, batch, steps = 128, 64, 40
    sampler = BatchSampler.build("K3_shared", T=T, batch=batch, seed=11)
    draws = [sampler.draw(s) for s in range(steps)]
    classes = np.concatenate([c for c, _ in draws])
    counts = np.concatenate([n for _, n in draws])
    assert np.all(counts.sum(axis=1) == T - 1)
    assert np.all(counts[sampler.P[classes] == 0] == 0)
    assert stats.chisquare(np.bincount(classes, minlength=sampler.K)).pvalue > 1e-4
    for n in range(sampler.K):
        mine = counts[classes == n]
        support = sampler.P[n] > 0
        pooled = mine.sum(axis=0)[support]
        expected = sampler.P[n][support] * mine.shape[0] * (T - 1)
        assert stats.chisquare(pooled, expected).pvalue > 1e-4
        l = int(np.argmax(sampler.P[n]))
        assert _binomial_chi2(mine[:, l], T - 1, sampler.P[n, l]) > 1e-4
    robin = BatchSampler.build("K3_shared", T=T, batch=5, seed=11, class_schedule="round_robin")
    assert np.array_equal(robin.draw(3)[0], (np.arange(15, 20)) % 3)
    single = BatchSampler.build("K3_shared", T=math.inf, batch=5, seed=11, class_schedule="single_class")
    classes, counts = single.draw(2)
    assert np.all(classes == 0) and counts is None


def _row_sum_drift(run):
    drift = 0.0
    for name in ("Y", "Z"):
        sums = run[name].sum(axis=2)  # (n_log, M): row sums at every logged step
        drift = max(drift, float(np.abs(sums - sums[0]).max()))
    return drift


@pytest.mark.parametrize("T", [128, math.inf])
def test_row_sums_stay_at_their_initial_values_under_sgd_and_momentum(T):
    """ss.sec3_2.row_sum: Ẏ1 = Ż1 = 0, so under SGD and momentum every row sum of Y and Z keeps its initial value
    (to float accumulation: the raw drift, never re-centred); Adam's per-coordinate scaling breaks it."""
    kwargs = {"T": T, "batch": 64, "steps": 30, "etaY": 10.0, "etaZ": 1.0, "seed": 3, "log": 1}
    drifts = {}
    for init in ("zero", "torch_uniform"):
        for optimizer in ("sgd", "momentum"):
            run = train_ss("K3_own", optimizer=optimizer, init=init, **kwargs)
            scale = max(1.0, float(np.abs(run["Y"]).max()), float(np.abs(run["Z"]).max()))
            drift = _row_sum_drift(run)
            drifts[f"{optimizer}, {init}"] = drift
            assert drift <= 1e-12 * scale, (optimizer, init, drift, scale)
    adam = train_ss("K3_own", optimizer="adam", init="torch_uniform", **{**kwargs, "etaY": 0.1, "etaZ": 0.1})
    drifts["adam, torch_uniform"] = _row_sum_drift(adam)
    assert drifts["adam, torch_uniform"] > 1e-3, drifts  # an Adam step moves each coordinate by ≈ rate; no cancellation


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"layout": types.SimpleNamespace(name="tiny", P=np.ones((1, 1)), psi=(0,), next_token=(0,))},
         r"M=1 must be >= 2"),
        ({"layout": types.SimpleNamespace(name="wide", P=np.full((3, 2), 0.5), psi=(0, 0, 1),
                                          next_token=(0, 1, 1))}, r"K=3 must be <= M=2"),
        ({"layout": "synsmall.nope"}, r"unknown ss layout 'synsmall.nope'"),
        ({"T": 1}, r"T=1 must be an integer >= 2 .* or math.inf"),
        ({"T": 12.5}, r"T=12.5 must be an integer >= 2"),
        ({"batch": 0}, r"batch=0 must be an integer >= 1"),
        ({"steps": -1}, r"steps=-1 must be an integer >= 0"),
        ({"optimizer": "rmsprop"}, r"optimizer='rmsprop' is not one of sgd, momentum, adam"),
        ({"init": "normal"}, r"init='normal' is not one of zero, torch_uniform"),
        ({"class_schedule": "random"}, r"class_schedule='random' is not one of iid_uniform, round_robin, single_cl"),
        ({"etaY": -1.0}, r"etaY=-1.0 must be a finite rate >= 0"),
        ({"etaZ": math.nan}, r"etaZ=nan must be a finite rate >= 0"),
        ({"momentum": -0.5}, r"momentum=-0.5 must be a finite number >= 0"),
        ({"key_query": "yes"}, r"key_query='yes' must be a bool"),
        ({"states": "half"}, r"states='half' is not one of full, live"),
        ({"seed": -1}, r"seed=-1"),
    ],
)
def test_bad_input_is_refused_by_name(change, match):
    """Every bad argument is refused before any step, naming the parameter, the rule and the value."""
    kwargs = {"layout": layout("synsmall.code"), "T": 8, "batch": 4, "steps": 2, "etaY": 1.0, "etaZ": 1.0,
              "optimizer": "momentum"} | change
    with pytest.raises(InvalidArgument, match=match):
        train_ss(**kwargs)
