"""Before any test module here imports ray: a one-machine Ray listens and connects on 127.0.0.1
only, and sends no usage statistics (ray reads these when it is first imported). The ``cluster``
fixture: a two-node local Ray cluster shared by this package's Ray tests (started once: it takes
seconds), torn down after the package's last test so it idles through no other tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"

GPU_MIB = 128  # each node's one simulated GPU, and its one stand-in real GPU


@pytest.fixture(scope="package")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Two nodes on 127.0.0.1 with one CPU and one simulated GPU each (``sim_gpu_0``, ``sim_gpu_1``,
    ``GPU_MIB`` MiB), and one Ray GPU each (``num_gpus``, ``gpu_mib`` ``GPU_MIB``): stand-ins
    (ANTCOLONY_STANDIN_GPUS=1), so a job asking a real GPU is placed and told its GPU as on CUDA
    nodes but runs on a simulated GPU. This process is connected; yields its address, the
    coordinators' directory (``root``), the ``ray.cluster_utils.Cluster`` and ``gpu_mib``. Skips
    without Ray."""
    ray = pytest.importorskip("ray")
    cluster_utils = pytest.importorskip("ray.cluster_utils")
    from antcolony.cluster.ray_support import (
        CLUSTER_DIR_ENV,
        NAMESPACE,
        REAL_GPU_MIB,
        STANDIN_GPUS_ENV,
    )

    root = tmp_path_factory.mktemp("cluster")
    old = os.environ.get(CLUSTER_DIR_ENV)
    old_standin = os.environ.get(STANDIN_GPUS_ENV)
    os.environ[CLUSTER_DIR_ENV] = str(root)  # the nodes' processes inherit it
    os.environ[STANDIN_GPUS_ENV] = "1"
    c = cluster_utils.Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 1,
            "node_ip_address": "127.0.0.1",
            "include_dashboard": False,
            "num_gpus": 1,
            "resources": {"sim_gpu_0": 1, "sim_gpu_mib": GPU_MIB, REAL_GPU_MIB: GPU_MIB},
        },
    )
    try:
        c.add_node(
            num_cpus=1,
            num_gpus=1,
            node_ip_address="127.0.0.1",
            resources={"sim_gpu_1": 1, "sim_gpu_mib": GPU_MIB, REAL_GPU_MIB: GPU_MIB},
        )
        c.wait_for_nodes()
        ray.init(address=c.address, namespace=NAMESPACE, log_to_driver=False)
        yield {"root": root, "address": c.address, "cluster": c, "gpu_mib": GPU_MIB}
    finally:
        ray.shutdown()
        c.shutdown()
        for name, value in ((CLUSTER_DIR_ENV, old), (STANDIN_GPUS_ENV, old_standin)):
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
