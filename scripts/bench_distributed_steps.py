"""Distributed TF1 figures (issue 29), part 2: training steps/s with variables on ps tasks.

An MLP trained for ``--steps`` steps per worker (GradientDescent, batches of 64): ``digits``
(64-128-64-10, 13k parameters, scikit-learn's digits) or ``large`` (256-1024-1024-10, 1.3M
parameters, fixed random data). First in one process (the baseline, measured in the same run),
then for each number of ps tasks (``--ps``) and of workers (``--workers``) with every variable on
the ps tasks (tf.train.Server, replica_device_setter round-robin, MonitoredTrainingSession).
Each task is a child process on loopback, or with ``--ray`` a Ray actor started by
``antcolony submit --spread`` on a local Ray cluster of ``--nodes`` nodes on this machine
(``ray.cluster_utils``). Prints steps/s per worker and in total, the ratio of the total to the
single process, the bytes each worker's wire sent and received per step, and the last losses.
No target is set for these figures yet.

``embedding`` is a 200000 x 64 table (51 MB) looked up by 256 ids a step, then a dense layer to
10 classes. ``--modes`` runs each cluster with the workers' steps partitioned across the tasks
(ops on ps variables run on the ps: the default) and/or with ``pull_push`` (every ps variable
pulled before a step and its change pushed after it; ``ANTCOLONY_REMOTE_STEPS=pull_push``).

    python scripts/bench_distributed_steps.py [--steps 300] [--ps 1,2] [--workers 1,2,4]
        [--models digits,large,embedding] [--modes partitioned,pull_push] [--ray]

Run it on an otherwise idle machine: every task is a process of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

SIZES = {"digits": (64, 128, 64), "large": (256, 1024, 1024)}
EMBEDDING_ROWS, EMBEDDING_DIM, EMBEDDING_IDS = 200_000, 64, 256


def _model(device: object, model: str) -> tuple[object, ...]:
    import antcolony.compat.v1 as tf

    tf.set_random_seed(1)
    with tf.device(device):
        if model == "embedding":
            x = tf.placeholder(tf.int64, [EMBEDDING_IDS])
            y = tf.placeholder(tf.int64, [EMBEDDING_IDS])
            table = tf.get_variable(
                "table", [EMBEDDING_ROWS, EMBEDDING_DIM], initializer=tf.random_normal_initializer(stddev=0.1)
            )
            h = tf.nn.embedding_lookup(table, x)
        else:
            features, h1, h2 = SIZES[model]
            x = tf.placeholder(tf.float32, [64, features])
            y = tf.placeholder(tf.int64, [64])
            h = tf.layers.dense(tf.layers.dense(x, h1, tf.nn.relu), h2, tf.nn.relu)
        logits = tf.layers.dense(h, 10)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        gstep = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gstep)
    return x, y, loss, train


def _batches(steps: int, model: str) -> list[tuple[np.ndarray, np.ndarray]]:
    if model == "embedding":
        rng = np.random.default_rng(0)
        ids = [rng.integers(0, EMBEDDING_ROWS, EMBEDDING_IDS).astype(np.int64) for _ in range(steps)]
        return [(i, i % 10) for i in ids]
    if model == "large":
        rng = np.random.default_rng(0)
        xs = rng.standard_normal((64 * 8, SIZES[model][0])).astype(np.float32)
        ys = rng.integers(0, 10, 64 * 8).astype(np.int64)
    else:
        from sklearn.datasets import load_digits

        data = load_digits()
        xs, ys = (data.data / 16.0).astype(np.float32), data.target.astype(np.int64)
    n = len(xs) // 64
    return [(xs[(i % n) * 64 : (i % n + 1) * 64], ys[(i % n) * 64 : (i % n + 1) * 64]) for i in range(steps)]


def _task(role: str, index: int, cluster_json: str, steps: int, model: str) -> None:
    """A child process: the ps serves; a worker (or ``local``) trains and prints its figures."""
    import antcolony.compat.v1 as tf

    batches = _batches(steps, model)
    server = None
    if role == "local":
        x, y, loss, train = _model(None, model)
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
    else:
        cluster = tf.train.ClusterSpec(json.loads(cluster_json))
        server = tf.train.Server(cluster, job_name=role, task_index=index)
        if role == "ps":
            print(json.dumps({"serving": server.target}), flush=True)
            server.join()
            return
        setter = tf.train.replica_device_setter(worker_device=f"/job:worker/task:{index}", cluster=cluster)
        x, y, loss, train = _model(setter, model)
        sess = tf.train.MonitoredTrainingSession(master=server.target, is_chief=index == 0)
    sess.run([train, loss], {x: batches[0][0], y: batches[0][1]})  # warm-up: plans, connections
    sent0, got0 = (server.wire.bytes_sent, server.wire.bytes_received) if server else (0, 0)
    start = time.perf_counter()
    for bx, by in batches[1:]:
        _, last = sess.run([train, loss], {x: bx, y: by})
    elapsed = time.perf_counter() - start
    timed = len(batches) - 1
    figures = {"steps_per_s": timed / elapsed, "loss": float(last)}
    if server is not None:
        figures["sent_per_step"] = (server.wire.bytes_sent - sent0) / timed
        figures["received_per_step"] = (server.wire.bytes_received - got0) / timed
    print(json.dumps(figures), flush=True)
    sess.close()


def _ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _child(
    role: str, index: int, cluster: str, steps: int, model: str, mode: str = "partitioned"
) -> subprocess.Popen[str]:
    args = [sys.executable, __file__, "--task", role, str(index), cluster, str(steps), model]
    env = {**os.environ, "ANTCOLONY_REMOTE_STEPS": mode}
    return subprocess.Popen(args, stdout=subprocess.PIPE, text=True, env=env)


def _result(proc: subprocess.Popen[str]) -> dict[str, float]:
    out, _ = proc.communicate(timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"a task exited with status {proc.returncode}")
    return dict(json.loads(out.strip().splitlines()[-1]))


def _local_processes(ps: int, workers: int, steps: int, model: str, mode: str) -> list[dict[str, float]]:
    ports = _ports(ps + workers)
    hosts = [f"127.0.0.1:{p}" for p in ports]
    cluster = json.dumps({"ps": hosts[:ps], "worker": hosts[ps:]})
    servers = [_child("ps", i, cluster, 0, model, mode) for i in range(ps)]
    try:
        for server in servers:
            assert server.stdout is not None
            server.stdout.readline()
        started = [_child("worker", i, cluster, steps, model, mode) for i in range(workers)]
        return [_result(w) for w in started]
    finally:
        for server in servers:
            server.kill()
            server.wait()


def _on_ray(address: str, ps: int, workers: int, steps: int, model: str, mode: str) -> list[dict[str, float]]:
    """The tasks as Ray actors through ``antcolony submit --spread``; the workers' figures are
    the JSON lines of their output, which Ray forwards to submit's."""
    cmd = [
        sys.executable, "-m", "antcolony", "submit", "--address", address, "--ps", str(ps),
        "--workers", str(workers), "--spread", "--gpu-memory", "16MiB", __file__,
        "--task-hosts", "{job_name}", "{task_index}", "{ps_hosts}", "{worker_hosts}", str(steps), model,
    ]  # fmt: skip
    env = {**os.environ, "RAY_DEDUP_LOGS": "0", "ANTCOLONY_REMOTE_STEPS": mode}
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    if out.returncode != 0:
        raise SystemExit(f"antcolony submit exited with status {out.returncode}: {out.stderr[-2000:]}")
    found = re.findall(r"(\{\"steps_per_s\".*\})", out.stdout + out.stderr)
    if len(found) != workers:
        raise SystemExit(f"expected {workers} worker results in submit's output, found {len(found)}")
    return [dict(json.loads(f)) for f in found]


