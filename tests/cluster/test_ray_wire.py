"""The tensor wire between two task actors of a local Ray cluster, over both transports (TCP and
the object store): every dtype arrives whole; a task actor that is killed fails the receives
waiting on it with UnavailableError naming the task. Skipped without Ray."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from antcolony.actors.tensor_wire import rendezvous_key
from antcolony.errors import UnavailableError

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow

PS, WORKER = "/job:ps/task:0", "/job:worker/task:0"
RNG = np.random.default_rng(7)
# One of each kind (tests/actors/test_tensor_wire.py covers every dtype without Ray).
VALUES = {
    "float32": RNG.standard_normal((3, 4)).astype(np.float32),
    "float16": RNG.standard_normal(7).astype(np.float16),
    "int64": RNG.integers(-(2**62), 2**62, (2, 5), dtype=np.int64),
    "uint8": RNG.integers(0, 255, (9,), dtype=np.uint8),
    "complex128": RNG.standard_normal(3) + 1j * RNG.standard_normal(3),
    "bool": RNG.random((3, 2)) > 0.5,
    "scalar": np.float32(2.5),
    "empty": np.zeros((0, 4), dtype=np.float32),
    "strided": RNG.standard_normal((6, 8)).astype(np.float32)[::2, 1::3],
    "strings": np.array([[b"alpha", b""], [b"\x00\xff", b"z"]], dtype=object),
    "string_scalar": np.array(b"one", dtype=object),
}


def _key(src: str, dst: str, name: str) -> str:
    return rendezvous_key(f"{src}/device:CPU:0", 3, f"{dst}/device:CPU:0", name)


def _hosts() -> tuple[Any, Any]:
    from antcolony.cluster.wire_host import WireHost

    actor = ray.remote(WireHost).options(num_cpus=0, max_concurrency=64)
    ps, worker = actor.remote(PS), actor.remote(WORKER)
    ps_addr, worker_addr = ray.get([ps.start.remote(), worker.start.remote()], timeout=120)
    ray.get(
        [ps.connect.remote(WORKER, worker_addr, worker), worker.connect.remote(PS, ps_addr, ps)], timeout=60
    )
    return ps, worker


@pytest.mark.parametrize("transport", ["tcp", "ray"])
def test_every_dtype_between_task_actors(cluster: dict[str, Any], transport: str) -> None:
    ps, worker = _hosts()
    try:
        values = {**VALUES, "big": np.random.default_rng(0).standard_normal(1 << 20)}  # 8 MiB
        for step, name in enumerate(sorted(values)):
            value = np.asarray(values[name])
            key = _key(WORKER, PS, f"{name}:0")
            got_ref = ps.recv.remote(transport, key, step, 60)
            ray.get(worker.send.remote(transport, PS, key, step, value), timeout=60)
            got = ray.get(got_ref, timeout=60)
            assert got.shape == value.shape, name
            np.testing.assert_array_equal(got, value)
    finally:
        ray.get([ps.close.remote(), worker.close.remote()], timeout=60)
        ray.kill(ps)
        ray.kill(worker)


@pytest.mark.parametrize("transport", ["tcp", "ray"])
def test_killed_task_actor_fails_waiting_receives(cluster: dict[str, Any], transport: str) -> None:
    ps, worker = _hosts()
    try:
        key = _key(WORKER, PS, "g:0")
        ray.get(worker.send.remote(transport, PS, key, 0, np.ones(3)), timeout=60)
        np.testing.assert_array_equal(ray.get(ps.recv.remote(transport, key, 0, 60), timeout=60), np.ones(3))
        waiting = ps.recv.remote(transport, key, 1, 120)
        ready, _ = ray.wait([waiting], timeout=0.2)
        assert not ready
        ray.kill(worker)
        with pytest.raises(UnavailableError, match=f"task {WORKER} is unavailable"):
            ray.get(waiting, timeout=120)
        with pytest.raises(UnavailableError, match=WORKER):
            for step in range(200):  # the killed process may still accept the first bytes
                ray.get(
                    ps.send.remote(transport, WORKER, _key(PS, WORKER, "x:0"), step, np.ones(1 << 16)),
                    timeout=120,
                )
    finally:
        ray.kill(ps)
        ray.kill(worker)
