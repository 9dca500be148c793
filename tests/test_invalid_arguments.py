"""Every invalid-argument path of the user-facing API, in one table: each names the parameter it refuses."""

import numpy as np
import pytest

from checks.cli import main, parse_param
from checks.registry import select
from derivations.errors import InvalidArgument
from numerics.models.induction_head import draw_tokens, stage2_run, token_sampler
from numerics.montecarlo import MonteCarlo
from numerics.ode import Tolerance


def claim(claim_id):
    return select([claim_id])[0]


CASES = [
    ("selector", lambda: select(["ih.cf.nothing"]), "ih.cf.nothing"),
    ("param form", lambda: parse_param("wstar"), "NAME=VALUE"),
    ("param name", lambda: claim("ih.cf.L_IH2").resolve_params({"wstr": 0.3}), "wstr"),
    ("param domain", lambda: claim("ih.cf.L_IH2").resolve_params({"wstar": 0.8}), "2*wstar**2 < 1"),
    ("param integer", lambda: claim("ih.cf.M").resolve_params({"L": 3}), "L=3"),
    ("budget", lambda: claim("ih.cf.M").run(budget="huge"), "budget='huge'"),
    ("token law", lambda: draw_tokens(np.random.default_rng(0), 3, 6, "cauchy"), "tokens='cauchy'"),
    ("sequence length", lambda: token_sampler(4), "L=4"),
    ("sigma", lambda: stage2_run(40, 1.0, 0.49, 1.5), "sigma=1.5"),
    ("wstar", lambda: stage2_run(40, 1.0, 0.75, 0.01), "wstar=0.75"),
    ("init", lambda: stage2_run(40, 1.0, 0.49, 0.01, init="zero"), "init='zero'"),
    ("samples", lambda: MonteCarlo(lambda rng, k: rng.random(k), lambda x, p: x, n=0, seed=0), "n=0"),
    ("tolerance", lambda: Tolerance(-1e-8, 1e-10), "rtol"),
]


@pytest.mark.parametrize(("what", "call", "named"), CASES, ids=[c[0] for c in CASES])
def test_invalid_argument_names_the_parameter(what, call, named):
    with pytest.raises(InvalidArgument) as error:
        call()
    assert named in str(error.value)


@pytest.mark.parametrize("argv", [["run", "--workers", "0", "ih.cf.M"], ["run", "ih.cf.M", "--param", "p=-1"]])
def test_cli_refuses_bad_input_with_status_2(argv, capsys):
    assert main(argv) == 2
    assert "error" in capsys.readouterr().err
