"""rl phase-2 and CoT derivations against independent mpmath evaluations: rl.cf.separator_margins,
rl.cf.phase2_constants, rl.cf.lemma_b5, rl.cf.direction_bound, rl.cf.loss_bound,
rl.cf.frozen_attention_limit, rl.cf.max_margin, rl.cf.cot_recurrences."""

import functools
import itertools
import sys
from pathlib import Path

import mpmath
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations.regular_language import cot as C
from derivations.regular_language import phase2 as P2

sys.path.insert(0, str(Path(__file__).parent))
import test_regular_language_reference as R  # noqa: E402

MP = mpmath.mpf


def bisect(g, lo, hi, steps=400):
    """The root of a monotone g on [lo, hi] by bisection (an independent root finder)."""
    lo, hi = MP(lo), MP(hi)
    up = g(hi) > g(lo)
    for _ in range(steps):
        mid = (lo + hi) / 2
        if (g(mid) > 0) == up:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def num(point):
    return {k: MP(R.rational(v).p) / R.rational(v).q for k, v in point.items()}


def test_separator_margin_items_agree_with_mpmath():
    item = P2.item_separator_margins(max_len=4)
    for formula in item.formulas:
        if ".length1." in formula.id:
            R.assert_verdict_matches(formula, lambda p: MP(1))
            continue

        def margin(point, fid=formula.id):
            p = num(point)
            L, w = int(fid.split(".L")[1][:-1]), fid.split(".L")[1][-1]
            v = "b" if w == "a" else "a"
            chars = [w] * L if ".positive." in fid else [v] + [w] * (L - 1)
            scores = [p.get(f"W_{j + 1}{c}_{L}{w}", 0) for j, c in enumerate(chars)]
            e = [mpmath.exp(s / p["lam"]) for s in scores]
            phi = [x / sum(e) for x in e]
            y = 1 if ".positive." in fid else -1
            return y * (phi[0] - phi[1])  # ⟨u_sep, v⟩ with u_sep = Σ_w (E_1^w - E_2^w): +φ_1 at position 1, -φ_2 at 2
        R.assert_verdict_matches(formula, margin)


def test_phase2_constants_formulas_agree_with_mpmath():
    item = P2.item_phase2_constants()
    refs = {
        "T_equality": lambda p: min(p["lam"] / (mpmath.sqrt(3 * p["U"]) * p["eta"] * p["L_max"]),
                                    p["lam"] ** (MP(2) / 3) / (MP(2) ** (MP(2) / 3) * p["eta"] * p["L_max"])),
        "T_equality_threshold": lambda p: mpmath.exp(bisect(
            lambda z: mpmath.exp(z) / mpmath.sqrt(3 * p["U"]) - mpmath.exp(2 * z / 3) / MP(2) ** (MP(2) / 3), -50, 50)),
        "u_chain_terms": lambda p: p["eta"] * p["L_max"] * (p["t"] + 1),  # Σ_{s=0}^{t}: t + 1 terms
        "W_chain_step": lambda p: p["eta"],
        "C0_worst_case": lambda p: max((p["lam"] * mpmath.log(4 * p["L_max"]) + 2 * a * p["lam"] / 2) /
                                       (p["lam"] - b * p["lam"] / 3) for a in (0, 1) for b in (0, 1)),
    }
    for formula in item.formulas:
        with mpmath.workdps(R.DPS):
            R.assert_verdict_matches(formula, lambda p, f=formula: refs[f.id.split(".")[3]](num(p)))


