"""tdcheck from Python: run, list, the HTML view, the user APIs, and the requires rule of the runner."""

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import sympy as sp

import tdcheck
from checks.claim import STATUSES, Claim, Outcome
from checks.cli import main
from checks.papers import PAPERS, Paper
from checks.registry import _REGISTRY, register
from checks.runner import execute, plan, run
from derivations.errors import InvalidArgument

# ---- tdcheck.run / tdcheck.list ---------------------------------------------------------------


def test_run_returns_one_verdict_with_a_computed_status():
    (verdict,) = tdcheck.run("ih.cf.M")
    assert isinstance(verdict, tdcheck.Verdict)
    assert verdict.id == "ih.cf.M"
    assert verdict.status in STATUSES
    assert verdict.summary and verdict.evidence["formulas"]
    assert verdict.replay == "tdcheck run ih.cf.M --seed 0"
    assert verdict.pinned == [] and verdict.figures == []


def test_a_pinned_value_reaches_params_pinned_and_replay():
    (verdict,) = tdcheck.run("ih.cf.m", L=10, seed=3)
    assert verdict.params["L"] == 10 and verdict.params["p"] is None
    assert verdict.pinned == ["L"]
    assert verdict.seed == 3
    assert "--param L=10" in verdict.replay and "--seed 3" in verdict.replay
    assert verdict.to_dict()["pinned"] == ["L"]


def test_bad_input_raises_invalid_argument_with_the_command_lines_message(capsys):
    with pytest.raises(InvalidArgument, match=r"wstar=0\.8.*2\*wstar\*\*2 < 1") as error:
        tdcheck.run("ih.cf.L_IH2", wstar=0.8)
    assert main(["run", "ih.cf.L_IH2", "--param", "wstar=0.8"]) == 2
    assert " ".join(str(error.value).split()) in " ".join(capsys.readouterr().err.split())
    with pytest.raises(InvalidArgument, match="wstar"):
        tdcheck.run("ih.cf.M", wstar=0.3)  # a name ih.cf.M does not declare
    with pytest.raises(InvalidArgument, match="close matches"):
        tdcheck.run("ih.cf.L_IH")
    with pytest.raises(InvalidArgument, match="budget='huge'"):
        tdcheck.run("ih.cf.M", budget="huge")
    with pytest.raises(InvalidArgument, match="workers=0"):
        tdcheck.run("ih.cf.M", workers=0)


def test_list_gives_the_listing_records():
    records = tdcheck.list("ih.cf")
    ids = [r["id"] for r in records]
    assert "ih.cf.M" in ids and all(i.startswith("ih.cf.") for i in ids)
    assert {"id", "label", "params", "requires"} <= set(records[0])


def test_html_view_shows_id_status_summary_and_replay():
    (verdict,) = tdcheck.run("ih.cf.M", L=8)
    page = verdict._repr_html_()
    assert "ih.cf.M" in page and verdict.status in page
    assert "tdcheck run ih.cf.M --param L=8 --seed 0" in page
    assert "L (pinned)" in page and "<details>" in page


def test_html_view_cuts_long_evidence_and_shows_figures(tmp_path):
    figure = tmp_path / "f.png"
    rows = [{"i": i, "value": i * 0.5} for i in range(500)]
    verdict = Claim("t.api.html", "t", "label", "claim",
                    lambda ctx: Outcome("fails", "a <b>", {"rows": rows}, [str(figure)])).run()
    page = verdict._repr_html_()
    assert "a &lt;b&gt;" in page
    assert "460 more rows" in page and "<code>verdict.evidence</code>" in page
    assert f'<img src="{figure}"' in page


def test_user_apis_are_reexported():
    from checks import certify, testing

    assert tdcheck.testing.assert_identity is testing.assert_identity
    assert tdcheck.testing.points is testing.points
    assert tdcheck.certify.certify is certify.certify
    assert tdcheck.certify.Certificate is certify.Certificate
    assert tdcheck.certify.certify_inequality is certify.certify_inequality


# ---- assert_identity with a plain mapping as the domain -----------------------------------------


a = sp.Symbol("a", positive=True)
L = sp.Symbol("L", integer=True, positive=True)
k = sp.Symbol("k", integer=True)


