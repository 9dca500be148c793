"""An independent mpmath reference of the rl model (spec §10 pseudo-code), and the helpers the
rl derivation tests use to check that ``verify()`` agrees with it.

Nothing here uses SymPy's calculus: the loss is summed sample by sample, the gradient is the
spec's closed scatter form (g = w J' y; ∇_u += g φ; ∇_W += g φ (u_ℓ - T)/λ), checked below against
mpmath's numerical differentiation; GD is iterated in mpmath. Labels use the equivalent forms
(first token = last token) rather than the derivations' literal pair counts.
"""

from __future__ import annotations

import itertools
import random

import mpmath
import sympy as sp
import sympy.physics.units  # noqa: F401  simplify imports it lazily; a verify() time limit must not cut that import

DPS = 40


def strings(length):
    return list(itertools.product("ab", repeat=length))


def ep_samples(max_len):
    return [(s, 1 if s[0] == s[-1] else -1, mpmath.mpf(2) ** -len(s))
            for n in range(1, max_len + 1) for s in strings(n)]


def cot_samples(L0, top, regulariser=True):
    out = [(s, 1 if s[n - L0] == s[-1] else -1, mpmath.mpf(2) ** -n) for n in range(L0, top + 1) for s in strings(n)]
    if regulariser:
        out += ep_samples(L0 - 1)
    return out


def forward(sample, u, W, lam):
    s, _, _ = sample
    L = len(s)
    scores = [W.get(((j + 1, s[j]), (L, s[-1])), 0) / lam for j in range(L)]
    top = max(scores)
    e = [mpmath.exp(x - top) for x in scores]
    z = sum(e)
    phi = [x / z for x in e]
    us = [u.get((j + 1, s[j]), 0) for j in range(L)]
    return phi, us, sum(p * v for p, v in zip(phi, us))


def loss(samples, u, W, lam):
    return sum(w * mpmath.log(1 + mpmath.exp(-y * forward((s, y, w), u, W, lam)[2])) for s, y, w in samples)


def grads(samples, u, W, lam):
    gu, gW = {}, {}
    for s, y, w in samples:
        phi, us, T = forward((s, y, w), u, W, lam)
        g = w * (-1 / (1 + mpmath.exp(y * T))) * y
        L = len(s)
        for j in range(L):
            key = (j + 1, s[j])
            gu[key] = gu.get(key, 0) + g * phi[j]
            wkey = (key, (L, s[-1]))
            gW[wkey] = gW.get(wkey, 0) + g * phi[j] * (us[j] - T) / lam
    return gu, gW


def gd(samples, steps, eta, lam, t0=3, boost="t_lt_t0", lam_step=None):
    """GD from 0; returns [(u_t, W_t)] for t = 0..steps (two-phase schedule)."""
    u, W = {}, {}
    out = [(dict(u), dict(W))]
    for t in range(steps):
        gu, gW = grads(samples, u, W, lam)
        boosted = t < t0 if boost == "t_lt_t0" else t <= t0
        factor = eta * (lam if lam_step is None else lam_step) if boosted else eta
        u = {k: u.get(k, 0) - eta * gu.get(k, 0) for k in set(u) | set(gu)}
        W = {k: W.get(k, 0) - factor * gW.get(k, 0) for k in set(W) | set(gW)}
        out.append((dict(u), dict(W)))
    return out


def key_of(name: str):
    """u_1a -> (1, 'a'); W_1a_3b -> ((1, 'a'), (3, 'b'))."""
    parts = name.split("_")
    if parts[0] == "u":
        return int(parts[1][:-1]), parts[1][-1]
    return (int(parts[1][:-1]), parts[1][-1]), (int(parts[2][:-1]), parts[2][-1])


def params_from(point: dict):
    """Split a {Symbol or name: value} point into (u, W, lam, rest) with mpf values."""
    u, W, rest, lam = {}, {}, {}, None
    for sym, value in point.items():
        name = sym if isinstance(sym, str) else sym.name
        v = value if isinstance(value, mpmath.mpf) else mpmath.mpf(rational(value).p) / rational(value).q
        if name.startswith("u_"):
            u[key_of(name)] = v
        elif name.startswith("W_"):
            W[key_of(name)] = v
        elif name == "lam":
            lam = v
        else:
            rest[name] = v
    return u, W, mpmath.mpf(1) if lam is None else lam, rest  # λ is absent only where nothing depends on it


