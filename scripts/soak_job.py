"""The training job the soak (``soak.py``) runs and injects faults into.

A small MLP regression on the simulated ``/gpu:0``, with two more fetchable paths:

- ``slow``: a chain of matmuls on the GPU (tens of milliseconds), so a cancel, a timeout or a
  close lands while kernels are on the stream and their results hold device memory;
- ``bad``: a reshape to ``[-1, 7]`` of a fed vector that depends on the middle of the slow
  chain; feeding a length that is not a multiple of 7 makes the kernel fail at run time
  (``InvalidArgumentError``) while the rest of the chain is still running. ``bad_on_cpu`` is
  the same reshape on the CPU, fed from the GPU through a Send/Recv pair, so the failing
  partition is not the one still running the chain.

A close ends the session with its variables; the soak fetches the weights before and restores
them into the new session (``restore``), so training goes on over every close.

Every fetch key the soak uses is run once by ``warm_up``, so the executors (and the constants
they bind on the device) exist before the baseline is taken, as they will after each fault.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import antcolony as ac

MiB = 1 << 20
INTER_OP_THREADS = 2  # the CPU device's kernel pool
CPU_PRIORITY_THREADS = 4


@dataclass
class Job:
    graph: ac.Graph
    init: ac.Operation
    train: ac.Operation
    loss: ac.Tensor
    slow: ac.Tensor
    bad: ac.Tensor
    bad_on_cpu: ac.Tensor
    feed: dict[ac.Tensor, np.ndarray]
    slow_feed: dict[ac.Tensor, np.ndarray]
    bad_input: ac.Tensor
    weights: list[Any]  # the variables, fetched to carry training over a close
    restore: ac.Operation
    restore_inputs: list[ac.Tensor]

    def bad_feed(self, length: int) -> dict[ac.Tensor, np.ndarray]:
        return {**self.slow_feed, self.bad_input: np.ones(length, np.float32)}


def build_job(seed: int, batch: int = 64, width: int = 128, chain: int = 24, chain_size: int = 384) -> Job:
    rng = np.random.default_rng(seed)
    g = ac.Graph()
    with g.as_default(), ac.device("/gpu:0"):
        x = ac.placeholder(ac.float32, [batch, 32], name="x")
        y = ac.placeholder(ac.float32, [batch, 1], name="y")
        h, weights = x, []
        for i, (n_in, n_out) in enumerate([(32, width), (width, width)]):
            w = ac.Variable(
                (rng.standard_normal((n_in, n_out)) / math.sqrt(n_in)).astype(np.float32), name=f"w{i}"
            )
            weights.append(w)
            h = ac.nn.relu(ac.matmul(h, w))
        head = ac.Variable(np.zeros((width, 1), np.float32), name="head")
        weights.append(head)
        loss = ac.reduce_mean(ac.square(ac.matmul(h, head) - y))
        train = ac.train.GradientDescentOptimizer(0.05).minimize(loss)
        init = ac.global_variables_initializer()
        restore_inputs = [
            ac.placeholder(ac.float32, w.shape, name=f"restore_{i}") for i, w in enumerate(weights)
        ]
        restore = ac.group(*[ac.assign(w, v) for w, v in zip(weights, restore_inputs)])

        big = ac.placeholder(ac.float32, [chain_size, chain_size], name="big")
        # an orthogonal matrix keeps the chain's values bounded however long it is
        q, _ = np.linalg.qr(rng.standard_normal((chain_size, chain_size)))
        m = ac.constant(q.astype(np.float32), name="rotation")
        z, middle = big, None
        for i in range(chain):
            z = ac.matmul(z, m)
            if i == chain // 2:
                middle = z
        slow = ac.reduce_sum(ac.square(z), name="slow")
        assert middle is not None
        bad_input = ac.placeholder(ac.float32, [None], name="bad_input")
        bad = ac.reduce_sum(ac.reshape(bad_input + ac.reduce_sum(middle) * 0.0, [-1, 7]), name="bad")
        middle_sum = ac.reduce_sum(middle)
    with g.as_default(), ac.device("/cpu:0"):
        bad_on_cpu = ac.reduce_sum(ac.reshape(bad_input + middle_sum * 0.0, [-1, 7]), name="bad_on_cpu")
    xs = rng.standard_normal((batch, 32)).astype(np.float32)
    ys = (np.sin(xs[:, :1]) + 0.5 * xs[:, 1:2]).astype(np.float32)
    slow_in = rng.standard_normal((chain_size, chain_size)).astype(np.float32)
    return Job(
        g,
        init,
        train,
        loss,
        slow,
        bad,
        bad_on_cpu,
        {x: xs, y: ys},
        {big: slow_in},
        bad_input,
        weights,
        restore,
        restore_inputs,
    )


def session_config(workdir: str) -> ac.SessionConfig:
    """One simulated GPU, a resource config file polled often, a status file written often."""
    return ac.SessionConfig(
        gpu_backend="sim",
        sim_gpu_count=1,
        sim_gpu_memory=256 * MiB,
        intra_op_threads=1,
        inter_op_threads=INTER_OP_THREADS,
        cpu_priority_threads=CPU_PRIORITY_THREADS,
        resource_config_file=os.path.join(workdir, "gpu_config.json"),
        statistics_file=os.path.join(workdir, "gpu_status.json"),
        config_poll_interval=0.05,
        statistics_interval=0.2,
    )


async def warm_up(sess: ac.Session, job: Job, weights: list[np.ndarray] | None = None) -> None:
    """Initialise the variables (to ``weights`` when given: training goes on over a close) and
    run every fetch key the soak uses once."""
    await sess.run(job.init)
    initial = await sess.run(job.weights)
    await sess.run(job.restore, dict(zip(job.restore_inputs, initial if weights is None else weights)))
    await sess.run([job.loss, job.train], job.feed)
    await sess.run(job.slow, job.slow_feed)
    await sess.run([job.slow, job.loss, job.train], {**job.feed, **job.slow_feed})
    await sess.run([job.slow, job.bad], job.bad_feed(14))
    await sess.run([job.slow, job.bad_on_cpu], job.bad_feed(14))


async def train_step(sess: ac.Session, job: Job) -> float:
    """One normal step; raises if its loss is not finite."""
    loss, _ = await sess.run([job.loss, job.train], job.feed)
    if not math.isfinite(float(loss)):
        raise FloatingPointError(f"training loss is {loss}")
    return float(loss)


def open_session(job: Job, workdir: str) -> ac.Session:
    return ac.Session(job.graph, config=session_config(workdir))


def describe(value: Any) -> str:
    return f"{type(value).__name__}: {value}".splitlines()[0][:160]


class Surprise(Exception):
    """A fault's outcome was not what the runtime promises (wrong error, config misapplied)."""


@dataclass
class World:
    """The soak's state: the session (a close replaces it), the job, the config file's last
    valid content and whether the file holds it now, and the seeded random generator."""

    sess: ac.Session
    job: Job
    workdir: str
    rng: random.Random
    slow_s: float  # how long a slow step took at the start, alone (the fastest of three)
    perf_control: int = 100  # the last valid config written
    limit: int = 256 * MiB
    file_valid: bool = True  # False while the file holds an invalid config
    rewrites: int = 0  # config files written
    saved: list[np.ndarray] | None = None  # the weights before the last close
    subkinds: dict[str, int] = field(default_factory=dict)
    # called with the closed session before a new one opens: checks everything was freed
    on_closed: Callable[[ac.Session], Awaitable[None]] | None = None

    @property
    def config_path(self) -> str:
        return os.path.join(self.workdir, "gpu_config.json")

    def count(self, subkind: str) -> None:
        self.subkinds[subkind] = self.subkinds.get(subkind, 0) + 1