def test_phase2_product_bounds_agree_with_mpmath():
    item = P2.item_phase2_constants()
    for inequality in [i for i in item.inequalities if ".product_" in i.id]:
        margin = inequality.sample_margin(n_points=150)
        p = num(margin.worst_point)
        T = {"b2_rhs": p["lam"] ** (MP(2) / 3) / (MP(2) ** (MP(2) / 3) * p["eta"] * p["L_max"]),
             "b6": p["lam"] ** (MP(2) / 3) / (p["eta"] * p["L_max"])}
        T["min"] = min(T["b2_rhs"], p["lam"] / (mpmath.sqrt(3 * p["U"]) * p["eta"] * p["L_max"]))
        Tv = T[inequality.id.rsplit(".", 1)[1]]
        if "u_star" in inequality.id:
            lhs, rhs = p["U"] * p["eta"] ** 2 * p["L_max"] ** 2 * Tv**2 / p["lam"], p["lam"] / 3
        else:
            lhs, rhs = (p["eta"] * p["L_max"] * Tv) ** 3 / p["lam"], p["lam"] / 2
        assert margin.holds == (lhs <= rhs * (1 + MP(10) ** -20)), inequality.id


def _solve_k(p, constant):
    """The k with t - t0 - 1 = (c‖u*‖²/η) e^{5k/(3‖u*‖)}: the bound the t_k estimate gives at t (numerically)."""
    target = p["t"] - p["t0"] - 1
    return bisect(lambda k: constant * p["U"] ** 2 / p["eta"] * mpmath.exp(5 * k / (3 * p["U"])) - target,
                  -10**4, 10**4)


def test_lemma_b5_formulas_agree_with_a_numerical_inversion():
    item = P2.item_lemma_b5()
    for formula in item.formulas:
        with mpmath.workdps(R.DPS):
            R.assert_verdict_matches(formula, lambda p: _solve_k(num(p), 14))


def test_lemma_b5_chain_steps_agree_with_mpmath():
    item = P2.item_lemma_b5()
    for inequality in item.inequalities:
        margin = inequality.sample_margin(n_points=200)
        with mpmath.workdps(R.DPS):
            p = num(margin.worst_point)
            iid = inequality.id
            if ".chain_step1." in iid:
                x_, r = p["x"], p["r"]
                independent = (9 * (x_ + 1) * mpmath.exp(x_) - 3 * (x_ + r) * (1 + 2 * mpmath.exp(x_))) \
                    * p["U"] ** 2 / p["eta"]
            elif iid.endswith("chain_step2"):
                independent = 14 * (2 * p["x"] / 3 + 1) - 9 * (p["x"] + 1)
            elif iid.endswith("chain_step3"):
                independent = mpmath.exp(5 * p["x"] / 3) - (2 * p["x"] / 3 + 1) * mpmath.exp(p["x"])
            elif iid.endswith("alignment_lower_bound"):
                independent = (1 - p["gamma"] / 3) / (2 * p["U"] * (1 + mpmath.exp(p["a"] + p["b"]))) - \
                    1 / (3 * p["U"] * (1 + 2 * mpmath.exp(p["a"])))
            elif iid.endswith("log_bound"):
                independent = mpmath.log(1 + p["x"]) - p["x"] / 2
            else:
                c0 = 2 * mpmath.log(4 * p["L_max"]) + 2
                n, u, e = p["n_u"], p["U"], p["epsilon_W"]
                independent = mpmath.exp(-n / u - n * e) / 4 - p["L_max"] * mpmath.log(
                    1 + mpmath.exp(-(1 - u * e) * (n / u + c0)))
        assert margin.holds == (independent >= -MP(10) ** -25 * max(1, abs(independent))), iid


