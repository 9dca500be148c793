"""Long runs: ``--json`` rewritten as claims complete, Ctrl-C keeps what completed (exit 130), ``--resume``."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checks.cli import INTERRUPTED, TERMINATED, main
from checks.run_file import RunFile
from checks.runner import run, run_record

CHEAP = ["ih.cf.m", "ih.cf.L_G4"]  # L_G4 declares g and alpha, m does not


def test_the_file_is_the_run_record_character_for_character(tmp_path):
    result = run(CHEAP, workers=1)
    run_file = RunFile(tmp_path / "out.json", selectors=CHEAP, budget="quick", seed=0)
    run_file.write(result)
    expected = json.dumps(run_record(result, selectors=CHEAP, budget="quick", seed=0), indent=2) + "\n"
    assert (tmp_path / "out.json").read_text() == expected
    assert not [p for p in tmp_path.iterdir() if p.name != "out.json"], "a temporary file was left behind"


def test_the_file_grows_with_each_completed_claim(tmp_path, monkeypatch):
    seen = []
    write = RunFile.write

    def spy(self, result):
        write(self, result)
        seen.append([v["id"] for v in json.loads(self.path.read_text())["verdicts"]])

    monkeypatch.setattr(RunFile, "write", spy)
    assert main(["run", *CHEAP, "--workers", "1", "--json", str(tmp_path / "out.json")]) == 0
    assert seen[:2] == [CHEAP[:1], CHEAP]  # one write per claim, then the final one
    assert seen[-1] == CHEAP


def test_resume_reuses_matching_verdicts_and_recomputes_a_changed_one(tmp_path, capsys):
    path = str(tmp_path / "out.json")
    assert main(["run", *CHEAP, "--workers", "1", "--json", path]) == 0
    first = {v["id"]: v for v in json.loads(Path(path).read_text())["verdicts"]}
    capsys.readouterr()
    assert main(["run", *CHEAP, "--workers", "1", "--json", path, "--resume", "--param", "g=0.3"]) == 0
    err = capsys.readouterr().err
    assert "1 of 2 verdicts" in err and "reused 1 verdicts" in err
    document = json.loads(Path(path).read_text())
    again = {v["id"]: v for v in document["verdicts"]}
    assert document["reused"] == 1
    assert again["ih.cf.m"] == first["ih.cf.m"]  # reused as it was, timing included
    assert again["ih.cf.L_G4"]["params"]["g"] == 0.3 and again["ih.cf.L_G4"]["pinned"] == ["g"]
    assert main(["run", *CHEAP, "--workers", "1", "--json", path, "--resume", "--seed", "1"]) == 0
    assert "0 of 2 verdicts" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "pattern"), [
    (["--resume"], "--resume needs --json PATH"),
    (["--resume", "--json", "-"], "--resume needs --json PATH"),
])
def test_resume_without_a_file_is_refused(args, pattern, capsys):
    assert main(["run", *CHEAP, *args]) == 2
    assert pattern in capsys.readouterr().err


def test_resume_refuses_a_file_that_is_not_a_run(tmp_path, capsys):
    path = tmp_path / "notes.json"
    path.write_text("my notes, not a run")
    assert main(["run", *CHEAP, "--json", str(path), "--resume"]) == 2
    assert "is not the --json file of a 'tdcheck run'" in " ".join(capsys.readouterr().err.split())
    assert path.read_text() == "my notes, not a run"


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (the fork server, the workers it forked, the resource tracker)."""
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True, check=False)
    parent = dict(reversed(tuple(map(int, line.split()))) for line in out.stdout.splitlines() if line.strip())
    children: dict[int, list[int]] = {}
    for child, ppid in ((c, p) for p, c in parent.items()):
        children.setdefault(ppid, []).append(child)
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and signals are POSIX")
@pytest.mark.parametrize("how", ["ctrl_c", pytest.param("kill", marks=pytest.mark.slow)])
def test_an_interrupt_keeps_the_completed_verdicts_and_stops_the_workers(tmp_path, how):
    """Ctrl-C (SIGINT to the whole process group, exit 130) and ``kill`` (SIGTERM to the parent alone, as
    pkill or a batch system's time limit sends it, exit 143) end the same way."""
    path = tmp_path / "out.json"
    process = subprocess.Popen([sys.executable, "-m", "checks.cli", "run", "rl.cf.*", "--workers", "2",
                                "--json", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True, cwd=Path(__file__).parents[2])
    deadline = time.monotonic() + 300
    while not path.exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    assert process.poll() is None, "the run ended before a verdict was written: select slower claims"
    # the second worker has started its claim; short, since with budgets counted in boxes the
    # claims after the first (kernels compiled by then) can finish within a second or two
    time.sleep(0.2)
    workers = _descendants(process.pid)
    assert len(workers) >= 2, workers
    if how == "ctrl_c":
        os.killpg(process.pid, signal.SIGINT)
    else:
        os.kill(process.pid, signal.SIGTERM)
    try:
        stdout, stderr = process.communicate(timeout=180)  # generous: a loaded CI machine stops slowly
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()  # reap it and close its pipes before failing
        pytest.fail(f"the run did not stop within 180 s of the {how}; stderr: {stderr[-2000:]}")
    assert process.returncode == (INTERRUPTED if how == "ctrl_c" else TERMINATED), stderr
    assert "Traceback" not in stderr and "Warning" not in stderr, stderr
    document = json.loads(path.read_text())
    done = len(document["verdicts"])
    assert 1 <= done < 24
    assert document["interrupted"] == f"interrupted: {done} of 24 claims"
    assert f"interrupted: {done} of 24 claims" in stderr
    assert document["verdicts"][0]["id"] in stdout  # the table of what completed
    alive = workers
    for _ in range(50):  # the fork server and the resource tracker leave once the run's pipes close
        alive = [pid for pid in workers if Path(f"/proc/{pid}").exists()
                 and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]]
        if not alive:
            break
        time.sleep(0.1)
    commands = {pid: Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")[:120] for pid in alive}
    assert not alive, f"processes of the run outlived it: {commands}"