def _local_ray_cluster(nodes: int) -> tuple[Any, str]:
    from submit_on_local_cluster import local_cluster  # this script's folder is on sys.path

    cluster, _ = local_cluster(nodes, cpus=4, gpu_mib=256, prefix="bench_distributed_")
    return cluster, cluster.address


def _line(label: str, results: list[dict[str, float]], base: float) -> str:
    rates = [r["steps_per_s"] for r in results]
    sent = statistics.mean(r["sent_per_step"] for r in results)
    got = statistics.mean(r["received_per_step"] for r in results)
    losses = ", ".join(f"{r['loss']:.3f}" for r in results)
    return (
        f"{label}: {sum(rates):8.1f} steps/s in total ({', '.join(f'{r:.1f}' for r in rates)} per worker), "
        f"{sum(rates) / base:.2f}x the single process; per worker step sent {sent / 1024:.1f} KiB, "
        f"received {got / 1024:.1f} KiB; last losses {losses}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--ps", default="1,2")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--models", default="digits,large")
    parser.add_argument(
        "--modes", default="partitioned", help="partitioned and/or pull_push (comma-separated)"
    )
    parser.add_argument(
        "--ray", action="store_true", help="tasks as Ray actors on a local multi-node Ray cluster"
    )
    parser.add_argument("--nodes", type=int, default=2, help="with --ray: the local cluster's nodes")
    parser.add_argument("--task", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--task-hosts", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.task:
        role, index, cluster, steps, model = args.task
        _task(role, int(index), cluster, int(steps), model)
        return
    if args.task_hosts:
        role, index, ps_hosts, worker_hosts, steps, model = args.task_hosts
        spec = json.dumps({"ps": ps_hosts.split(","), "worker": worker_hosts.split(",")})
        _task(role, int(index), spec, int(steps), model)
        return
    cluster = None
    if args.ray:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        cluster, address = _local_ray_cluster(args.nodes)
        print(
            f"local Ray cluster: {args.nodes} nodes at {address}; tasks placed by antcolony submit --spread"
        )
    try:
        for model in args.models.split(","):
            base = _result(_child("local", 0, "{}", args.steps, model))["steps_per_s"]
            print(f"{model}: single process: {base:8.1f} steps/s", flush=True)
            for ps in (int(p) for p in args.ps.split(",")):
                for n in (int(w) for w in args.workers.split(",")):
                    for mode in args.modes.split(","):
                        if args.ray:
                            results = _on_ray(address, ps, n, args.steps, model, mode)
                        else:
                            results = _local_processes(ps, n, args.steps, model, mode)
                        line = _line(f"{model}: {ps} ps, {n} worker(s)", results, base)
                        print(f"{line}; {mode}", flush=True)
    finally:
        if cluster is not None:
            import ray

            ray.shutdown()
            cluster.shutdown()


if __name__ == "__main__":
    main()
