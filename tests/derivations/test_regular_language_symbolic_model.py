"""rl derivations of the model, loss, EP label and gradients, checked against the independent mpmath
reference (test_regular_language_reference): rl.cf.model_loss, rl.cf.ep_label, rl.cf.gradient,
rl.cf.gradient_projections(_b1), rl.cf.effective_rate, rl.cf.gradient_norm_bounds."""

import itertools
import random
import re
import sys
from pathlib import Path

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations import regular_language as RL
from derivations.regular_language import data as D
from derivations.regular_language import loss_gradient as G
from derivations.regular_language import model as M
from derivations.regular_language import projections as P
from derivations.regular_language.bounds import item_gradient_norm_bounds
from derivations.regular_language.symbols import READINGS, check_reading, eta, lam

sys.path.insert(0, str(Path(__file__).parent))
import test_regular_language_reference as R  # noqa: E402

SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec" / "regular-language.md"


def test_registry_holds_every_closed_form_item_of_the_spec():
    if not SPEC.exists():
        pytest.skip(f"{SPEC} not found")
    text = SPEC.read_text()
    wanted = set(re.findall(r"^- \[[ x]\] (rl\.cf\.[a-z0-9_]+)", text, re.M))
    assert wanted == set(RL.ITEMS)


def test_readings_have_the_canonical_value_first():
    assert READINGS["ep_count"][0] == "contiguous" and READINGS["boost_steps"][0] == "t_lt_t0"
    assert READINGS["logistic_rhs"] == ("as_printed", "abs") and READINGS["automaton_start"] == ("t1", "t2")
    with pytest.raises(ValueError, match="automaton_start='t3'"):
        check_reading("automaton_start", "t3")


def test_dataset_sizes_and_weights():
    ep = D.ep_dataset(6)
    assert len(ep.samples) == 126 and sum(s.weight for s in ep.samples) == 6
    assert len(M.live_W_entries(ep)) == 70  # spec §2.4
    cot = D.cot_dataset(4)
    assert cot.max_len == 7 and sum(s.weight for s in cot.samples) == 7
    assert D.cot_dataset(4, reg_max_len="L0").multiplicity(4) == 2


def test_model_loss_item_agrees_with_the_reference():
    item = G.item_model_loss(ep_lengths=(1, 3), cot_L0=(3,), general_max_len=2)
    for formula in item.formulas:
        if formula.id.startswith("rl.cf.model_loss.zero.EP"):
            n = int(formula.id.rsplit("Lmax", 1)[1])
            R.assert_verdict_matches(formula, lambda _, n=n: R.loss(R.ep_samples(n), {}, {}, 1))
        elif ".CoT_" in formula.id:
            reading = formula.reading
            top = 5 if reading["cot_max_len"] == "2L0-1" else 4
            samples = R.cot_samples(3, top) + (R.ep_samples(3)[-8:] if reading["reg_max_len"] == "L0" else [])
            R.assert_verdict_matches(formula, lambda _, s=samples: R.loss(s, {}, {}, 1))
        else:
            R.assert_verdict_matches(formula, lambda p: R.loss(R.ep_samples(2), *R.params_from(p)[:3]))


def _literal_pairs(s, mode):
    """N_P by matching every pair (i < j) or every adjacent pair against {ab, ba}, written independently."""
    text = "".join(s)
    if mode == "contiguous":
        return sum(text[i:i + 2] in ("ab", "ba") for i in range(len(text) - 1))
    return sum(1 for i, j in itertools.combinations(range(len(text)), 2) if text[i] != text[j])


def test_ep_label_item_agrees_with_an_independent_count():
    item = G.item_ep_label(max_len=9)
    for predicate in item.predicates:
        mode = predicate.reading["ep_count"]
        agreement = predicate.verify()
        if "example" in predicate.id:
            pairs = ([(i, i + 1) for i in range(4)] if mode == "contiguous"
                     else list(itertools.combinations(range(5), 2)))
            counts = tuple(sum("aabba"[i] + "aabba"[j] == p for i, j in pairs) for p in ("ab", "ba"))
            assert agreement.equal == (counts == (1, 1))  # "there is one ab and one ba"
            continue
        mismatches = [s for n in range(1, 10) for s in R.strings(n)
                      if (_literal_pairs(s, mode) % 2 == 0) != (s[0] == s[-1])]
        assert agreement.equal == (not mismatches)
        if mismatches:
            assert agreement.point["case"] == "".join(mismatches[0])


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="ab", min_size=1, max_size=30))
def test_contiguous_pair_count_parity_is_first_vs_last(text):
    assert D.ep_label(tuple(text)) == D.first_last_label(tuple(text))


@settings(max_examples=12, deadline=None)
@given(st.integers(2, 4), st.integers(0, 10**6))
def test_symbolic_gradient_equals_the_reference(max_len, seed):
    ds = D.ep_dataset(max_len)
    grads = M.gradient(ds)
    point = R.random_point(sorted(set().union(*(g.free_symbols for g in grads.values())), key=str), seed)
    u, W, lamv, _ = R.params_from(point)
    with mpmath.workdps(R.DPS):
        gu, gW = R.grads(R.ep_samples(max_len), u, W, lamv)
        for sym in random.Random(seed).sample(sorted(grads, key=str), 4):
            ref = gu.get(R.key_of(sym.name), 0) if sym.name.startswith("u_") else gW.get(R.key_of(sym.name), 0)
            assert R.close(R.evaluate(grads[sym], point), ref, mpmath.mpf(10) ** -25), sym


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 10**6))
def test_gradient_commutes_with_the_global_flip(seed):
    ds = D.ep_dataset(3)
    grads = M.gradient(ds)
    from derivations.regular_language.reduced import global_flip

    symbols = sorted(set().union(*(g.free_symbols for g in grads.values())), key=str)
    point = R.random_point(symbols, seed)
    flipped = {global_flip(s) if s.name[:2] in ("u_", "W_") else s: v for s, v in point.items()}
    for sym in list(grads)[:6]:
        assert R.close(R.evaluate(grads[sym], point), R.evaluate(grads[global_flip(sym)], flipped))


