"""The driver's compiled loop (``numerics.train.CompiledGradient``) and the regular-language GD schedules.

The compiled loop must be the Python loop bit for bit: same iterates, trajectory, record and
errors, for every update rule it runs, across phase switches, with frozen and ascending groups,
whatever the logging. The schedule readings are checked against a literal transcription of
spec §10's ``gd`` on the model's own gradient, and the first step from zero against −η∇L(0).
"""

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations.errors import InvalidArgument, NumericalTrouble
from numerics._jit import jit
from numerics.models.regular_language import RLModel, cot_data, ep_data
from numerics.models.regular_language.gd import (
    BOOST_STEPS,
    SCHEDULES,
    boosted_updates,
    compiled_gradient,
    gd_groups,
    run_gd,
    w_schedule,
)
from numerics.optim import GD, Adam, Momentum
from numerics.train import PARALLEL_SIZE, CompiledGradient, LogSchedule, ParamGroup, Schedule, train


@jit
def quadratic(theta, grad, A, b):
    """L = ½θᵀAθ − bᵀθ, ∇L = Aθ − b."""
    loss = 0.0
    for i in range(theta.shape[0]):
        g = -b[i]
        for j in range(theta.shape[0]):
            g += A[i, j] * theta[j]
        grad[i] = g
        loss += theta[i] * (0.5 * (g - b[i]))
    return loss


@jit
def identity_gradient(theta, grad):
    """∇L = θ with a constant (finite) loss: only the parameters can fail."""
    for i in range(theta.shape[0]):
        grad[i] = theta[i]
    return 0.0


@jit
def blows_up_loss(theta, grad, threshold):
    """∇L = θ, and a loss that is +inf once θ_0 falls below ``threshold``."""
    for i in range(theta.shape[0]):
        grad[i] = theta[i]
    return math.inf if theta[0] < threshold else 0.5 * theta[0] * theta[0]


def _python(gradient: CompiledGradient):
    """Wrap the kernel as an ordinary gradient, so that the driver runs its Python loop."""
    return lambda theta, batch: gradient(theta, batch)


def _same_run(a, b):
    assert a.meta["loop"] == "compiled" and b.meta["loop"] == "python"
    assert np.array_equal(a.t, b.t) and np.array_equal(a.steps, b.steps)
    assert a.states.keys() == b.states.keys() and a.observables.keys() == b.observables.keys()
    for name in [*a.states, *a.observables]:
        assert np.array_equal(a[name], b[name]), name
    assert np.array_equal(a.meta["theta"], b.meta["theta"])
    drop = {"wall_time_s", "loop", "theta", "seed"}  # seed: fresh entropy when none is given (unused here)
    meta_a, meta_b = ({k: v for k, v in run.meta.items() if k not in drop} for run in (a, b))
    assert meta_a == meta_b


# ---- the compiled loop is the Python loop -------------------------------------------------------


@st.composite
def quadratic_runs(draw):
    n = draw(st.integers(2, 7))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    M = rng.normal(size=(n, n))
    A = M @ M.T / n + 0.1 * np.eye(n)
    b = rng.normal(size=n)
    theta0 = rng.normal(size=n)
    steps = draw(st.integers(0, 60))
    cut = draw(st.integers(1, n - 1))
    switch = draw(st.integers(1, 40))
    frozen = draw(st.booleans())
    groups = [ParamGroup("a", slice(0, cut), Schedule.phases([(switch, 0.3), (None, 0.05)]),
                         sign=draw(st.sampled_from([1, -1])))]
    if not frozen:
        groups.append(ParamGroup("b", slice(cut, n), Schedule.phases([(draw(st.integers(1, 30)), 0.0),
                                                                      (None, 0.1)])))
    optimizer = draw(st.sampled_from([GD(), Momentum(0.9), Momentum(0.5, dampening=0.1, weight_decay=0.01),
                                      Momentum(0.8, nesterov=True), Adam(), Adam((0.8, 0.9), 1e-6, 0.02)]))
    log = draw(st.one_of(st.none(), st.integers(1, 25),
                         st.builds(LogSchedule, geometric=st.integers(1, 8), at=st.just((0,)))))
    return CompiledGradient(quadratic, (A, b)), theta0, steps, groups, optimizer, log


