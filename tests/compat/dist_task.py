"""One task of a test cluster, run as a child process by test_distributed_training.py.

``python dist_task.py ROLE INDEX CLUSTER_JSON STEPS [SLEEP_S]``: ROLE ``ps`` serves until killed;
``worker`` trains a GradientDescent MLP on fixed data with its variables on the ps tasks
(MonitoredTrainingSession, task 0 is the chief) and prints one JSON line per step
(``{"step": i, "loss": l, "global_step": g}``), or ``{"error": type, "message": m}`` when a step
fails; ``local`` trains the same model in one process with no cluster; ``read`` (as worker INDEX, not
the chief) prints the global step the ps holds.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

import antcolony.compat.v1 as tf


def model(device: object) -> tuple[object, object, object, object, object]:
    tf.set_random_seed(7)
    with tf.device(device):
        x = tf.placeholder(tf.float32, [64, 4])
        y = tf.placeholder(tf.float32, [64, 1])
        hidden = tf.layers.dense(x, 16, tf.nn.tanh)
        out = tf.layers.dense(hidden, 1)
        loss = tf.reduce_mean(tf.square(out - y))
        step = tf.train.get_or_create_global_step()
        opt = tf.train.GradientDescentOptimizer(0.1)
        if os.environ.get("DIST_TASK_SYNC"):  # synchronous replicas, that many per round
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=int(os.environ["DIST_TASK_SYNC"]))
        train = opt.minimize(loss, global_step=step)
    return x, y, loss, step, train


def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(0)
    xs = rng.randn(64, 4).astype(np.float32)
    ys = (np.sin(xs.sum(axis=1, keepdims=True)) + 0.1 * xs[:, :1] ** 2).astype(np.float32)
    return xs, ys


def report(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def main() -> None:
    role, index, cluster_json, steps = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    pause = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
    xs, ys = data()
    if role == "local":
        x, y, loss, gstep, train = model(None)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i in range(steps):
                _, value, g = sess.run([train, loss, gstep], {x: xs, y: ys})
                report(step=i, loss=float(value), global_step=int(g))
        return
    cluster = tf.train.ClusterSpec(json.loads(cluster_json))
    if role == "ps":
        server = tf.train.Server(cluster, job_name="ps", task_index=index)
        report(serving=server.target)
        server.join()
        return
    job = "worker" if role == "read" else role
    server = tf.train.Server(cluster, job_name=job, task_index=index)
    setter = tf.train.replica_device_setter(worker_device=f"/job:worker/task:{index}", cluster=cluster)
    x, y, loss, gstep, train = model(setter)
    if role == "read":  # a worker that only reads the global step the ps holds
        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=False) as sess:
            report(global_step=int(sess.run(gstep)))
        return
    try:
        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=index == 0) as sess:
            report(ready=True)
            for i in range(steps):
                _, value, g = sess.run([train, loss, gstep], {x: xs, y: ys})
                report(step=i, loss=float(value), global_step=int(g))
                if pause:
                    time.sleep(pause)
    except tf.errors.OpError as exc:
        report(error=type(exc).__name__, message=exc.message)


if __name__ == "__main__":
    main()
