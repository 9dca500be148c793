"""The one training driver (numerics.train) and the update rules it applies (numerics.optim).

GD is checked as an exact map against (I − ηA)^k θ₀ in rational arithmetic; momentum and Adam
bit for bit against a plain NumPy transcription of PyTorch's documented update rules, and against
torch itself when it is importable (torch re-associates and fuses some products, so there the
agreement is to rounding); groups, phases, ascent, logging, failures, seeds and bad input one by
one; the three ported trainers against runs recorded before the port.
"""

import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, example, given, note
from hypothesis import strategies as st

from derivations.errors import InvalidArgument, NumericalTrouble
from numerics.optim import GD, SGD, Adam, Momentum
from numerics.train import LogSchedule, ParamGroup, Schedule, train

# ---- GD as a map ------------------------------------------------------------------------------


@st.composite
def dyadic_quadratics(draw):
    """(A integer symmetric, m, θ₀ integer, k): with η = 2^-m every iterate is a dyadic rational."""
    n = draw(st.integers(1, 3))
    A = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            A[i, j] = A[j, i] = draw(st.integers(-3, 3))
    m = draw(st.integers(1, 4))
    theta0 = draw(st.lists(st.integers(-8, 8), min_size=n, max_size=n))
    k = draw(st.integers(0, 12))
    return A, m, theta0, k


def _closed_form(A, eta: Fraction, theta0, k):
    """(I − ηA)^k θ₀ in exact rational arithmetic, by matrix powers."""
    n = len(theta0)
    M = [[Fraction(int(i == j)) - eta * Fraction(int(A[i, j])) for j in range(n)] for i in range(n)]
    power = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    for _ in range(k):
        power = [[sum(power[i][r] * M[r][j] for r in range(n)) for j in range(n)] for i in range(n)]
    return [sum(power[i][j] * theta0[j] for j in range(n)) for i in range(n)]


def _fits_double(A, m, theta0, k) -> bool:
    """True when every θ_j, every partial sum of Aθ_j and every update is exact in float64."""
    theta = [Fraction(x) for x in theta0]
    eta = Fraction(1, 2**m)
    for j in range(k + 1):
        scale = 2 ** (m * (j + 1))  # all these numbers are multiples of 2^{-m(j+1)}
        sums = [sum(abs(Fraction(int(a))) * abs(x) for a, x in zip(row, theta, strict=True)) for row in A]
        if max([*sums, *map(abs, theta)]) * scale >= 2**52:
            return False
        theta = [
            x - eta * sum(Fraction(int(a)) * y for a, y in zip(row, theta, strict=True))
            for x, row in zip(theta, A, strict=True)
        ]
    return True


@given(dyadic_quadratics())
@example((np.array([[3.0, 1.0], [1.0, 3.0]]), 3, [1, -2], 12))
def test_gd_is_exactly_the_map_I_minus_eta_A_to_the_k(case):
    A, m, theta0, k = case
    assume(_fits_double(A, m, theta0, k))
    eta = Fraction(1, 2**m)
    traj = train(
        np.array(theta0, dtype=float),
        lambda theta, batch: A @ theta,
        groups=[ParamGroup("x", slice(None), float(eta))],
        optimizer=GD(),
        steps=k,
    )
    assert traj.steps.tolist() == list(range(k + 1))
    for j in range(k + 1):
        assert [Fraction(x) for x in traj["x"][j]] == _closed_form(A, eta, theta0, j)
        assert traj.t[j] == float(eta) * j
    assert traj.meta["data"] == "full-batch" and traj.meta["optimizer"] == {"optimizer": "gd"}