def rational(value) -> sp.Rational:
    """The exact value of a decimal string, a float or an mpf."""
    if isinstance(value, mpmath.mpf):
        sign, man, exp, _ = value._mpf_
        return (-1) ** sign * sp.Rational(int(man)) * sp.Rational(2) ** exp
    return sp.Rational(str(value)) if isinstance(value, str) else sp.Rational(value)


def evaluate(expr: sp.Expr, point: dict, dps: int = DPS):
    """``expr`` at a {name or Symbol: value} point, exactly substituted then evaluated to ``dps`` digits."""
    names = {s.name: s for s in expr.free_symbols}
    sub = {}
    for key, value in point.items():
        name = key if isinstance(key, str) else key.name
        if name in names:
            sub[names[name]] = rational(value)
    with mpmath.workdps(dps):
        return mpmath.mpf(sp.N(expr.xreplace(sub).doit(), dps))


def close(a, b, rel=mpmath.mpf(10) ** -15):
    scale = max(abs(a), abs(b), mpmath.mpf(10) ** -30)
    return abs(a - b) <= rel * scale


def random_point(symbols, seed, scale=2.0):
    rng = random.Random(seed)
    point = {}
    for s in symbols:
        if s.name == "lam":
            point[s] = round(10 ** rng.uniform(-1, 3), 6)
        elif s.name == "eta":
            point[s] = round(rng.uniform(0.01, 0.9), 6)
        else:
            point[s] = round(rng.uniform(-scale, scale), 6)
    return point


def assert_verdict_matches(formula, reference, *, seeds=(11, 12), verify_options=None, rel=None):
    """``formula.verify()`` agrees with ``reference(point) -> mpf`` (the definition evaluated independently).

    Equal: the printed form matches the reference at fresh random domain points. Differs: at the
    counterexample, the reported derived value is the reference and the printed value is not.
    """
    rel = rel or mpmath.mpf(10) ** -12
    agreement = formula.verify(n_points=3, symbolic_seconds=0.05, **(verify_options or {}))
    with mpmath.workdps(DPS):
        if agreement.equal:
            for seed in seeds:
                point = {s.name: v for s, v in formula.domain.sample(random.Random(seed), 1)[0].items()}
                assert close(evaluate(formula.stated, point), reference(point), rel), (formula.id, point)
        else:
            point = agreement.point
            ref = reference(point)
            assert close(mpmath.mpf(agreement.derived_value), ref, mpmath.mpf(10) ** -13), (formula.id, point)
            assert not close(evaluate(formula.stated, point), ref, rel), (formula.id, point)
    return agreement


def test_reference_gradient_is_the_derivative_of_the_reference_loss():
    samples = ep_samples(3)
    rng = random.Random(3)
    u = {(p, c): mpmath.mpf(rng.uniform(-2, 2)) for p in range(1, 4) for c in "ab"}
    W = {k: mpmath.mpf(rng.uniform(-2, 2)) for k in grads(samples, u, {}, 1)[1]}
    lam = mpmath.mpf("0.7")
    with mpmath.workdps(DPS):
        gu, gW = grads(samples, u, W, lam)
        for key in list(gu)[:3]:
            numeric = mpmath.diff(lambda x, k=key: loss(samples, {**u, k: x}, W, lam), u[key])
            assert close(numeric, gu[key], mpmath.mpf(10) ** -20)
        for key in list(gW)[:5]:
            numeric = mpmath.diff(lambda x, k=key: loss(samples, u, {**W, k: x}, lam), W[key])
            assert close(numeric, gW[key], mpmath.mpf(10) ** -20)


def test_reference_gradient_at_zero_by_hand():
    # at θ = 0: φ = 1/L, J' = -1/2; only the length-1 samples survive in ∇_u, at E_1: -(1/2)(1/2) = -1/4
    with mpmath.workdps(DPS):
        gu, gW = grads(ep_samples(5), {}, {}, mpmath.mpf(3))
        assert all(abs(v) < mpmath.mpf(10) ** -30 for v in gW.values())
        for key, value in gu.items():
            expected = mpmath.mpf(-1) / 4 if key[0] == 1 else 0
            assert abs(value - expected) < mpmath.mpf(10) ** -30, key
