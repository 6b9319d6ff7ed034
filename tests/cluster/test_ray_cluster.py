"""Jobs on a two-node local Ray cluster with one simulated GPU per node (ray.cluster_utils),
seen as a user sees them: the config files the coordinators write, the status files the jobs
write, ``antcolony cluster status|stop``. Skipped without the ray extra; marked slow."""

from __future__ import annotations

import functools
import io
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

# Before ray is imported: a one-machine Ray listens and connects on 127.0.0.1 only, and sends
# no usage statistics.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")

from antcolony.__main__ import main  # noqa: E402
from antcolony.cluster import client  # noqa: E402
from antcolony.cluster.ray_support import CLUSTER_DIR_ENV, NAMESPACE, coordinator_name  # noqa: E402

pytestmark = pytest.mark.slow

MiB = 1 << 20
GPU_MIB = 128
JOB = str(Path(__file__).resolve().parents[2] / "scripts" / "share_gpu_job.py")


def wait_for(what: str, check: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("cluster")
    old = os.environ.get(CLUSTER_DIR_ENV)
    os.environ[CLUSTER_DIR_ENV] = str(root)  # the nodes' processes inherit it
    c = cluster_utils.Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False,
        "resources": {"sim_gpu_0": 1, "sim_gpu_mib": GPU_MIB}})
    try:
        c.add_node(num_cpus=1, node_ip_address="127.0.0.1", resources={"sim_gpu_1": 1, "sim_gpu_mib": GPU_MIB})
        c.wait_for_nodes()
        ray.init(address=c.address, namespace=NAMESPACE, log_to_driver=False)
        yield {"root": root, "address": c.address, "cluster": c}
    finally:
        ray.shutdown()
        c.shutdown()
        if old is None:
            os.environ.pop(CLUSTER_DIR_ENV, None)
        else:
            os.environ[CLUSTER_DIR_ENV] = old


class Jobs:
    """Submits jobs of ``share_gpu_job.py`` and finds their files; stops them all at the end."""

    def __init__(self, root: Path, tmp: Path) -> None:
        self.root, self.tmp, self.ids, self.refs = root, tmp, [], {}

    def submit(self, name: str, priority: str, mib: int, gpu: str | None = None, detach: bool = False) -> str:
        args = ["--width", "128", "--batch", "128", "--sim-gpu-memory-mib", str(GPU_MIB), "--every", "5",
                "--stop", str(self.tmp / f"{name}.stop")]
        job_id, ref = client.submit(JOB, args, gpu_memory=mib * MiB, priority=priority, gpu=gpu, job_id=name,
                                    detach=detach)
        self.ids.append(job_id)
        self.refs[job_id] = ref
        return job_id

    def dir(self, job_id: str) -> Path | None:
        return next(iter(self.root.glob(f"*/jobs/{job_id}")), None)

    def config(self, job_id: str) -> dict[str, Any]:
        d = self.dir(job_id)
        try:
            body = json.loads((d / "config.json").read_text()) if d else {}
        except (OSError, ValueError):
            return {}
        info = body.get("gpuConfigInfo", {}).get("01:00.0", {})
        return {"mem": info.get("maxDeviceMem"), "perf": body.get("perfControl")} if body else {}

    def status(self, job_id: str) -> dict[str, Any]:
        d = self.dir(job_id)
        try:
            body = json.loads((d / "status.json").read_text()) if d else {}
        except (OSError, ValueError):
            return {}
        return {"step_us": body.get("miniBatchDuration"), **body.get("gpuUsageInfo", {}).get("01:00.0", {})}

    def stepping(self, job_id: str) -> bool:
        return bool(self.status(job_id).get("step_us"))

    def close(self) -> None:
        for job_id in self.ids:
            (self.tmp / f"{job_id}.stop").touch()
        for job_id in self.ids:
            try:
                ray.get(self.refs[job_id], timeout=20)
            except Exception:
                client.stop(job_id)