def test_gd_on_a_float_quadratic_is_the_plain_loop_and_near_the_closed_form():
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    eigs = np.array([0.1, 0.5, 1.0, 1.9])
    A = (Q * eigs) @ Q.T
    theta0, eta, k = rng.standard_normal(4), 0.7, 200
    traj = train(
        theta0,
        lambda theta, _: A @ theta,
        groups=ParamGroup("x", slice(None), eta),
        optimizer=SGD(),
        steps=k,
        log=LogSchedule(at=[50]),
    )
    plain = theta0.copy()
    for j in range(k):
        plain = plain - eta * (A @ plain)
        if j + 1 == 50:
            assert np.array_equal(traj["x"][1], plain)
    assert np.array_equal(traj["x"][-1], plain) and np.array_equal(traj.meta["theta"], plain)
    closed = (Q * (1 - eta * eigs) ** k) @ Q.T @ theta0
    np.testing.assert_allclose(plain, closed, atol=1e-13 * np.abs(theta0).max())


# ---- momentum and Adam: PyTorch's documented rules, transcribed -----------------------------------


def _rates(phases, step):
    """The rate of ``step`` under [(n, rate), ..., (None, rate)], written out independently."""
    start = 0
    for n, rate in phases:
        if n is None or step < start + n:
            return rate
        start += n
    raise AssertionError


def reference(theta0, grad_of, steps, groups, rule, hyper):
    """torch.optim.SGD / Adam as documented (maximize first, L2 decay), in NumPy, same order of operations.

    ``groups``: list of (index array, phases, maximize). Coordinates outside every group keep their value.
    """
    theta = theta0.copy()
    buf = m = v = None
    for t in range(1, steps + 1):
        lr = np.zeros(theta.size)
        g = grad_of(theta)
        for index, phases, maximize in groups:
            lr[index] = _rates(phases, t - 1)
            if maximize:
                g[index] = -g[index]
        if hyper.get("weight_decay", 0.0) != 0:
            g = g + hyper["weight_decay"] * theta
        if rule == "momentum":
            mu, tau = hyper["mu"], hyper["dampening"]
            if mu != 0:
                buf = g.copy() if t == 1 else mu * buf + (1.0 - tau) * g
                g = g + mu * buf if hyper["nesterov"] else buf
            step = lr * g
        else:
            b1, b2, eps = hyper["beta1"], hyper["beta2"], hyper["eps"]
            m = (1.0 - b1) * g if t == 1 else b1 * m + (1.0 - b1) * g
            v = (1.0 - b2) * g * g if t == 1 else b2 * v + (1.0 - b2) * g * g
            m_hat = m / (1.0 - b1 ** float(t))
            v_hat = v / (1.0 - b2 ** float(t))
            step = lr * m_hat / (np.sqrt(v_hat) + eps)
        theta = np.where(lr != 0, theta - step, theta)
    return theta


def _problem(seed: int, n: int = 5):
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    A, b = B @ B.T / n + 0.5 * np.eye(n), rng.standard_normal(n)
    return A, b, rng.standard_normal(n)


@st.composite
def momentum_settings(draw):
    nesterov = draw(st.booleans())
    mu = draw(st.sampled_from([0.0, 0.5, 0.9, 0.99])) if not nesterov else draw(st.sampled_from([0.5, 0.9]))
    return {
        "mu": mu,
        "dampening": 0.0 if nesterov else draw(st.sampled_from([0.0, 0.1, 0.5])),
        "nesterov": nesterov,
        "weight_decay": draw(st.sampled_from([0.0, 1e-3, 0.1])),
    }


@st.composite
def group_settings(draw):
    """Two groups over coordinates 0..3 (4 stays outside): phases of rates, one maybe ascending."""
    rate = st.sampled_from([0.0, 0.01, 0.05, 0.1])
    first = [(draw(st.integers(1, 6)), draw(rate)), (None, draw(rate))]
    second = (
        [(None, draw(rate))] if draw(st.booleans()) else [(draw(st.integers(1, 6)), draw(rate)), (None, 0.02)]
    )
    return [(np.array([0, 2]), first, False), (np.array([1, 3]), second, draw(st.booleans()))]


def _groups(spec):
    return [
        ParamGroup(f"g{j}", index, Schedule.phases(phases), sign=-1 if maximize else 1)
        for j, (index, phases, maximize) in enumerate(spec)
    ]


