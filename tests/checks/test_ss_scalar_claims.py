"""ss Lemmas 7–9, Remark 2, Theorem 1(b) and Figs 8–9: verdicts re-derived at independent points in mpmath.

h comes from Eqn 45 solved at 40 digits (its residual checked), h* from the recursion of Eqn 33 at 40 digits;
nothing here calls the float64 kernels the checks use. The expected status of each tested part is derived from
these numbers, never written down.
"""

import math

import mpmath
import pytest

from checks.registry import load_all
from derivations.errors import InvalidArgument

DPS = 40


@pytest.fixture(scope="module")
def registry():
    return load_all()


def h_mp(tau, M):
    """H at τ = η_Y s from Eqn 45, e^{Mh} + (M−1)Mh = Mτ + 1, at 40 digits (residual checked)."""
    with mpmath.workdps(DPS):
        M, tau = mpmath.mpf(M), mpmath.mpf(tau)
        C = (M * tau + 1) / (M - 1)
        u = C - mpmath.lambertw(mpmath.exp(C) / (M - 1)).real
        assert abs(mpmath.exp(u) + (M - 1) * u - M * tau - 1) <= mpmath.mpf(10) ** (10 - DPS) * (M * tau + 1)
        return u / M


def hstar_mp(steps, M, eta):
    """h*(0..steps) of Eqn 33 at 40 digits."""
    with mpmath.workdps(DPS):
        M, eta = mpmath.mpf(M), mpmath.mpf(eta)
        out = [mpmath.mpf(0)]
        for _ in range(steps):
            out.append(out[-1] + eta / ((M - 1) + mpmath.exp(M * out[-1])))
        return out


def shift_mp(hs, s, M, eta):
    """c(s) = (Φ(h*(s)) − 1)/(Mη_Y) − s: h(s + c) = h*(s)."""
    with mpmath.workdps(DPS):
        u = M * hs
        return (mpmath.exp(u) + (M - 1) * u - 1) / (M * eta) - s


def roots_mp(M):
    """(u₀, u₁) of e^u = (M−1)u by findroot near 1/(M−1) and ln M + ln ln M (no Lambert W)."""
    with mpmath.workdps(DPS):
        M = mpmath.mpf(M)
        f = lambda u: mpmath.exp(u) - (M - 1) * u  # noqa: E731
        return mpmath.findroot(f, 1 / (M - 1)), mpmath.findroot(f, mpmath.log(M) + mpmath.log(mpmath.log(M)))


@pytest.fixture(scope="module")
def long_hstar():
    return hstar_mp(20000, 100, 0.5)


def test_lemma7_inequality_holds_at_independent_points_and_the_worst_point_reproduces(registry):
    for M, eta in ((47, 0.37), (2000, 0.9), (300, 0.013)):
        hs = hstar_mp(200, M, eta)
        for s in (1, 2, 3, 5, 8, 13, 40, 200):
            gap = hs[s] - h_mp(eta * s, M)
            assert 0 < gap <= 2 * eta / M, (M, eta, s, gap)
    verdict = registry["ss.lemma7.gap_bound"].run()
    worst = verdict.evidence["parts"]["upper"]["worst"]
    M, eta, s = worst["M"], worst["etaY"], worst["at_s_max"]
    gap = hstar_mp(s, M, eta)[s] - h_mp(eta * s, M)
    assert float(gap / (2 * eta / M)) == pytest.approx(worst["max_gap_over_bound"], rel=1e-8)
    expected = "holds" if gap <= 2 * eta / M else "fails"
    assert verdict.evidence["parts"]["upper"]["status"] == expected


def test_lemma7_window_constant_is_the_first_principles_limit(registry):
    verdict = registry["ss.lemma7.gap_bound"].run({"etaY": 0.01})
    band = verdict.evidence["parts"]["c_Theta1"]["constant_band"]
    limit = 0.5 * math.log(1 + float(mpmath.lambertw(1)))  # ½ ln(1 + W(1)), the η_Y → 0 limit
    assert band[0] - 2e-3 <= limit <= band[1] + 2e-3
    # one sweep point re-derived: the smallest c on s ≤ ln M/η_Y is c(⌊ln M/η_Y⌋)
    part = verdict.evidence["parts"]["c_Theta1"]
    M, value = part["sweep"][3]["M"], part["values"][3]
    S = math.floor(math.log(M) / 0.01 * (1 + 1e-12))
    assert float(shift_mp(hstar_mp(S, M, 0.01)[S], S, M, 0.01)) == pytest.approx(value, rel=1e-7)