@pytest.fixture
def jobs(cluster: dict[str, Any], tmp_path: Path) -> Iterator[Jobs]:
    j = Jobs(cluster["root"], tmp_path)
    yield j
    j.close()


def cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


def test_three_jobs_on_two_simulated_gpus_and_a_killed_jobs_share_reused(cluster: dict[str, Any], jobs: Jobs) -> None:
    g1 = jobs.submit("g1", "guaranteed", 80)
    wait_for("g1 on a GPU", lambda: jobs.config(g1))
    g2 = jobs.submit("g2", "guaranteed", 80)  # does not fit beside g1: Ray places it on the other GPU
    o = jobs.submit("o", "opportunistic", 100)
    for job_id in (g1, g2, o):
        wait_for(f"{job_id} stepping", functools.partial(jobs.stepping, job_id), timeout=40)
    assert jobs.dir(g1).parents[1] != jobs.dir(g2).parents[1]  # two nodes' coordinators own them
    assert jobs.config(g1) == jobs.config(g2) == {"mem": 80 * MiB, "perf": 100}
    assert jobs.config(o)["mem"] == (GPU_MIB - 80) * MiB  # what the guaranteed job on its GPU leaves
    code, text = cli("cluster", "status", "--address", cluster["address"])
    assert code == 0 and all(j in text for j in (g1, g2, o)) and text.count("node ") == 2, text

    # A third guaranteed job asking g1's GPU waits for a share, and gets g1's once g1 is stopped.
    g3 = jobs.submit("g3", "guaranteed", 80, gpu=_gpu(jobs, g1))
    time.sleep(2.0)  # a check that something does not happen: it must not for a while
    assert jobs.config(g3) == {}, "Ray placed a guaranteed job on a GPU without the share it asks"
    pid = json.loads((jobs.dir(g1) / "spec.json").read_text())["pid"]
    code, text = cli("cluster", "stop", g1, "--address", cluster["address"])
    assert code == 0 and "stopped" in text
    t_stop = time.monotonic()
    wait_for("g3 placed on g1's share", lambda: jobs.stepping(g3), timeout=40)
    print(f"g3 stepping {time.monotonic() - t_stop:.1f} s after g1 was stopped")
    assert jobs.dir(g3).parents[1] == jobs.dir(g1).parents[1]
    assert jobs.config(g3) == {"mem": 80 * MiB, "perf": 100}
    assert wait_for("g1's process gone", lambda: not _alive(pid), timeout=10)
    wait_for("g3's limit reached", lambda: jobs.status(g3).get("deviceMemLimit") == 80 * MiB, timeout=10)


