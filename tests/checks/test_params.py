"""Declared claim parameters: every default is declared at registration and every pin reaches the check.

The issue these guard ("a pinned parameter can be lost"): check bodies read ``ctx.params.get(x) or D``,
so a pinned 0 fell back to D, and the real defaults hid in check bodies while the registration said None.
"""

import re
from pathlib import Path

import pytest

import checks.induction_head  # noqa: F401  (registers every claim)
from checks.registry import load_all

ROOT = Path(__file__).resolve().parents[2] / "checks"
#: every module under checks/ but the one that defines Context.params
CONVERTED = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py") if p.name != "claim.py")


def _ih_claims():
    return sorted((cid, claim) for cid, claim in load_all().items() if cid.startswith("ih."))


@pytest.mark.parametrize("pins", [{"h": 0}, {"h": 0, "w": 0.2}], ids=["h", "w_and_h"])
def test_a_pinned_zero_reaches_every_monte_carlo_point(pins):
    verdict = load_all()["ih.cf.L_IH2"].run(pins, budget="quick")
    records = verdict.evidence["monte_carlo"]["gaussian"]
    assert records
    assert all(r["h"] == 0 for r in records)
    # the other member of the (w, h) pair is the pinned w, else its declared default
    assert all(r["w"] == pins.get("w", 0.3) for r in records)
    assert verdict.params["h"] == 0 and verdict.pinned == sorted(pins)
    assert "--param h=0" in verdict.replay
    # the displays are compared at h = 0 too: with head 2's value at 0 the literal head-2 range, which
    # differs from the derivation elsewhere, gives the same loss
    assert verdict.evidence["formulas"]["ih.cf.L_IH2.eq10_literal"]["max_relative_gap"] == 0


def test_the_listing_shows_the_default_the_check_uses():
    described = load_all()["ih.cf.flow_wh"].describe()
    assert described["params"]["wstar"] == 0.49
    assert described["declared"]["wstar"]["default"] == 0.49
    # w and h are sampled over the domain only (the flow's hitting times run from θ(0) = σ)
    assert described["declared"]["w"].get("sampled") and described["declared"]["h"].get("sampled")


@pytest.mark.parametrize(("cid", "claim"), _ih_claims(), ids=[cid for cid, _ in _ih_claims()])
def test_a_default_of_none_is_a_sampled_symbol_and_a_flag_default_is_a_choice(cid, claim):
    names = claim.domain.names() if claim.domain is not None else {}
    for param in claim.params:
        if param.default is None:
            assert param.name in names, (
                f"{cid}: {param.name} has no default but is not a symbol of the claim's domain: declare the value "
                "the check uses")
        if param.choices:
            assert param.default in param.choices, f"{cid}: {param.name}={param.default!r} is not one of its choices"


@pytest.mark.parametrize("module", CONVERTED)
def test_checks_read_parameters_through_the_context(module):
    source = (ROOT / module).read_text(encoding="utf-8")
    hits = [i + 1 for i, line in enumerate(source.splitlines()) if re.search(r"\bctx\.params\b", line)]
    assert not hits, f"checks/{module} reads ctx.params at lines {hits}: use ctx.value, ctx.grid or ctx.is_pinned"


def test_a_sweep_configuration_reads_as_pinned_without_touching_the_check_context():
    from checks.induction_head.stage2_runs import at_values, model_values

    ctx = load_all()["ih.exp.ode_vs_sgd"].context({"wstar": 0.3})
    sub = at_values(ctx, alpha=4.0)
    assert model_values(sub)["alpha"] == 4.0 and model_values(sub)["wstar"] == 0.3
    assert sub.params["alpha"] == 4.0 and model_values(ctx)["alpha"] == 1.0 and ctx.pinned == {"wstar": 0.3}


def test_a_pinned_reading_replaces_the_swept_readings():
    verdict = load_all()["ih.dv.thm41_bound"].run({"layer2_range": "unmasked", "p": 8, "L": 10})
    assert set(verdict.evidence["readings"]) == {"unmasked"}
    assert {(r["p"], r["L"]) for r in verdict.evidence["rows"]} == {(8.0, 10)}
