"""Options and parameter sets as records: listed and selected like claims, never run as checks."""

import json
import subprocess
import sys

import pytest

from checks.registry import load_all, select, select_records
from derivations.errors import InvalidArgument


def test_every_ss_option_and_parameter_set_is_a_record():
    from derivations.scan_snap.symbols import READINGS

    ids = {r.id for r in select_records(["ss"])}
    assert {f"ss.opt.{flag}" for flag in READINGS} <= ids
    assert {"ss.cfg.K3_shared", "ss.cfg.thm_hyp", "ss.cfg.randE"} <= ids
    assert not ids & set(load_all()), "a record id is also a claim id"


def test_selecting_a_record_selects_no_claim_and_a_wrong_id_is_still_refused():
    assert select(["ss.opt.eprime"]) == []
    with pytest.raises(InvalidArgument, match="matches no claim"):
        select(["ss.opt.no_such_option"])


def test_a_configuration_record_computes_its_setting_quantities():
    (record,) = select_records(["ss.cfg.K3_shared"])
    shown = record.evaluate()
    derived = shown["derived"]
    assert derived["M"] == 23 and derived["K"] == 3 and derived["G_CT"] == [0]
    margins = derived["assumption2_margins"]
    assert margins["M_over_K2"] == pytest.approx(23 / 9)
    json.dumps(shown)  # JSON-ready


def test_cli_run_of_records_prints_them_and_exits_0():
    done = subprocess.run([sys.executable, "-m", "checks.cli", "run", "ss.opt.eprime", "ss.cfg.thm_hyp"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "lemma14" in done.stdout and "assumption2_margins" in done.stdout
