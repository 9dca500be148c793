"""The rl closed-form claims: registration, pins refused by name, and verdicts against brute force."""

import itertools

import pytest

from checks.cli import main
from checks.registry import load_all


def test_a_negative_temperature_is_refused_by_name(capsys):
    assert main(["run", "rl.cf.gradient", "--param", "lam=-1"]) == 2
    err = capsys.readouterr().err
    assert "lam=-1" in err and "(0, inf)" in err


def test_an_item_without_the_parameter_refuses_its_pin(capsys):
    assert main(["run", "rl.cf.ep_label", "--param", "lam=2"]) == 2
    assert "lam" in capsys.readouterr().err


def _automaton_t2_agrees(s):
    """The printed sentence's automaton: transitions only for t = 2..L-1 (s_2 = s_1), last state a = even."""
    state = s[0]
    for t in range(2, len(s)):  # 1-based t = 2..L-1 reads w_{t+1} = s[t]
        state = "a" if state == s[t] else "b"
    return (state == "a") == (s.count("b") % 2 == 0)


def test_the_automaton_readings_are_decided_as_brute_force_finds_them():
    verdict = load_all()["rl.cf.cot_recurrences"].run({})
    formulas = verdict.evidence["formulas"]
    t2 = [r for fid, r in formulas.items() if fid.endswith("automaton.parity.t2")]
    assert t2, sorted(formulas)
    wrong = sum(not _automaton_t2_agrees("".join(s)) for L in range(1, 11) for s in itertools.product("ab", repeat=L))
    assert (t2[0]["status"] == "differs") == (wrong > 0)
    assert ("automaton.parity.t2" in " ".join(verdict.evidence.get("differs_under_other_readings", []))) == (wrong > 0)


@pytest.mark.parametrize("item_id", ["rl.cf.ep_label", "rl.cf.effective_rate"])
def test_items_run_and_record_their_readings(item_id):
    verdict = load_all()[item_id].run({})
    assert verdict.status in {"holds", "differs", "fails", "certified", "inconclusive"}
    assert verdict.evidence["formulas"], "no display was compared"