@settings(deadline=None, max_examples=40)
@given(quadratic_runs())
def test_compiled_loop_is_the_python_loop_bit_for_bit(case):
    gradient, theta0, steps, groups, optimizer, log = case
    observers = {"loss": lambda theta: gradient(theta)[0], "norm": lambda theta: float(np.linalg.norm(theta))}
    runs = [train(theta0, g, groups=groups, optimizer=optimizer, steps=steps, log=log, observers=observers)
            for g in (gradient, _python(gradient))]
    _same_run(*runs)
    if len(groups) == 1:  # coordinates outside every group never move
        assert np.array_equal(runs[0].meta["theta"][groups[0].indices(theta0.size).size:],
                              theta0[groups[0].indices(theta0.size).size:])


@pytest.mark.parametrize("optimizer", [GD(), Momentum(0.9), Adam()], ids=["gd", "momentum", "adam"])
@pytest.mark.parametrize("boost_steps", BOOST_STEPS)
def test_rl_runs_agree_across_the_phase_switch(optimizer, boost_steps):
    """Both phases, the switch at t0 inside a compiled block (only steps 0 and 12 are logged)."""
    model = RLModel(ep_data(4), 2.0)
    groups = gd_groups(model, 0.1, 5, boost_steps=boost_steps)
    cg = compiled_gradient(model)
    for log in ([12], 1):
        runs = [train(model.zeros(), g, groups=groups, optimizer=optimizer, steps=12, log=log,
                      observers={"loss": model.loss})
                for g in (cg, model.gradient)]
        _same_run(*runs)


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("boost_steps", BOOST_STEPS)
def test_run_gd_compiled_equals_python_loop(schedule, boost_steps):
    data = cot_data(3)
    runs = [run_gd(data, 3.0, 0.05, 4, 30, schedule=schedule, boost_steps=boost_steps, log=3, compiled=c)
            for c in (True, False)]
    _same_run(*runs)
    assert runs[0]["W"].shape == (11, data.dim, data.dim) and runs[0]["u"].shape == (11, data.dim)
    assert runs[0].meta["reading"] == {"schedule": schedule, "boost_steps": boost_steps}


def test_a_frozen_group_stays_bit_identical():
    """W frozen at a trained W_{t0} (G_FROZEN's dynamics), u trained: compiled = Python, W untouched."""
    model = RLModel(ep_data(5), 2.0)
    start = run_gd(model.data, 2.0, 0.1, 20, 20, log=[20]).meta["theta"]
    groups = [ParamGroup("u", model.u_slice, 0.1), ParamGroup("W", model.W_slice, 0.0)]
    runs = [train(start, g, groups=groups, optimizer="gd", steps=500, log=LogSchedule(geometric=7))
            for g in (compiled_gradient(model), model.gradient)]
    _same_run(*runs)
    assert np.array_equal(runs[0]["W"][-1], start[model.W_slice])
    assert not np.array_equal(runs[0]["u"][-1], start[model.u_slice])


@jit
def diagonal_quadratic(theta, grad, a, b):
    """L = ½Σ a_i θ_i² − bᵀθ, ∇L = a∘θ − b: a cheap gradient for a large θ."""
    loss = 0.0
    for i in range(theta.shape[0]):
        grad[i] = a[i] * theta[i] - b[i]
        loss += theta[i] * (0.5 * grad[i] - 0.5 * b[i])
    return loss