def test_assert_identity_accepts_a_mapping_domain():
    agreement = tdcheck.testing.assert_identity(sp.sinh(2 * a), 2 * sp.sinh(a) * sp.cosh(a), {a: (0.01, 5)})
    assert agreement.equal
    geometric = sp.Sum(a**k, (k, 0, L - 1)).doit()
    domain = {a: (0.01, 0.9), L: range(5, 50)}
    assert tdcheck.testing.assert_identity(geometric, (1 - a**L) / (1 - a), domain).equal


def test_assert_identity_with_a_mapping_names_a_counterexample():
    with pytest.raises(AssertionError, match=r"stated != derived at a=[0-9.]+(.|\n)*stated / derived = 2"):
        tdcheck.testing.assert_identity(sp.sinh(2 * a), sp.sinh(a) * sp.cosh(a), {a: (0.01, 5)})


# ---- requires: prerequisites run first; a broken one makes its dependents inconclusive -----------


@pytest.fixture
def claims(monkeypatch):
    """Register test-only claims (paper ``t``), removed afterwards; ``calls`` records the checks run."""
    # a paper whose checks module is one already imported: loading it registers nothing
    monkeypatch.setitem(PAPERS, "t", Paper("t", "test-only claims", "", "", "checks.claim"))
    made, calls = [], []

    def add(claim_id, status="holds", *, crash=False, requires=(), sleep=0.0):
        def check(ctx):
            calls.append((claim_id, threading.get_ident()))
            time.sleep(sleep)
            if crash:
                msg = f"boom in {claim_id}"
                raise RuntimeError(msg)
            return Outcome(status, f"{claim_id} computed {status}")

        made.append(register(Claim(claim_id, "t", f"test {claim_id}", "claim", check, requires=requires)))
        return made[-1]

    add.calls = calls
    yield add
    for c in made:
        _REGISTRY.pop(c.id, None)


def _ran(calls):
    return [cid for cid, _ in calls]


def test_a_holding_prerequisite_runs_first_and_its_dependent_runs(claims):
    claims("t.req.base", "holds")
    claims("t.req.top", "fails", requires=("t.req.base",))
    result = run("t.req.top", workers=1)
    assert [v.claim_id for v in result.verdicts] == ["t.req.base", "t.req.top"]
    assert result.prerequisite_of == {"t.req.base": ["t.req.top"]}
    assert _ran(claims.calls) == ["t.req.base", "t.req.top"]
    assert result.verdicts[1].status == "fails"  # its own check decided
    # tdcheck.run returns the selected claims only
    assert [v.id for v in tdcheck.run("t.req.top")] == ["t.req.top"]


def test_a_failing_prerequisite_makes_its_dependents_inconclusive_without_running_them(claims):
    claims("t.req.base", "fails")
    claims("t.req.mid", requires=("t.req.base",))
    claims("t.req.top", requires=("t.req.mid",))
    claims("t.req.other", requires=("t.req.base",))
    result = run(["t.req.top", "t.req.other"], workers=1)
    assert [v.claim_id for v in result.verdicts] == ["t.req.base", "t.req.mid", "t.req.top", "t.req.other"]
    assert result.prerequisite_of == {"t.req.base": ["t.req.mid", "t.req.other"], "t.req.mid": ["t.req.top"]}
    base, mid, top, other = result.verdicts
    assert base.status == "fails"
    assert mid.status == other.status == "inconclusive"
    assert mid.evidence["broken_prerequisites"] == {"t.req.base": "fails"}
    assert "t.req.base fails" in other.summary
    assert "t.req.mid" not in _ran(claims.calls) and "t.req.other" not in _ran(claims.calls)
    # a claim skipped on a broken base is broken for its own dependents: the break runs down the chain
    assert top.status == "inconclusive" and top.evidence["broken_prerequisites"] == {"t.req.mid": "not-run"}
    assert "t.req.top" not in _ran(claims.calls)


