"""Jobs on real GPUs through Ray's ``num_gpus``, on the two-node local cluster of conftest.py whose
nodes advertise one GPU each with a stand-in backend (ANTCOLONY_STANDIN_GPUS=1: placed, shared
and told their GPU as on CUDA nodes, run on a simulated GPU). Skipped without Ray; slow."""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
ray = pytest.importorskip("ray")

from antcolony.cluster import client  # noqa: E402
from antcolony.cluster.cli import format_cluster  # noqa: E402
from tests.cluster.test_ray_cluster import GPU_MIB, Jobs, MiB, wait_for  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture
def jobs(cluster: dict[str, Any], tmp_path: Path) -> Iterator[Jobs]:
    j = Jobs(cluster["root"], tmp_path)
    yield j
    j.close()


def _listed() -> dict[str, tuple[str, dict[str, Any]]]:
    """Each job the coordinators govern: (its node id, its record)."""
    return {job["job_id"]: (n["node_id"], job) for n in client.cluster_status() for job in n.get("jobs", [])}


def _nices(pid: int) -> set[int]:
    """The niceness of every thread of process ``pid`` (field 19 of its threads' stat)."""
    return {
        int(stat.read_text().rsplit(")", 1)[1].split()[16])
        for stat in Path(f"/proc/{pid}/task").glob("*/stat")
    }


def test_jobs_asking_a_real_gpu_get_a_share_of_num_gpus_and_the_gpu_ray_assigned(
    cluster: dict[str, Any], jobs: Jobs
) -> None:
    before = ray.available_resources().get("GPU", 0.0)
    a = jobs.submit("ra", "guaranteed", GPU_MIB * 3 // 4, gpu="gpu")
    wait_for("ra placed", lambda: a in _listed(), timeout=40)
    # ro runs at niceness 19: it starts while a core is free (beside two busy guaranteed jobs on
    # a 2-core machine it would get ~1.5% of a core; see test_ray_cluster.py)
    o = jobs.submit("ro", "opportunistic", GPU_MIB // 4, gpu="gpu")
    wait_for("ro stepping", lambda: jobs.stepping(o), timeout=60)
    b = jobs.submit("rb", "guaranteed", GPU_MIB * 3 // 4, gpu="gpu")  # no room beside ra: the other node
    for job_id in (a, b, o):
        wait_for(f"{job_id} stepping", lambda job_id=job_id: jobs.stepping(job_id), timeout=60)
    # Ray's own GPU resource holds their shares: a memory fraction each, a token for ro
    assert ray.available_resources().get("GPU", 0.0) == pytest.approx(
        before - 0.75 - 0.75 - client.OPPORTUNISTIC_SHARE
    )
    listed = _listed()
    (node_a, ra), (node_b, rb), (_, ro) = listed[a], listed[b], listed[o]
    assert node_a != node_b
    for job in (ra, rb, ro):
        # Ray assigned each node's only GPU, id 0, and made it the one its process sees
        assert (job["gpu"], job["cuda_visible_devices"]) == ("gpu_0", "0"), job
    assert (ra["gpu_memory"], ro["priority"]) == (96 * MiB, "opportunistic")
    # the coordinator governs the GPU Ray chose: ro shares it with the guaranteed job there
    assert ro["config"]["maxDeviceMem"] == (GPU_MIB - 96) * MiB
    if Path("/proc/self/task").is_dir():
        # CPU priority follows GPU priority (Ray starts workers at niceness 15); raising one to 0
        # needs root or RLIMIT_NICE, without which the guaranteed jobs keep Ray's
        assert _nices(ro["pid"]) == {19}
        if os.geteuid() == 0 or resource.getrlimit(resource.RLIMIT_NICE)[0] >= 20:
            assert _nices(ra["pid"]) == _nices(rb["pid"]) == {0}
        else:
            assert max(_nices(ra["pid"]) | _nices(rb["pid"])) < 19
    text = format_cluster(client.cluster_status())
    assert f"gpu_0 {GPU_MIB:.1f}M" in text and "  ra " in text and " gpu_0 " in text, text
