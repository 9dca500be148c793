"""Child process of the ``sweep-memory`` benchmark: stream an N-point hitting-time sweep, print peak RSS (MiB).

The points go through ``numerics.sweep.iter_sweep`` in chunks; each chunk is one
``integrate_batch`` call, and only the hitting times are kept (N × one float per event).
"""

import resource
import sys

import numpy as np


def chunk_times(point):
    """Hitting times of a chunk of ``point["n"]`` random configurations seeded by ``point["seed"]``."""
    from numerics.models.induction_head import stage2_flow
    from numerics.ode import Tolerance, integrate_batch

    from suite import sweep_points

    y0, params = sweep_points(point["n"], seed=point["seed"], lengths=(40.0, 100.0))
    horizon = 60 * float(np.max((1 + params[:, 1]) ** 2 * params[:, 0] * np.log(1 / y0[:, 0]) / params[:, 2] ** 2))
    batch = integrate_batch(stage2_flow("paper"), y0, params, (0.0, horizon), tol=Tolerance(1e-8, 1e-11),
                            on_error="record")
    return batch.event_times


def main(total: int) -> None:
    from numerics.sweep import iter_sweep

    per_task = 2000
    points = [{"seed": i, "n": min(per_task, total - i * per_task)} for i in range(-(-total // per_task))]
    from numerics.models.induction_head import stage2_flow

    times = np.empty((total, len(stage2_flow("paper").event_names)))
    for index, result in iter_sweep(chunk_times, points, executor="serial"):
        times[index * per_task: index * per_task + len(result)] = result
    assert np.isfinite(times[:, 0]).mean() > 0.5
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


if __name__ == "__main__":
    main(int(sys.argv[1]))
