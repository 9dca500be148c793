"""The second methods of the model-side rl.cf.* items, against brute force written here.

Each hook runs on its item (built small where the builder allows) and must find no disagreement
with a correct derivation; what it reports is checked against an independent computation in the
test (a plain-NumPy model after spec §10, literal enumeration with itertools, exact fractions),
never against a written-down verdict. A corrupted derivation must be caught.
"""

import importlib
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

import derivations.regular_language as R
from checks.numeric_identity import compare
from checks.registry import load_all
from checks.regular_language import cross_checks
from checks.regular_language.cross_checks import CROSS_CHECKS
from checks.regular_language.cross_checks._common import KEY, ModelPoint, _random_point
from checks.regular_language.cross_checks.projections import Line
from numerics.models.regular_language.data import ep_data

#: the theme modules of the package, each named after the derivation module of its items
THEMES = {"loss_gradient", "projections", "bounds", "early_steps", "cot", "reduced", "phase1", "w_norm",
          "phase2_margins", "phase2_bounds"}


@pytest.fixture(scope="module")
def claims():
    return load_all()


def run(claims, item_id, item=None, pins=None, **options):
    item = item or R.item(item_id, **options)
    out = CROSS_CHECKS[item_id](claims[item_id].context(pins or {}), item)
    return out, out[KEY]


def test_every_hook_is_registered_with_the_items():
    # model-side and dynamics hooks alike: each lives in the theme module named after the derivation
    # module of its item (phase2 has two: phase2_margins, phase2_bounds), and every theme registers one
    assert set(CROSS_CHECKS) <= set(R.ITEMS)
    for item_id, hook in CROSS_CHECKS.items():
        package, module = hook.__module__.rsplit(".", 1)
        assert package == cross_checks.__name__ and module in THEMES
        assert module.startswith(R.ITEMS[item_id].split(":")[0])
        assert getattr(importlib.import_module(hook.__module__), hook.__name__) is hook
    assert {hook.__module__.rsplit(".", 1)[1] for hook in CROSS_CHECKS.values()} == THEMES


# ---------------------------------------------------------------------------------------- a plain model


def strings(L):
    return list(itertools.product((0, 1), repeat=L))


def ep_set(L_max):
    """(chars, label, weight) of every string of lengths 1..L_max, EP label = first == last."""
    return [(s, 1 if s[0] == s[-1] else -1, 2.0**-len(s)) for L in range(1, L_max + 1) for s in strings(L)]


def plain_gradient(samples, u, W, lam):
    """Spec §10 ``grads`` in NumPy, one sample at a time."""
    gu, gW = np.zeros_like(u), np.zeros_like(W)
    for s, y, w in samples:
        idx = [2 * pos + c for pos, c in enumerate(s)]
        q = idx[-1]
        z = W[idx, q] / lam
        phi = np.exp(z - z.max())
        phi /= phi.sum()
        T = float(phi @ u[idx])
        g = w * (-1.0 / (1.0 + math.exp(y * T))) * y
        for pos, i in enumerate(idx):
            gu[i] += g * phi[pos]
            gW[i, q] += g * phi[pos] * (u[i] - T) / lam
    return gu, gW


def plain_gd(samples, d, eta, lam, steps, t0=3):
    u, W = np.zeros(d), np.zeros((d, d))
    out = [(u, W)]
    for t in range(steps):
        gu, gW = plain_gradient(samples, u, W, lam)
        u, W = u - eta * gu, W - eta * (lam if t < t0 else 1.0) * gW
        out.append((u, W))
    return out


# ---------------------------------------------------------------------------------------- the items