@pytest.mark.parametrize(
    "optimizer",
    [GD(), Momentum(0.9), Momentum(0.5, dampening=0.1, weight_decay=0.01),
     Momentum(0.8, nesterov=True), Adam(), Adam((0.8, 0.9), 1e-6, 0.02)],
    ids=["gd", "momentum", "momentum-damped", "nesterov", "adam", "adam-wd"],
)
def test_a_large_theta_is_updated_in_parts_bit_for_bit(optimizer):
    """From PARALLEL_SIZE coordinates the compiled loop applies the rule in parts, one per thread: the
    same iterates as the Python loop (one piece), with a frozen group, ascent and a phase switch."""
    n = PARALLEL_SIZE + 1001
    rng = np.random.default_rng(7)
    a, b, theta0 = rng.uniform(0.5, 2.0, n), rng.normal(size=n), rng.normal(size=n)
    cut = n // 3
    groups = [ParamGroup("x", slice(0, cut), Schedule.phases([(3, 0.05), (None, 0.1)])),
              ParamGroup("y", slice(cut, n - 50), 0.02, sign=-1), ParamGroup("z", slice(n - 50, n), 0.0)]
    runs = [train(theta0, g, groups=groups, optimizer=optimizer, steps=8, log=[4])
            for g in (CompiledGradient(diagonal_quadratic, (a, b)),
                      _python(CompiledGradient(diagonal_quadratic, (a, b))))]
    _same_run(*runs)
    assert np.array_equal(runs[0]["z"][-1], theta0[n - 50:])


@jit
def scaled_identity(theta, grad, c):
    """∇L = c∘θ with a constant (finite) loss: only the parameters can fail."""
    for i in range(theta.shape[0]):
        grad[i] = c[i] * theta[i]
    return 0.0


def test_the_first_non_finite_coordinate_of_a_large_theta_is_found_across_the_parts():
    """θ_5 (first part) and θ_{n−3} (last part) overflow at the same update: the compiled loop, which
    updates in parts, names θ_5, as the Python loop does."""
    n = PARALLEL_SIZE + 64
    c = np.ones(n)
    c[[5, n - 3]] = -1e300  # θ_i ← θ_i(1 + 5e299): 5e299, then inf at the second update
    messages = _messages(CompiledGradient(scaled_identity, (c,)), theta0=np.ones(n),
                         groups=[ParamGroup("x", slice(None), 0.5)], optimizer=GD(), steps=3, log=[3])
    assert messages[0] == messages[1]
    assert "non-finite at step 2: state 'x' (theta[5]=inf) in group 'x'" in messages[0]


def test_an_unknown_rule_runs_the_python_loop_on_the_kernel():
    class Halved(GD):
        def update(self, theta, grad, lr, sign, state):
            return super().update(theta, 0.5 * grad, lr, sign, state)

    cg = CompiledGradient(quadratic, (np.eye(2), np.ones(2)))
    traj = train(np.zeros(2), cg, groups=[ParamGroup("x", slice(None), 0.5)], optimizer=Halved(), steps=1)
    assert traj.meta["loop"] == "python" and traj.meta["theta"].tolist() == [0.25, 0.25]


# ---- the paper's schedules ---------------------------------------------------------------------


@pytest.mark.parametrize("data", [ep_data(6), cot_data(4, reg_max_len="L0")], ids=["ep6", "cot4-L0"])
def test_the_compiled_gradient_is_the_models_gradient(data):
    model = RLModel(data, 1.5)
    theta = np.random.default_rng(3).normal(size=model.size)
    loss, grad = compiled_gradient(model)(theta)
    want_loss, want_grad = model.gradient(theta)
    assert loss == want_loss and np.array_equal(grad, want_grad)



def _gd_section10(model: RLModel, eta, t0, steps, schedule, boost_steps):
    """Spec §10's ``gd`` verbatim, on the model's gradient."""
    lam = model.lam
    u, W = np.zeros(model.d), np.zeros((model.d, model.d))
    for t in range(steps):
        _, grad = model.gradient(model.join(u, W))
        gu, gW = grad[: model.d], grad[model.d:].reshape(model.d, model.d)
        if schedule == "two_phase":
            boosted = (t < t0) if boost_steps == "t_lt_t0" else (t <= t0)
            fW = lam if boosted else 1.0
        elif schedule == "vanilla_eta":
            fW = 1.0
        else:
            fW = lam
        u = u - eta * gu
        W = W - eta * fW * gW
    return model.join(u, W)


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("boost_steps", BOOST_STEPS)
def test_schedules_are_section10_gd_bit_for_bit(schedule, boost_steps):
    data, lam, eta, t0, steps = ep_data(5), 7.0, 0.1, 6, 15
    traj = run_gd(data, lam, eta, t0, steps, schedule=schedule, boost_steps=boost_steps, log=1)
    model = RLModel(data, lam)
    for k in (0, 1, t0, t0 + 1, t0 + 2, steps):
        assert np.array_equal(np.concatenate([traj["u"][k], traj["W"][k].reshape(-1)]),
                              _gd_section10(model, eta, t0, k, schedule, boost_steps)), k


