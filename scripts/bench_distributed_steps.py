"""Distributed TF1 figures (issue 29), part 2: training steps/s with variables on a ps task.

The digits MLP (64-128-64-10, ReLU, GradientDescent, batches of 64) trained for ``--steps`` steps
per worker: in one process (the baseline, measured in the same run), then with 1 ps and 1 worker,
then 1 ps and 2 workers, each task a child process on loopback (tf.train.Server,
replica_device_setter, MonitoredTrainingSession). Prints steps/s per worker and in total, the ratio
of the total to the single process, and each worker's last loss. No target is set for these figures yet.

    python scripts/bench_distributed_steps.py [--steps 300] [--workers 1,2]

Run it on an otherwise idle machine: every task is a process of its own.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time

import numpy as np


def _model(device: object) -> tuple[object, ...]:
    import antcolony.compat.v1 as tf

    tf.set_random_seed(1)
    with tf.device(device):
        x = tf.placeholder(tf.float32, [64, 64])
        y = tf.placeholder(tf.int64, [64])
        h = tf.layers.dense(tf.layers.dense(x, 128, tf.nn.relu), 64, tf.nn.relu)
        logits = tf.layers.dense(h, 10)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        gstep = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gstep)
    return x, y, loss, train


def _batches(steps: int) -> list[tuple[np.ndarray, np.ndarray]]:
    from sklearn.datasets import load_digits

    data = load_digits()
    xs, ys = (data.data / 16.0).astype(np.float32), data.target.astype(np.int64)
    n = len(xs) // 64
    return [(xs[(i % n) * 64 : (i % n + 1) * 64], ys[(i % n) * 64 : (i % n + 1) * 64]) for i in range(steps)]


def _task(role: str, index: int, cluster_json: str, steps: int) -> None:
    """A child process: the ps serves; a worker (or ``local``) trains and prints its steps/s."""
    import antcolony.compat.v1 as tf

    batches = _batches(steps)
    if role == "local":
        x, y, loss, train = _model(None)
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
        x, y, loss, train = _model(setter)
        sess = tf.train.MonitoredTrainingSession(master=server.target, is_chief=index == 0)
    sess.run([train, loss], {x: batches[0][0], y: batches[0][1]})  # warm-up: plans, connections
    start = time.perf_counter()
    for bx, by in batches[1:]:
        _, last = sess.run([train, loss], {x: bx, y: by})
    elapsed = time.perf_counter() - start
    print(json.dumps({"steps_per_s": (len(batches) - 1) / elapsed, "loss": float(last)}), flush=True)
    sess.close()


def _ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _child(role: str, index: int, cluster: str, steps: int) -> subprocess.Popen[str]:
    args = [sys.executable, __file__, "--task", role, str(index), cluster, str(steps)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, text=True)


def _result(proc: subprocess.Popen[str]) -> dict[str, float]:
    out, _ = proc.communicate(timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"a task exited with status {proc.returncode}")
    return dict(json.loads(out.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--task", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.task:
        role, index, cluster, steps = args.task
        _task(role, int(index), cluster, int(steps))
        return
    base = _result(_child("local", 0, "{}", args.steps))["steps_per_s"]
    print(f"single process: {base:8.1f} steps/s")
    for n in (int(w) for w in args.workers.split(",")):
        ports = _ports(n + 1)
        cluster = json.dumps(
            {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{p}" for p in ports[1:]]}
        )
        ps = _child("ps", 0, cluster, 0)
        try:
            assert ps.stdout is not None
            ps.stdout.readline()
            results = [_result(w) for w in [_child("worker", i, cluster, args.steps) for i in range(n)]]
        finally:
            ps.kill()
            ps.wait()
        rates = [r["steps_per_s"] for r in results]
        losses = ", ".join(f"{r['loss']:.3f}" for r in results)
        print(
            f"1 ps, {n} worker(s): {sum(rates):8.1f} steps/s in total "
            f"({', '.join(f'{r:.1f}' for r in rates)} per worker), {sum(rates) / base:.2f}x the single process; "
            f"last losses {losses}"
        )


if __name__ == "__main__":
    main()