def test_a_crashing_prerequisite_is_a_bug_and_its_dependent_is_inconclusive(claims, capsys):
    claims("t.req.base", crash=True)
    claims("t.req.top", requires=("t.req.base",))
    result = run("t.req.top", workers=1)
    ((error,),) = [result.errors]
    assert error["id"] == "t.req.base" and "boom in t.req.base" in error["traceback"]
    (top,) = result.verdicts
    assert top.status == "inconclusive"
    assert top.evidence["broken_prerequisites"] == {"t.req.base": "crashed"}
    with pytest.raises(tdcheck.CheckCrashed, match="bug in tdcheck") as crash:
        tdcheck.run("t.req.top")
    assert crash.value.claim_id == "t.req.base"
    assert "RuntimeError: boom in t.req.base" in crash.value.traceback
    assert [v.id for v in crash.value.verdicts] == ["t.req.top"]


def test_selected_prerequisites_keep_the_selection_order_but_run_first(claims):
    claims("t.req.a", requires=("t.req.b",))
    claims("t.req.b", "fails")
    result = run("t.req.*", workers=1)
    assert [v.claim_id for v in result.verdicts] == ["t.req.a", "t.req.b"]
    assert result.prerequisite_of == {}
    assert _ran(claims.calls) == ["t.req.b"]
    assert result.verdicts[0].status == "inconclusive"


def test_waves_on_an_executor_run_prerequisites_before_dependents(claims):
    claims("t.req.base", "holds", sleep=0.05)
    claims("t.req.side", "fails", sleep=0.05)
    claims("t.req.top", requires=("t.req.base", "t.req.side"))
    the_plan = plan("t.req.top")
    assert the_plan.waves == [["t.req.base", "t.req.side"], ["t.req.top"]]
    ticks = []
    with ThreadPoolExecutor(2) as pool:
        result = execute(the_plan, workers=2, executor=pool, progress=ticks.append)
    # top's job was built after the first wave ended: it saw side's status and did not run
    assert "t.req.top" not in _ran(claims.calls)
    statuses = {v.claim_id: v.status for v in result.verdicts}
    assert statuses == {"t.req.base": "holds", "t.req.side": "fails", "t.req.top": "inconclusive"}
    assert len({thread for _, thread in claims.calls}) == 2  # the first wave ran in parallel
    assert [t.done for t in ticks] == [1, 2, 3] and ticks[-1].claim_id == "t.req.top"


def test_worker_processes_give_the_verdicts_in_selection_order():
    result = run(["ih.cf.m", "ih.cf.M"], workers=2)
    assert result.errors == []
    assert [v.claim_id for v in result.verdicts] == ["ih.cf.M", "ih.cf.m"]  # registration order, as listed
    assert all(v.status in STATUSES for v in result.verdicts)


def test_cycles_and_unknown_ids_are_refused_at_selection(claims):
    claims("t.req.a", requires=("t.req.b",))
    claims("t.req.b", requires=("t.req.a",))
    claims("t.req.lost", requires=("t.req.nothing",))
    with pytest.raises(InvalidArgument, match=r"cycle \(t\.req\.a -> t\.req\.b -> t\.req\.a\)"):
        plan("t.req.a")
    with pytest.raises(InvalidArgument, match=r"t\.req\.lost requires 't\.req\.nothing', which is no"):
        tdcheck.run("t.req.lost")
    assert claims.calls == []


def test_the_command_line_marks_a_prerequisite_in_json_and_table(claims, tmp_path, capsys):
    claims("t.req.base", "holds")
    claims("t.req.top", requires=("t.req.base",))
    out = tmp_path / "run.json"
    assert main(["run", "t.req.top", "--workers", "1", "--json", str(out)]) == 0
    record = json.loads(out.read_text())
    base, top = record["verdicts"]
    assert base["prerequisite_of"] == ["t.req.top"] and "prerequisite_of" not in top
    assert record["counts"] == {"holds": 2}
    assert "run as a prerequisite of t.req.top" in capsys.readouterr().out


# ---- the command line on the shared runner --------------------------------------------------------


def test_the_command_line_still_writes_the_verdict(tmp_path):
    out = tmp_path / "out.json"
    assert main(["run", "ih.cf.M", "--json", str(out)]) == 0
    record = json.loads(out.read_text())
    (verdict,) = record["verdicts"]
    assert verdict["id"] == "ih.cf.M" and verdict["status"] in STATUSES
    assert verdict["pinned"] == [] and record["errors"] == []
    assert set(record) == {"tdcheck", "selectors", "budget", "seed", "elapsed_s", "counts", "verdicts",
                           "errors"}