def test_the_boost_readings_differ_exactly_at_update_t0():
    """t_lt_t0 and t_le_t0: identical through θ_{t0}, different from θ_{t0+1} on (W only at that step)."""
    t0 = 4
    a, b = (run_gd(ep_data(4), 5.0, 0.1, t0, 10, boost_steps=r, log=1) for r in BOOST_STEPS)
    for k in range(t0 + 1):
        assert np.array_equal(a["W"][k], b["W"][k]) and np.array_equal(a["u"][k], b["u"][k])
    assert np.array_equal(a["u"][t0 + 1], b["u"][t0 + 1])
    assert not np.array_equal(a["W"][t0 + 1], b["W"][t0 + 1])
    assert a.meta["boosted_W_updates"] == t0 and b.meta["boosted_W_updates"] == t0 + 1
    assert w_schedule(0.1, 5.0, t0).info() == [[t0, 0.1 * 5.0], [None, 0.1]]
    assert w_schedule(0.1, 5.0, 0).info() == [[None, 0.1]]  # t_lt_t0 with t0 = 0: no boosted update
    assert w_schedule(0.1, 5.0, None, "vanilla_etalambda").info() == [[None, 0.1 * 5.0]]
    assert boosted_updates(None, "vanilla_eta") == 0 and boosted_updates(3, "vanilla_etalambda") is None


def test_first_step_from_zero_is_minus_eta_grad():
    """Known answer: θ_1 = −(η, ηλ)∘∇L(0) exactly; ∇_W L(0) = 0, so W_1 = 0; u_1 = η/4 on E_1^a, E_1^b.

    The last is the proof of Lemma B.2 (⟨u_1, E_1^w⟩ = η/4, ⟨u_1, E_ℓ^w⟩ = 0 for ℓ >= 2), to rounding.
    """
    data, lam, eta = ep_data(6), 2.0, 0.1
    model = RLModel(data, lam)
    _, grad = model.gradient(model.zeros())
    traj = run_gd(data, lam, eta, 100, 1, log=[1])
    theta1 = traj.meta["theta"]
    assert np.array_equal(theta1[: model.d], -eta * grad[: model.d])
    assert np.array_equal(theta1[model.d:], -(eta * lam) * grad[model.d:]) and np.all(theta1[model.d:] == 0)
    assert theta1[:2] == pytest.approx([eta / 4, eta / 4], rel=1e-15)
    assert np.all(np.abs(theta1[2 : model.d]) < 1e-17)
    assert traj["loss"][0] == pytest.approx(6 * math.log(2), rel=1e-15)
    assert traj.t.tolist() == [0.0, eta]  # τ = ηt


# ---- failures ----------------------------------------------------------------------------------


def _messages(gradient, **kwargs) -> list[str]:
    out = []
    for g in (gradient, _python(gradient)):
        with pytest.raises(NumericalTrouble) as info:
            train(**kwargs, gradient=g)
        out.append(str(info.value))
    return out


def test_non_finite_parameters_name_the_step_and_block_as_the_python_loop_does():
    cg = CompiledGradient(identity_gradient)
    compiled, python = _messages(cg, theta0=np.array([1.0]), groups=[ParamGroup("x", 0, 1001.0)],
                                 optimizer=GD(), steps=500, log=100)
    assert compiled == python
    assert "non-finite at step 103: state 'x'" in compiled
    assert "group 'x', rate 1001.0 at step 102" in compiled


def test_a_non_finite_loss_names_its_step():
    cg = CompiledGradient(blows_up_loss, (0.6,))
    compiled, python = _messages(cg, theta0=np.array([1.0]), groups=[ParamGroup("x", 0, 0.2)], optimizer=GD(),
                                 steps=10, log=[10])
    assert compiled == python and "loss became non-finite at step 3 (loss=inf" in compiled
    assert "'x': 0.512" in compiled  # θ_3 = 0.8³, the parameters before the failed step