def test_remark2_shift_grows_like_half_log_and_the_verdict_follows(registry, long_hstar):
    M, eta = 100, 0.5
    c = {s: float(shift_mp(long_hstar[s], s, M, eta)) for s in (200, 2000, 20000)}
    steps = [c[2000] - c[200], c[20000] - c[2000]]
    # first principles: c grows by ½ per unit of ln s, approached from above (corrections O(ln s/s))
    assert abs(steps[1] - 0.5 * math.log(10)) < 0.01 and steps[0] > steps[1], steps
    verdict = registry["ss.rem2.gap_rate"].run({"M": M, "etaY": eta, "steps": 20000, "s1": "printed"})
    parts = verdict.evidence["readings"]["printed"]["parts"]
    grows = min(steps) > 0.25 * math.log(10)
    assert parts["shift_O_lnM"]["status"] == ("fails" if grows else "holds")
    row = verdict.evidence["readings"]["printed"]["slices"][0]
    assert row["c_over_lnM_at_end"] == pytest.approx(c[20000] / math.log(M), rel=1e-8)
    # h° − h at the end of the window against ln M/(Mt), from mpmath
    gap = long_hstar[20000] - h_mp(eta * 20000, M)
    assert row["t_gap_M_over_lnM_at_end"] == pytest.approx(float(20000 * gap * M / math.log(M)), rel=1e-7)
    assert verdict.status == "fails"  # the shift part alone refutes the remark (computed above)


def test_lemma9_stage1_counterexample_is_real(registry):
    verdict = registry["ss.lemma9.stage1"].run({"M": 1000, "K": 1000, "etaY": 0.1, "gamma_arg": "t_over_K"})
    part = verdict.evidence["readings"]["t_over_K"]["parts"]["inequality"]
    with mpmath.workdps(DPS):
        u0 = roots_mp(1000)[0]
        t_low = 1000 * (2 * 999 * u0 - 1) / (1000 * mpmath.mpf("0.1"))
        u_at = lambda t: 1000 * h_mp(mpmath.mpf("0.1") * t / 1000, 1000)  # noqa: E731
        violated = mpmath.exp(u_at(1)) > 999 * u_at(1)
        assert not mpmath.exp(u_at(2 * t_low)) > min(999, 999 * u_at(2 * t_low))
    assert part["status"] == ("fails" if violated else "holds")
    worst = part["worst"]
    assert worst["t_low"] == pytest.approx(float(t_low), rel=1e-10)
    assert worst["at_t"] < worst["t_low"]


def test_lemma9_stage2_boundary_readings_agree_with_mpmath(registry):
    M, K, eta = 3000, 7, 0.3
    u1 = roots_mp(M)[1]
    expected = {}
    for reading, start in (("omega1", 2 * u1 * K / eta), ("asymptotic", 2 * K * math.log(M) / eta)):
        ok = True
        for factor in (1, 1.5, 10, 1e3):
            u = M * h_mp(eta * start * factor / K, M)
            ok &= bool(mpmath.exp(u) >= max(M - 1, (M - 1) * u))
        expected[reading] = "holds" if ok else "fails"
    assert expected["omega1"] != expected["asymptotic"]  # the window start matters (balance at τ ≈ 2u₁)
    verdict = registry["ss.lemma9.stage2"].run({"M": M, "K": K, "etaY": eta, "gamma_arg": "t_over_K"})
    for reading, status in expected.items():
        parts = verdict.evidence["readings"][f"t0={reading},gamma_arg=t_over_K"]["parts"]
        assert parts["inequality"]["status"] == status


def test_theorem1b_printed_rate_hides_a_growing_constant(registry):
    pins = {"K": 1, "etaY": 0.1, "t0": "omega1", "gamma_arg": "t_over_K"}
    verdict = registry["ss.thm1b.gamma_rates"].run(pins)
    part = verdict.evidence["readings"]["t0=omega1,gamma_arg=t_over_K"]["parts"]["stage2_printed"]
    sups = {s["M"]: s["sup"] for s in part["sups"]}
    ratios = {}
    for M in (1e3, 1e16):
        with mpmath.workdps(DPS):
            tau = 2 * roots_mp(M)[1]  # η_Yt₀/K: the window starts at t₀ (t₀ ≥ 10K² here)
            u = M * h_mp(tau, M)
            gamma = (M - 1) ** 2 * (u / M) / ((M - 1) + mpmath.exp(u))
            ratios[M] = float(gamma * tau / mpmath.log(tau))
            assert float(gamma * tau / mpmath.log(M * tau)) < 2  # Lemma 9's form stays bounded
        assert sups[M] == pytest.approx(ratios[M], rel=1e-6)
    assert ratios[1e16] > 1.5 * ratios[1e3]
    assert part["status"] == ("fails" if ratios[1e16] > 1.5 * ratios[1e3] else "holds")


