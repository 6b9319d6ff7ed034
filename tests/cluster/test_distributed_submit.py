"""A distributed TF1 job on the two-node local Ray cluster (the ``cluster`` fixture): ``antcolony
submit --ps N --workers M`` starts each task in its own Ray actor process with TF's TF_CONFIG and
its flags, every address of the cluster spec is the task's own and reachable, workers run as GPU
jobs of their node's coordinator, and the ps tasks (which serve for ever) are stopped when the
workers end. Skipped without the ray extra; marked slow."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
ray = pytest.importorskip("ray")

from antcolony.cluster import client  # noqa: E402

pytestmark = pytest.mark.slow

TASK = str(Path(__file__).resolve().with_name("tf_config_task.py"))
FLAGS = [
    "--job_name={job_name}",
    "--task_index={task_index}",
    "--ps_hosts={ps_hosts}",
    "--worker_hosts={worker_hosts}",
]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _gone(pid: int, seconds: float = 20.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


def test_ps_and_workers_get_their_cluster_and_the_ps_stops_with_the_workers(
    cluster: dict[str, Any], tmp_path: Path
) -> None:
    job_id, group = client.submit_distributed(
        TASK, [str(tmp_path), *FLAGS], ps=1, workers=2, gpu_memory=16 << 20, spread=True, job_id="dist-1"
    )
    assert group.wait() == 0
    records = {p.stem: json.loads(p.read_text()) for p in tmp_path.glob("*.json")}
    assert sorted(records) == ["ps-0", "worker-0", "worker-1"]
    spec = records["ps-0"]["tf_config"]["cluster"]
    assert len(spec["ps"]) == 1 and len(spec["worker"]) == 2
    assert len(set(spec["ps"] + spec["worker"])) == 3, spec  # three distinct addresses
    for name, record in records.items():
        kind, index = name.split("-")
        assert record["tf_config"] == {"cluster": spec, "task": {"type": kind, "index": int(index)}}
        assert record["argv"] == [
            f"--job_name={kind}",
            f"--task_index={index}",
            f"--ps_hosts={spec['ps'][0]}",
            f"--worker_hosts={','.join(spec['worker'])}",
        ]
    for w in ("worker-0", "worker-1"):
        assert records[w]["reached"] == spec["ps"]  # the ps listened at its address
        config_file = records[w]["gpu_config_file"]
        assert config_file and f"{job_id}-{w}" in config_file  # a GPU job of its node's coordinator
    assert records["ps-0"]["gpu_config_file"] is None  # a ps asks no GPU
    assert _gone(records["ps-0"]["pid"]), "the ps task still runs after the workers ended"
    assert ray.util.placement_group_table() and all(
        pg["state"] == "REMOVED" for pg in ray.util.placement_group_table().values()
    )


def test_a_failing_worker_gives_the_jobs_exit_code_and_still_stops_the_ps(
    cluster: dict[str, Any], tmp_path: Path
) -> None:
    _, group = client.submit_distributed(
        TASK, ["/nonexistent/folder"], ps=1, workers=1, gpu_memory=16 << 20, job_id="dist-2"
    )
    assert group.wait() == 1  # the worker could not write its record: its script raised
    assert all(pg["state"] == "REMOVED" for pg in ray.util.placement_group_table().values())


def test_the_cli_runs_a_distributed_job_on_an_existing_cluster(
    cluster: dict[str, Any], tmp_path: Path
) -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "antcolony",
            "submit",
            "--address",
            cluster["address"],
            "--ps",
            "1",
            "--workers",
            "1",
            "--gpu-memory",
            "16MiB",
            "--name",
            "dist-cli",
            TASK,
            str(tmp_path),
            "--task_index={task_index}",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "job dist-cli submitted" in out.stderr
    records = {p.stem: json.loads(p.read_text()) for p in tmp_path.glob("*.json")}
    assert sorted(records) == ["ps-0", "worker-0"]
    assert records["worker-0"]["argv"] == ["--task_index=0"]
    assert _gone(records["ps-0"]["pid"])