def test_run_gd_divergence_is_reported_with_its_step():
    with pytest.raises(NumericalTrouble, match=r"non-finite at step \d+: state '(u|W)'"):
        run_gd(ep_data(3), 1.0, 1e306, 0, 5, schedule="vanilla_etalambda", log=[5])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: CompiledGradient(lambda theta, grad: 0.0), r"kernel=.* must be a numba-compiled function"),
        (lambda: CompiledGradient(quadratic, [np.eye(2)]), r"args=list must be a tuple"),
        (lambda: CompiledGradient(quadratic, (np.eye(2), np.ones(2)))(np.zeros(2), batch=3), r"batch=int"),
        (lambda: train(np.zeros(2), CompiledGradient(quadratic, (np.eye(2), np.ones(2))), data=np.ones(3),
                       groups=[ParamGroup("x", slice(None), 0.1)], optimizer="gd", steps=2),
         r"data=ndarray must be None with a CompiledGradient"),
        (lambda: train(np.zeros(2), CompiledGradient(quadratic, (np.eye(2),)),
                       groups=[ParamGroup("x", slice(None), 0.1)], optimizer="gd", steps=2),
         r"kernel .*quadratic cannot be called as kernel\(theta, grad, \*args\) with args of types "
         r"\(ndarray\)"),
        (lambda: run_gd(ep_data(3), 2.0, 0.1, 2, 5, schedule="vanilla"),
         r"schedule='vanilla' is not a known reading; valid values: two_phase"),
        (lambda: run_gd(ep_data(3), 2.0, 0.1, 2, 5, boost_steps="t<t0"),
         r"boost_steps='t<t0'.*t_lt_t0, t_le_t0"),
        (lambda: run_gd(ep_data(3), 2.0, 0.0, 2, 5), r"eta=0.0 must be a finite real number > 0"),
        (lambda: run_gd(ep_data(3), 2.0, math.nan, 2, 5), r"eta=nan"),
        (lambda: run_gd(ep_data(3), -1.0, 0.1, 2, 5), r"lam=-1.0 must be finite and > 0"),
        (lambda: run_gd(ep_data(3), 2.0, 0.1, -1, 5), r"t0=-1 must be an integer >= 0"),
        (lambda: run_gd(ep_data(3), 2.0, 0.1, None, 5),
         r"t0=None must be an integer >= 0 \(schedule='two_phase'"),
        (lambda: run_gd(ep_data(3), 2.0, 0.1, 2.5, 5), r"t0=2.5"),
        (lambda: run_gd(ep_data(3), 2.0, 0.1, 2, -3), r"steps=-3 must be an integer >= 0"),
        (lambda: run_gd(ep_data(3), 2.0, 0.1, 2, 5, sign_zero="0"), r"sign_zero='0'"),
        (lambda: run_gd(ep_data(3), 2.0, 0.1, 2, 5, theta0=np.zeros(3)), r"theta0 has shape \(3,\)"),
        (lambda: run_gd(ep_data(3), 2.0, 0.1, 2, 5, extra_observers={"loss": len}),
         r"extra_observers \['loss'\]"),
    ],
)
def test_bad_input_is_refused_with_its_name(call, message):
    with pytest.raises(InvalidArgument, match=message):
        call()


def test_vanilla_runs_need_no_t0():
    traj = run_gd(ep_data(3), 2.0, 0.1, None, 4, schedule="vanilla_eta", log=[4])
    assert traj.meta["t0"] is None and traj.meta["boosted_W_updates"] == 0 and traj.steps.tolist() == [0, 4]


# ---- speed (measured and printed, not asserted) ------------------------------------------------


def test_twenty_thousand_steps_warm():
    data = ep_data(6)
    run_gd(data, 2.0, 0.1, 100, 10, log=[10])  # compile
    start = time.perf_counter()
    traj = run_gd(data, 2.0, 0.1, 100, 20_000)
    seconds = time.perf_counter() - start
    print(f"\nrun_gd EP L_max=6, 2e4 steps, {len(traj)} logged rows: {seconds:.3f} s "
          f"({20_000 / traj.meta['wall_time_s']:.3g} steps/s in the driver)")
    assert traj["loss"][-1] < 0.01 * traj["loss"][0] and traj["accuracy"][-1] == 1.0
