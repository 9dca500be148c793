"""pytest plugin of tdcheck: a seed option, a Hypothesis profile for JIT code, and a claim marker.

Installed tdcheck registers this module through the ``pytest11`` entry point ``tdcheck``, so it is
active in every pytest run of that environment (disable it with ``-p no:tdcheck``). Without the
installed entry point, load it with ``-p checks.pytest_plugin``.

``--tdcheck-seed N`` and the ``tdcheck_seed`` fixture
    The root seed for Monte-Carlo and sampling in tests (default 0), so a failure can be replayed
    and a test re-run under other seeds from the command line.

Hypothesis profile ``tdcheck``
    ``deadline=None`` (the first call of a numba kernel compiles, which is not slowness) and the
    ``too_slow`` health check suppressed. It is registered unless a profile of that name exists,
    and loaded only when nothing else chose a profile: the active profile is Hypothesis' own
    ``default`` still with its deadline, and no ``--hypothesis-profile`` was given.

``@pytest.mark.tdcheck(selector, expect=None, params=None, budget="quick")``
    Runs the registered claim(s) matching ``selector`` (an id such as ``"ih.cf.M"`` or a glob)
    before the test body, with ``--tdcheck-seed``. The test errors when a check crashes (a bug in
    tdcheck) and fails when a verdict is ``fails`` or ``differs``; ``expect="differs"`` (or a
    tuple of statuses) instead requires every verdict to be one of them. The verdicts are available
    to the test body through the ``tdcheck_verdicts`` fixture.
"""

from __future__ import annotations

import pytest

from checks.claim import STATUSES, Verdict

#: Verdicts that make a marked test fail when ``expect`` is not given.
FAILING = ("fails", "differs")

_VERDICTS = pytest.StashKey[list[Verdict]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--tdcheck-seed``."""
    group = parser.getgroup("tdcheck")
    group.addoption(
        "--tdcheck-seed", type=int, default=0, dest="tdcheck_seed",
        help="root seed for tdcheck claims and the tdcheck_seed fixture (default 0)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker and the Hypothesis profile."""
    config.addinivalue_line(
        "markers",
        "tdcheck(selector, expect=None, params=None, budget='quick'): run the registered tdcheck "
        "claim(s) matching selector; fail on a 'fails'/'differs' verdict unless expect names it",
    )
    _hypothesis_profile(config)


def _hypothesis_profile(config: pytest.Config) -> None:
    try:
        from hypothesis import HealthCheck, settings
        from hypothesis.errors import InvalidArgument as HypothesisInvalidArgument
    except ImportError:  # Hypothesis is a test extra: the marker and the seed work without it
        return
    try:
        settings.get_profile("tdcheck")
    except HypothesisInvalidArgument:
        settings.register_profile(
            "tdcheck", deadline=None, max_examples=50, suppress_health_check=[HealthCheck.too_slow]
        )
    chosen_on_command_line = config.getoption("hypothesis_profile", default=None) is not None
    untouched_default = settings.get_current_profile_name() == "default" and (
        settings.get_profile("default").deadline is not None
    )
    if untouched_default and not chosen_on_command_line:
        settings.load_profile("tdcheck")


@pytest.fixture(scope="session")
def tdcheck_seed(request: pytest.FixtureRequest) -> int:
    """Return the seed given with ``--tdcheck-seed`` (default 0); session-scoped, usable with ``@given``."""
    return int(request.config.getoption("tdcheck_seed", default=0))


def _expected(marker: pytest.Mark, nodeid: str) -> tuple[str, ...] | None:
    expect = marker.kwargs.get("expect")
    if expect is None:
        return None
    statuses = (expect,) if isinstance(expect, str) else tuple(expect)
    unknown = [s for s in statuses if s not in STATUSES]
    if unknown:
        msg = f"{nodeid}: @pytest.mark.tdcheck(expect={expect!r}): {unknown} not among {STATUSES}"
        raise pytest.UsageError(msg)
    return statuses


def _run_marked(item: pytest.Item, marker: pytest.Mark) -> list[Verdict]:
    from checks.registry import select

    if len(marker.args) != 1 or not isinstance(marker.args[0], str):
        msg = f"{item.nodeid}: @pytest.mark.tdcheck takes one selector string, e.g. 'ih.cf.M'"
        raise pytest.UsageError(msg)
    seed = int(item.config.getoption("tdcheck_seed", default=0))
    params = dict(marker.kwargs.get("params") or {})
    budget = marker.kwargs.get("budget", "quick")
    return [c.run(params, budget=budget, seed=seed) for c in select([marker.args[0]])]


@pytest.fixture
def tdcheck_verdicts(request: pytest.FixtureRequest) -> list[Verdict]:
    """Return the verdicts computed for this test's ``@pytest.mark.tdcheck`` marker (empty without one)."""
    return request.node.stash.get(_VERDICTS, [])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Run the marked claims during setup: a crash in a check is an error, not a failure."""
    marker = item.get_closest_marker("tdcheck")
    if marker is not None:
        _expected(marker, item.nodeid)
        item.stash[_VERDICTS] = _run_marked(item, marker)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """Fail the test when a verdict is not what the marker expects."""
    marker = item.get_closest_marker("tdcheck")
    if marker is None:
        return
    verdicts = item.stash.get(_VERDICTS, [])
    expected = _expected(marker, item.nodeid)
    wrong = [v for v in verdicts if (v.status in FAILING if expected is None else v.status not in expected)]
    for v in verdicts:
        item.add_report_section("call", "tdcheck", _line(v))
    if wrong:
        want = f"expected {' or '.join(expected)}" if expected else f"expected none of {', '.join(FAILING)}"
        lines = [f"tdcheck verdict(s) {want}:", *(_line(v) for v in wrong)]
        pytest.fail("\n".join(lines), pytrace=False)


def _line(v: Verdict) -> str:
    return f"  {v.claim_id}: {v.status} -- {v.summary}\n    replay: {v.replay}"

