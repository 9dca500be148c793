"""The pytest plugin: --tdcheck-seed, the tdcheck marker, the Hypothesis profile.

Inner runs are subprocesses: an in-process run forgets the modules it imported, and numba's
lazily imported extensions cannot be imported twice in one process.
"""

pytest_plugins = ["pytester"]

MARKED = """
import pytest
from hypothesis import settings

@pytest.mark.tdcheck("ih.cf.M")
def test_M_holds(tdcheck_verdicts):
    assert [v.status for v in tdcheck_verdicts] == ["holds"]

@pytest.mark.tdcheck("ih.cf.m")
def test_m_differs_unexpectedly():
    pass

@pytest.mark.tdcheck("ih.cf.m", expect="differs")
def test_m_differs_as_expected(tdcheck_verdicts):
    assert tdcheck_verdicts[0].seed == 7

@pytest.mark.tdcheck("ih.cf.M", expect="holdz")
def test_typo():
    pass

@pytest.mark.tdcheck("ih.cf.nonexistent")
def test_unknown():
    pass

def test_seed_and_the_users_profile(tdcheck_seed):
    assert tdcheck_seed == 7
    assert settings.get_current_profile_name() == "mine"  # loaded by the user: kept
    assert settings.get_profile("tdcheck").deadline is None  # registered all the same
"""

USER_PROFILE = """
from hypothesis import settings

settings.register_profile("mine", max_examples=3)
settings.load_profile("mine")
"""


def test_marker_seed_and_profile(pytester, plugin_args, inner):
    pytester.makeconftest(USER_PROFILE)
    pytester.makepyfile(test_marked=MARKED)
    args = ("-p", "no:cacheprovider", "--strict-markers", "--tdcheck-seed", "7")
    result = pytester.runpytest_subprocess(*plugin_args, *args)
    result.assert_outcomes(passed=3, failed=1, errors=2)
    result.stdout.fnmatch_lines([
        "*tdcheck verdict(s) expected none of fails, differs:",
        "*ih.cf.m: differs -- *is_derivative_of_M*",
        "*replay: tdcheck run ih.cf.m --seed 7",
    ])
    result.stdout.fnmatch_lines(["*expect='holdz'*not among*"])
    result.stdout.fnmatch_lines(["*selector 'ih.cf.nonexistent' matches no claim*"])