def test_model_loss_at_zero_counts_every_loss_term(claims):
    out, ev = run(claims, "rl.cf.model_loss", ep_lengths=range(1, 4), cot_L0=(3,))
    assert out["disagrees"] == []
    for record in ev["loss_at_zero"]:
        name = record["set"]
        if name.startswith("EP"):
            terms = int(name.removeprefix("EP_Lmax"))
        else:  # CoT: lengths L0..L_max plus the regulariser's 1..L0-1 (or 1..L0)
            L0, cml, rml = int(name[6]), name.split("_")[2], name.split("_")[3]
            terms = (2 * L0 - 1 if cml == "2L0-1" else 2 * L0 - 2) + (1 if rml == "L0" else 0)
        assert record["numba"] == pytest.approx(terms * math.log(2), rel=1e-14)
        assert record["mp_equals_printed"] == (rml == "L0-1" if name.startswith("CoT") else True)
    for record in ev["monte_carlo"]:
        assert record["mc_agrees_4se"] == (abs(record["z"]) <= 4)
        assert record["tabled_vs_mp"] < 1e-12


def test_ep_label_counts_match_brute_force(claims):
    out, ev = run(claims, "rl.cf.ep_label")
    assert out["disagrees"] == []
    words = [s for L in range(1, 13) for s in strings(L)]
    differ = {
        "contiguous": sum((sum(a != b for a, b in itertools.pairwise(s)) % 2 == 0) != (s[0] == s[-1])
                          for s in words),
        "subsequence": sum(((s.count(0) * s.count(1)) % 2 == 0) != (s[0] == s[-1]) for s in words),
    }
    for mode, record in ev["modes"].items():
        assert record["strings"] - record["numerics_label_equals_first_last"] == differ[mode]
        assert record["equivalence_holds"] == (differ[mode] == 0)


def test_gradient_central_differences_and_derivation(claims):
    out, ev = run(claims, "rl.cf.gradient", max_len=2)
    assert out["disagrees"] == []
    assert ev["max_numba_vs_mp60"] < 1e-12 and ev["max_central_difference_gap"] < 1e-25
    assert ev["derivation_gradient"]["compared"] == 2 * len(
        [f for f in R.item("rl.cf.gradient", max_len=2).formulas if f.id.split(".")[3] in ("u", "W")])


def test_a_pinned_temperature_reaches_the_numbers(claims):
    _, ev = run(claims, "rl.cf.gradient", max_len=2, pins={"lam": 7.5})
    assert {p["lam"] for p in ev["points"]} == {7.5}


def _independent_ratio_line2(L_max=3, seed=1):
    """Return printed line 2 / (λ ∂L/∂W[(1,a),(L,a)]) by the plain model: 1 if only the 1/λ is missing."""
    rng = np.random.default_rng(seed)
    d = 2 * L_max
    u, W, lam = rng.standard_normal(d), rng.standard_normal((d, d)), 3.7
    samples = ep_set(L_max)
    _, gW = plain_gradient(samples, u, W, lam)
    printed = 0.0
    for s, y, w in samples:
        if len(s) == L_max and s[0] == 0 and s[-1] == 0:
            idx = [2 * pos + c for pos, c in enumerate(s)]
            z = W[idx, idx[-1]] / lam
            phi = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
            T = float(phi @ u[idx])
            printed += w * (-1 / (1 + math.exp(y * T))) * phi[0] * (u[idx[0]] - T)
    return printed / gW[0, 2 * (L_max - 1)] / lam


def test_projection_factor_matches_an_independent_computation(claims):
    out, ev = run(claims, "rl.cf.gradient_projections", max_len=3)
    assert out["disagrees"] == []
    missing_lambda = abs(_independent_ratio_line2() - 1) < 1e-9
    line2 = ev["families"]["W_line2"]
    assert (line2["separating_correction"] == "with 1/λ") == missing_lambda
    assert ev["families"]["u"]["matches_as_printed"]
    assert ev["derivation_values"]["disagreeing"] == []


