"""``connect(None)`` (a local ``antcolony cluster submit``, scripts/cluster_pair.py) starts its own
Ray even where another one is running on the machine and RAY_ADDRESS names it (ray.init's default
would join that one and then refuse the local Ray's CPUs and simulated GPUs). Skipped without
Ray; slow."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

pytest.importorskip("ray")

pytestmark = pytest.mark.slow

_SCRIPT = """
import ray
from antcolony.cluster.ray_support import connect
connect(None, sim_gpus=1, sim_gpu_mib=64, num_cpus=1, log_to_driver=False)
print("GCS", ray.get_runtime_context().gcs_address)
print("RESOURCES", sorted(k for k in ray.cluster_resources() if k.startswith("sim_gpu_") and k[8:].isdigit()))
ray.shutdown()
"""


def test_connect_without_an_address_starts_its_own_ray_beside_a_running_one(cluster: dict[str, Any]) -> None:
    env = {**os.environ, "RAY_ADDRESS": cluster["address"], "RAY_USAGE_STATS_ENABLED": "0"}
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=240, check=False
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    lines = dict(
        line.split(" ", 1) for line in out.stdout.splitlines() if line.startswith(("GCS", "RESOURCES"))
    )
    assert lines["GCS"] != cluster["address"], out.stdout
    # its own single simulated GPU, not the running cluster's two
    assert lines["RESOURCES"] == "['sim_gpu_0']", out.stdout
