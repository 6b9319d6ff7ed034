"""Between-graph replication across processes: a ps task and worker tasks as child processes
(dist_task.py), variables placed on the ps by replica_device_setter, sessions on
``server.target``. Every child runs under a timeout; ports are free loopback ports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.ports import free_ports

TASK = str(Path(__file__).with_name("dist_task.py"))
TIMEOUT_S = 180


def _cluster(workers: int) -> str:
    ports = free_ports(workers + 1)
    return json.dumps({"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{p}" for p in ports[1:]]})


def _start(
    role: str, index: int, cluster: str, steps: int = 0, pause: float = 0.0, **env: str
) -> subprocess.Popen[str]:
    args = [sys.executable, TASK, role, str(index), cluster, str(steps), str(pause)]
    return subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **env}
    )


def _lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def _finish(proc: subprocess.Popen[str]) -> list[dict[str, Any]]:
    out, err = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 0, err[-3000:]
    return _lines(out)


def _until_step(proc: subprocess.Popen[str], step: int) -> None:
    """Read ``proc``'s progress lines until the one of ``step``."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if f'"step": {step},' in line:
            return


def _losses(lines: list[dict[str, Any]]) -> list[float]:
    errors = [line for line in lines if "error" in line]
    assert not errors, errors
    return [line["loss"] for line in lines if "loss" in line]


@pytest.fixture
def ps() -> Iterator[Any]:
    started: list[subprocess.Popen[str]] = []

    def start(cluster: str) -> subprocess.Popen[str]:
        proc = _start("ps", 0, cluster)
        started.append(proc)
        assert proc.stdout is not None
        assert "serving" in json.loads(proc.stdout.readline())
        return proc

    yield start
    for proc in started:
        proc.kill()
        proc.communicate(timeout=TIMEOUT_S)


def test_one_worker_trains_on_the_ps_as_a_single_process_does(ps: Any) -> None:
    cluster = _cluster(1)
    ps(cluster)
    worker = _start("worker", 0, cluster, 12)
    single = _start("local", 0, cluster, 12)  # uses no cluster: runs beside the worker
    remote, local = _losses(_finish(worker)), _losses(_finish(single))
    assert len(remote) == 12
    assert remote == local  # bit for bit (remote_variables.py: old + (new - old) is new)
    assert remote[-1] < remote[0] / 2
    # the variables stayed on the ps: a later worker reads the 12 steps' global step there
    assert _finish(_start("read", 0, cluster))[-1] == {"global_step": 12}


def test_three_workers_share_the_ps_variables_asynchronously(ps: Any) -> None:
    cluster = _cluster(3)
    ps(cluster)
    # The non-chiefs start first: they wait for the chief to initialise the ps's variables.
    workers = [_start("worker", i, cluster, 15) for i in (1, 2)]
    workers.insert(0, _start("worker", 0, cluster, 15))
    runs = [_losses(_finish(w)) for w in workers]
    for losses in runs:
        assert len(losses) == 15
        assert losses[-1] < losses[0]
    assert _finish(_start("read", 1, cluster))[-1] == {"global_step": 45}


def test_killing_the_ps_fails_the_next_step_with_unavailable_naming_it(ps: Any) -> None:
    cluster = _cluster(1)
    server = ps(cluster)
    worker = _start("worker", 0, cluster, 100_000, 0.02)
    _until_step(worker, 3)
    server.kill()
    last = _finish(worker)[-1]
    assert last["error"] == "UnavailableError"
    assert "/job:ps/task:0" in last["message"]


def test_killing_one_worker_leaves_the_others_going(ps: Any) -> None:
    cluster = _cluster(2)
    ps(cluster)
    chief = _start("worker", 0, cluster, 40, 0.02)
    other = _start("worker", 1, cluster, 100_000, 0.02)
    _until_step(other, 3)
    other.kill()
    other.communicate(timeout=TIMEOUT_S)
    losses = _losses(_finish(chief))
    assert len(losses) == 40
    assert losses[-1] < losses[0]


def test_workers_started_before_the_ps_wait_for_it(ps: Any) -> None:
    # A cluster's processes start in any order (a scheduler places them): TF1's session creation
    # waits for the ps; it used to fail at once with UnavailableError (connection refused).
    cluster = _cluster(2)
    workers = [_start("worker", i, cluster, 10) for i in (0, 1)]
    time.sleep(2.0)  # both are up and trying before the ps listens
    assert all(w.poll() is None for w in workers), "a worker ended before the ps started"
    ps(cluster)
    for w in workers:
        losses = _losses(_finish(w))
        assert len(losses) == 10 and losses[-1] < losses[0]
    assert _finish(_start("read", 1, cluster))[-1] == {"global_step": 20}


def test_synchronous_replicas_apply_one_mean_update_per_round(ps: Any) -> None:
    # Two replicas on the same data: each round's mean change is one worker's change, so both
    # follow a single process step for step, and the global step counts rounds, not pushes.
    cluster = _cluster(2)
    ps(cluster)
    workers = [_start("worker", i, cluster, 8, DIST_TASK_SYNC="2") for i in (1, 0)]
    local = _losses(_finish(_start("local", 0, cluster, 8, DIST_TASK_SYNC="2")))
    for w in workers:
        np.testing.assert_allclose(_losses(_finish(w)), local, rtol=1e-5)
    assert _finish(_start("read", 1, cluster))[-1] == {"global_step": 8}


def test_a_synchronous_replica_left_alone_fails_its_step_naming_the_round(ps: Any) -> None:
    cluster = _cluster(2)
    ps(cluster)
    # only one of the two replicas a round needs ever pushes
    lines = _finish(_start("worker", 0, cluster, 3, DIST_TASK_SYNC="2", ANTCOLONY_SYNC_TIMEOUT_S="2"))
    last = lines[-1]
    assert last["error"] == "DeadlineExceededError", lines
    assert "/job:ps/task:0" in last["message"] and "replicas_to_aggregate" in last["message"]


def test_killing_a_synchronous_replica_fails_the_chiefs_step_naming_the_dead_worker(ps: Any) -> None:
    cluster = _cluster(2)
    ps(cluster)
    env = {"DIST_TASK_SYNC": "2", "ANTCOLONY_SYNC_TIMEOUT_S": "3"}
    chief = _start("worker", 0, cluster, 100_000, 0.02, **env)
    other = _start("worker", 1, cluster, 100_000, 0.02, **env)
    _until_step(chief, 3)
    other.kill()
    other.communicate(timeout=TIMEOUT_S)
    last = _finish(chief)[-1]
    assert last["error"] == "DeadlineExceededError", last
    # the ps knows who pushed to the rounds before and not to this one: the chief names it
    assert "/job:worker/task:1" in last["message"], last["message"]