def _gpu(jobs: Jobs, job_id: str) -> str:
    return json.loads((jobs.dir(job_id) / "spec.json").read_text())["gpu"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_guaranteed_arrival_suspends_then_resumes_the_opportunistic_job_and_a_restarted_coordinator_adopts_jobs(
        cluster: dict[str, Any], jobs: Jobs) -> None:
    o = jobs.submit("o2", "opportunistic", 100, gpu="sim_gpu_1")
    wait_for("o2 stepping", lambda: jobs.stepping(o), timeout=40)
    assert jobs.config(o) == {"mem": 100 * MiB, "perf": 100}  # alone on its GPU: as asked
    g = jobs.submit("g4", "guaranteed", 64, gpu="sim_gpu_1")
    t0 = wait_for("g4 registered", lambda: jobs.config(g) and time.monotonic(), timeout=40)
    # suspended (memory cut to what g4 leaves) while g4's step time without it is measured
    wait_for("o2 suspended", lambda: jobs.config(o) == {"mem": (GPU_MIB - 64) * MiB, "perf": 0}, timeout=5)
    baseline = wait_for("g4's baseline", lambda: _baseline(g), timeout=30)
    t_target = wait_for("g4 at its target step time",
                        lambda: (jobs.status(g).get("step_us") or 1e12) <= 1.25 * baseline and time.monotonic())
    wait_for("o2 resumed", lambda: (jobs.config(o).get("perf") or 0) > 0, timeout=20)
    t_resumed = time.monotonic()
    print(f"g4: baseline {baseline / 1000:.1f} ms, within 1.25 x of it {t_target - t0:.1f} s after its arrival; "
          f"o2 resumed {t_resumed - t0:.1f} s after")
    # suspended and resumed, never killed: the same o2 process steps on and rewrites its status file
    spec = json.loads((jobs.dir(o) / "spec.json").read_text())
    mtime = (jobs.dir(o) / "status.json").stat().st_mtime_ns
    wait_for("o2 reporting after its resumption", lambda: (jobs.dir(o) / "status.json").stat().st_mtime_ns > mtime)
    assert _alive(spec["pid"])
    code, text = cli("cluster", "status", "--address", cluster["address"], "--decisions", "50")
    assert code == 0
    assert "o2: perfControl 0, maxDeviceMem 64.0M: suspended while the baseline step time of guaranteed job g4" in text
    assert "o2: perfControl 10" in text or "o2: perfControl 20" in text, text
    print("\n".join(line for line in text.splitlines() if "throttled" in line or "o2:" in line))

    # A coordinator that dies and restarts rebuilds its jobs from their files and governs them.
    ray.kill(ray.get_actor(coordinator_name(spec["node_id"])), no_restart=False)
    adopted = wait_for("the restarted coordinator adopting o2 and g4", lambda: _adopted(spec["node_id"]), timeout=30)
    assert adopted == {"o2", "g4"}
    wait_for("o2 governed again (suspended for g4's new baseline)", lambda: jobs.config(o).get("perf") == 0, timeout=10)


def _adopted(node_id: str) -> set[str]:
    nodes = client.cluster_status(timeout=5)
    node = next(n for n in nodes if n["node_id"] == node_id)
    return {d["job"] for d in node["decisions"] if "adopted by a restarted coordinator" in d["reason"]}


def _baseline(job_id: str) -> float | None:
    for node in client.cluster_status():
        for job in node["jobs"]:
            if job["job_id"] == job_id and job.get("baseline_us"):
                return float(job["baseline_us"])
    return None


def test_a_detached_job_frees_its_share_and_a_node_leaving_takes_its_jobs(cluster: dict[str, Any], jobs: Jobs) -> None:
    # a third node, with no CPU (the cluster keeps 2), holding one more simulated GPU
    node = cluster["cluster"].add_node(num_cpus=0, node_ip_address="127.0.0.1",
                                       resources={"sim_gpu_2": 1, "sim_gpu_mib": GPU_MIB})
    # a detached job's actor ends with its script, giving its share back
    d = jobs.submit("d1", "guaranteed", GPU_MIB, gpu="sim_gpu_2", detach=True)
    wait_for("d1 stepping", lambda: jobs.stepping(d), timeout=40)
    assert ray.available_resources().get("sim_gpu_2", 0.0) == 0.0
    (jobs.tmp / "d1.stop").touch()
    wait_for("d1's share back", lambda: ray.available_resources().get("sim_gpu_2") == 1.0, timeout=20)
    o = jobs.submit("o3", "opportunistic", 32, gpu="sim_gpu_2")
    wait_for("o3 stepping", lambda: jobs.stepping(o), timeout=40)
    pid = json.loads((jobs.dir(o) / "spec.json").read_text())["pid"]
    cluster["cluster"].remove_node(node)
    wait_for("o3's process gone with its node", lambda: not _alive(pid), timeout=20)

    def gone() -> str | None:
        _code, text = cli("cluster", "status", "--address", cluster["address"])
        line = next((ln for ln in text.splitlines() if ln.startswith(f"node {node.node_id[:12]}")), "")
        return text if "GONE (its jobs went with it)" in line else None

    text = wait_for("the node shown gone", gone, timeout=40)
    assert "o3 " not in text
