"""Caches that heal: a cold run killed at a random moment, then damaged entries of every kind, give the same verdict.

One claim that fills every part of the cache (SymPy results, generated kernels and their memo,
numba's index and data files) runs in a subprocess against a private ``TDCHECK_CACHE_DIR``:

1. a cold run killed with SIGKILL part-way, then a clean rerun (the reference verdict);
2. entries of each kind truncated, emptied or overwritten with garbage, then a rerun: exit 0, the
   reference verdict, and a warning naming each damaged entry that was read.

Plus ``tdcheck cache info/clear`` and :func:`numerics.cache.discard` in process.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checks.cli import main
from numerics import cache

CLAIM = "ih.dv.plateau_level"  # ~30 s cold: SymPy results, kernels, memo and numba entries
ROOT = Path(__file__).parents[2]


def _run(cache_dir: Path, out: Path, *, kill_after: float | None = None) -> subprocess.CompletedProcess | None:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["TDCHECK_CACHE_DIR"] = str(cache_dir)
    command = [sys.executable, "-m", "checks.cli", "run", CLAIM, "--workers", "1", "--json", str(out)]
    if kill_after is None:
        return subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600, check=False)
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT,
                               start_new_session=True)
    time.sleep(kill_after)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    return None


def _damage(path: Path, mode: str, rng: random.Random) -> None:
    data = path.read_bytes()
    if mode == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif mode == "emptied":
        path.write_bytes(b"")
    else:
        path.write_bytes(bytes(rng.randrange(256) for _ in range(max(len(data), 16))))


def _verdict(out: Path) -> dict:
    (verdict,) = json.loads(out.read_text())["verdicts"]
    return {k: verdict[k] for k in ("id", "status", "summary")}


@pytest.mark.slow  # ~50 s (three cold runs of a claim): the default run must stay under 10 min from a fresh clone
@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL of a process group is POSIX")
def test_killed_then_damaged_cold_cache_gives_the_same_verdict(tmp_path):
    cache_dir, out = tmp_path / "cache", tmp_path / "out.json"
    _run(cache_dir, out, kill_after=random.Random(0).uniform(4.0, 12.0))
    clean = _run(cache_dir, out)
    assert clean.returncode == 0, clean.stderr[-3000:]
    reference = _verdict(out)

    rng = random.Random(1)
    kinds = {"sympy": sorted((cache_dir / "sympy").glob("*.pkl")),
             "kernel": sorted((cache_dir / "kernels").glob("*.py")),
             "memo": sorted((cache_dir / "kernels" / "memo").glob("*")),
             "numba index": sorted((cache_dir / "numba").rglob("*.nbi")),
             "numba data": sorted((cache_dir / "numba").rglob("*.nbc"))}
    damaged = {}
    for kind, files in kinds.items():
        assert files, f"the claim wrote no {kind} entry: pick a claim that fills every part of the cache"
        # every memo entry is damaged, so the rerun recomputes every grid and loads every kernel it compiled:
        # a damaged numba entry is then certainly read (with intact memo entries it may never be)
        chosen = files if kind == "memo" else rng.sample(files, min(3, len(files)))
        for i, path in enumerate(chosen):
            _damage(path, ("truncated", "emptied", "garbage")[i % 3], rng)
            damaged[str(path)] = kind
    healed = _run(cache_dir, out)
    assert healed.returncode == 0, healed.stderr[-3000:]
    assert "Traceback" not in healed.stderr and "bug in tdcheck" not in healed.stdout
    assert _verdict(out) == reference
    named = [line.split(":0: CacheWarning")[0] for line in healed.stderr.splitlines() if ":0: CacheWarning" in line]
    assert named, healed.stderr[-3000:]
    assert set(named) <= set(damaged), f"warned about entries that were not damaged: {set(named) - set(damaged)}"
    read = {damaged[p] for p in named}
    assert {"sympy", "numba index"} <= read and len(read) >= 3, named


def test_discard_deletes_the_entry_and_names_it(tmp_path):
    entry = tmp_path / "entry.pkl"
    entry.write_bytes(b"\x80garbage")
    with pytest.warns(cache.CacheWarning, match="EOFError: Ran out of input"):
        cache.discard(entry, EOFError("Ran out of input"))
    assert not entry.exists()


def test_cache_info_and_clear(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TDCHECK_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    (tmp_path / "sympy").mkdir()
    (tmp_path / "sympy" / "a.pkl").write_bytes(b"x" * 1000)
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "f.png").write_bytes(b"y" * 10)
    rows = {r["kind"]: r for r in cache.info()}
    assert (rows["sympy"]["entries"], rows["sympy"]["bytes"]) == (1, 1000)
    assert (rows["kernels"]["entries"], rows["numba"]["entries"]) == (0, 0)
    assert main(["cache", "info"]) == 0
    assert "sympy" in capsys.readouterr().out
    assert main(["cache", "clear", "sympy"]) == 0
    assert not (tmp_path / "sympy").exists() and (tmp_path / "figures" / "f.png").exists()
    assert main(["cache", "clear", "bogus"]) == 2
    assert "unknown cache kind 'bogus'" in capsys.readouterr().err
    assert main(["cache", "clear"]) == 0
    assert not (tmp_path / "figures").exists()