def test_b1_u_lines_lack_the_length_weight(claims):
    out, ev = run(claims, "rl.cf.gradient_projections_b1", max_len=3)
    assert out["disagrees"] == []
    # at ℓ = L_max only length L_max contributes, so printed/model = 2^{L_max} there
    family = ev["families"]["u"]
    assert family["separating_correction"] == "with 2^-L per term"
    assert family["readings"]["as printed"]["first_mismatch"]["status"] == "differs"
    data = ep_data(6)
    rng = np.random.default_rng(0)
    points = [{"point": ModelPoint(data, *_random_point(rng, data.dim))} for _ in range(3)]
    line = Line("u", 6, None, 0, weighted=False)
    record = compare(lambda point: line.value(point), lambda point: line.target(*point.at()[3:5]),
                     points=points)
    assert record.constant_ratio == pytest.approx(2.0**6, rel=1e-12)


def test_gradient_norm_ratios_are_one_draw_apart(claims):
    out, ev = run(claims, "rl.cf.gradient_norm_bounds")
    assert out["disagrees"] == []
    ratios = ev["max_ratios"]
    # ‖∇_W L‖ over the two bounds differs by the constant 2 L_max/(L_max − 1) = 12/5, draw by draw
    printed = ratios["W_over_printed"]["ratio"]
    assert ratios["W_over_derived"]["ratio"] == pytest.approx(printed * 12 / 5, rel=1e-12)
    assert ratios["W_over_derived"]["draw"] == ratios["W_over_printed"]["draw"]
    assert all(0 < r["ratio"] <= 1 for r in ratios.values())


def test_softmax_lipschitz_approaches_the_sharp_constant_from_below(claims):
    out, ev = run(claims, "rl.cf.softmax_lipschitz")
    assert out["disagrees"] == []
    worst = ev["lemma_A1_max_ratio"]
    # the sharp constant 1/(2λ) is attained only for L = 2 at uniform attention (Popoviciu)
    assert 0.4 < worst["ratio"] <= 0.5 * (1 + 1e-9) and worst["length"] == 2
    assert ev["score_pairs"] >= 2 * 10**4


def test_logistic_taylor_failure_set_is_the_negative_grid(claims):
    out, ev = run(claims, "rl.cf.logistic_taylor")
    assert out["disagrees"] == []
    grid = np.unique(np.concatenate([np.arange(-50000, 50001) / 1000, np.geomspace(50, 1e3, 200)[1:],
                                     -np.geomspace(50, 1e3, 200)[1:]]))
    printed = ev["readings"]["as_printed"]
    assert printed["grid_points"] == grid.size and printed["fails_at"] == int(np.sum(grid < 0))
    assert printed["failing_runs"] == [[float(grid[0]), -0.001]] and ev["readings"]["abs"]["fails_at"] == 0
    assert ev["sup_error_over_cube"] == pytest.approx(1 / 48, rel=1e-5)


def test_effective_rates_follow_the_schedule_rule(claims):
    out, ev = run(claims, "rl.cf.effective_rate")
    assert out["disagrees"] == []
    eta, t0 = ev["eta"], ev["t0"]
    for run_ in ev["runs"]:
        lam, schedule, boost = run_["lam"], run_["schedule"], run_["boost_steps"]
        for update in run_["updates"]:
            t = update["t"]
            boosted = {"vanilla_eta": False, "vanilla_etalambda": True}.get(
                schedule, t < t0 if boost == "t_lt_t0" else t <= t0)
            assert update["measured"] == pytest.approx(eta / lam if boosted else eta / lam**2, rel=1e-9)


def test_first_step_gradient_at_zero_is_brute_force(claims):
    out, ev = run(claims, "rl.cf.first_step", ep_lengths=(4,), cot_L0=(3,))
    assert out["disagrees"] == []
    g = Fraction(0)
    for s, y, w in ep_set(4):
        if s[0] == 0:  # ∂/∂u[E_1^a]: J'(0) y φ_1 = −y/(2L)
            g += Fraction(w) * Fraction(-y, 2 * len(s))
    record = ev["sets"]["EP(L_max=4,contiguous)"]
    assert record["grad_u_at_zero_first_position"][0] == str(g)
    assert record["u1_is_eta_over_4_exactly"] == (g == Fraction(-1, 4))
    assert ev["derivation_values"]["disagreeing"] == [] and ev["derivation_values"]["compared"] > 0