def test_direction_bound_items_agree_with_mpmath():
    item = P2.item_direction_bound()
    for formula in item.formulas:
        def ref(point, f=formula):
            p = num(point)
            if "unit_distance" in f.id:
                a, b = (mpmath.cos(p["theta"]), mpmath.sin(p["theta"])), (MP(1), MP(0))
                return mpmath.sqrt((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2)
            return p["unorm"] / p["U"] - p["unorm"] * (1 / (6 * p["U"]) - 1 / p["unorm"]) - 1
        R.assert_verdict_matches(formula, ref)
    for inequality in item.inequalities:
        margin = inequality.sample_margin(n_points=200)
        p = num(margin.worst_point)
        if "step_a" in inequality.id:
            lower = 1 - p["x"] / (1 + p["x"]) - 2 * p["r"] - p["q"]
            independent = (1 - p["r"] - p["q"]) / (1 + p["x"]) - p["r"] - lower
        else:
            independent = p["E"] * (p["Delta"] ** 2 / 2 - p["Delta"] ** 3)
        assert margin.holds == (independent >= 0), inequality.id


def test_loss_bound_formulas_agree_with_mpmath():
    item = P2.item_loss_bound()

    def L_T(p, eta=None, Lmax=None, lam=None, U=None):
        eta, Lmax = eta or p["eta"], Lmax or p.get("L_max", MP(3))
        lam, U = lam or p.get("lam", MP(100)), U or p.get("U", MP(2))
        T = lam ** (MP(2) / 3) / (eta * Lmax)
        return Lmax * U**2 / (eta * mpmath.sqrt(T))

    def exponent(var):
        base = {"eta": MP("0.3"), "L_max": MP(4), "lam": MP(200), "U": MP(2)}
        keys = {"eta": "eta", "L_max": "Lmax", "lam": "lam", "U": "U"}
        return lambda p: mpmath.diff(lambda z: mpmath.log(L_T(base, **{keys[var]: mpmath.exp(z)})),
                                     mpmath.log(base[var]))

    refs = {
        "explicit_step": lambda p: p["L_max"] * mpmath.log(1 + mpmath.exp(-5 / (6 * p["U"]) * (3 * p["U"] / 5) * mpmath.log(
            p["eta"] * (p["t"] - p["t0"] - 1) / (14 * p["U"] ** 2)))),
        "explicit_step_threshold": lambda p: bisect(lambda u: 14 * u**2 / p["eta"] - mpmath.sqrt(14 * u**2 / p["eta"]),
                                                    MP(10) ** -6, 10),
        "L_T": L_T,
        "remark_lambda": lambda p: mpmath.exp(bisect(
            lambda z: mpmath.sqrt(p["eta"]) / mpmath.exp(z / 3) - p["epsilon"], -100, 100)),
        "remark_lambda_derived": lambda p: (p["L_max"] ** MP(1.5) * p["U"] ** 2
                                            / (mpmath.sqrt(p["eta"]) * p["epsilon"])) ** 3,
        "informative_time": lambda p: p["t0"] + 1 + mpmath.exp(bisect(
            lambda z: 14 * p["U"] ** 2 / (p["eta"] * mpmath.exp(z / 2)) - 1, -100, 200)),
    }
    for formula in item.formulas:
        name = formula.id.split(".")[3]
        ref = exponent(formula.id.rsplit(".", 1)[1]) if name == "L_T_exponent" else refs[name]
        with mpmath.workdps(R.DPS):
            R.assert_verdict_matches(formula, lambda p, r=ref: r(num(p)), rel=MP(10) ** -10)


def test_frozen_attention_limits_agree_with_the_implicit_solution():
    item = P2.item_frozen_attention_limit()
    with mpmath.workdps(R.DPS):
        U, w = MP(3), MP("0.4")
        tau = MP(10) ** 30
        a = bisect(lambda a: a + mpmath.exp(a) - 1 - w * tau / U**2, 0, 200)
        loss_rate = tau * w * mpmath.log1p(mpmath.exp(-a)) / U**2
        norm_rate = a * U / mpmath.log(tau)
    for formula in item.formulas:
        agreement = formula.verify(symbolic_seconds=0.05)
        if formula.id.endswith("loss_rate"):
            assert agreement.equal == (abs(loss_rate - 1) < MP(10) ** -20)
        elif formula.id.endswith("norm_growth"):
            # ‖u‖/log τ -> ‖u*‖ only logarithmically slowly: at τ = 1e30 within log(w/U²)/log τ
            assert agreement.equal == (abs(norm_rate / U - 1) < MP("0.1"))
        else:
            R.assert_verdict_matches(formula, lambda p: mpmath.quad(
                lambda z: (1 + mpmath.exp(z)) * num(p)["U"] ** 2 / num(p)["w"], [0, num(p)["a"]]))


def test_max_margin_formulas_agree_with_mpmath():
    item = P2.item_max_margin(max_len=3)
    for formula in item.formulas:
        def ref(point, f=formula):
            p = num(point)
            if "reduced_norm" in f.id:
                return mpmath.sqrt(sum(2 * v**2 for k, v in p.items()))
            if "constraint_count" in f.id:
                return MP(len([(1, 1)] + [(L, y) for L in range(2, 4) for y in (1, -1)]))
            z = [p[k] for k in sorted(p)]
            nz = mpmath.sqrt(sum(v**2 for v in z))
            return (1 / nz) * nz
        R.assert_verdict_matches(formula, ref)


def _parity_by_xor(s):
    return "a" if functools.reduce(lambda acc, c: acc ^ (c == "b"), s, False) is False else "b"


def _ground_truth_cot(s):
    """Sec. 5.2 written out on strings: append a iff w_{L0+t-1} == w_t, t = 1..L0-1."""
    text, L0 = "".join(s), len(s)
    for t in range(1, L0):
        text += "a" if text[L0 + t - 2] == text[t - 1] else "b"
    return text


def _algorithm_1(s):
    """Alg. 1 on strings with the EP predictor 'first token == last token'."""
    window, y = "".join(s), None
    for _ in range(1, len(s)):
        y = "a" if window[0] == window[-1] else "b"
        window = window[1:] + y
    return y


def _pm(text):
    return tuple(1 if c == "a" else -1 for c in text)


def test_cot_recurrence_items_agree_with_independent_procedures():
    item = C.item_cot_recurrences(max_len=8)
    inputs = [s for n in range(1, 9) for s in itertools.product("ab", repeat=n)]
    longer = [s for s in inputs if len(s) >= 2]
    for predicate in item.predicates:
        agreement = predicate.verify()
        pid = predicate.id
        if "automaton.parity" in pid:
            start = predicate.reading["automaton_start"]
            # the last state reads w_1..w_L with transitions from t = 1, or skips w_2 (t2)
            independent = all(_parity_by_xor(s if start == "t1" or len(s) < 2 else s[:1] + s[2:]) == _parity_by_xor(s)
                              for s in inputs)
        elif "example_abb" in pid:
            states = ["a"]
            for t, c in enumerate("bb", start=1):
                applied = predicate.reading["automaton_start"] == "t1" or t >= 2
                states.append(("a" if states[-1] == c else "b") if applied else states[-1])
            independent = states == ["a", "b", "a"]
        elif "full_cot.parity" in pid or "fig1" in pid:
            cases = [tuple("abb")] if "fig1" in pid else longer
            independent = all(_ground_truth_cot(s)[-1] == _parity_by_xor(s) for s in cases)
        elif "truncated.parity" in pid:
            independent = all(_algorithm_1(s) == _parity_by_xor(s) for s in longer)
        elif "full_cot.recurrence" in pid:
            independent = all(
                all(q[len(s) + t - 1] == q[len(s) + t - 2] * q[t - 1] for t in range(1, len(s)))
                for s in longer for q in [_pm(_ground_truth_cot(s))])
        elif "truncated.recurrence" in pid:
            def sequence(s):
                text = "".join(s)
                for t in range(1, len(s)):
                    text += "a" if text[t - 1] == text[len(s) + t - 2] else "b"
                return _pm(text)
            independent = all(sequence(s)[len(s) + t - 1] == sequence(s)[t - 1] * sequence(s)[len(s) + t - 2]
                              for s in longer for t in range(1, len(s)))
        else:  # the automaton's ±1 form: the state after w_1..w_t is their product
            independent = all(_pm(C.automaton(s, "t1"))[t - 1] == _pm(_parity_by_xor(s[:t]))[0]
                              for s in inputs for t in range(1, len(s) + 1))
        assert agreement.equal == independent, pid


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab", min_size=2, max_size=24))
def test_cot_procedures_compute_the_parity(text):
    X = tuple(text)
    assert C.full_cot(X)[-1] == _parity_by_xor(text)
    assert C.truncated_cot(X) == _parity_by_xor(text)
    assert C.automaton(X, "t1")[-1] == _parity_by_xor(text)