def test_lemma8_roots_and_the_reversed_chain_of_remark3(registry):
    verdict = registry["ss.lemma8.asymptotics"].run()
    rows = {r["M"]: r for r in verdict.evidence["rows"]}
    violations = {v["M"] for v in verdict.evidence["parts"]["remark3_chain"]["violations"]}
    for M in (1000.0, 1e4, 50272.0):
        u0, u1 = roots_mp(M)
        with mpmath.workdps(DPS):
            w0, w1 = 1 + mpmath.log(u0) / mpmath.log(M), u1 / mpmath.log(M) - 1
            assert rows[M]["omega0"] == pytest.approx(float(w0), rel=1e-12)
            assert rows[M]["omega1"] == pytest.approx(float(w1), rel=1e-12)
            reversed_chain = not M ** (w0 - 1) > M ** mpmath.mpf("-0.99")
        assert (M in violations) == reversed_chain
        assert 0.5 < 1 + float(w1) < 2
    assert verdict.evidence["parts"]["remark3_chain"]["status"] == ("fails" if violations else "holds")


def test_pins_reach_the_checks(registry):
    verdict = registry["ss.lemma9.stage1"].run({"M": 1e6, "K": 1, "etaY": 0.5, "gamma_arg": "ceil"})
    assert list(verdict.evidence["readings"]) == ["ceil"]
    rows = verdict.evidence["readings"]["ceil"]["rows"]
    assert {(r["M"], r["K"], r["etaY"]) for r in rows} == {(1e6, 1.0, 0.5)}
    assert "--param gamma_arg=ceil" in verdict.replay
    rem2 = registry["ss.rem2.gap_rate"].run({"s1": "lemma9_t0", "M": 30, "etaY": 0.1, "steps": 3000})
    assert list(rem2.evidence["readings"]) == ["lemma9_t0"]
    assert rem2.evidence["readings"]["lemma9_t0"]["slices"][0]["s_range"][1] == 3000
    fig9 = registry["ss.fig9"].run({"nu": "Z_over_Y", "t0": "asymptotic", "source": "eqn127", "etaZ": 0.3})
    keys = [(r["nu"], r["t0"], r["source"]) for r in fig9.evidence["records"]]
    assert keys == [("Z_over_Y", "asymptotic", "eqn127")]


def test_bad_pins_are_refused(registry):
    with pytest.raises(InvalidArgument, match="M"):
        registry["ss.lemma9.stage1"].run({"M": 2})
    with pytest.raises(InvalidArgument, match="etaY"):
        registry["ss.lemma7.gap_bound"].run({"etaY": -1})
    with pytest.raises(InvalidArgument, match="gamma_arg"):
        registry["ss.thm1b.gamma_rates"].run({"gamma_arg": "floor"})


def test_figures_are_written_and_fig9_dots_reproduce(registry, tmp_path):
    fig8 = registry["ss.fig8"].run({"steps": 2000}, artifacts=tmp_path / "fig8")
    fig9 = registry["ss.fig9"].run({"source": "eqn127", "t0": "omega1"}, artifacts=tmp_path / "fig9")
    for verdict in (fig8, fig9):
        assert verdict.figures
        for path in verdict.figures:
            with open(path, "rb") as handle:
                assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    K, M, nu, rho0 = 10, 1000, 2.0, 1.0
    for record in fig9.evidence["records"]:
        etaZs = (0.1, 0.5, 2.0)
        expected = []
        for etaZ in etaZs:
            etaY = nu * etaZ if record["nu"] == "Y_over_Z" else etaZ / nu
            with mpmath.workdps(DPS):
                h = h_mp(2 * roots_mp(M)[1], M)  # h(t₀/K) at η_Yt₀/K = 2(1 + ω₁) ln M, free of the rates
                inner = rho0**4 / K + 2 * etaZ / etaY * K * (M - 1) ** 2 * h**2  # Eqn 127 at t₀
                expected.append(float(mpmath.log(inner) / 4))
        assert record["B_t0"] == pytest.approx(expected, rel=1e-10)
        invariant = max(expected) - min(expected) <= record["tolerance"]
        assert record["status"] == ("holds" if invariant else "fails")