def test_second_step_u2_ratio_is_the_plain_models(claims):
    item = R.item("rl.cf.second_step", ep_lengths=(4,), cot_L0=(), t0_values=(3, 1))
    out, ev = run(claims, "rl.cf.second_step", item=item)
    assert out["disagrees"] == []
    eta, L_max = 0.05, 4
    u2 = plain_gd(ep_set(L_max), 2 * L_max, eta, 50.0, 2)[2][0]

    def f(x):
        return 1 / (1 + math.exp(x))

    for ell in range(2, L_max + 1):
        printed = sum(eta / 2 * (f(eta / (4 * L)) - f(-eta / (4 * L))) / L for L in range(ell, L_max + 1))
        ratio = printed / u2[2 * (ell - 1)]
        line = ev["sets"]["EP(L_max=4,contiguous)"]["printed_vs_model"][f"u2_later.l{ell}"]
        assert line["printed_over_model"] == pytest.approx(ratio, rel=1e-8)
        bound = ev["sets"]["EP(L_max=4,contiguous)"]["bounds"][f"u2_later_bound.final.l{ell}"]
        assert (eta in bound["fails_at"]) == (u2[2 * (ell - 1)] > -eta**2 / (4 * ell**2))


def test_cot_procedures_match_brute_force_parity(claims):
    out, ev = run(claims, "rl.cf.cot_recurrences")
    assert out["disagrees"] == []
    words = [s for L in range(1, 11) for s in strings(L)]

    def t2(s):  # the printed sentence's automaton: transitions only from t = 2
        state = s[0]
        for t in range(2, len(s)):
            state ^= s[t]
        return state == sum(s) % 2

    agree = sum(t2(s) for s in words)
    assert ev["equal_to_parity"]["automaton.t2"] == f"{agree}/{len(words)}"
    assert ev["equal_to_parity"]["automaton.t1"] == f"{len(words)}/{len(words)}"


def test_cot_stationarity_gradient_is_the_balance(claims):
    out, ev = run(claims, "rl.cf.cot_stationarity", L0_values=(3,))
    assert out["disagrees"] == []
    for tag, record in ev["sets"].items():
        L0 = 3 if "L0=3" in tag else 4
        top = 2 * L0 - 1 if "2L0-1" in tag else 2 * L0 - 2
        balanced = all(
            sum(1 if s[L - L0] == s[-1] else -1 for s in strings(L) if s[p] == c) == 0
            for L in range(L0, top + 1) for p in range(L) for c in (0, 1))
        assert (record["exact_grad_sum_of_squares"] == "0") == balanced
        assert record["max_theta_norm_over_eps"] < 1e3 or not balanced


# ---------------------------------------------------------------------------------------- caught bugs


def test_a_wrong_derivation_is_caught(claims):
    item = R.item("rl.cf.model_loss", ep_lengths=range(2, 4), cot_L0=(3,))
    wrong = next(f for f in item.formulas if f.id.endswith("zero.EP_Lmax3"))
    wrong.derived = 4 * sp.log(2)
    out, _ = run(claims, "rl.cf.model_loss", item=item)
    assert "zero.EP_Lmax3" in out["disagrees"]

    item = R.item("rl.cf.gradient_projections_b1", max_len=2)
    wrong = next(f for f in item.formulas if f.id.endswith("W_pos1.L2a.Lmax2.times_lambda"))
    wrong.derived = 2 * wrong.derived
    out, _ = run(claims, "rl.cf.gradient_projections_b1", item=item)
    assert "W_pos1" in out["disagrees"]