def test_gradient_at_zero_has_uniform_attention_and_a_quarter_on_E1():
    ds = D.ep_dataset(4)
    zero = M.gradient_at(ds, {})
    assert all(v == (sp.Rational(-1, 4) if s.name in ("u_1a", "u_1b") else 0) for s, v in zero.items())
    for sample in ds.samples:
        assert [M.at(p, {}) for p in M.attention(sample)] == [sp.Rational(1, sample.length)] * sample.length


def _reference_coordinate(name, max_len):
    def value(point):
        u, W, lamv, _ = R.params_from(point)
        gu, gW = R.grads(R.ep_samples(max_len), u, W, lamv)
        return gu.get(R.key_of(name), 0) if name.startswith("u_") else gW.get(R.key_of(name), 0)
    return value


def test_gradient_item_agrees_with_the_reference():
    item = G.item_gradient(max_len=2, template_length=3)
    for formula in item.formulas:
        if ".dT_ds." in formula.id or ".W_form." in formula.id:
            continue  # template identities: covered by the Hypothesis test below
        name = formula.id.split(".")[4]
        R.assert_verdict_matches(formula, _reference_coordinate(name, 2))


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6))
def test_dT_ds_identity_matches_numerical_differentiation(seed):
    formulas = G.dT_ds_formulas(3)
    rng = random.Random(seed)
    v = [mpmath.mpf(rng.uniform(-3, 3)) for _ in range(3)]
    s = [mpmath.mpf(rng.uniform(-3, 3)) for _ in range(3)]
    lamv = mpmath.mpf(10 ** rng.uniform(-1, 2))
    point = {**{f"v{i + 1}": v[i] for i in range(3)}, **{f"s{i + 1}": s[i] for i in range(3)}, "lam": lamv}

    def T(i, x):
        ss = list(s)
        ss[i] = x
        e = [mpmath.exp(z / lamv) for z in ss]
        return sum(vi * ei for vi, ei in zip(v, e)) / sum(e)

    with mpmath.workdps(R.DPS):
        for f in formulas:
            i = int(f.id.rsplit(".l", 1)[1]) - 1
            numeric = mpmath.diff(lambda x, i=i: T(i, x), s[i]) * (lamv if ".W_form." in f.id else 1)
            assert R.close(R.evaluate(f.stated, point), numeric, mpmath.mpf(10) ** -20), f.id
            assert R.close(R.evaluate(f.derived, point), numeric, mpmath.mpf(10) ** -20), f.id


@pytest.mark.parametrize("builder", [P.item_gradient_projections, P.item_gradient_projections_b1])
def test_projection_items_agree_with_the_reference(builder):
    item = builder(max_len=3)
    chosen = [f for f in item.formulas if f.id.endswith("Lmax3")]  # the as-printed comparisons
    picked = random.Random(0).sample(chosen, 8) + [f for f in chosen if "line4.l2.L3a" in f.id]
    for formula in picked:
        coordinate = re.search(r"∂L/∂(u_\w+|W_\w+)", formula.description).group(1)
        R.assert_verdict_matches(formula, _reference_coordinate(coordinate, 3))


def test_effective_rate_item_agrees_with_the_reference():
    item = G.item_effective_rate(max_len=2)
    for formula in random.Random(1).sample(item.formulas, 6):
        mode, entry = formula.id.split(".")[3], formula.id.split(".")[4]
        factor = {"phase1": 1, "vanilla_etalambda": 1, "phase2": 0, "vanilla_eta": 0}[mode]

        def reference(point, entry=entry, factor=factor):
            u, _, lamv, rest = R.params_from(point)
            W = {R.key_of("W" + k[1:]): v * lamv for k, v in rest.items() if k.startswith("K_")}
            _, gW = R.grads(R.ep_samples(2), u, W, lamv)
            eta_v = rest["eta"]
            return -(eta_v * lamv if factor else eta_v) * gW.get(R.key_of(entry), 0) / lamv

        R.assert_verdict_matches(formula, reference)


def test_gradient_norm_bounds_margins_are_the_reference_norms():
    item = item_gradient_norm_bounds(max_len=2)
    for inequality in item.inequalities:
        margin = inequality.sample_margin(n_points=60)
        u, W, lamv, _ = R.params_from(margin.worst_point)
        with mpmath.workdps(R.DPS):
            gu, gW = R.grads(R.ep_samples(2), u, W, lamv)
            norm = mpmath.sqrt(sum(v**2 for v in (gu if ".u." in inequality.id else gW).values()))
            assert R.close(norm, mpmath.mpf(margin.lhs_value), mpmath.mpf(10) ** -13)
            u_norm = mpmath.sqrt(sum(v**2 for v in u.values()))
            bound = {"u": 2, "W": u_norm * 2 / lamv, "W_sharp": u_norm / (2 * lamv)}[inequality.id.split(".")[3]]
            assert margin.holds == (norm <= bound)


def test_gradient_of_sec3_and_A1_losses_are_one_loss():
    ds = D.ep_dataset(2)
    assert sp.expand(M.loss(ds) - M.loss_sec3(ds)) == 0
    assert {eta, lam} & M.loss(ds).free_symbols == {lam}
