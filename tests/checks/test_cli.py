"""The command line: listing, running, bad input, LaTeX export."""

import json

import pytest

from checks.claim import STATUSES
from checks.cli import main

#: the ih.cf.* items of the spec's deliverables checklist (shared/spec/induction-head.md §11)
IH_CLOSED_FORMS = {
    "ih.cf.M", "ih.cf.m", "ih.cf.softmax_derivative", "ih.cf.lemma8", "ih.cf.ratios", "ih.cf.xi", "ih.cf.L_G4",
    "ih.cf.flow_pg", "ih.cf.stage1", "ih.cf.lemma7", "ih.cf.L_IH2", "ih.cf.flow_wh", "ih.cf.C_properties",
    "ih.cf.w_circ", "ih.cf.R", "ih.cf.lyapunov_uv", "ih.cf.lyapunov_vh", "ih.cf.lemma6",
}


def test_list_json_has_every_closed_form_of_the_spec_with_its_label(capsys):
    assert main(["list", "ih", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    ids = {entry["id"] for entry in listing if entry["id"].startswith("ih.cf.")}
    assert ids == IH_CLOSED_FORMS
    assert all(entry["label"] for entry in listing)


def test_run_writes_json_with_a_computed_status_and_evidence(tmp_path):
    out = tmp_path / "out.json"
    assert main(["run", "ih.cf.M", "--json", str(out)]) == 0
    record = json.loads(out.read_text())
    (verdict,) = record["verdicts"]
    assert verdict["status"] in STATUSES
    assert verdict["evidence"]["formulas"]
    assert verdict["replay"] == "tdcheck run ih.cf.M --seed 0"
    assert record["counts"] == {verdict["status"]: 1}


def test_out_of_domain_parameter_names_the_parameter_constraint_and_range(capsys):
    assert main(["run", "ih.cf.L_IH2", "--param", "wstar=0.8"]) == 2
    message = " ".join(capsys.readouterr().err.split())
    assert "wstar=0.8" in message
    assert "2*wstar**2 < 1" in message
    assert "(0, 0.707107)" in message


def test_unknown_selector_lists_close_matches(capsys):
    assert main(["run", "ih.cf.L_IH"]) == 2
    message = " ".join(capsys.readouterr().err.split())
    assert "ih.cf.L_IH2" in message and "close matches" in message


@pytest.mark.parametrize("param", ["wstar", "=3", "wstar=", "1x=2"])
def test_malformed_param_says_what_the_form_is(param, capsys):
    assert main(["run", "ih.cf.L_IH2", "--param", param]) == 2
    assert "NAME=VALUE" in capsys.readouterr().err


def test_param_unknown_to_every_selected_claim_is_refused(capsys):
    assert main(["run", "ih.cf.M", "--param", "wstar=0.3"]) == 2
    assert "wstar" in capsys.readouterr().err


def test_a_claims_progress_reaches_the_callback_clamped_to_0_1():
    from checks.claim import Claim, Outcome

    seen = []

    def check(ctx):
        ctx.report_progress(0.5, "half")
        ctx.report_progress(2.0, "past the end")
        return Outcome("holds", "ok")

    verdict = Claim("t.progress", "t", "label", "claim", check).run(progress=lambda f, m: seen.append((f, m)))
    assert verdict.status == "holds"
    assert seen == [(0.5, "half"), (1.0, "past the end")]
