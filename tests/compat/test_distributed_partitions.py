"""A step partitioned across task processes: an embedding table on a ps task, its lookup and its
update run there (dist_embedding_task.py), so only the gathered rows and their gradient cross
the wire. Every child runs under a timeout; ports are free loopback ports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import antcolony.compat.v1 as tf
from tests.ports import free_ports

TASK = str(Path(__file__).with_name("dist_embedding_task.py"))
TIMEOUT_S = 240
ROWS = 200_000
DIM, BATCH = 64, 256  # as dist_embedding_task.py
STEPS = 6


def _start(role: str, cluster: str, **env: str) -> subprocess.Popen[str]:
    args = [sys.executable, TASK, role, cluster, str(STEPS), str(ROWS)]
    return subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **env}
    )


def _finish(proc: subprocess.Popen[str]) -> list[dict[str, Any]]:
    out, err = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 0, err[-3000:]
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def _run_cluster(**env: str) -> list[dict[str, Any]]:
    ports = free_ports(2)
    cluster = json.dumps({"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"]})
    ps = _start("ps", cluster, **env)
    try:
        assert ps.stdout is not None
        assert "serving" in json.loads(ps.stdout.readline())
        return _finish(_start("worker", cluster, **env))
    finally:
        ps.kill()
        ps.communicate(timeout=TIMEOUT_S)


@pytest.fixture(scope="module")
def local_losses() -> list[float]:
    return [line["loss"] for line in _finish(_start("local", "")) if "loss" in line]


@pytest.fixture(scope="module")
def partitioned() -> list[dict[str, Any]]:
    return _run_cluster()


def test_an_embedding_table_on_the_ps_trains_as_one_process_moving_only_gathered_rows(
    local_losses: list[float], partitioned: list[dict[str, Any]]
) -> None:
    lines = partitioned
    losses = [line["loss"] for line in lines if "loss" in line]
    assert len(losses) == STEPS
    # the same kernels on the same values, in two processes: bit for bit
    assert losses == local_losses
    (moved,) = [line for line in lines if "bytes_per_step" in line]
    table = ROWS * DIM * 4
    assert moved["table_bytes"] == table
    rows = BATCH * DIM * 4  # the gathered rows; their gradient is as large
    assert moved["bytes_per_step"] < table / 10
    # rows to the worker, their gradient back, ids, the dense layer and frame headers
    assert moved["bytes_per_step"] < 3 * rows


def test_an_op_failing_on_the_ps_fails_the_workers_step_with_its_error_and_the_next_step_runs(
    partitioned: list[dict[str, Any]],
) -> None:
    lines = partitioned
    (bad,) = [line for line in lines if "bad_step" in line]
    assert bad["bad_step"] == "InvalidArgumentError", bad
    assert "/job:ps/task:0" in bad["message"], bad
    # the session stays usable: the step after the failed one ran (the worker reported its loss)
    assert len([line for line in lines if "after_bad" in line]) == 1


def test_the_pull_push_exchange_moves_the_table_every_step(local_losses: list[float]) -> None:
    lines = _run_cluster(ANTCOLONY_REMOTE_STEPS="pull_push")
    losses = [line["loss"] for line in lines if "loss" in line]
    assert losses == pytest.approx(local_losses, rel=1e-6)
    (moved,) = [line for line in lines if "bytes_per_step" in line]
    assert moved["bytes_per_step"] > moved["table_bytes"]  # pulled whole; its rows' change pushed


def _ps_and_worker() -> tuple[dict[str, list[str]], Any, Any]:
    """A ps and a worker server of one cluster, both in this process, on free loopback ports."""
    ports = free_ports(2)
    spec = {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"]}
    ps = tf.train.Server(tf.train.ClusterSpec(spec), job_name="ps", task_index=0)
    worker = tf.train.Server(tf.train.ClusterSpec(spec), job_name="worker", task_index=0)
    return spec, ps, worker


def _table_on_the_ps(spec: dict[str, list[str]], n_ids: int) -> tuple[Any, Any, Any]:
    """A 6 x 2 table (0..11) placed on the ps, fed ids and their looked-up rows (default graph)."""
    with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:0", cluster=spec)):
        table = tf.get_variable("t", initializer=np.arange(12.0, dtype=np.float32).reshape(6, 2))
        ids = tf.placeholder(tf.int32, [n_ids])
        return table, ids, tf.nn.embedding_lookup(table, ids)


def test_a_ps_task_in_this_process_runs_the_partition_until_the_workers_session_closes() -> None:
    spec, ps, worker = _ps_and_worker()
    try:
        g = tf.Graph()
        with g.as_default():
            table, ids, rows = _table_on_the_ps(spec, 3)
            with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:0", cluster=spec)):
                update = tf.scatter_add(table, ids, tf.ones([3, 2]))
            sess = tf.Session(worker.target, graph=g)
            sess.run(table.initializer)
            got = sess.run(rows, {ids: [1, 4, 1]})
            sess.run(update, {ids: [1, 4, 1]})
            assert ps.partitions.registered == 3  # one per executor: initializer, lookup, update
            sess.close()
        expected = np.arange(12.0, dtype=np.float32).reshape(6, 2)
        np.testing.assert_array_equal(got, expected[[1, 4, 1]])
        np.add.at(expected, [1, 4, 1], 1.0)
        np.testing.assert_array_equal(ps.variables.values["t"][1], expected)  # kept by the ps
        deadline = time.monotonic() + 10
        while ps.partitions.registered and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ps.partitions.registered == 0
    finally:
        worker.stop()
        ps.stop()


def test_a_restarted_ps_gets_the_partitions_again_and_the_steps_after_it_run() -> None:
    spec, ps, worker = _ps_and_worker()
    try:
        g = tf.Graph()
        with g.as_default():
            table, ids, rows = _table_on_the_ps(spec, 2)
            with tf.Session(worker.target, graph=g) as sess:
                sess.run(table.initializer)
                np.testing.assert_array_equal(sess.run(rows, {ids: [5, 0]}), [[10.0, 11.0], [0.0, 1.0]])
                ps.stop()
                ps = tf.train.Server(tf.train.ClusterSpec(spec), job_name="ps", task_index=0)
                errors = []
                for _ in range(3):  # the first steps may still find the old task gone
                    try:
                        sess.run(table.initializer)
                        break
                    except (tf.errors.UnavailableError, tf.errors.NotFoundError) as exc:
                        errors.append(type(exc).__name__)
                        time.sleep(0.2)
                else:
                    raise AssertionError(f"the initializer never ran on the new ps: {errors}")
                np.testing.assert_array_equal(sess.run(rows, {ids: [2, 3]}), [[4.0, 5.0], [6.0, 7.0]])
    finally:
        worker.stop()
        ps.stop()


def test_a_worker_waiting_for_the_chiefs_initialisation_asks_versions_not_values() -> None:
    ports = free_ports(3)
    spec = {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{p}" for p in ports[1:]]}
    ps = tf.train.Server(tf.train.ClusterSpec(spec), job_name="ps", task_index=0)
    workers = [tf.train.Server(tf.train.ClusterSpec(spec), job_name="worker", task_index=i) for i in (0, 1)]
    try:
        graphs = []
        for i in (0, 1):
            g = tf.Graph()
            with g.as_default():
                setter = tf.train.replica_device_setter(worker_device=f"/job:worker/task:{i}", cluster=spec)
                with tf.device(setter):
                    table = tf.get_variable("t", [50_000, 8], initializer=tf.ones_initializer())
                    total = tf.reduce_sum(tf.nn.embedding_lookup(table, [0, 7]))
            graphs.append((g, total))
        g0, _ = graphs[0]
        with g0.as_default(), tf.train.MonitoredTrainingSession(master=workers[0].target, is_chief=True):
            pass  # the chief initialises the table on the ps
        g1, total = graphs[1]
        before = workers[1].wire.bytes_received
        with (
            g1.as_default(),
            tf.train.MonitoredTrainingSession(master=workers[1].target, is_chief=False) as sess,
        ):
            waited = workers[1].wire.bytes_received - before
            assert sess.run(total) == 16.0
        assert waited < 50_000 * 8 * 4 / 10  # versions, not the table
    finally:
        for server in (*workers, ps):
            server.stop()
