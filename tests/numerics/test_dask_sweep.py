"""A grid sweep of the IH flow on a Dask cluster (2 local worker processes) equals the local one, bit for bit."""

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from numerics.models.induction_head.sweeps import run_grid  # noqa: E402
from numerics.sweep import use_executor  # noqa: E402


def test_dask_sweep_equals_the_local_sweep():
    points = [{"L": L, "alpha": 1.0, "wstar": w, "sigma": s, "mode": mode}
              for L in (40, 400) for w in (0.3, 0.49) for s in (1e-2, 1e-4) for mode in ("paper", "balanced")]
    local = run_grid(points, memo=False, n_log=80)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client, use_executor(client.get_executor()), \
            distributed.get_task_stream(client) as stream:
        remote = run_grid(points, memo=False, n_log=80)
    assert len(stream.data) >= 1  # the rows were computed by the cluster's workers
    for name in ("h", "w", "loss", "S", "end_t", "status", "n_steps"):
        assert np.array_equal(getattr(local, name), getattr(remote, name), equal_nan=True), name
    for event, times in local.events.items():
        assert np.array_equal(times, remote.events[event], equal_nan=True), event
    assert np.isfinite(local.events["T_III"]).all()
