"""Bit-identity of the trainers across the port onto ``numerics.train`` (a script, not a test module).

``python train_port_identity.py record PATH`` runs small configurations of every trainer
(``train_stage2``, ``train_stage1``, ``train_highdim``, ``train_repeat_task``; SGD and Adam; both
token laws, the pipeline first layer, both head-2 key readings, both Fig. 4 shapes) and saves
every logged array; ``compare PATH`` runs them again and reports, per array, whether it is
bit-identical. The recording at ``data/train_port_baseline.npz`` was made with the trainers'
own loops, before they went through the one driver; ``tests/numerics/test_train.py`` replays it.
Works with both run types (the old ``TrainingRun``/``TransformerRun`` and ``Trajectory``).
"""

from __future__ import annotations

import platform
import sys

import numpy as np


def fingerprint() -> str:
    """Machine and library versions: bit-identity is promised only where these agree."""
    import numba

    cpu = ""
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), "")
    except OSError:
        pass
    versions = f"numpy {np.__version__}|numba {numba.__version__}|py {sys.version_info[:2]}"
    return f"{platform.machine()}|{cpu}|{versions}"


def _columns(run) -> dict[str, np.ndarray]:
    """Every logged array of a run, under one naming for both run types."""
    out = {"t": np.asarray(run.t) if hasattr(run, "t") else None}
    if hasattr(run, "states"):  # Trajectory
        out["steps"] = run.steps
        out.update({f"param.{k}": v for k, v in run.states.items()})
        out.update({f"obs.{k}": v for k, v in run.observables.items()})
    elif hasattr(run, "params"):  # TrainingRun
        out["steps"] = run.iterations
        out.update({f"param.{k}": v for k, v in run.params.items()})
        out.update({f"obs.{k}": v for k, v in run.losses.items()})
    else:  # TransformerRun
        out["steps"] = run.steps
        for old, new in (
            ("loss", "loss"),
            ("copy_loss", "copy_loss"),
            ("slope_norm", "slope_norm"),
            ("wqk_norm", "wqk_norm"),
        ):
            out[f"obs.{new}"] = getattr(run, old)
    return {k: np.asarray(v) for k, v in out.items() if v is not None}


def runs():
    """name → zero-argument callable returning a run."""
    from numerics.models.induction_head.highdim import train_highdim
    from numerics.models.induction_head.sgd import Stage2Config, train_stage1, train_stage2
    from numerics.models.transformer import TransformerConfig, train_repeat_task

    small = {"batch": 64, "iterations": 120, "log_every": 20, "eval_size": 100}
    tconfig = TransformerConfig(vocab=5, d_model=8, ffn=8, context=7)
    return {
        "stage2_sgd": lambda: train_stage2(Stage2Config(L=12, sigma=0.2), lr=0.05, seed=1, **small),
        "stage2_adam": lambda: train_stage2(
            Stage2Config(L=12, sigma=0.2), optimizer="adam", lr=0.01, seed=2, adam=(0.8, 0.99, 1e-7), **small
        ),
        "stage2_boolean_pipeline": lambda: train_stage2(
            Stage2Config(
                L=10,
                sigma=0.3,
                tokens="boolean",
                first_layer=0.9,
                ih_keys="x_prev",
                head1_range="literal",
                ih_model_range="mixed",
            ),
            lr=0.1,
            seed=3,
            **small,
        ),
        "stage2_log_not_dividing": lambda: train_stage2(
            Stage2Config(L=9, sigma=0.2), lr=0.1, seed=4, batch=32, iterations=50, log_every=15, eval_size=50
        ),
        "stage1_sgd": lambda: train_stage1(
            12, 0.1, lr=0.5, batch=200, iterations=100, log_every=10, eval_size=200, seed=5
        ),
        "stage1_eq4_adam": lambda: train_stage1(
            10,
            0.2,
            init="eq4",
            optimizer="adam",
            lr=0.05,
            batch=50,
            iterations=60,
            log_every=7,
            eval_size=50,
            seed=6,
        ),
        "highdim_sgd_matrix": lambda: train_highdim(
            5, L=8, batch=20, iterations=60, log_every=10, eval_size=20, loss_reduction="mean", seed=7
        ),
        "highdim_adam_vector": lambda: train_highdim(
            6,
            L=7,
            batch=10,
            iterations=40,
            log_every=9,
            eval_size=15,
            optimizer="adam",
            dp_shape="vector",
            target="squared",
            seed=8,
        ),
        "transformer_sgd": lambda: train_repeat_task(
            tconfig, lr=0.5, steps=20, log_every=5, eval_size=8, batch=4, seed=9
        ),
        "transformer_adam_last": lambda: train_repeat_task(
            tconfig,
            lr=0.01,
            steps=15,
            log_every=4,
            eval_size=8,
            batch=4,
            seed=10,
            optimizer="adam",
            positions="last",
        ),
    }


def collect() -> dict[str, np.ndarray]:
    """Every array of every run, keyed ``run/column``."""
    return {f"{name}/{col}": v for name, make in runs().items() for col, v in _columns(make()).items()}


def plain(key: str) -> str:
    """``run/column`` without the parameter/observable prefix."""
    # the port moved derived columns (w, the Fig. 4 norms) from the parameters to the observables
    run, col = key.split("/")
    return f"{run}/{col.removeprefix('param.').removeprefix('obs.')}"


def compare(recorded: dict[str, np.ndarray], now: dict[str, np.ndarray], rtol: float = 0.0) -> list[str]:
    """Lines describing every recorded array missing now or not equal now (bit for bit when ``rtol`` is 0)."""
    recorded = {plain(k): v for k, v in recorded.items() if k != "fingerprint"}
    now = {plain(k): v for k, v in now.items() if k != "fingerprint"}
    problems = []
    for key, old in recorded.items():
        new = now.get(key)
        if new is None or new.shape != old.shape:
            problems.append(f"{key}: {'missing' if new is None else 'shape ' + str(new.shape)} now")
        elif rtol == 0 and old.tobytes() != np.ascontiguousarray(new, old.dtype).tobytes():
            problems.append(f"{key}: differs (max |Δ| = {np.max(np.abs(old - new))})")
        elif rtol and not np.allclose(new, old, rtol=rtol, atol=0):
            problems.append(f"{key}: differs beyond rtol={rtol} (max |Δ| = {np.max(np.abs(old - new))})")
    return problems


if __name__ == "__main__":
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "record":
        np.savez_compressed(path, fingerprint=np.array(fingerprint()), **collect())
        print(f"recorded {path}")
    else:
        recorded = dict(np.load(path))
        print(f"recorded on {recorded.get('fingerprint', '?')}\nnow         {fingerprint()}")
        now = collect()
        bad = compare(recorded, now)
        n = len(recorded) - ("fingerprint" in recorded)
        print(f"{n} arrays compared, {n - len(bad)} bit-identical")
        print("\n".join(bad) or "all bit-identical")
        sys.exit(1 if bad else 0)