@given(momentum_settings(), group_settings(), st.integers(0, 3))
def test_momentum_is_pytorchs_sgd_bit_for_bit(hyper, spec, seed):
    A, b, theta0 = _problem(seed)

    def grad_of(theta):
        return A @ theta - b

    traj = train(
        theta0,
        lambda theta, _: grad_of(theta),
        groups=_groups(spec),
        optimizer=Momentum(**hyper),
        steps=15,
        log=LogSchedule(),
    )
    expected = reference(theta0, grad_of, 15, spec, "momentum", hyper)
    note(f"driver {traj.meta['theta']!r}\nreference {expected!r}")
    assert np.array_equal(traj.meta["theta"], expected)
    assert traj.meta["theta"][4] == theta0[4]  # outside every group


@given(
    st.sampled_from([(0.9, 0.999, 1e-8), (0.8, 0.9, 1e-6), (0.0, 0.5, 1e-3)]),
    st.sampled_from([0.0, 0.01]),
    group_settings(),
    st.integers(0, 3),
)
def test_adam_is_pytorchs_adam_bit_for_bit(adam, weight_decay, spec, seed):
    A, b, theta0 = _problem(seed)
    beta1, beta2, eps = adam

    def grad_of(theta):
        return A @ theta - b

    traj = train(
        theta0,
        lambda theta, _: grad_of(theta),
        groups=_groups(spec),
        optimizer=Adam((beta1, beta2), eps, weight_decay),
        steps=15,
        log=LogSchedule(),
    )
    hyper = {"beta1": beta1, "beta2": beta2, "eps": eps, "weight_decay": weight_decay}
    assert np.array_equal(traj.meta["theta"], reference(theta0, grad_of, 15, spec, "adam", hyper))


def _torch_run(torch, theta0, grad_of, steps, spec, make):
    """The same run with torch.optim: one tensor per group, ``maximize`` per group, lr set per step."""
    params = [torch.tensor(theta0[index], dtype=torch.float64) for index, _, _ in spec]
    opt = make(
        [{"params": [p], "maximize": maximize} for p, (_, _, maximize) in zip(params, spec, strict=True)]
    )
    theta = theta0.copy()
    for t in range(steps):
        for group, (_, phases, _) in zip(opt.param_groups, spec, strict=True):
            group["lr"] = _rates(phases, t)
        g = grad_of(theta)
        for p, (index, _, _) in zip(params, spec, strict=True):
            p.grad = torch.tensor(g[index], dtype=torch.float64)
        opt.step()
        for p, (index, _, _) in zip(params, spec, strict=True):
            theta[index] = p.detach().numpy()
    return theta


