"""Child process of the ``sweep-memory`` benchmark: stream an N-point hitting-time sweep, print peak RSS (MiB).

The points go through ``numerics.sweep.iter_sweep`` in chunks of 2000; each chunk is one
``run_grid`` call of the (h, ln w, dh/dτ) flow (the G_IH runner) with a one-point save grid and no memo,
and only its hitting times are kept (N × one float per event). Prints the number of points that
reached T_III, the seconds, and last the peak resident memory in MiB.
"""

import resource
import sys
import time

import numpy as np

PER_TASK = 2000


def chunk_points(n: int, seed: int) -> list[dict]:
    """``n`` random Stage-II configurations (L, α*, w*, σ) of the canonical paper flow."""
    rng = np.random.default_rng(seed)
    return [{"L": float(L), "alpha": float(a), "wstar": float(w), "sigma": float(s)}
            for L, a, w, s in zip(rng.choice([40.0, 100.0, 400.0], n), rng.choice([0.5, 1.0, 4.0], n),
                                  rng.uniform(0.2, 0.6, n), 10.0 ** rng.uniform(-4, -2, n), strict=True)]


def chunk_times(task: dict) -> np.ndarray:
    """Hitting times (t, one column per event) of one chunk of points."""
    from numerics.models.induction_head.sweeps import run_grid

    res = run_grid(chunk_points(task["n"], task["seed"]), save=np.array([1.0]), memo=False)
    return np.column_stack([res.events[name] for name in res.events])


def main(total: int) -> None:
    from numerics.models.induction_head.stage2 import IH_EVENTS
    from numerics.sweep import iter_sweep

    start = time.perf_counter()
    tasks = [{"seed": i, "n": min(PER_TASK, total - i * PER_TASK)} for i in range(-(-total // PER_TASK))]
    times = np.empty((total, len(IH_EVENTS)))
    for index, result in iter_sweep(chunk_times, tasks, executor="serial"):
        times[index * PER_TASK: index * PER_TASK + len(result)] = result
    print(int(np.isfinite(times[:, IH_EVENTS.index("T_III")]).sum()))
    print(time.perf_counter() - start)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


if __name__ == "__main__":
    main(int(sys.argv[1]))
