"""One task of an embedding-model test cluster, run as a child process by
test_distributed_partitions.py.

``python dist_embedding_task.py ROLE CLUSTER_JSON STEPS ROWS``: ROLE ``ps`` serves until killed;
``worker`` (task 0, the chief) initialises and trains an embedding model whose ROWS x 64 table is
on the ps (replica_device_setter), 256 ids a step, plain SGD, and prints one JSON line per step
(``{"step": i, "loss": l}``), then ``{"bytes_per_step": b, "table_bytes": t}``: what its wire
sent and received per training step after the first, then how a step with an id past the table
fails (``{"bad_step": error class, "message": m}``) and the loss of a step after it; ``local`` trains the same model in one process.
"""

from __future__ import annotations

import json
import sys

import numpy as np

import antcolony.compat.v1 as tf

DIM = 64
BATCH = 256


def model(device: object, rows: int) -> tuple[object, object, object, object]:
    tf.set_random_seed(11)
    with tf.device(device):
        ids = tf.placeholder(tf.int64, [BATCH], name="ids")
        y = tf.placeholder(tf.float32, [BATCH, 1], name="y")
        table = tf.get_variable("table", [rows, DIM], initializer=tf.random_normal_initializer(stddev=0.1))
        w = tf.get_variable("w", [DIM, 1], initializer=tf.random_normal_initializer(stddev=0.1))
        rows_t = tf.nn.embedding_lookup(table, ids)
        loss = tf.reduce_mean(tf.square(tf.matmul(rows_t, w) - y))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    return ids, y, loss, train


def batches(rows: int, steps: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.RandomState(3)
    return [
        (rng.randint(0, rows, BATCH).astype(np.int64), rng.randn(BATCH, 1).astype(np.float32))
        for _ in range(steps)
    ]


def report(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def main() -> None:
    role, cluster_json, steps, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    data = batches(rows, steps)
    if role == "local":
        ids, y, loss, train = model(None, rows)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i, (xb, yb) in enumerate(data):
                _, value = sess.run([train, loss], {ids: xb, y: yb})
                report(step=i, loss=float(value))
        return
    cluster = tf.train.ClusterSpec(json.loads(cluster_json))
    if role == "ps":
        server = tf.train.Server(cluster, job_name="ps", task_index=0)
        report(serving=server.target)
        server.join()
        return
    server = tf.train.Server(cluster, job_name="worker", task_index=0)
    setter = tf.train.replica_device_setter(worker_device="/job:worker/task:0", cluster=cluster)
    ids, y, loss, train = model(setter, rows)
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        wire = server.wire
        before = 0
        for i, (xb, yb) in enumerate(data):
            if i == 1:  # from the second step: the first one registered its partition at the ps
                before = wire.bytes_sent + wire.bytes_received
            _, value = sess.run([train, loss], {ids: xb, y: yb})
            report(step=i, loss=float(value))
        moved = wire.bytes_sent + wire.bytes_received - before
        report(bytes_per_step=moved / (steps - 1), table_bytes=rows * DIM * 4)
        # an id past the table fails the ps's gather: the worker's step fails with its error
        bad = data[0][0].copy()
        bad[7] = rows + 5
        try:
            sess.run([train, loss], {ids: bad, y: data[0][1]})
            report(bad_step="passed")
        except tf.errors.OpError as exc:
            report(bad_step=type(exc).__name__, message=exc.message)
        report(after_bad=float(sess.run(loss, {ids: data[0][0], y: data[0][1]})))


if __name__ == "__main__":
    main()