@pytest.mark.parametrize(
    ("name", "ours", "theirs"),
    [
        ("heavy ball", Momentum(0.9), {"momentum": 0.9}),
        (
            "nesterov + decay",
            Momentum(0.9, nesterov=True, weight_decay=0.01),
            {"momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
        ),
        ("dampened", Momentum(0.5, dampening=0.3), {"momentum": 0.5, "dampening": 0.3}),
        ("adam", Adam((0.9, 0.999), 1e-8), {}),
        (
            "adam + decay",
            Adam((0.8, 0.99), 1e-6, weight_decay=0.05),
            {"betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.05},
        ),
    ],
)
def test_against_torch_itself(name, ours, theirs):
    torch = pytest.importorskip("torch")  # an optional benchmark peer (pip install 'tdcheck[bench]')
    A, b, theta0 = _problem(7)
    spec = [(np.array([0, 2]), [(5, 0.05), (None, 0.02)], False), (np.array([1, 3]), [(None, 0.03)], True)]

    def grad_of(theta):
        return A @ theta - b

    cls = torch.optim.Adam if isinstance(ours, Adam) else torch.optim.SGD
    expected = _torch_run(torch, theta0, grad_of, 40, spec, lambda groups: cls(groups, lr=0.0, **theirs))
    traj = train(
        theta0, lambda theta, _: grad_of(theta), groups=_groups(spec), optimizer=ours, steps=40, log=40
    )
    # torch fuses θ − η·g into one rounding (fmadd) and re-associates Adam's last line: rounding, not bits
    np.testing.assert_allclose(traj.meta["theta"], expected, rtol=1e-13, atol=1e-15)


# ---- groups, phases, ascent -------------------------------------------------------------------


def test_a_frozen_group_stays_bit_identical_and_rates_switch_at_the_right_step():
    # L = Σ θ_i (gradient 1 everywhere): every update moves a coordinate by exactly its rate
    theta0 = np.array([1.0, -0.0, 2.0, 5.0])
    groups = [
        ParamGroup("w", [0], Schedule.phases([(3, 0.5), (None, 0.25)])),
        ParamGroup("late", 1, Schedule.phases([(4, 0.0), (2, 1.0), (None, 0.0)])),
        ParamGroup("off", 2, 0.0),
    ]
    traj = train(theta0, lambda theta, _: np.ones(4), groups=groups, optimizer=GD(), steps=8)
    k = np.arange(9)
    assert traj["w"][:, 0].tolist() == (1.0 - 0.5 * np.minimum(k, 3) - 0.25 * np.maximum(k - 3, 0)).tolist()
    assert traj["late"].tolist() == [-0.0] * 5 + [-1.0, -2.0, -2.0, -2.0]
    assert all(np.signbit(traj["late"][:5]))  # not even the sign of zero moved while frozen
    assert (
        traj["off"].tolist() == [2.0] * 9 and traj.meta["theta"][3] == 5.0
    )  # frozen, and outside every group
    assert traj.t.tolist() == [0, 0.5, 1.0, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75]  # clock: group "w"
    assert train(
        theta0, lambda theta, _: np.ones(4), groups=groups, optimizer=GD(), steps=8, clock="late"
    ).t.tolist() == [0, 0, 0, 0, 0, 1, 2, 2, 2]


def test_slice_groups_are_their_index_arrays():
    """A group given as a slice (any step, negative too) trains and records exactly as the same
    coordinates given as an index array (the driver reads and writes slice groups by basic indexing)."""
    rng = np.random.default_rng(3)
    a, theta0 = rng.uniform(0.5, 2.0, 11), rng.normal(size=11)
    slices = {"even": slice(0, 10, 2), "odd_back": slice(9, None, -2), "tail": slice(10, None)}
    settings = zip(slices.items(), (0.1, 0.2, 0.0), (1, -1, 1), strict=True)
    groups = [(name, index, rate, sign) for (name, index), rate, sign in settings]
    runs = [
        train(
            theta0,
            lambda theta, _: a * theta,
            groups=[ParamGroup(n, np.arange(11)[i] if as_array else i, r, sign=s) for n, i, r, s in groups],
            optimizer=Momentum(0.5),
            steps=6,
            log=2,
        )
        for as_array in (False, True)
    ]
    for name in slices:
        assert np.array_equal(runs[0][name], runs[1][name]), name
    assert np.array_equal(runs[0].meta["theta"], runs[1].meta["theta"])
    assert np.array_equal(runs[0]["odd_back"][0], theta0[9::-2])
    assert np.array_equal(runs[0]["tail"][-1], theta0[10:])


def test_groups_update_simultaneously_from_the_same_parameters():
    # L(x, y) = x·y, x descends and y ascends: (x, y) ← (x − ηy, y + ηx), so x² + y² grows by (1 + η²)
    eta, k = 0.1, 50
    traj = train(
        np.array([1.0, 0.5]),
        lambda theta, _: np.array([theta[1], theta[0]]),
        optimizer=GD(),
        steps=k,
        groups=[ParamGroup("x", 0, eta), ParamGroup("y", 1, eta, sign=-1)],
    )
    x, y = 1.0, 0.5
    for _ in range(k):
        x, y = x - eta * (1.0 * y), y - eta * (-1.0 * x)
    assert traj["x"][-1] == x and traj["y"][-1] == y
    assert x * x + y * y == pytest.approx(1.25 * (1 + eta**2) ** k, rel=1e-12)


def test_ascent_climbs_a_convex_function_geometrically():
    traj = train(
        np.array([0.5]),
        lambda theta, _: theta,
        groups=[ParamGroup("u", 0, 0.25, sign=-1)],
        optimizer=GD(),
        steps=6,
    )
    assert traj["u"].tolist() == [0.5 * 1.25**j for j in range(7)]


@given(
    st.lists(st.tuples(st.integers(1, 20), st.sampled_from([0.0, 0.125, 0.5, 1.0, 3.0])), max_size=4),
    st.sampled_from([0.0, 0.25, 2.0]),
    st.integers(0, 100),
)
def test_schedule_times_are_the_cumulative_rates(phases, last, steps):
    schedule = Schedule.phases([*phases, (None, last)])
    k = np.arange(steps + 1)
    rates = [schedule.rate(j) for j in range(steps)]
    assert rates == [_rates([*phases, (None, last)], j) for j in range(steps)]
    assert schedule.times(k).tolist() == np.concatenate([[0.0], np.cumsum(rates)]).tolist()  # dyadic: exact


# ---- logging, observers, progress ---------------------------------------------------------------


@given(
    st.integers(0, 500),
    st.none() | st.integers(1, 50),
    st.none() | st.integers(1, 30),
    st.lists(st.integers(0, 500), max_size=5),
)
def test_log_schedules_hold_step_0_the_last_step_and_what_was_asked(steps, every, geometric, at):
    at = [a for a in at if a <= steps]
    logged = LogSchedule(every=every, geometric=geometric, at=at).steps(steps)
    assert logged[0] == 0 and logged[-1] == steps and np.all(np.diff(logged) > 0)
    assert set(at) <= set(logged.tolist())
    if every:
        assert set(range(0, steps + 1, every)) <= set(logged.tolist())
    if geometric and steps:
        assert len(logged) >= min(geometric, steps) * 0.5


def test_observers_states_meta_and_progress():
    calls = []
    traj = train(
        np.arange(7.0),
        lambda theta, _: (0.5 * theta @ theta, theta),
        optimizer="gd",
        groups=[ParamGroup("a", 0, 0.5), ParamGroup("M", slice(1, 7), 0.25)],
        states={"a": 0, "M": (slice(1, 7), (2, 3)), "corner": 6},
        steps=10,
        log=LogSchedule(geometric=4),
        observers={
            "norm": lambda theta: float(np.linalg.norm(theta)),
            "estimate": lambda theta: (theta[0], 0.1),
            "pair": lambda theta: {"first": theta[1], "last": theta[6]},
        },
        progress=lambda fraction, message: calls.append((fraction, message)),
        meta={"paper": "test"},
    )
    assert traj.steps.tolist() == [0, 1, 2, 5, 10]
    assert traj["a"].shape == (5,) and traj["M"].shape == (5, 2, 3) and traj["corner"].shape == (5,)
    assert np.array_equal(traj["M"][:, 1, 2], traj["corner"]) and np.array_equal(traj["last"], traj["corner"])
    assert traj["estimate_se"].tolist() == [0.1] * 5 and np.array_equal(traj["estimate"], traj["a"])
    assert traj["norm"][-1] == pytest.approx(np.linalg.norm(traj.meta["theta"]))
    assert [f for f, _ in calls] == [0.0, 0.1, 0.2, 0.5, 1.0] and calls[-1][1] == "step 10/10"
    assert traj.meta["paper"] == "test" and traj.meta["n_steps"] == 10 and traj.meta["wall_time_s"] > 0
    assert traj.meta["groups"][1] == {"name": "M", "size": 6, "schedule": [[None, 0.25]], "sign": 1}
    assert "theta" not in traj.summary() and traj.summary()["clock"] == "a"


# ---- failures ---------------------------------------------------------------------------------


def test_non_finite_parameters_stop_the_run_at_their_step():
    # θ_k = (1 − 1001)^k: |θ| passes 1.8e308 at k = 103
    theta, first_bad = np.float64(1.0), 0
    with np.errstate(over="ignore"):
        while math.isfinite(theta):
            theta, first_bad = theta - 1001.0 * theta, first_bad + 1
    assert first_bad == 103
    with pytest.raises(
        NumericalTrouble, match=rf"non-finite at step {first_bad}: state 'x'.*group 'x', rate 1001\.0"
    ):
        train(
            np.array([1.0]),
            lambda theta, _: theta,
            groups=[ParamGroup("x", 0, 1001.0)],
            optimizer=GD(),
            steps=500,
            log=100,
        )


def test_a_non_finite_loss_or_observable_stops_the_run_at_its_step():
    def gradient(theta, _):
        return (math.inf if theta[0] < 0.6 else 0.5 * theta[0] ** 2), theta

    with pytest.raises(NumericalTrouble, match=r"loss became non-finite at step 3 .*'x': 0\.2"):
        train(np.array([1.0]), gradient, groups=[ParamGroup("x", 0, 0.2)], optimizer=GD(), steps=10)
    with pytest.raises(NumericalTrouble, match=r"observable bad=nan became non-finite at step 4"):
        train(
            np.array([1.0]),
            lambda theta, _: theta,
            groups=[ParamGroup("x", 0, 0.2)],
            optimizer=GD(),
            steps=10,
            log=2,
            observers={"bad": lambda theta: math.nan if theta[0] < 0.5 else 1.0},
        )


# ---- randomness -------------------------------------------------------------------------------


def _online(seed, steps=30):
    # least squares on fresh Gaussian batches (online SGD)
    w = np.array([1.0, -2.0, 0.5])

    def draw(rng, step):
        X = rng.standard_normal((8, 3))
        return X, X @ w + 0.1 * rng.standard_normal(8)

    def gradient(theta, batch):
        X, y = batch
        r = X @ theta - y
        return 0.5 * r @ r / len(y), X.T @ r / len(y)

    return train(
        np.zeros(3),
        gradient,
        groups=[ParamGroup("w", slice(None), 0.05)],
        optimizer=Momentum(0.5),
        steps=steps,
        data=draw,
        seed=seed,
        log=5,
    )


def test_the_same_seed_gives_the_same_trajectory_bit_for_bit():
    a, b, c = _online(3), _online(3), _online(4)
    assert np.array_equal(a["w"], b["w"]) and a.meta["seed"] == 3 and a.meta["data"] == "online"
    assert not np.array_equal(a["w"], c["w"])
    child = np.random.SeedSequence(3).spawn(2)[1]
    d, e = _online(child), _online(np.random.SeedSequence(3).spawn(2)[1])
    assert np.array_equal(d["w"], e["w"]) and d.meta["seed"] == {"entropy": 3, "spawn_key": [1]}
    assert not np.array_equal(a["w"], d["w"])


def test_a_fixed_batch_is_full_batch_gd():
    X = np.random.default_rng(1).standard_normal((20, 2))
    y = X @ np.array([1.0, 2.0])

    def gradient(theta, batch):
        data_X, data_y = batch
        return data_X.T @ (data_X @ theta - data_y) / len(data_y)

    traj = train(
        np.zeros(2),
        gradient,
        groups=ParamGroup("w", slice(None), 0.5),
        optimizer=GD(),
        steps=400,
        data=(X, y),
        log=400,
    )
    assert traj.meta["data"] == "fixed"
    np.testing.assert_allclose(traj["w"][-1], [1.0, 2.0], rtol=1e-10)


# ---- bad input --------------------------------------------------------------------------------


def _quick(**overrides):
    settings = {"groups": [ParamGroup("a", slice(0, 2), 0.1)], "optimizer": GD(), "steps": 3}
    settings.update(overrides)
    return train(np.zeros(3), lambda theta, _: theta, **settings)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: ParamGroup("a", 0, -0.1), r"group 'a': rate=-0\.1 of phase 0 must be finite and >= 0"),
        (lambda: Schedule.phases([(None, 0.1), (3, 0.2)]), r"phase 0 has n_steps=None but is not the last"),
        (lambda: Schedule.phases([(0, 0.1), (None, 0.2)]), r"n_steps of phase 0=0 must be an integer >= 1"),
        (lambda: ParamGroup("a", 0, 0.1, sign=2), r"sign=2 of group 'a' must be \+1 \(descent\) or -1"),
        (lambda: _quick(optimizer="rmsprop"), r"optimizer='rmsprop' is not one of gd, sgd, adam"),
        (lambda: _quick(optimizer=object()), r"optimizer=<object.*is not an optimiser"),
        (
            lambda: _quick(groups=[ParamGroup("a", slice(2, 2), 0.1)]),
            r"group 'a' is empty \(index=slice\(2, 2",
        ),
        (lambda: _quick(groups=[]), r"groups=\[\] trains nothing"),
        (
            lambda: _quick(groups=[ParamGroup("a", [0, 1], 0.1), ParamGroup("b", slice(1, 3), 0.1)]),
            r"groups 'a' and 'b' overlap at theta\[1\]",
        ),
        (
            lambda: _quick(groups=[ParamGroup("a", 0, 0.1), ParamGroup("a", 1, 0.1)]),
            r"group name 'a' is used twice",
        ),
        (lambda: _quick(groups=[ParamGroup("a", 3, 0.1)]), r"group 'a': index=3 is outside 0\.\.2"),
        (
            lambda: _quick(groups=[ParamGroup("a", 0, Schedule.phases([(2, 0.1)]))]),
            r"schedule of group 'a' covers 2 steps but steps=3",
        ),
        (lambda: _quick(steps=-1), r"steps=-1 must be an integer >= 0"),
        (lambda: _quick(log=LogSchedule(at=[5])), r"at=\[5\] asks for steps \[5\] beyond steps=3"),
        (lambda: LogSchedule(every=0), r"every=0 must be an integer >= 1"),
        (lambda: _quick(clock="b"), r"unknown clock group 'b'"),
        (lambda: _quick(seed=-1), r"seed=-1 must be a non-negative integer"),
        (
            lambda: train(
                np.array([np.nan]), lambda t, _: t, groups=ParamGroup("a", 0, 0.1), optimizer=GD(), steps=1
            ),
            r"theta0 is non-finite at indices \[0\]",
        ),
        (
            lambda: train(
                np.zeros(3), lambda t, _: t[:2], groups=ParamGroup("a", 0, 0.1), optimizer=GD(), steps=1
            ),
            r"gradient returned shape \(2,\) for theta of shape \(3,\)",
        ),
        (lambda: _quick(observers={"a": lambda t: 1.0}), r"observables \['a'\] have the names of states"),
    ],
)
def test_bad_input_is_refused_with_the_parameter_the_constraint_and_the_value(make, match):
    with pytest.raises(InvalidArgument, match=match):
        make()


# ---- the ported trainers ----------------------------------------------------------------------

BASELINE = Path(__file__).parent / "data" / "train_port_baseline.npz"


def test_the_ported_trainers_reproduce_the_runs_recorded_before_the_port():
    # recorded by train_port_identity.py with the trainers' own loops; bit for bit on the recording
    # machine and library versions, to rounding elsewhere (BLAS kernels differ between CPUs)
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        import train_port_identity as port
    finally:
        sys.path.pop(0)
    recorded = dict(np.load(BASELINE))
    same_machine = str(recorded["fingerprint"]) == port.fingerprint()
    assert port.compare(recorded, port.collect(), rtol=0.0 if same_machine else 1e-9) == []
