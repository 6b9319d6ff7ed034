"""``tf.train.Server``: a task of a cluster listening on its address with the tensor wire, its
``target``, ``join`` until stopped, and TF1's rules for inferring the job and task."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import antcolony.compat.v1 as tf
from antcolony.actors.blocking.background_loop import background_loop
from antcolony.actors.tensor_wire import rendezvous_key
from tests.ports import free_ports


def test_two_tasks_exchange_a_tensor_and_join_returns_on_stop() -> None:
    ps_port, worker_port = free_ports(2)
    cluster = tf.train.ClusterSpec({"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{worker_port}"]})
    ps = tf.train.Server(cluster, job_name="ps", task_index=0)
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    try:
        assert ps.target == f"grpc://127.0.0.1:{ps_port}"
        assert worker.target == f"grpc://127.0.0.1:{worker_port}"
        assert (ps.server_def.job_name, ps.server_def.task_index, ps.server_def.protocol) == ("ps", 0, "grpc")
        key = rendezvous_key(
            "/job:worker/replica:0/task:0/device:CPU:0", 1, "/job:ps/replica:0/task:0/device:CPU:0", "g:0"
        )
        value = np.arange(12, dtype=np.float32).reshape(3, 4)

        async def exchange() -> Any:
            await worker.wire.send("/job:ps/task:0", key, 5, value)
            return await ps.wire.recv(key, 5, timeout=30)

        np.testing.assert_array_equal(background_loop().call("test", exchange), value)
        joined = threading.Event()
        t = threading.Thread(target=lambda: (ps.join(), joined.set()), daemon=True)
        t.start()
        assert not joined.wait(0.1)
        ps.stop()
        assert joined.wait(10)
    finally:
        ps.stop()
        worker.stop()


def test_local_server_picks_a_free_port() -> None:
    server = tf.train.Server.create_local_server()
    try:
        host, port = server.target.removeprefix("grpc://").rsplit(":", 1)
        assert host == "localhost" and int(port) > 0
        assert server.task == "/job:localhost/task:0"
    finally:
        server.stop()


CASES: list[tuple[Any, dict[str, Any]]] = [
    ({"ps": ["localhost:1"], "worker": ["localhost:2"]}, {}),
    ({"worker": ["localhost:1", "localhost:2"]}, {}),
    ({"worker": ["localhost:1"]}, {"job_name": "ps"}),
    ({"worker": {1: "localhost:1", 4: "localhost:2"}}, {"job_name": "worker", "task_index": 2}),
    ({"worker": ["localhost:1"]}, {"job_name": "worker", "task_index": 3}),
    (["not", "a", "cluster"], {}),
]


@pytest.mark.parametrize(("cluster", "kwargs"), CASES, ids=str)
def test_refuses_what_tf1_refuses(cluster: Any, kwargs: dict[str, Any]) -> None:
    tf1 = pytest.importorskip("tensorflow").compat.v1
    with pytest.raises(Exception) as theirs:
        tf1.train.Server(cluster, start=False, **kwargs)
    with pytest.raises(Exception) as ours:
        tf.train.Server(cluster, start=False, **kwargs)
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert isinstance(ours.value, ValueError) == isinstance(theirs.value, ValueError)
    assert str(ours.value).splitlines()[0] == str(theirs.value).splitlines()[0]
