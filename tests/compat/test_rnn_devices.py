"""Recurrent networks placed on a GPU (simulated where CUDA is absent) compute what they
compute on the CPU: the TensorArray, LSTMGates and ReverseSequence kernels run there, in and out
of while loops (soft placement is off, so an op without a GPU kernel fails the run instead of
moving to the CPU)."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

import antcolony as ac
import antcolony.compat.v1 as tf
from antcolony.actors.runtime import get_runtime


def _train(device: str, kind: str) -> list[np.ndarray]:
    g = tf.Graph()
    rng = np.random.default_rng(3)
    with g.as_default(), tf.device(device):

        def init(shape: Any, dtype: Any = None, **_: Any) -> Any:
            return tf.constant(rng.uniform(-0.5, 0.5, [int(d) for d in shape]).astype(np.float32))

        x = tf.constant(np.random.default_rng(4).standard_normal((3, 5, 4)).astype(np.float32))
        lengths = tf.constant([5, 2, 3])
        with tf.variable_scope("m", initializer=init):
            fw = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(6), tf.nn.rnn_cell.GRUCell(6)])
            bw = tf.nn.rnn_cell.BasicLSTMCell(4)
            if kind == "dynamic":
                (o_fw, o_bw), _ = tf.nn.bidirectional_dynamic_rnn(fw, bw, x, lengths, dtype=tf.float32)
                out = tf.concat([o_fw, o_bw], 2)
            else:
                outs, _, _ = tf.nn.static_bidirectional_rnn(
                    fw, bw, tf.unstack(x, axis=1), dtype=tf.float32, sequence_length=lengths
                )
                out = tf.stack(outs, 1)
        loss = tf.reduce_sum(out * out)
        train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
        variables = tf.trainable_variables()
        initializer = tf.global_variables_initializer()

    async def steps() -> list[np.ndarray]:
        # a runtime of its own (not the blocking face's shared one), shut down at the end, so the
        # simulated GPU's pool is not held for the rest of the test process
        async with ac.Session(g, config=ac.SessionConfig(allow_soft_placement=False)) as sess:
            await sess.run(initializer)
            values = [await sess.run(out)]
            for _ in range(2):
                await sess.run(train)
            values += await sess.run(variables)
        await get_runtime().shutdown()
        return values

    return asyncio.run(steps())


@pytest.mark.parametrize("kind", ["static", "dynamic"])
def test_bidirectional_rnn_trains_alike_on_the_simulated_gpu_and_the_cpu(kind: str) -> None:
    on_cpu, on_gpu = _train("/cpu:0", kind), _train("/gpu:0", kind)
    assert len(on_cpu) == len(on_gpu) > 1
    for a, b in zip(on_cpu, on_gpu):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
